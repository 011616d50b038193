// Package pipelining turns tile loops into multistage TMA pipelines: the
// tma-pipeline and warp-specialize passes, which share the construction of
// rings, barriers and normalised loops, and the schedule record they fill
// as they build (schedule_record.go).
package pipelining

import (
	"fmt"

	"github.com/tmac-dev/tmac/dialects/arith"
	"github.com/tmac-dev/tmac/dialects/gpu"
	"github.com/tmac-dev/tmac/dialects/memref"
	"github.com/tmac-dev/tmac/dialects/nvgpu"
	"github.com/tmac-dev/tmac/dialects/nvvm"
	"github.com/tmac-dev/tmac/dialects/scf"
	"github.com/tmac-dev/tmac/dialects/tmac"
	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/ir/eval"
	"github.com/tmac-dev/tmac/passes"
	"github.com/tmac-dev/tmac/passes/internal/passutil"
	"github.com/tmac-dev/tmac/passes/schedule"
)

// tma-pipeline rewrites the simple tile-loop form (dialects/tmac) into a
// multistage TMA pipeline. It runs on kernels (gpu.func ... kernel, after
// outline-kernels) and on gpu.launch bodies.
//
// Input: an scf.for at the top level of a kernel whose body holds, at its
// own top level, tmac.tma.load ops into logical tiles (memref.alloc in
// workgroup memory, defined outside the loop and used only by it), a
// tmac.tma.wait, the consumers of the tiles (ordinary loads, or wgmma
// through nvgpu.warpgroup.generate.descriptor), and optionally
// tmac.tma.store ops from output tiles written by the block's threads.
// The loop's `tmac.stages` attribute (else the pass option) is the number
// N of load stages, `tmac.store_stages` (else the option) the number S of
// rotating output tiles; both are clamped to a static trip count.
//
// Output, with T the trip count (static, or computed before the loop):
//
//   - each loaded tile becomes a ring of N slots (one memref.alloc of
//     N * slot bytes, aligned for its swizzle: 1024 B for 128B, 512 / 256
//     for 64B / 32B, else 128), each output tile a ring of S slots;
//   - a group of N mbarriers, initialised (count 1) by one elected thread
//     (thread 0 of the block) followed by a block barrier;
//   - a prologue in which the elected thread issues iterations 0..N-2
//     (each under `s < T` when T is dynamic): arrive.expect_tx with the
//     bytes of all the iteration's boxes, then the TMA loads, box by box;
//   - the loop, normalised to `scf.for %j = 0 to T step 1` (the original
//     induction variable is lb + j*step): it waits with
//     `tmac.mbarrier.wait %bars[j mod N]` (mbarrier-phase computes the
//     parity) where the first tmac.tma.wait was, consumes slot j mod N,
//     and at the end of the body the elected thread refills slot
//     (j-1) mod N with iteration j+N-1 when j+N-1 < T. With N = 1 the
//     loads of iteration j are issued at the start of its body instead.
//     The last N-1 iterations, whose refills are predicated off, are the
//     epilogue that drains the ring; peeling them into a second loop
//     would only duplicate the body.
//
// Releasing a slot before it is refilled: the slot refilled in iteration
// j was read in iteration j-1. Synchronous readers (every thread, ordinary
// loads) have all finished iteration j-1 once the elected thread has
// passed a block barrier of iteration j: if the body has no top-level
// gpu.barrier, one is inserted before the refill. Asynchronous readers
// (wgmma): after the last wgmma of the body (nvgpu.warpgroup.mma or
// tmac.warpgroup.mma, known by their effects) at most waitGroup
// wgmma groups are pending; with waitGroup <= the number of mma ops
// directly in the body (each commits one group per iteration) those are
// all of iteration j, so iteration j-1's have completed; a larger
// waitGroup is lowered to that count (and to 0 when N = 1, where the
// refill precedes the iteration's own mma). When the last mma is nested
// (under scf.if, in an inner loop) an explicit wgmma wait_group of that
// count follows its top-level ancestor instead. Never a full drain per
// iteration (except N = 1). With more than one warpgroup the other warpgroups'
// progress needs a block barrier after the last mma (inserted before the
// refill when missing). After the loop: wgmma wait_group 0 when the body
// left groups pending, and a block barrier when other threads may still
// read the ring (so later buffers may reuse its bytes).
//
// Stores: before the first top-level op of the body that uses an output
// tile, the elected thread waits until at most S-1 bulk store groups are
// still reading (cp.async.bulk.wait_group.read (S-1)*G, G the bulk groups
// an iteration commits: lower-nvgpu commits one per TMA store) and the block
// synchronises, so slot j mod S (last read by iteration j-S's store) may
// be overwritten; each tmac.tma.store becomes a shared-memory proxy fence,
// a block barrier and, from the elected thread, the TMA store box by box;
// after the loop, wait_group.read 0.
//
// Pass-through tiles: a loaded tile stored by TMA in the same iteration,
// after the wait, with the same boxes (a TMA copy) keeps its load ring;
// the elected thread stores it from slot j mod N with no fence or barrier
// (a TMA write read by a TMA store: both in the async proxy), and before
// refilling slot (j-1) mod N waits until at most one iteration's bulk
// groups are still reading (wait_group.read G); with N = 1 it waits for
// all of them before the iteration's load. Threads may read such a tile
// but not write it, and such a loop stores no output tiles. When no
// thread reads the tiles (a pure copy), only the elected thread waits
// (explicit parity (j / N) mod 2): the others, held by no barrier, could
// fall two phases behind a barrier and wait for a parity come round again.
//
// A tmac.tma.store at the top level of the kernel, outside any loop (an
// epilogue), is lowered on its own: tma_store_epilogue.go.
//
// Rejected with a diagnostic: other tile ops outside such a loop, a loop nested
// in another loop or under control flow, tiles used outside their loop or
// read before the wait, coordinates that depend on loop-carried values or
// on non-pure ops, a tile loaded twice per iteration, a tile stored
// before it is loaded, pass-through tiles written by the threads, stored
// with other boxes, loaded into their leading rows or before the wait, or
// mixed with output tiles.
func init() {
	passes.Register(&passes.Info{
		Name:    "tma-pipeline",
		Summary: "Rewrite tmac.tma.load/wait/store loops into N-stage TMA pipelines (rings of buffers, mbarriers, prologue, predicated refills, store rotation)",
		Description: "Rewrites the simple tile-loop form (the `tmac` dialect) into a multistage TMA pipeline. It runs on kernels and on `gpu.launch` bodies.\n" +
			"\n" +
			"Input: an `scf.for` at the top level of a kernel whose body holds `tmac.tma.load` ops into tiles (workgroup `memref.alloc`s defined outside the loop and used only in it), a `tmac.tma.wait`, the code reading the tiles (loads, or wgmma through `nvgpu.warpgroup.generate.descriptor`), and optionally `tmac.tma.store` ops of output tiles written by the threads. The loop's `tmac.stages` attribute (else the `stages` option) gives the number N of load stages, `tmac.store_stages` (else `store-stages`) the number S of rotating output tiles; both are clamped to a static trip count.\n" +
			"\n" +
			"Output:\n" +
			"\n" +
			"- each loaded tile becomes a ring of N slots (one allocation, aligned for its swizzle) and each output tile a ring of S slots; a group of N mbarriers is initialised by one elected thread, followed by a block barrier;\n" +
			"- a prologue in which the elected thread issues the first iterations' loads: `nvgpu.mbarrier.arrive.expect_tx` with the bytes of the iteration's boxes, then the TMA loads, box by box (a tile wider than its descriptor's box takes several; a load into a `memref.subview` of a tile's leading rows fills only those rows of each box, and the stage expects only their bytes);\n" +
			"- the loop, normalised to run from 0 to the trip count T, waits with `tmac.mbarrier.wait` on barrier j mod N where the `tmac.tma.wait` was (`mbarrier-phase` computes the parity), reads slot j mod N, and the elected thread refills a slot with a later iteration's loads once every reader is done with it: after a block barrier for tiles read by the threads, after the wgmma of the previous iteration has completed (its `waitGroup` lowered as needed) for wgmma operands;\n" +
			"- stores: before the output tile is written, the elected thread waits until at most S-1 bulk store groups are still reading (`nvvm.cp.async.bulk.wait_group` with `read`) and the block synchronises; each `tmac.tma.store` becomes a shared-memory proxy fence, a block barrier and the TMA store from the elected thread; after the loop, a final wait;\n" +
			"- an output tile stored more than once an iteration (an epilogue written a part at a time through one small tile; the loop's only output tile, each view of it used within one part) rotates its S slots by store: part e of iteration j uses slot (j·E + e) mod S, and each part waits for its slot (at most (S-1)·G groups reading, G those of one store) and meets at a barrier before its first write;\n" +
			"- a tile loaded and stored unchanged (a TMA copy) keeps its load ring and is stored from it;\n" +
			"- a `tmac.tma.store` at the top level of the kernel, outside any loop (a non-persistent kernel's epilogue; its tile a workgroup `memref.alloc`, aligned here for TMA): a shared-memory proxy fence, a block barrier, then from the elected thread the TMA store box by box and `nvvm.cp.async.bulk.wait_group 0` with `read` (the tile stays alive until read, before the kernel exits), and a block barrier unless the kernel ends there; consecutive stores share the fence, barrier and wait.\n" +
			"\n" +
			"Other tile ops outside such a loop, loops nested in loops or under control flow, tiles used outside their loop or read before the wait, coordinates depending on loop-carried values, and tiles loaded twice per iteration are rejected with a diagnostic.",
		Options: []passes.Option{
			{Name: "stages", Default: "3", Help: "load stages for loops without a tmac.stages attribute"},
			{Name: "store-stages", Default: "2", Help: "rotating output tiles for loops without a tmac.store_stages attribute"},
		},
		New: func(o passes.Options) (passes.Pass, error) {
			n, err := o.Int("stages")
			if err != nil {
				return nil, err
			}
			s, err := o.Int("store-stages")
			if err != nil {
				return nil, err
			}
			if n < 1 || s < 1 {
				return nil, fmt.Errorf("tma-pipeline: stages and store-stages must be at least 1")
			}
			return passes.PassFunc(func(op *ir.Operation, ctx *passes.Context) error {
				return tmaPipeline(op, int64(n), int64(s), ctx.Record())
			}), nil
		},
		Needs: []passes.Need{
			{Pass: "warp-specialize", Why: "to rewrite the loops marked tmac.warp_specialize, which tma-pipeline would pipeline without warp specialization"},
		},
		Rewrites: isTileOp,
	})
}

