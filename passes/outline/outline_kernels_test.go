package outline

import (
	"strings"
	"testing"

	_ "github.com/tmac-dev/tmac/dialects/all"
	"github.com/tmac-dev/tmac/dialects/arith"
	funcdialect "github.com/tmac-dev/tmac/dialects/func"
	"github.com/tmac-dev/tmac/dialects/gpu"
	"github.com/tmac-dev/tmac/dialects/scf"
	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/passes/internal/passtest"
)

func runOutline(t *testing.T, src string) *ir.Operation {
	t.Helper()
	m := passtest.Parse(t, src)
	if err := outlineKernels(m); err != nil {
		t.Fatalf("outline-kernels: %v", err)
	}
	if err := ir.VerifyModule(m); err != nil {
		t.Fatalf("invalid IR after outline-kernels: %v\n%s", err, ir.Print(m, ir.PrintOptions{}))
	}
	return m
}

func funcInputs(op *ir.Operation) []ir.Type {
	return op.Attr("function_type").(*ir.TypeAttr).Value.(*ir.FunctionType).Inputs
}

const launchHeader = `
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %g, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %b, %sy = %c1, %sz = %c1) {`

// The kernel parameters follow the first use of each captured value, and
// the launch passes the same values in the same order.
func TestOutlineCaptureOrder(t *testing.T) {
	m := runOutline(t, `
func.func @f(%a: memref<8xf32>, %x: f32, %n: index, %v: vector<4xf32>, %va: memref<8xf32>) {
  %c1 = arith.constant 1 : index
  %g = arith.constant 2 : index
  %b = arith.constant 32 : index`+launchHeader+`
    %i = arith.addi %tx, %n : index
    vector.store %v, %va[%i] : memref<8xf32>, vector<4xf32>
    %s = arith.addf %x, %x : f32
    memref.store %s, %a[%i] : memref<8xf32>
    %t = arith.addf %x, %x : f32
    gpu.terminator
  }
  return
}`)
	ks := passtest.Kernels(m)
	if len(ks) != 1 {
		t.Fatalf("got %d kernels", len(ks))
	}
	k := ks[0]
	var got []string
	for _, ty := range funcInputs(k) {
		got = append(got, ty.String())
	}
	want := "index vector<4xf32> memref<8xf32> f32 memref<8xf32>"
	if strings.Join(got, " ") != want {
		t.Errorf("kernel inputs %v, want %s", got, want)
	}
	calls := ir.Nested(m, gpu.LaunchFunc)
	if len(calls) != 1 {
		t.Fatalf("got %d launch_func", len(calls))
	}
	fn := ir.Nested(m, funcdialect.Func)[0]
	args := funcdialect.FuncOp{Op: fn}.Body().Entry().Args()
	ops := gpu.LaunchFuncOp{Op: calls[0]}.KernelOperands()
	wantOps := []ir.Value{args[2], args[3], args[4], args[1], args[0]}
	if len(ops) != len(wantOps) {
		t.Fatalf("launch_func passes %d operands", len(ops))
	}
	for i := range ops {
		if ops[i] != wantOps[i] {
			t.Errorf("launch_func operand %d is not the expected function argument", i)
		}
	}
	if k.SymbolName() != "f_kernel_0" || k.ParentOp().SymbolName() != "f_kernels" {
		t.Errorf("names %s::%s", k.ParentOp().SymbolName(), k.SymbolName())
	}
	if _, ok := m.Attr("gpu.container_module").(*ir.UnitAttr); !ok {
		t.Error("module is not a gpu.container_module")
	}
	if fn.Next() != k.ParentOp() {
		t.Error("the gpu.module does not follow its function")
	}
	// Only the used id is materialised; the constant size is cloned.
	if n := len(ir.Nested(k, gpu.ThreadId)); n != 1 {
		t.Errorf("%d gpu.thread_id ops", n)
	}
	for _, name := range []string{gpu.BlockId, gpu.BlockDim, gpu.GridDim} {
		if n := len(ir.Nested(k, name)); n != 0 {
			t.Errorf("%d unused %s ops", n, name)
		}
	}
	// Nothing inside the kernel refers to values outside it.
	ir.Walk(k, func(op *ir.Operation) ir.WalkResult {
		for _, v := range op.Operands() {
			if definedOutside(v, k.Region(0)) {
				t.Errorf("%s uses a value from outside the kernel", op.Name())
			}
		}
		return ir.Advance
	})
}

