package pipelining_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tmac-dev/tmac/dialects/arith"
	"github.com/tmac-dev/tmac/dialects/nvvm"
	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/passes/internal/pipecheck"
)

// warp-specialize with thread block clusters and TMA multicast on the
// emulator: a grid of one or two clusters of cs blocks (with two, block
// ids and ranks differ), each block loading its own A tile and its share of a B tile of
// four boxes that is multicast to every block of the cluster. Every block
// must land, as each ring position, its own box and all four shared boxes,
// box i issued by rank i / (4 / cs); the consumers' releases must reach
// every block's producer (remote arrivals at cluster scope when threads
// read the slots); no block may use a peer's barrier before the peer
// initialised it, nor exit while its peers still use its shared memory.

// clusterCase is one clustered kernel.
type clusterCase struct {
	kind   string // "gemm" (wgmma readers) or "ew" (thread readers)
	n      int64  // tmac.stages
	c      int64  // consumer warpgroups
	cs     int64  // cluster size (along x)
	trip   int64  // trip count
	form   int    // 0: static 0..T step 1; 1: 0..%U step 1
	mixed  bool   // gemm: the consumer threads also read the multicast tile
	bFirst bool   // the multicast load comes before the block's own load
	// tiles > 0: gemm, persistent: the K loop sits in a tile loop
	// `scf.for %t = %bx to %tiles step %grid` (the grid's blocks), the own
	// tile's rows are t x 64C.
	tiles int64
	one   bool // a grid of one cluster (else two)
}

// grid is the number of blocks.
func (c clusterCase) grid() int64 {
	if c.one {
		return c.cs
	}
	return 2 * c.cs
}

func (c clusterCase) String() string {
	p := ""
	if c.tiles > 0 {
		p = fmt.Sprintf(" persistent tiles=%d", c.tiles)
	}
	return fmt.Sprintf("cluster %s n=%d c=%d cs=%d clusters=%d T=%d form=%d mixed=%v bFirst=%v%s", c.kind, c.n, c.c, c.cs, c.grid()/c.cs, c.trip, c.form, c.mixed, c.bFirst, p)
}

// tilesOf are the tiles block bx runs (its own, without a tile loop).
func (c clusterCase) tilesOf(bx int64) []int64 {
	if c.tiles == 0 {
		return []int64{bx}
	}
	var ts []int64
	for t := bx; t < c.tiles; t += c.grid() {
		ts = append(ts, t)
	}
	return ts
}

// rowTiles is the number of own tiles in the grid.
func (c clusterCase) rowTiles() int64 {
	if c.tiles > 0 {
		return c.tiles
	}
	return c.grid()
}

