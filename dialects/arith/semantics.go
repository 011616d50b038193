package arith

import (
	"fmt"
	"math"

	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/ir/eval"
)

// What each arith op computes (ir.Semantics), referenced from the
// definitions in ops.go. Folding (fold.go), the interpreters, the emulator
// and the host evaluate arith ops only through these. Integer lanes come
// in as signed numbers of the op's width; results are wrapped to it.

func intOp(f func(x, y int64, w int) (int64, bool)) *ir.Semantics { return eval.IntBinary("", f) }

var (
	addiSem  = intOp(func(x, y int64, _ int) (int64, bool) { return x + y, true })
	subiSem  = intOp(func(x, y int64, _ int) (int64, bool) { return x - y, true })
	muliSem  = intOp(func(x, y int64, _ int) (int64, bool) { return x * y, true })
	andiSem  = intOp(func(x, y int64, _ int) (int64, bool) { return x & y, true })
	oriSem   = intOp(func(x, y int64, _ int) (int64, bool) { return x | y, true })
	xoriSem  = intOp(func(x, y int64, _ int) (int64, bool) { return x ^ y, true })
	maxsiSem = intOp(func(x, y int64, _ int) (int64, bool) { return max(x, y), true })
	minsiSem = intOp(func(x, y int64, _ int) (int64, bool) { return min(x, y), true })
	maxuiSem = intOp(func(x, y int64, w int) (int64, bool) {
		return int64(max(eval.Unsigned(x, w), eval.Unsigned(y, w))), true
	})
	minuiSem = intOp(func(x, y int64, w int) (int64, bool) {
		return int64(min(eval.Unsigned(x, w), eval.Unsigned(y, w))), true
	})

	// Shifts by the width or more are poison.
	shliSem = eval.IntBinary("a shift by the bit width or more", func(x, y int64, w int) (int64, bool) {
		n := eval.Unsigned(y, w)
		return x << n, n < uint64(w)
	})
	shruiSem = eval.IntBinary("a shift by the bit width or more", func(x, y int64, w int) (int64, bool) {
		n := eval.Unsigned(y, w)
		return int64(eval.Unsigned(x, w) >> n), n < uint64(w)
	})
	shrsiSem = eval.IntBinary("a shift by the bit width or more", func(x, y int64, w int) (int64, bool) {
		n := eval.Unsigned(y, w)
		return x >> n, n < uint64(w)
	})

	// Division by zero is undefined behaviour, and so is the signed
	// quotient that overflows (the most negative value divided by -1).
	divuiSem = eval.IntBinary("division by zero", func(x, y int64, w int) (int64, bool) {
		if eval.Unsigned(y, w) == 0 {
			return 0, false
		}
		return int64(eval.Unsigned(x, w) / eval.Unsigned(y, w)), true
	})
	ceildivuiSem = eval.IntBinary("division by zero", func(x, y int64, w int) (int64, bool) {
		ux, uy := eval.Unsigned(x, w), eval.Unsigned(y, w)
		if uy == 0 {
			return 0, false
		}
		q := ux / uy
		if ux%uy != 0 {
			q++
		}
		return int64(q), true
	})
	remuiSem = eval.IntBinary("division by zero", func(x, y int64, w int) (int64, bool) {
		if eval.Unsigned(y, w) == 0 {
			return 0, false
		}
		return int64(eval.Unsigned(x, w) % eval.Unsigned(y, w)), true
	})
	divsiSem = eval.IntBinary(divsiUndefined, divsiRounded)
	remsiSem = eval.IntBinary("division by zero", func(x, y int64, w int) (int64, bool) {
		switch y {
		case 0:
			return 0, false
		case -1:
			return 0, true // also for the most negative value, whose quotient overflows
		}
		return x % y, true
	})
)

// ceildivsi and floordivsi round the quotient up or down: the truncated
// quotient moves by one when the remainder is not zero and the exact
// quotient is positive (ceil) or negative (floor). Undefined where divsi
// is.
var (
	ceildivsiSem = eval.IntBinary(divsiUndefined, func(x, y int64, w int) (int64, bool) {
		q, ok := divsiRounded(x, y, w)
		if ok && x%y != 0 && (x < 0) == (y < 0) {
			q++
		}
		return q, ok
	})
	floordivsiSem = eval.IntBinary(divsiUndefined, func(x, y int64, w int) (int64, bool) {
		q, ok := divsiRounded(x, y, w)
		if ok && x%y != 0 && (x < 0) != (y < 0) {
			q--
		}
		return q, ok
	})
)

const divsiUndefined = "division by zero, or of the most negative value by -1"

