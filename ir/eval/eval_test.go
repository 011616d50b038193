package eval_test

import (
	"math"
	"strings"
	"testing"

	"github.com/tmac-dev/tmac/internal/testutil"
	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/ir/eval"
)

// opOf parses a function whose first op is the op to evaluate.
func opOf(t *testing.T, src string) *ir.Operation {
	t.Helper()
	fn := testutil.Parse(t, src).Region(0).Entry().First()
	return fn.Region(0).Entry().First()
}

func TestWrapSignedUnsigned(t *testing.T) {
	cases := []struct {
		v        int64
		w        int
		wrap     int64
		signed   int64
		unsigned uint64
	}{
		{1, 1, 1, -1, 1},
		{3, 1, 1, -1, 1},
		{2, 1, 0, 0, 0},
		{255, 8, -1, -1, 255},
		{128, 8, -128, -128, 128},
		{-1, 32, -1, -1, math.MaxUint32},
		{math.MinInt64, 64, math.MinInt64, math.MinInt64, 1 << 63},
	}
	for _, c := range cases {
		if got := eval.Wrap(c.v, c.w); got != c.wrap {
			t.Errorf("Wrap(%d, %d) = %d, want %d", c.v, c.w, got, c.wrap)
		}
		if got := eval.Signed(c.v, c.w); got != c.signed {
			t.Errorf("Signed(%d, %d) = %d, want %d", c.v, c.w, got, c.signed)
		}
		if got := eval.Unsigned(c.v, c.w); got != c.unsigned {
			t.Errorf("Unsigned(%d, %d) = %d, want %d", c.v, c.w, got, c.unsigned)
		}
	}
}

// TestIntToFloat checks the single rounding of large integers to narrow
// formats, where rounding to float64 first would round twice.
func TestIntToFloat(t *testing.T) {
	// 2^60 + 2^52 + 1 lies just above the midpoint 2^60 + 2^52 of two
	// bf16 neighbours (2^60 and 2^60 + 2^53): it must round up. Rounded to
	// float64 first it becomes the midpoint and rounds to even (down).
	u := uint64(1)<<60 + uint64(1)<<52 + 1
	if got, want := eval.IntToFloat(false, u, ir.BF16), math.Ldexp(1, 60)+math.Ldexp(1, 53); got != want {
		t.Errorf("IntToFloat(2^60+2^52+1, bf16) = %g, want %g", got, want)
	}
	if got := eval.IntToFloat(true, 3, ir.F16); got != -3 {
		t.Errorf("IntToFloat(-3, f16) = %g", got)
	}
	if got, want := eval.IntToFloat(false, 1<<24+1, ir.F32), math.Ldexp(1, 24); got != want {
		t.Errorf("IntToFloat(2^24+1, f32) = %g, want %g", got, want)
	}
}

