package emu

import (
	"fmt"

	"github.com/tmac-dev/tmac/dialects/llvm"
	"github.com/tmac-dev/tmac/dialects/nvvm"
	"github.com/tmac-dev/tmac/ir"
)

// ------------------------------------------------------------ LLVM values

func init() {
	register(func(k *kernel, op *ir.Operation) runFunc {
		c := llvm.PtrtointOp{Op: op}
		arg, res := k.slot(c.Arg()), c.Res()
		return func(t *thread, in *instr) {
			p, ok := t.vals[arg].(ptr)
			if !ok {
				t.failf(in.op, "operand is not a pointer (%T)", t.vals[arg])
			}
			t.set(in, 0, wrap(int64(p.addr), res.Type()))
		}
	}, llvm.Ptrtoint)
	register(func(k *kernel, op *ir.Operation) runFunc {
		c := llvm.InttoptrOp{Op: op}
		arg, argType, res := k.slot(c.Arg()), c.Arg().Type(), c.Res()
		return func(t *thread, in *instr) {
			as, _ := llvm.PtrAddrSpace(res.Type())
			t.set(in, 0, ptr{space: int(as), addr: zext(t.int(in, arg), argType), cta: -1})
		}
	}, llvm.Inttoptr)
	register(direct(func(t *thread, in *instr) { t.set(in, 0, zeroOf(in.op.Result(0).Type())) }), llvm.MlirZero, llvm.MlirUndef, llvm.MlirPoison)
	register(func(k *kernel, op *ir.Operation) runFunc {
		e := llvm.ExtractvalueOp{Op: op}
		container, position := k.slot(e.Container()), positions(e.Position())
		return func(t *thread, in *instr) {
			v := t.vals[container]
			for _, i := range position {
				if acc, ok := v.(*wgAcc); ok {
					// Reading a register of a wgmma accumulator.
					if acc.group >= t.wgRetired {
						t.fail(&Error{Op: in.op, Msg: fmt.Sprintf("reads a wgmma accumulator before nvvm.wgmma.wait.group has retired its group (group %d; %d committed, %d retired)", acc.group, t.wgCommitted, t.wgRetired),
							Notes: []Note{note(acc.op.Loc, "the wgmma that writes it")}})
					}
					v = acc.vals
				}
				s, ok := v.([]any)
				if !ok || int(i) >= len(s) {
					t.failf(in.op, "position %d is not in the aggregate", i)
				}
				v = s[i]
			}
			t.set(in, 0, v)
		}
	}, llvm.Extractvalue)
	register(func(k *kernel, op *ir.Operation) runFunc {
		ins := llvm.InsertvalueOp{Op: op}
		container, value, position := k.slot(ins.Container()), k.slot(ins.Value()), positions(ins.Position())
		return func(t *thread, in *instr) {
			var put func(agg any, pos []int64) any
			put = func(agg any, pos []int64) any {
				s, ok := agg.([]any)
				if !ok || int(pos[0]) >= len(s) {
					t.failf(in.op, "position %d is not in the aggregate", pos[0])
				}
				c := append([]any(nil), s...)
				if len(pos) == 1 {
					c[pos[0]] = t.vals[value]
				} else {
					c[pos[0]] = put(c[pos[0]], pos[1:])
				}
				return c
			}
			t.set(in, 0, put(t.vals[container], position))
		}
	}, llvm.Insertvalue)
}

// positions are the indices of an extractvalue or insertvalue position
// attribute.
func positions(position ir.Attribute) []int64 {
	a, _ := position.(*ir.DenseArrayAttr)
	if a == nil {
		return nil
	}
	return a.Ints
}

// zeroOf is the zero value of an LLVM-compatible type (structs recursively).
func zeroOf(ty ir.Type) any {
	if s := llvm.StructOf(ty); s != nil {
		out := make([]any, len(s.Body))
		for i, f := range s.Body {
			out[i] = zeroOf(f)
		}
		return out
	}
	switch {
	case ir.IsFloat(ty):
		return 0.0
	case ir.IsInteger(ty) || ir.IsIndex(ty):
		return int64(0)
	}
	if as, ok := llvm.PtrAddrSpace(ty); ok {
		return ptr{space: int(as), cta: -1}
	}
	return nil
}

