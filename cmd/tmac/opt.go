package main

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tmac-dev/tmac/driver"
	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/passes"
	"github.com/tmac-dev/tmac/runner"
)

type optFlags struct {
	output            string
	pipeline          string
	split             bool
	verifyDiagnostics bool
	printAfterAll     bool
	printBefore       []string
	printAfter        []string
	generic           bool
	debugInfo         bool
	allowUnregistered bool
	// passes named as flags (--cse), in command-line order
	passFlags []passFlag
}

type passFlag struct {
	name string
	opts string
}

// passFlagValue records each --pass-name[=opts] occurrence in order.
type passFlagValue struct {
	name string
	list *[]passFlag
}

func (v *passFlagValue) String() string { return "" }

// Type says "bool" so that help shows --cse rather than --cse=VALUE; the
// flag still takes options: --tma-pipeline="stages=4".
func (v *passFlagValue) Type() string { return "bool" }
func (v *passFlagValue) Set(s string) error {
	if s == "true" {
		s = ""
	}
	*v.list = append(*v.list, passFlag{v.name, s})
	return nil
}

func newOptCmd() *cobra.Command {
	f := &optFlags{}
	cmd := &cobra.Command{
		Use:   "opt [FILE]",
		Short: "Parse, verify, transform and print IR (the mlir-opt of tmac)",
		Long: `opt parses a module (FILE, or standard input when FILE is absent or "-"),
verifies it, runs the requested passes and prints the result.

Passes are given as flags (--cse --canonicalize, or --tma-pipeline="stages=4"),
in order, or as a textual pipeline with --pass-pipeline. Single-dash spellings
(-cse, -split-input-file) are accepted as in mlir-opt.`,
		Example: `  tmac opt kernel.tma --canonicalize --cse -o out.tma
  tmac opt kernel.tma --pass-pipeline='builtin.module(canonicalize,cse)'
  tmac opt invalid.tma --split-input-file --verify-diagnostics`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			in := "-"
			if len(args) == 1 {
				in = args[0]
			}
			return runOpt(cmd, f, in)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&f.output, "output", "o", "-", "write the result to this file (written only on success)")
	fl.StringVar(&f.pipeline, "pass-pipeline", "", "textual pass pipeline, e.g. 'builtin.module(canonicalize,cse)'")
	fl.BoolVar(&f.split, "split-input-file", false, "split the input at '// -----' lines and process each part separately")
	fl.BoolVar(&f.verifyDiagnostics, "verify-diagnostics", false, "check diagnostics against expected-error/-warning/-note/-remark annotations")
	fl.BoolVar(&f.printAfterAll, "print-ir-after-all", false, "print the IR after every pass (to stderr)")
	fl.StringSliceVar(&f.printBefore, "print-ir-before", nil, "print the IR before the named passes (to stderr)")
	fl.StringSliceVar(&f.printAfter, "print-ir-after", nil, "print the IR after the named passes (to stderr)")
	fl.BoolVar(&f.generic, "print-op-generic", false, "print every op in the generic form")
	fl.BoolVar(&f.debugInfo, "print-debuginfo", false, "print op locations")
	fl.BoolVar(&f.allowUnregistered, "allow-unregistered-dialect", false, "accept ops of unknown dialects (generic form)")
	// mlir-opt spellings, for users and tests moving between the tools.
	fl.BoolVar(&f.generic, "mlir-print-op-generic", false, "alias of --print-op-generic")
	fl.BoolVar(&f.debugInfo, "mlir-print-debuginfo", false, "alias of --print-debuginfo")
	_ = fl.MarkHidden("mlir-print-op-generic")
	_ = fl.MarkHidden("mlir-print-debuginfo")
	for _, info := range passes.All() {
		help := info.Summary
		if len(info.Options) > 0 {
			var os []string
			for _, o := range info.Options {
				os = append(os, fmt.Sprintf("%s=%s", o.Name, o.Default))
			}
			help += ` (options, as --` + info.Name + `="k=v ...": ` + strings.Join(os, " ") + ")"
		}
		fl.Var(&passFlagValue{info.Name, &f.passFlags}, info.Name, help)
		fl.Lookup(info.Name).NoOptDefVal = "true"
	}
	fl.SetNormalizeFunc(func(_ *pflag.FlagSet, name string) pflag.NormalizedName { return pflag.NormalizedName(name) })
	return cmd
}

