package emu

import (
	"github.com/tmac-dev/tmac/dialects/scf"
	"github.com/tmac-dev/tmac/ir"
)

// scf.index_switch runs the region of the matching case; scf.parallel and
// an unmapped scf.forall run their iterations in order in the thread
// running them (as the kernels compiled by codegen do), the scf.reduce
// regions folding each iteration's values into the running results.

func init() {
	// Terminators whose values the ops below read from the thread's
	// values after their region ran.
	register(direct(func(t *thread, in *instr) {}), scf.Reduce, scf.ReduceReturn, scf.ForallInParallel)
	register(prepareIndexSwitch, scf.IndexSwitch)
	register(prepareParallel, scf.Parallel)
	register(prepareForall, scf.Forall)
}

// prepareIndexSwitch: in.regions are the default region, then the cases.
func prepareIndexSwitch(k *kernel, op *ir.Operation) runFunc {
	arg := k.slot(op.Operand(0))
	cases := scf.SwitchCases(op)
	return func(t *thread, in *instr) {
		v := t.int(in, arg)
		r := in.regions[0]
		for i, c := range cases {
			if c == v {
				r = in.regions[1+i]
				break
			}
		}
		res := t.runCode(r, nil)
		for i := range in.out {
			t.set(in, i, res[i])
		}
	}
}

// loopBound is a bound or step: a value number, or a constant when
// slot < 0.
type loopBound struct {
	slot  int
	value int64
}

func (t *thread) bound(in *instr, b loopBound) int64 {
	if b.slot < 0 {
		return b.value
	}
	return t.int(in, b.slot)
}

// runNest runs iterate once per point of the loop nest, the first
// dimension outermost, with ivs holding the induction variables.
func (t *thread) runNest(in *instr, lbs, ubs, steps []loopBound, iterate func(ivs []any)) {
	n := len(lbs)
	lo, hi, st := make([]int64, n), make([]int64, n), make([]int64, n)
	for d := range lbs {
		lo[d], hi[d], st[d] = t.bound(in, lbs[d]), t.bound(in, ubs[d]), t.bound(in, steps[d])
		if st[d] <= 0 {
			t.failf(in.op, "loop step %d is not positive", st[d])
		}
	}
	ivs := make([]any, n)
	var loop func(d int)
	loop = func(d int) {
		if d == n {
			iterate(ivs)
			return
		}
		for iv := lo[d]; iv < hi[d]; iv += st[d] {
			ivs[d] = iv
			loop(d + 1)
			if iv+st[d] < iv { // overflow
				break
			}
		}
	}
	loop(0)
}

func valueBounds(k *kernel, vs []ir.Value) []loopBound {
	var out []loopBound
	for _, s := range k.slots(vs) {
		out = append(out, loopBound{slot: s})
	}
	return out
}

// prepareParallel: in.regions[0] is the body; its last instruction is the
// scf.reduce, whose regions are the reductions.
func prepareParallel(k *kernel, op *ir.Operation) runFunc {
	p := scf.ParallelOp{Op: op}
	lbs, ubs, steps := valueBounds(k, p.LowerBound()), valueBounds(k, p.UpperBound()), valueBounds(k, p.Step())
	inits := k.slots(p.InitVals())
	reduce := p.Region().Entry().Last()
	operands := k.slots(reduce.Operands())
	var returned []int
	for _, r := range reduce.Regions() {
		returned = append(returned, k.slot(r.Entry().Last().Operand(0)))
	}
	return func(t *thread, in *instr) {
		body := in.regions[0]
		reductions := body.instrs[len(body.instrs)-1].regions
		running := t.values(inits)
		t.runNest(in, lbs, ubs, steps, func(ivs []any) {
			t.runCode(body, ivs)
			for i, r := range reductions {
				t.runCode(r, []any{running[i], t.vals[operands[i]]})
				running[i] = t.vals[returned[i]]
			}
		})
		for i := range in.out {
			t.set(in, i, running[i])
		}
	}
}

// prepareForall runs an scf.forall without mapping and shared_outs.
func prepareForall(k *kernel, op *ir.Operation) runFunc {
	conv := func(bs []scf.ForallBound) []loopBound {
		var out []loopBound
		for _, b := range bs {
			if b.Value != nil {
				out = append(out, loopBound{slot: k.slot(b.Value)})
			} else {
				out = append(out, loopBound{slot: -1, value: b.Const})
			}
		}
		return out
	}
	lb, ub, st := scf.ForallBounds(op)
	lbs, ubs, steps := conv(lb), conv(ub), conv(st)
	mapped := false
	if m, ok := op.Attr("mapping").(*ir.ArrayAttr); ok && len(m.Elems) > 0 {
		mapped = true
	}
	hasOutputs := len(scf.ForallOp{Op: op}.Outputs()) > 0
	return func(t *thread, in *instr) {
		if hasOutputs {
			t.failf(op, "'scf.forall' with shared_outs is not emulated: its outputs are tensors")
		}
		if mapped {
			t.failf(op, "'scf.forall' with a mapping to GPU ids is not emulated (nor compiled): index the work with gpu.thread_id/gpu.block_id instead")
		}
		body := in.regions[0]
		t.runNest(in, lbs, ubs, steps, func(ivs []any) { t.runCode(body, ivs) })
	}
}
