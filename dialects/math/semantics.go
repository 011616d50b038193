package math

import (
	gomath "math"
	"math/bits"

	"github.com/tmac-dev/tmac/dialects/arith"
	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/ir/eval"
)

// What each op computes (ir.Semantics): the exact result, computed in
// float64 with Go's math package and rounded once to the result's format,
// and, where the GPU computes something the emulator can reproduce that
// differs (math.exp with fastmath<afn>, math.fpowi), what the GPU
// computes. The libdevice functions and hardware approximations the other
// ops run on are accurate to the few ulps documented on each op (gpu.go);
// the emulator computes those ops exactly.

// floatFunc is a float op of one or two operands.
type floatFunc struct {
	name, summary string
	sem           *ir.Semantics
	binary        bool
	// exact: the GPU computes the correctly rounded result, so constant
	// operands fold.
	exact bool
}

var floatFuncs = []floatFunc{
	{name: "math.absf", summary: "absolute value", sem: eval.FloatUnary(gomath.Abs), exact: true},
	{name: "math.acos", summary: "arccosine", sem: eval.FloatUnary(gomath.Acos)},
	{name: "math.acosh", summary: "inverse hyperbolic cosine", sem: eval.FloatUnary(gomath.Acosh)},
	{name: "math.asin", summary: "arcsine", sem: eval.FloatUnary(gomath.Asin)},
	{name: "math.asinh", summary: "inverse hyperbolic sine", sem: eval.FloatUnary(gomath.Asinh)},
	{name: "math.atan", summary: "arctangent", sem: eval.FloatUnary(gomath.Atan)},
	{name: "math.atan2", summary: "arctangent of lhs/rhs in the quadrant of (rhs, lhs)", sem: eval.FloatBinary(gomath.Atan2), binary: true},
	{name: "math.atanh", summary: "inverse hyperbolic tangent", sem: eval.FloatUnary(gomath.Atanh)},
	{name: "math.cbrt", summary: "cube root", sem: eval.FloatUnary(gomath.Cbrt)},
	{name: "math.ceil", summary: "smallest integral value not below the operand", sem: eval.FloatUnary(gomath.Ceil), exact: true},
	{name: "math.copysign", summary: "magnitude of lhs with the sign of rhs", sem: eval.FloatBinary(gomath.Copysign), binary: true, exact: true},
	{name: "math.cos", summary: "cosine", sem: eval.FloatUnary(gomath.Cos)},
	{name: "math.cosh", summary: "hyperbolic cosine", sem: eval.FloatUnary(gomath.Cosh)},
	{name: "math.erf", summary: "error function", sem: eval.FloatUnary(gomath.Erf)},
	{name: "math.erfc", summary: "complementary error function, 1 - erf(x)", sem: eval.FloatUnary(gomath.Erfc)},
	{name: "math.exp", summary: "base-e exponential", sem: &ir.Semantics{Lane: eval.FloatUnaryLane(gomath.Exp), GPU: expGPU}},
	{name: "math.exp2", summary: "base-2 exponential", sem: &ir.Semantics{Lane: eval.FloatUnaryLane(gomath.Exp2), GPU: exp2GPU}},
	{name: "math.expm1", summary: "exp(x) - 1", sem: eval.FloatUnary(gomath.Expm1)},
	{name: "math.floor", summary: "largest integral value not above the operand", sem: eval.FloatUnary(gomath.Floor), exact: true},
	{name: "math.log", summary: "natural logarithm", sem: eval.FloatUnary(gomath.Log)},
	{name: "math.log10", summary: "base-10 logarithm", sem: eval.FloatUnary(gomath.Log10)},
	{name: "math.log1p", summary: "log(1 + x)", sem: eval.FloatUnary(gomath.Log1p)},
	{name: "math.log2", summary: "base-2 logarithm", sem: eval.FloatUnary(gomath.Log2)},
	{name: "math.powf", summary: "lhs raised to the power rhs", sem: eval.FloatBinary(gomath.Pow), binary: true},
	{name: "math.round", summary: "nearest integral value, halfway cases away from zero", sem: eval.FloatUnary(gomath.Round), exact: true},
	{name: "math.roundeven", summary: "nearest integral value, halfway cases to even", sem: eval.FloatUnary(gomath.RoundToEven), exact: true},
	{name: "math.rsqrt", summary: "reciprocal of the square root", sem: eval.FloatUnary(func(x float64) float64 { return 1 / gomath.Sqrt(x) })},
	{name: "math.sin", summary: "sine", sem: eval.FloatUnary(gomath.Sin)},
	{name: "math.sinh", summary: "hyperbolic sine", sem: eval.FloatUnary(gomath.Sinh)},
	{name: "math.sqrt", summary: "square root", sem: eval.FloatUnary(gomath.Sqrt), exact: true},
	{name: "math.tan", summary: "tangent", sem: eval.FloatUnary(gomath.Tan)},
	{name: "math.tanh", summary: "hyperbolic tangent", sem: eval.FloatUnary(gomath.Tanh)},
	{name: "math.trunc", summary: "integral part (rounded toward zero)", sem: eval.FloatUnary(gomath.Trunc), exact: true},
}

