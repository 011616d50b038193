package pipelining_test

import (
	"testing"

	"github.com/tmac-dev/tmac/ir"
)

// The ping-pong schedule of warp-specialize (`tmac.warp_specialize =
// "pingpong"`) on the emulator: a persistent kernel written for one
// warpgroup becomes a producer and two consumer warpgroups that take the
// block's tiles in turn. Consumer warpgroup w waits for exactly the ring
// positions of its tiles (w, w+2, ...), each seeing the phase of its
// position (a try_wait.parity tells phases apart only modulo 2, so the
// pass orders the two consumers' K loops: TestWarpSpecializePingpongOrder
// shows what happens without).

// pingpongCases is the sweep: both reader kinds, N 1..5, T 0..3 and 5
// (T = 0 with a dynamic trip count), each with one of the four tile loop
// forms in turn (constant from 0 step 1 with 1..4 tiles: an odd count
// leaves warpgroup 1 one tile short, one tile leaves it none; block id to
// tiles step grid, the blocks taking uneven tile counts or none; dynamic
// bounds with lb != 0 and step 3; constant from 1 step 2), one of the K
// loop forms, and barriers in the epilogue, the K loop (ew) and after the
// tile loop in turn.
func pingpongCases() []tileCase {
	var cs []tileCase
	for ki, kind := range []string{"gemm", "ew"} {
		for n := int64(1); n <= 5; n++ {
			for _, trip := range []int64{0, 1, 2, 3, 5} {
				inner := int((n + trip) % 3)
				if trip == 0 {
					inner = 1
				}
				odd := (n+trip)%2 == 1
				c := tileCase{kind: kind, pingpong: true, n: n, c: 1, trip: trip, inner: inner, accIn: kind == "gemm" && n%2 == 0}
				switch (n + 2*trip + int64(ki)) % 4 {
				case 0:
					c.outer, c.tiles, c.ebar, c.kbar, c.after = 0, 1+(n+2*trip)%4, true, odd, !odd
				case 1:
					c.outer, c.tiles, c.grid, c.ebar, c.kbar = 1, []int64{5, 3}[(n+trip)%2], []int64{2, 4}[(n+trip)%2], odd, !odd
				case 2:
					c.outer, c.tl, c.tu, c.ts, c.ebar, c.after, c.kbar = 2, 2, 9+n%3, 3, true, odd, true
				case 3:
					c.outer, c.tiles, c.ebar, c.after = 3, 2+trip%2, !odd, true
				}
				c.kbar = c.kbar && kind == "ew"
				cs = append(cs, c)
			}
		}
	}
	return cs
}

func TestWarpSpecializePingpongEmulated(t *testing.T) {
	t.Parallel()
	emulateAll(t, pingpongCases())
}

// tileBarriers are the named barriers of a warpgroup's own tile (over its
// 128 threads), not the order barriers between the two warpgroups.
func tileBarriers(f *ir.Operation) []*ir.Operation {
	var out []*ir.Operation
	for _, nb := range find(f, "nvvm.barrier", nil) {
		if d := nb.Operand(1).DefiningOp(); d != nil && d.Name() == "arith.constant" {
			if v, ok := d.Attr("value").(*ir.IntegerAttr); ok && v.Int() == 128 {
				out = append(out, nb)
			}
		}
	}
	return out
}

