package runner

import (
	"fmt"
	"io"
	"sort"

	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/runtime/emu"
)

// maxBankLines caps the source lines listed by --bank-conflicts (those
// with the most excess wavefronts first).
const maxBankLines = 20

// bankLine sums the emulator's per-op counts over the ops of one source
// location (a tmac.warpgroup.mma.store becomes a vector.store per register
// pair), op name and direction.
type bankLine struct {
	loc, name                   string
	write                       bool
	requests, wavefronts, ideal int64
}

// reportBankConflicts prints, per source location whose ops loaded or
// stored shared memory in the emulated run, the warp requests, the
// wavefronts they took on the 32 banks and the conflict-free ideal
// (runtime/emu/banks.go), then the totals.
func reportBankConflicts(out io.Writer, stats []emu.BankOpStats) {
	if len(stats) == 0 {
		fmt.Fprintln(out, "bank conflicts: no ordinary shared-memory loads or stores")
		return
	}
	var lines []*bankLine
	index := map[[3]string]*bankLine{}
	var total bankLine
	for _, s := range stats {
		loc := "unknown location"
		if p, ok := ir.FileLineCol(s.Op.Loc); ok {
			loc = p.Pos()
		}
		key := [3]string{loc, s.Op.Name(), fmt.Sprint(s.Write)}
		l := index[key]
		if l == nil {
			l = &bankLine{loc: loc, name: s.Op.Name(), write: s.Write}
			index[key] = l
			lines = append(lines, l)
		}
		for _, t := range []*bankLine{l, &total} {
			t.requests += s.Requests
			t.wavefronts += s.Wavefronts
			t.ideal += s.Ideal
		}
	}
	sort.SliceStable(lines, func(i, j int) bool {
		return lines[i].wavefronts-lines[i].ideal > lines[j].wavefronts-lines[j].ideal
	})
	ratio := func(l *bankLine) float64 { return float64(l.wavefronts) / float64(max(l.ideal, 1)) }
	fmt.Fprintln(out, "bank conflicts (emulated warp requests of shared loads and stores, 32 banks of 4 bytes; worst first):")
	fmt.Fprintf(out, "  %-30s %-14s %-5s %9s %11s %9s %7s\n", "location", "op", "", "requests", "wavefronts", "ideal", "ratio")
	for i, l := range lines {
		if i == maxBankLines {
			fmt.Fprintf(out, "  ... %d more locations\n", len(lines)-i)
			break
		}
		rw := "read"
		if l.write {
			rw = "write"
		}
		fmt.Fprintf(out, "  %-30s %-14s %-5s %9d %11d %9d %6.2fx\n", l.loc, l.name, rw, l.requests, l.wavefronts, l.ideal, ratio(l))
	}
	fmt.Fprintf(out, "  %-30s %-14s %-5s %9d %11d %9d %6.2fx\n", "total", "", "", total.requests, total.wavefronts, total.ideal, ratio(&total))
}
