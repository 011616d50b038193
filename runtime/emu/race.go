package emu

import (
	"fmt"
	"sync"

	"github.com/tmac-dev/tmac/dialects/nvgpu"
	"github.com/tmac-dev/tmac/ir"
)

// Thread-to-thread races in shared memory: what compute-sanitizer's
// racecheck reports on the GPU. Two accesses of the same bytes by
// different threads, at least one a write, race unless synchronisation
// orders one before the other. Happens-before is followed with vector
// clocks (one component per thread of the block, or of the cluster):
//
//   - a barrier (gpu.barrier, nvvm.barrier, named barriers with their
//     thread counts) releases each arriving thread's clock into its
//     generation and every thread that passes it acquires the generation;
//     bar.arrive releases without acquiring;
//   - an mbarrier arrival (arrive, expect_tx, nocomplete, remote ones)
//     releases into the barrier, whose clock is sealed when a phase
//     completes; a wait that sees the phase complete acquires it;
//   - a warp collective (shfl.sync, vote.sync, elect.sync) joins the
//     clocks of the lanes that meet in it;
//   - barrier.cluster.arrive releases into its generation (the .relaxed
//     form orders no memory), barrier.cluster.wait acquires it.
//
// Every byte of a block's shared memory remembers its last write and a
// few reads since (FastTrack's epochs: the thread and its clock at the
// access, and the op): a read must be ordered after the last write, a
// write after the last write and the reads remembered. A byte keeps at
// most readSlots concurrent reads (a read ordered after a remembered one
// replaces it); a further concurrent read is not remembered, so memory is
// bounded (32 bytes per byte of shared memory, allocated for a block when
// the kernel has ordinary shared-memory accesses) at the price of missing
// a race whose only witnesses are forgotten reads.
//
// TMA copies meet the threads here too: issuing a TMA store reads its
// bytes as the issuing thread (the threads' writes must be ordered before
// the issue, by a barrier), and issuing a TMA load writes them (the reads
// of the previous contents must be ordered before the refill); the load's
// bytes then start afresh, their readers being ordered by the existing
// in-flight checks and the mbarrier.
//
// Atomic accesses do not race with each other, only with ordinary ones:
// an atomic op's implementation checks its read-modify-write with
// t.sharedWrite(op, space, addr, n, true).

// vclock is a vector clock: component i is the latest release of thread i
// the holder is ordered after.
type vclock []uint32

func (c vclock) join(o vclock) {
	for i, v := range o {
		if v > c[i] {
			c[i] = v
		}
	}
}

// access is one remembered access: the thread (its index in the run plus
// one; 0: none), its clock then, and the op (an index into the run's
// ops, with atomicBit for an atomic access).
type access struct {
	tid uint16
	op  uint16
	clk uint32
}

const (
	atomicBit = 1 << 15
	// unknownOp stands for the ops past the first 32767 a run meets (the
	// note then has no location).
	unknownOp = atomicBit - 1
)

const readSlots = 3

// cell is the race state of one byte of shared memory.
type cell struct {
	w access
	r [readSlots]access
}

// raceDetector follows happens-before through one block run.
type raceDetector struct {
	b      *blockRun
	clocks []vclock // per thread, by index in b.threads
	shadow [][]cell // per block of the cluster, allocated at its first access
	// Clocks released into synchronisation objects.
	gens    map[barrierGen]*genClock
	mbars   map[*mbarrier]*mbarClock
	cluster map[int]vclock
	// ops numbers the kernel's ops for the shadow (ids index opList).
	ops    map[*ir.Operation]uint16
	opList []*ir.Operation
}

// barrierGen is one generation of a named barrier of a block.
type barrierGen struct {
	c   *cta
	id  int64
	gen int
}

// genClock is what the arrivals of a barrier generation released, and how
// many of them still have to pass it.
type genClock struct {
	vc      vclock
	waiters int
}

// mbarClock is what the arrivals on an mbarrier released (cumulatively),
// and that clock as it stood when each of the last two phases completed.
type mbarClock struct {
	acc    vclock
	sealed [2]vclock
	phase  [2]int64
}

// hasSharedAccess reports whether kernel fn has ordinary (generic proxy)
// accesses of workgroup memory: only then is there anything to check.
func hasSharedAccess(fn *ir.Operation) bool {
	found := false
	ir.Walk(fn, func(op *ir.Operation) ir.WalkResult {
		for _, v := range op.Operands() {
			mt, ok := v.Type().(*ir.MemRefType)
			if ok && nvgpu.IsSharedMemory(mt.MemorySpace) && (op.ReadsThrough(v, ir.GenericProxy) || op.WritesThrough(v, ir.GenericProxy)) {
				found = true
				return ir.Interrupt
			}
		}
		return ir.Advance
	})
	return found
}

