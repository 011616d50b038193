package emu

import (
	"fmt"
	"math/rand"
	"sort"
	"strings"

	"github.com/tmac-dev/tmac/ir"
)

// A block (or the blocks of a thread block cluster) runs as one goroutine
// per thread plus a scheduler, the only party that decides who runs: a
// thread runs until it blocks (or exits), then hands control back; the
// scheduler picks, at random from its seeded source, either a thread that
// can go on or an asynchronous copy in flight to complete. Because only
// one party runs at a time, the state needs no locks.

type threadState uint8

const (
	ready threadState = iota
	running
	blocked
	exited
)

type thread struct {
	b      *blockRun // the scheduler (the block, or its cluster)
	c      *cta      // the thread's own block
	tid    [3]int64
	linear int
	vals   []any
	state  threadState
	resume chan struct{}

	// While blocked: what it waits for.
	cond    func() bool
	waitOp  *ir.Operation
	waitWhy func() string

	// Bulk async groups of this thread (TMA stores): the stores issued
	// since the last commit, and the committed groups still reading.
	uncommitted []*asyncOp
	groups      [][]*asyncOp
	bulkCommits int // groups committed (for the observer)
	// Shared-memory byte ranges written since this thread's last
	// fence.proxy.async (the async proxy may not see them yet).
	unfenced []span
	// wgmma commit groups: committed so far, and retired by wait_group
	// (groups 0..wgRetired-1).
	wgCommitted, wgRetired int
	// The cluster barrier generation this thread arrived in (-1: none).
	clusterGen int
	// The result of this thread's last warp collective (elect, shfl, vote).
	warpResult any
}

type span struct {
	lo, hi uint64
	op     *ir.Operation
}

// cta is one block: its shared memory and what lives in it.
type cta struct {
	rank       int // in its cluster
	bid        [3]int64
	smem       []byte
	threads    []*thread
	live       int // threads not exited
	bars       map[uint64]*mbarrier
	named      map[int64]*namedBarrier
	warpgroups []*warpgroup
	warps      map[int][]*warpColl // warp collectives in progress, by warp
	// invalidated mbarriers: where nvvm.mbarrier.inval removed them.
	invalidated map[uint64]*ir.Operation
}

// blockRun schedules one block, or the blocks of one cluster together.
type blockRun struct {
	dev      *Device
	k        *kernel
	grid     [3]int64
	bdim     [3]int64
	params   []any
	ctas     []*cta
	threads  []*thread // of every block
	rng      *rand.Rand
	yield    chan struct{}
	inflight []*asyncOp
	cluster  clusterBarrier
	race     *raceDetector // nil: the kernel has no ordinary shared-memory access
	err      *Error
	abort    bool
	// kernel and clusterIndex name the run for the observer.
	kernel       string
	clusterIndex int
	// cdim and cid: the cluster's size in blocks and its index in the
	// grid (without clusters, a block is a cluster of one).
	cdim, cid [3]int64
}

// clusterBarrier is barrier.cluster.arrive / wait over every thread of the
// cluster (exited threads count as arrived).
type clusterBarrier struct {
	arrived int
	gen     int
}

// abortSignal unwinds a thread's goroutine when the block stops.
type abortSignal struct{}

// fail stops the block with err (the first error wins).
func (t *thread) fail(err *Error) {
	if t.b.err == nil {
		t.b.err = err
	}
	panic(abortSignal{})
}

func (t *thread) failf(op *ir.Operation, format string, args ...any) {
	t.fail(opError(op, format, args...))
}

// block parks the thread until cond holds; why describes the wait for a
// deadlock report.
func (t *thread) block(op *ir.Operation, cond func() bool, why func() string) {
	if cond() {
		return
	}
	t.state, t.cond, t.waitOp, t.waitWhy = blocked, cond, op, why
	t.b.yield <- struct{}{}
	<-t.resume
	if t.b.abort {
		panic(abortSignal{})
	}
	t.state, t.cond, t.waitOp, t.waitWhy = running, nil, nil, nil
}

