package mbarrier

import (
	"math"
	"strings"
	"testing"

	"github.com/tmac-dev/tmac/passes/internal/passtest"
)

// mbarKernel wraps a kernel body (barrier group %bars with 2 barriers,
// %tid = thread_id x, %is0 = tid == 0, constants %c0 %c1 %c2 %c4 %c8,
// %ticks, %f/%t = false/true) in a gpu.func with the given attributes.
func mbarKernel(attrs, body string) string {
	return `
!bar = !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @k(%n: index) kernel attributes {` + attrs + `} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c4 = arith.constant 4 : index
      %c8 = arith.constant 8 : index
      %c64 = arith.constant 64 : index
      %ticks = arith.constant 100 : index
      %f = arith.constant false
      %t = arith.constant true
      %tid = gpu.thread_id x
      %is0 = arith.cmpi eq, %tid, %c0 : index
      %bars = nvgpu.mbarrier.create -> !bar
` + body + `
      gpu.return
    }
  }
}`
}

const block64 = "known_block_size = array<i32: 64, 1, 1>"

// ringBody is a loop over 8 ring positions: position i fills barrier
// i mod 2 and waits on it for parity (i / div) mod 2.
func ringBody(div string) string {
	return `
      nvgpu.mbarrier.init %bars[%c0], %c1, predicate = %is0 : !bar
      nvgpu.mbarrier.init %bars[%c1], %c1, predicate = %is0 : !bar
      scf.for %i = %c0 to %c8 step %c1 {
        %s = arith.remui %i, %c2 : index
        nvgpu.mbarrier.arrive.expect_tx %bars[%s], %c8, predicate = %is0 : !bar
        %r = arith.divui %i, ` + div + ` : index
        %m = arith.remui %r, %c2 : index
        %p = arith.cmpi ne, %m, %c0 : index
        nvgpu.mbarrier.try_wait.parity %bars[%s], %p, %ticks : !bar
      }`
}