// TestWarpSpecializePingpongCatches breaks the ping-pong parts of the pass
// output and checks that some run of every case it is applied to reports
// each.
func TestWarpSpecializePingpongCatches(t *testing.T) {
	t.Parallel()
	// The scf.for ops in walk order: the producer's tile and K loops, then
	// the consumers'.
	consumerTiles := func(k *ir.Operation) *ir.Operation { return find(k, "scf.for", nil)[2] }
	// The consumers' releases: in the K loop, then after it (wgmma, N > 1).
	arrives := func(k *ir.Operation) (inLoop, endOfTile *ir.Operation) {
		as := find(k, "nvgpu.mbarrier.arrive", nil)
		expect(len(as) == 2, "%d arrivals on empty barriers, want 2", len(as))
		return as[0], as[1]
	}
	// Rings of 2 and 4 slots: the ring arithmetic stays on index (other
	// sizes divide on i32; TestWarpSpecializeNarrowRingCatches breaks that).
	gemm := tileCase{kind: "gemm", pingpong: true, n: 4, c: 1, trip: 5, outer: 0, tiles: 5, ebar: true, after: true}
	gemmGrid := tileCase{kind: "gemm", pingpong: true, n: 2, c: 1, trip: 3, inner: 2, outer: 1, tiles: 7, grid: 2, ebar: true}
	gemmDyn := tileCase{kind: "gemm", pingpong: true, n: 4, c: 1, trip: 2, inner: 1, outer: 2, tl: 1, tu: 14, ts: 3, ebar: true}
	ew := tileCase{kind: "ew", pingpong: true, n: 4, c: 1, trip: 5, outer: 0, tiles: 4, ebar: true, kbar: true}
	ewDyn := tileCase{kind: "ew", pingpong: true, n: 2, c: 1, trip: 5, inner: 1, outer: 2, tl: 2, tu: 15, ts: 3, kbar: true}
	gemmMixed := tileCase{kind: "gemm", pingpong: true, n: 4, c: 1, trip: 5, outer: 0, tiles: 4, ebar: true, mixed: true}
	gemmMixedGrid := tileCase{kind: "gemm", pingpong: true, n: 2, c: 1, trip: 3, inner: 1, outer: 1, tiles: 7, grid: 3, mixed: true}
	catches(t, []mutation[tileCase]{
		{"release at j > 0 by the global ring position, not the tile's K step", []tileCase{gemm, gemmGrid, gemmDyn}, "", func(k *ir.Operation) {
			a, _ := arrives(k)
			cond := a.ParentOp().Operand(0).DefiningOp() // leader && j > 0
			ugt := cond.Operand(1).DefiningOp()
			w := find(k, "nvgpu.mbarrier.try_wait.parity", nil)[1]
			g := w.OperandNamed("mbarId").DefiningOp().Operand(0) // slot = g mod N
			expect(ugt.Name() == "arith.cmpi" && g.DefiningOp() != nil && g.DefiningOp().Name() == "arith.addi", "release condition %s, position %v", ugt.Name(), g.DefiningOp())
			ugt.SetOperand(0, g)
		}, "releases slot|before every reader released it|more arrivals than the mbarrier's count"},
		{"no end-of-tile release", []tileCase{gemm, gemmGrid, gemmDyn}, "", func(k *ir.Operation) {
			_, e := arrives(k)
			e.ParentOp().Erase()
		}, "deadlock"},
		{"end-of-tile release before the K loop's wgmma groups complete", []tileCase{gemm, gemmGrid, gemmDyn}, "", func(k *ir.Operation) {
			_, e := arrives(k)
			w := find(k, "nvvm.wgmma.wait.group.sync.aligned", nil)[0]
			w.Remove()
			e.ParentOp().Block().InsertBefore(w, e.ParentOp().Next())
		}, "before every reader released it"},
		{"empty barrier count 2 (256 with thread readers)", []tileCase{gemm, gemmGrid, gemmDyn, ew, ewDyn}, "", func(k *ir.Operation) {
			empty := find(k, "nvgpu.mbarrier.create", nil)[1].Result(0)
			for _, in := range find(k, "nvgpu.mbarrier.init", nil) {
				if in.OperandNamed("barriers") == empty {
					n, _ := ir.AttrInt(in.OperandNamed("count").DefiningOp().Attr("value"))
					setConst(in, 1, 2*n, ir.Index)
				}
			}
		}, "deadlock"},
		{"both warpgroups take the same tiles", []tileCase{gemm, gemmGrid, gemmDyn, ew, ewDyn}, "", func(k *ir.Operation) {
			// the producer's tile loop has the original bounds
			f := consumerTiles(k)
			f.SetOperand(0, find(k, "scf.for", nil)[0].Operand(0))
		}, "waits for ring position|returned after phase|deadlock|before their fill|before every reader released it"},
		{"consumers' tile loop not strided twice as far", []tileCase{gemm, gemmGrid, ewDyn}, "", func(k *ir.Operation) {
			f := consumerTiles(k)
			f.SetOperand(2, find(k, "scf.for", nil)[0].Operand(2))
		}, "waits for ring position|returned after phase|deadlock|before their fill|before every reader released it|waits for a"},
		{"named barrier over both warpgroups inside the tile", []tileCase{gemm, gemmGrid, ew, ewDyn}, "", func(k *ir.Operation) {
			f := consumerTiles(k)
			for _, nb := range tileBarriers(f) {
				setConst(nb, 0, 1, ir.I32)
				setConst(nb, 1, 256, ir.I32)
			}
		}, "deadlock|named barrier 1 is used with"},
		// Where the threads read the tiles too, the leader releases the
		// tile's last slot after its warpgroup's barrier: a barrier two
		// warpgroups share lets it release before its own threads are done.
		{"named barrier 1 for both warpgroups (over 128 threads each)", []tileCase{gemmMixed, gemmMixedGrid}, "", func(k *ir.Operation) {
			f := consumerTiles(k)
			for _, nb := range tileBarriers(f) {
				setConst(nb, 0, 1, ir.I32)
			}
		}, "named barrier 1 gathers warpgroups"},
	}, func(c tileCase, _ string, mutate func(k *ir.Operation)) error {
		return runTiles(c, mutate, 1, 2, 3)
	})
}

