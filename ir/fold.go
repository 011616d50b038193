package ir

// ConstantMaterializer builds a constant op producing attribute a of type t
// at the builder's insertion point, or returns nil if it cannot.
type ConstantMaterializer func(b *Builder, a Attribute, t Type) *Operation

var materializers []ConstantMaterializer

// RegisterConstantMaterializer lets a dialect (arith) create constants for
// folded values.
func RegisterConstantMaterializer(m ConstantMaterializer) { materializers = append(materializers, m) }

// MaterializeConstant creates a constant op for a, or returns nil.
func MaterializeConstant(b *Builder, a Attribute, t Type) *Operation {
	for _, m := range materializers {
		if op := m(b, a, t); op != nil {
			return op
		}
	}
	return nil
}

// ConstantValue returns the value attribute of a ConstantLike op defining
// v, or nil.
func ConstantValue(v Value) Attribute {
	if v == nil {
		return nil
	}
	d := v.DefiningOp()
	if d == nil || !d.HasTrait(ConstantLike) {
		return nil
	}
	return d.Attr("value")
}

// IsTriviallyDead reports whether op has no uses, no side effects and no
// regions with side effects.
func IsTriviallyDead(op *Operation) bool {
	if op.IsUsed() || op.HasTrait(Terminator) || !op.HasTrait(Pure) {
		return false
	}
	return true
}
