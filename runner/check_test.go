package runner

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tmac-dev/tmac/internal/testutil"
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

// testArgs parses src, selects its entry and makes its arguments as tmac
// run does, with the scalar values sets and the options opts.
func testArgs(t *testing.T, src string, sets map[int]string, opts *Options) (mod, entry *ir.Operation, outputs []bool, args []*runArg) {
	t.Helper()
	mod = testutil.Parse(t, src)
	entry, err := plan.SelectEntry(mod, "")
	if err != nil {
		t.Fatal(err)
	}
	ft, _ := plan.FuncType(entry)
	outputs = plan.Outputs(entry, nil)
	if args, err = makeArgs(ft.Inputs, outputs, nil, sets, opts); err != nil {
		t.Fatal(err)
	}
	return mod, entry, outputs, args
}

// TestCheckResultsSampled checks the report of a sampled check: it says
// so, counts what it compared, and fails on a wrong element it covers.
func TestCheckResultsSampled(t *testing.T) {
	opts := &Options{Seed: 5, RTol: -1, ATol: -1, Dist: "normal"}
	mod, entry, outputs, args := testArgs(t, sampledModule, nil, opts)
	// The "GPU" result: the full reference.
	good := args[1].buf.Clone()
	if _, err := interp.Call(mod, plan.ReferenceName, []interp.Arg{args[0].buf.Clone(), good}); err != nil {
		t.Fatal(err)
	}
	check := func(out *buffer.Buffer) (string, bool) {
		var w bytes.Buffer
		failed, _, err := checkResults(&w, mod, entry, args, []*buffer.Buffer{nil, out}, outputs, 4, opts)
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
	failed, _, err := checkResults(&w, mod, entry, args, []*buffer.Buffer{args[0].buf.Clone(), good}, []bool{true, true}, 4, opts)
	if err != nil || !failed || !strings.Contains(w.String(), "FAIL arg0 memref<40x8xf32>: the sampled reference wrote none of the 320 elements of this output, so nothing could be compared") {
		t.Errorf("unwritten output: %v\n%s", err, w.String())
	}
}

// TestReferenceReused: tmac tune run checks every variant against @reference's
// results computed once per distinct @reference and argument types; the
// second check reuses them (a tampered cache entry shows that it does),
// and a module whose @reference differs computes its own.
func TestReferenceReused(t *testing.T) {
	cache := NewRefCache()
	f := &Options{Seed: 5, RTol: -1, ATol: -1, Dist: "normal", RefCache: cache}
	mod, entry, outputs, args := testArgs(t, sampledModule, nil, f)
	// The "GPU" result: twice the input.
	good := args[1].buf.Clone()
	for i := 0; i < good.Len(); i++ {
		good.SetFloat(i, 2*args[0].buf.Float(i))
	}
	results := []*buffer.Buffer{nil, good}
	var w bytes.Buffer
	if failed, _, err := checkResults(&w, mod, entry, args, results, outputs, 0, f); err != nil || failed {
		t.Fatalf("first check: %v %v\n%s", failed, err, w.String())
	}
	if len(cache.results) != 1 || strings.Contains(w.String(), "reused") {
		t.Fatalf("not cached, or reused too early:\n%s", w.String())
	}
	for _, r := range cache.results {
		r.args[1].(*buffer.Buffer).SetFloat(3, 1e6)
	}
	w.Reset()
	failed, _, err := checkResults(&w, mod, entry, args, results, outputs, 0, f)
	if err != nil || !failed || !strings.Contains(w.String(), "reference: @reference's results of an earlier variant with the same reference and inputs reused") {
		t.Errorf("second check did not use the cache: %v %v\n%s", failed, err, w.String())
	}
	// The same check sampled differently, and another @reference, compute their own.
	w.Reset()
	if failed, _, err := checkResults(&w, mod, entry, args, results, outputs, 2, f); err != nil || failed || strings.Contains(w.String(), "reused") {
		t.Errorf("sampled check: %v %v\n%s", failed, err, w.String())
	}
	other := testutil.ParseNamed(t, "u.tma", strings.Replace(sampledModule, "%two = arith.constant 2.0 : f32", "%two = arith.constant 2.000000e+00 : f32\n  %unused = arith.constant 3.0 : f32", 1))
	oentry, _ := plan.SelectEntry(other, "")
	w.Reset()
	if failed, _, err := checkResults(&w, other, oentry, args, results, outputs, 0, f); err != nil || failed || strings.Contains(w.String(), "reused") {
		t.Errorf("other @reference: %v %v\n%s", failed, err, w.String())
	}
	if len(cache.results) != 3 {
		t.Errorf("%d cache entries, want 3", len(cache.results))
	}
}