// TestLanes evaluates ops of every kind through their definitions.
func TestLanes(t *testing.T) {
	cases := []struct {
		src  string // the op, on %a, %b, %c of the given types
		args string // the function's arguments
		x    [3]ir.Lane
		want ir.Lane
		ok   bool
	}{
		{"arith.addi %a, %b : i8", "%a: i8, %b: i8", [3]ir.Lane{{I: 127}, {I: 1}}, ir.Lane{I: -128}, true},
		{"arith.addi %a, %b : i1", "%a: i1, %b: i1", [3]ir.Lane{{I: 1}, {I: 1}}, ir.Lane{I: 0}, true},
		{"arith.maxsi %a, %b : i1", "%a: i1, %b: i1", [3]ir.Lane{{I: 1}, {I: 0}}, ir.Lane{I: 0}, true},
		{"arith.maxui %a, %b : i8", "%a: i8, %b: i8", [3]ir.Lane{{I: -1}, {I: 1}}, ir.Lane{I: -1}, true},
		{"arith.divui %a, %b : i8", "%a: i8, %b: i8", [3]ir.Lane{{I: -1}, {I: 2}}, ir.Lane{I: 127}, true},
		{"arith.divsi %a, %b : i8", "%a: i8, %b: i8", [3]ir.Lane{{I: -128}, {I: -1}}, ir.Lane{}, false},
		{"arith.divsi %a, %b : i32", "%a: i32, %b: i32", [3]ir.Lane{{I: 7}, {I: 0}}, ir.Lane{}, false},
		{"arith.remsi %a, %b : i8", "%a: i8, %b: i8", [3]ir.Lane{{I: -128}, {I: -1}}, ir.Lane{I: 0}, true},
		{"arith.ceildivui %a, %b : index", "%a: index, %b: index", [3]ir.Lane{{I: 7}, {I: 2}}, ir.Lane{I: 4}, true},
		{"arith.shli %a, %b : i8", "%a: i8, %b: i8", [3]ir.Lane{{I: 1}, {I: 7}}, ir.Lane{I: -128}, true},
		{"arith.shli %a, %b : i8", "%a: i8, %b: i8", [3]ir.Lane{{I: 1}, {I: 8}}, ir.Lane{}, false},
		{"arith.shrui %a, %b : i8", "%a: i8, %b: i8", [3]ir.Lane{{I: -128}, {I: 7}}, ir.Lane{I: 1}, true},
		{"arith.cmpi slt, %a, %b : i1", "%a: i1, %b: i1", [3]ir.Lane{{I: 1}, {I: 0}}, ir.Lane{I: 1}, true},
		{"arith.cmpi ult, %a, %b : i8", "%a: i8, %b: i8", [3]ir.Lane{{I: -1}, {I: 1}}, ir.Lane{I: 0}, true},
		{"arith.cmpf uno, %a, %b : f32", "%a: f32, %b: f32", [3]ir.Lane{{F: math.NaN()}, {F: 1}}, ir.Lane{I: 1}, true},
		{"arith.addf %a, %b : f16", "%a: f16, %b: f16", [3]ir.Lane{{F: 2048}, {F: 1}}, ir.Lane{F: 2048}, true},
		{"arith.maximumf %a, %b : f32", "%a: f32, %b: f32", [3]ir.Lane{{F: math.Copysign(0, -1)}, {F: 0}}, ir.Lane{F: 0}, true},
		{"arith.select %a, %b, %c : f32", "%a: i1, %b: f32, %c: f32", [3]ir.Lane{{I: 0}, {F: 1}, {F: 2}}, ir.Lane{F: 2}, true},
		{"arith.extsi %a : i1 to i32", "%a: i1", [3]ir.Lane{{I: 1}}, ir.Lane{I: -1}, true},
		{"arith.extui %a : i8 to i32", "%a: i8", [3]ir.Lane{{I: -2}}, ir.Lane{I: 254}, true},
		{"arith.trunci %a : i32 to i1", "%a: i32", [3]ir.Lane{{I: 3}}, ir.Lane{I: 1}, true},
		{"arith.sitofp %a : i1 to f32", "%a: i1", [3]ir.Lane{{I: 1}}, ir.Lane{F: -1}, true},
		{"arith.uitofp %a : i8 to f32", "%a: i8", [3]ir.Lane{{I: -1}}, ir.Lane{F: 255}, true},
		{"arith.fptosi %a : f32 to i8", "%a: f32", [3]ir.Lane{{F: -128.9}}, ir.Lane{I: -128}, true},
		{"arith.fptosi %a : f32 to i8", "%a: f32", [3]ir.Lane{{F: 128}}, ir.Lane{}, false},
		{"arith.fptoui %a : f32 to i8", "%a: f32", [3]ir.Lane{{F: -0.5}}, ir.Lane{I: 0}, true},
		{"arith.truncf %a : f32 to bf16", "%a: f32", [3]ir.Lane{{F: 1 + math.Ldexp(1, -8)}}, ir.Lane{F: 1}, true},
		{"arith.bitcast %a : f16 to i16", "%a: f16", [3]ir.Lane{{F: -2}}, ir.Lane{I: int64(int16(-16384))}, true},
		{"arith.bitcast %a : i32 to f32", "%a: i32", [3]ir.Lane{{I: 0x3f800000}}, ir.Lane{F: 1}, true},
		{"math.fma %a, %b, %c : f32", "%a: f32, %b: f32, %c: f32", [3]ir.Lane{{F: 2}, {F: 3}, {F: 1}}, ir.Lane{F: 7}, true},
		{"math.sqrt %a : f32", "%a: f32", [3]ir.Lane{{F: 2}}, ir.Lane{F: float64(float32(math.Sqrt2))}, true},
		{"math.log2 %a : f32", "%a: f32", [3]ir.Lane{{F: 0x1p-140}}, ir.Lane{F: -140}, true},
		{"math.log2 %a : bf16", "%a: bf16", [3]ir.Lane{{F: 3}}, ir.Lane{F: 1.5859375}, true},
		// ceildivsi and floordivsi on every sign combination, exact
		// quotients, and their undefined cases.
		{"arith.ceildivsi %a, %b : i32", "%a: i32, %b: i32", [3]ir.Lane{{I: 7}, {I: 2}}, ir.Lane{I: 4}, true},
		{"arith.ceildivsi %a, %b : i32", "%a: i32, %b: i32", [3]ir.Lane{{I: -7}, {I: 2}}, ir.Lane{I: -3}, true},
		{"arith.ceildivsi %a, %b : i32", "%a: i32, %b: i32", [3]ir.Lane{{I: 7}, {I: -2}}, ir.Lane{I: -3}, true},
		{"arith.ceildivsi %a, %b : i32", "%a: i32, %b: i32", [3]ir.Lane{{I: -7}, {I: -2}}, ir.Lane{I: 4}, true},
		{"arith.ceildivsi %a, %b : i32", "%a: i32, %b: i32", [3]ir.Lane{{I: -8}, {I: 2}}, ir.Lane{I: -4}, true},
		{"arith.ceildivsi %a, %b : i8", "%a: i8, %b: i8", [3]ir.Lane{{I: -128}, {I: -1}}, ir.Lane{}, false},
		{"arith.ceildivsi %a, %b : i8", "%a: i8, %b: i8", [3]ir.Lane{{I: -128}, {I: 3}}, ir.Lane{I: -42}, true},
		{"arith.ceildivsi %a, %b : index", "%a: index, %b: index", [3]ir.Lane{{I: 5}, {I: 0}}, ir.Lane{}, false},
		{"arith.floordivsi %a, %b : i32", "%a: i32, %b: i32", [3]ir.Lane{{I: 7}, {I: 2}}, ir.Lane{I: 3}, true},
		{"arith.floordivsi %a, %b : i32", "%a: i32, %b: i32", [3]ir.Lane{{I: -7}, {I: 2}}, ir.Lane{I: -4}, true},
		{"arith.floordivsi %a, %b : i32", "%a: i32, %b: i32", [3]ir.Lane{{I: 7}, {I: -2}}, ir.Lane{I: -4}, true},
		{"arith.floordivsi %a, %b : i32", "%a: i32, %b: i32", [3]ir.Lane{{I: -7}, {I: -2}}, ir.Lane{I: 3}, true},
		{"arith.floordivsi %a, %b : i32", "%a: i32, %b: i32", [3]ir.Lane{{I: 6}, {I: -3}}, ir.Lane{I: -2}, true},
		{"arith.floordivsi %a, %b : i8", "%a: i8, %b: i8", [3]ir.Lane{{I: -128}, {I: -1}}, ir.Lane{}, false},
		{"arith.floordivsi %a, %b : i8", "%a: i8, %b: i8", [3]ir.Lane{{I: 127}, {I: -128}}, ir.Lane{I: -1}, true},
		// remf has the dividend's sign and is exact however large the
		// quotient.
		{"arith.remf %a, %b : f32", "%a: f32, %b: f32", [3]ir.Lane{{F: -7.5}, {F: 2}}, ir.Lane{F: -1.5}, true},
		{"arith.remf %a, %b : f32", "%a: f32, %b: f32", [3]ir.Lane{{F: 7.5}, {F: -2}}, ir.Lane{F: 1.5}, true},
		{"arith.remf %a, %b : f32", "%a: f32, %b: f32", [3]ir.Lane{{F: float64(float32(1e30))}, {F: 7}}, ir.Lane{F: 1}, true},
		{"arith.remf %a, %b : f32", "%a: f32, %b: f32", [3]ir.Lane{{F: 5}, {F: math.Inf(-1)}}, ir.Lane{F: 5}, true},
		{"arith.remf %a, %b : f16", "%a: f16, %b: f16", [3]ir.Lane{{F: 65504}, {F: 0.10009765625}}, ir.Lane{F: 0.09375}, true},
		// maxnumf and minnumf ignore a NaN operand.
		{"arith.maxnumf %a, %b : f32", "%a: f32, %b: f32", [3]ir.Lane{{F: math.NaN()}, {F: -1}}, ir.Lane{F: -1}, true},
		{"arith.maxnumf %a, %b : f32", "%a: f32, %b: f32", [3]ir.Lane{{F: 2}, {F: math.NaN()}}, ir.Lane{F: 2}, true},
		{"arith.minnumf %a, %b : f64", "%a: f64, %b: f64", [3]ir.Lane{{F: math.NaN()}, {F: 3}}, ir.Lane{F: 3}, true},
		{"arith.minnumf %a, %b : bf16", "%a: bf16, %b: bf16", [3]ir.Lane{{F: -4}, {F: 2}}, ir.Lane{F: -4}, true},
	}
	for _, c := range cases {
		src := "func.func @f(" + c.args + ") {\n  %r = " + c.src + "\n  return\n}\n"
		op := opOf(t, src)
		f, err := eval.Compile(op)
		if err != nil {
			t.Errorf("%s: %v", c.src, err)
			continue
		}
		got, ok := f(c.x[0], c.x[1], c.x[2])
		if ok != c.ok || ok && got != c.want {
			t.Errorf("%s on %v = %v, %v; want %v, %v", c.src, c.x, got, ok, c.want, c.ok)
		}
	}
}

