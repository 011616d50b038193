package lowernvgpu

import (
	"testing"

	"github.com/tmac-dev/tmac/dialects/nvgpu"
	"github.com/tmac-dev/tmac/ir"
)

func wgmmaTile(shape []int64, elem ir.Type) *ir.MemRefType {
	return ir.MemRefTypeOf(shape, elem, nil, ir.IntAttr(3, ir.I64))
}

var (
	tF16  = ir.FloatTypeOf(ir.F16)
	tBF16 = ir.FloatTypeOf(ir.BF16)
	tTF32 = ir.FloatTypeOf(ir.TF32)
	tE4M3 = ir.FloatTypeOf(ir.F8E4M3FN)
	tE5M2 = ir.FloatTypeOf(ir.F8E5M2)
)

// field extracts bits [lo, lo+n) of a descriptor.
func field(d uint64, lo, n uint) uint64 { return d >> lo & (1<<n - 1) }

// TestWgmmaDescriptorStrides checks LBO/SBO (bytes) and the encoded bit
// fields against hand-computed values for each swizzle mode, both majors
// and every input element type.
func TestWgmmaDescriptorStrides(t *testing.T) {
	cases := []struct {
		name      string
		tile      *ir.MemRefType
		sw        nvgpu.SwizzleKind
		isA, tr   bool
		major     wgmmaMajor
		lbo, sbo  int64
		lboUsed   bool
		mode      uint64
		lboF, sbF uint64 // encoded fields (bytes >> 4)
	}{
		// K-major, 128B swizzle: SBO = 8 rows x 128 B; LBO unused (1).
		{"A f16 K-major 128B", wgmmaTile([]int64{128, 64}, tF16), nvgpu.Swizzle128B, true, false, wgmmaKMajor, 16, 1024, false, 1, 1, 64},
		{"A bf16 K-major 128B", wgmmaTile([]int64{64, 64}, tBF16), nvgpu.Swizzle128B, true, false, wgmmaKMajor, 16, 1024, false, 1, 1, 64},
		{"A tf32 K-major 128B", wgmmaTile([]int64{64, 32}, tTF32), nvgpu.Swizzle128B, true, false, wgmmaKMajor, 16, 1024, false, 1, 1, 64},
		{"A e4m3 K-major 128B", wgmmaTile([]int64{64, 128}, tE4M3), nvgpu.Swizzle128B, true, false, wgmmaKMajor, 16, 1024, false, 1, 1, 64},
		// B without transposeB is K-major: N rows of K.
		{"B e5m2 K-major 128B", wgmmaTile([]int64{128, 256}, tE5M2), nvgpu.Swizzle128B, false, false, wgmmaKMajor, 16, 1024, false, 1, 1, 64},
		{"B tf32 K-major 128B", wgmmaTile([]int64{32, 128}, tTF32), nvgpu.Swizzle128B, false, false, wgmmaKMajor, 16, 1024, false, 1, 1, 64},
		// 64B and 32B swizzle: atoms of 8 rows x 64 / 32 B.
		{"A f16 K-major 64B", wgmmaTile([]int64{64, 32}, tF16), nvgpu.Swizzle64B, true, false, wgmmaKMajor, 16, 512, false, 2, 1, 32},
		{"A f16 K-major 32B", wgmmaTile([]int64{64, 16}, tF16), nvgpu.Swizzle32B, true, false, wgmmaKMajor, 16, 256, false, 3, 1, 16},
		// K-major without swizzle: core matrices 8 rows x 16 B contiguous
		// (SBO 128), next 16 B of K one chunk of M rows further (LBO M*16).
		{"A f16 K-major none", wgmmaTile([]int64{64, 64}, tF16), nvgpu.SwizzleNone, true, false, wgmmaKMajor, 1024, 128, true, 0, 64, 8},
		{"B f16 K-major none N=128", wgmmaTile([]int64{64, 128}, tF16), nvgpu.SwizzleNone, false, false, wgmmaKMajor, 2048, 128, true, 0, 128, 8},
		// MN-major (transposeB: K rows of N), 128B: LBO = K rows x 128 B
		// between 64-column chunks, SBO = 8 K rows x 128 B.
		{"B f16 MN-major 128B K=64", wgmmaTile([]int64{64, 128}, tF16), nvgpu.Swizzle128B, false, true, wgmmaMNMajor, 8192, 1024, true, 1, 512, 64},
		{"B bf16 MN-major 128B K=32", wgmmaTile([]int64{32, 256}, tBF16), nvgpu.Swizzle128B, false, true, wgmmaMNMajor, 4096, 1024, true, 1, 256, 64},
		// transposeA: K rows of M; K is dim 1 of the MxK type.
		{"A f16 MN-major 128B K=64", wgmmaTile([]int64{128, 64}, tF16), nvgpu.Swizzle128B, true, true, wgmmaMNMajor, 8192, 1024, true, 1, 512, 64},
		{"B f16 MN-major 64B K=64", wgmmaTile([]int64{64, 64}, tF16), nvgpu.Swizzle64B, false, true, wgmmaMNMajor, 4096, 512, true, 2, 256, 32},
		{"B f16 MN-major 32B K=64", wgmmaTile([]int64{64, 64}, tF16), nvgpu.Swizzle32B, false, true, wgmmaMNMajor, 2048, 256, true, 3, 128, 16},
		// MN-major without swizzle: LBO between groups of 8 K rows (128 B),
		// SBO between 16-byte chunks of N (K rows x 16 B).
		{"B f16 MN-major none K=64", wgmmaTile([]int64{64, 64}, tF16), nvgpu.SwizzleNone, false, true, wgmmaMNMajor, 128, 1024, true, 0, 8, 64},
	}
	for _, c := range cases {
		o := wgmmaOperandOf(c.tile, c.sw, c.isA, c.tr)
		if o.Major != c.major {
			t.Errorf("%s: major %s, want %s", c.name, o.Major, c.major)
		}
		if msg := o.check(); msg != "" {
			t.Errorf("%s: check: %s", c.name, msg)
		}
		lbo, sbo, used := o.strides()
		if lbo != c.lbo || sbo != c.sbo || used != c.lboUsed {
			t.Errorf("%s: LBO %d SBO %d used %v, want %d %d %v", c.name, lbo, sbo, used, c.lbo, c.sbo, c.lboUsed)
		}
		d := wgmmaDescriptorBits(c.sw, lbo, sbo)
		if got := field(d, 16, 14); got != c.lboF {
			t.Errorf("%s: LBO field %d, want %d", c.name, got, c.lboF)
		}
		if got := field(d, 32, 14); got != c.sbF {
			t.Errorf("%s: SBO field %d, want %d", c.name, got, c.sbF)
		}
		if got := field(d, 62, 2); got != c.mode {
			t.Errorf("%s: swizzle mode %d, want %d", c.name, got, c.mode)
		}
		if field(d, 0, 14) != 0 || field(d, 49, 3) != 0 || field(d, 14, 2) != 0 || field(d, 30, 2) != 0 || field(d, 46, 3) != 0 || field(d, 52, 10) != 0 {
			t.Errorf("%s: stray bits in %#x", c.name, d)
		}
	}
	// The whole word for the two tiles of the chapter-4 GEMM: A 128x64 f16
	// K-major and B 64x128 f16 N-major, both 128B-swizzled.
	if d := wgmmaDescriptorBits(nvgpu.Swizzle128B, 16, 1024); d != 0x4000004000010000 {
		t.Errorf("A descriptor bits %#x", d)
	}
	if d := wgmmaDescriptorBits(nvgpu.Swizzle128B, 8192, 1024); d != 0x4000004002000000 {
		t.Errorf("B descriptor bits %#x", d)
	}
	if d := wgmmaDescriptorBits(nvgpu.Swizzle32B, 2048, 256); d != 0xC000001000800000 {
		t.Errorf("32B descriptor bits %#x", d)
	}
}

