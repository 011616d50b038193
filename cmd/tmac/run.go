package main

import (
	"fmt"
	"io"
	"math"
	"math/rand"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tmac-dev/tmac/bundle"
	"github.com/tmac-dev/tmac/codegen"
	"github.com/tmac-dev/tmac/driver"
	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/passes"
	"github.com/tmac-dev/tmac/runtime/buffer"
	"github.com/tmac-dev/tmac/runtime/cuda"
	"github.com/tmac-dev/tmac/runtime/emu"
	"github.com/tmac-dev/tmac/runtime/interp"
	"github.com/tmac-dev/tmac/runtime/plan"
	"github.com/tmac-dev/tmac/toolchain"
)

type runFlags struct {
	entry      string
	shapes     []string
	sets       []string
	seed       int64
	dist       string
	rtol, atol float64
	noCheck    bool
	refSample  int64
	bench      bool
	warmup     int
	reps       int
	timeout    time.Duration
	device     int
	pipeline   string
	llc        toolchain.LLCOptions
	dumpDir    string
	target     string // "gpu" or "emu"
	emuSeed    int64

	// Set by tmac tune run, which calls runRun once per variant: outcome
	// receives what the run found, and refCache keeps @reference's
	// results by refCacheKey (variants with the same @reference and
	// argument types get the same inputs, so the same results).
	outcome  *runOutcome
	refCache map[string]*refResult
}

// refCacheKey says which runs can share @reference's results: the same
// reference function (as printed), the same entry argument types (so the
// same seeded inputs) and the same sampling.
func refCacheKey(mod, entry *ir.Operation, sample int64, seed int64, dist string) string {
	ref := plan.Reference(mod)
	if ref == nil {
		return ""
	}
	ft, _ := plan.FuncType(entry)
	var b strings.Builder
	fmt.Fprintf(&b, "sample %d seed %d dist %s\n", sample, seed, dist)
	if ft != nil {
		for _, t := range ft.Inputs {
			fmt.Fprintf(&b, "%s\n", t)
		}
	}
	b.WriteString(ir.PrintOpString(ref))
	return b.String()
}

// runOutcome is what one runRun found, for tmac tune run.
type runOutcome struct {
	Device    string
	Verdict   string       // PASS, FAIL, skipped (--no-check), none (no @reference); "" if it did not get there
	Bench     *benchResult // nil without --bench or when the bench failed
	LaunchErr error        // a failed launch or bench (a *plan.DeadlockError when it hung)
}

// refResult is @reference's output on a variant's inputs.
type refResult struct {
	args []interp.Arg
	info *interp.CallInfo
}

// Measured H200 peaks the --bench report compares against.
const (
	peakBytesPerS = 4.3e12 // device-to-device copy
	peakFlopsPerS = 790e12 // bf16 dense wgmma
	l2Bytes       = 50 << 20
)

