package arith

import (
	"math/bits"
	"strings"

	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/ir/eval"
)

// The ops with two results: arith.addui_extended (the sum and the unsigned
// overflow bit) and the extended multiplications arith.mului_extended and
// arith.mulsi_extended (the low and high halves of the double-width
// product). Their semantics are ir.Semantics.Lane2.

func addUIExtendedDef() *ir.OpDef {
	return twoResultDef("arith.addui_extended", "extended unsigned integer addition operation returning sum and overflow bit",
		"sum", "overflow", "$lhs `,` $rhs attr-dict `:` type($sum) `,` type($overflow)", foldAddUIExtended, adduiExtendedSem,
		"The sum is `arith.addi`'s; the overflow bit is 1 where the unsigned sum does not fit. "+
			"On the GPU: an add and an unsigned compare of the sum with `lhs` (`add`, `setp.lt.u`).")
}

const mulExtendedDoc = "The low half is `arith.muli`'s result. On the GPU: `mul.lo` and `mul.hi` " +
	"(`.s` for mulsi_extended, `.u` for mului_extended) for i16, i32 and i64 and index; " +
	"narrower integers multiply at twice their width. Integers wider than 64 bits are rejected."

func mulExtendedDef(name string, sem *ir.Semantics, doc string) *ir.OpDef {
	summary := "extended unsigned integer multiplication operation"
	if name == "arith.mulsi_extended" {
		summary = "extended signed integer multiplication operation"
	}
	return twoResultDef(name, summary, "low", "high", "$lhs `,` $rhs attr-dict `:` type($lhs)", foldMulExtended, sem, doc)
}

// twoResultDef defines an extended op: two integer operands lhs and rhs,
// Pure and Commutative, and results r0 and r1 of the operands' type, but
// for an overflow bit (r1 "overflow"). The format names the types it
// prints; the others follow from them.
func twoResultDef(name, summary, r0, r1, format string, fold func(*ir.Operation, []ir.Attribute) []any, sem *ir.Semantics, doc string) *ir.OpDef {
	matched := []string{"lhs", "rhs", r0}
	r1Type := signlessIntLike
	rules := []ir.TypeRule{{Target: "rhs", From: "lhs"}, {Target: r0, From: "lhs"}, {Target: r1, From: "lhs"}}
	if r1 == "overflow" {
		r1Type = boolLike
		rules = []ir.TypeRule{{Target: "lhs", From: r0}, {Target: "rhs", From: r0}}
	} else {
		matched = append(matched, r1)
	}
	return &ir.OpDef{
		Name:        name,
		Summary:     summary,
		Traits:      ir.Pure | ir.Commutative,
		Operands:    []ir.ArgSpec{{Name: "lhs", Type: signlessIntLike}, {Name: "rhs", Type: signlessIntLike}},
		Results:     []ir.ArgSpec{{Name: r0, Type: signlessIntLike}, {Name: r1, Type: r1Type}},
		TypeRules:   rules,
		Format:      format,
		VerifyProps: preVerify(2, 2),
		Verify:      verifyAllTypesMatch(matched),
		Fold:        fold,
		Semantics:   sem,
		ResultNames: ir.NameResults(r0, r1),
		Doc:         doc,
	}
}

// verifyAllTypesMatch checks upstream's AllTypesMatch over the operands
// and results named (in operand, then result order), then the elementwise
// rules.
func verifyAllTypesMatch(names []string) func(op *ir.Operation) error {
	return func(op *ir.Operation) error {
		vals := append(op.Operands(), op.Results()...)[:len(names)]
		for _, v := range vals[1:] {
			if v.Type() != vals[0].Type() {
				return op.EmitOpError("failed to verify that all of {%s} have same type", strings.Join(names, ", "))
			}
		}
		return verifyElementwise(op)
	}
}

