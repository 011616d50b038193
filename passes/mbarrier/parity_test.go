package mbarrier

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/tmac-dev/tmac/dialects/arith"
	"github.com/tmac-dev/tmac/dialects/gpu"
	"github.com/tmac-dev/tmac/dialects/nvgpu"
	"github.com/tmac-dev/tmac/dialects/scf"
	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/passes/internal/passtest"
	_ "github.com/tmac-dev/tmac/passes/lowernvgpu"
)

func TestCountResidue(t *testing.T) {
	for lo := int64(-7); lo < 9; lo++ {
		for hi := lo - 2; hi < lo+20; hi++ {
			for n := int64(1); n <= 5; n++ {
				for r := int64(0); r < n; r++ {
					want := int64(0)
					for u := lo; u < hi; u++ {
						if floorMod(u, n) == r {
							want++
						}
					}
					if got := countResidue(lo, hi, n, r); got != want {
						t.Fatalf("countResidue(%d, %d, %d, %d) = %d, want %d", lo, hi, n, r, got, want)
					}
				}
			}
		}
	}
}

// waitSegment is one piece of a generated kernel: a straight-line wait on
// barrier idx (trips == 0 and !dynamic), or a loop `scf.for %j = lb to
// lb+trips` (or to %n) waiting on `(j + add) mod ring` (ring 0: the
// constant index idx).
type waitSegment struct {
	straight bool
	idx      int64
	lb       int64
	trips    int64
	dynamic  bool
	ring     int64
	add      int64
}

// kernelFor writes the segments as a gpu.func kernel over a group of size
// barriers (%n: the dynamic trip count).
func kernelFor(size int64, segs []waitSegment) string {
	var b strings.Builder
	fmt.Fprintf(&b, `
!bar = !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>, num_barriers = %d>
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @k(%%n: index) kernel {
      %%one = arith.constant 1 : index
      %%c0 = arith.constant 0 : index
      %%bars = nvgpu.mbarrier.create -> !bar
`, size)
	for i, s := range segs {
		if s.straight {
			fmt.Fprintf(&b, "      %%i%d = arith.constant %d : index\n      tmac.mbarrier.wait %%bars[%%i%d] : !bar\n", i, s.idx, i)
			continue
		}
		ub := fmt.Sprintf("%%u%d", i)
		if s.dynamic {
			ub = "%n"
		} else {
			fmt.Fprintf(&b, "      %%u%d = arith.constant %d : index\n", i, s.lb+s.trips)
		}
		fmt.Fprintf(&b, "      %%l%d = arith.constant %d : index\n      scf.for %%j%d = %%l%d to %s step %%one {\n", i, s.lb, i, i, ub)
		if s.ring == 0 {
			fmt.Fprintf(&b, "        %%s%d = arith.constant %d : index\n", i, s.idx)
		} else {
			x := fmt.Sprintf("%%j%d", i)
			if s.add != 0 {
				fmt.Fprintf(&b, "        %%a%d = arith.constant %d : index\n        %%x%d = arith.addi %%j%d, %%a%d : index\n", i, s.add, i, i, i)
				x = fmt.Sprintf("%%x%d", i)
			}
			fmt.Fprintf(&b, "        %%r%d = arith.constant %d : index\n        %%s%d = arith.remui %s, %%r%d : index\n", i, s.ring, i, x, i)
		}
		fmt.Fprintf(&b, "        tmac.mbarrier.wait %%bars[%%s%d] : !bar\n      }\n", i)
	}
	b.WriteString("      gpu.return\n    }\n  }\n}\n")
	return b.String()
}

// waitTrace runs a kernel's barrier waits (loops unrolled, %n = n) and
// returns (barrier, parity) of each nvgpu.mbarrier.try_wait.parity.
func waitTrace(t *testing.T, k *ir.Operation, n int64) [][2]int64 {
	body := gpu.FuncOp{Op: k}.Body().Entry()
	env := map[ir.Value]int64{body.Arg(0): n}
	val := func(v ir.Value) int64 {
		if c, ok := env[v]; ok {
			return c
		}
		if c, ok := arith.ConstantInt(v); ok {
			if ir.BitWidth(v.Type()) == 1 {
				c &= 1
			}
			return c
		}
		t.Fatalf("unknown value %v", v)
		return 0
	}
	var trace [][2]int64
	var run func(b *ir.Block)
	run = func(b *ir.Block) {
		for op := b.First(); op != nil; op = op.Next() {
			switch op.Name() {
			case nvgpu.MbarrierTryWaitParity:
				w := nvgpu.MbarrierTryWaitParityOp{Op: op}
				trace = append(trace, [2]int64{val(w.MbarId()), val(w.PhaseParity())})
			case scf.For:
				l := scf.ForOp{Op: op}
				body := l.Region().Entry()
				args := body.ArgValues()
				iters := make([]int64, len(args)-1)
				for i, v := range l.InitArgs() {
					iters[i] = val(v)
				}
				for j := val(l.LowerBound()); j < val(l.UpperBound()); j += val(l.Step()) {
					env[args[0]] = j
					for i := range iters {
						env[args[1+i]] = iters[i]
					}
					run(body)
					for i, v := range (scf.YieldOp{Op: body.Terminator()}).Results() {
						iters[i] = val(v)
					}
				}
				for i, r := range l.Results() {
					env[r] = iters[i]
				}
			case scf.Yield, gpu.Return, nvgpu.MbarrierCreate:
			default:
				x := make([]int64, op.NumOperands())
				for i, v := range op.Operands() {
					x[i] = val(v)
				}
				r, ok := EvalIntOp(op, x)
				if op.Name() == arith.Remui && x[1] == 1 {
					r, ok = 0, true // unsigned: also for negative dividends
				}
				if !ok {
					t.Fatalf("cannot evaluate %s", op.Name())
				}
				if ir.BitWidth(op.Result(0).Type()) == 1 {
					r &= 1
				}
				env[op.Result(0)] = r
			}
		}
	}
	run(body)
	return trace
}

