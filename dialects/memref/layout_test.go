package memref

import (
	"slices"
	"testing"

	_ "github.com/tmac-dev/tmac/dialects/builtin"
	_ "github.com/tmac-dev/tmac/dialects/func"
	"github.com/tmac-dev/tmac/ir"
)

const D = Dynamic

func parseMemRef(t *testing.T, text string) *ir.MemRefType {
	t.Helper()
	m, err := ir.Parse("t.tma", "func.func private @f("+text+")", ir.ParseOptions{})
	if err != nil {
		t.Fatalf("parse %s: %v", text, err)
	}
	var ty ir.Type
	ir.Walk(m, func(op *ir.Operation) ir.WalkResult {
		if ta, ok := op.Attr("function_type").(*ir.TypeAttr); ok {
			ty = ta.Value.(*ir.FunctionType).Inputs[0]
		}
		return ir.Advance
	})
	mt, ok := ty.(*ir.MemRefType)
	if !ok {
		t.Fatalf("%s is not a ranked memref", text)
	}
	return mt
}

func TestSaturatedArithmetic(t *testing.T) {
	cases := []struct{ a, b, sum, prod int64 }{
		{2, 3, 5, 6},
		{D, 3, D, D},
		{0, D, D, 0},
		{D, 0, D, 0},
		{D, D, D, D},
		{-1, 4, 3, -4},
	}
	for _, c := range cases {
		if got := SatAdd(c.a, c.b); got != c.sum {
			t.Errorf("SatAdd(%d, %d) = %d, want %d", c.a, c.b, got, c.sum)
		}
		if got := SatMul(c.a, c.b); got != c.prod {
			t.Errorf("SatMul(%d, %d) = %d, want %d", c.a, c.b, got, c.prod)
		}
	}
}

func TestStridesAndOffset(t *testing.T) {
	cases := []struct {
		ty      string
		strides []int64
		offset  int64
		ok      bool
	}{
		{"memref<8x16x4xf32>", []int64{64, 4, 1}, 0, true},
		{"memref<4x?x2xf32>", []int64{D, 2, 1}, 0, true},
		{"memref<f32>", []int64{}, 0, true},
		{"memref<64x4xf32, strided<[7, 9], offset: 91>>", []int64{7, 9}, 91, true},
		{"memref<4xf32, strided<[?], offset: ?>>", []int64{D}, D, true},
		{"memref<4xf32, affine_map<(d0)[s0] -> (d0 + s0)>>", []int64{1}, D, true},
		{"memref<4xf32, affine_map<(d0)[s0] -> (d0 * s0)>>", []int64{D}, 0, true},
		{"memref<4x4xf32, affine_map<(d0, d1) -> (d0 * 8 + d1 + 3)>>", []int64{8, 1}, 3, true},
		{"memref<4x4xf32, affine_map<(d0, d1) -> (d1 * 2 + d0 * 16 - 1)>>", []int64{16, 2}, -1, true},
		{"memref<4x4xf32, affine_map<(d0, d1) -> (d0 floordiv 2, d1)>>", nil, 0, false},
		{"memref<4x4xf32, affine_map<(d0, d1) -> (d0 * d1)>>", nil, 0, false},
		{"memref<4x4xf32, affine_map<(d0, d1) -> (d1, d0)>>", nil, 0, false},
	}
	for _, c := range cases {
		st, off, ok := StridesAndOffset(parseMemRef(t, c.ty))
		if ok != c.ok || (ok && (!slices.Equal(st, c.strides) || off != c.offset)) {
			t.Errorf("%s: got %v %d %v, want %v %d %v", c.ty, st, off, ok, c.strides, c.offset, c.ok)
		}
	}
	if n := NumLayoutSymbols(parseMemRef(t, "memref<?x4xf32, affine_map<(d0, d1)[s0, s1] -> (d0 * s0 + d1 + s1)>>")); n != 2 {
		t.Errorf("symbols = %d, want 2", n)
	}
}