// maxStages bounds the stage attributes (the prologue is unrolled).
const maxStages = 16

// tmaKernel is one kernel body the pass rewrites.
type tmaKernel struct {
	op      *ir.Operation // gpu.func or gpu.launch
	body    *ir.Region
	threads int64 // block size in threads, 0 if unknown
	yzOne   bool  // the block's y and z sizes are known to be 1
	sched   *schedule.Schedule
}

func tmaPipeline(top *ir.Operation, stages, storeStages int64, sched *schedule.Schedule) error {
	for _, k := range tmaKernels(top) {
		k.sched = sched
		if err := k.run(stages, storeStages); err != nil {
			return err
		}
	}
	// Tile ops left outside kernels.
	var err error
	ir.Walk(top, func(op *ir.Operation) ir.WalkResult {
		if err == nil && isTileOp(op) {
			err = op.EmitError("'%s' must be inside a GPU kernel (gpu.launch body or gpu.func kernel)", op.Name())
		}
		return ir.Advance
	})
	return err
}

// tmaKernels returns the kernels under top (gpu.func kernels and
// gpu.launch bodies) with what is known of their block size.
func tmaKernels(top *ir.Operation) []*tmaKernel {
	var kernels []*tmaKernel
	ir.Walk(top, func(op *ir.Operation) ir.WalkResult {
		switch op.Name() {
		case gpu.Func:
			if body, ok := passutil.KernelBody(op); ok {
				k := &tmaKernel{op: op, body: body}
				for _, name := range []string{"known_block_size", "gpu.known_block_size"} {
					if a, ok := op.Attr(name).(*ir.DenseArrayAttr); ok && len(a.Ints) == 3 {
						k.threads = a.Ints[0] * a.Ints[1] * a.Ints[2]
						k.yzOne = a.Ints[1] == 1 && a.Ints[2] == 1
					}
				}
				kernels = append(kernels, k)
			}
			return ir.Skip
		case gpu.Launch:
			l := gpu.LaunchOp{Op: op}
			k := &tmaKernel{op: op, body: l.Body()}
			x, okx := arith.ConstantInt(l.BlockSizeX())
			y, oky := arith.ConstantInt(l.BlockSizeY())
			z, okz := arith.ConstantInt(l.BlockSizeZ())
			if okx && oky && okz {
				k.threads = x * y * z
				k.yzOne = y == 1 && z == 1
			}
			kernels = append(kernels, k)
			return ir.Skip
		}
		return ir.Advance
	})
	return kernels
}

// isTileOp reports whether op is one of the ops this pass rewrites.
func isTileOp(op *ir.Operation) bool {
	switch op.Name() {
	case tmac.TmaLoad, tmac.TmaWait, tmac.TmaStore:
		return true
	}
	return false
}

func (k *tmaKernel) run(stages, storeStages int64) error {
	loops := []*ir.Operation{}
	var outside []*ir.Operation // tmac.tma.store ops at the top level of the kernel
	seen := map[*ir.Operation]bool{}
	var err error
	ir.Walk(k.op, func(op *ir.Operation) ir.WalkResult {
		if err != nil || !isTileOp(op) {
			return ir.Advance
		}
		if op.Name() == tmac.TmaStore && op.Block() != nil && op.Block().Parent() == k.body {
			outside = append(outside, op) // an epilogue's store (tma_store_epilogue.go)
			return ir.Advance
		}
		loop, ok := scf.AsFor(op.ParentOp())
		if !ok || op.Block() != loop.Region().Entry() {
			if op.Name() == tmac.TmaStore {
				err = op.EmitError("'%s' must be at the top level of the body of an scf.for (the loop that tma-pipeline pipelines) or of the kernel", op.Name())
				return ir.Advance
			}
			err = op.EmitError("'%s' must be at the top level of the body of an scf.for (the loop that tma-pipeline pipelines)", op.Name())
			return ir.Advance
		}
		if !seen[loop.Op] {
			seen[loop.Op] = true
			loops = append(loops, loop.Op)
		}
		return ir.Advance
	})
	if err != nil {
		return err
	}
	for _, loop := range loops {
		if loop.Block() == nil || loop.Block().Parent() != k.body {
			return loop.EmitError("a loop with tmac tile ops must be at the top level of the kernel: tma-pipeline does not pipeline loops nested in other loops or under control flow yet (the barrier phases would have to carry across them)")
		}
		if err := k.pipelineLoop(loop, stages, storeStages); err != nil {
			return err
		}
	}
	return k.storesOutsideLoops(outside, k.elected)
}

// tileRing is one logical tile and the ring that replaces it.
type tileRing struct {
	alloc *ir.Operation // the tile's memref.alloc
	tile  *ir.MemRefType
	desc  *nvgpu.TensorMapDescriptor
	// boxes and bytes: how the copy through desc places its boxes in a
	// slot and the bytes it moves (less than the tile's for a load into
	// its leading rows, tmac.LeadingRows); views are such loads'
	// memref.subview ops, erased with the allocation.
	boxes   tmac.TileBoxes
	bytes   int64
	views   []*ir.Operation
	slot    int64 // bytes per slot
	align   int64
	ring    ir.Value // the ring buffer (memref<N*slot x i8>)
	copies  []*ir.Operation
	isStore bool
	// accStores counts the warpgroup accumulator stores writing the tile
	// (tmac. and nvgpu.warpgroup.mma.store), laidOut those of them in the
	// TMA store's layout (tmaLayout): what explain says of an output tile.
	accStores, laidOut int
	asyncUse           bool // read by wgmma (through a descriptor)
	syncUse            bool // read or written by the block's threads
	// passThrough: the loaded tile is also stored by TMA in the same
	// iteration (a TMA copy with nothing in between). Its slot is released
	// when that store has finished reading it (bulk wait_group.read), not
	// by a block barrier; the threads may read it but not write it.
	passThrough bool
}

// slotView is the tile's view of slot s of its ring, created at b.
func (r *tileRing) slotView(b tb, s ir.Value) ir.Value {
	return b.op(memref.View, []ir.Value{r.ring, b.bin(arith.Muli, s, b.idx(r.slot))}, []ir.Type{r.tile}).Result(0)
}

