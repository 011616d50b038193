package math_test

import (
	"fmt"
	gomath "math"
	"testing"

	_ "github.com/tmac-dev/tmac/dialects/all"
	mathdialect "github.com/tmac-dev/tmac/dialects/math"
	"github.com/tmac-dev/tmac/internal/testutil"
	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/ir/eval"
)

// lanes compiles the exact and GPU lane functions of the op in `%r = SRC`
// with function arguments ARGS.
func lanes(t *testing.T, src, args string) (exact, gpu ir.LaneFunc) {
	t.Helper()
	fn := testutil.Parse(t, "func.func @f("+args+") {\n  %r = "+src+"\n  return\n}\n").Region(0).Entry().First()
	op := fn.Region(0).Entry().First()
	var err error
	if exact, err = eval.Compile(op); err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	if gpu, err = eval.CompileGPU(op); err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	return exact, gpu
}

// same reports whether a and b are the same float64, NaN equal to NaN and
// -0 different from +0.
func same(a, b float64) bool {
	if gomath.IsNaN(a) || gomath.IsNaN(b) {
		return gomath.IsNaN(a) && gomath.IsNaN(b)
	}
	return a == b && gomath.Signbit(a) == gomath.Signbit(b)
}

var (
	inf, nan       = gomath.Inf(1), gomath.NaN()
	negZero        = gomath.Copysign(0, -1)
	subnormal32    = float64(gomath.SmallestNonzeroFloat32) // 2^-149
	maxSubnormal32 = float64(gomath.Float32frombits(0x007fffff))
)

// TestFloatSpecialValues checks the float ops on the special values of f32:
// ±0, ±inf, NaN, subnormals, and results rounded once to the format.
func TestFloatSpecialValues(t *testing.T) {
	cases := []struct {
		op   string
		x, y float64
		want float64
	}{
		{"math.log", 0, 0, gomath.Inf(-1)},
		{"math.log", negZero, 0, gomath.Inf(-1)},
		{"math.log", -1, 0, nan},
		{"math.log", inf, 0, inf},
		{"math.log", subnormal32, 0, float64(float32(-149 * gomath.Ln2))},
		{"math.log10", 1000, 0, 3},
		{"math.log1p", -1, 0, gomath.Inf(-1)},
		{"math.log1p", subnormal32, 0, subnormal32},
		{"math.exp", gomath.Inf(-1), 0, 0},
		{"math.exp", 89, 0, inf}, // overflows f32
		{"math.exp", nan, 0, nan},
		{"math.exp2", -149, 0, subnormal32},
		{"math.exp2", -150, 0, 0}, // the tie rounds to even: 0
		{"math.expm1", negZero, 0, negZero},
		{"math.expm1", gomath.Inf(-1), 0, -1},
		{"math.tanh", inf, 0, 1},
		{"math.tanh", negZero, 0, negZero},
		{"math.tanh", maxSubnormal32, 0, maxSubnormal32},
		{"math.sinh", gomath.Inf(-1), 0, gomath.Inf(-1)},
		{"math.cosh", gomath.Inf(-1), 0, inf},
		{"math.asinh", negZero, 0, negZero},
		{"math.acosh", 1, 0, 0},
		{"math.acosh", 0.5, 0, nan},
		{"math.atanh", 1, 0, inf},
		{"math.atanh", -1, 0, gomath.Inf(-1)},
		{"math.atanh", 2, 0, nan},
		{"math.erf", inf, 0, 1},
		{"math.erf", negZero, 0, negZero},
		{"math.erfc", inf, 0, 0},
		{"math.erfc", gomath.Inf(-1), 0, 2},
		{"math.erfc", 10, 0, float64(float32(gomath.Erfc(10)))}, // 2.1e-45: an f32 subnormal
		{"math.rsqrt", 0, 0, inf},
		{"math.rsqrt", negZero, 0, gomath.Inf(-1)},
		{"math.rsqrt", -4, 0, nan},
		{"math.rsqrt", inf, 0, 0},
		{"math.rsqrt", 4, 0, 0.5},
		{"math.sqrt", negZero, 0, negZero},
		{"math.cbrt", -27, 0, -3},
		{"math.cbrt", gomath.Inf(-1), 0, gomath.Inf(-1)},
		{"math.sin", inf, 0, nan},
		{"math.sin", negZero, 0, negZero},
		{"math.cos", 0, 0, 1},
		{"math.tan", subnormal32, 0, subnormal32},
		{"math.asin", 2, 0, nan},
		{"math.acos", 1, 0, 0},
		{"math.atan", gomath.Inf(-1), 0, float64(float32(-gomath.Pi / 2))},
		{"math.atan2", 0, -1, float64(float32(gomath.Pi))},
		{"math.atan2", negZero, -1, float64(float32(-gomath.Pi))},
		{"math.atan2", 1, 0, float64(float32(gomath.Pi / 2))},
		{"math.atan2", nan, 1, nan},
		{"math.powf", -2, 3, -8},
		{"math.powf", -2, 0.5, nan},
		{"math.powf", 1, nan, 1},
		{"math.powf", nan, 0, 1},
		{"math.powf", 0, -1, inf},
		{"math.powf", negZero, -3, gomath.Inf(-1)},
		{"math.copysign", 3, negZero, -3},
		{"math.copysign", nan, -1, nan},
		{"math.copysign", inf, 1, inf},
		{"math.floor", -0.5, 0, -1},
		{"math.floor", negZero, 0, negZero},
		{"math.ceil", -0.5, 0, negZero},
		{"math.ceil", subnormal32, 0, 1},
		{"math.round", 2.5, 0, 3},
		{"math.round", -2.5, 0, -3},
		{"math.round", -0.4, 0, negZero},
		{"math.round", 0.49999997, 0, 0},
		{"math.roundeven", 2.5, 0, 2},
		{"math.roundeven", -3.5, 0, -4},
		{"math.roundeven", -0.5, 0, negZero},
		{"math.trunc", -1.75, 0, -1},
		{"math.trunc", inf, 0, inf},
		{"math.absf", negZero, 0, 0},
	}
	for _, c := range cases {
		src := c.op + " %a : f32"
		if c.op == "math.atan2" || c.op == "math.powf" || c.op == "math.copysign" {
			src = c.op + " %a, %b : f32"
		}
		exact, _ := lanes(t, src, "%a: f32, %b: f32")
		got, ok := exact(ir.Lane{F: c.x}, ir.Lane{F: c.y}, ir.Lane{})
		if !ok || !same(got.F, c.want) {
			t.Errorf("%s(%g, %g) = %g, %v; want %g", c.op, c.x, c.y, got.F, ok, c.want)
		}
	}
}

