package cuda

import (
	"strings"
	"testing"
	"unsafe"
)

// good is a valid 2-D f16 map: a 512x1024 row-major matrix, 128x64 box,
// 128-byte swizzle (the A operand of a 128x128x64 GEMM tile).
func good() *TiledDesc {
	return &TiledDesc{
		DataType: TensorMapFloat16,
		Global:   0x7f0000000000,
		Dims:     []uint64{1024, 512},
		Strides:  []uint64{1024 * 2},
		Box:      []uint32{64, 128},
		Swizzle:  Swizzle128B,
	}
}

func TestValidateTiledAccepts(t *testing.T) {
	cases := map[string]func(d *TiledDesc){
		"as is": func(d *TiledDesc) {},
		"rank 1": func(d *TiledDesc) {
			d.Dims = []uint64{500}
			d.Strides = nil
			d.Box = []uint32{256}
			d.Swizzle = SwizzleNone
		},
		"rank 5": func(d *TiledDesc) {
			d.Dims = []uint64{8, 2, 2, 2, 2}
			d.Strides = []uint64{16, 32, 64, 128}
			d.Box = []uint32{8, 1, 2, 1, 2}
		},
		"32B swizzle":       func(d *TiledDesc) { d.Box[0] = 16; d.Swizzle = Swizzle32B },
		"64B swizzle":       func(d *TiledDesc) { d.Box[0] = 32; d.Swizzle = Swizzle64B },
		"narrow 128B":       func(d *TiledDesc) { d.Box[0] = 8 },
		"box 256":           func(d *TiledDesc) { d.Box[1] = 256 },
		"no swizzle wide":   func(d *TiledDesc) { d.Box[0] = 256; d.Swizzle = SwizzleNone },
		"element strides":   func(d *TiledDesc) { d.ElementStrides = []uint32{1, 8} },
		"NaN fill on float": func(d *TiledDesc) { d.OOBFill = OOBFillNaN },
		"fp8 as uint8":      func(d *TiledDesc) { d.DataType = TensorMapUint8; d.Box[0] = 128 },
		"stride just below": func(d *TiledDesc) { d.Strides[0] = 1<<40 - 16 },
		"L2 256B":           func(d *TiledDesc) { d.L2Promotion = L2Promotion256B },
		"interleave rank 3": func(d *TiledDesc) {
			d.Interleave, d.Swizzle = Interleave32B, Swizzle32B
			d.Dims, d.Strides, d.Box = []uint64{16, 4, 4}, []uint64{32, 128}, []uint32{16, 4, 4}
		},
	}
	for name, mod := range cases {
		d := good()
		mod(d)
		if err := ValidateTiled(d); err != nil {
			t.Errorf("%s: unexpected error: %v", name, err)
		}
	}
}