// ------------------------------------------------------------ no-ops

func init() {
	// Register budgets, L2 prefetches and mbarrier-init fences change no
	// value the emulator models. (nvvm.prefetch.tensormap has no
	// definition: the nvvm dialect accepts it as an unregistered op.)
	register(direct(func(t *thread, in *instr) {}), nvvm.Setmaxregister, nvvm.Prefetch, "nvvm.prefetch.tensormap",
		nvvm.CpAsyncBulkTensorPrefetch, nvvm.FenceMbarrierInit)
}

// ------------------------------------------------------------ special registers

// specialRegisters read the special registers the emulator models.
var specialRegisters = map[string]func(t *thread) int64{
	nvvm.ReadPtxSregTidX:            func(t *thread) int64 { return t.tid[0] },
	nvvm.ReadPtxSregTidY:            func(t *thread) int64 { return t.tid[1] },
	nvvm.ReadPtxSregTidZ:            func(t *thread) int64 { return t.tid[2] },
	nvvm.ReadPtxSregCtaidX:          func(t *thread) int64 { return t.c.bid[0] },
	nvvm.ReadPtxSregCtaidY:          func(t *thread) int64 { return t.c.bid[1] },
	nvvm.ReadPtxSregCtaidZ:          func(t *thread) int64 { return t.c.bid[2] },
	nvvm.ReadPtxSregClusterCtarank:  func(t *thread) int64 { return int64(t.c.rank) },
	nvvm.ReadPtxSregClusterNctarank: func(t *thread) int64 { return int64(len(t.b.ctas)) },
	nvvm.ReadPtxSregClusterCtaidX:   func(t *thread) int64 { return t.clusterBlock(0) },
	nvvm.ReadPtxSregClusterCtaidY:   func(t *thread) int64 { return t.clusterBlock(1) },
	nvvm.ReadPtxSregClusterCtaidZ:   func(t *thread) int64 { return t.clusterBlock(2) },
	nvvm.ReadPtxSregClusterNctaidX:  func(t *thread) int64 { return t.b.cdim[0] },
	nvvm.ReadPtxSregClusterNctaidY:  func(t *thread) int64 { return t.b.cdim[1] },
	nvvm.ReadPtxSregClusterNctaidZ:  func(t *thread) int64 { return t.b.cdim[2] },
	nvvm.ReadPtxSregClusteridX:      func(t *thread) int64 { return t.b.cid[0] },
	nvvm.ReadPtxSregClusteridY:      func(t *thread) int64 { return t.b.cid[1] },
	nvvm.ReadPtxSregClusteridZ:      func(t *thread) int64 { return t.b.cid[2] },
	nvvm.ReadPtxSregNclusteridX:     func(t *thread) int64 { return t.b.clusters(0) },
	nvvm.ReadPtxSregNclusteridY:     func(t *thread) int64 { return t.b.clusters(1) },
	nvvm.ReadPtxSregNclusteridZ:     func(t *thread) int64 { return t.b.clusters(2) },
	nvvm.ReadPtxSregNtidX:           func(t *thread) int64 { return t.b.bdim[0] },
	nvvm.ReadPtxSregNtidY:           func(t *thread) int64 { return t.b.bdim[1] },
	nvvm.ReadPtxSregNtidZ:           func(t *thread) int64 { return t.b.bdim[2] },
	nvvm.ReadPtxSregNctaidX:         func(t *thread) int64 { return t.b.grid[0] },
	nvvm.ReadPtxSregNctaidY:         func(t *thread) int64 { return t.b.grid[1] },
	nvvm.ReadPtxSregNctaidZ:         func(t *thread) int64 { return t.b.grid[2] },
	nvvm.ReadPtxSregLaneid:          func(t *thread) int64 { return int64(t.linear % 32) },
	nvvm.ReadPtxSregWarpid:          func(t *thread) int64 { return int64(t.linear / 32) },
}