func buildSteps(f *optFlags) ([]*passes.Step, error) {
	if f.pipeline != "" && len(f.passFlags) > 0 {
		return nil, fmt.Errorf("--pass-pipeline cannot be combined with individual pass flags")
	}
	if f.pipeline != "" {
		return passes.ParsePipeline(f.pipeline)
	}
	var steps []*passes.Step
	for _, pf := range f.passFlags {
		opts, err := passes.ParseOptionString(pf.opts)
		if err != nil {
			return nil, err
		}
		p, err := passes.Instantiate(pf.name, opts)
		if err != nil {
			return nil, err
		}
		steps = append(steps, &passes.Step{PassName: pf.name, Pass: p})
	}
	if err := passes.CheckOrder(steps); err != nil {
		return nil, err
	}
	return steps, nil
}

func runOpt(cmd *cobra.Command, f *optFlags, in string) error {
	stderr := cmd.ErrOrStderr()
	steps, err := buildSteps(f)
	if err != nil {
		fmt.Fprintln(stderr, "tmac opt: error:", err)
		return &exitError{2}
	}
	if err := refuseOverwrite(stderr, "opt", in, f.output); err != nil {
		return err
	}
	file, text, sm, err := readSource(stderr, in)
	if err != nil {
		return err
	}
	printOpts := ir.PrintOptions{Generic: f.generic, DebugInfo: f.debugInfo}
	var outputs []string
	failed := false
	for _, c := range driver.Split(file, text, f.split) {
		var diags []*ir.Diagnostic
		emit := func(d *ir.Diagnostic) { diags = append(diags, d) }
		out, err := processChunk(c, f, steps, printOpts, emit, stderr)
		if err != nil {
			diags = append(diags, ir.AsDiagnostics(err)...)
		}
		if f.verifyDiagnostics {
			exps, perr := driver.ParseExpectations(c)
			if perr != nil {
				fmt.Fprintln(stderr, perr)
				failed = true
				continue
			}
			for _, p := range driver.CheckDiagnostics(c, diags, exps) {
				fmt.Fprintln(stderr, p)
				failed = true
			}
			outputs = append(outputs, out)
			continue
		}
		for _, d := range diags {
			fmt.Fprint(stderr, d.Render(sm))
			if d.Severity == ir.SevError {
				failed = true
			}
		}
		outputs = append(outputs, out)
	}
	if failed {
		return &exitError{1}
	}
	if f.verifyDiagnostics {
		return nil
	}
	return writeOutput(cmd.OutOrStdout(), f.output, strings.Join(outputs, "// -----\n"))
}

// processChunk parses, verifies, transforms and prints one chunk.
func processChunk(c driver.Chunk, f *optFlags, steps []*passes.Step, po ir.PrintOptions, emit func(*ir.Diagnostic), dump io.Writer) (string, error) {
	mod, err := driver.ParseChunk(c, f.allowUnregistered)
	if err != nil {
		return "", err
	}
	instr := &passes.Instrumentation{
		Before: func(s *passes.Step, op *ir.Operation) {
			if contains(f.printBefore, s.PassName) {
				fmt.Fprintf(dump, "// -----// IR Dump Before %s //----- //\n%s\n", s.PassName, ir.Print(op, po))
			}
		},
		After: func(s *passes.Step, op *ir.Operation) {
			if f.printAfterAll || contains(f.printAfter, s.PassName) {
				fmt.Fprintf(dump, "// -----// IR Dump After %s //----- //\n%s\n", s.PassName, ir.Print(op, po))
			}
		},
	}
	if err := passes.RunPipeline(mod, steps, &passes.Context{Emit: emit}, instr); err != nil {
		return "", err
	}
	// mlir-opt ends each module with an empty line; so does tmac.
	return ir.Print(mod, po) + "\n", nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// writeOutput writes text to stdout or atomically to a file.
func writeOutput(stdout io.Writer, path, text string) error {
	if path == "-" {
		_, err := io.WriteString(stdout, text)
		return err
	}
	// A descriptor's name (/dev/stdout, /dev/fd/N, /proc/self/fd/N: links
	// to whatever the descriptor is, a terminal, a pipe or a file the
	// shell redirected it to) is written through, appending where the
	// shell would, and so is a device or pipe (/dev/null, a FIFO):
	// renaming a temporary file over either would replace the link or
	// the device. A symbolic link to a file is followed: the file it
	// names is replaced and the link stays.
	if isDescriptorPath(path) {
		return writeInPlace(path, text, os.O_APPEND)
	}
	if resolved, err := filepath.EvalSymlinks(path); err == nil {
		path = resolved
	}
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
		return writeInPlace(path, text, 0)
	}
	dir := filepath.Dir(path)
	tmp, err := createOutputTemp(dir, path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "tmac: error:", err)
		return &exitError{1}
	}
	if _, err := tmp.WriteString(text); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		fmt.Fprintln(os.Stderr, "tmac: error:", err)
		return &exitError{1}
	}
	tmp.Close()
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		fmt.Fprintln(os.Stderr, "tmac: error:", err)
		return &exitError{1}
	}
	return nil
}