// divsiRounded is the quotient rounded toward zero, and false where it is
// undefined.
func divsiRounded(x, y int64, w int) (int64, bool) {
	if y == 0 || (y == -1 && x == minSigned(w)) {
		return 0, false
	}
	return x / y, true
}

// minSigned is the most negative w-bit signed number.
func minSigned(w int) int64 { return -1 << uint(w-1) }

func floatOp(f func(x, y float64) float64) *ir.Semantics { return eval.FloatBinary(f) }

var (
	addfSem = floatOp(func(x, y float64) float64 { return x + y })
	subfSem = floatOp(func(x, y float64) float64 { return x - y })
	mulfSem = floatOp(func(x, y float64) float64 { return x * y })
	divfSem = floatOp(func(x, y float64) float64 { return x / y })
	// maximumf and minimumf propagate NaN and order -0 below +0.
	maximumfSem = floatOp(eval.Maximum)
	minimumfSem = floatOp(eval.Minimum)
	negfSem     = eval.FloatUnary(func(x float64) float64 { return -x })
	// remf is C's fmod: x - n·y with n = x/y rounded toward zero, exact
	// (the sign of x; NaN for an infinite x or a zero y; x for an
	// infinite y), as math.Mod computes it.
	remfSem = floatOp(math.Mod)
	// maxnumf and minnumf are IEEE maxNum and minNum: a NaN operand gives
	// the other operand; -0 orders below +0, as upstream's folding does.
	maxnumfSem = floatOp(func(x, y float64) float64 { return numberOp(x, y, math.Max) })
	minnumfSem = floatOp(func(x, y float64) float64 { return numberOp(x, y, math.Min) })
)

// numberOp applies math.Max or math.Min ignoring a NaN operand.
func numberOp(x, y float64, f func(x, y float64) float64) float64 {
	switch {
	case math.IsNaN(x):
		return y
	case math.IsNaN(y):
		return x
	}
	return f(x, y)
}

func boolLane(b bool) ir.Lane {
	if b {
		return ir.Lane{I: 1}
	}
	return ir.Lane{}
}

func predicate(op *ir.Operation, n int) (int64, error) {
	p, ok := ir.AttrInt(op.Attr("predicate"))
	if !ok || p < 0 || p >= int64(n) {
		return 0, fmt.Errorf("unknown predicate %s", op.Attr("predicate"))
	}
	return p, nil
}

var cmpiSem = &ir.Semantics{Lane: func(op *ir.Operation) (ir.LaneFunc, error) {
	w, err := eval.IntWidth(op.Operand(0).Type())
	if err != nil {
		return nil, err
	}
	p, err := predicate(op, len(cmpIPredicates))
	if err != nil {
		return nil, err
	}
	return func(x, y, _ ir.Lane) (ir.Lane, bool) {
		r, _ := CmpI(p, eval.Signed(x.I, w), eval.Signed(y.I, w), w)
		return boolLane(r), true
	}, nil
}}

var cmpfSem = &ir.Semantics{Lane: func(op *ir.Operation) (ir.LaneFunc, error) {
	if _, err := eval.FloatKind(op.Operand(0).Type()); err != nil {
		return nil, err
	}
	p, err := predicate(op, len(cmpFPredicates))
	if err != nil {
		return nil, err
	}
	return func(x, y, _ ir.Lane) (ir.Lane, bool) { return boolLane(cmpFloat(p, x.F, y.F)), true }, nil
}}

// selectSem picks a whole lane, integer or float.
var selectSem = &ir.Semantics{Lane: func(op *ir.Operation) (ir.LaneFunc, error) {
	return func(c, t, f ir.Lane) (ir.Lane, bool) {
		if c.I&1 != 0 {
			return t, true
		}
		return f, true
	}, nil
}}

// intCast is the semantics of an integer-to-integer cast: f maps the
// operand (as held: i1 0 or 1, others sign-extended) of width in to the
// result, which is then wrapped to the width out.
func intCast(f func(x int64, in int) int64) *ir.Semantics {
	return &ir.Semantics{Lane: func(op *ir.Operation) (ir.LaneFunc, error) {
		in, err := eval.IntWidth(op.Operand(0).Type())
		if err != nil {
			return nil, err
		}
		out, err := eval.IntWidth(op.Result(0).Type())
		if err != nil {
			return nil, err
		}
		return func(x, _, _ ir.Lane) (ir.Lane, bool) { return ir.Lane{I: eval.Wrap(f(x.I, in), out)}, true }, nil
	}}
}

var (
	signExtend = intCast(func(x int64, in int) int64 { return eval.Signed(x, in) })
	zeroExtend = intCast(func(x int64, in int) int64 { return int64(eval.Unsigned(x, in)) })
	truncate   = intCast(func(x int64, _ int) int64 { return x })
)

