package pipelining

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/passes"
	"github.com/tmac-dev/tmac/passes/internal/passtest"
	"github.com/tmac-dev/tmac/passes/schedule"
)

// The persistent form of warp-specialize, simulated with the machinery of
// warp_specialize_test.go: the marked K loop sits directly in a tile loop
// `scf.for %t = lb to ub step st`, the producer runs a clone of the tile
// loop, and both roles continue the rings across tiles (ring position
// ((t - lb)/st)*T + j). Each block is simulated separately (block b of a
// grid of G runs tiles b, b+G, ...). Beyond the checks of the single-loop
// simulation (no deadlock; the producer's k-th wait on empty[s] returns
// after exactly k completed phases, a consumer's k-th wait on full[s]
// after k+1; ring position g waits on barrier g mod N; its loads carry
// the coordinates of its tile and K step and go to slot g mod N; no TMA
// write into a slot before every reader released it — across tile
// boundaries too; consumers read only landed data of their own position;
// the accumulators are stored after every wgmma group completed) the
// persistent runs check that every consumer runs the epilogue once per
// tile, and that the producer works ahead: when the last consumer agent
// starts the epilogue of a tile that is not its block's last, the
// producer has issued the loads of the next tile's first K step (under
// the producer-first schedule).

// wsPCase is one persistent kernel.
type wsPCase struct {
	kind  string // "gemm" (wgmma readers) or "ew" (thread readers)
	n     int64  // tmac.stages
	c     int64  // consumer warpgroups
	trip  int64  // T, the K loop's trip count
	inner int    // K loop: 0: 0..T step 1 (constant); 1: 0..%U step 1; 2: 2..2+3T-1 step 3 (constant)
	outer int    // tile loop: 0: 0..tiles step 1; 1: block id..tiles step grid; 2: %TL..%TU step %TS; 3: 1..2*tiles step 2 (constants)
	tiles int64  // tile count (outer 0, 1, 3)
	grid  int64  // blocks (outer 1)
	// outer 2: the dynamic bounds
	tl, tu, ts int64
	bar        bool // a gpu.barrier in the epilogue (and, ew, in the K loop)
	mixed      bool // gemm: the consumer threads also read the B tile
	accIn      bool // gemm: the accumulator is initialised in the tile loop (cloned into the producer, unused there)
}

func (c wsPCase) String() string {
	o := fmt.Sprintf("tiles=%d", c.tiles)
	switch c.outer {
	case 1:
		o = fmt.Sprintf("tiles=%d grid=%d", c.tiles, c.grid)
	case 3:
		o = fmt.Sprintf("tiles 1..%d step 2", 2*c.tiles)
	case 2:
		o = fmt.Sprintf("tiles %d..%d step %d", c.tl, c.tu, c.ts)
	}
	return fmt.Sprintf("persistent %s n=%d c=%d T=%d inner=%d outer=%d %s bar=%v mixed=%v accIn=%v", c.kind, c.n, c.c, c.trip, c.inner, c.outer, o, c.bar, c.mixed, c.accIn)
}

// blocks are the block ids simulated.
func (c wsPCase) blocks() []int64 {
	if c.outer != 1 {
		return []int64{0}
	}
	var bs []int64
	for b := int64(0); b < c.grid; b++ {
		bs = append(bs, b)
	}
	return bs
}

// tilesOf are the tile indices block b runs, in order.
func (c wsPCase) tilesOf(b int64) []int64 {
	lb, ub, st := int64(0), c.tiles, int64(1)
	switch c.outer {
	case 1:
		lb, st = b, c.grid
	case 2:
		lb, ub, st = c.tl, c.tu, c.ts
	case 3:
		lb, ub, st = 1, 2*c.tiles, 2
	}
	var ts []int64
	for t := lb; t < ub; t += st {
		ts = append(ts, t)
	}
	return ts
}

func (c wsPCase) stages() int64 {
	if c.inner == 1 {
		return c.n
	}
	return max(1, min(c.n, c.trip))
}

// ivAt is the K loop's induction value at step j.
func (c wsPCase) ivAt(j int64) int64 {
	if c.inner == 2 {
		return 2 + 3*j
	}
	return j
}

// base returns the readers' description for the simulation.
func (c wsPCase) base() wsCase {
	return wsCase{kind: c.kind, n: c.n, c: c.c, trip: c.trip, bar: c.bar, mixed: c.mixed}
}

