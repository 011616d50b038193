package pipelining

import (
	"fmt"
	"strings"

	"github.com/tmac-dev/tmac/dialects/arith"
	"github.com/tmac-dev/tmac/dialects/gpu"
	"github.com/tmac-dev/tmac/dialects/llvm"
	"github.com/tmac-dev/tmac/dialects/nvgpu"
	"github.com/tmac-dev/tmac/dialects/nvvm"
	"github.com/tmac-dev/tmac/dialects/scf"
	"github.com/tmac-dev/tmac/dialects/tmac"
	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/passes"
	"github.com/tmac-dev/tmac/passes/schedule"
)

// warp-specialize rewrites a simple-form tile loop (see tma-pipeline)
// marked `tmac.warp_specialize` into a producer/consumer kernel. It runs on
// outlined kernels (gpu.func ... kernel with known_block_size) and on
// gpu.launch bodies with constant block sizes, before tma-pipeline.
//
// The program is written for its consumers: C warpgroups (a block of
// 128*C threads, x only). The pass adds one producer warpgroup in front
// of them — the block grows to 128*(C+1) threads and every
// gpu.thread_id x of the program becomes thread_id x - 128, so the
// program keeps seeing its own thread numbering — and splits the kernel
// at the loop:
//
//   - before the loop: the program's side-effect-free ops (and
//     allocations), run by every thread; ops with side effects and the
//     ops that use their results are the consumers' setup (e.g. a tile
//     loaded once by TMA on its own mbarrier and waited for) and move to
//     the start of the consumers' branch, provided the producer's loads do
//     not use them (persistent and ping-pong kernels: rejected); the
//     tiles become N-slot rings (tma-pipeline's), and
//     two groups of N mbarriers are initialised by thread 0: full[s]
//     (count 1, completed by the TMA bytes) and empty[s] (count C, one
//     arrival per consumer warpgroup; 128*C when threads read the tiles);
//   - the producer warpgroup (threads 0..127) lowers its register budget
//     (setmaxnreg.dec to producer-regs) and its thread 0 runs the whole
//     loop alone: for j in 0..T, wait until empty[j mod N] has completed
//     the phase of round j/N - 1 (parity ((j/N)+1) mod 2; in round 0 that
//     is the phase before the barrier's first, complete by definition),
//     then expect_tx and the TMA loads of iteration j into slot j mod N;
//   - the consumer warpgroups raise their budget (setmaxnreg.inc to
//     consumer-regs) and run the loop, normalised to 0..T, waiting on
//     full[j mod N] with parity (j/N) mod 2, then everything after the
//     loop (the epilogue). A slot is released with one arrival on its
//     empty barrier per warpgroup: by wgmma readers after the iteration's
//     last wgmma (nvgpu/tmac.warpgroup.mma), whose wait_group depth is
//     lowered to at most the iteration's mma count (so iteration j-1's
//     groups are complete and slot (j-1) mod N is released), by thread
//     readers at the end of the iteration (every consumer thread
//     arrives). gpu.barrier in the consumers' code becomes a named
//     barrier (id 1) over their 128*C threads, since the producer never
//     reaches it. tmac.tma.store ops of the epilogue are lowered here as
//     tma-pipeline lowers a kernel's top-level ones (fence, barrier, one
//     thread stores and waits for the reads), with the first consumer
//     thread storing.
//
// Persistent kernels: the marked loop may also sit directly in the body of
// a top-level scf.for without iter_args (a loop over output tiles), with
// bounds that do not depend on it. The producer then runs the same tile
// loop, with clones of the ops that precede the marked loop in its body
// (side-effect free; the coordinates use them), and both roles continue
// the rings across tiles: the ring position of K step j of tile iteration
// t is ((t - lb) / step) * T + j, so the producer fills the next tile's
// first slots while the consumers run this tile's epilogue.
//
// Schedules: `tmac.warp_specialize` (or = "cooperative") runs the program
// written for C warpgroups in C consumers that share each tile;
// `tmac.warp_specialize = "pingpong"` takes a persistent program written
// for one warpgroup and runs it in two consumers that take the tile loop's
// iterations in turn (warpgroup w starts w steps later and strides twice
// as far; the ring base still counts tiles in the producer's order). Each
// ring slot is then read by one warpgroup: empty count 1 (128 for thread
// readers), a warpgroup's first K step of a tile releases nothing and the
// tile's last slot is released after its K loop; barriers in a tile
// become per-warpgroup named barriers (1 + w, 128 threads). One
// consumer's epilogue overlaps the other's main loop. TMA-store epilogues
// give each warpgroup output slots of its own (consumerStores).
//
// Clusters: a load marked `tmac.multicast` in a kernel launched with
// clusters of cs blocks along x (known_cluster_size) is the same tile in
// every block of the cluster. Its boxes are shared out (box i issued by the
// block of rank i / (boxes / cs)) and multicast to all cs blocks, each
// signalling every block's full barrier at the same offset (expect_tx still
// announces the whole tile). Since other blocks now write into this
// block's slots, each empty barrier counts the consumers of every block
// (C x cs, or 128·C x cs) and the consumers' leaders release a slot in
// every block of the cluster (nvvm.mapa to the barrier at the same offset
// in block q, mbarrier.arrive at cluster scope). The whole cluster
// synchronises (barrier.cluster) after the barriers are initialised and
// before any block exits.
//
// The parities are written explicitly (both rings follow the ring
// discipline, so they are what mbarrier-phase would compute; the producer
// waits one phase behind). Options: stages (unless the loop's tmac.stages
// says otherwise), producer-regs, consumer-regs. Rejected with a
// diagnostic: stores in the loop, unknown or non-x block sizes, side
// effects before the loop that the producer's loads depend on or in a
// persistent or ping-pong kernel, more than one marked loop in a kernel.
func init() {
	passes.Register(&passes.Info{
		Name:    "warp-specialize",
		Summary: "Split a tmac.warp_specialize tile loop into a TMA producer warpgroup and wgmma consumer warpgroups with full/empty mbarrier rings and setmaxnreg",
		Description: "Rewrites a simple-form tile loop (see `tma-pipeline`) marked `tmac.warp_specialize` into a producer/consumer kernel. It runs on outlined kernels with `known_block_size` and on `gpu.launch` bodies with constant block sizes, before `tma-pipeline`.\n" +
			"\n" +
			"The program is written for its C consumer warpgroups (a block of 128·C threads along x). The pass adds a producer warpgroup in front: the block grows to 128·(C+1) threads and the program's `gpu.thread_id x` becomes `thread_id x - 128`. Ops before the loop with side effects, and those using their results, are the consumers' setup (say, a tile loaded once by TMA and waited for): they move to the start of the consumers' branch unless the producer's loads need them. The tiles become N-slot rings with two groups of N mbarriers, initialised by thread 0: `full[s]` (completed by the TMA bytes) and `empty[s]` (one arrival per consumer warpgroup, or per consumer thread when threads read the tiles). Then:\n" +
			"\n" +
			"- the producer warpgroup lowers its register budget (`nvvm.setmaxregister decrease`, option `producer-regs`) and its thread 0 runs the loop alone: wait until `empty[j mod N]` has completed the previous round, then `expect_tx` and the TMA loads of iteration j into slot j mod N;\n" +
			"- the consumer warpgroups raise their budget (`consumer-regs`), run the loop waiting on `full[j mod N]` with parity (j/N) mod 2, and release a slot with an arrival on its `empty` barrier: wgmma readers after the iteration's last wgmma (`nvgpu.warpgroup.mma` or `tmac.warpgroup.mma`; releasing the previous iteration's slot), thread readers at the end of the iteration; then the code after the loop (the epilogue). `gpu.barrier` in the consumers' code becomes a named barrier over their threads; the epilogue's `tmac.tma.store` ops are issued by the first consumer thread.\n" +
			"\n" +
			"Variants: a persistent kernel (the marked loop directly inside an outer `scf.for` over output tiles) keeps the rings running across tiles; `tmac.warp_specialize = \"pingpong\"` runs a one-warpgroup program in two consumers that take the tiles in turn; loads marked `tmac.multicast` in kernels launched with clusters are shared out between the blocks of the cluster and multicast. The parities are written explicitly. Stores in the loop, unknown or non-x block sizes, side effects before the loop that the producer's loads depend on (or in persistent and ping-pong kernels) and more than one marked loop per kernel are rejected.",
		Options: []passes.Option{
			{Name: "stages", Default: "4", Help: "ring slots for loops without a tmac.stages attribute"},
			{Name: "producer-regs", Default: "40", Help: "setmaxnreg.dec budget of the producer warpgroup"},
			{Name: "consumer-regs", Default: "232", Help: "setmaxnreg.inc budget of the consumer warpgroups"},
		},
		New: func(o passes.Options) (passes.Pass, error) {
			var ws wsOptions
			var err error
			for name, dst := range map[string]*int{"stages": &ws.stages, "producer-regs": &ws.prodRegs, "consumer-regs": &ws.consRegs} {
				if *dst, err = o.Int(name); err != nil {
					return nil, err
				}
			}
			if ws.stages < 1 || ws.stages > maxStages {
				return nil, fmt.Errorf("warp-specialize: stages must be from 1 to %d", maxStages)
			}
			for _, r := range []int{ws.prodRegs, ws.consRegs} {
				if r < 24 || r > 256 || r%8 != 0 {
					return nil, fmt.Errorf("warp-specialize: register budgets must be multiples of 8 from 24 to 256, not %d", r)
				}
			}
			return passes.PassFunc(func(op *ir.Operation, ctx *passes.Context) error { return warpSpecialize(op, ws, ctx.Record()) }), nil
		},
		Rewrites: isWarpSpecializeLoop,
	})
}

