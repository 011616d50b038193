package mbarrier

import (
	"fmt"
	"strings"

	"github.com/tmac-dev/tmac/dialects/arith"
	"github.com/tmac-dev/tmac/dialects/nvgpu"
	"github.com/tmac-dev/tmac/dialects/scf"
	"github.com/tmac-dev/tmac/dialects/tmac"
	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/passes/internal/passutil"
	"github.com/tmac-dev/tmac/passes/schedule"
)

// mbarrier-phase, part (a): the parity of each parity-less
// `tmac.mbarrier.wait %bars[%i] : !nvgpu.mbarrier.group<...>` is computed
// and the wait becomes
//
//	nvgpu.mbarrier.try_wait.parity %bars[%i], %parity, %ticks
//
// (%ticks = arith.constant 10000000 : index). It runs on every kernel: an
// outlined gpu.func with gpu.kernel, or a gpu.launch body (the pass may run
// before outline-kernels).
//
// Semantics (ring discipline): each tmac.mbarrier.wait on barrier b waits
// for the next phase of b that the executing thread has not waited for
// yet, so the k-th wait (k = 0, 1, ...) a thread executes on b waits for
// phase k, parity k mod 2. The barrier group must be created in the
// kernel and not initialised again after (or in a loop with) a wait on it,
// so that its phases count from 0, and nothing else may use it than
// init, arrive(.expect_tx/.nocomplete) and TMA loads (no explicit
// try_wait.parity, no raw access, no passing around): the pass computes k for
// each wait, statically or as a function of a loop's induction variable,
// and reports
//
//	cannot compute the parity of this wait: <reason>; write
//	nvgpu.mbarrier.try_wait.parity with an explicit parity
//
// wherever it cannot prove k. The forms it handles:
//
//  1. A wait outside loops, with a constant index: k = the number of waits
//     on the same barrier before it in program order: earlier straight-line
//     waits, plus the waits of earlier loops with static trip counts
//     (counted per barrier, in closed form). An earlier waiting loop with
//     a dynamic trip count makes k unknown. Waits (straight-line or in
//     loops) on a group are counted per barrier index.
//  2. A wait directly in the body of an scf.for (not under an scf.if in
//     it, the loop not nested in another loop, no other wait on the group
//     in the loop) with constant lower bound lb and step 1, whose index is
//     `arith.remui %x, %cN` with %x = %j, %j + c or %j - c (j the induction
//     variable, N <= num_barriers), or a constant. Writing u = x (u = j for
//     a constant index, N = 1), iteration j uses barrier u mod N, u runs
//     from off = x(lb) upwards, and the count of earlier waits on that
//     barrier is
//     k = base(b) + floor(u/N) - floor(off/N) - [b < off mod N]
//     (base(b) the waits on b before the loop). The pass requires
//     B = base(b) - floor(off/N) - [b < off mod N] to have the same parity
//     for every barrier of the ring (with off = 0: bases of one parity), so
//     parity = (floor(u/N) + B) mod 2. off must be >= 0 when N > 1 (remui
//     of a negative index is not a ring position).
//  3. scf.if: a wait (or waiting loop) under an scf.if outside loops is
//     accepted when every wait on its group in the kernel lies in the same
//     branch of that scf.if: the threads that run the branch run all the
//     waits on the group, the others none (warp-specialised producers and
//     consumers). Anything else under an scf.if, or under another region
//     op (scf.while, ...), is refused.
//
// Code for a loop wait (the issue asks for the parity "carried as a loop
// value or derived from the induction variable, whichever costs fewer
// instructions"):
//   - N a power of two (1 included): derived from u, no loop-carried
//     state. floor(u/N) mod 2 is bit log2(N) of u, so
//     parity = (u & N) != 0, or == 0 when B is odd: arith.andi +
//     arith.cmpi per iteration (2 instructions; the shift of
//     ((u >> log2 N) & 1) folds into the mask). The remui that gives the
//     slot is already there.
//   - otherwise floor(u/N) would be a real division by a constant (a
//     multiply-high and shifts before the bit test, 4+ instructions):
//     the parity is carried as an i1 iter_arg of the scf.for, initialised
//     to the first wait's parity (base(off mod N) mod 2), next =
//     p xor (slot == N-1): arith.cmpi + arith.xori per iteration
//     (2 instructions and one predicate register).