// TestWarpSpecializePingpongOrder: the two consumer warpgroups wait on the
// same full barriers, each only for its own ring positions. A
// try_wait.parity tells phases apart only modulo 2, so a consumer waiting
// for position g on full[g mod N] (parity of phase g/N) would pass as soon
// as the barrier's last completed phase is g/N - 2, when position g-N — the
// other warpgroup's whenever g is among the first N positions of its tile —
// has not completed yet; in gemm_pingpong.tma (T = 64, N = 4) warpgroup 1
// waited for position 64 on full[0] and returned as soon as position 0 had
// landed (on the H200 the kernel faulted). The pass orders the consumers'
// K loops (named barriers 4 and 5): every run must pass, and with the
// order barriers removed some run must see a wait return early.
func TestWarpSpecializePingpongOrder(t *testing.T) {
	t.Parallel()
	cases := []tileCase{
		{kind: "gemm", pingpong: true, n: 4, c: 1, trip: 8, outer: 1, tiles: 8, grid: 2, ebar: true},
		{kind: "gemm", pingpong: true, n: 2, c: 1, trip: 2, outer: 0, tiles: 4, ebar: true},
		{kind: "gemm", pingpong: true, n: 3, c: 1, trip: 1, outer: 0, tiles: 6},
		{kind: "ew", pingpong: true, n: 2, c: 1, trip: 2, inner: 1, outer: 2, tl: 1, tu: 12, ts: 2, kbar: true},
	}
	unordered := func(k *ir.Operation) {
		for _, name := range []string{"nvvm.barrier", "nvvm.barrier.arrive"} {
			for _, op := range find(k, name, nil) {
				if d := op.Operand(1).DefiningOp(); d != nil && name == "nvvm.barrier" {
					if v, ok := d.Attr("value").(*ir.IntegerAttr); !ok || v.Int() != 256 {
						continue
					}
				}
				op.Erase()
			}
		}
	}
	caught := 0
	for _, c := range cases {
		if err := runTiles(c, nil, 1, 2, 3); err != nil {
			t.Fatal(err)
		}
		if err := runTiles(c, unordered, 1, 2, 3, 4, 5); err != nil {
			t.Log(firstLine(err))
			if !reports(err, "returned after phase|before their fill|deadlock") {
				t.Fatalf("%s without order barriers: unexpected failure %v", c, err)
			}
			caught++
		}
	}
	if caught == 0 {
		t.Fatal("no run caught the consumers' early returns with the order barriers removed")
	}
}

// TestWarpSpecializePingpongMixedReaders: regression test (fixed: the
// release after the K loop follows the warpgroup's named barrier when the
// threads read the tiles): tiles read by wgmma and by the threads of the
// warpgroup (empty count 1, the leader releases): the tile's last slot was
// released after the K loop with no barrier, while other threads of the
// warpgroup might still read it.
func TestWarpSpecializePingpongMixedReaders(t *testing.T) {
	t.Parallel()
	for _, c := range []tileCase{
		{kind: "gemm", pingpong: true, n: 3, c: 1, trip: 4, outer: 0, tiles: 4, ebar: true, mixed: true},
		{kind: "gemm", pingpong: true, n: 2, c: 1, trip: 3, inner: 1, outer: 1, tiles: 7, grid: 3, mixed: true},
		{kind: "gemm", pingpong: true, n: 4, c: 1, trip: 2, inner: 2, outer: 3, tiles: 3, after: true, mixed: true},
	} {
		if err := runTiles(c, nil, 1, 2, 3); err != nil {
			t.Fatal(err)
		}
	}
}
