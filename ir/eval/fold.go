package eval

import "github.com/tmac-dev/tmac/ir"

// Constants as lanes, for folding: scalar integer and float attributes and
// splat dense attributes (a shaped constant with one value).

// FromAttr returns the lane of a scalar or splat constant, and whether it is
// an integer. ok is false for other attributes and for integers wider
// than 64 bits.
func FromAttr(a ir.Attribute) (l ir.Lane, isInt, ok bool) {
	switch a := a.(type) {
	case *ir.IntegerAttr:
		if a.Big != nil || ir.BitWidth(a.Type()) > 64 {
			return ir.Lane{}, false, false
		}
		return ir.Lane{I: a.Int()}, true, true
	case *ir.FloatAttr:
		return ir.Lane{F: a.Value}, false, true
	case *ir.DenseAttr:
		if !a.Splat || ir.BitWidth(a.ShapedType().ElementType()) > 64 {
			return ir.Lane{}, false, false
		}
		if len(a.Ints) == 1 {
			return ir.Lane{I: a.Ints[0]}, true, true
		}
		if len(a.Floats) == 1 {
			return ir.Lane{F: a.Floats[0]}, false, true
		}
	}
	return ir.Lane{}, false, false
}

// ToAttr returns the constant of type t holding l (a splat for a statically
// shaped vector or tensor), or nil if t cannot hold a constant.
func ToAttr(l ir.Lane, t ir.Type) ir.Attribute {
	elem := ir.ElementTypeOrSelf(t)
	if st, ok := t.(ir.ShapedType); ok {
		if _, isMem := t.(*ir.MemRefType); isMem || !ir.HasStaticShape(st.Shape()) {
			return nil
		}
		if ir.IsFloat(elem) {
			return ir.DenseSplatFloat(l.F, st)
		}
		return ir.DenseSplatInt(l.I, st)
	}
	if ft, ok := elem.(*ir.FloatType); ok {
		return ir.FloatAttrOf(l.F, ft)
	}
	if ir.BitWidth(elem) > 64 {
		return nil
	}
	return ir.IntAttr(l.I, elem)
}

// Fold evaluates op when every operand is a scalar or splat constant
// (operands as given to an ir.OpDef's Fold) and returns the result's
// attribute, or nil: an operand is not constant, the op has no semantics
// for these types and attributes, or the result is undefined.
func Fold(op *ir.Operation, operands []ir.Attribute) ir.Attribute {
	if op.NumResults() != 1 {
		return nil
	}
	if r := FoldAll(op, operands); r != nil {
		return r[0]
	}
	return nil
}

// FoldAll is Fold for ops of one or two results: the attributes of all of
// op's results, or nil.
func FoldAll(op *ir.Operation, operands []ir.Attribute) []ir.Attribute {
	n := op.NumResults()
	if n < 1 || n > 2 || len(operands) > 3 || len(operands) != op.NumOperands() {
		return nil
	}
	var l [3]ir.Lane
	for i, a := range operands {
		v, isInt, ok := FromAttr(a)
		if !ok || isInt != !ir.IsFloat(ir.ElementTypeOrSelf(op.Operand(i).Type())) {
			return nil
		}
		l[i] = v
	}
	var rs [2]ir.Lane
	if n == 1 {
		f, err := Compile(op)
		if err != nil {
			return nil
		}
		r, ok := f(l[0], l[1], l[2])
		if !ok {
			return nil
		}
		rs[0] = r
	} else {
		f, err := Compile2(op)
		if err != nil {
			return nil
		}
		r0, r1, ok := f(l[0], l[1], l[2])
		if !ok {
			return nil
		}
		rs = [2]ir.Lane{r0, r1}
	}
	out := make([]ir.Attribute, n)
	for i := range out {
		if out[i] = ToAttr(rs[i], op.Result(i).Type()); out[i] == nil {
			return nil
		}
	}
	return out
}