func TestMBarrierPhase(t *testing.T) {
	for _, c := range []struct {
		name, attrs, body, want string // want: "" = no report
	}{
		{"ok-one-phase", block64, `
      nvgpu.mbarrier.init %bars[%c0], %c1, predicate = %is0 : !bar
      nvgpu.mbarrier.arrive.expect_tx %bars[%c0], %c8, predicate = %is0 : !bar
      nvgpu.mbarrier.try_wait.parity %bars[%c0], %f, %ticks : !bar`, ""},
		{"wrong-parity", block64, `
      nvgpu.mbarrier.init %bars[%c0], %c1, predicate = %is0 : !bar
      nvgpu.mbarrier.arrive.expect_tx %bars[%c0], %c8, predicate = %is0 : !bar
      nvgpu.mbarrier.try_wait.parity %bars[%c0], %t, %ticks : !bar`,
			"wait on barrier 0 expects parity 1 but at this point phase 0 has not completed"},
		{"all-threads-arrive", block64, `
      nvgpu.mbarrier.init %bars[%c1], %c64, predicate = %is0 : !bar
      %a = nvgpu.mbarrier.arrive %bars[%c1] : !bar -> !nvgpu.mbarrier.token
      nvgpu.mbarrier.try_wait.parity %bars[%c1], %t, %ticks : !bar`,
			"wait on barrier 1 expects parity 1 but at this point phase 0 has not completed"},
		{"no-arrival", block64, `
      nvgpu.mbarrier.init %bars[%c0], %c1, predicate = %is0 : !bar
      nvgpu.mbarrier.try_wait.parity %bars[%c0], %f, %ticks : !bar`,
			"can never complete: no arrival on it before this point"},
		// Unsure cases: never a report.
		{"partial-arrivals", block64, `
      nvgpu.mbarrier.init %bars[%c0], %c2, predicate = %is0 : !bar
      nvgpu.mbarrier.arrive.expect_tx %bars[%c0], %c8, predicate = %is0 : !bar
      nvgpu.mbarrier.try_wait.parity %bars[%c0], %t, %ticks : !bar`, ""},
		{"arrivers-not-waiting", block64, `
      nvgpu.mbarrier.init %bars[%c0], %c64, predicate = %is0 : !bar
      %a = nvgpu.mbarrier.arrive %bars[%c0] : !bar -> !nvgpu.mbarrier.token
      scf.if %is0 {
        nvgpu.mbarrier.try_wait.parity %bars[%c0], %t, %ticks : !bar
      }`, ""},
		{"no-block-size", "", `
      nvgpu.mbarrier.init %bars[%c0], %c64, predicate = %is0 : !bar
      %a = nvgpu.mbarrier.arrive %bars[%c0] : !bar -> !nvgpu.mbarrier.token
      nvgpu.mbarrier.try_wait.parity %bars[%c0], %t, %ticks : !bar`, ""},
		{"unknown-index", block64, `
      nvgpu.mbarrier.init %bars[%c0], %c1, predicate = %is0 : !bar
      nvgpu.mbarrier.arrive.expect_tx %bars[%n], %c8, predicate = %is0 : !bar
      nvgpu.mbarrier.try_wait.parity %bars[%c0], %f, %ticks : !bar`, ""},
		{"else-branch-arrive", block64, `
      nvgpu.mbarrier.init %bars[%c0], %c1, predicate = %is0 : !bar
      scf.if %is0 {
      } else {
        nvgpu.mbarrier.arrive.expect_tx %bars[%c0], %c8 : !bar
      }
      nvgpu.mbarrier.try_wait.parity %bars[%c0], %f, %ticks : !bar`, ""},
		{"raw-access", block64, `
      nvgpu.mbarrier.init %bars[%c0], %c1, predicate = %is0 : !bar
      %p = nvgpu.mbarrier.get %bars[%c0] : !bar -> i64
      nvgpu.mbarrier.try_wait.parity %bars[%c0], %f, %ticks : !bar`, ""},
		{"dynamic-loop", block64, `
      nvgpu.mbarrier.init %bars[%c0], %c1, predicate = %is0 : !bar
      scf.for %i = %c0 to %n step %c1 {
        nvgpu.mbarrier.arrive.expect_tx %bars[%c0], %c8, predicate = %is0 : !bar
      }
      nvgpu.mbarrier.try_wait.parity %bars[%c0], %t, %ticks : !bar`, ""},
		{"clusters", block64 + ", known_cluster_size = array<i32: 2, 1, 1>", `
      nvgpu.mbarrier.init %bars[%c0], %c1, predicate = %is0 : !bar
      nvgpu.mbarrier.try_wait.parity %bars[%c0], %f, %ticks : !bar`, ""},
		// Loops: barrier i mod 2, parity (i / 2) mod 2 is right; (i / 4)
		// mod 2 fails at i = 2.
		{"ring-ok", block64, ringBody("%c2"), ""},
		{"ring-wrong", block64, ringBody("%c4"), "wait on barrier 0 expects parity 0 but at this point phase 1 has not completed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := passtest.Parse(t, mbarKernel(c.attrs, c.body))
			var err error
			for _, k := range passtest.Kernels(m) {
				if e := checkMBarrierPhases(k); e != nil && err == nil {
					err = e
				}
			}
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("unexpected report: %v", err)
			case c.want != "" && err == nil:
				t.Fatalf("no report, want %q", c.want)
			case c.want != "" && !strings.Contains(err.Error(), c.want):
				t.Fatalf("got %v, want %q", err, c.want)
			}
		})
	}
}

// TestEvalIntOpDivisions checks divisions on index values, which are
// 64-bit: unsigned ones see negative values as 2^64 + x.
func TestEvalIntOpDivisions(t *testing.T) {
	m := passtest.Parse(t, `
func.func @f(%a: index, %b: index) {
  %0 = arith.divsi %a, %b : index
  %1 = arith.remsi %a, %b : index
  %2 = arith.remui %a, %b : index
  %3 = arith.divui %a, %b : index
  return
}`)
	ops := m.Region(0).Entry().First().Region(0).Entry().Ops()
	for _, c := range []struct {
		op   int
		x    []int64
		want int64
		ok   bool
	}{
		{0, []int64{-7, 2}, -3, true},
		{1, []int64{-7, 2}, -1, true},
		{2, []int64{7, 2}, 1, true},
		{2, []int64{-7, 2}, 1, true}, // (2^64 - 7) mod 2
		{3, []int64{7, 0}, 0, false},
		{3, []int64{-7, 2}, 1<<63 - 4, true},      // (2^64 - 7) / 2
		{0, []int64{math.MinInt64, -1}, 0, false}, // overflow: undefined
	} {
		got, ok := EvalIntOp(ops[c.op], c.x)
		if ok != c.ok || (ok && got != c.want) {
			t.Errorf("%s%v = %d,%v; want %d,%v", ops[c.op].Name(), c.x, got, ok, c.want, c.ok)
		}
	}
}
