// Command irgen writes a generated module of about -lines lines to stdout,
// for parser benchmarks and growth measurements:
//
//	go run ./internal/irgen/cmd/irgen -lines 100000 > big.tma
package main

import (
	"flag"
	"fmt"

	"github.com/tmac-dev/tmac/internal/irgen"
)

func main() {
	lines := flag.Int("lines", 100000, "approximate number of lines")
	flag.Parse()
	fmt.Print(irgen.Generate(*lines))
}