// TestNarrowFormats: the result is rounded once to the op's format.
func TestNarrowFormats(t *testing.T) {
	exact, _ := lanes(t, "math.tanh %a : bf16", "%a: bf16")
	got, _ := exact(ir.Lane{F: 0.5}, ir.Lane{}, ir.Lane{})
	if want := ir.RoundToFloatKind(gomath.Tanh(0.5), ir.BF16); got.F != want {
		t.Errorf("tanh(0.5) in bf16 = %g, want %g", got.F, want)
	}
	exact, _ = lanes(t, "math.exp %a : f16", "%a: f16")
	if got, _ := exact(ir.Lane{F: 12}, ir.Lane{}, ir.Lane{}); got.F != inf {
		t.Errorf("exp(12) in f16 = %g, want +inf (above 65504)", got.F)
	}
	exact, _ = lanes(t, "math.floor %a : f8E4M3FN", "%a: f8E4M3FN")
	if got, _ := exact(ir.Lane{F: -1.125}, ir.Lane{}, ir.Lane{}); got.F != -2 {
		t.Errorf("floor(-1.125) in f8E4M3FN = %g, want -2", got.F)
	}
	exact, _ = lanes(t, "math.log %a : f64", "%a: f64")
	if got, _ := exact(ir.Lane{F: gomath.E}, ir.Lane{}, ir.Lane{}); got.F != 1 {
		t.Errorf("log(e) in f64 = %g, want 1", got.F)
	}
}

