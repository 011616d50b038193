package interp

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/tmac-dev/tmac/dialects/scf"
	"github.com/tmac-dev/tmac/internal/testutil"
	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/runtime/buffer"
)

func TestSampleIterations(t *testing.T) {
	// The whole loop when the sample covers it.
	if got := SampleIterations(5, 5, 1); !reflect.DeepEqual(got, []int64{0, 1, 2, 3, 4}) {
		t.Errorf("SampleIterations(5, 5) = %v", got)
	}
	if got := SampleIterations(3, 64, 1); !reflect.DeepEqual(got, []int64{0, 1, 2}) {
		t.Errorf("SampleIterations(3, 64) = %v", got)
	}
	if got := SampleIterations(0, 64, 1); len(got) != 0 {
		t.Errorf("SampleIterations(0, 64) = %v", got)
	}
	if got := SampleIterations(100, 2, 9); !reflect.DeepEqual(got, []int64{0, 99}) {
		t.Errorf("SampleIterations(100, 2) = %v", got)
	}
	for _, c := range []struct{ n, count int64 }{{4096, 64}, {4096, 3}, {10, 9}, {7, 6}, {1000, 999}} {
		for seed := int64(0); seed < 5; seed++ {
			ks := SampleIterations(c.n, c.count, seed)
			if int64(len(ks)) != c.count || ks[0] != 0 || ks[len(ks)-1] != c.n-1 {
				t.Fatalf("SampleIterations(%d, %d, %d) = %v: want %d iterations from 0 to %d", c.n, c.count, seed, ks, c.count, c.n-1)
			}
			// Ascending and distinct; one in each stratum of the interior.
			m := c.count - 2
			for j := int64(0); j < m; j++ {
				k := ks[j+1]
				lo, hi := 1+j*(c.n-2)/m, 1+(j+1)*(c.n-2)/m
				if k < lo || k >= hi || k <= ks[j] {
					t.Fatalf("SampleIterations(%d, %d, %d)[%d] = %d, not in its stratum [%d, %d) after %d", c.n, c.count, seed, j+1, k, lo, hi, ks[j])
				}
			}
			if !reflect.DeepEqual(ks, SampleIterations(c.n, c.count, seed)) {
				t.Fatalf("SampleIterations(%d, %d, %d) is not deterministic", c.n, c.count, seed)
			}
		}
	}
	if reflect.DeepEqual(SampleIterations(4096, 64, 1), SampleIterations(4096, 64, 2)) {
		t.Error("seeds 1 and 2 choose the same iterations")
	}
}

// gemmF16 is a reference like the GEMM examples': f32 C = f16 A x f16 B,
// the outer loop over rows of C.
var gemmF16 = gemm("f16", `      %acc = scf.for %k = %c0 to %K step %c1 iter_args(%s = %z) -> (f32) {
        %a = memref.load %A[%i, %k] : memref<?x?xf16>
        %b = memref.load %B[%k, %j] : memref<?x?xf16>
        %af = arith.extf %a : f16 to f32
        %bf = arith.extf %b : f16 to f32
        %p = arith.mulf %af, %bf : f32
        %t = arith.addf %s, %p : f32
        scf.yield %t : f32
      }
      memref.store %acc, %C[%i, %j] : memref<?x?xf32>
`)

