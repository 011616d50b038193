package plan

import (
	"encoding/binary"
	"math"
	"strings"
	"testing"

	_ "github.com/tmac-dev/tmac/dialects/all"
	funcdialect "github.com/tmac-dev/tmac/dialects/func"
	"github.com/tmac-dev/tmac/dialects/nvgpu"
	"github.com/tmac-dev/tmac/driver"
	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/kernelabi"
	"github.com/tmac-dev/tmac/passes"
	"github.com/tmac-dev/tmac/runtime/buffer"
	"github.com/tmac-dev/tmac/runtime/cuda"
)

// fakeDevice records what a plan does, with host memory standing in for
// device memory.
type fakeDevice struct {
	mem      map[uint64][]byte
	next     uint64
	launches []*Launch
	maps     []*cuda.TiledDesc
	syncs    int
	frees    int
}

func newFake() *fakeDevice { return &fakeDevice{mem: map[uint64][]byte{}, next: 0x10000} }

func (d *fakeDevice) find(p uint64) ([]byte, uint64) {
	for base, b := range d.mem {
		if p >= base && p < base+uint64(len(b)) {
			return b, p - base
		}
	}
	panic("bad device pointer")
}
func (d *fakeDevice) Alloc(n int) (uint64, error) {
	p := d.next
	d.mem[p] = make([]byte, n)
	d.next += uint64(n+255) &^ 255
	return p, nil
}
func (d *fakeDevice) Free(p uint64) error { d.frees++; delete(d.mem, p); return nil }
func (d *fakeDevice) CopyToDevice(dst uint64, src []byte) error {
	b, o := d.find(dst)
	copy(b[o:], src)
	return nil
}
func (d *fakeDevice) CopyToHost(dst []byte, src uint64) error {
	b, o := d.find(src)
	copy(dst, b[o:])
	return nil
}
func (d *fakeDevice) CopyDeviceToDevice(dst, src uint64, n int) error {
	s, so := d.find(src)
	t, to := d.find(dst)
	copy(t[to:to+uint64(n)], s[so:so+uint64(n)])
	return nil
}
func (d *fakeDevice) Memset(dst uint64, pat []byte, n int) error {
	b, o := d.find(dst)
	for i := 0; i < n; i++ {
		copy(b[o+uint64(i*len(pat)):], pat)
	}
	return nil
}
func (d *fakeDevice) EncodeTensorMap(td *cuda.TiledDesc) ([]byte, error) {
	d.maps = append(d.maps, td)
	b := make([]byte, 128)
	b[0] = byte(len(d.maps))
	return b, nil
}
func (d *fakeDevice) Launch(l *Launch) error { d.launches = append(d.launches, l); return nil }
func (d *fakeDevice) Synchronize() error     { d.syncs++; return nil }

func parse(t *testing.T, src, pipeline string) *ir.Operation {
	t.Helper()
	mod, err := driver.ParseChunk(driver.Chunk{File: "test.tma", Text: src, FirstLine: 1}, false)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	if pipeline != "" {
		steps, err := passes.ParsePipeline(pipeline)
		if err != nil {
			t.Fatal(err)
		}
		if err := passes.RunPipeline(mod, steps, &passes.Context{Emit: func(*ir.Diagnostic) {}}, nil); err != nil {
			t.Fatalf("pipeline: %v", err)
		}
	}
	return mod
}

