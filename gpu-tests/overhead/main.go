// Command overhead measures what tmac's host path adds to a kernel launch
// (tmac run --bench times kernels and whole runs, not the host's cost per
// launch against a bare driver call, so this stays a program of its own):
// the host time per launch of an empty kernel through the runtime's host
// plan (the bundle's declarative plan, as tmac run executes it, and the IR
// executor: evaluating the launch in a host loop, laying out parameters,
// cuLaunchKernel) against bare cuLaunchKernel calls with prepared
// parameters. Launches are enqueued in batches of 500 (below the driver's
// queue depth, so the host is not throttled by the GPU) and only the
// enqueueing is timed; the median over batches is reported.
//
//	overhead -bundle build/gpu/bundles/overhead.tmab
package main

import (
	"flag"
	"fmt"
	"os"
	"sort"
	"time"
	"unsafe"

	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/runner"
	"github.com/tmac-dev/tmac/runtime/buffer"
	"github.com/tmac-dev/tmac/runtime/cuda"
	"github.com/tmac-dev/tmac/runtime/plan"
)

const batch = 500

func main() {
	path := flag.String("bundle", "build/gpu/bundles/overhead.tmab", "bundle of gpu-tests/overhead.tma")
	batches := flag.Int("batches", 41, "timed batches of 500 launches")
	flag.Parse()
	if err := run(*path, *batches); err != nil {
		fmt.Fprintln(os.Stderr, "overhead:", err)
		os.Exit(1)
	}
}

func median(xs []float64) float64 {
	sort.Float64s(xs)
	return xs[len(xs)/2]
}

// perLaunch times enqueue, which enqueues one batch of launches, and
// returns the host time per launch of each of the batches after three
// warm-up ones (the GPU drains each batch before the next).
func perLaunch(batches int, enqueue func() error) ([]float64, error) {
	var ts []float64
	for i := 0; i < batches+3; i++ {
		t0 := time.Now()
		if err := enqueue(); err != nil {
			return nil, err
		}
		dt := time.Since(t0).Seconds() / batch
		if err := cuda.Synchronize(); err != nil {
			return nil, err
		}
		if i >= 3 {
			ts = append(ts, dt)
		}
	}
	return ts, nil
}

func run(path string, batches int) error {
	prog, err := runner.ReadBundle(path)
	if err != nil {
		return err
	}
	if _, err := cuda.Init(0); err != nil {
		return err
	}
	entry, err := plan.SelectEntry(prog.Module, "main")
	if err != nil {
		return err
	}
	p, err := plan.Build(prog.Module, entry)
	if err != nil {
		return err
	}
	gpu, err := plan.NewCUDA(prog.PTX)
	if err != nil {
		return err
	}
	x, _ := buffer.New(ir.F32T, []int64{1})
	m, err := plan.Upload(gpu, x)
	if err != nil {
		return err
	}
	// tmac's host path: the whole entry (500 launches in a loop), through
	// the bundle's declarative plan (what tmac run executes) and through
	// the IR executor (the fallback for host code without a plan).
	e, ok := prog.FromBundle.Entry("main")
	if !ok {
		return fmt.Errorf("%s has no host plan for @main (bundle format %d); rebuild it", path, prog.FromBundle.Manifest.Format)
	}
	tmac, err := perLaunch(batches, func() error { return plan.RunDecl(gpu, e, []plan.Value{m}, nil) })
	if err != nil {
		return err
	}
	irPath, err := perLaunch(batches, func() error { return p.Run(gpu, []plan.Value{m}, nil) })
	if err != nil {
		return err
	}
	// Bare cuLaunchKernel with the parameter prepared once.
	f, err := gpu.Function("noop")
	if err != nil {
		return err
	}
	ptr := uint64(m.Dev)
	params := []unsafe.Pointer{unsafe.Pointer(&ptr)}
	bare, err := perLaunch(batches, func() error {
		for j := 0; j < batch; j++ {
			if err := cuda.Launch(f, cuda.Dim3{X: 1, Y: 1, Z: 1}, cuda.Dim3{X: 32, Y: 1, Z: 1}, 0, params); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	mt, mb := median(tmac), median(bare)
	fmt.Printf("host time per launch of an empty kernel (median of %d batches of %d):\n", batches, batch)
	fmt.Printf("  bare cuLaunchKernel           %6.2f us\n", mb*1e6)
	fmt.Printf("  tmac host plan (declarative)  %6.2f us\n", mt*1e6)
	fmt.Printf("  tmac IR executor (fallback)   %6.2f us\n", median(irPath)*1e6)
	fmt.Printf("  overhead added by tmac        %6.2f us (target < 5 us)\n", (mt-mb)*1e6)
	if mt-mb >= 5e-6 {
		return fmt.Errorf("overhead %.2f us is over 5 us", (mt-mb)*1e6)
	}
	return nil
}