// TestMBarrierParitiesRandom generates kernels of straight-line waits and
// ring loops, and checks that every parity the pass computes is the one
// the ring discipline gives (k-th wait on a barrier: parity k mod 2), for
// both emitted forms, and that it refuses only for the documented reasons.
func TestMBarrierParitiesRandom(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	ok, refused := 0, map[string]int{}
	for iter := 0; iter < 3000; iter++ {
		size := int64(1 + rng.Intn(7))
		var segs []waitSegment
		for i, ns := 0, 1+rng.Intn(4); i < ns; i++ {
			if rng.Intn(3) == 0 {
				segs = append(segs, waitSegment{straight: true, idx: rng.Int63n(size)})
				continue
			}
			s := waitSegment{lb: rng.Int63n(5) - 1, trips: rng.Int63n(10), ring: 1 + rng.Int63n(size)}
			if rng.Intn(4) == 0 {
				s.ring, s.idx = 0, rng.Int63n(size)
			} else if rng.Intn(3) == 0 {
				s.add = rng.Int63n(5) - 1
			}
			if rng.Intn(2) == 0 {
				// Mostly full rounds, so that bases stay in step.
				s.lb, s.add = 0, 0
				s.trips = s.ring * rng.Int63n(3)
			}
			s.dynamic = rng.Intn(5) == 0
			segs = append(segs, s)
		}
		src := kernelFor(size, segs)
		m := passtest.Parse(t, src)
		k := passtest.Kernels(m)[0]
		err := computeMBarrierParities(k, nil)
		if err != nil {
			msg := err.Error()
			reason := ""
			for _, r := range []string{"out of step", "negative value", "dynamic trip count"} {
				if strings.Contains(msg, r) {
					reason = r
				}
			}
			if reason == "" {
				t.Fatalf("unexpected refusal %v\n%s", err, src)
			}
			refused[reason]++
			continue
		}
		if err := ir.VerifyModule(m); err != nil {
			t.Fatalf("invalid output: %v\n%s", err, src)
		}
		ok++
		dyn := rng.Int63n(12)
		trace := waitTrace(t, k, dyn)
		// The ring discipline, executed.
		count := map[int64]int64{}
		var want [][2]int64
		for _, s := range segs {
			if s.straight {
				want = append(want, [2]int64{s.idx, count[s.idx] & 1})
				count[s.idx]++
				continue
			}
			ub := s.lb + s.trips
			if s.dynamic {
				ub = dyn
			}
			for j := s.lb; j < ub; j++ {
				b := s.idx
				if s.ring != 0 {
					b = floorMod(j+s.add, s.ring)
				}
				want = append(want, [2]int64{b, count[b] & 1})
				count[b]++
			}
		}
		if fmt.Sprint(trace) != fmt.Sprint(want) {
			t.Fatalf("parities differ\n got %v\nwant %v\n%s", trace, want, src)
		}
	}
	if ok < 1000 || refused["out of step"] == 0 || refused["dynamic trip count"] == 0 {
		t.Fatalf("poor coverage: %d accepted, refused %v", ok, refused)
	}
	t.Logf("%d accepted, refused %v", ok, refused)
}

// Both forms of code: derived for powers of two, carried otherwise.
func TestMBarrierParityCodeForms(t *testing.T) {
	for _, c := range []struct {
		ring, add  int64
		want, nope []string
	}{
		{1, 0, []string{"arith.andi %arg1, %c1", "arith.cmpi ne"}, []string{"shrui", "iter_args"}},
		{4, 0, []string{"arith.andi %arg1, %c4", "arith.cmpi ne"}, []string{"shrui", "iter_args"}},
		{3, 0, []string{"iter_args(", "-> (i1)", "arith.xori"}, []string{"shrui"}},
	} {
		seg := waitSegment{trips: 8, ring: c.ring, add: c.add, dynamic: true}
		m := passtest.Parse(t, kernelFor(4, []waitSegment{seg}))
		if err := computeMBarrierParities(passtest.Kernels(m)[0], nil); err != nil {
			t.Fatal(err)
		}
		out := ir.Print(m, ir.PrintOptions{})
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("ring %d: no %q in\n%s", c.ring, w, out)
			}
		}
		for _, w := range c.nope {
			if strings.Contains(out, w) {
				t.Errorf("ring %d: unexpected %q in\n%s", c.ring, w, out)
			}
		}
		if strings.Contains(out, "tmac.mbarrier.wait") {
			t.Errorf("wait left in\n%s", out)
		}
	}
}

