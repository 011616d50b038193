package vector

import (
	"reflect"
	"testing"
)

func TestLanes(t *testing.T) {
	// vector<2xf32> to vector<3x2xf32>: each row repeats the source.
	if got, want := BroadcastLanes([]int64{2}, []int64{3, 2}), []int64{0, 1, 0, 1, 0, 1}; !reflect.DeepEqual(got, want) {
		t.Errorf("BroadcastLanes = %v, want %v", got, want)
	}
	// vector<2x3> transposed [1, 0] to vector<3x2>.
	if got, want := TransposeLanes([]int64{2, 3}, []int64{3, 2}, []int64{1, 0}), []int64{0, 3, 1, 4, 2, 5}; !reflect.DeepEqual(got, want) {
		t.Errorf("TransposeLanes = %v, want %v", got, want)
	}
	// vector<2x2> at [1, 1] of vector<3x3>.
	if got, want := ExtractStridedSliceLanes([]int64{3, 3}, []int64{2, 2}, []int64{1, 1}), []int64{4, 5, 7, 8}; !reflect.DeepEqual(got, want) {
		t.Errorf("ExtractStridedSliceLanes = %v, want %v", got, want)
	}
	// vector<2> into row 1 of vector<2x3> at column 1.
	want := [][2]int64{{0, 0}, {0, 1}, {0, 2}, {0, 3}, {1, 0}, {1, 1}}
	if got := InsertStridedSliceLanes([]int64{2}, []int64{2, 3}, []int64{1, 1}); !reflect.DeepEqual(got, want) {
		t.Errorf("InsertStridedSliceLanes = %v, want %v", got, want)
	}
	// vector<2x2> shuffled [3, poison, 0] with another vector<2x2>.
	want = [][2]int64{{1, 2}, {1, 3}, {0, -1}, {0, -1}, {0, 0}, {0, 1}}
	if got := ShuffleLanes([]int64{2, 2}, []int64{3, Poison, 0}); !reflect.DeepEqual(got, want) {
		t.Errorf("ShuffleLanes = %v, want %v", got, want)
	}
	// vector<2x2> interleaved with another: rows alternate lanes.
	want = [][2]int64{{0, 0}, {1, 0}, {0, 1}, {1, 1}, {0, 2}, {1, 2}, {0, 3}, {1, 3}}
	if got := InterleaveLanes([]int64{2, 2}); !reflect.DeepEqual(got, want) {
		t.Errorf("InterleaveLanes = %v, want %v", got, want)
	}
	// vector<2x4> deinterleaved: the even, then the odd lanes of each row.
	if got, want := DeinterleaveLanes([]int64{2, 4}, 1), []int64{1, 3, 5, 7}; !reflect.DeepEqual(got, want) {
		t.Errorf("DeinterleaveLanes = %v, want %v", got, want)
	}
}
