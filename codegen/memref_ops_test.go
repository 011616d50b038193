package codegen

import (
	"strings"
	"testing"
)

// A rank-reducing subview of a memref with two unit dims keeps the one
// whose stride the result type shows.
func TestSubViewRankReductionByStride(t *testing.T) {
	for _, tc := range []struct {
		res  string
		want string
	}{
		// Dim 0 (stride 8) dropped, dim 1 (stride 4) kept: i*4 + j.
		{"memref<1x4xf32, strided<[4, 1]>>", "mul i64 %arg1, 4"},
		// Dim 1 dropped, dim 0 kept: i*8 + j.
		{"memref<1x4xf32, strided<[8, 1]>>", "mul i64 %arg1, 8"},
	} {
		ll, err := emitKernel(t, "%a: memref<1x1x4xf32, strided<[8, 4, 1]>>, %i: index, %j: index, %x: f32",
			"%s = memref.subview %a[0, 0, 0] [1, 1, 4] [1, 1, 1] : memref<1x1x4xf32, strided<[8, 4, 1]>> to "+tc.res+"\n"+
				"memref.store %x, %s[%i, %j] : "+tc.res)
		if err != nil {
			t.Fatal(err)
		}
		wantInOrder(t, ll, tc.want, "add i64 %", "getelementptr inbounds float, float* %arg0")
	}
}

// memref.dim with a dynamic index selects among all sizes.
func TestDimDynamicIndex(t *testing.T) {
	ll, err := emitKernel(t, "%a: memref<2x?x5xf32>, %d: index, %o: memref<1xindex>, %i: index",
		"%n = memref.dim %a, %d : memref<2x?x5xf32>\nmemref.store %n, %o[%i] : memref<1xindex>")
	if err != nil {
		t.Fatal(err)
	}
	wantInOrder(t, ll,
		"icmp eq i64 %arg1, 1", "select i1 %0, i64 %arg0.size1, i64 2",
		"icmp eq i64 %arg1, 2", "select i1 %2, i64 5, i64 %1",
		"store i64 %3")
}

// Several nontemporal accesses share one !{i32 1} node.
func TestNontemporalNodeShared(t *testing.T) {
	ll, err := emitKernel(t, "%a: memref<8xf32>, %i: index",
		"%x = memref.load %a[%i] {nontemporal = true} : memref<8xf32>\n"+
			"memref.store %x, %a[%i] {nontemporal = true} : memref<8xf32>\n"+
			"%v = vector.load %a[%i] {nontemporal = true} : memref<8xf32>, vector<4xf32>")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(ll, "!nontemporal !0"); n != 3 {
		t.Errorf("want 3 !nontemporal !0 attachments, got %d:\n%s", n, ll)
	}
	if n := strings.Count(ll, "= !{i32 1}"); n != 1 {
		t.Errorf("want one metadata node, got %d:\n%s", n, ll)
	}
}

// Static allocas are hoisted to the entry block in program order, even
// from later blocks; dynamic ones stay where they are.
func TestAllocaHoisting(t *testing.T) {
	ll, err := emitKernel(t, "%n: index, %x: f32, %i: index",
		"%a = memref.alloca() : memref<3xf32>\n"+
			"cf.br ^bb1\n^bb1:\n"+
			"%b = memref.alloca() : memref<2x2xi32, #gpu.address_space<private>>\n"+
			"%c = memref.alloca(%n) : memref<?xf32>\n"+
			"memref.store %x, %a[%i] : memref<3xf32>\n"+
			"memref.store %x, %c[%i] : memref<?xf32>")
	if err != nil {
		t.Fatal(err)
	}
	wantInOrder(t, ll, "entry:\n", "alloca float, i64 3\n", "alloca i32, i64 4\n",
		"addrspacecast i32* %1 to i32 addrspace(5)*", "br label", "alloca float, i64 %arg0")
}

// Static parts of descriptors are constants, through subview, a cast to
// a dynamic layout and back, and reinterpret_cast: only the index
// arithmetic remains.
func TestStaticDescriptorsFold(t *testing.T) {
	ll, err := emitKernel(t, "%a: memref<16x16xf32>, %i: index, %j: index, %o: memref<2xf32>",
		"%s = memref.subview %a[2, 4] [7, 8] [2, 1] : memref<16x16xf32> to memref<7x8xf32, strided<[32, 1], offset: 36>>\n"+
			"%c = memref.cast %s : memref<7x8xf32, strided<[32, 1], offset: 36>> to memref<?x?xf32, strided<[?, ?], offset: ?>>\n"+
			"%d = memref.cast %c : memref<?x?xf32, strided<[?, ?], offset: ?>> to memref<7x8xf32, strided<[32, 1], offset: 36>>\n"+
			"%x = memref.load %d[%i, %j] : memref<7x8xf32, strided<[32, 1], offset: 36>>\n"+
			"%r = memref.reinterpret_cast %a to offset: [5], sizes: [4], strides: [3] : memref<16x16xf32> to memref<4xf32, strided<[3], offset: 5>>\n"+
			"%y = memref.load %r[%i] : memref<4xf32, strided<[3], offset: 5>>\n"+
			"memref.store %x, %o[%i] : memref<2xf32>\n"+
			"memref.store %y, %o[%j] : memref<2xf32>")
	if err != nil {
		t.Fatal(err)
	}
	wantInOrder(t, ll,
		"%0 = mul i64 %arg1, 32\n", "%1 = add i64 36, %0\n", "%2 = add i64 %1, %arg2\n",
		"getelementptr inbounds float, float* %arg0, i64 %2\n",
		"%5 = mul i64 %arg1, 3\n", "%6 = add i64 5, %5\n",
		"getelementptr inbounds float, float* %arg0, i64 %6\n")
}

// Global-memory allocations and deallocations are rejected; a dealloc of
// shared memory is a no-op.
func TestAllocRejections(t *testing.T) {
	for _, tc := range []struct{ args, body, want string }{
		{"", "%a = memref.alloc() : memref<4xf32, #gpu.address_space<global>>", "only shared (#gpu.address_space<workgroup>) and private memory can be allocated"},
		{"%a: memref<4xf32, #gpu.address_space<global>>", "memref.dealloc %a : memref<4xf32, #gpu.address_space<global>>", "only shared and private memory can be deallocated"},
		{"", "%a = memref.alloca() : memref<4xf32, #gpu.address_space<workgroup>>\nmemref.dealloc %a : memref<4xf32, #gpu.address_space<workgroup>>", ""},
	} {
		_, err := emitKernel(t, tc.args, tc.body)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: unexpected error %v", tc.body, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: want error containing %q, got %v", tc.body, tc.want, err)
		}
	}
}
