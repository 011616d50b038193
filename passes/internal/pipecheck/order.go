package pipecheck

import (
	"fmt"
	"sort"
	"strings"

	"github.com/tmac-dev/tmac/dialects/nvvm"
	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/runtime/emu"
)

// The order checker follows happens-before through an emulated run with
// vector clocks and checks every shared-memory access against it: a read
// must be ordered after the fill it reads (for a TMA load: a wait that saw
// the phase its bytes completed, directly or through other threads), and
// a fill must be ordered after every read of the bytes it replaces (an
// ordinary load: a release after it; a wgmma or a TMA store: the
// wait_group that retired it) and after their previous fill. The emulator
// runs one party at a time, so whether a given interleaving happened to
// read the right bytes is luck; the order is not, and a protocol that
// only works by luck is reported whatever the seed.
//
// Synchronisation, following PTX: an mbarrier arrival releases into the
// barrier's current phase and a wait acquires the phase it saw complete
// (its component of the clock records the completed phases, which is what
// a TMA load's landing is ordered by); a named barrier's or the cluster
// barrier's arrivals release into their generation and its passing
// threads acquire it. Each thread keeps two clocks: one for the order of
// events (any synchronisation), one for the order of ordinary memory
// accesses, which an arrival at CTA scope on another block's mbarrier does
// not carry (PTX: a release orders memory only for the threads within its
// scope). Asynchronous reads (wgmma, TMA stores) are complete once their
// wait_group returns, so their end is ordered by the first clock;
// ordinary loads need the second.

// clock is a vector clock: component i counts the releases of thread i
// (or the completed phases of mbarrier i).
type clock []uint32

func (c clock) get(i int) uint32 {
	if i < len(c) {
		return c[i]
	}
	return 0
}

func (c *clock) set(i int, v uint32) {
	for len(*c) <= i {
		*c = append(*c, 0)
	}
	(*c)[i] = v
}

func (c *clock) join(o clock) {
	for len(*c) < len(o) {
		*c = append(*c, 0)
	}
	for i, v := range o {
		if v > (*c)[i] {
			(*c)[i] = v
		}
	}
}

// syncObj is what a synchronisation object carries: the clocks released into
// it (event order, memory order).
type syncObj struct{ ev, mem clock }

func (s *syncObj) copy() *syncObj {
	return &syncObj{ev: append(clock(nil), s.ev...), mem: append(clock(nil), s.mem...)}
}

// epoch is a thread's own clock value at an event: what a later release
// of it publishes.
type epoch struct {
	comp  int
	clock uint32
}

type threadKey struct{ rank, linear int }

type threadState struct {
	key     threadKey
	comp    int
	syncObj // its own clocks
	// Bulk groups: stores issued since the last commit, and committed
	// groups not yet retired by a wait.
	uncommitted []*asyncRead
	groups      map[int][]*asyncRead
	// wgmma reads of its warpgroup it has retired (an index into the
	// warpgroup's list).
	wgRetired int
}

func (t *threadState) now() epoch { return epoch{t.comp, t.ev.get(t.comp)} }

// release publishes t's clocks into s (memory: whether the ordinary
// accesses before it are ordered too) and starts t's next epoch.
func (t *threadState) release(s *syncObj, memory bool) {
	s.ev.join(t.ev)
	if memory {
		s.mem.join(t.mem)
	}
	t.ev.set(t.comp, t.ev.get(t.comp)+1)
	t.mem.set(t.comp, t.mem.get(t.comp)+1)
}

func (t *threadState) acquire(s *syncObj) {
	t.ev.join(s.ev)
	t.mem.join(s.mem)
}

type barKey struct {
	rank int
	addr uint64
}

type barState struct {
	comp   int
	init   epoch
	initOp *ir.Operation
	// pending accumulates the releases of arrivals; phases holds it as it
	// stood when each phase completed.
	pending syncObj
	phases  map[int64]*syncObj
}

// content is what a range of shared memory holds: one fill (a TMA load,
// landed in a phase of its mbarrier, or a thread's ordinary store) and the
// reads of it since.
type content struct {
	op *ir.Operation
	// A TMA load: the mbarrier's component and the phase the bytes
	// completed in (landed once the copy engine wrote them).
	tma    bool
	bar    int
	phase  int64
	landed bool
	coords []int64
	issuer threadKey
	// An ordinary store: the writing thread's epoch.
	writer epoch
	// Ordinary reads: the latest epoch of each reading thread, and where.
	reads   map[int]uint32
	readOps map[int]*ir.Operation
	async   []*asyncRead
	mark    uint64 // run.distinct's deduplication
}

