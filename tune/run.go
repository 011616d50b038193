package tune

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

	"github.com/tmac-dev/tmac/runner"
	"github.com/tmac-dev/tmac/runtime/buffer"
	"github.com/tmac-dev/tmac/runtime/cuda"
	"github.com/tmac-dev/tmac/runtime/plan"
)

// Results is DIR/tune-results.json.
type Results struct {
	Format      string    `json:"format"`
	TmacVersion string    `json:"tmac_version"`
	Device      string    `json:"device"`
	Date        string    `json:"date"`
	Reps        int       `json:"reps"`
	Warmup      int       `json:"warmup"`
	Seed        int64     `json:"seed"`
	Best        string    `json:"best,omitempty"`
	Results     []*Result `json:"results"`
}

// Result is one variant's outcome: the passing ones first, fastest
// first, then the others in tune.json's order.
type Result struct {
	Name        string `json:"name"`
	Source      string `json:"source"`
	Schedule    string `json:"schedule"`
	Stages      int64  `json:"stages"`
	StoreStages int64  `json:"store_stages,omitempty"`
	// Params are the generator's parameters of the variant's source.
	Params map[string]string `json:"params,omitempty"`
	Bundle string            `json:"bundle,omitempty"`
	Status string            `json:"status"`          // pass, fail, error, hang, not-run, skipped (did not compile), filtered
	Check  string            `json:"check,omitempty"` // the reference check's verdict
	Reason string            `json:"reason,omitempty"`
	// The kernels' time: queued behind a GPU spin (launch latency hidden)
	// when measured, else one launch at a time (SyncMedianS).
	KernelMedianS float64 `json:"kernel_median_s,omitempty"`
	// QueuedExposed: the host could not queue the timed runs ahead of the
	// GPU, so the queued times include launch latency and rank this
	// variant lower than it is.
	QueuedExposed bool    `json:"queued_exposed,omitempty"`
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

// Hung reports whether a variant hung the GPU (the variants after it were
// not run, and the GPU may still be busy).
func (r *Results) Hung() bool {
	for _, x := range r.Results {
		if x.Status == resHang {
			return true
		}
	}
	return false
}

// RunOptions says how Run runs the variants; the fields are tmac run's
// options of the same names (runner.Options).
type RunOptions struct {
	Reps, Warmup int
	Timeout      time.Duration // a launch not finished by then is a hang
	Device       int
	Seed         int64
	Dist         string
	RTol, ATol   float64 // -1: the defaults
	Shapes, Sets []string
	RefSample    int64
	RefSampleSet bool
	Filter       string // run only the variants whose name matches this regular expression
	TmacVersion  string // recorded in tune-results.json
	Out          io.Writer
	// Problem, if not nil, is told of failures that do not stop the
	// run (a log that could not be written).
	Problem func(error)
	// RefCache, if not nil, keeps @reference's results across Run calls
	// (tmac tune run DIR...: the designs of one shape share a reference);
	// nil: a cache for this run only.
	RefCache *runner.RefCache
}

// Run runs every compiled variant of the tune build in dir, in this
// process, the way tmac run --bench does, each with its output in
// dir/logs/NAME.log; it prints their outcomes and the ranking (a Markdown
// table of the passing variants by median kernel time, then the others)
// to opts.Out and writes dir/tune-results.json. After a hang the GPU is
// still busy, so the variants after it are not run. The error is a
// *runner.Error; when no variant passed it has exit status 1 and no
// message.
func Run(dir string, opts RunOptions) (*Results, error) {
	stdout := opts.Out
	if stdout == nil {
		stdout = io.Discard
	}
	usage := func(format string, args ...any) error {
		return &runner.Error{Status: runner.StatusUsage, Errs: []error{runner.Messagef(format, args...)}}
	}
	failed := func(format string, args ...any) error {
		return &runner.Error{Status: runner.StatusFailed, Errs: []error{runner.Messagef(format, args...)}}
	}
	if opts.Reps < 1 || opts.Warmup < 0 {
		return nil, usage("--reps must be at least 1 and --warmup at least 0")
	}
	if opts.Timeout < 0 {
		return nil, usage("--timeout must not be negative")
	}
	switch buffer.Dist(opts.Dist) {
	case buffer.Normal, buffer.Uniform, buffer.Ints:
	default:
		return nil, usage("--dist must be normal, uniform or int, not '%s'", opts.Dist)
	}
	var filter *regexp.Regexp
	if opts.Filter != "" {
		var err error
		if filter, err = regexp.Compile(opts.Filter); err != nil {
			return nil, usage("--filter: %v", err)
		}
	}
	m, err := ReadManifest(dir)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, usage("%s has no %s; make it with tmac tune build FILE.tma -o %s", dir, ManifestName, dir)
		}
		return nil, usage("%v", err)
	}
	results := make([]*Result, len(m.Variants))
	var torun []int
	for i, v := range m.Variants {
		r := &Result{Name: v.Name, Source: v.Source, Schedule: v.Schedule, Stages: v.Stages, StoreStages: v.StoreStages, Bundle: v.Bundle,
			Params: v.Params}
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
		return nil, failed("no compiled variant to run in %s", dir)
	}

	// Everything above runs without a GPU.
	devName, err := deviceName(opts.Device)
	if err != nil {
		line, _, _ := strings.Cut(err.Error(), "\n")
		return nil, &runner.Error{Status: runner.StatusNoDevice, Errs: []error{runner.Messagef("no usable GPU: %s", line)}}
	}
	out := &Results{Format: ResultsFormat, TmacVersion: opts.TmacVersion, Device: devName, Date: time.Now().UTC().Format(time.RFC3339),
		Reps: opts.Reps, Warmup: opts.Warmup, Seed: opts.Seed}
	fmt.Fprintf(stdout, "device %d: %s; %d variants, %d warm-up + %d timed runs each\n", opts.Device, devName, len(torun), opts.Warmup, opts.Reps)
	logs := filepath.Join(dir, "logs")
	if err := os.MkdirAll(logs, 0o755); err != nil {
		return nil, failed("%v", err)
	}
	refCache := opts.RefCache
	if refCache == nil {
		refCache = runner.NewRefCache()
	}
	hung := ""
	for n, i := range torun {
		v, r := m.Variants[i], results[i]
		if hung != "" {
			r.Status, r.Reason = resNotRun, "not run: "+hung+" hung the GPU before it"
			continue
		}
		var log bytes.Buffer
		o := runVariant(&opts, filepath.Join(dir, v.Bundle), v.Source, refCache, &log)
		r.Log = filepath.Join("logs", v.Name+".log")
		if err := os.WriteFile(filepath.Join(dir, r.Log), log.Bytes(), 0o644); err != nil && opts.Problem != nil {
			opts.Problem(err)
		}
		classify(r, o, log.String())
		if r.Status == resHang {
			hung = v.Name
		}
		fmt.Fprintf(stdout, "[%d/%d] %s: %s\n", n+1, len(torun), v.Name, r.summary())
	}
	ranked := rank(results)
	out.Results = ranked
	if len(ranked) > 0 && ranked[0].Status == resPass {
		out.Best = ranked[0].Name
	}
	fmt.Fprintln(stdout)
	printTable(stdout, ranked)
	if err := writeJSON(filepath.Join(dir, ResultsName), out); err != nil {
		return out, failed("%v", err)
	}
	fmt.Fprintf(stdout, "results in %s, logs in %s\n", filepath.Join(dir, ResultsName), logs)
	if out.Best == "" {
		return out, &runner.Error{Status: runner.StatusFailed}
	}
	return out, nil
}

