package pipelining_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tmac-dev/tmac/dialects/arith"
	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/passes"
	"github.com/tmac-dev/tmac/passes/internal/passtest"
	"github.com/tmac-dev/tmac/passes/internal/pipecheck"
)

// warp-specialize's output run on the CPU emulator (pipecheck): a
// producer warpgroup whose elected thread loads every ring position and
// C consumer warpgroups that wait for it on the full barriers and release
// it on the empty ones. Beyond the numbers and the order of every access
// to the rings, the run must land each position's boxes in its slots,
// every consumer thread must wait for every position in order, seeing its
// phase with the parity the record gives, the producer's k-th wait for a
// slot must see the slot released k times, and every release must be of a
// slot the record's rule names.

// wsCase is one kernel of the single-loop form.
type wsCase struct {
	kind string // "gemm" (wgmma readers), "attn" (gemm, then an RS mma reading A's tile; c = 2) or "ew" (thread readers)
	n    int64  // tmac.stages
	c    int64  // consumer warpgroups
	form int    // 0: static 0..T step 1; 1: 0..%U step 1; 2: %L..%U step 3
	trip int64  // trip count
	bar  bool   // ew: a gpu.barrier in the loop body
	// mixed: gemm whose B tile the consumer threads also read (memref.load)
	mixed bool
	// setup: ew with consumer-only setup before the loop (thread 0 stores
	// 1 to shared memory, a barrier, every thread adds what it reads)
	setup bool
}

func (c wsCase) String() string {
	return fmt.Sprintf("%s n=%d c=%d form=%d T=%d bar=%v mixed=%v setup=%v", c.kind, c.n, c.c, c.form, c.trip, c.bar, c.mixed, c.setup)
}

// bounds returns the loop's lb, ub, step and the bindings of %L, %U.
func (c wsCase) bounds() (lb, ub, step, L, U int64) {
	switch c.form {
	case 0:
		return 0, c.trip, 1, 0, 0
	case 1:
		return 0, c.trip, 1, 0, c.trip
	}
	lb, step = 2, 3
	ub = lb + step*c.trip - 1 // ceil division: the last step is partial
	if c.trip == 0 {
		ub = lb - 4 // an empty range below lb
	}
	return lb, ub, step, lb, ub
}

// ivs are the loop's induction values.
func (c wsCase) ivs() []int64 {
	lb, _, step, _, _ := c.bounds()
	out := make([]int64, c.trip)
	for j := range out {
		out[j] = lb + int64(j)*step
	}
	return out
}