// allocOp is the view of the tile's allocation.
func (r *tileRing) allocOp() memref.AllocOp { return memref.AllocOp{Op: r.alloc} }

// pipelinedLoop holds the analysis of one loop.
type pipelinedLoop struct {
	k       *tmaKernel
	loop    *ir.Operation
	body    *ir.Block
	iv      ir.Value      // the original induction variable
	ivVal   ir.Value      // what replaced it in the normalised loop
	firstOp *ir.Operation // the first original op of the normalised body
	loads   []tmac.TmaLoadOp
	stores  []tmac.TmaStoreOp
	waits   []*ir.Operation
	tiles   map[ir.Value]*tileRing
	order   []ir.Value // tiles in first-seen order (deterministic output)
	n, s    int64      // load stages, store stages
	// A ping-pong kernel's output tiles (warp-specialize's consumerStores):
	// the ring holds both warpgroups' s slots, a warpgroup's from
	// storeSlotBase (nil: one set of s slots).
	storeSlotBase ir.Value
	tripC         int64                   // static trip count, or -1
	baseRing      map[ringKey][2]ir.Value // each tile base's division by a ring size (narrowRing)
	round         ir.Value                // position g's round g / N on i32 (narrowRing), or nil
	mmas          []*ir.Operation
	slice         map[*ir.Operation]bool
	sliceOps      []*ir.Operation // coordinate computations in the body, in order
	// lastRead is the last top-level op of the body reading a loaded tile.
	lastRead *ir.Operation
	// multicast marks loads shared by the CTAs of a cluster
	// (warp-specialize), clusterSize their number and rank this CTA's
	// rank in the cluster (index).
	multicast   map[*ir.Operation]bool
	clusterSize int64
	rank        ir.Value
	// wg is a ping-pong consumer's warpgroup (0 or 1); pingpongLocal the
	// K loop's own index and pingpongTrip its trip count (warp-specialize).
	wg, pingpongLocal, pingpongTrip ir.Value
	// base, when set, is the ring position of the loop's first iteration
	// (an enclosing loop's iterations continue the ring); g is base + j,
	// set by normalise.
	base, g ir.Value
	// fullDepth: only the block's threads read the loaded tiles and a block
	// barrier follows their last read (a gpu.barrier, or the one
	// tma-pipeline puts before a tmac.tma.store), so the slot is free right
	// after it and is refilled there with iteration j+N: N loads in flight
	// instead of N-1.
	fullDepth bool
	// bulkGroups: the bulk store groups an iteration commits (storeGroups).
	bulkGroups int64
	// storeSlots: the slot of each episode of an output tile stored more
	// than once an iteration (tma_store_episodes.go), set by normalise.
	storeSlots []ir.Value
	// episodes: the stores of the output tile an iteration (analyse; 0 or
	// 1: whole tiles).
	episodes int64
	// rec is the loop's record for tmac explain (nil when not recording).
	rec *schedule.LoopSchedule
}

func stageAttr(loop *ir.Operation, name string, def int64) (int64, error) {
	a := loop.Attr(name)
	if a == nil {
		return def, nil
	}
	v, ok := ir.AttrInt(a)
	if !ok || v < 1 || v > maxStages {
		return 0, loop.EmitError("'%s' must be an integer from 1 to %d", name, maxStages)
	}
	return v, nil
}

func (k *tmaKernel) pipelineLoop(loop *ir.Operation, stages, storeStages int64) error {
	p := newPipelinedLoop(k, loop)
	var err error
	if p.n, err = stageAttr(loop, tmac.StagesAttr, stages); err != nil {
		return err
	}
	if p.s, err = stageAttr(loop, tmac.StoreStagesAttr, storeStages); err != nil {
		return err
	}
	requested := p.n
	if err := p.analyse(); err != nil {
		return err
	}
	if k.sched != nil {
		p.rec = p.newRecord(schedule.KindPipelined, requested, stageSource(loop, "stages", stages))
	}
	p.rewrite()
	if p.rec != nil {
		p.finishRecord()
		k.sched.AddLoop(k.op, p.rec)
	}
	return nil
}

// newPipelinedLoop starts the analysis of the scf.for loop.
func newPipelinedLoop(k *tmaKernel, loop *ir.Operation) *pipelinedLoop {
	p := &pipelinedLoop{k: k, loop: loop, body: scf.ForOp{Op: loop}.Region().Entry(), tiles: map[ir.Value]*tileRing{}, slice: map[*ir.Operation]bool{}, tripC: -1}
	p.iv = p.body.Arg(0)
	return p
}

// forOp is the view of the loop.
func (p *pipelinedLoop) forOp() scf.ForOp { return scf.ForOp{Op: p.loop} }

// analyse collects the loop's tile ops and checks the rules of the form.
func (p *pipelinedLoop) analyse() error {
	loop := p.forOp()
	lb, okl := arith.ConstantInt(loop.LowerBound())
	ub, oku := arith.ConstantInt(loop.UpperBound())
	st, oks := arith.ConstantInt(loop.Step())
	if oks && st <= 0 {
		return p.loop.EmitError("tma-pipeline needs a positive loop step")
	}
	if okl && oku && oks {
		p.tripC = 0
		if ub > lb {
			p.tripC = (ub - lb + st - 1) / st
		}
	}
	if loop.LowerBound().Type() != ir.Type(ir.Index) {
		return p.loop.EmitError("tma-pipeline needs an index-typed loop")
	}
	for _, op := range p.body.Ops() {
		switch op.Name() {
		case tmac.TmaLoad, tmac.TmaStore:
			t, tensorMap, _ := tileCopy(op)
			bx, whole, bytes := tmac.CopyBoxes(op)
			r, err := p.tileOf(op, whole, tensorMap)
			if err != nil {
				return err
			}
			store := op.Name() == tmac.TmaStore
			for _, c := range r.copies {
				// An output tile may be stored several times
				// (tma_store_episodes.go); nothing else is copied twice.
				if c.Name() == op.Name() && !(store && r.isStore) {
					return op.EmitError("tile is copied twice in one iteration (first copy at %s)", c.Loc)
				}
			}
			switch {
			case len(r.copies) == 0:
				r.isStore = store
				r.boxes, r.bytes = bx, bytes
				if whole != t {
					r.views = append(r.views, t.DefiningOp())
				}
			case r.isStore && store:
				// Stored again: another episode (tma_store_episodes.go),
				// through the same box.
				if d, _ := nvgpu.AsTensorMapDescriptor(tensorMap.Type()); d == nil || d.Tensor != r.desc.Tensor || (whole != t) != (len(r.views) > 0) {
					return op.EmitError("an output tile stored more than once an iteration needs the same box and the same rows each time (first store at %s)", r.copies[0].Loc)
				}
			case r.isStore:
				return op.EmitError("tile is stored by TMA before it is loaded in this loop: load it first (a tile loaded and then stored is copied through shared memory)")
			default:
				// Loaded, then stored: a pass-through tile. Its store uses the
				// load's slots box by box, so the boxes must match.
				if d, _ := nvgpu.AsTensorMapDescriptor(tensorMap.Type()); d == nil || d.Tensor != r.desc.Tensor {
					return op.EmitError("a tile stored straight from its TMA load needs the same box for both (%s loaded, %s stored)", r.desc.Tensor, tensorMap.Type())
				}
				if len(r.views) > 0 {
					return op.EmitError("a tile stored straight from its TMA load must be loaded whole, not into its leading rows (the store would copy the rows the load left as they were)")
				}
				r.passThrough = true
			}
			r.copies = append(r.copies, op)
			if store {
				p.stores = append(p.stores, tmac.TmaStoreOp{Op: op})
			} else {
				p.loads = append(p.loads, tmac.TmaLoadOp{Op: op})
			}
		case tmac.TmaWait:
			p.waits = append(p.waits, op)
			for _, t := range (tmac.TmaWaitOp{Op: op}).Tiles() {
				r, err := p.tileOf(op, wholeTile(t), nil)
				if err != nil {
					return err
				}
				if r.isStore {
					return op.EmitError("tmac.tma.wait names a tile that is stored, not loaded")
				}
			}
		}
	}
	for _, w := range p.waits {
		for _, t := range (tmac.TmaWaitOp{Op: w}).Tiles() {
			r := p.tiles[wholeTile(t)]
			if len(r.copies) == 0 {
				return w.EmitError("tmac.tma.wait names a tile that is not loaded in this loop")
			}
			if r.isStore { // stored after the wait
				return w.EmitError("tmac.tma.wait names a tile that is stored, not loaded")
			}
		}
	}
	if len(p.loads) > 0 && len(p.waits) == 0 {
		return p.loads[0].Op.EmitError("tile loaded but never waited for: add a tmac.tma.wait before its first use")
	}
	if len(p.loads) == 0 && len(p.waits) > 0 {
		return p.waits[0].EmitError("tmac.tma.wait without a tmac.tma.load in the loop")
	}
	p.episodes = p.countEpisodes()
	if p.tripC >= 0 {
		// A static trip count below the stage count needs no more slots.
		p.n = max(1, min(p.n, p.tripC))
		p.s = max(1, min(p.s, p.tripC*p.storeEpisodes()))
	}
	for _, t := range p.order {
		if r := p.tiles[t]; r.isStore && len(r.copies) > 1 {
			if err := p.checkEpisodes(r); err != nil {
				return err
			}
		}
	}
	for _, t := range p.order {
		if err := p.checkTileUses(p.tiles[t]); err != nil {
			return err
		}
	}
	var pass, out *ir.Operation // a pass-through store, an output tile's store
	for _, st := range p.stores {
		if p.ringOf(st.Src()).passThrough {
			pass = st.Op
			if len(p.waits) > 0 && !p.waits[0].IsBeforeInBlock(st.Op) {
				return st.Op.EmitError("tile stored before the tmac.tma.wait of its loads")
			}
		} else {
			out = st.Op
		}
	}
	if pass != nil && out != nil {
		return out.EmitError("a loop either stores its loaded tiles by TMA or separate output tiles, not both, for now (copy the loaded tile into an output tile too)")
	}
	for _, st := range p.stores {
		p.bulkGroups += p.ringOf(st.Src()).boxes.N
	}
	p.fullDepth = p.freeingBarrier() != nil && pass == nil
	for _, t := range p.order {
		if r := p.tiles[t]; !r.isStore && !(r.syncUse && !r.asyncUse) {
			p.fullDepth = false
		}
	}
	for _, l := range p.loads {
		for _, c := range l.Coordinates() {
			if err := p.addToSlice(l.Op, c); err != nil {
				return err
			}
		}
	}
	for _, st := range p.stores {
		for _, c := range st.Coordinates() {
			if err := p.addToSlice(st.Op, c); err != nil {
				return err
			}
		}
	}
	var err error
	for _, op := range p.body.Ops() {
		if p.slice[op] {
			p.sliceOps = append(p.sliceOps, op)
		}
		// The wgmma ops, known by their effects: each reads its tiles
		// asynchronously until its group is retired.
		ir.Walk(op, func(o *ir.Operation) ir.WalkResult {
			switch {
			case passutil.IsWarpgroupMma(o):
				p.mmas = append(p.mmas, o)
			case passutil.ReadsThroughDescriptors(o) && err == nil:
				err = o.EmitError("'%s' reads shared memory asynchronously but has no waitGroup: tma-pipeline cannot tell when it is done with a stage (use tmac.warpgroup.mma or nvgpu.warpgroup.mma)", o.Name())
			}
			return ir.Advance
		})
	}
	return err
}