type wsOptions struct{ stages, prodRegs, consRegs int }

// isWarpSpecializeLoop reports whether op is a loop this pass rewrites.
func isWarpSpecializeLoop(op *ir.Operation) bool {
	return op.Name() == scf.For && op.HasAttr(tmac.WarpSpecializeAttr)
}

func warpSpecialize(top *ir.Operation, o wsOptions, sched *schedule.Schedule) error {
	for _, k := range tmaKernels(top) {
		k.sched = sched
		var loops []*ir.Operation
		ir.Walk(k.op, func(op *ir.Operation) ir.WalkResult {
			if isWarpSpecializeLoop(op) {
				loops = append(loops, op)
			}
			return ir.Advance
		})
		if len(loops) == 0 {
			continue
		}
		if len(loops) > 1 {
			return loops[1].EmitError("only one loop per kernel can be warp-specialised (the first is at %s)", loops[0].Loc)
		}
		if err := k.warpSpecialize(top, loops[0], o); err != nil {
			return err
		}
	}
	return nil
}

func (k *tmaKernel) warpSpecialize(top, loop *ir.Operation, o wsOptions) error {
	// The loop is at the top level of the kernel, or directly in the body
	// of an scf.for there (a persistent kernel's loop over output tiles).
	var outer *ir.Operation
	if loop.Block() == nil || loop.Block().Parent() != k.body {
		o, ok := scf.AsFor(loop.ParentOp())
		if !ok || loop.Block() != o.Region().Entry() || o.Op.Block() == nil || o.Op.Block().Parent() != k.body {
			return loop.EmitError("a warp-specialised loop must be at the top level of the kernel or directly in a loop there (a persistent tile loop)")
		}
		if o.Op.NumResults() > 0 {
			return o.Op.EmitError("the loop around a warp-specialised loop cannot carry values (iter_args)")
		}
		for _, v := range loopBounds(loop) {
			if d := v.DefiningOp(); (d != nil && o.Op.IsAncestorOf(d)) || v == ir.Value(o.Region().Entry().Arg(0)) {
				return loop.EmitError("the bounds of a warp-specialised loop must not change from one iteration of the enclosing loop to the next (the producer and the consumers count ring positions as tile index x trip count + j)")
			}
		}
		outer = o.Op
	}
	split := loop // the top-level op the kernel is split at
	if outer != nil {
		split = outer
	}
	if k.threads == 0 || !k.yzOne || k.threads%128 != 0 {
		return loop.EmitError("warp-specialize needs a known block of whole warpgroups along x (128*C x 1 x 1 threads)")
	}
	consumers := k.threads / 128
	pingpong := false
	switch a := loop.Attr(tmac.WarpSpecializeAttr).(type) {
	case *ir.UnitAttr:
	case *ir.StringAttr:
		switch a.Value {
		case "cooperative":
		case "pingpong":
			pingpong = true
		default:
			return loop.EmitError("'%s' must be a unit attribute or \"cooperative\" or \"pingpong\", not %q", tmac.WarpSpecializeAttr, a.Value)
		}
	default:
		return loop.EmitError("'%s' must be a unit attribute or \"cooperative\" or \"pingpong\"", tmac.WarpSpecializeAttr)
	}
	if pingpong {
		// Two consumer warpgroups take the tiles in turn, each running the
		// program written for one warpgroup.
		if outer == nil {
			return loop.EmitError("a ping-pong schedule needs a persistent tile loop around the loop (the consumers take its tiles in turn)")
		}
		if k.threads != 128 {
			return loop.EmitError("a ping-pong schedule takes a program written for one warpgroup (128 threads), not %d", k.threads)
		}
		consumers = 2
	}
	if consumers+1 > 8 {
		return loop.EmitError("warp-specialize: %d consumer warpgroups plus the producer exceed 1024 threads", consumers)
	}
	p := newPipelinedLoop(k, loop)
	var err error
	if p.n, err = stageAttr(loop, tmac.StagesAttr, int64(o.stages)); err != nil {
		return err
	}
	p.s = 1
	requested := p.n
	if err := p.analyse(); err != nil {
		return err
	}
	if len(p.stores) > 0 {
		return p.stores[0].Op.EmitError("warp-specialize does not handle tmac.tma.store in the loop yet: store after the loop")
	}
	if len(p.loads) == 0 {
		return loop.EmitError("a warp-specialised loop needs tmac.tma.load ops")
	}
	if err := p.clusterLoads(k); err != nil {
		return err
	}
	crossCTA := len(p.multicast) > 0 // other CTAs write into this one's slots
	if k.sched != nil {
		kind := schedule.KindCooperative
		if pingpong {
			kind = schedule.KindPingPong
		}
		p.rec = p.newRecord(kind, requested, stageSource(loop, "stages", int64(o.stages)))
		p.rec.Persistent, p.rec.Consumers, p.rec.ClusterSize = outer != nil, consumers, p.clusterSize
		p.rec.ProducerRegs, p.rec.ConsumerRegs = int64(o.prodRegs), int64(o.consRegs)
		if outer != nil {
			p.rec.TileLoopLoc = outer.Loc
		}
		// The producer fills every slot before its first wait that blocks
		// (round 0 waits for the phase before the barrier's first).
		p.rec.Prologue = p.n
		p.rec.IssuedBy = "producer warpgroup, thread 0"
		p.rec.IssueAt = "once the consumers have released position q (its wait on empty[q mod N] returns)"
	}
	if crossCTA {
		if err := k.clusterUniformTrips(loop, outer, p.clusterSize); err != nil {
			return err
		}
	}
	var pre []*ir.Operation // side-effect-free ops run by both roles
	for op := k.body.Entry().First(); op != nil && op != split; op = op.Next() {
		pre = append(pre, op)
	}
	var inOuter []*ir.Operation // the tile loop's ops before the loop, cloned for the producer
	if outer != nil {
		for op := outerBody(outer).First(); op != loop; op = op.Next() {
			inOuter = append(inOuter, op)
		}
	}
	setup, err := consumerSetup(p, pre, inOuter, outer, pingpong)
	if err != nil {
		return err
	}
	for _, op := range append(pre, inOuter...) {
		if setup[op] {
			continue
		}
		if !op.HasNoMemoryEffect() && !onlyAllocates(op) {
			return op.EmitError("'%s' before a warp-specialised loop would also run in the producer warpgroup: move it after the loop", op.Name())
		}
		if op.NumRegions() > 0 || (outer != nil && outer.IsAncestorOf(op) && onlyAllocates(op)) {
			return op.EmitError("'%s' before a warp-specialised loop: only straight-line side-effect-free ops may precede it (allocate tiles outside the tile loop)", op.Name())
		}
	}
	sync, async := false, false
	for _, t := range p.order {
		sync = sync || p.tiles[t].syncUse
		async = async || p.tiles[t].asyncUse
	}

	// The consumers' view of the thread numbering.
	entry := k.body.Entry()
	eb := newTB(loop.Loc)
	eb.SetInsertionPointToStart(entry)
	tr := eb.op(gpu.ThreadId, nil, []ir.Type{ir.Index}, ir.NamedAttr{Name: "dimension", Value: gpu.DimAttr("x")}).Result(0)
	tc := eb.bin(arith.Subi, tr, eb.idx(128))
	utc := tc // the program's thread id
	if pingpong {
		utc = eb.bin(arith.Remui, tc, eb.idx(128))
	}
	var remap []*ir.Operation
	ir.Walk(k.op, func(op *ir.Operation) ir.WalkResult {
		var dim ir.Attribute
		switch op.Name() {
		case gpu.ThreadId:
			dim = gpu.ThreadIdOp{Op: op}.Dimension()
		case gpu.BlockDim:
			dim = gpu.BlockDimOp{Op: op}.Dimension()
		}
		if dim != nil && gpu.DimOf(dim) == "x" && op.Result(0) != tr {
			remap = append(remap, op)
		}
		return ir.Advance
	})
	if k.op.Name() == gpu.Launch {
		// The launch body's block arguments 3 and 9: thread id x, block size x.
		ir.ReplaceAllUsesWith(entry.Arg(3), utc)
		ir.ReplaceAllUsesWith(entry.Arg(9), eb.idx(k.threads))
	}
	for _, op := range remap {
		if op.Name() == gpu.ThreadId {
			ir.ReplaceAllUsesWith(op.Result(0), utc)
		} else {
			ir.ReplaceAllUsesWith(op.Result(0), eb.idx(k.threads))
		}
		op.Erase()
	}

	// The epilogue: the ops after the loop, moved into the consumers' branch.
	var after []*ir.Operation
	for op := split.Next(); op != nil && !op.HasTrait(ir.Terminator); op = op.Next() {
		after = append(after, op)
	}

	b := newTB(loop.Loc)
	b.SetInsertionPoint(split)
	p.makeRings()
	trip, ivAt := p.tripCount(b)
	group := nvgpu.MBarrierGroupType(nvgpu.MBarrierGroup{MemorySpace: gpu.AddressSpaceAttr("workgroup"), NumBarriers: uint32(p.n)})
	full := b.op(nvgpu.MbarrierCreate, nil, []ir.Type{group}).Result(0)
	empty := b.op(nvgpu.MbarrierCreate, nil, []ir.Type{group}).Result(0)
	// Slots are released by the warpgroup leaders when wgmma reads them
	// (after a consumer barrier if threads read them too), else by every
	// consumer thread.
	// (A ping-pong slot is read by one warpgroup only.)
	releases := consumers
	if sync && !async && !crossCTA {
		releases = 128 * consumers
	}
	if pingpong {
		releases /= consumers
	}
	if crossCTA {
		releases *= p.clusterSize // every CTA's consumers release every CTA's slots
	}
	b.ifThen(b.cmp(arith.CmpIEq, tr, b.idx(0)), func(b tb) {
		for s := int64(0); s < p.n; s++ {
			b.op(nvgpu.MbarrierInit, []ir.Value{full, b.idx(1), b.idx(s)}, nil)
			b.op(nvgpu.MbarrierInit, []ir.Value{empty, b.idx(releases), b.idx(s)}, nil)
		}
	})
	p.recordWSGroups(full, empty, releases, sync, async, crossCTA, pingpong)
	if crossCTA {
		// Every CTA's barriers are initialised before any CTA multicasts
		// into them or arrives on them.
		clusterSync(b)
		ret := newTB(loop.Loc)
		ret.SetInsertionPoint(entry.Terminator())
		// ... and none exits while others may still arrive on its barriers.
		clusterSync(ret)
	} else {
		b.barrier()
	}
	ticks := b.idx(10000000)
	isProd := b.cmp(arith.CmpIUlt, tr, b.idx(128))

	then, els := ir.NewRegion(), ir.NewRegion()
	thenBlk := then.AddBlock(ir.NewBlock(nil, nil))
	elseBlk := els.AddBlock(ir.NewBlock(nil, nil))
	b.Create(&ir.OperationState{Name: scf.If, Operands: []ir.Value{isProd}, Regions: []*ir.Region{then, els}})

	// Producer.
	pb := tb{ir.NewBuilder(loop.Loc), copyConsts(b.consts)}
	pb.SetInsertionPointToEnd(thenBlk)
	pb.op(nvvm.Setmaxregister, nil, nil, ir.NamedAttr{Name: "action", Value: nvvm.MaxRegAction.Attr("decrease")},
		ir.NamedAttr{Name: "regCount", Value: ir.IntAttr(int64(o.prodRegs), ir.I32)})
	produce := func(b tb, base ir.Value, m *ir.IRMapping) {
		b.forLoop(b.idx(0), trip, b.idx(1), func(b tb, j ir.Value) {
			slot, q, ok := p.narrowRing(b, base, j, 0, p.n)
			if !ok {
				g := j
				if base != nil {
					g = b.bin(arith.Addi, base, j)
				}
				slot, q = b.bin(arith.Remui, g, b.idx(p.n)), b.bin(arith.Divui, g, b.idx(p.n))
			}
			round := b.op(arith.Andi, []ir.Value{q, b.idx(1)}, []ir.Type{ir.Index}).Result(0)
			parity := b.cmp(arith.CmpIEq, round, b.idx(0)) // one phase behind the round
			b.op(nvgpu.MbarrierTryWaitParity, []ir.Value{empty, parity, ticks, slot}, nil)
			p.recordWSWait(empty, &schedule.ParityRing{N: p.n, B: 1})
			p.issueLoadsWith(b, full, slot, ivAt(b, j), m)
		})
	}
	if crossCTA {
		r := pb.op(nvvm.ReadPtxSregClusterCtarank, nil, []ir.Type{ir.I32}).Result(0)
		p.rank = pb.op(arith.IndexCast, []ir.Value{r}, []ir.Type{ir.Index}).Result(0)
	}
	pb.ifThen(pb.cmp(arith.CmpIEq, tr, pb.idx(0)), func(b tb) {
		if outer == nil {
			produce(b, nil, ir.NewIRMapping())
			return
		}
		// The same tile loop, with only what the loads need.
		ol := scf.ForOp{Op: outer}
		b.forLoop(ol.LowerBound(), ol.UpperBound(), ol.Step(), func(b tb, t ir.Value) {
			m := ir.NewIRMapping()
			m.Map(outerBody(outer).Arg(0), t)
			for _, op := range inOuter {
				if !setup[op] {
					b.Insert(op.Clone(m))
				}
			}
			produce(b, tileBase(b, outer, t, trip), m)
		})
	})
	pb.op(scf.Yield, nil, nil)

	// Consumers: the loop, then the epilogue.
	cb := tb{ir.NewBuilder(loop.Loc), copyConsts(b.consts)}
	cb.SetInsertionPointToEnd(elseBlk)
	cb.op(nvvm.Setmaxregister, nil, nil, ir.NamedAttr{Name: "action", Value: nvvm.MaxRegAction.Attr("increase")},
		ir.NamedAttr{Name: "regCount", Value: ir.IntAttr(int64(o.consRegs), ir.I32)})
	// The consumers' own setup (see consumerSetup), in program order.
	for _, op := range pre {
		if setup[op] {
			op.Remove()
			cb.Insert(op)
		}
	}
	var lb tb                    // where the consumers' loop goes
	var ppFirst, ppStep ir.Value // ping-pong: the block's first tile and the tile loop's own step
	if outer == nil {
		lb = cb
	} else {
		outer.Remove()
		cb.Insert(outer)
		ob := newTB(outer.Loc)
		ob.SetInsertionPointToStart(outerBody(outer))
		p.base = tileBase(ob, outer, outerBody(outer).Arg(0), trip)
		if pingpong {
			// Warpgroup w takes tiles w, w+2, ...: the loop starts w steps
			// later and strides twice as far (the ring base above still
			// counts tiles in the producer's order).
			wb := tb{ir.NewBuilder(outer.Loc), copyConsts(cb.consts)}
			wb.SetInsertionPoint(outer)
			ol := scf.ForOp{Op: outer}
			ppFirst, ppStep = ol.LowerBound(), ol.Step()
			p.wg = wb.bin(arith.Divui, tc, wb.idx(128))
			setLowerBoundAndStep(outer, wb.bin(arith.Addi, ppFirst, wb.bin(arith.Muli, p.wg, ppStep)), wb.bin(arith.Muli, ppStep, wb.idx(consumers)))
		}
		lb = newTB(loop.Loc)
		lb.SetInsertionPoint(loop)
	}
	newLoop, jLocal, slot, _ := p.normalise(lb, trip, ivAt)
	yield := cb.op(scf.Yield, nil, nil)
	for _, op := range after {
		op.Remove()
		elseBlk.InsertBefore(op, yield)
	}
	if pingpong {
		p.pingpongLocal, p.pingpongTrip = jLocal, trip
	}
	p.consume(newLoop, full, empty, p.g, slot, tc, ticks, sync, async)
	if w := firstSharedWrite(newLoop); async && consumers > 1 && !pingpong && w != nil {
		// The epilogue writes shared memory that smem-plan may let overlap
		// a ring slot or a setup tile (Q) another consumer's last wgmma
		// still reads: every consumer has waited for its own groups (the
		// wait_group 0 consume put after the loop); now it waits for the
		// others, right before the first write (not right after the loop:
		// the program may still signal another consumer there, as the
		// attention kernels' ping-pong turns do).
		bb := newTB(loop.Loc)
		bb.SetInsertionPoint(w)
		bb.barrier()
		p.recordAfter("consumers: a barrier of all consumers before the epilogue's first shared-memory write (no consumer's wgmma still reads it)")
	}
	if pingpong {
		orderPingpong(outer, newLoop, p.wg, ppFirst, ppStep)
	}
	p.dropTileAllocs()
	if p.rec != nil {
		p.finishRecord()
		k.sched.AddLoop(k.op, p.rec)
	}
	if outer != nil {
		var wg ir.Value // ping-pong: each warpgroup stores its own tiles
		if pingpong {
			wg = p.wg
		}
		newOuter, err := k.consumerStores(outer, tc, p.rec, wg)
		if err != nil {
			return err
		}
		if newOuter != nil {
			outer = newOuter // normalised: the barriers below look for it
		}
	} else {
		// The epilogue's TMA stores, now in the consumers' branch (where
		// tma-pipeline looks for them only at the kernel's top level):
		// issued by the first consumer thread after the consumers' barrier.
		var stores []*ir.Operation
		for _, op := range after {
			if op.Name() == tmac.TmaStore {
				stores = append(stores, op)
			}
		}
		leader := func(b tb) ir.Value { return b.cmp(arith.CmpIEq, tc, b.idx(0)) }
		if err := k.storesOutsideLoops(stores, leader); err != nil {
			return err
		}
	}

	// gpu.barrier among the consumers only.
	var bars []*ir.Operation
	ir.Walk(elseBlk.Parent().ParentOp(), func(op *ir.Operation) ir.WalkResult {
		if op.Name() == gpu.Barrier && els.IsAncestorOf(op) {
			bars = append(bars, op)
		}
		return ir.Advance
	})
	for _, op := range bars {
		nb := newTB(op.Loc)
		nb.SetInsertionPoint(op)
		id := nb.i32(1)
		n := nb.i32(128 * consumers)
		if pingpong && outer.IsAncestorOf(op) {
			// Within a warpgroup's own tile: barrier 1 + w over its 128
			// threads (barrier 3 over both consumers elsewhere).
			w32 := nb.op(arith.IndexCast, []ir.Value{p.wg}, []ir.Type{ir.I32}).Result(0)
			id = nb.op(arith.Addi, []ir.Value{w32, id}, []ir.Type{ir.I32}).Result(0)
			n = nb.i32(128)
		} else if pingpong {
			id = nb.i32(3)
		}
		nb.op(nvvm.Barrier, []ir.Value{id, n}, nil, ir.NamedAttr{Name: "operandSegmentSizes", Value: ir.DenseI32Array(1, 1, 0)})
		op.Erase()
	}
	// Attribute the kernel's wgmma work to its consumers (runtime/plan's
	// FLOP count; the name is plan.ConsumerWarpgroupsAttr).
	k.op.SetAttr("tmac.consumer_warpgroups", ir.I64Attr(consumers))
	return k.setBlockSize(top, 128*(consumers+1))
}