func newRaceDetector(b *blockRun) *raceDetector {
	n := len(b.threads)
	r := &raceDetector{b: b, clocks: make([]vclock, n), shadow: make([][]cell, len(b.ctas)),
		gens: map[barrierGen]*genClock{}, mbars: map[*mbarrier]*mbarClock{}, cluster: map[int]vclock{},
		ops: map[*ir.Operation]uint16{}}
	all := make(vclock, n*n)
	for i := range r.clocks {
		r.clocks[i] = all[i*n : (i+1)*n : (i+1)*n]
		r.clocks[i][i] = 1
	}
	return r
}

// index is t's position in b.threads (its clock component).
func (r *raceDetector) index(t *thread) int { return t.c.rank*len(t.c.threads) + t.linear }

// release publishes t's clock into vc and starts t's next epoch.
func (r *raceDetector) release(t *thread, vc vclock) {
	i := r.index(t)
	vc.join(r.clocks[i])
	r.clocks[i][i]++
}

func (r *raceDetector) acquire(t *thread, vc vclock) {
	if vc != nil {
		r.clocks[r.index(t)].join(vc)
	}
}

// barrierArrive: t arrives at generation gen of barrier id (waits: it
// will pass it too).
func (r *raceDetector) barrierArrive(t *thread, id int64, gen int, waits bool) {
	k := barrierGen{t.c, id, gen}
	g := r.gens[k]
	if g == nil {
		g = &genClock{vc: make(vclock, len(r.clocks))}
		r.gens[k] = g
	}
	r.release(t, g.vc)
	if waits {
		g.waiters++
	}
}

// barrierComplete: generation gen of barrier id is complete; with nobody
// to pass it, its clock is not needed.
func (r *raceDetector) barrierComplete(c *cta, id int64, gen int) {
	k := barrierGen{c, id, gen}
	if g := r.gens[k]; g != nil && g.waiters == 0 {
		delete(r.gens, k)
	}
}

// barrierPass: t passes generation gen of barrier id.
func (r *raceDetector) barrierPass(t *thread, id int64, gen int) {
	k := barrierGen{t.c, id, gen}
	g := r.gens[k]
	if g == nil {
		return
	}
	r.acquire(t, g.vc)
	if g.waiters--; g.waiters == 0 {
		delete(r.gens, k)
	}
}

func (r *raceDetector) mbarClock(m *mbarrier) *mbarClock {
	mc := r.mbars[m]
	if mc == nil {
		mc = &mbarClock{acc: make(vclock, len(r.clocks)), phase: [2]int64{-1, -1}}
		r.mbars[m] = mc
		m.race = mc
	}
	return mc
}

// mbarrierArrive: t arrives on m (before the arrival completes a phase).
func (r *raceDetector) mbarrierArrive(t *thread, m *mbarrier) {
	r.release(t, r.mbarClock(m).acc)
}

// seal records the clock of completed phase p.
func (mc *mbarClock) seal(p int64) {
	s := mc.sealed[p&1]
	if s == nil {
		s = make(vclock, len(mc.acc))
		mc.sealed[p&1] = s
	}
	copy(s, mc.acc)
	mc.phase[p&1] = p
}

// mbarrierWait: t's wait saw phase p of m complete. A phase older than the
// two kept (a token wait seeing a long-completed phase) acquires the
// latest, which only orders more.
func (r *raceDetector) mbarrierWait(t *thread, m *mbarrier, p int64) {
	mc := r.mbars[m]
	if mc == nil || p < 0 {
		return
	}
	if mc.phase[p&1] != p {
		p = m.phase - 1
	}
	if mc.phase[p&1] == p {
		r.acquire(t, mc.sealed[p&1])
	}
}

// clusterArrive: t arrives at the cluster barrier's generation gen; a
// relaxed arrival orders no memory.
func (r *raceDetector) clusterArrive(t *thread, gen int, relaxed bool) {
	vc := r.cluster[gen]
	if vc == nil {
		vc = make(vclock, len(r.clocks))
		r.cluster[gen] = vc
		delete(r.cluster, gen-2) // every thread has passed it
	}
	if !relaxed {
		r.release(t, vc)
	}
}

func (r *raceDetector) clusterWait(t *thread, gen int) { r.acquire(t, r.cluster[gen]) }

// warpSync joins the clocks of the lanes of warp that met in a warp
// collective (the lanes in arrived, all parked at it).
func (r *raceDetector) warpSync(c *cta, warp int, arrived uint32) {
	var lanes []int
	for l := 0; l < 32; l++ {
		if arrived&(1<<l) != 0 {
			lanes = append(lanes, r.index(c.threads[warp*32+l]))
		}
	}
	j := make(vclock, len(r.clocks))
	for _, i := range lanes {
		j.join(r.clocks[i])
	}
	for _, i := range lanes {
		copy(r.clocks[i], j)
		r.clocks[i][i] = j[i] + 1
	}
}