// asyncRead is a read by the async proxy: it ends when a wait_group of
// one of the threads that issued it retires it (ends: their epochs then).
type asyncRead struct {
	what string
	op   *ir.Operation
	wg   int // wgmma: the commit group
	ends []epoch
}

type wgKey struct{ rank, wg int }

// run is the state of one cluster's run.
type run struct {
	c        *Checker
	name     string
	comps    int
	threads  map[threadKey]*threadState
	names    map[int]string // component -> thread or barrier, for messages
	bars     map[barKey]*barState
	named    map[[3]int64]*syncObj // rank, id, generation
	cluster  map[int]*syncObj
	smem     map[int][]*content
	wgReads  map[wgKey][]*asyncRead
	blocks   map[int][3]int64   // rank -> block id
	barCount map[[2]int64]int64 // rank, named barrier id -> its thread count (-1: every thread)
	// The warpgroups arriving in each generation of a named barrier with a
	// thread count (rank, id, generation: a bit per warpgroup), and the
	// generations some thread passed.
	barWGs    map[[3]int64]uint64
	barPassed map[[3]int64]bool
	one       [1]*content // distinct's result when a range holds one content
	mark      uint64      // distinct's current mark
}

func newRun(c *Checker, name string) *run {
	return &run{c: c, name: name, threads: map[threadKey]*threadState{}, names: map[int]string{}, bars: map[barKey]*barState{},
		named: map[[3]int64]*syncObj{}, cluster: map[int]*syncObj{}, smem: map[int][]*content{}, wgReads: map[wgKey][]*asyncRead{},
		blocks: map[int][3]int64{}, barCount: map[[2]int64]int64{}, barWGs: map[[3]int64]uint64{}, barPassed: map[[3]int64]bool{}}
}

func threadCount(n int64) string {
	if n < 0 {
		return "every thread (as the block barrier)"
	}
	return fmt.Sprintf("%d threads", n)
}

func (r *run) thread(rank, linear int) *threadState {
	k := threadKey{rank, linear}
	t := r.threads[k]
	if t == nil {
		t = &threadState{key: k, comp: r.comps, groups: map[int][]*asyncRead{}}
		r.names[r.comps] = r.threadName(k)
		r.comps++
		t.ev.set(t.comp, 1)
		t.mem.set(t.comp, 1)
		r.threads[k] = t
	}
	return t
}

func (r *run) threadName(k threadKey) string {
	if len(r.blocks) > 1 || k.rank > 0 {
		b := r.blocks[k.rank]
		return fmt.Sprintf("thread %d of block (%d, %d, %d)", k.linear, b[0], b[1], b[2])
	}
	return fmt.Sprintf("thread %d", k.linear)
}

func (r *run) bar(rank int, addr uint64) *barState {
	k := barKey{rank, addr}
	b := r.bars[k]
	if b == nil {
		b = &barState{comp: r.comps, phases: map[int64]*syncObj{}, init: epoch{-1, 0}}
		r.names[r.comps] = fmt.Sprintf("the mbarrier at shared offset %d", addr)
		r.comps++
		r.bars[k] = b
	}
	return b
}

func where(op *ir.Operation) string {
	if op == nil {
		return "?"
	}
	return fmt.Sprintf("'%s' at %s", op.Name(), op.Loc)
}

func (r *run) errorf(format string, args ...any) {
	r.c.report(fmt.Sprintf("%s: ", r.name) + fmt.Sprintf(format, args...))
}

// cells returns the contents of rank's shared memory up to hi.
func (r *run) cells(rank int, hi uint64) []*content {
	cs := r.smem[rank]
	if uint64(len(cs)) < hi {
		cs = append(cs, make([]*content, hi-uint64(len(cs)))...)
		r.smem[rank] = cs
	}
	return cs
}

// distinct returns the contents of [lo, hi) of rank's shared memory, each
// once, and whether some byte holds none.
func (r *run) distinct(rank int, s emu.Span) (out []*content, unwritten bool) {
	cs := r.cells(rank, s.Hi)[s.Lo:s.Hi]
	if len(cs) > 0 && cs[0] != nil && cs[len(cs)-1] == cs[0] {
		same := true
		for _, c := range cs {
			same = same && c == cs[0]
		}
		if same {
			r.one[0] = cs[0]
			return r.one[:], false
		}
	}
	r.mark++
	for _, c := range cs {
		if c == nil {
			unwritten = true
			continue
		}
		if c.mark != r.mark {
			c.mark = r.mark
			out = append(out, c)
		}
	}
	return out, unwritten
}

