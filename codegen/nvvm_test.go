package codegen

import (
	"strings"
	"testing"

	lir "github.com/llir/llvm/ir"
	"github.com/llir/llvm/ir/types"

	_ "github.com/tmac-dev/tmac/dialects/all"
	"github.com/tmac-dev/tmac/dialects/gpu"
	"github.com/tmac-dev/tmac/ir"
)

// Every registered nvvm and llvm op and every device-side gpu op has a
// lowering.
func TestNVVMAndLLVMOpsAllLowered(t *testing.T) {
	n := 0
	for _, d := range ir.RegisteredOps() {
		if dia := d.Dialect(); dia != "nvvm" && dia != "llvm" {
			continue
		}
		n++
		if !Supported(d.Name) {
			t.Errorf("%s has no lowering", d.Name)
		}
	}
	if n < 80 {
		t.Errorf("only %d nvvm/llvm ops registered; is the registry loaded?", n)
	}
	for _, name := range []string{gpu.ThreadId, gpu.BlockId, gpu.BlockDim, gpu.GridDim,
		gpu.ClusterId, gpu.ClusterDim, gpu.ClusterBlockId, gpu.ClusterDimBlocks,
		gpu.GlobalId, gpu.LaneId, gpu.SubgroupId, gpu.NumSubgroups, gpu.SubgroupSize,
		gpu.Barrier, gpu.Printf} {
		if !Supported(name) {
			t.Errorf("%s has no lowering", name)
		}
	}
}

func TestWgmmaAsmText(t *testing.T) {
	cases := []struct {
		m, n, k        int64
		a, b, d        string
		sat            bool
		sa, sb, la, lb string
		nacc           int
		want           string
	}{
		// 16-bit inputs: scales and transposes (A col-major and B
		// row-major are the transposed layouts).
		{64, 8, 16, "f16", "f16", "f32", false, "one", "neg", "col", "row", 4,
			"{\n.reg .pred p;\nsetp.ne.b32 p, $10, 0;\nwgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {$0, $1, $2, $3}, $8, $9, p, 1, -1, 1, 1;\n}\n"},
		// tf32 and fp8: scales only.
		{64, 8, 8, "tf32", "tf32", "f32", false, "one", "one", "row", "col", 4,
			"{\n.reg .pred p;\nsetp.ne.b32 p, $10, 0;\nwgmma.mma_async.sync.aligned.m64n8k8.f32.tf32.tf32 {$0, $1, $2, $3}, $8, $9, p, 1, 1;\n}\n"},
		// Integers: satfinite before the types, no immediates.
		{64, 8, 32, "s8", "u8", "s32", true, "one", "one", "row", "col", 4,
			"{\n.reg .pred p;\nsetp.ne.b32 p, $10, 0;\nwgmma.mma_async.sync.aligned.m64n8k32.satfinite.s32.s8.u8 {$0, $1, $2, $3}, $8, $9, p;\n}\n"},
		// b1 needs the .and.popc operation.
		{64, 8, 256, "b1", "b1", "s32", false, "one", "one", "row", "col", 4,
			"{\n.reg .pred p;\nsetp.ne.b32 p, $10, 0;\nwgmma.mma_async.sync.aligned.m64n8k256.s32.b1.b1.and.popc {$0, $1, $2, $3}, $8, $9, p;\n}\n"},
		// f16 accumulators: n/4 registers.
		{64, 8, 16, "bf16", "bf16", "f16", false, "one", "one", "row", "col", 2,
			"{\n.reg .pred p;\nsetp.ne.b32 p, $6, 0;\nwgmma.mma_async.sync.aligned.m64n8k16.f16.bf16.bf16 {$0, $1}, $4, $5, p, 1, 1, 0, 0;\n}\n"},
	}
	for _, c := range cases {
		got := nvvmWgmmaAsm(c.m, c.n, c.k, c.a, c.b, c.d, c.sat, c.sa, c.sb, c.la, c.lb, c.nacc)
		if got != c.want {
			t.Errorf("%s.%s.%s: got\n%q\nwant\n%q", c.d, c.a, c.b, got, c.want)
		}
	}
}