func newRunCmd() *cobra.Command {
	f := &runFlags{}
	cmd := &cobra.Command{
		Use:   "run FILE.tma|FILE.tmab",
		Short: "Run a tile program on the GPU with random inputs and check it against @reference",
		Long: `run compiles FILE (or loads a bundle from tmac compile --emit=bundle, which
needs no llc), allocates the entry function's memref arguments on the GPU,
fills them with seeded random data (outputs are poisoned with NaN, or a
sentinel for integers), executes the entry function's host code (arith,
scf, gpu.alloc/memcpy/memset/wait, nvgpu.tma.create.descriptor,
gpu.launch_func) and compares every output with func.func @reference run
by the CPU interpreter on the same inputs.

The entry is --entry, or the only public func.func other than @reference.
An argument is an output when it has the {tmac.output} argument attribute;
dynamic sizes come from --shape argN=AxB, integer scalars from --set argN=V.

An element matches when |out-ref| <= atol + rtol*|ref|. Default rtol is
that of the least precise float type among the output and the other memref
arguments (f32/f64 1e-5, tf32 1e-3, f16/bf16 1e-2, fp8 5e-2; integers are
compared exactly), and default atol is rtol times the largest |ref| of that
output, so sums over many terms are judged on the output's scale.

--ref-sample N makes the check a sampled one, for references too large to
interpret in full: the interpreter runs only N iterations of the outermost
scf.for of @reference (the first, the last, and the others spread over the
range, chosen from --seed), and only the output elements those iterations
write are compared, with the tolerances above taken over them. A GPU NaN
there still fails; elements the sample did not write are not checked at
all. The loop must be the only one at the top level of @reference and its
iterations provably independent (no iter_args, each stored memref indexed
by an injective function of the induction variable), else the flag is
refused. The report says "sampled" with the iterations and elements
checked; an output of which the sample wrote no element fails. Without
the flag, the entry function's attribute tmac.ref_sample = N : i64 gives
N; --ref-sample 0 forces the full check.

--bench times whole runs of the entry function with CUDA events after
warm-ups, then the kernels alone (events around each launch, summed per
run, one run at a time), then the kernels queued: all runs queued behind
a GPU-side spin kernel so that each launch's events bracket the kernel and
not the host's launch latency (as torch and Triton harnesses time them);
it reports medians and minimums; throughput uses the kernel time (both
the one-at-a-time and the queued figure).
Bytes moved are the total size of the entry's memref arguments (each
counted once; a function attribute tmac.bytes overrides). FLOPs are counted
from the program: 2*m*n*k per wgmma instruction, times the static trip
counts of the loops around it and the warpgroups of its launch (every
warpgroup is assumed to execute it); the entry's tmac.flops attribute
overrides. Throughput is reported with
the fraction of the H200's measured peaks (4.3 TB/s copy, 790 TFLOP/s
bf16 dense). When the inputs fit in the 50 MB L2, several copies are
rotated so the cache does not serve them.

--dump-dir DIR writes, after the run, each memref argument's input values
(DIR/argN.in.npy; not for an output whose input is only the NaN poison)
and each output's GPU result (DIR/argN.out.npy) as NumPy .npy files, in
the element's own encoding (bf16 and fp8 as unsigned integers of their
width), and DIR/manifest.json: entry, device, seed, shapes, element and
.npy types, the check's verdict and, with --bench, the measured times,
FLOPs and bytes. DIR is created if missing; it must be empty or hold an
earlier dump, which is replaced.

Exit status: 0 success, 1 mismatch or failure, 2 usage error, 3 no GPU.`,
		Example: `  tmac run examples/saxpy.tma --bench
  tmac run gemm.tmab --seed 7 --dist uniform
  tmac run rowsum.tma --shape arg0=4096x512 --rtol 1e-4
  tmac run gemm_4096.tma --ref-sample 64`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runRun(cmd, f, args[0])
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.entry, "entry", "", "function to run (default: the only public func.func other than @reference)")
	fl.StringArrayVar(&f.shapes, "shape", nil, "shape of a dynamically shaped memref argument, argN=AxB (repeatable)")
	fl.StringArrayVar(&f.sets, "set", nil, "value of a scalar argument, argN=VALUE (repeatable)")
	fl.Int64Var(&f.seed, "seed", 0, "random seed of the inputs")
	fl.StringVar(&f.dist, "dist", "normal", "input distribution: normal, uniform or int")
	fl.Float64Var(&f.rtol, "rtol", -1, "relative tolerance (default: from the least precise element type involved)")
	fl.Float64Var(&f.atol, "atol", -1, "absolute tolerance (default: rtol times the output's largest |reference|)")
	fl.BoolVar(&f.noCheck, "no-check", false, "skip the reference check")
	fl.Int64Var(&f.refSample, "ref-sample", 0, "check only `N` (>= 2) iterations of @reference's outermost loop, comparing the elements they write; 0: full check (default: tmac.ref_sample of the entry, else 0)")
	fl.BoolVar(&f.bench, "bench", false, "time the entry function")
	fl.IntVar(&f.warmup, "warmup", 5, "warm-up runs before timing (--bench)")
	fl.IntVar(&f.reps, "reps", 50, "timed runs (--bench)")
	fl.DurationVar(&f.timeout, "timeout", 10*time.Second, "watchdog: a launch not finished by then is reported as a deadlock")
	fl.IntVar(&f.device, "device", 0, "CUDA device ordinal")
	fl.StringVar(&f.pipeline, "pass-pipeline", defaultPipeline, "pass pipeline (for .tma input)")
	fl.StringVar(&f.llc.Path, "llc", "", "llc to use (for .tma input)")
	fl.StringVar(&f.llc.MCPU, "mcpu", "sm_90a", "target GPU")
	fl.IntVarP(&f.llc.OptLevel, "opt-level", "O", 3, "llc optimisation level (0-3)")
	fl.StringVar(&f.dumpDir, "dump-dir", "", "write the inputs and GPU outputs as .npy files and a manifest.json into `DIR` after the run")
	fl.StringVar(&f.target, "target", "gpu", "where the kernels run: gpu (the CUDA driver) or emu (the CPU emulator: no GPU or llc needed)")
	fl.Int64Var(&f.emuSeed, "emu-seed", 0, "seed of the emulator's scheduling (which thread runs, when copies complete)")
	return cmd
}

