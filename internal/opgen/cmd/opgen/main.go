// Command opgen writes dialects/<d>/ops_gen.go, the typed op accessors
// generated from the op registry (package internal/opgen). Run it from the
// module root with the opgen build tag, which leaves the generated files
// out of the build:
//
//	go run -tags opgen ./internal/opgen/cmd/opgen
//
// (make generate, or go generate ./dialects/all).
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"

	_ "github.com/tmac-dev/tmac/dialects/all"
	"github.com/tmac-dev/tmac/internal/opgen"
)

func main() {
	root := "."
	if len(os.Args) > 1 {
		root = os.Args[1]
	}
	files, err := opgen.All()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var paths []string
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		if err := os.WriteFile(filepath.Join(root, p), files[p], 0o666); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}