func init() {
	for name, read := range specialRegisters {
		register(direct(func(t *thread, in *instr) { t.set(in, 0, read(t)) }), name)
	}
}

// ------------------------------------------------------------ barriers

// namedBarrier is a CTA barrier (bar.sync / barrier.sync): id 0 is
// gpu.barrier over every live thread.
type namedBarrier struct {
	expected int
	arrived  int
	gen      int
	// at: the arrivals of this generation at the block barrier (every
	// thread's), for the divergence check.
	at []barrierArrival
}

// barrier makes t wait at barrier id until n threads (n < 0: every thread
// not exited) have arrived; arriveOnly counts t without waiting.
func (t *thread) barrierAt(op *ir.Operation, id int64, n int, arriveOnly bool) {
	c := t.c
	nb := c.named[id]
	all := n < 0 // every live thread: exited ones count as arrived
	if nb == nil {
		nb = &namedBarrier{expected: n}
		c.named[id] = nb
	}
	if all {
		n = c.live
		nb.expected = n
	} else if nb.arrived == 0 {
		nb.expected = n
	} else if nb.expected != n {
		t.failf(op, "barrier %d used with %d and %d threads in one phase", id, nb.expected, n)
	}
	nb.arrived++
	gen := nb.gen
	if all && blockBarrierOps[op.Name()] {
		nb.at = append(nb.at, barrierArrival{op, t.linear})
	}
	if r := t.b.race; r != nil {
		r.barrierArrive(t, id, gen, !arriveOnly)
	}
	if t.b.observing() {
		count := int64(nb.expected)
		if all {
			count = -1
		}
		t.b.emit(t, nil, &Event{Kind: Barrier, Op: op, ID: id, Count: count, Gen: gen, Arrive: arriveOnly})
	}
	if nb.arrived >= nb.expected {
		if err := t.b.completeBarrier(c, id, nb); err != nil {
			t.fail(err)
		}
	} else if !arriveOnly {
		t.block(op, func() bool { return nb.gen != gen }, func() string {
			return fmt.Sprintf("barrier %d: %d of %d threads arrived", id, nb.arrived, nb.expected)
		})
	}
	if !arriveOnly {
		if r := t.b.race; r != nil {
			r.barrierPass(t, id, gen)
		}
		if t.b.observing() {
			t.b.emit(t, nil, &Event{Kind: BarrierPass, Op: op, ID: id, Gen: gen})
		}
	}
}

// completeBarrier ends the current generation of barrier id of block c;
// an error if it was the block barrier and the threads diverged.
func (b *blockRun) completeBarrier(c *cta, id int64, nb *namedBarrier) *Error {
	err := c.divergence(nb, b.k)
	if b.race != nil {
		b.race.barrierComplete(c, id, nb.gen)
	}
	nb.arrived, nb.at = 0, nb.at[:0]
	nb.gen++
	return err
}

// threadExited: an exited thread counts as arrived at the block barrier
// (gpu.barrier), so a barrier the others wait at may now be complete
// (then reported as divergence: the exited thread never reached it).
func (c *cta) threadExited(b *blockRun) *Error {
	if nb := c.named[0]; nb != nil && nb.arrived > 0 && nb.arrived >= c.live {
		return b.completeBarrier(c, 0, nb)
	}
	return nil
}