func (r *run) describe(c *content) string {
	if c.tma {
		return fmt.Sprintf("the TMA load of the box at %v issued by %s (%s)", c.coords, r.threadName(c.issuer), where(c.op))
	}
	return fmt.Sprintf("%s's store (%s)", r.names[c.writer.comp], where(c.op))
}

// filledBefore reports whether c's fill is ordered before a party with
// clock at (an ordinary access: the memory clock).
func filledBefore(c *content, at clock) bool {
	if c.tma {
		return c.landed && int64(at.get(c.bar)) >= c.phase+1
	}
	return at.get(c.writer.comp) >= c.writer.clock
}

// checkFill reports the contents of s a reader (who, with clock at) reads
// before their fill is ordered before it.
func (r *run) checkFill(who func() string, rank int, s emu.Span, at clock) {
	cs, unwritten := r.distinct(rank, s)
	if unwritten {
		r.errorf("%s reads shared bytes [%d, %d), which nothing has written", who(), s.Lo, s.Hi)
	}
	for _, c := range cs {
		if filledBefore(c, at) {
			continue
		}
		why := "no wait saw the mbarrier phase it completes"
		switch {
		case !c.tma:
			why = "no barrier or release orders the store before the read"
		case !c.landed:
			why = "it has not landed"
		}
		r.errorf("%s reads shared bytes [%d, %d) before their fill: %s is not ordered before the read (%s)", who(), s.Lo, s.Hi, r.describe(c), why)
		return
	}
}

// checkOverwrite reports a fill of s (by who, with clocks ev and mem)
// that is not ordered after the previous contents' reads and fills.
func (r *run) checkOverwrite(who func() string, rank int, s emu.Span, ev, mem clock) {
	cs, _ := r.distinct(rank, s)
	for _, c := range cs {
		// The first reader (in thread order) the fill is not ordered after.
		comp := -1
		for x, e := range c.reads {
			if mem.get(x) < e && (comp < 0 || x < comp) {
				comp = x
			}
		}
		if comp >= 0 {
			note := ""
			if ev.get(comp) >= c.reads[comp] {
				note = " (it is ordered only through an arrival at CTA scope on another block's mbarrier, which does not order ordinary loads of the releasing thread: the release needs cluster scope)"
			}
			r.errorf("%s overwrites shared bytes [%d, %d) before every reader released it: %s's read of %s (%s) is not ordered before it%s",
				who(), s.Lo, s.Hi, r.names[comp], r.describe(c), where(c.readOps[comp]), note)
			return
		}
		for _, a := range c.async {
			ended := false
			for _, e := range a.ends {
				ended = ended || ev.get(e.comp) >= e.clock
			}
			if !ended {
				why := "no wait_group retiring it is ordered before the overwrite"
				if len(a.ends) == 0 {
					why = "it may still be running: no wait_group has retired it"
				}
				r.errorf("%s overwrites shared bytes [%d, %d) before every reader released it: %s (%s) reads %s and %s", who(), s.Lo, s.Hi, a.what, where(a.op), r.describe(c), why)
				return
			}
		}
		prev := mem // an ordinary store is ordered by the memory clock
		if c.tma {
			prev = ev
		}
		if !filledBefore(c, prev) {
			r.errorf("%s overwrites shared bytes [%d, %d) before their previous fill, %s, is ordered before it", who(), s.Lo, s.Hi, r.describe(c))
			return
		}
	}
}

// fill makes c the contents of s.
func (r *run) fill(rank int, s emu.Span, c *content) {
	cs := r.cells(rank, s.Hi)
	for i := s.Lo; i < s.Hi; i++ {
		cs[i] = c
	}
}

// checkInit reports a use of an mbarrier not ordered after its init.
func (r *run) checkInit(who string, b *barState, addr uint64, rank int, at clock, op *ir.Operation) {
	if b.init.comp < 0 {
		r.errorf("%s uses the mbarrier at shared offset %d of block rank %d, which was never initialised (%s)", who, addr, rank, where(op))
		return
	}
	if at.get(b.init.comp) < b.init.clock {
		r.errorf("%s uses the mbarrier at shared offset %d of block rank %d before that block initialised it: its nvvm.mbarrier.init (%s) is not ordered before %s", who, addr, rank, where(b.initOp), where(op))
	}
}