// TestWgmmaSubTileOffsets checks the start-address advance of each
// instruction's sub-tile (64-row slices of A, instruction-K steps).
func TestWgmmaSubTileOffsets(t *testing.T) {
	cases := []struct {
		name    string
		tile    *ir.MemRefType
		sw      nvgpu.SwizzleKind
		isA, tr bool
		mn, k   int64 // sub-tile origin (elements)
		want    int64 // bytes
	}{
		// K-major 128B: one instruction reads 32 bytes of K in a 128-byte row.
		{"A f16 k1", wgmmaTile([]int64{128, 64}, tF16), nvgpu.Swizzle128B, true, false, 0, 16, 32},
		{"A f16 k3", wgmmaTile([]int64{128, 64}, tF16), nvgpu.Swizzle128B, true, false, 0, 48, 96},
		{"A f16 slice1", wgmmaTile([]int64{128, 64}, tF16), nvgpu.Swizzle128B, true, false, 64, 0, 8192},
		{"A f16 slice1 k2", wgmmaTile([]int64{128, 64}, tF16), nvgpu.Swizzle128B, true, false, 64, 32, 8256},
		// K = 128 f16 = two 128-byte chunks of 64 rows each.
		{"A f16 K=128 k4", wgmmaTile([]int64{64, 128}, tF16), nvgpu.Swizzle128B, true, false, 0, 64, 8192},
		{"A f16 K=128 k5", wgmmaTile([]int64{64, 128}, tF16), nvgpu.Swizzle128B, true, false, 0, 80, 8224},
		{"A tf32 k1", wgmmaTile([]int64{64, 32}, tTF32), nvgpu.Swizzle128B, true, false, 0, 8, 32},
		{"A tf32 k3", wgmmaTile([]int64{64, 32}, tTF32), nvgpu.Swizzle128B, true, false, 0, 24, 96},
		{"A e4m3 k1", wgmmaTile([]int64{64, 128}, tE4M3), nvgpu.Swizzle128B, true, false, 0, 32, 32},
		{"B e4m3 K-major k3", wgmmaTile([]int64{128, 256}, tE4M3), nvgpu.Swizzle128B, false, false, 0, 96, 96},
		{"B f16 K-major k2", wgmmaTile([]int64{64, 128}, tF16), nvgpu.Swizzle128B, false, false, 0, 32, 64},
		// MN-major: a K step is 16 rows of the chunk.
		{"B f16 N-major k1", wgmmaTile([]int64{64, 128}, tF16), nvgpu.Swizzle128B, false, true, 0, 16, 2048},
		{"B f16 N-major k3", wgmmaTile([]int64{64, 128}, tF16), nvgpu.Swizzle128B, false, true, 0, 48, 6144},
		{"A f16 M-major slice1", wgmmaTile([]int64{128, 64}, tF16), nvgpu.Swizzle128B, true, true, 64, 0, 8192},
		{"A f16 M-major slice1 k1", wgmmaTile([]int64{128, 64}, tF16), nvgpu.Swizzle128B, true, true, 64, 16, 10240},
		{"B f16 N-major 64B k1", wgmmaTile([]int64{64, 64}, tF16), nvgpu.Swizzle64B, false, true, 0, 16, 1024},
		// 32B swizzle: a K step fills a whole 32-byte row: next chunk.
		{"A f16 32B k1", wgmmaTile([]int64{64, 64}, tF16), nvgpu.Swizzle32B, true, false, 0, 16, 2048},
		{"A f16 32B k2", wgmmaTile([]int64{64, 64}, tF16), nvgpu.Swizzle32B, true, false, 0, 32, 4096},
		// No swizzle: 16-byte chunks; a K step is two chunks.
		{"A f16 none k1", wgmmaTile([]int64{64, 64}, tF16), nvgpu.SwizzleNone, true, false, 0, 16, 2048},
		{"A f16 none slice1", wgmmaTile([]int64{128, 64}, tF16), nvgpu.SwizzleNone, true, false, 64, 0, 1024},
	}
	for _, c := range cases {
		o := wgmmaOperandOf(c.tile, c.sw, c.isA, c.tr)
		if got := o.subTileOffset(c.mn, c.k); got != c.want {
			t.Errorf("%s: offset %d, want %d", c.name, got, c.want)
		}
	}
}

