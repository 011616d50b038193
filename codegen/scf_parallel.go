package codegen

import (
	lir "github.com/llir/llvm/ir"
	"github.com/llir/llvm/ir/constant"
	"github.com/llir/llvm/ir/enum"
	"github.com/llir/llvm/ir/types"
	"github.com/llir/llvm/ir/value"

	"github.com/tmac-dev/tmac/dialects/scf"
	"github.com/tmac-dev/tmac/ir"
)

// scf.index_switch becomes an LLVM switch; scf.parallel and an unmapped
// scf.forall become sequential nested loops in the thread running them,
// as upstream's scf-to-cf lowers them outside a mapping to GPU ids.

func init() {
	Register(lowerIndexSwitch, scf.IndexSwitch)
	Register(lowerParallel, scf.Parallel)
	Register(lowerForall, scf.Forall)
	Register(func(fe *FuncEmitter, op *ir.Operation) {
		Fail(op, "'%s' outside of its structured op", op.Name())
	}, scf.Reduce, scf.ReduceReturn, scf.ForallInParallel)
}

// lowerIndexSwitch branches to the region of the matching case (the
// default region otherwise); each region branches to a join block whose
// phis are the results.
func lowerIndexSwitch(fe *FuncEmitter, op *ir.Operation) {
	s := scf.IndexSwitchOp{Op: op}
	for _, r := range s.Results() {
		fe.carried(op, r)
	}
	arg := fe.Val(s.Arg())
	it, ok := arg.Type().(*types.IntType)
	if !ok {
		Fail(op, "'scf.index_switch' operand lowered to %s, not an integer", arg.Type())
	}
	var cases []*lir.Case
	var caseBlocks []*lir.Block
	for _, v := range scf.SwitchCases(op) {
		b := fe.NewBlock("switch.case")
		caseBlocks = append(caseBlocks, b)
		cases = append(cases, lir.NewCase(constant.NewInt(it, v), b))
	}
	defaultB := fe.NewBlock("switch.default")
	exit := fe.NewBlock("switch.end")
	fe.cur.NewSwitch(arg, defaultB, cases...)

	type arm struct {
		vals []value.Value
		from *lir.Block
	}
	var arms []arm
	emitArm := func(b *lir.Block, r *ir.Region) {
		fe.cur = b
		vals := fe.Vals(fe.emitNested(r.Entry()))
		fe.cur.NewBr(exit)
		arms = append(arms, arm{vals, fe.cur})
	}
	for i, b := range caseBlocks {
		emitArm(b, s.CaseRegions()[i])
	}
	emitArm(defaultB, s.DefaultRegion())
	fe.cur = exit
	for i, r := range s.Results() {
		var incs []*lir.Incoming
		for _, a := range arms {
			incs = append(incs, lir.NewIncoming(a.vals[i], a.from))
		}
		fe.Set(r, newPhi(exit, arms[0].vals[i].Type(), incs...))
	}
}

// loopNest describes the loops of an scf.parallel or scf.forall: per
// dimension its bounds and step, the body block whose arguments are the
// induction variables, and how the innermost iteration updates the
// loop-carried values.
type loopNest struct {
	lbs, ubs, steps []value.Value
	body            *ir.Block
	// iterate lowers the body once, in the innermost loop, and returns
	// the carried values for the next iteration.
	iterate func(carried []value.Value) []value.Value
}