// The tile coordinates: gemm A rows (t mod 3)*128, B columns (t div 3)*128;
// ew rows t*32 and columns (t mod 5)*64.
func (c wsPCase) expectedLoads(t, j, slot int64) []expLoad {
	iv := c.ivAt(j)
	if c.kind == "gemm" {
		row0, col0 := (t%3)*128, (t/3)*128
		return []expLoad{
			{0, fmt.Sprint([]int64{iv * 64, row0}), 0, slot * 8192 * c.c},
			{1, fmt.Sprint([]int64{col0, iv * 64}), 1, slot * 16384},
			{1, fmt.Sprint([]int64{col0 + 64, iv * 64}), 1, slot*16384 + 8192},
		}
	}
	row0, col0 := t*32, (t%5)*64
	return []expLoad{
		{0, fmt.Sprint([]int64{iv * 64, row0}), 0, slot * 8192},
		{1, fmt.Sprint([]int64{col0, iv * 64}), 1, slot * 8192},
	}
}

// simRun is block b's wsRun.
func (c wsPCase) simRun(b int64) wsRun {
	tiles := c.tilesOf(b)
	st := c.stages()
	T := c.trip
	loadsPer := int64(2)
	if c.kind == "gemm" {
		loadsPer = 3
	}
	r := wsRun{
		name:      fmt.Sprintf("%s block %d (tiles %v)", c, b, tiles),
		args:      []int64{T, c.tl, c.tu, c.ts},
		block:     b,
		stages:    st,
		positions: int64(len(tiles)) * T,
		epilogues: len(tiles),
		expect: func(g int64) []expLoad { // never called when T = 0
			return c.expectedLoads(tiles[g/T], g%T, g%st)
		},
		seed: 100*c.n + 1000*T + 7*c.c + 13*b + 31*int64(c.outer) + 61*int64(c.inner),
	}
	// The producer works ahead: when the last consumer agent reaches the
	// epilogue of tile i (not the block's last), the producer has issued
	// the loads of tile i+1's first K step, when it runs first.
	done := map[int]int{} // tile -> consumer agents at its epilogue
	r.onEpilogue = func(s *wsSim, a *wsAgent) {
		if s.policy != "producer-first" || T == 0 {
			return
		}
		i := a.epilogue - 1
		done[i]++
		consumers := 0
		for _, o := range s.agents {
			if !o.producer() {
				consumers++
			}
		}
		if done[i] == consumers && i+1 < len(tiles) && int64(len(s.all)) < loadsPer*(int64(i+1)*T+1) {
			s.fail(nil, "the consumers run the epilogue of tile %d (the block's %d-th) with %d box loads issued: the producer has not loaded tile %d's first K step", tiles[i], i, len(s.all), tiles[i+1])
		}
	}
	return r
}

