package pipelining

import (
	"github.com/tmac-dev/tmac/dialects/arith"
	"github.com/tmac-dev/tmac/dialects/memref"
	"github.com/tmac-dev/tmac/dialects/tmac"
	"github.com/tmac-dev/tmac/ir"
)

// tma-pipeline, an output tile stored several times in one iteration: an
// epilogue that writes its result a few columns at a time through one
// small tile (tmac.warpgroup.mma.store's columns), storing it by TMA after
// each part:
//
//	write part 0 to %t;  tmac.tma.store %t ...
//	write part 1 to %t;  tmac.tma.store %t ...
//
// Each write-then-store is an episode; with E episodes an iteration, the
// tile's S ring slots rotate by episode, not by iteration: episode e of
// iteration j uses slot (j·E + e) mod S, computed as ((j mod S)·E + e) mod
// S. Before an episode's first write the elected thread waits until the
// store that last read its slot, S episodes back, has read it (at most
// (S-1)·G bulk groups still reading, G the groups of one store), and a
// block barrier tells the others; before each store, the usual proxy fence
// and barrier. So S = 2 slots of a quarter tile let the writes of one part
// overlap the TMA store of the previous one, in a quarter of the shared
// memory of a whole-tile ring: room for more load stages.
//
// For now the tile must be the loop's only output tile, and each view of
// it must be used within one episode (take the view again after a store).

// storeEpisodes returns the number of times an iteration stores the
// loop's output tile (1 when it has none, or several output tiles), as
// analyse found it (the stores are gone once rewritten).
func (p *pipelinedLoop) storeEpisodes() int64 { return max(1, p.episodes) }

// countEpisodes counts the stores of the loop's output tile (analyse).
func (p *pipelinedLoop) countEpisodes() int64 {
	if len(p.stores) < 2 || p.passThrough() {
		return 1
	}
	t := p.ringOf(p.stores[0].Src())
	for _, st := range p.stores[1:] {
		if p.ringOf(st.Src()) != t {
			return 1
		}
	}
	return int64(len(p.stores))
}

// storeWait is the wait_group.read depth before an output slot is written
// again: the groups committed since the slot's last store, (S-1) stores'
// worth (an iteration's for whole tiles, a part's for a tile in parts).
func (p *pipelinedLoop) storeWait() int64 {
	return (p.s - 1) * p.storeGroups() / p.storeEpisodes()
}

// checkEpisodes checks an output tile stored more than once an iteration
// (copies: its TMA stores, in order): no other output tile, and every use
// of a view of it within the episode of the view.
func (p *pipelinedLoop) checkEpisodes(r *tileRing) error {
	for _, t := range p.order {
		if o := p.tiles[t]; o != r && o.isStore {
			return r.copies[1].EmitError("an output tile stored more than once an iteration must be the loop's only output tile, for now")
		}
	}
	var walk func(v ir.Value, episode int) error
	walk = func(v ir.Value, episode int) error {
		for _, u := range ir.Uses(v) {
			user := u.Owner()
			if isTileOp(user) || user.Name() == memref.Dealloc {
				continue
			}
			top := p.topLevel(user)
			if top == nil {
				continue // reported by checkTileUses
			}
			e := p.episodeOf(r, top)
			if episode >= 0 && e != episode {
				return user.EmitError("this view of an output tile stored %d times an iteration is used after the tmac.tma.store that ends its part (%s): take the view again after each store", len(r.copies), r.copies[episode].Loc)
			}
			switch user.Name() {
			case memref.Subview, memref.Cast, memref.ReinterpretCast:
				for _, res := range user.Results() {
					if err := walk(res, e); err != nil {
						return err
					}
				}
			}
		}
		return nil
	}
	return walk(r.allocOp().Memref(), -1)
}

// episodeOf returns the episode of a top-level op of the body: the number
// of the tile's stores before it (the last episode after the last store).
func (p *pipelinedLoop) episodeOf(r *tileRing, top *ir.Operation) int {
	e := 0
	for _, st := range r.copies {
		if st.Block() == top.Block() && st.IsBeforeInBlock(top) {
			e++
		}
	}
	return min(e, len(r.copies)-1)
}

// episodeSlots computes, at b, each episode's slot from the iteration's
// j mod S (plus a ping-pong warpgroup's base).
func (p *pipelinedLoop) episodeSlots(b tb, jmod ir.Value, e int64) []ir.Value {
	slots := make([]ir.Value, e)
	first := b.bin(arith.Muli, jmod, b.idx(e))
	for i := range slots {
		var s ir.Value
		if x := b.bin(arith.Addi, first, b.idx(int64(i))); isPow2(p.s) {
			s = b.bin(arith.Remui, x, b.idx(p.s))
		} else {
			_, s = b.divModSmall(x, p.s) // below S*E + E
		}
		if p.storeSlotBase != nil {
			s = b.bin(arith.Addi, p.storeSlotBase, s)
		}
		slots[i] = s
	}
	return slots
}

// viewEpisodes replaces the uses of the output tile t by views of its
// episodes' slots (created at b, the top of the body).
func (p *pipelinedLoop) viewEpisodes(b tb, t ir.Value, r *tileRing) {
	views := make([]ir.Value, len(p.storeSlots))
	for i, s := range p.storeSlots {
		views[i] = r.slotView(b, s)
	}
	body := p.body
	for _, u := range ir.Uses(t) {
		owner := u.Owner()
		if !body.Parent().IsAncestorOf(owner) || isTileOp(owner) {
			continue
		}
		u.Set(views[p.episodeOf(r, p.topLevel(owner))])
	}
}

// episodeFirsts returns the first top-level op of the body of each store
// episode: after the previous tmac.tma.store (or from the top of the
// body), the first op using a view of an output tile's ring, or the store
// itself where no op before it does. A tile stored once an iteration has
// one episode; its first op is where the wait for its slot goes.
func (p *pipelinedLoop) episodeFirsts() []*ir.Operation {
	outRing := map[ir.Value]bool{}
	for _, t := range p.order {
		if p.tiles[t].isStore {
			outRing[p.tiles[t].ring] = true
		}
	}
	usesSlot := func(op *ir.Operation) bool {
		uses := false
		ir.Walk(op, func(o *ir.Operation) ir.WalkResult {
			for _, v := range o.Operands() {
				if d, ok := memref.AsView(v.DefiningOp()); ok && d.Op.Block() == p.body && outRing[d.Source()] {
					uses = true
				}
			}
			return ir.Advance
		})
		return uses
	}
	var firsts []*ir.Operation
	need := true
	for _, op := range p.body.Ops() {
		if op.Name() == tmac.TmaStore {
			if need {
				firsts = append(firsts, op)
			}
			need = true
			continue
		}
		if need && usesSlot(op) {
			firsts = append(firsts, op)
			need = false
		}
	}
	return firsts
}

// rewriteEpisodes is rewriteStores for a tile stored E > 1 times an
// iteration: per episode a wait for its slot and a barrier before its
// first write, then the fence, barrier and store.
func (p *pipelinedLoop) rewriteEpisodes(loop *ir.Operation, is0 ir.Value) {
	for _, first := range p.episodeFirsts() {
		wb := newTB(loop.Loc)
		wb.SetInsertionPoint(first)
		waitStoresRead(wb, is0, p.storeWait())
	}
	p.recordStores(p.rec)
	for i, st := range p.stores {
		b := newTB(st.Op.Loc)
		b.SetInsertionPoint(st.Op)
		publishToTMA(b)
		p.storeTile(b, st, p.storeSlots[i], is0)
	}
	p.drainStores(loop, is0)
}
