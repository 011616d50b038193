package plan

import (
	"testing"

	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/runtime/buffer"
)

// memref.copy between device buffers and through host memory, and
// memref.realloc growing then shrinking a device buffer (the first
// elements kept, each source freed) and shrinking a host one.
func TestHostCopyAndRealloc(t *testing.T) {
	src := `func.func @main(%x: memref<8xf32>, %y: memref<8xf32>, %z: memref<4xf32>) {
  %h = memref.alloc() : memref<8xf32>
  memref.copy %x, %h : memref<8xf32> to memref<8xf32>
  %s = memref.realloc %h : memref<8xf32> to memref<4xf32>
  memref.copy %s, %z : memref<4xf32> to memref<4xf32>
  %d = gpu.alloc() : memref<8xf32>
  memref.copy %x, %d : memref<8xf32> to memref<8xf32>
  %c12 = arith.constant 12 : index
  %g = memref.realloc %d(%c12) : memref<8xf32> to memref<?xf32>
  %g2 = memref.realloc %g : memref<?xf32> to memref<8xf32>
  memref.copy %g2, %y : memref<8xf32> to memref<8xf32>
  gpu.dealloc %g2 : memref<8xf32>
  return
}
`
	mod := parse(t, src, "")
	p := buildPlan(t, mod, "main")
	dev := newFake()
	xb, _ := buffer.New(ir.FloatTypeOf(ir.F32), []int64{8})
	for i := 0; i < 8; i++ {
		xb.SetFloat(i, float64(i+1))
	}
	yb, _ := buffer.New(ir.FloatTypeOf(ir.F32), []int64{8})
	zb, _ := buffer.New(ir.FloatTypeOf(ir.F32), []int64{4})
	x, _ := Upload(dev, xb)
	y, _ := Upload(dev, yb)
	z, _ := Upload(dev, zb)
	if err := p.Run(dev, []Value{x, y, z}, nil); err != nil {
		t.Fatal(err)
	}
	for i, m := range []*Mem{y, z} {
		b := make([]byte, m.Bytes())
		if err := dev.CopyToHost(b, m.Dev); err != nil {
			t.Fatal(err)
		}
		out, _ := buffer.New(ir.FloatTypeOf(ir.F32), m.Shape)
		copy(out.Bytes, b)
		for j := 0; j < out.Len(); j++ {
			if out.Float(j) != float64(j+1) {
				t.Errorf("output %d [%d] = %v, want %d", i, j, out.Float(j), j+1)
			}
		}
	}
	// %d and %g freed by the reallocs, %g2 by gpu.dealloc.
	if dev.frees != 3 {
		t.Errorf("%d frees, want 3", dev.frees)
	}
}