func (c wsPCase) source() string {
	var b strings.Builder
	fmt.Fprintf(&b, `!atile = memref<%dx64xf16, #gpu.address_space<workgroup>>
!ahalf = memref<64x64xf16, strided<[64, 1], offset: ?>, #gpu.address_space<workgroup>>
!ahalfd = memref<64x64xf16, #gpu.address_space<workgroup>>
!btile = memref<64x64xf16, #gpu.address_space<workgroup>>
!bfull = memref<64x128xf16, #gpu.address_space<workgroup>>
!adesc = !nvgpu.tensormap.descriptor<tensor = !atile, swizzle = swizzle_128b, l2promo = none, oob = zero, interleave = none>
!bdesc = !nvgpu.tensormap.descriptor<tensor = !btile, swizzle = swizzle_128b, l2promo = none, oob = zero, interleave = none>
!acc = !nvgpu.warpgroup.accumulator<fragmented = vector<64x128xf32>>
!ft = memref<32x64xf32, #gpu.address_space<workgroup>>
!fdesc = !nvgpu.tensormap.descriptor<tensor = !ft, swizzle = none, l2promo = none, oob = zero, interleave = none>
module attributes {gpu.container_module} {
  gpu.module @m {
`, 64*c.c)
	args := "%amap: !adesc, %bmap: !bdesc, %out: memref<1024x2048xf32>"
	if c.kind == "ew" {
		args = "%amap: !fdesc, %bmap: !fdesc, %out: memref<256xf32>"
	}
	fmt.Fprintf(&b, "    gpu.func @k(%s, %%U: index, %%TL: index, %%TU: index, %%TS: index) kernel attributes {known_block_size = array<i32: %d, 1, 1>} {\n", args, 128*c.c)
	fmt.Fprintf(&b, `      %%c0 = arith.constant 0 : index
      %%c1 = arith.constant 1 : index
      %%c3 = arith.constant 3 : index
      %%c5 = arith.constant 5 : index
      %%c32 = arith.constant 32 : index
      %%c64 = arith.constant 64 : index
      %%c128 = arith.constant 128 : index
      %%bx = gpu.block_id x
      %%tx = gpu.thread_id x
      %%ntiles = arith.constant %d : index
      %%grid = arith.constant %d : index
`, c.tiles, max(c.grid, 1))
	tlb, tub, tst := "%c0", "%ntiles", "%c1"
	switch c.outer {
	case 1:
		tlb, tst = "%bx", "%grid"
	case 2:
		tlb, tub, tst = "%TL", "%TU", "%TS"
	case 3:
		tlb, tub, tst = "%c1", "%tub", "%c2t"
		fmt.Fprintf(&b, "      %%tub = arith.constant %d : index\n      %%c2t = arith.constant 2 : index\n", 2*c.tiles)
	}
	klb, kub, kst := "%c0", "%kub", "%c1"
	switch c.inner {
	case 0:
		fmt.Fprintf(&b, "      %%kub = arith.constant %d : index\n", c.trip)
	case 1:
		kub = "%U"
	case 2:
		fmt.Fprintf(&b, "      %%kub = arith.constant %d : index\n", 2+3*c.trip-1)
		klb = "%c2"
		kst = "%c3"
		b.WriteString("      %c2 = arith.constant 2 : index\n")
	}
	attrs := fmt.Sprintf("{tmac.stages = %d : i64, tmac.warp_specialize}", c.n)
	ebar := ""
	if c.bar {
		ebar = "        gpu.barrier\n"
	}
	switch c.kind {
	case "gemm":
		mixed := ""
		if c.mixed {
			mixed = "          %e = memref.load %bs[%c0, %c0] : !bfull\n"
		}
		accTop, accIn := "      %acc0 = nvgpu.warpgroup.mma.init.accumulator -> !acc\n", ""
		if c.accIn {
			accTop, accIn = "", "        %acc0 = nvgpu.warpgroup.mma.init.accumulator -> !acc\n"
		}
		fmt.Fprintf(&b, `      %%wg = arith.divui %%tx, %%c128 : index
      %%myrow = arith.muli %%wg, %%c64 : index
      %%as = memref.alloc() : !atile
      %%bs = memref.alloc() : !bfull
%s      scf.for %%t = %s to %s step %s {
%s        %%tm = arith.remui %%t, %%c3 : index
        %%tn = arith.divui %%t, %%c3 : index
        %%row0 = arith.muli %%tm, %%c128 : index
        %%col0 = arith.muli %%tn, %%c128 : index
        %%grow = arith.addi %%row0, %%myrow : index
        %%res = scf.for %%k = %s to %s step %s iter_args(%%acc = %%acc0) -> (!acc) {
          %%kk = arith.muli %%k, %%c64 : index
          tmac.tma.load %%amap[%%kk, %%row0] to %%as : !adesc -> !atile
          tmac.tma.load %%bmap[%%col0, %%kk] to %%bs : !bdesc -> !bfull
          tmac.tma.wait %%as, %%bs : !atile, !bfull
          %%ah = memref.subview %%as[%%myrow, 0] [64, 64] [1, 1] : !atile to !ahalf
          %%da = nvgpu.warpgroup.generate.descriptor %%ah, %%amap : !ahalf, !adesc -> !nvgpu.warpgroup.descriptor<tensor = !ahalfd>
          %%db = nvgpu.warpgroup.generate.descriptor %%bs, %%bmap : !bfull, !bdesc -> !nvgpu.warpgroup.descriptor<tensor = !bfull>
          %%nacc = nvgpu.warpgroup.mma %%da, %%db, %%acc {transposeB} : !nvgpu.warpgroup.descriptor<tensor = !ahalfd>, !nvgpu.warpgroup.descriptor<tensor = !bfull>, !acc -> !acc
%s          scf.yield %%nacc : !acc
        } %s
%s        %%dsub = memref.subview %%out[%%grow, %%col0] [64, 128] [1, 1] : memref<1024x2048xf32> to memref<64x128xf32, strided<[2048, 1], offset: ?>>
        nvgpu.warpgroup.mma.store %%res, %%dsub : !acc to memref<64x128xf32, strided<[2048, 1], offset: ?>>
      }
`, accTop, tlb, tub, tst, accIn, klb, kub, kst, mixed, attrs, ebar)
	case "ew":
		lbar := ""
		if c.bar {
			lbar = "          gpu.barrier\n"
		}
		fmt.Fprintf(&b, `      %%zero = arith.constant 0.000000e+00 : f32
      %%as = memref.alloc() : !ft
      %%bs = memref.alloc() : !ft
      %%r = arith.divui %%tx, %%c64 : index
      %%cc = arith.remui %%tx, %%c64 : index
      scf.for %%t = %s to %s step %s {
        %%row0 = arith.muli %%t, %%c32 : index
        %%tm = arith.remui %%t, %%c5 : index
        %%col0 = arith.muli %%tm, %%c64 : index
        %%res = scf.for %%k = %s to %s step %s iter_args(%%s = %%zero) -> (f32) {
          %%x = arith.muli %%k, %%c64 : index
          tmac.tma.load %%amap[%%x, %%row0] to %%as : !fdesc -> !ft
          tmac.tma.load %%bmap[%%col0, %%x] to %%bs : !fdesc -> !ft
          tmac.tma.wait %%as, %%bs : !ft, !ft
          %%va = memref.load %%as[%%r, %%cc] : !ft
%s          %%vb = memref.load %%bs[%%r, %%cc] : !ft
          %%p = arith.addf %%va, %%vb : f32
          %%s1 = arith.addf %%s, %%p : f32
          scf.yield %%s1 : f32
        } %s
        memref.store %%res, %%out[%%tx] : memref<256xf32>
%s      }
`, tlb, tub, tst, klb, kub, kst, lbar, attrs, ebar)
	}
	b.WriteString("      gpu.return\n    }\n  }\n}\n")
	return b.String()
}

