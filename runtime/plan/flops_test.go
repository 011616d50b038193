package plan_test

import (
	"os"
	"testing"

	_ "github.com/tmac-dev/tmac/dialects/all"
	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/passes"
	"github.com/tmac-dev/tmac/runtime/plan"
)

// The GEMM examples' wgmma instructions, loop trip counts and launch sizes
// must add up to 2·M·N·K.
func TestCountFlopsOfTheGEMMExamples(t *testing.T) {
	countFlops(t, "seed004_gemm_multistage.tma", 2.0*512*256*1024)
	countFlops(t, "seed002_fp8_gemm.tma", 2.0*512*512*1024)
	// Simple-form GEMMs: pipelined (4096³), and warp-specialised, where the
	// producer warpgroup of the 384-thread block runs no wgmma.
	countFlops(t, "gemm_pipelined.tma", 2.0*4096*4096*4096)
	countFlops(t, "gemm_ws.tma", 2.0*4096*4096*4096)
	// Attention: Q Kᵀ (nvvm.wgmma.mma_async) and P V with P in registers
	// (tmac.wgmma.mma_async), 2·S·S·D each per head: B·H = 2, S = 512, D = 64.
	countFlops(t, "attention_fwd.tma", 4.0*2*512*512*64)
}

func countFlops(t *testing.T, example string, want float64) {
	t.Helper()
	src, err := os.ReadFile("../../examples/" + example)
	if err != nil {
		t.Skip("example not found")
	}
	mod, err := ir.Parse("gemm.tma", string(src), ir.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	steps, err := passes.ParsePipeline("builtin.module(outline-kernels,warp-specialize,tma-pipeline,mbarrier-phase,lower-nvgpu,canonicalize,cse)")
	if err != nil {
		t.Fatal(err)
	}
	if err := passes.RunPipeline(mod, steps, &passes.Context{}, nil); err != nil {
		t.Fatal(err)
	}
	entry, err := plan.SelectEntry(mod, "")
	if err != nil {
		t.Fatal(err)
	}
	got, ok := plan.CountFlops(mod, entry)
	if !ok || got != want {
		t.Errorf("%s: CountFlops = %v, %v; want %v", example, got, ok, want)
	}
}