func TestInferSubViewResultType(t *testing.T) {
	cases := []struct {
		src                    string
		offsets, sizes, stride []int64
		want                   string
	}{
		{"memref<8x16x4xf32>", []int64{1, 2, 2}, []int64{2, 2, 2}, []int64{1, 2, 1}, "memref<2x2x2xf32, strided<[64, 8, 1], offset: 74>>"},
		{"memref<8x16x4xf32>", []int64{0, 0, 0}, []int64{8, 16, 4}, []int64{1, 1, 1}, "memref<8x16x4xf32, strided<[64, 4, 1]>>"},
		{"memref<?x?xf32>", []int64{D, D}, []int64{D, D}, []int64{D, 1}, "memref<?x?xf32, strided<[?, 1], offset: ?>>"},
		// 0 offset times a dynamic stride contributes 0.
		{"memref<4x?xf32>", []int64{0, 0}, []int64{1, 1}, []int64{1, 1}, "memref<1x1xf32, strided<[?, 1]>>"},
		{"memref<64x4xf32, strided<[7, 9], offset: 91>>", []int64{4, 1}, []int64{8, 2}, []int64{3, 2}, "memref<8x2xf32, strided<[21, 18], offset: 128>>"},
		{"memref<32x32xf16, 3>", []int64{D, D}, []int64{16, 16}, []int64{1, 1}, "memref<16x16xf16, strided<[32, 1], offset: ?>, 3>"},
	}
	for _, c := range cases {
		got, ok := InferSubViewResultType(parseMemRef(t, c.src), c.offsets, c.sizes, c.stride)
		if !ok || got.String() != c.want {
			t.Errorf("%s: got %v (%v), want %s", c.src, got, ok, c.want)
		}
	}
	rr, ok := InferRankReducedSubViewResultType(2, parseMemRef(t, "memref<8x16x4xf32>"), []int64{3, 4, 1}, []int64{1, 6, 3}, []int64{1, 1, 1})
	if !ok || rr.String() != "memref<6x3xf32, strided<[4, 1], offset: 209>>" {
		t.Errorf("rank-reduced: got %v (%v)", rr, ok)
	}
}

func TestCheckSubViewResult(t *testing.T) {
	src := parseMemRef(t, "memref<8x16x4xf32>")
	unit := func(offs, sizes []int64) *ir.MemRefType {
		e, _ := InferSubViewResultType(src, offs, sizes, []int64{1, 1, 1})
		return e
	}
	cases := []struct {
		expected *ir.MemRefType
		result   string
		want     SliceCheck
	}{
		{unit([]int64{0, 0, 0}, []int64{1, 16, 4}), "memref<16x4xf32>", SliceOK},
		{unit([]int64{0, 0, 0}, []int64{1, 1, 4}), "memref<4xf32, strided<[1]>>", SliceOK},
		{unit([]int64{0, 0, 0}, []int64{1, 1, 4}), "memref<1x4xf32, strided<[64, 1]>>", SliceOK},
		{unit([]int64{0, 0, 0}, []int64{1, 1, 4}), "memref<1x4xf32, strided<[4, 1]>>", SliceOK},
		{unit([]int64{0, 0, 0}, []int64{1, 1, 4}), "memref<1x4xf32, strided<[16, 1]>>", SliceLayoutMismatch},
		{unit([]int64{0, 0, 0}, []int64{2, 1, 4}), "memref<4xf32, strided<[1]>>", SliceSizeMismatch},
		{unit([]int64{0, 0, 0}, []int64{2, 2, 4}), "memref<2x2x4x1xf32>", SliceRankTooLarge},
		{unit([]int64{0, 0, 0}, []int64{2, 2, 4}), "memref<2x2x4xi32, strided<[64, 4, 1]>>", SliceElemTypeMismatch},
		{unit([]int64{0, 0, 0}, []int64{2, 2, 4}), "memref<2x2x4xf32, strided<[64, 4, 1]>, 3>", SliceMemSpaceMismatch},
		{unit([]int64{1, 0, 0}, []int64{2, 2, 4}), "memref<2x2x4xf32, strided<[64, 4, 1]>>", SliceLayoutMismatch},
		{unit([]int64{1, 0, 0}, []int64{2, 2, 4}), "memref<2x2x4xf32, strided<[64, 4, 1], offset: ?>>", SliceLayoutMismatch},
	}
	for i, c := range cases {
		if got := CheckSubViewResult(c.expected, parseMemRef(t, c.result)); got != c.want {
			t.Errorf("case %d (%s vs %s): got %d, want %d", i, c.expected, c.result, got, c.want)
		}
	}
}

