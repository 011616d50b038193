package pipelining

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/tmac-dev/tmac/dialects/arith"
	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/passes"
	"github.com/tmac-dev/tmac/passes/internal/passtest"
	"github.com/tmac-dev/tmac/passes/mbarrier"
	"github.com/tmac-dev/tmac/passes/schedule"
)

// The tests below run tma-pipeline (and mbarrier-phase) on small kernels
// and execute the output abstractly, as the elected thread (thread 0 of
// block 0) runs it: every TMA load, expect_tx, barrier wait, read of a
// ring slot, wgmma group, block barrier and TMA store is an event of one
// simulation that checks the pipeline's protocol on the pass's real output
// (loops unrolled, the dynamic trip count bound):
//
//   - iteration j's loads are issued exactly once, before its wait, with
//     iteration j's coordinates, into slot j mod N (box by box);
//   - a slot is refilled only after its previous occupant was consumed and
//     released: read, and the reads finished (ordinary reads: a block
//     barrier since; wgmma reads: their group completed, and with several
//     warpgroups a block barrier since);
//   - each phase of a barrier gets exactly one arrive.expect_tx whose byte
//     count equals the bytes of the loads on that phase, and a barrier's
//     next phase is armed only after its previous phase was waited for;
//   - the k-th wait on barrier b waits phase k (parity k mod 2 after
//     mbarrier-phase) and data are read only after their phase was waited;
//   - output slots are written only when the TMA store that last read them
//     has finished reading (wait_group.read, then a block barrier), written
//     data reach the TMA store through a proxy fence and a block barrier,
//     each iteration's output is stored exactly once with its coordinates,
//     and every store has finished reading when the kernel ends.

// pipeCase is one kernel of the simulation tests.
type pipeCase struct {
	kind    string // "gemm" (wgmma readers), "ew" (ordinary readers, TMA store) or "copy" (a tile loaded and stored by TMA)
	n, s    int64  // tmac.stages, tmac.store_stages
	lb      int64  // lower bound (-1: the dynamic argument %L)
	ub      int64  // upper bound (-1: the dynamic argument %T)
	step    int64
	threads int64 // block size x (y = z = 1)
	known   bool  // known_block_size on the kernel
	bar     bool  // the body already has a gpu.barrier (ew)
	L, T    int64 // bindings of %L, %T
}

func (c pipeCase) String() string {
	return fmt.Sprintf("%s n=%d s=%d lb=%d ub=%d step=%d threads=%d known=%v bar=%v L=%d T=%d", c.kind, c.n, c.s, c.lb, c.ub, c.step, c.threads, c.known, c.bar, c.L, c.T)
}