func (c clusterCase) source() string {
	var b strings.Builder
	arows := 64 * c.c
	threads := 128 * c.c
	k := int64(kCols(c.ivs()))
	b.WriteString(tileTypes(arows, 256, 256))
	grid := c.grid()
	switch c.kind {
	case "gemm":
		rows := c.rowTiles() * arows
		fmt.Fprintf(&b, "func.func @main(%%a: memref<%[1]dx%[2]dxf16>, %%b: memref<%[2]dx768xf16>, %%d: memref<%[1]dx256xf32>, %%aux: memref<%[3]dx%[4]dxf32>, %%U: index) {\n", rows, k, c.rowTiles(), threads)
		hostMaps(&b, "gemm", arows, fmt.Sprintf("memref<%dx%dxf16>", rows, k), fmt.Sprintf("memref<%dx768xf16>", k))
	case "ew":
		fmt.Fprintf(&b, "func.func @main(%%a: memref<%[1]dx%[2]dxf32>, %%b: memref<%[2]dx768xf32>, %%out: memref<%[3]dx%[4]dxf32>, %%U: index) {\n", 32*grid, k, grid, threads)
		hostMaps(&b, "ew", arows, fmt.Sprintf("memref<%dx%dxf32>", 32*grid, k), fmt.Sprintf("memref<%dx768xf32>", k))
	}
	launch(&b, threads, grid, c.cs)
	l := kLoop{kind: c.kind, lb: "%c0", ub: "%U", step: "%c1", attrs: fmt.Sprintf("{tmac.stages = %d : i64, tmac.warp_specialize}", c.n), mixed: c.mixed, btype: "!fb"}
	if c.form == 0 {
		fmt.Fprintf(&b, "    %%ub = arith.constant %d : index\n", c.trip)
		l.ub = "%ub"
	}
	order := func(own, mc string) string {
		if c.bFirst {
			return mc + own
		}
		return own + mc
	}
	switch c.kind {
	case "gemm":
		open, close, tile := "    %row0 = arith.muli %bx, %arows : index\n", "", "%bx"
		if c.tiles > 0 {
			open = fmt.Sprintf("    %%ctiles = arith.constant %d : index\n    %%cgrid = arith.constant %d : index\n", c.tiles, grid) +
				"    scf.for %t = %bx to %ctiles step %cgrid {\n    %row0 = arith.muli %t, %arows : index\n"
			close, tile = "    }\n", "%t"
		}
		l.loads = order("      tmac.tma.load %amap[%kk, %row0] to %as : !adesc -> !atile\n",
			"      tmac.tma.load %bmap[%c512, %kk] to %bs {tmac.multicast} : !bdesc -> !bfull\n")
		loop, acc, sum := l.text()
		aux := ""
		if c.mixed {
			aux = fmt.Sprintf("    memref.store %s, %%aux[%s, %%tx] : memref<%dx%dxf32>\n", sum, tile, c.rowTiles(), threads)
		}
		fmt.Fprintf(&b, `    %%arows = arith.constant %d : index
    %%wg = arith.divui %%tx, %%c128 : index
    %%myrow = arith.muli %%wg, %%c64 : index
    %%as = memref.alloc() : !atile
    %%bs = memref.alloc() : !bfull
    %%acc0 = nvgpu.warpgroup.mma.init.accumulator -> !acc
%s%s    %%grow = arith.addi %%row0, %%myrow : index
%s%s%s`, arows, open, loop, storeTile(acc, "%c0", c.rowTiles()*arows, 256, 256), aux, close)
	case "ew":
		l.loads = order("      tmac.tma.load %amap[%kk, %row0] to %as : !fdesc -> !ft\n",
			"      tmac.tma.load %bmap[%c512, %kk] to %bs {tmac.multicast} : !fdesc -> !fb\n")
		loop, sum, _ := l.text()
		fmt.Fprintf(&b, `    %%row0 = arith.muli %%bx, %%c32 : index
    %%as = memref.alloc() : !ft
    %%bs = memref.alloc() : !fb
%s    memref.store %s, %%out[%%bx, %%tx] : memref<%dx%dxf32>
`, loop, sum, grid, threads)
	}
	b.WriteString("    gpu.terminator\n  }\n  return\n}\n")
	return b.String()
}

func (c clusterCase) ivs() []int64 {
	out := make([]int64, c.trip)
	for j := range out {
		out[j] = int64(j)
	}
	return out
}

