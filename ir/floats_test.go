package ir

import (
	"math"
	"testing"
)

// Expected strings are what mlir-opt 22 prints for the same constants.
func TestFormatFloatMatchesUpstream(t *testing.T) {
	cases := []struct {
		v    float64
		k    FloatKind
		want string
	}{
		{0.123456789, F64, "0.123456789"},
		{123456789.123, F64, "123456789.123"},
		{1e-7, F64, "9.9999999999999995E-8"},
		{1.23456789e-7, F64, "1.2345678899999999E-7"},
		{0.1, F16, "9.997550e-02"},
		{3.14159, BF16, "3.140630e+00"},
		{1e20, F64, "1.000000e+20"},
		{1.23456789e20, F64, "1.23456789E+20"},
		{0.333, F32, "3.330000e-01"},
		{123456.7, F32, "123456.703"},
		{math.Inf(1), F64, "0x7FF0000000000000"},
		{math.Inf(-1), F32, "0xFF800000"},
		{math.Copysign(0, -1), F32, "-0.000000e+00"},
		{448, F8E4M3FN, "4.480000e+02"},
		{0.3, F8E5M2, "3.125000e-01"},
		{0.3, TF32, "3.000490e-01"},
		{1.5e300, F64, "1.500000e+300"},
		{12345.678, F64, "12345.678"},
		{0.001234567, F64, "0.001234567"},
		{1234567.5, F64, "1234567.5"},
		{0.3, F64, "3.000000e-01"},
		{0.7, F64, "0.69999999999999996"},
		{0.66666666666666663, F64, "0.66666666666666663"},
		{1e-7, F32, "1.000000e-07"},
		{1234567.0, F64, "0x4132D68700000000"},
		{12345678.0, F64, "0x41678C29C0000000"},
		{1e-40, F32, "9.999940e-41"},
		{1e-310, F64, "1.000000e-310"},
		{65504, F16, "6.550400e+04"},
	}
	for _, c := range cases {
		v := RoundToFloatKind(c.v, c.k)
		if got := FormatFloat(v, c.k); got != c.want {
			t.Errorf("FormatFloat(%v, %s) = %q, want %q", c.v, floatNames[c.k], got, c.want)
		}
	}
}

func TestFloatBitsRoundTrip(t *testing.T) {
	for _, k := range []FloatKind{F16, BF16, F8E4M3FN, F8E5M2, TF32} {
		n := uint64(1) << uint(k.StorageBits())
		for bits := uint64(0); bits < n; bits += 1 + n/4096 {
			v := FloatFromBits(bits, k)
			if math.IsNaN(v) {
				continue
			}
			if got := FloatToBits(v, k); got != bits {
				t.Fatalf("%s: bits %#x -> %v -> %#x", floatNames[k], bits, v, got)
			}
			if RoundToFloatKind(v, k) != v {
				t.Fatalf("%s: %v not stable under rounding", floatNames[k], v)
			}
		}
	}
	if got := FloatToBits(RoundToFloatKind(1.0, BF16), BF16); got != 0x3F80 {
		t.Errorf("bf16(1.0) = %#x", got)
	}
	if got := maxFinite(F8E4M3FN); got != 448 {
		t.Errorf("max f8E4M3FN = %v", got)
	}
}