// opID numbers op for the shadow.
func (r *raceDetector) opID(op *ir.Operation) uint16 {
	id, ok := r.ops[op]
	if !ok {
		id = unknownOp
		if len(r.opList) < unknownOp {
			id = uint16(len(r.opList))
			r.opList = append(r.opList, op)
		}
		r.ops[op] = id
	}
	return id
}

// shadows keeps the shadow memory of finished runs for the next ones
// (a block's shadow is as large as its shared memory).
var shadows sync.Pool

// cells are the race state of shared bytes [lo, hi) of block c.
func (r *raceDetector) cells(c *cta, lo, hi uint64) []cell {
	s := r.shadow[c.rank]
	if s == nil {
		if p, _ := shadows.Get().(*[]cell); p != nil && cap(*p) >= len(c.smem) {
			s = (*p)[:len(c.smem)]
			clear(s)
		} else {
			s = make([]cell, len(c.smem))
		}
		r.shadow[c.rank] = s
	}
	return s[lo:hi]
}

// done gives the run's shadow memory back for later runs.
func (r *raceDetector) done() {
	for i, s := range r.shadow {
		if s != nil {
			shadows.Put(&s)
			r.shadow[i] = nil
		}
	}
}

// ordered reports whether access a is ordered before the thread with
// clock vc (or is its own: me, its index plus one).
func ordered(a access, me uint16, vc vclock) bool {
	return a.tid == 0 || a.tid == me || a.clk <= vc[a.tid-1]
}

// conflict is a race found at one byte: the earlier access and whether it
// wrote.
type conflict struct {
	prev  access
	wrote bool
}

// read checks and records t's read of shared bytes [lo, hi) of block c
// by op (verb: what t does, for the report).
func (r *raceDetector) read(t *thread, c *cta, op *ir.Operation, lo, hi uint64, verb string) {
	i := r.index(t)
	vc := r.clocks[i]
	me := uint16(i + 1)
	cur := access{tid: me, op: r.opID(op), clk: vc[i]}
	cells := r.cells(c, lo, hi)
	for k := range cells {
		x := &cells[k]
		if !ordered(x.w, me, vc) {
			r.report(t, c, op, lo, hi, k, conflict{x.w, true}, verb)
		}
		for s, rd := range x.r {
			if rd.tid == me || ordered(rd, 0, vc) {
				x.r[s] = cur
				break
			}
		}
	}
}

// write checks and records t's write of shared bytes [lo, hi) of block c
// by op (verb: what t does); forget: the bytes start afresh afterwards (a
// TMA load refills them).
func (r *raceDetector) write(t *thread, c *cta, op *ir.Operation, lo, hi uint64, verb string, atomic, forget bool) {
	i := r.index(t)
	vc := r.clocks[i]
	me := uint16(i + 1)
	after := cell{w: access{tid: me, op: r.opID(op), clk: vc[i]}}
	if atomic {
		after.w.op |= atomicBit
	}
	if forget {
		after = cell{}
	}
	cells := r.cells(c, lo, hi)
	for k := range cells {
		x := &cells[k]
		if !ordered(x.w, me, vc) && !(atomic && x.w.op&atomicBit != 0) {
			r.report(t, c, op, lo, hi, k, conflict{x.w, true}, verb)
		}
		for _, rd := range x.r {
			if !ordered(rd, me, vc) && !(atomic && rd.op&atomicBit != 0) {
				r.report(t, c, op, lo, hi, k, conflict{rd, false}, verb)
			}
		}
		*x = after
	}
}

// report stops the run at t's access of bytes [lo, hi) by op, whose byte
// lo+k conflicts with f; the bytes reported are those of the access
// conflicting with the same earlier access.
func (r *raceDetector) report(t *thread, c *cta, op *ir.Operation, lo, hi uint64, k int, f conflict, verb string) {
	cells := r.cells(c, lo, hi)
	same := func(c *cell) bool {
		if f.wrote {
			return c.w == f.prev
		}
		for _, x := range c.r {
			if x == f.prev {
				return true
			}
		}
		return false
	}
	end := k + 1
	for end < len(cells) && same(&cells[end]) {
		end++
	}
	other := r.b.threads[f.prev.tid-1]
	var prevLoc ir.Location
	prevName := "an op"
	if id := f.prev.op &^ atomicBit; id != unknownOp {
		prevLoc, prevName = r.opList[id].Loc, "'"+r.opList[id].Name()+"'"
	}
	did := "wrote"
	if !f.wrote {
		did = "read"
	}
	bytes := fmt.Sprintf("[%d, %d)", lo+uint64(k), lo+uint64(end))
	t.fail(&Error{Op: op,
		Msg: fmt.Sprintf("race: thread %d %s shared bytes %s that thread %d %s, and no barrier, mbarrier wait or warp collective orders the two accesses (a missing gpu.barrier?)",
			t.linear, verb, bytes, other.linear, did),
		Notes: []Note{note(prevLoc, "thread %d %s them here (%s)", other.linear, did, prevName)}})
}
