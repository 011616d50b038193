package pipelining_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tmac-dev/tmac/dialects/arith"
	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/ir/eval"
	"github.com/tmac-dev/tmac/passes/internal/pipecheck"
)

// The tests below compile small tile loops with tmac's default pipeline
// and run them on the CPU emulator (pipecheck): the numbers must match
// the reference computed here, every access to the rings must be ordered
// after its fill and before the next one, and each iteration must land
// its boxes in its slot, wait with the parity and issue the loads the
// schedule record gives. The Catches test breaks the passes' output and
// checks that the run reports each break.

// pipeCase is one kernel.
type pipeCase struct {
	kind    string // "gemm" (wgmma readers), "attn" (gemm, then an RS mma reading A's tile), "ew" (ordinary readers, TMA store) or "copy" (a tile loaded and stored by TMA)
	n, s    int64  // tmac.stages, tmac.store_stages
	lb      int64  // lower bound (-1: the dynamic argument %L)
	ub      int64  // upper bound (-1: the dynamic argument %T)
	step    int64
	threads int64 // block size x (y = z = 1)
	known   bool  // the block size is a constant (else a host argument)
	bar     bool  // the body already has a gpu.barrier (ew)
	L, T    int64 // bindings of %L, %T
}

func (c pipeCase) String() string {
	return fmt.Sprintf("%s n=%d s=%d lb=%d ub=%d step=%d threads=%d known=%v bar=%v L=%d T=%d", c.kind, c.n, c.s, c.lb, c.ub, c.step, c.threads, c.known, c.bar, c.L, c.T)
}

// ivs are the induction values of the loop.
func (c pipeCase) ivs() []int64 {
	lb, ub := c.lb, c.ub
	if lb == -1 {
		lb = c.L
	}
	if ub == -1 {
		ub = c.T
	}
	var ivs []int64
	for v := lb; v < ub; v += c.step {
		ivs = append(ivs, v)
	}
	return ivs
}

// cols is the width of the global matrices: every iteration's tile fits.
func (c pipeCase) cols() int {
	w := 64
	for _, iv := range c.ivs() {
		w = max(w, int(iv+1)*64)
	}
	return w
}

