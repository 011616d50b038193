package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/tmac-dev/tmac/toolchain"
	"github.com/tmac-dev/tmac/tune"
)

// tmac tune (issue 7; package tune): tune build compiles one bundle per
// stage count, store stage count and schedule of a tile loop, here where
// llc is; tune run runs and times them on the GPU machine and ranks them.

type tuneBuildFlags struct {
	output      string
	stages      string
	storeStages string
	schedules   string
	loop        string
	pipeline    string
	generate    string
	params      []string
	llc         toolchain.LLCOptions
}

func newTuneCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tune",
		Short: "Autotune a tile loop's stages and schedule: build variants here, run them on the GPU",
		Long: `tune finds the best schedule of a simple-form tile loop (an scf.for
loading tiles with tmac.tma.load) in two steps, because the GPU machine
has no llc:

  tmac tune build FILE.tma... -o DIR   compiles one bundle per variant
  tmac tune run DIR                    runs and times them on the GPU

A variant sets, on the parsed program, the loop's tmac.stages, the
tmac.store_stages of the loop holding the tmac.tma.store ops (when there
are any) and the schedule: "pipelined" (no tmac.warp_specialize:
tma-pipeline, every thread runs the loop), "ws" (tmac.warp_specialize:
a TMA producer warpgroup is added in front of the program's warpgroups,
which become the consumers) or "pingpong" (tmac.warp_specialize =
"pingpong": a persistent program written for one warpgroup runs in two
consumer warpgroups that take its tiles in turn). Tile shapes are the
programs' own: give one program per tile shape, or a command that writes
one per combination of its parameters (tune build --generate), to tune
them together.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintln(cmd.ErrOrStderr(), "tmac tune: error: give a subcommand: build or run (tmac tune --help)")
			return &exitError{2}
		},
	}
	cmd.AddCommand(newTuneBuildCmd(), newTuneRunCmd())
	return cmd
}

func newTuneBuildCmd() *cobra.Command {
	f := &tuneBuildFlags{}
	cmd := &cobra.Command{
		Use:   "build [FILE.tma...] [--generate CMD --param NAME=V,...] -o DIR",
		Short: "Compile one bundle per stage count, store stage count and schedule of a tile loop",
		Long: `build finds the tunable loop of each FILE: an scf.for that loads tiles with
tmac.tma.load (--loop picks one when there are several: its index in
program order, its induction variable (%k) or its function (@name)). For
every combination of --stages, --store-stages and --schedules it sets the
loop's attributes on the parsed IR (tmac.stages; tmac.store_stages on the
loop holding the tmac.tma.store ops, the loop itself or, in a persistent
kernel, the enclosing tile loop; tmac.warp_specialize added for "ws",
removed for "pipelined"), compiles the program with the default pipeline
and writes DIR/NAME.tmab, NAME being FILE's base name, the schedule and
the stage counts (gemm-pipelined-s3, add-ws-s4-ss2).

A combination that fails to compile is skipped, its reason recorded (over
the 227 KB of shared memory a block may use, warp-specialize needing a
block of whole warpgroups, a loop nested in a tile loop under the
pipelined schedule, "pingpong" without a persistent tile loop, ...). The
warp-specialize pass adds a producer warpgroup, so under "ws" a program
written for one warpgroup (128 threads) becomes 256 threads with one
consumer, under "pingpong" 384 threads with two.
Without --store-stages, or when a program stores no tiles, the store
stage count stays as written.