// orderPingpong makes the two ping-pong consumers run their K loops in
// tile order. Both wait on the same full barriers, each for every other
// tile's ring positions only, and a try_wait.parity tells phases apart
// only modulo 2: without an order, a consumer waiting for position g (phase
// g/N of full[g mod N]) could pass when phase g/N - 2 completed, long
// before position g is loaded. So warpgroup w starts a tile's K loop (all
// but the block's first tile) only after the other warpgroup has finished
// the previous tile's K loop, which waited for every earlier position
// (named barrier 4 + w over both warpgroups: the other arrives, this one
// syncs), and after its own K loop it signals the other warpgroup if the
// block has a next tile. A consumer's epilogue thus overlaps the other
// one's main loop, which is the point of the schedule.
func orderPingpong(outer, kloop *ir.Operation, wg, first, step ir.Value) {
	t := outerBody(outer).Arg(0)
	b := newTB(kloop.Loc)
	b.SetInsertionPoint(kloop)
	w32 := b.op(arith.IndexCast, []ir.Value{wg}, []ir.Type{ir.I32}).Result(0)
	n := b.i32(256)
	four := b.i32(4)
	mine := b.op(arith.Addi, []ir.Value{four, w32}, []ir.Type{ir.I32}).Result(0)
	b.ifThen(b.cmp(arith.CmpINe, t, first), func(b tb) {
		b.op(nvvm.Barrier, []ir.Value{mine, n}, nil, ir.NamedAttr{Name: "operandSegmentSizes", Value: ir.DenseI32Array(1, 1, 0)})
	})
	a := newTB(kloop.Loc)
	a.SetInsertionPointAfter(kloop)
	five := a.i32(5)
	other := a.op(arith.Subi, []ir.Value{five, w32}, []ir.Type{ir.I32}).Result(0)
	next := a.bin(arith.Addi, t, step)
	a.ifThen(a.cmp(arith.CmpIUlt, next, scf.ForOp{Op: outer}.UpperBound()), func(b tb) {
		b.op(nvvm.BarrierArrive, []ir.Value{other, n}, nil)
	})
}