func (c pipeCase) source() string {
	var b strings.Builder
	k := c.cols()
	b.WriteString(`!atile = memref<128x64xf16, #gpu.address_space<workgroup>>
!btile = memref<64x64xf16, #gpu.address_space<workgroup>>
!bfull = memref<64x128xf16, #gpu.address_space<workgroup>>
!adesc = !nvgpu.tensormap.descriptor<tensor = !atile, swizzle = swizzle_128b, l2promo = none, oob = zero, interleave = none>
!bdesc = !nvgpu.tensormap.descriptor<tensor = !btile, swizzle = swizzle_128b, l2promo = none, oob = zero, interleave = none>
!acc = !nvgpu.warpgroup.accumulator<fragmented = vector<128x128xf32>>
!oacc = !nvgpu.warpgroup.accumulator<fragmented = vector<128x64xf32>>
!ft = memref<32x64xf32, #gpu.address_space<workgroup>>
!fdesc = !nvgpu.tensormap.descriptor<tensor = !ft, swizzle = none, l2promo = none, oob = zero, interleave = none>
`)
	switch c.kind {
	case "gemm", "attn":
		fmt.Fprintf(&b, "func.func @main(%%a: memref<128x%[1]dxf16>, %%b: memref<%[1]dx128xf16>, %%d: memref<128x%[2]dxf32>, %%L: index, %%T: index, %%NT: index) {\n", k, c.outCols())
		fmt.Fprintf(&b, `  %%h64 = arith.constant 64 : index
  %%h128 = arith.constant 128 : index
  %%a_any = memref.cast %%a : memref<128x%[1]dxf16> to memref<*xf16>
  %%amap = nvgpu.tma.create.descriptor %%a_any box[%%h128, %%h64] : memref<*xf16> -> !adesc
  %%b_any = memref.cast %%b : memref<%[1]dx128xf16> to memref<*xf16>
  %%bmap = nvgpu.tma.create.descriptor %%b_any box[%%h64, %%h64] : memref<*xf16> -> !bdesc
`, k)
	case "ew", "copy":
		fmt.Fprintf(&b, "func.func @main(%%a: memref<32x%[1]dxf32>, %%b: memref<32x%[1]dxf32>, %%c: memref<32x%[1]dxf32>, %%L: index, %%T: index, %%NT: index) {\n", k)
		b.WriteString("  %h32 = arith.constant 32 : index\n  %h64 = arith.constant 64 : index\n")
		for _, x := range []string{"a", "b", "c"} {
			fmt.Fprintf(&b, `  %%%[1]s_any = memref.cast %%%[1]s : memref<32x%[2]dxf32> to memref<*xf32>
  %%%[1]smap = nvgpu.tma.create.descriptor %%%[1]s_any box[%%h32, %%h64] : memref<*xf32> -> !fdesc
`, x, k)
		}
	}
	threads := "%NT"
	if c.known {
		threads = "%hnt"
		fmt.Fprintf(&b, "  %%hnt = arith.constant %d : index\n", c.threads)
	}
	fmt.Fprintf(&b, `  %%h1 = arith.constant 1 : index
  gpu.launch blocks(%%bx, %%by, %%bz) in (%%gx = %%h1, %%gy = %%h1, %%gz = %%h1)
             threads(%%tx, %%ty, %%tz) in (%%sx = %s, %%sy = %%h1, %%sz = %%h1) {
    %%c0 = arith.constant 0 : index
    %%c1 = arith.constant 1 : index
    %%c64 = arith.constant 64 : index
    %%c128 = arith.constant 128 : index
    %%c2048 = arith.constant 2048 : index
    %%row0 = arith.muli %%bx, %%c128 : index
    %%col0 = arith.muli %%by, %%c128 : index
`, threads)
	bound := func(name string, v int64, dyn string) string {
		if v == -1 {
			return dyn
		}
		fmt.Fprintf(&b, "    %%%s = arith.constant %d : index\n", name, v)
		return "%" + name
	}
	lb, ub, step := bound("lb", c.lb, "%L"), bound("ub", c.ub, "%T"), bound("step", c.step, "")
	stages := fmt.Sprintf("{tmac.stages = %d : i64, tmac.store_stages = %d : i64}", c.n, c.s)
	switch c.kind {
	case "gemm", "attn":
		// gemm: D += A_k·B_k. attn: S = A_k·B_k (SS), P = f16(S) in
		// registers, O += P·A_k (RS: A's tile, 128 rows of 64, is also
		// the RS mma's B, K = 128 by N = 64, N-major).
		acc, mma := "!acc", `      %nacc = nvgpu.warpgroup.mma %da, %db, %acc {transposeB} : !nvgpu.warpgroup.descriptor<tensor = !atile>, !nvgpu.warpgroup.descriptor<tensor = !bfull>, !acc -> !acc
`
		if c.kind == "attn" {
			acc, mma = "!oacc", rsStep("!atile", 128)
		}
		fmt.Fprintf(&b, `    %%as = memref.alloc() : !atile
    %%bs = memref.alloc() : !bfull
    %%acc0 = nvgpu.warpgroup.mma.init.accumulator -> %[4]s
    %%res = scf.for %%k = %[1]s to %[2]s step %[3]s iter_args(%%acc = %%acc0) -> (%[4]s) {
      %%kk = arith.muli %%k, %%c64 : index
      tmac.tma.load %%amap[%%kk, %%row0] to %%as : !adesc -> !atile
      tmac.tma.load %%bmap[%%col0, %%kk] to %%bs : !bdesc -> !bfull
      tmac.tma.wait %%as, %%bs : !atile, !bfull
      %%da = nvgpu.warpgroup.generate.descriptor %%as, %%amap : !atile, !adesc -> !nvgpu.warpgroup.descriptor<tensor = !atile>
      %%db = nvgpu.warpgroup.generate.descriptor %%bs, %%bmap : !bfull, !bdesc -> !nvgpu.warpgroup.descriptor<tensor = !bfull>
%[7]s      scf.yield %%nacc : %[4]s
    } %[5]s
    nvgpu.warpgroup.mma.store %%res, %%d : %[4]s to memref<128x%[6]dxf32>
`, lb, ub, step, acc, stages, c.outCols(), mma)
	case "ew":
		bar := ""
		if c.bar {
			bar = "      gpu.barrier\n"
		}
		fmt.Fprintf(&b, `    %%as = memref.alloc() : !ft
    %%bs = memref.alloc() : !ft
    %%cs = memref.alloc() : !ft
    scf.for %%t = %s to %s step %s {
      %%x = arith.muli %%t, %%c64 : index
      tmac.tma.load %%amap[%%x, %%row0] to %%as : !fdesc -> !ft
      tmac.tma.load %%bmap[%%x, %%row0] to %%bs : !fdesc -> !ft
      tmac.tma.wait %%as, %%bs : !ft, !ft
%s      scf.for %%i = %%tx to %%c2048 step %%sx {
        %%r = arith.divui %%i, %%c64 : index
        %%cc = arith.remui %%i, %%c64 : index
        %%va = memref.load %%as[%%r, %%cc] : !ft
        %%vb = memref.load %%bs[%%r, %%cc] : !ft
        %%vs = arith.addf %%va, %%vb : f32
        memref.store %%vs, %%cs[%%r, %%cc] : !ft
      }
      tmac.tma.store %%cs to %%cmap[%%x, %%row0] : !ft -> !fdesc
    } %s
`, lb, ub, step, bar, stages)
	case "copy":
		fmt.Fprintf(&b, `    %%as = memref.alloc() : !ft
    scf.for %%t = %s to %s step %s {
      %%x = arith.muli %%t, %%c64 : index
      tmac.tma.load %%amap[%%x, %%row0] to %%as : !fdesc -> !ft
      tmac.tma.wait %%as : !ft
      tmac.tma.store %%as to %%cmap[%%x, %%row0] : !ft -> !fdesc
    } %s
`, lb, ub, step, stages)
	}
	b.WriteString("    gpu.terminator\n  }\n  return\n}\n")
	return b.String()
}

