package codegen

import (
	"strings"
	"testing"

	"github.com/llir/llvm/ir/types"
)

func TestVectorAlign(t *testing.T) {
	for _, tc := range []struct {
		t    types.Type
		want int64
	}{
		{types.NewVector(4, types.Float), 16},
		{types.NewVector(2, types.Float), 8},
		{types.NewVector(3, types.Float), 16}, // 12 bytes round up
		{types.NewVector(8, BFloat), 16},
		{types.NewVector(3, types.Half), 8},
		{types.NewVector(4, types.I8), 4},
		{types.NewVector(1, types.I8), 1},
		{types.NewVector(2, types.Double), 16},
		{types.NewVector(8, types.Float), 32},
		{types.NewVector(1, types.I64), 8},
	} {
		if got := vectorAlign(nil, tc.t); got != tc.want {
			t.Errorf("vectorAlign(%s) = %d, want %d", tc.t, got, tc.want)
		}
	}
}

// vector.load/store address the first element through the memref layout
// and access the whole vector at once.
func TestVectorLoadStoreLayout(t *testing.T) {
	ll, err := emitKernel(t, "%a: memref<?x?xf16, strided<[?, 1], offset: ?>>, %i: index, %j: index",
		"%v = vector.load %a[%i, %j] : memref<?x?xf16, strided<[?, 1], offset: ?>>, vector<8xf16>\n"+
			"vector.store %v, %a[%j, %i] {alignment = 2} : memref<?x?xf16, strided<[?, 1], offset: ?>>, vector<8xf16>")
	if err != nil {
		t.Fatal(err)
	}
	wantInOrder(t, ll,
		"mul i64 %arg1, %arg0.stride0", "add i64 %arg0.offset", "add i64",
		"getelementptr inbounds half, half* %arg0", "bitcast half* ", " to <8 x half>*",
		"load <8 x half>, <8 x half>* ", ", align 16\n",
		"mul i64 %arg2, %arg0.stride0", "store <8 x half> ", ", align 2\n")
	if strings.Count(ll, "load ") != 1 || strings.Count(ll, "store ") != 1 {
		t.Errorf("want exactly one load and one store:\n%s", ll)
	}
}

// A broadcast of an n-D vector is one shufflevector whose mask pins the
// source's unit dims to 0 and drops the leading result dims.
func TestBroadcastMask(t *testing.T) {
	ll, err := emitKernel(t, "%v: vector<2x1xf32>, %a: memref<12xf32>, %i: index",
		"%b = vector.broadcast %v : vector<2x1xf32> to vector<2x2x3xf32>\n"+
			"%f = vector.shape_cast %b : vector<2x2x3xf32> to vector<12xf32>\n"+
			"vector.store %f, %a[%i] : memref<12xf32>, vector<12xf32>")
	if err != nil {
		t.Fatal(err)
	}
	wantInOrder(t, ll, "shufflevector <2 x float> %arg0, <2 x float> undef, <12 x i32> "+
		"<i32 0, i32 0, i32 0, i32 1, i32 1, i32 1, i32 0, i32 0, i32 0, i32 1, i32 1, i32 1>")
}

func TestScalableVectorsRejected(t *testing.T) {
	_, err := emitKernel(t, "%v: vector<[4]xf32>, %a: memref<8xf32>, %i: index", "")
	if err == nil || !strings.Contains(err.Error(), "no scalable vector registers") {
		t.Fatalf("want a scalable vector error, got %v", err)
	}
}
