package arith

import (
	"math"

	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/ir/eval"
)

// Folding: constant operands are evaluated through the ops' semantics
// (semantics.go, via eval.Fold); what is here are the identities that fold
// an op with one constant operand, or none, to one of its operands or a
// constant (x+0, x*1, x&x, ...). Constants are scalars or splats.

// intConst returns the value of an integer scalar or splat constant (as
// held: i1 0 or 1, others sign-extended).
func intConst(a ir.Attribute) (int64, bool) {
	l, isInt, ok := eval.FromAttr(a)
	return l.I, ok && isInt
}

// floatConst returns the value of a float scalar or splat constant.
func floatConst(a ir.Attribute) (float64, bool) {
	l, isInt, ok := eval.FromAttr(a)
	return l.F, ok && !isInt
}

// folded returns the fold of op's constant operands as a fold result.
func folded(op *ir.Operation, operands []ir.Attribute) []any {
	var out []any
	for _, a := range eval.FoldAll(op, operands) {
		out = append(out, a)
	}
	return out
}

func widthOf(v ir.Value) int { return ir.BitWidth(ir.ElementTypeOrSelf(v.Type())) }

func mask(v int64, w int) uint64 {
	if w >= 64 {
		return uint64(v)
	}
	return uint64(v) & (1<<uint(w) - 1)
}

func allOnes(v int64, w int) bool { return mask(v, w) == mask(-1, w) }

func one(x any) []any { return []any{x} }

// intBinary folds two integer constants, or tries the identities in ident.
func intBinary(ident func(op *ir.Operation, x ir.Value, rhs int64, hasRHS bool) any) func(*ir.Operation, []ir.Attribute) []any {
	return func(op *ir.Operation, operands []ir.Attribute) []any {
		w := widthOf(op.Result(0))
		if w == 0 || w > 64 {
			return nil
		}
		_, okA := intConst(operands[0])
		b, okB := intConst(operands[1])
		if okA && okB {
			return folded(op, operands)
		}
		if ident != nil {
			if x := ident(op, op.Operand(0), b, okB); x != nil {
				return one(x)
			}
			// Commutative ops: the same identities with the constant on the left.
			if a, _ := intConst(operands[0]); okA && !okB && op.HasTrait(ir.Commutative) {
				if x := ident(op, op.Operand(1), a, true); x != nil {
					return one(x)
				}
			}
		}
		return nil
	}
}

func zeroOf(op *ir.Operation) any {
	if r := eval.ToAttr(ir.Lane{}, op.Result(0).Type()); r != nil {
		return r
	}
	return nil
}

func sameOperands(op *ir.Operation) bool { return op.Operand(0) == op.Operand(1) }

