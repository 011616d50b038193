package main

import (
	"bytes"
	"strings"
	"testing"

	_ "github.com/tmac-dev/tmac/dialects/all"
	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/runtime/buffer"
	"github.com/tmac-dev/tmac/runtime/interp"
	"github.com/tmac-dev/tmac/runtime/plan"
)

const sampledModule = `func.func @rows(%x: memref<40x8xf32>, %y: memref<40x8xf32> {tmac.output}) attributes {tmac.ref_sample = 4 : i64} {
  return
}
func.func @reference(%x: memref<40x8xf32>, %y: memref<40x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c40 = arith.constant 40 : index
  %two = arith.constant 2.0 : f32
  scf.for %i = %c0 to %c40 step %c1 {
    scf.for %j = %c0 to %c8 step %c1 {
      %v = memref.load %x[%i, %j] : memref<40x8xf32>
      %r = arith.mulf %v, %two : f32
      memref.store %r, %y[%i, %j] : memref<40x8xf32>
    }
  }
  return
}
`

// TestCheckResultsSampled checks the report of a sampled check: it says
// so, counts what it compared, and fails on a wrong element it covers.
func TestCheckResultsSampled(t *testing.T) {
	mod, err := ir.Parse("t.tma", sampledModule, ir.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	entry, _ := plan.SelectEntry(mod, "")
	f := &runFlags{seed: 5, rtol: -1, atol: -1, dist: "normal"}
	outputs := plan.Outputs(entry, nil)
	args, err := makeArgs([]ir.Type{entry.Region(0).Entry().Arg(0).Type(), entry.Region(0).Entry().Arg(1).Type()}, outputs, nil, nil, f)
	if err != nil {
		t.Fatal(err)
	}
	// The "GPU" result: the full reference.
	good := args[1].buf.Clone()
	if _, err := interp.Call(mod, plan.ReferenceName, []interp.Arg{args[0].buf.Clone(), good}); err != nil {
		t.Fatal(err)
	}
	check := func(out *buffer.Buffer) (string, bool) {
		var w bytes.Buffer
		failed, err := checkResults(&w, mod, entry, args, []*buffer.Buffer{nil, out}, outputs, 4, f)
		if err != nil {
			t.Fatal(err)
		}
		return w.String(), failed
	}
	rep, failed := check(good)
	if failed || !strings.Contains(rep, "reference: checked 4 of 40 iterations of the outermost loop of @reference (sampled; seed 5)") ||
		!strings.Contains(rep, "PASS arg1") || !strings.Contains(rep, "; 32 of 320 elements compared (sampled)") {
		t.Errorf("correct result:\n%s", rep)
	}
	// The last row is always sampled.
	bad := good.Clone()
	bad.SetFloat(39*8+2, 1e6)
	if rep, failed = check(bad); !failed || !strings.Contains(rep, "FAIL arg1") || !strings.Contains(rep, "[39, 2] out=1e+06") {
		t.Errorf("wrong element in the last row:\n%s", rep)
	}
	// An output the sample does not write at all fails (here x, were it
	// marked as an output).
	var w bytes.Buffer
	failed, err = checkResults(&w, mod, entry, args, []*buffer.Buffer{args[0].buf.Clone(), good}, []bool{true, true}, 4, f)
	if err != nil || !failed || !strings.Contains(w.String(), "FAIL arg0 memref<40x8xf32>: the sampled reference wrote none of the 320 elements of this output, so nothing could be compared") {
		t.Errorf("unwritten output: %v\n%s", err, w.String())
	}
}
