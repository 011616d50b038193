package buffer

import (
	"math"
	"math/rand"
	"testing"

	"github.com/tmac-dev/tmac/ir"
)

// TestFloatEncoder: FillRandom's bit-arithmetic rounding gives the bits
// SetFloat's general rounding gives, wherever it takes a value: random
// values of the input distributions and of wide magnitudes, exact ties at
// every rounding position, and the edges of each format's range.
func TestFloatEncoder(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for _, k := range []ir.FloatKind{ir.F32, ir.BF16, ir.F16} {
		e := normalEncoder(ir.FloatTypeOf(k))
		taken := 0
		check := func(v float64) {
			bits, ok := e.encode(v)
			if !ok {
				return
			}
			taken++
			if want := ir.FloatToBits(ir.RoundToFloatKind(v, k), k); bits != want {
				t.Fatalf("%v: %v encodes as %#x, SetFloat stores %#x", k, v, bits, want)
			}
		}
		for i := 0; i < 200000; i++ {
			check(r.NormFloat64())
			check(2*r.Float64() - 1)
			check(math.Ldexp(r.Float64()+0.5, r.Intn(80)-40) * float64(1-2*r.Intn(2)))
		}
		// Ties and their neighbours: m + 1/2 ulp of the format, for every
		// exponent the encoder takes, odd and even m.
		mant := map[ir.FloatKind]int{ir.F32: 23, ir.BF16: 7, ir.F16: 10}[k]
		for exp := -130; exp <= 130; exp++ {
			for _, m := range []float64{1, 3, 254, 255, 511, 1023, 2047} {
				base := math.Ldexp(1+m/math.Ldexp(1, mant+1), exp)
				for _, d := range []float64{0, math.Ldexp(1, exp-60), -math.Ldexp(1, exp-60)} {
					check(base + d)
					check(-(base + d))
				}
			}
		}
		for _, v := range []float64{65504, 65519.99, 65520, 6.1035156e-05, 6.0e-05, 3.389e38, 3.3895e38, 1.1754944e-38, 1.17e-38, 0, math.Inf(1), math.NaN()} {
			check(v)
			check(-v)
		}
		if taken == 0 {
			t.Fatalf("%v: the encoder took no value", k)
		}
	}
}

// TestPoisonFills: Poison writes the poison value into every element, for
// sizes that are and are not powers of two.
func TestPoisonFills(t *testing.T) {
	for _, n := range []int64{1, 3, 64, 1000} {
		b, _ := New(ir.FloatTypeOf(ir.BF16), []int64{n})
		for i := range b.Bytes {
			b.Bytes[i] = 0x11
		}
		b.Poison()
		for i := 0; i < int(n); i++ {
			if !math.IsNaN(b.Float(i)) {
				t.Fatalf("n=%d: element %d is %v, not NaN", n, i, b.Float(i))
			}
		}
		c, _ := New(ir.IntegerTypeOf(32), []int64{n})
		c.Poison()
		want, _ := New(ir.IntegerTypeOf(32), []int64{1})
		want.SetInt(0, Sentinel)
		for i := 0; i < int(n); i++ {
			if c.Int(i) != want.Int(0) {
				t.Fatalf("n=%d: i32 element %d is %d", n, i, c.Int(i))
			}
		}
	}
}
