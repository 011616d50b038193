package runner

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tmac-dev/tmac/bundle"
	"github.com/tmac-dev/tmac/driver"
	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/runtime/plan"
)

const bundledModule = `module attributes {gpu.container_module} {
  func.func @main(%x: memref<?xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<?xf32>)
    return
  }
  gpu.module @kernels {
    gpu.func @k(%x: memref<?xf32>) kernel {
      gpu.return
    }
  }
}
`

// A stand-in for llc's output: the bundle checks only the directives and
// the entry names.
const bundledPTX = ".version 8.0\n.target sm_90a\n.visible .entry k(\n)\n{\n}\n"

// TestBundleRoundTrip packs a program into a bundle and reads it back
// without the CLI: the manifest describes the kernel's parameters, and
// the module read back gives the host plan.
func TestBundleRoundTrip(t *testing.T) {
	mod, err := driver.ParseChunk(driver.Chunk{File: "p.tma", Text: bundledModule, FirstLine: 1}, false)
	if err != nil {
		t.Fatal(err)
	}
	p := &Program{Module: mod, Source: "dir/p.tma", LLVM: "; llvm", PTX: bundledPTX}
	data, err := p.Bundle("test")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "p.tmab")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := bundle.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m := b.Manifest
	if m.Source != "p.tma" || m.Target != "sm_90a" || m.TmacVersion != "test" || m.PTXVersion != 80 || len(m.Kernels) != 1 {
		t.Fatalf("manifest %+v", m)
	}
	var params []string
	for _, q := range m.Kernels[0].Params {
		params = append(params, q.Role+":"+q.Type)
	}
	if got := strings.Join(params, " "); got != "base:float* size:i64" {
		t.Errorf("parameters %s", got)
	}

	back, err := ReadBundle(path)
	if err != nil {
		t.Fatal(err)
	}
	if back.PTX != bundledPTX || back.LLVM != "; llvm" || back.Target != "sm_90a" || ir.Print(back.Module, ir.PrintOptions{}) != ir.Print(mod, ir.PrintOptions{}) {
		t.Errorf("read back %+v", back)
	}
	entry, err := plan.SelectEntry(back.Module, "")
	if err != nil {
		t.Fatal(err)
	}
	pl, err := plan.Build(back.Module, entry)
	if err != nil {
		t.Fatal(err)
	}
	if k := pl.Kernels["k"]; k == nil || len(k.Params) != 2 {
		t.Errorf("the plan's kernels %+v", pl.Kernels)
	}

	// A module without kernels makes no bundle.
	empty, _ := ir.Parse("e.tma", "func.func @f() { return }", ir.ParseOptions{})
	if _, err := (&Program{Module: empty, PTX: bundledPTX}).Bundle("test"); err == nil || err.Error() != "the program has no kernels to put in a bundle" {
		t.Errorf("no kernels: %v", err)
	}
}

// TestErrorReport: the messages of a failure are written in order, each
// as tmac writes that kind: the command's own line, a read failure as
// every command reports it, a diagnostic with its source line.
func TestErrorReport(t *testing.T) {
	sm := ir.NewSourceMgr()
	sm.Add("p.tma", "func.func @f()\n")
	d := &ir.Diagnostic{Severity: ir.SevError, Loc: ir.FileLineColLoc{File: "p.tma", Line: 1, Col: 1}, Msg: "bad"}
	e := &Error{Status: StatusUsage, Sources: sm, Errs: []error{
		Messagef("--x must be %d", 1), &readError{errors.New("open q.tma: no such file")}, d, errors.New("plain"),
	}}
	var w bytes.Buffer
	e.Report(&w, "tmac run")
	want := "tmac run: error: --x must be 1\n" +
		"tmac: error: open q.tma: no such file\n" +
		"p.tma:1:1: error: bad\nfunc.func @f()\n^\n" +
		"error: plain\n"
	if w.String() != want {
		t.Errorf("report\n%s\nwant\n%s", w.String(), want)
	}
	if e.Error() != "--x must be 1; open q.tma: no such file; p.tma:1:1: error: bad; plain" {
		t.Errorf("Error() %q", e.Error())
	}
}
