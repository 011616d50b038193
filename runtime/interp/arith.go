package interp

import (
	"math"

	"github.com/tmac-dev/tmac/ir"
)

// rounder returns the function rounding a float64 to the format of t, or
// nil for f64.
func rounder(t ir.Type) func(float64) float64 {
	ft, _ := t.(*ir.FloatType)
	if ft == nil {
		return nil
	}
	switch ft.Kind {
	case ir.F64:
		return nil
	case ir.F32:
		return func(v float64) float64 { return float64(float32(v)) }
	}
	k := ft.Kind
	return func(v float64) float64 { return ir.RoundToFloatKind(v, k) }
}

var cmpIPreds = []string{"eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"}
var cmpFPreds = []string{"false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord", "ueq", "ugt", "uge", "ult", "ule", "une", "uno", "true"}

func b2i(b bool) int64 {
	if b {
		return -1 // i1 true, sign-extended
	}
	return 0
}

func (fc *fcomp) arith(op *ir.Operation) (instr, error) {
	name := op.Name()
	if name == "arith.constant" {
		return fc.constant(op)
	}
	if op.NumResults() != 1 {
		return nil, opErr(op, "operation not supported by the reference interpreter")
	}
	rt := op.Result(0).Type()
	for _, v := range op.Operands() {
		if _, err := kindOf(v.Type()); err != nil {
			return nil, opErr(op, "%v", err)
		}
	}
	if _, err := kindOf(rt); err != nil {
		return nil, opErr(op, "%v", err)
	}
	d := fc.sl(op, op.Result(0))
	switch name {
	case "arith.select":
		c := fc.sl(op, op.Operand(0))
		a, b := fc.sl(op, op.Operand(1)), fc.sl(op, op.Operand(2))
		switch fc.slots[op.Result(0)].k {
		case kInt:
			return func(fr *frame) {
				if fr.i[c] != 0 {
					fr.i[d] = fr.i[a]
				} else {
					fr.i[d] = fr.i[b]
				}
			}, nil
		case kFloat:
			return func(fr *frame) {
				if fr.i[c] != 0 {
					fr.f[d] = fr.f[a]
				} else {
					fr.f[d] = fr.f[b]
				}
			}, nil
		}
		return func(fr *frame) {
			if fr.i[c] != 0 {
				fr.m[d] = fr.m[a]
			} else {
				fr.m[d] = fr.m[b]
			}
		}, nil
	case "arith.negf":
		a := fc.sl(op, op.Operand(0))
		return func(fr *frame) { fr.f[d] = -fr.f[a] }, nil
	case "arith.cmpi":
		a, b := fc.sl(op, op.Operand(0)), fc.sl(op, op.Operand(1))
		w := intWidth(op.Operand(0).Type())
		p, _ := ir.AttrInt(op.Attr("predicate"))
		if p < 0 || int(p) >= len(cmpIPreds) {
			return nil, opErr(op, "unknown predicate %d", p)
		}
		var f func(x, y int64) bool
		switch cmpIPreds[p] {
		case "eq":
			f = func(x, y int64) bool { return x == y }
		case "ne":
			f = func(x, y int64) bool { return x != y }
		case "slt":
			return func(fr *frame) { fr.i[d] = b2i(fr.i[a] < fr.i[b]) }, nil
		case "sle":
			return func(fr *frame) { fr.i[d] = b2i(fr.i[a] <= fr.i[b]) }, nil
		case "sgt":
			f = func(x, y int64) bool { return x > y }
		case "sge":
			f = func(x, y int64) bool { return x >= y }
		case "ult":
			f = func(x, y int64) bool { return zext(x, w) < zext(y, w) }
		case "ule":
			f = func(x, y int64) bool { return zext(x, w) <= zext(y, w) }
		case "ugt":
			f = func(x, y int64) bool { return zext(x, w) > zext(y, w) }
		case "uge":
			f = func(x, y int64) bool { return zext(x, w) >= zext(y, w) }
		}
		return func(fr *frame) { fr.i[d] = b2i(f(fr.i[a], fr.i[b])) }, nil
	case "arith.cmpf":
		a, b := fc.sl(op, op.Operand(0)), fc.sl(op, op.Operand(1))
		p, _ := ir.AttrInt(op.Attr("predicate"))
		if p < 0 || int(p) >= len(cmpFPreds) {
			return nil, opErr(op, "unknown predicate %d", p)
		}
		f := cmpF(cmpFPreds[p])
		return func(fr *frame) { fr.i[d] = b2i(f(fr.f[a], fr.f[b])) }, nil
	}
	if op.NumOperands() == 1 {
		return fc.cast(op, d)
	}
	if op.NumOperands() == 3 {
		return nil, opErr(op, "operation not supported by the reference interpreter")
	}
	a, b := fc.sl(op, op.Operand(0)), fc.sl(op, op.Operand(1))
	if ir.IsFloat(rt) {
		return fc.floatBinary(op, rt, a, b, d)
	}
	w := intWidth(rt)
	var f func(x, y int64) int64
	switch name {
	case "arith.addi":
		if w == 64 {
			return func(fr *frame) { fr.i[d] = fr.i[a] + fr.i[b] }, nil
		}
		f = func(x, y int64) int64 { return x + y }
	case "arith.subi":
		if w == 64 {
			return func(fr *frame) { fr.i[d] = fr.i[a] - fr.i[b] }, nil
		}
		f = func(x, y int64) int64 { return x - y }
	case "arith.muli":
		if w == 64 {
			return func(fr *frame) { fr.i[d] = fr.i[a] * fr.i[b] }, nil
		}
		f = func(x, y int64) int64 { return x * y }
	case "arith.andi":
		f = func(x, y int64) int64 { return x & y }
	case "arith.ori":
		f = func(x, y int64) int64 { return x | y }
	case "arith.xori":
		f = func(x, y int64) int64 { return x ^ y }
	case "arith.maxsi":
		f = func(x, y int64) int64 { return max(x, y) }
	case "arith.minsi":
		f = func(x, y int64) int64 { return min(x, y) }
	case "arith.maxui":
		f = func(x, y int64) int64 { return int64(max(zext(x, w), zext(y, w))) }
	case "arith.minui":
		f = func(x, y int64) int64 { return int64(min(zext(x, w), zext(y, w))) }
	case "arith.shli":
		f = func(x, y int64) int64 {
			if zext(y, w) >= uint64(w) {
				return 0 // poison upstream
			}
			return x << uint(y)
		}
	case "arith.shrui":
		f = func(x, y int64) int64 {
			if zext(y, w) >= uint64(w) {
				return 0
			}
			return int64(zext(x, w) >> uint(y))
		}
	case "arith.shrsi":
		f = func(x, y int64) int64 {
			if zext(y, w) >= uint64(w) {
				return x >> 63
			}
			return x >> uint(y)
		}
	case "arith.divsi", "arith.remsi", "arith.ceildivsi", "arith.floordivsi":
		return func(fr *frame) {
			x, y := fr.i[a], fr.i[b]
			if y == 0 {
				fail(op, "division by zero")
			}
			fr.i[d] = sext(sdiv(name, x, y), w)
		}, nil
	case "arith.divui", "arith.remui", "arith.ceildivui":
		return func(fr *frame) {
			x, y := zext(fr.i[a], w), zext(fr.i[b], w)
			if y == 0 {
				fail(op, "division by zero")
			}
			var r uint64
			switch name {
			case "arith.divui":
				r = x / y
			case "arith.remui":
				r = x % y
			default:
				r = x / y
				if x%y != 0 {
					r++
				}
			}
			fr.i[d] = sext(int64(r), w)
		}, nil
	default:
		return nil, opErr(op, "operation not supported by the reference interpreter")
	}
	return func(fr *frame) { fr.i[d] = sext(f(fr.i[a], fr.i[b]), w) }, nil
}

