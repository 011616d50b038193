// Package bench holds compile-speed benchmarks (make bench-compile runs
// them through scripts/bench-compile.sh; results are in docs/perf.md).
package bench

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/tmac-dev/tmac/codegen"
	_ "github.com/tmac-dev/tmac/dialects/all"
	"github.com/tmac-dev/tmac/driver"
	"github.com/tmac-dev/tmac/passes"
)

func example(tb testing.TB, name string) string {
	tb.Helper()
	_, self, _, _ := runtime.Caller(0)
	data, err := os.ReadFile(filepath.Join(filepath.Dir(self), "..", "examples", name))
	if err != nil {
		tb.Fatal(err)
	}
	return string(data)
}

// frontEnd is what `tmac compile --emit=llvm` does in-process: parse,
// verify, run the default pipeline (verifying after each pass), lower to
// LLVM IR and print it.
func frontEnd(tb testing.TB, file, text string) string {
	mod, err := driver.ParseChunk(driver.Chunk{File: file, Text: text, FirstLine: 1}, false)
	if err != nil {
		tb.Fatal(err)
	}
	steps, err := passes.ParsePipeline(driver.DefaultPipeline)
	if err != nil {
		tb.Fatal(err)
	}
	if err := passes.RunPipeline(mod, steps, &passes.Context{}, nil); err != nil {
		tb.Fatal(err)
	}
	out, err := codegen.Emit(mod)
	if err != nil {
		tb.Fatal(err)
	}
	return out.Module.String()
}

// TestCompileExamples keeps the benchmark inputs compiling (to LLVM IR;
// the lit tests take them through llc).
func TestCompileExamples(t *testing.T) {
	for _, name := range []string{"gemm_smem.tma", "saxpy.tma", "scalar_add.tma", "transpose_smem.tma"} {
		ll := frontEnd(t, name, example(t, name))
		if !strings.Contains(ll, "define ptx_kernel void @") {
			t.Errorf("%s: no kernel in the LLVM IR", name)
		}
	}
}

// BenchmarkCompileGEMM measures the front end on the 128x128x64 GEMM
// kernel (examples/gemm_smem.tma): parse -> verify -> passes -> LLVM IR text.
func BenchmarkCompileGEMM(b *testing.B) {
	text := example(b, "gemm_smem.tma")
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		frontEnd(b, "gemm_smem.tma", text)
	}
}
