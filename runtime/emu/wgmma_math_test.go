package emu

import (
	"math"
	"testing"
)

// TestMmaAccumulateNonFinite: a zero in A times an Inf or a NaN in B is
// NaN, as on the hardware (the zero-skip must not hide it); finite rows
// still give exact sums.
func TestMmaAccumulateNonFinite(t *testing.T) {
	// A is 2×2, B is 2×2: B's row 1 holds +Inf and NaN.
	av := []float64{1, 0, 2, 3}
	bv := []float64{5, 6, math.Inf(1), math.NaN()}
	d := make([]float64, 4)
	mmaAccumulate(d, av, bv, 2, 2, 2)
	// row 0: 1·[5 6] + 0·[Inf NaN] = [NaN NaN]
	if !math.IsNaN(d[0]) || !math.IsNaN(d[1]) {
		t.Errorf("row 0 = %v, want NaN NaN (0·Inf, 0·NaN)", d[:2])
	}
	// row 1: 2·[5 6] + 3·[Inf NaN] = [Inf NaN]
	if !math.IsInf(d[2], 1) || !math.IsNaN(d[3]) {
		t.Errorf("row 1 = %v, want +Inf NaN", d[2:])
	}
	d = make([]float64, 4)
	mmaAccumulate(d, []float64{0, 1, 2, 0}, []float64{5, 6, 7, 8}, 2, 2, 2)
	if d[0] != 7 || d[1] != 8 || d[2] != 10 || d[3] != 12 {
		t.Errorf("finite product = %v, want [7 8 10 12]", d)
	}
}
