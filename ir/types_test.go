package ir_test

import (
	"testing"

	"github.com/tmac-dev/tmac/ir"
)

func TestDelinearizeLinearize(t *testing.T) {
	shape := []int64{2, 3, 4}
	for i := range int64(24) {
		idx := ir.Delinearize(shape, i)
		if got := ir.Linearize(shape, idx); got != i {
			t.Fatalf("Linearize(Delinearize(%d)) = %d (index %v)", i, got, idx)
		}
	}
	if got := ir.Delinearize(shape, 17); got[0] != 1 || got[1] != 1 || got[2] != 1 {
		t.Errorf("Delinearize(17) = %v, want [1 1 1]", got)
	}
}

func TestNextIndex(t *testing.T) {
	shape := []int64{2, 3}
	idx := make([]int64, 2)
	for i := range int64(6) {
		if got := ir.Linearize(shape, idx); got != i {
			t.Fatalf("step %d: index %v", i, idx)
		}
		if more := ir.NextIndex(idx, shape); more != (i < 5) {
			t.Fatalf("step %d: NextIndex = %v", i, more)
		}
	}
	if idx[0] != 0 || idx[1] != 0 {
		t.Errorf("after the last index: %v, want [0 0]", idx)
	}
}
