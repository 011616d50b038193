// Package runner runs tmac programs the way `tmac run` does: it loads a
// program (compiling a .tma in-process, or reading a .tmab bundle),
// builds the entry function's host plan (runtime/plan), binds its
// arguments (seeded random inputs, outputs poisoned with NaN or an integer
// sentinel), runs the plan on the GPU or on the CPU emulator, checks every
// output against func.func @reference run by the interpreter, times the
// kernels (Options.Bench) and writes the inputs and results as .npy files
// (Options.Dump).
//
// Run writes its report, the lines tmac run prints, to Options.Out and
// returns what it found; a failure is an *Error carrying tmac run's exit
// status and its messages.
package runner

import (
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/runtime/buffer"
	"github.com/tmac-dev/tmac/runtime/cuda"
	"github.com/tmac-dev/tmac/runtime/emu"
	"github.com/tmac-dev/tmac/runtime/interp"
	"github.com/tmac-dev/tmac/runtime/plan"
	"github.com/tmac-dev/tmac/toolchain"
)

// Options says what Run does; each field is the tmac run flag of the
// same name.
type Options struct {
	Entry  string   // function to run; "": the only public func.func other than @reference
	Shapes []string // shapes of dynamically shaped memref arguments, argN=AxB
	Sets   []string // values of scalar arguments, argN=VALUE
	Seed   int64    // seed of the inputs
	Dist   string   // input distribution: normal, uniform or int

	// RTol and ATol are the check's tolerances; -1 takes the defaults
	// (from the element types, and the output's scale).
	RTol, ATol float64
	NoCheck    bool
	// RefSample, when RefSampleSet, is the number of iterations of
	// @reference's outermost loop to check (0: the full check); else the
	// entry's tmac.ref_sample attribute gives it.
	RefSample    int64
	RefSampleSet bool

	Bench        bool
	Warmup, Reps int
	Timeout      time.Duration // a launch not finished by then is a deadlock (GPU) or stopped (emulator)
	Device       int           // CUDA device ordinal
	Target       string        // gpu ("" too) or emu
	EmuSeed      int64         // the emulator's scheduling seed
	// BankConflicts reports the shared-memory bank conflicts of the
	// emulated run's ordinary loads and stores, per op (emulator only).
	BankConflicts bool
	// EmuLazyStores keeps the emulator's TMA stores reading their shared
	// memory as long as possible (emu.Device.LazyStores).
	EmuLazyStores bool
	Dump          bool // write a dump into DumpDir
	DumpDir       string
	Pipeline      string // pass pipeline, for .tma input
	LLC           toolchain.LLCOptions
	RefCache      *RefCache // reuses @reference's results across runs (tmac tune run); nil: none
	Out           io.Writer // the report
	Diag          io.Writer // the compilation's warnings and the warnings of the run

	// Progress, when positive, is how often an emulated launch reports
	// its progress on Diag.
	Progress time.Duration
}

// Outcome is what a run found, as far as it got.
type Outcome struct {
	Device string
	// Verdict is PASS, FAIL, "skipped (--no-check)" or "none (no
	// @reference)"; "" if the run did not get to the check.
	Verdict string
	Bench   *BenchResult // nil without Bench or when the bench failed
	// LaunchErr is a failed launch or bench (a *plan.DeadlockError when
	// a kernel hung).
	LaunchErr error
}

// Run runs the program at path (a .tma or a .tmab) as opts say. The
// outcome is never nil.
func Run(path string, opts Options) (*Outcome, error) {
	o := &Outcome{}
	if opts.Out == nil {
		opts.Out = io.Discard
	}
	if err := opts.check(); err != nil {
		return o, err
	}
	shapes, err := parseAssignments(opts.Shapes, "--shape")
	if err != nil {
		return o, usage("%v", err)
	}
	sets, err := parseAssignments(opts.Sets, "--set")
	if err != nil {
		return o, usage("%v", err)
	}
	if opts.Dump {
		if err := checkDumpDir(opts.DumpDir); err != nil {
			return o, usage("%v", err)
		}
	}
	prog, err := Load(path, opts)
	if err != nil {
		return o, err
	}
	return o, run(prog, path, &opts, shapes, sets, o)
}

