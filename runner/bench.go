package runner

import (
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/runtime/cuda"
	"github.com/tmac-dev/tmac/runtime/plan"
)

// Measured H200 peaks the --bench report compares against.
const (
	peakBytesPerS = 4.3e12 // device-to-device copy
	peakFlopsPerS = 790e12 // bf16 dense wgmma
	l2Bytes       = 50 << 20
)

// The queued timing pass's GPU spin: at most maxSpin, and queuedTries
// tries, each with four times the spin of the last, for the host to queue
// every run before the spin ends.
const (
	maxSpin     = time.Second
	queuedTries = 4
)

// bench times the entry function.
func bench(w io.Writer, runHost hostRun, gpu *plan.CUDA, entry *ir.Operation, args []*runArg, devArgs []plan.Value, opts *Options) (*BenchResult, error) {
	total := 0
	for _, a := range args {
		if a.buf != nil {
			total += len(a.buf.Bytes)
		}
	}
	// Rotate copies of the arguments when they fit in L2.
	sets := [][]plan.Value{devArgs}
	if total > 0 && total < l2Bytes {
		copies := min((2*l2Bytes)/total+1, 8)
		for c := 1; c < copies; c++ {
			vs, _, err := uploadArgs(gpu, args)
			if err != nil {
				return nil, err
			}
			sets = append(sets, vs)
		}
	}
	var last string
	launches := 0
	wait := func(l *plan.Launch) error { last = l.Kernel; launches++; return nil }
	run := func(i int) error {
		if err := runHost(gpu, sets[i%len(sets)], wait); err != nil {
			return err
		}
		return gpu.Wait(last)
	}
	for i := 0; i < opts.Warmup; i++ {
		if err := run(i); err != nil {
			return nil, err
		}
	}
	times := make([]float64, opts.Reps)
	kernelTimes := make([]float64, opts.Reps)
	start, err := cuda.NewEvent()
	if err != nil {
		return nil, err
	}
	end, err := cuda.NewEvent()
	if err != nil {
		return nil, err
	}
	var host time.Duration // the host's time to queue one run
	for i := range times {
		if err := start.Record(); err != nil {
			return nil, err
		}
		t0 := time.Now()
		if err := runHost(gpu, sets[i%len(sets)], wait); err != nil {
			return nil, err
		}
		host += time.Since(t0)
		if err := end.Record(); err != nil {
			return nil, err
		}
		if err := gpu.Wait(last); err != nil {
			return nil, err
		}
		ms, err := cuda.ElapsedMs(start, end)
		if err != nil {
			return nil, err
		}
		times[i] = float64(ms) * 1e-3
	}
	// A second pass times the kernels alone: each launch between its own
	// events, summed per run, so host work between launches is excluded.
	gpu.TimeKernels = true
	for i := range kernelTimes {
		gpu.KernelSeconds = 0
		if err := runHost(gpu, sets[i%len(sets)], wait); err != nil {
			return nil, err
		}
		if err := gpu.Wait(last); err != nil {
			return nil, err
		}
		kernelTimes[i] = gpu.KernelSeconds
	}
	gpu.TimeKernels = false
	// A third pass queues every run behind a GPU-side spin long enough for
	// the host to queue them all, so the events around each launch time the
	// kernel and not the host's launch latency: the way the peers (torch,
	// Triton) are timed, and what matters for kernels of a few microseconds.
	// The pass counts only if the spin was still running when the last run
	// was queued (an event recorded after the spin had not completed):
	// else the GPU waited for the host between some launches, whose times
	// then include the host's latency, and the pass is repeated with a
	// longer spin. The events are created beforehand: creating them while
	// queuing slows the host down.
	perRun := max(launches/(opts.Warmup+2*opts.Reps), 1)
	if err := gpu.ReserveEvents(2 * perRun * opts.Reps); err != nil {
		return nil, err
	}
	spinEnd, err := cuda.NewEvent()
	if err != nil {
		return nil, err
	}
	defer spinEnd.Destroy()
	spin := min(2*host+time.Millisecond, maxSpin)
	spinStart, err := cuda.NewEvent()
	if err != nil {
		return nil, err
	}
	defer spinStart.Destroy()
	exposed, tries := false, 0
	var queuing time.Duration // the host's time to queue the last try's runs
	for try := 1; ; try++ {
		tries = try
		if err := spinStart.Record(); err != nil {
			return nil, err
		}
		if err := cuda.Spin(uint64(spin.Nanoseconds())); err != nil {
			return nil, err
		}
		t0 := time.Now()
		if err := spinEnd.Record(); err != nil {
			return nil, err
		}
		gpu.QueueKernels = true
		for i := range opts.Reps {
			gpu.QueuedRun(i)
			if err := runHost(gpu, sets[i%len(sets)], wait); err != nil {
				gpu.QueueKernels = false
				return nil, err
			}
		}
		gpu.QueueKernels = false
		spinOver, err := spinEnd.Done()
		queuing = time.Since(t0)
		if err != nil {
			return nil, err
		}
		if err := gpu.Wait(last); err != nil {
			return nil, err
		}
		if err := gpu.FreeDeferred(); err != nil {
			return nil, err
		}
		if exposed = spinOver; !exposed || try == queuedTries || spin >= maxSpin {
			break
		}
		spin = min(4*spin, maxSpin)
	}
	if exposed {
		fmt.Fprintf(w, "bench: warning: the host did not queue the %d runs within a GPU spin of %v; the queued times include launch latency\n", opts.Reps, spin)
	}
	queued, err := gpu.Queued(opts.Reps)
	if err != nil {
		return nil, err
	}
	sort.Float64s(times)
	sort.Float64s(kernelTimes)
	sort.Float64s(queued)
	fmt.Fprintf(w, "bench: %d runs (%d warm-up, %d argument copies rotated): whole entry function median %.3f us, min %.3f us\n",
		opts.Reps, opts.Warmup, len(sets), times[len(times)/2]*1e6, times[0]*1e6)
	med, best := kernelTimes[len(kernelTimes)/2], kernelTimes[0]
	fmt.Fprintf(w, "bench: kernels alone: median %.3f us, min %.3f us\n", med*1e6, best*1e6)
	qmed, qbest := queued[len(queued)/2], queued[0]
	fmt.Fprintf(w, "bench: kernels queued (launch latency hidden): median %.3f us, min %.3f us\n", qmed*1e6, qbest*1e6)
	spinMs, err := cuda.ElapsedMs(spinStart, spinEnd)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(w, "bench: queued behind a GPU spin of %v (measured %.3f ms; tries: %d), the host queuing them in %v\n",
		spin.Round(time.Microsecond), spinMs, tries, queuing.Round(time.Microsecond))
	bytes := float64(total)
	if a, ok := entry.Attr(plan.BytesAttr).(*ir.IntegerAttr); ok {
		bytes = float64(a.Int())
	}
	if bytes > 0 {
		bw := bytes / med
		fmt.Fprintf(w, "bench: %.3f TB/s (%.0f%% of the H200's %.1f TB/s), %.0f bytes; queued: %.3f TB/s\n", bw/1e12, 100*bw/peakBytesPerS, peakBytesPerS/1e12, bytes, bytes/qmed/1e12)
	}
	fl := plan.Flops(entry)
	if fl == 0 {
		if c, ok := plan.CountFlops(entry.ParentOp(), entry); ok {
			fl = c
		}
	}
	if fl > 0 {
		fs := fl / med
		fmt.Fprintf(w, "bench: %.1f TFLOP/s (%.0f%% of the H200's %.0f TFLOP/s bf16 dense), %.4g FLOP; queued: %.1f TFLOP/s\n", fs/1e12, 100*fs/peakFlopsPerS, peakFlopsPerS/1e12, fl, fl/qmed/1e12)
	}
	return &BenchResult{Reps: opts.Reps, Warmup: opts.Warmup, RotatedCopies: len(sets),
		RunMedianS: times[len(times)/2], RunMinS: times[0], KernelMedianS: med, KernelMinS: best,
		QueuedMedianS: qmed, QueuedMinS: qbest, QueuedExposed: exposed,
		Flops: fl, Bytes: bytes}, nil
}