// intFunc is an integer op; all are exact on the GPU and fold.
type intFunc struct {
	name, summary, doc string
	sem                *ir.Semantics
	binary             bool
}

var intFuncs = []intFunc{
	{name: "math.absi", summary: "absolute value of a signed integer", sem: intUnarySem(func(x int64, w int) int64 {
		if x < 0 {
			return -x // the most negative value stays itself once wrapped
		}
		return x
	}), doc: "The most negative value is its own absolute value (the result wraps). On the GPU: LLVM's llvm.abs (PTX abs.s32/s64)."},
	{name: "math.ctlz", summary: "number of leading zero bits", sem: intUnarySem(func(x int64, w int) int64 {
		return int64(bits.LeadingZeros64(eval.Unsigned(x, w)) - (64 - w))
	}), doc: "Zero has w leading zeros for a w-bit integer. On the GPU: llvm.ctlz (PTX clz)."},
	{name: "math.cttz", summary: "number of trailing zero bits", sem: intUnarySem(func(x int64, w int) int64 {
		return int64(min(bits.TrailingZeros64(eval.Unsigned(x, w)), w))
	}), doc: "Zero has w trailing zeros for a w-bit integer. On the GPU: llvm.cttz (PTX brev and clz)."},
	{name: "math.ctpop", summary: "number of set bits", sem: intUnarySem(func(x int64, w int) int64 {
		return int64(bits.OnesCount64(eval.Unsigned(x, w)))
	}), doc: "On the GPU: llvm.ctpop (PTX popc)."},
	{name: "math.ipowi", summary: "signed integer lhs raised to the power rhs", binary: true, sem: eval.IntBinary("zero raised to a negative power", Ipow),
		doc: "The product wraps around at the type's width. A negative power gives 0, except for 1 (1) and -1 (1 or -1 by the power's parity); " +
			"zero to a negative power is undefined (a division by zero upstream): the interpreter and emulator report it, the GPU returns 0. " +
			"On the GPU: square-and-multiply over the power's bits."},
}

// intUnarySem is the semantics of an integer op of one operand: f gets it
// as a signed number of the result's width w (64 for index); its result is
// wrapped to w.
func intUnarySem(f func(x int64, w int) int64) *ir.Semantics {
	return eval.IntBinary("", func(x, _ int64, w int) (int64, bool) { return f(x, w), true })
}

// Ipow is math.ipowi on w-bit signed integers: x to the power n, wrapping
// at w bits, and false for zero to a negative power. The GPU lowering
// computes the same (codegen's ipowi).
func Ipow(x, n int64, w int) (int64, bool) {
	if n < 0 {
		switch {
		case x == 0:
			return 0, false
		case x == 1:
			return 1, true
		case x == -1 && n&1 != 0:
			return -1, true
		case x == -1:
			return 1, true
		}
		return 0, true
	}
	r := int64(1)
	for b := x; n != 0; n >>= 1 {
		if n&1 != 0 {
			r = eval.Wrap(r*b, w)
		}
		b = eval.Wrap(b*b, w)
	}
	return r, true
}

// classFunc is a float classification (a bool-like result).
type classFunc struct {
	name, summary string
	sem           *ir.Semantics
}

var classFuncs = []classFunc{
	{"math.isfinite", "whether the operand is finite (not infinite, not NaN)", classSem(func(x float64, _ ir.FloatKind) bool {
		return !gomath.IsInf(x, 0) && !gomath.IsNaN(x)
	})},
	{"math.isinf", "whether the operand is infinite", classSem(func(x float64, _ ir.FloatKind) bool { return gomath.IsInf(x, 0) })},
	{"math.isnan", "whether the operand is NaN", classSem(func(x float64, _ ir.FloatKind) bool { return gomath.IsNaN(x) })},
	{"math.isnormal", "whether the operand is normal (not zero, subnormal, infinite or NaN)", classSem(func(x float64, k ir.FloatKind) bool {
		a := gomath.Abs(x)
		return a >= SmallestNormal(k) && !gomath.IsInf(a, 0)
	})},
}

// SmallestNormal is the smallest positive normal number of format k.
func SmallestNormal(k ir.FloatKind) float64 {
	return ir.FloatFromBits(1<<uint(k.Precision()-1), k)
}

// classSem is the semantics of a classification: f gets the operand and
// its format.
func classSem(f func(x float64, k ir.FloatKind) bool) *ir.Semantics {
	return &ir.Semantics{Lane: func(op *ir.Operation) (ir.LaneFunc, error) {
		k, err := eval.FloatKind(op.Operand(0).Type())
		if err != nil {
			return nil, err
		}
		return func(x, _, _ ir.Lane) (ir.Lane, bool) {
			if f(x.F, k) {
				return ir.Lane{I: 1}, true
			}
			return ir.Lane{}, true
		}, nil
	}}
}

// Approx reports whether op's fastmath flags allow approximate functions
// (afn, or fast): the ops with a hardware approximation use it (gpu.go).
func Approx(op *ir.Operation) bool {
	const afn = 1 << 6 // flag order: reassoc, nnan, ninf, nsz, arcp, contract, afn
	return arith.FastMathOf(op)&afn != 0
}

