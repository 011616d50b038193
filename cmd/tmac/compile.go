package main

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tmac-dev/tmac/codegen"
	"github.com/tmac-dev/tmac/driver"
	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/passes"
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
const defaultPipeline = "builtin.module(outline-kernels,canonicalize,cse)"

func newCompileCmd() *cobra.Command {
	f := &compileFlags{}
	cmd := &cobra.Command{
		Use:   "compile FILE",
		Short: "Compile a tile program to PTX (or LLVM IR, or the IR after passes)",
		Long: `compile parses and verifies FILE, runs the compilation pipeline
(` + defaultPipeline + ` by default), lowers every kernel to LLVM IR
and runs llc (LLVM 22 NVPTX) to produce PTX for sm_90a.

--emit selects the output: mlir (IR after the passes), llvm (LLVM IR) or
ptx (default). The output goes to -o, or next to FILE with the matching
extension; nothing is written if compilation fails.`,
		Example: `  tmac compile saxpy.tma                 # writes saxpy.ptx
  tmac compile saxpy.tma --emit=llvm -o -
  tmac compile saxpy.tma --llc=/opt/llvm/bin/llc --mcpu=sm_90a -O2`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCompile(cmd, f, args[0])
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&f.output, "output", "o", "", "output file ('-' for stdout; default: FILE with the extension of --emit)")
	fl.StringVar(&f.emit, "emit", "ptx", "what to produce: mlir, llvm or ptx")
	fl.StringVar(&f.pipeline, "pass-pipeline", defaultPipeline, "pass pipeline to run before code generation")
	fl.BoolVar(&f.printAfterAll, "print-ir-after-all", false, "print the IR after every pass (to stderr)")
	fl.BoolVar(&f.allowUnregistered, "allow-unregistered-dialect", false, "accept ops of unknown dialects (they cannot be compiled)")
	fl.StringVar(&f.llc.Path, "llc", "", "llc to use (default: $TMAC_LLC, llc-22, /usr/lib/llvm-22/bin/llc, llc)")
	fl.StringVar(&f.llc.MCPU, "mcpu", "sm_90a", "target GPU")
	fl.IntVar(&f.llc.PTXVersion, "ptx-version", 0, "PTX ISA version, e.g. 80 (default: llc's)")
	fl.IntVarP(&f.llc.OptLevel, "opt-level", "O", 3, "llc optimisation level (0-3)")
	return cmd
}

var emitExt = map[string]string{"mlir": ".mlir.tma", "llvm": ".ll", "ptx": ".ptx"}

func runCompile(cmd *cobra.Command, f *compileFlags, in string) error {
	stderr := cmd.ErrOrStderr()
	ext, ok := emitExt[f.emit]
	if !ok {
		fmt.Fprintf(stderr, "tmac compile: error: --emit must be mlir, llvm or ptx, not '%s'\n", f.emit)
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
	if out != "-" && in != "-" {
		if same, _ := sameFile(in, out); same {
			fmt.Fprintf(stderr, "tmac compile: error: refusing to overwrite the input file %s\n", in)
			return &exitError{2}
		}
	}
	steps, err := passes.ParsePipeline(f.pipeline)
	if err != nil {
		fmt.Fprintln(stderr, "tmac compile: error:", err)
		return &exitError{2}
	}
	text, err := driver.ReadInput(in)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return &exitError{1}
	}
	file := in
	if in == "-" {
		file = "<stdin>"
	}
	sm := ir.NewSourceMgr()
	sm.Add(file, text)
	fail := func(err error) error {
		for _, d := range ir.AsDiagnostics(err) {
			fmt.Fprint(stderr, d.Render(sm))
		}
		return &exitError{1}
	}
	mod, err := driver.ParseChunk(driver.Chunk{File: file, Text: text, FirstLine: 1}, f.allowUnregistered)
	if err != nil {
		return fail(err)
	}
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
	var result string
	switch f.emit {
	case "mlir":
		result = ir.Print(mod, ir.PrintOptions{})
	default:
		out, err := codegen.Emit(mod)
		if err != nil {
			return fail(err)
		}
		result = out.Module.String()
		if f.emit == "ptx" {
			opts := f.llc
			// Raise the PTX version to what the instructions need, unless
			// the user asked for an older one explicitly.
			switch {
			case out.PTXVersion == 0:
			case opts.PTXVersion == 0:
				opts.PTXVersion = out.PTXVersion
			case opts.PTXVersion < out.PTXVersion:
				fmt.Fprintf(stderr, "tmac compile: error: %s needs PTX ISA %d.%d, but --ptx-version=%d was given\n",
					out.PTXReason, out.PTXVersion/10, out.PTXVersion%10, opts.PTXVersion)
				return &exitError{1}
			}
			ptx, err := toolchain.CompilePTX(result, opts)
			if err != nil {
				fmt.Fprintln(stderr, "tmac compile: error:", err)
				return &exitError{1}
			}
			result = ptx
		}
	}
	return writeOutput(cmd.OutOrStdout(), out, result)
}