// Static sizes become known_*_size only when all three are constants
// (sizes out of the hardware's range are rejected before: see
// lit-tests/passes/outline-kernels-launch-limits.tma).
func TestOutlineKnownSizes(t *testing.T) {
	cases := []struct {
		g, b        string
		grid, block string // expected attribute text, "" for none
	}{
		{"4", "128", "array<i32: 4, 1, 1>", "array<i32: 128, 1, 1>"},
		{"%n", "64", "", "array<i32: 64, 1, 1>"},
	}
	for _, c := range cases {
		src := `
func.func @f(%n: index, %m: memref<?xindex>) {
  %c1 = arith.constant 1 : index`
		g, b := "%n", "%n"
		if c.g != "%n" {
			src += "\n  %g = arith.constant " + c.g + " : index"
			g = "%g"
		}
		if c.b != "%n" {
			src += "\n  %b = arith.constant " + c.b + " : index"
			b = "%b"
		}
		src += strings.NewReplacer("= %g", "= "+g, "= %b", "= "+b).Replace(launchHeader) + `
    %i = arith.addi %sx, %gx : index
    memref.store %i, %m[%tx] : memref<?xindex>
    gpu.terminator
  }
  return
}`
		m := runOutline(t, src)
		k := passtest.Kernels(m)[0]
		for name, want := range map[string]string{"known_grid_size": c.grid, "known_block_size": c.block} {
			got := ""
			if a := k.Attr(name); a != nil {
				got = a.String()
			}
			if got != want {
				t.Errorf("grid %s block %s: %s = %q, want %q", c.g, c.b, name, got, want)
			}
		}
		// Each used size is a constant when static, else a gpu index op.
		for _, s := range []struct{ size, op string }{{c.g, gpu.GridDim}, {c.b, gpu.BlockDim}} {
			n := len(ir.Nested(k, s.op))
			if (s.size == "%n") != (n == 1) {
				t.Errorf("size %s: %d %s ops", s.size, n, s.op)
			}
		}
	}
}

// A rejected launch leaves the whole module as it was, even when an
// earlier launch could be outlined.
func TestOutlineAtomicOnError(t *testing.T) {
	m := passtest.Parse(t, `
func.func @ok(%a: memref<4xf32>) {
  %c1 = arith.constant 1 : index
  %g = arith.constant 1 : index
  %b = arith.constant 1 : index
  %f = arith.constant 0.0 : f32`+launchHeader+`
    memref.store %f, %a[%tx] : memref<4xf32>
    gpu.terminator
  }
  return
}
func.func @bad(%sm: memref<4xf32, 3>) {
  %c1 = arith.constant 1 : index
  %g = arith.constant 1 : index
  %b = arith.constant 1 : index
  %f = arith.constant 0.0 : f32`+launchHeader+`
    memref.store %f, %sm[%tx] : memref<4xf32, 3>
    gpu.terminator
  }
  return
}`)
	before := ir.Print(m, ir.PrintOptions{})
	err := outlineKernels(m)
	if err == nil || !strings.Contains(err.Error(), "workgroup (shared) memory") {
		t.Fatalf("expected a workgroup-memory error, got %v", err)
	}
	if after := ir.Print(m, ir.PrintOptions{}); after != before {
		t.Errorf("module changed by a failed outlining:\n%s", after)
	}
}

