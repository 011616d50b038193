package main

import (
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/tmac-dev/tmac/runtime/cuda"
)

func TestF16(t *testing.T) {
	cases := []struct {
		x    float32
		bits uint16
	}{
		{0, 0}, {1, 0x3c00}, {-2, 0xc000}, {65504, 0x7bff}, {65520, 0x7c00}, // rounds up to inf
		{float32(math.Ldexp(1, -14)), 0x0400}, {float32(math.Ldexp(1, -24)), 0x0001}, // smallest normal, subnormal
		{float32(math.Ldexp(1, -25)), 0},          // tie to even: 0
		{float32(math.Ldexp(3, -25)), 0x0002},     // 1.5 subnormal ulps: to even
		{1 + float32(math.Ldexp(1, -11)), 0x3c00}, // tie to even down
		{1 + float32(math.Ldexp(3, -11)), 0x3c02}, // tie to even up
		{float32(math.Inf(-1)), 0xfc00},
	}
	for _, c := range cases {
		if got := f32ToF16(c.x); got != c.bits {
			t.Errorf("f32ToF16(%g) = %#04x, want %#04x", c.x, got, c.bits)
		}
	}
	if f32ToF16(float32(math.NaN()))&0x7fff <= 0x7c00 {
		t.Error("NaN does not stay NaN")
	}
	// Every finite f16 round-trips.
	for h := 0; h < 0x10000; h++ {
		if h&0x7c00 == 0x7c00 {
			continue
		}
		if got := f32ToF16(f16ToF32(uint16(h))); got != uint16(h) && !(h == 0x8000 && got == 0x8000) {
			t.Fatalf("f16 %#04x round-trips to %#04x", h, got)
		}
	}
}

func TestBF16AndTF32(t *testing.T) {
	if got := f32ToBF16(1 + float32(math.Ldexp(1, -8))); got != 0x3f80 { // tie, to even
		t.Errorf("bf16 tie: %#04x", got)
	}
	if got := f32ToBF16(1 + float32(math.Ldexp(3, -8))); got != 0x3f82 {
		t.Errorf("bf16 tie up: %#04x", got)
	}
	if got := bf16ToF32(f32ToBF16(3.140625)); got != 3.140625 {
		t.Errorf("bf16 exact value: %g", got)
	}
	x := roundTF32(1 + float32(math.Ldexp(1, -11))) // exactly half an ulp of tf32: to even
	if x != 1 {
		t.Errorf("tf32 tie: %g", x)
	}
	if math.Float32bits(roundTF32(1.2345678))&0x1fff != 0 {
		t.Error("tf32 keeps low bits")
	}
}

func TestE4M3(t *testing.T) {
	for _, c := range []struct {
		b uint8
		v float32
	}{{0x00, 0}, {0x38, 1}, {0x7e, 448}, {0x01, float32(math.Ldexp(1, -9))}, {0x08, float32(math.Ldexp(1, -6))}, {0xb8, -1}, {0x3c, 1.5}} {
		if got := e4m3ToF32(c.b); got != c.v {
			t.Errorf("e4m3 %#02x = %g, want %g", c.b, got, c.v)
		}
		if got := f32ToE4M3(c.v); got != c.b && !(c.v == 0) {
			t.Errorf("f32ToE4M3(%g) = %#02x, want %#02x", c.v, got, c.b)
		}
	}
	if !math.IsNaN(float64(e4m3ToF32(0x7f))) || f32ToE4M3(float32(math.NaN())) != 0x7f {
		t.Error("NaN")
	}
	if f32ToE4M3(1000) != 0x7e || f32ToE4M3(-1000) != 0xfe {
		t.Error("saturation")
	}
	// 1.0625 is halfway between 1 (0x38, even) and 1.125 (0x39): to even.
	if f32ToE4M3(1.0625) != 0x38 || f32ToE4M3(1.1875) != 0x3a {
		t.Errorf("ties: %#02x %#02x", f32ToE4M3(1.0625), f32ToE4M3(1.1875))
	}
	// Every finite code round-trips, and rounding picks a nearest value.
	for b := 0; b < 256; b++ {
		if b&0x7f == 0x7f {
			continue
		}
		if got := f32ToE4M3(e4m3ToF32(uint8(b))); got != uint8(b) && b != 0x80 {
			t.Fatalf("e4m3 %#02x round-trips to %#02x", b, got)
		}
	}
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 10000; i++ {
		x := float32(r.NormFloat64() * 10)
		y := e4m3ToF32(f32ToE4M3(x))
		for b := 0; b < 256; b++ {
			v := e4m3ToF32(uint8(b))
			if !math.IsNaN(float64(v)) && math.Abs(float64(v-x)) < math.Abs(float64(y-x)) {
				t.Fatalf("%g rounds to %g, but %g is nearer", x, y, v)
			}
		}
	}
}

