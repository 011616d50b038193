package arith

import (
	"slices"

	"github.com/tmac-dev/tmac/ir"
)

// arith.scaling_extf and arith.scaling_truncf: OCP MX conversions, the
// input multiplied (extf) or divided (truncf) by a scale that upstream first
// rounds to f8E8M0FNU. They parse, print and verify as upstream's; they have
// no semantics (tmac has no f8E8M0FNU type) and codegen rejects them, as
// Hopper has no MX conversion instructions.

const scalingDoc = "Not compiled for sm_90a: Hopper has no MX (block-scaled) conversion instructions and tmac has no f8E8M0FNU type; " +
	"codegen rejects the op (write `arith.extf`/`arith.truncf` and `arith.mulf`/`arith.divf` by a power-of-two scale instead). " +
	"Neither the emulator nor the reference interpreter evaluates it."

// scalingDef defines scaling_extf (compat widerFloat) or scaling_truncf
// (narrowerFloat).
func scalingDef(name string, compat castCompat) *ir.OpDef {
	d := &ir.OpDef{
		Name:   name,
		Traits: ir.Pure,
		Operands: []ir.ArgSpec{
			{Name: "in", Type: FloatLike},
			{Name: "scale", Type: FloatLike},
		},
		Results:     []ir.ArgSpec{{Name: "out", Type: FloatLike}},
		VerifyProps: PreVerify(2),
		Verify:      verifyScaling(compat),
		Doc:         scalingDoc,
	}
	group := "(`fastmath` `` $fastmath^)?"
	if name == "arith.scaling_truncf" {
		d.Summary = "downcasts input floating point values using provided scales values following OCP MXFP Spec"
		d.Attrs = append(d.Attrs, ir.AttrSpec{Name: "roundingmode", Constraint: roundingModeC, Optional: true, Syntax: roundingSyntax})
		group = "($roundingmode^)? " + group
	} else {
		d.Summary = "upcasts input floats using provided scales values following OCP MXFP Spec"
	}
	d.Attrs = append(d.Attrs, ir.AttrSpec{Name: "fastmath", Constraint: FastMathC, Optional: true, Syntax: FastMathSyntax(name)})
	d.Format = "$in `,` $scale " + group + " attr-dict `:` type($in) `,` type($scale) `to` type($out)"
	return d
}

// verifyScaling checks, in upstream's order: equal tensor dimensions of in
// and out, their cast compatibility (same shape, the width changing the
// right way), then the elementwise rules over all three.
func verifyScaling(compat castCompat) func(op *ir.Operation) error {
	return func(op *ir.Operation) error {
		in, scale, out := op.Operand(0).Type(), op.Operand(1).Type(), op.Result(0).Type()
		if !sameTensorDims(in, out) {
			return op.EmitOpError("failed to verify that input and output have the same tensor dimensions")
		}
		ie, is, ik := shapeOf(in)
		oe, os, ok := shapeOf(out)
		if ik != ok || !compatibleShapes(is, os) || !sameScalable(in, out) || !compat(ie, oe) {
			return op.EmitOpError("operand types '%s', '%s' and result type '%s' are cast incompatible", in, scale, out)
		}
		return verifyElementwise(op)
	}
}

// sameTensorDims is the casts' "same tensor dimensions" predicate: equal
// dimensions where both are tensors, none where neither is, and never an
// unranked tensor (upstream's predicate holds only for ranked ones).
func sameTensorDims(a, b ir.Type) bool {
	dims := func(t ir.Type) ([]int64, bool) {
		if _, unranked := t.(*ir.UnrankedTensorType); unranked {
			return nil, false
		}
		if _, d, k := shapeOf(t); k == kTensor {
			return d, true
		}
		return nil, true
	}
	da, okA := dims(a)
	db, okB := dims(b)
	return okA && okB && slices.Equal(da, db)
}
