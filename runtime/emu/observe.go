package emu

import (
	"fmt"

	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/runtime/cuda"
)

// Observing a run: Device.Observe, when set, is called with every
// synchronisation and shared-memory event of the kernels it runs, in the
// order the emulator executes them. One thread (or the copy engine) of a
// cluster acts at a time, so the events of one cluster form a valid
// interleaving, and a checker can follow happens-before through them:
// arrivals release into an mbarrier phase and waits acquire it, named and
// cluster barriers join their threads, wgmma and bulk-group waits retire
// the asynchronous reads issued before them. Observe is called from the
// goroutine running the event's cluster: concurrently for different
// clusters (Event.Cluster tells them apart), never for one cluster. It
// must not keep the Event's slices after it returns.
//
// An access (a TMA copy's issue, an ordinary shared-memory load or store)
// is reported before the emulator checks it against the copies and wgmma
// in flight, so an observer sees the access a diagnostic stops the run at.
// Observing changes nothing in the run: the same seed gives the same
// interleaving and the same diagnostics with or without an observer.

// EventKind says what happened.
type EventKind uint8

const (
	// MBarrierInit: Thread initialised Barrier to expect Count arrivals
	// per phase.
	MBarrierInit EventKind = iota + 1
	// MBarrierArrive: Thread arrived Count times on Barrier during its
	// phase Phase, announcing Tx transaction bytes (arrive.expect_tx).
	// With Block other than the thread's, a remote arrival (nvvm.mapa).
	MBarrierArrive
	// MBarrierPhase: Barrier completed phase Phase, on Op: the arrival or
	// the TMA load whose bytes completed it (Thread -1 then).
	MBarrierPhase
	// MBarrierWait: Thread's wait on Barrier returned, having seen phase
	// Phase complete: a try_wait.parity for Parity, or a successful poll
	// (test.wait, try_wait) with a parity (Parity) or a state token
	// (Parity -1, Phase the token's phase).
	MBarrierWait
	// TMALoad: Thread issued a TMA load of the box of tensor map Map at
	// Coords into shared bytes Mem[0] of Block, completing on its Barrier
	// (one event per block of a multicast).
	TMALoad
	// TMALoadDone: the copy engine landed that load (Thread and Block as
	// at the issue) and completed its bytes on Barrier in phase Phase.
	TMALoadDone
	// TMAStore: Thread issued a TMA store of shared bytes Mem[0] to the
	// box of tensor map Map at Coords.
	TMAStore
	// TMAStoreDone: the copy engine finished that store.
	TMAStoreDone
	// BulkCommit: Thread committed its TMA stores issued since its last
	// commit as its bulk group Group (counted from 0 per thread).
	BulkCommit
	// BulkWait: Thread's cp.async.bulk.wait_group returned: every group of
	// it but the Keep most recent of the Group committed is complete.
	BulkWait
	// WGMMA: the 128 threads of warpgroup Warpgroup (threads 128w to
	// 128w+127) have issued an mma, which reads shared bytes Mem (A, then
	// B) until its commit group Group is retired.
	WGMMA
	// WGMMACommit: Thread committed its wgmma group Group (from 0).
	WGMMACommit
	// WGMMAWait: Thread's wgmma.wait_group (Keep) returned: its groups
	// below Group are retired.
	WGMMAWait
	// Barrier: Thread arrived at named barrier ID (0: the block barrier)
	// of Count threads in its generation Gen; Count is -1 for every live
	// thread, and Arrive marks an arrival that does not wait (bar.arrive).
	Barrier
	// BarrierPass: Thread passed named barrier ID in generation Gen.
	BarrierPass
	// ClusterArrive: Thread arrived at the cluster barrier in generation
	// Gen; ClusterWait: it passed the cluster barrier of generation Gen.
	ClusterArrive
	ClusterWait
	// SharedRead and SharedWrite: Thread read or wrote shared bytes
	// Mem[0] of its block with an ordinary (generic proxy) access.
	SharedRead
	SharedWrite
)