func TestKindEncodeDecode(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	for k := kF32; k <= kE4M3; k++ {
		b := newTyped(r, k, []int64{100}, false)
		got := k.decode(k.encode(b.host))
		for i := range got {
			if got[i] != b.host[i] {
				t.Fatalf("%s: element %d: %g != %g", k, i, got[i], b.host[i])
			}
		}
		p := newTyped(r, k, []int64{4}, true)
		for _, v := range k.decode(k.encode(p.host)) {
			if !math.IsNaN(float64(v)) {
				t.Fatalf("%s: poison decodes to %g", k, v)
			}
		}
		if _, err := kindOf(k.String()); err != nil {
			t.Error(err)
		}
	}
	if kE4M3.tmapType() != cuda.TensorMapUint8 || kBF16.tmapType() != cuda.TensorMapBFloat16 || kTF32.tmapType() != cuda.TensorMapFloat32 {
		t.Error("tensor map data types")
	}
}

func TestSwizzleOffset(t *testing.T) {
	// 128B: row r's 16-byte chunk c moves to chunk c ^ (r % 8).
	for r := 0; r < 16; r++ {
		for c := 0; c < 8; c++ {
			if got, want := swizzleOffset(r*128+c*16+4, 128), r*128+(c^(r%8))*16+4; got != want {
				t.Fatalf("128B r%d c%d: %d, want %d", r, c, got, want)
			}
		}
	}
	// 32B: rows of 32 bytes; the half flips every 4 rows.
	if swizzleOffset(4*32, 32) != 4*32+16 || swizzleOffset(3*32, 32) != 3*32 || swizzleOffset(8*32+16, 32) != 8*32+16 {
		t.Error("32B pattern")
	}
	// 64B: rows of 64 bytes; chunk c ^ ((r / 2) % 4).
	if swizzleOffset(2*64, 64) != 2*64+16 || swizzleOffset(6*64+48, 64) != 6*64+0 {
		t.Error("64B pattern")
	}
	if swizzleOffset(1234, 0) != 1234 {
		t.Error("none")
	}
}

// TestCasesParse checks that every case's source parses, its kernel
// exists, and the tensor-map arguments agree with the descriptor types
// (element type, rank, buffer extent) without a GPU.
func TestCasesParse(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	for _, c := range cases {
		if strings.HasPrefix(c.file, "example-") {
			continue
		}
		sig, err := kernelSignature("../"+c.file, c.kernel)
		if err != nil {
			t.Errorf("%s: %v", c.label(), err)
			continue
		}
		if c.bytes > 64<<20 {
			continue // large cases: skip the host setup
		}
		args := c.setup(r)
		if len(args) != len(sig) {
			t.Errorf("%s: %d arguments for %d parameters", c.label(), len(args), len(sig))
			continue
		}
		for i, a := range args {
			if ta, ok := a.(*tmapArg); ok {
				if err := checkTensorMapArg(sig[i], ta); err != nil {
					t.Errorf("%s: argument %d: %v", c.label(), i, err)
				}
			}
		}
	}
}
