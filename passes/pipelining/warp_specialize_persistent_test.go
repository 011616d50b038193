package pipelining_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/passes/internal/pipecheck"
)

// The persistent form of warp-specialize on the emulator: the marked K
// loop sits directly in a tile loop `scf.for %t = lb to ub step st`, the
// producer runs a clone of the tile loop and both roles continue the
// rings across tiles (ring position i*T + j for K step j of the block's
// i-th tile). The ping-pong schedule (two consumer warpgroups taking the
// block's tiles in turn) shares the kernels: a persistent kernel written
// for one warpgroup.

// tileCase is a persistent kernel, cooperative or ping-pong.
type tileCase struct {
	kind     string // "gemm" (wgmma readers) or "ew" (thread readers)
	pingpong bool   // tmac.warp_specialize = "pingpong" (c = 1 as written)
	n        int64  // tmac.stages
	c        int64  // consumer warpgroups (cooperative)
	trip     int64  // T, the K loop's trip count
	inner    int    // K loop: 0: 0..T step 1 (constant); 1: 0..%U step 1; 2: 2..2+3T-1 step 3 (constant)
	outer    int    // tile loop: 0: 0..tiles step 1; 1: block id..tiles step grid; 2: %TL..%TU step %TS; 3: 1..2*tiles step 2 (constants)
	tiles    int64  // tile count (outer 0, 1, 3)
	grid     int64  // blocks (outer 1)
	// outer 2: the dynamic bounds
	tl, tu, ts int64
	kbar       bool // ew: a gpu.barrier in the K loop
	ebar       bool // a gpu.barrier in the tile's epilogue
	after      bool // a gpu.barrier after the tile loop
	accIn      bool // gemm: the accumulator is initialised in the tile loop
	mixed      bool // gemm: the consumer threads also read the B tile
}

func (c tileCase) String() string {
	o := fmt.Sprintf("tiles 0..%d", c.tiles)
	switch c.outer {
	case 1:
		o = fmt.Sprintf("tiles bid..%d step grid=%d", c.tiles, c.grid)
	case 2:
		o = fmt.Sprintf("tiles %%TL=%d..%%TU=%d step %%TS=%d", c.tl, c.tu, c.ts)
	case 3:
		o = fmt.Sprintf("tiles 1..%d step 2", 2*c.tiles)
	}
	s := "persistent"
	if c.pingpong {
		s = "pingpong"
	}
	return fmt.Sprintf("%s %s n=%d c=%d T=%d inner=%d %s kbar=%v ebar=%v after=%v accIn=%v mixed=%v", s, c.kind, c.n, c.c, c.trip, c.inner, o, c.kbar, c.ebar, c.after, c.accIn, c.mixed)
}

func (c tileCase) blocks() int64 {
	if c.outer == 1 {
		return c.grid
	}
	return 1
}

