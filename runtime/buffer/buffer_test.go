package buffer

import (
	"math"
	"math/rand"
	"testing"

	"github.com/tmac-dev/tmac/ir"
)

func TestRoundTripEncodings(t *testing.T) {
	for _, elem := range []ir.Type{ir.F16T, ir.BF16T, ir.F32T, ir.F64T, ir.FloatTypeOf(ir.F8E4M3FN), ir.FloatTypeOf(ir.TF32)} {
		b, err := New(elem, []int64{4})
		if err != nil {
			t.Fatal(err)
		}
		b.SetFloat(0, 1.5)
		b.SetFloat(1, -2)
		if b.Float(0) != 1.5 || b.Float(1) != -2 {
			t.Errorf("%s: got %v %v", elem, b.Float(0), b.Float(1))
		}
		b.Poison()
		if !math.IsNaN(b.Float(2)) {
			t.Errorf("%s: poison is not NaN", elem)
		}
	}
	// tf32 is stored like f32, with the low 13 mantissa bits cleared.
	if b, _ := New(ir.FloatTypeOf(ir.TF32), []int64{1}); true {
		b.SetFloat(0, 1.0+1.0/1024+1.0/4096)
		if got := uint32(b.Bytes[0]) | uint32(b.Bytes[1])<<8 | uint32(b.Bytes[2])<<16 | uint32(b.Bytes[3])<<24; got != 0x3F802000 {
			t.Errorf("tf32 bits %#x, want 0x3F802000", got)
		}
	}
	if b, _ := New(ir.F16T, []int64{1}); true {
		b.SetFloat(0, 1)
		if b.Bytes[0] != 0x00 || b.Bytes[1] != 0x3C {
			t.Errorf("f16 1.0 encoded as % x", b.Bytes)
		}
	}
}

func TestIntegers(t *testing.T) {
	b, _ := New(ir.I8, []int64{3})
	b.SetInt(0, -3)
	b.SetInt(1, 300)
	if b.Int(0) != -3 || b.Int(1) != 44 {
		t.Errorf("i8: %d %d", b.Int(0), b.Int(1))
	}
	u, _ := New(ir.IntegerTypeWithSign(16, ir.Unsigned), []int64{1})
	u.SetInt(0, 65535)
	if u.Int(0) != 65535 {
		t.Errorf("ui16: %d", u.Int(0))
	}
	b.Poison()
	sentinel := int64(Sentinel)
	lowByte := sentinel & 0xFF
	if lowByte >= 128 {
		lowByte -= 256
	}
	if b.Int(2) != lowByte {
		t.Errorf("sentinel: %d", b.Int(2))
	}
}

func TestFillRandomIsSeededAndNonZero(t *testing.T) {
	a, _ := New(ir.F32T, []int64{64})
	c, _ := New(ir.F32T, []int64{64})
	a.FillRandom(rand.New(rand.NewSource(1)), Normal)
	c.FillRandom(rand.New(rand.NewSource(1)), Normal)
	zeros := 0
	for i := 0; i < 64; i++ {
		if a.Float(i) != c.Float(i) {
			t.Fatal("same seed gave different data")
		}
		if a.Float(i) == 0 {
			zeros++
		}
	}
	if zeros > 1 {
		t.Errorf("%d zeros in random data", zeros)
	}
	if _, err := New(ir.IntegerTypeOf(3), []int64{1}); err == nil {
		t.Error("i3 accepted")
	}
}