func (c wsCase) source() string {
	var b strings.Builder
	k := kCols(c.ivs())
	threads := 128 * c.c
	b.WriteString(tileTypes(64*c.c, 128, 64))
	switch c.kind {
	case "gemm":
		fmt.Fprintf(&b, "func.func @main(%%a: memref<%[1]dx%[2]dxf16>, %%b: memref<%[2]dx128xf16>, %%d: memref<%[1]dx128xf32>, %%aux: memref<1x%[3]dxf32>, %%L: index, %%U: index) {\n", 64*c.c, k, threads)
		hostMaps(&b, "gemm", 64*c.c, fmt.Sprintf("memref<%dx%dxf16>", 64*c.c, k), fmt.Sprintf("memref<%dx128xf16>", k))
	case "attn":
		fmt.Fprintf(&b, "func.func @main(%%a: memref<128x%[1]dxf16>, %%b: memref<%[1]dx128xf16>, %%d: memref<128x64xf32>, %%L: index, %%U: index) {\n", k)
		hostMaps(&b, "gemm", 128, fmt.Sprintf("memref<128x%dxf16>", k), fmt.Sprintf("memref<%dx128xf16>", k))
	case "ew":
		fmt.Fprintf(&b, "func.func @main(%%a: memref<32x%[1]dxf32>, %%b: memref<32x%[1]dxf32>, %%out: memref<1x%[2]dxf32>, %%L: index, %%U: index) {\n", k, threads)
		hostMaps(&b, "ew", 64*c.c, fmt.Sprintf("memref<32x%dxf32>", k), fmt.Sprintf("memref<32x%dxf32>", k))
	}
	launch(&b, threads, 1, 1)
	b.WriteString("    %row0 = arith.muli %bx, %c128 : index\n")
	_, ubv, stv, _, _ := c.bounds()
	l := kLoop{kind: c.kind, lb: "%c0", ub: "%U", step: "%c1", attrs: fmt.Sprintf("{tmac.stages = %d : i64, tmac.warp_specialize}", c.n), mixed: c.mixed, bar: c.bar, btype: "!ft"}
	switch c.form {
	case 0:
		fmt.Fprintf(&b, "    %%ub = arith.constant %d : index\n", ubv)
		l.ub = "%ub"
	case 2:
		fmt.Fprintf(&b, "    %%st = arith.constant %d : index\n", stv)
		l.lb, l.step = "%L", "%st"
	}
	switch c.kind {
	case "gemm", "attn":
		l.loads = "      tmac.tma.load %amap[%kk, %row0] to %as : !adesc -> !atile\n      tmac.tma.load %bmap[%c0, %kk] to %bs : !bdesc -> !bfull\n"
		loop, acc, sum := l.text()
		accType, cols := "!acc", int64(128) // attn: O is 64 columns wide
		if c.kind == "attn" {
			accType, cols = "!oacc", 64
		}
		fmt.Fprintf(&b, `    %%wg = arith.divui %%tx, %%c128 : index
    %%myrow = arith.muli %%wg, %%c64 : index
    %%as = memref.alloc() : !atile
    %%bs = memref.alloc() : !bfull
    %%acc0 = nvgpu.warpgroup.mma.init.accumulator -> %s
%s    %%grow = arith.addi %%row0, %%myrow : index
%s`, accType, loop, storeTile(acc, "%c0", 64*c.c, cols, cols))
		if c.mixed {
			fmt.Fprintf(&b, "    memref.store %s, %%aux[%%c0, %%tx] : memref<1x%dxf32>\n", sum, threads)
		}
	case "ew":
		l.loads = "      tmac.tma.load %amap[%kk, %row0] to %as : !fdesc -> !ft\n      tmac.tma.load %bmap[%kk, %row0] to %bs : !fdesc -> !ft\n"
		loop, sum, _ := l.text()
		b.WriteString("    %as = memref.alloc() : !ft\n    %bs = memref.alloc() : !ft\n")
		if c.setup {
			b.WriteString(`    %scr = memref.alloc() : memref<1xf32, #gpu.address_space<workgroup>>
    %first = arith.cmpi eq, %tx, %c0 : index
    scf.if %first {
      %one = arith.constant 1.0 : f32
      memref.store %one, %scr[%c0] : memref<1xf32, #gpu.address_space<workgroup>>
    }
    gpu.barrier
    %bias = memref.load %scr[%c0] : memref<1xf32, #gpu.address_space<workgroup>>
`)
		}
		b.WriteString(loop)
		if c.setup {
			fmt.Fprintf(&b, "    %%biased = arith.addf %s, %%bias : f32\n", sum)
			sum = "%biased"
		}
		fmt.Fprintf(&b, "    memref.store %s, %%out[%%c0, %%tx] : memref<1x%dxf32>\n", sum, threads)
	}
	b.WriteString("    gpu.terminator\n  }\n  return\n}\n")
	return b.String()
}