// program is the case with its inputs, the ring it must run and the
// reference of its output.
func (c pipeCase) program(seed int64) (*pipecheck.Program, outputs) {
	k := c.cols()
	ivs := c.ivs()
	p := &pipecheck.Program{Name: c.String(), Source: c.source()}
	var want pipecheck.Matrix
	dyn := []any{c.L, c.T, c.threads}
	switch c.kind {
	case "gemm", "attn":
		a := pipecheck.NewInput(ir.F16T, 128, k, seed)
		b := pipecheck.NewInput(ir.F16T, k, 128, seed+1)
		d := pipecheck.NewOutput(ir.F32T, 128, c.outCols())
		p.Args = append([]any{a.Buffer, b.Buffer, d.Buffer}, dyn...)
		want = d.Clone()
		if c.kind == "attn" {
			attnRef(want, a, b, ivs)
		} else {
			gemmRef(want, a, b, 0, 128, 0, 0, 128, ivs)
		}
	case "ew", "copy":
		a := pipecheck.NewInput(ir.F32T, 32, k, seed)
		b := pipecheck.NewInput(ir.F32T, 32, k, seed+1)
		cm := pipecheck.NewOutput(ir.F32T, 32, k)
		p.Args = append([]any{a.Buffer, b.Buffer, cm.Buffer}, dyn...)
		want = cm.Clone()
		for _, iv := range ivs {
			for r := 0; r < 32; r++ {
				for x := int(iv) * 64; x < int(iv+1)*64; x++ {
					v := a.At(r, x)
					if c.kind == "ew" {
						v += b.At(r, x)
					}
					want.Set(r, x, v)
				}
			}
		}
	}
	all := make([]int64, len(ivs))
	for j := range all {
		all[j] = int64(j)
	}
	p.Ring = &pipecheck.Ring{
		Blocks:    [][3]int64{{0, 0, 0}},
		Positions: func([3]int64) int64 { return int64(len(ivs)) },
		Loads:     func(_ [3]int64, g int64) []pipecheck.Load { return c.loads(ivs[g]) },
		Waits: func(_ [3]int64, thread int) []int64 {
			if c.kind == "copy" && thread != 0 {
				return nil // only the elected thread waits for a tile nothing else reads
			}
			return all
		},
		Trip: int64(len(ivs)),
	}
	return p, outputs{2: want}
}