// TestSignsAndNaNs checks what struct equality cannot: the sign of zero
// results and NaN results.
func TestSignsAndNaNs(t *testing.T) {
	negZero := math.Copysign(0, -1)
	cases := []struct {
		src  string
		x, y float64
		want float64 // NaN: a NaN; zeros compared with their signs
	}{
		{"arith.maxnumf", negZero, 0, 0},
		{"arith.maxnumf", 0, negZero, 0},
		{"arith.minnumf", 0, negZero, negZero},
		{"arith.minnumf", negZero, 0, negZero},
		{"arith.maxnumf", math.NaN(), math.NaN(), math.NaN()},
		{"arith.remf", -6, 3, negZero},
		{"arith.remf", 6, -3, 0},
		{"arith.remf", negZero, 3, negZero},
		{"arith.remf", 1, 0, math.NaN()},
		{"arith.remf", math.Inf(1), 2, math.NaN()},
		{"arith.remf", math.NaN(), 2, math.NaN()},
	}
	for _, c := range cases {
		op := opOf(t, "func.func @f(%a: f32, %b: f32) {\n  %r = "+c.src+" %a, %b : f32\n  return\n}\n")
		f, err := eval.Compile(op)
		if err != nil {
			t.Fatalf("%s: %v", c.src, err)
		}
		got, ok := f(ir.Lane{F: c.x}, ir.Lane{F: c.y}, ir.Lane{})
		same := math.IsNaN(c.want) && math.IsNaN(got.F) || got.F == c.want && math.Signbit(got.F) == math.Signbit(c.want)
		if !ok || !same {
			t.Errorf("%s(%g, %g) = %g, %v; want %g", c.src, c.x, c.y, got.F, ok, c.want)
		}
	}
}