// consumerStores rotates the output tiles of the tmac.tma.store ops in a
// persistent kernel's tile loop (now in the consumers' branch) as
// tma-pipeline does for a loop — S slots (the tile loop's
// tmac.store_stages, else 2), wait_group.read before the first write,
// fence + barrier + store — with the first consumer thread as the elected
// one and the block barriers among the consumers (named barriers), so the
// TMA store of one tile's epilogue overlaps the next tile's main loop.
// In a ping-pong kernel (wg, the consumer's warpgroup, not nil) each
// warpgroup runs its own tiles: it gets S slots of its own (2S in the
// ring, warpgroup w's from w·S), its first thread stores and waits for
// its own bulk groups, and the barriers are its own (named barrier 1 + w
// over its 128 threads, as warp-specialize makes every barrier of a
// ping-pong tile loop).
func (k *tmaKernel) consumerStores(outer *ir.Operation, tc ir.Value, rec *schedule.LoopSchedule, wg ir.Value) (*ir.Operation, error) {
	q := newPipelinedLoop(k, outer)
	q.n = 1
	var err error
	if q.s, err = stageAttr(outer, tmac.StoreStagesAttr, 2); err != nil {
		return nil, err
	}
	if err := q.analyse(); err != nil {
		return nil, err
	}
	if len(q.stores) == 0 {
		return nil, nil
	}
	if len(q.loads) > 0 || len(q.waits) > 0 {
		return nil, q.loads[0].Op.EmitError("the tile loop of a warp-specialised kernel can only store tiles; load them in the marked loop")
	}
	b := newTB(outer.Loc)
	b.SetInsertionPoint(outer)
	leader := b.cmp(arith.CmpIEq, tc, b.idx(0))
	if wg != nil {
		leader = b.cmp(arith.CmpIEq, b.bin(arith.Remui, tc, b.idx(128)), b.idx(0))
		q.storeSlotBase = b.bin(arith.Muli, wg, b.idx(q.s))
	}
	q.makeRings()
	trip, ivAt := q.tripCount(b)
	newOuter, _, _, sslot := q.normalise(b, trip, ivAt)
	q.rewriteStores(newOuter, leader, nil, sslot) // no loads here: no pass-through tiles
	q.dropTileAllocs()
	if rec != nil {
		// The output tiles join the K loop's record; their rotation is the
		// tile loop's.
		q.rec = &schedule.LoopSchedule{}
		q.finishRecord()
		rec.Tiles = append(rec.Tiles, q.rec.Tiles...)
		q.recordStores(rec)
		slots, who := fmt.Sprintf("%d output slot(s)", q.s), "the first consumer thread"
		if wg != nil {
			slots, who = fmt.Sprintf("%d output slot(s) per warpgroup", q.s), "each warpgroup's first thread"
		}
		across := "rotated across tiles"
		if e := q.storeEpisodes(); e > 1 {
			across = fmt.Sprintf("rotated by part (the tile is stored in %d parts)", e)
		}
		rec.AfterLoop = append(rec.AfterLoop, fmt.Sprintf("TMA-store epilogue in the tile loop: %s %s; %s waits until at most %d bulk store group(s) still read before a slot is rewritten, and for all of them after the tile loop", slots, across, who, q.storeWait()))
	}
	return newOuter, nil
}

