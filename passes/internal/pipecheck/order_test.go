package pipecheck

import (
	"strings"
	"testing"

	_ "github.com/tmac-dev/tmac/dialects/all"
	"github.com/tmac-dev/tmac/dialects/nvvm"
	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/runtime/emu"
)

// A slot of 64 bytes at offset 0, filled by thread 0's TMA loads on the
// full barrier at 512 and released by the reader, thread 1, on the empty
// barrier at 520; both barriers initialised by thread 0 before a block
// barrier.
const (
	full, empty = 512, 520
	slotHi      = 64
)

// prologue initialises the barriers and fills the slot once (phase 0).
func prologue() []*emu.Event {
	return []*emu.Event{
		{Kind: emu.MBarrierInit, Thread: 0, Barrier: full, Count: 1},
		{Kind: emu.MBarrierInit, Thread: 0, Barrier: empty, Count: 1},
		{Kind: emu.Barrier, Thread: 0, Count: -1},
		{Kind: emu.Barrier, Thread: 1, Count: -1},
		{Kind: emu.BarrierPass, Thread: 0},
		{Kind: emu.BarrierPass, Thread: 1},
		{Kind: emu.MBarrierArrive, Thread: 0, Barrier: full, Count: 1, Tx: slotHi},
		{Kind: emu.TMALoad, Thread: 0, Barrier: full, Mem: mem(0, slotHi), Coords: []int64{0}},
		{Kind: emu.TMALoadDone, Thread: 0, Barrier: full, Mem: mem(0, slotHi), Coords: []int64{0}},
		{Kind: emu.MBarrierPhase, Thread: -1, Barrier: full},
	}
}

// mem is the shared range [lo, hi).
func mem(lo, hi uint64) []emu.Span { return []emu.Span{{Lo: lo, Hi: hi}} }

// check feeds the events (of one block) to a checker and returns what it
// reports.
func check(events ...[]*emu.Event) string {
	c := &Checker{name: "test", runs: map[runKey]*run{}}
	for _, es := range events {
		for _, e := range es {
			e.ThreadRank = e.Rank
			if e.Kind == emu.MBarrierArrive && e.Op == nil {
				e.Op = arriveOp("cta")
			}
			c.Observe(e)
		}
	}
	if err := c.finish(); err != nil {
		return err.Error()
	}
	return ""
}

// arriveOp is an nvvm.mbarrier.arrive releasing at scope.
func arriveOp(scope string) *ir.Operation {
	return ir.NewBuilder(ir.UnknownLoc{}).CreateOp("nvvm.mbarrier.arrive", nil, nil, ir.NamedAttr{Name: "scope", Value: nvvm.MemScope.Attr(scope)})
}

// readAndRelease: the reader waits for the fill, reads, and releases the
// slot.
func readAndRelease() []*emu.Event {
	return []*emu.Event{
		{Kind: emu.MBarrierWait, Thread: 1, Barrier: full, Parity: 0, Phase: 0},
		{Kind: emu.SharedRead, Thread: 1, Mem: mem(8, 12)},
		{Kind: emu.MBarrierArrive, Thread: 1, Barrier: empty, Count: 1},
		{Kind: emu.MBarrierPhase, Thread: 1, Barrier: empty},
	}
}

// refill: the producer refills the slot.
func refill() *emu.Event {
	return &emu.Event{Kind: emu.TMALoad, Thread: 0, Barrier: full, Mem: mem(0, slotHi), Coords: []int64{1}}
}

func TestOrderedPipeline(t *testing.T) {
	waitAndRefill := []*emu.Event{{Kind: emu.MBarrierWait, Thread: 0, Barrier: empty, Parity: 0, Phase: 0}, refill()}
	if got := check(prologue(), readAndRelease(), waitAndRefill); got != "" {
		t.Fatalf("an ordered pipeline is reported: %s", got)
	}
}

func TestReadBeforeFill(t *testing.T) {
	noWait := []*emu.Event{{Kind: emu.SharedRead, Thread: 1, Mem: mem(8, 12)}}
	if got := check(prologue(), noWait); !strings.Contains(got, "reads shared bytes [8, 12) before their fill") {
		t.Fatalf("a read with no wait for its fill: got %q", got)
	}
}

func TestRefillBeforeRelease(t *testing.T) {
	if got := check(prologue(), readAndRelease(), []*emu.Event{refill()}); !strings.Contains(got, "before every reader released it: thread 1's read") {
		t.Fatalf("a refill with no wait for the release: got %q", got)
	}
}

