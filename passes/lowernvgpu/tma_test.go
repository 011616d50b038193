package lowernvgpu

import (
	"strconv"
	"strings"
	"testing"

	"github.com/tmac-dev/tmac/dialects/nvgpu"
	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/passes/internal/passtest"
)

func lowerNVGPUModule(t *testing.T, src string) (*ir.Operation, error) {
	t.Helper()
	m := passtest.Parse(t, src)
	err := runLowerNVGPU(m, nil)
	if err == nil {
		if verr := ir.VerifyModule(m); verr != nil {
			t.Fatalf("invalid IR after lower-nvgpu: %v\n%s", verr, ir.Print(m, ir.PrintOptions{}))
		}
	}
	return m, err
}

func TestTMABoxBytesAndAlignment(t *testing.T) {
	for _, c := range []struct {
		shape []int64
		elem  ir.Type
		sw    nvgpu.SwizzleKind
		bytes int64
		align int64
	}{
		{[]int64{64, 64}, ir.F16T, nvgpu.SwizzleNone, 8192, 128},
		{[]int64{128, 64}, ir.F16T, nvgpu.Swizzle128B, 16384, 1024},
		{[]int64{4, 8, 16}, ir.F32T, nvgpu.Swizzle64B, 2048, 128},
		{[]int64{256}, ir.I8, nvgpu.Swizzle32B, 256, 128},
	} {
		d := &nvgpu.TensorMapDescriptor{Tensor: ir.MemRefTypeOf(c.shape, c.elem, nil, ir.IntAttr(3, ir.I64)), Swizzle: c.sw}
		if got := d.BoxBytes(); got != c.bytes {
			t.Errorf("%v: %d bytes, want %d", c.shape, got, c.bytes)
		}
		if got := d.SharedAlign(); got != c.align {
			t.Errorf("%v %s: alignment %d, want %d", c.shape, c.sw, got, c.align)
		}
	}
}

// The byte offset of a TMA operand is followed through views, subviews and
// casts down to its allocation.
func TestTMAAlignmentOffsets(t *testing.T) {
	const tmpl = `
!desc = !nvgpu.tensormap.descriptor<tensor = memref<8x64xf16, 3>, swizzle = none, l2promo = none, oob = zero, interleave = none>
module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @k(%d: !desc, %x: index) kernel {
      %shift = arith.constant SHIFT : index
      %dyn = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
      %v = memref.view %dyn[%shift][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<16x64xf16, #gpu.address_space<workgroup>>
      %s = memref.subview %v[ROW, 0] [8, 64] [1, 1] : memref<16x64xf16, #gpu.address_space<workgroup>> to memref<8x64xf16, strided<[64, 1], offset: OFF>, #gpu.address_space<workgroup>>
      nvgpu.tma.async.store %s to %d[%x, %x] : memref<8x64xf16, strided<[64, 1], offset: OFF>, #gpu.address_space<workgroup>> -> !desc
      gpu.return
    }
  }
}`
	for _, c := range []struct{ shift, row string }{
		{"0", "0"},
		{"1024", "4"}, // 1024 + 4*64*2 = 1536
		{"64", "0"},   // the view's shift alone: misaligned
		{"0", "1"},    // 128 bytes
		{"128", "3"},  // 128 + 384
		{"2048", "5"}, // 2048 + 640
		{"192", "1"},  // 192 + 128: misaligned
	} {
		off := map[string]string{"0": "0", "1": "64", "3": "192", "4": "256", "5": "320"}[c.row]
		src := strings.NewReplacer("SHIFT", c.shift, "ROW", c.row, "OFF", off).Replace(tmpl)
		_, err := lowerNVGPUModule(t, src)
		bytes := map[string]int64{"0": 0, "1024": 1024, "64": 64, "128": 128, "192": 192, "2048": 2048}[c.shift] + map[string]int64{"0": 0, "1": 128, "3": 384, "4": 512, "5": 640}[c.row]
		wantErr := bytes%128 != 0
		if wantErr != (err != nil) {
			t.Errorf("shift %s row %s (%d bytes): error %v, want error %v", c.shift, c.row, bytes, err, wantErr)
			continue
		}
		if err != nil && !strings.Contains(err.Error(), "starts "+strconv.FormatInt(bytes, 10)+" bytes into its allocation") {
			t.Errorf("shift %s row %s: %v", c.shift, c.row, err)
		}
	}
}

// After lower-nvgpu no nvgpu op or type is left and the IR verifies.
func TestLowerNVGPUTMAKernelVerifies(t *testing.T) {
	src := `
!desc = !nvgpu.tensormap.descriptor<tensor = memref<64x64xf16, 3>, swizzle = swizzle_128b, l2promo = none, oob = zero, interleave = none>
!bars = !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>
module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @k(%d: !desc, %x: index, %i: index, %p: i1) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %tx = arith.constant 8192 : index
      %ring = memref.alloca() : memref<2x64x64xf16, 3>
      %b = nvgpu.mbarrier.create -> !bars
      nvgpu.mbarrier.init %b[%c0], %c1, predicate = %p : !bars
      nvgpu.mbarrier.init %b[%c1], %c1, predicate = %p : !bars
      gpu.barrier
      %s = memref.subview %ring[%i, 0, 0] [1, 64, 64] [1, 1, 1] : memref<2x64x64xf16, 3> to memref<64x64xf16, strided<[64, 1], offset: ?>, 3>
      nvgpu.mbarrier.arrive.expect_tx %b[%i], %tx, predicate = %p : !bars
      nvgpu.tma.async.load %d[%x, %x], %b[%i] to %s, predicate = %p : !desc, !bars -> memref<64x64xf16, strided<[64, 1], offset: ?>, 3>
      %t = nvgpu.mbarrier.arrive %b[%i] : !bars -> !nvgpu.mbarrier.token
      %ok = nvgpu.mbarrier.test.wait %b[%i], %t : !bars, !nvgpu.mbarrier.token
      nvgpu.mbarrier.try_wait.parity %b[%i], %p, %tx : !bars
      nvgpu.tma.async.store %s to %d[%x, %x] : memref<64x64xf16, strided<[64, 1], offset: ?>, 3> -> !desc
      gpu.return
    }
  }
}`
	m, err := lowerNVGPUModule(t, src)
	if err != nil {
		t.Fatal(err)
	}
	out := ir.Print(m, ir.PrintOptions{})
	for _, line := range strings.Split(out, "\n") {
		if l := strings.TrimSpace(line); strings.HasPrefix(l, "nvgpu.") || strings.Contains(l, "= nvgpu.") {
			t.Errorf("nvgpu op left: %s", l)
		}
	}
	for _, want := range []string{
		"memref.alloca() {alignment = 1024 : i64} : memref<2x64x64xf16, 3>",
		"nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}",
		"nvvm.cp.async.bulk.commit.group",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	if n := strings.Count(out, "nvvm.fence.proxy {"); n != 1 {
		t.Errorf("%d async-proxy fences after two consecutive inits, want 1", n)
	}
}