// The GPU and the per-variant run, replaced by fakes in tests.
var (
	deviceName = func(device int) (string, error) {
		dev, err := cuda.Init(device)
		if err != nil {
			return "", err
		}
		return dev.Name(), nil
	}
	runVariant = runOne
)

// variantOutcome is what runOne found.
type variantOutcome struct {
	run  *runner.Outcome
	code int // tmac run's exit status
}

// runOne runs one bundle as tmac run --bench does, its output going to
// log.
func runOne(opts *RunOptions, bundlePath, source string, cache *runner.RefCache, log io.Writer) variantOutcome {
	o, err := runner.Run(bundlePath, runner.Options{
		Seed: opts.Seed, Dist: opts.Dist, RTol: opts.RTol, ATol: opts.ATol, Shapes: opts.Shapes, Sets: opts.Sets,
		RefSample: opts.RefSample, RefSampleSet: opts.RefSampleSet,
		Bench: true, Warmup: opts.Warmup, Reps: opts.Reps, Timeout: opts.Timeout, Device: opts.Device,
		RefCache: cache, Out: log, Diag: log,
	})
	vo := variantOutcome{run: o}
	var re *runner.Error
	switch {
	case err == nil:
	case errors.As(err, &re):
		re.Report(log, "tmac run")
		vo.code = re.Status
	default:
		vo.code = 1
		fmt.Fprintln(log, "tmac run: error:", err)
	}
	return vo
}

// classify turns a run's outcome into the result's status.
func classify(r *Result, o variantOutcome, log string) {
	r.Check = o.run.Verdict
	if b := o.run.Bench; b != nil {
		r.KernelMedianS, r.KernelMinS, r.RunMedianS, r.SyncMedianS = b.KernelMedianS, b.KernelMinS, b.RunMedianS, b.KernelMedianS
		if b.QueuedMedianS > 0 {
			r.KernelMedianS, r.KernelMinS, r.QueuedExposed = b.QueuedMedianS, b.QueuedMinS, b.QueuedExposed
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
		r.QueuedExposed = false
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

func (r *Result) summary() string {
	if r.Status != resPass {
		return strings.ToUpper(r.Status) + ": " + r.Reason
	}
	s := fmt.Sprintf("PASS (check %s), kernel median %s", r.Check, fmtSeconds(r.KernelMedianS))
	if t := r.throughput(); t != "" {
		s += ", " + t
	}
	if r.QueuedExposed {
		s += " (includes launch latency: the host fell behind the GPU)"
	}
	return s
}

func (r *Result) throughput() string {
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

// rank puts the passing variants first, by median kernel time
// (then minimum, then name), then the others in their original order.
func rank(rs []*Result) []*Result {
	var pass, rest []*Result
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

// printTable prints the ranking as a Markdown table, best first and
// marked, then the variants left out.
func printTable(w io.Writer, ranked []*Result) {
	fmt.Fprintln(w, "| | variant | schedule | stages | store stages | check | kernel median | kernel min | throughput | vs best |")
	fmt.Fprintln(w, "|---|---|---|---:|---:|---|---:|---:|---:|---:|")
	var best float64
	var left []*Result
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