// runArg is one argument of the entry function.
type runArg struct {
	typ    ir.Type
	buf    *buffer.Buffer // memrefs
	scalar plan.Value     // scalars
	output bool
}

func runRun(cmd *cobra.Command, f *runFlags, in string) error {
	stderr := cmd.ErrOrStderr()
	stdout := cmd.OutOrStdout()
	usage := func(format string, args ...any) error {
		fmt.Fprintf(stderr, "tmac run: error: "+format+"\n", args...)
		return &exitError{2}
	}
	switch buffer.Dist(f.dist) {
	case buffer.Normal, buffer.Uniform, buffer.Ints:
	default:
		return usage("--dist must be normal, uniform or int, not '%s'", f.dist)
	}
	if f.rtol != -1 && (f.rtol < 0 || math.IsNaN(f.rtol) || math.IsInf(f.rtol, 0)) {
		return usage("--rtol must be a finite number >= 0")
	}
	if f.atol != -1 && (f.atol < 0 || math.IsNaN(f.atol) || math.IsInf(f.atol, 0)) {
		return usage("--atol must be a finite number >= 0")
	}
	if f.reps < 1 || f.warmup < 0 {
		return usage("--reps must be at least 1 and --warmup at least 0")
	}
	if f.timeout < 0 {
		return usage("--timeout must not be negative")
	}
	switch f.target {
	case "gpu", "": // "" from callers that build runFlags themselves (tune run)
	case "emu":
		if f.bench {
			return usage("--bench times the GPU; the emulator does not model time (use --target=gpu)")
		}
	default:
		return usage("--target must be gpu or emu, not '%s'", f.target)
	}
	shapes, err := parseAssignments(f.shapes, "--shape")
	if err != nil {
		return usage("%v", err)
	}
	sets, err := parseAssignments(f.sets, "--set")
	if err != nil {
		return usage("%v", err)
	}
	dump := cmd.Flags().Changed("dump-dir")
	if dump {
		if err := checkDumpDir(f.dumpDir); err != nil {
			return usage("%v", err)
		}
	}

	mod, ptx, sm, err := loadProgram(stderr, f, in)
	if err != nil {
		return err
	}
	diag := func(err error) error {
		if ds := ir.AsDiagnostics(err); len(ds) > 0 {
			for _, d := range ds {
				fmt.Fprint(stderr, d.Render(sm))
			}
		} else {
			fmt.Fprintln(stderr, "tmac run: error:", err)
		}
		return &exitError{1}
	}
	entry, err := plan.SelectEntry(mod, f.entry)
	if err != nil {
		return usage("%v", err)
	}
	p, err := plan.Build(mod, entry)
	if err != nil {
		return diag(err)
	}
	ref := plan.Reference(mod)
	if ref != nil && !f.noCheck {
		if err := plan.SameSignature(entry, ref); err != nil {
			return diag(err)
		}
	}
	sample, err := refSample(cmd, f, entry)
	if err != nil {
		if cmd.Flags().Changed("ref-sample") {
			return usage("%v", err)
		}
		return diag(err) // a bad tmac.ref_sample attribute
	}
	if ref == nil || f.noCheck {
		sample = 0
	}
	if sample > 0 {
		if _, err := interp.SampleLoop(ref); err != nil {
			fmt.Fprintf(stderr, "tmac run: error: cannot check against a sampled @reference (%s)\n", sampleSource(cmd, sample))
			diag(err)
			if cmd.Flags().Changed("ref-sample") {
				return &exitError{2}
			}
			return &exitError{1}
		}
	}
	outputs := plan.Outputs(entry, nil)
	if ref != nil {
		outs := plan.Outputs(ref, nil)
		for i := range outputs {
			outputs[i] = outputs[i] || outs[i]
		}
	}
	args, err := makeArgs(p.Args, outputs, shapes, sets, f)
	if err != nil {
		return usage("%v", err)
	}
	if ref != nil && !f.noCheck && !anyTrue(outputs) {
		// No argument is marked {tmac.output}: the outputs are what the
		// reference writes, and those it writes before reading anything
		// are poisoned so elements the GPU never writes are caught.
		if err := outputsFromReference(mod, args, outputs, sample, f.seed); err != nil {
			return diag(err)
		}
	}

	if dump {
		if err := makeDumpDir(f.dumpDir); err != nil {
			return usage("%v", err)
		}
	}

	// Everything above runs without a GPU.
	var (
		dev     plan.Device
		devName string
		gpu     *plan.CUDA
		watch   func(l *plan.Launch) error
	)
	launchFailed := func(err error) error {
		if f.outcome != nil {
			f.outcome.LaunchErr = err
		}
		return launchFailure(stderr, sm, err)
	}
	if f.target == "emu" {
		dev = emu.NewDevice(mod, f.emuSeed)
		devName = fmt.Sprintf("CPU emulator (seed %d)", f.emuSeed)
		fmt.Fprintf(stdout, "device: %s; tmac run --target=emu runs the kernels on the CPU\n", devName)
	} else {
		cdev, err := cuda.Init(f.device)
		if err != nil {
			fmt.Fprintf(stderr, "tmac run: error: no usable GPU: %s\n", firstLine(err.Error()))
			return &exitError{3}
		}
		devName = cdev.Name()
		fmt.Fprintf(stdout, "device %d: %s\n", f.device, devName)
		gpu, err = plan.NewCUDA(ptx)
		if err != nil {
			return diag(err)
		}
		if o := f.outcome; o != nil {
			o.Device = devName
			// tmac tune run goes on with the next variant in this process:
			// give the memory and the module back, unless a launch failed
			// (a kernel still running would make that wait forever).
			defer func() {
				if o.LaunchErr == nil {
					gpu.Release()
				}
			}()
		}
		gpu.Timeout = f.timeout
		watch = func(l *plan.Launch) error { return gpu.Wait(l.Kernel) }
		dev = gpu
	}

	devArgs, mems, err := uploadArgs(dev, args)
	if err != nil {
		return diag(err)
	}
	runStart := time.Now()
	if err := p.Run(dev, devArgs, watch); err != nil {
		return launchFailed(err)
	}
	if f.target == "emu" {
		// The emulator's own time, apart from the reference's below.
		fmt.Fprintf(stdout, "emulated @%s in %.2f s\n", entry.SymbolName(), time.Since(runStart).Seconds())
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
	failed := false
	verdict := "PASS"
	switch {
	case f.noCheck:
		verdict = "skipped (--no-check)"
		fmt.Fprintln(stdout, "ran @"+entry.SymbolName()+" (reference check skipped: --no-check)")
	case ref == nil:
		verdict = "none (no @reference)"
		fmt.Fprintln(stdout, "ran @"+entry.SymbolName()+"; the module has no func.func @reference, so the results were not checked")
	default:
		failed, err = checkResults(stdout, mod, entry, args, results, outputs, sample, f)
		if err != nil {
			return diag(err)
		}
		if failed {
			verdict = "FAIL"
		}
	}
	var benched *benchResult
	var benchErr error
	if f.bench {
		benched, benchErr = bench(stdout, p, gpu, entry, args, devArgs, f)
	}
	if dump {
		d := &dumpRun{source: in, entry: entry.SymbolName(), device: devName, args: args, results: results,
			outputs: outputs, check: verdict, sample: sample, bench: benched, f: f}
		if err := writeDump(f.dumpDir, d); err != nil {
			fmt.Fprintln(stderr, "tmac run: error:", err)
			failed = true
		} else {
			fmt.Fprintf(stdout, "dump: inputs, outputs and %s in %s\n", dumpManifestName, f.dumpDir)
		}
	}
	if f.outcome != nil {
		f.outcome.Verdict, f.outcome.Bench = verdict, benched
	}
	if benchErr != nil {
		return launchFailed(benchErr)
	}
	if failed {
		return &exitError{1}
	}
	return nil
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func launchFailure(stderr io.Writer, sm *ir.SourceMgr, err error) error {
	if ds := ir.AsDiagnostics(err); len(ds) > 0 {
		for _, d := range ds {
			fmt.Fprint(stderr, d.Render(sm))
		}
	} else {
		fmt.Fprintln(stderr, "tmac run: error:", err)
	}
	return &exitError{1}
}

// loadProgram compiles a .tma in-process or reads a .tmab bundle, giving
// the module after tmac's passes and the PTX of its kernels.
func loadProgram(stderr io.Writer, f *runFlags, in string) (*ir.Operation, string, *ir.SourceMgr, error) {
	fail := func(sm *ir.SourceMgr, err error) (*ir.Operation, string, *ir.SourceMgr, error) {
		if ds := ir.AsDiagnostics(err); len(ds) > 0 {
			for _, d := range ds {
				fmt.Fprint(stderr, d.Render(sm))
			}
		} else {
			fmt.Fprintln(stderr, "tmac run: error:", err)
		}
		return nil, "", nil, &exitError{1}
	}
	if strings.HasSuffix(in, bundle.Ext) {
		b, err := bundle.ReadFile(in)
		if err != nil {
			return fail(nil, err)
		}
		name := filepath.Base(in) + ":" + bundle.ModuleFile
		sm := ir.NewSourceMgr()
		sm.Add(name, b.Module)
		mod, err := driver.ParseChunk(driver.Chunk{File: name, Text: b.Module, FirstLine: 1}, false)
		if err != nil {
			return fail(sm, err)
		}
		return mod, b.PTX, sm, nil
	}
	file, text, sm, err := readSource(stderr, in)
	if err != nil {
		return nil, "", nil, err
	}
	steps, err := passes.ParsePipeline(f.pipeline)
	if err != nil {
		return fail(sm, err)
	}
	mod, err := driver.ParseChunk(driver.Chunk{File: file, Text: text, FirstLine: 1}, false)
	if err != nil {
		return fail(sm, err)
	}
	if err := passes.RunPipeline(mod, steps, &passes.Context{Emit: func(d *ir.Diagnostic) { fmt.Fprint(stderr, d.Render(sm)) }}, nil); err != nil {
		return fail(sm, err)
	}
	cg, err := codegen.Emit(mod)
	if err != nil {
		return fail(sm, err)
	}
	opts := f.llc
	if opts.PTXVersion < cg.PTXVersion {
		opts.PTXVersion = cg.PTXVersion
	}
	if f.target == "emu" {
		// The emulator runs the IR; no llc, no PTX.
		return mod, "", sm, nil
	}
	ptx, err := toolchain.CompilePTX(cg.Module.String(), opts)
	if err != nil {
		return fail(sm, err)
	}
	return mod, ptx, sm, nil
}

// parseAssignments parses argN=VALUE flags into a map keyed by argument
// index.
func parseAssignments(list []string, flag string) (map[int]string, error) {
	out := map[int]string{}
	for _, s := range list {
		name, val, ok := strings.Cut(s, "=")
		if !ok || val == "" {
			return nil, fmt.Errorf("%s expects argN=VALUE, not '%s'", flag, s)
		}
		i, err := argIndex(name)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %v", flag, s, err)
		}
		out[i] = val
	}
	return out, nil
}

func argIndex(name string) (int, error) {
	n := strings.TrimPrefix(strings.TrimPrefix(name, "%"), "arg")
	i, err := strconv.Atoi(n)
	if err != nil || i < 0 {
		return 0, fmt.Errorf("'%s' is not an argument name (arg0, arg1, ...)", name)
	}
	return i, nil
}

// parseShape parses AxBxC.
func parseShape(s string) ([]int64, error) {
	var shape []int64
	for _, d := range strings.Split(s, "x") {
		n, err := strconv.ParseInt(d, 10, 64)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("'%s' is not a shape like 128x64", s)
		}
		shape = append(shape, n)
	}
	return shape, nil
}