// specializeP runs warp-specialize on the case's kernel and returns the
// module and the kernel, mutated by mutate (nil: unchanged).
func specializeP(t *testing.T, c wsPCase, mutate func(k *ir.Operation)) (m, k *ir.Operation) {
	t.Helper()
	m = passtest.Parse(t, c.source())
	steps, err := passes.ParsePipeline("builtin.module(warp-specialize)")
	if err != nil {
		t.Fatal(err)
	}
	sched := schedule.NewSchedule()
	if err := passes.RunPipeline(m, steps, &passes.Context{Schedule: sched}, nil); err != nil {
		t.Fatalf("%s: %v", c, err)
	}
	k = passtest.Kernels(m)[0]
	if mutate != nil {
		mutate(k)
	} else {
		recordedSchedules[k] = sched
	}
	return m, k
}

// simulateP simulates every block of the case under the policies; the
// first failure is returned.
func simulateP(t *testing.T, c wsPCase, policies []string, allThreads bool, mutate func(k *ir.Operation)) (runs int, err error) {
	t.Helper()
	m, k := specializeP(t, c, mutate)
	for _, b := range c.blocks() {
		for _, pol := range policies {
			runs++
			if err := runWSSimWith(t, m, k, c.base(), c.simRun(b), pol, allThreads); err != nil {
				return runs, err
			}
		}
	}
	return runs, nil
}