// clusterLoads finds the loads marked tmac.multicast and checks them
// against the kernel's cluster (known_cluster_size, along x only).
func (p *pipelinedLoop) clusterLoads(k *tmaKernel) error {
	p.multicast = map[*ir.Operation]bool{}
	p.clusterSize = 1
	for _, l := range p.loads {
		if !l.Op.HasAttr(tmac.MulticastAttr) {
			continue
		}
		if p.clusterSize == 1 {
			c, ok := k.op.Attr("known_cluster_size").(*ir.DenseArrayAttr)
			if !ok || len(c.Ints) != 3 {
				return l.Op.EmitError("a multicast load needs a kernel launched with clusters (known_cluster_size; run outline-kernels first)")
			}
			if c.Ints[1] != 1 || c.Ints[2] != 1 || c.Ints[0] < 2 || c.Ints[0] > 16 {
				return l.Op.EmitError("multicast supports clusters of 2 to 16 blocks along x only, not %dx%dx%d", c.Ints[0], c.Ints[1], c.Ints[2])
			}
			p.clusterSize = c.Ints[0]
		}
		r := p.ringOf(l.Dst())
		if n := r.boxes.N; n%p.clusterSize != 0 {
			return l.Op.EmitError("a multicast tile is shared out box by box among the cluster's %d blocks, but it has %d boxes", p.clusterSize, n)
		}
		p.multicast[l.Op] = true
	}
	return nil
}