// buildPlan builds the plan of mod's entry function named entry ("": the
// one SelectEntry picks).
func buildPlan(t *testing.T, mod *ir.Operation, entry string) *Plan {
	t.Helper()
	fn, err := SelectEntry(mod, entry)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Build(mod, fn)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

const hostSrc = `
func.func @main(%a: f32, %x: memref<64x32xf32>, %y: memref<64x32xf32> {tmac.output}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c32 = arith.constant 32 : index
  %h = memref.alloc() : memref<64x32xf32>
  %d = gpu.alloc () : memref<64x32xf32>
  gpu.memcpy %d, %x : memref<64x32xf32>, memref<64x32xf32>
  gpu.memcpy %h, %d : memref<64x32xf32>, memref<64x32xf32>
  %zero = arith.constant 0.0 : f32
  gpu.memset %d, %zero : memref<64x32xf32>, f32
  %n = scf.for %i = %c0 to %c3 step %c1 iter_args(%acc = %c0) -> (index) {
    %g = arith.addi %i, %c1 : index
    %big = arith.cmpi sgt, %g, %c2 : index
    scf.if %big {
      gpu.launch blocks(%bx, %by, %bz) in (%gx = %g, %gy = %c2, %gz = %c1)
                 threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
        %v = memref.load %x[%bx, %tx] : memref<64x32xf32>
        %r = arith.mulf %v, %a : f32
        memref.store %r, %y[%bx, %tx] : memref<64x32xf32>
        gpu.terminator
      }
    }
    %acc2 = arith.addi %acc, %g : index
    scf.yield %acc2 : index
  }
  gpu.dealloc %d : memref<64x32xf32>
  memref.dealloc %h : memref<64x32xf32>
  return
}

func.func @reference(%a: f32, %x: memref<64x32xf32>, %y: memref<64x32xf32>) {
  return
}
`

func TestPlanRunsHostCode(t *testing.T) {
	mod := parse(t, hostSrc, "builtin.module(outline-kernels)")
	entry, err := SelectEntry(mod, "")
	if err != nil {
		t.Fatal(err)
	}
	if entry.SymbolName() != "main" {
		t.Fatalf("entry %s", entry.SymbolName())
	}
	p, err := Build(mod, entry)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Kernels) != 1 {
		t.Fatalf("%d kernels", len(p.Kernels))
	}
	dev := newFake()
	xb, _ := buffer.New(ir.FloatTypeOf(ir.F32), []int64{64, 32})
	for i := 0; i < xb.Len(); i++ {
		xb.SetFloat(i, float64(i))
	}
	yb, _ := buffer.New(ir.FloatTypeOf(ir.F32), []int64{64, 32})
	x, err := Upload(dev, xb)
	if err != nil {
		t.Fatal(err)
	}
	y, _ := Upload(dev, yb)
	if err := p.Run(dev, []Value{2.5, x, y}, nil); err != nil {
		t.Fatal(err)
	}
	// The loop runs 3 times; only g = 3 launches.
	if len(dev.launches) != 1 {
		t.Fatalf("%d launches, want 1", len(dev.launches))
	}
	l := dev.launches[0]
	if l.Grid != [3]int{3, 2, 1} || l.Block != [3]int{32, 1, 1} {
		t.Errorf("grid %v block %v", l.Grid, l.Block)
	}
	// Parameters, in the outlined kernel's order (x, a, y): x base, f32
	// a, y base (static shapes: nothing else).
	if len(l.Params) != 3 {
		t.Fatalf("%d params", len(l.Params))
	}
	if got := math.Float32frombits(binary.LittleEndian.Uint32(l.Params[1])); got != 2.5 {
		t.Errorf("a = %v", got)
	}
	if binary.LittleEndian.Uint64(l.Params[0]) != x.Dev || binary.LittleEndian.Uint64(l.Params[2]) != y.Dev {
		t.Errorf("memref bases not passed")
	}
	// gpu.alloc/dealloc balanced; memcpy round trip went through.
	if dev.frees != 1 {
		t.Errorf("%d frees, want 1", dev.frees)
	}
	if dev.syncs == 0 {
		t.Errorf("no final synchronize")
	}
	out := Outputs(entry, nil)
	if out[0] || out[1] || !out[2] {
		t.Errorf("outputs %v", out)
	}
	if Reference(mod) == nil || SameSignature(entry, Reference(mod)) != nil {
		t.Errorf("reference not found or signature mismatch")
	}
}

func TestBuildRejectsDeviceOps(t *testing.T) {
	src := `
func.func @main(%x: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %v = memref.load %x[%c0] : memref<4xf32>
  return
}`
	mod := parse(t, src, "")
	entry, _ := SelectEntry(mod, "main")
	_, err := Build(mod, entry)
	if err == nil || !strings.Contains(err.Error(), "'memref.load' cannot run on the host") {
		t.Fatalf("got %v", err)
	}
	ds := ir.AsDiagnostics(err)
	if len(ds) == 0 {
		t.Fatalf("not a diagnostic")
	}
	if loc, ok := ds[0].Loc.(ir.FileLineColLoc); !ok || loc.Line != 4 {
		t.Errorf("location %v", ds[0].Loc)
	}
}