func (c pipeCase) source() string {
	var b strings.Builder
	b.WriteString(`!atile = memref<128x64xf16, #gpu.address_space<workgroup>>
!btile = memref<64x64xf16, #gpu.address_space<workgroup>>
!bfull = memref<64x128xf16, #gpu.address_space<workgroup>>
!adesc = !nvgpu.tensormap.descriptor<tensor = !atile, swizzle = swizzle_128b, l2promo = none, oob = zero, interleave = none>
!bdesc = !nvgpu.tensormap.descriptor<tensor = !btile, swizzle = swizzle_128b, l2promo = none, oob = zero, interleave = none>
!acc = !nvgpu.warpgroup.accumulator<fragmented = vector<128x128xf32>>
!ft = memref<32x64xf32, #gpu.address_space<workgroup>>
!fdesc = !nvgpu.tensormap.descriptor<tensor = !ft, swizzle = none, l2promo = none, oob = zero, interleave = none>
module attributes {gpu.container_module} {
  gpu.module @m {
`)
	attrs := ""
	if c.known {
		attrs = fmt.Sprintf(" attributes {known_block_size = array<i32: %d, 1, 1>}", c.threads)
	}
	args := "%amap: !adesc, %bmap: !bdesc"
	if c.kind == "ew" || c.kind == "copy" {
		args = "%amap: !fdesc, %bmap: !fdesc, %cmap: !fdesc"
	}
	fmt.Fprintf(&b, "    gpu.func @k(%s, %%L: index, %%T: index) kernel%s {\n", args, attrs)
	b.WriteString(`      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c64 = arith.constant 64 : index
      %c128 = arith.constant 128 : index
      %c2048 = arith.constant 2048 : index
      %bx = gpu.block_id x
      %by = gpu.block_id y
      %tx = gpu.thread_id x
      %row0 = arith.muli %bx, %c128 : index
      %col0 = arith.muli %by, %c128 : index
`)
	bound := func(name string, v int64, dyn string) string {
		if v == -1 {
			return dyn
		}
		fmt.Fprintf(&b, "      %%%s = arith.constant %d : index\n", name, v)
		return "%" + name
	}
	lb, ub, step := bound("lb", c.lb, "%L"), bound("ub", c.ub, "%T"), bound("step", c.step, "")
	stages := fmt.Sprintf("{tmac.stages = %d : i64, tmac.store_stages = %d : i64}", c.n, c.s)
	switch c.kind {
	case "gemm":
		fmt.Fprintf(&b, `      %%as = memref.alloc() : !atile
      %%bs = memref.alloc() : !bfull
      %%acc0 = nvgpu.warpgroup.mma.init.accumulator -> !acc
      %%res = scf.for %%k = %s to %s step %s iter_args(%%acc = %%acc0) -> (!acc) {
        %%kk = arith.muli %%k, %%c64 : index
        tmac.tma.load %%amap[%%kk, %%row0] to %%as : !adesc -> !atile
        tmac.tma.load %%bmap[%%col0, %%kk] to %%bs : !bdesc -> !bfull
        tmac.tma.wait %%as, %%bs : !atile, !bfull
        %%da = nvgpu.warpgroup.generate.descriptor %%as, %%amap : !atile, !adesc -> !nvgpu.warpgroup.descriptor<tensor = !atile>
        %%db = nvgpu.warpgroup.generate.descriptor %%bs, %%bmap : !bfull, !bdesc -> !nvgpu.warpgroup.descriptor<tensor = !bfull>
        %%nacc = nvgpu.warpgroup.mma %%da, %%db, %%acc {transposeB} : !nvgpu.warpgroup.descriptor<tensor = !atile>, !nvgpu.warpgroup.descriptor<tensor = !bfull>, !acc -> !acc
        scf.yield %%nacc : !acc
      } %s
`, lb, ub, step, stages)
	case "ew":
		bar := ""
		if c.bar {
			bar = "        gpu.barrier\n"
		}
		fmt.Fprintf(&b, `      %%as = memref.alloc() : !ft
      %%bs = memref.alloc() : !ft
      %%cs = memref.alloc() : !ft
      scf.for %%t = %s to %s step %s {
        %%x = arith.muli %%t, %%c64 : index
        tmac.tma.load %%amap[%%x, %%row0] to %%as : !fdesc -> !ft
        tmac.tma.load %%bmap[%%x, %%row0] to %%bs : !fdesc -> !ft
        tmac.tma.wait %%as, %%bs : !ft, !ft
%s        scf.for %%i = %%tx to %%c2048 step %%c128 {
          %%r = arith.divui %%i, %%c64 : index
          %%cc = arith.remui %%i, %%c64 : index
          %%va = memref.load %%as[%%r, %%cc] : !ft
          %%vb = memref.load %%bs[%%r, %%cc] : !ft
          %%vs = arith.addf %%va, %%vb : f32
          memref.store %%vs, %%cs[%%r, %%cc] : !ft
        }
        tmac.tma.store %%cs to %%cmap[%%x, %%row0] : !ft -> !fdesc
      } %s
`, lb, ub, step, bar, stages)
	case "copy":
		fmt.Fprintf(&b, `      %%as = memref.alloc() : !ft
      scf.for %%t = %s to %s step %s {
        %%x = arith.muli %%t, %%c64 : index
        tmac.tma.load %%amap[%%x, %%row0] to %%as : !fdesc -> !ft
        tmac.tma.wait %%as : !ft
        tmac.tma.store %%as to %%cmap[%%x, %%row0] : !ft -> !fdesc
      } %s
`, lb, ub, step, stages)
	}
	b.WriteString("      gpu.return\n    }\n  }\n}\n")
	return b.String()
}

// iterations returns the induction values of the original loop.
func (c pipeCase) iterations() []int64 {
	lb, ub := c.lb, c.ub
	if lb == -1 {
		lb = c.L
	}
	if ub == -1 {
		ub = c.T
	}
	var ivs []int64
	for v := lb; v < ub; v += c.step {
		ivs = append(ivs, v)
	}
	return ivs
}

// expLoad is one TMA box copy: which descriptor argument, coordinates,
// ring (the tile's alloc order) and byte offset in the ring.
type expLoad struct {
	desc   int
	coords string
	ring   int
	off    int64
}

func (e expLoad) String() string {
	return fmt.Sprintf("d%d%s->r%d@%d", e.desc, e.coords, e.ring, e.off)
}

