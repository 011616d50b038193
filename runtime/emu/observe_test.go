package emu_test

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"sync"
	"testing"

	_ "github.com/tmac-dev/tmac/dialects/all"
	"github.com/tmac-dev/tmac/driver"
	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/passes"
	"github.com/tmac-dev/tmac/runtime/buffer"
	"github.com/tmac-dev/tmac/runtime/emu"
	"github.com/tmac-dev/tmac/runtime/plan"
)

// emulate compiles an example with the default pipeline and runs it on
// the emulator with seed, behind the host plan; observe (nil: none) sees
// the events. It returns the buffers after the run.
func emulate(t *testing.T, path string, seed int64, observe func(*emu.Event)) []*buffer.Buffer {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	mod, err := ir.Parse(path, string(src), ir.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	steps, err := passes.ParsePipeline(driver.DefaultPipeline)
	if err != nil {
		t.Fatal(err)
	}
	if err := passes.RunPipeline(mod, steps, nil, nil); err != nil {
		t.Fatal(err)
	}
	entry, err := plan.SelectEntry(mod, "")
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Build(mod, entry)
	if err != nil {
		t.Fatal(err)
	}
	dev := emu.NewDevice(mod, seed)
	dev.Observe = observe
	rng := rand.New(rand.NewSource(1))
	var bufs []*buffer.Buffer
	var args []plan.Value
	var mems []*plan.Mem
	for _, ty := range p.Args {
		mt := ty.(*ir.MemRefType)
		b, err := buffer.New(mt.Elem, mt.Shape())
		if err != nil {
			t.Fatal(err)
		}
		b.FillRandom(rng, buffer.Ints)
		m, err := plan.Upload(dev, b)
		if err != nil {
			t.Fatal(err)
		}
		bufs, args, mems = append(bufs, b), append(args, m), append(mems, m)
	}
	if err := p.Run(dev, args, nil); err != nil {
		t.Fatal(err)
	}
	for i, m := range mems {
		if err := dev.CopyToHost(bufs[i].Bytes, m.Dev); err != nil {
			t.Fatal(err)
		}
	}
	return bufs
}

// trace collects events (the emulator calls the observer from the
// goroutines of several clusters at once).
type trace struct {
	mu     sync.Mutex
	events []emu.Event
}

func (tr *trace) observe(e *emu.Event) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	c := *e
	c.Mem = append([]emu.Span(nil), e.Mem...)
	c.Coords = append([]int64(nil), e.Coords...)
	tr.events = append(tr.events, c)
}

// ofCluster returns the events of one cluster, in order.
func (tr *trace) ofCluster(kernel string, cluster int) []emu.Event {
	var out []emu.Event
	for _, e := range tr.events {
		if e.Kernel == kernel && e.Cluster == cluster {
			out = append(out, e)
		}
	}
	return out
}

// TestObserveTMAPipeline follows the tutorial's pipelined copy (4 blocks
// of 32 threads, 8 tiles each through a 4-slot ring): every load lands
// once and completes the phase its barrier's waiter sees, with expect_tx
// announcing its bytes; every store is committed and waited for; the
// block barriers gather every thread.
func TestObserveTMAPipeline(t *testing.T) {
	var tr trace
	emulate(t, "../../examples/tutorial/copy_pipelined.tma", 3, tr.observe)
	const blocks, tiles, box = 4, 8, 32 * 256 * 4
	kernel := tr.events[0].Kernel
	for cl := 0; cl < blocks; cl++ {
		evs := tr.ofCluster(kernel, cl)
		if len(evs) == 0 {
			t.Fatalf("no events from block %d", cl)
		}
		type key struct {
			bar   uint64
			phase int64
		}
		var loads, stores, commits int
		landed := map[key]int64{}    // bytes landed per barrier phase
		announced := map[key]int64{} // expect_tx per barrier phase
		completed := map[key]bool{}
		seen := map[key]bool{}
		coords := map[string]bool{}
		retired := map[int]int{} // thread -> bulk groups retired
		barrierArrivals := map[[2]int64]int{}
		barrierPasses := map[[2]int64]int{}
		for _, e := range evs {
			if e.Block != [3]int64{int64(cl), 0, 0} || e.Rank != 0 || e.Cluster != cl {
				t.Fatalf("event %v of cluster %d names block %v rank %d cluster %d", e.Kind, cl, e.Block, e.Rank, e.Cluster)
			}
			switch e.Kind {
			case emu.TMALoad:
				loads++
				if e.Thread != 0 || len(e.Mem) != 1 || e.Mem[0].Hi-e.Mem[0].Lo != box || e.Map != 0 {
					t.Errorf("load %+v: want thread 0, %d bytes, tensor map 0", e, box)
				}
				if e.Coords[1] != int64(32*cl) {
					t.Errorf("block %d loads row %d", cl, e.Coords[1])
				}
				coords[fmt.Sprint(e.Coords)] = true
			case emu.TMALoadDone:
				landed[key{e.Barrier, e.Phase}] += int64(e.Mem[0].Hi - e.Mem[0].Lo)
			case emu.MBarrierArrive:
				announced[key{e.Barrier, e.Phase}] += e.Tx
			case emu.MBarrierPhase:
				k := key{e.Barrier, e.Phase}
				if landed[k] != announced[k] || landed[k] != box {
					t.Errorf("phase %d of the barrier at %d completed with %d bytes landed, %d announced, want %d", e.Phase, e.Barrier, landed[k], announced[k], box)
				}
				completed[k] = true
			case emu.MBarrierWait:
				k := key{e.Barrier, e.Phase}
				if !completed[k] || e.Parity != e.Phase&1 {
					t.Errorf("a wait with parity %d saw phase %d of the barrier at %d, completed: %v", e.Parity, e.Phase, e.Barrier, completed[k])
				}
				seen[k] = true
			case emu.TMAStore:
				stores++
				if e.Map != 1 || e.Thread != 0 {
					t.Errorf("store %+v: want thread 0, tensor map 1", e)
				}
			case emu.BulkCommit:
				if e.Group != commits {
					t.Errorf("commit of group %d, want %d", e.Group, commits)
				}
				commits++
			case emu.BulkWait:
				retired[e.Thread] = max(retired[e.Thread], e.Group-e.Keep)
			case emu.Barrier:
				barrierArrivals[[2]int64{e.ID, int64(e.Gen)}]++
				if e.ID != 0 || e.Count != -1 {
					t.Errorf("barrier %d of %d threads, want the block barrier (0 of every thread)", e.ID, e.Count)
				}
			case emu.BarrierPass:
				barrierPasses[[2]int64{e.ID, int64(e.Gen)}]++
			}
		}
		if loads != tiles || stores != tiles || commits != tiles || len(coords) != tiles {
			t.Errorf("block %d: %d loads (%d distinct), %d stores, %d commits; want %d each", cl, loads, len(coords), stores, commits, tiles)
		}
		if len(seen) != tiles {
			t.Errorf("block %d: waits saw %d load phases, want %d", cl, len(seen), tiles)
		}
		if retired[0] != tiles {
			t.Errorf("block %d: thread 0 retired %d bulk groups, want %d", cl, retired[0], tiles)
		}
		if len(barrierArrivals) == 0 {
			t.Errorf("block %d: no block barrier", cl)
		}
		for g, n := range barrierArrivals {
			if n != 32 || barrierPasses[g] != 32 {
				t.Errorf("block %d: barrier %d generation %d: %d arrivals, %d passes, want 32", cl, g[0], g[1], n, barrierPasses[g])
			}
		}
	}
}