func TestSelectEntry(t *testing.T) {
	src := `
func.func @a(%x: memref<4xf32>) { return }
func.func @b(%x: memref<4xf32>) { return }
func.func private @helper(%x: memref<4xf32>) { return }
func.func @reference(%x: memref<4xf32>) { return }`
	mod := parse(t, src, "")
	if _, err := SelectEntry(mod, ""); err == nil || !strings.Contains(err.Error(), "2 public functions (@a, @b); choose one with --entry") {
		t.Errorf("got %v", err)
	}
	if fn, err := SelectEntry(mod, "b"); err != nil || fn.SymbolName() != "b" {
		t.Errorf("got %v", err)
	}
	if _, err := SelectEntry(mod, "nope"); err == nil || !strings.Contains(err.Error(), "no func.func @nope in the module; functions: @a, @b, @helper") {
		t.Errorf("got %v", err)
	}
	one := parse(t, `func.func @only(%x: memref<4xf32>) { return }
func.func @reference(%x: memref<4xf32>) { return }`, "")
	if fn, err := SelectEntry(one, ""); err != nil || fn.SymbolName() != "only" {
		t.Errorf("got %v", err)
	}
	bad := parse(t, `func.func @only(%x: memref<4xf32>) { return }
func.func @reference(%x: memref<8xf32>) { return }`, "")
	e, _ := SelectEntry(bad, "")
	if err := SameSignature(e, Reference(bad)); err == nil || !strings.Contains(err.Error(), "argument #0 of @reference is 'memref<8xf32>'") {
		t.Errorf("got %v", err)
	}
	fl := parse(t, `func.func @g(%x: memref<4xf32>) attributes {tmac.flops = 1024 : i64} { return }`, "")
	if Flops(fl.Region(0).Entry().Ops()[0]) != 1024 {
		t.Errorf("tmac.flops not read")
	}
}

func memOf(t *testing.T, elem ir.Type, shape ...int64) *Mem {
	m, err := NewMem(elem, shape)
	if err != nil {
		t.Fatal(err)
	}
	m.Dev = 0x7f0000000000
	return m
}

func descType(t *testing.T, text string) *nvgpu.TensorMapDescriptor {
	src := `func.func @f(%d: !nvgpu.tensormap.descriptor<` + text + `>) { return }`
	mod := parse(t, src, "")
	ft, _ := FuncType(mod.Region(0).Entry().Ops()[0])
	d, ok := nvgpu.AsTensorMapDescriptor(ft.Inputs[0])
	if !ok {
		t.Fatal("not a descriptor")
	}
	return d
}

func TestTiledDesc(t *testing.T) {
	d := descType(t, "tensor = memref<64x64xf16, 3>, swizzle = swizzle_128b, l2promo = l2promo_256b, oob = nan, interleave = none")
	m := memOf(t, ir.FloatTypeOf(ir.F16), 1024, 512)
	td, err := TiledDesc(d, m, []int64{64, 64})
	if err != nil {
		t.Fatal(err)
	}
	if td.DataType != cuda.TensorMapFloat16 || td.Swizzle != cuda.Swizzle128B || td.L2Promotion != cuda.L2Promotion256B || td.OOBFill != cuda.OOBFillNaN {
		t.Errorf("enums %+v", td)
	}
	// Driver order: innermost first; byte strides of the outer dims.
	if td.Dims[0] != 512 || td.Dims[1] != 1024 || td.Strides[0] != 1024 || td.Box[0] != 64 || td.Box[1] != 64 {
		t.Errorf("dims %v strides %v box %v", td.Dims, td.Strides, td.Box)
	}
	// 3-D, f32, strides 16x8 elements.
	d3 := descType(t, "tensor = memref<2x8x8xf32, 3>, swizzle = none, l2promo = none, oob = zero, interleave = none")
	td, err = TiledDesc(d3, memOf(t, ir.FloatTypeOf(ir.F32), 4, 16, 8), []int64{2, 8, 8})
	if err != nil {
		t.Fatal(err)
	}
	if len(td.Strides) != 2 || td.Strides[0] != 32 || td.Strides[1] != 512 {
		t.Errorf("strides %v", td.Strides)
	}
	// Errors: element type, box mismatch, the driver's constraints.
	if _, err := TiledDesc(d, memOf(t, ir.FloatTypeOf(ir.F32), 64, 64), []int64{64, 64}); err == nil || !strings.Contains(err.Error(), "elements are f16 but the memref holds f32") {
		t.Errorf("got %v", err)
	}
	if _, err := TiledDesc(d, m, []int64{32, 64}); err == nil || !strings.Contains(err.Error(), "differs from the descriptor's tensor shape") {
		t.Errorf("got %v", err)
	}
	odd := descType(t, "tensor = memref<8x8xf16, 3>, swizzle = none, l2promo = none, oob = zero, interleave = none")
	if _, err := TiledDesc(odd, memOf(t, ir.FloatTypeOf(ir.F16), 100, 100), []int64{8, 8}); err == nil || !strings.Contains(err.Error(), "not a multiple of 16") {
		t.Errorf("got %v", err)
	}
	host := memOf(t, ir.FloatTypeOf(ir.F16), 1024, 512)
	host.Host = make([]byte, 8)
	if _, err := TiledDesc(d, host, []int64{64, 64}); err == nil || !strings.Contains(err.Error(), "host memory") {
		t.Errorf("got %v", err)
	}
}

