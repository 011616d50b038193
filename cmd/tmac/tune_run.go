package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/tmac-dev/tmac/runner"
	"github.com/tmac-dev/tmac/tune"
)

func newTuneRunCmd() *cobra.Command {
	f := &tune.RunOptions{}
	cmd := &cobra.Command{
		Use:   "run DIR...",
		Short: "Run and time every variant of a tune build on the GPU and rank them",
		Long: `run reads DIR/tune.json (from tmac tune build) and runs every compiled
variant in this process the way tmac run --bench does: random inputs from
--seed (the same for every variant: drawn once per distinct argument
list and copied for the others), the check against @reference (run
on the CPU once per distinct @reference and argument types, and reused,
since the inputs are then the same),
then CUDA-event timings of the kernels (--warmup runs, then --reps timed
ones, median). A variant whose check fails, whose launch fails or which
hangs (no result within --timeout) is reported and left out of the
ranking; after a hang the GPU is still busy with it, so the variants
after it are not run (rerun with --filter to skip it).

Several DIRs (one tune build per design of one problem) run one after
the other in this process, sharing @reference's results: a reference
computed for the first is reused by the others when it and the inputs are
the same. After a hang the later directories are not run.

It prints a table of the passing variants sorted by median kernel time
with TFLOP/s (from the wgmma count, or the entry's tmac.flops) or TB/s
(the entry's memref bytes, or tmac.bytes) and marks the best, then the
variants that failed or were skipped; it writes DIR/tune-results.json
and each variant's tmac run output to DIR/logs/NAME.log.

Exit status: 0 when at least one variant passed (in any DIR), 1
otherwise, 2 usage error, 3 no GPU.`,
		Example: `  tmac tune run build/tune/gemm
  tmac tune run build/tune/gemm --reps 30 --warmup 5 --filter 'ws'
  tmac tune run build/tune/g4096/coop256 build/tune/g4096/pp128`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				fmt.Fprintln(cmd.ErrOrStderr(), "tmac tune run: error: give the directories of one or more tune builds (tmac tune run DIR...)")
				return &exitError{2}
			}
			return runTuneRun(cmd, f, args)
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&f.Reps, "reps", 50, "timed runs per variant")
	fl.IntVar(&f.Warmup, "warmup", 5, "warm-up runs per variant")
	fl.DurationVar(&f.Timeout, "timeout", 10*time.Second, "watchdog: a launch not finished by then is reported as a hang")
	fl.IntVar(&f.Device, "device", 0, "CUDA device ordinal")
	fl.Int64Var(&f.Seed, "seed", 0, "random seed of the inputs")
	fl.StringVar(&f.Dist, "dist", "normal", "input distribution: normal, uniform or int")
	fl.Float64Var(&f.RTol, "rtol", -1, "relative tolerance (default: as tmac run)")
	fl.Float64Var(&f.ATol, "atol", -1, "absolute tolerance (default: as tmac run)")
	fl.StringArrayVar(&f.Shapes, "shape", nil, "shape of a dynamically shaped memref argument, argN=AxB (repeatable)")
	fl.StringArrayVar(&f.Sets, "set", nil, "value of a scalar argument, argN=VALUE (repeatable)")
	fl.Int64Var(&f.RefSample, "ref-sample", 0, "as tmac run --ref-sample (default: the entry's tmac.ref_sample)")
	fl.StringVar(&f.Filter, "filter", "", "run only the variants whose name matches this regular expression")
	return cmd
}

// runTuneRun runs the variants of the tune builds in dirs, sharing
// @reference's results.
func runTuneRun(cmd *cobra.Command, f *tune.RunOptions, dirs []string) error {
	stderr, stdout := cmd.ErrOrStderr(), cmd.OutOrStdout()
	opts := *f
	opts.RefSampleSet = cmd.Flags().Changed("ref-sample")
	opts.TmacVersion, opts.Out = Version, stdout
	opts.Problem = func(err error) { fmt.Fprintln(stderr, "tmac tune run: error:", err) }
	opts.RefCache = runner.NewRefCache()
	// Each directory's failure is reported as it happens; the exit status
	// is 0 when any directory had a passing variant, else the last
	// failure's.
	var failure error
	passed := false
	for i, dir := range dirs {
		if len(dirs) > 1 {
			if i > 0 {
				fmt.Fprintln(stdout)
			}
			fmt.Fprintf(stdout, "== %s\n", dir)
		}
		res, err := tune.Run(dir, opts)
		if err == nil {
			passed = true
		} else {
			failure = reportRunError(stderr, "tmac tune run", err)
			var re *runner.Error
			if errors.As(err, &re) && (re.Status == runner.StatusUsage || re.Status == runner.StatusNoDevice) {
				return failure
			}
		}
		if res != nil && res.Hung() {
			if i+1 < len(dirs) {
				fmt.Fprintf(stderr, "tmac tune run: a variant of %s hung the GPU: %d later directories not run\n", dir, len(dirs)-i-1)
			}
			break
		}
	}
	if passed {
		return nil
	}
	return failure
}