// clusterUniformTrips checks that every block of a cluster runs the marked
// loop (and the tile loop around it) the same number of times: a block
// with an extra iteration would wait for multicast boxes the others never
// issue. The loop bounds must not depend on the block; a tile loop may
// start at gpu.block_id x with constant bounds and step when the kernel's
// grid is known, and then the trip counts are compared block by block.
func (k *tmaKernel) clusterUniformTrips(loop, outer *ir.Operation, cs int64) error {
	for _, v := range loopBounds(loop) {
		if dependsOnBlock(v) {
			return loop.EmitError("with multicast loads, every block of a cluster must run the loop the same number of times: its bounds must not depend on the block id")
		}
	}
	if outer == nil {
		return nil
	}
	bounds := loopBounds(outer)
	lb, ub, st := bounds[0], bounds[1], bounds[2]
	if !dependsOnBlock(lb) && !dependsOnBlock(ub) && !dependsOnBlock(st) {
		return nil
	}
	u, oku := arith.ConstantInt(ub)
	step, oks := arith.ConstantInt(st)
	d, okd := gpu.AsBlockId(lb.DefiningOp())
	grid, okg := gpu.FuncOp{Op: k.op}.KnownGridSize().(*ir.DenseArrayAttr)
	if !okd || gpu.DimOf(d.Dimension()) != "x" || !oku || !oks || step <= 0 || !okg || len(grid.Ints) != 3 {
		return outer.EmitError("with multicast loads, every block of a cluster must run the tile loop the same number of times: write it from gpu.block_id x to a constant with a constant step in a kernel of known grid size, or with bounds that do not depend on the block")
	}
	trips := func(b int64) int64 {
		if u <= b {
			return 0
		}
		return (u - b + step - 1) / step
	}
	for b := int64(0); b < grid.Ints[0]; b++ {
		if first := b - b%cs; trips(b) != trips(first) {
			return outer.EmitError("with multicast loads, every block of a cluster must run the tile loop the same number of times, but block %d runs it %d times and block %d %d times (make the tile count a multiple of the grid)", first, trips(first), b, trips(b))
		}
	}
	return nil
}

// dependsOnBlock reports whether v is computed from a block or cluster
// position (gpu.block_id, gpu.cluster_block_id, nvvm special registers of
// the CTA).
func dependsOnBlock(v ir.Value) bool {
	seen := map[*ir.Operation]bool{}
	var walk func(v ir.Value) bool
	walk = func(v ir.Value) bool {
		d := v.DefiningOp()
		if d == nil || seen[d] {
			return false
		}
		seen[d] = true
		switch n := d.Name(); {
		case n == gpu.BlockId, n == gpu.ClusterBlockId, n == gpu.ClusterId,
			strings.HasPrefix(n, "nvvm.read.ptx.sreg.ctaid"), strings.HasPrefix(n, "nvvm.read.ptx.sreg.cluster"):
			return true
		}
		for _, x := range d.Operands() {
			if walk(x) {
				return true
			}
		}
		return false
	}
	return walk(v)
}

// clusterSync emits a whole-cluster barrier (every thread of every CTA).
func clusterSync(b tb) {
	b.op(nvvm.ClusterArrive, nil, nil)
	b.op(nvvm.ClusterWait, nil, nil)
}

// tileBase is the ring position of the first K step of the tile loop's
// iteration t: ((t - lb) / step) * T.
func tileBase(b tb, outer *ir.Operation, t, trip ir.Value) ir.Value {
	ol := scf.ForOp{Op: outer}
	idx := b.bin(arith.Divui, b.bin(arith.Subi, t, ol.LowerBound()), ol.Step())
	return b.bin(arith.Muli, idx, trip)
}