// TestClassification covers every format's special values and smallest
// normal number.
func TestClassification(t *testing.T) {
	type want struct{ nan, inf, finite, normal bool }
	cases := []struct {
		typ  string
		x    float64
		want want
	}{
		{"f32", 0, want{finite: true}},
		{"f32", negZero, want{finite: true}},
		{"f32", subnormal32, want{finite: true}},
		{"f32", maxSubnormal32, want{finite: true}},
		{"f32", 0x1p-126, want{finite: true, normal: true}},
		{"f32", -1, want{finite: true, normal: true}},
		{"f32", gomath.Inf(-1), want{inf: true}},
		{"f32", nan, want{nan: true}},
		{"f64", 0x1p-1022, want{finite: true, normal: true}},
		{"f64", 0x1p-1023, want{finite: true}},
		{"f16", 0x1p-14, want{finite: true, normal: true}},
		{"f16", 0x1p-15, want{finite: true}},
		{"bf16", 0x1p-126, want{finite: true, normal: true}},
		{"bf16", 0x1p-127, want{finite: true}},
		{"f8E4M3FN", 0x1p-6, want{finite: true, normal: true}},
		{"f8E4M3FN", 0x1p-7, want{finite: true}},
		{"f8E4M3FN", 448, want{finite: true, normal: true}},
		{"f8E4M3FN", nan, want{nan: true}},
		{"f8E5M2", 0x1p-14, want{finite: true, normal: true}},
		{"f8E5M2", inf, want{inf: true}},
		{"tf32", 0x1p-127, want{finite: true}},
	}
	for _, c := range cases {
		for op, w := range map[string]bool{"isnan": c.want.nan, "isinf": c.want.inf, "isfinite": c.want.finite, "isnormal": c.want.normal} {
			exact, _ := lanes(t, fmt.Sprintf("math.%s %%a : %s", op, c.typ), "%a: "+c.typ)
			got, ok := exact(ir.Lane{F: c.x}, ir.Lane{}, ir.Lane{})
			if !ok || (got.I == 1) != w {
				t.Errorf("%s(%g : %s) = %d, want %v", op, c.x, c.typ, got.I, w)
			}
		}
	}
}

func TestIntOps(t *testing.T) {
	cases := []struct {
		src, typ string
		x, y     int64
		want     int64
		ok       bool
	}{
		{"math.absi %a", "i32", -7, 0, 7, true},
		{"math.absi %a", "i8", -128, 0, -128, true}, // wraps
		{"math.absi %a", "i1", 1, 0, 1, true},
		{"math.ctlz %a", "i32", 0, 0, 32, true},
		{"math.ctlz %a", "i8", 1, 0, 7, true},
		{"math.ctlz %a", "i16", -1, 0, 0, true},
		{"math.ctlz %a", "index", 1, 0, 63, true},
		{"math.cttz %a", "i32", 0, 0, 32, true},
		{"math.cttz %a", "i64", -1 << 63, 0, 63, true},
		{"math.cttz %a", "i8", -128, 0, 7, true},
		{"math.ctpop %a", "i8", -1, 0, 8, true},
		{"math.ctpop %a", "i64", -1, 0, 64, true},
		{"math.ctpop %a", "i1", 1, 0, 1, true},
		{"math.ipowi %a, %b", "i32", 3, 4, 81, true},
		{"math.ipowi %a, %b", "i32", -3, 5, -243, true},
		{"math.ipowi %a, %b", "i8", 3, 5, -13, true}, // 243 wraps
		{"math.ipowi %a, %b", "i32", 7, 0, 1, true},
		{"math.ipowi %a, %b", "i32", 0, 0, 1, true},
		{"math.ipowi %a, %b", "i32", 5, -3, 0, true},
		{"math.ipowi %a, %b", "i32", 1, -3, 1, true},
		{"math.ipowi %a, %b", "i32", -1, -3, -1, true},
		{"math.ipowi %a, %b", "i32", -1, -4, 1, true},
		{"math.ipowi %a, %b", "i32", 0, -1, 0, false}, // a division by zero upstream
		{"math.ipowi %a, %b", "i64", 2, 63, -1 << 63, true},
		{"math.ipowi %a, %b", "index", 2, 64, 0, true},
	}
	for _, c := range cases {
		exact, gpu := lanes(t, c.src+" : "+c.typ, "%a: "+c.typ+", %b: "+c.typ)
		for name, f := range map[string]ir.LaneFunc{"exact": exact, "gpu": gpu} {
			got, ok := f(ir.Lane{I: c.x}, ir.Lane{I: c.y}, ir.Lane{})
			if ok != c.ok || ok && got.I != c.want {
				t.Errorf("%s (%s) on %d, %d = %d, %v; want %d, %v", c.src, name, c.x, c.y, got.I, ok, c.want, c.ok)
			}
		}
	}
}

