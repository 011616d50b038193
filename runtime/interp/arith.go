package interp

import (
	"fmt"
	"strconv"

	"github.com/tmac-dev/tmac/dialects/arith"
	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/ir/eval"
)

// Elementwise ops (arith, math) run through the semantics on their
// definitions (ir/eval), exactly: the reference does not model the GPU's
// approximations. Integers are held as lanes hold them (i1 as 0 or 1,
// others sign-extended), floats as float64 values of their type.

func (fc *fcomp) arith(op *ir.Operation) (instr, error) {
	if op.Name() == arith.Constant {
		return fc.constant(op)
	}
	return fc.elementwise(op)
}

func (fc *fcomp) math(op *ir.Operation) (instr, error) { return fc.elementwise(op) }

// elementwise compiles an op evaluated through its lane function on the
// scalar slots of its operands.
func (fc *fcomp) elementwise(op *ir.Operation) (instr, error) {
	if op.NumResults() == 2 && eval.Has(op) {
		return fc.elementwise2(op)
	}
	if op.NumResults() != 1 || !eval.Has(op) {
		for _, t := range append(op.OperandTypes(), op.ResultTypes()...) {
			if _, err := kindOf(t); err != nil {
				return nil, opErr(op, "%v", err)
			}
		}
		return nil, opErr(op, "operation not supported by the reference interpreter")
	}
	if k, err := kindOf(op.Result(0).Type()); err == nil && k == kMem && op.Name() == arith.Select {
		return fc.selectMemref(arith.SelectOp{Op: op}), nil
	}
	var kinds [4]kind // the operands', then the result's
	var slots [4]int32
	vals := append(op.Operands(), op.Result(0))
	for i, v := range vals {
		k, err := kindOf(v.Type())
		if err != nil {
			return nil, opErr(op, "%v", err)
		}
		if k == kMem {
			return nil, opErr(op, "operation not supported by the reference interpreter on memrefs")
		}
		kinds[i], slots[i] = k, fc.sl(op, v)
	}
	f, err := eval.Compile(op)
	if err != nil {
		return nil, opErr(op, "%v", err)
	}
	n := op.NumOperands()
	d, rk := slots[n], kinds[n]
	a, b := slots[0], slots[1]
	undefined := func(fr *frame) {
		var xs []string
		for i := 0; i < n; i++ {
			if kinds[i] == kInt {
				xs = append(xs, strconv.FormatInt(fr.i[slots[i]], 10))
			} else {
				xs = append(xs, fmt.Sprint(fr.f[slots[i]]))
			}
		}
		fail(op, "%v", eval.UndefinedError(op, xs...))
	}
	// The common forms get closures that read and write the slots
	// directly; the others gather the operand lanes by kind.
	switch {
	case n == 2 && kinds[0] == kFloat && kinds[1] == kFloat && rk == kFloat:
		return func(fr *frame) {
			r, ok := f(ir.Lane{F: fr.f[a]}, ir.Lane{F: fr.f[b]}, ir.Lane{})
			if !ok {
				undefined(fr)
			}
			fr.f[d] = r.F
		}, nil
	case n == 2 && kinds[0] == kInt && kinds[1] == kInt && rk == kInt:
		return func(fr *frame) {
			r, ok := f(ir.Lane{I: fr.i[a]}, ir.Lane{I: fr.i[b]}, ir.Lane{})
			if !ok {
				undefined(fr)
			}
			fr.i[d] = r.I
		}, nil
	case n == 1 && kinds[0] == kFloat && rk == kFloat:
		return func(fr *frame) {
			r, ok := f(ir.Lane{F: fr.f[a]}, ir.Lane{}, ir.Lane{})
			if !ok {
				undefined(fr)
			}
			fr.f[d] = r.F
		}, nil
	}
	lane := func(fr *frame, i int) ir.Lane {
		if i >= n {
			return ir.Lane{}
		}
		if kinds[i] == kInt {
			return ir.Lane{I: fr.i[slots[i]]}
		}
		return ir.Lane{F: fr.f[slots[i]]}
	}
	return func(fr *frame) {
		r, ok := f(lane(fr, 0), lane(fr, 1), lane(fr, 2))
		if !ok {
			undefined(fr)
		}
		if rk == kInt {
			fr.i[d] = r.I
		} else {
			fr.f[d] = r.F
		}
	}, nil
}

// elementwise2 compiles an op of two integer results evaluated through
// its two-lane function (arith.addui_extended, the extended
// multiplications).
func (fc *fcomp) elementwise2(op *ir.Operation) (instr, error) {
	var slots [4]int32 // the two operands', then the results' (integers)
	for i, v := range append(op.Operands(), op.Results()...) {
		if _, err := kindOf(v.Type()); err != nil {
			return nil, opErr(op, "%v", err)
		}
		slots[i] = fc.sl(op, v)
	}
	f, err := eval.Compile2(op)
	if err != nil {
		return nil, opErr(op, "%v", err)
	}
	a, b, d0, d1 := slots[0], slots[1], slots[2], slots[3]
	return func(fr *frame) {
		r0, r1, ok := f(ir.Lane{I: fr.i[a]}, ir.Lane{I: fr.i[b]}, ir.Lane{})
		if !ok {
			fail(op, "%v", eval.UndefinedError(op, strconv.FormatInt(fr.i[a], 10), strconv.FormatInt(fr.i[b], 10)))
		}
		fr.i[d0], fr.i[d1] = r0.I, r1.I
	}, nil
}

func (fc *fcomp) selectMemref(s arith.SelectOp) instr {
	op := s.Op
	c := fc.sl(op, s.Condition())
	a, b := fc.sl(op, s.TrueValue()), fc.sl(op, s.FalseValue())
	d := fc.sl(op, s.Result())
	return func(fr *frame) {
		if fr.i[c] != 0 {
			fr.m[d] = fr.m[a]
		} else {
			fr.m[d] = fr.m[b]
		}
	}
}

func (fc *fcomp) constant(op *ir.Operation) (instr, error) {
	c := arith.ConstantOp{Op: op}
	v := c.Result()
	s, err := fc.slotOf(v)
	if err != nil {
		return nil, opErr(op, "%v", err)
	}
	switch a := c.Value().(type) {
	case *ir.IntegerAttr:
		if s.k != kInt {
			break
		}
		fc.constI[s.i] = eval.Wrap(a.Int(), intWidth(v.Type()))
		return nil, nil
	case *ir.FloatAttr:
		if s.k != kFloat {
			break
		}
		fc.constF[s.i] = ir.RoundToFloatKind(a.Value, v.Type().(*ir.FloatType).Kind)
		return nil, nil
	}
	return nil, opErr(op, "constant %s is not supported by the reference interpreter", c.Value())
}