--generate CMD tunes what is not an attribute of the loop (the tile shape,
the K tile, the cluster size, the split factor) as well: CMD is run with
sh -c once per combination of the --param values (the first parameter
varying slowest), with {NAME} replaced by each parameter's value and {out}
by the program to write, DIR/src/NAME1V1-NAME2V2.tma (bm128-bn256.tma). A
command that exits 3 refuses the combination (the first line of its
standard error is recorded as the reason); any other failure stops the
build. Each generated program is then tuned like a FILE, and its variants
carry the parameters (bm128-bn256-ws-s3, "params" in tune.json and in
tune run's results). bench/gpu/gen_gemm.py is such a command.

DIR/tune.json lists the sources and the variants (parameters, bundle,
status, reason); tmac tune run DIR runs them. DIR is created; it must be
empty or hold an earlier tune build, whose files are replaced.

Exit status: 0 when at least one variant compiled, 1 when none did or a
program is invalid, 2 usage error.`,
		Example: `  tmac tune build examples/gemm_pipelined.tma -o build/tune/gemm
  tmac tune build examples/gemm_pipelined.tma examples/gemm_ws.tma -o build/tune/gemm --stages 2,3,4,5
  tmac tune build examples/add_pipelined.tma -o build/tune/add --store-stages 1,2 --schedules pipelined
  tmac tune build -o build/tune/gemm-1024 --stages 4,6 --schedules pipelined \
      --generate 'python3 bench/gpu/gen_gemm.py --m 1024 --n 1024 --k 1024 --dtype bf16 --out bf16 --design tiles --bm {bm} --bn {bn} -o {out}' \
      --param bm=64,128 --param bn=64,128,256`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runTuneBuild(cmd, f, args)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&f.output, "output", "o", "", "directory for the bundles and tune.json (required)")
	fl.StringVar(&f.stages, "stages", "2,3,4", "stage counts (tmac.stages) to try, comma-separated")
	fl.StringVar(&f.storeStages, "store-stages", "", "store stage counts (tmac.store_stages) to try (default: as written)")
	fl.StringVar(&f.schedules, "schedules", "pipelined,ws", "schedules to try: pipelined, ws, pingpong")
	fl.StringVar(&f.loop, "loop", "", "the loop to tune when a program has several: index, %iv or @function")
	fl.StringVar(&f.generate, "generate", "", "a command (sh -c) writing a program to {out} for each combination of the --param values ({NAME})")
	fl.StringArrayVar(&f.params, "param", nil, "a parameter of --generate and its values: NAME=V1,V2,... (repeatable)")
	fl.StringVar(&f.pipeline, "pass-pipeline", defaultPipeline, "pass pipeline")
	addLLCFlags(fl, &f.llc, "llc to use")
	return cmd
}

// runTuneBuild checks the flags and builds the variants.
func runTuneBuild(cmd *cobra.Command, f *tuneBuildFlags, files []string) error {
	stderr := cmd.ErrOrStderr()
	usage := func(format string, args ...any) error {
		fmt.Fprintf(stderr, "tmac tune build: error: "+format+"\n", args...)
		return &exitError{2}
	}
	if f.output == "" {
		return usage("give the output directory with -o DIR")
	}
	if f.llc.OptLevel < 0 || f.llc.OptLevel > 3 {
		return usage("-O must be 0 to 3")
	}
	if len(f.params) > 0 && f.generate == "" {
		return usage("--param needs --generate")
	}
	if len(files) == 0 && f.generate == "" {
		return usage("give the programs to tune (FILE.tma...), or --generate CMD with --param NAME=V1,V2,...")
	}
	opts := tune.BuildOptions{Output: f.output, Loop: f.loop, Pipeline: f.pipeline, LLC: f.llc, TmacVersion: Version, Out: cmd.OutOrStdout()}
	var err error
	if opts.Stages, err = tune.ParseStages("--stages", f.stages); err != nil {
		return usage("%v", err)
	}
	if cmd.Flags().Changed("store-stages") {
		if opts.StoreStages, err = tune.ParseStages("--store-stages", f.storeStages); err != nil {
			return usage("%v", err)
		}
	}
	if opts.Schedules, err = tune.ParseSchedules(f.schedules); err != nil {
		return usage("%v", err)
	}
	if f.generate != "" {
		opts.Generator = &tune.Generator{Command: f.generate}
		for _, s := range f.params {
			p, err := tune.ParseParam(s)
			if err != nil {
				return usage("%v", err)
			}
			opts.Generator.Params = append(opts.Generator.Params, p)
		}
	}
	_, err = tune.Build(files, opts)
	return reportRunError(stderr, "tmac tune build", err)
}