const mbarWaitTicks = 10000000

// waitPlan is what the analysis decided for one wait.
type waitPlan struct {
	wait   tmac.MbarrierWaitOp
	parity int64         // straight-line: the constant parity
	loop   *ir.Operation // nil for a straight-line wait
	ring   ringForm
	b      int64             // B: k = B + floor(u/N) (mod 2)
	iter   *ir.BlockArgument // carried: the loop's parity iter_arg
}

// ringForm describes the barrier a loop wait uses at iteration t
// (t = j - lb): first + ((t + off) mod n), with u = x = t + off.
type ringForm struct {
	first int64
	n     int64
	off   int64
	x     ir.Value // the value u (the iv, or the remui's dividend)
	slot  ir.Value // the barrier index (the remui), for the carried form
}

func (r ringForm) derived() bool { return r.n&(r.n-1) == 0 }

// parityRing is the plan's parity as a function of the loop position t
// (t = 0 in the first iteration): (floor((t+off)/N) + B) mod 2.
func (p *waitPlan) parityRing() schedule.ParityRing {
	return schedule.ParityRing{N: p.ring.n, Off: p.ring.off, B: p.b}
}

type phaseCounter struct {
	kernel  *ir.Operation
	pos     map[*ir.Operation]int        // pre-order positions
	waits   map[ir.Value][]*ir.Operation // waits of each group, in order
	groups  []ir.Value                   // groups in order of first wait
	hasWait map[*ir.Operation]bool       // ops that are or contain waits
	counts  map[ir.Value][]int64         // waits so far per barrier
	unknown map[ir.Value]*unknownCounts  // why the counts of a group are unknown
	plans   []*waitPlan
	sched   *schedule.Schedule
}

// computeMBarrierParities rewrites the tmac.mbarrier.wait ops of a kernel
// (gpu.func kernel or gpu.launch).
func computeMBarrierParities(kernel *ir.Operation, sched *schedule.Schedule) error {
	pc := &phaseCounter{kernel: kernel, pos: map[*ir.Operation]int{}, waits: map[ir.Value][]*ir.Operation{},
		hasWait: map[*ir.Operation]bool{}, counts: map[ir.Value][]int64{}, unknown: map[ir.Value]*unknownCounts{}, sched: sched}
	n := 0
	ir.Walk(kernel, func(op *ir.Operation) ir.WalkResult {
		pc.pos[op] = n
		n++
		if w, ok := tmac.AsMbarrierWait(op); ok {
			g := w.Barriers()
			if pc.waits[g] == nil {
				pc.groups = append(pc.groups, g)
			}
			pc.waits[g] = append(pc.waits[g], op)
			for o := op; o != nil && o != kernel; o = o.ParentOp() {
				pc.hasWait[o] = true
			}
		}
		return ir.Advance
	})
	if len(pc.groups) == 0 {
		return nil
	}
	if kernel.NumRegions() == 0 || len(kernel.Region(0).Blocks()) != 1 {
		return waitError(pc.waits[pc.groups[0]][0], "the kernel body has several blocks (unstructured control flow)")
	}
	for _, g := range pc.groups {
		if err := pc.checkGroup(g); err != nil {
			return err
		}
		pc.counts[g] = make([]int64, nvgpu.MBarrierCount(g.Type()))
	}
	if err := pc.block(kernel.Region(0).Entry()); err != nil {
		return err
	}
	pc.emit()
	return nil
}

