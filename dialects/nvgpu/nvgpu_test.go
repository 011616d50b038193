package nvgpu

import (
	"strings"
	"testing"

	_ "github.com/tmac-dev/tmac/dialects/builtin"
	_ "github.com/tmac-dev/tmac/dialects/func"
	"github.com/tmac-dev/tmac/ir"
)

func parseFunc(t *testing.T, sig string) *ir.Operation {
	t.Helper()
	m, err := ir.Parse("t.mlir", "func.func @f("+sig+") {\n  return\n}\n", ir.ParseOptions{})
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return m
}

func firstArgType(t *testing.T, sig string) ir.Type {
	t.Helper()
	m := parseFunc(t, sig)
	fn := m.Region(0).Entry().First()
	return fn.Region(0).Entry().Arg(0).Type()
}

func TestTensorMapDescriptorAccessors(t *testing.T) {
	ty := firstArgType(t, "%a: !nvgpu.tensormap.descriptor<swizzle = swizzle_32b, tensor = memref<64x16xf16, 3>, oob = nan, interleave = interleave_16b, l2promo = l2promo_64b>")
	d, ok := AsTensorMapDescriptor(ty)
	if !ok {
		t.Fatalf("not a descriptor: %s", ty)
	}
	if d.Tensor.String() != "memref<64x16xf16, 3>" || d.Swizzle != Swizzle32B || d.L2Promo != L2Promo64B || d.OOB != OOBNaN || d.Interleave != Interleave16B {
		t.Errorf("bad params: %+v", d)
	}
	want := "!nvgpu.tensormap.descriptor<tensor = memref<64x16xf16, 3>, swizzle = swizzle_32b, l2promo = l2promo_64b, oob = nan, interleave = interleave_16b>"
	if ty.String() != want {
		t.Errorf("printed %s", ty)
	}
	if got := StrippedTypeText(ty); got != strings.TrimPrefix(want, "!nvgpu.tensormap.descriptor") {
		t.Errorf("stripped %s", got)
	}
	if TensorMapDescriptorType(*d) != ty {
		t.Errorf("constructor does not intern to the parsed type")
	}
	if Swizzle128B.Bytes() != 128 || SwizzleNone.Bytes() != 0 {
		t.Errorf("swizzle bytes")
	}
}

func TestMBarrierGroup(t *testing.T) {
	ty := firstArgType(t, "%a: !nvgpu.mbarrier.group<num_barriers = 8, memorySpace = 3>")
	g, ok := AsMBarrierGroup(ty)
	if !ok || g.NumBarriers != 8 || g.MemorySpace.String() != "3 : i64" {
		t.Fatalf("bad group %v %+v", ok, g)
	}
	if ty.String() != "!nvgpu.mbarrier.group<memorySpace = 3 : i64, num_barriers = 8>" {
		t.Errorf("printed %s", ty)
	}
	one := MBarrierGroupType(MBarrierGroup{MemorySpace: ir.I64Attr(3), NumBarriers: 1})
	if one.String() != "!nvgpu.mbarrier.group<memorySpace = 3 : i64>" {
		t.Errorf("default num_barriers not elided: %s", one)
	}
	if _, ok := AsTensorMapDescriptor(ty); ok {
		t.Errorf("group accepted as descriptor")
	}
}

func TestWarpgroupTypes(t *testing.T) {
	m := parseFunc(t, "%a: !nvgpu.warpgroup.descriptor<tensor = memref<128x64xf16, 3>>, %b: !nvgpu.warpgroup.accumulator<fragmented = vector<64x128xf32>>, %c: !nvgpu.mbarrier.token, %d: !nvgpu.device.async.token")
	args := m.Region(0).Entry().First().Region(0).Entry().Args()
	wd, ok := AsWarpgroupDescriptor(args[0].Type())
	if !ok || wd.Tensor.String() != "memref<128x64xf16, 3>" {
		t.Errorf("descriptor %+v", wd)
	}
	acc, ok := AsWarpgroupAccumulator(args[1].Type())
	if !ok || acc.Fragmented.String() != "vector<64x128xf32>" {
		t.Errorf("accumulator %+v", acc)
	}
	if !IsMBarrierToken(args[2].Type()) || !IsDeviceAsyncToken(args[3].Type()) {
		t.Errorf("tokens")
	}
	if StrippedTypeText(args[2].Type()) != "!nvgpu.mbarrier.token" {
		t.Errorf("token must print in full")
	}
}

