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
	kind string // "gemm" (wgmma readers) or "ew" (thread readers)
	n    int64  // tmac.stages
	c    int64  // consumer warpgroups
	form int    // 0: static 0..T step 1; 1: 0..%U step 1; 2: %L..%U step 3
	trip int64  // trip count
	bar  bool   // ew: a gpu.barrier in the loop body
	// mixed: gemm whose B tile the consumer threads also read (memref.load)
	mixed bool
}

func (c wsCase) String() string {
	return fmt.Sprintf("%s n=%d c=%d form=%d T=%d bar=%v mixed=%v", c.kind, c.n, c.c, c.form, c.trip, c.bar, c.mixed)
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

// The kinds' shared types: A tiles of rows x 64 f16 (one box, 128B
// swizzle), B tiles of 64 x 128 f16 (two 64x64 boxes), the ew tiles of
// 32 x 64 f32.
func tileTypes(arows int64) string {
	return fmt.Sprintf(`!atile = memref<%dx64xf16, #gpu.address_space<workgroup>>
!ahalf = memref<64x64xf16, strided<[64, 1], offset: ?>, #gpu.address_space<workgroup>>
!ahalfd = memref<64x64xf16, #gpu.address_space<workgroup>>
!btile = memref<64x64xf16, #gpu.address_space<workgroup>>
!bfull = memref<64x128xf16, #gpu.address_space<workgroup>>
!adesc = !nvgpu.tensormap.descriptor<tensor = !atile, swizzle = swizzle_128b, l2promo = none, oob = zero, interleave = none>
!bdesc = !nvgpu.tensormap.descriptor<tensor = !btile, swizzle = swizzle_128b, l2promo = none, oob = zero, interleave = none>
!acc = !nvgpu.warpgroup.accumulator<fragmented = vector<64x128xf32>>
!ft = memref<32x64xf32, #gpu.address_space<workgroup>>
!fdesc = !nvgpu.tensormap.descriptor<tensor = !ft, swizzle = none, l2promo = none, oob = zero, interleave = none>
`, arows)
}

// hostMaps writes the entry's tensor maps: %amap and %bmap over %a and %b
// (gemm: f16 with A boxes of arows x 64, B boxes of 64 x 64; ew: f32
// boxes of 32 x 64).
func hostMaps(b *strings.Builder, kind string, arows int64, atype, btype string) {
	elem, abox, bbox, adesc, bdesc := "f16", "box[%harows, %h64]", "box[%h64, %h64]", "adesc", "bdesc"
	if kind == "ew" {
		elem, abox, bbox, adesc, bdesc = "f32", "box[%h32, %h64]", "box[%h32, %h64]", "fdesc", "fdesc"
	}
	fmt.Fprintf(b, `  %%h1 = arith.constant 1 : index
  %%h32 = arith.constant 32 : index
  %%h64 = arith.constant 64 : index
  %%harows = arith.constant %[1]d : index
  %%a_any = memref.cast %%a : %[2]s to memref<*x%[4]s>
  %%amap = nvgpu.tma.create.descriptor %%a_any %[5]s : memref<*x%[4]s> -> !%[7]s
  %%b_any = memref.cast %%b : %[3]s to memref<*x%[4]s>
  %%bmap = nvgpu.tma.create.descriptor %%b_any %[6]s : memref<*x%[4]s> -> !%[8]s
`, arows, atype, btype, elem, abox, bbox, adesc, bdesc)
}

func (c wsCase) source() string {
	var b strings.Builder
	k := kCols(c.ivs())
	b.WriteString(tileTypes(64 * c.c))
	lbv, ubv, stv, _, _ := c.bounds()
	switch c.kind {
	case "gemm":
		fmt.Fprintf(&b, "func.func @main(%%a: memref<%[1]dx%[2]dxf16>, %%b: memref<%[2]dx128xf16>, %%d: memref<%[1]dx128xf32>, %%aux: memref<%[3]dxf32>, %%L: index, %%U: index) {\n", 64*c.c, k, 128*c.c)
		hostMaps(&b, "gemm", 64*c.c, fmt.Sprintf("memref<%dx%dxf16>", 64*c.c, k), fmt.Sprintf("memref<%dx128xf16>", k))
	case "ew":
		fmt.Fprintf(&b, "func.func @main(%%a: memref<32x%[1]dxf32>, %%b: memref<32x%[1]dxf32>, %%out: memref<%[2]dxf32>, %%L: index, %%U: index) {\n", k, 128*c.c)
		hostMaps(&b, "ew", 64*c.c, fmt.Sprintf("memref<32x%dxf32>", k), fmt.Sprintf("memref<32x%dxf32>", k))
	}
	fmt.Fprintf(&b, `  %%hnt = arith.constant %d : index
  gpu.launch blocks(%%lbx, %%lby, %%lbz) in (%%gx = %%h1, %%gy = %%h1, %%gz = %%h1)
             threads(%%ltx, %%lty, %%ltz) in (%%sx = %%hnt, %%sy = %%h1, %%sz = %%h1) {
    %%c0 = arith.constant 0 : index
    %%c1 = arith.constant 1 : index
    %%c64 = arith.constant 64 : index
    %%c128 = arith.constant 128 : index
    %%bx = gpu.block_id x
    %%tx = gpu.thread_id x
    %%row0 = arith.muli %%bx, %%c128 : index
`, 128*c.c)
	lb, ub, step := "%c0", "%U", "%c1"
	switch c.form {
	case 0:
		fmt.Fprintf(&b, "    %%ub = arith.constant %d : index\n", ubv)
		ub = "%ub"
	case 2:
		fmt.Fprintf(&b, "    %%st = arith.constant %d : index\n", stv)
		lb, step = "%L", "%st"
	}
	_ = lbv
	attrs := fmt.Sprintf("{tmac.stages = %d : i64, tmac.warp_specialize}", c.n)
	switch c.kind {
	case "gemm":
		mixed, iter, yield, res, after := "", "", "", "%res", ""
		if c.mixed {
			// The threads' reads of B, kept alive by a sum stored after the loop.
			mixed = "      %e = memref.load %bs[%c0, %c0] : !bfull\n      %ef = arith.extf %e : f16 to f32\n      %es1 = arith.addf %es, %ef : f32\n"
			iter, yield, res = ", %es = %zero", ", %es1 : !acc, f32", "%res:2"
			after = "    memref.store %res#1, %aux[%tx] : memref<" + fmt.Sprint(128*c.c) + "xf32>\n"
		}
		acc := "%res"
		if c.mixed {
			acc = "%res#0"
		}
		results := "(!acc)"
		if c.mixed {
			results = "(!acc, f32)"
		} else {
			yield = " : !acc"
		}
		fmt.Fprintf(&b, `    %%zero = arith.constant 0.000000e+00 : f32
    %%wg = arith.divui %%tx, %%c128 : index
    %%myrow = arith.muli %%wg, %%c64 : index
    %%as = memref.alloc() : !atile
    %%bs = memref.alloc() : !bfull
    %%acc0 = nvgpu.warpgroup.mma.init.accumulator -> !acc
    %s = scf.for %%k = %s to %s step %s iter_args(%%acc = %%acc0%s) -> %s {
      %%kk = arith.muli %%k, %%c64 : index
      tmac.tma.load %%amap[%%kk, %%row0] to %%as : !adesc -> !atile
      tmac.tma.load %%bmap[%%c0, %%kk] to %%bs : !bdesc -> !bfull
      tmac.tma.wait %%as, %%bs : !atile, !bfull
      %%ah = memref.subview %%as[%%myrow, 0] [64, 64] [1, 1] : !atile to !ahalf
      %%da = nvgpu.warpgroup.generate.descriptor %%ah, %%amap : !ahalf, !adesc -> !nvgpu.warpgroup.descriptor<tensor = !ahalfd>
      %%db = nvgpu.warpgroup.generate.descriptor %%bs, %%bmap : !bfull, !bdesc -> !nvgpu.warpgroup.descriptor<tensor = !bfull>
      %%nacc = nvgpu.warpgroup.mma %%da, %%db, %%acc {transposeB} : !nvgpu.warpgroup.descriptor<tensor = !ahalfd>, !nvgpu.warpgroup.descriptor<tensor = !bfull>, !acc -> !acc
%s      scf.yield %%nacc%s
    } %s
    %%grow = arith.addi %%row0, %%myrow : index
    %%dsub = memref.subview %%d[%%grow, 0] [64, 128] [1, 1] : memref<%dx128xf32> to memref<64x128xf32, strided<[128, 1], offset: ?>>
    nvgpu.warpgroup.mma.store %s, %%dsub : !acc to memref<64x128xf32, strided<[128, 1], offset: ?>>
%s`, res, lb, ub, step, iter, results, mixed, yield, attrs, 64*c.c, acc, after)
	case "ew":
		bar := ""
		if c.bar {
			bar = "      gpu.barrier\n"
		}
		fmt.Fprintf(&b, `    %%zero = arith.constant 0.000000e+00 : f32
    %%as = memref.alloc() : !ft
    %%bs = memref.alloc() : !ft
    %%res = scf.for %%t = %s to %s step %s iter_args(%%s = %%zero) -> (f32) {
      %%x = arith.muli %%t, %%c64 : index
      tmac.tma.load %%amap[%%x, %%row0] to %%as : !fdesc -> !ft
      tmac.tma.load %%bmap[%%x, %%row0] to %%bs : !fdesc -> !ft
      tmac.tma.wait %%as, %%bs : !ft, !ft
      %%r = arith.divui %%tx, %%c64 : index
      %%cc = arith.remui %%tx, %%c64 : index
      %%va = memref.load %%as[%%r, %%cc] : !ft
%s      %%vb = memref.load %%bs[%%r, %%cc] : !ft
      %%p = arith.addf %%va, %%vb : f32
      %%s1 = arith.addf %%s, %%p : f32
      scf.yield %%s1 : f32
    } %s
    memref.store %%res, %%out[%%tx] : memref<%dxf32>
`, lb, ub, step, bar, attrs, 128*c.c)
	}
	b.WriteString("    gpu.terminator\n  }\n  return\n}\n")
	return b.String()
}

// kCols is the width of the K dimension every iteration's tile fits in.
func kCols(ivs []int64) int {
	w := 64
	for _, iv := range ivs {
		w = max(w, int(iv+1)*64)
	}
	return w
}

// wsOutputs is a program's outputs: the argument index and reference of
// each.
type wsOutputs map[int]pipecheck.Matrix

// program is the case with its inputs, ring and reference.
func (c wsCase) program(seed int64) (*pipecheck.Program, wsOutputs) {
	ivs := c.ivs()
	k := kCols(ivs)
	_, _, _, L, U := c.bounds()
	p := &pipecheck.Program{Name: "warp-specialize " + c.String(), Source: c.source()}
	outs := wsOutputs{}
	switch c.kind {
	case "gemm":
		rows := int(64 * c.c)
		a := pipecheck.NewInput(ir.F16T, rows, k, seed)
		b := pipecheck.NewInput(ir.F16T, k, 128, seed+1)
		d := pipecheck.NewOutput(ir.F32T, rows, 128)
		aux := pipecheck.NewOutput(ir.F32T, 1, int(128*c.c))
		p.Args = []any{a.Buffer, b.Buffer, d.Buffer, aux.Buffer, L, U}
		want := d.Clone()
		gemmRef(want, a, b, 0, rows, 0, 0, 128, ivs)
		outs[2] = want
		if c.mixed {
			sum := aux.Clone()
			s := 0.0
			for _, iv := range ivs {
				s += b.At(int(iv)*64, 0)
			}
			for tx := 0; tx < int(128*c.c); tx++ {
				sum.Set(0, tx, s)
			}
			outs[3] = sum
		}
	case "ew":
		a := pipecheck.NewInput(ir.F32T, 32, k, seed)
		b := pipecheck.NewInput(ir.F32T, 32, k, seed+1)
		out := pipecheck.NewOutput(ir.F32T, 1, int(128*c.c))
		p.Args = []any{a.Buffer, b.Buffer, out.Buffer, L, U}
		want := out.Clone()
		for tx := 0; tx < int(128*c.c); tx++ {
			s := 0.0
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
			return wsLoads(c.kind, ivs[g], 0, 0)
		},
		Waits: consumersWait(func(int) []int64 { return all }),
		Trip:  c.trip,
	}
	return p, outs
}

// wsLoads are the boxes of a K step at induction value iv: gemm A at rows
// row0 and B at columns col0 (two boxes); ew A and B at row row0 and
// column col0 + 64 iv (B at row 64 iv, column col0 for the tile forms:
// ewB).
func wsLoads(kind string, iv, row0, col0 int64) []pipecheck.Load {
	if kind == "gemm" {
		return []pipecheck.Load{
			{Tile: 0, Map: 0, Coords: []int64{iv * 64, row0}, Issuer: -1},
			{Tile: 1, Map: 1, Coords: []int64{col0, iv * 64}, Issuer: -1},
			{Tile: 1, Box: 1, Map: 1, Coords: []int64{col0 + 64, iv * 64}, Issuer: -1},
		}
	}
	return []pipecheck.Load{
		{Tile: 0, Map: 0, Coords: []int64{iv * 64, row0}, Issuer: -1},
		{Tile: 1, Map: 1, Coords: []int64{iv * 64, row0}, Issuer: -1},
	}
}

// consumersWait gives every consumer thread (the threads after the
// producer warpgroup) the positions of its warpgroup w.
func consumersWait(positions func(w int) []int64) func([3]int64, int) []int64 {
	return func(_ [3]int64, thread int) []int64 {
		if thread < 128 {
			return nil
		}
		return positions(thread/128 - 1)
	}
}

// emulate compiles the program, runs it under the seeds and compares its
// outputs with the references; the first problem is returned.
func emulate(p *pipecheck.Program, outs wsOutputs, seeds ...int64) error {
	comp, err := pipecheck.Compile(p)
	if err != nil {
		return err
	}
	for _, seed := range seeds {
		bufs, err := comp.Run(seed)
		if err != nil {
			return err
		}
		for i, want := range outs {
			if err := pipecheck.Same(bufs[i], want); err != nil {
				return fmt.Errorf("%s (seed %d): argument %d: %v", p.Name, seed, i, err)
			}
		}
	}
	return nil
}

func runWS(c wsCase, after string, mutate func(k *ir.Operation), seeds ...int64) error {
	p, outs := c.program(100*c.n + 1000*c.trip + 7*c.c)
	p.Mutate, p.MutateAfter = mutate, after
	return emulate(p, outs, seeds...)
}

// TestWarpSpecializeEmulated: both reader kinds, N 1..5, trip counts
// 0..5, 7 and 9, with one or two consumer warpgroups and the loop forms
// (static bounds, a dynamic trip count, a dynamic lower bound with step 3)
// in turn, a barrier in half the ew bodies and the threads reading B in a
// quarter of the gemm ones.
func TestWarpSpecializeEmulated(t *testing.T) {
	t.Parallel()
	count := 0
	for ki, kind := range []string{"gemm", "ew"} {
		for n := int64(1); n <= 5; n++ {
			for ti, trip := range []int64{0, 1, 2, 3, 4, 5, 7, 9} {
				cw := 1 + (n+trip)%2
				c := wsCase{kind: kind, n: n, c: cw, form: (ki + int(n) + ti) % 3, trip: trip, bar: kind == "ew" && (trip+n)%2 == 1,
					mixed: kind == "gemm" && (n+trip+cw)%4 == 0}
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

// TestWarpSpecializeCatches breaks the pass output in ways the protocol
// forbids and checks that some run reports each, as the test expects.
func TestWarpSpecializeCatches(t *testing.T) {
	t.Parallel()
	gemm := wsCase{kind: "gemm", n: 3, c: 2, trip: 7}
	gemm1 := wsCase{kind: "gemm", n: 3, c: 1, trip: 7}
	ew := wsCase{kind: "ew", n: 3, c: 2, trip: 7, bar: true}
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
	for _, tc := range []struct {
		name   string
		c      wsCase
		mutate func(k *ir.Operation)
		want   string // what the report says (alternatives separated by |)
	}{
		{"producer waits the wrong parity", gemm, func(k *ir.Operation) {
			p, _ := waits(k)
			flip(p)
		}, "deadlock|returned after phase"},
		{"producer does not wait for free slots", gemm, func(k *ir.Operation) {
			p, _ := waits(k)
			p.Erase()
		}, "before every reader released it|more arrivals than the mbarrier's count"},
		{"consumers wait the wrong parity", gemm, func(k *ir.Operation) {
			_, c := waits(k)
			flip(c)
		}, "before their fill|returned after phase|deadlock"},
		{"consumers never release", gemm, func(k *ir.Operation) {
			find(k, "nvgpu.mbarrier.arrive", nil)[0].Erase()
		}, "deadlock"},
		{"release of the slot still read by the running wgmma", gemm1, func(k *ir.Operation) {
			// arrive on empty[j mod N] instead of empty[(j+N-1) mod N],
			// from j = 0 on
			a := find(k, "nvgpu.mbarrier.arrive", nil)[0]
			_, c := waits(k)
			a.SetOperand(1, c.OperandNamed("mbarId"))
			cond := a.ParentOp().Operand(0).DefiningOp()
			cond.SetOperand(1, konst(cond, 1, ir.I1))
		}, "before every reader released it"},
		{"release at j = 0 too", gemm1, func(k *ir.Operation) {
			a := find(k, "nvgpu.mbarrier.arrive", nil)[0]
			cond := a.ParentOp().Operand(0).DefiningOp() // leader && j > 0
			cond.SetOperand(1, konst(cond, 1, ir.I1))
		}, "before every reader released it|more arrivals than the mbarrier's count|releases slot"},
		{"empty count of one warpgroup", gemm, func(k *ir.Operation) {
			for _, in := range find(k, "nvgpu.mbarrier.init", nil) {
				if v, _ := arith.ConstantInt(in.OperandNamed("count")); v == 2 {
					in.SetOperand(1, konst(in, 1, ir.Index))
				}
			}
		}, "before every reader released it|more arrivals than the mbarrier's count"},
		{"wgmma leaves two groups pending", gemm, func(k *ir.Operation) {
			find(k, "nvgpu.warpgroup.mma", nil)[0].SetAttr("waitGroup", ir.I64Attr(2))
		}, "before every reader released it"},
		{"expect_tx too small", gemm, func(k *ir.Operation) {
			e := find(k, "nvvm.mbarrier.arrive.expect_tx", nil)[0]
			e.SetOperand(1, konst(e, 8192, ir.I32))
		}, "drive the mbarrier's transaction count below zero"},
		{"expect_tx too large", gemm, func(k *ir.Operation) {
			e := find(k, "nvvm.mbarrier.arrive.expect_tx", nil)[0]
			e.SetOperand(1, konst(e, 1<<20, ir.I32))
		}, "deadlock"},
		{"thread readers: arrive before the last read", ew, func(k *ir.Operation) {
			a := find(k, "nvgpu.mbarrier.arrive", nil)[0]
			a.Remove()
			ld := find(k, "memref.load", nil)[1]
			ld.Block().InsertBefore(a, ld)
		}, "before every reader released it"},
		{"thread readers: empty count of one warpgroup", ew, func(k *ir.Operation) {
			for _, in := range find(k, "nvgpu.mbarrier.init", nil) {
				if v, _ := arith.ConstantInt(in.OperandNamed("count")); v == 256 {
					in.SetOperand(1, konst(in, 128, ir.Index))
				}
			}
		}, "before every reader released it|more arrivals than the mbarrier's count"},
		{"named barrier over the whole block", ew, func(k *ir.Operation) {
			nb := find(k, "nvvm.barrier", nil)[0]
			nb.SetOperand(1, konst(nb, 384, ir.I32))
		}, "deadlock"},
		{"named barrier id 0 (the block barrier)", ew, func(k *ir.Operation) {
			nb := find(k, "nvvm.barrier", nil)[0]
			nb.SetOperand(0, konst(nb, 0, ir.I32))
		}, "named barrier 0 is used with"},
		{"wrong coordinates", gemm, func(k *ir.Operation) {
			l := find(k, "nvgpu.tma.async.load", nil)[0]
			l.SetOperand(3, konst(l, 0, ir.Index))
		}, "got loads"},
		{"producer's loads skip the first iteration", gemm, func(k *ir.Operation) {
			// for j = 1 to T in the producer
			f := find(k, "scf.for", nil)[0]
			f.SetOperand(0, konst(f, 1, ir.Index))
		}, "deadlock|got loads"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			after := "" // mbarrier-phase
			if strings.HasPrefix(tc.name, "expect_tx") {
				after = "lower-nvgpu" // whose static check would reject it
			}
			err := runWS(tc.c, after, tc.mutate, 1, 2, 3)
			if err == nil {
				t.Fatalf("no run reported the broken output")
			}
			t.Log(firstLine(err))
			if !reports(err, tc.want) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
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
