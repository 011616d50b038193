package pipelining

import (
	"fmt"
	"strings"

	"github.com/tmac-dev/tmac/dialects/arith"
	"github.com/tmac-dev/tmac/dialects/nvgpu"
	"github.com/tmac-dev/tmac/dialects/tmac"
	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/passes/schedule"
)

// The recording side of tma-pipeline and warp-specialize (passes/schedule):
// each method does nothing when the loop is not recorded (p.rec == nil).

// stageSource says where a loop's stage count comes from.
func stageSource(loop *ir.Operation, option string, def int64) string {
	if v, ok := ir.AttrInt(loop.Attr(tmac.StagesAttr)); ok {
		return fmt.Sprintf("%s = %d", tmac.StagesAttr, v)
	}
	return fmt.Sprintf("pass option %s=%d", option, def)
}

// newRecord starts the record of an analysed loop (before the rewrite,
// while the loop as written still exists).
func (p *pipelinedLoop) newRecord(kind string, requested int64, from string) *schedule.LoopSchedule {
	r := &schedule.LoopSchedule{Kind: kind, Loc: p.loop.Loc, Stages: p.n, RequestedStages: requested, StagesFrom: from,
		Trip: p.tripC, WGMMAWait: -1, ClusterSize: 1, StageBytes: p.stageBytes()}
	lb, okl := arith.ConstantInt(p.forOp().LowerBound())
	st, oks := arith.ConstantInt(p.forOp().Step())
	r.LB, r.Step, r.IVKnown = lb, st, okl && oks
	for _, l := range p.loads {
		r.StageBoxes += p.ringOf(l.Dst()).boxes.N
	}
	return r
}

// finishRecord adds the tiles, with the rings the rewrite made.
func (p *pipelinedLoop) finishRecord() {
	for _, t := range p.order {
		r := p.tiles[t]
		ts := &schedule.TileSchedule{Loc: r.alloc.Loc, Tile: r.tile, SlotBytes: r.slot, Align: r.align, Role: "load", Slots: p.n}
		if r.desc != nil {
			ts.Box = r.desc.Tensor
			ts.Boxes = r.boxes.N
			ts.Swizzle = schedule.SwizzleName(r.desc.Swizzle)
		}
		var readers []string
		switch {
		case r.isStore:
			ts.Role, ts.Slots = "store", p.s
			readers = append(readers, "TMA store (written by the threads)")
			ts.Note = storeTileNote(r)
		case r.passThrough:
			ts.Role = "load+store"
		}
		if !r.isStore {
			if r.syncUse {
				readers = append(readers, "threads")
			}
			if r.asyncUse {
				readers = append(readers, "wgmma")
			}
			if r.passThrough {
				readers = append(readers, "TMA store")
			}
		}
		ts.ReadBy = strings.Join(readers, ", ")
		for _, c := range r.copies {
			if p.multicast[c] {
				ts.Multicast = true
			}
		}
		if r.ring != nil {
			ts.Ring = r.ring.DefiningOp()
		}
		p.rec.Tiles = append(p.rec.Tiles, ts)
	}
	p.rec.PassThrough = p.passThrough()
}

// recordStageGroup records tma-pipeline's ring of stage barriers.
func (p *pipelinedLoop) recordStageGroup(bars ir.Value) {
	g := p.k.sched.Group(p.k.op, bars)
	g.Role, g.Loop, g.Count, g.TxBytes = "stage", p.rec, 1, p.stageBytes()
	g.Guards = "barrier s completes when slot s has landed"
	g.ArrivedBy = "thread 0: arrive.expect_tx, then the TMA loads' bytes"
	p.rec.IssuedBy = "thread 0"
}

// recordWait records who waits on group g and, when the pass writes the
// parity itself, the parity.
func (p *pipelinedLoop) recordWait(g ir.Value, by string, w *schedule.BarrierWait) {
	if p.rec == nil {
		return
	}
	r := p.k.sched.Group(p.k.op, g)
	r.WaitedBy = by
	p.rec.WaitedBy = by
	if w != nil {
		r.Waits = append(r.Waits, w)
	}
}

// recordRefill records the refill discipline: iteration j issues position
// j+ahead and releases the slot of position j-lag.
func (p *pipelinedLoop) recordRefill(ahead, lag int64, at string, why ...string) {
	if p.rec == nil {
		return
	}
	p.rec.Ahead, p.rec.ReleaseLag, p.rec.IssueAt = ahead, lag, at
	p.rec.ReleasedBy = strings.Join(why, "; ")
}