// isDescriptorPath reports whether path names an open descriptor.
func isDescriptorPath(path string) bool {
	switch filepath.Clean(path) {
	case "/dev/stdout", "/dev/stderr":
		return true
	}
	return strings.HasPrefix(path, "/dev/fd/") || strings.HasPrefix(path, "/proc/self/fd/")
}

// writeInPlace writes text into an existing device, pipe or descriptor
// (flag: os.O_APPEND or 0).
func writeInPlace(path, text string, flag int) error {
	f, err := os.OpenFile(path, os.O_WRONLY|flag, 0)
	if err == nil {
		_, err = io.WriteString(f, text)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "tmac: error:", err)
		return &exitError{1}
	}
	return nil
}

// createOutputTemp creates the temporary file an output is written to
// before it is renamed over path: in path's directory (so the rename is
// atomic), with an unpredictable name, never an existing file, and with
// the permissions a new file gets (0666 less the umask) or those of the
// file it replaces, not os.CreateTemp's 0600.
func createOutputTemp(dir, path string) (*os.File, error) {
	perm := os.FileMode(0o666)
	if st, err := os.Stat(path); err == nil {
		perm = st.Mode().Perm()
	}
	var b [8]byte
	for try := 0; ; try++ {
		if _, err := rand.Read(b[:]); err != nil {
			return nil, err
		}
		name := filepath.Join(dir, ".tmac-"+hex.EncodeToString(b[:]))
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if err == nil {
			if perm != 0o666 {
				// The umask may have taken bits the replaced file had.
				_ = f.Chmod(perm)
			}
			return f, nil
		}
		if !errors.Is(err, fs.ErrExist) || try == 100 {
			return nil, err
		}
	}
}

// refuseOverwrite fails when out names the input file: the same file by
// any path (a symbolic or hard link, another relative spelling), or, when
// the input is standard input, the file standard input reads.
func refuseOverwrite(stderr io.Writer, cmd, in, out string) error {
	if out == "-" {
		return nil
	}
	if in == "-" {
		if si, err := os.Stdin.Stat(); err == nil && si.Mode().IsRegular() {
			if so, err := os.Stat(out); err == nil && os.SameFile(si, so) {
				fmt.Fprintf(stderr, "tmac %s: error: refusing to overwrite the input file %s (standard input reads it)\n", cmd, out)
				return &exitError{2}
			}
		}
		return nil
	}
	if same, _ := sameFile(in, out); same {
		fmt.Fprintf(stderr, "tmac %s: error: refusing to overwrite the input file %s\n", cmd, in)
		return &exitError{2}
	}
	return nil
}

// readSource reads the input ("-" is stdin) and records it for diagnostics;
// file is the name diagnostics use.
func readSource(stderr io.Writer, in string) (file, text string, sm *ir.SourceMgr, err error) {
	file, text, sm, err = runner.ReadSource(in)
	return file, text, sm, reportRunError(stderr, "tmac", err)
}

// readModule reads the input ("-" is stdin) and parses and verifies it as
// one module; on failure its diagnostics are printed and the error is an
// exit status 1. file is the name diagnostics use; sm renders the
// diagnostics of later steps.
func readModule(stderr io.Writer, in string, allowUnregistered bool) (mod *ir.Operation, file string, sm *ir.SourceMgr, err error) {
	file, text, sm, err := readSource(stderr, in)
	if err != nil {
		return nil, "", nil, err
	}
	mod, err = driver.ParseChunk(driver.Chunk{File: file, Text: text, FirstLine: 1}, allowUnregistered)
	if err != nil {
		return nil, "", nil, renderFailure(stderr, sm, err)
	}
	return mod, file, sm, nil
}

// renderFailure prints err's diagnostics and returns exit status 1.
func renderFailure(stderr io.Writer, sm *ir.SourceMgr, err error) error {
	for _, d := range ir.AsDiagnostics(err) {
		fmt.Fprint(stderr, d.Render(sm))
	}
	return &exitError{1}
}

func sameFile(a, b string) (bool, error) {
	sa, err := os.Stat(a)
	if err != nil {
		return false, err
	}
	sb, err := os.Stat(b)
	if err != nil {
		return false, nil
	}
	return os.SameFile(sa, sb), nil
}