func init() {
	register(func(k *kernel, op *ir.Operation) runFunc {
		b := nvvm.BarrierOp{Op: op}
		barrierID, threads := k.slot(b.BarrierId()), k.slot(b.NumberOfThreads())
		return func(t *thread, in *instr) {
			id, n := int64(0), -1
			if barrierID >= 0 {
				id = t.int(in, barrierID)
			}
			if threads >= 0 {
				n = int(t.int(in, threads))
			}
			if in.op.NumResults() > 0 {
				t.failf(in.op, "barrier reductions are not emulated")
			}
			t.barrierAt(in.op, id, n, false)
		}
	}, nvvm.Barrier)
	register(func(k *kernel, op *ir.Operation) runFunc {
		b := nvvm.BarrierArriveOp{Op: op}
		barrierID, threads := k.slot(b.BarrierId()), k.slot(b.NumberOfThreads())
		return func(t *thread, in *instr) {
			id := int64(0)
			n := t.int(in, threads)
			if barrierID >= 0 {
				id = t.int(in, barrierID)
			}
			t.barrierAt(in.op, id, int(n), true)
		}
	}, nvvm.BarrierArrive)
}

// ------------------------------------------------------------ mbarriers

type mbarrier struct {
	cta     *cta // the block it lives in
	addr    uint64
	count   int64 // arrivals per phase
	pending int64 // arrivals still expected in the current phase
	tx      int64 // transaction bytes still expected
	phase   int64 // phases completed
	initAt  *ir.Operation
	// The last TMA load whose bytes arrived, the phase they arrived in,
	// and the latest phase whose completion a wait has seen: a block must
	// not exit before a wait sees its loads' phases complete.
	lastLoad      *asyncOp
	lastLoadPhase int64
	observed      int64
	// race: what the arrivals released (race.go); nil when not checked.
	race *mbarClock
}

func (m *mbarrier) String() string {
	return fmt.Sprintf("mbarrier at shared offset %d (in phase %d, parity %d; %d of %d arrivals and %d transaction bytes pending)",
		m.addr, m.phase, m.phase&1, m.pending, m.count, m.tx)
}

// see records that a wait saw the latest completed phase of parity p,
// and returns that phase (-1 for parity 1 on a fresh barrier).
func (m *mbarrier) see(p int64) int64 {
	last := m.phase - 1
	if last&1 != p {
		last--
	}
	m.observed = max(m.observed, last)
	return last
}

// complete ends the phase when nothing is pending.
func (m *mbarrier) complete() {
	if m.pending == 0 && m.tx == 0 {
		m.phase++
		m.pending = m.count
		if m.race != nil {
			m.race.seal(m.phase - 1)
		}
	}
}

func (t *thread) mbarrierAt(op *ir.Operation, v any) *mbarrier {
	p, ok := v.(ptr)
	if !ok || (p.space != spaceShared && p.space != spaceCluster) {
		t.failf(op, "the mbarrier operand is not a shared-memory pointer (%T %v)", v, v)
	}
	c := t.c
	if p.cta >= 0 {
		if p.cta >= len(t.b.ctas) {
			t.failf(op, "the mbarrier pointer names block rank %d of a cluster of %d", p.cta, len(t.b.ctas))
		}
		c = t.b.ctas[p.cta]
		t.checkPeerLive(op, c)
	}
	m := c.bars[p.addr]
	if m == nil {
		if inv := c.invalidated[p.addr]; inv != nil {
			t.fail(&Error{Op: op, Msg: fmt.Sprintf("mbarrier at shared offset %d used after nvvm.mbarrier.inval (initialise it again first)", p.addr),
				Notes: []Note{note(inv.Loc, "invalidated here")}})
		}
		t.failf(op, "mbarrier at shared offset %d used before nvvm.mbarrier.init", p.addr)
	}
	return m
}

// predicate is the value of an op's optional predicate operand, value
// number v (-1: none, true).
func (t *thread) predicate(v int) bool {
	if v >= 0 {
		return t.vals[v].(int64)&1 != 0
	}
	return true
}

