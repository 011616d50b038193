package emu

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/tmac-dev/tmac/dialects/nvvm"
	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/runtime/cuda"
)

// A tensor map is passed to a kernel as 128 bytes; the emulator's encoding
// is a magic word and an index into the device's table of descriptors.
const tensorMapMagic = 0x746d_6163_746d_6170 // "tmactmap"

type tensorMap struct {
	d     cuda.TiledDesc
	esize int
	index int // in the order the host plan encoded the maps
}

// asyncOp is a TMA copy in flight: a load into shared memory (completing
// transaction bytes on an mbarrier) or a store from it (in a bulk group).
type asyncOp struct {
	load   bool
	dst    *cta   // the block whose shared memory it writes (load) or reads (store)
	lo, hi uint64 // shared-memory bytes written (load) or read (store)
	tm     *tensorMap
	coords []int64
	bar    *mbarrier
	op     *ir.Operation
	thread *thread
	done   bool
}

// note locates the copy for a diagnostic.
func (c *asyncOp) note() Note {
	kind := "TMA store"
	if c.load {
		kind = "TMA load"
	}
	return note(c.op.Loc, "the %s in flight, issued here by thread %d (coordinates %v, shared bytes [%d, %d))", kind, c.thread.linear, c.coords, c.lo, c.hi)
}

func (t *thread) tensorMap(op *ir.Operation, v any) *tensorMap {
	p, ok := v.(ptr)
	if !ok {
		t.failf(op, "the tensor map operand is not a pointer (%T)", v)
	}
	tm := t.b.dev.tensorMapAt(p.addr)
	if tm == nil {
		t.failf(op, "the tensor map operand does not point to a tensor map encoded by the host plan")
	}
	return tm
}

// boxBytes is the size of one box in shared memory.
func (tm *tensorMap) boxBytes() int64 {
	n := int64(tm.esize)
	for _, b := range tm.d.Box {
		n *= int64(b)
	}
	return n
}

// swizzle maps a byte offset in a box (laid out row after row) to its
// offset in shared memory: the 16-byte chunk index within each group of
// 128/64/32 bytes is XORed with the row bits above it, relative to the
// 1024/512/256-byte aligned shared address (as the hardware does).
func swizzle(addr uint64, s cuda.TensorMapSwizzle) uint64 {
	switch s {
	case cuda.Swizzle128B:
		return addr ^ ((addr >> 3) & 0x70)
	case cuda.Swizzle64B:
		return addr ^ ((addr >> 3) & 0x30)
	case cuda.Swizzle32B:
		return addr ^ ((addr >> 3) & 0x10)
	}
	return addr
}

// forBox calls f for every element of the box at coords: its shared-memory
// offset (relative to dst, before swizzling), its global coordinates and
// whether they are inside the tensor.
func (tm *tensorMap) forBox(coords []int64, f func(smemOff uint64, gaddr uint64, inside bool)) {
	rank := len(tm.d.Dims)
	idx := make([]int64, rank)
	es := uint64(tm.esize)
	var off uint64
	for {
		inside := true
		gaddr := uint64(tm.d.Global)
		for d := 0; d < rank; d++ {
			c := coords[d] + idx[d]
			if c < 0 || c >= int64(tm.d.Dims[d]) {
				inside = false
				break
			}
			if d == 0 {
				gaddr += uint64(c) * es
			} else {
				gaddr += uint64(c) * tm.d.Strides[d-1]
			}
		}
		f(off, gaddr, inside)
		off += es
		d := 0
		for ; d < rank; d++ {
			idx[d]++
			if idx[d] < int64(tm.d.Box[d]) {
				break
			}
			idx[d] = 0
		}
		if d == rank {
			return
		}
	}
}

func init() {
	register(prepareTMALoad, nvvm.CpAsyncBulkTensorSharedClusterGlobal)
	register(prepareTMAStore, nvvm.CpAsyncBulkTensorGlobalSharedCta)
	register(direct(func(t *thread, in *instr) {
		if len(t.uncommitted) > 0 {
			t.groups = append(t.groups, t.uncommitted)
			t.uncommitted = nil
			t.bulkCommits++
			if t.b.observing() {
				t.b.emit(t, nil, &Event{Kind: BulkCommit, Op: in.op, Group: t.bulkCommits - 1})
			}
		}
	}), nvvm.CpAsyncBulkCommitGroup)
	register(func(k *kernel, op *ir.Operation) runFunc {
		keep, _ := ir.AttrInt(nvvm.CpAsyncBulkWaitGroupOp{Op: op}.Group())
		return func(t *thread, in *instr) { t.bulkWait(in.op, keep) }
	}, nvvm.CpAsyncBulkWaitGroup)
}