// tileCopy returns the tile, tensor map and coordinates of a tmac.tma.load
// (its destination) or tmac.tma.store (its source).
func tileCopy(op *ir.Operation) (tile, tensorMap ir.Value, coords []ir.Value) {
	if l, ok := tmac.AsTmaLoad(op); ok {
		return l.Dst(), l.TensorMap(), l.Coordinates()
	}
	st := tmac.TmaStoreOp{Op: op}
	return st.Src(), st.TensorMap(), st.Coordinates()
}

// wholeTile is the tile t names: the subview's source for a view of a
// tile's leading rows (tmac.LeadingRows), else t.
func wholeTile(t ir.Value) ir.Value {
	if src, rows := tmac.LeadingRows(t); rows > 0 {
		return src
	}
	return t
}

// ringOf returns the ring record of the tile that copy operand t names.
func (p *pipelinedLoop) ringOf(t ir.Value) *tileRing { return p.tiles[wholeTile(t)] }

// tileOf returns (creating) the ring record of tile t used by op, a copy
// through tensorMap or (tensorMap nil) a wait.
func (p *pipelinedLoop) tileOf(op *ir.Operation, t, tensorMap ir.Value) (*tileRing, error) {
	r := p.tiles[t]
	if r == nil {
		a, ok := memref.AsAlloc(t.DefiningOp())
		if !ok || len(a.DynamicSizes())+len(a.SymbolOperands()) != 0 {
			return nil, op.EmitError("the tile must be a statically shaped memref.alloc in workgroup memory defined before the loop")
		}
		if p.loop.IsAncestorOf(a.Op) {
			return nil, op.EmitError("the tile must be allocated outside the loop")
		}
		r = &tileRing{alloc: a.Op, tile: t.Type().(*ir.MemRefType), align: 128}
		p.tiles[t] = r
		p.order = append(p.order, t)
	}
	if tensorMap != nil && r.desc == nil {
		d, _ := nvgpu.AsTensorMapDescriptor(tensorMap.Type())
		r.desc = d
		switch d.Swizzle {
		case nvgpu.Swizzle128B:
			r.align = 1024
		case nvgpu.Swizzle64B:
			r.align = 512
		case nvgpu.Swizzle32B:
			r.align = 256
		}
	}
	if al, ok := ir.AttrInt(r.allocOp().Alignment()); ok && al > r.align {
		r.align = al
	}
	r.slot = passutil.AlignUp(tmac.TileBytes(r.tile), r.align)
	return r, nil
}

// topLevel returns the ancestor of op in the loop body, or nil.
func (p *pipelinedLoop) topLevel(op *ir.Operation) *ir.Operation {
	for op != nil && op.Block() != p.body {
		op = op.ParentOp()
	}
	return op
}

// boundPendingMMAs makes at most limit wgmma groups stay pending after the
// last mma of the body, so that the previous iteration's have completed:
// limit is the number of mma ops directly in the body (an mma nested in a
// region of the body may commit no group, so it does not count), 0 with
// one slot, where the iteration must complete its own mma. A last mma
// directly in the body gets its waitGroup lowered to limit; a nested one
// is followed by an explicit wait_group limit after its top-level
// ancestor. It returns limit, the groups the body may leave pending and
// the top-level op after which that holds.
func (p *pipelinedLoop) boundPendingMMAs() (limit, pending int64, after *ir.Operation) {
	last := p.mmas[len(p.mmas)-1]
	if p.n > 1 {
		for _, m := range p.mmas {
			if m.Block() == p.body {
				limit++
			}
		}
	}
	if last.Block() == p.body {
		if passutil.WaitGroup(last) > limit {
			last.SetAttr("waitGroup", ir.I64Attr(limit))
		}
		return limit, passutil.WaitGroup(last), last
	}
	wb := newTB(last.Loc)
	wb.SetInsertionPointAfter(p.topLevel(last))
	wait := wb.op(nvvm.WgmmaWaitGroupSyncAligned, nil, nil, ir.NamedAttr{Name: "group", Value: ir.I64Attr(limit)})
	return limit, limit, wait
}

// checkTileUses checks that the tile is used only in the loop, read only
// after the wait (loaded tiles), and classifies its readers.
func (p *pipelinedLoop) checkTileUses(r *tileRing) error {
	if r.desc == nil {
		return nil // only named by a wait: reported above
	}
	var firstWait *ir.Operation
	if len(p.waits) > 0 {
		firstWait = p.waits[0]
	}
	var walk func(v ir.Value) error
	walk = func(v ir.Value) error {
		for _, u := range ir.Uses(v) {
			user := u.Owner()
			if user.Name() == memref.Dealloc || p.onlyTileOps(user) {
				continue
			}
			top := p.topLevel(user)
			if top == nil {
				return user.EmitError("tile used outside the loop that pipelines it (tma-pipeline replaces it by a ring of slots)")
			}
			if isTileOp(user) {
				continue
			}
			if !r.isStore && top != firstWait && !firstWait.IsBeforeInBlock(top) {
				return user.EmitError("tile read before the tmac.tma.wait of its loads")
			}
			if !r.isStore && (p.lastRead == nil || p.lastRead.IsBeforeInBlock(top)) {
				p.lastRead = top
			}
			// An ordinary store (generic proxy): not the tile's own TMA
			// load, which is a tile op.
			if r.passThrough && user.WritesThrough(v, ir.GenericProxy) {
				return user.EmitError("this tile is stored by TMA straight from its load: the threads may read it but not write it (write a separate output tile)")
			}
			switch user.Name() {
			case nvgpu.WarpgroupGenerateDescriptor:
				r.asyncUse = true
			case memref.Subview, memref.Cast, memref.ReinterpretCast:
				// Aliases read nothing: their users do.
				for _, res := range user.Results() {
					if err := walk(res); err != nil {
						return err
					}
				}
			default:
				r.syncUse = true
				if n := user.Name(); (n == tmac.WarpgroupMmaStore || n == nvgpu.WarpgroupMmaStore) && user.Operand(1) == v {
					r.accStores++
					if user.Attr("tmaLayout") != nil {
						r.laidOut++
					}
				}
			}
		}
		return nil
	}
	return walk(r.allocOp().Memref())
}