// program is the case with its inputs, ring and reference.
func (c wsCase) program(seed int64) (*pipecheck.Program, outputs) {
	ivs := c.ivs()
	k := kCols(ivs)
	threads := int(128 * c.c)
	_, _, _, L, U := c.bounds()
	p := &pipecheck.Program{Name: "warp-specialize " + c.String(), Source: c.source()}
	outs := outputs{}
	switch c.kind {
	case "gemm":
		rows := int(64 * c.c)
		a := pipecheck.NewInput(ir.F16T, rows, k, seed)
		b := pipecheck.NewInput(ir.F16T, k, 128, seed+1)
		d := pipecheck.NewOutput(ir.F32T, rows, 128)
		aux := pipecheck.NewOutput(ir.F32T, 1, threads)
		p.Args = []any{a.Buffer, b.Buffer, d.Buffer, aux.Buffer, L, U}
		outs[2] = d.Clone()
		gemmRef(outs[2], a, b, 0, rows, 0, 0, 128, ivs)
		if c.mixed {
			outs[3] = aux.Clone()
			mixedRef(outs[3], b, 0, 0, threads, ivs)
		}
	case "attn":
		a := pipecheck.NewInput(ir.F16T, 128, k, seed)
		b := pipecheck.NewInput(ir.F16T, k, 128, seed+1)
		d := pipecheck.NewOutput(ir.F32T, 128, 64)
		p.Args = []any{a.Buffer, b.Buffer, d.Buffer, L, U}
		outs[2] = d.Clone()
		attnRef(outs[2], a, b, ivs)
	case "ew":
		a := pipecheck.NewInput(ir.F32T, 32, k, seed)
		b := pipecheck.NewInput(ir.F32T, 32, k, seed+1)
		out := pipecheck.NewOutput(ir.F32T, 1, threads)
		p.Args = []any{a.Buffer, b.Buffer, out.Buffer, L, U}
		want := out.Clone()
		for tx := 0; tx < threads; tx++ {
			s := 0.0
			if c.setup {
				s = 1
			}
			for _, iv := range ivs {
				s += a.At(tx/64, int(iv)*64+tx%64) + b.At(tx/64, int(iv)*64+tx%64)
			}
			want.Set(0, tx, s)
		}
		outs[2] = want
	}
	all := make([]int64, c.trip)
	for g := range all {
		all[g] = int64(g)
	}
	p.Ring = &pipecheck.Ring{
		Blocks:    [][3]int64{{0, 0, 0}},
		Positions: func([3]int64) int64 { return c.trip },
		Loads: func(_ [3]int64, g int64) []pipecheck.Load {
			iv := ivs[g]
			if c.kind != "ew" {
				return gemmLoads(iv, 0, 0)
			}
			return []pipecheck.Load{
				{Tile: 0, Map: 0, Coords: []int64{iv * 64, 0}, Issuer: -1},
				{Tile: 1, Map: 1, Coords: []int64{iv * 64, 0}, Issuer: -1},
			}
		},
		Waits: func(_ [3]int64, thread int) []int64 {
			if thread < 128 {
				return nil // the producer
			}
			return all
		},
		Trip: c.trip,
	}
	return p, outs
}

func runWS(c wsCase, after string, mutate func(k *ir.Operation), seeds ...int64) error {
	p, outs := c.program(100*c.n + 1000*c.trip + 7*c.c)
	p.Mutate, p.MutateAfter = mutate, after
	return emulate(p, outs, seeds...)
}

// TestWarpSpecializeEmulated: both reader kinds, N 1..5, trip counts
// 0..5, 7 and 9, with one or two consumer warpgroups and the loop forms
// (static bounds, a dynamic trip count, a dynamic lower bound with step 3)
// in turn, a barrier in half the ew bodies, consumer-only setup before
// the loop in a third of them and the threads reading B in a quarter of
// the gemm ones.
func TestWarpSpecializeEmulated(t *testing.T) {
	t.Parallel()
	count := 0
	for ki, kind := range []string{"gemm", "ew"} {
		for n := int64(1); n <= 5; n++ {
			for ti, trip := range []int64{0, 1, 2, 3, 4, 5, 7, 9} {
				cw := 1 + (n+trip)%2
				c := wsCase{kind: kind, n: n, c: cw, form: (ki + int(n) + ti) % 3, trip: trip, bar: kind == "ew" && (trip+n)%2 == 1,
					mixed: kind == "gemm" && (n+trip+cw)%4 == 0, setup: kind == "ew" && (n+trip)%3 == 0}
				if err := runWS(c, "", nil, int64(count)); err != nil {
					t.Fatal(err)
				}
				count++
			}
		}
	}
	t.Logf("%d emulated kernels", count)
}