func TestSampledCall(t *testing.T) {
	const m, n, k = 53, 9, 17
	mod := testutil.Parse(t, gemmF16)
	a, _ := buffer.New(ir.F16T, []int64{m, k})
	b, _ := buffer.New(ir.F16T, []int64{k, n})
	for i := 0; i < a.Len(); i++ {
		a.SetFloat(i, float64(i%7)-3)
	}
	for i := 0; i < b.Len(); i++ {
		b.SetFloat(i, float64(i%5)*0.5-1)
	}
	full, _ := buffer.New(ir.F32T, []int64{m, n})
	full.Poison()
	if _, err := Call(mod, "f", []Arg{a, b, full}); err != nil {
		t.Fatal(err)
	}
	// 8 and 16 workers are more than the 6 sampled rows: the rows run one
	// after the other and each row's column loop in parallel.
	for _, workers := range []int{1, 4, 8, 16} {
		c, _ := buffer.New(ir.F32T, []int64{m, n})
		c.Poison()
		p := Compile(mod)
		p.Workers = workers
		_, info, err := p.CallWith("f", []Arg{a, b, c}, CallOptions{SampleOuter: 6, Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		s := info.Sample
		if s == nil || s.Trip != m || !reflect.DeepEqual(s.Iterations, SampleIterations(m, 6, 3)) || s.All() {
			t.Fatalf("workers %d: sample info %+v", workers, s)
		}
		rows := map[int]bool{}
		for _, r := range s.Iterations {
			rows[int(r)] = true
		}
		if info.Written[0] != nil && anyTrueB(info.Written[0]) || len(info.Written[2]) != m*n {
			t.Fatalf("workers %d: written masks %v / %d entries", workers, info.Written[0], len(info.Written[2]))
		}
		for e := 0; e < m*n; e++ {
			row := e / n
			if info.Written[2][e] != rows[row] {
				t.Fatalf("workers %d: element %d (row %d) written %v, sampled rows %v", workers, e, row, info.Written[2][e], s.Iterations)
			}
			if rows[row] && c.Float(e) != full.Float(e) {
				t.Fatalf("workers %d: element %d = %v, the full run gives %v", workers, e, c.Float(e), full.Float(e))
			}
			if !rows[row] && !math.IsNaN(c.Float(e)) {
				t.Fatalf("workers %d: element %d of an unsampled row was written (%v)", workers, e, c.Float(e))
			}
		}
		if info.Access[2] != (Access{Written: true}) || info.Access[0] != (Access{ReadBeforeWrite: true}) {
			t.Errorf("access = %+v", info.Access)
		}
	}
}

func anyTrueB(bs []bool) bool {
	for _, b := range bs {
		if b {
			return true
		}
	}
	return false
}

// TestTrackWrites: the write mask follows stores through casts, subviews
// and views, element by element, and covers integer stores.
func TestTrackWrites(t *testing.T) {
	src := `func.func @f(%A: memref<4x6xf32>, %B: memref<8xi16>, %R: memref<16xi8>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %x = arith.constant 1.5 : f32
  %y = arith.constant 7 : i16
  %v = memref.load %A[%c0, %c0] : memref<4x6xf32>
  memref.store %x, %A[%c1, %c2] : memref<4x6xf32>
  %s = memref.subview %A[2, 1] [2, 3] [1, 2] : memref<4x6xf32> to memref<2x3xf32, strided<[6, 2], offset: 13>>
  memref.store %x, %s[%c1, %c2] : memref<2x3xf32, strided<[6, 2], offset: 13>>
  %d = memref.cast %B : memref<8xi16> to memref<?xi16>
  memref.store %y, %d[%c3] : memref<?xi16>
  %w = memref.view %R[%c2][] : memref<16xi8> to memref<3xi32>
  %z = arith.constant 9 : i32
  memref.store %z, %w[%c1] : memref<3xi32>
  return
}
`
	mod := testutil.Parse(t, src)
	a, _ := buffer.New(ir.F32T, []int64{4, 6})
	b, _ := buffer.New(ir.IntegerTypeOf(16), []int64{8})
	r, _ := buffer.New(ir.IntegerTypeOf(8), []int64{16})
	_, info, err := Compile(mod).CallWith("f", []Arg{a, b, r}, CallOptions{TrackWrites: true})
	if err != nil {
		t.Fatal(err)
	}
	if info.Sample != nil {
		t.Errorf("an unsampled call reports a sample: %+v", info.Sample)
	}
	want := func(n int, idx ...int) []bool {
		w := make([]bool, n)
		for _, i := range idx {
			w[i] = true
		}
		return w
	}
	// A[1,2] = 8; the subview's [1,2] is A[3, 1+2*2] = 23.
	if !reflect.DeepEqual(info.Written[0], want(24, 8, 23)) {
		t.Errorf("A written %v", info.Written[0])
	}
	if !reflect.DeepEqual(info.Written[1], want(8, 3)) {
		t.Errorf("B written %v", info.Written[1])
	}
	// The i32 at view element 1 covers bytes 2+4..2+7 of R.
	if !reflect.DeepEqual(info.Written[2], want(16, 6, 7, 8, 9)) {
		t.Errorf("R written %v", info.Written[2])
	}
	// Without tracking there are no masks.
	_, info, err = Compile(mod).CallWith("f", []Arg{a, b, r}, CallOptions{})
	if err != nil || info.Written != nil {
		t.Errorf("untracked call: written %v, err %v", info.Written, err)
	}
}

func TestSampleLoopRefusals(t *testing.T) {
	cases := []struct{ src, want string }{
		{sumLoop, "are not provably independent"},
		{`func.func @f(%A: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %x = arith.constant 1.0 : f32
  scf.for %i = %c0 to %c4 step %c1 {
    memref.store %x, %A[%i] : memref<4xf32>
  }
  scf.for %i = %c0 to %c4 step %c1 {
    memref.store %x, %A[%i] : memref<4xf32>
  }
  return
}
`, "has 2 scf.for loops at the top level"},
		{`func.func @f(%A: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %x = arith.constant 1.0 : f32
  memref.store %x, %A[%c0] : memref<4xf32>
  return
}
`, "has no scf.for at the top level"},
		{`func.func @f(%A: memref<4xf32>, %B: memref<1xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %x = arith.constant 1.0 : f32
  scf.for %i = %c0 to %c4 step %c1 {
    memref.store %x, %A[%i] : memref<4xf32>
  }
  %v = memref.load %A[%c1] : memref<4xf32>
  memref.store %v, %B[%c0] : memref<1xf32>
  return
}
`, "'memref.load' after the outermost loop"},
	}
	for _, c := range cases {
		mod := testutil.Parse(t, c.src)
		a, _ := buffer.New(ir.F32T, []int64{4})
		s, _ := buffer.New(ir.F32T, []int64{1})
		_, _, err := Compile(mod).CallWith("f", []Arg{a, s}[:len(ir.LookupSymbol(mod, "f").Region(0).Entry().Args())], CallOptions{SampleOuter: 2})
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "t.mlir:") {
			t.Errorf("err = %v, want a diagnostic containing %q", err, c.want)
		}
		if _, err := SampleLoop(ir.LookupSymbol(mod, "f")); err == nil {
			t.Errorf("SampleLoop accepted:\n%s", c.src)
		}
	}
	mod := testutil.Parse(t, gemmF16)
	a, _ := buffer.New(ir.F16T, []int64{4, 4})
	c, _ := buffer.New(ir.F32T, []int64{4, 4})
	if _, _, err := Compile(mod).CallWith("f", []Arg{a, a.Clone(), c}, CallOptions{SampleOuter: 1}); err == nil || !strings.Contains(err.Error(), "at least 2") {
		t.Errorf("a sample of 1: err = %v", err)
	}
	if loop, err := SampleLoop(ir.LookupSymbol(mod, "f")); err != nil || loop.Name() != scf.For {
		t.Errorf("SampleLoop(gemm) = %v, %v", loop, err)
	}
}