// TestReleaseScope: a release on another block's mbarrier at CTA scope
// orders the events (a wgmma's retirement) but not the releasing thread's
// ordinary loads.
func TestReleaseScope(t *testing.T) {
	for _, tc := range []struct {
		scope string
		want  string
	}{
		{"cluster", ""},
		{"cta", "the release needs cluster scope"},
	} {
		// Block 1's thread 1 reads a slot of its block that block 0's
		// producer fills (a multicast), and releases it to block 0.
		events := []*emu.Event{
			{Kind: emu.MBarrierInit, Rank: 1, Thread: 0, Barrier: full, Count: 1},
			{Kind: emu.MBarrierInit, Thread: 0, Barrier: empty, Count: 1},
			{Kind: emu.ClusterArrive, Thread: 0},
			{Kind: emu.ClusterArrive, Rank: 1, Thread: 0},
			{Kind: emu.ClusterArrive, Rank: 1, Thread: 1},
			{Kind: emu.ClusterWait, Thread: 0},
			{Kind: emu.ClusterWait, Rank: 1, Thread: 0},
			{Kind: emu.ClusterWait, Rank: 1, Thread: 1},
			{Kind: emu.MBarrierArrive, Rank: 1, Thread: 0, Barrier: full, Count: 1, Tx: slotHi},
			{Kind: emu.TMALoad, Rank: 1, Thread: 0, Barrier: full, Mem: mem(0, slotHi)},
			{Kind: emu.TMALoadDone, Rank: 1, Thread: 0, Barrier: full, Mem: mem(0, slotHi)},
			{Kind: emu.MBarrierPhase, Rank: 1, Thread: -1, Barrier: full},
			{Kind: emu.MBarrierWait, Rank: 1, Thread: 1, Barrier: full, Phase: 0},
			{Kind: emu.SharedRead, Rank: 1, Thread: 1, Mem: mem(0, 4)},
			{Kind: emu.MBarrierArrive, Rank: 0, Thread: 1, Barrier: empty, Count: 1, Op: arriveOp(tc.scope)},
			{Kind: emu.MBarrierPhase, Thread: 1, Barrier: empty},
			{Kind: emu.MBarrierWait, Thread: 0, Barrier: empty, Phase: 0},
			{Kind: emu.TMALoad, Rank: 1, Thread: 0, Barrier: full, Mem: mem(0, slotHi)},
		}
		c := &Checker{name: "test", runs: map[runKey]*run{}}
		for _, e := range events {
			// The thread acting in block 1 but arriving on block 0's barrier.
			e.ThreadRank = e.Rank
			if e.Kind == emu.MBarrierArrive && e.Barrier == empty {
				e.ThreadRank = 1
			}
			if e.Kind == emu.TMALoad || e.Kind == emu.TMALoadDone {
				e.ThreadRank = 0
			}
			c.Observe(e)
		}
		err := c.finish()
		got := ""
		if err != nil {
			got = err.Error()
		}
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("release at %s scope: got %q, want %q", tc.scope, got, tc.want)
		}
	}
}

func TestBarrierDiscipline(t *testing.T) {
	sync := func(id int64, count int64, gen int, threads ...int) []*emu.Event {
		var es []*emu.Event
		for _, th := range threads {
			es = append(es, &emu.Event{Kind: emu.Barrier, Thread: th, ID: id, Count: count, Gen: gen})
		}
		for _, th := range threads {
			es = append(es, &emu.Event{Kind: emu.BarrierPass, Thread: th, ID: id, Gen: gen})
		}
		return es
	}
	if got := check(sync(1, 128, 0, 128, 200), sync(1, 128, 1, 130, 255)); got != "" {
		t.Errorf("one warpgroup at barrier 1 throughout: got %q", got)
	}
	if got := check(sync(1, 128, 0, 128, 200), sync(1, 128, 1, 256, 300)); !strings.Contains(got, "named barrier 1 gathers warpgroups {1} in generation 0 and {2} in generation 1") {
		t.Errorf("two warpgroups taking turns at barrier 1: got %q", got)
	}
	if got := check(sync(0, -1, 0, 0, 1), sync(0, 256, 1, 0, 1)); !strings.Contains(got, "named barrier 0 is used with every thread (as the block barrier) and with 256 threads") {
		t.Errorf("barrier 0 with two counts: got %q", got)
	}
}