// TestWarpSpecializeOneStageWGMMA: regression test (fixed): with one ring
// slot and wgmma readers the consumers released slot j-1 after iteration
// j's mma, after iteration j's full wait, while the producer's iteration j
// waited for that release before loading: a deadlock from j = 1 on.
func TestWarpSpecializeOneStageWGMMA(t *testing.T) {
	for _, cw := range []int64{1, 2} {
		if err := runWS(wsCase{kind: "gemm", n: 1, c: cw, trip: 4}, "", nil, 1, 2); err != nil {
			t.Fatal(err)
		}
	}
}

// TestWarpSpecializeMixedReaders: regression test (fixed): tiles read by
// wgmma and by the consumer threads got an empty count of 128*C with two
// kinds of arrivals (the leaders' after the mma, every thread's at the end
// of the iteration), so the producer could refill a slot under a running
// wgmma.
func TestWarpSpecializeMixedReaders(t *testing.T) {
	t.Parallel()
	for _, cw := range []int64{1, 2} {
		if err := runWS(wsCase{kind: "gemm", n: 3, c: cw, trip: 7, mixed: true}, "", nil, 1, 2, 3); err != nil {
			t.Fatal(err)
		}
	}
}

// TestWarpSpecializeEmulatedRS: two consumer warpgroups whose last mma is
// a tmac.warpgroup.mma reading A's tile (default waitGroup 1), N 1..3, in
// the three loop forms (one slot: before, the RS mma was not counted and
// the consumers released the slot under it).
func TestWarpSpecializeEmulatedRS(t *testing.T) {
	t.Parallel()
	count := 0
	for n := int64(1); n <= 3; n++ {
		for ti, trip := range []int64{1, 4} {
			c := wsCase{kind: "attn", n: n, c: 2, form: (int(n) + ti) % 3, trip: trip}
			if err := runWS(c, "", nil, int64(count)); err != nil {
				t.Fatal(err)
			}
			count++
		}
	}
	t.Logf("%d emulated kernels", count)
}