// waitError is the diagnostic for a wait whose parity is not computed.
func waitError(w *ir.Operation, format string, args ...any) *ir.Diagnostic {
	return w.EmitError("cannot compute the parity of this wait: %s; write nvgpu.mbarrier.try_wait.parity with an explicit parity",
		fmt.Sprintf(format, args...))
}

// staticInt evaluates integer arith on constants (no environment).
func staticInt(v ir.Value) (int64, bool) {
	return staticIntDepth(v, 0)
}

func staticIntDepth(v ir.Value, depth int) (int64, bool) {
	if c, ok := arith.ConstantInt(v); ok {
		return c, true
	}
	d := v.DefiningOp()
	if d == nil || depth > 16 || d.NumResults() != 1 || d.NumRegions() > 0 || ir.BitWidth(v.Type()) == 1 {
		return 0, false
	}
	x := make([]int64, d.NumOperands())
	for i, o := range d.Operands() {
		c, ok := staticIntDepth(o, depth+1)
		if !ok {
			return 0, false
		}
		x[i] = c
	}
	return EvalIntOp(d, x)
}

// checkGroup makes sure the group's phases count from 0 at its first wait
// and that nothing but tmac.mbarrier.wait waits on it.
func (pc *phaseCounter) checkGroup(g ir.Value) error {
	w0 := pc.waits[g][0]
	if d := g.DefiningOp(); d == nil || d.Name() != nvgpu.MbarrierCreate || !pc.kernel.IsAncestorOf(d) {
		return waitError(w0, "its barrier group is not created in this kernel (nvgpu.mbarrier.create), so the phase of its barriers is unknown")
	}
	for _, u := range ir.Uses(g) {
		op := u.Owner()
		switch op.Name() {
		case tmac.MbarrierWait, nvgpu.MbarrierArrive, nvgpu.MbarrierArriveExpectTx,
			nvgpu.MbarrierArriveNocomplete, nvgpu.TmaAsyncLoad:
		case nvgpu.MbarrierInit:
			if pc.pos[op] > pc.pos[w0] {
				return waitError(w0, "a barrier of its group is initialised again after this wait (a re-initialised barrier restarts at phase 0)").
					AttachNote(op.Loc, "initialised here")
			}
			for l := op.ParentOp(); l != nil && l != pc.kernel; l = l.ParentOp() {
				if passutil.IsLoop(l) && pc.hasWait[l] && containsWaitOn(pc, l, g) {
					return waitError(w0, "a barrier of its group is initialised in a loop that also waits on it (a re-initialised barrier restarts at phase 0)").
						AttachNote(op.Loc, "initialised here")
				}
			}
		case nvgpu.MbarrierTryWaitParity, nvgpu.MbarrierTestWait:
			return waitError(w0, "its barrier group is also waited on by '%s' (computed and explicit parities cannot be mixed on one group)", op.Name()).
				AttachNote(op.Loc, "explicit wait here")
		default:
			return waitError(w0, "its barrier group is also used by '%s', which may wait on it outside this analysis", op.Name()).
				AttachNote(op.Loc, "used here")
		}
	}
	return nil
}

func containsWaitOn(pc *phaseCounter, op *ir.Operation, g ir.Value) bool {
	for _, w := range pc.waits[g] {
		if op.IsAncestorOf(w) {
			return true
		}
	}
	return false
}

