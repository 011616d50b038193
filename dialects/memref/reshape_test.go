package memref

import (
	"slices"
	"testing"

	"github.com/tmac-dev/tmac/ir"
)

// The layouts of collapse_shape and expand_shape, static (types) and
// dynamic (the descriptors the emulator and interpreter compute).
func TestReshapeLayouts(t *testing.T) {
	d := Dynamic
	collapse := []struct {
		shape, strides []int64
		groups         [][]int64
		want           []int64 // result strides; nil: not contiguous
	}{
		{[]int64{3, 4, 5}, []int64{240, 60, 10}, [][]int64{{0, 1}, {2}}, []int64{60, 10}},
		{[]int64{3, 4}, []int64{1, 3}, [][]int64{{0, 1}}, nil},
		{[]int64{3, 4, 5}, []int64{20, 5, 1}, [][]int64{{0, 1}, {2}}, []int64{5, 1}},
		// Dimensions of size 1 have any stride; the group takes that of
		// its innermost other dimension.
		{[]int64{24, 1, 1, 1024}, []int64{40960, 40960, 4096, 1}, [][]int64{{0}, {1, 2, 3}}, []int64{40960, 1}},
		{[]int64{4, 1}, []int64{1, 77}, [][]int64{{0, 1}}, []int64{1}},
		// A dynamic innermost size may be 1 at run time: dynamic stride.
		{[]int64{d, d}, []int64{d, 1}, [][]int64{{0, 1}}, []int64{d}},
		{[]int64{d, 4}, []int64{d, 3}, [][]int64{{0, 1}}, []int64{3}},
	}
	for _, c := range collapse {
		src := ir.MemRefTypeOf(c.shape, ir.F32T, ir.StridedLayout(c.strides, 0), nil)
		got, _, ok := CollapsedStrides(src, c.groups)
		if (c.want == nil) == ok || ok && !slices.Equal(got, c.want) {
			t.Errorf("collapse %v %v %v: %v %v, want %v", c.shape, c.strides, c.groups, got, ok, c.want)
		}
	}
	got, _, _ := ExpandedStrides(ir.MemRefTypeOf([]int64{30, 20}, ir.F32T, ir.StridedLayout([]int64{4000, 2}, 100), nil),
		[]int64{2, 15, 20}, [][]int64{{0, 1}, {2}})
	if want := []int64{60000, 4000, 2}; !slices.Equal(got, want) {
		t.Errorf("expand strides %v, want %v", got, want)
	}
	sizes, strides := CollapsedLayout([]int64{2, 1, 3}, []int64{3, 99, 1}, [][]int64{{0, 1}, {2}})
	if !slices.Equal(sizes, []int64{2, 3}) || !slices.Equal(strides, []int64{3, 1}) {
		t.Errorf("collapsed layout %v %v", sizes, strides)
	}
	strides, bad := ExpandedLayout([]int64{12, 5}, []int64{10, 2}, []int64{3, 4, 5}, [][]int64{{0, 1}, {2}})
	if !slices.Equal(strides, []int64{40, 10, 2}) || bad != -1 {
		t.Errorf("expanded layout %v %d", strides, bad)
	}
	if _, bad := ExpandedLayout([]int64{12}, []int64{1}, []int64{5, 2}, [][]int64{{0, 1}}); bad != 0 {
		t.Errorf("a split of 12 into 5x2 not reported")
	}
}