// makeArgs builds the host values of the entry's arguments.
func makeArgs(types []ir.Type, outputs []bool, shapes, sets map[int]string, f *runFlags) ([]*runArg, error) {
	for i := range shapes {
		if i >= len(types) {
			return nil, fmt.Errorf("--shape arg%d: the entry function has %d arguments", i, len(types))
		}
		if _, ok := types[i].(*ir.MemRefType); !ok {
			return nil, fmt.Errorf("--shape arg%d: argument #%d is '%s', not a memref", i, i, types[i])
		}
	}
	for i := range sets {
		if i >= len(types) {
			return nil, fmt.Errorf("--set arg%d: the entry function has %d arguments", i, len(types))
		}
	}
	r := rand.New(rand.NewSource(f.seed))
	args := make([]*runArg, len(types))
	for i, t := range types {
		a := &runArg{typ: t, output: outputs[i]}
		args[i] = a
		switch t := t.(type) {
		case *ir.MemRefType:
			shape := append([]int64(nil), t.Shape()...)
			if s, ok := shapes[i]; ok {
				given, err := parseShape(s)
				if err != nil {
					return nil, fmt.Errorf("--shape arg%d: %v", i, err)
				}
				if len(given) != len(shape) {
					return nil, fmt.Errorf("--shape arg%d=%s: argument #%d has rank %d", i, s, i, len(shape))
				}
				for d := range shape {
					if shape[d] != ir.Dynamic && shape[d] != given[d] {
						return nil, fmt.Errorf("--shape arg%d=%s: dimension %d of '%s' is %d", i, s, d, t, shape[d])
					}
				}
				shape = given
			}
			for d := range shape {
				if shape[d] == ir.Dynamic {
					return nil, fmt.Errorf("argument #%d ('%s') has dynamic sizes: give them with --shape arg%d=AxB", i, t, i)
				}
			}
			if strides, _, ok := t.StridesAndOffset(); !ok || !isIdentity(t, strides) {
				return nil, fmt.Errorf("argument #%d ('%s'): only identity-layout memrefs can be entry arguments", i, t)
			}
			b, err := buffer.New(t.Elem, shape)
			if err != nil {
				return nil, fmt.Errorf("argument #%d ('%s'): %v", i, t, err)
			}
			if a.output {
				b.Poison()
			} else {
				b.FillRandom(r, buffer.Dist(f.dist))
			}
			a.buf = b
		case *ir.IntegerType, *ir.IndexType:
			s, ok := sets[i]
			if !ok {
				return nil, fmt.Errorf("argument #%d is an integer ('%s'): give its value with --set arg%d=N", i, t, i)
			}
			n, err := strconv.ParseInt(s, 0, 64)
			if err != nil {
				return nil, fmt.Errorf("--set arg%d=%s: not an integer", i, s)
			}
			a.scalar = n
		case *ir.FloatType:
			if s, ok := sets[i]; ok {
				v, err := strconv.ParseFloat(s, 64)
				if err != nil {
					return nil, fmt.Errorf("--set arg%d=%s: not a number", i, s)
				}
				a.scalar = v
			} else {
				b, _ := buffer.New(t, []int64{1})
				b.FillRandom(r, buffer.Dist(f.dist))
				a.scalar = b.Float(0)
			}
		default:
			return nil, fmt.Errorf("argument #%d has type '%s', which tmac run cannot provide", i, t)
		}
	}
	return args, nil
}

