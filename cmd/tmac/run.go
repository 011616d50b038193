package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/tmac-dev/tmac/runner"
)

func newRunCmd() *cobra.Command {
	f := &runner.Options{}
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

An output that neither the run (its kernels and copies) nor @reference
writes is warned of on stderr, at the entry function: the check would
compare the values it was given with themselves.

--timeout bounds each launch: on the GPU a launch not finished by then is
reported as a deadlock; on the emulator (--target=emu; default 10m there)
it is stopped and reported with the kernel and the blocks it finished
(exit status 1, nothing dumped). --progress[=INTERVAL] reports an emulated launch's
blocks done on stderr every INTERVAL (2s when given alone, and by default
when stderr is a terminal).

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
	fl.StringVar(&f.Entry, "entry", "", "function to run (default: the only public func.func other than @reference)")
	fl.StringArrayVar(&f.Shapes, "shape", nil, "shape of a dynamically shaped memref argument, argN=AxB (repeatable)")
	fl.StringArrayVar(&f.Sets, "set", nil, "value of a scalar argument, argN=VALUE (repeatable)")
	fl.Int64Var(&f.Seed, "seed", 0, "random seed of the inputs")
	fl.StringVar(&f.Dist, "dist", "normal", "input distribution: normal, uniform or int")
	fl.Float64Var(&f.RTol, "rtol", -1, "relative tolerance (default: from the least precise element type involved)")
	fl.Float64Var(&f.ATol, "atol", -1, "absolute tolerance (default: rtol times the output's largest |reference|)")
	fl.BoolVar(&f.NoCheck, "no-check", false, "skip the reference check")
	fl.Int64Var(&f.RefSample, "ref-sample", 0, "check only `N` (>= 2) iterations of @reference's outermost loop, comparing the elements they write; 0: full check (default: tmac.ref_sample of the entry, else 0)")
	fl.BoolVar(&f.Bench, "bench", false, "time the entry function")
	fl.IntVar(&f.Warmup, "warmup", 5, "warm-up runs before timing (--bench)")
	fl.IntVar(&f.Reps, "reps", 50, "timed runs (--bench)")
	fl.DurationVar(&f.Timeout, "timeout", 10*time.Second, "watchdog: a GPU launch not finished by then is reported as a deadlock; an emulated launch (--target=emu, where the default is 10m) is stopped, with the blocks it finished; 0: wait for ever")
	fl.DurationVar(&f.Progress, "progress", 0, "report an emulated launch's progress (blocks done) on stderr every `INTERVAL` (--progress alone: 2s; default: 2s when stderr is a terminal, else none; 0: none)")
	fl.Lookup("progress").NoOptDefVal = progressEvery.String()
	fl.IntVar(&f.Device, "device", 0, "CUDA device ordinal")
	fl.StringVar(&f.Pipeline, "pass-pipeline", defaultPipeline, "pass pipeline (for .tma input)")
	addLLCFlags(fl, &f.LLC, "llc to use (for .tma input)")
	fl.StringVar(&f.DumpDir, "dump-dir", "", "write the inputs and GPU outputs as .npy files and a manifest.json into `DIR` after the run")
	fl.StringVar(&f.Target, "target", "gpu", "where the kernels run: gpu (the CUDA driver) or emu (the CPU emulator: no GPU or llc needed)")
	fl.Int64Var(&f.EmuSeed, "emu-seed", 0, "seed of the emulator's scheduling (which thread runs, when copies complete)")
	fl.BoolVar(&f.EmuLazyStores, "emu-lazy-stores", false, "with --target=emu, keep every TMA store reading its shared memory until no thread of the block can run (a write a store may still be reading, for want of a cp.async.bulk.wait_group.read, is then reported wherever it can happen)")
	fl.BoolVar(&f.BankConflicts, "bank-conflicts", false, "with --target=emu, report each op's shared-memory bank conflicts: the wavefronts its warps' loads and stores take on the 32 banks against the conflict-free ideal")
	return cmd
}

// runRun runs the program with the options the flags set and reports a
// failure on stderr.
func runRun(cmd *cobra.Command, f *runner.Options, in string) error {
	opts := *f
	opts.RefSampleSet = cmd.Flags().Changed("ref-sample")
	opts.Dump = cmd.Flags().Changed("dump-dir")
	opts.Out, opts.Diag = cmd.OutOrStdout(), cmd.ErrOrStderr()
	if !cmd.Flags().Changed("timeout") && opts.Target == "emu" {
		opts.Timeout = emuTimeout
	}
	if !cmd.Flags().Changed("progress") && isTerminal(opts.Diag) {
		opts.Progress = progressEvery
	}
	_, err := runner.Run(in, opts)
	return reportRunError(cmd.ErrOrStderr(), "tmac run", err)
}

// emuTimeout bounds an emulated launch when --timeout is not given: the
// emulator runs kernels thousands of times slower than the GPU, so the
// GPU's default would stop programs the emulator runs correctly (a GEMM
// of the examples takes seconds).
const emuTimeout = 10 * time.Minute

// progressEvery is how often a long emulation reports its progress by
// default.
const progressEvery = 2 * time.Second

// isTerminal reports whether w is a terminal (a character device).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// reportRunError reports a runner failure as the command cmd and turns it
// into the exit status.
func reportRunError(stderr io.Writer, cmd string, err error) error {
	if err == nil {
		return nil
	}
	var re *runner.Error
	if !errors.As(err, &re) {
		fmt.Fprintf(stderr, "%s: error: %v\n", cmd, err)
		return &exitError{1}
	}
	re.Report(stderr, cmd)
	return &exitError{re.Status}
}
