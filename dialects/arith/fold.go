package arith

import (
	"math"

	"github.com/tmac-dev/tmac/ir"
)

// A scalar constant: an integer (sign-extended from its width) or a float.
// Splat dense attributes fold like their element.
type scalar struct {
	isInt bool
	i     int64
	f     float64
}

func getScalar(a ir.Attribute) (scalar, bool) {
	switch a := a.(type) {
	case *ir.IntegerAttr:
		if a.Big != nil || ir.BitWidth(a.Type()) > 64 {
			return scalar{}, false
		}
		return scalar{isInt: true, i: a.Int()}, true
	case *ir.FloatAttr:
		return scalar{f: a.Value}, true
	case *ir.DenseAttr:
		if !a.Splat || ir.BitWidth(a.ShapedType().ElementType()) > 64 {
			return scalar{}, false
		}
		if len(a.Ints) == 1 {
			return scalar{isInt: true, i: a.Ints[0]}, true
		}
		if len(a.Floats) == 1 {
			return scalar{f: a.Floats[0]}, true
		}
	}
	return scalar{}, false
}

// build returns the attribute of type t holding s (a splat for shaped t),
// or nil if t cannot hold a constant.
func build(s scalar, t ir.Type) ir.Attribute {
	elem := ir.ElementTypeOrSelf(t)
	if st, ok := t.(ir.ShapedType); ok {
		if _, isMem := t.(*ir.MemRefType); isMem || !ir.HasStaticShape(st.Shape()) {
			return nil
		}
		if ir.IsFloat(elem) {
			return ir.DenseSplatFloat(s.f, st)
		}
		return ir.DenseSplatInt(s.i, st)
	}
	if ft, ok := elem.(*ir.FloatType); ok {
		return ir.FloatAttrOf(s.f, ft)
	}
	if ir.BitWidth(elem) > 64 {
		return nil
	}
	return ir.IntAttr(s.i, elem)
}

func intConst(a ir.Attribute) (int64, bool) {
	s, ok := getScalar(a)
	return s.i, ok && s.isInt
}