// sdiv implements the signed divisions on sign-extended values (the
// overflow of MIN / -1 wraps after truncation to the width).
func sdiv(name string, x, y int64) int64 {
	if y == -1 {
		switch name {
		case "arith.remsi":
			return 0
		default:
			return -x
		}
	}
	q, r := x/y, x%y
	switch name {
	case "arith.remsi":
		return r
	case "arith.ceildivsi":
		if r != 0 && (r > 0) == (y > 0) {
			q++
		}
	case "arith.floordivsi":
		if r != 0 && (r < 0) != (y < 0) {
			q--
		}
	}
	return q
}

func cmpF(p string) func(x, y float64) bool {
	uno := func(x, y float64) bool { return x != x || y != y }
	switch p {
	case "false":
		return func(x, y float64) bool { return false }
	case "true":
		return func(x, y float64) bool { return true }
	case "oeq":
		return func(x, y float64) bool { return x == y }
	case "ogt":
		return func(x, y float64) bool { return x > y }
	case "oge":
		return func(x, y float64) bool { return x >= y }
	case "olt":
		return func(x, y float64) bool { return x < y }
	case "ole":
		return func(x, y float64) bool { return x <= y }
	case "one":
		return func(x, y float64) bool { return !uno(x, y) && x != y }
	case "ord":
		return func(x, y float64) bool { return !uno(x, y) }
	case "ueq":
		return func(x, y float64) bool { return uno(x, y) || x == y }
	case "ugt":
		return func(x, y float64) bool { return uno(x, y) || x > y }
	case "uge":
		return func(x, y float64) bool { return uno(x, y) || x >= y }
	case "ult":
		return func(x, y float64) bool { return uno(x, y) || x < y }
	case "ule":
		return func(x, y float64) bool { return uno(x, y) || x <= y }
	case "une":
		return func(x, y float64) bool { return x != y }
	}
	return uno // "uno"
}