// bulkWait waits until all but the keep most recent of t's bulk groups
// are complete (cp.async.bulk.wait_group).
func (t *thread) bulkWait(op *ir.Operation, keep int64) {
	// Every group but the keep most recent must be complete (the
	// copies of one group may complete in any order, and so may those
	// of different groups).
	older := func() (pending int) {
		for _, g := range t.groups[:max(0, len(t.groups)-int(keep))] {
			for _, c := range g {
				if !c.done {
					pending++
					break
				}
			}
		}
		return pending
	}
	t.block(op, func() bool { return older() == 0 }, func() string {
		return fmt.Sprintf("waits until all but the %d most recent bulk groups are complete (%d older ones are not)", keep, older())
	})
	if t.b.observing() {
		t.b.emit(t, nil, &Event{Kind: BulkWait, Op: op, Group: t.bulkCommits, Keep: int(keep)})
	}
	// Drop the retired groups.
	i := 0
	for i < len(t.groups) {
		all := true
		for _, c := range t.groups[i] {
			all = all && c.done
		}
		if !all {
			break
		}
		i++
	}
	t.groups = t.groups[i:]
}

// coords are the values of a TMA copy's coordinates, value numbers vs.
func (t *thread) coords(vs []int) []int64 {
	var cs []int64
	for _, v := range vs {
		cs = append(cs, t.vals[v].(int64))
	}
	return cs
}

// prepareTMALoad: nvvm.cp.async.bulk.tensor.shared.cluster.global.
func prepareTMALoad(k *kernel, op *ir.Operation) runFunc {
	l := nvvm.CpAsyncBulkTensorSharedClusterGlobalOp{Op: op}
	a := tmaLoad{
		dstMem: k.slot(l.DstMem()), tmaDescriptor: k.slot(l.TmaDescriptor()), mbar: k.slot(l.Mbar()),
		coordinates: k.slots(l.Coordinates()), multicastMask: k.slot(l.MulticastMask()), predicate: k.slot(l.Predicate()),
		im2col: len(l.Im2colOffsets()) > 0,
	}
	return func(t *thread, in *instr) { t.tmaLoad(in.op, &a) }
}

// tmaLoad is a TMA load's operands: value numbers (-1: absent).
type tmaLoad struct {
	dstMem, tmaDescriptor, mbar int
	coordinates                 []int
	multicastMask, predicate    int
	im2col                      bool // with im2col offsets
}