// program is the case with its inputs, ring and references.
func (c clusterCase) program(seed int64) (*pipecheck.Program, outputs) {
	ivs := c.ivs()
	k := kCols(ivs)
	grid := c.grid()
	threads := int(128 * c.c)
	p := &pipecheck.Program{Name: c.String(), Source: c.source()}
	outs := outputs{}
	arows := int(64 * c.c)
	switch c.kind {
	case "gemm":
		rows := int(c.rowTiles()) * arows
		a := pipecheck.NewInput(ir.F16T, rows, k, seed)
		b := pipecheck.NewInput(ir.F16T, k, 768, seed+1)
		d := pipecheck.NewOutput(ir.F32T, rows, 256)
		aux := pipecheck.NewOutput(ir.F32T, int(c.rowTiles()), threads)
		p.Args = []any{a.Buffer, b.Buffer, d.Buffer, aux.Buffer, c.trip}
		outs[2] = d.Clone()
		if c.mixed {
			outs[3] = aux.Clone()
		}
		for bx := int64(0); bx < grid; bx++ {
			for _, t := range c.tilesOf(bx) {
				// D's columns 0..255 are B's 512..767.
				gemmRef(outs[2], a, b, int(t)*arows, arows, 0, 512, 256, ivs)
				if c.mixed {
					mixedRef(outs[3], b, int(t), 512, threads, ivs)
				}
			}
		}
	case "ew":
		a := pipecheck.NewInput(ir.F32T, 32*int(grid), k, seed)
		b := pipecheck.NewInput(ir.F32T, k, 768, seed+1)
		out := pipecheck.NewOutput(ir.F32T, int(grid), threads)
		p.Args = []any{a.Buffer, b.Buffer, out.Buffer, c.trip}
		want := out.Clone()
		for bx := 0; bx < int(grid); bx++ {
			for tx := 0; tx < threads; tx++ {
				// Element (r, cc) of the 32x256 multicast tile lies in its
				// four 32x64 boxes, stored one after the other.
				off := (tx/64)*256 + tx%64
				box, row, col := off/2048, off%2048/64, off%64
				s := 0.0
				for _, iv := range ivs {
					s += a.At(bx*32+tx/64, int(iv)*64+tx%64) + b.At(int(iv)*64+row, 512+64*box+col)
				}
				want.Set(bx, tx, s)
			}
		}
		outs[2] = want
	}
	var blocks [][3]int64
	for bx := int64(0); bx < grid; bx++ {
		blocks = append(blocks, [3]int64{bx, 0, 0})
	}
	per := 4 / c.cs     // multicast boxes each rank issues
	own, shared := 0, 1 // the tiles, in the order the loop loads them
	if c.bFirst {
		own, shared = 1, 0
	}
	p.Ring = &pipecheck.Ring{
		Blocks:    blocks,
		Positions: func(bl [3]int64) int64 { return int64(len(c.tilesOf(bl[0]))) * c.trip },
		Loads: func(bl [3]int64, g int64) []pipecheck.Load {
			iv := ivs[g%c.trip]
			mine := pipecheck.Load{Tile: own, Map: 0, Coords: []int64{iv * 64, bl[0] * 32}, Issuer: -1}
			if c.kind == "gemm" {
				mine.Coords[1] = c.tilesOf(bl[0])[g/c.trip] * 64 * c.c
			}
			out := []pipecheck.Load{mine}
			for i := int64(0); i < 4; i++ {
				out = append(out, pipecheck.Load{Tile: shared, Box: int(i), Map: 1, Coords: []int64{512 + 64*i, iv * 64}, Issuer: int(i / per)})
			}
			return out
		},
		Waits: func(bl [3]int64, thread int) []int64 {
			if thread < 128 {
				return nil
			}
			all := make([]int64, int64(len(c.tilesOf(bl[0])))*c.trip)
			for g := range all {
				all[g] = int64(g)
			}
			return all
		},
		Trip: c.trip,
	}
	return p, outs
}

func runCluster(c clusterCase, mutate func(k *ir.Operation), seeds ...int64) error {
	p, outs := c.program(100*c.n + 1000*c.trip + 7*c.c + 31*c.cs + 3*int64(c.form))
	p.Mutate = mutate
	return emulate(p, outs, seeds...)
}

// TestWarpSpecializeClusterEmulated: cluster sizes 2 and 4, N 1..4, trip
// counts 0, 2 and 5, with the reader kind, the consumer warpgroups,
// the bounds' form, the order of the two loads and (for clusters of 2) a
// grid of one or two clusters in turn.
func TestWarpSpecializeClusterEmulated(t *testing.T) {
	t.Parallel()
	count := 0
	for _, cs := range []int64{2, 4} {
		for n := int64(1); n <= 4; n++ {
			for _, trip := range []int64{0, 2, 5} {
				kind := []string{"gemm", "ew"}[(n+trip+cs/2)%2]
				c := clusterCase{kind: kind, n: n, c: 1 + (trip+n/2)%2, cs: cs, trip: trip, form: int((trip + n) % 3 / 2), bFirst: (trip+n+cs)%3 == 1,
					mixed: kind == "gemm" && (n+trip)%4 == 1, one: cs == 4 || (n+trip/2)%2 == 0}
				if kind == "gemm" && cs == 4 {
					c.c = 1
				}
				if err := runCluster(c, nil, int64(count)); err != nil {
					t.Fatal(err)
				}
				count++
			}
		}
	}
	t.Logf("%d emulated cluster kernels", count)
}