// consume rewrites the consumers' loop body: the wait on full[g mod N]
// (g the ring position: j, plus the tile's base in a persistent kernel)
// and the release of the slots on empty.
func (p *pipelinedLoop) consume(loop *ir.Operation, full, empty, j, slot, tc, ticks ir.Value, sync, async bool) {
	body := p.body
	w := p.waits[0]
	wb := newTB(w.Loc)
	wb.SetInsertionPoint(w)
	round := wb.op(arith.Andi, []ir.Value{p.roundOf(wb, j), wb.idx(1)}, []ir.Type{ir.Index}).Result(0)
	wb.op(nvgpu.MbarrierTryWaitParity, []ir.Value{full, wb.cmp(arith.CmpINe, round, wb.idx(0)), ticks, slot}, nil)
	p.recordWSWait(full, &schedule.ParityRing{N: p.n})
	for _, w := range p.waits {
		w.Erase()
	}
	for _, l := range p.loads {
		l.Op.Erase()
	}
	token := nvgpu.MBarrierTokenType()
	leaderArrive := func(b tb, slotOf ir.Value, cond ir.Value) {
		leader := b.cmp(arith.CmpIEq, b.bin(arith.Remui, tc, b.idx(128)), b.idx(0))
		if cond != nil {
			leader = b.op(arith.Andi, []ir.Value{leader, cond}, []ir.Type{ir.I1}).Result(0)
		}
		b.ifThen(leader, func(b tb) {
			if len(p.multicast) == 0 {
				b.op(nvgpu.MbarrierArrive, []ir.Value{empty, slotOf}, []ir.Type{token})
				return
			}
			// The slot is written by every CTA of the cluster: release it
			// to each one's producer (the barrier at the same offset in
			// CTA q, through the cluster's shared window).
			//
			// The release is at CTA scope when only wgmma reads the slot:
			// its reads have completed (wgmma.wait_group) before the
			// arrival, and a cluster-scope release costs a GPU-wide memory
			// barrier (MEMBAR.ALL.GPU) per arrival, measured at 40% of the
			// kernel's speed on the H200. Slots read by the threads keep
			// the cluster-scope release, which orders their loads before
			// the other CTAs' TMA writes.
			scope := "cluster"
			if async && !sync {
				scope = "cta"
			}
			addr := b.op(nvgpu.MbarrierGet, []ir.Value{empty, slotOf}, []ir.Type{ir.I32}).Result(0)
			p3 := b.op(llvm.Inttoptr, []ir.Value{addr}, []ir.Type{llvm.Ptr(3)}).Result(0)
			for q := int64(0); q < p.clusterSize; q++ {
				cq := b.i32(q)
				p7 := b.op(nvvm.Mapa, []ir.Value{p3, cq}, []ir.Type{llvm.Ptr(7)}).Result(0)
				b.op(nvvm.MbarrierArrive, []ir.Value{p7}, nil, ir.NamedAttr{Name: "scope", Value: nvvm.MemScope.Attr(scope)})
			}
		})
	}
	atEnd := newTB(loop.Loc)
	atEnd.SetInsertionPoint(body.Terminator())
	async = async && len(p.mmas) > 0
	if !async {
		if len(p.multicast) > 0 {
			// Every block's slot j is released to every block: once the
			// consumers have all read it, by the warpgroup leaders.
			p.recordRelease(0, "at the end of the iteration, after a consumer barrier: each warpgroup's leader arrives on empty[s]")
			atEnd.barrier()
			leaderArrive(atEnd, slot, nil)
			return
		}
		// Every consumer thread is done with slot j at the end of its
		// iteration.
		p.recordRelease(0, "at the end of the iteration: every consumer thread arrives on empty[s]")
		atEnd.op(nvgpu.MbarrierArrive, []ir.Value{empty, slot}, []ir.Type{token})
		return
	}
	// As in tma-pipeline: after the last mma at most `limit` groups of this
	// iteration are pending, so iteration j-1's have completed. With one
	// slot, the iteration's own mma must complete (limit 0) and the slot is
	// released at the end of the iteration that read it.
	limit, _, anchor := p.boundPendingMMAs()
	if p.rec != nil {
		p.rec.WGMMAWait = limit
	}
	if p.n == 1 {
		p.recordRelease(0, "at the end of the iteration, after wgmma wait_group 0: each warpgroup's leader arrives on empty[s]")
		if sync {
			atEnd.barrier() // the warpgroups' threads are done reading too
		}
		leaderArrive(atEnd, slot, nil)
	} else {
		how := fmt.Sprintf("after wgmma wait_group %d following the iteration's last mma (position j-1's wgmma groups have completed)", limit)
		if sync {
			how += " and a consumer barrier"
		}
		p.recordRelease(1, how+": each warpgroup's leader arrives on empty[s]")
		rb := newTB(loop.Loc)
		rb.SetInsertionPointAfter(anchor)
		if sync {
			// Every consumer thread has finished iteration j-1's reads.
			rb.barrier()
		}
		prev := rb.prevSlot(slot, j, p.n)
		first := j // the first ring position has no previous slot
		if p.pingpongLocal != nil {
			// Ping-pong: the previous position may be the other
			// warpgroup's; this one's first K step releases nothing.
			first = p.pingpongLocal
		}
		leaderArrive(rb, prev, rb.cmp(arith.CmpIUgt, first, rb.idx(0)))
	}
	ab := newTB(loop.Loc)
	ab.SetInsertionPointAfter(loop)
	ab.op(nvvm.WgmmaWaitGroupSyncAligned, nil, nil, ir.NamedAttr{Name: "group", Value: ir.I64Attr(0)})
	p.recordAfter("consumers: wgmma wait_group 0")
	if p.pingpongLocal != nil && p.n > 1 {
		// ... and after its tile's last K step it releases that slot, once
		// every thread of the warpgroup has read it if the threads read
		// the tiles (the barrier becomes the warpgroup's named barrier).
		if sync {
			ab.barrier()
		}
		last := ab.bin(arith.Remui, ab.bin(arith.Subi, ab.bin(arith.Addi, p.base, p.pingpongTrip), ab.idx(1)), ab.idx(p.n))
		leaderArrive(ab, last, ab.cmp(arith.CmpIUgt, p.pingpongTrip, ab.idx(0)))
	}
}

// i32 is an i32 constant (a fresh one: the cache is for index constants).
func (b tb) i32(n int64) ir.Value {
	return b.op(arith.Constant, nil, []ir.Type{ir.I32}, ir.NamedAttr{Name: "value", Value: ir.IntAttr(n, ir.I32)}).Result(0)
}