func TestUncapturable(t *testing.T) {
	m := passtest.Parse(t, `
!desc = !nvgpu.tensormap.descriptor<tensor = memref<64x64xf16, 3>, swizzle = none, l2promo = none, oob = zero, interleave = none>
func.func private @types(i1, i64, index, bf16, vector<4xf16>, memref<4xf32>, memref<?x?xf32, strided<[?, 1], offset: ?>>,
  memref<4xf32, 1>, memref<4xf32, #gpu.address_space<global>>, !desc,
  memref<4xf32, 3>, memref<4xf32, #gpu.address_space<private>>, memref<*xf32>, !gpu.async.token,
  !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>, complex<f32>, tensor<4xf32>,
  memref<4x4xf32, affine_map<(d0, d1) -> (d1, d0)>>)`)
	fn := ir.Nested(m, funcdialect.Func)[0]
	const nOK = 10
	for i, ty := range funcInputs(fn) {
		why := uncapturable(ty)
		if (why == "") != (i < nOK) {
			t.Errorf("%s: uncapturable = %q", ty, why)
		}
	}
	if uncapturable(gpu.AsyncToken) == "" {
		t.Error("async token accepted")
	}
}

// Block arguments of regions enclosing the launch are captured; those of
// regions inside it are not.
func TestDefinedOutside(t *testing.T) {
	m := passtest.Parse(t, `
func.func @f(%m: memref<4xindex>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %g = arith.constant 1 : index
  %b = arith.constant 1 : index
  scf.for %iv = %c0 to %c1 step %c1 {`+launchHeader+`
      scf.for %j = %c0 to %c1 step %c1 {
        %s = arith.addi %iv, %j : index
        memref.store %s, %m[%j] : memref<4xindex>
      }
      gpu.terminator
    }
  }
  return
}`)
	launch := ir.Nested(m, gpu.Launch)[0]
	add := ir.Nested(m, arith.Addi)[0]
	if !definedOutside(arith.AddiOp{Op: add}.Lhs(), gpu.LaunchOp{Op: launch}.Body()) {
		t.Error("enclosing loop variable taken as defined inside")
	}
	if definedOutside(arith.AddiOp{Op: add}.Rhs(), gpu.LaunchOp{Op: launch}.Body()) {
		t.Error("inner loop variable taken as defined outside")
	}
	if body := (gpu.LaunchOp{Op: launch}).Body(); definedOutside(body.Entry().Arg(0), body) {
		t.Error("launch region argument taken as defined outside")
	}
	if err := outlineKernels(m); err != nil {
		t.Fatal(err)
	}
	call := ir.Nested(m, gpu.LaunchFunc)[0]
	if ops := (gpu.LaunchFuncOp{Op: call}).KernelOperands(); len(ops) != 2 || ops[0].(*ir.BlockArgument).Owner().ParentOp().Name() != scf.For {
		t.Errorf("unexpected kernel operands %v", ops)
	}
}

// Default names avoid symbols already in the module; launches of several
// functions get one module each, numbered per function.
func TestOutlineNames(t *testing.T) {
	body := launchHeader + `
    gpu.terminator
  }`
	m := runOutline(t, `
func.func private @a_kernels()
func.func @a() {
  %c1 = arith.constant 1 : index
  %g = arith.constant 1 : index
  %b = arith.constant 1 : index`+body+body+`
  return
}
func.func @b() {
  %c1 = arith.constant 1 : index
  %g = arith.constant 1 : index
  %b = arith.constant 1 : index`+body+`
  return
}`)
	var got []string
	for _, k := range passtest.Kernels(m) {
		got = append(got, k.ParentOp().SymbolName()+"::"+k.SymbolName())
	}
	want := "a_kernels_1::a_kernel_0 a_kernels_1::a_kernel_1 b_kernels::b_kernel_0"
	if strings.Join(got, " ") != want {
		t.Errorf("kernels %v, want %s", got, want)
	}
	for _, c := range ir.Nested(m, gpu.LaunchFunc) {
		if ref := (gpu.LaunchFuncOp{Op: c}).Kernel(); ir.ResolveSymbolRef(c, ref.(*ir.SymbolRefAttr)) == nil {
			t.Errorf("launch_func refers to missing %s", ref)
		}
	}
}