// onlyTileOps reports whether op is a view of a tile's leading rows used
// only by the loop's tile ops (the load it is the destination of, a
// wait): it is part of the copy, not a reader, wherever it is defined.
func (p *pipelinedLoop) onlyTileOps(op *ir.Operation) bool {
	if op.Name() != memref.Subview {
		return false
	}
	if _, rows := tmac.LeadingRows(op.Result(0)); rows == 0 {
		return false
	}
	for _, u := range ir.Uses(op.Result(0)) {
		if !isTileOp(u.Owner()) || p.topLevel(u.Owner()) == nil {
			return false
		}
	}
	return true
}

// addToSlice adds the body ops computing coordinate c of op to the slice
// cloned for other iterations.
func (p *pipelinedLoop) addToSlice(op *ir.Operation, c ir.Value) error {
	if c == p.iv {
		return nil
	}
	if a, ok := c.(*ir.BlockArgument); ok && a.Owner() == p.body {
		return op.EmitError("coordinate depends on a loop-carried value (iter_arg %d): tma-pipeline issues loads ahead, so coordinates may use only the induction variable and values defined before the loop", a.Index()-1)
	}
	d := c.DefiningOp()
	if d == nil || d.Block() != p.body {
		if d != nil && p.loop.IsAncestorOf(d) {
			return op.EmitError("coordinate computed under control flow in the loop body")
		}
		return nil
	}
	if p.slice[d] {
		return nil
	}
	if !d.HasNoMemoryEffect() || d.NumRegions() > 0 {
		return op.EmitError("coordinate computed by '%s', which is not a pure op: tma-pipeline must recompute it for iterations ahead", d.Name())
	}
	p.slice[d] = true
	for _, x := range d.Operands() {
		if err := p.addToSlice(op, x); err != nil {
			return err
		}
	}
	return nil
}

// --------------------------------------------------------------- rewrite

// tb wraps a builder with index-arithmetic helpers that fold constants,
// so the pass output stays readable before canonicalize.
type tb struct {
	*ir.Builder
	consts map[int64]ir.Value // index constants already built at or before the insertion point
}

func newTB(loc ir.Location) tb { return tb{ir.NewBuilder(loc), map[int64]ir.Value{}} }

func (b tb) op(name string, operands []ir.Value, results []ir.Type, attrs ...ir.NamedAttr) *ir.Operation {
	return b.CreateOp(name, operands, results, attrs...)
}

func (b tb) idx(n int64) ir.Value {
	if v, ok := b.consts[n]; ok {
		return v
	}
	v := b.op(arith.Constant, nil, []ir.Type{ir.Index}, ir.NamedAttr{Name: "value", Value: ir.IndexAttr(n)}).Result(0)
	b.consts[n] = v
	return v
}

func (b tb) bin(name string, x, y ir.Value) ir.Value {
	cx, okx := arith.ConstantInt(x)
	cy, oky := arith.ConstantInt(y)
	switch name {
	case arith.Addi, arith.Subi, arith.Muli, arith.Remui:
		// Constant operands fold through the op's semantics (ir/eval);
		// divisions and remainders of negative values stay ops.
		if okx && oky && (name != arith.Remui || cx >= 0) {
			if c, ok := evalIndexOp(name, x, y, cx, cy); ok {
				return b.idx(c)
			}
		}
	}
	switch name {
	case arith.Addi:
		switch {
		case oky && cy == 0:
			return x
		case okx && cx == 0:
			return y
		}
	case arith.Subi:
		if oky && cy == 0 {
			return x
		}
	case arith.Muli:
		switch {
		case oky && cy == 1:
			return x
		case okx && cx == 1:
			return y
		case (okx && cx == 0) || (oky && cy == 0):
			return b.idx(0)
		}
	case arith.Divui:
		if oky && cy == 1 {
			return x
		}
	case arith.Remui:
		if oky && cy == 1 {
			return b.idx(0)
		}
	}
	return b.op(name, []ir.Value{x, y}, []ir.Type{x.Type()}).Result(0)
}

// evalIndexOp evaluates the binary op name on the constants cx and cy
// (the values of x and y) through its semantics, on a detached op.
func evalIndexOp(name string, x, y ir.Value, cx, cy int64) (int64, bool) {
	op := ir.NewOperation(&ir.OperationState{Name: name, Operands: []ir.Value{x, y}, ResultTypes: []ir.Type{x.Type()}})
	defer op.Erase()
	return eval.Ints(op, []int64{cx, cy})
}

// cmp returns arith.cmpi pred x, y (pred: upstream's numbering).
func (b tb) cmp(pred int64, x, y ir.Value) ir.Value {
	return b.op(arith.Cmpi, []ir.Value{x, y}, []ir.Type{ir.I1}, ir.NamedAttr{Name: "predicate", Value: ir.I64Attr(pred)}).Result(0)
}

// ifThen builds `scf.if cond { body }` at the insertion point.
func (b tb) ifThen(cond ir.Value, body func(tb)) {
	then := ir.NewRegion()
	blk := then.AddBlock(ir.NewBlock(nil, nil))
	st := &ir.OperationState{Name: scf.If, Operands: []ir.Value{cond}, Regions: []*ir.Region{then, ir.NewRegion()}}
	ifOp := b.Create(st)
	inner := tb{ir.NewBuilder(b.Loc), map[int64]ir.Value{}}
	for k, v := range b.consts {
		inner.consts[k] = v
	}
	inner.SetInsertionPointToEnd(blk)
	body(inner)
	inner.op(scf.Yield, nil, nil)
	_ = ifOp
}

func (b tb) barrier() { b.op(gpu.Barrier, nil, nil) }

func (p *pipelinedLoop) rewrite() {
	loop := p.loop
	b := newTB(loop.Loc)
	b.SetInsertionPoint(loop)

	is0 := p.k.elected(b)

	p.makeRings()
	trip, ivAt := p.tripCount(b)

	// Barriers: created, initialised by the elected thread, published.
	var bars ir.Value
	if len(p.loads) > 0 {
		group := nvgpu.MBarrierGroupType(nvgpu.MBarrierGroup{MemorySpace: gpu.AddressSpaceAttr("workgroup"), NumBarriers: uint32(p.n)})
		bars = b.op(nvgpu.MbarrierCreate, nil, []ir.Type{group}).Result(0)
		b.ifThen(is0, func(b tb) {
			one := b.idx(1)
			for s := int64(0); s < p.n; s++ {
				b.op(nvgpu.MbarrierInit, []ir.Value{bars, one, b.idx(s)}, nil)
			}
		})
		b.barrier()
		// Prologue: iterations 0..N-2.
		pro := p.n - 1
		if p.fullDepth {
			pro = p.n
		}
		if p.rec != nil {
			p.rec.Prologue = pro
			p.recordStageGroup(bars)
		}
		if pro > 0 {
			b.ifThen(is0, func(b tb) {
				for s := int64(0); s < pro; s++ {
					if p.tripC >= 0 && s >= p.tripC {
						break
					}
					issue := func(b tb) { p.issueLoads(b, bars, b.idx(s), ivAt(b, b.idx(s))) }
					if p.tripC >= 0 {
						issue(b)
					} else {
						b.ifThen(b.cmp(arith.CmpISlt, b.idx(s), trip), issue)
					}
				}
			})
		}
	}

	newLoop, j, slot, sslot := p.normalise(b, trip, ivAt)
	// Stores first: their block barriers may also release load slots.
	if len(p.stores) > 0 {
		p.rewriteStores(newLoop, is0, slot, sslot)
	}
	if len(p.loads) > 0 {
		p.rewriteLoads(newLoop, bars, is0, j, slot, trip, ivAt)
	}
	p.dropTileAllocs()
}