func (fc *fcomp) floatBinary(op *ir.Operation, rt ir.Type, a, b, d int32) (instr, error) {
	kindF := rt.(*ir.FloatType).Kind
	if kindF == ir.F32 {
		switch op.Name() {
		case "arith.addf":
			return func(fr *frame) { fr.f[d] = float64(float32(fr.f[a] + fr.f[b])) }, nil
		case "arith.mulf":
			return func(fr *frame) { fr.f[d] = float64(float32(fr.f[a] * fr.f[b])) }, nil
		case "arith.subf":
			return func(fr *frame) { fr.f[d] = float64(float32(fr.f[a] - fr.f[b])) }, nil
		}
	}
	if kindF == ir.F64 {
		switch op.Name() {
		case "arith.addf":
			return func(fr *frame) { fr.f[d] = fr.f[a] + fr.f[b] }, nil
		case "arith.mulf":
			return func(fr *frame) { fr.f[d] = fr.f[a] * fr.f[b] }, nil
		}
	}
	var f func(x, y float64) float64
	switch op.Name() {
	case "arith.addf":
		f = func(x, y float64) float64 { return x + y }
	case "arith.subf":
		f = func(x, y float64) float64 { return x - y }
	case "arith.mulf":
		f = func(x, y float64) float64 { return x * y }
	case "arith.divf":
		f = func(x, y float64) float64 { return x / y }
	case "arith.remf":
		f = math.Mod
	case "arith.maximumf":
		f = func(x, y float64) float64 {
			if x != x || y != y {
				return math.NaN()
			}
			return math.Max(x, y)
		}
	case "arith.minimumf":
		f = func(x, y float64) float64 {
			if x != x || y != y {
				return math.NaN()
			}
			return math.Min(x, y)
		}
	case "arith.maxnumf":
		f = func(x, y float64) float64 {
			if x != x {
				return y
			}
			if y != y {
				return x
			}
			return math.Max(x, y)
		}
	case "arith.minnumf":
		f = func(x, y float64) float64 {
			if x != x {
				return y
			}
			if y != y {
				return x
			}
			return math.Min(x, y)
		}
	default:
		return nil, opErr(op, "operation not supported by the reference interpreter")
	}
	// Operands are exact in float64 (they are values of the format), so
	// one rounding of the float64 result equals the format's rounding for
	// +,-,*,/ of formats up to f32 (p <= 24 < 53/2).
	r := rounder(rt)
	if r == nil {
		return func(fr *frame) { fr.f[d] = f(fr.f[a], fr.f[b]) }, nil
	}
	return func(fr *frame) { fr.f[d] = r(f(fr.f[a], fr.f[b])) }, nil
}

func (fc *fcomp) constant(op *ir.Operation) (instr, error) {
	v := op.Result(0)
	s, err := fc.slotOf(v)
	if err != nil {
		return nil, opErr(op, "%v", err)
	}
	switch a := op.Attr("value").(type) {
	case *ir.IntegerAttr:
		if s.k != kInt {
			break
		}
		fc.constI[s.i] = sext(a.Int(), intWidth(v.Type()))
		return nil, nil
	case *ir.FloatAttr:
		if s.k != kFloat {
			break
		}
		fc.constF[s.i] = ir.RoundToFloatKind(a.Value, v.Type().(*ir.FloatType).Kind)
		return nil, nil
	}
	return nil, opErr(op, "constant %s is not supported by the reference interpreter", op.Attr("value"))
}

