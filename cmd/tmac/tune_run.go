package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tmac-dev/tmac/runtime/buffer"
	"github.com/tmac-dev/tmac/runtime/cuda"
	"github.com/tmac-dev/tmac/runtime/plan"
)

type tuneRunFlags struct {
	reps, warmup int
	timeout      time.Duration
	device       int
	seed         int64
	dist         string
	rtol, atol   float64
	shapes, sets []string
	refSample    int64
	filter       string
}

// tuneResults is DIR/tune-results.json.
type tuneResults struct {
	Format      string        `json:"format"`
	TmacVersion string        `json:"tmac_version"`
	Device      string        `json:"device"`
	Date        string        `json:"date"`
	Reps        int           `json:"reps"`
	Warmup      int           `json:"warmup"`
	Seed        int64         `json:"seed"`
	Best        string        `json:"best,omitempty"`
	Results     []*tuneResult `json:"results"`
}

// tuneResult is one variant's outcome: the passing ones first, fastest
// first, then the others in tune.json's order.
type tuneResult struct {
	Name        string `json:"name"`
	Source      string `json:"source"`
	Schedule    string `json:"schedule"`
	Stages      int64  `json:"stages"`
	StoreStages int64  `json:"store_stages,omitempty"`
	Bundle      string `json:"bundle,omitempty"`
	Status      string `json:"status"`          // pass, fail, error, hang, not-run, skipped (did not compile), filtered
	Check       string `json:"check,omitempty"` // the reference check's verdict
	Reason      string `json:"reason,omitempty"`
	// The kernels' time: queued behind a GPU spin (launch latency hidden)
	// when measured, else one launch at a time (SyncMedianS).
	KernelMedianS float64 `json:"kernel_median_s,omitempty"`
	SyncMedianS   float64 `json:"kernel_sync_median_s,omitempty"`
	KernelMinS    float64 `json:"kernel_min_s,omitempty"`
	RunMedianS    float64 `json:"run_median_s,omitempty"`
	Flops         float64 `json:"flops,omitempty"`
	Bytes         float64 `json:"bytes,omitempty"`
	TFLOPS        float64 `json:"tflops,omitempty"`
	TBPerS        float64 `json:"tb_per_s,omitempty"`
	Log           string  `json:"log,omitempty"`
}

const (
	resPass     = "pass"
	resFail     = "fail"
	resError    = "error"
	resHang     = "hang"
	resNotRun   = "not-run"
	resSkipped  = "skipped"
	resFiltered = "filtered"
)

