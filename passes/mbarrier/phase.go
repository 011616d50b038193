// Package mbarrier is the mbarrier-phase pass: it computes the parities of
// tmac.mbarrier.wait (parity.go), checks the explicit ones (phase.go) and
// reports thread reads of TMA destinations that no wait orders
// (tmaread.go).
package mbarrier

import (
	"fmt"

	"github.com/tmac-dev/tmac/dialects/arith"
	"github.com/tmac-dev/tmac/dialects/gpu"
	"github.com/tmac-dev/tmac/dialects/nvgpu"
	"github.com/tmac-dev/tmac/dialects/scf"
	"github.com/tmac-dev/tmac/dialects/tmac"
	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/ir/eval"
	"github.com/tmac-dev/tmac/passes"
	"github.com/tmac-dev/tmac/passes/internal/passutil"
)

// mbarrier-phase: (a) computes the parities of the parity-less
// tmac.mbarrier.wait ops and rewrites them into
// nvgpu.mbarrier.try_wait.parity (parity.go: in gpu.func
// kernels and gpu.launch bodies), then (b) statically checks the explicit
// parities of nvgpu.mbarrier.try_wait.parity in each gpu.func kernel, the
// ones (a) produced included whenever it can evaluate them (this file).
//
// (b), the check:
//
// Each kernel (gpu.func ... kernel) is executed abstractly: index/integer
// arith on constants is evaluated, scf.if on a known condition takes its
// branch, scf.for with known bounds is unrolled (iv and iter_args bound to
// their values), so barrier indices like `j mod 3` and parities like
// `(j / 3) mod 2` are concrete at each wait. Each barrier (group value +
// index) is a phase counter: init sets the expected arrival count C; arrive
// and arrive.expect_tx add one arrival per executing thread (1 thread per
// block row/plane under `scf.if` / `predicate` on `thread_id d == const`,
// the whole known_block_size otherwise). TMA transaction bytes only delay
// completion, never change which phase completes, so they are not counted.
//
// At a wait with constant parity P, after A arrivals (n = A / C phases fully
// arrived) and with phases 0..k-1 known complete (from earlier waits), the
// pass reports, only when A is a multiple of C:
//   - k == n-1 and P == n mod 2: the wait returns at once while phase n-1
//     may still be pending ("expects parity P but at this point phase n-1
//     has not completed");
//   - k == n and P == n mod 2: the wait blocks on phase n, which no arrival
//     before it completes, and every thread that arrives on the group runs
//     this wait, so it deadlocks ("can never complete").
//
// Soundness (no false positives): the pass gives up on a barrier group (and
// stays silent) when anything is unknown: a barrier op in a loop with
// unknown bounds or under an unknown condition, an unknown barrier index or
// thread count, arrive.nocomplete, nvgpu.mbarrier.get (raw access), any
// other use of the group, clusters, or non-structured control flow. Both
// reports also need every arrive on the group to run on a subset of the
// threads that run the wait (so no arriving thread can be ahead of the
// first thread to reach it). Waits without a parity (test.wait on a token)
// are not checked.

