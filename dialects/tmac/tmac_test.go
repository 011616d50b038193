package tmac_test

import (
	"strings"
	"testing"

	"github.com/tmac-dev/tmac/dialects/nvgpu"
	"github.com/tmac-dev/tmac/dialects/tmac"
	"github.com/tmac-dev/tmac/internal/testutil"
	"github.com/tmac-dev/tmac/ir"
)

const descText = "!nvgpu.tensormap.descriptor<tensor = memref<64x64xf16, 3>, swizzle = swizzle_128b, l2promo = none, oob = zero, interleave = none>"

const loopSrc = `!d = ` + descText + `
!d1 = !nvgpu.tensormap.descriptor<tensor = memref<256xf32, 3>, swizzle = none, l2promo = none, oob = zero, interleave = none>
!bars = !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>
func.func @k(%d: !d, %d1: !d1, %bars: !bars, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = memref.alloc() : memref<64x64xf16, #gpu.address_space<workgroup>>
  %w = memref.alloc() : memref<64x256xf16, #gpu.address_space<workgroup>>
  %v = memref.alloc() : memref<256xf32, 3>
  scf.for %k = %c0 to %n step %c1 {
    tmac.tma.load %d[%k, %c0] to %a : !d -> memref<64x64xf16, #gpu.address_space<workgroup>>
    tmac.tma.load %d[%k, %c0] to %w {tag} : !d -> memref<64x256xf16, #gpu.address_space<workgroup>>
    tmac.tma.load %d1[%k] to %v : !d1 -> memref<256xf32, 3>
    tmac.tma.wait %a, %w, %v : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x256xf16, #gpu.address_space<workgroup>>, memref<256xf32, 3>
    tmac.mbarrier.wait %bars[%c1] : !bars
    tmac.tma.store %a to %d[%k, %c0] : memref<64x64xf16, #gpu.address_space<workgroup>> -> !d
  } {tmac.stages = 4 : i64, tmac.store_stages = 2 : i64}
  return
}
`

func parse(t *testing.T, src string) *ir.Operation {
	t.Helper()
	return testutil.ParseNamed(t, "t.tma", src)
}

func TestRoundTrip(t *testing.T) {
	m := parse(t, loopSrc)
	custom := ir.Print(m, ir.PrintOptions{})
	for _, want := range []string{
		"tmac.tma.load %arg0[%arg4, %c0] to %alloc_0 {tag} : " + descText + " -> memref<64x256xf16, #gpu.address_space<workgroup>>",
		"tmac.tma.wait %alloc, %alloc_0, %alloc_1 : memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x256xf16, #gpu.address_space<workgroup>>, memref<256xf32, 3>",
		"tmac.mbarrier.wait %arg2[%c1] : !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>",
		"tmac.tma.store %alloc to %arg0[%arg4, %c0] : memref<64x64xf16, #gpu.address_space<workgroup>> -> " + descText,
		"} {tmac.stages = 4 : i64, tmac.store_stages = 2 : i64}",
	} {
		if !strings.Contains(custom, want) {
			t.Errorf("custom output lacks %q:\n%s", want, custom)
		}
	}
	if again := ir.Print(parse(t, custom), ir.PrintOptions{}); again != custom {
		t.Errorf("custom form is not a fixed point:\n%s\n---\n%s", custom, again)
	}
	generic := ir.Print(m, ir.PrintOptions{Generic: true})
	for _, want := range []string{`"tmac.tma.load"(`, `"tmac.tma.wait"(`, `"tmac.tma.store"(`, `"tmac.mbarrier.wait"(`} {
		if !strings.Contains(generic, want) {
			t.Errorf("generic output lacks %s", want)
		}
	}
	if back := ir.Print(parse(t, generic), ir.PrintOptions{}); back != custom {
		t.Errorf("generic form does not parse back to the custom one:\n%s\n---\n%s", custom, back)
	}
	if n := len(ir.Nested(m, "tmac.tma.load")); n != 3 {
		t.Errorf("%d loads", n)
	}
	f := ir.Nested(m, "scf.for")[0]
	if a, ok := f.Attr(tmac.StagesAttr).(*ir.IntegerAttr); !ok || a.Int() != 4 {
		t.Errorf("stages attr %v", f.Attr(tmac.StagesAttr))
	}
	if a, ok := f.Attr(tmac.StoreStagesAttr).(*ir.IntegerAttr); !ok || a.Int() != 2 {
		t.Errorf("store_stages attr %v", f.Attr(tmac.StoreStagesAttr))
	}
}