// verifyElementwise is upstream's ElementwiseMappable check: vectors and
// tensors (not memrefs) are mapped; if an operand is, every result must
// be, and all of them must have one kind (vector or tensor, scalable dims
// alike) and compatible shapes.
func verifyElementwise(op *ir.Operation) error {
	mapped := func(vs []ir.Value) []ir.Type {
		var ts []ir.Type
		for _, v := range vs {
			if _, _, k := shapeOf(v.Type()); k == kVector || k == kTensor {
				ts = append(ts, v.Type())
			}
		}
		return ts
	}
	ops, res := mapped(op.Operands()), mapped(op.Results())
	switch {
	case len(ops) == 0 && len(res) == 0:
		return nil
	case len(ops) == 0:
		return op.EmitOpError("if a result is non-scalar, then at least one operand must be non-scalar")
	case len(res) == 0:
		return op.EmitOpError("if an operand is non-scalar, then there must be at least one non-scalar result")
	case len(res) != op.NumResults():
		return op.EmitOpError("if an operand is non-scalar, then all results must be non-scalar")
	}
	all := append(ops, res...)
	_, s0, k0 := shapeOf(all[0])
	for _, t := range all[1:] {
		_, s, k := shapeOf(t)
		if k != k0 || !compatibleShapes(s, s0) || !sameScalable(t, all[0]) {
			return op.EmitOpError("all non-scalar operands/results must have the same shape and base type")
		}
	}
	return nil
}

// Semantics. The operands come in as signed numbers of width w.

var adduiExtendedSem = eval.IntBinary2("", func(x, y int64, w int) (int64, int64, bool) {
	ux, uy := eval.Unsigned(x, w), eval.Unsigned(y, w)
	sum, carry := bits.Add64(ux, uy, 0)
	if w < 64 {
		carry = sum >> uint(w) & 1
	}
	return int64(sum), int64(carry), true
})

// mului and mulsi: the 2w-bit product's bits [0, w) and [w, 2w).
var (
	mului = eval.IntBinary2("", func(x, y int64, w int) (int64, int64, bool) {
		hi, lo := bits.Mul64(eval.Unsigned(x, w), eval.Unsigned(y, w))
		return int64(lo), highHalf(hi, lo, w), true
	})
	mulsi = eval.IntBinary2("", func(x, y int64, w int) (int64, int64, bool) {
		// The signed 128-bit product of the sign-extended operands: the
		// unsigned one, less 2^64·y where x < 0 and 2^64·x where y < 0.
		hi, lo := bits.Mul64(uint64(x), uint64(y))
		if x < 0 {
			hi -= uint64(y)
		}
		if y < 0 {
			hi -= uint64(x)
		}
		return int64(lo), highHalf(hi, lo, w), true
	})
)

// highHalf returns bits [w, w+64) of the 128-bit number hi:lo (the high
// half of a w-bit product, once wrapped to w bits).
func highHalf(hi, lo uint64, w int) int64 {
	if w >= 64 {
		return int64(hi)
	}
	return int64(hi<<uint(64-w) | lo>>uint(w))
}

// Folding: constants through the semantics, and upstream's identities
// (either operand, as both ops are commutative): addui_extended(x, 0) is
// (x, false); mului_extended(x, 1) is (x, 0); both multiplications by 0
// are (0, 0).

// constOperand returns the other operand and the value of a constant one
// (the right one first).
func constOperand(op *ir.Operation, operands []ir.Attribute) (x ir.Value, c int64, ok bool) {
	if c, ok := intConst(operands[1]); ok {
		return op.Operand(0), c, true
	}
	if c, ok := intConst(operands[0]); ok {
		return op.Operand(1), c, true
	}
	return nil, 0, false
}

func foldAll(op *ir.Operation, operands []ir.Attribute) []any {
	var out []any
	for _, a := range eval.FoldAll(op, operands) {
		out = append(out, a)
	}
	return out
}

func foldAddUIExtended(op *ir.Operation, operands []ir.Attribute) []any {
	if r := foldAll(op, operands); r != nil {
		return r
	}
	if x, c, ok := constOperand(op, operands); ok && c == 0 {
		if f := eval.ToAttr(ir.Lane{}, op.Result(1).Type()); f != nil {
			return []any{x, f}
		}
	}
	return nil
}

func foldMulExtended(op *ir.Operation, operands []ir.Attribute) []any {
	if r := foldAll(op, operands); r != nil {
		return r
	}
	x, c, ok := constOperand(op, operands)
	zero := eval.ToAttr(ir.Lane{}, op.Result(0).Type())
	switch {
	case !ok || zero == nil:
	case c == 0:
		return []any{zero, zero}
	case c == 1 && op.Name() == "arith.mului_extended":
		return []any{x, zero}
	}
	return nil
}
