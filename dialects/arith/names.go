package arith

import "github.com/tmac-dev/tmac/ir"

// constantNames gives arith.constant results upstream's names: %true and
// %false for i1, %c<value>[_<type>] for other integers, %cst otherwise.
func constantNames(op *ir.Operation, name func(ir.Value, string)) {
	name(op.Result(0), constantName(op.Attr("value"), op.Result(0).Type()))
}

func constantName(v ir.Attribute, t ir.Type) string {
	ia, ok := v.(*ir.IntegerAttr)
	if !ok {
		return "cst"
	}
	if ir.IsIntegerOfWidth(t, 1) {
		if ia.Int() != 0 {
			return "true"
		}
		return "false"
	}
	s := "c" + intString(ia)
	if _, isInt := t.(*ir.IntegerType); isInt {
		s += "_" + t.String()
	}
	return s
}

func intString(ia *ir.IntegerAttr) string {
	if ia.Big != nil {
		return ia.Big.String()
	}
	return ir.Sprintf("%d", ia.Int())
}

// muliNames names `constant * vector.vscale` on index %c<N>_vscale.
func muliNames(op *ir.Operation, name func(ir.Value, string)) {
	if !ir.IsIndex(op.Result(0).Type()) {
		return
	}
	a, b := op.Operand(0).DefiningOp(), op.Operand(1).DefiningOp()
	if a == nil || b == nil {
		return
	}
	if b.HasTrait(ir.ConstantLike) {
		a, b = b, a
	}
	if !a.HasTrait(ir.ConstantLike) || b.Name() != "vector.vscale" {
		return
	}
	if ia, ok := a.Attr("value").(*ir.IntegerAttr); ok {
		name(op.Result(0), "c"+intString(ia)+"_vscale")
	}
}
