package plan

import (
	"math"
	"strings"
	"testing"

	"github.com/tmac-dev/tmac/internal/testutil"
	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/runtime/buffer"
	"github.com/tmac-dev/tmac/runtime/interp"
)

// A GEMM entry with the sampling attribute and its reference, the outer
// loop over the rows of D.
const sampledGemm = `func.func @gemm(%a: memref<40x16xf16>, %b: memref<16x8xf16>, %d: memref<40x8xf32> {tmac.output}) attributes {tmac.ref_sample = 5 : i64} {
  return
}
func.func @reference(%a: memref<40x16xf16>, %b: memref<16x8xf16>, %d: memref<40x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c40 = arith.constant 40 : index
  %zero = arith.constant 0.0 : f32
  scf.for %m = %c0 to %c40 step %c1 {
    scf.for %n = %c0 to %c8 step %c1 {
      %acc = scf.for %k = %c0 to %c16 step %c1 iter_args(%s = %zero) -> (f32) {
        %x = memref.load %a[%m, %k] : memref<40x16xf16>
        %y = memref.load %b[%k, %n] : memref<16x8xf16>
        %xf = arith.extf %x : f16 to f32
        %yf = arith.extf %y : f16 to f32
        %p = arith.mulf %xf, %yf : f32
        %s1 = arith.addf %s, %p : f32
        scf.yield %s1 : f32
      }
      memref.store %acc, %d[%m, %n] : memref<40x8xf32>
    }
  }
  return
}
`

// TestSampledReferenceCheck runs the reference sampled (as tmac run does)
// and checks a stand-in for the GPU's output against it: a mismatch in a
// sampled row fails, one outside the sampled rows is not seen, a NaN where
// the reference wrote fails, and an output the sample never wrote is an
// error, not a pass.
func TestSampledReferenceCheck(t *testing.T) {
	mod := testutil.Parse(t, sampledGemm)
	entry, err := SelectEntry(mod, "")
	if err != nil {
		t.Fatal(err)
	}
	n, err := RefSample(entry)
	if err != nil || n != 5 {
		t.Fatalf("RefSample = %d, %v; want 5", n, err)
	}
	a, _ := buffer.New(ir.F16T, []int64{40, 16})
	b, _ := buffer.New(ir.F16T, []int64{16, 8})
	for i := 0; i < a.Len(); i++ {
		a.SetFloat(i, float64(i%9)-4)
	}
	for i := 0; i < b.Len(); i++ {
		b.SetFloat(i, float64(i%3)-1)
	}
	// The GPU's result: the full reference.
	gpu, _ := buffer.New(ir.F32T, []int64{40, 8})
	if _, err := interp.Call(mod, ReferenceName, []interp.Arg{a, b, gpu}); err != nil {
		t.Fatal(err)
	}
	ref, _ := buffer.New(ir.F32T, []int64{40, 8})
	ref.Poison()
	_, info, err := interp.Compile(mod).CallWith(ReferenceName, []interp.Arg{a, b, ref}, interp.CallOptions{SampleOuter: n, Seed: 11})
	if err != nil {
		t.Fatal(err)
	}
	rows := info.Sample.Iterations
	if info.Sample.Trip != 40 || len(rows) != 5 || rows[0] != 0 || rows[4] != 39 {
		t.Fatalf("sample %+v", info.Sample)
	}
	sampled := map[int]bool{}
	for _, r := range rows {
		sampled[int(r)] = true
	}
	unsampled := 1
	for sampled[unsampled] {
		unsampled++
	}
	written := info.Written[2]
	rtol, atol := DefaultToleranceWritten(ir.F32T, []ir.Type{ir.F16T, ir.F16T}, ref, written)
	c, err := CompareWritten(gpu, ref, written, rtol, atol)
	if err != nil || !c.OK() || c.N != 5*8 || c.Of != 40*8 {
		t.Fatalf("correct output: %+v, %v", c, err)
	}

	// A wrong element in a sampled (interior) row is found.
	mid := int(rows[2])
	bad := gpu.Clone()
	bad.SetFloat(mid*8+3, bad.Float(mid*8+3)+100)
	c, err = CompareWritten(bad, ref, written, rtol, atol)
	if err != nil || c.OK() || c.Mismatches != 1 || c.First[0] != mid*8+3 {
		t.Errorf("mismatch in sampled row %d: %+v, %v", mid, c, err)
	}
	// A NaN from the GPU where the reference wrote is a mismatch.
	bad = gpu.Clone()
	bad.SetFloat(39*8+7, math.NaN())
	if c, err = CompareWritten(bad, ref, written, rtol, atol); err != nil || c.Mismatches != 1 {
		t.Errorf("NaN in the last row: %+v, %v", c, err)
	}
	// A wrong element outside the sampled rows is not reported: the check
	// does not cover it (the report says so by counting the elements).
	bad = gpu.Clone()
	bad.SetFloat(unsampled*8, 1e9)
	if c, err = CompareWritten(bad, ref, written, rtol, atol); err != nil || !c.OK() {
		t.Errorf("mismatch in unsampled row %d reported: %+v, %v", unsampled, c, err)
	}
	// The full comparison does see it (and the poison of the skipped rows).
	if c, _ := Compare(bad, ref, rtol, atol); c.OK() {
		t.Error("the full comparison of a sampled reference passed")
	}

	// The tolerance's scale comes from the compared elements only.
	big := ref.Clone()
	big.SetFloat(unsampled*8, 1e6)
	if _, at := DefaultToleranceWritten(ir.F32T, []ir.Type{ir.F16T}, big, written); at != atol {
		t.Errorf("atol %g with a large unwritten element, want %g", at, atol)
	}
	if _, at := DefaultTolerance(ir.F32T, []ir.Type{ir.F16T}, big); at != 1e-2*1e6 {
		t.Errorf("unmasked atol %g", at)
	}

	// Nothing written: an error, not a pass.
	none := make([]bool, len(written))
	if c, err := CompareWritten(gpu, ref, none, rtol, atol); err == nil || !strings.Contains(err.Error(), "wrote none of the 320 elements") {
		t.Errorf("no element written: %+v, %v", c, err)
	}
	if _, err := CompareWritten(gpu, ref, written[:10], rtol, atol); err == nil {
		t.Error("a mask of the wrong size was accepted")
	}
}

func TestRefSampleAttr(t *testing.T) {
	for _, c := range []struct {
		attr string
		want int64
		err  string
	}{
		{"", 0, ""},
		{"attributes {tmac.ref_sample = 64 : i64}", 64, ""},
		{"attributes {tmac.ref_sample = 1 : i64}", 0, "must be an integer >= 2"},
		{`attributes {tmac.ref_sample = "all"}`, 0, "must be an integer >= 2"},
	} {
		mod := testutil.Parse(t, "func.func @f(%x: memref<4xf32>) "+c.attr+" { return }")
		n, err := RefSample(ir.LookupSymbol(mod, "f"))
		if n != c.want || (err == nil) != (c.err == "") || err != nil && !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: RefSample = %d, %v", c.attr, n, err)
		}
	}
}