func (t *thread) tmaLoad(op *ir.Operation, a *tmaLoad) {
	if !t.predicate(a.predicate) {
		return
	}
	if a.im2col {
		t.failf(op, "im2col TMA loads are not emulated")
	}
	dst, ok := t.vals[a.dstMem].(ptr)
	if !ok || (dst.space != spaceShared && dst.space != spaceCluster) || dst.cta >= 0 {
		t.failf(op, "the destination is not a pointer into the block's shared memory")
	}
	tm := t.tensorMap(op, t.vals[a.tmaDescriptor])
	barPtr := t.vals[a.mbar]
	cs := t.coords(a.coordinates)
	if len(cs) != len(tm.d.Dims) {
		t.failf(op, "%d coordinates for a tensor map of rank %d", len(cs), len(tm.d.Dims))
	}
	// The blocks the box lands in: this one, or each block of the cluster
	// in the multicast mask (same shared offset, each one's barrier at the
	// same offset).
	targets := []*cta{t.c}
	if a.multicastMask >= 0 {
		mask := t.vals[a.multicastMask].(int64)
		targets = nil
		for r, c := range t.b.ctas {
			if mask&(1<<r) != 0 {
				targets = append(targets, c)
			}
		}
		if mask>>len(t.b.ctas) != 0 || len(targets) == 0 {
			t.failf(op, "multicast mask %#x names blocks outside the cluster of %d", mask, len(t.b.ctas))
		}
	}
	n := uint64(tm.boxBytes())
	if align := swizzleAlign(tm.d.Swizzle); dst.addr%align != 0 {
		t.failf(op, "the shared destination at offset %d is not aligned to %d bytes", dst.addr, align)
	}
	for _, c := range targets {
		t.checkPeerLive(op, c)
		if dst.addr+n > uint64(len(c.smem)) {
			t.failf(op, "the box of %d bytes at shared offset %d is out of bounds (the block has %d bytes)", n, dst.addr, len(c.smem))
		}
		p, _ := barPtr.(ptr)
		bar := c.bars[p.addr]
		if bar == nil {
			t.failf(op, "no mbarrier initialised at shared offset %d of block rank %d", p.addr, c.rank)
		}
		cp := &asyncOp{load: true, dst: c, lo: dst.addr, hi: dst.addr + n, tm: tm, coords: cs, bar: bar, op: op, thread: t}
		if t.b.observing() {
			t.b.observeCopy(TMALoad, cp, 0)
		}
		for _, x := range t.b.inflight {
			if x.dst == c && dst.addr < x.hi && x.lo < dst.addr+n {
				t.fail(&Error{Op: op, Msg: "race: a TMA load into shared memory another copy in flight is using", Notes: []Note{x.note()}})
			}
		}
		if r := c.wgmmaReading(dst.addr, dst.addr+n); r != nil {
			t.fail(&Error{Op: op, Msg: "race: a TMA load into shared memory that a wgmma in flight may still read (its group not yet retired by wgmma.wait_group: the slot was released too early)",
				Notes: []Note{note(r.op.Loc, "the wgmma reading shared bytes [%d, %d)", r.lo, r.hi)}})
		}
		if r := t.b.race; r != nil {
			// The refill must come after the threads' accesses of the
			// old contents.
			r.write(t, c, op, dst.addr, dst.addr+n, "issues a TMA load overwriting", false, true)
		}
		t.b.inflight = append(t.b.inflight, cp)
	}
}

// prepareTMAStore: nvvm.cp.async.bulk.tensor.global.shared.cta.
func prepareTMAStore(k *kernel, op *ir.Operation) runFunc {
	s := nvvm.CpAsyncBulkTensorGlobalSharedCtaOp{Op: op}
	a := tmaStore{srcMem: k.slot(s.SrcMem()), tmaDescriptor: k.slot(s.TmaDescriptor()), coordinates: k.slots(s.Coordinates()), predicate: k.slot(s.Predicate())}
	return func(t *thread, in *instr) { t.tmaStore(in.op, &a) }
}

// tmaStore is a TMA store's operands: value numbers (-1: absent).
type tmaStore struct {
	srcMem, tmaDescriptor int
	coordinates           []int
	predicate             int
}

func (t *thread) tmaStore(op *ir.Operation, a *tmaStore) {
	if !t.predicate(a.predicate) {
		return
	}
	src, ok := t.vals[a.srcMem].(ptr)
	if !ok || src.space != spaceShared {
		t.failf(op, "the source is not a shared-memory pointer")
	}
	tm := t.tensorMap(op, t.vals[a.tmaDescriptor])
	cs := t.coords(a.coordinates)
	if len(cs) != len(tm.d.Dims) {
		t.failf(op, "%d coordinates for a tensor map of rank %d", len(cs), len(tm.d.Dims))
	}
	n := uint64(tm.boxBytes())
	if src.addr+n > uint64(len(t.c.smem)) {
		t.failf(op, "the box of %d bytes at shared offset %d is out of bounds (the block has %d bytes)", n, src.addr, len(t.c.smem))
	}
	c := &asyncOp{dst: t.c, lo: src.addr, hi: src.addr + n, tm: tm, coords: cs, op: op, thread: t}
	if t.b.observing() {
		t.b.observeCopy(TMAStore, c, 0)
	}
	// The async proxy sees only writes fenced since (fence.proxy.async by
	// the writing thread, ordered before this issue).
	for _, o := range t.c.threads {
		for _, w := range o.unfenced {
			if w.lo < src.addr+n && src.addr < w.hi {
				t.fail(&Error{Op: op, Msg: "a TMA store reads shared memory written by the threads with no fence.proxy.async since (the async proxy may not see the writes)", Notes: []Note{
					note(w.op.Loc, "thread %d wrote bytes [%d, %d) here and has executed no fence.proxy.async since", o.linear, max(w.lo, src.addr), min(w.hi, src.addr+n))}})
			}
		}
	}
	for _, x := range t.b.inflight {
		if x.load && x.dst == t.c && src.addr < x.hi && x.lo < src.addr+n {
			t.fail(&Error{Op: op, Msg: "race: a TMA store of shared memory that a TMA load in flight is still writing", Notes: []Note{x.note()}})
		}
	}
	if r := t.b.race; r != nil {
		// The threads' writes of the tile must come before the issue.
		r.read(t, t.c, op, src.addr, src.addr+n, "issues a TMA store reading")
	}
	t.b.inflight = append(t.b.inflight, c)
	t.uncommitted = append(t.uncommitted, c)
}