// expectedLoads are the box copies of the iteration with induction value
// iv in ring slot slot (block 0: row0 = col0 = 0).
func (c pipeCase) expectedLoads(iv, slot int64) []expLoad {
	if c.kind == "gemm" {
		return []expLoad{
			{0, fmt.Sprint([]int64{iv * 64, 0}), 0, slot * 16384},
			{1, fmt.Sprint([]int64{0, iv * 64}), 1, slot * 16384},
			{1, fmt.Sprint([]int64{64, iv * 64}), 1, slot*16384 + 8192},
		}
	}
	if c.kind == "copy" {
		return []expLoad{{0, fmt.Sprint([]int64{iv * 64, 0}), 0, slot * 8192}}
	}
	return []expLoad{
		{0, fmt.Sprint([]int64{iv * 64, 0}), 0, slot * 8192},
		{1, fmt.Sprint([]int64{iv * 64, 0}), 1, slot * 8192},
	}
}

// simRec is the content of a range of a ring.
type simRec struct {
	lo, hi    int64
	bar       int64 // load: barrier and phase
	phase     int64
	iter      int64 // load: the iteration that waited for it
	read      bool
	syncRead  bool // ordinary reads not yet followed by a block barrier
	groups    map[int]bool
	needBar   bool // wgmma reads completed, other warpgroups not yet synchronised
	storeGrp  int  // store: commit group (-1: none); also a loaded tile stored by TMA
	storeDone bool // store: finished reading (by the elected thread)
	storeSeen bool // store: its completion published by a block barrier
	dirty     int  // output data: 0 clean, 1 written, 2 fenced
}

type simPhase struct {
	issuedIn int64 // the iteration that armed it (-1: before the loop)
	expect   int64
	armed    int
	bytes    int64
	loads    []expLoad
	recs     []*simRec
	waited   bool
}

type simView struct {
	ring ir.Value
	off  int64
	size int64
}

type pipeSim struct {
	t        *testing.T
	c        pipeCase
	multiWG  bool
	env      map[ir.Value]int64
	views    map[ir.Value]simView
	rings    []ir.Value // in alloc order
	recs     map[ir.Value][]*simRec
	phases   map[int64][]*simPhase
	waits    map[int64]int64
	groups   int // wgmma groups committed
	done     int // wgmma groups completed (in order)
	storeGrp int // bulk store groups committed
	stores   []string
	pending  []*simRec // stores not yet committed
	iter     int64     // the current iteration of the top-level loop (-1 outside)
	waited   map[int64]int
	// For the check of the schedule record: the iteration that issued the
	// loads each iteration waits for, and the parity it waits with.
	issuedIn, parity map[int64]int64
}

// simError is a protocol violation found by the simulation.
type simError string

func (s *pipeSim) fail(op *ir.Operation, format string, a ...any) {
	panic(simError(fmt.Sprintf("at %s (iteration %d): %s", op.Name(), s.iter, fmt.Sprintf(format, a...))))
}

func (s *pipeSim) failf(format string, a ...any) { panic(simError(fmt.Sprintf(format, a...))) }

