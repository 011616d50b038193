package pipecheck

import (
	"fmt"
	"sort"

	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/passes/schedule"
	"github.com/tmac-dev/tmac/runtime/emu"
)

// Ring is what a test expects of the pipelined loop (the kernel's one
// loop in the schedule record). Ring position g (iteration g, or tile i's
// K step j at g = i*Trip + j in a persistent kernel) uses slot g mod N of
// every ring and phase g / N of stage (full) barrier g mod N.
type Ring struct {
	// Blocks are the blocks the test expects loads in.
	Blocks [][3]int64
	// Positions is the number of ring positions block runs.
	Positions func(block [3]int64) int64
	// Loads are the boxes ring position g of block lands.
	Loads func(block [3]int64, g int64) []Load
	// Waits are the ring positions thread (its linear index in the block
	// after the passes) waits for on the stage (full) barriers, in order.
	Waits func(block [3]int64, thread int) []int64
	// Trip is the pipelined loop's trip count, for the record's release
	// rule when the record's is dynamic (-1: unknown).
	Trip int64
}

// Load is one TMA box a ring position lands.
type Load struct {
	Tile, Box int // the tile (its index in the loop's record: the order the loop loads them) and the box within its slot
	Map       int // the tensor map, in the order the host function creates them
	Coords    []int64
	Issuer    int // in a cluster: the rank of the block that issues it (-1: the block itself)
}

// layout is where the record says the loop's rings and barriers live.
type layout struct {
	loop   *schedule.LoopSchedule
	tiles  []tileLayout
	groups []groupLayout
}

type tileLayout struct{ base, slot, box int64 }

type groupLayout struct {
	rec  *schedule.BarrierGroup
	base uint64
}

// newLayout reads the record of the program's one pipelined loop, with
// the placements smem-plan recorded for its rings and barrier memory.
func newLayout(sched *schedule.Schedule) (*layout, error) {
	var ks *schedule.KernelSchedule
	for _, k := range sched.Kernels {
		if len(k.Loops) > 0 {
			if ks != nil {
				return nil, fmt.Errorf("the record has several kernels with pipelined loops")
			}
			ks = k
		}
	}
	if ks == nil || len(ks.Loops) != 1 {
		return nil, fmt.Errorf("the record has no kernel with one pipelined loop")
	}
	placed := func(alloc *ir.Operation) (int64, bool) {
		off, ok := int64(0), false
		for _, p := range ks.SMem {
			if alloc != nil && p.Alloc == alloc {
				off, ok = p.Offset, true
			}
		}
		return off, ok
	}
	l := &layout{loop: ks.Loops[0]}
	for _, ts := range l.loop.Tiles {
		base, ok := placed(ts.Ring)
		if !ok {
			return nil, fmt.Errorf("the record has no placement for the ring of the tile at %s", ts.Loc)
		}
		box := ts.SlotBytes
		if ts.Box != nil {
			if b, err := ir.StaticSize(ts.Box); err == nil && b > 0 {
				box = b
			}
		}
		l.tiles = append(l.tiles, tileLayout{base: base, slot: ts.SlotBytes, box: box})
	}
	for _, g := range ks.Groups {
		if g.Loop != l.loop {
			continue
		}
		base, ok := placed(g.Alloc)
		if !ok {
			return nil, fmt.Errorf("the record has no placement for the %s barriers", g.Role)
		}
		l.groups = append(l.groups, groupLayout{rec: g, base: uint64(base)})
	}
	return l, nil
}

// barrier returns the group and index of the barrier at shared offset
// addr, or nil.
func (l *layout) barrier(addr uint64) (*schedule.BarrierGroup, int64) {
	for _, g := range l.groups {
		if addr >= g.base && addr < g.base+8*uint64(g.rec.Size) {
			return g.rec, int64(addr-g.base) / 8
		}
	}
	return nil, 0
}

type ringThread struct {
	waits      []int64 // expected
	fullWaits  int
	pos        int64 // the position of the last full wait (-1: none)
	emptyWaits map[int64]int64
}

type landing struct {
	block [3]int64
	g     int64
}

// ringCheck follows the loop's ring through the events.
type ringCheck struct {
	want    *Ring
	l       *layout
	threads map[[4]int64]*ringThread // block id, linear
	landed  map[landing][]string
	// Pipelined loops (not warp-specialised): the iteration in which each
	// position's loads were issued, to check the record's Issues.
	issuing  map[[4]int64]int64 // block id, shared offset -> iteration of the load in flight
	issuedIn map[landing]int64
	nthreads int
	// The loop whose body waits on the barriers (the pipelined loop after
	// the passes) and that wait.
	loop, wait *ir.Operation
}

