package pipelining

import (
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"testing"

	"github.com/tmac-dev/tmac/dialects/arith"
	"github.com/tmac-dev/tmac/dialects/gpu"
	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/passes"
	"github.com/tmac-dev/tmac/passes/internal/passtest"
	"github.com/tmac-dev/tmac/passes/schedule"
)

// The ping-pong schedule of warp-specialize (`tmac.warp_specialize =
// "pingpong"`), simulated as a concurrent program: a persistent kernel
// written for one warpgroup (128 threads) with the K loop marked inside a
// tile loop becomes a block of 384 threads — a producer warpgroup and two
// consumer warpgroups that take the block's tiles in turn. The real pass
// output is executed op by op by agents (the producer's thread 0 and its
// 127 others, each consumer warpgroup's leader and its 127 others, or one
// agent per thread) and the TMA engine, interleaved by a scheduler. The
// model follows PTX as warp_specialize_test.go does (mbarrier phases,
// pending arrivals and transaction counts, try_wait.parity returning iff
// the current phase's parity differs from the operand, wgmma groups
// retired warpgroup-wide), with named barriers by their run-time id:
// nvvm.barrier %id, %n releases its threads when n have arrived at barrier
// id, a barrier id is always used with the same count, and gpu.barrier is
// barrier 0 over the whole block.
//
// Each block of a grid is simulated separately; block b's tiles are the
// tile loop's iterations in order (tile i of the block, i = 0, 1, ...),
// and the ring position of K step j of tile i is i*T + j (T the K loop's
// trip count), in the producer's order. Checks:
//
//   - no deadlock, for every schedule: producer first, consumers first,
//     round robin, two seeded random ones, one consumer warpgroup much
//     faster than the other (it runs whenever it can, the other only when
//     nothing else can) both ways, and a random one that rarely picks the
//     second consumer;
//   - the producer's p-th group of loads is ring position p: slot p mod N,
//     the coordinates of K step p mod T of tile p / T, on the phase p / N
//     of full[p mod N]; its k-th wait on empty[s] returns after exactly k
//     completed phases;
//   - consumer warpgroup w waits for exactly the positions of tiles w,
//     w+2, ... of its block, in order, each once and by no other
//     warpgroup; its wait for position g is on full[g mod N] and returns
//     after exactly g/N + 1 completed phases, holding the loads the
//     producer issued as position g;
//   - consumers read only landed data of their current position;
//   - every release (an arrival on empty[s]) is the releasing warpgroup's
//     own position, already read (by every one of its threads that reads
//     it) and with every wgmma group reading it complete; a position is
//     released exactly once (one leader arrival with wgmma readers, 128
//     thread arrivals with thread readers), all of them by the end — the
//     last slot of each tile included;
//   - no TMA write into a slot before the position it holds was released;
//   - the epilogue of warpgroup w runs once per tile of its own, in order,
//     after the tile's K loop, with the tile's coordinates, after every
//     wgmma group completed;
//   - a gpu.barrier inside the tile runs as named barrier 1 + w over 128
//     threads, and no generation of a named barrier inside a tile gathers
//     both consumer warpgroups; the one after the tile loop as barrier 3
//     over both consumers (256 threads);
//   - the roles: setmaxnreg decrease 40 / increase 232, only the producer
//     loads, only consumers read, arrive and run the epilogue.
//
// The ordered schedules (the sweep) never let a consumer start its wait
// for position g before the previous phase of full[g mod N] (position g-N,
// possibly the other warpgroup's) completed; see
// TestWarpSpecializePingpongBugParityAliasing for why.

// ppCase is one ping-pong kernel.
type ppCase struct {
	kind  string // "gemm" (wgmma readers) or "ew" (thread readers)
	n     int64  // tmac.stages
	trip  int64  // T, the K loop's trip count
	inner int    // K loop: 0: 0..T step 1; 1: 0..%U step 1; 2: 2..2+3T-1 step 3 (constants but 1)
	outer int    // tile loop: 0: 0..tiles step 1; 1: block id..tiles step grid; 2: %TL..%TU step %TS; 3: 1..2*tiles step 2
	tiles int64  // tile count (outer 0, 1, 3)
	grid  int64  // blocks (outer 1)
	// outer 2: the dynamic bounds
	tl, tu, ts int64
	kbar       bool // ew: a gpu.barrier in the K loop
	ebar       bool // a gpu.barrier in the tile's epilogue
	after      bool // a gpu.barrier after the tile loop
	accIn      bool // gemm: the accumulator is initialised in the tile loop
	mixed      bool // gemm: the threads also read the B tile
}

func (c ppCase) String() string {
	o := fmt.Sprintf("tiles 0..%d", c.tiles)
	switch c.outer {
	case 1:
		o = fmt.Sprintf("tiles bid..%d step grid=%d", c.tiles, c.grid)
	case 2:
		o = fmt.Sprintf("tiles %%TL=%d..%%TU=%d step %%TS=%d", c.tl, c.tu, c.ts)
	case 3:
		o = fmt.Sprintf("tiles 1..%d step 2", 2*c.tiles)
	}
	return fmt.Sprintf("pingpong %s n=%d T=%d inner=%d %s kbar=%v ebar=%v after=%v accIn=%v mixed=%v", c.kind, c.n, c.trip, c.inner, o, c.kbar, c.ebar, c.after, c.accIn, c.mixed)
}

func (c ppCase) blocks() []int64 {
	if c.outer != 1 {
		return []int64{0}
	}
	var bs []int64
	for b := int64(0); b < c.grid; b++ {
		bs = append(bs, b)
	}
	return bs
}