func TestTypeParseErrors(t *testing.T) {
	cases := map[string]string{
		"!nvgpu.tensormap.descriptor<tensor = memref<*xf16>, swizzle = none, l2promo = none, oob = zero, interleave = none>": "failed to parse NVGPU_TensorMapDescriptor parameter 'tensor'",
		"!nvgpu.mbarrier.group<num_barriers = 4>":                "struct is missing required parameter: memorySpace",
		"!nvgpu.warpgroup.accumulator<fragmented = f32>":         "expected builtin.vector, but found 'f32'",
		"!nvgpu.tma.descriptor":                                  "unknown  type `tma.descriptor` in dialect `nvgpu`",
		"!nvgpu.tensormap.descriptor<tensor = memref<4xf16, 3>>": "expected ','",
	}
	for ty, want := range cases {
		_, err := ir.Parse("t.mlir", "func.func @f(%a: "+ty+") {\n  return\n}\n", ir.ParseOptions{})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want %q", ty, err, want)
		}
	}
}

func TestVerifyTensorMapDescriptor(t *testing.T) {
	mk := func(shape []int64, elem ir.Type, space ir.Attribute, sw SwizzleKind, il InterleaveKind) *TensorMapDescriptor {
		return &TensorMapDescriptor{Tensor: ir.MemRefTypeOf(shape, elem, nil, space), Swizzle: sw, Interleave: il}
	}
	shared := ir.I64Attr(3)
	cases := []struct {
		d    *TensorMapDescriptor
		want string
	}{
		{mk([]int64{128, 64}, ir.F16T, shared, Swizzle128B, InterleaveNone), ""},
		{mk([]int64{256}, ir.F32T, shared, Swizzle128B, InterleaveNone), ""}, // rank 1 skips the swizzle check
		{mk([]int64{128, 64}, ir.F16T, shared, Swizzle128B, Interleave16B), "Interleave options are not supported yet."},
		{mk([]int64{128, 64}, ir.F16T, nil, Swizzle128B, InterleaveNone), "incorrect address space"},
		{mk([]int64{ir.Dynamic, 64}, ir.F16T, shared, Swizzle128B, InterleaveNone), "must be static shaped"},
		{mk([]int64{512, 64}, ir.F16T, shared, Swizzle128B, InterleaveNone), "between 1 and 256 but it is 512"},
		{mk([]int64{128, 32}, ir.F16T, shared, Swizzle128B, InterleaveNone), "last dimension of 128 bytes but it is 64 bytes"},
	}
	for _, c := range cases {
		got := VerifyTensorMapDescriptor(c.d)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s: got %q, want %q", TensorMapDescriptorType(*c.d), got, c.want)
		}
	}
}

func TestWgmmaAllowedN(t *testing.T) {
	for _, c := range []struct {
		elem ir.Type
		n    int64
		ok   bool
	}{
		{ir.F16T, 8, true}, {ir.F16T, 248, true}, {ir.F16T, 100, false}, {ir.F16T, 264, false},
		{ir.I8, 24, true}, {ir.I8, 40, false}, {ir.I8, 48, true}, {ir.I32, 128, false}, {ir.I16, 128, false},
	} {
		if got := WgmmaAllowedN(c.elem, c.n); got != c.ok {
			t.Errorf("WgmmaAllowedN(%s, %d) = %v", c.elem, c.n, got)
		}
	}
}

func TestIsSharedMemory(t *testing.T) {
	if !IsSharedMemory(ir.I64Attr(3)) || IsSharedMemory(ir.I64Attr(1)) || IsSharedMemory(nil) {
		t.Errorf("integer memory spaces")
	}
}
