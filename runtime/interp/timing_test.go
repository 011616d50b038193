package interp

import (
	"math/rand"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tmac-dev/tmac/internal/testutil"
	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/runtime/buffer"
)

// TestGemmF16ReferenceTiming reports the interpreter's speed on the f16
// GEMM reference of examples/seed004_gemm_multistage.tma (512x256x1024),
// serially and with the parallel outer loop, and on a sampled 4096^3 one
// (8 rows), in multiply-adds per second. Long: it runs only with
// TMAC_INTERP_TIMING set (TMAC_INTERP_TIMING=1 go test -run
// GemmF16ReferenceTiming -v ./runtime/interp).
func TestGemmF16ReferenceTiming(t *testing.T) {
	if testing.Short() || os.Getenv("TMAC_INTERP_TIMING") == "" {
		t.Skip("long: set TMAC_INTERP_TIMING=1 to run")
	}
	src, err := os.ReadFile("../../examples/seed004_gemm_multistage.tma")
	if err != nil {
		t.Fatal(err)
	}
	ref := string(src)
	ref = ref[strings.Index(ref, "func.func @reference"):]
	r := rand.New(rand.NewSource(1))
	run := func(ref string, m, n, k int64, workers int, sample int64) {
		a, _ := buffer.New(ir.F16T, []int64{m, k})
		b, _ := buffer.New(ir.F16T, []int64{k, n})
		d, _ := buffer.New(ir.F32T, []int64{m, n})
		a.FillRandom(r, buffer.Normal)
		b.FillRandom(r, buffer.Normal)
		p := Compile(testutil.Parse(t, ref))
		p.Workers = workers
		start := time.Now()
		if _, _, err := p.CallWith("reference", []Arg{a, b, d}, CallOptions{SampleOuter: sample}); err != nil {
			t.Fatal(err)
		}
		el := time.Since(start)
		rows := m
		if sample > 0 {
			rows = sample
		}
		macs := float64(rows * n * k)
		t.Logf("%dx%dx%d, %d of %d rows, workers %d: %v, %.1f M MAC/s", m, n, k, rows, m, p.Workers, el, macs/el.Seconds()/1e6)
	}
	run(ref, 512, 256, 1024, 1, 0)
	run(ref, 512, 256, 1024, 0, 0)
	// The same reference at 4096^3 (constants renamed back where they name SSA values).
	big := ref
	for _, o := range []string{"512", "256", "1024"} {
		big = strings.ReplaceAll(big, o, "4096")
		big = strings.ReplaceAll(big, "%r4096", "%r"+o)
	}
	run(big, 4096, 4096, 4096, 1, 2)
	run(big, 4096, 4096, 4096, 0, 8)
}