func TestWgmmaOperandChecks(t *testing.T) {
	// 64 bytes of K cannot fill 128-byte swizzle rows.
	if msg := wgmmaOperandOf(wgmmaTile([]int64{64, 32}, tF16), nvgpu.Swizzle128B, true, false).check(); msg == "" {
		t.Error("64x32 f16 with 128B swizzle accepted")
	}
	// N-major B with N = 32 f16 (64 bytes) under 128B swizzle.
	if msg := wgmmaOperandOf(wgmmaTile([]int64{64, 32}, tF16), nvgpu.Swizzle128B, false, true).check(); msg == "" {
		t.Error("N-major 64x32 f16 with 128B swizzle accepted")
	}
	if msg := wgmmaOperandOf(wgmmaTile([]int64{64, 32}, tF16), nvgpu.Swizzle64B, true, false).check(); msg != "" {
		t.Error(msg)
	}
	if wgmmaInstrK(tF16) != 16 || wgmmaInstrK(tBF16) != 16 || wgmmaInstrK(tTF32) != 8 || wgmmaInstrK(tE4M3) != 32 || wgmmaInstrK(tE5M2) != 32 {
		t.Error("instruction K")
	}
}

// TestWgmmaAccumulatorLayout checks the fragment layout of m64nN f32
// accumulators against the PTX ISA figure and that it covers the 64xN slice
// exactly once.
func TestWgmmaAccumulatorLayout(t *testing.T) {
	coord := func(tid, r int64) (int64, int64) {
		r0, c0, dr, dc := wgmmaAccumulatorCoord(tid, r)
		return r0 + dr, c0 + dc
	}
	hand := []struct{ t, r, row, col int64 }{
		{0, 0, 0, 0}, {0, 1, 0, 1}, {0, 2, 8, 0}, {0, 3, 8, 1}, {0, 4, 0, 8}, {0, 7, 8, 9},
		{1, 0, 0, 2}, {3, 1, 0, 7}, {4, 0, 1, 0}, {5, 0, 1, 2}, {31, 3, 15, 7},
		{32, 0, 16, 0}, {37, 2, 25, 2}, {64, 0, 32, 0}, {127, 0, 55, 6}, {127, 63, 63, 127},
	}
	for _, h := range hand {
		if r, c := coord(h.t, h.r); r != h.row || c != h.col {
			t.Errorf("thread %d register %d: (%d, %d), want (%d, %d)", h.t, h.r, r, c, h.row, h.col)
		}
	}
	for _, n := range []int64{8, 64, 136, 256} {
		seen := make(map[[2]int64]bool)
		for tid := int64(0); tid < 128; tid++ {
			for r := int64(0); r < n/2; r++ {
				row, col := coord(tid, r)
				if row < 0 || row >= 64 || col < 0 || col >= n {
					t.Fatalf("n=%d: thread %d register %d at (%d, %d) outside 64x%d", n, tid, r, row, col, n)
				}
				k := [2]int64{row, col}
				if seen[k] {
					t.Fatalf("n=%d: (%d, %d) held twice", n, row, col)
				}
				seen[k] = true
			}
		}
		if int64(len(seen)) != 64*n {
			t.Errorf("n=%d: %d elements covered", n, len(seen))
		}
	}
}

func TestWgmmaAccumulatorStruct(t *testing.T) {
	f32 := ir.FloatTypeOf(ir.F32)
	got := wgmmaAccumulatorStruct(ir.VectorTypeOf([]int64{128, 16}, f32)).String()
	want := "!llvm.struct<(struct<(f32, f32, f32, f32, f32, f32, f32, f32)>, struct<(f32, f32, f32, f32, f32, f32, f32, f32)>)>"
	if got != want {
		t.Errorf("f32 accumulator: %s", got)
	}
	got = wgmmaAccumulatorStruct(ir.VectorTypeOf([]int64{64, 16}, tF16)).String()
	want = "!llvm.struct<(struct<(vector<2xf16>, vector<2xf16>, vector<2xf16>, vector<2xf16>)>)>"
	if got != want {
		t.Errorf("f16 accumulator: %s", got)
	}
}
