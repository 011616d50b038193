package emu

import (
	"fmt"

	"github.com/tmac-dev/tmac/dialects/arith"
	"github.com/tmac-dev/tmac/dialects/llvm"
	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/ir/eval"
)

// Elementwise ops (arith, math: every op whose definition declares
// ir.Semantics) run lane by lane on scalars and vectors through what the
// GPU computes (eval.CompileGPU): the exact result, or the GPU's where the
// definition says the lowering differs (math.exp through ex2.approx).
// Values are held as lanes hold them: integers sign-extended from their
// width (i1 as 0 or 1), floats rounded to their type.

func init() {
	register(func(k *kernel, op *ir.Operation) runFunc {
		c := arith.ConstantOp{Op: op}
		return constant(c.Value(), c.Result())
	}, arith.Constant)
	register(func(k *kernel, op *ir.Operation) runFunc {
		c := llvm.MlirConstantOp{Op: op}
		return constant(c.Value(), c.Res())
	}, llvm.MlirConstant)
}

// constant is the implementation of a constant op holding value, its
// result res (arith.constant, llvm.mlir.constant).
func constant(value ir.Attribute, res ir.Value) runFunc {
	return func(t *thread, in *instr) { runConstant(t, in, value, res.Type()) }
}

func runConstant(t *thread, in *instr, value ir.Attribute, ty ir.Type) {
	switch a := value.(type) {
	case *ir.IntegerAttr:
		t.set(in, 0, wrap(a.Int(), ty))
		return
	case *ir.FloatAttr:
		t.set(in, 0, round(a.Value, ty))
		return
	case *ir.DenseAttr:
		vt, ok := ty.(*ir.VectorType)
		if ok {
			n := ir.NumElements(vt.Shape())
			var v vec
			for i := int64(0); i < n; i++ {
				j := i
				if a.Splat {
					j = 0
				}
				if a.Floats != nil {
					v.f = append(v.f, round(a.Floats[j], vt.Elem))
				} else {
					v.i = append(v.i, wrap(a.Ints[j], vt.Elem))
				}
			}
			t.set(in, 0, v)
			return
		}
	}
	t.failf(in.op, "constant %s of type %s is not emulated", value, ty)
}

// elemType is the scalar type of t (the element type of a vector).
func elemType(t ir.Type) ir.Type {
	if v, ok := t.(*ir.VectorType); ok {
		return v.Elem
	}
	return t
}

// elementwise returns the implementation of an op evaluated through its
// semantics, compiled once for the op's types and attributes.
func elementwise(op *ir.Operation) (func(t *thread, in *instr), error) {
	if op.NumResults() == 2 && op.NumOperands() == 2 {
		return elementwise2(op)
	}
	if op.NumResults() != 1 || op.NumOperands() > 3 {
		return nil, opError(op, "'%s' is not emulated (elementwise ops have one or two results and at most three operands)", op.Name())
	}
	f, err := eval.CompileGPU(op)
	if err != nil {
		return nil, opError(op, "%v", err)
	}
	float := ir.IsFloat(elemType(op.Result(0).Type()))
	return func(t *thread, in *instr) {
		apply := func(j int) ir.Lane {
			r, ok := f(laneOf(t, in, 0, j), laneOf(t, in, 1, j), laneOf(t, in, 2, j))
			if !ok {
				undefinedAt(t, in, j)
			}
			return r
		}
		n := lanes(t, in)
		if n < 0 {
			if r := apply(0); float {
				t.set(in, 0, r.F)
			} else {
				t.set(in, 0, r.I)
			}
			return
		}
		var r vec
		if float {
			r.f = make([]float64, n)
		} else {
			r.i = make([]int64, n)
		}
		for j := 0; j < n; j++ {
			if l := apply(j); float {
				r.f[j] = l.F
			} else {
				r.i[j] = l.I
			}
		}
		t.set(in, 0, r)
	}, nil
}

// elementwise2 is elementwise for ops of two integer results
// (arith.addui_extended, the extended multiplications).
func elementwise2(op *ir.Operation) (func(t *thread, in *instr), error) {
	f, err := eval.Compile2(op)
	if err != nil {
		return nil, opError(op, "%v", err)
	}
	return func(t *thread, in *instr) {
		apply := func(j int) (ir.Lane, ir.Lane) {
			r0, r1, ok := f(laneOf(t, in, 0, j), laneOf(t, in, 1, j), ir.Lane{})
			if !ok {
				undefinedAt(t, in, j)
			}
			return r0, r1
		}
		n := lanes(t, in)
		if n < 0 {
			r0, r1 := apply(0)
			t.set(in, 0, r0.I)
			t.set(in, 1, r1.I)
			return
		}
		r0, r1 := vec{i: make([]int64, n)}, vec{i: make([]int64, n)}
		for j := 0; j < n; j++ {
			l0, l1 := apply(j)
			r0.i[j], r1.i[j] = l0.I, l1.I
		}
		t.set(in, 0, r0)
		t.set(in, 1, r1)
	}, nil
}

// laneOf is lane j of operand i of in (a scalar operand applies to every
// lane; a missing one is zero).
func laneOf(t *thread, in *instr, i, j int) ir.Lane {
	if i >= len(in.in) {
		return ir.Lane{}
	}
	switch v := t.vals[in.in[i]].(type) {
	case int64:
		return ir.Lane{I: v}
	case float64:
		return ir.Lane{F: v}
	case vec:
		if v.f != nil {
			return ir.Lane{F: v.f[j]}
		}
		return ir.Lane{I: v.i[j]}
	default:
		t.failf(in.op, "unexpected operand %T", v)
	}
	return ir.Lane{}
}

// lanes is the length of in's vector operands, or -1 if all are scalars
// (arith.select's condition may be a scalar beside vectors).
func lanes(t *thread, in *instr) int {
	n := -1
	for _, id := range in.in {
		if v, ok := t.vals[id].(vec); ok {
			n = len(v.f) + len(v.i)
		}
	}
	return n
}

// undefinedAt reports in's result undefined at lane j, with its operands.
func undefinedAt(t *thread, in *instr, j int) {
	var xs []string
	for i := range in.in {
		l := laneOf(t, in, i, j)
		if ir.IsFloat(elemType(in.op.Operand(i).Type())) {
			xs = append(xs, fmt.Sprint(l.F))
		} else {
			xs = append(xs, fmt.Sprint(l.I))
		}
	}
	t.failf(in.op, "%v", eval.UndefinedError(in.op, xs...))
}