func (b *blockRun) startThread(t *thread) {
	go func() {
		defer func() {
			if r := recover(); r != nil {
				if _, ok := r.(abortSignal); !ok {
					if b.err == nil {
						b.err = &Error{Msg: fmt.Sprintf("internal error in the emulator: %v", r)}
					}
				}
			}
			t.state = exited
			t.c.live--
			if err := t.c.threadExited(b); err != nil && b.err == nil && !b.abort {
				b.err = err
			}
			if b.err == nil && !b.abort {
				b.err = t.exitedWithStores()
			}
			if t.c.live == 0 && b.err == nil && !b.abort {
				b.err = b.exitedWithCopies(t.c)
			}
			b.clusterExited()
			b.yield <- struct{}{}
		}()
		<-t.resume
		if b.abort {
			panic(abortSignal{})
		}
		t.state = running
		t.runCode(b.k.body, b.params)
	}()
}

// exitedWithStores reports a TMA store this exiting thread issued and never
// waited for: only the issuing thread can wait for its bulk groups, and
// the block's shared memory is released once its threads have exited, so
// the store may still be reading it (whether it happens to be done in
// this schedule or not).
func (t *thread) exitedWithStores() *Error {
	var x *asyncOp
	switch {
	case len(t.uncommitted) > 0:
		x = t.uncommitted[0]
	case len(t.groups) > 0 && len(t.groups[0]) > 0:
		x = t.groups[0][0]
	default:
		return nil
	}
	return &Error{Op: x.op, Msg: fmt.Sprintf("thread %d exits without waiting for its TMA store (commit it and wait with nvvm.cp.async.bulk.wait_group.read 0 before exit: the block's shared memory is released at exit)", t.linear), Notes: []Note{x.note()}}
}

// exitedWithCopies reports a TMA copy still using the shared memory of
// block c, whose threads have all exited: the block's shared memory is
// released at exit (a store must be waited for with
// cp.async.bulk.wait_group.read, a load through its mbarrier).
func (b *blockRun) exitedWithCopies(c *cta) *Error {
	for _, x := range b.inflight {
		if x.dst != c {
			continue
		}
		what := "a TMA store is still reading its shared memory (wait with nvvm.cp.async.bulk.wait_group.read 0 before exit)"
		if x.load {
			what = "a TMA load is still writing its shared memory (wait on the load's mbarrier before exit)"
		}
		return &Error{Op: x.op, Msg: "the block exits while " + what, Notes: []Note{x.note()}}
	}
	for _, m := range c.bars {
		if m.lastLoad != nil && m.lastLoadPhase > m.observed {
			return &Error{Op: m.lastLoad.op, Msg: fmt.Sprintf("the block exits without a wait on the mbarrier seeing this TMA load complete (phase %d; the latest phase a wait saw is %d): on the GPU the load may still be writing the block's released shared memory", m.lastLoadPhase, m.observed),
				Notes: []Note{m.lastLoad.note(), note(m.initAt.Loc, "the %v, initialised here", m)}}
		}
	}
	return nil
}

// run executes the block to completion or to its first error.
func (b *blockRun) run() *Error {
	for _, c := range b.ctas {
		c.live = len(c.threads)
	}
	for _, t := range b.threads {
		b.startThread(t)
	}
	// In a cluster one block, chosen by the seed, runs ahead of the others
	// whenever it can: a block that finishes and exits while its peers still
	// use its shared memory (no cluster barrier before exit) is caught, an
	// interleaving a uniform choice would almost never produce.
	ahead := -1
	if len(b.ctas) > 1 {
		ahead = b.rng.Intn(len(b.ctas))
	}
	runnable := make([]*thread, 0, len(b.threads))
	favoured := make([]*thread, 0, len(b.threads))
	for b.err == nil {
		if b.dev.stopped() {
			b.err = errStopped
			break
		}
		runnable = runnable[:0]
		live := 0
		for _, t := range b.threads {
			switch t.state {
			case ready:
				runnable = append(runnable, t)
				live++
			case blocked:
				live++
				if t.cond() {
					runnable = append(runnable, t)
				}
			}
		}
		if i := b.completable(len(runnable) == 0); i >= 0 {
			op := b.inflight[i]
			b.inflight = append(b.inflight[:i], b.inflight[i+1:]...)
			if err := b.complete(op); err != nil {
				b.err = err
			}
			continue
		}
		if len(runnable) == 0 {
			if live > 0 {
				b.err = b.deadlock()
			}
			break
		}
		favoured = favoured[:0]
		if ahead >= 0 && b.rng.Intn(8) != 0 {
			for _, t := range runnable {
				if t.c.rank == ahead {
					favoured = append(favoured, t)
				}
			}
		}
		pick := runnable
		if len(favoured) > 0 {
			pick = favoured
		}
		t := pick[b.rng.Intn(len(pick))]
		t.resume <- struct{}{}
		<-b.yield
	}
	// Unwind the threads still parked or not started.
	b.abort = true
	for _, t := range b.threads {
		if t.state != exited {
			t.resume <- struct{}{}
			<-b.yield
		}
	}
	return b.err
}