func TestRankReductionMask(t *testing.T) {
	mask, ok := RankReductionMask([]int64{1, 16, 1, 4}, []int64{16, 4})
	if !ok || !mask[0] || mask[1] || !mask[2] || mask[3] {
		t.Errorf("mask = %v %v", mask, ok)
	}
	if _, ok := RankReductionMask([]int64{2, 4}, []int64{4}); ok {
		t.Error("dropping a non-unit dim accepted")
	}
	if _, ok := RankReductionMask([]int64{1, D}, []int64{4}); ok {
		t.Error("static dim matched a dynamic one")
	}
}

func TestSliceBounds(t *testing.T) {
	cases := []struct {
		shape, offs, sizes, strides []int64
		want                        string
	}{
		{[]int64{8, 16}, []int64{0, 0}, []int64{9, 4}, []int64{1, 1}, "slice along dimension 0 runs out-of-bounds: 8 >= 8"},
		{[]int64{8, 16}, []int64{0, 8}, []int64{4, 4}, []int64{1, 4}, "slice along dimension 1 runs out-of-bounds: 20 >= 16"},
		{[]int64{8, 16}, []int64{8, 0}, []int64{0, 4}, []int64{1, 1}, "offset 0 is out-of-bounds: 8 >= 8"},
		{[]int64{8, 16}, []int64{7, 15}, []int64{0, 1}, []int64{1, 1}, ""},
		{[]int64{D, 16}, []int64{100, D}, []int64{4, 4}, []int64{1, 1}, ""},
	}
	for _, c := range cases {
		if got := SliceBoundsError(c.shape, c.offs, c.sizes, c.strides); got != c.want {
			t.Errorf("got %q, want %q", got, c.want)
		}
	}
}

func TestIsCastCompatible(t *testing.T) {
	cases := []struct {
		a, b string
		want bool
	}{
		{"memref<4x?xf32>", "memref<?x?xf32>", true},
		{"memref<4xf32>", "memref<5xf32>", false},
		{"memref<4xf32>", "memref<4xi32>", false},
		{"memref<4xf32>", "memref<4x1xf32>", false},
		{"memref<4xf32>", "memref<4xf32, 1>", false},
		{"memref<12x4xf32, strided<[4, 1], offset: 5>>", "memref<12x4xf32, strided<[?, ?], offset: ?>>", true},
		{"memref<12x4xf32, strided<[4, 1], offset: 5>>", "memref<12x4xf32, strided<[4, 1], offset: 6>>", false},
		{"memref<4x?xf32>", "memref<4x?xf32, strided<[?, 1]>>", true},
		{"memref<12x4xf32>", "memref<12x4xf32, affine_map<(d0, d1) -> (d0 floordiv 2, d1)>>", false},
	}
	for _, c := range cases {
		a, b := parseMemRef(t, c.a), parseMemRef(t, c.b)
		if got := IsCastCompatible(a, b); got != c.want {
			t.Errorf("%s -> %s: got %v", c.a, c.b, got)
		}
		if got := IsCastCompatible(b, a); got != c.want {
			t.Errorf("%s -> %s (reverse): got %v", c.a, c.b, got)
		}
	}
	u := ir.UnrankedMemRefTypeOf(ir.F32T, nil)
	if !IsCastCompatible(parseMemRef(t, "memref<4xf32>"), u) || IsCastCompatible(u, u) {
		t.Error("unranked cast rules")
	}
	if IsCastCompatible(parseMemRef(t, "memref<4xf32>"), ir.UnrankedMemRefTypeOf(ir.F32T, ir.IntAttr(1, ir.I64))) {
		t.Error("memory space change accepted")
	}
}

func TestDynamicIndexListFormat(t *testing.T) {
	if got := FormatDynamicIndexList([]int64{0, D, 4, D}, []string{"%a", "%b"}); got != "[0, %a, 4, %b]" {
		t.Errorf("got %s", got)
	}
	if got := FormatDynamicIndexList([]int64{}, nil); got != "[]" {
		t.Errorf("got %s", got)
	}
}
