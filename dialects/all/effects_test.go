package all_test

import (
	"testing"

	_ "github.com/tmac-dev/tmac/dialects/all"
	"github.com/tmac-dev/tmac/ir"
)

// TestDeclaredEffects checks the memory effects the definitions declare
// through the queries passes use.
func TestDeclaredEffects(t *testing.T) {
	src := `func.func @f(%m: memref<16xf32, 3>, %v: vector<4xf32>, %i: index, %x: f32, %d: i32) {
  %l = memref.load %m[%i] : memref<16xf32, 3>
  memref.store %x, %m[%i] : memref<16xf32, 3>
  vector.store %v, %m[%i] : memref<16xf32, 3>, vector<4xf32>
  %q = arith.divsi %d, %d : i32
  %s = arith.addf %x, %x : f32
  return
}
`
	mod, err := ir.Parse("t.mlir", src, ir.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fn := mod.Region(0).Entry().First()
	ops := fn.Region(0).Entry().Ops()
	m := fn.Region(0).Entry().Arg(0)
	load, store, vstore, div, add := ops[0], ops[1], ops[2], ops[3], ops[4]
	if !load.Reads(m) || load.Writes(m) {
		t.Error("memref.load: want a read of its memref and no write")
	}
	if !store.Writes(m) || !store.WritesThrough(m, ir.GenericProxy) || store.WritesThrough(m, ir.AsyncProxy) {
		t.Error("memref.store: want a write of its memref through the generic proxy")
	}
	if store.Writes(store.Operand(0)) {
		t.Error("memref.store writes its stored value?")
	}
	if !vstore.Writes(m) {
		t.Error("vector.store: want a write of its base")
	}
	if !div.HasNoMemoryEffect() || div.HasTrait(ir.Pure) {
		t.Error("arith.divsi: want no memory effect but not Pure")
	}
	if !add.HasNoMemoryEffect() || load.HasNoMemoryEffect() {
		t.Error("HasNoMemoryEffect: want true for arith.addf, false for memref.load")
	}
	if !load.AccessesMemory(ir.Read) || load.AccessesMemory(ir.Write) {
		t.Error("AccessesMemory: memref.load reads and does not write")
	}
}