var binaryFolders = map[string]func(*ir.Operation, []ir.Attribute) []any{
	"arith.addi": intBinary(rightIdentity(0)),
	"arith.subi": intBinary(func(op *ir.Operation, x ir.Value, r int64, ok bool) any {
		if ok && r == 0 {
			return x
		}
		if sameOperands(op) {
			return zeroOf(op)
		}
		return nil
	}),
	"arith.muli": intBinary(func(op *ir.Operation, x ir.Value, r int64, ok bool) any {
		if ok && r == 1 {
			return x
		}
		if ok && r == 0 {
			return zeroOf(op)
		}
		return nil
	}),
	"arith.divui":      intBinary(rightIdentity(1)),
	"arith.divsi":      intBinary(rightIdentity(1)),
	"arith.ceildivui":  intBinary(rightIdentity(1)),
	"arith.ceildivsi":  intBinary(rightIdentity(1)),
	"arith.floordivsi": intBinary(rightIdentity(1)),
	"arith.remui":      intBinary(remIdent),
	"arith.remsi":      intBinary(remIdent),
	"arith.andi": intBinary(func(op *ir.Operation, x ir.Value, r int64, ok bool) any {
		switch {
		case sameOperands(op):
			return x
		case ok && r == 0:
			return zeroOf(op)
		case ok && allOnes(r, widthOf(op.Result(0))):
			return x
		}
		return nil
	}),
	"arith.ori": intBinary(func(op *ir.Operation, x ir.Value, r int64, ok bool) any {
		switch {
		case sameOperands(op):
			return x
		case ok && r == 0:
			return x
		case ok && allOnes(r, widthOf(op.Result(0))):
			return eval.ToAttr(ir.Lane{I: -1}, op.Result(0).Type())
		}
		return nil
	}),
	"arith.xori": intBinary(func(op *ir.Operation, x ir.Value, r int64, ok bool) any {
		switch {
		case sameOperands(op):
			return zeroOf(op)
		case ok && r == 0:
			return x
		}
		return nil
	}),
	"arith.shli":  intBinary(rightIdentity(0)),
	"arith.shrui": intBinary(rightIdentity(0)),
	"arith.shrsi": intBinary(rightIdentity(0)),
	"arith.maxsi": intBinary(sameIdent),
	"arith.minsi": intBinary(sameIdent),
	"arith.maxui": intBinary(sameIdent),
	"arith.minui": intBinary(sameIdent),
	// x + -0 = x and x - +0 = x (x + +0 is not x for x = -0).
	"arith.addf": floatBinary(func(op *ir.Operation, r float64, ok bool) any {
		if ok && r == 0 && math.Signbit(r) {
			return op.Operand(0)
		}
		return nil
	}),
	"arith.subf": floatBinary(func(op *ir.Operation, r float64, ok bool) any {
		if ok && r == 0 && !math.Signbit(r) {
			return op.Operand(0)
		}
		return nil
	}),
	"arith.mulf":     floatBinary(oneIdent),
	"arith.divf":     floatBinary(oneIdent),
	"arith.maximumf": identityFold(func(c float64) bool { return math.IsInf(c, -1) }),
	"arith.minimumf": identityFold(func(c float64) bool { return math.IsInf(c, 1) }),
	"arith.maxnumf":  identityFold(math.IsNaN),
	"arith.minnumf":  identityFold(math.IsNaN),
	"arith.remf":     floatBinary(func(*ir.Operation, float64, bool) any { return nil }),
}

// identityFold folds the commutative float min/max ops: constants, x op x
// = x, and x op c = x for a constant identity c on either side (-inf for
// maximumf, NaN for maxnumf, ...).
func identityFold(identity func(c float64) bool) func(*ir.Operation, []ir.Attribute) []any {
	return func(op *ir.Operation, operands []ir.Attribute) []any {
		a, okA := floatConst(operands[0])
		b, okB := floatConst(operands[1])
		switch {
		case okA && okB:
			return folded(op, operands)
		case sameOperands(op), okB && identity(b):
			return one(op.Operand(0))
		case okA && identity(a):
			return one(op.Operand(1))
		}
		return nil
	}
}

func oneIdent(op *ir.Operation, r float64, ok bool) any {
	if ok && r == 1 {
		return op.Operand(0)
	}
	return nil
}

// rightIdentity folds x op c to x (x + 0, x / 1, x << 0).
func rightIdentity(c int64) func(*ir.Operation, ir.Value, int64, bool) any {
	return func(_ *ir.Operation, x ir.Value, r int64, ok bool) any {
		if ok && r == c {
			return x
		}
		return nil
	}
}

func remIdent(op *ir.Operation, x ir.Value, r int64, ok bool) any {
	if ok && r == 1 {
		return zeroOf(op)
	}
	return nil
}

func sameIdent(op *ir.Operation, _ ir.Value, _ int64, _ bool) any {
	if sameOperands(op) {
		return op.Operand(0)
	}
	return nil
}

// floatBinary folds two float constants, or tries the identities in ident.
func floatBinary(ident func(op *ir.Operation, rhs float64, hasRHS bool) any) func(*ir.Operation, []ir.Attribute) []any {
	return func(op *ir.Operation, operands []ir.Attribute) []any {
		_, okA := floatConst(operands[0])
		b, okB := floatConst(operands[1])
		if okA && okB {
			return folded(op, operands)
		}
		if x := ident(op, b, okB); x != nil {
			return one(x)
		}
		return nil
	}
}