func newRingCheck(want *Ring, l *layout, mod *ir.Operation) *ringCheck {
	rc := &ringCheck{want: want, l: l, threads: map[[4]int64]*ringThread{}, landed: map[landing][]string{},
		issuing: map[[4]int64]int64{}, issuedIn: map[landing]int64{}}
	for _, k := range ir.Nested(mod, "gpu.func") {
		if kb, ok := k.Attr("known_block_size").(*ir.DenseArrayAttr); ok {
			rc.nthreads = int(kb.Ints[0] * kb.Ints[1] * kb.Ints[2])
		}
		for _, w := range ir.Nested(k, "nvvm.mbarrier.try_wait.parity") {
			if l := w.ParentOfName("scf.for"); l != nil && rc.loop == nil {
				rc.loop, rc.wait = l, w
			}
		}
	}
	return rc
}

// iteration returns the iteration of the pipelined loop in which op runs,
// for a thread that has waited w times: -1 before the loop; in the loop,
// w if op comes before the body's wait, w-1 after it.
func (rc *ringCheck) iteration(op *ir.Operation, w int64) int64 {
	if rc.loop == nil || !rc.loop.IsAncestorOf(op) {
		return -1
	}
	body := rc.loop.Region(0).Entry()
	top := func(o *ir.Operation) *ir.Operation {
		for o.Block() != body {
			o = o.ParentOp()
		}
		return o
	}
	a, b := top(op), top(rc.wait)
	for o := a; o != nil; o = o.Next() {
		if o == b && a != b {
			return w
		}
	}
	return w - 1
}

func (rc *ringCheck) thread(block [3]int64, linear int) *ringThread {
	k := [4]int64{block[0], block[1], block[2], int64(linear)}
	t := rc.threads[k]
	if t == nil {
		t = &ringThread{waits: rc.want.Waits(block, linear), pos: -1, emptyWaits: map[int64]int64{}}
		rc.threads[k] = t
	}
	return t
}

// loadKey names a box for comparisons: tensor map, coordinates, shared
// offset, issuing rank.
func loadKey(m int, coords []int64, off int64, issuer int) string {
	return fmt.Sprintf("map %d %v at %d from rank %d", m, coords, off, issuer)
}