// tilesOf are the tile loop's iteration values in block b, in order.
func (c ppCase) tilesOf(b int64) []int64 {
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

func (c ppCase) stages() int64 {
	if c.inner == 1 {
		return c.n
	}
	return max(1, min(c.n, c.trip))
}

func (c ppCase) ivAt(j int64) int64 {
	if c.inner == 2 {
		return 2 + 3*j
	}
	return j
}

// coords are tile t's coordinates: gemm rows (t mod 3)*64 of A and D,
// columns (t div 3)*128 of B and D; ew rows t*32 of A, columns (t mod 5)*64
// of B.
func (c ppCase) coords(t int64) (row0, col0 int64) {
	if c.kind == "gemm" {
		return (t % 3) * 64, (t / 3) * 128
	}
	return t * 32, (t % 5) * 64
}

// expectedLoads are the box copies of K step j of tile t into slot slot.
func (c ppCase) expectedLoads(t, j, slot int64) []expLoad {
	iv := c.ivAt(j)
	row0, col0 := c.coords(t)
	if c.kind == "gemm" {
		return []expLoad{
			{0, fmt.Sprint([]int64{iv * 64, row0}), 0, slot * 8192},
			{1, fmt.Sprint([]int64{col0, iv * 64}), 1, slot * 16384},
			{1, fmt.Sprint([]int64{col0 + 64, iv * 64}), 1, slot*16384 + 8192},
		}
	}
	return []expLoad{
		{0, fmt.Sprint([]int64{iv * 64, row0}), 0, slot * 8192},
		{1, fmt.Sprint([]int64{col0, iv * 64}), 1, slot * 8192},
	}
}

func (c ppCase) loadsPer() int64 {
	if c.kind == "gemm" {
		return 3
	}
	return 2
}

// relWant is the number of arrivals that release one position.
func (c ppCase) relWant() int64 {
	if c.kind == "ew" {
		return 128
	}
	return 1
}

func (c ppCase) source() string {
	var b strings.Builder
	b.WriteString(`!atile = memref<64x64xf16, #gpu.address_space<workgroup>>
!btile = memref<64x64xf16, #gpu.address_space<workgroup>>
!bfull = memref<64x128xf16, #gpu.address_space<workgroup>>
!adesc = !nvgpu.tensormap.descriptor<tensor = !atile, swizzle = swizzle_128b, l2promo = none, oob = zero, interleave = none>
!bdesc = !nvgpu.tensormap.descriptor<tensor = !btile, swizzle = swizzle_128b, l2promo = none, oob = zero, interleave = none>
!acc = !nvgpu.warpgroup.accumulator<fragmented = vector<64x128xf32>>
!ft = memref<32x64xf32, #gpu.address_space<workgroup>>
!fdesc = !nvgpu.tensormap.descriptor<tensor = !ft, swizzle = none, l2promo = none, oob = zero, interleave = none>
module attributes {gpu.container_module} {
  gpu.module @m {
`)
	args := "%amap: !adesc, %bmap: !bdesc, %out: memref<1024x2048xf32>"
	if c.kind == "ew" {
		args = "%amap: !fdesc, %bmap: !fdesc, %out: memref<64x128xf32>"
	}
	fmt.Fprintf(&b, "    gpu.func @k(%s, %%U: index, %%TL: index, %%TU: index, %%TS: index) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {\n", args)
	fmt.Fprintf(&b, `      %%c0 = arith.constant 0 : index
      %%c1 = arith.constant 1 : index
      %%c2 = arith.constant 2 : index
      %%c3 = arith.constant 3 : index
      %%c5 = arith.constant 5 : index
      %%c32 = arith.constant 32 : index
      %%c64 = arith.constant 64 : index
      %%c128 = arith.constant 128 : index
      %%bx = gpu.block_id x
      %%tx = gpu.thread_id x
      %%ntiles = arith.constant %d : index
      %%grid = arith.constant %d : index
      %%tub = arith.constant %d : index
`, c.tiles, max(c.grid, 1), 2*c.tiles)
	tlb, tub, tst := "%c0", "%ntiles", "%c1"
	switch c.outer {
	case 1:
		tlb, tst = "%bx", "%grid"
	case 2:
		tlb, tub, tst = "%TL", "%TU", "%TS"
	case 3:
		tlb, tub, tst = "%c1", "%tub", "%c2"
	}
	klb, kub, kst := "%c0", "%kub", "%c1"
	switch c.inner {
	case 0:
		fmt.Fprintf(&b, "      %%kub = arith.constant %d : index\n", c.trip)
	case 1:
		kub = "%U"
	case 2:
		fmt.Fprintf(&b, "      %%kub = arith.constant %d : index\n", 2+3*c.trip-1)
		klb, kst = "%c2", "%c3"
	}
	attrs := fmt.Sprintf(`{tmac.stages = %d : i64, tmac.warp_specialize = "pingpong"}`, c.n)
	ebar, after := "", ""
	if c.ebar {
		ebar = "        gpu.barrier\n"
	}
	if c.after {
		after = "      gpu.barrier\n"
	}
	switch c.kind {
	case "gemm":
		accTop, accIn, mixed := "      %acc0 = nvgpu.warpgroup.mma.init.accumulator -> !acc\n", "", ""
		if c.accIn {
			accTop, accIn = "", "        %acc0 = nvgpu.warpgroup.mma.init.accumulator -> !acc\n"
		}
		if c.mixed {
			mixed = "          %e = memref.load %bs[%c0, %c0] : !bfull\n"
		}
		fmt.Fprintf(&b, `      %%as = memref.alloc() : !atile
      %%bs = memref.alloc() : !bfull
%s      scf.for %%t = %s to %s step %s {
%s        %%tm = arith.remui %%t, %%c3 : index
        %%tn = arith.divui %%t, %%c3 : index
        %%row0 = arith.muli %%tm, %%c64 : index
        %%col0 = arith.muli %%tn, %%c128 : index
        %%res = scf.for %%k = %s to %s step %s iter_args(%%acc = %%acc0) -> (!acc) {
          %%kk = arith.muli %%k, %%c64 : index
          tmac.tma.load %%amap[%%kk, %%row0] to %%as : !adesc -> !atile
          tmac.tma.load %%bmap[%%col0, %%kk] to %%bs : !bdesc -> !bfull
          tmac.tma.wait %%as, %%bs : !atile, !bfull
          %%da = nvgpu.warpgroup.generate.descriptor %%as, %%amap : !atile, !adesc -> !nvgpu.warpgroup.descriptor<tensor = !atile>
          %%db = nvgpu.warpgroup.generate.descriptor %%bs, %%bmap : !bfull, !bdesc -> !nvgpu.warpgroup.descriptor<tensor = !bfull>
          %%nacc = nvgpu.warpgroup.mma %%da, %%db, %%acc {transposeB} : !nvgpu.warpgroup.descriptor<tensor = !atile>, !nvgpu.warpgroup.descriptor<tensor = !bfull>, !acc -> !acc
%s          scf.yield %%nacc : !acc
        } %s
%s        %%dsub = memref.subview %%out[%%row0, %%col0] [64, 128] [1, 1] : memref<1024x2048xf32> to memref<64x128xf32, strided<[2048, 1], offset: ?>>
        nvgpu.warpgroup.mma.store %%res, %%dsub : !acc to memref<64x128xf32, strided<[2048, 1], offset: ?>>
      }
%s`, accTop, tlb, tub, tst, accIn, klb, kub, kst, mixed, attrs, ebar, after)
	case "ew":
		kbar := ""
		if c.kbar {
			kbar = "          gpu.barrier\n"
		}
		fmt.Fprintf(&b, `      %%zero = arith.constant 0.000000e+00 : f32
      %%as = memref.alloc() : !ft
      %%bs = memref.alloc() : !ft
      %%r = arith.divui %%tx, %%c64 : index
      %%cc = arith.remui %%tx, %%c64 : index
      scf.for %%t = %s to %s step %s {
        %%row0 = arith.muli %%t, %%c32 : index
        %%tm = arith.remui %%t, %%c5 : index
        %%col0 = arith.muli %%tm, %%c64 : index
        %%res = scf.for %%k = %s to %s step %s iter_args(%%s = %%zero) -> (f32) {
          %%x = arith.muli %%k, %%c64 : index
          tmac.tma.load %%amap[%%x, %%row0] to %%as : !fdesc -> !ft
          tmac.tma.load %%bmap[%%col0, %%x] to %%bs : !fdesc -> !ft
          tmac.tma.wait %%as, %%bs : !ft, !ft
          %%va = memref.load %%as[%%r, %%cc] : !ft
%s          %%vb = memref.load %%bs[%%r, %%cc] : !ft
          %%p = arith.addf %%va, %%vb : f32
          %%s1 = arith.addf %%s, %%p : f32
          scf.yield %%s1 : f32
        } %s
%s        memref.store %%res, %%out[%%t, %%tx] : memref<64x128xf32>
      }
%s`, tlb, tub, tst, klb, kub, kst, kbar, attrs, ebar, after)
	}
	b.WriteString("      gpu.return\n    }\n  }\n}\n")
	return b.String()
}

// ppRec is one TMA box in a ring.
type ppRec struct {
	ring    ir.Value
	lo, hi  int64
	bar     wsBarKey
	phase   int64
	pos     int64 // the producer's ring position
	load    expLoad
	landed  bool
	readers map[int64]bool  // warpgroups (wgmma) and 1000 + agent id (threads)
	groups  map[int64]int64 // warpgroup -> the last wgmma group reading it
}

type ppMBar struct {
	count, pending, tx int64
	completed          int64
	expect, issued     int64
	inflight           int
	loads              map[int64][]*ppRec // by phase
}

// ppSync is a named barrier (gpu.barrier: id 0 over the block).
type ppSync struct {
	expected, arrived, gen int64
	members                map[int64]bool // hardware warpgroups in the current generation
}

type ppAgent struct {
	id        int
	tid       int64
	mult      int64
	env       map[ir.Value]int64
	views     map[ir.Value]simView
	gviews    map[ir.Value][2]int64 // subviews of the output: their offsets
	stack     []*wsFrame
	done      bool
	committed int64
	inMMA     bool
	arrivedAt map[int64]int64
	waits     map[wsBarKey]int64 // producer: waits per empty barrier
	fullWaits int                // consumers: full waits so far
	pos       int64              // the current ring position (-1: none)
	setmax    []string
	epis      int
}

func (a *ppAgent) producer() bool { return a.tid < 128 }
func (a *ppAgent) wg() int64      { return (a.tid - 128) / 128 }

type ppSim struct {
	c       ppCase
	block   int64
	tiles   []int64
	T, N    int64
	k       *ir.Operation
	agents  []*ppAgent
	rings   []ir.Value
	recs    map[ir.Value][]*ppRec // the rings' current contents
	groups  []ir.Value            // mbarrier groups in creation order: full, empty
	bars    map[wsBarKey]*ppMBar
	syncs   map[int64]*ppSync
	engine  []*ppRec
	wgDone  map[int64]int64
	issued  int64 // the producer's box loads
	owner   map[int64]int64
	posRecs map[int64][]*ppRec
	relArr  map[int64]int64
	slotPos map[int64]int64
	policy  string
	ordered bool
	lax     bool // no check of the named barriers' ids and counts (only the behaviour)
	rnd     *rand.Rand
	rr      int
	blockSz int64
	cur     *ppAgent
	seqs    [2][]int64
	// minIssued: the fewest wgmma groups an agent of each warpgroup issued
	minIssued [2]int64
}

// seq are the ring positions consumer warpgroup w waits for, in order.
func (s *ppSim) seq(w int64) []int64 {
	if s.seqs[w] != nil {
		return s.seqs[w]
	}
	g := []int64{}
	for i := w; i < int64(len(s.tiles)); i += 2 {
		for j := int64(0); j < s.T; j++ {
			g = append(g, i*s.T+j)
		}
	}
	s.seqs[w] = g
	return g
}

// myTiles are the tiles of consumer warpgroup w, in order.
func (s *ppSim) myTiles(w int64) []int64 {
	var ts []int64
	for i := w; i < int64(len(s.tiles)); i += 2 {
		ts = append(ts, s.tiles[i])
	}
	return ts
}

func (s *ppSim) fail(op *ir.Operation, format string, a ...any) {
	who := "the TMA engine"
	if s.cur != nil {
		who = fmt.Sprintf("thread %d (x%d, position %d)", s.cur.tid, s.cur.mult, s.cur.pos)
		if !s.cur.producer() {
			who = fmt.Sprintf("warpgroup %d %s", s.cur.wg(), who)
		}
	}
	name := ""
	if op != nil {
		name = "at " + op.Name() + " "
	}
	panic(wsSimError(fmt.Sprintf("%s%s: %s", name, who, fmt.Sprintf(format, a...))))
}

func (s *ppSim) val(a *ppAgent, op *ir.Operation, v ir.Value) int64 {
	if c, ok := a.env[v]; ok {
		return c
	}
	if c, ok := arith.ConstantInt(v); ok {
		if ir.BitWidth(v.Type()) == 1 {
			c &= 1
		}
		return c
	}
	s.fail(op, "unknown value")
	return 0
}

func (s *ppSim) groupName(g ir.Value) string {
	for i, x := range s.groups {
		if x == g {
			return [...]string{"full", "empty"}[min(i, 1)]
		}
	}
	return "unknown"
}

func (s *ppSim) bar(a *ppAgent, op *ir.Operation, want string) (wsBarKey, *ppMBar) {
	k := wsBarKey{op.OperandNamed("barriers"), s.val(a, op, op.OperandNamed("mbarId"))}
	if got := s.groupName(k.group); got != want {
		s.fail(op, "uses the %s barriers, not the %s ones", got, want)
	}
	b := s.bars[k]
	if b == nil {
		s.fail(op, "%s barrier %d used before its initialisation is visible", want, k.idx)
	}
	return k, b
}

func (s *ppSim) arrive(op *ir.Operation, k wsBarKey, b *ppMBar, n int64) {
	for i := int64(0); i < n; i++ {
		if b.pending == 0 {
			s.fail(op, "arrival on %s barrier %d whose phase %d has all its arrivals (more arrivals than its count %d)", s.groupName(k.group), k.idx, b.completed, b.count)
		}
		b.pending--
		s.tryComplete(op, k, b)
	}
}

func (s *ppSim) tryComplete(op *ir.Operation, k wsBarKey, b *ppMBar) {
	if b.pending != 0 || b.tx != 0 {
		return
	}
	if b.inflight > 0 {
		s.fail(op, "phase %d of %s barrier %d completes while %d of its loads are in flight", b.completed, s.groupName(k.group), k.idx, b.inflight)
	}
	if b.expect != b.issued {
		s.fail(op, "phase %d of barrier %d expected %d bytes, its loads bring %d", b.completed, k.idx, b.expect, b.issued)
	}
	b.completed++
	b.pending = b.count
	b.expect, b.issued = 0, 0
}

// threadRead says whether the threads read box r (not only wgmma).
func (s *ppSim) threadRead(r *ppRec) bool {
	return s.c.kind == "ew" || (s.c.mixed && s.ringIndex(r.ring) == 1)
}

// unread explains why box r is not done with by the readers in who ("" if
// it is): warpgroup w's wgmma and, for boxes the threads read, the agents
// of w (all of them, or only agent only when only >= 0).
func (s *ppSim) unread(r *ppRec, w int64, only int) string {
	if s.c.kind == "gemm" {
		if !r.readers[w] {
			return fmt.Sprintf("warpgroup %d's wgmma has not read it", w)
		}
		if g := r.groups[w]; g >= s.wgDone[w] {
			return fmt.Sprintf("the wgmma group %d of warpgroup %d reading it may still be running (%d completed)", g, w, s.wgDone[w])
		}
	}
	if s.threadRead(r) {
		for _, a := range s.agents {
			if a.producer() || a.wg() != w || (only >= 0 && a.id != only) {
				continue
			}
			if !r.readers[1000+int64(a.id)] {
				return fmt.Sprintf("thread %d (x%d) of warpgroup %d has not read it", a.tid, a.mult, w)
			}
		}
	}
	return ""
}

func (s *ppSim) read(a *ppAgent, op *ir.Operation, v simView, async bool) {
	if a.producer() {
		s.fail(op, "the producer reads a tile")
	}
	if v.ring == nil {
		s.fail(op, "reads a tile that is not a ring view")
	}
	covered := int64(0)
	for _, r := range s.recs[v.ring] {
		if !(r.lo < v.off+v.size && v.off < r.hi) {
			continue
		}
		if !r.landed {
			s.fail(op, "reads ring bytes [%d, %d) whose TMA load (position %d) has not landed", r.lo, r.hi, r.pos)
		}
		if r.pos != a.pos || a.pos < 0 {
			s.fail(op, "reads data of ring position %d at position %d", r.pos, a.pos)
		}
		if s.bars[r.bar].completed <= r.phase {
			s.fail(op, "reads data whose phase %d of barrier %d has not completed", r.phase, r.bar.idx)
		}
		who := 1000 + int64(a.id)
		if async {
			who = a.wg()
			r.groups[who] = max(r.groups[who], a.committed)
		}
		r.readers[who] = true
		covered += min(r.hi, v.off+v.size) - max(r.lo, v.off)
	}
	if covered != v.size {
		s.fail(op, "reads %d bytes of which %d were loaded", v.size, covered)
	}
}

// wgIssued: every agent of warpgroup w has issued at least n groups (the
// minimum is computed once per scheduling step).
func (s *ppSim) wgIssued(w, n int64) bool { return s.minIssued[w] >= n }

func (s *ppSim) updateIssued() {
	s.minIssued = [2]int64{1 << 62, 1 << 62}
	for _, o := range s.agents {
		if !o.producer() {
			s.minIssued[o.wg()] = min(s.minIssued[o.wg()], o.committed)
		}
	}
}

func (s *ppSim) retire(a *ppAgent, keep int64) {
	if n := a.committed - keep; n > s.wgDone[a.wg()] {
		s.wgDone[a.wg()] = n
	}
}

func (s *ppSim) syncID(a *ppAgent, op *ir.Operation) (id, n int64) {
	if op.Name() == "nvvm.barrier" || op.Name() == "nvvm.barrier.arrive" {
		return s.val(a, op, op.Operand(0)), s.val(a, op, op.Operand(1))
	}
	return 0, s.blockSz
}

// ppOrderBarrier reports whether named barrier id orders the consumers'
// K loops (4 + w: warpgroup w syncs on it, the other one arrives).
func ppOrderBarrier(id int64) bool { return id == 4 || id == 5 }

// blocked explains why agent a cannot run its next op ("" if it can); when
// why is false the explanation is only "blocked".
func (s *ppSim) blocked(a *ppAgent, why bool) string {
	f := a.stack[len(a.stack)-1]
	op := f.next
	switch op.Name() {
	case "nvgpu.mbarrier.try_wait.parity":
		// operands: barriers, phaseParity, ticks, mbarId
		k := wsBarKey{op.Operand(0), s.val(a, op, op.Operand(3))}
		b := s.bars[k]
		if b == nil {
			return ""
		}
		p := s.val(a, op, op.Operand(1))
		if b.completed&1 == p {
			if !why {
				return "blocked"
			}
			return fmt.Sprintf("try_wait.parity %d on %s barrier %d (%d phases completed, pending %d, tx %d)", p, s.groupName(k.group), k.idx, b.completed, b.pending, b.tx)
		}
		if s.ordered && !a.producer() && s.groupName(k.group) == "full" {
			if sq := s.seq(a.wg()); a.fullWaits < len(sq) && b.completed < sq[a.fullWaits]/s.N {
				g := sq[a.fullWaits]
				if !why {
					return "blocked"
				}
				return fmt.Sprintf("(ordered schedule) waits for position %d until position %d's phase of full barrier %d completed (%d phases completed)", g, g-s.N, k.idx, b.completed)
			}
		}
	case "gpu.barrier", "nvvm.barrier":
		id, _ := s.syncID(a, op)
		if g, ok := a.arrivedAt[id]; ok && s.syncs[id].gen == g {
			if !why {
				return "blocked"
			}
			return fmt.Sprintf("%s %d (%d of %d arrived)", op.Name(), id, s.syncs[id].arrived, s.syncs[id].expected)
		}
	case "nvgpu.warpgroup.mma":
		if a.inMMA && !s.wgIssued(a.wg(), a.committed-op.IntAttrOf("waitGroup", 1)) {
			return "wgmma wait_group: other threads of the warpgroup have not issued the groups"
		}
	case "nvvm.wgmma.wait.group.sync.aligned":
		if !s.wgIssued(a.wg(), a.committed-op.IntAttrOf("group", -1)) {
			return "wgmma wait_group: other threads of the warpgroup have not issued the groups"
		}
	}
	return ""
}

func (s *ppSim) push(a *ppAgent, blk *ir.Block, loop *ir.Operation) *wsFrame {
	f := &wsFrame{blk: blk, next: blk.First(), loop: loop}
	a.stack = append(a.stack, f)
	return f
}

// inTile says whether agent a runs inside a loop (a consumer: its tile
// loop).
func (a *ppAgent) inTile() bool {
	for _, f := range a.stack {
		if f.loop != nil {
			return true
		}
	}
	return false
}

// epilogue checks the e-th epilogue of consumer agent a: tile t's
// coordinates (row0, col0) or, ew, tile t itself (row0).
func (s *ppSim) epilogue(a *ppAgent, op *ir.Operation, row0, col0 int64) {
	if a.producer() {
		s.fail(op, "the producer runs the epilogue")
	}
	mine := s.myTiles(a.wg())
	if a.epis >= len(mine) {
		s.fail(op, "runs the epilogue of a %d-th tile; its tiles are %v", a.epis+1, mine)
	}
	t := mine[a.epis]
	want := [2]int64{t, 0}
	if s.c.kind == "gemm" {
		r, c := s.c.coords(t)
		want = [2]int64{r, c}
	}
	if got := [2]int64{row0, col0}; got != want {
		s.fail(op, "epilogue %d has coordinates %v, want %v (tile %d; its tiles are %v)", a.epis, got, want, t, mine)
	}
	if a.fullWaits != (a.epis+1)*int(s.T) {
		s.fail(op, "epilogue of tile %d after %d K steps, want %d", t, a.fullWaits, (a.epis+1)*int(s.T))
	}
	a.epis++
}

func (s *ppSim) step(a *ppAgent) {
	s.cur = a
	f := a.stack[len(a.stack)-1]
	op := f.next
	advance := true
	switch op.Name() {
	case "gpu.thread_id":
		if gpu.DimOf(op.Attr("dimension")) == "x" {
			a.env[op.Result(0)] = a.tid
		} else {
			a.env[op.Result(0)] = 0
		}
	case "gpu.block_id":
		a.env[op.Result(0)] = s.block
	case "gpu.block_dim":
		s.fail(op, "gpu.block_dim left in the kernel")
	case "memref.alloc":
		t := op.Result(0).Type().(*ir.MemRefType)
		if t.Rank() != 1 || t.ElementType() != ir.Type(ir.I8) {
			s.fail(op, "a tile allocation is left")
		}
		if a.id == 0 {
			s.rings = append(s.rings, op.Result(0))
		}
	case "memref.view":
		t := op.Result(0).Type().(*ir.MemRefType)
		a.views[op.Result(0)] = simView{op.Operand(0), s.val(a, op, op.Operand(1)), tmacTileBytes(t)}
	case "memref.subview":
		if _, ok := a.views[op.Operand(0)]; ok {
			s.fail(op, "unexpected subview of a ring")
		}
		offs := op.Attr("static_offsets").(*ir.DenseArrayAttr).Ints
		dyn := op.OperandGroup("offsets")
		var o [2]int64
		d := 0
		for i := range offs {
			if offs[i] == ir.Dynamic {
				o[i] = s.val(a, op, dyn[d])
				d++
			} else {
				o[i] = offs[i]
			}
		}
		a.gviews[op.Result(0)] = o
	case "nvgpu.warpgroup.generate.descriptor":
		a.views[op.Result(0)] = a.views[op.Operand(0)]
	case "nvgpu.warpgroup.mma.init.accumulator", "arith.addf":
	case "nvgpu.mbarrier.create":
		if a.id == 0 {
			s.groups = append(s.groups, op.Result(0))
		}
	case "nvgpu.mbarrier.init":
		k := wsBarKey{op.OperandNamed("barriers"), s.val(a, op, op.OperandNamed("mbarId"))}
		if s.bars[k] != nil {
			s.fail(op, "barrier %d initialised twice", k.idx)
		}
		n := s.val(a, op, op.OperandNamed("count"))
		s.bars[k] = &ppMBar{count: n, pending: n, loads: map[int64][]*ppRec{}}
	case "nvvm.setmaxregister":
		act := "increase"
		if strings.Contains(op.Attr("action").String(), "decrease") {
			act = "decrease"
		}
		a.setmax = append(a.setmax, fmt.Sprintf("%s %d", act, op.IntAttrOf("regCount", 0)))
	case "nvgpu.mbarrier.try_wait.parity":
		if a.producer() {
			k, b := s.bar(a, op, "empty")
			n := a.waits[k]
			a.waits[k]++
			if msg := recordedWaitError(s.k, k.group, n*s.N+k.idx, s.val(a, op, op.OperandNamed("phaseParity"))); msg != "" {
				s.fail(op, "%s", msg)
			}
			if b.completed != n {
				s.fail(op, "wait %d of the producer on empty barrier %d returned after %d completed phases, not %d", n, k.idx, b.completed, n)
			}
			break
		}
		k, b := s.bar(a, op, "full")
		w := a.wg()
		sq := s.seq(w)
		if a.fullWaits >= len(sq) {
			s.fail(op, "waits for a %d-th ring position; warpgroup %d's tiles %v have %d", a.fullWaits+1, w, s.myTiles(w), len(sq))
		}
		g := sq[a.fullWaits]
		a.fullWaits++
		a.pos = g
		if msg := recordedWaitError(s.k, k.group, g, s.val(a, op, op.OperandNamed("phaseParity"))); msg != "" {
			s.fail(op, "%s", msg)
		}
		if k.idx != g%s.N {
			s.fail(op, "ring position %d waits on full barrier %d, not %d", g, k.idx, g%s.N)
		}
		if b.completed != g/s.N+1 {
			s.fail(op, "the wait for ring position %d on full barrier %d returned after %d completed phases, not %d (position %d's phase)", g, k.idx, b.completed, g/s.N+1, g)
		}
		if o, ok := s.owner[g]; ok && o != w {
			s.fail(op, "ring position %d is waited for by warpgroups %d and %d", g, o, w)
		}
		s.owner[g] = w
		var got []expLoad
		for _, r := range b.loads[g/s.N] {
			if r.pos != g {
				s.fail(op, "the phase waited for as ring position %d holds the producer's position %d", g, r.pos)
			}
			got = append(got, r.load)
		}
		i := g / s.T
		want := s.c.expectedLoads(s.tiles[i], g%s.T, g%s.N)
		sort.Slice(got, func(i, j int) bool { return got[i].String() < got[j].String() })
		sort.Slice(want, func(i, j int) bool { return want[i].String() < want[j].String() })
		if fmt.Sprint(got) != fmt.Sprint(want) {
			s.fail(op, "ring position %d (tile %d, K step %d) got loads %v, want %v", g, s.tiles[i], g%s.T, got, want)
		}
	case "nvgpu.mbarrier.arrive.expect_tx":
		if !a.producer() || a.mult != 1 {
			s.fail(op, "expect_tx outside the producer's elected thread")
		}
		k, b := s.bar(a, op, "full")
		n := s.val(a, op, op.OperandNamed("txcount"))
		b.tx += n
		b.expect += n
		s.arrive(op, k, b, 1)
	case "nvgpu.mbarrier.arrive":
		if a.producer() {
			s.fail(op, "the producer arrives on a barrier")
		}
		k, b := s.bar(a, op, "empty")
		if msg := recordedReleaseError(s.k, k.group, a.pos, k.idx, s.T); msg != "" {
			s.fail(op, "%s", msg)
		}
		s.release(a, op, k.idx)
		s.arrive(op, k, b, a.mult)
	case "nvgpu.tma.async.load":
		if !a.producer() || a.mult != 1 {
			s.fail(op, "TMA load outside the producer's elected thread")
		}
		k, b := s.bar(a, op, "full")
		p := s.issued / s.c.loadsPer()
		s.issued++
		if k.idx != p%s.N {
			s.fail(op, "the loads of ring position %d signal full barrier %d, not %d", p, k.idx, p%s.N)
		}
		if b.completed != p/s.N {
			s.fail(op, "the loads of ring position %d are issued in phase %d of full barrier %d, not %d", p, b.completed, k.idx, p/s.N)
		}
		v := a.views[op.OperandNamed("dst")]
		var keep []*ppRec
		for _, r := range s.recs[v.ring] {
			if r.hi <= v.off || v.off+v.size <= r.lo {
				keep = append(keep, r)
				continue
			}
			why := ""
			if o, ok := s.owner[r.pos]; !ok {
				why = "no consumer has waited for it"
			} else if n := s.relArr[r.pos]; n != s.c.relWant() {
				why = fmt.Sprintf("%d of %d release arrivals", n, s.c.relWant())
			} else {
				why = s.unread(r, o, -1)
			}
			if why != "" {
				s.fail(op, "TMA write of ring position %d into ring %d bytes [%d, %d) holding ring position %d's data before it was released: %s", p, s.ringIndex(v.ring), v.off, v.off+v.size, r.pos, why)
			}
		}
		var cs []int64
		for _, c := range op.OperandGroup("coordinates") {
			cs = append(cs, s.val(a, op, c))
		}
		desc := -1
		if ba, ok := op.OperandNamed("tensorMapDescriptor").(*ir.BlockArgument); ok {
			desc = ba.Index()
		}
		rec := &ppRec{ring: v.ring, lo: v.off, hi: v.off + v.size, bar: k, phase: b.completed, pos: p,
			load: expLoad{desc, fmt.Sprint(cs), s.ringIndex(v.ring), v.off}, readers: map[int64]bool{}, groups: map[int64]int64{}}
		s.recs[v.ring] = append(keep, rec)
		s.posRecs[p] = append(s.posRecs[p], rec)
		s.slotPos[k.idx] = p
		b.loads[b.completed] = append(b.loads[b.completed], rec)
		b.issued += v.size
		b.inflight++
		s.engine = append(s.engine, rec)
	case "nvgpu.warpgroup.mma":
		if !a.inMMA {
			s.read(a, op, a.views[op.OperandNamed("descriptorA")], true)
			s.read(a, op, a.views[op.OperandNamed("descriptorB")], true)
			a.committed++
			a.inMMA = true
			advance = false
			break
		}
		a.inMMA = false
		s.retire(a, op.IntAttrOf("waitGroup", 1))
	case "nvvm.wgmma.wait.group.sync.aligned":
		if a.producer() {
			s.fail(op, "the producer waits for wgmma groups")
		}
		s.retire(a, op.IntAttrOf("group", -1))
	case "nvgpu.warpgroup.mma.store":
		if a.producer() {
			s.fail(op, "the producer runs the epilogue")
		}
		if s.wgDone[a.wg()] < a.committed {
			s.fail(op, "stores the accumulators with %d of %d wgmma groups completed", s.wgDone[a.wg()], a.committed)
		}
		o, ok := a.gviews[op.Operand(1)]
		if !ok {
			s.fail(op, "stores to an unknown view")
		}
		s.epilogue(a, op, o[0], o[1])
	case "memref.load":
		s.read(a, op, a.views[op.Operand(0)], false)
	case "memref.store":
		if a.producer() {
			s.fail(op, "the producer runs the epilogue")
		}
		t, x := s.val(a, op, op.Operand(2)), s.val(a, op, op.Operand(3))
		if want := (a.tid - 128) % 128; x != want {
			s.fail(op, "stores at thread index %d, want the program's thread id %d", x, want)
		}
		s.epilogue(a, op, t, 0)
	case "gpu.barrier", "nvvm.barrier":
		s.sync(a, op)
		advance = false
	case "nvvm.barrier.arrive":
		s.arriveOnly(a, op)
	case "scf.if":
		f.next = op.Next()
		if s.val(a, op, op.Operand(0)) != 0 {
			s.push(a, op.Region(0).Entry(), nil)
		} else if op.NumRegions() > 1 && !op.Region(1).Empty() {
			s.push(a, op.Region(1).Entry(), nil)
		}
		return
	case "scf.for":
		f.next = op.Next()
		lb, ub, st := s.val(a, op, op.Operand(0)), s.val(a, op, op.Operand(1)), s.val(a, op, op.Operand(2))
		if lb >= ub {
			return
		}
		body := op.Region(0).Entry()
		nf := s.push(a, body, op)
		nf.iv, nf.ub, nf.step = lb, ub, st
		a.env[body.Arg(0)] = lb
		for i := 1; i < body.NumArgs(); i++ {
			if isIntLike(body.Arg(i).Type()) {
				a.env[body.Arg(i)] = s.val(a, op, op.Operand(2+i))
			}
		}
		return
	case "scf.yield":
		if f.loop != nil {
			body := f.blk
			vals := map[int]int64{}
			for i := 1; i < body.NumArgs(); i++ {
				if isIntLike(body.Arg(i).Type()) {
					vals[i] = s.val(a, op, op.Operand(i-1))
				}
			}
			f.iv += f.step
			if f.iv < f.ub {
				a.env[body.Arg(0)] = f.iv
				for i, v := range vals {
					a.env[body.Arg(i)] = v
				}
				f.next = body.First()
				return
			}
		}
		a.stack = a.stack[:len(a.stack)-1]
		return
	case "gpu.return":
		a.done = true
		return
	default:
		if op.NumResults() != 1 || op.NumRegions() != 0 {
			s.fail(op, "unexpected op")
		}
		if !isIntLike(op.Result(0).Type()) {
			break
		}
		x := make([]int64, op.NumOperands())
		for i, v := range op.Operands() {
			x[i] = s.val(a, op, v)
		}
		r, ok := evalWS(op, x)
		if !ok {
			s.fail(op, "cannot evaluate")
		}
		if ir.BitWidth(op.Result(0).Type()) == 1 {
			r &= 1
		}
		a.env[op.Result(0)] = r
	}
	if advance {
		f.next = op.Next()
	}
}

// release checks an arrival of consumer agent a on empty[slot]: the slot
// holds a position of a's warpgroup that a (or, with one leader arrival,
// the whole warpgroup) is done with, released no more than once.
func (s *ppSim) release(a *ppAgent, op *ir.Operation, slot int64) {
	w := a.wg()
	g, ok := s.slotPos[slot]
	if !ok {
		s.fail(op, "releases slot %d before anything was loaded into it", slot)
	}
	o, ok := s.owner[g]
	if !ok {
		s.fail(op, "releases slot %d holding ring position %d, which no consumer has waited for", slot, g)
	}
	if o != w {
		s.fail(op, "releases slot %d holding ring position %d of warpgroup %d", slot, g, o)
	}
	only := -1
	if s.c.relWant() > 1 {
		only = a.id // every thread releases what it read itself
	}
	for _, r := range s.posRecs[g] {
		if why := s.unread(r, w, only); why != "" {
			s.fail(op, "releases ring position %d (slot %d) too early: %s", g, slot, why)
		}
	}
	s.relArr[g] += a.mult
	if s.relArr[g] > s.c.relWant() {
		s.fail(op, "ring position %d (slot %d) released by %d arrivals, more than once (%d)", g, slot, s.relArr[g], s.c.relWant())
	}
}

// sync runs agent a's gpu.barrier / nvvm.barrier.
// namedBarrier is barrier id, created with n expected threads on first use
// (a barrier id is always used with the same count).
func (s *ppSim) namedBarrier(op *ir.Operation, id, n int64) *ppSync {
	sy := s.syncs[id]
	if sy == nil {
		sy = &ppSync{expected: n, members: map[int64]bool{}}
		s.syncs[id] = sy
	}
	if sy.expected != n {
		s.fail(op, "barrier %d used with %d and %d threads", id, sy.expected, n)
	}
	return sy
}

// count adds agent a's threads to barrier id's arrivals and releases the
// barrier's current generation once all expected threads have arrived.
func (s *ppSim) count(a *ppAgent, op *ir.Operation, id int64, sy *ppSync) {
	sy.arrived += a.mult
	if sy.arrived > sy.expected {
		s.fail(op, "%d threads arrive at barrier %d of %d", sy.arrived, id, sy.expected)
	}
	if sy.arrived == sy.expected {
		sy.arrived = 0
		sy.gen++
		sy.members = map[int64]bool{}
	}
}

func (s *ppSim) sync(a *ppAgent, op *ir.Operation) {
	id, n := s.syncID(a, op)
	sy := s.namedBarrier(op, id, n)
	if g, ok := a.arrivedAt[id]; ok {
		if sy.gen == g {
			s.fail(op, "stepped while blocked")
		}
		delete(a.arrivedAt, id)
		a.stack[len(a.stack)-1].next = op.Next()
		return
	}
	if op.Name() == "nvvm.barrier" && s.lax {
		if a.producer() {
			s.fail(op, "the producer reaches a consumers' named barrier")
		}
	} else if op.Name() == "nvvm.barrier" {
		if a.producer() {
			s.fail(op, "the producer reaches a consumers' named barrier")
		}
		w := a.wg()
		if a.inTile() && ppOrderBarrier(id) {
			if id != 4+w || n != 256 {
				s.fail(op, "warpgroup %d waits for its turn on named barrier %d over %d threads, not %d over 256", w, id, n, 4+w)
			}
		} else if a.inTile() {
			if id != 1+w || n != 128 {
				s.fail(op, "a barrier inside warpgroup %d's tile is named barrier %d over %d threads, not %d over 128", w, id, n, 1+w)
			}
		} else if id != 3 || n != 256 {
			s.fail(op, "a barrier of the consumers after their tiles is named barrier %d over %d threads, not 3 over 256", id, n)
		}
	} else if id != 0 || n != s.blockSz || a.inTile() {
		s.fail(op, "gpu.barrier left in the consumers' code")
	}
	hw := a.tid / 128
	sy.members[hw] = true
	if a.inTile() && sy.members[1] && sy.members[2] && !ppOrderBarrier(id) {
		s.fail(op, "consumer warpgroups 0 and 1 wait on each other's named barrier %d inside their tiles", id)
	}
	a.arrivedAt[id] = sy.gen
	s.count(a, op, id, sy)
}

// arriveOnly is nvvm.barrier.arrive: warpgroup w's threads count towards
// the other warpgroup's order barrier (5 - w) without waiting.
func (s *ppSim) arriveOnly(a *ppAgent, op *ir.Operation) {
	id, n := s.syncID(a, op)
	if a.producer() || !a.inTile() {
		s.fail(op, "a named-barrier arrival outside a consumer's tile")
	}
	if w := a.wg(); id != 5-w || n != 256 {
		s.fail(op, "warpgroup %d hands the turn over on named barrier %d over %d threads, not %d over 256", w, id, n, 5-w)
	}
	s.count(a, op, id, s.namedBarrier(op, id, n))
}

func (s *ppSim) ringIndex(r ir.Value) int {
	for i, x := range s.rings {
		if x == r {
			return i
		}
	}
	return -1
}

func (s *ppSim) land(i int) {
	s.cur = nil
	r := s.engine[i]
	s.engine = append(s.engine[:i], s.engine[i+1:]...)
	b := s.bars[r.bar]
	if b.completed != r.phase {
		s.fail(nil, "a load of phase %d of barrier %d lands in phase %d", r.phase, r.bar.idx, b.completed)
	}
	r.landed = true
	b.tx -= r.hi - r.lo
	b.inflight--
	s.tryComplete(nil, r.bar, b)
}

// ppPolicies are the schedules: beyond those of warp_specialize_test.go,
// one consumer warpgroup much faster than the other (it runs whenever it
// can; the other only when nothing else can), both ways, and a random one
// that picks the second consumer rarely.
var ppPolicies = []string{"producer-first", "consumers-first", "round-robin", "random-1", "random-2", "wg0-fast", "wg1-fast", "skewed-random"}

var ppRanks = map[string][4]int{
	"producer-first":  {0, 1, 2, 2},
	"consumers-first": {2, 1, 0, 0},
	"wg0-fast":        {1, 2, 0, 3},
	"wg1-fast":        {1, 2, 3, 0},
}

// rank orders the ready agents for the priority schedules (-1: the TMA
// engine; lower first).
func (s *ppSim) rank(i int) int {
	role := 1 // the engine
	if i >= 0 {
		a := s.agents[i]
		switch {
		case a.producer():
			role = 0
		case a.wg() == 0:
			role = 2
		default:
			role = 3
		}
	}
	return ppRanks[s.policy][role]
}

func (s *ppSim) run() {
	for steps := 0; ; steps++ {
		if steps > 5_000_000 {
			s.fail(nil, "no termination after %d steps", steps)
		}
		var ready []int
		allDone := true
		s.updateIssued()
		for i, a := range s.agents {
			if a.done {
				continue
			}
			allDone = false
			if s.blocked(a, false) == "" {
				ready = append(ready, i)
			}
		}
		if len(s.engine) > 0 {
			ready = append(ready, -1)
		}
		if allDone {
			if len(s.engine) > 0 {
				s.cur = nil
				s.fail(nil, "%d TMA loads still in flight when the kernel ends", len(s.engine))
			}
			return
		}
		if len(ready) == 0 {
			var why []string
			for _, a := range s.agents {
				if !a.done {
					why = append(why, fmt.Sprintf("thread %d (x%d, position %d) waits: %s", a.tid, a.mult, a.pos, s.blocked(a, true)))
				}
			}
			s.cur = nil
			s.fail(nil, "deadlock:\n  %s", strings.Join(why, "\n  "))
		}
		pick := ready[0]
		switch s.policy {
		case "producer-first", "consumers-first", "wg0-fast", "wg1-fast":
			for _, i := range ready {
				if s.rank(i) < s.rank(pick) {
					pick = i
				}
			}
		case "round-robin":
			n := len(s.agents) + 1
			for k := 0; k < n; k++ {
				cand := (s.rr+k)%n - 1
				if contains(ready, cand) {
					pick = cand
					s.rr = (s.rr + k + 1) % n
					break
				}
			}
		case "skewed-random":
			var fast []int
			for _, i := range ready {
				if i < 0 || s.agents[i].producer() || s.agents[i].wg() == 0 {
					fast = append(fast, i)
				}
			}
			if len(fast) > 0 && s.rnd.Intn(20) != 0 {
				pick = fast[s.rnd.Intn(len(fast))]
			} else {
				pick = ready[s.rnd.Intn(len(ready))]
			}
		default:
			pick = ready[s.rnd.Intn(len(ready))]
		}
		if pick == -1 {
			i := 0
			if s.rnd != nil {
				i = s.rnd.Intn(len(s.engine))
			}
			s.land(i)
			continue
		}
		s.step(s.agents[pick])
	}
}

// specializePP runs warp-specialize on the case's kernel, then mutate (nil:
// none) on the kernel.
func specializePP(t *testing.T, c ppCase, mutate func(k *ir.Operation)) (m, k *ir.Operation) {
	t.Helper()
	m = passtest.Parse(t, c.source())
	steps, err := passes.ParsePipeline("builtin.module(warp-specialize)")
	if err != nil {
		t.Fatal(err)
	}
	sched := schedule.NewSchedule()
	if err := passes.RunPipeline(m, steps, &passes.Context{Schedule: sched}, nil); err != nil {
		t.Fatalf("%s: %v", c, err)
	}
	k = passtest.Kernels(m)[0]
	if mutate != nil {
		mutate(k)
	} else {
		recordedSchedules[k] = sched
	}
	return m, k
}

// ppOpts: ordered restricts the schedules (see the top of the file),
// allThreads makes one agent per thread, lax skips the check of the named
// barriers' ids and counts.
type ppOpts struct{ ordered, allThreads, lax bool }

// runPP simulates block b of kernel k under policy.
func runPP(m, k *ir.Operation, c ppCase, b int64, policy string, o ppOpts) (err error) {
	ordered, allThreads := o.ordered, o.allThreads
	tiles := c.tilesOf(b)
	name := fmt.Sprintf("%s block %d (tiles %v)", c, b, tiles)
	defer func() {
		if r := recover(); r != nil {
			e, ok := r.(wsSimError)
			if !ok {
				panic(r)
			}
			err = fmt.Errorf("%s [%s, ordered=%v]: %s\n%s", name, policy, ordered, e, ir.Print(m, ir.PrintOptions{}))
		}
	}()
	kb, ok := k.Attr("known_block_size").(*ir.DenseArrayAttr)
	if !ok || kb.Ints[0] != 384 {
		return fmt.Errorf("%s: known_block_size %v after warp-specialize, want 384 threads", name, k.Attr("known_block_size"))
	}
	s := &ppSim{c: c, block: b, tiles: tiles, T: c.trip, N: c.stages(), k: k, recs: map[ir.Value][]*ppRec{}, bars: map[wsBarKey]*ppMBar{},
		syncs: map[int64]*ppSync{}, wgDone: map[int64]int64{}, owner: map[int64]int64{}, posRecs: map[int64][]*ppRec{},
		relArr: map[int64]int64{}, slotPos: map[int64]int64{}, policy: policy, ordered: ordered, lax: o.lax, blockSz: 384}
	if strings.Contains(policy, "random") {
		s.rnd = rand.New(rand.NewSource(int64(len(policy))*7919 + int64(policy[len(policy)-1]) + 100*c.n + 1000*c.trip + 13*b + 31*int64(c.outer) + 61*int64(c.inner)))
	}
	entry := k.Region(0).Entry()
	args := []int64{c.trip, c.tl, c.tu, c.ts} // %U, %TL, %TU, %TS
	add := func(tid, mult int64) {
		a := &ppAgent{id: len(s.agents), tid: tid, mult: mult, env: map[ir.Value]int64{}, views: map[ir.Value]simView{},
			gviews: map[ir.Value][2]int64{}, arrivedAt: map[int64]int64{}, waits: map[wsBarKey]int64{}, pos: -1}
		for i, v := range args {
			a.env[entry.Arg(entry.NumArgs()-len(args)+i)] = v
		}
		s.push(a, entry, nil)
		s.agents = append(s.agents, a)
	}
	for w := int64(0); w < 3; w++ {
		if allThreads {
			for i := int64(0); i < 128; i++ {
				add(128*w+i, 1)
			}
		} else {
			add(128*w, 1)
			add(128*w+1, 127)
		}
	}
	s.run()
	for _, a := range s.agents {
		s.cur = a
		want := "increase 232"
		if a.producer() {
			want = "decrease 40"
		}
		if len(a.setmax) != 1 || a.setmax[0] != want {
			s.fail(nil, "setmaxnreg %v, want [%s]", a.setmax, want)
		}
		if a.producer() {
			continue
		}
		if n := len(s.myTiles(a.wg())); a.epis != n {
			s.fail(nil, "ran %d epilogues for its %d tiles %v", a.epis, n, s.myTiles(a.wg()))
		}
		if n := len(s.seq(a.wg())); a.fullWaits != n {
			s.fail(nil, "waited for %d ring positions, its tiles have %d", a.fullWaits, n)
		}
	}
	s.cur = nil
	P := int64(len(tiles)) * c.trip
	if s.issued != c.loadsPer()*P {
		s.fail(nil, "%d box loads for %d ring positions", s.issued, P)
	}
	for g := int64(0); g < P; g++ {
		if w := (g / c.trip) % 2; s.owner[g] != w {
			s.fail(nil, "ring position %d (tile %d) was read by warpgroup %d, not %d", g, tiles[g/c.trip], s.owner[g], w)
		}
		if s.relArr[g] != c.relWant() {
			s.fail(nil, "ring position %d released by %d arrivals at the end, want %d (once)", g, s.relArr[g], c.relWant())
		}
	}
	return nil
}

// simulatePP simulates every block of the case under the policies; the
// first failure is returned.
func simulatePP(t *testing.T, c ppCase, policies []string, o ppOpts, mutate func(k *ir.Operation)) (runs int, err error) {
	t.Helper()
	m, k := specializePP(t, c, mutate)
	for _, b := range c.blocks() {
		for _, pol := range policies {
			runs++
			if err := runPP(m, k, c, b, pol, o); err != nil {
				return runs, err
			}
		}
	}
	return runs, nil
}

// ppCases is the sweep: both reader kinds, N 1..5, T 1..6 and T = 0 with
// a dynamic trip count, each with the four tile loop forms (constant from
// 0 step 1 with 1..5 tiles — an odd count leaves warpgroup 1 one tile
// short, one tile leaves it none; block id to 7 step grid, some blocks
// with one tile or none; dynamic bounds with lb != 0 and step 3; constant
// from 1 step 2) and one of the K loop forms, barriers in the epilogue,
// the K loop (ew) and after the tile loop in turn.
func ppCases() []ppCase {
	var cs []ppCase
	for _, kind := range []string{"gemm", "ew"} {
		for n := int64(1); n <= 5; n++ {
			for trip := int64(0); trip <= 6; trip++ {
				inner := int((n + trip) % 3)
				if trip == 0 {
					inner = 1
				}
				in2 := func(d int) int {
					if trip == 0 {
						return 1
					}
					return (inner + d) % 3
				}
				grid := []int64{2, 3, 5, 8}[(n+trip)%4]
				odd := (n+trip)%2 == 1
				cs = append(cs,
					ppCase{kind: kind, n: n, trip: trip, inner: inner, outer: 0, tiles: 1 + (n+2*trip)%5, ebar: true, kbar: odd, after: !odd, accIn: n%2 == 0},
					ppCase{kind: kind, n: n, trip: trip, inner: in2(1), outer: 1, tiles: 7, grid: grid, ebar: odd, kbar: !odd, accIn: n%2 == 1},
					ppCase{kind: kind, n: n, trip: trip, inner: in2(2), outer: 2, tl: 2, tu: 14 + n%3, ts: 3, ebar: true, after: odd, kbar: true},
					ppCase{kind: kind, n: n, trip: trip, inner: inner, outer: 3, tiles: 2 + trip%3, ebar: !odd, after: true},
				)
			}
		}
	}
	for i := range cs {
		if cs[i].kind != "ew" {
			cs[i].kbar = false
		}
	}
	return cs
}

// TestWarpSpecializePingpongSimulation runs the sweep under the ordered
// schedules (TestWarpSpecializePingpongBugParityAliasing: once that bug is
// fixed, drop ordered here).
func TestWarpSpecializePingpongSimulation(t *testing.T) {
	count := 0
	for _, c := range ppCases() {
		n, err := simulatePP(t, c, ppPolicies, ppOpts{}, nil)
		count += n
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d simulated runs", count)
}

// TestWarpSpecializePingpongAllThreads: one agent per thread.
func TestWarpSpecializePingpongAllThreads(t *testing.T) {
	for _, c := range []ppCase{
		{kind: "gemm", n: 2, trip: 3, outer: 0, tiles: 3, ebar: true, after: true},
		{kind: "ew", n: 2, trip: 2, inner: 1, outer: 2, tl: 1, tu: 8, ts: 3, ebar: true, kbar: true},
	} {
		if _, err := simulatePP(t, c, []string{"round-robin", "random-1", "wg1-fast"}, ppOpts{allThreads: true}, nil); err != nil {
			t.Fatal(err)
		}
	}
}

func ppFind(k *ir.Operation, name string) []*ir.Operation {
	var out []*ir.Operation
	ir.Walk(k, func(o *ir.Operation) ir.WalkResult {
		if o.Name() == name {
			out = append(out, o)
		}
		return ir.Advance
	})
	return out
}

// ppTileBarriers: the named barriers of a warpgroup's own tile (over its
// 128 threads), not the order barriers between the two warpgroups.
func ppTileBarriers(f *ir.Operation) []*ir.Operation {
	var out []*ir.Operation
	for _, nb := range ppFind(f, "nvvm.barrier") {
		if d := nb.Operand(1).DefiningOp(); d != nil && d.Name() == "arith.constant" {
			if v, ok := d.Attr("value").(*ir.IntegerAttr); ok && v.Int() == 128 {
				out = append(out, nb)
			}
		}
	}
	return out
}

func ppConst(at *ir.Operation, v int64, ty ir.Type) ir.Value {
	b := ir.NewBuilder(at.Loc)
	b.SetInsertionPoint(at)
	return b.CreateOp("arith.constant", nil, []ir.Type{ty}, ir.NamedAttr{Name: "value", Value: ir.IntAttr(v, ty)}).Result(0)
}

// TestWarpSpecializePingpongCatches breaks the ping-pong parts of the pass
// output and checks that the simulation (ordered schedules) notices each,
// in every case it is applied to.
func TestWarpSpecializePingpongCatches(t *testing.T) {
	// The scf.for ops in walk order: the producer's tile and K loops, then
	// the consumers'.
	consumerTiles := func(k *ir.Operation) *ir.Operation { return ppFind(k, "scf.for")[2] }
	// The consumers' releases: in the K loop, then after it (wgmma, N > 1).
	arrives := func(t *testing.T, k *ir.Operation) (inLoop, endOfTile *ir.Operation) {
		as := ppFind(k, "nvgpu.mbarrier.arrive")
		if len(as) != 2 {
			t.Fatalf("%d arrivals on empty barriers, want 2", len(as))
		}
		return as[0], as[1]
	}
	gemm := ppCase{kind: "gemm", n: 3, trip: 4, outer: 0, tiles: 5, ebar: true, after: true}
	gemmGrid := ppCase{kind: "gemm", n: 2, trip: 3, inner: 2, outer: 1, tiles: 7, grid: 2, ebar: true}
	gemmDyn := ppCase{kind: "gemm", n: 4, trip: 2, inner: 1, outer: 2, tl: 1, tu: 14, ts: 3, ebar: true}
	ew := ppCase{kind: "ew", n: 3, trip: 4, outer: 0, tiles: 4, ebar: true, kbar: true}
	ewDyn := ppCase{kind: "ew", n: 2, trip: 5, inner: 1, outer: 2, tl: 2, tu: 15, ts: 3, kbar: true}
	for _, tc := range []struct {
		name   string
		cs     []ppCase
		mutate func(t *testing.T, k *ir.Operation)
		want   string
		lax    bool // check the named barriers by their behaviour only
	}{
		{"release at j > 0 by the global ring position, not the tile's K step", []ppCase{gemm, gemmGrid, gemmDyn}, func(t *testing.T, k *ir.Operation) {
			a, _ := arrives(t, k)
			cond := a.ParentOp().Operand(0).DefiningOp() // leader && j > 0
			ugt := cond.Operand(1).DefiningOp()
			w := ppFind(k, "nvgpu.mbarrier.try_wait.parity")[1]
			g := w.OperandNamed("mbarId").DefiningOp().Operand(0) // slot = g mod N
			if ugt.Name() != "arith.cmpi" || g.DefiningOp() == nil || g.DefiningOp().Name() != "arith.addi" {
				t.Fatalf("unexpected release condition %s / position %v", ugt.Name(), g.DefiningOp())
			}
			ugt.SetOperand(0, g)
		}, "releases slot|more than once|more arrivals than its count|before it was released", false},
		{"no end-of-tile release", []ppCase{gemm, gemmGrid, gemmDyn}, func(t *testing.T, k *ir.Operation) {
			_, e := arrives(t, k)
			e.ParentOp().Erase()
		}, "deadlock|released by 0 arrivals", false},
		{"end-of-tile release before the K loop's wgmma groups complete", []ppCase{gemm, gemmGrid, gemmDyn}, func(t *testing.T, k *ir.Operation) {
			_, e := arrives(t, k)
			w := ppFind(k, "nvvm.wgmma.wait.group.sync.aligned")[0]
			w.Remove()
			e.ParentOp().Block().InsertBefore(w, e.ParentOp().Next())
		}, "may still be running", false},
		{"empty barrier count 2 (256 with thread readers)", []ppCase{gemm, gemmGrid, gemmDyn, ew, ewDyn}, func(t *testing.T, k *ir.Operation) {
			empty := ppFind(k, "nvgpu.mbarrier.create")[1].Result(0)
			for _, in := range ppFind(k, "nvgpu.mbarrier.init") {
				if in.OperandNamed("barriers") == empty {
					n, _ := arith.ConstantInt(in.OperandNamed("count"))
					in.SetOperand(1, ppConst(in, 2*n, ir.Index))
				}
			}
		}, "deadlock", false},
		{"both warpgroups take the same tiles", []ppCase{gemm, gemmGrid, gemmDyn, ew, ewDyn}, func(t *testing.T, k *ir.Operation) {
			// the producer's tile loop has the original bounds
			f := consumerTiles(k)
			f.SetOperand(0, ppFind(k, "scf.for")[0].Operand(0))
		}, "ring position|got loads|deadlock|epilogue", false},
		{"consumers' tile loop not strided twice as far", []ppCase{gemm, gemmGrid, ewDyn}, func(t *testing.T, k *ir.Operation) {
			f := consumerTiles(k)
			f.SetOperand(2, ppFind(k, "scf.for")[0].Operand(2))
		}, "ring position|got loads|deadlock|epilogue|waits for a", false},
		{"named barrier over both warpgroups inside the tile", []ppCase{gemm, gemmGrid, ew, ewDyn}, func(t *testing.T, k *ir.Operation) {
			f := consumerTiles(k)
			for _, nb := range ppTileBarriers(f) {
				nb.SetOperand(0, ppConst(nb, 1, ir.I32))
				nb.SetOperand(1, ppConst(nb, 256, ir.I32))
			}
		}, "named barrier|each other|deadlock", false},
		{"named barrier over both warpgroups inside the tile (behaviour)", []ppCase{gemm, gemmGrid, ew, ewDyn}, func(t *testing.T, k *ir.Operation) {
			f := consumerTiles(k)
			for _, nb := range ppTileBarriers(f) {
				nb.SetOperand(0, ppConst(nb, 1, ir.I32))
				nb.SetOperand(1, ppConst(nb, 256, ir.I32))
			}
		}, "each other|deadlock", true},
		{"named barrier 1 for both warpgroups (over 128 threads each)", []ppCase{gemm, ew}, func(t *testing.T, k *ir.Operation) {
			f := consumerTiles(k)
			for _, nb := range ppTileBarriers(f) {
				nb.SetOperand(0, ppConst(nb, 1, ir.I32))
			}
		}, "named barrier|each other|deadlock", false},
		{"named barrier 1 for both warpgroups (behaviour)", []ppCase{gemm, ew}, func(t *testing.T, k *ir.Operation) {
			f := consumerTiles(k)
			for _, nb := range ppTileBarriers(f) {
				nb.SetOperand(0, ppConst(nb, 1, ir.I32))
			}
		}, "each other|deadlock", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, c := range tc.cs {
				caught := 0
				m, k := specializePP(t, c, func(k *ir.Operation) { tc.mutate(t, k) })
				for _, b := range c.blocks() {
					for _, pol := range ppPolicies {
						err := runPP(m, k, c, b, pol, ppOpts{ordered: true, lax: tc.lax})
						if err == nil {
							continue
						}
						caught++
						ok := false
						for _, w := range strings.Split(tc.want, "|") {
							ok = ok || strings.Contains(err.Error(), w)
						}
						if !ok {
							t.Fatalf("got %v, want %q", firstLine(err), tc.want)
						}
						if caught == 1 {
							t.Log(firstLine(err))
						}
					}
				}
				if caught == 0 {
					t.Fatalf("%s: no block and schedule caught the broken output", c)
				}
			}
		})
	}
}

// TestWarpSpecializePingpongParityAliasing: the two consumer warpgroups
// wait on the same full barriers, each only for its own ring positions. A
// try_wait.parity tells phases apart only modulo 2, so a consumer waiting
// for position g on full[g mod N] (parity of phase g/N) would pass as soon
// as the barrier's last completed phase is g/N - 2, when position g-N — the
// other warpgroup's whenever g is among the first N positions of its tile —
// has not completed yet; in gemm_pingpong.tma (T = 64, N = 4) warpgroup 1
// waited for position 64 on full[0] and returned as soon as position 0 had
// landed (on the H200 the kernel faulted). The pass now orders the
// consumers' K loops (named barriers 4 and 5, orderPingpong). Every
// schedule, unrestricted, must pass; with the order barriers removed, some
// schedule must catch the early return.
func TestWarpSpecializePingpongParityAliasing(t *testing.T) {
	cases := []ppCase{
		// the shape of gemm_pingpong.tma: 1024 tiles over 132 blocks, T = 64, N = 4
		{kind: "gemm", n: 4, trip: 64, outer: 1, tiles: 1024, grid: 132},
		{kind: "gemm", n: 4, trip: 8, outer: 1, tiles: 8, grid: 2, ebar: true},
		{kind: "gemm", n: 2, trip: 2, outer: 0, tiles: 4, ebar: true},
		{kind: "gemm", n: 3, trip: 1, outer: 0, tiles: 6},
		{kind: "gemm", n: 5, trip: 2, outer: 0, tiles: 7},
		{kind: "ew", n: 2, trip: 2, inner: 1, outer: 2, tl: 1, tu: 12, ts: 2, kbar: true},
	}
	run := func(c ppCase, mutate func(*ir.Operation)) (runs int, hits []string) {
		m, k := specializePP(t, c, mutate)
		blocks := c.blocks()
		if len(blocks) > 2 {
			blocks = blocks[:2]
		}
		for _, b := range blocks {
			for _, pol := range ppPolicies {
				runs++
				if err := runPP(m, k, c, b, pol, ppOpts{}); err != nil {
					hits = append(hits, firstLine(err))
				}
			}
		}
		return runs, hits
	}
	unordered := 0
	for _, c := range cases {
		if _, hits := run(c, nil); len(hits) > 0 {
			t.Fatalf("%s: %d unrestricted runs failed, e.g. %s", c, len(hits), hits[0])
		}
		_, hits := run(c, func(k *ir.Operation) {
			for _, name := range []string{"nvvm.barrier", "nvvm.barrier.arrive"} {
				for _, op := range ppFind(k, name) {
					if d := op.Operand(1).DefiningOp(); d != nil && name == "nvvm.barrier" {
						if v, ok := d.Attr("value").(*ir.IntegerAttr); !ok || v.Int() != 256 {
							continue
						}
					}
					op.Erase()
				}
			}
		})
		for _, h := range hits {
			if !strings.Contains(h, "completed phases, not") && !strings.Contains(h, "deadlock") && !strings.Contains(h, "not landed") {
				t.Fatalf("%s without order barriers: unexpected failure %s", c, h)
			}
		}
		unordered += len(hits)
	}
	if unordered == 0 {
		t.Fatal("no schedule caught the consumers' early returns with the order barriers removed")
	}
}

// TestWarpSpecializePingpongMixedReaders: regression test (fixed: the
// release after the K loop follows the warpgroup's named barrier when the
// threads read the tiles): tiles read by wgmma and by
// the threads of the warpgroup (empty count 1, the leader releases): in
// the K loop the leader releases slot j-1 after a barrier of its
// warpgroup, but the tile's last slot is released after the K loop with
// no barrier, while other threads of the warpgroup may still read it
// (their memref.load of the last K step), so the producer may refill it
// under them. The release after the K loop needs the warpgroup's named
// barrier (1 + w over 128 threads) first when the threads read the tiles.
func TestWarpSpecializePingpongMixedReaders(t *testing.T) {
	for _, c := range []ppCase{
		{kind: "gemm", n: 3, trip: 4, outer: 0, tiles: 4, ebar: true, mixed: true},
		{kind: "gemm", n: 2, trip: 3, inner: 1, outer: 1, tiles: 7, grid: 3, mixed: true},
		{kind: "gemm", n: 4, trip: 2, inner: 2, outer: 3, tiles: 3, after: true, mixed: true},
	} {
		if _, err := simulatePP(t, c, ppPolicies, ppOpts{}, nil); err != nil {
			t.Fatal(err)
		}
	}
}