// TestIpowMatchesLoop: Ipow is square-and-multiply with wrapping, what the
// GPU's loop computes, for every i8 base and power.
func TestIpowMatchesLoop(t *testing.T) {
	for x := int64(-128); x < 128; x++ {
		for n := int64(0); n < 128; n++ {
			want := int64(1)
			for i := int64(0); i < n; i++ {
				want = int64(int8(want * x))
			}
			if got, ok := mathdialect.Ipow(x, n, 8); !ok || got != want {
				t.Fatalf("Ipow(%d, %d, 8) = %d, %v; want %d", x, n, got, ok, want)
			}
		}
	}
}

func TestClampf(t *testing.T) {
	exact, _ := lanes(t, "math.clampf %a to [%b, %c] : f32", "%a: f32, %b: f32, %c: f32")
	cases := []struct{ x, lo, hi, want float64 }{
		{5, 0, 2, 2},
		{-3, 0, 2, 0},
		{1.5, 0, 2, 1.5},
		{nan, 0, 2, nan},
		{1, nan, 2, nan},
		{1, 0, nan, nan},
		{negZero, 0, 2, 0},
		{0, negZero, negZero, negZero},
		{1, 3, 2, 3}, // min above max: min
		{inf, 0, inf, inf},
	}
	for _, c := range cases {
		got, _ := exact(ir.Lane{F: c.x}, ir.Lane{F: c.lo}, ir.Lane{F: c.hi})
		if !same(got.F, c.want) {
			t.Errorf("clampf(%g, [%g, %g]) = %g, want %g", c.x, c.lo, c.hi, got.F, c.want)
		}
	}
}

// TestFpowi: exactly x^n rounded once; on the GPU, libdevice's powif:
// square-and-multiply in f32, then 1/r, with the power clamped to i32.
func TestFpowi(t *testing.T) {
	exact, gpu := lanes(t, "math.fpowi %a, %b : f32, i32", "%a: f32, %b: i32")
	x := float64(float32(1.1))
	for _, n := range []int64{0, 1, 2, 3, 7, 16, 100, -1, -5, -100} {
		e, _ := exact(ir.Lane{F: x}, ir.Lane{I: n}, ir.Lane{})
		if want := float64(float32(gomath.Pow(x, float64(n)))); e.F != want {
			t.Errorf("exact 1.1^%d = %g, want %g", n, e.F, want)
		}
		// The GPU's products, written out.
		r, b, m := float32(1), float32(x), n
		if m < 0 {
			m = -m
		}
		for ; m != 0; m >>= 1 {
			if m&1 != 0 {
				r *= b
			}
			b *= b
		}
		if n < 0 {
			r = 1 / r
		}
		if g, _ := gpu(ir.Lane{F: x}, ir.Lane{I: n}, ir.Lane{}); g.F != float64(r) {
			t.Errorf("GPU 1.1^%d = %g, want %g", n, g.F, float64(r))
		}
	}
	// Special values go through the same products.
	for _, c := range []struct{ x, want float64 }{{0, inf}, {negZero, gomath.Inf(-1)}, {inf, 0}, {nan, nan}} {
		g, _ := gpu(ir.Lane{F: c.x}, ir.Lane{I: -1}, ir.Lane{})
		e, _ := exact(ir.Lane{F: c.x}, ir.Lane{I: -1}, ir.Lane{})
		if !same(g.F, c.want) || !same(e.F, c.want) {
			t.Errorf("%g^-1: GPU %g, exact %g; want %g", c.x, g.F, e.F, c.want)
		}
	}
	// i64 powers beyond i32 keep their parity.
	exact, gpu = lanes(t, "math.fpowi %a, %b : f32, i64", "%a: f32, %b: i64")
	for _, n := range []int64{1 << 40, 1<<40 + 1, -(1 << 40), -(1 << 40) - 1} {
		e, _ := exact(ir.Lane{F: -1}, ir.Lane{I: n}, ir.Lane{})
		g, _ := gpu(ir.Lane{F: -1}, ir.Lane{I: n}, ir.Lane{})
		if e.F != g.F || e.F != float64(1-2*(n&1)) {
			t.Errorf("(-1)^%d: exact %g, GPU %g", n, e.F, g.F)
		}
	}
	if got := mathdialect.FpowiExponent(1 << 40); got != gomath.MaxInt32-1 {
		t.Errorf("FpowiExponent(2^40) = %d", got)
	}
	if got := mathdialect.FpowiExponent(-(1 << 40) - 1); got != gomath.MinInt32+1 {
		t.Errorf("FpowiExponent(-2^40-1) = %d", got)
	}
	// f64 powers multiply in f64.
	_, gpu = lanes(t, "math.fpowi %a, %b : f64, i32", "%a: f64, %b: i32")
	a := 1.1
	if g, _ := gpu(ir.Lane{F: a}, ir.Lane{I: 3}, ir.Lane{}); g.F != a*(a*a) {
		t.Errorf("GPU 1.1^3 in f64 = %v, want %v", g.F, a*(a*a))
	}
}