// makeRings replaces each tile's allocation by its ring buffer.
func (p *pipelinedLoop) makeRings() {
	for _, t := range p.order {
		r := p.tiles[t]
		slots := p.n
		if r.isStore {
			slots = p.s
			if p.storeSlotBase != nil {
				slots = 2 * p.s
			}
		}
		ab := newTB(r.alloc.Loc)
		ab.SetInsertionPoint(r.alloc)
		ringType := ir.MemRefTypeOf([]int64{slots * r.slot}, ir.I8, nil, r.tile.MemorySpace)
		r.ring = ab.op(memref.Alloc, nil, []ir.Type{ringType},
			ir.NamedAttr{Name: "alignment", Value: ir.I64Attr(r.align)},
			ir.NamedAttr{Name: "operandSegmentSizes", Value: ir.DenseI32Array(0, 0)}).Result(0)
	}
}

// tripCount builds the loop's trip count T at b and returns it with the
// map from a normalised index j to the induction value lb + j*step.
func (p *pipelinedLoop) tripCount(b tb) (ir.Value, func(tb, ir.Value) ir.Value) {
	loop := p.forOp()
	lb, ub, step := loop.LowerBound(), loop.UpperBound(), loop.Step()
	var trip ir.Value
	if p.tripC >= 0 {
		trip = b.idx(p.tripC)
	} else {
		// T = ceil(max(ub-lb, 0) / step) with ops code generation lowers
		// (no arith.ceildivsi): (max(ub-lb, 0) + step-1) divui step.
		span := b.op(arith.Maxsi, []ir.Value{b.bin(arith.Subi, ub, lb), b.idx(0)}, []ir.Type{ir.Index}).Result(0)
		trip = b.bin(arith.Divui, b.bin(arith.Addi, span, b.bin(arith.Subi, step, b.idx(1))), step)
	}
	ivAt := func(b tb, j ir.Value) ir.Value { return b.bin(arith.Addi, lb, b.bin(arith.Muli, j, step)) }
	return trip, ivAt
}

// normalise moves the loop body into `scf.for %j = 0 to T step 1` built at
// b, computes the original induction value, the load and store slots
// (j mod N, j mod S) and replaces the tiles by views of their slots.
func (p *pipelinedLoop) normalise(b tb, trip ir.Value, ivAt func(tb, ir.Value) ir.Value) (newLoop *ir.Operation, j, slot, sslot ir.Value) {
	loop := p.loop
	// The normalised loop: the old body moves into it.
	inits := p.forOp().InitArgs()
	newBody := ir.NewBlock(nil, nil)
	j = newBody.AddArgument(ir.Index, loop.Loc)
	for i, v := range inits {
		newBody.AddArgument(v.Type(), p.body.Arg(i+1).Loc())
	}
	region := ir.NewRegion()
	region.AddBlock(newBody)
	var attrs []ir.NamedAttr
	for _, a := range loop.DiscardableAttrs() {
		if a.Name != tmac.StagesAttr && a.Name != tmac.StoreStagesAttr && a.Name != tmac.WarpSpecializeAttr {
			attrs = append(attrs, a)
		}
	}
	newLoop = b.Create(&ir.OperationState{Name: scf.For, Operands: append([]ir.Value{b.idx(0), trip, b.idx(1)}, inits...),
		ResultTypes: loop.ResultTypes(), Regions: []*ir.Region{region}, Attrs: attrs})
	for _, op := range p.body.Ops() {
		op.Remove()
		newBody.Append(op)
	}
	for i, a := range p.body.Args() {
		if i == 0 {
			continue
		}
		ir.ReplaceAllUsesWith(a, newBody.Arg(i))
	}
	for i, r := range loop.Results() {
		ir.ReplaceAllUsesWith(r, newLoop.Result(i))
	}
	p.body = newBody
	p.firstOp = newBody.First()

	// In the body: the original induction variable, the slots.
	bb := newTB(loop.Loc)
	bb.SetInsertionPointToStart(newBody)
	if ir.HasUses(p.iv) {
		p.ivVal = ivAt(bb, j)
		ir.ReplaceAllUsesWith(p.iv, p.ivVal)
	}
	loop.Erase()
	if len(p.loads) > 0 {
		// The ring position: j, or base + j when the ring continues across
		// the iterations of an enclosing loop (warp-specialize, persistent).
		p.g = j
		if p.base != nil {
			p.g = bb.bin(arith.Addi, p.base, j)
		}
		var ok bool
		if slot, p.round, ok = p.narrowRing(bb, p.base, j, 0, p.n); !ok {
			slot = bb.bin(arith.Remui, p.g, bb.idx(p.n))
		}
	}
	if p.hasOutputTiles() {
		var ok bool
		if sslot, _, ok = p.narrowRing(bb, nil, j, 0, p.s); !ok {
			sslot = bb.bin(arith.Remui, j, bb.idx(p.s))
		}
		if e := p.storeEpisodes(); e > 1 {
			p.storeSlots = p.episodeSlots(bb, sslot, e)
		}
		if p.storeSlotBase != nil {
			sslot = bb.bin(arith.Addi, p.storeSlotBase, sslot)
		}
	}
	// Tiles become views of their slot.
	for _, t := range p.order {
		r := p.tiles[t]
		s := slot
		if r.isStore {
			s = sslot
			if p.storeSlots != nil {
				p.viewEpisodes(bb, t, r)
				continue
			}
		}
		v := r.slotView(bb, s)
		ir.ReplaceUsesIf(t, v, func(u *ir.OpOperand) bool { return newBody.Parent().IsAncestorOf(u.Owner()) && !isTileOp(u.Owner()) })
	}
	return newLoop, j, slot, sslot
}

// dropTileAllocs erases the logical tiles' allocations (and deallocs, and
// the leading-rows views of their loads).
func (p *pipelinedLoop) dropTileAllocs() {
	for _, t := range p.order {
		r := p.tiles[t]
		for _, v := range r.views {
			if v.Block() != nil && !ir.HasUses(v.Result(0)) {
				v.Erase()
			}
		}
		mem := r.allocOp().Memref()
		for _, u := range ir.Uses(mem) {
			if u.Owner().Name() == memref.Dealloc {
				u.Owner().Erase()
			}
		}
		if !ir.HasUses(mem) {
			r.alloc.Erase()
		}
	}
}

// issueLoads emits, for the elected thread, the expect_tx and the TMA
// loads of the iteration whose induction value is iv into slot.
func (p *pipelinedLoop) issueLoads(b tb, bars, slot, iv ir.Value) {
	p.issueLoadsWith(b, bars, slot, iv, ir.NewIRMapping())
}

// issueLoadsWith is issueLoads with values already mapped in m (the
// clones of an enclosing loop's ops, for warp-specialize's producer).
func (p *pipelinedLoop) issueLoadsWith(b tb, bars, slot, iv ir.Value, m *ir.IRMapping) {
	m.Map(p.iv, iv)
	if p.ivVal != nil {
		m.Map(p.ivVal, iv)
	}
	for _, op := range p.sliceOps {
		b.Insert(op.Clone(m))
	}
	b.op(nvgpu.MbarrierArriveExpectTx, []ir.Value{bars, b.idx(p.stageBytes()), slot}, nil)
	for _, l := range p.loads {
		r := p.ringOf(l.Dst())
		var coords []ir.Value
		for _, c := range l.Coordinates() {
			coords = append(coords, m.Lookup(c))
		}
		if p.multicast[l.Op] {
			p.multicastBoxes(b, l, r, bars, slot, coords)
			continue
		}
		p.boxes(b, r, slot, coords, func(b tb, dst ir.Value, cs []ir.Value) {
			b.op(nvgpu.TmaAsyncLoad, append(append([]ir.Value{dst, bars, l.TensorMap()}, cs...), slot), nil,
				ir.NamedAttr{Name: "operandSegmentSizes", Value: ir.DenseI32Array(1, 1, 1, int64(len(cs)), 1, 0, 0)})
		})
	}
}