func floatConst(a ir.Attribute) (float64, bool) {
	s, ok := getScalar(a)
	return s.f, ok && !s.isInt
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

// intBinary folds two integer constants with fn (nil result: no fold),
// after trying the identities in ident.
func intBinary(fn func(a, b int64, w int) (int64, bool), ident func(op *ir.Operation, x ir.Value, rhs int64, hasRHS bool) any) func(*ir.Operation, []ir.Attribute) []any {
	return func(op *ir.Operation, operands []ir.Attribute) []any {
		w := widthOf(op.Result(0))
		if w == 0 || w > 64 {
			return nil
		}
		a, okA := intConst(operands[0])
		b, okB := intConst(operands[1])
		if okA && okB {
			if v, ok := fn(a, b, w); ok {
				if r := build(scalar{isInt: true, i: v}, op.Result(0).Type()); r != nil {
					return one(r)
				}
			}
			return nil
		}
		if ident != nil {
			if x := ident(op, op.Operand(0), b, okB); x != nil {
				return one(x)
			}
			// Commutative ops: the same identities with the constant on the left.
			if okA && !okB && op.HasTrait(ir.Commutative) {
				if x := ident(op, op.Operand(1), a, true); x != nil {
					return one(x)
				}
			}
		}
		return nil
	}
}

func zeroOf(op *ir.Operation) any {
	if r := build(scalar{isInt: true}, op.Result(0).Type()); r != nil {
		return r
	}
	return nil
}

func sameOperands(op *ir.Operation) bool { return op.Operand(0) == op.Operand(1) }

var binaryFolders = map[string]func(*ir.Operation, []ir.Attribute) []any{
	"arith.addi": intBinary(func(a, b int64, w int) (int64, bool) { return a + b, true },
		func(op *ir.Operation, x ir.Value, r int64, ok bool) any {
			if ok && r == 0 {
				return x
			}
			return nil
		}),
	"arith.subi": intBinary(func(a, b int64, w int) (int64, bool) { return a - b, true },
		func(op *ir.Operation, x ir.Value, r int64, ok bool) any {
			if ok && r == 0 {
				return x
			}
			if sameOperands(op) {
				return zeroOf(op)
			}
			return nil
		}),
	"arith.muli": intBinary(func(a, b int64, w int) (int64, bool) { return a * b, true },
		func(op *ir.Operation, x ir.Value, r int64, ok bool) any {
			if ok && r == 1 {
				return x
			}
			if ok && r == 0 {
				return zeroOf(op)
			}
			return nil
		}),
	"arith.divui": intBinary(func(a, b int64, w int) (int64, bool) {
		if mask(b, w) == 0 {
			return 0, false
		}
		return int64(mask(a, w) / mask(b, w)), true
	}, divIdent),
	"arith.divsi": intBinary(func(a, b int64, w int) (int64, bool) {
		if b == 0 || (b == -1 && a == minInt(w)) {
			return 0, false
		}
		return a / b, true
	}, divIdent),
	"arith.ceildivui": intBinary(func(a, b int64, w int) (int64, bool) {
		ua, ub := mask(a, w), mask(b, w)
		if ub == 0 {
			return 0, false
		}
		q := ua / ub
		if ua%ub != 0 {
			q++
		}
		return int64(q), true
	}, divIdent),
	"arith.remui": intBinary(func(a, b int64, w int) (int64, bool) {
		if mask(b, w) == 0 {
			return 0, false
		}
		return int64(mask(a, w) % mask(b, w)), true
	}, remIdent),
	"arith.remsi": intBinary(func(a, b int64, w int) (int64, bool) {
		if b == 0 {
			return 0, false
		}
		if b == -1 {
			return 0, true
		}
		return a % b, true
	}, remIdent),
	"arith.andi": intBinary(func(a, b int64, w int) (int64, bool) { return a & b, true },
		func(op *ir.Operation, x ir.Value, r int64, ok bool) any {
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
	"arith.ori": intBinary(func(a, b int64, w int) (int64, bool) { return a | b, true },
		func(op *ir.Operation, x ir.Value, r int64, ok bool) any {
			switch {
			case sameOperands(op):
				return x
			case ok && r == 0:
				return x
			case ok && allOnes(r, widthOf(op.Result(0))):
				return build(scalar{isInt: true, i: -1}, op.Result(0).Type())
			}
			return nil
		}),
	"arith.xori": intBinary(func(a, b int64, w int) (int64, bool) { return a ^ b, true },
		func(op *ir.Operation, x ir.Value, r int64, ok bool) any {
			switch {
			case sameOperands(op):
				return zeroOf(op)
			case ok && r == 0:
				return x
			}
			return nil
		}),
	"arith.shli": intBinary(func(a, b int64, w int) (int64, bool) {
		if mask(b, w) >= uint64(w) {
			return 0, false
		}
		return a << mask(b, w), true
	}, shiftIdent),
	"arith.shrui": intBinary(func(a, b int64, w int) (int64, bool) {
		if mask(b, w) >= uint64(w) {
			return 0, false
		}
		return int64(mask(a, w) >> mask(b, w)), true
	}, shiftIdent),
	"arith.shrsi": intBinary(func(a, b int64, w int) (int64, bool) {
		if mask(b, w) >= uint64(w) {
			return 0, false
		}
		return a >> mask(b, w), true
	}, shiftIdent),
	"arith.maxsi": intBinary(func(a, b int64, w int) (int64, bool) { return max(a, b), true }, sameIdent),
	"arith.minsi": intBinary(func(a, b int64, w int) (int64, bool) { return min(a, b), true }, sameIdent),
	"arith.maxui": intBinary(func(a, b int64, w int) (int64, bool) {
		if mask(a, w) >= mask(b, w) {
			return a, true
		}
		return b, true
	}, sameIdent),
	"arith.minui": intBinary(func(a, b int64, w int) (int64, bool) {
		if mask(a, w) <= mask(b, w) {
			return a, true
		}
		return b, true
	}, sameIdent),
	"arith.addf": floatBinary(func(a, b float64) float64 { return a + b }, func(op *ir.Operation, r float64, ok bool) any {
		if ok && r == 0 && math.Signbit(r) {
			return op.Operand(0)
		}
		return nil
	}),
	"arith.subf": floatBinary(func(a, b float64) float64 { return a - b }, func(op *ir.Operation, r float64, ok bool) any {
		if ok && r == 0 && !math.Signbit(r) {
			return op.Operand(0)
		}
		return nil
	}),
	"arith.mulf": floatBinary(func(a, b float64) float64 { return a * b }, func(op *ir.Operation, r float64, ok bool) any {
		if ok && r == 1 {
			return op.Operand(0)
		}
		return nil
	}),
	"arith.divf": floatBinary(func(a, b float64) float64 { return a / b }, func(op *ir.Operation, r float64, ok bool) any {
		if ok && r == 1 {
			return op.Operand(0)
		}
		return nil
	}),
	"arith.maximumf": floatBinary(func(a, b float64) float64 {
		if math.IsNaN(a) || math.IsNaN(b) {
			return math.NaN()
		}
		if a == b && a == 0 {
			if math.Signbit(a) {
				return b
			}
			return a
		}
		return math.Max(a, b)
	}, func(op *ir.Operation, r float64, ok bool) any {
		if sameOperands(op) {
			return op.Operand(0)
		}
		return nil
	}),
	"arith.minimumf": floatBinary(func(a, b float64) float64 {
		if math.IsNaN(a) || math.IsNaN(b) {
			return math.NaN()
		}
		if a == b && a == 0 {
			if math.Signbit(a) {
				return a
			}
			return b
		}
		return math.Min(a, b)
	}, func(op *ir.Operation, r float64, ok bool) any {
		if sameOperands(op) {
			return op.Operand(0)
		}
		return nil
	}),
}

func minInt(w int) int64 { return -1 << uint(w-1) }

func divIdent(op *ir.Operation, x ir.Value, r int64, ok bool) any {
	if ok && r == 1 {
		return x
	}
	return nil
}

func remIdent(op *ir.Operation, x ir.Value, r int64, ok bool) any {
	if ok && r == 1 {
		return zeroOf(op)
	}
	return nil
}

func shiftIdent(op *ir.Operation, x ir.Value, r int64, ok bool) any {
	if ok && r == 0 {
		return x
	}
	return nil
}

func sameIdent(op *ir.Operation, _ ir.Value, _ int64, _ bool) any {
	if sameOperands(op) {
		return op.Operand(0)
	}
	return nil
}

func floatBinary(fn func(a, b float64) float64, ident func(op *ir.Operation, rhs float64, hasRHS bool) any) func(*ir.Operation, []ir.Attribute) []any {
	return func(op *ir.Operation, operands []ir.Attribute) []any {
		a, okA := floatConst(operands[0])
		b, okB := floatConst(operands[1])
		if okA && okB {
			if r := build(scalar{f: fn(a, b)}, op.Result(0).Type()); r != nil {
				return one(r)
			}
			return nil
		}
		if x := ident(op, b, okB); x != nil {
			return one(x)
		}
		return nil
	}
}

func foldNegf(op *ir.Operation, operands []ir.Attribute) []any {
	if a, ok := floatConst(operands[0]); ok {
		if r := build(scalar{f: -a}, op.Result(0).Type()); r != nil {
			return one(r)
		}
	}
	// negf(negf(x)) = x
	if d := op.Operand(0).DefiningOp(); d != nil && d.Name() == "arith.negf" {
		return one(d.Operand(0))
	}
	return nil
}

func boolResult(op *ir.Operation, v bool) []any {
	var i int64
	if v {
		i = 1
	}
	if r := build(scalar{isInt: true, i: i}, op.Result(0).Type()); r != nil {
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

func foldCmp(op *ir.Operation, operands []ir.Attribute) []any {
	p := predOf(op)
	if op.Name() == "arith.cmpf" {
		switch p {
		case 0:
			return boolResult(op, false)
		case 15:
			return boolResult(op, true)
		}
		a, okA := floatConst(operands[0])
		b, okB := floatConst(operands[1])
		if !okA || !okB {
			return nil
		}
		return boolResult(op, cmpFloat(p, a, b))
	}
	w := widthOf(op.Operand(0))
	if sameOperands(op) {
		switch p {
		case 0, 3, 5, 7, 9:
			return boolResult(op, true)
		case 1, 2, 4, 6, 8:
			return boolResult(op, false)
		}
	}
	a, okA := intConst(operands[0])
	b, okB := intConst(operands[1])
	if !okA || !okB || w == 0 || w > 64 {
		return nil
	}
	r, ok := CmpI(p, a, b, w)
	if !ok {
		return nil
	}
	return boolResult(op, r)
}

// CmpI evaluates the arith.cmpi predicate pred (0 eq, 1 ne, 2 slt, 3 sle,
// 4 sgt, 5 sge, 6 ult, 7 ule, 8 ugt, 9 uge) on a and b, which hold w-bit
// values sign-extended to int64. ok is false for an unknown predicate.
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

// Cast folders: fn maps the input constant to the output constant.
func castFold(fn func(op *ir.Operation, s scalar, inW, outW int) (scalar, bool)) func(*ir.Operation, []ir.Attribute) []any {
	return func(op *ir.Operation, operands []ir.Attribute) []any {
		s, ok := getScalar(operands[0])
		if !ok {
			return nil
		}
		inW, outW := widthOf(op.Operand(0)), widthOf(op.Result(0))
		if inW > 64 || outW > 64 {
			return nil
		}
		r, ok := fn(op, s, inW, outW)
		if !ok {
			return nil
		}
		if a := build(r, op.Result(0).Type()); a != nil {
			return one(a)
		}
		return nil
	}
}

func signExt(s scalar, _ int) int64   { return s.i }
func zeroExt(s scalar, w int) int64   { return int64(mask(s.i, w)) }
func intScalar(v int64) scalar        { return scalar{isInt: true, i: v} }
func floatScalar(v float64) scalar    { return scalar{f: v} }
func isIndexValue(v ir.Value) bool    { return ir.IsIndex(ir.ElementTypeOrSelf(v.Type())) }
func roundingOf(op *ir.Operation) int { r, _ := ir.AttrInt(op.Attr("roundingmode")); return int(r) }

var castFolders = map[string]func(*ir.Operation, []ir.Attribute) []any{
	"arith.extui":  castFold(func(_ *ir.Operation, s scalar, in, _ int) (scalar, bool) { return intScalar(zeroExt(s, in)), s.isInt }),
	"arith.extsi":  castFold(func(_ *ir.Operation, s scalar, in, _ int) (scalar, bool) { return intScalar(signExt(s, in)), s.isInt }),
	"arith.trunci": castFold(func(_ *ir.Operation, s scalar, _, _ int) (scalar, bool) { return intScalar(s.i), s.isInt }),
	"arith.index_cast": castFold(func(_ *ir.Operation, s scalar, _, _ int) (scalar, bool) {
		return intScalar(s.i), s.isInt
	}),
	"arith.index_castui": castFold(func(op *ir.Operation, s scalar, in, _ int) (scalar, bool) {
		if isIndexValue(op.Operand(0)) {
			return intScalar(s.i), s.isInt
		}
		return intScalar(zeroExt(s, in)), s.isInt
	}),
	"arith.sitofp": castFold(func(_ *ir.Operation, s scalar, _, _ int) (scalar, bool) { return floatScalar(float64(s.i)), s.isInt }),
	"arith.uitofp": castFold(func(_ *ir.Operation, s scalar, in, _ int) (scalar, bool) {
		return floatScalar(float64(mask(s.i, in))), s.isInt
	}),
	"arith.fptosi": castFold(func(_ *ir.Operation, s scalar, _, out int) (scalar, bool) {
		t := math.Trunc(s.f)
		lo, hi := math.Ldexp(-1, out-1), math.Ldexp(1, out-1)
		if s.isInt || math.IsNaN(t) || t < lo || t >= hi {
			return scalar{}, false
		}
		return intScalar(int64(t)), true
	}),
	"arith.fptoui": castFold(func(_ *ir.Operation, s scalar, _, out int) (scalar, bool) {
		t := math.Trunc(s.f)
		if s.isInt || math.IsNaN(t) || t < 0 || t >= math.Ldexp(1, out) {
			return scalar{}, false
		}
		return intScalar(int64(uint64(t))), true
	}),
	"arith.extf": castFold(func(_ *ir.Operation, s scalar, _, _ int) (scalar, bool) { return s, !s.isInt }),
	"arith.truncf": castFold(func(op *ir.Operation, s scalar, _, _ int) (scalar, bool) {
		return s, !s.isInt && roundingOf(op) == 0
	}),
	"arith.bitcast": func(op *ir.Operation, operands []ir.Attribute) []any {
		if op.Operand(0).Type() == op.Result(0).Type() {
			return one(op.Operand(0))
		}
		return castFold(func(op *ir.Operation, s scalar, in, out int) (scalar, bool) {
			src := ir.ElementTypeOrSelf(op.Operand(0).Type())
			dst := ir.ElementTypeOrSelf(op.Result(0).Type())
			var bits uint64
			switch {
			case s.isInt:
				bits = mask(s.i, in)
			case floatKindBits(src) == 32:
				bits = uint64(math.Float32bits(float32(s.f)))
			case floatKindBits(src) == 64:
				bits = math.Float64bits(s.f)
			default:
				return scalar{}, false
			}
			switch {
			case ir.IsSignlessInteger(dst):
				return intScalar(int64(bits)), true
			case floatKindBits(dst) == 32:
				return floatScalar(float64(math.Float32frombits(uint32(bits)))), true
			case floatKindBits(dst) == 64:
				return floatScalar(math.Float64frombits(bits)), true
			}
			return scalar{}, false
		})(op, operands)
	},
}

// floatKindBits returns 32 for f32, 64 for f64 and 0 for other types.
func floatKindBits(t ir.Type) int {
	if ft, ok := t.(*ir.FloatType); ok {
		switch ft.Kind {
		case ir.F32:
			return 32
		case ir.F64:
			return 64
		}
	}
	return 0
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