func init() {
	passes.Register(&passes.Info{
		Name:    "mbarrier-phase",
		Summary: "Compute the parities of tmac.mbarrier.wait (ring discipline) into nvgpu.mbarrier.try_wait.parity, then check explicit mbarrier wait parities against the arrivals (reports provable mismatches and missing arrivals) and thread reads of TMA destinations no wait orders",
		Description: "Two steps, on every kernel (`gpu.func ... kernel` or `gpu.launch` body):\n" +
			"\n" +
			"1. **Parities.** Each `tmac.mbarrier.wait %bars[%i]` waits for the next phase of that barrier the thread has not waited for: the k-th wait of a thread on a barrier waits for phase k, parity k mod 2. The pass computes k and rewrites the wait into `nvgpu.mbarrier.try_wait.parity` with that parity. It handles waits outside loops with a constant index (k counted from the earlier waits, closed forms for earlier loops with static trip counts), waits directly in an `scf.for` with a constant lower bound and step 1 whose index is the induction variable (plus or minus a constant) modulo N or a constant (the parity derived from the induction variable when N is a power of two, else carried as an `i1` loop value), and waits under an `scf.if` when every wait on the group is in the same branch. The group must be created in the kernel, not initialised again after (or in a loop with) a wait on it, and used only by init, arrive and TMA loads; wherever the pass cannot prove the count, it reports why and asks for an explicit `nvgpu.mbarrier.try_wait.parity`.\n" +
			"2. **Check.** The explicit parities of `nvgpu.mbarrier.try_wait.parity` in `gpu.func` kernels are checked against the arrivals by executing the kernel abstractly (constants evaluated, static loops unrolled): a wait that would return while the phase it means is still pending, or that can never complete, is reported. The check stays silent whenever something is unknown (dynamic loops or conditions, unknown indices or thread counts, clusters, raw barrier access).\n" +
			"3. **Reads of TMA destinations.** A thread read (`memref.load`, `vector.load`, any op reading through the generic proxy) of the destination of an `nvgpu.tma.async.load`, or of a view of it, is reported when it certainly comes after the load in the issuing thread's program order with nothing between them that could order it after the load's completion: no wait, barrier, warp collective, polling loop or unknown op between the two, nor around them in the ops that hold them. The emulator catches the other missing waits at run time.\n" +
			"\n" +
			"`tmac.mbarrier.wait` outside kernels is an error.",
		New: func(passes.Options) (passes.Pass, error) {
			return passes.PassFunc(func(op *ir.Operation, ctx *passes.Context) error {
				var kernels []*ir.Operation
				ir.Walk(op, func(k *ir.Operation) ir.WalkResult {
					if k.Name() == gpu.Launch || (k.Name() == gpu.Func && k.HasAttr("gpu.kernel")) {
						kernels = append(kernels, k)
						return ir.Skip
					}
					return ir.Advance
				})
				for _, k := range kernels {
					if err := computeMBarrierParities(k, ctx.Record()); err != nil {
						return err
					}
					if k.Name() == gpu.Func {
						if err := checkMBarrierPhases(k); err != nil {
							return err
						}
					}
					if err := checkTMAReads(k); err != nil {
						return err
					}
				}
				return outsideKernelWait(op)
			}), nil
		},
		Needs: []passes.Need{
			{Pass: "tma-pipeline", Why: "which writes the tmac.mbarrier.wait ops whose parities mbarrier-phase computes", OrderOnly: true},
		},
		Rewrites: func(op *ir.Operation) bool { return op.Name() == tmac.MbarrierWait },
	})
}

// threadSet is the set of threads executing an op: all threads of the
// block (dim == ""), or those with thread_id dim == c.
type threadSet struct {
	dim string
	c   int64
}

func (s threadSet) subsetOf(o threadSet) bool { return o.dim == "" || s == o }

type mbarKey struct {
	group ir.Value
	idx   int64
}

type mbarState struct {
	init   *ir.Operation
	count  int64
	arrive int64
	kAll   int64               // phases known complete to every thread
	kBy    map[threadSet]int64 // ... to the threads of a set
}

type mbarPhase struct {
	kernel  *ir.Operation
	block   []int64 // known_block_size or nil
	env     map[ir.Value]int64
	tidDim  map[ir.Value]string // gpu.thread_id results
	cond    map[ir.Value]threadSet
	groups  map[ir.Value]bool // groups still analysed
	arrSets map[ir.Value][]threadSet
	bars    map[mbarKey]*mbarState
	steps   int
	err     error
	abort   bool
}

const mbarPhaseMaxSteps = 2000000

func checkMBarrierPhases(kernel *ir.Operation) error {
	a := &mbarPhase{kernel: kernel, env: map[ir.Value]int64{}, tidDim: map[ir.Value]string{},
		cond: map[ir.Value]threadSet{}, groups: map[ir.Value]bool{}, arrSets: map[ir.Value][]threadSet{},
		bars: map[mbarKey]*mbarState{}}
	k := gpu.FuncOp{Op: kernel}
	if c, ok := k.KnownClusterSize().(*ir.DenseArrayAttr); ok && c.Ints[0]*c.Ints[1]*c.Ints[2] > 1 {
		return nil
	}
	if b, ok := k.KnownBlockSize().(*ir.DenseArrayAttr); ok && len(b.Ints) == 3 {
		a.block = b.Ints
	}
	a.collectGroups()
	if len(a.groups) == 0 || kernel.NumRegions() == 0 || len(kernel.Region(0).Blocks()) != 1 {
		return nil
	}
	a.runBlock(kernel.Region(0).Entry(), threadSet{})
	return a.err
}