func TestPackParams(t *testing.T) {
	src := `func.func @f(%m: memref<?x?xbf16, strided<[?, 1], offset: ?>>, %s: i32, %h: f16, %i: index, %d: !nvgpu.tensormap.descriptor<tensor = memref<64x64xf16, 3>, swizzle = none, l2promo = none, oob = zero, interleave = none>) { return }`
	mod := parse(t, src, "")
	ft, _ := FuncType(mod.Region(0).Entry().Ops()[0])
	params, err := kernelabi.Params(ft.Inputs, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	k := &Kernel{Name: "k", Args: ft.Inputs, Params: params}
	m := memOf(t, ir.FloatTypeOf(ir.BF16), 10, 20)
	m.Strides = []int64{24, 1}
	m.Offset = 3
	tm := &TensorMap{Bytes: make([]byte, 128)}
	tm.Bytes[5] = 9
	ps, err := PackParams(k, []Value{m, int64(-2), 1.0, int64(77), tm})
	if err != nil {
		t.Fatal(err)
	}
	// base, offset, size0, size1, stride0, i32, f16, index, map
	if len(ps) != 9 {
		t.Fatalf("%d params", len(ps))
	}
	u := func(b []byte) uint64 { return binary.LittleEndian.Uint64(b) }
	if u(ps[0]) != m.Dev || u(ps[1]) != 3 || u(ps[2]) != 10 || u(ps[3]) != 20 || u(ps[4]) != 24 {
		t.Errorf("memref params %v", ps[:5])
	}
	if len(ps[5]) != 4 || int32(binary.LittleEndian.Uint32(ps[5])) != -2 {
		t.Errorf("i32 %v", ps[5])
	}
	if len(ps[6]) != 2 || binary.LittleEndian.Uint16(ps[6]) != 0x3c00 {
		t.Errorf("f16 %x", ps[6])
	}
	if u(ps[7]) != 77 || len(ps[8]) != 128 || ps[8][5] != 9 {
		t.Errorf("index/map params")
	}
	if _, err := PackParams(k, []Value{int64(1), int64(-2), 1.0, int64(77), tm}); err == nil {
		t.Errorf("a scalar for a memref was accepted")
	}
}

func TestToleranceAndCompare(t *testing.T) {
	for _, c := range []struct {
		t          ir.Type
		rtol, atol float64
	}{
		{ir.FloatTypeOf(ir.F32), 1e-5, 1e-6}, {ir.FloatTypeOf(ir.F16), 1e-2, 1e-2}, {ir.FloatTypeOf(ir.BF16), 1e-2, 1e-2},
		{ir.IntegerTypeOf(32), 0, 0},
	} {
		r, a := Tolerance(c.t)
		if r != c.rtol || a != c.atol {
			t.Errorf("%s: %g %g", c.t, r, a)
		}
	}
	out, _ := buffer.New(ir.FloatTypeOf(ir.F32), []int64{2, 3})
	ref, _ := buffer.New(ir.FloatTypeOf(ir.F32), []int64{2, 3})
	for i := 0; i < 6; i++ {
		out.SetFloat(i, float64(i+1))
		ref.SetFloat(i, float64(i+1))
	}
	c, _ := Compare(out, ref, 1e-5, 1e-6)
	if !c.OK() || c.MaxAbs != 0 || c.RelNorm != 0 {
		t.Errorf("equal buffers: %+v", c)
	}
	out.SetFloat(4, 5.5)
	out.SetFloat(5, math.NaN())
	c, _ = Compare(out, ref, 1e-5, 1e-6)
	if c.OK() || c.Mismatches != 2 || c.First[0] != 4 || c.First[1] != 5 {
		t.Errorf("mismatches: %+v", c)
	}
	if Index([]int64{2, 3}, 4) != "[1, 1]" {
		t.Errorf("index %s", Index([]int64{2, 3}, 4))
	}
	out.SetFloat(5, 6)
	c, _ = Compare(out, ref, 0.1, 0)
	if !c.OK() || math.Abs(c.MaxRel-0.1) > 1e-12 {
		t.Errorf("rtol 0.1: %+v", c)
	}
	ia, _ := buffer.New(ir.IntegerTypeOf(32), []int64{3})
	ib, _ := buffer.New(ir.IntegerTypeOf(32), []int64{3})
	ib.SetInt(1, 1)
	c, _ = Compare(ia, ib, 1, 1)
	if c.OK() {
		t.Errorf("integers must match exactly")
	}
}

func TestHostArith(t *testing.T) {
	// Evaluate individual ops directly.
	mod := parse(t, `
func.func @main() {
  %a = arith.constant 7 : i32
  %b = arith.constant -2 : i32
  %c = arith.remsi %a, %b : i32
  %d = arith.divsi %a, %b : i32
  %big = arith.constant 2147483647 : i32
  %w = arith.addi %big, %a : i32
  %u = arith.divui %b, %a : i32
  %t = arith.cmpi ult, %a, %b : i32
  return
}`, "")
	entry, _ := SelectEntry(mod, "main")
	x := &Exec{vals: map[ir.Value]Value{}}
	var got []int64
	for _, op := range entry.Region(0).Entry().Ops() {
		if op.Name() == funcdialect.Return {
			break
		}
		if err := x.op(op); err != nil {
			t.Fatal(err)
		}
		got = append(got, x.vals[op.Result(0)].(int64))
	}
	want := []int64{7, -2, 1, -3, 2147483647, -2147483642, int64((uint32(0xfffffffe)) / 7), 1}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("op %d: got %d want %d", i, got[i], want[i])
		}
	}
}