// extfSem: every value of a narrower format is exact in a wider one.
var extfSem = &ir.Semantics{Lane: func(op *ir.Operation) (ir.LaneFunc, error) {
	if _, err := eval.FloatKind(op.Result(0).Type()); err != nil {
		return nil, err
	}
	return func(x, _, _ ir.Lane) (ir.Lane, bool) { return x, true }, nil
}}

var truncfSem = &ir.Semantics{Lane: func(op *ir.Operation) (ir.LaneFunc, error) {
	if m := op.Attr("roundingmode"); m != nil {
		if n, _ := ir.AttrInt(m); n != 0 {
			return nil, fmt.Errorf("rounding mode %s is not evaluated (only to_nearest_even)", m)
		}
	}
	k, err := eval.FloatKind(op.Result(0).Type())
	if err != nil {
		return nil, err
	}
	return func(x, _, _ ir.Lane) (ir.Lane, bool) { return ir.Lane{F: eval.Round(x.F, k)}, true }, nil
}}

// intToFloatSem converts signed (sitofp) or unsigned (uitofp) integers,
// rounding once to the result's format.
func intToFloatSem(signed bool) *ir.Semantics {
	return &ir.Semantics{Lane: func(op *ir.Operation) (ir.LaneFunc, error) {
		in, err := eval.IntWidth(op.Operand(0).Type())
		if err != nil {
			return nil, err
		}
		k, err := eval.FloatKind(op.Result(0).Type())
		if err != nil {
			return nil, err
		}
		return func(x, _, _ ir.Lane) (ir.Lane, bool) {
			if signed {
				if s := eval.Signed(x.I, in); s < 0 {
					return ir.Lane{F: eval.IntToFloat(true, uint64(-s), k)}, true
				}
			}
			return ir.Lane{F: eval.IntToFloat(false, eval.Unsigned(x.I, in), k)}, true
		}, nil
	}}
}

// floatToIntSem converts toward zero. A value whose integer part is out of
// the result's range, or NaN, gives poison; on the GPU (cvt.rzi) it
// saturates to the range and NaN gives 0.
func floatToIntSem(signed bool) *ir.Semantics {
	compile := func(saturate bool) func(op *ir.Operation) (ir.LaneFunc, error) {
		return func(op *ir.Operation) (ir.LaneFunc, error) {
			w, err := eval.IntWidth(op.Result(0).Type())
			if err != nil {
				return nil, err
			}
			lo, hi := 0.0, math.Ldexp(1, w)
			if signed {
				lo, hi = math.Ldexp(-1, w-1), math.Ldexp(1, w-1)
			}
			return func(x, _, _ ir.Lane) (ir.Lane, bool) {
				t := math.Trunc(x.F)
				switch {
				case t >= lo && t < hi:
				case !saturate:
					return ir.Lane{}, false
				case t != t:
					return ir.Lane{}, true
				case t < lo:
					t = lo
				case signed:
					return ir.Lane{I: eval.Wrap(int64(uint64(1)<<uint(w-1)-1), w)}, true
				default:
					return ir.Lane{I: eval.Wrap(-1, w)}, true // all ones
				}
				if t >= math.Ldexp(1, 63) {
					return ir.Lane{I: eval.Wrap(int64(uint64(t)), w)}, true
				}
				return ir.Lane{I: eval.Wrap(int64(t), w)}, true
			}, nil
		}
	}
	return &ir.Semantics{Lane: compile(false), GPU: compile(true), Undefined: "NaN, or a value out of the result's range"}
}

// bitcastSem reinterprets the bits of an integer or float of one width as
// another type of the same width.
var bitcastSem = &ir.Semantics{Lane: func(op *ir.Operation) (ir.LaneFunc, error) {
	src, dst := ir.ElementTypeOrSelf(op.Operand(0).Type()), ir.ElementTypeOrSelf(op.Result(0).Type())
	w := ir.BitWidth(src)
	if w == 0 || w > 64 {
		return nil, fmt.Errorf("values of type %s are not evaluated", src)
	}
	toBits := func(x ir.Lane) uint64 { return eval.Unsigned(x.I, w) }
	if sf, ok := src.(*ir.FloatType); ok {
		toBits = func(x ir.Lane) uint64 { return ir.FloatToBits(x.F, sf.Kind) }
	}
	if df, ok := dst.(*ir.FloatType); ok {
		return func(x, _, _ ir.Lane) (ir.Lane, bool) { return ir.Lane{F: ir.FloatFromBits(toBits(x), df.Kind)}, true }, nil
	}
	return func(x, _, _ ir.Lane) (ir.Lane, bool) { return ir.Lane{I: eval.Wrap(int64(toBits(x)), w)}, true }, nil
}}