// TestLanes2 evaluates the ops of two results: the overflow bit of
// addui_extended and the high halves of the extended products, at widths
// where the product fits in 64 bits and where it does not.
func TestLanes2(t *testing.T) {
	min64, max64 := int64(math.MinInt64), int64(math.MaxInt64)
	cases := []struct {
		src, typ string
		x, y     int64
		r0, r1   int64
	}{
		{"arith.addui_extended %a, %b : T, i1", "i8", -1, 1, 0, 1},
		{"arith.addui_extended %a, %b : T, i1", "i8", 127, 1, -128, 0},
		{"arith.addui_extended %a, %b : T, i1", "i64", -1, -1, -2, 1},
		{"arith.addui_extended %a, %b : T, i1", "index", max64, 1, min64, 0},
		{"arith.addui_extended %a, %b : T, i1", "i1", 1, 1, 0, 1},
		{"arith.mului_extended %a, %b : T", "i8", -1, -1, 1, -2},
		{"arith.mului_extended %a, %b : T", "i32", -1, 2, -2, 1},
		{"arith.mului_extended %a, %b : T", "i48", 1 << 40, 1 << 40, 0, 1 << 32},
		{"arith.mului_extended %a, %b : T", "i64", -1, -1, 1, -2},
		{"arith.mului_extended %a, %b : T", "i1", 1, 1, 1, 0},
		{"arith.mulsi_extended %a, %b : T", "i8", -1, -1, 1, 0},
		{"arith.mulsi_extended %a, %b : T", "i8", -128, -128, 0, 64},
		{"arith.mulsi_extended %a, %b : T", "i32", -1, 2, -2, -1},
		{"arith.mulsi_extended %a, %b : T", "i64", min64, min64, 0, 1 << 62},
		{"arith.mulsi_extended %a, %b : T", "i64", min64, -1, min64, 0},
		{"arith.mulsi_extended %a, %b : T", "index", max64, -3, min64 + 3, -2},
		{"arith.mulsi_extended %a, %b : T", "i1", 1, 1, 1, 0},
	}
	for _, c := range cases {
		op := strings.ReplaceAll(c.src, "T", c.typ)
		src := "func.func @f(%a: " + c.typ + ", %b: " + c.typ + ") {\n  %r:2 = " + op + "\n  return\n}\n"
		f, err := eval.Compile2(opOf(t, src))
		if err != nil {
			t.Errorf("%s: %v", op, err)
			continue
		}
		r0, r1, ok := f(ir.Lane{I: c.x}, ir.Lane{I: c.y}, ir.Lane{})
		if !ok || r0.I != c.r0 || r1.I != c.r1 {
			t.Errorf("%s on %d, %d = %d, %d, %v; want %d, %d", op, c.x, c.y, r0.I, r1.I, ok, c.r0, c.r1)
		}
	}
	single := opOf(t, "func.func @f(%a: i32) {\n  %r = arith.addi %a, %a : i32\n  return\n}\n")
	if _, err := eval.Compile2(single); err == nil {
		t.Error("Compile2 accepted an op of one result")
	}
}