// tilesOf are the tile loop's induction values in block b, in order.
func (c tileCase) tilesOf(b int64) []int64 {
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

// ivs are the K loop's induction values.
func (c tileCase) ivs() []int64 {
	out := make([]int64, c.trip)
	for j := range out {
		out[j] = int64(j)
		if c.inner == 2 {
			out[j] = 2 + 3*int64(j)
		}
	}
	return out
}

// maxTile is the largest tile index any block runs.
func (c tileCase) maxTile() int64 {
	m := int64(0)
	for b := int64(0); b < c.blocks(); b++ {
		for _, t := range c.tilesOf(b) {
			m = max(m, t)
		}
	}
	return m
}

// The tiles' coordinates: gemm rows (t mod 3) x 128 (cooperative: each
// warpgroup 64 of them) or x 64 (ping-pong) of A and D, columns (t div 3)
// x 128 of B and D; ew rows 32t of A, columns 64 (t mod 5) of B.
func (c tileCase) origin(t int64) (row0, col0 int64) {
	if c.kind == "gemm" {
		rows := int64(128)
		if c.pingpong {
			rows = 64
		}
		return (t % 3) * rows, (t / 3) * 128
	}
	return t * 32, (t % 5) * 64
}

func (c tileCase) source() string {
	var b strings.Builder
	arows := 64 * c.c // the A tile of the warpgroups as written
	b.WriteString(tileTypes(arows, 128, 64))
	k := kCols(c.ivs())
	tmax := c.maxTile()
	wrote := 128 * c.c // threads as written
	dcols := (tmax/3 + 1) * 128
	switch c.kind {
	case "gemm":
		fmt.Fprintf(&b, "func.func @main(%%a: memref<384x%[1]dxf16>, %%b: memref<%[1]dx%[2]dxf16>, %%d: memref<384x%[2]dxf32>, %%aux: memref<%[3]dx%[4]dxf32>, %%U: index, %%TL: index, %%TU: index, %%TS: index) {\n",
			k, dcols, tmax+1, wrote)
		hostMaps(&b, "gemm", arows, fmt.Sprintf("memref<384x%dxf16>", k), fmt.Sprintf("memref<%dx%dxf16>", k, dcols))
	case "ew":
		fmt.Fprintf(&b, "func.func @main(%%a: memref<%[1]dx%[2]dxf32>, %%b: memref<%[2]dx320xf32>, %%out: memref<%[3]dx%[4]dxf32>, %%U: index, %%TL: index, %%TU: index, %%TS: index) {\n",
			32*(tmax+1), k, tmax+1, wrote)
		hostMaps(&b, "ew", arows, fmt.Sprintf("memref<%dx%dxf32>", 32*(tmax+1), k), fmt.Sprintf("memref<%dx320xf32>", k))
	}
	rows := 128
	if c.pingpong {
		rows = 64
	}
	launch(&b, wrote, c.blocks(), 1)
	fmt.Fprintf(&b, `    %%rows = arith.constant %d : index
    %%ntiles = arith.constant %d : index
    %%grid = arith.constant %d : index
    %%tub = arith.constant %d : index
`, rows, c.tiles, max(c.grid, 1), 2*c.tiles)
	tlb, tub, tst := "%c0", "%ntiles", "%c1"
	switch c.outer {
	case 1:
		tlb, tst = "%bx", "%grid"
	case 2:
		tlb, tub, tst = "%TL", "%TU", "%TS"
	case 3:
		tlb, tub, tst = "%c1", "%tub", "%c2"
	}
	l := kLoop{kind: c.kind, lb: "%c0", ub: "%kub", step: "%c1", attrs: fmt.Sprintf("{tmac.stages = %d : i64, tmac.warp_specialize}", c.n), mixed: c.mixed, bar: c.kbar, btype: "!ft"}
	if c.pingpong {
		l.attrs = fmt.Sprintf(`{tmac.stages = %d : i64, tmac.warp_specialize = "pingpong"}`, c.n)
	}
	switch c.inner {
	case 0:
		fmt.Fprintf(&b, "    %%kub = arith.constant %d : index\n", c.trip)
	case 1:
		l.ub = "%U"
	case 2:
		fmt.Fprintf(&b, "    %%kub = arith.constant %d : index\n", 2+3*c.trip-1)
		l.lb, l.step = "%c2", "%c3"
	}
	ebar := ""
	if c.ebar {
		ebar = "    gpu.barrier\n"
	}
	switch c.kind {
	case "gemm":
		accTop, accIn := "    %acc0 = nvgpu.warpgroup.mma.init.accumulator -> !acc\n", ""
		if c.accIn {
			accTop, accIn = "", "    %acc0 = nvgpu.warpgroup.mma.init.accumulator -> !acc\n"
		}
		l.loads = "      tmac.tma.load %amap[%kk, %row0] to %as : !adesc -> !atile\n      tmac.tma.load %bmap[%col0, %kk] to %bs : !bdesc -> !bfull\n"
		loop, acc, sum := l.text()
		aux := ""
		if c.mixed {
			aux = fmt.Sprintf("    memref.store %s, %%aux[%%t, %%tx] : memref<%dx%dxf32>\n", sum, tmax+1, wrote)
		}
		fmt.Fprintf(&b, `    %%wg = arith.divui %%tx, %%c128 : index
    %%myrow = arith.muli %%wg, %%c64 : index
    %%as = memref.alloc() : !atile
    %%bs = memref.alloc() : !bfull
%s    scf.for %%t = %s to %s step %s {
%s    %%tm = arith.remui %%t, %%c3 : index
    %%tn = arith.divui %%t, %%c3 : index
    %%row0 = arith.muli %%tm, %%rows : index
    %%col0 = arith.muli %%tn, %%c128 : index
    %%grow = arith.addi %%row0, %%myrow : index
%s%s%s%s    }
`, accTop, tlb, tub, tst, accIn, loop, ebar, storeTile(acc, "%col0", 384, 128, dcols), aux)
	case "ew":
		l.loads = "      tmac.tma.load %amap[%kk, %row0] to %as : !fdesc -> !ft\n      tmac.tma.load %bmap[%col0, %kk] to %bs : !fdesc -> !ft\n"
		loop, sum, _ := l.text()
		fmt.Fprintf(&b, `    %%as = memref.alloc() : !ft
    %%bs = memref.alloc() : !ft
    scf.for %%t = %s to %s step %s {
    %%row0 = arith.muli %%t, %%c32 : index
    %%tm = arith.remui %%t, %%c5 : index
    %%col0 = arith.muli %%tm, %%c64 : index
%s%s    memref.store %s, %%out[%%t, %%tx] : memref<%dx%dxf32>
    }
`, tlb, tub, tst, loop, ebar, sum, tmax+1, wrote)
	}
	if c.after {
		b.WriteString("    gpu.barrier\n")
	}
	b.WriteString("    gpu.terminator\n  }\n  return\n}\n")
	return b.String()
}

// positions are the ring positions of block b (tile i's K step j at
// i*T + j) that consumer warpgroup w waits for: every position, or in
// ping-pong those of its tiles (w, w+2, ...).
func (c tileCase) positions(b int64, w int) []int64 {
	var out []int64
	for i := range c.tilesOf(b) {
		if c.pingpong && i%2 != w {
			continue
		}
		for j := int64(0); j < c.trip; j++ {
			out = append(out, int64(i)*c.trip+j)
		}
	}
	return out
}

// program is the case with its inputs, ring and references.
func (c tileCase) program(seed int64) (*pipecheck.Program, outputs) {
	ivs := c.ivs()
	k := kCols(ivs)
	tmax := int(c.maxTile())
	wrote := int(128 * c.c)
	p := &pipecheck.Program{Name: c.String(), Source: c.source()}
	outs := outputs{}
	dyn := []any{c.trip, c.tl, c.tu, c.ts}
	var tiles []int64 // of every block
	for bl := int64(0); bl < c.blocks(); bl++ {
		tiles = append(tiles, c.tilesOf(bl)...)
	}
	switch c.kind {
	case "gemm":
		dcols := (tmax/3 + 1) * 128
		a := pipecheck.NewInput(ir.F16T, 384, k, seed)
		b := pipecheck.NewInput(ir.F16T, k, dcols, seed+1)
		d := pipecheck.NewOutput(ir.F32T, 384, dcols)
		aux := pipecheck.NewOutput(ir.F32T, tmax+1, wrote)
		p.Args = append([]any{a.Buffer, b.Buffer, d.Buffer, aux.Buffer}, dyn...)
		outs[2] = d.Clone()
		if c.mixed {
			outs[3] = aux.Clone()
		}
		for _, t := range tiles {
			row0, col0 := c.origin(t)
			gemmRef(outs[2], a, b, int(row0), int(64*c.c), int(col0), int(col0), 128, ivs)
			if c.mixed {
				mixedRef(outs[3], b, int(t), int(col0), wrote, ivs)
			}
		}
	case "ew":
		a := pipecheck.NewInput(ir.F32T, 32*(tmax+1), k, seed)
		b := pipecheck.NewInput(ir.F32T, k, 320, seed+1)
		out := pipecheck.NewOutput(ir.F32T, tmax+1, wrote)
		p.Args = append([]any{a.Buffer, b.Buffer, out.Buffer}, dyn...)
		want := out.Clone()
		for _, t := range tiles {
			row0, col0 := c.origin(t)
			for tx := 0; tx < wrote; tx++ {
				s := 0.0
				for _, iv := range ivs {
					s += a.At(int(row0)+tx/64, int(iv)*64+tx%64) + b.At(int(iv)*64+tx/64, int(col0)+tx%64)
				}
				want.Set(int(t), tx, s)
			}
		}
		outs[2] = want
	}
	var blocks [][3]int64
	for bl := int64(0); bl < c.blocks(); bl++ {
		blocks = append(blocks, [3]int64{bl, 0, 0})
	}
	p.Ring = &pipecheck.Ring{
		Blocks:    blocks,
		Positions: func(bl [3]int64) int64 { return int64(len(c.tilesOf(bl[0]))) * c.trip },
		Loads: func(bl [3]int64, g int64) []pipecheck.Load {
			row0, col0 := c.origin(c.tilesOf(bl[0])[g/c.trip])
			iv := ivs[g%c.trip]
			if c.kind == "gemm" {
				return gemmLoads(iv, row0, col0)
			}
			return []pipecheck.Load{
				{Tile: 0, Map: 0, Coords: []int64{iv * 64, row0}, Issuer: -1},
				{Tile: 1, Map: 1, Coords: []int64{col0, iv * 64}, Issuer: -1},
			}
		},
		Waits: func(bl [3]int64, thread int) []int64 {
			if thread < 128 {
				return nil // the producer
			}
			return c.positions(bl[0], thread/128-1)
		},
		Trip: c.trip,
	}
	return p, outs
}

func runTiles(c tileCase, mutate func(k *ir.Operation), seeds ...int64) error {
	p, outs := c.program(100*c.n + 1000*c.trip + 7*c.c + 31*int64(c.outer) + 61*int64(c.inner))
	p.Mutate = mutate
	return emulate(p, outs, seeds...)
}

// persistentCases is the sweep: both reader kinds, N 1..5, T 0..3 and 5,
// with one or two consumer warpgroups, a K loop form and a tile loop form
// in turn: constant bounds from 0 step 1 and from 1 step 2; block id to
// tiles step grid, the blocks taking uneven tile counts or none; dynamic
// bounds with lb != 0 and step 3.
func persistentCases() []tileCase {
	var cs []tileCase
	for ki, kind := range []string{"gemm", "ew"} {
		for n := int64(1); n <= 5; n++ {
			for _, trip := range []int64{0, 1, 2, 3, 5} {
				cw := 1 + (n+trip+int64(ki))%2
				inner := int((n + trip + cw) % 3)
				if trip == 0 {
					inner = 1
				}
				bar := (n+trip)%2 == 1
				c := tileCase{kind: kind, n: n, c: cw, trip: trip, inner: inner, ebar: bar, kbar: bar && kind == "ew",
					mixed: kind == "gemm" && (n+trip+cw)%4 == 0, accIn: kind == "gemm" && n%2 == 0}
				switch (n + trip + int64(ki)) % 4 {
				case 0:
					c.outer, c.tiles = 0, 1+(n+trip)%3
				case 1:
					c.outer, c.tiles, c.grid = 1, []int64{5, 3}[(n+trip)%2], []int64{3, 4}[(n+trip)%2]
				case 2:
					c.outer, c.tl, c.tu, c.ts = 2, 2, 8+n%2*3, 3
				case 3:
					c.outer, c.tiles = 3, 1+cw
				}
				cs = append(cs, c)
			}
		}
	}
	return cs
}

func TestWarpSpecializePersistentEmulated(t *testing.T) {
	t.Parallel()
	emulateAll(t, persistentCases())
}

// emulateAll runs every case once, each under a seed of its own.
func emulateAll(t *testing.T, cases []tileCase) {
	for i, c := range cases {
		if err := runTiles(c, nil, int64(i)); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d emulated kernels", len(cases))
}

// TestWarpSpecializePersistentCatches breaks the persistent parts of the
// pass output and checks that some run reports each.
func TestWarpSpecializePersistentCatches(t *testing.T) {
	t.Parallel()
	// The ring position g = base + j of each role: the first operand of
	// the remui giving its try_wait's slot (producer first).
	positions := func(k *ir.Operation) (prod, cons *ir.Operation) {
		ws := find(k, "nvgpu.mbarrier.try_wait.parity", nil)
		g := func(w *ir.Operation) *ir.Operation {
			slot := w.OperandNamed("mbarId").DefiningOp()
			if slot == nil || slot.Name() != "arith.remui" {
				expect(false, "slot not computed by arith.remui")
			}
			add := slot.Operand(0).DefiningOp()
			if add == nil || add.Name() != "arith.addi" {
				expect(false, "ring position not computed by arith.addi")
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
		expect(false, "no K index in the ring position")
		return nil, nil
	}
	// kStepIn makes the ops named user read the K step instead of the
	// ring position of the producer, or of the consumers.
	kStepIn := func(consumers bool, user string) func(k *ir.Operation) {
		return func(k *ir.Operation) {
			g, c := positions(k)
			if consumers {
				g = c
			}
			_, j := kIndex(g)
			for _, u := range ir.Uses(g.Result(0)) {
				if u.Owner().Name() == user {
					u.Owner().SetOperand(u.Index(), j)
				}
			}
		}
	}
	// Rings of 4 and 2 slots: the ring arithmetic stays on index (rings of
	// other sizes divide on i32: TestWarpSpecializeNarrowRingCatches).
	gemm := tileCase{kind: "gemm", n: 4, c: 2, trip: 5, outer: 1, tiles: 7, grid: 3, ebar: true}
	ew := tileCase{kind: "ew", n: 2, c: 1, trip: 3, inner: 1, outer: 2, tl: 2, tu: 12, ts: 3, ebar: true, kbar: true}
	catches(t, []mutation[tileCase]{
		{"consumers do not add the tile base (restart the ring at each tile)", []tileCase{gemm, ew}, "", func(k *ir.Operation) {
			_, g := positions(k)
			_, j := kIndex(g)
			ir.ReplaceAllUsesWith(g.Result(0), j)
		}, "waits for ring position|returned after phase|deadlock|before their fill"},
		{"producer restarts the ring at each tile", []tileCase{gemm, ew}, "", func(k *ir.Operation) {
			g, _ := positions(k)
			_, j := kIndex(g)
			ir.ReplaceAllUsesWith(g.Result(0), j)
		}, "returned after phase|before every reader released it|deadlock|got loads"},
		{"tile base from t instead of the tile index (both roles)", []tileCase{gemm, ew}, "", func(k *ir.Operation) {
			p, c := positions(k)
			for _, g := range []*ir.Operation{p, c} {
				base, _ := kIndex(g)
				mul := base.DefiningOp() // ((t - lb) / st) * T
				div := mul.Operand(0).DefiningOp()
				if div == nil || div.Name() != "arith.divui" {
					expect(false, "tile index not computed by arith.divui")
				}
				t0 := div.Operand(0).DefiningOp().Operand(0)
				ir.ReplaceAllUsesWith(div.Result(0), t0)
			}
		}, "waits for ring position|returned after phase|deadlock|got loads"},
		{"producer's parity from the K step's round (j/N), not the ring position's", []tileCase{gemm, ew}, "", kStepIn(false, "arith.divui"),
			"returned after phase|before every reader released it|deadlock"},
		{"producer loads every tile with the first tile's coordinates", []tileCase{gemm, ew}, "", func(k *ir.Operation) {
			// the producer's tile loop: the first scf.for; its index
			// replaced by lb in the cloned coordinate ops only
			tl := find(k, "scf.for", nil)[0]
			t0 := tl.Region(0).Entry().Arg(0)
			for _, u := range ir.Uses(t0) {
				if u.Owner().Name() != "arith.subi" {
					u.Owner().SetOperand(u.Index(), tl.Operand(0))
				}
			}
		}, "got loads"},
		{"consumers release by the K step (j > 0): the tile's last slot is never released", []tileCase{gemm}, "", kStepIn(true, "arith.cmpi"), "deadlock"},
		{"consumers release slot (j-1) mod N of the K step, not of the ring position", []tileCase{gemm}, "", func(k *ir.Operation) {
			_, g := positions(k)
			_, j := kIndex(g)
			a := find(k, "nvgpu.mbarrier.arrive", nil)[0]
			prev := a.OperandNamed("mbarId").DefiningOp().Operand(0).DefiningOp() // g + N-1
			if prev == nil || prev.Name() != "arith.addi" || prev.Operand(0) != g.Result(0) {
				expect(false, "released slot not computed as (g + N-1) mod N")
			}
			prev.SetOperand(0, j)
		}, "releases slot|before every reader released it|more arrivals than the mbarrier's count|deadlock"},
	}, func(c tileCase, _ string, mutate func(k *ir.Operation)) error {
		return runTiles(c, mutate, 1, 2, 3)
	})
}

// TestWarpSpecializeNarrowRingCatches breaks the i32 ring arithmetic of a
// ring of 3 slots (narrowRing: the tile base divided once per tile, j plus
// its remainder divided on i32, the release's wrap by a select) and checks
// that some run reports each.
func TestWarpSpecializeNarrowRingCatches(t *testing.T) {
	t.Parallel()
	// The i32 position x = base mod N + j of a try_wait's slot,
	// index_castui(remui(index_castui(x), N)), and its round
	// q = base / N + x / N from the parity (q & 1) != 0.
	position := func(w *ir.Operation) (x, q *ir.Operation) {
		def := func(v ir.Value, name string) *ir.Operation {
			d := v.DefiningOp()
			if d == nil || d.Name() != name {
				expect(false, "narrowed ring: expected %s", name)
			}
			return d
		}
		rem := def(def(w.OperandNamed("mbarId"), "arith.index_castui").Operand(0), "arith.remui")
		x = def(def(rem.Operand(0), "arith.index_castui").Operand(0), "arith.addi")
		and := def(def(w.Operand(1), "arith.cmpi").Operand(0), "arith.andi")
		q = def(and.Operand(0), "arith.addi")
		return x, q
	}
	// dropBase makes a role's slot (part 0: x = base mod N + j) or round
	// (part 1: q = base / N + x / N) its sum without the tile base's part;
	// the producer's try_wait comes first, the consumers' second.
	dropBase := func(consumers bool, part int) func(k *ir.Operation) {
		return func(k *ir.Operation) {
			w := find(k, "nvgpu.mbarrier.try_wait.parity", nil)[map[bool]int{false: 0, true: 1}[consumers]]
			x, q := position(w)
			op := []*ir.Operation{x, q}[part]
			ir.ReplaceAllUsesWith(op.Result(0), op.Operand(1))
		}
	}
	gemm := tileCase{kind: "gemm", n: 3, c: 2, trip: 4, outer: 1, tiles: 7, grid: 3, ebar: true}
	ew := tileCase{kind: "ew", n: 3, c: 1, trip: 5, inner: 2, outer: 2, tl: 2, tu: 12, ts: 3, ebar: true, kbar: true}
	var muts []mutation[tileCase]
	for _, role := range []struct {
		name      string
		consumers bool
		want      string
	}{
		{"consumers'", true, "waits for ring position|returned after phase|deadlock|before their fill"},
		{"producer's", false, "returned after phase|before every reader released it|deadlock|got loads"},
	} {
		for part, what := range []string{"slot without the tile base's remainder", "round without the tile base's quotient"} {
			muts = append(muts, mutation[tileCase]{role.name + " " + what, []tileCase{gemm, ew}, "", dropBase(role.consumers, part), role.want})
		}
	}
	catches(t, append(muts, []mutation[tileCase]{
		{"consumers release slot - 1 without the wrap to N-1", []tileCase{gemm}, "", func(k *ir.Operation) {
			sel := find(k, "arith.select", nil)
			for _, s := range sel {
				if ir.Uses(s.Result(0)) != nil {
					for _, u := range ir.Uses(s.Result(0)) {
						if u.Owner().Name() == "nvgpu.mbarrier.arrive" {
							ir.ReplaceAllUsesWith(s.Result(0), s.Operand(2))
							return
						}
					}
				}
			}
			expect(false, "no select giving a released slot")
		}, "releases slot|out of range|out of bounds|before every reader released it|deadlock"},
	}...), func(c tileCase, _ string, mutate func(k *ir.Operation)) error {
		return runTiles(c, mutate, 1, 2, 3)
	})
}
