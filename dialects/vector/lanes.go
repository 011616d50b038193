package vector

import "github.com/tmac-dev/tmac/ir"

// The lanes the shuffling ops copy, in row-major order of their operands
// and results, as codegen's shufflevectors and the emulator compute them.
// A two-operand map holds, per result lane, the operand (0 or 1) and its
// lane; lane -1 is poison.

// mapLanes maps each lane of the result shape res to the lane of the
// source shape src at the index at gives for its index.
func mapLanes(src, res []int64, at func(idx []int64) []int64) []int64 {
	lanes := make([]int64, ir.NumElements(res))
	for i := range lanes {
		lanes[i] = ir.Linearize(src, at(ir.Delinearize(res, int64(i))))
	}
	return lanes
}

// BroadcastLanes maps each lane of the result shape res to the lane of
// the source shape src it takes: the leading result dims dropped, source
// dims of size 1 pinned to 0 (src nil: a scalar, lane 0).
func BroadcastLanes(src, res []int64) []int64 {
	lead := len(res) - len(src)
	return mapLanes(src, res, func(idx []int64) []int64 {
		idx = idx[lead:]
		for d := range idx {
			if src[d] == 1 {
				idx[d] = 0
			}
		}
		return idx
	})
}

// TransposeLanes maps each lane of res to the lane of src that the
// permutation perm moves there.
func TransposeLanes(src, res, perm []int64) []int64 {
	return mapLanes(src, res, func(ri []int64) []int64 {
		si := make([]int64, len(ri))
		for d, p := range perm {
			si[p] = ri[d]
		}
		return si
	})
}

// ExtractStridedSliceLanes maps each lane of the slice res to its lane in
// src, the slice starting at offsets (unit strides).
func ExtractStridedSliceLanes(src, res, offsets []int64) []int64 {
	return mapLanes(src, res, func(idx []int64) []int64 {
		for d, o := range offsets {
			idx[d] += o
		}
		return idx
	})
}

// InsertStridedSliceLanes maps each lane of dest to itself (operand 0)
// or, inside the slice of shape src at offsets, to the lane of src
// (operand 1) stored there.
func InsertStridedSliceLanes(src, dest, offsets []int64) [][2]int64 {
	lead := len(dest) - len(src)
	lanes := make([][2]int64, ir.NumElements(dest))
	for i := range lanes {
		lanes[i] = [2]int64{0, int64(i)}
		idx := ir.Delinearize(dest, int64(i))
		inside := true
		for d := range dest {
			if d < lead {
				inside = inside && idx[d] == offsets[d]
			} else if k := idx[d] - offsets[d]; k < 0 || k >= src[d-lead] {
				inside = false
			} else {
				idx[d] = k
			}
		}
		if inside {
			lanes[i] = [2]int64{1, ir.Linearize(src, idx[lead:])}
		}
	}
	return lanes
}

// ShuffleLanes maps each lane of a vector.shuffle's result to the operand
// and lane it copies: whole rows (the trailing dims) of v1, of shape s1,
// and v2, picked by mask over their leading dimension.
func ShuffleLanes(s1, mask []int64) [][2]int64 {
	row, lead1 := int64(1), int64(1)
	if len(s1) > 0 {
		row, lead1 = ir.NumElements(s1[1:]), s1[0]
	}
	var lanes [][2]int64
	for _, m := range mask {
		for k := range row {
			switch {
			case m == Poison:
				lanes = append(lanes, [2]int64{0, -1})
			case m < lead1:
				lanes = append(lanes, [2]int64{0, m*row + k})
			default:
				lanes = append(lanes, [2]int64{1, (m-lead1)*row + k})
			}
		}
	}
	return lanes
}

// InterleaveLanes maps each lane of vector.interleave's result to the
// operand and lane it copies: row r of the result alternates the lanes of
// row r of lhs and rhs, both of shape src.
func InterleaveLanes(src []int64) [][2]int64 {
	row := int64(1)
	if len(src) > 0 {
		row = src[len(src)-1]
	}
	var lanes [][2]int64
	for r := int64(0); r < ir.NumElements(src); r += row {
		for k := range row {
			lanes = append(lanes, [2]int64{0, r + k}, [2]int64{1, r + k})
		}
	}
	return lanes
}

// DeinterleaveLanes maps each lane of vector.deinterleave's result half
// (0: res1, 1: res2) to the lane of the source, of shape src, it copies:
// the even (odd) lanes of each row.
func DeinterleaveLanes(src []int64, half int) []int64 {
	row := src[len(src)-1]
	var lanes []int64
	for r := int64(0); r < ir.NumElements(src); r += row {
		for k := int64(half); k < row; k += 2 {
			lanes = append(lanes, r+k)
		}
	}
	return lanes
}