// TestGPUSemantics checks the ops whose GPU result differs: the emulator
// saturates float-to-int conversions and, for exp with fastmath<afn>
// (ex2.approx), rounds exp's product to f32; the default exp (libdevice)
// is computed exactly.
func TestGPUSemantics(t *testing.T) {
	op := opOf(t, "func.func @f(%a: f32) {\n  %r = arith.fptosi %a : f32 to i8\n  return\n}\n")
	f, err := eval.CompileGPU(op)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		x    float64
		want int64
	}{{1e9, 127}, {-1e9, -128}, {math.NaN(), 0}, {-3.5, -3}} {
		if got, ok := f(ir.Lane{F: c.x}, ir.Lane{}, ir.Lane{}); !ok || got.I != c.want {
			t.Errorf("GPU fptosi(%g) = %d, %v; want %d", c.x, got.I, ok, c.want)
		}
	}
	x := ir.Lane{F: 80.5}
	for _, c := range []struct {
		src    string
		differ bool
	}{
		{"math.exp %a fastmath<afn> : f32", true},
		{"math.exp %a : f32", false},
	} {
		op = opOf(t, "func.func @f(%a: f32) {\n  %r = "+c.src+"\n  return\n}\n")
		exact, _ := eval.Compile(op)
		gpu, _ := eval.CompileGPU(op)
		e, _ := exact(x, ir.Lane{}, ir.Lane{})
		g, _ := gpu(x, ir.Lane{}, ir.Lane{})
		if (e.F != g.F) != c.differ || math.Abs(e.F-g.F)/e.F > 1e-5 {
			t.Errorf("%s on 80.5: exact %g, GPU %g: want a difference of a few ulp %v", c.src, e.F, g.F, c.differ)
		}
	}
}