// block processes a block outside loops in program order.
func (pc *phaseCounter) block(b *ir.Block) error {
	for op := b.First(); op != nil; op = op.Next() {
		if !pc.hasWait[op] {
			continue
		}
		var err error
		switch op.Name() {
		case tmac.MbarrierWait:
			err = pc.straightWait(tmac.MbarrierWaitOp{Op: op})
		case scf.For:
			err = pc.loop(scf.ForOp{Op: op})
		case scf.If:
			err = pc.ifOp(op)
		default:
			err = waitError(pc.firstWaitIn(op), "it is inside '%s' (only scf.for and scf.if are analysed)", op.Name())
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (pc *phaseCounter) firstWaitIn(op *ir.Operation) *ir.Operation {
	var w *ir.Operation
	ir.Walk(op, func(o *ir.Operation) ir.WalkResult {
		if o.Name() == tmac.MbarrierWait {
			w = o
			return ir.Interrupt
		}
		return ir.Advance
	})
	return w
}

// waitsIn returns the waits under op, grouped by group in order.
func (pc *phaseCounter) waitsIn(op *ir.Operation) ([]ir.Value, map[ir.Value][]*ir.Operation) {
	var gs []ir.Value
	m := map[ir.Value][]*ir.Operation{}
	ir.Walk(op, func(o *ir.Operation) ir.WalkResult {
		if w, ok := tmac.AsMbarrierWait(o); ok {
			g := w.Barriers()
			if m[g] == nil {
				gs = append(gs, g)
			}
			m[g] = append(m[g], o)
		}
		return ir.Advance
	})
	return gs, m
}

func (pc *phaseCounter) straightWait(w tmac.MbarrierWaitOp) error {
	g := w.Barriers()
	if d := pc.unknown[g]; d != nil {
		return d.at(w.Op)
	}
	idx, ok := staticInt(w.MbarId())
	if !ok {
		return waitError(w.Op, "its barrier index is not a constant (outside a loop the index must be known statically)")
	}
	n := nvgpu.MBarrierCount(g.Type())
	if idx < 0 || idx >= n {
		return waitError(w.Op, "barrier index %d is out of range for a group of %d barrier(s)", idx, n)
	}
	c := pc.counts[g]
	pc.plans = append(pc.plans, &waitPlan{wait: w, parity: c[idx] & 1})
	c[idx]++
	return nil
}

// unknownCounts records why the counts of a group are unknown from a
// point on; the reason is reported at the next wait on the group.
type unknownCounts struct {
	msg  string
	loop *ir.Operation
}

func (u *unknownCounts) at(w *ir.Operation) error {
	return waitError(w, "%s", u.msg).AttachNote(u.loop.Loc, "the loop with a dynamic trip count")
}

// ifOp accepts an scf.if (outside loops) when, for each group waited on
// in it, all the waits on the group lie in one of its branches.
func (pc *phaseCounter) ifOp(op *ir.Operation) error {
	gs, m := pc.waitsIn(op)
	for _, g := range gs {
		r := m[g][0].ParentRegion()
		for ; r.ParentOp() != op; r = r.ParentOp().ParentRegion() {
		}
		for _, w := range pc.waits[g] {
			if !r.IsAncestorOf(w) {
				inner := m[g][0]
				return waitError(inner, "it is under an scf.if while its barrier group is also waited on outside that branch, so threads may have waited on it different numbers of times").
					AttachNote(op.Loc, "the scf.if").AttachNote(w.Loc, "the other wait")
			}
		}
	}
	for _, r := range op.Regions() {
		for _, b := range r.Blocks() {
			if err := pc.block(b); err != nil {
				return err
			}
		}
	}
	return nil
}

// loop handles an scf.for outside loops that contains waits.
func (pc *phaseCounter) loop(l scf.ForOp) error {
	gs, m := pc.waitsIn(l.Op)
	for _, g := range gs {
		ws := m[g]
		for _, w := range ws {
			for o := w.ParentOp(); o != l.Op; o = o.ParentOp() {
				switch {
				case passutil.IsLoop(o):
					return waitError(w, "the waiting loop is nested in another loop").AttachNote(l.Op.Loc, "the outer loop")
				case o.Name() == scf.If:
					return waitError(w, "it is under an scf.if in the loop body, so iterations may wait different numbers of times").
						AttachNote(o.Loc, "the scf.if")
				case o.NumRegions() > 0:
					return waitError(w, "it is inside '%s' in the loop body", o.Name())
				}
			}
		}
		if len(ws) > 1 {
			return waitError(ws[1], "the loop waits on the same barrier group more than once per iteration (one tmac.mbarrier.wait per group and loop is supported)").
				AttachNote(ws[0].Loc, "the other wait")
		}
		w := tmac.MbarrierWaitOp{Op: ws[0]}
		plan, err := pc.loopWait(l, w, g)
		if err != nil {
			return err
		}
		pc.plans = append(pc.plans, plan)
	}
	return nil
}

// loopWait matches the ring form of a loop wait, computes B and adds the
// loop's waits to the counts of the group.
func (pc *phaseCounter) loopWait(l scf.ForOp, w tmac.MbarrierWaitOp, g ir.Value) (*waitPlan, error) {
	lb, ok := staticInt(l.LowerBound())
	if !ok {
		return nil, waitError(w.Op, "the loop's lower bound is not a constant")
	}
	if st, ok := staticInt(l.Step()); !ok || st != 1 {
		return nil, waitError(w.Op, "the loop's step is not the constant 1")
	}
	iv := l.Region().Entry().Arg(0)
	size := nvgpu.MBarrierCount(g.Type())
	idx := w.MbarId()
	var r ringForm
	if c, ok := staticInt(idx); ok {
		if c < 0 || c >= size {
			return nil, waitError(w.Op, "barrier index %d is out of range for a group of %d barrier(s)", c, size)
		}
		r = ringForm{first: c, n: 1, off: lb, x: iv}
	} else {
		rem, ok := arith.AsRemui(idx.DefiningOp())
		form := "its barrier index is not `arith.remui %x, %cN` with %x the loop's induction variable j, j + c or j - c (c and N constants), nor a constant"
		if !ok {
			return nil, waitError(w.Op, "%s", form)
		}
		n, ok := staticInt(rem.Rhs())
		if !ok || n <= 0 {
			return nil, waitError(w.Op, "%s", form)
		}
		if n > size {
			return nil, waitError(w.Op, "its ring of %d barriers (remui by %d) is larger than the group's %d barrier(s)", n, n, size)
		}
		x := rem.Lhs()
		off, ok := ivOffset(x, iv)
		if !ok {
			return nil, waitError(w.Op, "%s", form)
		}
		off += lb
		if off < 0 && n > 1 {
			return nil, waitError(w.Op, "its ring index `arith.remui` is applied to a negative value (%d) in the first iteration", off)
		}
		r = ringForm{first: 0, n: n, off: off, x: x, slot: idx}
	}
	if d := pc.unknown[g]; d != nil {
		return nil, d.at(w.Op)
	}
	c := pc.counts[g]
	q, rem := passutil.FloorDiv(r.off, r.n), floorMod(r.off, r.n)
	var bs []int64
	for b := int64(0); b < r.n; b++ {
		v := c[r.first+b] - q
		if b < rem {
			v--
		}
		bs = append(bs, v)
	}
	for _, v := range bs[1:] {
		// Only k mod 2 is emitted: B may differ by even amounts.
		if (v-bs[0])&1 != 0 {
			return nil, waitError(w.Op, "the barriers of its ring have been waited on different numbers of times before the loop (%s), so their parities are out of step", pc.describeCounts(g, r))
		}
	}
	plan := &waitPlan{wait: w, loop: l.Op, ring: r, b: bs[0]}
	// The loop's own waits, for the waits after it.
	ub, ok := staticInt(l.UpperBound())
	if !ok || (l.UnsignedCmp() != nil && (lb < 0 || ub < 0)) {
		pc.unknown[g] = &unknownCounts{msg: "an earlier loop that waits on its barrier group has a dynamic trip count", loop: l.Op}
		return plan, nil
	}
	trips := max(0, ub-lb)
	for b := int64(0); b < r.n; b++ {
		c[r.first+b] += countResidue(r.off, r.off+trips, r.n, b)
	}
	return plan, nil
}

func (pc *phaseCounter) describeCounts(g ir.Value, r ringForm) string {
	var parts []string
	for b := r.first; b < r.first+r.n; b++ {
		parts = append(parts, fmt.Sprintf("barrier %d: %d", b, pc.counts[g][b]))
	}
	s := strings.Join(parts, ", ")
	if r.off != 0 {
		s += fmt.Sprintf("; the ring starts at position %d", r.off)
	}
	return s
}

// ivOffset matches x = iv, iv + c, c + iv or iv - c (c static): x = iv + off.
func ivOffset(x ir.Value, iv ir.Value) (int64, bool) {
	if x == iv {
		return 0, true
	}
	d := x.DefiningOp()
	if d == nil {
		return 0, false
	}
	switch d.Name() {
	case arith.Addi:
		a := arith.AddiOp{Op: d}
		for _, p := range [][2]ir.Value{{a.Lhs(), a.Rhs()}, {a.Rhs(), a.Lhs()}} {
			if p[0] == iv {
				if c, ok := staticInt(p[1]); ok {
					return c, true
				}
			}
		}
	case arith.Subi:
		if s := (arith.SubiOp{Op: d}); s.Lhs() == iv {
			if c, ok := staticInt(s.Rhs()); ok {
				return -c, true
			}
		}
	}
	return 0, false
}

func floorMod(a, n int64) int64 { return a - passutil.FloorDiv(a, n)*n }

// countResidue is the number of u in [lo, hi) with u mod n == r (0 <= r < n).
func countResidue(lo, hi, n, r int64) int64 {
	if hi <= lo {
		return 0
	}
	f := func(x int64) int64 { return passutil.FloorDiv(x-r, n) } // #{u <= x} up to a constant
	return f(hi-1) - f(lo-1)
}

// emit rewrites the waits as planned.
func (pc *phaseCounter) emit() {
	entry := pc.kernel.Region(0).Entry()
	cb := ir.NewBuilder(pc.kernel.Loc)
	cb.SetInsertionPointToStart(entry)
	consts := map[string]ir.Value{}
	konst := func(v int64, t ir.Type) ir.Value {
		key := fmt.Sprintf("%d %s", v, t)
		if c, ok := consts[key]; ok {
			return c
		}
		c := cb.CreateOp(arith.Constant, nil, []ir.Type{t}, ir.NamedAttr{Name: "value", Value: ir.IntAttr(v, t)}).Result(0)
		consts[key] = c
		return c
	}
	// Loops with carried parities get their i1 iter_args first.
	var loops []*ir.Operation
	carried := map[*ir.Operation][]*waitPlan{}
	for _, p := range pc.plans {
		if p.loop != nil && !p.ring.derived() {
			if carried[p.loop] == nil {
				loops = append(loops, p.loop)
			}
			carried[p.loop] = append(carried[p.loop], p)
		}
	}
	for _, l := range loops {
		ps := carried[l]
		var inits []ir.Value
		for _, p := range ps {
			// The first wait (u = off) waits with parity (floor(off/N) + B) mod 2.
			inits = append(inits, konst(p.parityRing().At(0), ir.I1))
		}
		nl, args := addI1IterArgs(l, inits)
		body := scf.ForOp{Op: nl}.Region().Entry()
		yield := body.Terminator()
		yb := ir.NewBuilder(l.Loc)
		yb.SetInsertionPoint(yield)
		next := scf.YieldOp{Op: yield}.Results()
		for i, p := range ps {
			p.iter = args[i]
			// Per iteration: the round advances after the ring's last
			// slot, one cmpi + one xori.
			yb.Loc = p.wait.Op.Loc
			last := yb.CreateOp(arith.Cmpi, []ir.Value{p.ring.slot, konst(p.ring.n-1, p.ring.slot.Type())}, []ir.Type{ir.I1},
				ir.NamedAttr{Name: "predicate", Value: ir.I64Attr(0)}).Result(0)
			next = append(next, yb.CreateOp(arith.Xori, []ir.Value{args[i], last}, []ir.Type{ir.I1}).Result(0))
		}
		yield.SetOperands(next)
	}
	var ticks ir.Value
	for _, p := range pc.plans {
		if ticks == nil {
			ticks = konst(mbarWaitTicks, ir.Index)
		}
		w := p.wait
		b := ir.NewBuilder(w.Op.Loc)
		b.SetInsertionPoint(w.Op)
		var parity ir.Value
		switch {
		case p.loop == nil:
			parity = konst(p.parity, ir.I1)
		case p.iter != nil:
			parity = p.iter
		default:
			// Derived: parity = (u & N) != 0 (bit log2 N of u), andi +
			// cmpi; an odd B flips the predicate to eq instead of costing
			// an xori.
			u := p.ring.x
			t := u.Type() // index, or the integer type of the induction variable
			bit := b.CreateOp(arith.Andi, []ir.Value{u, konst(p.ring.n, t)}, []ir.Type{t}).Result(0)
			pred := int64(1) // ne
			if p.b&1 != 0 {
				pred = 0 // eq
			}
			parity = b.CreateOp(arith.Cmpi, []ir.Value{bit, konst(0, t)}, []ir.Type{ir.I1},
				ir.NamedAttr{Name: "predicate", Value: ir.I64Attr(pred)}).Result(0)
		}
		b.CreateOp(nvgpu.MbarrierTryWaitParity, []ir.Value{w.Barriers(), parity, ticks, w.MbarId()}, nil,
			w.Op.DiscardableAttrs()...)
		if pc.sched != nil {
			rec := &schedule.BarrierWait{Loc: w.Op.Loc, By: "mbarrier-phase", Constant: p.loop == nil, Parity: p.parity, Carried: p.iter != nil}
			if p.loop != nil {
				r := p.parityRing()
				rec.Ring = &r
			}
			pc.sched.AddWait(pc.kernel, w.Barriers(), rec)
		}
		w.Op.Erase()
	}
}

// addI1IterArgs replaces the scf.for l by one with extra iter_args (and
// results) initialised to inits; the new body arguments are returned. The
// caller extends the scf.yield.
func addI1IterArgs(l *ir.Operation, inits []ir.Value) (*ir.Operation, []*ir.BlockArgument) {
	st := &ir.OperationState{Name: scf.For, Loc: l.Loc,
		Operands:    append(append([]ir.Value{}, l.Operands()...), inits...),
		ResultTypes: append([]ir.Type{}, l.ResultTypes()...),
		Props:       append([]ir.NamedAttr{}, l.Props()...),
		Attrs:       append([]ir.NamedAttr{}, l.DiscardableAttrs()...)}
	for range inits {
		st.ResultTypes = append(st.ResultTypes, ir.I1)
	}
	r := st.AddRegion()
	nl := ir.NewOperation(st)
	r.TakeBody(scf.ForOp{Op: l}.Region())
	l.Block().InsertBefore(nl, l)
	body := r.Entry()
	var args []*ir.BlockArgument
	for range inits {
		args = append(args, body.AddArgument(ir.I1, l.Loc))
	}
	for i, res := range l.Results() {
		ir.ReplaceAllUsesWith(res, nl.Result(i))
	}
	l.Erase()
	return nl, args
}

// outsideKernelWait reports a tmac.mbarrier.wait left outside kernels
// (host code or a device function, whose callers' waits are unknown).
func outsideKernelWait(top *ir.Operation) error {
	var err error
	ir.Walk(top, func(op *ir.Operation) ir.WalkResult {
		if op.Name() == tmac.MbarrierWait {
			err = waitError(op, "it is not in a kernel (a gpu.launch body or a gpu.func with gpu.kernel)")
			return ir.Interrupt
		}
		return ir.Advance
	})
	return err
}