func isIdentity(t *ir.MemRefType, strides []int64) bool {
	s := int64(1)
	shape := t.Shape()
	for i := len(shape) - 1; i >= 0; i-- {
		if strides[i] != ir.Dynamic && strides[i] != s && shape[i] != 1 {
			return false
		}
		if shape[i] == ir.Dynamic {
			s = ir.Dynamic
			// Later (outer) strides are dynamic too; accept them.
			for j := i - 1; j >= 0; j-- {
				if strides[j] != ir.Dynamic {
					return false
				}
			}
			return true
		}
		s *= shape[i]
	}
	return true
}

// uploadArgs copies the memref arguments to the device.
func uploadArgs(dev plan.Device, args []*runArg) ([]plan.Value, []*plan.Mem, error) {
	vals := make([]plan.Value, len(args))
	mems := make([]*plan.Mem, len(args))
	for i, a := range args {
		if a.buf == nil {
			vals[i] = a.scalar
			continue
		}
		m, err := plan.Upload(dev, a.buf)
		if err != nil {
			return nil, nil, err
		}
		vals[i], mems[i] = m, m
	}
	return vals, mems, nil
}

// checkResults runs @reference on copies of the inputs and compares every
// output (every memref argument when none is marked).
//
// With sample > 0, @reference runs only that many iterations of its
// outermost loop and each output is compared where they wrote.
func checkResults(w io.Writer, mod, entry *ir.Operation, args []*runArg, results []*buffer.Buffer, outputs []bool, sample int64, f *runFlags) (bool, error) {
	anyOut := false
	for i, a := range args {
		anyOut = anyOut || (a.buf != nil && outputs[i])
	}
	start := time.Now()
	var refArgs []interp.Arg
	var info *interp.CallInfo
	var err error
	key := ""
	if f.refCache != nil {
		key = refCacheKey(mod, entry, sample, f.seed, f.dist)
	}
	cached := f.refCache[key]
	if key != "" && cached != nil {
		refArgs, info = cached.args, cached.info
	} else {
		refArgs = make([]interp.Arg, len(args))
		for i, a := range args {
			if a.buf != nil {
				refArgs[i] = a.buf.Clone()
			} else {
				refArgs[i] = a.scalar
			}
		}
		if _, info, err = interp.Compile(mod).CallWith(plan.ReferenceName, refArgs, interp.CallOptions{SampleOuter: sample, Seed: f.seed}); err != nil {
			return false, fmt.Errorf("@reference: %v", err)
		}
		if key != "" {
			f.refCache[key] = &refResult{args: refArgs, info: info}
		}
	}
	secs := time.Since(start).Seconds()
	if cached != nil {
		fmt.Fprintf(w, "reference: @reference's results of an earlier variant with the same reference and inputs reused\n")
	}
	if s := info.Sample; s != nil {
		cover := "sampled"
		if s.All() {
			cover = "sampled, covering every iteration"
		}
		fmt.Fprintf(w, "reference: checked %d of %d iterations of the outermost loop of @reference (%s; seed %d) on the CPU in %.2f s; only the output elements they write are compared\n",
			len(s.Iterations), s.Trip, cover, f.seed, secs)
	} else {
		fmt.Fprintf(w, "reference: @reference on the CPU in %.2f s\n", secs)
	}
	failed := false
	for i, a := range args {
		if a.buf == nil || (anyOut && !outputs[i]) {
			continue
		}
		rb := refArgs[i].(*buffer.Buffer)
		var inputTypes []ir.Type
		for j, in := range args {
			if in.buf != nil && j != i {
				inputTypes = append(inputTypes, in.buf.Elem)
			}
		}
		var written []bool
		if info.Sample != nil {
			written = info.Written[i]
		}
		rtol, atol := plan.DefaultToleranceWritten(a.buf.Elem, inputTypes, rb, written)
		if f.rtol >= 0 {
			rtol = f.rtol
		}
		if f.atol >= 0 {
			atol = f.atol
		}
		var c *plan.Comparison
		if written != nil {
			c, err = plan.CompareWritten(results[i], rb, written, rtol, atol)
			if err != nil {
				fmt.Fprintf(w, "FAIL arg%d %s: %v\n", i, a.typ, err)
				failed = true
				continue
			}
		} else if c, err = plan.Compare(results[i], rb, rtol, atol); err != nil {
			return false, err
		}
		status := "PASS"
		if !c.OK() {
			status, failed = "FAIL", true
		}
		if rb.IsFloat() && c.RelNorm == 0 && c.MaxAbs == 0 && allZero(rb) {
			fmt.Fprintf(w, "warning: the reference value of arg%d is all zeros; the check cannot tell a correct result from one that never computed anything\n", i)
		}
		sampled := ""
		if written != nil {
			sampled = fmt.Sprintf("; %d of %d elements compared (sampled)", c.N, c.Of)
		}
		fmt.Fprintf(w, "%s arg%d %s: max abs err %.3g, max rel err %.3g, ||out-ref||/||ref|| %.3g (rtol %g, atol %g)%s\n",
			status, i, a.typ, c.MaxAbs, c.MaxRel, c.RelNorm, rtol, atol, sampled)
		if !c.OK() {
			fmt.Fprintf(w, "  %d of %d elements differ; first:", c.Mismatches, c.N)
			for _, k := range c.First {
				fmt.Fprintf(w, " %s out=%s ref=%s;", plan.Index(a.buf.Shape, k), elemString(results[i], k), elemString(rb, k))
			}
			fmt.Fprintln(w)
		}
	}
	return failed, nil
}