// recordAfter records what the pass puts after the loop.
func (p *pipelinedLoop) recordAfter(what string) {
	if p.rec != nil {
		p.rec.AfterLoop = append(p.rec.AfterLoop, what)
	}
}

// recordRelease records warp-specialize's release discipline: iteration
// j releases the slot of position j-lag, so the producer may issue
// position j+N-lag.
func (p *pipelinedLoop) recordRelease(lag int64, how string) {
	if p.rec == nil {
		return
	}
	if len(p.multicast) > 0 {
		how += fmt.Sprintf(" of each of the cluster's %d blocks (mapa, remote arrive)", p.clusterSize)
	}
	p.rec.ReleaseLag, p.rec.Ahead, p.rec.ReleasedBy, p.rec.IssueOnRelease = lag, p.n-lag, how, true
	p.rec.PerTileRelease = p.pingpongLocal != nil
}

// recordWSGroups records warp-specialize's full and empty rings.
func (p *pipelinedLoop) recordWSGroups(full, empty ir.Value, releases int64, sync, async, crossCTA, pingpong bool) {
	if p.rec == nil {
		return
	}
	f := p.k.sched.Group(p.k.op, full)
	f.Role, f.Loop, f.Count, f.TxBytes = "full", p.rec, 1, p.stageBytes()
	f.Guards = "full[s] completes when slot s has landed"
	f.ArrivedBy = "producer thread 0: arrive.expect_tx, then the TMA loads' bytes"
	if crossCTA {
		f.ArrivedBy += fmt.Sprintf(" (multicast boxes from each of the cluster's %d blocks)", p.clusterSize)
	}
	f.WaitedBy = "every consumer thread"
	e := p.k.sched.Group(p.k.op, empty)
	e.Role, e.Loop, e.Count = "empty", p.rec, releases
	e.Guards = "empty[s] completes when slot s is free again (its readers are done)"
	switch {
	case sync && !async && !crossCTA:
		e.ArrivedBy = "every consumer thread"
	case pingpong:
		e.ArrivedBy = "the leader thread of the warpgroup that read the slot"
	default:
		e.ArrivedBy = "the leader thread of each consumer warpgroup"
	}
	if crossCTA {
		e.ArrivedBy += ", in every block of the cluster"
	}
	e.WaitedBy = "producer thread 0"
	p.rec.WaitedBy = f.WaitedBy
}

// recordWSWait records a parity warp-specialize writes on group g.
func (p *pipelinedLoop) recordWSWait(g ir.Value, r *schedule.ParityRing) {
	if p.rec == nil {
		return
	}
	grp := p.k.sched.Group(p.k.op, g)
	for _, w := range grp.Waits {
		if w.By == "warp-specialize" {
			return // the persistent producer's loop is built once per call; record the rule once
		}
	}
	grp.Waits = append(grp.Waits, &schedule.BarrierWait{Loc: p.loop.Loc, By: "warp-specialize", Ring: r})
}

// storeTileNote says how the warpgroup accumulator stores write an output
// tile: in the TMA store's layout (tmaLayout), or row-major with rows of a
// multiple of 128 bytes, where each warp's pair stores fall in 4 of the 32
// banks; "" otherwise.
func storeTileNote(r *tileRing) string {
	switch {
	case r.accStores == 0:
		return ""
	case r.laidOut == r.accStores:
		return "written by tmac.warpgroup.mma.store in the TMA store's layout (tmaLayout): its warps' stores spread over all 32 banks"
	}
	rowBytes := r.tile.Shape()[r.tile.Rank()-1] * int64(ir.BitWidth(r.tile.Elem)) / 8
	if r.desc == nil || r.desc.Swizzle != nvgpu.SwizzleNone || rowBytes%128 != 0 {
		return ""
	}
	return fmt.Sprintf("written row-major by warpgroup accumulator stores: rows of %d bytes put each warp's stores in 4 of the 32 banks "+
		"(8-way conflicts; tmac run --target=emu --bank-conflicts counts them); tmac.warpgroup.mma.store {tmaLayout = T}, T a tensor map "+
		"of swizzled boxes, avoids them", rowBytes)
}