func foldNegf(op *ir.Operation, operands []ir.Attribute) []any {
	if r := folded(op, operands); r != nil {
		return r
	}
	// negf(negf(x)) = x
	if d := op.Operand(0).DefiningOp(); d != nil && d.Name() == "arith.negf" {
		return one(d.Operand(0))
	}
	return nil
}

func boolResult(op *ir.Operation, v bool) []any {
	if r := eval.ToAttr(boolLane(v), op.Result(0).Type()); r != nil {
		return one(r)
	}
	return nil
}

func predOf(op *ir.Operation) int64 {
	if ia, ok := op.Attr("predicate").(*ir.IntegerAttr); ok {
		return ia.Int()
	}
	return -1
}

// foldCmp folds the predicates that do not depend on the operands (cmpf
// false and true; cmpi of a value with itself), then constants.
func foldCmp(op *ir.Operation, operands []ir.Attribute) []any {
	p := predOf(op)
	if op.Name() == "arith.cmpf" {
		switch p {
		case 0:
			return boolResult(op, false)
		case 15:
			return boolResult(op, true)
		}
		return folded(op, operands)
	}
	if sameOperands(op) {
		switch p {
		case 0, 3, 5, 7, 9:
			return boolResult(op, true)
		case 1, 2, 4, 6, 8:
			return boolResult(op, false)
		}
	}
	return folded(op, operands)
}

// CmpI evaluates the arith.cmpi predicate pred (0 eq, 1 ne, 2 slt, 3 sle,
// 4 sgt, 5 sge, 6 ult, 7 ule, 8 ugt, 9 uge) on a and b, w-bit values as
// signed numbers. ok is false for an unknown predicate.
func CmpI(pred int64, a, b int64, w int) (result, ok bool) {
	ua, ub := mask(a, w), mask(b, w)
	switch pred {
	case 0:
		return a == b, true
	case 1:
		return a != b, true
	case 2:
		return a < b, true
	case 3:
		return a <= b, true
	case 4:
		return a > b, true
	case 5:
		return a >= b, true
	case 6:
		return ua < ub, true
	case 7:
		return ua <= ub, true
	case 8:
		return ua > ub, true
	case 9:
		return ua >= ub, true
	}
	return false, false
}

// cmpFloat evaluates a cmpf predicate: ordered predicates are false when
// either operand is NaN, unordered ones true.
func cmpFloat(p int64, a, b float64) bool {
	uno := math.IsNaN(a) || math.IsNaN(b)
	switch p {
	case 1:
		return !uno && a == b
	case 2:
		return !uno && a > b
	case 3:
		return !uno && a >= b
	case 4:
		return !uno && a < b
	case 5:
		return !uno && a <= b
	case 6:
		return !uno && a != b
	case 7:
		return !uno
	case 8:
		return uno || a == b
	case 9:
		return uno || a > b
	case 10:
		return uno || a >= b
	case 11:
		return uno || a < b
	case 12:
		return uno || a <= b
	case 13:
		return uno || a != b
	case 14:
		return uno
	case 15:
		return true
	}
	return false
}

func foldSelect(op *ir.Operation, operands []ir.Attribute) []any {
	if op.Operand(1) == op.Operand(2) {
		return one(op.Operand(1))
	}
	if c, ok := intConst(operands[0]); ok {
		if c&1 != 0 {
			return one(op.Operand(1))
		}
		return one(op.Operand(2))
	}
	return nil
}

// foldCast folds a cast of a constant; a bitcast to its own type is its
// operand.
func foldCast(op *ir.Operation, operands []ir.Attribute) []any {
	if op.Name() == "arith.bitcast" && op.Operand(0).Type() == op.Result(0).Type() {
		return one(op.Operand(0))
	}
	return folded(op, operands)
}

// materialize creates arith.constant ops for folded integer, index, float
// and dense values.
func materialize(b *ir.Builder, a ir.Attribute, t ir.Type) *ir.Operation {
	switch a.(type) {
	case *ir.IntegerAttr, *ir.FloatAttr, *ir.DenseAttr:
	default:
		return nil
	}
	if ta, ok := a.(ir.TypedAttr); !ok || ta.Type() != t {
		return nil
	}
	return b.CreateOp("arith.constant", nil, []ir.Type{t}, ir.NamedAttr{Name: "value", Value: a})
}