// collectGroups finds the groups created in the kernel whose every use is
// an op the analysis models, and the thread sets of their arrives.
func (a *mbarPhase) collectGroups() {
	bad := map[ir.Value]bool{}
	ir.Walk(a.kernel, func(op *ir.Operation) ir.WalkResult {
		if c, ok := nvgpu.AsMbarrierCreate(op); ok {
			a.groups[c.Barriers()] = true
		}
		for _, v := range op.Operands() {
			if v == nil {
				continue
			}
			if d := v.DefiningOp(); d != nil && d.Name() == nvgpu.MbarrierCreate {
				switch op.Name() {
				case nvgpu.MbarrierInit, nvgpu.MbarrierTryWaitParity, nvgpu.TmaAsyncLoad, nvgpu.MbarrierTestWait:
				case nvgpu.MbarrierArrive, nvgpu.MbarrierArriveExpectTx:
					b, _ := passutil.BarrierOp(op)
					s, ok := staticThreadSet(op, passutil.BarrierPredicate(b))
					if !ok {
						bad[v] = true
					}
					a.arrSets[v] = append(a.arrSets[v], s)
				default:
					bad[v] = true
				}
			}
		}
		return ir.Advance
	})
	for g := range bad {
		delete(a.groups, g)
	}
}

// tidCompare recognises `arith.cmpi eq, thread_id d, const` (either order)
// without an environment (constants only).
func tidCompare(v ir.Value) (threadSet, bool) {
	c, ok := arith.AsCmpi(v.DefiningOp())
	if !ok {
		return threadSet{}, false
	}
	if p, ok := ir.AttrInt(c.Predicate()); !ok || p != 0 {
		return threadSet{}, false
	}
	for _, p := range [][2]ir.Value{{c.Lhs(), c.Rhs()}, {c.Rhs(), c.Lhs()}} {
		t, ok := gpu.AsThreadId(p[0].DefiningOp())
		if !ok {
			continue
		}
		if k, ok := arith.ConstantInt(p[1]); ok {
			return threadSet{dim: gpu.DimOf(t.Dimension()), c: k}, true
		}
	}
	return threadSet{}, false
}

// staticThreadSet is the thread set of an op with predicate pred (nil:
// none) from the predicate and the enclosing scf.if then-branches on
// thread conditions; ok is false in an else-branch of one or with two
// different conditions.
func staticThreadSet(op *ir.Operation, pred ir.Value) (threadSet, bool) {
	var set threadSet
	add := func(s threadSet) bool {
		if set.dim != "" && set != s {
			return false
		}
		set = s
		return true
	}
	if pred != nil {
		if s, ok := tidCompare(pred); ok && !add(s) {
			return set, false
		}
	}
	for o := op; o.ParentOp() != nil; o = o.ParentOp() {
		par, ok := scf.AsIf(o.ParentOp())
		if !ok {
			continue
		}
		if s, ok := tidCompare(par.Condition()); ok {
			if o.ParentRegion() != par.ThenRegion() || !add(s) {
				return set, false
			}
		}
	}
	return set, true
}

func (a *mbarPhase) val(v ir.Value) (int64, bool) {
	if c, ok := a.env[v]; ok {
		return c, true
	}
	if c, ok := arith.ConstantInt(v); ok {
		if ir.BitWidth(v.Type()) == 1 {
			c &= 1
		}
		return c, true
	}
	return 0, false
}

// touchedGroups lists the analysed groups that op (or its regions) uses.
func (a *mbarPhase) touchedGroups(op *ir.Operation) []ir.Value {
	var gs []ir.Value
	ir.Walk(op, func(o *ir.Operation) ir.WalkResult {
		if b, ok := passutil.BarrierOp(o); ok {
			g := b.Barriers()
			if a.groups[g] {
				gs = append(gs, g)
			}
		}
		return ir.Advance
	})
	return gs
}

func (a *mbarPhase) giveUp(op *ir.Operation) {
	for _, g := range a.touchedGroups(op) {
		delete(a.groups, g)
	}
}

func (a *mbarPhase) runBlock(b *ir.Block, ts threadSet) {
	for op := b.First(); op != nil && !a.abort && a.err == nil; op = op.Next() {
		a.steps++
		if a.steps > mbarPhaseMaxSteps {
			a.abort = true
			a.err = nil
			return
		}
		a.step(op, ts)
	}
}

func (a *mbarPhase) step(op *ir.Operation, ts threadSet) {
	for _, r := range op.Results() {
		delete(a.env, r)
	}
	switch op.Name() {
	case gpu.ThreadId:
		t := gpu.ThreadIdOp{Op: op}
		a.tidDim[t.Result()] = gpu.DimOf(t.Dimension())
		return
	case scf.If:
		a.stepIf(scf.IfOp{Op: op}, ts)
		return
	case scf.For:
		a.stepFor(scf.ForOp{Op: op}, ts)
		return
	case nvgpu.MbarrierInit, nvgpu.MbarrierArrive, nvgpu.MbarrierArriveExpectTx,
		nvgpu.MbarrierTryWaitParity, nvgpu.MbarrierArriveNocomplete:
		b, _ := passutil.BarrierOp(op)
		a.stepBarrier(op, b, ts)
		return
	}
	if op.NumRegions() > 0 {
		a.giveUp(op)
		return
	}
	a.eval(op)
}