// check validates the options that need no program.
func (opts *Options) check() error {
	switch buffer.Dist(opts.Dist) {
	case buffer.Normal, buffer.Uniform, buffer.Ints:
	default:
		return usage("--dist must be normal, uniform or int, not '%s'", opts.Dist)
	}
	if opts.RTol != -1 && (opts.RTol < 0 || math.IsNaN(opts.RTol) || math.IsInf(opts.RTol, 0)) {
		return usage("--rtol must be a finite number >= 0")
	}
	if opts.ATol != -1 && (opts.ATol < 0 || math.IsNaN(opts.ATol) || math.IsInf(opts.ATol, 0)) {
		return usage("--atol must be a finite number >= 0")
	}
	if opts.Reps < 1 || opts.Warmup < 0 {
		return usage("--reps must be at least 1 and --warmup at least 0")
	}
	if opts.Timeout < 0 {
		return usage("--timeout must not be negative")
	}
	switch opts.Target {
	case "gpu", "":
		if opts.BankConflicts {
			return usage("--bank-conflicts counts the emulator's shared-memory accesses: it needs --target=emu")
		}
		if opts.EmuLazyStores {
			return usage("--emu-lazy-stores is a schedule of the emulator: it needs --target=emu")
		}
	case "emu":
		if opts.Bench {
			return usage("--bench times the GPU; the emulator does not model time (use --target=gpu)")
		}
	default:
		return usage("--target must be gpu or emu, not '%s'", opts.Target)
	}
	return nil
}

// run runs a loaded program.
func run(prog *Program, source string, opts *Options, shapes, sets map[int]string, o *Outcome) error {
	mod, sm, out := prog.Module, prog.Sources, opts.Out
	diag := func(err error) error { return failed(sm, err) }
	entry, err := plan.SelectEntry(mod, opts.Entry)
	if err != nil {
		return usage("%v", err)
	}
	p, err := plan.Build(mod, entry)
	if err != nil {
		return diag(err)
	}
	ref := plan.Reference(mod)
	if ref != nil && !opts.NoCheck {
		if err := plan.SameSignature(entry, ref); err != nil {
			return diag(err)
		}
	}
	sample, err := refSample(opts, entry)
	if err != nil {
		if opts.RefSampleSet {
			return usage("%v", err)
		}
		return diag(err) // a bad tmac.ref_sample attribute
	}
	if ref == nil || opts.NoCheck {
		sample = 0
	}
	if sample > 0 {
		if _, err := interp.SampleLoop(ref); err != nil {
			e := failed(sm, Messagef("cannot check against a sampled @reference (%s)", sampleSource(opts, sample)), err)
			if opts.RefSampleSet {
				e.Status = StatusUsage
			}
			return e
		}
	}
	outputs := plan.Outputs(entry, nil)
	if ref != nil {
		outs := plan.Outputs(ref, nil)
		for i := range outputs {
			outputs[i] = outputs[i] || outs[i]
		}
	}
	args, err := makeArgs(p.Args, outputs, shapes, sets, opts)
	if err != nil {
		return usage("%v", err)
	}
	if ref != nil && !opts.NoCheck && !anyTrue(outputs) {
		// No argument is marked {tmac.output}: the outputs are what the
		// reference writes, and those it writes before reading anything
		// are poisoned so elements the GPU never writes are caught.
		if err := outputsFromReference(mod, args, outputs, sample, opts.Seed); err != nil {
			return diag(err)
		}
	}
	if opts.Dump {
		if err := makeDumpDir(opts.DumpDir); err != nil {
			return usage("%v", err)
		}
	}

	// Everything above runs without a GPU.
	var (
		dev   plan.Device
		gpu   *plan.CUDA
		watch func(l *plan.Launch) error
	)
	var banks *emu.BankCounter
	if opts.Target == "emu" {
		edev := emu.NewDevice(mod, opts.EmuSeed)
		edev.Timeout = opts.Timeout
		edev.LazyStores = opts.EmuLazyStores
		if opts.BankConflicts {
			banks = emu.NewBankCounter()
			edev.Observe = banks.Observe
		}
		if opts.Progress > 0 && opts.Diag != nil {
			edev.Progress, edev.ProgressEvery = func(p emu.LaunchProgress) {
				fmt.Fprintf(opts.Diag, "tmac run: emulating @%s: %d/%d blocks, %.1f s\n", p.Kernel, p.Done, p.Total, p.Elapsed.Seconds())
			}, opts.Progress
		}
		dev = edev
		o.Device = fmt.Sprintf("CPU emulator (seed %d)", opts.EmuSeed)
		fmt.Fprintf(out, "device: %s; tmac run --target=emu runs the kernels on the CPU\n", o.Device)
	} else {
		cdev, err := cuda.Init(opts.Device)
		if err != nil {
			return &Error{Status: StatusNoDevice, Errs: []error{Messagef("no usable GPU: %s", firstLine(err.Error()))}}
		}
		o.Device = cdev.Name()
		fmt.Fprintf(out, "device %d: %s\n", opts.Device, o.Device)
		gpu, err = plan.NewCUDA(prog.PTX)
		if err != nil {
			return diag(err)
		}
		// Give the memory and the module back (tmac tune run goes on with
		// the next variant in this process), unless a launch failed: a
		// kernel still running would make that wait forever.
		defer func() {
			if o.LaunchErr == nil {
				gpu.Release()
			}
		}()
		gpu.Timeout = opts.Timeout
		watch = func(l *plan.Launch) error { return gpu.Wait(l.Kernel) }
		dev = gpu
	}

	devArgs, mems, err := uploadArgs(dev, args)
	if err != nil {
		return diag(err)
	}
	host, _ := hostRunner(prog, entry, p)
	runStart := time.Now()
	if err := host(dev, devArgs, watch); err != nil {
		o.LaunchErr = err
		return diag(err)
	}
	if opts.Target == "emu" {
		// The emulator's own time, apart from the reference's below.
		fmt.Fprintf(out, "emulated @%s in %.2f s\n", entry.SymbolName(), time.Since(runStart).Seconds())
	}
	if banks != nil {
		reportBankConflicts(out, banks.Stats())
	}
	results := make([]*buffer.Buffer, len(args))
	for i, a := range args {
		if a.buf != nil {
			results[i] = &buffer.Buffer{Elem: a.buf.Elem, Shape: a.buf.Shape, Bytes: make([]byte, len(a.buf.Bytes))}
			if err := dev.CopyToHost(results[i].Bytes, mems[i].Dev); err != nil {
				return diag(err)
			}
		}
	}
	mismatch := false
	verdict := "PASS"
	switch {
	case opts.NoCheck:
		verdict = "skipped (--no-check)"
		fmt.Fprintln(out, "ran @"+entry.SymbolName()+" (reference check skipped: --no-check)")
	case ref == nil:
		verdict = "none (no @reference)"
		fmt.Fprintln(out, "ran @"+entry.SymbolName()+"; the module has no func.func @reference, so the results were not checked")
	default:
		var unwritten []int
		mismatch, unwritten, err = checkResults(out, mod, entry, args, results, outputs, sample, opts)
		if err != nil {
			return diag(err)
		}
		warnUnwritten(opts.Diag, sm, entry, args, unwritten)
		if mismatch {
			verdict = "FAIL"
		}
	}
	var benchErr error
	if opts.Bench {
		o.Bench, benchErr = bench(out, host, gpu, entry, args, devArgs, opts)
	}
	fail := failed(sm)
	if opts.Dump {
		d := &dumpRun{source: source, entry: entry.SymbolName(), device: o.Device, args: args, results: results,
			outputs: outputs, check: verdict, sample: sample, bench: o.Bench, opts: opts}
		if err := writeDump(opts.DumpDir, d); err != nil {
			fail.Errs = append(fail.Errs, Messagef("%v", err))
			mismatch = true
		} else {
			fmt.Fprintf(out, "dump: inputs, outputs and %s in %s\n", dumpManifestName, opts.DumpDir)
		}
	}
	o.Verdict = verdict
	if benchErr != nil {
		o.LaunchErr = benchErr
		fail.Errs = append(fail.Errs, benchErr)
		return fail
	}
	if mismatch {
		return fail
	}
	return nil
}