// TestWarpSpecializeClusterPersistent: the persistent form with a
// multicast tile, every block of the cluster running as many tiles (the
// rings continue across tiles, each block's own tile changes, the
// multicast boxes keep coming from their owners).
func TestWarpSpecializeClusterPersistent(t *testing.T) {
	t.Parallel()
	for _, c := range []clusterCase{
		{kind: "gemm", n: 1, c: 2, cs: 2, trip: 1, form: 1, tiles: 8},
		{kind: "gemm", n: 2, c: 1, cs: 2, trip: 3, tiles: 8, bFirst: true},
		{kind: "gemm", n: 3, c: 1, cs: 4, trip: 2, form: 1, tiles: 8, one: true},
		{kind: "gemm", n: 2, c: 1, cs: 4, trip: 3, tiles: 8, mixed: true},
	} {
		if err := runCluster(c, nil, 1); err != nil {
			t.Fatal(err)
		}
	}
}

// TestWarpSpecializeClusterUnevenTiles: regression test (fixed: the pass
// rejects it): a persistent tile loop whose trip count differs between the
// blocks of a cluster (block 0 of a cluster gets one tile more than the
// others) would wait for multicast boxes the other blocks' producers never
// issue.
func TestWarpSpecializeClusterUnevenTiles(t *testing.T) {
	for _, cs := range []int64{2, 4} {
		c := clusterCase{kind: "gemm", n: 2, c: 1, cs: cs, trip: 3, tiles: 3*cs + 1}
		p, _ := c.program(1)
		_, err := pipecheck.Compile(p)
		if err == nil || !strings.Contains(err.Error(), "every block of a cluster must run the tile loop the same number of times") {
			t.Fatalf("%s: got %v, want the pass to reject the uneven tile loop", c, err)
		}
	}
}