// eval computes an integer arith op on known operands.
func (a *mbarPhase) eval(op *ir.Operation) {
	if op.NumResults() != 1 {
		return
	}
	if c, ok := arith.AsCmpi(op); ok {
		if s, ok := a.threadCond(c); ok {
			a.cond[op.Result(0)] = s
		} else {
			delete(a.cond, op.Result(0))
		}
	}
	ops := make([]int64, op.NumOperands())
	for i, v := range op.Operands() {
		c, ok := a.val(v)
		if !ok {
			return
		}
		ops[i] = c
	}
	if r, ok := EvalIntOp(op, ops); ok {
		a.env[op.Result(0)] = r
	}
}

func (a *mbarPhase) threadCond(cmp arith.CmpiOp) (threadSet, bool) {
	if p, ok := ir.AttrInt(cmp.Predicate()); !ok || p != 0 {
		return threadSet{}, false
	}
	for _, p := range [][2]ir.Value{{cmp.Lhs(), cmp.Rhs()}, {cmp.Rhs(), cmp.Lhs()}} {
		d, ok := a.tidDim[p[0]]
		if !ok {
			continue
		}
		if c, ok := a.val(p[1]); ok {
			return threadSet{dim: d, c: c}, true
		}
	}
	return threadSet{}, false
}

// EvalIntOp evaluates an integer op on known operand values (held as
// lanes are: sign-extended, i1 as 0 or 1): a constant, or an op evaluated
// through its semantics (ir/eval). ok is false for other ops and undefined
// results.
func EvalIntOp(op *ir.Operation, x []int64) (int64, bool) {
	if op.NumOperands() == 0 {
		return arith.ConstantInt(op.Result(0))
	}
	return eval.Ints(op, x)
}

func (a *mbarPhase) stepIf(op scf.IfOp, ts threadSet) {
	c := op.Condition()
	var region *ir.Region
	inner := ts
	if k, ok := a.val(c); ok {
		region = op.ThenRegion()
		if k&1 == 0 {
			region = op.ElseRegion()
		}
	} else if s, ok := a.cond[c]; ok && (ts.dim == "" || ts == s) {
		if op.Op.NumRegions() > 1 {
			// The else-branch runs on the other threads: unknown set.
			for _, b := range op.ElseRegion().Blocks() {
				for o := b.First(); o != nil; o = o.Next() {
					a.giveUp(o)
				}
			}
		}
		region, inner = op.ThenRegion(), s
	} else {
		a.giveUp(op.Op)
		return
	}
	if len(region.Blocks()) == 0 {
		return
	}
	a.runBlock(region.Entry(), inner)
	if inner == ts {
		// On a thread condition the results differ between threads:
		// they stay unknown.
		a.bindYield(op.Op, region.Entry())
	}
}

// yielded returns the values the scf.yield ending b gives (ok false
// when b ends otherwise).
func yielded(b *ir.Block) ([]ir.Value, bool) {
	y, ok := scf.AsYield(b.Last())
	if !ok {
		return nil, false
	}
	return y.Results(), true
}

// bindYield binds op's results to the values its region's scf.yield gives.
func (a *mbarPhase) bindYield(op *ir.Operation, b *ir.Block) {
	ys, ok := yielded(b)
	if !ok {
		return
	}
	for i, r := range op.Results() {
		if i < len(ys) {
			if c, ok := a.val(ys[i]); ok {
				a.env[r] = c
			}
		}
	}
}