// warnUnwritten warns, at the entry function, of each output the check
// compared that neither the run (its kernels and copies) nor @reference
// wrote: the check then compares the values the output was given with
// themselves, which proves nothing.
func warnUnwritten(w io.Writer, sm *ir.SourceMgr, entry *ir.Operation, args []*runArg, unwritten []int) {
	if w == nil {
		return
	}
	for _, i := range unwritten {
		d := entry.EmitWarning("output arg%d ('%s') of @%s is written neither by the kernels nor by @reference; the check compares the values it was given", i, args[i].typ, entry.SymbolName())
		fmt.Fprint(w, d.Render(sm))
	}
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func anyTrue(bs []bool) bool {
	for _, b := range bs {
		if b {
			return true
		}
	}
	return false
}

// refSample gives the number of iterations of @reference's outermost loop
// to check: opts.RefSample when set (0: the full check), else the entry's
// tmac.ref_sample attribute, else 0.
func refSample(opts *Options, entry *ir.Operation) (int64, error) {
	if opts.RefSampleSet {
		if opts.RefSample < 0 || opts.RefSample == 1 {
			return 0, fmt.Errorf("--ref-sample must be 0 (full check) or at least 2 (the first and the last iteration are always checked), not %d", opts.RefSample)
		}
		return opts.RefSample, nil
	}
	return plan.RefSample(entry)
}

func sampleSource(opts *Options, n int64) string {
	if opts.RefSampleSet {
		return fmt.Sprintf("--ref-sample %d", n)
	}
	return fmt.Sprintf("%s = %d on the entry function", plan.RefSampleAttr, n)
}