var eventNames = [...]string{
	MBarrierInit: "mbarrier init", MBarrierArrive: "mbarrier arrive", MBarrierPhase: "mbarrier phase",
	MBarrierWait: "mbarrier wait", TMALoad: "TMA load", TMALoadDone: "TMA load done", TMAStore: "TMA store",
	TMAStoreDone: "TMA store done", BulkCommit: "bulk commit", BulkWait: "bulk wait", WGMMA: "wgmma",
	WGMMACommit: "wgmma commit", WGMMAWait: "wgmma wait", Barrier: "barrier", BarrierPass: "barrier pass",
	ClusterArrive: "cluster arrive", ClusterWait: "cluster wait", SharedRead: "shared read", SharedWrite: "shared write",
}

func (k EventKind) String() string {
	if int(k) < len(eventNames) && eventNames[k] != "" {
		return eventNames[k]
	}
	return fmt.Sprintf("EventKind(%d)", k)
}

// Span is a range [Lo, Hi) of shared-memory byte offsets.
type Span struct{ Lo, Hi uint64 }

// Event is one observed step. Fields a kind does not mention are zero.
type Event struct {
	Kind EventKind
	// Op is the op executed (for a copy landing, the copy's op).
	Op *ir.Operation
	// Kernel and Cluster name the launch and the cluster (the block,
	// without clusters) in it; blocks of different clusters never
	// interact.
	Kernel  string
	Cluster int
	// Thread is the acting thread: its linear index in its block (-1 for
	// the copy engine) and its block's rank in the cluster.
	Thread, ThreadRank int
	// Block and Rank are the block whose mbarrier or shared memory the
	// event touches (the acting thread's own, but for remote arrivals and
	// multicast copies).
	Block [3]int64
	Rank  int
	// Barrier is the shared offset of the mbarrier.
	Barrier uint64
	Count   int64
	Tx      int64
	Phase   int64
	Parity  int64
	// Mem are the shared bytes accessed.
	Mem []Span
	// Map is the tensor map (its index in the order the host plan encoded
	// them, from 0) and Desc what it describes; Coords the box's
	// coordinates, innermost first.
	Map    int
	Desc   *cuda.TiledDesc
	Coords []int64
	// Group, Keep: commit groups (BulkCommit, BulkWait, WGMMA*).
	Group, Keep int
	Warpgroup   int
	// ID, Gen, Arrive: named and cluster barriers.
	ID     int64
	Gen    int
	Arrive bool
}

// observing reports whether the device has an observer (the hooks build
// no event otherwise).
func (b *blockRun) observing() bool { return b.dev.Observe != nil }

// emit completes e with the launch, and the acting thread's and the
// touched block's identities, and hands it to the observer.
func (b *blockRun) emit(t *thread, target *cta, e *Event) {
	e.Kernel, e.Cluster = b.kernel, b.clusterIndex
	e.Thread, e.ThreadRank = -1, -1
	if t != nil {
		e.Thread, e.ThreadRank = t.linear, t.c.rank
		if target == nil {
			target = t.c
		}
	}
	if target != nil {
		e.Block, e.Rank = target.bid, target.rank
	}
	b.dev.Observe(e)
}

// observePhases reports the phases m completed since it stood at phase
// before (op: what completed them; t nil for a copy landing).
func (b *blockRun) observePhases(t *thread, op *ir.Operation, m *mbarrier, before int64) {
	for p := before; p < m.phase; p++ {
		b.emit(t, m.cta, &Event{Kind: MBarrierPhase, Op: op, Barrier: m.addr, Phase: p})
	}
}

// observeCopy reports a TMA copy's issue or landing.
func (b *blockRun) observeCopy(kind EventKind, c *asyncOp, phase int64) {
	e := &Event{Kind: kind, Op: c.op, Mem: []Span{{c.lo, c.hi}}, Map: c.tm.index, Desc: &c.tm.d, Coords: c.coords, Phase: phase}
	if c.bar != nil {
		e.Barrier = c.bar.addr
	}
	e.Thread, e.ThreadRank = c.thread.linear, c.thread.c.rank
	e.Kernel, e.Cluster = b.kernel, b.clusterIndex
	e.Block, e.Rank = c.dst.bid, c.dst.rank
	b.dev.Observe(e)
}