// outCols is the width of the output of a gemm or attn case.
func (c pipeCase) outCols() int {
	if c.kind == "attn" {
		return 64
	}
	return 128
}

// attnRef sets o to the sum over the K steps iv of P·A_iv, P = f16(A_iv·B_iv)
// (to_operand rounds to nearest even), A_iv columns 64 iv..64 iv+63 of a
// and B_iv the same rows of b; the inputs are small integers, so every
// partial sum is exact in f32 as in f64.
func attnRef(o, a, b pipecheck.Matrix, ivs []int64) {
	acc := make([]float64, 128*64)
	s := pipecheck.NewOutput(ir.F32T, 128, 128)
	for _, iv := range ivs {
		gemmRef(s, a, b, 0, 128, 0, 0, 128, []int64{iv})
		for m := 0; m < 128; m++ {
			for n := 0; n < 128; n++ {
				pv := eval.Round(s.At(m, n), ir.F16)
				for j := 0; j < 64; j++ {
					acc[m*64+j] += pv * a.At(n, int(iv)*64+j)
				}
			}
		}
	}
	for i, v := range acc {
		o.Set(i/64, i%64, v)
	}
}

// loads are the boxes of the iteration with induction value iv.
func (c pipeCase) loads(iv int64) []pipecheck.Load {
	switch c.kind {
	case "gemm", "attn":
		return []pipecheck.Load{
			{Tile: 0, Map: 0, Coords: []int64{iv * 64, 0}, Issuer: -1},
			{Tile: 1, Map: 1, Coords: []int64{0, iv * 64}, Issuer: -1},
			{Tile: 1, Box: 1, Map: 1, Coords: []int64{64, iv * 64}, Issuer: -1},
		}
	case "copy":
		return []pipecheck.Load{{Tile: 0, Map: 0, Coords: []int64{iv * 64, 0}, Issuer: -1}}
	}
	return []pipecheck.Load{
		{Tile: 0, Map: 0, Coords: []int64{iv * 64, 0}, Issuer: -1},
		{Tile: 1, Map: 1, Coords: []int64{iv * 64, 0}, Issuer: -1},
	}
}

// runPipe compiles and emulates the case under the seeds and compares the
// output with the reference; the first problem is returned. mutate, if
// set, breaks the kernel after the pass after.
func runPipe(c pipeCase, after string, mutate func(k *ir.Operation), seeds ...int64) error {
	p, outs := c.program(int64(c.n*100 + c.T))
	p.Mutate, p.MutateAfter = mutate, after
	return emulate(p, outs, seeds...)
}