// arrive makes count arrivals on m, announcing tx transaction bytes first.
func (t *thread) arrive(op *ir.Operation, m *mbarrier, count, tx int64) {
	before := m.phase
	if t.b.observing() {
		t.b.emit(t, m.cta, &Event{Kind: MBarrierArrive, Op: op, Barrier: m.addr, Count: count, Tx: tx, Phase: before})
	}
	if r := t.b.race; r != nil {
		r.mbarrierArrive(t, m)
	}
	m.tx += tx
	m.pending -= count
	if m.pending < 0 {
		t.failf(op, "more arrivals than the mbarrier's count %d in one phase: %v", m.count, m)
	}
	m.complete()
	if t.b.observing() {
		t.b.observePhases(t, op, m, before)
	}
}

func init() {
	register(func(k *kernel, op *ir.Operation) runFunc {
		b := nvvm.MbarrierInitOp{Op: op}
		addr, count, pred := k.slot(b.Addr()), k.slot(b.Count()), k.slot(b.Predicate())
		return func(t *thread, in *instr) {
			if !t.predicate(pred) {
				return
			}
			p, ok := t.vals[addr].(ptr)
			if !ok || p.space != spaceShared {
				t.failf(in.op, "the mbarrier operand is not a shared-memory pointer")
			}
			if p.addr%8 != 0 || p.addr+8 > uint64(len(t.c.smem)) {
				t.failf(in.op, "mbarrier at shared offset %d is misaligned or out of bounds", p.addr)
			}
			n := t.int(in, count)
			t.c.bars[p.addr] = &mbarrier{cta: t.c, addr: p.addr, count: n, pending: n, initAt: in.op, lastLoadPhase: -1, observed: -1}
			delete(t.c.invalidated, p.addr)
			if t.b.observing() {
				t.b.emit(t, nil, &Event{Kind: MBarrierInit, Op: in.op, Barrier: p.addr, Count: n})
			}
		}
	}, nvvm.MbarrierInit)
	register(func(k *kernel, op *ir.Operation) runFunc {
		addr := k.slot(nvvm.MbarrierInvalOp{Op: op}.Addr())
		return func(t *thread, in *instr) {
			m := t.mbarrierAt(in.op, t.vals[addr])
			c := t.c
			if p := t.vals[addr].(ptr); p.cta >= 0 {
				c = t.b.ctas[p.cta]
			}
			delete(c.bars, m.addr)
			c.invalidated[m.addr] = in.op
		}
	}, nvvm.MbarrierInval)
	register(func(k *kernel, op *ir.Operation) runFunc {
		b := nvvm.MbarrierArriveNocompleteOp{Op: op}
		addr, arrivals := k.slot(b.Addr()), k.slot(b.Count())
		return func(t *thread, in *instr) {
			// arrive.nocomplete: undefined on the GPU if this arrival
			// completes the phase.
			m := t.mbarrierAt(in.op, t.vals[addr])
			count := t.int(in, arrivals)
			if m.pending-count == 0 && m.tx == 0 {
				t.failf(in.op, "mbarrier.arrive.nocomplete completes the phase (undefined on the GPU): %v", m)
			}
			state := m.phase
			if t.b.observing() {
				t.b.emit(t, m.cta, &Event{Kind: MBarrierArrive, Op: in.op, Barrier: m.addr, Count: count, Phase: state})
			}
			if r := t.b.race; r != nil {
				r.mbarrierArrive(t, m)
			}
			m.pending -= count
			if m.pending < 0 {
				t.failf(in.op, "more arrivals than the mbarrier's count %d in one phase: %v", m.count, m)
			}
			t.set(in, 0, state)
		}
	}, nvvm.MbarrierArriveNocomplete)
	register(func(k *kernel, op *ir.Operation) runFunc {
		w := nvvm.MbarrierTestWaitOp{Op: op}
		return poll(k, w.Addr(), w.StateOrPhase())
	}, nvvm.MbarrierTestWait)
	register(func(k *kernel, op *ir.Operation) runFunc {
		w := nvvm.MbarrierTryWaitOp{Op: op}
		return poll(k, w.Addr(), w.StateOrPhase())
	}, nvvm.MbarrierTryWait)
	register(func(k *kernel, op *ir.Operation) runFunc {
		b := nvvm.MbarrierArriveOp{Op: op}
		addr, arrivals := k.slot(b.Addr()), k.slot(b.Count())
		return func(t *thread, in *instr) {
			m := t.mbarrierAt(in.op, t.vals[addr])
			count := int64(1)
			if arrivals >= 0 {
				count = t.vals[arrivals].(int64)
			}
			state := m.phase
			t.arrive(in.op, m, count, 0)
			if len(in.out) > 0 {
				t.set(in, 0, state)
			}
		}
	}, nvvm.MbarrierArrive)
	register(func(k *kernel, op *ir.Operation) runFunc {
		b := nvvm.MbarrierArriveExpectTxOp{Op: op}
		addr, txcount, pred := k.slot(b.Addr()), k.slot(b.Txcount()), k.slot(b.Predicate())
		return func(t *thread, in *instr) {
			if !t.predicate(pred) {
				return
			}
			m := t.mbarrierAt(in.op, t.vals[addr])
			state := m.phase
			t.arrive(in.op, m, 1, t.int(in, txcount))
			if len(in.out) > 0 {
				t.set(in, 0, state)
			}
		}
	}, nvvm.MbarrierArriveExpectTx)
	register(func(k *kernel, op *ir.Operation) runFunc {
		w := nvvm.MbarrierTryWaitParityOp{Op: op}
		addr, phase := k.slot(w.Addr()), k.slot(w.Phase())
		return func(t *thread, in *instr) {
			m := t.mbarrierAt(in.op, t.vals[addr])
			parity := t.int(in, phase) & 1
			// try_wait.parity P returns once the phase of parity P has
			// completed: the current phase's parity differs from P.
			t.block(in.op, func() bool { return m.phase&1 != parity }, func() string {
				return fmt.Sprintf("waits for parity %d of the %v", parity, m)
			})
			seen := m.see(parity)
			if r := t.b.race; r != nil {
				r.mbarrierWait(t, m, seen)
			}
			if t.b.observing() {
				t.b.emit(t, m.cta, &Event{Kind: MBarrierWait, Op: in.op, Barrier: m.addr, Parity: parity, Phase: seen})
			}
		}
	}, nvvm.MbarrierTryWaitParity)
}