func anyTrue(bs []bool) bool {
	for _, b := range bs {
		if b {
			return true
		}
	}
	return false
}

// outputsFromReference runs @reference on copies of the arguments and marks
// as outputs the memref arguments it writes; those it writes before reading
// are poisoned.
// With sample > 0 the reference runs sampled, as in checkResults.
func outputsFromReference(mod *ir.Operation, args []*runArg, outputs []bool, sample, seed int64) error {
	refArgs := make([]interp.Arg, len(args))
	for i, a := range args {
		if a.buf != nil {
			refArgs[i] = a.buf.Clone()
		} else {
			refArgs[i] = a.scalar
		}
	}
	_, info, err := interp.Compile(mod).CallWith(plan.ReferenceName, refArgs, interp.CallOptions{SampleOuter: sample, Seed: seed})
	if err != nil {
		return fmt.Errorf("@reference: %v", err)
	}
	access := info.Access
	for i, a := range args {
		if a.buf == nil || i >= len(access) || !access[i].Written {
			continue
		}
		outputs[i] = true
		if !access[i].ReadBeforeWrite {
			a.buf.Poison()
		}
	}
	return nil
}

// refSample gives the number of iterations of @reference's outermost loop
// to check: --ref-sample when given (0: the full check), else the entry's
// tmac.ref_sample attribute, else 0.
func refSample(cmd *cobra.Command, f *runFlags, entry *ir.Operation) (int64, error) {
	if cmd.Flags().Changed("ref-sample") {
		if f.refSample < 0 || f.refSample == 1 {
			return 0, fmt.Errorf("--ref-sample must be 0 (full check) or at least 2 (the first and the last iteration are always checked), not %d", f.refSample)
		}
		return f.refSample, nil
	}
	return plan.RefSample(entry)
}