func (s *pipeSim) val(op *ir.Operation, v ir.Value) int64 {
	if c, ok := s.env[v]; ok {
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

func (s *pipeSim) ringIndex(r ir.Value) int {
	for i, x := range s.rings {
		if x == r {
			return i
		}
	}
	return -1
}

func (s *pipeSim) overlapping(v simView) []*simRec {
	var out []*simRec
	for _, r := range s.recs[v.ring] {
		if r.lo < v.off+v.size && v.off < r.hi {
			out = append(out, r)
		}
	}
	return out
}

// released reports whether load record r may be overwritten.
func (s *pipeSim) released(r *simRec) bool {
	if !r.read || r.syncRead || r.needBar {
		return false
	}
	if r.storeGrp >= 0 && !r.storeDone {
		return false // a TMA store may still read it
	}
	for g := range r.groups {
		if g >= s.done {
			return false
		}
	}
	return true
}

// completeGroups marks all but the last keep wgmma groups completed.
func (s *pipeSim) completeGroups(keep int64) {
	if n := s.groups - int(keep); n > s.done {
		s.done = n
	}
	for _, rs := range s.recs {
		for _, r := range rs {
			if len(r.groups) == 0 || r.needBar {
				continue
			}
			all := true
			for g := range r.groups {
				all = all && g < s.done
			}
			if all && s.multiWG {
				r.needBar = true
				r.groups = nil
			}
		}
	}
}

func (s *pipeSim) readLoaded(op *ir.Operation, v simView, async bool) {
	rs := s.overlapping(v)
	if len(rs) == 0 {
		s.fail(op, "reads ring bytes [%d, %d) that no load filled", v.off, v.off+v.size)
	}
	covered := int64(0)
	for _, r := range rs {
		ph := s.phases[r.bar][r.phase]
		if !ph.waited {
			s.fail(op, "reads bytes loaded on barrier %d phase %d before waiting for it", r.bar, r.phase)
		}
		if r.iter != s.iter {
			s.fail(op, "reads data of iteration %d", r.iter)
		}
		r.read = true
		if async {
			if r.groups == nil {
				r.groups = map[int]bool{}
			}
			r.groups[s.groups] = true
		} else {
			r.syncRead = true
		}
		covered += min(r.hi, v.off+v.size) - max(r.lo, v.off)
	}
	if covered != v.size {
		s.fail(op, "reads %d bytes of which only %d were loaded", v.size, covered)
	}
}

func (s *pipeSim) run(b *ir.Block) {
	for op := b.First(); op != nil; op = op.Next() {
		s.step(op)
	}
}

func (s *pipeSim) step(op *ir.Operation) {
	switch op.Name() {
	case "gpu.thread_id":
		s.env[op.Result(0)] = 0
	case "gpu.block_id":
		s.env[op.Result(0)] = 0
	case "memref.alloc":
		t := op.Result(0).Type().(*ir.MemRefType)
		if t.Rank() != 1 || t.ElementType() != ir.Type(ir.I8) {
			s.fail(op, "a tile allocation is left: %s", ir.Print(op, ir.PrintOptions{}))
		}
		s.rings = append(s.rings, op.Result(0))
	case "memref.view":
		t := op.Result(0).Type().(*ir.MemRefType)
		size := int64(1)
		for _, d := range t.Shape() {
			size *= d
		}
		size *= int64(ir.BitWidth(t.ElementType()) / 8)
		s.views[op.Result(0)] = simView{op.Operand(0), s.val(op, op.Operand(1)), size}
	case "nvgpu.mbarrier.create", "nvgpu.warpgroup.mma.init.accumulator", "scf.yield", "gpu.return",
		"arith.addf", "nvgpu.warpgroup.mma.store":
	case "nvgpu.mbarrier.init":
		if s.val(op, op.OperandNamed("count")) != 1 {
			s.fail(op, "barrier count is not 1")
		}
	case "nvgpu.mbarrier.arrive.expect_tx":
		bar := s.val(op, op.OperandNamed("mbarId"))
		if ps := s.phases[bar]; len(ps) > 0 && !ps[len(ps)-1].waited {
			s.fail(op, "barrier %d armed for phase %d before phase %d was waited for", bar, len(ps), len(ps)-1)
		}
		s.phases[bar] = append(s.phases[bar], &simPhase{expect: s.val(op, op.OperandNamed("txcount")), armed: 1, issuedIn: s.iter})
	case "nvgpu.tma.async.load":
		bar := s.val(op, op.OperandNamed("mbarId"))
		ps := s.phases[bar]
		if len(ps) == 0 || ps[len(ps)-1].waited {
			s.fail(op, "load on barrier %d without an expect_tx for its phase", bar)
		}
		ph := ps[len(ps)-1]
		v := s.views[op.OperandNamed("dst")]
		for _, r := range s.overlapping(v) {
			if !s.released(r) {
				s.fail(op, "refills ring %d bytes [%d, %d) whose previous occupant (barrier %d phase %d, iteration %d) is not released (read %v, sync %v, groups %v, needBar %v)",
					s.ringIndex(v.ring), v.off, v.off+v.size, r.bar, r.phase, r.iter, r.read, r.syncRead, r.groups, r.needBar)
			}
		}
		var keep []*simRec
		for _, r := range s.recs[v.ring] {
			if r.hi <= v.off || v.off+v.size <= r.lo {
				keep = append(keep, r)
			}
		}
		rec := &simRec{lo: v.off, hi: v.off + v.size, bar: bar, phase: int64(len(ps) - 1), iter: -1, storeGrp: -1}
		s.recs[v.ring] = append(keep, rec)
		ph.recs = append(ph.recs, rec)
		ph.bytes += v.size
		var cs []int64
		for _, c := range op.OperandGroup("coordinates") {
			cs = append(cs, s.val(op, c))
		}
		desc := -1
		if a, ok := op.OperandNamed("tensorMapDescriptor").(*ir.BlockArgument); ok {
			desc = a.Index()
		}
		ph.loads = append(ph.loads, expLoad{desc, fmt.Sprint(cs), s.ringIndex(v.ring), v.off})
	case "tmac.mbarrier.wait", "nvgpu.mbarrier.try_wait.parity":
		bar := s.val(op, op.OperandNamed("mbarId"))
		k := s.waits[bar]
		s.waits[bar]++
		if op.Name() == "nvgpu.mbarrier.try_wait.parity" {
			p := s.val(op, op.OperandNamed("phaseParity"))
			if p != k&1 {
				s.fail(op, "wait %d on barrier %d waits parity %d", k, bar, p)
			}
			s.parity[s.iter] = p
		}
		if int64(len(s.phases[bar])) <= k {
			s.fail(op, "wait %d on barrier %d: phase %d was never armed (the loads were not issued before the wait)", k, bar, k)
		}
		ph := s.phases[bar][k]
		if ph.bytes != ph.expect {
			s.fail(op, "phase %d of barrier %d expects %d bytes, its loads bring %d", k, bar, ph.expect, ph.bytes)
		}
		ph.waited = true
		s.issuedIn[s.iter] = ph.issuedIn
		for _, r := range ph.recs {
			r.iter = s.iter
		}
		s.waited[s.iter]++
		ivs := s.c.iterations()
		n := s.c.n
		if s.c.ub != -1 && s.c.lb != -1 {
			n = max(1, min(n, int64(len(ivs))))
		}
		if bar != s.iter%n {
			s.fail(op, "iteration %d waits on barrier %d, not %d", s.iter, bar, s.iter%n)
		}
		want := s.c.expectedLoads(ivs[s.iter], s.iter%n)
		sort.Slice(ph.loads, func(i, j int) bool { return ph.loads[i].String() < ph.loads[j].String() })
		sort.Slice(want, func(i, j int) bool { return want[i].String() < want[j].String() })
		if fmt.Sprint(ph.loads) != fmt.Sprint(want) {
			s.fail(op, "iteration %d got loads %v, want %v", s.iter, ph.loads, want)
		}
	case "nvgpu.warpgroup.generate.descriptor":
		s.views[op.Result(0)] = s.views[op.Operand(0)]
	case "nvgpu.warpgroup.mma":
		s.readLoaded(op, s.views[op.OperandNamed("descriptorA")], true)
		s.readLoaded(op, s.views[op.OperandNamed("descriptorB")], true)
		s.groups++
		s.completeGroups(op.IntAttrOf("waitGroup", 1))
	case "nvvm.wgmma.wait.group.sync.aligned":
		s.completeGroups(op.IntAttrOf("group", -1))
	case "memref.load":
		s.readLoaded(op, s.views[op.Operand(0)], false)
	case "memref.store":
		v := s.views[op.Operand(1)]
		if v.ring == nil {
			s.fail(op, "store into a tile that is not a ring view")
		}
		// Element writes: the whole output tile counts as written.
		var rec *simRec
		for _, r := range s.overlapping(v) {
			if r.bar >= 0 {
				s.fail(op, "writes into a load ring")
			}
			if r.lo != v.off || r.hi != v.off+v.size {
				s.fail(op, "writes a misaligned output tile")
			}
			rec = r
		}
		if rec == nil {
			rec = &simRec{lo: v.off, hi: v.off + v.size, bar: -1, storeGrp: -1}
			s.recs[v.ring] = append(s.recs[v.ring], rec)
		}
		if rec.storeGrp != -1 {
			if !rec.storeSeen {
				s.fail(op, "writes an output slot that a TMA store may still read")
			}
			rec.storeGrp, rec.storeDone, rec.storeSeen = -1, false, false
		}
		rec.dirty = 1
	case "nvvm.fence.proxy":
		for _, rs := range s.recs {
			for _, r := range rs {
				if r.dirty == 1 {
					r.dirty = 2
				}
			}
		}
	case "gpu.barrier":
		for _, rs := range s.recs {
			for _, r := range rs {
				r.syncRead, r.needBar = false, false
				if r.dirty == 2 {
					r.dirty = 0
				}
				if r.storeDone {
					r.storeSeen = true
				}
			}
		}
	case "nvgpu.tma.async.store":
		v := s.views[op.OperandNamed("src")]
		var rec *simRec
		for _, r := range s.overlapping(v) {
			if r.lo == v.off && r.hi == v.off+v.size {
				rec = r
			}
		}
		if rec != nil && rec.bar >= 0 {
			// A loaded tile stored straight back: the load must have landed
			// (its phase waited) and be this iteration's.
			if !s.phases[rec.bar][rec.phase].waited || rec.iter != s.iter {
				s.fail(op, "TMA store of a loaded tile before its load was waited for in this iteration (%v)", rec)
			}
			rec.read = true
		} else if rec == nil || rec.dirty != 0 {
			s.fail(op, "TMA store of data not written, or not fenced and synchronised (%v)", rec)
		}
		// lower-nvgpu commits a bulk group after every TMA store.
		rec.storeGrp = s.storeGrp
		s.storeGrp++
		var cs []int64
		for _, c := range op.OperandGroup("coordinates") {
			cs = append(cs, s.val(op, c))
		}
		s.stores = append(s.stores, fmt.Sprintf("%d:%v@%d", s.iter, cs, v.off))
	case "nvvm.cp.async.bulk.commit.group":
		for _, r := range s.pending {
			r.storeGrp = s.storeGrp
		}
		s.pending = nil
		s.storeGrp++
	case "nvvm.cp.async.bulk.wait_group":
		if op.Attr("read") == nil {
			s.fail(op, "wait_group without .read")
		}
		keep := op.IntAttrOf("group", -1)
		for _, rs := range s.recs {
			for _, r := range rs {
				if r.storeGrp >= 0 && int64(r.storeGrp) < int64(s.storeGrp)-keep {
					r.storeDone = true
				}
			}
		}
	case "scf.if":
		if s.val(op, op.Operand(0)) != 0 {
			s.run(op.Region(0).Entry())
		} else if op.NumRegions() > 1 && !op.Region(1).Empty() {
			s.run(op.Region(1).Entry())
		}
	case "scf.for":
		body := op.Region(0).Entry()
		top := op.Block() == op.ParentOp().Region(0).Entry() && op.ParentOp().Name() == "gpu.func"
		for j := s.val(op, op.Operand(0)); j < s.val(op, op.Operand(1)); j += s.val(op, op.Operand(2)) {
			s.env[body.Arg(0)] = j
			for i := 1; i < body.NumArgs(); i++ {
				if ir.BitWidth(body.Arg(i).Type()) == 1 || body.Arg(i).Type() == ir.Type(ir.Index) {
					if j == s.val(op, op.Operand(0)) {
						s.env[body.Arg(i)] = s.val(op, op.Operand(2+i))
					} else {
						s.env[body.Arg(i)] = s.val(op, body.Terminator().Operand(i-1))
					}
				}
			}
			if top {
				s.iter = j
			}
			s.run(body)
		}
		if top {
			s.iter = -1
		}
	default:
		if op.NumResults() != 1 {
			s.fail(op, "unexpected op")
		}
		x := make([]int64, op.NumOperands())
		for i, v := range op.Operands() {
			x[i] = s.val(op, v)
		}
		r, ok := mbarrier.EvalIntOp(op, x)
		if !ok {
			s.fail(op, "cannot evaluate")
		}
		if ir.BitWidth(op.Result(0).Type()) == 1 {
			r &= 1
		}
		s.env[op.Result(0)] = r
	}
}

// simulate runs the pipeline on the case's kernel, lets mutate change
// the output (nil: unchanged), and checks the protocol.
func simulate(t *testing.T, c pipeCase, pipeline string, mutate func(k *ir.Operation)) (err error) {
	t.Helper()
	m := passtest.Parse(t, c.source())
	steps, perr := passes.ParsePipeline(pipeline)
	if perr != nil {
		t.Fatal(perr)
	}
	sched := schedule.NewSchedule()
	if perr := passes.RunPipeline(m, steps, &passes.Context{Schedule: sched}, nil); perr != nil {
		t.Fatalf("%s: %v", c, perr)
	}
	k := passtest.Kernels(m)[0]
	if mutate != nil {
		mutate(k)
	}
	defer func() {
		if r := recover(); r != nil {
			e, ok := r.(simError)
			if !ok {
				panic(r)
			}
			err = fmt.Errorf("%s: %s\n%s", c, e, ir.Print(m, ir.PrintOptions{}))
		}
	}()
	s := &pipeSim{t: t, c: c, multiWG: c.threads > 128 || !c.known, env: map[ir.Value]int64{}, views: map[ir.Value]simView{},
		recs: map[ir.Value][]*simRec{}, phases: map[int64][]*simPhase{}, waits: map[int64]int64{}, waited: map[int64]int{}, iter: -1,
		issuedIn: map[int64]int64{}, parity: map[int64]int64{}}
	entry := k.Region(0).Entry()
	s.env[entry.Arg(entry.NumArgs()-2)] = c.L
	s.env[entry.Arg(entry.NumArgs()-1)] = c.T
	s.run(entry)
	ivs := c.iterations()
	for j := range ivs {
		if s.waited[int64(j)] != 1 {
			s.failf("iteration %d waited %d times", j, s.waited[int64(j)])
		}
	}
	phases := 0
	for _, ps := range s.phases {
		phases += len(ps)
		for _, p := range ps {
			if !p.waited {
				s.failf("a phase was armed but never waited for (loads issued for an iteration that does not exist)")
			}
		}
	}
	if phases != len(ivs) {
		s.failf("%d phases for %d iterations", phases, len(ivs))
	}
	if c.kind == "ew" || c.kind == "copy" {
		var want []string
		nS := c.s
		if c.kind == "copy" {
			nS = c.n // stored from the load ring
		}
		if c.ub != -1 && c.lb != -1 {
			nS = max(1, min(nS, int64(len(ivs))))
		}
		for j, iv := range ivs {
			want = append(want, fmt.Sprintf("%d:%v@%d", j, []int64{iv * 64, 0}, int64(j)%nS*8192))
		}
		if fmt.Sprint(s.stores) != fmt.Sprint(want) {
			s.failf("stores %v, want %v", s.stores, want)
		}
		if len(s.pending) != 0 {
			s.failf("stores never committed")
		}
		for _, rs := range s.recs {
			for _, r := range rs {
				if r.storeGrp >= 0 && !r.storeDone {
					s.failf("a TMA store may still read shared memory when the kernel ends")
				}
			}
		}
	}
	if c.kind == "gemm" && s.done != s.groups {
		s.failf("%d of %d wgmma groups completed at the end", s.done, s.groups)
	}
	if mutate == nil {
		s.checkRecord(sched, int64(len(ivs)))
	}
	return nil
}

// checkRecord checks the schedule the passes recorded (tmac explain's
// timeline) against the simulated run of their output: the iteration
// that issues each position's loads (LoopSchedule.Issues), the parity of
// each wait, the bytes of a stage.
func (s *pipeSim) checkRecord(sched *schedule.Schedule, total int64) {
	if len(sched.Kernels) != 1 || len(sched.Kernels[0].Loops) != 1 {
		s.failf("the record has %d kernels, not one with one loop", len(sched.Kernels))
	}
	ks := sched.Kernels[0]
	l := ks.Loops[0]
	got := map[int64][]int64{}
	for g := int64(0); g < total; g++ {
		got[s.issuedIn[g]] = append(got[s.issuedIn[g]], g)
	}
	for j := int64(-1); j < total; j++ {
		if want := l.Issues(j, total); fmt.Sprint(got[j]) != fmt.Sprint(want) {
			s.failf("iteration %d issued the loads of positions %v, the record says %v (prologue %d, ahead %d)", j, got[j], want, l.Prologue, l.Ahead)
		}
	}
	var stage *schedule.BarrierGroup
	for _, g := range ks.Groups {
		if g.Role == "stage" {
			stage = g
		}
	}
	if total > 0 && (stage == nil || stage.TxBytes != s.phases[0][0].expect || stage.Size != l.Stages) {
		s.failf("the record's stage barriers %+v do not match the run (expect_tx %d)", stage, s.phases[0][0].expect)
	}
	for j, p := range s.parity {
		if stage == nil || len(stage.Waits) == 0 || stage.Waits[0].Ring == nil {
			s.failf("the record has no parity rule for the waits")
		}
		if r := stage.Waits[0].Ring.At(j); r != p {
			s.failf("iteration %d waits with parity %d, the record's rule %+v gives %d", j, p, *stage.Waits[0].Ring, r)
		}
	}
}

func TestTMAPipelineSimulation(t *testing.T) {
	count := 0
	for _, kind := range []string{"gemm", "ew", "copy"} {
		for _, n := range []int64{1, 2, 3, 4, 7} {
			for _, trip := range []int64{0, 1, 2, 3, 5, 9} {
				for _, form := range []int{0, 1, 2, 3} {
					c := pipeCase{kind: kind, n: n, s: 1 + n%3, lb: 0, ub: trip, step: 1, threads: 128, known: true}
					switch form {
					case 1: // dynamic trip count
						c.ub, c.T = -1, trip
					case 2: // dynamic lower bound, step 3, static upper bound
						c.lb, c.L, c.ub, c.step = -1, 2, 2+3*trip, 3
					case 3: // several warpgroups, unknown block size on odd n
						c.threads, c.known, c.bar = 256, n%2 == 0, trip%2 == 1
						c.lb, c.ub = 5, 5+trip
					}
					for _, pl := range []string{"builtin.module(tma-pipeline)", "builtin.module(tma-pipeline,mbarrier-phase)"} {
						if err := simulate(t, c, pl, nil); err != nil {
							t.Fatal(err)
						}
						count++
					}
				}
			}
		}
	}
	t.Logf("%d simulated kernels", count)
}

// TestTMAPipelineSimulationCatches breaks the pass output in the ways the
// pipeline protocol forbids and checks that the simulation notices each.
func TestTMAPipelineSimulationCatches(t *testing.T) {
	gemm := pipeCase{kind: "gemm", n: 3, s: 2, lb: 0, ub: 6, step: 1, threads: 128, known: true}
	ew := pipeCase{kind: "ew", n: 3, s: 2, lb: 0, ub: 6, step: 1, threads: 128, known: true}
	cp := pipeCase{kind: "copy", n: 3, s: 2, lb: 0, ub: 6, step: 1, threads: 128, known: true}
	find := func(k *ir.Operation, name string, pred func(*ir.Operation) bool) []*ir.Operation {
		var out []*ir.Operation
		ir.Walk(k, func(o *ir.Operation) ir.WalkResult {
			if o.Name() == name && (pred == nil || pred(o)) {
				out = append(out, o)
			}
			return ir.Advance
		})
		return out
	}
	inLoop := func(o *ir.Operation) bool { return o.ParentOp().Name() == "scf.for" }
	topLevel := func(o *ir.Operation) bool { return o.ParentOp().Name() == "gpu.func" }
	for _, tc := range []struct {
		name   string
		c      pipeCase
		mutate func(k *ir.Operation)
		want   string
	}{
		{"wgmma leaves the previous stage pending", gemm, func(k *ir.Operation) {
			find(k, "nvgpu.warpgroup.mma", nil)[0].SetAttr("waitGroup", ir.I64Attr(2))
		}, "is not released"},
		{"no wgmma wait after the loop", gemm, func(k *ir.Operation) {
			find(k, "nvvm.wgmma.wait.group.sync.aligned", nil)[0].Erase()
		}, "wgmma groups completed at the end"},
		{"no barrier before the refill", ew, func(k *ir.Operation) {
			// The ew body's last barrier (before the store) releases the
			// slots; without store and barrier the refill races.
			for _, o := range find(k, "gpu.barrier", inLoop) {
				o.Erase()
			}
		}, ""},
		{"wrong expect_tx", gemm, func(k *ir.Operation) {
			e := find(k, "nvgpu.mbarrier.arrive.expect_tx", nil)[0]
			b := ir.NewBuilder(e.Loc)
			b.SetInsertionPoint(e)
			c := b.CreateOp("arith.constant", nil, []ir.Type{ir.Index}, ir.NamedAttr{Name: "value", Value: ir.IndexAttr(16384)})
			e.SetOperand(1, c.Result(0))
		}, "expects 16384 bytes, its loads bring 32768"},
		{"no prologue", gemm, func(k *ir.Operation) {
			find(k, "scf.if", topLevel)[1].Erase()
		}, "was never armed"},
		{"refill one stage too far ahead", gemm, func(k *ir.Operation) {
			// j + N-1 becomes j + N: the slot still being read is refilled.
			for _, a := range find(k, "arith.addi", inLoop) {
				if c, ok := arith.ConstantInt(a.Operand(1)); ok && c == 2 {
					b := ir.NewBuilder(a.Loc)
					b.SetInsertionPoint(a)
					a.SetOperand(1, b.CreateOp("arith.constant", nil, []ir.Type{ir.Index}, ir.NamedAttr{Name: "value", Value: ir.IndexAttr(3)}).Result(0))
				}
			}
		}, ""},
		{"no store rotation wait", ew, func(k *ir.Operation) {
			for _, o := range find(k, "nvvm.cp.async.bulk.wait_group", inLoopIf) {
				o.Erase()
			}
		}, "a TMA store may still read"},
		{"no proxy fence", ew, func(k *ir.Operation) {
			find(k, "nvvm.fence.proxy", nil)[0].Erase()
		}, "not fenced"},
		{"refill of a pass-through slot before its store has read it", cp, func(k *ir.Operation) {
			for _, o := range find(k, "nvvm.cp.async.bulk.wait_group", inLoopIf) {
				o.Erase()
			}
		}, "is not released"},
		{"refill wait allows two iterations of stores", cp, func(k *ir.Operation) {
			for _, o := range find(k, "nvvm.cp.async.bulk.wait_group", inLoopIf) {
				o.SetAttr("group", ir.IntAttr(2, ir.I32))
			}
		}, "is not released"},
		{"pass-through store before the wait", cp, func(k *ir.Operation) {
			// The elected thread's wait (its scf.if) moved after the store's.
			st := find(k, "nvgpu.tma.async.store", nil)[0].ParentOp()
			w := find(k, "nvgpu.mbarrier.try_wait.parity", inLoopIf)[0].ParentOp()
			w.Remove()
			st.Block().InsertBefore(w, st.Next())
		}, "before its load was waited for"},
		{"no final store wait (pass-through)", cp, func(k *ir.Operation) {
			for _, o := range find(k, "nvvm.cp.async.bulk.wait_group", func(o *ir.Operation) bool { return !inLoopIf(o) }) {
				o.Erase()
			}
		}, "when the kernel ends"},
		{"no final store wait", ew, func(k *ir.Operation) {
			for _, o := range find(k, "nvvm.cp.async.bulk.wait_group", func(o *ir.Operation) bool { return !inLoopIf(o) }) {
				o.Erase()
			}
		}, "when the kernel ends"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := simulate(t, tc.c, "builtin.module(tma-pipeline,mbarrier-phase)", tc.mutate)
			if err == nil {
				t.Fatalf("the simulation accepted the broken output")
			}
			t.Log(err)
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
}

// inLoopIf: an op under an scf.if directly in an scf.for body.
func inLoopIf(o *ir.Operation) bool {
	p := o.ParentOp()
	return p.Name() == "scf.if" && p.ParentOp().Name() == "scf.for"
}