// poll is the implementation of test.wait and try_wait with a state token
// (i64, from arrive: the phase it arrived in) or a phase parity (i32). A
// failed poll sits out until the barrier changes phase: the same as the
// test running just before the change, so a spin loop does not spin the
// emulator and a phase that never completes is a deadlock.
func poll(k *kernel, addrOperand, stateOrPhase ir.Value) runFunc {
	addr, state := k.slot(addrOperand), k.slot(stateOrPhase)
	token := ir.BitWidth(stateOrPhase.Type()) == 64
	return func(t *thread, in *instr) {
		m := t.mbarrierAt(in.op, t.vals[addr])
		v := t.int(in, state)
		var done func() bool
		if token {
			done = func() bool { return m.phase > v }
		} else {
			done = func() bool { return m.phase&1 != v&1 }
		}
		r := done()
		if r {
			seen, parity := v, int64(-1)
			if token {
				m.observed = max(m.observed, v)
			} else {
				seen, parity = m.see(v&1), v&1
			}
			if r := t.b.race; r != nil {
				r.mbarrierWait(t, m, seen)
			}
			if t.b.observing() {
				t.b.emit(t, m.cta, &Event{Kind: MBarrierWait, Op: in.op, Barrier: m.addr, Parity: parity, Phase: seen})
			}
		}
		if !r {
			phase := m.phase
			t.block(in.op, func() bool { return m.phase != phase }, func() string {
				return fmt.Sprintf("polls (%s) the %v", in.op.Name(), m)
			})
		}
		t.set(in, 0, boolInt(r))
	}
}

// ------------------------------------------------------------ fences