// TestWarpSpecializeClusterCatches breaks the pass's cluster protocol in
// the output and checks that some run reports each break.
func TestWarpSpecializeClusterCatches(t *testing.T) {
	// emptyInits are the inits of the empty barriers (the second group).
	emptyInits := func(k *ir.Operation) []*ir.Operation {
		empty := find(k, "nvgpu.mbarrier.create", nil)[1].Result(0)
		return find(k, "nvgpu.mbarrier.init", func(in *ir.Operation) bool { return in.OperandNamed("barriers") == empty })
	}
	ownRank := func(at *ir.Operation) ir.Value {
		b := ir.NewBuilder(at.Loc)
		b.SetInsertionPoint(at)
		return b.CreateOp("nvvm.read.ptx.sreg.cluster.ctarank", nil, []ir.Type{ir.I32}).Result(0)
	}
	// divideEmptyCounts divides the counts of the empty barriers by the
	// cluster size (the number of nvvm.mapa, one per block).
	divideEmptyCounts := func(k *ir.Operation) {
		cs := int64(len(find(k, "nvvm.mapa", nil)))
		for _, in := range emptyInits(k) {
			n, _ := arith.ConstantInt(in.OperandNamed("count"))
			setConst(in, 1, n/cs, ir.Index)
		}
	}
	// multicastLoads are the TMA loads of the multicast boxes, in box order.
	multicastLoads := func(k *ir.Operation) []*ir.Operation {
		return find(k, "nvgpu.tma.async.load", func(l *ir.Operation) bool { return l.OperandNamed("multicastMask") != nil })
	}
	// multicastIfs are the scf.if ops guarding the multicast boxes, in box
	// order.
	multicastIfs := func(k *ir.Operation) []*ir.Operation {
		var out []*ir.Operation
		for _, l := range multicastLoads(k) {
			out = append(out, l.ParentOp())
		}
		return out
	}
	// multicastMask gives every multicast load the mask m.
	multicastMask := func(m int64) func(k *ir.Operation) {
		return func(k *ir.Operation) {
			for _, l := range multicastLoads(k) {
				i, _, _ := l.OperandGroupRange("multicastMask")
				setConst(l, i, m, ir.I16)
			}
		}
	}
	t.Parallel()
	g2 := clusterCase{kind: "gemm", n: 2, c: 1, cs: 2, trip: 4}
	g4 := clusterCase{kind: "gemm", n: 3, c: 1, cs: 4, trip: 4, one: true}
	catches(t, []mutation[clusterCase]{
		{"empty count not multiplied by the cluster size", []clusterCase{g2, g4}, "", divideEmptyCounts, "before every reader released it|before their previous fill|returned after phase|more arrivals than the mbarrier's count|deadlock"},
		{"release to the own block only (cs arrivals there)", []clusterCase{g2, g4}, "", func(k *ir.Operation) {
			for _, mp := range find(k, "nvvm.mapa", nil) {
				mp.SetOperand(1, ownRank(mp))
			}
		}, "before every reader released it|before their previous fill|more arrivals than the mbarrier's count"},
		{"release to the own block only (one arrival, count C)", []clusterCase{g2, g4}, "", func(k *ir.Operation) {
			divideEmptyCounts(k)
			mp := find(k, "nvvm.mapa", nil)[0]
			mp.SetOperand(1, ownRank(mp))
			eraseAll(find(k, "nvvm.mbarrier.arrive", nil)[1:])
		}, "before every reader released it|before their previous fill"},
		// (CTA scope is enough for wgmma readers; thread readers need cluster scope.)
		{"remote release at CTA scope with thread readers", []clusterCase{{kind: "gemm", n: 2, c: 1, cs: 2, trip: 4, mixed: true}, {kind: "ew", n: 2, c: 1, cs: 2, trip: 4}}, "", func(k *ir.Operation) {
			for _, a := range find(k, "nvvm.mbarrier.arrive", nil) {
				a.SetAttr("scope", nvvm.MemScope.Attr("cta"))
			}
		}, "the release needs cluster scope"},
		{"no cluster sync after the barrier init (a block barrier)", []clusterCase{g2, g4}, "", func(k *ir.Operation) {
			arr := find(k, "nvvm.cluster.arrive", nil)[0]
			b := ir.NewBuilder(arr.Loc)
			b.SetInsertionPoint(arr)
			b.CreateOp("gpu.barrier", nil, nil)
			arr.Erase()
			find(k, "nvvm.cluster.wait", nil)[0].Erase()
		}, "before that block initialised it|no mbarrier initialised at shared offset"},
		{"no cluster sync before exit", []clusterCase{g2, g4}, "", func(k *ir.Operation) {
			find(k, "nvvm.cluster.arrive", nil)[1].Erase()
			find(k, "nvvm.cluster.wait", nil)[1].Erase()
		}, "which has exited"},
		{"multicast to rank 0 only", []clusterCase{g2, g4}, "", multicastMask(1), "got loads|deadlock"},
		{"multicast mask beyond the cluster", []clusterCase{g2}, "", multicastMask(7), "multicast mask 0x7"},
		{"box 1 loaded by every block", []clusterCase{g2, g4}, "", func(k *ir.Operation) {
			setConst(multicastIfs(k)[1], 0, 1, ir.I1)
		}, "got loads|before their previous fill|race: a TMA load into shared memory another copy in flight is using|drive the mbarrier's transaction count below zero"},
		{"box 0 issued by the last rank (once)", []clusterCase{g2, g4}, "", func(k *ir.Operation) {
			f := multicastIfs(k)[0]
			cmp := f.Operand(0).DefiningOp()
			b := ir.NewBuilder(f.Loc)
			b.SetInsertionPoint(f)
			cs := k.Attr("known_cluster_size").(*ir.DenseArrayAttr).Ints[0]
			last := b.CreateOp("arith.constant", nil, []ir.Type{ir.Index}, ir.NamedAttr{Name: "value", Value: ir.IntAttr(int64(cs-1), ir.Index)}).Result(0)
			ncmp := b.CreateOp("arith.cmpi", []ir.Value{cmp.Operand(0), last}, []ir.Type{ir.I1}, ir.NamedAttr{Name: "predicate", Value: cmp.Attr("predicate")}).Result(0)
			f.SetOperand(0, ncmp)
		}, "got loads"},
	}, func(c clusterCase, _ string, mutate func(k *ir.Operation)) error {
		return runCluster(c, mutate, 1, 2, 3)
	})
}
