package index

import (
	"github.com/tmac-dev/tmac/dialects/arith"
	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/ir/eval"
)

// Folding. The width of index is the target's, so upstream folds an op of
// constant operands only where a 64-bit and a 32-bit target agree: the
// 64-bit result, truncated, equals the result on the truncated operands.
// Undefined results (a zero divisor, a shift by 64 or more; on 32 bits, by
// 32 or more) are never folded. Besides constants: x+0, x-0 and x*1 are x,
// x*0 is 0 (the constant on either side of add and mul), and index.cmp of
// a value with itself is known. Casts fold from
// integer constants (sign- or zero-extended to 64 bits), not from index
// ones. tmac's canonicalize materializes the folded constants as
// arith.constant (upstream makes index.constant and index.bool.constant).

var (
	constantSem = &ir.Semantics{Lane: func(op *ir.Operation) (ir.LaneFunc, error) {
		v, _ := ir.AttrInt(op.Attr("value"))
		return func(_, _, _ ir.Lane) (ir.Lane, bool) { return ir.Lane{I: v}, true }, nil
	}}
	sizeofSem = &ir.Semantics{Lane: func(op *ir.Operation) (ir.LaneFunc, error) {
		return func(_, _, _ ir.Lane) (ir.Lane, bool) { return ir.Lane{I: 64}, true }, nil
	}}
)

// indexConst returns the value of an index or integer constant.
func indexConst(a ir.Attribute) (int64, bool) {
	ia, ok := a.(*ir.IntegerAttr)
	if !ok || ia.Big != nil {
		return 0, false
	}
	return ia.Int(), true
}

func foldBinary(op *ir.Operation, operands []ir.Attribute) []any {
	x, okX := indexConst(operands[0])
	y, okY := indexConst(operands[1])
	if okX && okY {
		f := op.Def().Semantics.IntBinary
		r64, ok64 := f(x, y, 64)
		r32, ok32 := f(eval.Signed(x, 32), eval.Signed(y, 32), 32)
		if ok64 && ok32 && eval.Wrap(r64, 32) == eval.Wrap(r32, 32) {
			return []any{ir.IntAttr(r64, ir.Index)}
		}
		return nil
	}
	// x op c, or c op x for the commutative ops.
	v, c, ok := op.Operand(0), y, okY
	if !ok && okX && op.HasTrait(ir.Commutative) {
		v, c, ok = op.Operand(1), x, true
	}
	switch {
	case !ok:
	case c == 0 && (op.Name() == "index.add" || op.Name() == "index.sub"), c == 1 && op.Name() == "index.mul":
		return []any{v}
	case c == 0 && op.Name() == "index.mul":
		return []any{ir.IntAttr(0, ir.Index)}
	}
	return nil
}

func foldCmp(op *ir.Operation, operands []ir.Attribute) []any {
	x, okX := indexConst(operands[0])
	y, okY := indexConst(operands[1])
	p := int64(PredicateOf(op.Attr("pred")))
	if op.Operand(0) == op.Operand(1) {
		// A value compared with itself: as any two equal values.
		r, _ := arith.CmpI(p, 0, 0, 64)
		return []any{ir.Bool(r)}
	}
	if !okX || !okY {
		return nil
	}
	r64, _ := arith.CmpI(p, x, y, 64)
	r32, _ := arith.CmpI(p, eval.Signed(x, 32), eval.Signed(y, 32), 32)
	if r64 != r32 {
		return nil
	}
	return []any{ir.Bool(r64)}
}

func foldCast(op *ir.Operation, operands []ir.Attribute) []any {
	ia, ok := operands[0].(*ir.IntegerAttr)
	if !ok || ir.IsIndex(ia.Type()) || !ir.IsIndex(op.Result(0).Type()) {
		return nil
	}
	if r := eval.FoldAll(op, operands); r != nil {
		return []any{r[0]}
	}
	return nil
}