func TestBoxesPerTileAndTileBytes(t *testing.T) {
	m := parse(t, loopSrc)
	loads := ir.Nested(m, "tmac.tma.load")
	want := []struct{ boxes, bytes int64 }{{1, 64 * 64 * 2}, {4, 64 * 256 * 2}, {1, 256 * 4}}
	for i, op := range loads {
		tile := op.Operand(0).Type().(*ir.MemRefType)
		if got := tmac.BoxesPerTile(tile, op.Operand(1).Type()); got != want[i].boxes {
			t.Errorf("load %d: BoxesPerTile = %d, want %d", i, got, want[i].boxes)
		}
		if got := tmac.TileBytes(tile); got != want[i].bytes {
			t.Errorf("load %d: TileBytes = %d, want %d", i, got, want[i].bytes)
		}
	}
	store := ir.Nested(m, "tmac.tma.store")[0]
	if got := tmac.BoxesPerTile(store.Operand(0).Type().(*ir.MemRefType), store.Operand(1).Type()); got != 1 {
		t.Errorf("store BoxesPerTile = %d", got)
	}

	desc := loads[0].Operand(1).Type()
	space := ir.I64Attr(3)
	for _, c := range []struct {
		tile  *ir.MemRefType
		desc  ir.Type
		boxes int64
	}{
		{ir.MemRefTypeOf([]int64{64, 128}, ir.F16T, nil, space), desc, 2},
		{ir.MemRefTypeOf([]int64{64, 64}, ir.F16T, nil, space), ir.Index, 0}, // not a descriptor
		{ir.MemRefTypeOf([]int64{2, 64, 64}, ir.F16T, nil, space), desc, 0},  // rank differs
		{ir.MemRefTypeOf(nil, ir.F16T, nil, space), desc, 0},                 // rank 0
		{ir.MemRefTypeOf([]int64{64, 64}, ir.F16T, nil, space), ir.F16T, 0},  // not a descriptor
		{ir.MemRefTypeOf([]int64{64, 640}, ir.BF16T, nil, space), desc, 10},  // only the shape counts
		{ir.MemRefTypeOf([]int64{64, 64}, ir.F16T, nil, nil), desc, 1},       // nor the memory space
		{ir.MemRefTypeOf([]int64{64, 96}, ir.F16T, nil, space), desc, 1},     // truncating (unverified)
		{ir.MemRefTypeOf([]int64{8, 64}, ir.F16T, nil, space), desc, 0},      // outer split, truncating (unverified)
		{ir.MemRefTypeOf([]int64{128, 64}, ir.F16T, nil, space), desc, 2},    // boxes one below the other
		{ir.MemRefTypeOf([]int64{192, 64}, ir.F16T, nil, space), desc, 3},
		{ir.MemRefTypeOf([]int64{64, 64 * 256}, ir.F16T, nil, space), desc, 256}, // many boxes
	} {
		if got := tmac.BoxesPerTile(c.tile, c.desc); got != c.boxes {
			t.Errorf("BoxesPerTile(%s, %s) = %d, want %d", c.tile, c.desc, got, c.boxes)
		}
	}
	for _, c := range []struct {
		tile  *ir.MemRefType
		bytes int64
	}{
		{ir.MemRefTypeOf([]int64{128, 64}, ir.F16T, nil, space), 16384},
		{ir.MemRefTypeOf([]int64{128, 64}, ir.BF16T, nil, space), 16384},
		{ir.MemRefTypeOf([]int64{2, 8, 32}, ir.F32T, nil, space), 2048},
		{ir.MemRefTypeOf([]int64{64, 128}, ir.I8, nil, space), 8192},
		{ir.MemRefTypeOf([]int64{16}, ir.F64T, nil, space), 128},
		{ir.MemRefTypeOf(nil, ir.F32T, nil, space), 4},
	} {
		if got := tmac.TileBytes(c.tile); got != c.bytes {
			t.Errorf("TileBytes(%s) = %d, want %d", c.tile, got, c.bytes)
		}
	}
}