func TestFold(t *testing.T) {
	op := opOf(t, "func.func @f(%a: vector<4xi32>, %b: vector<4xi32>) {\n  %r = arith.muli %a, %b : vector<4xi32>\n  return\n}\n")
	vt := op.Result(0).Type().(ir.ShapedType)
	got := eval.Fold(op, []ir.Attribute{ir.DenseSplatInt(6, vt), ir.DenseSplatInt(7, vt)})
	if got == nil || !strings.HasPrefix(got.String(), "dense<42>") {
		t.Errorf("fold of splats = %v, want dense<42>", got)
	}
	op = opOf(t, "func.func @f(%a: i32, %b: i32) {\n  %r = arith.divui %a, %b : i32\n  return\n}\n")
	if got := eval.Fold(op, []ir.Attribute{ir.I32Attr(1), ir.I32Attr(0)}); got != nil {
		t.Errorf("fold of a division by zero = %v, want none", got)
	}
	if got := eval.Fold(op, []ir.Attribute{ir.I32Attr(1), nil}); got != nil {
		t.Errorf("fold with a non-constant operand = %v, want none", got)
	}
}

// TestFoldAll folds an op of two results on splat constants.
func TestFoldAll(t *testing.T) {
	op := opOf(t, "func.func @f(%a: vector<2xi8>, %b: vector<2xi8>) {\n  %r:2 = arith.addui_extended %a, %b : vector<2xi8>, vector<2xi1>\n  return\n}\n")
	vt := op.Operand(0).Type().(ir.ShapedType)
	got := eval.FoldAll(op, []ir.Attribute{ir.DenseSplatInt(-1, vt), ir.DenseSplatInt(2, vt)})
	if len(got) != 2 || got[0].String() != "dense<1> : vector<2xi8>" || got[1].String() != "dense<true> : vector<2xi1>" {
		t.Errorf("fold of addui_extended(255, 2) = %v, want dense<1>, dense<true>", got)
	}
	if eval.Fold(op, []ir.Attribute{ir.DenseSplatInt(1, vt), ir.DenseSplatInt(2, vt)}) != nil {
		t.Error("Fold (one result) folded an op of two results")
	}
}

func TestInts(t *testing.T) {
	op := opOf(t, "func.func @f(%a: index, %b: index) {\n  %r = arith.remui %a, %b : index\n  return\n}\n")
	if got, ok := eval.Ints(op, []int64{17, 5}); !ok || got != 2 {
		t.Errorf("Ints(remui 17, 5) = %d, %v", got, ok)
	}
	op = opOf(t, "func.func @f(%a: f32, %b: f32) {\n  %r = arith.addf %a, %b : f32\n  return\n}\n")
	if _, ok := eval.Ints(op, []int64{1, 2}); ok {
		t.Error("Ints evaluated a float op")
	}
}

// TestMaximumMinimum: NaN wins over infinities too (Go's math.Max(+Inf,
// NaN) is +Inf; arith.maximumf and PTX max.NaN give NaN), and -0 < +0.
func TestMaximumMinimum(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	for _, c := range []struct {
		name string
		got  float64
		nan  bool
		want float64
	}{
		{"max(+inf, nan)", eval.Maximum(inf, nan), true, 0},
		{"max(nan, +inf)", eval.Maximum(nan, inf), true, 0},
		{"min(-inf, nan)", eval.Minimum(-inf, nan), true, 0},
		{"max(1, 2)", eval.Maximum(1, 2), false, 2},
		{"min(1, 2)", eval.Minimum(1, 2), false, 1},
	} {
		if c.nan != math.IsNaN(c.got) || !c.nan && c.got != c.want {
			t.Errorf("%s = %v", c.name, c.got)
		}
	}
	if z := eval.Maximum(math.Copysign(0, -1), 0); math.Signbit(z) {
		t.Errorf("max(-0, +0) = -0")
	}
	if z := eval.Minimum(0, math.Copysign(0, -1)); !math.Signbit(z) {
		t.Errorf("min(+0, -0) = +0")
	}
}
