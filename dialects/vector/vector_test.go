package vector

import (
	"testing"

	"github.com/tmac-dev/tmac/ir"
)

func TestBroadcastMismatch(t *testing.T) {
	f32 := ir.F32T
	vec := func(shape []int64, scal []bool) *ir.VectorType { return ir.ScalableVectorTypeOf(shape, scal, f32) }
	for _, tc := range []struct {
		src     []int64
		srcScal []bool
		dst     *ir.VectorType
		a, b    string
	}{
		{[]int64{4}, nil, vec([]int64{3, 4}, nil), "", ""},
		{[]int64{1}, nil, vec([]int64{2, 4}, nil), "", ""},
		{[]int64{1}, nil, vec([]int64{4}, []bool{true}), "", ""},
		{[]int64{4}, nil, vec([]int64{8}, nil), "4", "8"},
		{[]int64{3}, nil, vec([]int64{3, 4}, nil), "3", "4"},
		{[]int64{4}, nil, vec([]int64{4}, []bool{true}), "4", "[4]"},
		{[]int64{4}, []bool{true}, vec([]int64{4}, nil), "[4]", "4"},
		{[]int64{1}, []bool{true}, vec([]int64{4}, []bool{true}), "[1]", "[4]"},
		{[]int64{1, 4}, []bool{false, true}, vec([]int64{3, 4}, []bool{false, true}), "", ""},
	} {
		a, b, ok := BroadcastMismatch(tc.src, tc.srcScal, tc.dst)
		if ok != (tc.a == "") || a != tc.a || b != tc.b {
			t.Errorf("%v%v -> %s: got (%q, %q, %v), want (%q, %q)", tc.src, tc.srcScal, tc.dst, a, b, ok, tc.a, tc.b)
		}
	}
}