func TestBoxesOf(t *testing.T) {
	space := ir.I64Attr(3)
	box := ir.MemRefTypeOf([]int64{64, 64}, ir.F16T, nil, space)
	box3 := ir.MemRefTypeOf([]int64{2, 64, 64}, ir.F16T, nil, space)
	for _, c := range []struct {
		tile, box *ir.MemRefType
		want      tmac.TileBoxes
	}{
		// Side by side: the innermost dimension, coordinate 0 (TMA order).
		{ir.MemRefTypeOf([]int64{64, 256}, ir.F16T, nil, space), box, tmac.TileBoxes{N: 4, Dim: 1, Coord: 0, Extent: 64, Stride: 8192}},
		// One below the other: the outermost dimension, the last coordinate.
		{ir.MemRefTypeOf([]int64{128, 64}, ir.F16T, nil, space), box, tmac.TileBoxes{N: 2, Dim: 0, Coord: 1, Extent: 64, Stride: 8192}},
		{ir.MemRefTypeOf([]int64{6, 64, 64}, ir.F16T, nil, space), box3, tmac.TileBoxes{N: 3, Dim: 0, Coord: 2, Extent: 2, Stride: 16384}},
		// The tile is the box: one box, laid along the innermost dimension.
		{box, box, tmac.TileBoxes{N: 1, Dim: 1, Coord: 0, Extent: 64, Stride: 8192}},
		// Rank 1: the only dimension is the innermost.
		{ir.MemRefTypeOf([]int64{512}, ir.F32T, nil, space), ir.MemRefTypeOf([]int64{256}, ir.F32T, nil, space),
			tmac.TileBoxes{N: 2, Dim: 0, Coord: 0, Extent: 256, Stride: 1024}},
	} {
		got, ok := tmac.BoxesOfBox(c.tile, c.box)
		if !ok || got != c.want {
			t.Errorf("BoxesOfBox(%s, %s) = %+v, %v; want %+v", c.tile, c.box, got, ok, c.want)
		}
	}
	if _, ok := tmac.BoxesOfBox(ir.MemRefTypeOf([]int64{64, 64}, ir.F16T, nil, space), box3); ok {
		t.Error("BoxesOfBox accepted a box of another rank")
	}
}

func TestBoxAlignment(t *testing.T) {
	for s, want := range map[nvgpu.SwizzleKind]int64{
		nvgpu.SwizzleNone: 128, nvgpu.Swizzle32B: 256, nvgpu.Swizzle64B: 512, nvgpu.Swizzle128B: 1024,
	} {
		if got := tmac.BoxAlignment(s); got != want {
			t.Errorf("BoxAlignment(%v) = %d, want %d", s, got, want)
		}
	}
}

// TestVerifyErrors spot-checks that verifier failures are diagnostics with
// a location (lit-tests/tmac/invalid.tma has one case per message).
func TestVerifyErrors(t *testing.T) {
	for _, c := range []struct{ body, want string }{
		{`%t = memref.alloc() : memref<64x96xf16, 3>
  tmac.tma.load %d[%x, %x] to %t : !d -> memref<64x96xf16, 3>`,
			"t.tma:5:3: error: tile memref<64x96xf16, 3>: innermost dimension 96 is not a positive multiple of the box's 64"},
		{`%t = memref.alloc() : memref<64x64xf16>
  tmac.tma.store %t to %d[%x, %x] : memref<64x64xf16> -> !d`,
			"t.tma:5:3: error: tile memref<64x64xf16> is not in shared memory"},
		{`"tmac.tma.wait"() : () -> ()`, "t.tma:4:3: error: needs at least one tile"},
		{`%t = memref.alloc() : memref<f16, 3>
  %d0 = builtin.unrealized_conversion_cast %x : index to !nvgpu.tensormap.descriptor<tensor = memref<f16, 3>, swizzle = none, l2promo = none, oob = zero, interleave = none>
  "tmac.tma.load"(%t, %d0) : (memref<f16, 3>, !nvgpu.tensormap.descriptor<tensor = memref<f16, 3>, swizzle = none, l2promo = none, oob = zero, interleave = none>) -> ()`,
			"t.tma:6:3: error: the tensor map box must have rank 1 to 5, got 0"},
		{`scf.for %i = %x to %x step %x {
  } {tmac.stages = 0 : i64}`, "t.tma:4:3: error: 'tmac.stages' must be an i64 integer >= 1, got 0 : i64"},
	} {
		src := "!d = " + descText + "\n" +
			"func.func @f(%d: !d, %x: index) {\n" +
			"  %c = arith.constant 0 : index\n" +
			"  " + c.body + "\n  return\n}\n"
		m, err := ir.Parse("t.tma", src, ir.ParseOptions{})
		if err == nil {
			err = ir.VerifyModule(m)
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want %q", err, c.want)
		}
	}
}

