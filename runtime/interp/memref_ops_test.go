package interp

import (
	"testing"

	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/runtime/buffer"
)

// The views of issue 16 address the same elements as the source: m is
// 4x6 with m[i][j] = 10i + j; each read goes through a view and lands in
// out, whose expected values are computed from the source indices.
func TestReshapeViews(t *testing.T) {
	src := `func.func @f(%m: memref<4x6xi32>, %out: memref<9xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %c6 = arith.constant 6 : index
  %c7 = arith.constant 7 : index
  %flat = memref.collapse_shape %m [[0, 1]] : memref<4x6xi32> into memref<24xi32>
  %a = memref.load %flat[%c7] : memref<24xi32>
  memref.store %a, %out[%c0] : memref<9xi32>
  %e = memref.expand_shape %m [[0], [1, 2]] output_shape [4, 2, 3] : memref<4x6xi32> into memref<4x2x3xi32>
  %b = memref.load %e[%c3, %c1, %c2] : memref<4x2x3xi32>
  memref.store %b, %out[%c1] : memref<9xi32>
  %t = memref.transpose %m (i, j) -> (j, i) : memref<4x6xi32> to memref<6x4xi32, strided<[1, 6]>>
  %c = memref.load %t[%c5, %c2] : memref<6x4xi32, strided<[1, 6]>>
  memref.store %c, %out[%c2] : memref<9xi32>
  %sub = memref.subview %m[0, 1] [4, 1] [1, 1] : memref<4x6xi32> to memref<4x1xi32, strided<[6, 1], offset: 1>>
  %col = memref.collapse_shape %sub [[0, 1]] : memref<4x1xi32, strided<[6, 1], offset: 1>> into memref<4xi32, strided<[6], offset: 1>>
  %d = memref.load %col[%c3] : memref<4xi32, strided<[6], offset: 1>>
  memref.store %d, %out[%c3] : memref<9xi32>
  %base, %off, %sizes:2, %strides:2 = memref.extract_strided_metadata %t : memref<6x4xi32, strided<[1, 6]>> -> memref<i32>, index, index, index, index, index
  %s = arith.index_cast %strides#1 : index to i32
  memref.store %s, %out[%c4] : memref<9xi32>
  %r = memref.rank %e : memref<4x2x3xi32>
  %ri = arith.index_cast %r : index to i32
  memref.store %ri, %out[%c5] : memref<9xi32>
  %cp = memref.alloc() : memref<4x6xi32>
  memref.copy %m, %cp : memref<4x6xi32> to memref<4x6xi32>
  %g = memref.load %cp[%c2, %c5] : memref<4x6xi32>
  memref.store %g, %out[%c6] : memref<9xi32>
  %h = memref.alloca_scope -> (i32) {
    %v = memref.load %m[%c1, %c1] : memref<4x6xi32>
    memref.alloca_scope.return %v : i32
  }
  memref.store %h, %out[%c7] : memref<9xi32>
  %shape = memref.alloc() : memref<2xi32>
  %three = arith.constant 3 : i32
  %eight = arith.constant 8 : i32
  memref.store %three, %shape[%c0] : memref<2xi32>
  memref.store %eight, %shape[%c1] : memref<2xi32>
  %rs = memref.reshape %flat(%shape) : (memref<24xi32>, memref<2xi32>) -> memref<?x?xi32>
  %q = memref.load %rs[%c2, %c1] : memref<?x?xi32>
  memref.store %q, %out[%c0] : memref<9xi32>
  %grown = memref.realloc %shape(%c4) : memref<2xi32> to memref<?xi32>
  %kept = memref.load %grown[%c1] : memref<?xi32>
  %c8 = arith.constant 8 : index
  memref.store %kept, %out[%c8] : memref<9xi32>
  return
}
`
	m, _ := buffer.New(ir.I32, []int64{4, 6})
	for i := 0; i < 4; i++ {
		for j := 0; j < 6; j++ {
			m.SetInt(i*6+j, int64(10*i+j))
		}
	}
	out, _ := buffer.New(ir.I32, []int64{9})
	run1(t, src, m, out)
	// out[0]: reshape to 3x8, element [2, 1] = flat[17] = m[2][5].
	// out[8]: element 1 of the shape buffer, kept by realloc.
	want := []int64{25, 35, 25, 31, 6, 3, 25, 11, 8}
	for i, w := range want {
		if got := out.Int(i); got != w {
			t.Errorf("out[%d] = %d, want %d", i, got, w)
		}
	}
}

// Every atomic_rmw kind computes what the arith op of its name computes
// and returns the old value; generic_atomic_rmw stores what its region
// yields.
func TestAtomics(t *testing.T) {
	cases := []struct {
		kind, typ string
		old, v    float64
		want      float64
	}{
		{"addf", "f32", 1.5, 2.25, 3.75},
		{"mulf", "f32", 1.5, -2, -3},
		{"maximumf", "f32", -1, 0.5, 0.5},
		{"minnumf", "f32", 4, 3, 3},
		{"assign", "f32", 4, 7, 7},
		{"addi", "i32", 2147483647, 1, -2147483648},
		{"andi", "i32", 12, 10, 8},
		{"ori", "i32", 12, 10, 14},
		{"xori", "i32", 12, 10, 6},
		{"maxs", "i32", -1, 1, 1},
		{"maxu", "i32", -1, 1, -1},
		{"mins", "i32", -1, 1, -1},
		{"minu", "i32", -1, 1, 1},
		{"muli", "i32", 65536, 65536, 0},
		{"assign", "i32", 4, 9, 9},
	}
	for _, c := range cases {
		src := "func.func @f(%m: memref<1x" + c.typ + ">, %v: " + c.typ + ") -> " + c.typ + " {\n" +
			"  %c0 = arith.constant 0 : index\n" +
			"  %r = memref.atomic_rmw " + c.kind + " %v, %m[%c0] : (" + c.typ + ", memref<1x" + c.typ + ">) -> " + c.typ + "\n" +
			"  return %r : " + c.typ + "\n}\n"
		isFloat := c.typ == "f32"
		elem := ir.Type(ir.I32)
		if isFloat {
			elem = ir.F32T
		}
		m, _ := buffer.New(elem, []int64{1})
		var v Arg
		if isFloat {
			m.SetFloat(0, c.old)
			v = c.v
		} else {
			m.SetInt(0, int64(c.old))
			v = int64(c.v)
		}
		res := run1(t, src, m, v)
		got, old := m.Float(0), res[0]
		if !isFloat {
			got = float64(m.Int(0))
			old = float64(res[0].(int64))
		}
		if got != c.want || old != c.old {
			t.Errorf("%s %s: memory %v and result %v, want %v and %v", c.kind, c.typ, got, old, c.want, c.old)
		}
	}
	src := `func.func @f(%m: memref<2xf32>) -> f32 {
  %c1 = arith.constant 1 : index
  %r = memref.generic_atomic_rmw %m[%c1] : memref<2xf32> {
  ^bb0(%x: f32):
    %two = arith.constant 2.0 : f32
    %y = arith.mulf %x, %two : f32
    memref.atomic_yield %y : f32
  }
  return %r : f32
}
`
	m, _ := buffer.New(ir.F32T, []int64{2})
	m.SetFloat(1, 1.25)
	res := run1(t, src, m)
	if m.Float(1) != 2.5 || res[0] != 1.25 {
		t.Errorf("generic_atomic_rmw: memory %v, result %v; want 2.5 and 1.25", m.Float(1), res[0])
	}
}