// The launch's opt-in to non-portable cluster sizes reaches the device
// (CUDA.Launch makes the driver call it needs); without it, 16 blocks is
// refused before the device sees the launch.
func TestNonPortableClusterLaunch(t *testing.T) {
	const src = `
func.func @main(%n: index) {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  gpu.launch clusters(%cx, %cy, %cz) in (%kx = %n, %ky = %c4, %kz = %c1)
             blocks(%bx, %by, %bz) in (%gx = %n, %gy = %c4, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    gpu.terminator
  }OPT
  return
}
`
	for _, c := range []struct {
		opt, wantErr string
		n            int64
		want         bool
	}{
		{" {nonPortableClusterSize = true}", "", 4, true},
		{" {nonPortableClusterSize = true}", "", 2, true},
		{" {nonPortableClusterSize = false}", "", 2, false},
		{"", "", 2, false},
		{"", "clusters of 16 blocks (4 x 4 x 1), over the portable limit of 8; up to 16 need the launch to opt in with {nonPortableClusterSize = true}", 4, false},
		{" {nonPortableClusterSize = true}", "clusters of 32 blocks (8 x 4 x 1), over sm_90's limit of 16", 8, false},
	} {
		mod := parse(t, strings.Replace(src, "OPT", c.opt, 1), "builtin.module(outline-kernels)")
		p := buildPlan(t, mod, "")
		dev := newFake()
		err := p.Run(dev, []Value{c.n}, nil)
		switch {
		case c.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%q, n=%d: got %v, want %q", c.opt, c.n, err, c.wantErr)
			}
			if len(dev.launches) != 0 {
				t.Errorf("%q, n=%d: launched", c.opt, c.n)
			}
		case err != nil:
			t.Errorf("%q, n=%d: %v", c.opt, c.n, err)
		case len(dev.launches) != 1 || dev.launches[0].NonPortableCluster != c.want || dev.launches[0].Cluster != [3]int{int(c.n), 4, 1}:
			t.Errorf("%q, n=%d: launches %+v, want NonPortableCluster %v", c.opt, c.n, dev.launches, c.want)
		}
	}
}