// deadlock reports every blocked thread, grouped by where and on what it
// waits.
func (b *blockRun) deadlock() *Error {
	type group struct {
		op    *ir.Operation
		why   string
		tids  []int
		first *thread
	}
	groups := map[string]*group{}
	var keys []string
	for _, t := range b.threads {
		if t.state != blocked {
			continue
		}
		why := t.waitWhy()
		if len(b.ctas) > 1 {
			why = fmt.Sprintf("(block (%d, %d, %d), rank %d in its cluster) %s", t.c.bid[0], t.c.bid[1], t.c.bid[2], t.c.rank, why)
		}
		key := fmt.Sprintf("%p|%s", t.waitOp, why)
		g := groups[key]
		if g == nil {
			g = &group{op: t.waitOp, why: why, first: t}
			groups[key] = g
			keys = append(keys, key)
		}
		g.tids = append(g.tids, t.linear)
	}
	sort.Slice(keys, func(i, j int) bool { return groups[keys[i]].tids[0] < groups[keys[j]].tids[0] })
	e := &Error{Msg: "deadlock: every live thread is blocked and no copy is in flight"}
	if len(keys) > 0 {
		e.Op = groups[keys[0]].op
	}
	for _, k := range keys {
		g := groups[k]
		e.Notes = append(e.Notes, note(g.op.Loc, "%s blocked here ('%s'): %s", threadList(g.tids), g.op.Name(), g.why))
	}
	return e
}

// threadList names threads compactly: "thread 0", "threads 0-127",
// "threads 0, 5", "threads 0, 2, ..., 62" (a stride).
func threadList(ids []int) string {
	if len(ids) == 1 {
		return fmt.Sprintf("thread %d", ids[0])
	}
	if n := len(ids); n >= 4 && ids[1]-ids[0] > 1 {
		step := ids[1] - ids[0]
		strided := true
		for i := 2; i < n && strided; i++ {
			strided = ids[i]-ids[i-1] == step
		}
		if strided {
			return fmt.Sprintf("threads %d, %d, ..., %d", ids[0], ids[1], ids[n-1])
		}
	}
	var parts []string
	for i := 0; i < len(ids); {
		j := i
		for j+1 < len(ids) && ids[j+1] == ids[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, fmt.Sprintf("%d-%d", ids[i], ids[j]))
		} else {
			parts = append(parts, fmt.Sprint(ids[i]))
		}
		i = j + 1
	}
	return "threads " + strings.Join(parts, ", ")
}

// completable picks the in-flight copy to complete at this step, or -1:
// at random one step in three, or whenever no thread can run (stuck); with
// the device's LazyStores only loads at random, stores only when stuck.
func (b *blockRun) completable(stuck bool) int {
	n := len(b.inflight)
	if n == 0 || (!stuck && b.rng.Intn(3) != 0) {
		return -1
	}
	i := b.rng.Intn(n)
	if stuck || !b.dev.LazyStores {
		return i
	}
	for k := 0; k < n; k++ { // the first load from a random start
		if j := (i + k) % n; b.inflight[j].load {
			return j
		}
	}
	return -1
}
