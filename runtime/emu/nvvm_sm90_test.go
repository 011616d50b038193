package emu

import (
	"math"
	"testing"
)

func TestRcpApproxFtz(t *testing.T) {
	sub := float64(math.Float32frombits(1)) // the smallest f32 subnormal
	for _, c := range []struct{ x, want float64 }{
		{2, 0.5},
		{3, float64(float32(1.0 / 3))},
		{-4, -0.25},
		{sub, math.Inf(1)},    // the subnormal input is flushed to +0
		{-sub, math.Inf(-1)},  // and -0
		{0x1p127, 0},          // 2^-127 is subnormal: flushed
		{-0x1p126, -0x1p-126}, // the smallest normal stays
		{math.Inf(1), 0},      // 1/inf
		{math.Copysign(0, -1), math.Inf(-1)},
	} {
		got := rcpApproxFtz(c.x)
		if got != c.want || math.Signbit(got) != math.Signbit(c.want) {
			t.Errorf("rcpApproxFtz(%g) = %g, want %g", c.x, got, c.want)
		}
	}
}