func sampleSource(cmd *cobra.Command, n int64) string {
	if cmd.Flags().Changed("ref-sample") {
		return fmt.Sprintf("--ref-sample %d", n)
	}
	return fmt.Sprintf("%s = %d on the entry function", plan.RefSampleAttr, n)
}

func allZero(b *buffer.Buffer) bool {
	for i := 0; i < b.Len(); i++ {
		if b.Float(i) != 0 {
			return false
		}
	}
	return true
}

func elemString(b *buffer.Buffer, i int) string {
	if b.IsFloat() {
		return strconv.FormatFloat(b.Float(i), 'g', 6, 64)
	}
	return strconv.FormatInt(b.Int(i), 10)
}

// bench times the entry function.
func bench(w io.Writer, p *plan.Plan, gpu *plan.CUDA, entry *ir.Operation, args []*runArg, devArgs []plan.Value, f *runFlags) (*benchResult, error) {
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
	wait := func(l *plan.Launch) error { last = l.Kernel; return nil }
	run := func(i int) error {
		if err := p.Run(gpu, sets[i%len(sets)], wait); err != nil {
			return err
		}
		return gpu.Wait(last)
	}
	for i := 0; i < f.warmup; i++ {
		if err := run(i); err != nil {
			return nil, err
		}
	}
	times := make([]float64, f.reps)
	kernelTimes := make([]float64, f.reps)
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
		if err := p.Run(gpu, sets[i%len(sets)], wait); err != nil {
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
		if err := p.Run(gpu, sets[i%len(sets)], wait); err != nil {
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
	spin := min(2*host+time.Millisecond, time.Second)
	if err := cuda.Spin(uint64(spin.Nanoseconds())); err != nil {
		return nil, err
	}
	gpu.QueueKernels = true
	for i := range f.reps {
		gpu.QueuedRun(i)
		if err := p.Run(gpu, sets[i%len(sets)], wait); err != nil {
			gpu.QueueKernels = false
			return nil, err
		}
	}
	gpu.QueueKernels = false
	if err := gpu.Wait(last); err != nil {
		return nil, err
	}
	queued, err := gpu.Queued(f.reps)
	if err != nil {
		return nil, err
	}
	sort.Float64s(times)
	sort.Float64s(kernelTimes)
	sort.Float64s(queued)
	fmt.Fprintf(w, "bench: %d runs (%d warm-up, %d argument copies rotated): whole entry function median %.3f us, min %.3f us\n",
		f.reps, f.warmup, len(sets), times[len(times)/2]*1e6, times[0]*1e6)
	med, best := kernelTimes[len(kernelTimes)/2], kernelTimes[0]
	fmt.Fprintf(w, "bench: kernels alone: median %.3f us, min %.3f us\n", med*1e6, best*1e6)
	qmed, qbest := queued[len(queued)/2], queued[0]
	fmt.Fprintf(w, "bench: kernels queued (launch latency hidden): median %.3f us, min %.3f us\n", qmed*1e6, qbest*1e6)
	bytes := float64(total)
	if a, ok := entry.Attr("tmac.bytes").(*ir.IntegerAttr); ok {
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
	return &benchResult{Reps: f.reps, Warmup: f.warmup, RotatedCopies: len(sets),
		RunMedianS: times[len(times)/2], RunMinS: times[0], KernelMedianS: med, KernelMinS: best,
		QueuedMedianS: qmed, QueuedMinS: qbest,
		Flops: fl, Bytes: bytes}, nil
}
