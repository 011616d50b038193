package all_test

import (
	"testing"

	_ "github.com/tmac-dev/tmac/dialects/all"
	"github.com/tmac-dev/tmac/dialects/memref"
	"github.com/tmac-dev/tmac/dialects/nvgpu"
	"github.com/tmac-dev/tmac/dialects/scf"
	"github.com/tmac-dev/tmac/ir"
)

// TestViews reads ops through the generated views: fixed positions,
// variadic groups, optional operands found through operandSegmentSizes,
// results, attributes and regions, and As on ops of other names.
func TestViews(t *testing.T) {
	src := `!desc = !nvgpu.tensormap.descriptor<tensor = memref<64x64xf16, 3>, swizzle = none, l2promo = none, oob = zero, interleave = none>
!bars = !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>
func.func @f(%m: memref<16xf32>, %i: index, %n: index, %d: !desc, %b: !bars, %t: memref<64x64xf16, 3>) {
  %l = memref.load %m[%i] : memref<16xf32>
  scf.for %k = %i to %n step %i {
    memref.store %l, %m[%k] : memref<16xf32>
  }
  nvgpu.tma.async.load %d[%i, %n], %b[%i] to %t : !desc, !bars -> memref<64x64xf16, 3>
  return
}
`
	mod, err := ir.Parse("t.mlir", src, ir.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	body := mod.Region(0).Entry().First().Region(0).Entry()
	args := body.Args()
	ops := body.Ops()
	load, ok := memref.AsLoad(ops[0])
	if !ok || load.Memref() != args[0] || len(load.Indices()) != 1 || load.Indices()[0] != args[1] || load.Result() != ops[0].Result(0) {
		t.Errorf("memref.load view: ok %v, memref %v, indices %v", ok, load.Memref(), load.Indices())
	}
	if _, ok := memref.AsLoad(ops[1]); ok {
		t.Error("AsLoad accepted an scf.for")
	}
	if _, ok := memref.AsLoad(nil); ok {
		t.Error("AsLoad accepted nil")
	}
	loop, ok := scf.AsFor(ops[1])
	if !ok || loop.LowerBound() != args[1] || loop.UpperBound() != args[2] || loop.Step() != args[1] || len(loop.InitArgs()) != 0 {
		t.Errorf("scf.for view: bounds %v %v %v", loop.LowerBound(), loop.UpperBound(), loop.Step())
	}
	if loop.Region() != ops[1].Region(0) || loop.UnsignedCmp() != nil {
		t.Error("scf.for view: region or absent attribute")
	}
	tma, ok := nvgpu.AsTmaAsyncLoad(ops[2])
	if !ok || tma.Dst() != args[5] || tma.Barriers() != args[4] || tma.TensorMapDescriptor() != args[3] ||
		len(tma.Coordinates()) != 2 || tma.MbarId() != args[1] || tma.MulticastMask() != nil || tma.Predicate() != nil {
		t.Errorf("nvgpu.tma.async.load view: dst %v, coordinates %v, mbarId %v, multicast %v", tma.Dst(), tma.Coordinates(), tma.MbarId(), tma.MulticastMask())
	}
}