// A group waited on only inside one branch of an scf.if (a warp-
// specialised consumer) is counted inside the branch; an scf.if whose
// other branch also waits on the group is refused.
func TestMBarrierParityUnderIf(t *testing.T) {
	body := `
      %bars2 = nvgpu.mbarrier.create -> !bar
      %w = arith.cmpi ult, %tid, %c2 : index
      scf.if %w {
        tmac.mbarrier.wait %bars[%c0] : !bar
        tmac.mbarrier.wait %bars[%c1] : !bar
        scf.for %j = %c0 to %n step %c1 {
          %s = arith.remui %j, %c2 : index
          tmac.mbarrier.wait %bars[%s] : !bar
        }
      } else {
        scf.if %is0 {
          tmac.mbarrier.wait %bars2[%c1] : !bar
        }
        ELSE
      }`
	m := passtest.Parse(t, mbarKernel(block64, strings.Replace(body, "ELSE", "", 1)))
	if err := computeMBarrierParities(passtest.Kernels(m)[0], nil); err != nil {
		t.Fatal(err)
	}
	out := ir.Print(m, ir.PrintOptions{})
	// Barriers 0 and 1 of %1, barrier 1 of %2: phase 0 each; then the
	// ring with base 1 (odd: cmpi eq).
	if strings.Count(out, "], %false, %c10000000") != 3 || !strings.Contains(out, "arith.cmpi eq, %5, %c0") {
		t.Errorf("unexpected parities in\n%s", out)
	}
	m = passtest.Parse(t, mbarKernel(block64, strings.Replace(body, "ELSE", "tmac.mbarrier.wait %bars[%c0] : !bar", 1)))
	err := computeMBarrierParities(passtest.Kernels(m)[0], nil)
	if err == nil || !strings.Contains(err.Error(), "also waited on outside that branch") {
		t.Fatalf("got %v", err)
	}
}

// The explicit-parity check of the pass re-checks what the computation
// produced: correct parities pass, a flipped one is reported.
func TestMBarrierParityCrossCheck(t *testing.T) {
	for _, c := range []struct {
		ring int
		flip func(k *ir.Operation) // breaks the computed parity
	}{
		{2, func(k *ir.Operation) {
			for _, op := range ir.Nested(k, arith.Cmpi) {
				if p, _ := ir.AttrInt(arith.CmpiOp{Op: op}.Predicate()); p == 1 && ir.BitWidth(arith.CmpiOp{Op: op}.Lhs().Type()) != 1 {
					op.SetAttr("predicate", ir.I64Attr(0))
				}
			}
		}},
		{3, func(k *ir.Operation) {
			for _, op := range ir.Nested(k, arith.Constant) {
				if v, ok := arith.ConstantInt(op.Result(0)); ok && v == 1 && ir.BitWidth(op.Result(0).Type()) == 1 {
					ir.Nested(k, scf.For)[1].SetOperand(3, op.Result(0)) // the first init arg: true
				}
			}
		}},
	} {
		src := mbarKernel(block64, fmt.Sprintf(`
      %%r = arith.constant %d : index
      scf.if %%is0 {
        scf.for %%i = %%c0 to %%r step %%c1 {
          nvgpu.mbarrier.init %%bars[%%i], %%c1 : !bar
        }
      }
      gpu.barrier
      scf.for %%j = %%c0 to %%c8 step %%c1 {
        %%s = arith.remui %%j, %%r : index
        nvgpu.mbarrier.arrive.expect_tx %%bars[%%s], %%c8, predicate = %%is0 : !bar
        tmac.mbarrier.wait %%bars[%%s] : !bar
      }`, c.ring))
		src = strings.Replace(src, "num_barriers = 2", fmt.Sprintf("num_barriers = %d", c.ring), 1)
		for _, broken := range []bool{false, true} {
			m := passtest.Parse(t, src)
			k := passtest.Kernels(m)[0]
			if err := computeMBarrierParities(k, nil); err != nil {
				t.Fatal(err)
			}
			if broken {
				c.flip(k)
			}
			err := checkMBarrierPhases(k)
			switch {
			case !broken && err != nil:
				t.Errorf("ring %d: computed parities reported: %v", c.ring, err)
			case broken && (err == nil || !strings.Contains(err.Error(), "expects parity")):
				t.Errorf("ring %d: broken parity not reported (%v)\n%s", c.ring, err, ir.Print(m, ir.PrintOptions{}))
			}
		}
	}
}