// expGPU is what the GPU computes for math.exp with fastmath<afn>: 2^(x·log2
// e) with the product rounded to f32 and PTX's ex2.approx.f32 (modelled as
// exact: its own error, at most 2 ulp, is below the product's rounding
// error for |x| > 1). Without afn, libdevice's expf is within 2 ulp of the
// exact result the emulator computes.
func expGPU(op *ir.Operation) (ir.LaneFunc, error) {
	if !Approx(op) || isF64(op) {
		return eval.FloatUnaryLane(gomath.Exp)(op)
	}
	return eval.FloatUnaryLane(func(x float64) float64 {
		y := float32(float32(x) * float32(gomath.Log2E))
		return gomath.Exp2(float64(y))
	})(op)
}

// exp2GPU is what the GPU computes for math.exp2: ex2.approx.f32 (modelled
// as exact, within its 2 ulp), and with fastmath<afn> on f32
// ex2.approx.ftz.f32, which flushes subnormal results (below 2^-126) to
// +0 (a subnormal operand is 0 to it, whose 2^0 = 1 is what the exact
// result rounds to anyway).
func exp2GPU(op *ir.Operation) (ir.LaneFunc, error) {
	if !Approx(op) || isF64(op) {
		return eval.FloatUnaryLane(gomath.Exp2)(op)
	}
	return eval.FloatUnaryLane(func(x float64) float64 {
		y := gomath.Exp2(x)
		if y < 0x1p-126 {
			return 0
		}
		return y
	})(op)
}

func isF64(op *ir.Operation) bool {
	k, err := eval.FloatKind(op.Result(0).Type())
	return err == nil && k == ir.F64
}

// fpowiSem: exactly x^n; on the GPU, libdevice's powif (f32; narrower
// formats through f32) or powi (f64): square-and-multiply over the bits of
// |n| in the format, each product rounded, and 1/r (correctly rounded) for
// a negative n, with n clamped to 32 bits (FpowiExponent).
var fpowiSem = &ir.Semantics{
	Lane: func(op *ir.Operation) (ir.LaneFunc, error) {
		return fpowiLane(op, func(x float64, n int64) float64 { return gomath.Pow(x, float64(n)) })
	},
	GPU: func(op *ir.Operation) (ir.LaneFunc, error) {
		if isF64(op) {
			return fpowiLane(op, func(x float64, n int64) float64 { return powiBySquaring(x, FpowiExponent(n), ir.F64) })
		}
		return fpowiLane(op, func(x float64, n int64) float64 { return powiBySquaring(x, FpowiExponent(n), ir.F32) })
	},
}

// fpowiLane makes fpowi's lane function from pow(x, n), rounded to the
// result's format.
func fpowiLane(op *ir.Operation, pow func(x float64, n int64) float64) (ir.LaneFunc, error) {
	k, err := eval.FloatKind(op.Result(0).Type())
	if err != nil {
		return nil, err
	}
	w, err := eval.IntWidth(op.Operand(1).Type())
	if err != nil {
		return nil, err
	}
	return func(x, n, _ ir.Lane) (ir.Lane, bool) {
		return ir.Lane{F: eval.Round(pow(x.F, eval.Signed(n.I, w)), k)}, true
	}, nil
}

// FpowiExponent is the 32-bit exponent libdevice's powif gets for n: n
// itself when it fits, else the 32-bit value nearest to n of the same
// parity (x^n is then 0, infinite, or ±1 by the parity, for both).
func FpowiExponent(n int64) int32 {
	switch {
	case n > gomath.MaxInt32:
		return gomath.MaxInt32 - 1 + int32(n&1)
	case n < gomath.MinInt32:
		return gomath.MinInt32 + int32(n&1)
	}
	return int32(n)
}

// powiBySquaring is libdevice's powif/powi: r = 1, b = x; for each bit of
// |n| from the lowest, r = r·b if set, then b = b·b, every product rounded
// to k (f32 or f64); 1/r for a negative n.
func powiBySquaring(x float64, n int32, k ir.FloatKind) float64 {
	e := uint32(n)
	if n < 0 {
		e = -e
	}
	r, b := 1.0, eval.Round(x, k)
	for {
		if e&1 != 0 {
			r = eval.Round(r*b, k)
		}
		e >>= 1
		if e == 0 {
			break
		}
		b = eval.Round(b*b, k)
	}
	if n < 0 {
		return eval.Round(1/r, k)
	}
	return r
}

// clampfSem is maximumf(minimumf(x, max), min): a NaN operand gives NaN,
// -0 is below +0, and min wins when it is above max.
var clampfSem = eval.FloatTernary(func(x, lo, hi float64) float64 { return eval.Maximum(eval.Minimum(x, hi), lo) })

// FMA is the semantics of a fused multiply-add (math.fma, vector.fma):
// a·b+c computed in float64 with one rounding, then rounded to the type.
var FMA = eval.FloatTernary(gomath.FMA)

// evalFold folds through the semantics.
var evalFold = eval.Fold
