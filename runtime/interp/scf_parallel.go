package interp

import (
	"github.com/tmac-dev/tmac/dialects/scf"
	"github.com/tmac-dev/tmac/ir"
)

// scf.index_switch runs the region of the matching case; scf.parallel and
// an unmapped scf.forall without shared_outs run their iterations in
// order, the first dimension outermost, the scf.reduce regions folding
// each iteration's values into the running results.

// scfStructured compiles the scf ops of this file; ok is false for others.
func (fc *fcomp) scfStructured(op *ir.Operation) (in instr, ok bool, err error) {
	switch op.Name() {
	case scf.IndexSwitch:
		in, err = fc.indexSwitch(op)
	case scf.Parallel:
		in, err = fc.parallel(scf.ParallelOp{Op: op})
	case scf.Forall:
		in, err = fc.forall(scf.ForallOp{Op: op})
	default:
		return nil, false, nil
	}
	return in, true, err
}

func (fc *fcomp) indexSwitch(op *ir.Operation) (instr, error) {
	arg := fc.sl(op, op.Operand(0))
	res := fc.resultSlots(op)
	var bodies [][]instr
	for _, r := range op.Regions() {
		b, err := fc.region(r, fc.yieldTo(res))
		if err != nil {
			return nil, err
		}
		bodies = append(bodies, b)
	}
	cases := scf.SwitchCases(op)
	return func(fr *frame) {
		v := fr.i[arg]
		body := bodies[0]
		for i, c := range cases {
			if c == v {
				body = bodies[1+i]
				break
			}
		}
		runList(fr, body)
	}, nil
}

// bound is a loop bound or step: a slot, or a constant when slot < 0.
type bound struct {
	slot  int32
	value int64
}

func (b bound) get(fr *frame) int64 {
	if b.slot < 0 {
		return b.value
	}
	return fr.i[b.slot]
}

// nest compiles a loop nest whose innermost iteration runs body.
func (fc *fcomp) nest(op *ir.Operation, lbs, ubs, steps []bound, ivs []int32, body []instr) instr {
	n := len(lbs)
	return func(fr *frame) {
		lo, hi, st := make([]int64, n), make([]int64, n), make([]int64, n)
		for d := range lbs {
			lo[d], hi[d], st[d] = lbs[d].get(fr), ubs[d].get(fr), steps[d].get(fr)
			if st[d] <= 0 {
				fail(op, "step %d is not positive", st[d])
			}
		}
		var loop func(d int)
		loop = func(d int) {
			if d == n {
				runList(fr, body)
				return
			}
			for v := lo[d]; v < hi[d]; v += st[d] {
				fr.i[ivs[d]] = v
				loop(d + 1)
				if v+st[d] < v { // overflow
					break
				}
			}
		}
		loop(0)
	}
}

func (fc *fcomp) valueBounds(op *ir.Operation, vs []ir.Value) []bound {
	var out []bound
	for _, v := range vs {
		out = append(out, bound{slot: fc.sl(op, v)})
	}
	return out
}

func (fc *fcomp) parallel(p scf.ParallelOp) (instr, error) {
	op := p.Op
	body := p.Region().Entry()
	var ivs []int32
	for _, a := range body.Args() {
		ivs = append(ivs, fc.sl(op, a))
	}
	res := fc.resultSlots(op)
	init, err := fc.moves(p.InitVals(), res)
	if err != nil {
		return nil, err
	}
	// The reduce terminator runs each reduction region with the running
	// result and the iteration's value and stores what it returns.
	reduce := func(t *ir.Operation) (instr, error) {
		if t.Name() != scf.Reduce {
			return nil, opErr(t, "unexpected terminator")
		}
		var steps []instr
		for i, r := range t.Regions() {
			args := fc.blockArgSlots(t, r.Entry())
			in, err := fc.slotOf(t.Operand(i))
			if err != nil {
				return nil, opErr(t, "%v", err)
			}
			acc := res[i]
			bl, err := fc.region(r, func(ret *ir.Operation) (instr, error) {
				if ret.Name() != scf.ReduceReturn {
					return nil, opErr(ret, "unexpected terminator")
				}
				return fc.moves(ret.Operands(), []slot{acc})
			})
			if err != nil {
				return nil, err
			}
			steps = append(steps, func(fr *frame) {
				copySlot(fr, args[0], fr, acc)
				copySlot(fr, args[1], fr, in)
				runList(fr, bl)
			})
		}
		return func(fr *frame) { runList(fr, steps) }, nil
	}
	fc.loopDepth++
	bl, err := fc.region(p.Region(), reduce)
	fc.loopDepth--
	if err != nil {
		return nil, err
	}
	loops := fc.nest(op, fc.valueBounds(op, p.LowerBound()), fc.valueBounds(op, p.UpperBound()), fc.valueBounds(op, p.Step()), ivs, bl)
	return func(fr *frame) {
		if init != nil {
			init(fr)
		}
		loops(fr)
	}, nil
}

func (fc *fcomp) forall(f scf.ForallOp) (instr, error) {
	op := f.Op
	if len(f.Outputs()) > 0 {
		return nil, opErr(op, "shared_outs are tensors, which the reference interpreter does not run")
	}
	if m, ok := op.Attr("mapping").(*ir.ArrayAttr); ok && len(m.Elems) > 0 {
		return nil, opErr(op, "a mapping to GPU ids is not supported by the reference interpreter (nor compiled); drop the mapping to run the iterations as loops")
	}
	conv := func(bs []scf.ForallBound) []bound {
		var out []bound
		for _, b := range bs {
			if b.Value != nil {
				out = append(out, bound{slot: fc.sl(op, b.Value)})
			} else {
				out = append(out, bound{slot: -1, value: b.Const})
			}
		}
		return out
	}
	lbs, ubs, steps := scf.ForallBounds(op)
	body := f.Region().Entry()
	var ivs []int32
	for _, a := range body.Args() {
		ivs = append(ivs, fc.sl(op, a))
	}
	fc.loopDepth++
	bl, err := fc.region(f.Region(), func(t *ir.Operation) (instr, error) {
		if t.Name() != scf.ForallInParallel {
			return nil, opErr(t, "unexpected terminator")
		}
		return nil, nil
	})
	fc.loopDepth--
	if err != nil {
		return nil, err
	}
	return fc.nest(op, conv(lbs), conv(ubs), conv(steps), ivs, bl), nil
}
