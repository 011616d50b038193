package main

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tmac-dev/tmac/bundle"
	"github.com/tmac-dev/tmac/codegen"
	"github.com/tmac-dev/tmac/driver"
	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/passes"
	"github.com/tmac-dev/tmac/runner"
	"github.com/tmac-dev/tmac/runtime/plan"
	"github.com/tmac-dev/tmac/toolchain"
)

type compileFlags struct {
	output            string
	emit              string
	pipeline          string
	printAfterAll     bool
	allowUnregistered bool
	llc               toolchain.LLCOptions
}

// defaultPipeline is what `tmac compile` runs before code generation.
var defaultPipeline = driver.DefaultPipeline

func newCompileCmd() *cobra.Command {
	f := &compileFlags{}
	cmd := &cobra.Command{
		Use:   "compile FILE",
		Short: "Compile a tile program to PTX (or LLVM IR, or the IR after passes)",
		Long: `compile parses and verifies FILE, runs the compilation pipeline
(below; --pass-pipeline replaces it), lowers every kernel to LLVM IR
and runs llc (LLVM 22 NVPTX) to produce PTX for sm_90a.

--emit selects the output: mlir (IR after the passes), llvm (LLVM IR),
ptx (default) or bundle (a .tmab file: a tar of module.tma, kernels.ptx,
kernels.ll and manifest.json with each kernel's parameter layout and the
host plan of each public host function, which tmac run and Python's
tmac.load run on a machine without llc; host code a plan cannot hold is
an error). The output goes to -o, or next
to FILE with the matching extension; nothing is written if compilation
fails.

The default pipeline, pass by pass:

` + driver.DefaultPipelineTable("  "),
		Example: `  tmac compile saxpy.tma                 # writes saxpy.ptx
  tmac compile saxpy.tma --emit=llvm -o -
  tmac compile saxpy.tma --emit=bundle      # writes saxpy.tmab
  tmac compile saxpy.tma --llc=/opt/llvm/bin/llc --mcpu=sm_90a -O2`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCompile(cmd, f, args[0])
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&f.output, "output", "o", "", "output file ('-' for stdout; default: FILE with the extension of --emit)")
	fl.StringVar(&f.emit, "emit", "ptx", "what to produce: mlir, llvm, ptx or bundle")
	fl.StringVar(&f.pipeline, "pass-pipeline", defaultPipeline, "pass pipeline to run before code generation")
	fl.BoolVar(&f.printAfterAll, "print-ir-after-all", false, "print the IR after every pass (to stderr)")
	fl.BoolVar(&f.allowUnregistered, "allow-unregistered-dialect", false, "accept ops of unknown dialects (they cannot be compiled)")
	addLLCFlags(fl, &f.llc, "llc to use (default: $TMAC_LLC, llc-22, /usr/lib/llvm-22/bin/llc, llc)")
	fl.IntVar(&f.llc.PTXVersion, "ptx-version", 0, "PTX ISA version, e.g. 80 (default: llc's)")
	return cmd
}

// addLLCFlags adds the flags that set how llc runs (tmac compile, run and
// tune build): --llc, described by llcHelp, --mcpu and -O.
func addLLCFlags(fl *pflag.FlagSet, llc *toolchain.LLCOptions, llcHelp string) {
	fl.StringVar(&llc.Path, "llc", "", llcHelp)
	fl.StringVar(&llc.MCPU, "mcpu", "sm_90a", "target GPU")
	fl.IntVarP(&llc.OptLevel, "opt-level", "O", 3, "llc optimisation level (0-3)")
	fl.StringVar(&llc.Libdevice, "libdevice", "", "NVIDIA's libdevice.10.bc, or its directory, for kernels calling accurate math functions (default: $TMAC_LIBDEVICE, then the CUDA toolkit and where scripts/install-deps.sh puts it)")
}

var emitExt = map[string]string{"mlir": ".mlir.tma", "llvm": ".ll", "ptx": ".ptx", "bundle": bundle.Ext}

