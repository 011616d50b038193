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

// TestGPUSemantics checks the ops whose GPU result differs: the emulator
// saturates float-to-int conversions and rounds exp's product to f32.
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
	op = opOf(t, "func.func @f(%a: f32) {\n  %r = math.exp %a : f32\n  return\n}\n")
	exact, _ := eval.Compile(op)
	gpu, _ := eval.CompileGPU(op)
	x := ir.Lane{F: 80.5}
	e, _ := exact(x, ir.Lane{}, ir.Lane{})
	g, _ := gpu(x, ir.Lane{}, ir.Lane{})
	if e.F == g.F || math.Abs(e.F-g.F)/e.F > 1e-5 {
		t.Errorf("exp(80.5): exact %g, GPU %g: want a difference of a few ulp", e.F, g.F)
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