// wsPCases is the sweep: both reader kinds, N 1..5, T 1..6 (and T = 0
// with a dynamic trip count), C 1..2, each with one of the K loop forms
// and the tile loop forms: constant bounds from 0 step 1 and from 1 step
// 2; block id to tiles step grid, some grids giving blocks one tile or
// none; dynamic bounds with lb != 0 and step > 1.
func wsPCases() []wsPCase {
	var cs []wsPCase
	for _, kind := range []string{"gemm", "ew"} {
		for n := int64(1); n <= 5; n++ {
			for trip := int64(0); trip <= 6; trip++ {
				for cw := int64(1); cw <= 2; cw++ {
					inner := int((n + trip + cw) % 3)
					if trip == 0 {
						if cw == 2 {
							continue
						}
						inner = 1
					}
					grid := []int64{3, 5, 3, 8}[(trip+cw)%4]
					bar := (n+trip)%2 == 1
					mixed := kind == "gemm" && (n+trip+cw)%4 == 0
					cs = append(cs,
						wsPCase{kind: kind, n: n, c: cw, trip: trip, inner: inner, outer: 0, tiles: 1 + (n+trip)%3, bar: bar, mixed: mixed, accIn: kind == "gemm" && n%2 == 0},
						wsPCase{kind: kind, n: n, c: cw, trip: trip, inner: inner, outer: 1, tiles: 7, grid: grid, bar: !bar, mixed: mixed, accIn: kind == "gemm" && n%2 == 1},
						wsPCase{kind: kind, n: n, c: cw, trip: trip, inner: (inner + 1) % 3, outer: 2, tl: 2, tu: 11 + n%2, ts: 3, bar: bar},
					)
					if trip%2 == 0 {
						cs = append(cs, wsPCase{kind: kind, n: n, c: cw, trip: trip, inner: (inner + 2) % 3, outer: 3, tiles: 2 + cw, bar: !bar, mixed: mixed})
					}
				}
			}
		}
	}
	return cs
}