func TestValidateTiledRejects(t *testing.T) {
	cases := []struct {
		name string
		mod  func(d *TiledDesc)
		want string
	}{
		{"rank 0", func(d *TiledDesc) { d.Dims, d.Strides, d.Box = nil, nil, nil }, "rank 0 is not supported (1 to 5)"},
		{"rank 6", func(d *TiledDesc) {
			d.Dims = []uint64{8, 2, 2, 2, 2, 2}
			d.Strides = []uint64{16, 32, 64, 128, 256}
			d.Box = []uint32{8, 1, 1, 1, 1, 1}
		}, "rank 6 is not supported"},
		{"unaligned address", func(d *TiledDesc) { d.Global += 8 }, "is not 16-byte aligned"},
		{"stride not multiple of 16", func(d *TiledDesc) { d.Strides[0] = 1000 }, "global stride of dimension 1 is 1000 bytes, not a multiple of 16"},
		{"stride too large", func(d *TiledDesc) { d.Strides[0] = 1 << 40 }, "must be below 2^40"},
		{"stride count", func(d *TiledDesc) { d.Strides = []uint64{2048, 4096} }, "2 global strides given for rank 2"},
		{"zero dim", func(d *TiledDesc) { d.Dims[1] = 0 }, "size of dimension 1 is 0"},
		{"box 0", func(d *TiledDesc) { d.Box[1] = 0 }, "box size of dimension 1 is 0; it must be 1 to 256"},
		{"box 257", func(d *TiledDesc) { d.Box[1] = 257 }, "box size of dimension 1 is 257"},
		{"box count", func(d *TiledDesc) { d.Box = []uint32{64} }, "1 box sizes given for rank 2"},
		{"inner box not multiple of 16 bytes", func(d *TiledDesc) { d.Box[0] = 12 }, "inner box dimension is 24 bytes (12 x 2); it must be a multiple of 16"},
		{"inner box wider than swizzle", func(d *TiledDesc) { d.Box[0] = 128 }, "inner box dimension is 256 bytes, more than the 128-byte swizzle span"},
		{"inner box wider than 32B swizzle", func(d *TiledDesc) { d.Box[0] = 32; d.Swizzle = Swizzle32B }, "64 bytes, more than the 32-byte swizzle span"},
		{"element stride 0", func(d *TiledDesc) { d.ElementStrides = []uint32{0, 1} }, "element stride of dimension 0 is 0; it must be 1 to 8"},
		{"element stride 9", func(d *TiledDesc) { d.ElementStrides = []uint32{1, 9} }, "element stride of dimension 1 is 9"},
		{"element stride count", func(d *TiledDesc) { d.ElementStrides = []uint32{1} }, "1 element strides given for rank 2"},
		{"NaN fill on integers", func(d *TiledDesc) { d.DataType = TensorMapUint16; d.OOBFill = OOBFillNaN }, "NaN out-of-bounds fill needs a floating-point data type, not uint16"},
		{"interleave rank 2", func(d *TiledDesc) { d.Interleave = Interleave16B }, "interleaved layout needs rank 3 to 5"},
		{"bad swizzle", func(d *TiledDesc) { d.Swizzle = 4 }, "unknown swizzle mode 4"},
		{"bad type", func(d *TiledDesc) { d.DataType = 99 }, "unsupported data type 99"},
		{"bad oob", func(d *TiledDesc) { d.OOBFill = 2 }, "unknown out-of-bounds fill mode 2"},
	}
	for _, c := range cases {
		d := good()
		c.mod(d)
		err := ValidateTiled(d)
		if err == nil {
			t.Errorf("%s: accepted, want error containing %q", c.name, c.want)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %q does not contain %q", c.name, err, c.want)
		}
	}
}

func TestTensorMapAlignment(t *testing.T) {
	for i := 0; i < 64; i++ {
		m := newTensorMap()
		if a := uintptr(m.Ptr()) % 128; a != 0 {
			t.Fatalf("map at %p is not 128-byte aligned (%d)", m.Ptr(), a)
		}
		if len(m.Bytes()) != TensorMapSize {
			t.Fatalf("map has %d bytes", len(m.Bytes()))
		}
		if unsafe.Pointer(&m.Bytes()[0]) != m.Ptr() {
			t.Fatal("Bytes and Ptr disagree")
		}
		_ = make([]byte, i*8+1) // shift later allocations
	}
}

func TestDataTypeSizes(t *testing.T) {
	want := map[TensorMapDataType]int{
		TensorMapUint8: 1, TensorMapFloat16: 2, TensorMapBFloat16: 2, TensorMapFloat32: 4,
		TensorMapTFloat32: 4, TensorMapFloat64: 8, TensorMapInt64: 8,
	}
	for dt, n := range want {
		if dt.Size() != n {
			t.Errorf("%s: size %d, want %d", dt, dt.Size(), n)
		}
	}
	if Swizzle128B.Span() != 128 || Swizzle32B.Span() != 32 || SwizzleNone.Span() != 0 {
		t.Error("swizzle spans")
	}
}