// forLoop builds `scf.for %j = lb to ub step st { body }` without results.
func (b tb) forLoop(lb, ub, st ir.Value, body func(tb, ir.Value)) {
	region := ir.NewRegion()
	blk := region.AddBlock(ir.NewBlock(nil, nil))
	j := blk.AddArgument(ir.Index, b.Loc)
	b.Create(&ir.OperationState{Name: scf.For, Operands: []ir.Value{lb, ub, st}, Regions: []*ir.Region{region}})
	inner := tb{ir.NewBuilder(b.Loc), copyConsts(b.consts)}
	inner.SetInsertionPointToEnd(blk)
	body(inner, j)
	inner.op(scf.Yield, nil, nil)
}

func copyConsts(m map[int64]ir.Value) map[int64]ir.Value {
	c := make(map[int64]ir.Value, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// setBlockSize sets the kernel's block size along x to n threads: the
// gpu.launch operand, or the gpu.func's known_block_size and the
// blockSizeX operand of every gpu.launch_func naming it.
func (k *tmaKernel) setBlockSize(top *ir.Operation, n int64) error {
	set := func(l *ir.Operation, idx int) {
		b := newTB(l.Loc)
		b.SetInsertionPoint(l)
		l.SetOperand(idx, b.idx(n))
	}
	if k.op.Name() == gpu.Launch {
		i, _, _ := k.op.OperandGroupRange("blockSizeX")
		set(k.op, i)
		return nil
	}
	if a, ok := (gpu.FuncOp{Op: k.op}).KnownBlockSize().(*ir.DenseArrayAttr); ok {
		k.op.SetAttr("known_block_size", ir.DenseI32Array(n, a.Ints[1], a.Ints[2]))
	}
	mod := k.op.ParentOp()
	if mod == nil || mod.Name() != gpu.Module {
		return k.op.EmitError("warp-specialize: cannot find the launches of this kernel (not in a gpu.module)")
	}
	ir.Walk(top, func(op *ir.Operation) ir.WalkResult {
		lf, ok := gpu.AsLaunchFunc(op)
		if !ok {
			return ir.Advance
		}
		ref, ok := lf.Kernel().(*ir.SymbolRefAttr)
		if ok && len(ref.Nested) == 1 && ref.Root == mod.SymbolName() && ref.Nested[0] == k.op.SymbolName() {
			if i, _, ok := op.OperandGroupRange("blockSizeX"); ok {
				set(op, i)
			}
		}
		return ir.Advance
	})
	return nil
}

// loopBounds returns an scf.for's lower bound, upper bound and step.
func loopBounds(loop *ir.Operation) [3]ir.Value {
	l := scf.ForOp{Op: loop}
	return [3]ir.Value{l.LowerBound(), l.UpperBound(), l.Step()}
}

// setLowerBoundAndStep replaces an scf.for's lower bound and step:
// operands 0 and 2, by position, as the view has no setters.
func setLowerBoundAndStep(loop *ir.Operation, lb, step ir.Value) {
	loop.SetOperand(0, lb)
	loop.SetOperand(2, step)
}

// outerBody is the body of a persistent kernel's tile loop.
func outerBody(outer *ir.Operation) *ir.Block { return scf.ForOp{Op: outer}.Region().Entry() }

// onlyAllocates reports whether op's one declared effect is the allocation
// of its result (memref.alloc, memref.alloca).
func onlyAllocates(op *ir.Operation) bool {
	es := op.Effects()
	return len(es) == 1 && es[0].Kind == ir.Allocate
}

// consumerSetup picks the ops before a warp-specialised loop that only the
// consumers run: each op with side effects other than allocation, and
// every op before the loop that uses their results (e.g. an mbarrier and a
// TMA load of a tile the loop reads, waited on before the loop: Q of an
// attention kernel). Those before the kernel's split point (pre) move, in
// order, to the start of the consumers' branch, where gpu.barrier becomes
// the consumers' named barrier; in a persistent kernel, those in the tile
// loop before the marked loop (inOuter: a tile's own Q, say) stay where
// they are, in the consumers' copy of the tile loop, and the producer's
// copy leaves them out. The producer must not need them: not in the
// loops' bounds, the loads' tensor maps or coordinates. Ping-pong kernels
// keep rejecting side effects before the loop.
func consumerSetup(p *pipelinedLoop, pre, inOuter []*ir.Operation, outer *ir.Operation, pingpong bool) (map[*ir.Operation]bool, error) {
	setup := map[*ir.Operation]bool{}
	moved := map[ir.Value]bool{}
	for _, op := range append(append([]*ir.Operation(nil), pre...), inOuter...) {
		uses := false
		ir.Walk(op, func(in *ir.Operation) ir.WalkResult {
			for _, v := range in.Operands() {
				uses = uses || moved[v]
			}
			return ir.Advance
		})
		if !uses && (op.HasNoMemoryEffect() || onlyAllocates(op)) {
			continue
		}
		if pingpong {
			return nil, nil // the caller's diagnostic
		}
		setup[op] = true
		for _, r := range op.Results() {
			moved[r] = true
		}
	}
	if len(setup) == 0 {
		return nil, nil
	}
	var producer []ir.Value
	loop := p.forOp()
	producer = append(producer, loop.LowerBound(), loop.UpperBound(), loop.Step())
	if outer != nil {
		ol := scf.ForOp{Op: outer}
		producer = append(producer, ol.LowerBound(), ol.UpperBound(), ol.Step())
	}
	for _, op := range p.sliceOps {
		producer = append(producer, op.Operands()...)
	}
	for _, l := range p.loads {
		producer = append(producer, l.Op.Operands()...)
	}
	for _, v := range producer {
		if moved[v] {
			return nil, v.DefiningOp().EmitError("'%s' before a warp-specialised loop runs in the consumers only, but the producer's loads need its result", v.DefiningOp().Name())
		}
	}
	return setup, nil
}

// firstSharedWrite returns the first op after loop in its block that may
// write shared memory (itself or an op nested in it: an op with memory
// effects other than reads and a workgroup memref operand), or nil.
func firstSharedWrite(loop *ir.Operation) *ir.Operation {
	for op := loop.Next(); op != nil; op = op.Next() {
		writes := false
		ir.Walk(op, func(in *ir.Operation) ir.WalkResult {
			if in.HasNoMemoryEffect() || onlyReads(in) {
				return ir.Advance
			}
			for _, v := range in.Operands() {
				if m, ok := v.Type().(*ir.MemRefType); ok && nvgpu.IsSharedMemory(m.MemorySpace) {
					writes = true
					return ir.Interrupt
				}
			}
			return ir.Advance
		})
		if writes {
			return op
		}
	}
	return nil
}

// onlyReads reports whether op declares effects and all of them are reads.
func onlyReads(op *ir.Operation) bool {
	es := op.Effects()
	for _, e := range es {
		if e.Kind != ir.Read {
			return false
		}
	}
	return len(es) > 0
}
