package emu

import (
	"fmt"

	"github.com/tmac-dev/tmac/dialects/llvm"
	"github.com/tmac-dev/tmac/ir"
)

// ------------------------------------------------------------ LLVM values

func init() {
	register(func(t *thread, in *instr) {
		p, ok := t.vals[in.in[0]].(ptr)
		if !ok {
			t.failf(in.op, "operand is not a pointer (%T)", t.vals[in.in[0]])
		}
		t.set(in, 0, wrap(int64(p.addr), in.op.Result(0).Type()))
	}, "llvm.ptrtoint")
	register(func(t *thread, in *instr) {
		as, _ := llvm.PtrAddrSpace(in.op.Result(0).Type())
		t.set(in, 0, ptr{space: int(as), addr: zext(t.int(in, 0), in.op.Operand(0).Type()), cta: -1})
	}, "llvm.inttoptr")
	register(func(t *thread, in *instr) { t.set(in, 0, zeroOf(in.op.Result(0).Type())) }, "llvm.mlir.zero", "llvm.mlir.undef", "llvm.mlir.poison")
	register(func(t *thread, in *instr) {
		v := t.vals[in.in[0]]
		for _, i := range positions(in.op) {
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
	}, "llvm.extractvalue")
	register(func(t *thread, in *instr) {
		var put func(agg any, pos []int64) any
		put = func(agg any, pos []int64) any {
			s, ok := agg.([]any)
			if !ok || int(pos[0]) >= len(s) {
				t.failf(in.op, "position %d is not in the aggregate", pos[0])
			}
			c := append([]any(nil), s...)
			if len(pos) == 1 {
				c[pos[0]] = t.vals[in.in[1]]
			} else {
				c[pos[0]] = put(c[pos[0]], pos[1:])
			}
			return c
		}
		t.set(in, 0, put(t.vals[in.in[0]], positions(in.op)))
	}, "llvm.insertvalue")
}

func positions(op *ir.Operation) []int64 {
	a, _ := op.Attr("position").(*ir.DenseArrayAttr)
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
	// value the emulator models.
	register(func(t *thread, in *instr) {}, "nvvm.setmaxregister", "nvvm.prefetch", "nvvm.prefetch.tensormap",
		"nvvm.cp.async.bulk.tensor.prefetch", "nvvm.fence.mbarrier.init")
}

// ------------------------------------------------------------ special registers

func init() {
	register(func(t *thread, in *instr) {
		var v int64
		switch in.op.Name() {
		case "nvvm.read.ptx.sreg.tid.x":
			v = t.tid[0]
		case "nvvm.read.ptx.sreg.tid.y":
			v = t.tid[1]
		case "nvvm.read.ptx.sreg.tid.z":
			v = t.tid[2]
		case "nvvm.read.ptx.sreg.ctaid.x":
			v = t.c.bid[0]
		case "nvvm.read.ptx.sreg.ctaid.y":
			v = t.c.bid[1]
		case "nvvm.read.ptx.sreg.ctaid.z":
			v = t.c.bid[2]
		case "nvvm.read.ptx.sreg.cluster.ctarank":
			v = int64(t.c.rank)
		case "nvvm.read.ptx.sreg.cluster.nctarank":
			v = int64(len(t.b.ctas))
		case "nvvm.read.ptx.sreg.ntid.x":
			v = t.b.bdim[0]
		case "nvvm.read.ptx.sreg.ntid.y":
			v = t.b.bdim[1]
		case "nvvm.read.ptx.sreg.ntid.z":
			v = t.b.bdim[2]
		case "nvvm.read.ptx.sreg.nctaid.x":
			v = t.b.grid[0]
		case "nvvm.read.ptx.sreg.nctaid.y":
			v = t.b.grid[1]
		case "nvvm.read.ptx.sreg.nctaid.z":
			v = t.b.grid[2]
		case "nvvm.read.ptx.sreg.laneid":
			v = int64(t.linear % 32)
		case "nvvm.read.ptx.sreg.warpid":
			v = int64(t.linear / 32)
		}
		t.set(in, 0, v)
	}, "nvvm.read.ptx.sreg.tid.x", "nvvm.read.ptx.sreg.tid.y", "nvvm.read.ptx.sreg.tid.z",
		"nvvm.read.ptx.sreg.ctaid.x", "nvvm.read.ptx.sreg.ctaid.y", "nvvm.read.ptx.sreg.ctaid.z",
		"nvvm.read.ptx.sreg.ntid.x", "nvvm.read.ptx.sreg.ntid.y", "nvvm.read.ptx.sreg.ntid.z",
		"nvvm.read.ptx.sreg.nctaid.x", "nvvm.read.ptx.sreg.nctaid.y", "nvvm.read.ptx.sreg.nctaid.z",
		"nvvm.read.ptx.sreg.laneid", "nvvm.read.ptx.sreg.warpid",
		"nvvm.read.ptx.sreg.cluster.ctarank", "nvvm.read.ptx.sreg.cluster.nctarank")
}

// ------------------------------------------------------------ barriers

// namedBarrier is a CTA barrier (bar.sync / barrier.sync): id 0 is
// gpu.barrier over every live thread.
type namedBarrier struct {
	expected int
	arrived  int
	gen      int
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
	if t.b.observing() {
		count := int64(nb.expected)
		if all {
			count = -1
		}
		t.b.emit(t, nil, &Event{Kind: Barrier, Op: op, ID: id, Count: count, Gen: gen, Arrive: arriveOnly})
	}
	if nb.arrived >= nb.expected {
		nb.arrived = 0
		nb.gen++
	} else if !arriveOnly {
		t.block(op, func() bool { return nb.gen != gen }, func() string {
			return fmt.Sprintf("barrier %d: %d of %d threads arrived", id, nb.arrived, nb.expected)
		})
	}
	if !arriveOnly && t.b.observing() {
		t.b.emit(t, nil, &Event{Kind: BarrierPass, Op: op, ID: id, Gen: gen})
	}
}

// threadExited: an exited thread counts as arrived at the block barrier
// (gpu.barrier), so a barrier the others wait at may now be complete.
func (c *cta) threadExited() {
	if nb := c.named[0]; nb != nil && nb.arrived > 0 && nb.arrived >= c.live {
		nb.arrived = 0
		nb.gen++
	}
}

func init() {
	register(func(t *thread, in *instr) {
		id, n := int64(0), -1
		if len(in.in) >= 1 {
			id = t.int(in, 0)
		}
		if len(in.in) >= 2 {
			n = int(t.int(in, 1))
		}
		if in.op.NumResults() > 0 {
			t.failf(in.op, "barrier reductions are not emulated")
		}
		t.barrierAt(in.op, id, n, false)
	}, "nvvm.barrier")
	register(func(t *thread, in *instr) {
		id := int64(0)
		n := t.int(in, len(in.in)-1)
		if len(in.in) == 2 {
			id = t.int(in, 0)
		}
		t.barrierAt(in.op, id, int(n), true)
	}, "nvvm.barrier.arrive")
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

func (t *thread) predicate(in *instr, name string) bool {
	if v := in.op.OperandNamed(name); v != nil {
		return t.vals[t.b.k.ids[v]].(int64)&1 != 0
	}
	return true
}

// arrive makes count arrivals on m, announcing tx transaction bytes first.
func (t *thread) arrive(op *ir.Operation, m *mbarrier, count, tx int64) {
	before := m.phase
	if t.b.observing() {
		t.b.emit(t, m.cta, &Event{Kind: MBarrierArrive, Op: op, Barrier: m.addr, Count: count, Tx: tx, Phase: before})
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
	register(func(t *thread, in *instr) {
		if !t.predicate(in, "predicate") {
			return
		}
		p, ok := t.vals[in.in[0]].(ptr)
		if !ok || p.space != spaceShared {
			t.failf(in.op, "the mbarrier operand is not a shared-memory pointer")
		}
		if p.addr%8 != 0 || p.addr+8 > uint64(len(t.c.smem)) {
			t.failf(in.op, "mbarrier at shared offset %d is misaligned or out of bounds", p.addr)
		}
		n := t.int(in, 1)
		t.c.bars[p.addr] = &mbarrier{cta: t.c, addr: p.addr, count: n, pending: n, initAt: in.op, lastLoadPhase: -1, observed: -1}
		delete(t.c.invalidated, p.addr)
		if t.b.observing() {
			t.b.emit(t, nil, &Event{Kind: MBarrierInit, Op: in.op, Barrier: p.addr, Count: n})
		}
	}, "nvvm.mbarrier.init")
	register(func(t *thread, in *instr) {
		m := t.mbarrierAt(in.op, t.vals[in.in[0]])
		c := t.c
		if p := t.vals[in.in[0]].(ptr); p.cta >= 0 {
			c = t.b.ctas[p.cta]
		}
		delete(c.bars, m.addr)
		c.invalidated[m.addr] = in.op
	}, "nvvm.mbarrier.inval")
	register(func(t *thread, in *instr) {
		// arrive.nocomplete: undefined on the GPU if this arrival
		// completes the phase.
		m := t.mbarrierAt(in.op, t.vals[in.in[0]])
		count := t.int(in, 1)
		if m.pending-count == 0 && m.tx == 0 {
			t.failf(in.op, "mbarrier.arrive.nocomplete completes the phase (undefined on the GPU): %v", m)
		}
		state := m.phase
		if t.b.observing() {
			t.b.emit(t, m.cta, &Event{Kind: MBarrierArrive, Op: in.op, Barrier: m.addr, Count: count, Phase: state})
		}
		m.pending -= count
		if m.pending < 0 {
			t.failf(in.op, "more arrivals than the mbarrier's count %d in one phase: %v", m.count, m)
		}
		t.set(in, 0, state)
	}, "nvvm.mbarrier.arrive.nocomplete")
	register(func(t *thread, in *instr) {
		// test.wait and try_wait with a state token (i64, from arrive: the
		// phase it arrived in) or a phase parity (i32). A failed poll
		// sits out until the barrier changes phase: the same as the test
		// running just before the change, so a spin loop does not spin
		// the emulator and a phase that never completes is a deadlock.
		m := t.mbarrierAt(in.op, t.vals[in.in[0]])
		v := t.int(in, 1)
		var done func() bool
		if ir.BitWidth(in.op.Operand(1).Type()) == 64 {
			done = func() bool { return m.phase > v }
		} else {
			done = func() bool { return m.phase&1 != v&1 }
		}
		r := done()
		if r {
			seen, parity := v, int64(-1)
			if ir.BitWidth(in.op.Operand(1).Type()) == 64 {
				m.observed = max(m.observed, v)
			} else {
				seen, parity = m.see(v&1), v&1
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
	}, "nvvm.mbarrier.test.wait", "nvvm.mbarrier.try_wait")
	register(func(t *thread, in *instr) {
		m := t.mbarrierAt(in.op, t.vals[in.in[0]])
		count := int64(1)
		if v := in.op.OperandNamed("count"); v != nil {
			count = t.vals[t.b.k.ids[v]].(int64)
		}
		state := m.phase
		t.arrive(in.op, m, count, 0)
		if len(in.out) > 0 {
			t.set(in, 0, state)
		}
	}, "nvvm.mbarrier.arrive")
	register(func(t *thread, in *instr) {
		if !t.predicate(in, "predicate") {
			return
		}
		m := t.mbarrierAt(in.op, t.vals[in.in[0]])
		state := m.phase
		t.arrive(in.op, m, 1, t.int(in, 1))
		if len(in.out) > 0 {
			t.set(in, 0, state)
		}
	}, "nvvm.mbarrier.arrive.expect_tx")
	register(func(t *thread, in *instr) {
		m := t.mbarrierAt(in.op, t.vals[in.in[0]])
		parity := t.int(in, 1) & 1
		// try_wait.parity P returns once the phase of parity P has
		// completed: the current phase's parity differs from P.
		t.block(in.op, func() bool { return m.phase&1 != parity }, func() string {
			return fmt.Sprintf("waits for parity %d of the %v", parity, m)
		})
		seen := m.see(parity)
		if t.b.observing() {
			t.b.emit(t, m.cta, &Event{Kind: MBarrierWait, Op: in.op, Barrier: m.addr, Parity: parity, Phase: seen})
		}
	}, "nvvm.mbarrier.try_wait.parity")
}

// ------------------------------------------------------------ fences

func init() {
	register(func(t *thread, in *instr) {
		// fence.proxy.async: this thread's shared-memory writes become
		// visible to the async proxy (TMA, wgmma).
		t.unfenced = t.unfenced[:0]
	}, "nvvm.fence.proxy")
	// Ordering fences: the emulator runs one thread of a block at a time
	// and every write is visible at once, so they have nothing to do
	// (tensor maps are encoded by the host plan, never edited in memory).
	register(func(t *thread, in *instr) {}, "nvvm.fence.sc.cluster", "nvvm.fence.proxy.acquire", "nvvm.fence.proxy.release")
}

// ------------------------------------------------------------ clusters

func init() {
	register(func(t *thread, in *instr) {
		p, ok := t.vals[in.in[0]].(ptr)
		if !ok || p.space != spaceShared {
			t.failf(in.op, "nvvm.mapa of a pointer that is not a shared-memory pointer")
		}
		r := t.int(in, 1)
		if r < 0 || int(r) >= len(t.b.ctas) {
			t.failf(in.op, "nvvm.mapa to block rank %d of a cluster of %d", r, len(t.b.ctas))
		}
		t.set(in, 0, ptr{space: spaceCluster, addr: p.addr, cta: int(r)})
	}, "nvvm.mapa")
	register(func(t *thread, in *instr) {
		t.clusterGen = t.b.cluster.gen
		if t.b.observing() {
			t.b.emit(t, nil, &Event{Kind: ClusterArrive, Op: in.op, Gen: t.clusterGen})
		}
		t.b.cluster.arrived++
		t.b.clusterRelease()
	}, "nvvm.cluster.arrive", "nvvm.cluster.arrive.relaxed")
	register(func(t *thread, in *instr) {
		b := t.b
		if t.clusterGen < 0 {
			t.failf(in.op, "barrier.cluster.wait without a barrier.cluster.arrive before it")
		}
		gen := t.clusterGen
		t.block(in.op, func() bool { return b.cluster.gen != gen }, func() string {
			return fmt.Sprintf("barrier.cluster.wait: %d of the cluster's %d live threads arrived", b.cluster.arrived, b.clusterLive())
		})
		if b.observing() {
			b.emit(t, nil, &Event{Kind: ClusterWait, Op: in.op, Gen: gen})
		}
		t.clusterGen = -1
	}, "nvvm.cluster.wait")
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