// TestLeadingRowsCopyBoxes: a load into a tile's leading rows places its
// boxes where the whole tile's boxes start (64 rows apart, side by side)
// or contiguously (one below the other), and moves only the rows' bytes;
// other views are not leading rows.
func TestLeadingRowsCopyBoxes(t *testing.T) {
	const src = `!r = !nvgpu.tensormap.descriptor<tensor = memref<16x64xf16, 3>, swizzle = swizzle_128b, l2promo = none, oob = zero, interleave = none>
!o = !nvgpu.tensormap.descriptor<tensor = memref<8x64xf16, 3>, swizzle = swizzle_128b, l2promo = none, oob = zero, interleave = none>
func.func @k(%r: !r, %o: !o, %x: index) {
  %w = memref.alloc() : memref<64x256xf16, 3>
  %t = memref.alloc() : memref<64x64xf16, 3>
  %wr = memref.subview %w[0, 0] [16, 256] [1, 1] : memref<64x256xf16, 3> to memref<16x256xf16, strided<[256, 1]>, 3>
  %tr = memref.subview %t[0, 0] [16, 64] [1, 1] : memref<64x64xf16, 3> to memref<16x64xf16, strided<[64, 1]>, 3>
  %mid = memref.subview %t[8, 0] [16, 64] [1, 1] : memref<64x64xf16, 3> to memref<16x64xf16, strided<[64, 1], offset: 512>, 3>
  %cols = memref.subview %w[0, 0] [64, 64] [1, 1] : memref<64x256xf16, 3> to memref<64x64xf16, strided<[256, 1]>, 3>
  tmac.tma.load %r[%x, %x] to %wr : !r -> memref<16x256xf16, strided<[256, 1]>, 3>
  tmac.tma.load %o[%x, %x] to %tr : !o -> memref<16x64xf16, strided<[64, 1]>, 3>
  tmac.tma.load %o[%x, %x] to %t : !o -> memref<64x64xf16, 3>
  return
}`
	m := parse(t, src)
	allocs := ir.Nested(m, "memref.alloc")
	views := ir.Nested(m, "memref.subview")
	for i, want := range []int64{16, 16, 0, 0} {
		whole, rows := tmac.LeadingRows(views[i].Result(0))
		if rows != want || (rows > 0) != (whole != nil) {
			t.Errorf("LeadingRows(view %d) = %v, %d; want %d rows", i, whole, rows, want)
		}
	}
	if _, rows := tmac.LeadingRows(allocs[0].Result(0)); rows != 0 {
		t.Errorf("LeadingRows(alloc) = %d rows", rows)
	}
	loads := ir.Nested(m, "tmac.tma.load")
	for i, c := range []struct {
		boxes tmac.TileBoxes
		whole ir.Value
		bytes int64
	}{
		// Four 16x64 boxes, each at the top of a 64x64 box of the whole tile.
		{tmac.TileBoxes{N: 4, Dim: 1, Coord: 0, Extent: 64, Stride: 64 * 128}, allocs[0].Result(0), 16 * 256 * 2},
		// Two 8x64 boxes one below the other: the 16 leading rows.
		{tmac.TileBoxes{N: 2, Dim: 0, Coord: 1, Extent: 8, Stride: 8 * 128}, allocs[1].Result(0), 16 * 64 * 2},
		// The whole tile: eight boxes of 8 rows.
		{tmac.TileBoxes{N: 8, Dim: 0, Coord: 1, Extent: 8, Stride: 8 * 128}, allocs[1].Result(0), 64 * 64 * 2},
	} {
		bx, whole, bytes := tmac.CopyBoxes(loads[i])
		if bx != c.boxes || whole != c.whole || bytes != c.bytes {
			t.Errorf("CopyBoxes(load %d) = %+v, %v, %d; want %+v, %v, %d", i, bx, whole, bytes, c.boxes, c.whole, c.bytes)
		}
	}
}