func runCompile(cmd *cobra.Command, f *compileFlags, in string) error {
	stderr := cmd.ErrOrStderr()
	ext, ok := emitExt[f.emit]
	if !ok {
		fmt.Fprintf(stderr, "tmac compile: error: --emit must be mlir, llvm, ptx or bundle, not '%s'\n", f.emit)
		return &exitError{2}
	}
	if f.llc.OptLevel < 0 || f.llc.OptLevel > 3 {
		fmt.Fprintf(stderr, "tmac compile: error: -O must be 0 to 3\n")
		return &exitError{2}
	}
	out := f.output
	if out == "" {
		if in == "-" {
			out = "-"
		} else {
			out = strings.TrimSuffix(in, filepath.Ext(in)) + ext
		}
	}
	if err := refuseOverwrite(stderr, "compile", in, out); err != nil {
		return err
	}
	steps, err := passes.ParsePipeline(f.pipeline)
	if err != nil {
		fmt.Fprintln(stderr, "tmac compile: error:", err)
		return &exitError{2}
	}
	mod, file, sm, err := readModule(stderr, in, f.allowUnregistered)
	if err != nil {
		return err
	}
	fail := func(err error) error { return renderFailure(stderr, sm, err) }
	var warnings []*ir.Diagnostic
	instr := &passes.Instrumentation{After: func(s *passes.Step, op *ir.Operation) {
		if f.printAfterAll {
			fmt.Fprintf(stderr, "// -----// IR Dump After %s //----- //\n%s\n", s.PassName, ir.Print(op, ir.PrintOptions{}))
		}
	}}
	if err := passes.RunPipeline(mod, steps, &passes.Context{Emit: func(d *ir.Diagnostic) { warnings = append(warnings, d) }}, instr); err != nil {
		return fail(err)
	}
	for _, w := range warnings {
		fmt.Fprint(stderr, w.Render(sm))
	}
	// Tensor maps the host creates over statically shaped memrefs are
	// checked now rather than when tmac run creates them.
	if err := plan.CheckTensorMaps(mod); err != nil {
		return fail(err)
	}
	// A bundle carries the host plan of every entry function: host code
	// outside the plan language fails here, at the op, before llc runs.
	if f.emit == "bundle" {
		if _, err := (&runner.Program{Module: mod}).Entries(); err != nil {
			return fail(err)
		}
	}
	var result string
	switch f.emit {
	case "mlir":
		result = ir.Print(mod, ir.PrintOptions{})
	default:
		cg, err := codegen.Emit(mod)
		if err != nil {
			return fail(err)
		}
		llvmIR := cg.Module.String()
		result = llvmIR
		if f.emit == "llvm" {
			break
		}
		opts := f.llc
		// Raise the PTX version to what the instructions need, unless
		// the user asked for an older one explicitly.
		switch {
		case cg.PTXVersion == 0:
		case opts.PTXVersion == 0:
			opts.PTXVersion = cg.PTXVersion
		case opts.PTXVersion < cg.PTXVersion:
			fmt.Fprintf(stderr, "tmac compile: error: %s needs PTX ISA %d.%d, but --ptx-version=%d was given\n",
				cg.PTXReason, cg.PTXVersion/10, cg.PTXVersion%10, opts.PTXVersion)
			return &exitError{1}
		}
		if err := cg.CheckLibdevice(opts.Libdevice); err != nil {
			return fail(err)
		}
		ptx, err := toolchain.CompilePTX(llvmIR, opts)
		if err != nil {
			fmt.Fprintln(stderr, "tmac compile: error:", err)
			return &exitError{1}
		}
		result = ptx
		if f.emit == "bundle" {
			prog := &runner.Program{Module: mod, Source: file, LLVM: llvmIR, PTX: ptx, Target: opts.MCPU}
			data, err := prog.Bundle(Version)
			if err != nil {
				fmt.Fprintln(stderr, "tmac compile: error:", err)
				return &exitError{1}
			}
			result = string(data)
		}
	}
	return writeOutput(cmd.OutOrStdout(), out, result)
}
