package emu

import (
	"math"
	"testing"

	"github.com/tmac-dev/tmac/ir"
)

// The order the lowering combines lanes in (lane 0's view of the
// butterfly), for full and partial widths.
func TestButterflyOrder(t *testing.T) {
	concat := func(x, y any) any { return "(" + x.(string) + y.(string) + ")" }
	lanes := func(n int) []any {
		var out []any
		for i := 0; i < n; i++ {
			out = append(out, string(rune('a'+i)))
		}
		return out
	}
	for _, c := range []struct {
		n    int
		want string
	}{
		{1, "a"},
		{2, "(ab)"},
		{3, "((ab)c)"},
		{4, "((ab)(cd))"},
		{5, "(((ab)(cd))e)"},
		{8, "(((ab)(cd))((ef)(gh)))"},
	} {
		if got := butterfly(lanes(c.n), concat); got != c.want {
			t.Errorf("width %d: %v, want %s", c.n, got, c.want)
		}
	}
}

// The float combinations order zeros (-0 < +0) and treat NaN as PTX's
// min/max (ignored by minnumf/maxnumf, propagated by minimumf/maximumf).
func TestFloatCombiner(t *testing.T) {
	nan, negZero := math.NaN(), math.Copysign(0, -1)
	same := func(a, b float64) bool {
		return math.IsNaN(a) && math.IsNaN(b) || a == b && math.Signbit(a) == math.Signbit(b)
	}
	for _, c := range []struct {
		kind       string
		x, y, want float64
	}{
		{"maxnumf", nan, 1, 1},
		{"maxnumf", 1, nan, 1},
		{"maxnumf", nan, nan, nan},
		{"maxnumf", negZero, 0, 0},
		{"maxnumf", 0, negZero, 0},
		{"minnumf", 0, negZero, negZero},
		{"minnumf", negZero, 0, negZero},
		{"minnumf", 2, -3, -3},
		{"maximumf", nan, 1, nan},
		{"maximumf", 1, nan, nan},
		{"maximumf", negZero, 0, 0},
		{"minimumf", 0, negZero, negZero},
		{"minimumf", 1, nan, nan},
		{"add", 1.5, 2, 3.5},
		{"mul", 1.5, 2, 3},
	} {
		if got := floatCombiner(c.kind)(c.x, c.y); !same(got, c.want) {
			t.Errorf("%s(%v, %v) = %v, want %v", c.kind, c.x, c.y, got, c.want)
		}
	}
}

// Integer combinations on values held as lanes hold them: sign-extended,
// i1 as 0 or 1 (1 is -1 when signed).
func TestIntCombiner(t *testing.T) {
	for _, c := range []struct {
		kind       string
		w          int
		x, y, want int64
	}{
		{"minsi", 1, 1, 0, 1},
		{"maxsi", 1, 1, 0, 0},
		{"minui", 1, 1, 0, 0},
		{"maxui", 1, 1, 0, 1},
		{"maxui", 8, -1, 1, -1},
		{"minui", 8, -1, 1, 1},
		{"maxsi", 8, -1, 1, 1},
		{"minui", 64, -1, 1, 1},
		{"xor", 32, 6, 3, 5},
	} {
		if got := intCombiner(c.kind, c.w)(c.x, c.y); got != c.want {
			t.Errorf("%s on i%d (%d, %d) = %d, want %d", c.kind, c.w, c.x, c.y, got, c.want)
		}
	}
	// Sums wrap to the type.
	add := kindCombiner("add", ir.I8)
	if got := add(int64(127), int64(1)); got != int64(-128) {
		t.Errorf("i8 127 + 1 = %v, want -128", got)
	}
}

// Vectors combine element by element; f16 sums are rounded to f16.
func TestVectorCombiner(t *testing.T) {
	add := kindCombiner("add", ir.VectorTypeOf([]int64{2}, ir.FloatTypeOf(ir.F16)))
	got := add(vec{f: []float64{1, 2048}}, vec{f: []float64{2, 1}}).(vec)
	// 2048 + 1 is not an f16: it rounds to even, 2048.
	if got.f[0] != 3 || got.f[1] != 2048 {
		t.Errorf("got %v, want [3 2048]", got.f)
	}
}