func (r *run) event(e *emu.Event) {
	if _, ok := r.blocks[e.Rank]; !ok && e.Thread >= 0 && e.ThreadRank == e.Rank {
		r.blocks[e.Rank] = e.Block
	}
	var t *threadState
	who := "the copy engine"
	if e.Thread >= 0 {
		t = r.thread(e.ThreadRank, e.Thread)
		who = r.names[t.comp]
	}
	switch e.Kind {
	case emu.MBarrierInit:
		b := r.bar(e.Rank, e.Barrier)
		b.init, b.initOp = t.now(), e.Op
		b.pending, b.phases = syncObj{}, map[int64]*syncObj{}
	case emu.MBarrierArrive:
		b := r.bar(e.Rank, e.Barrier)
		r.checkInit(who, b, e.Barrier, e.Rank, t.ev, e.Op)
		remote := e.Rank != e.ThreadRank
		t.release(&b.pending, !remote || nvvm.EnumOf(e.Op, "scope") == "cluster")
	case emu.MBarrierPhase:
		b := r.bar(e.Rank, e.Barrier)
		b.pending.ev.set(b.comp, uint32(e.Phase+1))
		b.pending.mem.set(b.comp, uint32(e.Phase+1))
		b.phases[e.Phase] = b.pending.copy()
	case emu.MBarrierWait:
		b := r.bar(e.Rank, e.Barrier)
		r.checkInit(who, b, e.Barrier, e.Rank, t.ev, e.Op)
		if e.Phase >= 0 {
			if s := b.phases[e.Phase]; s != nil {
				t.acquire(s)
			}
		}
	case emu.TMALoad:
		b := r.bar(e.Rank, e.Barrier)
		r.checkInit(who, b, e.Barrier, e.Rank, t.ev, e.Op)
		s := e.Mem[0]
		r.checkOverwrite(func() string {
			return fmt.Sprintf("the TMA load of the box at %v issued by %s (%s)", e.Coords, who, where(e.Op))
		}, e.Rank, s, t.ev, t.mem)
		r.fill(e.Rank, s, &content{op: e.Op, tma: true, bar: b.comp, coords: append([]int64(nil), e.Coords...), issuer: t.key})
	case emu.TMALoadDone:
		if c := r.cells(e.Rank, e.Mem[0].Hi)[e.Mem[0].Lo]; c != nil && c.tma && c.op == e.Op {
			c.landed, c.phase = true, e.Phase
		}
	case emu.TMAStore:
		s := e.Mem[0]
		what := fmt.Sprintf("the TMA store to the box at %v issued by %s", e.Coords, who)
		r.checkFill(func() string { return what }, e.Rank, s, t.mem)
		a := &asyncRead{what: what, op: e.Op}
		cs, _ := r.distinct(e.Rank, s)
		for _, c := range cs {
			c.async = append(c.async, a)
		}
		t.uncommitted = append(t.uncommitted, a)
	case emu.BulkCommit:
		t.groups[e.Group] = t.uncommitted
		t.uncommitted = nil
	case emu.BulkWait:
		for g, reads := range t.groups {
			if g < e.Group-e.Keep {
				for _, a := range reads {
					a.ends = append(a.ends, t.now())
				}
				delete(t.groups, g)
			}
		}
	case emu.WGMMA:
		var at syncObj
		for i := 0; i < 128; i++ {
			if x := r.threads[threadKey{e.Rank, 128*e.Warpgroup + i}]; x != nil {
				at.ev.join(x.ev)
				at.mem.join(x.mem)
			}
		}
		what := fmt.Sprintf("the wgmma of warpgroup %d (commit group %d)", e.Warpgroup, e.Group)
		a := &asyncRead{what: what, op: e.Op, wg: e.Group}
		for _, s := range e.Mem {
			r.checkFill(func() string { return what }, e.Rank, s, at.mem)
			cs, _ := r.distinct(e.Rank, s)
			for _, c := range cs {
				if !containsRead(c.async, a) {
					c.async = append(c.async, a)
				}
			}
		}
		k := wgKey{e.Rank, e.Warpgroup}
		r.wgReads[k] = append(r.wgReads[k], a)
	case emu.WGMMAWait:
		reads := r.wgReads[wgKey{e.Rank, e.Thread / 128}]
		for t.wgRetired < len(reads) && reads[t.wgRetired].wg < e.Group {
			reads[t.wgRetired].ends = append(reads[t.wgRetired].ends, t.now())
			t.wgRetired++
		}
	case emu.Barrier:
		// One thread count per barrier id for the whole run: PTX forbids
		// mixing counts within a phase, and the passes keep to one count
		// per id (id 0 is the block barrier) so that no schedule can.
		idk := [2]int64{int64(e.Rank), e.ID}
		if n, ok := r.barCount[idk]; !ok {
			r.barCount[idk] = e.Count
		} else if n != e.Count {
			r.errorf("named barrier %d is used with %s and with %s (%s)", e.ID, threadCount(n), threadCount(e.Count), where(e.Op))
		}
		k := [3]int64{int64(e.Rank), e.ID, int64(e.Gen)}
		s := r.named[k]
		if s == nil {
			s = &syncObj{}
			r.named[k] = s
		}
		t.release(s, true)
		if e.Count >= 0 {
			r.barWGs[k] |= 1 << (e.Thread / 128)
		}
	case emu.BarrierPass:
		k := [3]int64{int64(e.Rank), e.ID, int64(e.Gen)}
		if s := r.named[k]; s != nil {
			t.acquire(s)
		}
		r.barPassed[k] = true
	case emu.ClusterArrive:
		s := r.cluster[e.Gen]
		if s == nil {
			s = &syncObj{}
			r.cluster[e.Gen] = s
		}
		t.release(s, true)
	case emu.ClusterWait:
		if s := r.cluster[e.Gen]; s != nil {
			t.acquire(s)
		}
	case emu.SharedRead:
		s := e.Mem[0]
		r.checkFill(func() string { return fmt.Sprintf("%s (%s)", who, where(e.Op)) }, e.Rank, s, t.mem)
		cs, _ := r.distinct(e.Rank, s)
		for _, c := range cs {
			if c.reads == nil {
				c.reads, c.readOps = map[int]uint32{}, map[int]*ir.Operation{}
			}
			c.reads[t.comp], c.readOps[t.comp] = t.mem.get(t.comp), e.Op
		}
	case emu.SharedWrite:
		s := e.Mem[0]
		r.checkOverwrite(func() string { return fmt.Sprintf("%s's store (%s)", who, where(e.Op)) }, e.Rank, s, t.ev, t.mem)
		r.fill(e.Rank, s, &content{op: e.Op, writer: t.now()})
	}
}