// TestTMAPipelineEmulated: the three reader kinds, N 1..4 and 7, trip
// counts 0..3, 5 and 9, each with one of the loop forms in turn (static
// bounds; a dynamic trip count; a dynamic lower bound with step 3; two
// warpgroups, the block size unknown on odd N).
func TestTMAPipelineEmulated(t *testing.T) {
	t.Parallel()
	count := 0
	for ki, kind := range []string{"gemm", "ew", "copy"} {
		for ni, n := range []int64{1, 2, 3, 4, 7} {
			for ti, trip := range []int64{0, 1, 2, 3, 5, 9} {
				c := pipeCase{kind: kind, n: n, s: 1 + n%3, lb: 0, ub: trip, step: 1, threads: 128, known: true}
				switch (ki + ni + ti) % 4 {
				case 1: // dynamic trip count
					c.ub, c.T = -1, trip
				case 2: // dynamic lower bound, step 3, static upper bound
					c.lb, c.L, c.ub, c.step = -1, 2, 2+3*trip, 3
				case 3: // several warpgroups, unknown block size on odd n
					c.threads, c.known, c.bar = 256, n%2 == 0, trip%2 == 1
					c.lb, c.ub = 5, 5+trip
				}
				if err := runPipe(c, "", nil, int64(count)); err != nil {
					t.Fatal(err)
				}
				count++
			}
		}
	}
	t.Logf("%d emulated kernels", count)
}

// TestTMAPipelineEmulatedRS: the attention-like loop, whose last mma is a
// tmac.warpgroup.mma reading A's tile (default waitGroup 1), with N 1..3
// (one slot: before, the RS mma was not counted and the next iteration's
// load overwrote its B), in the loop forms of TestTMAPipelineEmulated.
func TestTMAPipelineEmulatedRS(t *testing.T) {
	t.Parallel()
	count := 0
	for ni, n := range []int64{1, 2, 3} {
		for ti, trip := range []int64{1, 3} {
			c := pipeCase{kind: "attn", n: n, s: 1, lb: 0, ub: trip, step: 1, threads: 128, known: true}
			switch (ni + ti) % 3 {
			case 1: // dynamic trip count
				c.ub, c.T = -1, trip
			case 2: // two warpgroups, unknown block size on odd n
				c.threads, c.known = 256, n%2 == 0
			}
			if err := runPipe(c, "", nil, int64(count)); err != nil {
				t.Fatal(err)
			}
			count++
		}
	}
	t.Logf("%d emulated kernels", count)
}