func newTuneRunCmd() *cobra.Command {
	f := &tuneRunFlags{}
	cmd := &cobra.Command{
		Use:   "run DIR",
		Short: "Run and time every variant of a tune build on the GPU and rank them",
		Long: `run reads DIR/tune.json (from tmac tune build) and runs every compiled
variant in this process the way tmac run --bench does: random inputs from
--seed (the same for every variant), the check against @reference (run
on the CPU once per distinct @reference and argument types, and reused,
since the inputs are then the same),
then CUDA-event timings of the kernels (--warmup runs, then --reps timed
ones, median). A variant whose check fails, whose launch fails or which
hangs (no result within --timeout) is reported and left out of the
ranking; after a hang the GPU is still busy with it, so the variants
after it are not run (rerun with --filter to skip it).

It prints a table of the passing variants sorted by median kernel time
with TFLOP/s (from the wgmma count, or the entry's tmac.flops) or TB/s
(the entry's memref bytes, or tmac.bytes) and marks the best, then the
variants that failed or were skipped; it writes DIR/tune-results.json
and each variant's tmac run output to DIR/logs/NAME.log.

Exit status: 0 when at least one variant passed, 1 otherwise, 2 usage
error, 3 no GPU.`,
		Example: `  tmac tune run build/tune/gemm
  tmac tune run build/tune/gemm --reps 30 --warmup 5 --filter 'ws'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runTuneRun(cmd, f, args[0])
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&f.reps, "reps", 50, "timed runs per variant")
	fl.IntVar(&f.warmup, "warmup", 5, "warm-up runs per variant")
	fl.DurationVar(&f.timeout, "timeout", 10*time.Second, "watchdog: a launch not finished by then is reported as a hang")
	fl.IntVar(&f.device, "device", 0, "CUDA device ordinal")
	fl.Int64Var(&f.seed, "seed", 0, "random seed of the inputs")
	fl.StringVar(&f.dist, "dist", "normal", "input distribution: normal, uniform or int")
	fl.Float64Var(&f.rtol, "rtol", -1, "relative tolerance (default: as tmac run)")
	fl.Float64Var(&f.atol, "atol", -1, "absolute tolerance (default: as tmac run)")
	fl.StringArrayVar(&f.shapes, "shape", nil, "shape of a dynamically shaped memref argument, argN=AxB (repeatable)")
	fl.StringArrayVar(&f.sets, "set", nil, "value of a scalar argument, argN=VALUE (repeatable)")
	fl.Int64Var(&f.refSample, "ref-sample", 0, "as tmac run --ref-sample (default: the entry's tmac.ref_sample)")
	fl.StringVar(&f.filter, "filter", "", "run only the variants whose name matches this regular expression")
	return cmd
}

func runTuneRun(cmd *cobra.Command, f *tuneRunFlags, dir string) error {
	stderr, stdout := cmd.ErrOrStderr(), cmd.OutOrStdout()
	usage := func(format string, args ...any) error {
		fmt.Fprintf(stderr, "tmac tune run: error: "+format+"\n", args...)
		return &exitError{2}
	}
	if f.reps < 1 || f.warmup < 0 {
		return usage("--reps must be at least 1 and --warmup at least 0")
	}
	if f.timeout < 0 {
		return usage("--timeout must not be negative")
	}
	switch buffer.Dist(f.dist) {
	case buffer.Normal, buffer.Uniform, buffer.Ints:
	default:
		return usage("--dist must be normal, uniform or int, not '%s'", f.dist)
	}
	var filter *regexp.Regexp
	if f.filter != "" {
		var err error
		if filter, err = regexp.Compile(f.filter); err != nil {
			return usage("--filter: %v", err)
		}
	}
	m, err := readTuneManifest(dir)
	if err != nil {
		if os.IsNotExist(err) {
			return usage("%s has no %s; make it with tmac tune build FILE.tma -o %s", dir, tuneManifestName, dir)
		}
		return usage("%v", err)
	}
	results := make([]*tuneResult, len(m.Variants))
	var torun []int
	for i, v := range m.Variants {
		r := &tuneResult{Name: v.Name, Source: v.Source, Schedule: v.Schedule, Stages: v.Stages, StoreStages: v.StoreStages, Bundle: v.Bundle}
		results[i] = r
		switch {
		case v.Status != statusCompiled:
			r.Status, r.Reason = resSkipped, "did not compile: "+v.Reason
		case filter != nil && !filter.MatchString(v.Name):
			r.Status, r.Reason = resFiltered, "not selected by --filter"
		default:
			torun = append(torun, i)
		}
	}
	if len(torun) == 0 {
		fmt.Fprintf(stderr, "tmac tune run: error: no compiled variant to run in %s\n", dir)
		return &exitError{1}
	}

	// Everything above runs without a GPU.
	devName, err := tuneGPU(f.device)
	if err != nil {
		fmt.Fprintf(stderr, "tmac tune run: error: no usable GPU: %s\n", firstLine(err.Error()))
		return &exitError{3}
	}
	out := &tuneResults{Format: tuneResultFormat, TmacVersion: Version, Device: devName, Date: time.Now().UTC().Format(time.RFC3339),
		Reps: f.reps, Warmup: f.warmup, Seed: f.seed}
	fmt.Fprintf(stdout, "device %d: %s; %d variants, %d warm-up + %d timed runs each\n", f.device, devName, len(torun), f.warmup, f.reps)
	logs := filepath.Join(dir, "logs")
	if err := os.MkdirAll(logs, 0o755); err != nil {
		fmt.Fprintln(stderr, "tmac tune run: error:", err)
		return &exitError{1}
	}
	refCache := map[string]*refResult{}
	hung := ""
	for n, i := range torun {
		v, r := m.Variants[i], results[i]
		if hung != "" {
			r.Status, r.Reason = resNotRun, "not run: "+hung+" hung the GPU before it"
			continue
		}
		var log bytes.Buffer
		o := tuneRunOne(cmd, f, filepath.Join(dir, v.Bundle), v.Source, refCache, &log)
		r.Log = filepath.Join("logs", v.Name+".log")
		if err := os.WriteFile(filepath.Join(dir, r.Log), log.Bytes(), 0o644); err != nil {
			fmt.Fprintln(stderr, "tmac tune run: error:", err)
		}
		classify(r, o, log.String())
		if r.Status == resHang {
			hung = v.Name
		}
		fmt.Fprintf(stdout, "[%d/%d] %s: %s\n", n+1, len(torun), v.Name, r.summary())
	}
	ranked := rankResults(results)
	out.Results = ranked
	if len(ranked) > 0 && ranked[0].Status == resPass {
		out.Best = ranked[0].Name
	}
	fmt.Fprintln(stdout)
	printTuneTable(stdout, ranked)
	if err := writeJSON(filepath.Join(dir, tuneResultsName), out); err != nil {
		fmt.Fprintln(stderr, "tmac tune run: error:", err)
		return &exitError{1}
	}
	fmt.Fprintf(stdout, "results in %s, logs in %s\n", filepath.Join(dir, tuneResultsName), logs)
	if out.Best == "" {
		return &exitError{1}
	}
	return nil
}

// The GPU and the per-variant run, replaced by fakes in tests.
var (
	tuneGPU = func(device int) (string, error) {
		dev, err := cuda.Init(device)
		if err != nil {
			return "", err
		}
		return dev.Name(), nil
	}
	tuneRunOne = tuneOne
)

// tuneRunOutcome is what tuneOne found.
type tuneRunOutcome struct {
	run  *runOutcome
	code int // runRun's exit status
	err  error
}

// tuneOne runs one bundle through tmac run's code path with --bench, its
// output going to log.
func tuneOne(parent *cobra.Command, tf *tuneRunFlags, bundlePath, source string, cache map[string]*refResult, log io.Writer) tuneRunOutcome {
	f := &runFlags{
		seed: tf.seed, dist: tf.dist, rtol: tf.rtol, atol: tf.atol, shapes: tf.shapes, sets: tf.sets,
		bench: true, warmup: tf.warmup, reps: tf.reps, timeout: tf.timeout, device: tf.device,
		pipeline: defaultPipeline, outcome: &runOutcome{}, refCache: cache,
	}
	f.llc.MCPU, f.llc.OptLevel = "sm_90a", 3
	// A command of its own so that runRun sees which flags were given
	// (--ref-sample) and writes to the log.
	rc := &cobra.Command{Use: "run"}
	rc.SetOut(log)
	rc.SetErr(log)
	rc.Flags().Int64Var(&f.refSample, "ref-sample", 0, "")
	if parent.Flags().Changed("ref-sample") {
		_ = rc.Flags().Set("ref-sample", strconv.FormatInt(tf.refSample, 10))
	}
	err := runRun(rc, f, bundlePath)
	o := tuneRunOutcome{run: f.outcome, err: err}
	var ee *exitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		o.code = ee.code
	default:
		o.code = 1
		fmt.Fprintln(log, "tmac run: error:", err)
	}
	return o
}

// classify turns a run's outcome into the result's status.
func classify(r *tuneResult, o tuneRunOutcome, log string) {
	r.Check = o.run.Verdict
	if b := o.run.Bench; b != nil {
		r.KernelMedianS, r.KernelMinS, r.RunMedianS, r.SyncMedianS = b.KernelMedianS, b.KernelMinS, b.RunMedianS, b.KernelMedianS
		if b.QueuedMedianS > 0 {
			r.KernelMedianS, r.KernelMinS = b.QueuedMedianS, b.QueuedMinS
		}
		r.Flops, r.Bytes = b.Flops, b.Bytes
		if r.KernelMedianS > 0 {
			if b.Flops > 0 {
				r.TFLOPS = b.Flops / r.KernelMedianS / 1e12
			} else if b.Bytes > 0 {
				r.TBPerS = b.Bytes / r.KernelMedianS / 1e12
			}
		}
	}
	var dl *plan.DeadlockError
	switch {
	case errors.As(o.run.LaunchErr, &dl):
		r.Status, r.Reason = resHang, dl.Error()
	case o.code == 0 && r.Check != "FAIL" && o.run.Bench != nil:
		r.Status = resPass
	case r.Check == "FAIL":
		r.Status, r.Reason = resFail, "the reference check failed"
	default:
		r.Status, r.Reason = resError, lastErrorLine(log)
		if o.code == 3 {
			r.Reason = "no usable GPU: " + r.Reason
		}
	}
	if r.Status != resPass {
		r.KernelMedianS, r.KernelMinS, r.RunMedianS, r.SyncMedianS, r.TFLOPS, r.TBPerS = 0, 0, 0, 0, 0, 0
	}
}

// lastErrorLine is the first line of the log that reports an error, else
// its last line.
func lastErrorLine(log string) string {
	lines := strings.Split(strings.TrimRight(log, "\n"), "\n")
	for _, l := range lines {
		if strings.Contains(l, "error:") {
			return strings.TrimSpace(l)
		}
	}
	return strings.TrimSpace(lines[len(lines)-1])
}

func (r *tuneResult) summary() string {
	if r.Status != resPass {
		return strings.ToUpper(r.Status) + ": " + r.Reason
	}
	s := fmt.Sprintf("PASS (check %s), kernel median %s", r.Check, fmtSeconds(r.KernelMedianS))
	if t := r.throughput(); t != "" {
		s += ", " + t
	}
	return s
}

func (r *tuneResult) throughput() string {
	switch {
	case r.TFLOPS > 0:
		return fmt.Sprintf("%.1f TFLOP/s", r.TFLOPS)
	case r.TBPerS > 0:
		return fmt.Sprintf("%.3f TB/s", r.TBPerS)
	}
	return ""
}

func fmtSeconds(s float64) string {
	switch {
	case s >= 1e-3:
		return fmt.Sprintf("%.3f ms", s*1e3)
	default:
		return fmt.Sprintf("%.1f us", s*1e6)
	}
}

// rankResults puts the passing variants first, by median kernel time
// (then minimum, then name), then the others in their original order.
func rankResults(rs []*tuneResult) []*tuneResult {
	var pass, rest []*tuneResult
	for _, r := range rs {
		if r.Status == resPass {
			pass = append(pass, r)
		} else {
			rest = append(rest, r)
		}
	}
	sort.SliceStable(pass, func(i, j int) bool {
		a, b := pass[i], pass[j]
		if a.KernelMedianS != b.KernelMedianS {
			return a.KernelMedianS < b.KernelMedianS
		}
		if a.KernelMinS != b.KernelMinS {
			return a.KernelMinS < b.KernelMinS
		}
		return a.Name < b.Name
	})
	return append(pass, rest...)
}

// printTuneTable prints the ranking as a Markdown table, best first and
// marked, then the variants left out.
func printTuneTable(w io.Writer, ranked []*tuneResult) {
	fmt.Fprintln(w, "| | variant | schedule | stages | store stages | check | kernel median | kernel min | throughput | vs best |")
	fmt.Fprintln(w, "|---|---|---|---:|---:|---|---:|---:|---:|---:|")
	var best float64
	var left []*tuneResult
	for i, r := range ranked {
		if r.Status != resPass {
			left = append(left, r)
			continue
		}
		mark := ""
		if i == 0 {
			best, mark = r.KernelMedianS, "best"
		}
		ss := "-"
		if r.StoreStages > 0 {
			ss = strconv.FormatInt(r.StoreStages, 10)
		}
		tp := r.throughput()
		if tp == "" {
			tp = "-"
		}
		vs := "-"
		if best > 0 && !math.IsNaN(r.KernelMedianS) {
			vs = fmt.Sprintf("%.2fx", r.KernelMedianS/best)
		}
		fmt.Fprintf(w, "| %s | %s | %s | %d | %s | %s | %s | %s | %s | %s |\n", mark, r.Name, r.Schedule, r.Stages, ss, r.Check,
			fmtSeconds(r.KernelMedianS), fmtSeconds(r.KernelMinS), tp, vs)
	}
	if best == 0 {
		fmt.Fprintln(w, "(no variant passed)")
	} else {
		fmt.Fprintf(w, "best: %s\n", ranked[0].Name)
	}
	if len(left) > 0 {
		fmt.Fprintln(w, "left out:")
		for _, r := range left {
			fmt.Fprintf(w, "  %-8s %s: %s\n", strings.ToUpper(r.Status), r.Name, r.Reason)
		}
	}
}