// TestObserveWGMMA: the wgmma example's mma is one event for the
// warpgroup, reading both operands' shared memory, and every thread
// commits and retires its group.
func TestObserveWGMMA(t *testing.T) {
	var tr trace
	emulate(t, "../../examples/wgmma_f16.tma", 1, tr.observe)
	var mmas []emu.Event
	loaded := map[emu.Span]bool{}
	commits, retired := map[int]int{}, map[int]int{}
	for _, e := range tr.events {
		switch e.Kind {
		case emu.TMALoad:
			loaded[e.Mem[0]] = true
		case emu.WGMMA:
			mmas = append(mmas, e)
		case emu.WGMMACommit:
			commits[e.Thread] = e.Group + 1
		case emu.WGMMAWait:
			retired[e.Thread] = e.Group
		}
	}
	if len(mmas) == 0 {
		t.Fatal("no wgmma event")
	}
	for _, m := range mmas {
		if m.Warpgroup != 0 || len(m.Mem) != 2 {
			t.Fatalf("wgmma %+v: want warpgroup 0 reading two ranges", m)
		}
		for _, s := range m.Mem {
			inside := false
			for l := range loaded {
				inside = inside || (s.Lo >= l.Lo && s.Hi <= l.Hi)
			}
			if !inside {
				t.Errorf("the wgmma reads [%d, %d), outside every loaded tile %v", s.Lo, s.Hi, loaded)
			}
		}
	}
	if len(commits) != 128 {
		t.Fatalf("%d threads committed wgmma groups, want 128", len(commits))
	}
	for th, n := range commits {
		if retired[th] != n {
			t.Errorf("thread %d committed %d groups and retired %d", th, n, retired[th])
		}
	}
}

// TestObserveChangesNothing: the same seed gives the same events, and the
// same results with or without an observer.
func TestObserveChangesNothing(t *testing.T) {
	const path = "../../examples/tutorial/copy_pipelined.tma"
	var a, b trace
	ra := emulate(t, path, 5, a.observe)
	emulate(t, path, 5, b.observe)
	rn := emulate(t, path, 5, nil)
	kernel := a.events[0].Kernel
	for cl := 0; cl < 4; cl++ {
		ea, eb := a.ofCluster(kernel, cl), b.ofCluster(kernel, cl)
		if len(ea) != len(eb) {
			t.Fatalf("block %d: %d and %d events with the same seed", cl, len(ea), len(eb))
		}
		for i := range ea {
			x, y := ea[i], eb[i]
			if x.Kind != y.Kind || x.Thread != y.Thread || x.Op.Loc.String() != y.Op.Loc.String() || x.Phase != y.Phase || fmt.Sprint(x.Mem) != fmt.Sprint(y.Mem) {
				t.Fatalf("block %d event %d: %v by thread %d at %s, then %v by thread %d at %s", cl, i, x.Kind, x.Thread, x.Op.Loc, y.Kind, y.Thread, y.Op.Loc)
			}
		}
	}
	for i := range ra {
		if !bytes.Equal(ra[i].Bytes, rn[i].Bytes) {
			t.Errorf("argument %d differs with and without an observer", i)
		}
	}
}