// TestExpGPU: the emulator models exp's fastmath<afn> lowering (the f32
// product x·log2 e), and the accurate default as exact.
func TestExpGPU(t *testing.T) {
	x := ir.Lane{F: 80.5}
	exact, gpu := lanes(t, "math.exp %a : f32", "%a: f32")
	e, _ := exact(x, ir.Lane{}, ir.Lane{})
	if g, _ := gpu(x, ir.Lane{}, ir.Lane{}); g.F != e.F {
		t.Errorf("exp(80.5) by default: GPU %g, exact %g; want equal", g.F, e.F)
	}
	_, gpu = lanes(t, "math.exp %a fastmath<fast> : f32", "%a: f32")
	g, _ := gpu(x, ir.Lane{}, ir.Lane{})
	if g.F == e.F || gomath.Abs(g.F-e.F)/e.F > 1e-5 {
		t.Errorf("exp(80.5) with afn: GPU %g, exact %g; want a few ulp apart", g.F, e.F)
	}
	_, gpu = lanes(t, "math.exp %a fastmath<afn> : f64", "%a: f64")
	if g, _ := gpu(x, ir.Lane{}, ir.Lane{}); g.F != gomath.Exp(80.5) {
		t.Errorf("exp(80.5) in f64 with afn: GPU %g (libdevice: exact)", g.F)
	}
}

// TestExp2GPU: with fastmath<afn>, f32 exp2 is ex2.approx.ftz.f32, which
// flushes subnormal results to zero; by default, and in f64, they stay.
func TestExp2GPU(t *testing.T) {
	for _, c := range []struct {
		src, args string
		x, want   float64
	}{
		{"math.exp2 %a : f32", "%a: f32", -130, 0x1p-130},
		{"math.exp2 %a fastmath<afn> : f32", "%a: f32", -130, 0},
		{"math.exp2 %a fastmath<afn> : f32", "%a: f32", -126, 0x1p-126},
		{"math.exp2 %a fastmath<afn> : f32", "%a: f32", 3, 8},
		{"math.exp2 %a fastmath<afn> : f64", "%a: f64", -1030, 0x1p-1030},
	} {
		_, gpu := lanes(t, c.src, c.args)
		if g, _ := gpu(ir.Lane{F: c.x}, ir.Lane{}, ir.Lane{}); g.F != c.want {
			t.Errorf("%s at %g: GPU %g, want %g", c.src, c.x, g.F, c.want)
		}
	}
}

// TestFolding: only the ops the GPU computes exactly fold.
func TestFolding(t *testing.T) {
	for name, folds := range map[string]bool{
		"math.floor": true, "math.round": true, "math.copysign": true, "math.sqrt": true, "math.absf": true,
		"math.ctpop": true, "math.ipowi": true, "math.isnan": true, "math.clampf": true,
		"math.exp": false, "math.log": false, "math.tanh": false, "math.rsqrt": false, "math.fpowi": false, "math.fma": false,
	} {
		if got := ir.LookupOp(name).Fold != nil; got != folds {
			t.Errorf("%s folds: %v, want %v", name, got, folds)
		}
	}
}

func TestSmallestNormal(t *testing.T) {
	for k, want := range map[ir.FloatKind]float64{
		ir.F16: 0x1p-14, ir.BF16: 0x1p-126, ir.F32: 0x1p-126, ir.TF32: 0x1p-126, ir.F64: 0x1p-1022,
		ir.F8E4M3FN: 0x1p-6, ir.F8E5M2: 0x1p-14,
	} {
		if got := mathdialect.SmallestNormal(k); got != want {
			t.Errorf("SmallestNormal(%v) = %g, want %g", k, got, want)
		}
	}
}