func (fc *fcomp) cast(op *ir.Operation, d int32) (instr, error) {
	src := op.Operand(0)
	st, dt := src.Type(), op.Result(0).Type()
	a := fc.sl(op, src)
	sw, dw := intWidth(st), intWidth(dt)
	r := rounder(dt)
	if r == nil {
		r = func(v float64) float64 { return v }
	}
	switch op.Name() {
	case "arith.extsi", "arith.index_cast":
		return func(fr *frame) { fr.i[d] = sext(fr.i[a], dw) }, nil
	case "arith.trunci":
		return func(fr *frame) { fr.i[d] = sext(fr.i[a], dw) }, nil
	case "arith.extui", "arith.index_castui":
		if sw >= dw {
			return func(fr *frame) { fr.i[d] = sext(fr.i[a], dw) }, nil
		}
		return func(fr *frame) { fr.i[d] = sext(int64(zext(fr.i[a], sw)), dw) }, nil
	case "arith.extf":
		return func(fr *frame) { fr.f[d] = fr.f[a] }, nil
	case "arith.truncf":
		if m := op.Attr("roundingmode"); m != nil {
			if n, _ := ir.AttrInt(m); n != 0 {
				return nil, opErr(op, "rounding mode %s is not supported by the reference interpreter (only to_nearest_even)", m)
			}
		}
		return func(fr *frame) { fr.f[d] = r(fr.f[a]) }, nil
	case "arith.sitofp":
		if dt.(*ir.FloatType).Kind == ir.F32 {
			return func(fr *frame) { fr.f[d] = float64(float32(fr.i[a])) }, nil
		}
		return func(fr *frame) { fr.f[d] = r(float64(fr.i[a])) }, nil
	case "arith.uitofp":
		if dt.(*ir.FloatType).Kind == ir.F32 {
			return func(fr *frame) { fr.f[d] = float64(float32(zext(fr.i[a], sw))) }, nil
		}
		return func(fr *frame) { fr.f[d] = r(float64(zext(fr.i[a], sw))) }, nil
	case "arith.fptosi":
		lo, hi := -math.Ldexp(1, dw-1), math.Ldexp(1, dw-1)
		return func(fr *frame) {
			v := math.Trunc(fr.f[a])
			switch {
			case v != v:
				fr.i[d] = 0
			case v < lo:
				fr.i[d] = sext(int64(1)<<uint(dw-1), dw)
			case v >= hi:
				fr.i[d] = sext(int64(uint64(1)<<uint(dw-1)-1), dw)
			default:
				fr.i[d] = sext(int64(v), dw)
			}
		}, nil
	case "arith.fptoui":
		hi := math.Ldexp(1, dw)
		return func(fr *frame) {
			v := math.Trunc(fr.f[a])
			switch {
			case v != v || v <= 0:
				fr.i[d] = 0
			case v >= hi:
				fr.i[d] = -1
			case v >= math.Ldexp(1, 63):
				fr.i[d] = int64(uint64(v))
			default:
				fr.i[d] = sext(int64(v), dw)
			}
		}, nil
	case "arith.bitcast":
		sf, sok := st.(*ir.FloatType)
		df, dok := dt.(*ir.FloatType)
		switch {
		case sok && dok:
			return func(fr *frame) { fr.f[d] = ir.FloatFromBits(ir.FloatToBits(fr.f[a], sf.Kind), df.Kind) }, nil
		case sok:
			return func(fr *frame) { fr.i[d] = sext(int64(ir.FloatToBits(fr.f[a], sf.Kind)), dw) }, nil
		case dok:
			return func(fr *frame) { fr.f[d] = ir.FloatFromBits(zext(fr.i[a], sw), df.Kind) }, nil
		}
		return func(fr *frame) { fr.i[d] = sext(fr.i[a], dw) }, nil
	}
	return nil, opErr(op, "operation not supported by the reference interpreter")
}

func (fc *fcomp) math(op *ir.Operation) (instr, error) {
	if op.NumResults() != 1 || !ir.IsFloat(op.Result(0).Type()) {
		for _, t := range append(op.OperandTypes(), op.ResultTypes()...) {
			if _, err := kindOf(t); err != nil {
				return nil, opErr(op, "%v", err)
			}
		}
		return nil, opErr(op, "operation not supported by the reference interpreter")
	}
	rt := op.Result(0).Type()
	d := fc.sl(op, op.Result(0))
	r := rounder(rt)
	if r == nil {
		r = func(v float64) float64 { return v }
	}
	var f func(float64) float64
	switch op.Name() {
	case "math.absf":
		a := fc.sl(op, op.Operand(0))
		return func(fr *frame) { fr.f[d] = math.Abs(fr.f[a]) }, nil
	case "math.fma":
		a, b, c := fc.sl(op, op.Operand(0)), fc.sl(op, op.Operand(1)), fc.sl(op, op.Operand(2))
		return func(fr *frame) { fr.f[d] = r(math.FMA(fr.f[a], fr.f[b], fr.f[c])) }, nil
	case "math.exp":
		f = math.Exp
	case "math.sqrt":
		f = math.Sqrt
	case "math.rsqrt":
		f = func(x float64) float64 { return 1 / math.Sqrt(x) }
	case "math.log":
		f = math.Log
	case "math.tanh":
		f = math.Tanh
	case "math.exp2":
		f = math.Exp2
	case "math.log2":
		f = math.Log2
	case "math.floor":
		f = math.Floor
	case "math.ceil":
		f = math.Ceil
	default:
		return nil, opErr(op, "operation not supported by the reference interpreter")
	}
	a := fc.sl(op, op.Operand(0))
	return func(fr *frame) { fr.f[d] = r(f(fr.f[a])) }, nil
}