// stageBytes is the expect_tx of a stage: the bytes every load of an
// iteration copies (full boxes; only the leading rows of a tile loaded
// into them).
func (p *pipelinedLoop) stageBytes() int64 {
	var bytes int64
	for _, l := range p.loads {
		bytes += p.ringOf(l.Dst()).bytes
	}
	return bytes
}

// multicastBoxes issues a tile that every CTA of the cluster loads
// identically (tmac.multicast): its boxes are shared out among the
// cluster's CTAs (box i by CTA i / (boxes / cluster size)), each copied to
// the same slot of every CTA (multicast mask of all of them) and signalling
// each one's barrier at the same offset.
func (p *pipelinedLoop) multicastBoxes(b tb, l tmac.TmaLoadOp, r *tileRing, bars, slot ir.Value, coords []ir.Value) {
	per := r.boxes.N / p.clusterSize
	mask := b.op(arith.Constant, nil, []ir.Type{ir.I16}, ir.NamedAttr{Name: "value", Value: ir.IntAttr(1<<p.clusterSize-1, ir.I16)}).Result(0)
	i := int64(0)
	p.boxes(b, r, slot, coords, func(b tb, dst ir.Value, cs []ir.Value) {
		owner := i / per
		i++
		b.ifThen(b.cmp(arith.CmpIEq, p.rank, b.idx(owner)), func(b tb) {
			b.op(nvgpu.TmaAsyncLoad, append(append([]ir.Value{dst, bars, l.TensorMap()}, cs...), slot, mask), nil,
				ir.NamedAttr{Name: "operandSegmentSizes", Value: ir.DenseI32Array(1, 1, 1, int64(len(cs)), 1, 1, 0)})
		})
	})
}

// boxes calls emit for each box of tile r in slot: its destination view and
// coordinates (the coordinate of the dimension the boxes are laid along
// advanced by the box's extent, its bytes i * the boxes' stride;
// tmac.CopyBoxes).
func (p *pipelinedLoop) boxes(b tb, r *tileRing, slot ir.Value, coords []ir.Value, emit func(b tb, dst ir.Value, cs []ir.Value)) {
	// The box's view is in the ring's (the tile's) memory space, which may
	// be the descriptor's other spelling of shared memory (3 or
	// #gpu.address_space<workgroup>): a view keeps its source's space.
	box := ir.MemRefTypeOf(r.desc.Tensor.Shape(), r.desc.Tensor.Elem, nil, r.tile.MemorySpace)
	bx := r.boxes
	base := b.bin(arith.Muli, slot, b.idx(r.slot))
	for i := int64(0); i < bx.N; i++ {
		cs := append([]ir.Value{}, coords...)
		cs[bx.Coord] = b.bin(arith.Addi, coords[bx.Coord], b.idx(i*bx.Extent))
		dst := b.op(memref.View, []ir.Value{r.ring, b.bin(arith.Addi, base, b.idx(i*bx.Stride))}, []ir.Type{box}).Result(0)
		emit(b, dst, cs)
	}
}

func (p *pipelinedLoop) rewriteLoads(loop *ir.Operation, bars, is0, j, slot, trip ir.Value, ivAt func(tb, ir.Value) ir.Value) {
	body := p.body
	sync := false
	async := false
	for _, t := range p.order {
		if r := p.tiles[t]; !r.isStore {
			sync = sync || r.syncUse
			async = async || r.asyncUse
		}
	}

	// The first wait waits for the whole stage; later ones are redundant.
	// When no thread reads the tiles (a pure TMA copy: the elected thread
	// stores them), only the elected thread waits: the others, never held
	// by a barrier, could otherwise fall two phases behind a barrier and
	// wait for a parity that has come round again.
	w := p.waits[0]
	wb := newTB(w.Loc)
	wb.SetInsertionPoint(w)
	// Ring position j waits for phase j / N, parity (j / N) mod 2.
	parity := func() ir.Value {
		round := wb.op(arith.Andi, []ir.Value{p.roundOf(wb, j), wb.idx(1)}, []ir.Type{ir.Index}).Result(0)
		return wb.cmp(arith.CmpINe, round, wb.idx(0))
	}
	if !sync && !async {
		// (The parity is written explicitly: mbarrier-phase leaves waits
		// under control flow alone.)
		par := parity()
		wb.ifThen(is0, func(b tb) {
			b.op(nvgpu.MbarrierTryWaitParity, []ir.Value{bars, par, b.idx(10000000), slot}, nil)
		})
		p.recordWait(bars, "thread 0", &schedule.BarrierWait{Loc: w.Loc, By: "tma-pipeline", Ring: &schedule.ParityRing{N: p.n}})
	} else if p.round != nil {
		// The slot is computed on i32 (narrowRing), a form mbarrier-phase
		// does not read: the parity is written here, from the same round.
		wb.op(nvgpu.MbarrierTryWaitParity, []ir.Value{bars, parity(), wb.idx(10000000), slot}, nil)
		p.recordWait(bars, "every thread", &schedule.BarrierWait{Loc: w.Loc, By: "tma-pipeline", Ring: &schedule.ParityRing{N: p.n}})
	} else {
		wb.op(tmac.MbarrierWait, []ir.Value{bars, slot}, nil)
		p.recordWait(bars, "every thread", nil) // mbarrier-phase records the parity
	}
	for _, w := range p.waits {
		w.Erase()
	}
	multiWG := p.k.threads == 0 || p.k.threads > 128
	// Block barriers at the top level of the body: any releases the slots
	// of synchronous readers; wgmma readers in other warpgroups need one
	// after the last mma (after its wait_group).
	anyBar, barAfterMMA := false, false
	var lastMMA *ir.Operation
	if len(p.mmas) > 0 {
		lastMMA = p.topLevel(p.mmas[len(p.mmas)-1])
	}
	for _, op := range body.Ops() {
		if op.Name() == gpu.Barrier {
			anyBar = true
			barAfterMMA = barAfterMMA || (lastMMA != nil && lastMMA.IsBeforeInBlock(op))
		}
	}

	// wgmma groups pending after the last mma must all be this iteration's.
	// Only mma ops directly in the body run exactly once per iteration; an
	// mma nested in a region of the body (scf.if, inner loop) may commit no
	// group, so it does not count, and when the last mma is nested an
	// explicit wait_group follows its top-level ancestor.
	pending := int64(0) // wgmma groups the body may leave pending
	if async && len(p.mmas) > 0 {
		_, pending, _ = p.boundPendingMMAs()
	}
	needBarrier := (sync && (!anyBar || p.n == 1)) || (async && multiWG && (!barAfterMMA || p.n == 1))
	if p.rec != nil && async {
		p.rec.WGMMAWait = pending
	}

	ib := newTB(loop.Loc)
	if p.fullDepth {
		// Refill the slot just read, right after the barrier that ends its
		// reads, with iteration j+N.
		ahead := p.n
		p.recordRefill(ahead, 0, "right after the block barrier that ends the iteration's reads of its slot",
			"the block barrier after the iteration's last read of the slot (every thread is done with it)")
		ib.SetInsertionPointAfter(p.freeingBarrier())
		next := ib.bin(arith.Addi, j, ib.idx(ahead))
		cond := ib.op(arith.Andi, []ir.Value{is0, ib.cmp(arith.CmpISlt, next, trip)}, []ir.Type{ir.I1}).Result(0)
		ib.ifThen(cond, func(b tb) { p.issueLoads(b, bars, slot, ivAt(b, next)) })
	} else if p.n == 1 {
		// Issue this iteration's loads first, into the only slot (after
		// the previous iteration's pass-through stores have read it).
		var why []string
		lag := int64(0)
		if needBarrier {
			why, lag = append(why, "a block barrier at the start of the iteration"), 1
		}
		if p.passThrough() {
			why, lag = append(why, "thread 0: cp.async.bulk.wait_group.read 0 at the start of the iteration (the previous iteration's TMA store has read the slot)"), 1
		}
		if async && len(p.mmas) > 0 {
			why = append(why, "wgmma wait_group 0 after the iteration's mma")
		}
		p.recordRefill(0, lag, "at the start of the iteration, before its wait (one slot: no load runs ahead)", why...)
		ib.SetInsertionPoint(p.firstOp)
		if needBarrier {
			ib.barrier()
		}
		ib.ifThen(is0, func(b tb) {
			if p.passThrough() {
				bulkWaitRead(b, 0)
			}
			p.issueLoads(b, bars, slot, ivAt(b, j))
		})
	} else {
		ahead := p.n - 1
		var why []string
		if async && len(p.mmas) > 0 {
			why = append(why, fmt.Sprintf("wgmma wait_group %d after the iteration's last mma (iteration j-1's wgmma groups have completed)", pending))
		}
		if needBarrier || (sync && anyBar) || (async && multiWG && barAfterMMA) {
			why = append(why, "a block barrier in the iteration (every thread is done with iteration j-1)")
		}
		if p.passThrough() {
			why = append(why, fmt.Sprintf("thread 0: cp.async.bulk.wait_group.read %d before the refill (iteration j-1's TMA store has read the slot)", p.storeGroups()))
		}
		p.recordRefill(ahead, 1, "at the end of the iteration", why...)
		ib.SetInsertionPoint(body.Terminator())
		if needBarrier {
			ib.barrier()
		}
		next := ib.bin(arith.Addi, j, ib.idx(ahead))
		cond := ib.op(arith.Andi, []ir.Value{is0, ib.cmp(arith.CmpISlt, next, trip)}, []ir.Type{ir.I1}).Result(0)
		ib.ifThen(cond, func(b tb) {
			if p.passThrough() {
				// The slot's previous occupant (iteration j-1) was stored
				// from it; this iteration's stores may still be reading.
				bulkWaitRead(b, p.storeGroups())
			}
			nslot, _, ok := p.narrowRing(b, p.base, next, 0, p.n) // next < trip here
			if !ok {
				nslot = b.bin(arith.Remui, next, b.idx(p.n))
			}
			p.issueLoads(b, bars, nslot, ivAt(b, next))
		})
	}
	for _, l := range p.loads {
		l.Op.Erase()
	}

	// After the loop.
	var after []string
	ab := newTB(loop.Loc)
	ab.SetInsertionPointAfter(loop)
	if pending > 0 {
		ab.op(nvvm.WgmmaWaitGroupSyncAligned, nil, nil, ir.NamedAttr{Name: "group", Value: ir.I64Attr(0)})
		after = append(after, "wgmma wait_group 0 (the last iterations' wgmma groups)")
	}
	if sync || (async && multiWG) {
		ab.barrier()
		after = append(after, "block barrier (no thread still reads the rings)")
	}
	// These ops come right after the loop, before those rewriteStores put there.
	if p.rec != nil {
		p.rec.AfterLoop = append(after, p.rec.AfterLoop...)
	}
}