func swizzleAlign(s cuda.TensorMapSwizzle) uint64 {
	switch s {
	case cuda.Swizzle128B:
		return 1024
	case cuda.Swizzle64B:
		return 512
	case cuda.Swizzle32B:
		return 256
	}
	return 128
}

// wgmmaReading returns a wgmma read in flight overlapping [lo, hi), or nil.
func (c *cta) wgmmaReading(lo, hi uint64) *wgRead {
	for _, wg := range c.warpgroups {
		for i, r := range wg.reads {
			if r.lo < hi && lo < r.hi {
				return &wg.reads[i]
			}
		}
	}
	return nil
}

// complete performs a copy in flight: a load writes its box into shared
// memory and completes its bytes on the mbarrier; a store writes the box's
// in-bounds elements to global memory.
func (b *blockRun) complete(c *asyncOp) *Error {
	c.done = true
	tm := c.tm
	es := tm.esize
	var fill []byte
	if c.load {
		fill = make([]byte, es)
		if tm.d.OOBFill == cuda.OOBFillNaN {
			switch es {
			case 2:
				if tm.d.DataType == cuda.TensorMapBFloat16 {
					binary.LittleEndian.PutUint16(fill, 0x7fc0)
				} else {
					binary.LittleEndian.PutUint16(fill, 0x7e00)
				}
			case 4:
				binary.LittleEndian.PutUint32(fill, math.Float32bits(float32(math.NaN())))
			case 8:
				binary.LittleEndian.PutUint64(fill, math.Float64bits(math.NaN()))
			}
		}
	}
	var err *Error
	tm.forBox(c.coords, func(off, gaddr uint64, inside bool) {
		if err != nil {
			return
		}
		s := swizzle(c.lo+off, tm.d.Swizzle)
		sp := c.dst.smem[s : s+uint64(es)]
		if !inside {
			if c.load {
				copy(sp, fill)
			}
			return
		}
		gp, e := b.dev.mem.bytes(gaddr, es)
		if e != nil {
			err = &Error{Op: c.op, Msg: "the tensor map addresses memory outside its allocation: " + e.Error()}
			return
		}
		if c.load {
			copy(sp, gp)
		} else {
			copy(gp, sp)
		}
	})
	if err != nil || !c.load {
		if err == nil && b.observing() {
			b.observeCopy(TMAStoreDone, c, 0)
		}
		return err
	}
	m := c.bar
	before := m.phase
	if b.observing() {
		b.observeCopy(TMALoadDone, c, before)
	}
	m.tx -= int64(c.hi - c.lo)
	// Within one block a load's expect_tx precedes it, so the count never
	// goes below zero unless expect_tx is too small; in a cluster another
	// block's multicast may land before this block's expect_tx (the count
	// is then negative for a while, and a phase left negative shows in the
	// deadlock report).
	if m.tx < 0 && len(b.ctas) == 1 {
		return &Error{Op: c.op, Msg: fmt.Sprintf("the TMA load's %d bytes drive the mbarrier's transaction count below zero: expect_tx announced fewer bytes (or none) than the loads of this phase bring", c.hi-c.lo),
			Notes: []Note{note(m.initAt.Loc, "the %v, initialised here", m)}}
	}
	m.lastLoad, m.lastLoadPhase = c, m.phase
	m.complete()
	if b.observing() {
		b.observePhases(nil, c.op, m, before)
	}
	return nil
}
