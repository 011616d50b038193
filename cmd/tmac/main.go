// Command tmac compiles tile programs for NVIDIA Hopper GPUs.
package main

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	_ "github.com/tmac-dev/tmac/dialects/all"
	_ "github.com/tmac-dev/tmac/passes/all"
)

// Version is set at build time with -ldflags "-X main.Version=...".
var Version = "dev"

// Revision is the commit tmac was built from, set by make with -ldflags
// "-X main.Revision=..." (else the go tool's record of it, if any).
var Revision string

// exitError carries an exit status; its message was already printed.
type exitError struct{ code int }

func (e *exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

func main() {
	root := newRootCmd()
	root.SetArgs(normalizeArgs(os.Args[1:]))
	if err := root.Execute(); err != nil {
		var ee *exitError
		if errors.As(err, &ee) {
			os.Exit(ee.code)
		}
		fmt.Fprintln(os.Stderr, "tmac: error:", err)
		os.Exit(2)
	}
}

// normalizeArgs accepts mlir-opt style single-dash long flags (-cse,
// -split-input-file) by rewriting them to --cse; one-letter flags (-o) and
// negative numbers are left alone.
func normalizeArgs(args []string) []string {
	out := make([]string, 0, len(args))
	for i, a := range args {
		if a == "--" {
			return append(out, args[i:]...)
		}
		if len(a) > 2 && a[0] == '-' && a[1] != '-' && isLetter(a[1]) && !strings.HasPrefix(a, "-o=") && !isOptLevel(a) {
			a = "-" + a
		}
		out = append(out, a)
	}
	return out
}

// isOptLevel reports whether a is -O0 .. -O3 style (a shorthand flag with
// its value attached), which must stay single-dash.
func isOptLevel(a string) bool {
	if len(a) < 3 || a[1] != 'O' {
		return false
	}
	for _, c := range a[2:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "tmac",
		Short: "tmac compiles tile programs (TMA, mbarrier, wgmma) for NVIDIA Hopper GPUs",
		Long: `tmac reads tile programs written in MLIR syntax (func, arith, scf, memref,
gpu, nvgpu, nvvm dialects), verifies them, runs pipelining and lowering
passes and produces PTX for sm_90a.`,
		Example: `  tmac opt kernel.tma --canonicalize --cse
  tmac opt kernel.tma --pass-pipeline='builtin.module(cse)' --print-op-generic
  tmac compile kernel.tma -o kernel.ptx
  tmac run kernel.tma`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newOptCmd(), newCompileCmd(), newExplainCmd(), newRunCmd(), newTuneCmd(), newDocCmd(), newVersionCmd())
	addProfileFlags(root)
	return root
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the tmac version",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			fmt.Fprintf(cmd.OutOrStdout(), "tmac %s\n", Version)
			if rev := cmp.Or(Revision, buildRevision()); rev != "" {
				fmt.Fprintf(cmd.OutOrStdout(), "built from %s\n", rev)
			}
		},
	}
}

// buildRevision is the commit the binary was built from, as the go tool
// records it (vcs.revision, shortened, and "+ uncommitted changes" when
// the tree was modified), or "" when it recorded none. Benchmark results
// name it: a bundle's tmac_version stays "dev" so that bundles do not
// change from commit to commit.
func buildRevision() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	var rev, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev == "" {
		return ""
	}
	if len(rev) > 7 {
		rev = rev[:7]
	}
	if modified == "true" {
		rev += " + uncommitted changes"
	}
	return rev
}