// freeingBarrier is the first top-level gpu.barrier (or tmac.tma.store,
// which becomes fence + barrier + store) after the last read of a loaded
// tile in the body, or nil.
func (p *pipelinedLoop) freeingBarrier() *ir.Operation {
	if p.lastRead == nil {
		return nil
	}
	for op := p.lastRead.Next(); op != nil; op = op.Next() {
		if op.Name() == gpu.Barrier || op.Name() == tmac.TmaStore {
			return op
		}
	}
	return nil
}

// hasOutputTiles reports whether the loop stores tiles of its own (not
// pass-through ones).
func (p *pipelinedLoop) hasOutputTiles() bool {
	for _, t := range p.order {
		if p.tiles[t].isStore {
			return true
		}
	}
	return false
}

// passThrough reports whether the loop stores its loaded tiles.
func (p *pipelinedLoop) passThrough() bool {
	for _, t := range p.order {
		if p.tiles[t].passThrough {
			return true
		}
	}
	return false
}

// storeGroups is the number of bulk groups an iteration commits:
// lower-nvgpu commits one per nvgpu.tma.async.store, one per box stored.
// (Counted by analyse: the rewrite erases the tmac.tma.store ops.)
func (p *pipelinedLoop) storeGroups() int64 { return p.bulkGroups }

// bulkWaitRead waits until at most n bulk store groups of this thread are
// still reading shared memory.
func bulkWaitRead(b tb, n int64) {
	b.op(nvvm.CpAsyncBulkWaitGroup, nil, nil,
		ir.NamedAttr{Name: "group", Value: ir.IntAttr(n, ir.I32)}, ir.NamedAttr{Name: "read", Value: ir.Unit})
}

// waitStoresRead has the elected thread (is0) wait until at most n bulk
// store groups still read shared memory, then meets the block at a
// barrier: the bytes those stores read are free for every thread.
func waitStoresRead(b tb, is0 ir.Value, n int64) {
	b.ifThen(is0, func(b tb) { bulkWaitRead(b, n) })
	b.barrier()
}

// publishToTMA makes the threads' shared-memory writes visible to a TMA
// store (the async proxy) and meets the block at a barrier, before the
// elected thread issues the store.
func publishToTMA(b tb) {
	b.op(nvvm.FenceProxy, nil, nil,
		ir.NamedAttr{Name: "kind", Value: nvvm.ProxyKind.Attr("async.shared")},
		ir.NamedAttr{Name: "space", Value: nvvm.SharedSpace.Attr("cta")})
	b.barrier()
}

// recordStores puts the output tiles' rotation into rec (nil: not
// recording).
func (p *pipelinedLoop) recordStores(rec *schedule.LoopSchedule) {
	if rec != nil {
		rec.StoreStages, rec.StoreGroups, rec.StoreWait, rec.StoreParts = p.s, p.storeGroups(), p.storeWait(), p.storeEpisodes()
	}
}

func (p *pipelinedLoop) rewriteStores(loop *ir.Operation, is0, slot, sslot ir.Value) {
	if p.passThrough() {
		// The elected thread stores each pass-through tile from the slot
		// its load filled, once the wait has seen the load land: a TMA
		// write read by a TMA store, both in the async proxy, so no proxy
		// fence and no block barrier. rewriteLoads makes the refill of the
		// slot wait for the store's reads.
		for _, st := range p.stores {
			b := newTB(st.Op.Loc)
			b.SetInsertionPoint(st.Op)
			p.storeTile(b, st, slot, is0)
		}
		p.drainStores(loop, is0)
		return
	}
	if p.storeSlots != nil {
		p.rewriteEpisodes(loop, is0)
		return
	}
	// The first top-level op using an output tile's slot view, or the
	// first store.
	first := p.episodeFirsts()[0]
	// An iteration commits G bulk groups (storeGroups); slot j mod S was
	// last read by the stores of iteration j-S, complete once at most
	// (S-1)*G groups are still reading.
	wb := newTB(loop.Loc)
	wb.SetInsertionPoint(first)
	waitStoresRead(wb, is0, p.storeWait())
	p.recordStores(p.rec)

	// Consecutive stores share one fence and barrier (decided before any
	// store is replaced).
	follows := make([]bool, len(p.stores))
	for i := 1; i < len(p.stores); i++ {
		follows[i] = p.stores[i-1].Op.Next() == p.stores[i].Op
	}
	for i, st := range p.stores {
		b := newTB(st.Op.Loc)
		b.SetInsertionPoint(st.Op)
		if !follows[i] {
			publishToTMA(b)
		}
		p.storeTile(b, st, sslot, is0)
	}
	p.drainStores(loop, is0)
}

// storeTile replaces the tile store st: at b, the thread where is0 holds
// stores the tile from the given slot of its ring, one
// nvgpu.tma.async.store per box.
func (p *pipelinedLoop) storeTile(b tb, st tmac.TmaStoreOp, slot, is0 ir.Value) {
	r := p.ringOf(st.Src())
	b.ifThen(is0, func(b tb) {
		p.boxes(b, r, slot, st.Coordinates(), func(b tb, src ir.Value, cs []ir.Value) {
			b.op(nvgpu.TmaAsyncStore, append([]ir.Value{src, st.TensorMap()}, cs...), nil,
				ir.NamedAttr{Name: "operandSegmentSizes", Value: ir.DenseI32Array(1, 1, int64(len(cs)), 0)})
		})
	})
	st.Op.Erase()
}

// drainStores waits after the loop until every store has read its shared
// memory, and publishes that to the block (later code may reuse the bytes).
func (p *pipelinedLoop) drainStores(loop *ir.Operation, is0 ir.Value) {
	ab := newTB(loop.Loc)
	ab.SetInsertionPointAfter(loop)
	waitStoresRead(ab, is0, 0)
	p.recordAfter("thread 0: cp.async.bulk.wait_group.read 0 (every TMA store has read its tile), block barrier")
}