func containsRead(as []*asyncRead, a *asyncRead) bool {
	for _, x := range as {
		if x == a {
			return true
		}
	}
	return false
}

// finish reports a wgmma still reading shared memory when the kernel
// ends: the block's shared memory is released at exit (the emulator
// reports the TMA copies itself), and a named barrier whose generations
// gather different warpgroups: the passes give each set of warpgroups
// that synchronises its own barrier id, so that a barrier can never
// complete with one warpgroup's threads standing in for another's.
func (r *run) finish() {
	type idKey struct{ rank, id int64 }
	first := map[idKey][2]int64{} // generation and warpgroups of the first completed generation
	for _, k := range sortedGens(r.barWGs) {
		if !r.barPassed[k] {
			continue // never completed (an arrive-only barrier at the end)
		}
		id := idKey{k[0], k[1]}
		f, ok := first[id]
		if !ok {
			first[id] = [2]int64{k[2], int64(r.barWGs[k])}
			continue
		}
		if uint64(f[1]) != r.barWGs[k] {
			r.errorf("named barrier %d gathers warpgroups %s in generation %d and %s in generation %d", k[1], wgList(uint64(f[1])), f[0], wgList(r.barWGs[k]), k[2])
			break
		}
	}
	for k, reads := range r.wgReads {
		for _, a := range reads {
			if len(a.ends) == 0 {
				r.errorf("the block of rank %d ends while %s (%s) may still read its shared memory: no wgmma.wait_group retired it", k.rank, a.what, where(a.op))
				return
			}
		}
	}
}

// sortedGens returns the keys of m in order.
func sortedGens(m map[[3]int64]uint64) [][3]int64 {
	ks := make([][3]int64, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Slice(ks, func(i, j int) bool {
		for x := 0; x < 3; x++ {
			if ks[i][x] != ks[j][x] {
				return ks[i][x] < ks[j][x]
			}
		}
		return false
	})
	return ks
}

// wgList writes a set of warpgroups as "{0, 2}".
func wgList(m uint64) string {
	var ws []string
	for w := 0; m != 0; w, m = w+1, m>>1 {
		if m&1 != 0 {
			ws = append(ws, fmt.Sprint(w))
		}
	}
	return "{" + strings.Join(ws, ", ") + "}"
}
