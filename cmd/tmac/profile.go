package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"

	"github.com/spf13/cobra"
)

// addProfileFlags gives every command --cpuprofile and --memprofile (as
// the go tool's): for finding where compile time goes on large inputs
// (docs/perf.md's growth curve). The profiles are written when the
// command succeeds.
func addProfileFlags(root *cobra.Command) {
	var cpuFile, memFile string
	var cpuOut *os.File
	pf := root.PersistentFlags()
	pf.StringVar(&cpuFile, "cpuprofile", "", "write a CPU profile (pprof) to this file")
	pf.StringVar(&memFile, "memprofile", "", "write a heap profile (pprof) to this file at exit")
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		if cpuFile == "" {
			return nil
		}
		f, err := os.Create(cpuFile)
		if err != nil {
			return fmt.Errorf("--cpuprofile: %v", err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return fmt.Errorf("--cpuprofile: %v", err)
		}
		cpuOut = f
		return nil
	}
	root.PersistentPostRunE = func(cmd *cobra.Command, _ []string) error {
		if cpuOut != nil {
			pprof.StopCPUProfile()
			if err := cpuOut.Close(); err != nil {
				return fmt.Errorf("--cpuprofile: %v", err)
			}
		}
		if memFile == "" {
			return nil
		}
		f, err := os.Create(memFile)
		if err != nil {
			return fmt.Errorf("--memprofile: %v", err)
		}
		defer f.Close()
		runtime.GC()
		if err := pprof.WriteHeapProfile(f); err != nil {
			return fmt.Errorf("--memprofile: %v", err)
		}
		return nil
	}
}