func (rc *ringCheck) event(r *run, e *emu.Event) {
	switch e.Kind {
	case emu.MBarrierWait, emu.MBarrierArrive, emu.TMALoad, emu.TMALoadDone:
	default:
		return
	}
	l := rc.l
	n := l.loop.Stages
	var tb [3]int64 // the acting thread's block
	if e.Thread >= 0 {
		tb = r.blocks[e.ThreadRank]
	}
	who := func() string { return fmt.Sprintf("thread %d of block %v", e.Thread, tb) }
	switch e.Kind {
	case emu.MBarrierWait:
		g, idx := l.barrier(e.Barrier)
		if g == nil {
			return
		}
		t := rc.thread(tb, e.Thread)
		var pos, phase int64
		switch g.Role {
		case "stage", "full":
			k := t.fullWaits
			t.fullWaits++
			if k >= len(t.waits) {
				r.errorf("%s waits for a %d-th ring position, the test expects %d (%s)", who(), k+1, len(t.waits), where(e.Op))
				return
			}
			pos = t.waits[k]
			t.pos = pos
			phase = pos / n
			if idx != pos%n {
				r.errorf("%s waits for ring position %d on %s barrier %d, not %d (%s)", who(), pos, g.Role, idx, pos%n, where(e.Op))
				return
			}
		case "empty":
			k := t.emptyWaits[idx]
			t.emptyWaits[idx]++
			pos, phase = k*n+idx, k-1 // the k-th wait for slot idx precedes position k*N + idx
		default:
			return
		}
		if e.Phase != phase {
			r.errorf("%s's wait for ring position %d on %s barrier %d returned after phase %d completed, not phase %d (%s)", who(), pos, g.Role, idx, e.Phase, phase, where(e.Op))
		}
		if len(g.Waits) == 0 || g.Waits[0].Ring == nil {
			r.errorf("the record has no parity rule for the %s barriers", g.Role)
		} else if want := g.Waits[0].Ring.At(pos); e.Parity != want {
			r.errorf("%s waits for ring position %d on the %s barriers with parity %d, the record's rule %+v gives %d (%s)", who(), pos, g.Role, e.Parity, *g.Waits[0].Ring, want, where(e.Op))
		}
	case emu.MBarrierArrive:
		g, idx := l.barrier(e.Barrier)
		if g == nil {
			return
		}
		switch g.Role {
		case "empty":
			t := rc.thread(tb, e.Thread)
			if t.pos < 0 {
				r.errorf("%s releases slot %d before waiting for any ring position (%s)", who(), idx, where(e.Op))
				return
			}
			rel := l.loop.WithTrip(rc.want.Trip).Releases(t.pos)
			for _, q := range rel {
				if q%n == idx {
					return
				}
			}
			r.errorf("%s in ring position %d releases slot %d; the record says it releases positions %v (%s)", who(), t.pos, idx, rel, where(e.Op))
		case "stage", "full":
			if e.Tx != g.TxBytes {
				r.errorf("%s announces %d bytes on %s barrier %d, the record says a stage brings %d (%s)", who(), e.Tx, g.Role, idx, g.TxBytes, where(e.Op))
			}
		}
	case emu.TMALoad:
		if e.Thread != 0 {
			r.errorf("%s issues a TMA load, not thread 0 (%s)", who(), where(e.Op))
		}
		if !l.loop.IssueOnRelease {
			j := rc.iteration(e.Op, int64(rc.thread(tb, e.Thread).fullWaits))
			rc.issuing[[4]int64{e.Block[0], e.Block[1], e.Block[2], int64(e.Mem[0].Lo)}] = j
		}
	case emu.TMALoadDone:
		g, idx := l.barrier(e.Barrier)
		if g == nil || (g.Role != "stage" && g.Role != "full") {
			r.errorf("a TMA load (%s) completes on the mbarrier at shared offset %d, not on a stage barrier of the loop", where(e.Op), e.Barrier)
			return
		}
		k := landing{e.Block, e.Phase*n + idx}
		rc.landed[k] = append(rc.landed[k], loadKey(e.Map, e.Coords, int64(e.Mem[0].Lo), e.ThreadRank))
		if j, ok := rc.issuing[[4]int64{e.Block[0], e.Block[1], e.Block[2], int64(e.Mem[0].Lo)}]; ok {
			if prev, seen := rc.issuedIn[k]; seen && prev != j {
				r.errorf("the loads of ring position %d were issued in iterations %d and %d", k.g, prev, j)
			}
			rc.issuedIn[k] = j
		}
	}
}

// finish checks what the whole run must have done.
func (rc *ringCheck) finish(c *Checker) {
	l := rc.l
	n := l.loop.Stages
	fail := func(format string, args ...any) { c.report(c.name + ": " + fmt.Sprintf(format, args...)) }
	for _, b := range rc.want.Blocks {
		total := rc.want.Positions(b)
		rank := -1
		for _, r := range c.runs {
			for q, id := range r.blocks {
				if id == b {
					rank = q
				}
			}
		}
		for g := int64(0); g < total; g++ {
			var want []string
			for _, ld := range rc.want.Loads(b, g) {
				tl := l.tiles[ld.Tile]
				issuer := ld.Issuer
				if issuer < 0 {
					issuer = rank
				}
				want = append(want, loadKey(ld.Map, ld.Coords, tl.base+(g%n)*tl.slot+int64(ld.Box)*tl.box, issuer))
			}
			got := rc.landed[landing{b, g}]
			sort.Strings(want)
			sort.Strings(got)
			if fmt.Sprint(got) != fmt.Sprint(want) {
				fail("block %v ring position %d got loads %v, want %v", b, g, got, want)
			}
		}
		for k := range rc.landed {
			if k.block == b && k.g >= total {
				fail("block %v lands loads as ring position %d of %d", b, k.g, total)
			}
		}
		for i := 0; i < rc.nthreads; i++ {
			t := rc.thread(b, i)
			if t.fullWaits != len(t.waits) {
				fail("thread %d of block %v waited for %d ring positions, not %d", i, b, t.fullWaits, len(t.waits))
			}
		}
		if !l.loop.IssueOnRelease {
			got := map[int64][]int64{}
			for k, j := range rc.issuedIn {
				if k.block == b {
					got[j] = append(got[j], k.g)
				}
			}
			for j := int64(-1); j < total; j++ {
				sort.Slice(got[j], func(x, y int) bool { return got[j][x] < got[j][y] })
				if want := l.loop.Issues(j, total); fmt.Sprint(got[j]) != fmt.Sprint(want) {
					fail("block %v iteration %d issued the loads of ring positions %v, the record says %v (prologue %d, ahead %d)", b, j, got[j], want, l.loop.Prologue, l.loop.Ahead)
				}
			}
		}
	}
}