func init() {
	register(direct(func(t *thread, in *instr) {
		// fence.proxy.async: this thread's shared-memory writes become
		// visible to the async proxy (TMA, wgmma).
		t.unfenced = t.unfenced[:0]
	}), nvvm.FenceProxy)
	// Ordering fences: the emulator runs one thread of a block at a time
	// and every write is visible at once, so they have nothing to do
	// (tensor maps are encoded by the host plan, never edited in memory).
	// nvvm.memory.barrier too: blocks share global memory the same way.
	register(direct(func(t *thread, in *instr) {}), nvvm.FenceScCluster, nvvm.FenceProxyAcquire, nvvm.FenceProxyRelease,
		nvvm.MemoryBarrier)
}

// ------------------------------------------------------------ clusters

func init() {
	register(func(k *kernel, op *ir.Operation) runFunc {
		// nvvm.mapa's operands: a (the pointer), b (the block rank).
		m := nvvm.MapaOp{Op: op}
		src, rank := k.slot(m.A()), k.slot(m.B())
		return func(t *thread, in *instr) {
			p, ok := t.vals[src].(ptr)
			if !ok || p.space != spaceShared {
				t.failf(in.op, "nvvm.mapa of a pointer that is not a shared-memory pointer")
			}
			r := t.int(in, rank)
			if r < 0 || int(r) >= len(t.b.ctas) {
				t.failf(in.op, "nvvm.mapa to block rank %d of a cluster of %d", r, len(t.b.ctas))
			}
			t.set(in, 0, ptr{space: spaceCluster, addr: p.addr, cta: int(r)})
		}
	}, nvvm.Mapa)
	register(direct(func(t *thread, in *instr) {
		t.clusterGen = t.b.cluster.gen
		if r := t.b.race; r != nil {
			r.clusterArrive(t, t.clusterGen, in.op.Name() == nvvm.ClusterArriveRelaxed)
		}
		if t.b.observing() {
			t.b.emit(t, nil, &Event{Kind: ClusterArrive, Op: in.op, Gen: t.clusterGen})
		}
		t.b.cluster.arrived++
		t.b.clusterRelease()
	}), nvvm.ClusterArrive, nvvm.ClusterArriveRelaxed)
	register(direct(func(t *thread, in *instr) {
		b := t.b
		if t.clusterGen < 0 {
			t.failf(in.op, "barrier.cluster.wait without a barrier.cluster.arrive before it")
		}
		gen := t.clusterGen
		t.block(in.op, func() bool { return b.cluster.gen != gen }, func() string {
			return fmt.Sprintf("barrier.cluster.wait: %d of the cluster's %d live threads arrived", b.cluster.arrived, b.clusterLive())
		})
		if b.race != nil {
			b.race.clusterWait(t, gen)
		}
		if b.observing() {
			b.emit(t, nil, &Event{Kind: ClusterWait, Op: in.op, Gen: gen})
		}
		t.clusterGen = -1
	}), nvvm.ClusterWait)
}

// checkPeerLive rejects an access to the shared memory of a block of the
// cluster whose threads have all exited: its shared memory is gone, and on
// the GPU the access is undefined (a cluster barrier before exit keeps every
// block alive until its peers are done with it).
func (t *thread) checkPeerLive(op *ir.Operation, c *cta) {
	if c != t.c && c.live == 0 {
		t.failf(op, "access to the shared memory of block rank %d of the cluster, which has exited (synchronise the cluster with barrier.cluster.arrive/wait before a block exits)", c.rank)
	}
}

func (b *blockRun) clusterLive() int {
	n := 0
	for _, c := range b.ctas {
		n += c.live
	}
	return n
}

// clusterRelease completes the cluster barrier once every live thread has
// arrived (exited threads count as arrived).
func (b *blockRun) clusterRelease() {
	if b.cluster.arrived > 0 && b.cluster.arrived >= b.clusterLive() {
		b.cluster.arrived = 0
		b.cluster.gen++
	}
}

func (b *blockRun) clusterExited() { b.clusterRelease() }