// TestWarpSpecializeCatches breaks the pass output in ways the protocol
// forbids and checks that some run reports each, as the test expects.
func TestWarpSpecializeCatches(t *testing.T) {
	t.Parallel()
	gemm := wsCase{kind: "gemm", n: 3, c: 2, trip: 7}
	gemm1 := wsCase{kind: "gemm", n: 3, c: 1, trip: 7}
	ew := wsCase{kind: "ew", n: 3, c: 2, trip: 7, bar: true}
	attn1 := wsCase{kind: "attn", n: 1, c: 2, trip: 4}
	setup := wsCase{kind: "ew", n: 3, c: 2, trip: 7, setup: true}
	// The try_wait in the producer's branch (the first) and the consumers'.
	waits := func(k *ir.Operation) (prod, cons *ir.Operation) {
		ws := find(k, "nvgpu.mbarrier.try_wait.parity", nil)
		return ws[0], ws[1]
	}
	flip := func(w *ir.Operation) {
		c := w.OperandNamed("phaseParity").DefiningOp()
		p, _ := ir.AttrInt(c.Attr("predicate"))
		c.SetAttr("predicate", ir.IntAttr(1-p, ir.I64))
	}
	// initCount makes the barriers initialised with count from count to.
	initCount := func(from, to int64) func(k *ir.Operation) {
		return func(k *ir.Operation) {
			for _, in := range find(k, "nvgpu.mbarrier.init", nil) {
				if v, _ := arith.ConstantInt(in.OperandNamed("count")); v == from {
					setConst(in, 1, to, ir.Index)
				}
			}
		}
	}
	catches(t, []mutation[wsCase]{
		{"producer waits the wrong parity", []wsCase{gemm}, "", func(k *ir.Operation) {
			p, _ := waits(k)
			flip(p)
		}, "deadlock|returned after phase"},
		{"producer does not wait for free slots", []wsCase{gemm}, "", func(k *ir.Operation) {
			p, _ := waits(k)
			p.Erase()
		}, "before every reader released it|more arrivals than the mbarrier's count"},
		{"consumers wait the wrong parity", []wsCase{gemm}, "", func(k *ir.Operation) {
			_, c := waits(k)
			flip(c)
		}, "before their fill|returned after phase|deadlock"},
		{"consumers never release", []wsCase{gemm}, "", func(k *ir.Operation) {
			find(k, "nvgpu.mbarrier.arrive", nil)[0].Erase()
		}, "deadlock"},
		{"release of the slot still read by the running wgmma", []wsCase{gemm1}, "", func(k *ir.Operation) {
			// arrive on empty[j mod N] instead of empty[(j+N-1) mod N],
			// from j = 0 on
			a := find(k, "nvgpu.mbarrier.arrive", nil)[0]
			_, c := waits(k)
			a.SetOperand(1, c.OperandNamed("mbarId"))
			cond := a.ParentOp().Operand(0).DefiningOp()
			setConst(cond, 1, 1, ir.I1)
		}, "before every reader released it"},
		{"release at j = 0 too", []wsCase{gemm1}, "", func(k *ir.Operation) {
			a := find(k, "nvgpu.mbarrier.arrive", nil)[0]
			cond := a.ParentOp().Operand(0).DefiningOp() // leader && j > 0
			setConst(cond, 1, 1, ir.I1)
		}, "before every reader released it|more arrivals than the mbarrier's count|releases slot"},
		{"empty count of one warpgroup", []wsCase{gemm}, "", initCount(2, 1), "before every reader released it|more arrivals than the mbarrier's count"},
		// What warp-specialize did when it counted only
		// nvgpu.warpgroup.mma: with one slot the RS mma, the last of the
		// iteration, is left pending when the slot is released.
		{"RS wgmma pending at the release of the only slot", []wsCase{attn1}, "", func(k *ir.Operation) {
			find(k, "tmac.warpgroup.mma", nil)[0].SetAttr("waitGroup", ir.I64Attr(1))
		}, "before every reader released it"},
		{"wgmma leaves two groups pending", []wsCase{gemm}, "", func(k *ir.Operation) {
			find(k, "nvgpu.warpgroup.mma", nil)[0].SetAttr("waitGroup", ir.I64Attr(2))
		}, "before every reader released it"},
		// (After lower-nvgpu, whose static check would reject them.)
		{"expect_tx too small", []wsCase{gemm}, "lower-nvgpu", func(k *ir.Operation) {
			setConst(find(k, "nvvm.mbarrier.arrive.expect_tx", nil)[0], 1, 8192, ir.I32)
		}, "drive the mbarrier's transaction count below zero"},
		{"expect_tx too large", []wsCase{gemm}, "lower-nvgpu", func(k *ir.Operation) {
			setConst(find(k, "nvvm.mbarrier.arrive.expect_tx", nil)[0], 1, 1<<20, ir.I32)
		}, "deadlock"},
		{"thread readers: arrive before the last read", []wsCase{ew}, "", func(k *ir.Operation) {
			a := find(k, "nvgpu.mbarrier.arrive", nil)[0]
			a.Remove()
			ld := find(k, "memref.load", nil)[1]
			ld.Block().InsertBefore(a, ld)
		}, "before every reader released it"},
		{"thread readers: empty count of one warpgroup", []wsCase{ew}, "", initCount(256, 128), "before every reader released it|more arrivals than the mbarrier's count"},
		{"named barrier over the whole block", []wsCase{ew}, "", func(k *ir.Operation) {
			setConst(find(k, "nvvm.barrier", nil)[0], 1, 384, ir.I32)
		}, "deadlock"},
		{"named barrier id 0 (the block barrier)", []wsCase{ew}, "", func(k *ir.Operation) {
			setConst(find(k, "nvvm.barrier", nil)[0], 0, 0, ir.I32)
		}, "named barrier 0 is used with"},
		{"consumer setup without its barrier", []wsCase{setup}, "", func(k *ir.Operation) {
			find(k, "nvvm.barrier", nil)[0].Erase()
		}, "race: thread"},
		{"wrong coordinates", []wsCase{gemm}, "", func(k *ir.Operation) {
			setConst(find(k, "nvgpu.tma.async.load", nil)[0], 3, 0, ir.Index)
		}, "got loads"},
		{"producer's loads skip the first iteration", []wsCase{gemm}, "", func(k *ir.Operation) {
			// for j = 1 to T in the producer
			setConst(find(k, "scf.for", nil)[0], 0, 1, ir.Index)
		}, "deadlock|got loads"},
	}, func(c wsCase, after string, mutate func(k *ir.Operation)) error {
		return runWS(c, after, mutate, 1, 2, 3)
	})
}