// emitLoopNest lowers the nest from dimension d inwards, starting with the
// carried values init, and returns the carried values after it.
func (fe *FuncEmitter) emitLoopNest(n *loopNest, d int, init []value.Value) []value.Value {
	if len(n.lbs) == 0 {
		// A forall of rank 0 runs its body once.
		return n.iterate(init)
	}
	pre := fe.cur
	header := fe.NewBlock("par.header")
	bodyB := fe.NewBlock("par.body")
	exit := fe.NewBlock("par.exit")
	pre.NewBr(header)
	iv := newPhi(header, n.lbs[d].Type(), lir.NewIncoming(n.lbs[d], pre))
	var carried []*lir.InstPhi
	var carriedVals []value.Value
	for _, x := range init {
		phi := newPhi(header, x.Type(), lir.NewIncoming(x, pre))
		carried = append(carried, phi)
		carriedVals = append(carriedVals, phi)
	}
	header.NewCondBr(header.NewICmp(enum.IPredSLT, iv, n.ubs[d]), bodyB, exit)

	fe.cur = bodyB
	fe.Set(n.body.Arg(d), iv)
	var next []value.Value
	if d+1 == len(n.lbs) {
		next = n.iterate(carriedVals)
	} else {
		next = fe.emitLoopNest(n, d+1, carriedVals)
	}
	step := fe.cur.NewAdd(iv, n.steps[d])
	latch := fe.cur
	latch.NewBr(header)
	iv.Incs = append(iv.Incs, lir.NewIncoming(step, latch))
	for i, phi := range carried {
		phi.Incs = append(phi.Incs, lir.NewIncoming(next[i], latch))
	}
	fe.cur = exit
	return carriedVals
}

// lowerParallel runs the iterations in order, the first dimension
// outermost; after each one the scf.reduce regions fold its values into
// the running results.
func lowerParallel(fe *FuncEmitter, op *ir.Operation) {
	p := scf.ParallelOp{Op: op}
	for _, r := range p.Results() {
		fe.carried(op, r)
	}
	body := p.Region().Entry()
	reduce := body.Last()
	n := &loopNest{
		lbs:   fe.Vals(p.LowerBound()),
		ubs:   fe.Vals(p.UpperBound()),
		steps: fe.Vals(p.Step()),
		body:  body,
		iterate: func(running []value.Value) []value.Value {
			operands := fe.Vals(fe.emitNested(body))
			next := make([]value.Value, len(running))
			for i, r := range reduce.Regions() {
				rb := r.Entry()
				fe.Set(rb.Arg(0), running[i])
				fe.Set(rb.Arg(1), operands[i])
				next[i] = fe.Val(fe.emitNested(rb)[0])
			}
			return next
		},
	}
	final := fe.emitLoopNest(n, 0, fe.Vals(p.InitVals()))
	for i, r := range p.Results() {
		fe.Set(r, final[i])
	}
}

// lowerForall runs an unmapped scf.forall without shared_outs as nested
// loops; mapped loops and tensors are refused.
func lowerForall(fe *FuncEmitter, op *ir.Operation) {
	f := scf.ForallOp{Op: op}
	if len(f.Outputs()) > 0 {
		Fail(op, "'scf.forall' with shared_outs is not supported in kernels: its outputs are tensors, which tmac does not compile")
	}
	if m, ok := op.Attr("mapping").(*ir.ArrayAttr); ok && len(m.Elems) > 0 {
		Fail(op, "'scf.forall' mapped to %s is not supported in kernels: tmac does not distribute loops over GPU ids; "+
			"index the work with gpu.thread_id/gpu.block_id in the gpu.launch body, or drop the mapping to run the iterations as sequential loops", m.Elems[0])
	}
	it, ok := fe.Type(op, ir.Index).(*types.IntType)
	if !ok {
		Fail(op, "index is not an integer type")
	}
	vals := func(bs []scf.ForallBound) []value.Value {
		var out []value.Value
		for _, b := range bs {
			if b.Value != nil {
				out = append(out, fe.Val(b.Value))
			} else {
				out = append(out, constant.NewInt(it, b.Const))
			}
		}
		return out
	}
	lbs, ubs, steps := scf.ForallBounds(op)
	body := f.Region().Entry()
	n := &loopNest{
		lbs: vals(lbs), ubs: vals(ubs), steps: vals(steps),
		body: body,
		iterate: func([]value.Value) []value.Value {
			fe.emitNested(body)
			return nil
		},
	}
	fe.emitLoopNest(n, 0, nil)
}
