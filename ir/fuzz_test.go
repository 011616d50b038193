package ir_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	_ "github.com/tmac-dev/tmac/dialects/all"
	"github.com/tmac-dev/tmac/internal/irgen"
	"github.com/tmac-dev/tmac/ir"
)

// FuzzParse feeds arbitrary text to the parser, verifier and printer. They
// must never panic or hang; whatever parses and verifies must print to text
// that parses again.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("../lit-tests/*/*.tma")
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			continue
		}
		for _, chunk := range strings.Split(string(b), "// -----") {
			f.Add(chunk)
		}
	}
	corpus, _ := filepath.Glob("testdata/regressions/*.tma")
	for _, file := range corpus {
		if b, err := os.ReadFile(file); err == nil {
			f.Add(string(b))
		}
	}
	f.Fuzz(func(t *testing.T, src string) {
		checkNoPanic(t, src)
	})
}

func checkNoPanic(t *testing.T, src string) {
	done := make(chan string, 1)
	go func() {
		done <- roundTripProblem(src)
	}()
	select {
	case problem := <-done:
		if problem != "" {
			t.Fatal(problem)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("parse did not finish in 10s on input %.200q", src)
	}
}

// roundTripProblem parses, verifies and reprints src; it returns a
// description of what went wrong, or "" (a parse or verify error is fine).
// A panic is reported as a problem rather than killing the process, so the
// fuzzer records the input.
func roundTripProblem(src string) (problem string) {
	defer func() {
		if r := recover(); r != nil {
			problem = fmt.Sprintf("panic: %v\n%s\ninput:\n%s", r, debug.Stack(), src)
		}
	}()
	m, err := ir.Parse("fuzz.tma", src, ir.ParseOptions{AllowUnregistered: true})
	if err != nil || ir.VerifyModule(m) != nil {
		return ""
	}
	for _, po := range []ir.PrintOptions{{}, {Generic: true}, {DebugInfo: true}} {
		out := ir.Print(m, po)
		if _, err := ir.Parse("reparse.tma", out, ir.ParseOptions{AllowUnregistered: true}); err != nil {
			return "printed output does not parse: " + err.Error() + "\ninput:\n" + src + "\noutput:\n" + out
		}
	}
	return ""
}

// TestRegressions replays inputs that once crashed the parser.
func TestRegressions(t *testing.T) {
	files, _ := filepath.Glob("testdata/regressions/*.tma")
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		checkNoPanic(t, string(b))
	}
}

// BenchmarkParse100k parses, verifies and prints a generated module of
// 100,000 lines (the target: under one second in total).
func BenchmarkParse100k(b *testing.B) {
	src := irgen.Generate(100000)
	b.SetBytes(int64(len(src)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m, err := ir.Parse("gen.tma", src, ir.ParseOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if err := ir.VerifyModule(m); err != nil {
			b.Fatal(err)
		}
		_ = ir.Print(m, ir.PrintOptions{})
	}
}