// TestWarpSpecializeLaunchThreadIDs: regression test (fixed): on a
// gpu.launch body (the pass run before outline-kernels) the program's
// thread id x is the launch's block argument, not a gpu.thread_id op; the
// pass must remap its uses (and the block size's) as it remaps
// gpu.thread_id and gpu.block_dim, else the consumers see ids 128..255
// and a block of 256.
func TestWarpSpecializeLaunchThreadIDs(t *testing.T) {
	src := `!ft = memref<32x64xf32, #gpu.address_space<workgroup>>
!fdesc = !nvgpu.tensormap.descriptor<tensor = !ft, swizzle = none, l2promo = none, oob = zero, interleave = none>
func.func @f(%amap: !fdesc, %out: memref<128xf32>) {
  %h1 = arith.constant 1 : index
  %h128 = arith.constant 128 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %h1, %gy = %h1, %gz = %h1)
             threads(%tx, %ty, %tz) in (%sx = %h128, %sy = %h1, %sz = %h1) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c64 = arith.constant 64 : index
    %zero = arith.constant 0.000000e+00 : f32
    %as = memref.alloc() : !ft
    %res = scf.for %t = %c0 to %c4 step %c1 iter_args(%s = %zero) -> (f32) {
      %x = arith.muli %t, %c64 : index
      tmac.tma.load %amap[%x, %c0] to %as : !fdesc -> !ft
      tmac.tma.wait %as : !ft
      %r = arith.divui %tx, %c64 : index
      %cc = arith.remui %tx, %c64 : index
      %va = memref.load %as[%r, %cc] : !ft
      %s1 = arith.addf %s, %va : f32
      scf.yield %s1 : f32
    } {tmac.warp_specialize}
    %i = arith.remui %tx, %sx : index
    memref.store %res, %out[%i] : memref<128xf32>
    gpu.terminator
  }
  return
}
`
	m := passtest.Parse(t, src)
	steps, err := passes.ParsePipeline("builtin.module(warp-specialize)")
	if err != nil {
		t.Fatal(err)
	}
	if err := passes.RunPipeline(m, steps, nil, nil); err != nil {
		t.Fatal(err)
	}
	body := ir.Nested(m, "gpu.launch")[0].Region(0).Entry()
	// Block arguments 3..5 are the thread ids, 9..11 the block sizes.
	var left []string
	for _, i := range []int{3, 9} {
		for _, u := range ir.Uses(body.Arg(i)) {
			left = append(left, u.Owner().Name())
		}
	}
	if len(left) > 0 {
		t.Fatalf("the program's uses of the launch's thread id x / block size x block arguments are left unremapped: %v", left)
	}
}
