package codegen

import (
	"math"
	"testing"

	"github.com/llir/llvm/ir/types"

	"github.com/tmac-dev/tmac/ir"
)

func TestFloatConstHex(t *testing.T) {
	cases := []struct {
		v    float64
		k    ir.FloatKind
		want string
	}{
		{1.5, ir.F16, "half 0xH3E00"},
		{math.Inf(-1), ir.F16, "half 0xHFC00"},
		{0.1, ir.F32, "float 0x3FB99999A0000000"},
		{math.Copysign(0, -1), ir.F32, "float 0x8000000000000000"},
		{math.Inf(1), ir.F32, "float 0x7FF0000000000000"},
		{0.1, ir.F64, "double 0x3FB999999999999A"},
		{-2, ir.BF16, "bfloat 0xRC000"},
		// tf32 constants are f32 values, rounded to tf32 precision.
		{1 + 1.0/4096, ir.TF32, "float 0x3FF0000000000000"},
		{448, ir.F8E4M3FN, "i8 126"},
		{-1, ir.F8E5M2, "i8 -68"},
		{math.Inf(1), ir.F8E5M2, "i8 124"},
	}
	for _, c := range cases {
		if got := floatConst(c.v, c.k).String(); got != c.want {
			t.Errorf("floatConst(%v, %v) = %q, want %q", c.v, ir.FloatTypeOf(c.k), got, c.want)
		}
	}
	// An f32 NaN payload survives (bit 0 of the f32 mantissa is bit 29 of
	// the double form LLVM uses).
	nan := &floatBits{types.Float, 0x7FC00001}
	if got := nan.Ident(); got != "0x7FF8000020000000" {
		t.Errorf("f32 NaN payload: got %s", got)
	}
}

func TestIntrinsicSuffix(t *testing.T) {
	cases := []struct {
		t    types.Type
		want string
	}{
		{types.I32, "i32"},
		{types.Half, "f16"},
		{BFloat, "bf16"},
		{types.Double, "f64"},
		{types.NewVector(4, types.Float), "v4f32"},
		{types.NewVector(2, BFloat), "v2bf16"},
		{types.NewVector(8, types.I16), "v8i16"},
	}
	for _, c := range cases {
		if got := intrinsicSuffix(c.t); got != c.want {
			t.Errorf("intrinsicSuffix(%s) = %s, want %s", c.t, got, c.want)
		}
	}
}

// roundTF32Bits mirrors the integer rounding roundTF32 emits.
func roundTF32Bits(b uint32) uint32 {
	return (b + 0xFFF + (b>>13)&1) &^ 0x1FFF
}

func TestTF32RoundingMatchesFolder(t *testing.T) {
	vals := []float32{1, 1 + 1.0/2048, 1 + 3.0/2048, 1 + 1.0/2048 + 1.0/(1<<23), -3.14159, 1e-40, -1e-42,
		math.MaxFloat32, -math.MaxFloat32, float32(math.Inf(1)), 65504.5, 1.0 / 3}
	for _, v := range vals {
		got := math.Float32frombits(roundTF32Bits(math.Float32bits(v)))
		want := ir.RoundToFloatKind(float64(v), ir.TF32)
		if float64(got) != want || math.Signbit(float64(got)) != math.Signbit(want) {
			t.Errorf("tf32(%g) = %g, folder gives %g", v, got, want)
		}
	}
}