func (a *mbarPhase) stepFor(op scf.ForOp, ts threadSet) {
	if len(a.touchedGroups(op.Op)) == 0 {
		return // results stay unknown
	}
	lb, ok1 := a.val(op.LowerBound())
	ub, ok2 := a.val(op.UpperBound())
	st, ok3 := a.val(op.Step())
	if !ok1 || !ok2 || !ok3 || st <= 0 || op.Op.NumRegions() != 1 {
		a.giveUp(op.Op)
		return
	}
	body := op.Region().Entry()
	args := body.ArgValues()
	inits := make([]int64, len(args)-1)
	known := make([]bool, len(args)-1)
	for i, v := range op.InitArgs() {
		inits[i], known[i] = a.val(v)
	}
	for iv := lb; iv < ub && !a.abort && a.err == nil; iv += st {
		a.env[args[0]] = iv
		for i := range inits {
			if known[i] {
				a.env[args[1+i]] = inits[i]
			} else {
				delete(a.env, args[1+i])
			}
		}
		a.runBlock(body, ts)
		if ys, ok := yielded(body); ok {
			for i := range inits {
				inits[i], known[i] = a.val(ys[i])
			}
		}
	}
	for i, r := range op.Results() {
		if known[i] {
			a.env[r] = inits[i]
		}
	}
}

// threads is the number of threads in ts, or -1 when unknown.
func (a *mbarPhase) threads(ts threadSet) int64 {
	if a.block == nil {
		return -1
	}
	n := a.block[0] * a.block[1] * a.block[2]
	if ts.dim == "" {
		return n
	}
	d := map[string]int{"x": 0, "y": 1, "z": 2}[ts.dim]
	if ts.c < 0 || ts.c >= a.block[d] {
		return 0
	}
	return n / a.block[d]
}

func (a *mbarPhase) dropGroup(g ir.Value) {
	delete(a.groups, g)
}

func (a *mbarPhase) stepBarrier(op *ir.Operation, b passutil.BarrierOperands, ts threadSet) {
	g := b.Barriers()
	if !a.groups[g] {
		return
	}
	if p := passutil.BarrierPredicate(b); p != nil {
		if k, ok := a.val(p); ok {
			if k&1 == 0 {
				return
			}
		} else if s, ok := a.cond[p]; ok && (ts.dim == "" || ts == s) {
			ts = s
		} else {
			a.dropGroup(g)
			return
		}
	}
	idx, ok := a.val(b.MbarId())
	if !ok {
		a.dropGroup(g)
		return
	}
	key := mbarKey{g, idx}
	st := a.bars[key]
	switch o := b.(type) {
	case nvgpu.MbarrierInitOp:
		c, ok := a.val(o.Count())
		if !ok || c <= 0 {
			a.dropGroup(g)
			return
		}
		a.bars[key] = &mbarState{init: op, count: c, kBy: map[threadSet]int64{}}
	case nvgpu.MbarrierArriveOp, nvgpu.MbarrierArriveExpectTxOp:
		n := a.threads(ts)
		if st == nil || n < 0 {
			a.dropGroup(g)
			return
		}
		st.arrive += n
	case nvgpu.MbarrierArriveNocompleteOp:
		a.dropGroup(g)
	case nvgpu.MbarrierTryWaitParityOp:
		p, ok := a.val(o.PhaseParity())
		if st == nil || !ok {
			return
		}
		a.checkWait(op, g, idx, st, p&1, ts)
	}
}

func (a *mbarPhase) checkWait(op *ir.Operation, g ir.Value, idx int64, st *mbarState, p int64, ts threadSet) {
	if st.arrive%st.count != 0 || a.threads(ts) == 0 {
		return // partial phase, or no thread runs this wait
	}
	for _, s := range a.arrSets[g] {
		if !s.subsetOf(ts) {
			return
		}
	}
	n := st.arrive / st.count
	k := st.kAll
	if ts.dim != "" {
		k = max(k, st.kBy[ts])
	}
	if p != n%2 {
		// Waits for phase n-1 (or an older one): a blocking wait on the
		// last arrived phase proves it complete for the waiting threads.
		if n >= 1 && k == n-1 {
			if ts.dim == "" {
				st.kAll = n
			} else {
				st.kBy[ts] = n
			}
		}
		return
	}
	switch k {
	case n - 1:
		// Phase n-1 is the last one arrived; waiting on the parity of
		// phase n returns as soon as phase n-2 has completed.
		a.err = op.EmitError("wait on barrier %d expects parity %d but at this point phase %d has not completed", idx, p, n-1).
			AttachNote(st.init.Loc, "barrier %d initialised here with an expected arrival count of %d; %d arrival(s) before this wait complete phase(s) 0 to %d", idx, st.count, st.arrive, n-1)
	case n:
		msg := "no arrival on it before this point"
		if n > 0 {
			msg = fmt.Sprintf("no arrival on it since phase %d completed", n-1)
		}
		a.err = op.EmitError("wait on barrier %d can never complete: %s", idx, msg).
			AttachNote(st.init.Loc, "barrier %d initialised here with an expected arrival count of %d", idx, st.count)
	}
}