// TestTMAPipelineCatches breaks the pass output in the ways the pipeline
// protocol forbids and checks that the emulated run reports each.
func TestTMAPipelineCatches(t *testing.T) {
	t.Parallel()
	gemm := pipeCase{kind: "gemm", n: 3, s: 2, lb: 0, ub: 6, step: 1, threads: 128, known: true}
	ew := pipeCase{kind: "ew", n: 3, s: 2, lb: 0, ub: 6, step: 1, threads: 128, known: true}
	cp := pipeCase{kind: "copy", n: 3, s: 2, lb: 0, ub: 6, step: 1, threads: 128, known: true}
	attn1 := pipeCase{kind: "attn", n: 1, s: 1, lb: 0, ub: 3, step: 1, threads: 128, known: true}
	inLoop := func(o *ir.Operation) bool { return o.ParentOp().Name() == "scf.for" }
	topLevel := func(o *ir.Operation) bool { return o.ParentOp().Name() == "gpu.func" }
	catches(t, []mutation[pipeCase]{
		{"wgmma leaves the previous stage pending", []pipeCase{gemm}, "", func(k *ir.Operation) {
			find(k, "nvgpu.warpgroup.mma", nil)[0].SetAttr("waitGroup", ir.I64Attr(2))
		}, "before every reader released it"},
		// The RS mma, the last of the iteration, left pending with one
		// slot (what tma-pipeline did when it counted only
		// nvgpu.warpgroup.mma): the next iteration's load refills the
		// slot it reads. (With more slots the next iteration's
		// to_operand, which waits for every group, retires it first.)
		{"RS wgmma pending at the refill of the only slot", []pipeCase{attn1}, "", func(k *ir.Operation) {
			find(k, "tmac.warpgroup.mma", nil)[0].SetAttr("waitGroup", ir.I64Attr(1))
		}, "before every reader released it"},
		{"no wgmma wait after the loop", []pipeCase{gemm}, "lower-nvgpu", func(k *ir.Operation) {
			// The epilogue's own wait too: nothing retires the last group.
			eraseAll(find(k, "nvvm.wgmma.wait.group.sync.aligned", func(o *ir.Operation) bool { return o.ParentOfName("scf.for") == nil }))
		}, "reads a wgmma accumulator before nvvm.wgmma.wait.group has retired its group"},
		{"no barrier before the refill", []pipeCase{ew}, "", func(k *ir.Operation) {
			eraseAll(find(k, "gpu.barrier", inLoop))
		}, "before every reader released it"},
		{"wrong expect_tx", []pipeCase{gemm}, "lower-nvgpu", func(k *ir.Operation) {
			// After lower-nvgpu, whose static check would reject it.
			setConst(find(k, "nvvm.mbarrier.arrive.expect_tx", nil)[0], 1, 16384, ir.I32)
		}, "drive the mbarrier's transaction count below zero"},
		{"no prologue", []pipeCase{gemm}, "", func(k *ir.Operation) {
			find(k, "scf.if", topLevel)[1].Erase()
		}, "deadlock"},
		{"refill one stage too far ahead", []pipeCase{gemm}, "", func(k *ir.Operation) {
			// j + N-1 becomes j + N: the slot still being read is refilled.
			for _, a := range find(k, "arith.addi", inLoop) {
				if c, ok := arith.ConstantInt(a.Operand(1)); ok && c == 2 {
					setConst(a, 1, 3, ir.Index)
				}
			}
		}, "before every reader released it"},
		{"no proxy fence", []pipeCase{ew}, "", func(k *ir.Operation) {
			find(k, "nvvm.fence.proxy", nil)[0].Erase()
		}, "no fence.proxy.async since"},
		// ew: no store rotation wait; copy: the refill of a pass-through
		// slot before its store has read it.
		{"no bulk wait_group in the loop", []pipeCase{ew, cp}, "", func(k *ir.Operation) {
			eraseAll(find(k, "nvvm.cp.async.bulk.wait_group", inLoopIf))
		}, "before every reader released it"},
		{"refill wait allows two iterations of stores", []pipeCase{cp}, "", func(k *ir.Operation) {
			for _, o := range find(k, "nvvm.cp.async.bulk.wait_group", inLoopIf) {
				o.SetAttr("group", ir.IntAttr(2, ir.I32))
			}
		}, "before every reader released it"},
		{"pass-through store before the wait", []pipeCase{cp}, "", func(k *ir.Operation) {
			// The elected thread's wait (its scf.if) moved after the store's.
			st := find(k, "nvgpu.tma.async.store", nil)[0].ParentOp()
			w := find(k, "nvgpu.mbarrier.try_wait.parity", inLoopIf)[0].ParentOp()
			w.Remove()
			st.Block().InsertBefore(w, st.Next())
		}, "before their fill"},
		{"no final store wait", []pipeCase{ew, cp}, "", func(k *ir.Operation) {
			eraseAll(find(k, "nvvm.cp.async.bulk.wait_group", func(o *ir.Operation) bool { return !inLoopIf(o) }))
		}, "exits without waiting for its TMA store"},
	}, func(c pipeCase, after string, mutate func(k *ir.Operation)) error {
		return runPipe(c, after, mutate, 1, 2, 3)
	})
}

// inLoopIf: an op under an scf.if directly in an scf.for body.
func inLoopIf(o *ir.Operation) bool {
	p := o.ParentOp()
	return p.Name() == "scf.if" && p.ParentOp().Name() == "scf.for"
}