// A by-value tensor-map parameter ([128 x i8]*) is bitcast to the i8*
// the TMA intrinsics take; other address spaces are cast.
func TestNVVMPointerCasts(t *testing.T) {
	m := lir.NewModule()
	p := lir.NewParam("tm", types.NewPointer(TensorMapType))
	s := lir.NewParam("s", PtrTo(types.I8, 3))
	f := m.NewFunc("f", types.Void, p, s)
	fe := &FuncEmitter{Fn: f, cur: f.NewBlock("entry")}
	v := fe.nvvmPtrValue(nil, p, 0)
	if !v.Type().Equal(PtrTo(types.I8, 0)) {
		t.Fatalf("tensor map pointer became %s", v.Type())
	}
	if bc, ok := v.(*lir.InstBitCast); !ok || !strings.Contains(bc.LLString(), "bitcast [128 x i8]* %tm to i8*") {
		t.Errorf("expected a bitcast of the parameter, got %v", v)
	}
	if fe.nvvmPtrValue(nil, s, 3) != s {
		t.Errorf("a pointer of the right type must be used as is")
	}
	c := fe.nvvmPtrValue(nil, s, 7)
	if ac, ok := c.(*lir.InstAddrSpaceCast); !ok || !ac.To.Equal(PtrTo(types.I8, 7)) {
		t.Errorf("shared to shared::cluster must be an addrspacecast, got %v", c)
	}
}

// Index ops along dimensions the kernel declares of size 1 fold to 0 and
// known sizes to constants, without reading registers.
func TestGPUIndexFolding(t *testing.T) {
	ll, err := emitFuncs(t, `  gpu.func @k(%out: memref<4xindex>) kernel attributes {known_block_size = array<i32: 32, 4, 1>, known_grid_size = array<i32: 16, 1, 1>} {
   %0 = gpu.thread_id z
   %1 = gpu.block_dim y
   %2 = gpu.grid_dim x
   %3 = gpu.block_id y
   %c0 = arith.constant 0 : index
   %c1 = arith.constant 1 : index
   %c2 = arith.constant 2 : index
   %c3 = arith.constant 3 : index
   memref.store %0, %out[%c0] : memref<4xindex>
   memref.store %1, %out[%c1] : memref<4xindex>
   memref.store %2, %out[%c2] : memref<4xindex>
   memref.store %3, %out[%c3] : memref<4xindex>
   gpu.return
  }`)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(ll, "sreg") {
		t.Errorf("registers read although every value is known:\n%s", ll)
	}
	for _, w := range []string{"store i64 0, i64* %arg0", "store i64 4,", "store i64 16,", "store i64 0,"} {
		if !strings.Contains(ll, w) {
			t.Errorf("missing %q in:\n%s", w, ll)
		}
	}
}

// The same printf format used in two kernels is one constant-space global.
func TestPrintfFormatShared(t *testing.T) {
	ll, err := emitFuncs(t, `  gpu.func @a(%x: i32) kernel {
   gpu.printf "v=%d\n", %x : i32
   gpu.return
  }
  gpu.func @b(%x: i16) kernel {
   gpu.printf "v=%d\n", %x : i16
   gpu.printf "w=%d\n", %x : i16
   gpu.return
  }`)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(ll, `c"v=%d\0A\00"`); n != 1 {
		t.Errorf("format emitted %d times:\n%s", n, ll)
	}
	if !strings.Contains(ll, `@__tmac_printf_fmt_1 = internal addrspace(4) constant [6 x i8] c"w=%d\0A\00"`) {
		t.Errorf("second format missing:\n%s", ll)
	}
	if !strings.Contains(ll, "sext i16 %arg0 to i32") {
		t.Errorf("i16 argument not promoted to int:\n%s", ll)
	}
}

// Rejections that need the emitter: results of unusual types.
func TestNVVMRejections(t *testing.T) {
	_, err := emitFuncs(t, `  gpu.func @k(%p: !llvm.ptr<3>) kernel {
   %0 = nvvm.ldmatrix %p {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<row>, num = 2 : i32, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>} : (!llvm.ptr<3>) -> !llvm.struct<(i32, i32)>
   gpu.return
  }`)
	if err != nil {
		t.Fatalf("x2 ldmatrix: %v", err)
	}
	_, err = emitFuncs(t, `  gpu.func @k(%x: i32) kernel {
   %0 = nvvm.barrier -> i32
   gpu.return
  }`)
	if err == nil || !strings.Contains(err.Error(), "a barrier without a reduction has no result") {
		t.Errorf("barrier with a result: got %v", err)
	}
}
