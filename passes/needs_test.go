package passes_test

import (
	"strings"
	"testing"

	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/passes"
	_ "github.com/tmac-dev/tmac/passes/all"
	"github.com/tmac-dev/tmac/passes/internal/passtest"
)

// checkErr fails the test unless err is nil where want is empty, or
// contains want.
func checkErr(t *testing.T, what string, err error, want string) {
	t.Helper()
	switch {
	case want == "" && err != nil:
		t.Errorf("%s: %v", what, err)
	case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
		t.Errorf("%s: got %v, want %q", what, err, want)
	}
}

// Two test passes with needs: needs-op (needing op-maker, whose input is
// test.pending ops) and needs-order (needing op-maker, order only).
func init() {
	noop := func(passes.Options) (passes.Pass, error) {
		return passes.PassFunc(func(*ir.Operation, *passes.Context) error { return nil }), nil
	}
	passes.Register(&passes.Info{Name: "op-maker", New: noop,
		Rewrites: func(op *ir.Operation) bool { return op.Name() == "test.pending" }})
	passes.Register(&passes.Info{Name: "needs-op", New: noop,
		Needs: []passes.Need{{Pass: "op-maker", Why: "to rewrite test.pending"}}})
	passes.Register(&passes.Info{Name: "needs-order", New: noop,
		Needs: []passes.Need{{Pass: "op-maker", Why: "which makes its input", OrderOnly: true}}})
}

func TestCheckOrder(t *testing.T) {
	for _, c := range []struct{ pipeline, err string }{
		{"builtin.module(op-maker,needs-op,needs-order)", ""},
		{"builtin.module(needs-op,needs-order)", ""}, // the IR decides (TestNeedsOnIR)
		{"builtin.module(op-maker,needs-op,op-maker)", ""},
		{"builtin.module(needs-op,op-maker)", "needs-op needs op-maker before it, to rewrite test.pending; the pipeline runs op-maker after it"},
		{"builtin.module(needs-order,op-maker)", "needs-order needs op-maker before it, which makes its input; the pipeline runs op-maker after it"},
		{"builtin.module(func.func(needs-op),gpu.module(op-maker))", "needs-op needs op-maker before it"},
		{"builtin.module(gpu.module(op-maker),needs-op)", ""},
		// tmac's own passes.
		{"builtin.module(lower-nvgpu,mbarrier-phase)", "lower-nvgpu needs mbarrier-phase before it, to compute the parity of tmac.mbarrier.wait; the pipeline runs mbarrier-phase after it"},
		{"builtin.module(mbarrier-phase,tma-pipeline)", "mbarrier-phase needs tma-pipeline before it"},
		{"builtin.module(tma-pipeline,warp-specialize)", "tma-pipeline needs warp-specialize before it"},
		{"builtin.module(outline-kernels,smem-plan,tma-pipeline)", "smem-plan needs tma-pipeline before it"},
		{"builtin.module(outline-kernels,lower-nvgpu,smem-plan,canonicalize,cse)", ""},
		{"builtin.module(lower-nvgpu)", ""},
	} {
		_, err := passes.ParsePipeline(c.pipeline)
		checkErr(t, c.pipeline, err, c.err)
	}
}

// A need whose pass has not run applies when the IR holds an op that pass
// rewrites; an order-only need never does.
func TestNeedsOnIR(t *testing.T) {
	const pending = `func.func @f() {
  "test.pending"() : () -> ()
  return
}`
	const done = `func.func @f() {
  return
}`
	for _, c := range []struct{ pipeline, src, err string }{
		{"builtin.module(needs-op)", done, ""},
		{"builtin.module(needs-op)", pending, "test.tma:2:3: error: needs-op needs op-maker before it, to rewrite test.pending"},
		{"builtin.module(op-maker,needs-op)", pending, ""},
		{"builtin.module(func.func(op-maker),needs-op)", pending, ""},
		// A nested pipeline runs only on its anchors: here none.
		{"builtin.module(gpu.module(op-maker),needs-op)", pending, "needs-op needs op-maker before it"},
		{"builtin.module(needs-order)", pending, ""},
	} {
		m, err := ir.Parse("test.tma", c.src, ir.ParseOptions{AllowUnregistered: true})
		if err != nil {
			t.Fatal(err)
		}
		steps, err := passes.ParsePipeline(c.pipeline)
		if err != nil {
			t.Fatal(err)
		}
		checkErr(t, c.pipeline, passes.RunPipeline(m, steps, nil, nil), c.err)
	}
}

// mbarKernel is a kernel whose thread 0 initialises a barrier and
// arrives on it, and whose threads wait on it with the given wait op.
func mbarKernel(wait string) string {
	return `
!bar = !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>, num_barriers = 1>
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @k() kernel attributes {known_block_size = array<i32: 64, 1, 1>} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %ticks = arith.constant 100 : index
      %f = arith.constant false
      %tid = gpu.thread_id x
      %is0 = arith.cmpi eq, %tid, %c0 : index
      %bars = nvgpu.mbarrier.create -> !bar
      nvgpu.mbarrier.init %bars[%c0], %c1, predicate = %is0 : !bar
      nvgpu.mbarrier.arrive.expect_tx %bars[%c0], %c0, predicate = %is0 : !bar
      ` + wait + `
      gpu.return
    }
  }
}`
}

// lower-nvgpu lowers hand-written nvgpu with explicit parities alone, and
// names mbarrier-phase for a parity-less wait.
func TestLowerNVGPUNeedsMBarrierPhase(t *testing.T) {
	for _, c := range []struct{ pipeline, wait, err string }{
		{"builtin.module(lower-nvgpu)", "nvgpu.mbarrier.try_wait.parity %bars[%c0], %f, %ticks : !bar", ""},
		{"builtin.module(lower-nvgpu)", "tmac.mbarrier.wait %bars[%c0] : !bar", "lower-nvgpu needs mbarrier-phase before it, to compute the parity of tmac.mbarrier.wait"},
		{"builtin.module(mbarrier-phase,lower-nvgpu)", "tmac.mbarrier.wait %bars[%c0] : !bar", ""},
	} {
		m := passtest.Parse(t, mbarKernel(c.wait))
		steps, err := passes.ParsePipeline(c.pipeline)
		if err != nil {
			t.Fatal(err)
		}
		checkErr(t, c.pipeline+" on "+c.wait, passes.RunPipeline(m, steps, nil, nil), c.err)
	}
}