func TestWarpSpecializePersistentSimulation(t *testing.T) {
	count := 0
	for _, c := range wsPCases() {
		if c.trip == 0 {
			c.inner = 1
		}
		n, err := simulateP(t, c, wsPolicies, false, nil)
		count += n
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d simulated runs", count)
}

// TestWarpSpecializePersistentAllThreads: one agent per thread.
func TestWarpSpecializePersistentAllThreads(t *testing.T) {
	for _, c := range []wsPCase{
		{kind: "gemm", n: 3, c: 1, trip: 4, outer: 1, tiles: 5, grid: 2, bar: true},
		{kind: "ew", n: 2, c: 1, trip: 3, inner: 1, outer: 2, tl: 1, tu: 8, ts: 3, bar: true},
		{kind: "gemm", n: 2, c: 1, trip: 3, outer: 0, tiles: 3, mixed: true},
	} {
		if _, err := simulateP(t, c, []string{"round-robin", "random-1"}, true, nil); err != nil {
			t.Fatal(err)
		}
	}
}

// TestWarpSpecializePersistentSimulationCatches breaks the persistent
// parts of the pass output and checks that the simulation notices each.
func TestWarpSpecializePersistentSimulationCatches(t *testing.T) {
	find := func(k *ir.Operation, name string) []*ir.Operation {
		var out []*ir.Operation
		ir.Walk(k, func(o *ir.Operation) ir.WalkResult {
			if o.Name() == name {
				out = append(out, o)
			}
			return ir.Advance
		})
		return out
	}
	// The ring position g = base + j of each role: the first operand of
	// the remui giving its try_wait's slot (producer first).
	positions := func(k *ir.Operation) (prod, cons *ir.Operation) {
		ws := find(k, "nvgpu.mbarrier.try_wait.parity")
		g := func(w *ir.Operation) *ir.Operation {
			slot := w.OperandNamed("mbarId").DefiningOp()
			if slot == nil || slot.Name() != "arith.remui" {
				t.Fatalf("slot not computed by arith.remui")
			}
			add := slot.Operand(0).DefiningOp()
			if add == nil || add.Name() != "arith.addi" {
				t.Fatalf("ring position not computed by arith.addi")
			}
			return add
		}
		return g(ws[0]), g(ws[1])
	}
	// j: the operand of g that is the K loop's induction variable.
	kIndex := func(g *ir.Operation) (base, j ir.Value) {
		for i, v := range g.Operands() {
			if a, ok := v.(*ir.BlockArgument); ok && a.Owner().ParentOp().Name() == "scf.for" && a.Owner().ParentOp().IsAncestorOf(g) {
				return g.Operand(1 - i), v
			}
		}
		t.Fatalf("no K index in the ring position")
		return nil, nil
	}
	gemm := wsPCase{kind: "gemm", n: 3, c: 2, trip: 4, outer: 1, tiles: 7, grid: 3, bar: true}
	ew := wsPCase{kind: "ew", n: 2, c: 1, trip: 3, inner: 1, outer: 2, tl: 2, tu: 12, ts: 3, bar: true}
	for _, tc := range []struct {
		name   string
		cs     []wsPCase
		mutate func(k *ir.Operation)
		want   string
	}{
		{"consumers do not add the tile base (restart the ring at each tile)", []wsPCase{gemm, ew}, func(k *ir.Operation) {
			_, g := positions(k)
			_, j := kIndex(g)
			ir.ReplaceAllUsesWith(g.Result(0), j)
		}, "waits on barrier|returned after|deadlock|reads data of ring position"},
		{"producer restarts the ring at each tile", []wsPCase{gemm, ew}, func(k *ir.Operation) {
			g, _ := positions(k)
			_, j := kIndex(g)
			ir.ReplaceAllUsesWith(g.Result(0), j)
		}, "wait 3 of the producer|before it was released|returned after|deadlock|has not loaded"},
		{"tile base from t instead of the tile index (both roles)", []wsPCase{gemm, ew}, func(k *ir.Operation) {
			p, c := positions(k)
			for _, g := range []*ir.Operation{p, c} {
				base, _ := kIndex(g)
				mul := base.DefiningOp() // ((t - lb) / st) * T
				div := mul.Operand(0).DefiningOp()
				if div == nil || div.Name() != "arith.divui" {
					t.Fatalf("tile index not computed by arith.divui")
				}
				t0 := div.Operand(0).DefiningOp().Operand(0)
				ir.ReplaceAllUsesWith(div.Result(0), t0)
			}
		}, "waits on barrier|returned after|deadlock|got loads|has not loaded"},
		{"producer's parity from the K step's round (j/N), not the ring position's", []wsPCase{gemm, ew}, func(k *ir.Operation) {
			g, _ := positions(k)
			_, j := kIndex(g)
			for _, u := range ir.Uses(g.Result(0)) {
				if u.Owner().Name() == "arith.divui" {
					u.Owner().SetOperand(u.Index(), j)
				}
			}
		}, "wait 3 of the producer|wait 1 of the producer|before it was released|deadlock|has not loaded"},
		{"producer loads every tile with the first tile's coordinates", []wsPCase{gemm, ew}, func(k *ir.Operation) {
			// the producer's tile loop: the first scf.for; its index
			// replaced by lb in the cloned coordinate ops only
			tl := find(k, "scf.for")[0]
			t0 := tl.Region(0).Entry().Arg(0)
			for _, u := range ir.Uses(t0) {
				if u.Owner().Name() != "arith.subi" {
					u.Owner().SetOperand(u.Index(), tl.Operand(0))
				}
			}
		}, "got loads"},
		{"consumers release by the K step (j > 0): the tile's last slot is never released", []wsPCase{gemm}, func(k *ir.Operation) {
			_, g := positions(k)
			_, j := kIndex(g)
			for _, u := range ir.Uses(g.Result(0)) {
				if u.Owner().Name() == "arith.cmpi" {
					u.Owner().SetOperand(u.Index(), j)
				}
			}
		}, "deadlock"},
		{"consumers release slot (j-1) mod N of the K step, not of the ring position", []wsPCase{gemm}, func(k *ir.Operation) {
			_, g := positions(k)
			_, j := kIndex(g)
			a := find(k, "nvgpu.mbarrier.arrive")[0]
			prev := a.OperandNamed("mbarId").DefiningOp().Operand(0).DefiningOp() // g + N-1
			if prev == nil || prev.Name() != "arith.addi" || prev.Operand(0) != g.Result(0) {
				t.Fatalf("released slot not computed as (g + N-1) mod N")
			}
			prev.SetOperand(0, j)
		}, "before it was released|more arrivals than its count|deadlock|returned after"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, c := range tc.cs {
				caught := 0
				m, k := specializeP(t, c, tc.mutate)
				for _, b := range c.blocks() {
					for _, pol := range wsPolicies {
						err := runWSSimWith(t, m, k, c.base(), c.simRun(b), pol, false)
						if err == nil {
							continue
						}
						caught++
						ok := false
						for _, w := range strings.Split(tc.want, "|") {
							ok = ok || strings.Contains(err.Error(), w)
						}
						if !ok {
							t.Fatalf("got %v, want %q", firstLine(err), tc.want)
						}
						if caught == 1 {
							t.Log(firstLine(err))
						}
					}
				}
				if caught == 0 {
					t.Fatalf("%s: no block and schedule caught the broken output", c)
				}
			}
		})
	}
}
