package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tmac-dev/tmac/internal/explain"
	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/passes"
	"github.com/tmac-dev/tmac/passes/schedule"
)

type explainFlags struct {
	output     string
	iterations int
	format     string
}

func newExplainCmd() *cobra.Command {
	f := &explainFlags{}
	cmd := &cobra.Command{
		Use:   "explain FILE",
		Short: "Print the pipeline schedule tmac chose for each kernel (timeline, shared memory, mbarriers)",
		Long: `explain parses and verifies FILE, runs the default pipeline of
tmac compile (tmac compile --help lists it) and prints, for each kernel,
what the passes decided: the launch, the schedule (pipelined,
warp-specialised cooperative or ping-pong, persistent) and its stage
count; a timeline of the main loop — the prologue, the first
iterations and the drain: which slot each iteration waits for (and the
mbarrier parity), which slot it releases, which TMA loads it issues and
which are in flight; the tiles and their rings; the shared-memory map
(offset, size, alignment, reuse; the total against the 227 KB limit); and
every mbarrier group (what it guards, arrivals and transaction bytes per
phase, who waits and with which parity).

Everything comes from the passes' own record of what they did. A kernel
that is not in the simple tile-loop form still gets its shared-memory map
and barriers. Errors in FILE are reported as by tmac compile.`,
		Example: `  tmac explain examples/gemm_pipelined.tma
  tmac explain examples/add_pipelined.tma --iterations 8
  tmac explain examples/gemm_ws.tma --format=md -o schedule.md`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runExplain(cmd, f, args[0])
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&f.output, "output", "o", "-", "output file ('-' for stdout)")
	fl.IntVar(&f.iterations, "iterations", 0, "iterations of the main loop the timeline shows from the start (default: the stage count + 1)")
	fl.StringVar(&f.format, "format", "text", "text or md (Markdown)")
	return cmd
}

func runExplain(cmd *cobra.Command, f *explainFlags, in string) error {
	stderr := cmd.ErrOrStderr()
	if f.format != "text" && f.format != "md" {
		fmt.Fprintf(stderr, "tmac explain: error: --format must be text or md, not '%s'\n", f.format)
		return &exitError{2}
	}
	if f.iterations < 0 {
		fmt.Fprintf(stderr, "tmac explain: error: --iterations must not be negative\n")
		return &exitError{2}
	}
	if err := refuseOverwrite(stderr, "explain", in, f.output); err != nil {
		return err
	}
	steps, err := passes.ParsePipeline(defaultPipeline)
	if err != nil {
		fmt.Fprintln(stderr, "tmac explain: error:", err)
		return &exitError{2}
	}
	mod, _, sm, err := readModule(stderr, in, false)
	if err != nil {
		return err
	}
	fail := func(err error) error { return renderFailure(stderr, sm, err) }
	sched := schedule.NewSchedule()
	ctx := &passes.Context{Emit: func(d *ir.Diagnostic) { fmt.Fprint(stderr, d.Render(sm)) }, Schedule: sched}
	if err := passes.RunPipeline(mod, steps, ctx, nil); err != nil {
		return fail(err)
	}
	var sb strings.Builder
	explain.Write(&sb, mod, sched, explain.Options{Iterations: f.iterations, Markdown: f.format == "md", Source: sm.Line})
	return writeOutput(cmd.OutOrStdout(), f.output, sb.String())
}
