// Package smemplan is the smem-plan pass: a kernel's shared-memory buffers
// placed in its dynamic shared memory.
package smemplan

import (
	"fmt"
	"sort"
	"strings"

	"github.com/tmac-dev/tmac/internal/sm90"
	"github.com/tmac-dev/tmac/passes"
	"github.com/tmac-dev/tmac/passes/internal/passutil"
	"github.com/tmac-dev/tmac/passes/schedule"

	"github.com/tmac-dev/tmac/dialects/arith"
	"github.com/tmac-dev/tmac/dialects/gpu"
	"github.com/tmac-dev/tmac/dialects/memref"
	"github.com/tmac-dev/tmac/dialects/nvgpu"
	"github.com/tmac-dev/tmac/dialects/nvvm"
	"github.com/tmac-dev/tmac/dialects/scf"
	"github.com/tmac-dev/tmac/dialects/tmac"
	"github.com/tmac-dev/tmac/ir"
)

// smem-plan places a kernel's shared-memory buffers in its dynamic shared
// memory. It runs on gpu.func kernels (after outline-kernels) and on
// gpu.launch bodies (before it), before or after lower-nvgpu.
//
//   - Buffers: every memref.alloc / memref.alloca in workgroup space
//     (#gpu.address_space<workgroup> or 3) with a static shape and the
//     identity layout. Each becomes `memref.view %smem[%offset][]` of one
//     `gpu.dynamic_shared_memory` op at the kernel's entry; memref.dealloc
//     of a planned buffer is erased. A buffer typed in space 3 is retyped to
//     #gpu.address_space<workgroup> (memref.view keeps the memory space),
//     together with the memref.view/subview/cast/... results derived from it.
//     A dynamically shaped or strided workgroup allocation is rejected.
//   - mbarrier groups (nvgpu.mbarrier.create, before lower-nvgpu) are left
//     as they are; their 8 bytes per barrier count toward the per-block
//     limit. lower-nvgpu turns them into memref.alloca ops marked
//     `tmac.mbarriers`, which a second smem-plan after it (the default
//     pipeline has one) places like any other buffer, 8-byte aligned, but
//     live for the whole kernel: barrier memory is never shared.
//   - A kernel that already uses gpu.dynamic_shared_memory (hand-placed
//     buffers, as in seed 004) keeps [0, S) for it, S being the constant
//     dynamic_shared_memory_size of its launches (their maximum); planned
//     buffers go after it. If S is not a constant, planning buffers next to
//     it is rejected. A kernel without launches (launched from elsewhere,
//     or planned once already before lower-nvgpu added its mbarriers) keeps
//     the bytes its views of the dynamic shared memory reach, when all are
//     views at constant offsets.
//
// Alignment of a buffer: its `alignment` attribute (rejected when it is
// less than a TMA copy or wgmma use below needs); else 1024 bytes when
// a TMA copy with 128B swizzle reads or writes it or it is a wgmma operand
// (warpgroup.generate.descriptor) under 128B swizzle (512 / 256 for 64B /
// 32B swizzle: the swizzle atom's repeat), 128 bytes for other TMA copies
// and wgmma operands, else 16 bytes. The dynamic shared memory itself is
// 1024-byte aligned (codegen), so an alignment attribute above 1024 is
// rejected.
//
// Reuse: the ops of the kernel are numbered in pre-order. A buffer's live
// range runs from its allocation to its last use, uses of values derived
// from it included (the results of every user but loads: views, casts,
// descriptors, pointers, wgmma accumulators, ...; values passed into or
// yielded out of regions are followed to the region's arguments and the
// op's results, the whole op counting as a use); it is extended over every
// loop (scf.for/while/parallel/forall) that contains a use. The source of
// a TMA store is live to the end of the kernel (the copy reads it
// asynchronously until a wait this pass does not track). A buffer that
// reaches another terminator or a call, and every buffer of a kernel with
// several blocks, is live for the whole kernel. Buffers whose ranges do not
// overlap may share bytes; see planSMem for the allocator.
//
// The launches of the kernel (gpu.launch_func ops naming it, or the
// gpu.launch itself) get dynamic_shared_memory_size: an arith.constant i32
// before the launch, the maximum of the plan and an existing constant size
// (an arith.maxui with an existing non-constant one). A kernel needing more
// than 227 KB (232448 bytes) per block, planned, hand-placed and static
// together, is rejected with a note per buffer.
func init() {
	passes.Register(&passes.Info{
		Name:    "smem-plan",
		Summary: "Place workgroup memref allocations in dynamic shared memory (aligned, lifetimes reused), set launch dynamic_shared_memory_size, check the 227 KB limit",
		Description: "Places a kernel's shared-memory buffers in its dynamic shared memory. It runs on `gpu.func` kernels and on `gpu.launch` bodies, before or after `lower-nvgpu` (the default pipeline runs it on both sides).\n" +
			"\n" +
			"- Every `memref.alloc` / `memref.alloca` in workgroup memory with a static shape and the identity layout becomes a `memref.view` of one `gpu.dynamic_shared_memory` op at the kernel's entry; `memref.dealloc` of such a buffer is erased. Dynamically shaped or strided workgroup allocations are rejected.\n" +
			"- Alignment: the buffer's `alignment` attribute; else 1024 bytes for a TMA or wgmma operand with 128-byte swizzle (512 / 256 for 64B / 32B), 128 bytes for other TMA and wgmma operands, 16 bytes otherwise.\n" +
			"- Reuse: a buffer is live from its allocation to its last use (uses of views, casts and descriptors derived from it included), extended over every loop that contains a use; the source of a TMA store stays live to the end of the kernel. Buffers whose live ranges do not overlap may share bytes (a greedy allocator, largest buffers first).\n" +
			"- Barriers: `nvgpu.mbarrier.create` groups are left alone but counted (8 bytes per barrier); after `lower-nvgpu` their allocations are placed like other buffers, live for the whole kernel.\n" +
			"- A kernel that already uses `gpu.dynamic_shared_memory` keeps the bytes its launches request, and planned buffers go after them.\n" +
			"\n" +
			"The launches of the kernel get `dynamic_shared_memory_size` (the maximum of the plan and any existing size). A kernel needing more than 227 KB per block is rejected, with a note per buffer.",
		New: func(passes.Options) (passes.Pass, error) {
			return passes.PassFunc(func(op *ir.Operation, ctx *passes.Context) error { return smemPlan(op, ctx.Record()) }), nil
		},
		Needs: []passes.Need{
			{Pass: "warp-specialize", Why: "which turns tiles into rings of buffers for smem-plan to place", OrderOnly: true},
			{Pass: "tma-pipeline", Why: "which turns tiles into rings of buffers for smem-plan to place", OrderOnly: true},
		},
	})
}

// smemLimit is the most shared memory a block may use on sm_90 (227 KB).
const smemLimit = sm90.MaxSharedBytesPerBlock

// SMemInterval is one buffer for the allocator: its size and alignment in
// bytes and its live range [Start, End] in op numbers (inclusive). Offset
// is the allocator's answer.
type SMemInterval struct {
	Size, Align int64
	Start, End  int
	Offset      int64
}

// planSMem is a greedy interval allocator. Buffers are placed one at a
// time, largest first (then the most aligned, then the earliest start, then
// input order); each takes the lowest offset, at or above base and a
// multiple of its alignment, whose bytes are not used by an already placed
// buffer with an overlapping live range. The candidates are base and the
// end of each such buffer (aligned up), so the first candidate that fits is
// the lowest offset that fits. It returns the total size: the end of the
// last byte used (at least base).
func planSMem(bufs []*SMemInterval, base int64) int64 {
	order := make([]int, len(bufs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(x, y int) bool {
		a, b := bufs[order[x]], bufs[order[y]]
		if a.Size != b.Size {
			return a.Size > b.Size
		}
		if a.Align != b.Align {
			return a.Align > b.Align
		}
		return a.Start < b.Start
	})
	total := base
	var placed []*SMemInterval
	for _, i := range order {
		b := bufs[i]
		var live []*SMemInterval
		for _, p := range placed {
			if p.Start <= b.End && b.Start <= p.End {
				live = append(live, p)
			}
		}
		cands := []int64{passutil.AlignUp(base, b.Align)}
		for _, p := range live {
			cands = append(cands, passutil.AlignUp(p.Offset+p.Size, b.Align))
		}
		sort.Slice(cands, func(x, y int) bool { return cands[x] < cands[y] })
		for _, c := range cands {
			if c < base {
				continue
			}
			fits := true
			for _, p := range live {
				if c < p.Offset+p.Size && p.Offset < c+b.Size {
					fits = false
					break
				}
			}
			if fits {
				b.Offset = c
				break
			}
		}
		placed = append(placed, b)
		if e := b.Offset + b.Size; e > total {
			total = e
		}
	}
	return total
}

// smemBuffer is one workgroup allocation of a kernel.
type smemBuffer struct {
	alloc *ir.Operation // memref.alloc or memref.alloca
	typ   *ir.MemRefType
	iv    SMemInterval
	why   string // where the alignment comes from
	// swizzle is the swizzle of the TMA copies and wgmma operands using
	// the buffer ("" if none uses it with one), for tmac explain.
	swizzle string
	// needs is the alignment the buffer's uses need when its alignment
	// attribute gives less (needsWhy says which use); 0 otherwise.
	needs    int64
	needsWhy string
}

// smemKernel is a kernel body and how it is launched.
type smemKernel struct {
	op       *ir.Operation // gpu.func or gpu.launch
	body     *ir.Region
	launches []*ir.Operation
}

func smemPlan(top *ir.Operation, sched *schedule.Schedule) error {
	var kernels []*smemKernel
	byName := map[string]*smemKernel{}
	var launchFuncs []gpu.LaunchFuncOp
	ir.Walk(top, func(op *ir.Operation) ir.WalkResult {
		switch op.Name() {
		case gpu.Func:
			if body, ok := passutil.KernelBody(op); ok {
				k := &smemKernel{op: op, body: body}
				kernels = append(kernels, k)
				if m := op.ParentOp(); m != nil && m.Name() == gpu.Module {
					byName[m.SymbolName()+"::"+op.SymbolName()] = k
				}
			}
			return ir.Skip
		case gpu.Launch:
			kernels = append(kernels, &smemKernel{op: op, body: gpu.LaunchOp{Op: op}.Body(), launches: []*ir.Operation{op}})
			return ir.Skip
		case gpu.LaunchFunc:
			launchFuncs = append(launchFuncs, gpu.LaunchFuncOp{Op: op})
		}
		return ir.Advance
	})
	for _, l := range launchFuncs {
		ref, ok := l.Kernel().(*ir.SymbolRefAttr)
		if !ok || len(ref.Nested) != 1 {
			continue
		}
		if k := byName[ref.Root+"::"+ref.Nested[0]]; k != nil {
			k.launches = append(k.launches, l.Op)
		}
	}
	for _, k := range kernels {
		if err := planKernel(k, sched); err != nil {
			return err
		}
	}
	return nil
}

// isWorkgroupSpace tells whether a memory space attribute is shared memory.
func isWorkgroupSpace(a ir.Attribute) bool {
	if a == nil {
		return false
	}
	n, ok := ir.MemorySpaceNumber(a)
	return ok && n == 3
}

// memrefBytes is the size of a static memref (checked by the caller to
// fit in an int64).
func memrefBytes(t *ir.MemRefType) int64 {
	b, _ := ir.ShapeBytes(t.Shape(), ir.BitWidth(t.Elem))
	return b
}

// smemOrder numbers the ops of a kernel body in pre-order; last is the
// number of the last op nested in an op (itself when it has no regions).
type smemOrder struct {
	idx, last map[*ir.Operation]int
	n         int
}

func numberOps(body *ir.Region) *smemOrder {
	o := &smemOrder{idx: map[*ir.Operation]int{}, last: map[*ir.Operation]int{}}
	var visit func(r *ir.Region)
	visit = func(r *ir.Region) {
		for _, b := range r.Blocks() {
			for _, op := range b.Ops() {
				o.idx[op] = o.n
				o.n++
				for _, rr := range op.Regions() {
					visit(rr)
				}
				o.last[op] = o.n - 1
			}
		}
	}
	visit(body)
	return o
}

// dynamicSMemSize returns the dynamic_shared_memory_size operand of a
// gpu.launch or gpu.launch_func (nil if absent).
func dynamicSMemSize(l *ir.Operation) ir.Value {
	if l.Name() == gpu.Launch {
		return gpu.LaunchOp{Op: l}.DynamicSharedMemorySize()
	}
	return gpu.LaunchFuncOp{Op: l}.DynamicSharedMemorySize()
}

// regionArgs are the block arguments of an op's regions and its results:
// where a value given to a region op may reappear.
func regionArgs(op *ir.Operation) []ir.Value {
	vs := op.Results()
	for _, r := range op.Regions() {
		for _, b := range r.Blocks() {
			vs = append(vs, b.ArgValues()...)
		}
	}
	return vs
}

// smemAliasRetype are the ops whose memref result is a view of their memref
// operand, retyped with it when a space-3 buffer becomes a workgroup one.
var smemAliasRetype = map[string]bool{memref.Subview: true, memref.Cast: true, memref.ReinterpretCast: true, memref.View: true}

// liveRange computes a buffer's live range and alignment from its uses.
func liveRange(b *smemBuffer, body *ir.Region, ord *smemOrder, whole bool) {
	start, end := ord.idx[b.alloc], ord.idx[b.alloc]
	align, why := int64(16), "default"
	escapes := whole
	seen := map[ir.Value]bool{}
	alloc, _ := memref.AsAllocLike(b.alloc)
	work := []ir.Value{alloc.Memref()}
	touch := func(op *ir.Operation) {
		if i := ord.idx[op]; i < start {
			start = i
		}
		if i := ord.last[op]; i > end {
			end = i
		}
		for p := op.ParentOp(); p != nil && body.IsAncestorOf(p); p = p.ParentOp() {
			if passutil.IsLoop(p) {
				if ord.idx[p] < start {
					start = ord.idx[p]
				}
				if ord.last[p] > end {
					end = ord.last[p]
				}
			}
		}
	}
	need := func(a int64, w string) {
		if a > align {
			align, why = a, w
		}
	}
	for len(work) > 0 {
		v := work[len(work)-1]
		work = work[:len(work)-1]
		if seen[v] {
			continue
		}
		seen[v] = true
		for _, u := range ir.Uses(v) {
			user := u.Owner()
			touch(user)
			switch {
			case user.Name() == scf.Yield || user.Name() == scf.Condition:
				// The value leaves through the parent's results or the
				// loop's block arguments.
				user = user.ParentOp()
				touch(user)
				work = append(work, regionArgs(user)...)
			case user.NumRegions() > 0:
				work = append(work, regionArgs(user)...)
			case user.HasTrait(ir.Terminator) || strings.HasSuffix(user.Name(), ".call"):
				escapes = true
			case user.ReadsThrough(v, ir.AsyncProxy):
				// A TMA store reads the buffer asynchronously, until a
				// wait_group.read this analysis does not track.
				end = ord.n
			}
			var tensorMap ir.Value // of a TMA copy
			switch user.Name() {
			case nvgpu.TmaAsyncLoad:
				tensorMap = nvgpu.TmaAsyncLoadOp{Op: user}.TensorMapDescriptor()
			case nvgpu.TmaAsyncStore:
				tensorMap = nvgpu.TmaAsyncStoreOp{Op: user}.TensorMapDescriptor()
			case nvgpu.WarpgroupGenerateDescriptor:
				if g := (nvgpu.WarpgroupGenerateDescriptorOp{Op: user}); g.Tensor() == v {
					if d, ok := nvgpu.AsTensorMapDescriptor(g.TensorMap().Type()); ok {
						a := int64(128)
						if s := d.Swizzle.Bytes(); s > 0 {
							a = 8 * s
							b.swizzle = schedule.SwizzleName(d.Swizzle)
						}
						need(a, fmt.Sprintf("wgmma operand with %s", d.Swizzle))
					}
				}
			}
			if tensorMap != nil {
				if d, ok := nvgpu.AsTensorMapDescriptor(tensorMap.Type()); ok {
					w := "TMA copy"
					if d.Swizzle != nvgpu.SwizzleNone {
						w += fmt.Sprintf(" with %s", d.Swizzle)
					}
					need(d.SharedAlign(), w)
					if d.Swizzle.Bytes() > 0 {
						b.swizzle = schedule.SwizzleName(d.Swizzle)
					}
				}
			}
			if passutil.ReadsThroughDescriptors(user) {
				// A wgmma (nvgpu/tmac.warpgroup.mma): the accumulator holds
				// no reference to the buffer, but the mma reads it
				// asynchronously until a wait_group 0.
				if e := wgmmaReadEnd(user, body, ord); e > end {
					end = e
				}
				continue
			}
			// A load (an op declaring a read of the buffer) gives values
			// that no longer refer to it; the results of every other user
			// (views, casts, descriptors, pointers and integers made from
			// its address, ...) are followed as uses of the buffer.
			if !user.Reads(v) {
				work = append(work, user.Results()...)
			}
		}
	}
	if escapes {
		start, end = 0, ord.n
	}
	if a, _ := ir.AttrInt(alloc.Alignment()); a > 0 {
		if a < align && why != "default" {
			b.needs, b.needsWhy = align, why
		}
		align, why = a, "alignment attribute"
	}
	b.iv = SMemInterval{Size: memrefBytes(b.typ), Align: align, Start: start, End: end}
	b.why = why
}

// wgmmaReadEnd is the op number up to which an asynchronous wgmma may
// still read its shared-memory operands: the first `nvvm.wgmma.wait.group
// 0` or nvgpu/tmac.warpgroup.mma.store (which wait for every group) following
// the mma's outermost enclosing loop (or the mma) in the same block, else
// the end of the kernel.
func wgmmaReadEnd(mma *ir.Operation, body *ir.Region, ord *smemOrder) int {
	anchor := mma
	for p := anchor.ParentOp(); p != nil && body.IsAncestorOf(p); p = p.ParentOp() {
		if passutil.IsLoop(p) {
			anchor = p
		}
	}
	if passutil.WaitGroup(mma) == 0 && anchor == mma {
		return ord.idx[mma]
	}
	for op := anchor.Next(); op != nil; op = op.Next() {
		switch op.Name() {
		case nvgpu.WarpgroupMmaStore, tmac.WarpgroupMmaStore:
			return ord.idx[op]
		case nvvm.WgmmaWaitGroupSyncAligned:
			if g, ok := ir.AttrInt(nvvm.WgmmaWaitGroupSyncAlignedOp{Op: op}.Group()); ok && g == 0 {
				return ord.idx[op]
			}
		}
	}
	return ord.n
}

func constInt(v ir.Value) (int64, bool) {
	if v == nil {
		return 0, false
	}
	return ir.AttrInt(ir.ConstantValue(v))
}

func planKernel(k *smemKernel, sched *schedule.Schedule) error {
	var bufs []*smemBuffer
	var static []nvgpu.MbarrierCreateOp // mbarrier groups
	var staticBytes int64
	var handPlaced []*ir.Operation
	var globals []*ir.Operation // workgroup memref.globals the kernel uses
	var globalBytes int64
	seenGlobal := map[*ir.Operation]bool{}
	var err error
	for _, r := range []*ir.Region{k.body} {
		ir.Walk(k.op, func(op *ir.Operation) ir.WalkResult {
			if op == k.op {
				return ir.Advance
			}
			if !r.IsAncestorOf(op) {
				return ir.Skip
			}
			switch op.Name() {
			case memref.Alloc, memref.Alloca:
				a, _ := memref.AsAllocLike(op)
				t, ok := a.Memref().Type().(*ir.MemRefType)
				if !ok || !isWorkgroupSpace(t.MemorySpace) {
					return ir.Advance
				}
				if !ir.HasStaticShape(t.Shape()) || len(a.DynamicSizes())+len(a.SymbolOperands()) > 0 {
					err = op.EmitOpError("smem-plan: cannot place a dynamically sized shared-memory buffer ('%s') in dynamic shared memory", t)
					return ir.Interrupt
				}
				if t.Layout != nil {
					if sl, ok := t.Layout.(*ir.StridedLayoutAttr); !ok || !sl.IsIdentityFor(t.Shape()) {
						err = op.EmitOpError("smem-plan: cannot place a shared-memory buffer with a non-identity layout ('%s') in dynamic shared memory", t)
						return ir.Interrupt
					}
				}
				size, ok := ir.ShapeBytes(t.Shape(), ir.BitWidth(t.Elem))
				switch {
				case !ok:
					err = op.EmitOpError("smem-plan: %s", ir.TooLarge(t))
					return ir.Interrupt
				case size > smemLimit:
					err = op.EmitOpError("smem-plan: this buffer ('%s') needs %d bytes of shared memory, over the 227 KB limit (%d bytes)", t, size, smemLimit)
					return ir.Interrupt
				}
				bufs = append(bufs, &smemBuffer{alloc: op, typ: t})
			case nvgpu.MbarrierCreate:
				c := nvgpu.MbarrierCreateOp{Op: op}
				if g, ok := nvgpu.AsMBarrierGroup(c.Barriers().Type()); ok {
					static = append(static, c)
					staticBytes += 8 * int64(g.NumBarriers)
				}
			case gpu.DynamicSharedMemory:
				handPlaced = append(handPlaced, op)
			case memref.GetGlobal:
				// A workgroup memref.global is static shared memory.
				g := passutil.LookupGlobal(k.op, memref.GetGlobalOp{Op: op}.Name())
				if g == nil || seenGlobal[g] {
					return ir.Advance
				}
				ta, _ := memref.GlobalOp{Op: g}.Type().(*ir.TypeAttr)
				t, ok := ta.Value.(*ir.MemRefType)
				if !ok || !isWorkgroupSpace(t.MemorySpace) {
					return ir.Advance
				}
				seenGlobal[g] = true
				size, ok := ir.ShapeBytes(t.Shape(), ir.BitWidth(t.Elem))
				if !ok {
					err = g.EmitOpError("%s", ir.TooLarge(t))
					return ir.Interrupt
				}
				globals = append(globals, g)
				globalBytes += size
			}
			return ir.Advance
		})
	}
	if err != nil {
		return err
	}
	globalNotes := func(d *ir.Diagnostic) {
		for _, g := range globals {
			ta, _ := memref.GlobalOp{Op: g}.Type().(*ir.TypeAttr)
			t := ta.Value.(*ir.MemRefType)
			b, _ := ir.ShapeBytes(t.Shape(), ir.BitWidth(t.Elem))
			d.AttachNote(g.Loc, "memref.global @%s: %d bytes of static shared memory", g.SymbolName(), b)
		}
	}
	if globalBytes > sm90.MaxStaticSharedBytesPerBlock {
		d := k.op.EmitOpError("smem-plan: the kernel uses %d bytes of static shared memory (workgroup memref.globals), over the %d KB a block can have outside dynamic shared memory", globalBytes, sm90.MaxStaticSharedBytesPerBlock>>10)
		globalNotes(d)
		return d
	}
	staticBytes += globalBytes

	// The bytes hand-placed dynamic shared memory keeps.
	var reserved int64
	reservedKnown := true
	for _, l := range k.launches {
		if v := dynamicSMemSize(l); v != nil {
			c, ok := constInt(v)
			if !ok {
				reservedKnown = false
			} else if c > reserved {
				reserved = c
			}
		}
	}
	if len(handPlaced) == 0 {
		reserved = 0
	} else if len(bufs) > 0 && (!reservedKnown || len(k.launches) == 0) {
		// A kernel without launches (launched from elsewhere, or one this
		// pass placed buffers in before lower-nvgpu added its mbarriers):
		// the bytes used are known when every use is a view at a constant
		// offset.
		ext, ok := viewsExtent(handPlaced)
		if !ok || len(k.launches) > 0 {
			return handPlaced[0].EmitOpError("smem-plan: the kernel already uses dynamic shared memory, but the size its launches give it is not a known constant, so no buffer can be placed after it")
		}
		reserved = ext
	}

	ord := numberOps(k.body)
	whole := len(k.body.Blocks()) > 1
	ivs := make([]*SMemInterval, len(bufs))
	for i, b := range bufs {
		liveRange(b, k.body, ord, whole || b.alloc.HasAttr(tmac.MBarrierMemoryAttr))
		if b.needs > 0 {
			// Placed at an offset with only the alignment asked for, the
			// buffer might happen to be aligned enough, or not.
			return b.alloc.EmitOpError("smem-plan: needs %d-byte alignment (%s), but it is allocated with alignment = %d", b.needs, b.needsWhy, b.iv.Align)
		}
		if b.iv.Align > 1024 {
			return b.alloc.EmitOpError("smem-plan: alignment = %d cannot be given in dynamic shared memory, which is 1024-byte aligned", b.iv.Align)
		}
		ivs[i] = &b.iv
	}
	total := planSMem(ivs, reserved)
	recordSMem(sched, k, bufs, total, staticBytes, reserved, len(handPlaced) > 0, ord.n)

	if total+staticBytes > smemLimit {
		d := k.op.EmitOpError("smem-plan: the kernel needs %d bytes of shared memory per block (%d dynamic, %d static), over the 227 KB limit (%d bytes)", total+staticBytes, total, staticBytes, smemLimit)
		if len(handPlaced) > 0 && reserved > 0 {
			d.AttachNote(handPlaced[0].Loc, "hand-placed dynamic shared memory: %d bytes at offset 0", reserved)
		}
		for _, b := range bufs {
			d.AttachNote(b.alloc.Loc, "buffer %s: %d bytes at offset %d (alignment %d)", b.typ, b.iv.Size, b.iv.Offset, b.iv.Align)
		}
		for _, s := range static {
			g, _ := nvgpu.AsMBarrierGroup(s.Barriers().Type())
			d.AttachNote(s.Op.Loc, "mbarrier group of %d: %d bytes of static shared memory", g.NumBarriers, 8*int64(g.NumBarriers))
		}
		globalNotes(d)
		return d
	}
	if len(bufs) == 0 {
		return nil
	}

	// Rewrite the allocations as views of the dynamic shared memory.
	wg := gpu.AddressSpaceAttr("workgroup")
	entry := k.body.Entry()
	b := ir.NewBuilder(k.op.Loc)
	b.SetInsertionPointToStart(entry)
	dsm := b.CreateOp(gpu.DynamicSharedMemory, nil, []ir.Type{ir.MemRefTypeOf([]int64{ir.Dynamic}, ir.I8, nil, wg)}).Result(0)
	for _, buf := range bufs {
		alloc, _ := memref.AsAllocLike(buf.alloc)
		a, mem := buf.alloc, alloc.Memref()
		vt := ir.MemRefTypeOf(buf.typ.Shape(), buf.typ.Elem, nil, wg)
		if buf.typ.MemorySpace != ir.Attribute(wg) {
			retypeToWorkgroup(mem, wg)
		}
		bl := ir.NewBuilder(a.Loc)
		bl.SetInsertionPoint(a)
		off := bl.CreateOp(arith.Constant, nil, []ir.Type{ir.Index}, ir.NamedAttr{Name: "value", Value: ir.IndexAttr(buf.iv.Offset)}).Result(0)
		view := bl.CreateOp(memref.View, []ir.Value{dsm, off}, []ir.Type{vt})
		for _, u := range ir.Users(mem) {
			if u.Name() == memref.Dealloc {
				u.Erase()
			}
		}
		ir.ReplaceAllUsesWith(mem, memref.ViewOp{Op: view}.Result())
		a.Erase()
	}

	for _, l := range k.launches {
		setDynamicSMem(l, total)
	}
	return nil
}

// viewsExtent returns the bytes of dynamic shared memory the given
// gpu.dynamic_shared_memory ops are used for, when every use is a
// memref.view at a constant byte offset with a static result type (as
// smem-plan itself places buffers).
func viewsExtent(dsms []*ir.Operation) (int64, bool) {
	var ext int64
	for _, d := range dsms {
		dsm := gpu.DynamicSharedMemoryOp{Op: d}.ResultMemref()
		for _, u := range ir.Users(dsm) {
			vw, ok := memref.AsView(u)
			if !ok || vw.Source() != dsm {
				return 0, false
			}
			off, ok := constInt(vw.ByteShift())
			t, tok := vw.Result().Type().(*ir.MemRefType)
			if !ok || !tok || off < 0 {
				return 0, false
			}
			size, ok := ir.ShapeBytes(t.Shape(), ir.BitWidth(t.Elem))
			if !ok {
				return 0, false
			}
			ext = max(ext, off+size)
		}
	}
	return ext, true
}

// retypeToWorkgroup moves a space-3 memref value, and the views derived
// from it, to #gpu.address_space<workgroup>.
func retypeToWorkgroup(v ir.Value, wg ir.Attribute) {
	t, ok := v.Type().(*ir.MemRefType)
	if !ok || t.MemorySpace == wg || !isWorkgroupSpace(t.MemorySpace) {
		return
	}
	v.SetType(ir.MemRefTypeOf(t.Shape(), t.Elem, t.Layout, wg))
	for _, u := range ir.Users(v) {
		if smemAliasRetype[u.Name()] {
			for _, r := range u.Results() {
				retypeToWorkgroup(r, wg)
			}
		}
	}
}

// setDynamicSMem gives a gpu.launch / gpu.launch_func at least size bytes
// of dynamic shared memory.
func setDynamicSMem(l *ir.Operation, size int64) {
	b := ir.NewBuilder(l.Loc)
	b.SetInsertionPoint(l)
	old := dynamicSMemSize(l)
	if c, ok := constInt(old); ok && c >= size {
		return
	} else if ok {
		old = nil
	}
	var v ir.Value = b.CreateOp(arith.Constant, nil, []ir.Type{ir.I32}, ir.NamedAttr{Name: "value", Value: ir.I32Attr(size)}).Result(0)
	if old != nil {
		v = b.CreateOp(arith.Maxui, []ir.Value{old, v}, []ir.Type{ir.I32}).Result(0)
	}
	lo, hi, _ := l.OperandGroupRange("dynamicSharedMemorySize")
	if hi > lo {
		l.SetOperand(lo, v)
		return
	}
	ops := l.Operands()
	nops := append(append(append([]ir.Value{}, ops[:lo]...), v), ops[lo:]...)
	segs := l.Attr("operandSegmentSizes").(*ir.DenseArrayAttr)
	ns := append([]int64{}, segs.Ints...)
	for i, s := range l.Def().Operands {
		if s.Name == "dynamicSharedMemorySize" {
			ns[i] = 1
		}
	}
	l.SetOperands(nops)
	l.SetAttr("operandSegmentSizes", ir.DenseI32Array(ns...))
}

// recordSMem records a kernel's plan for tmac explain (passes/schedule).
func recordSMem(sched *schedule.Schedule, k *smemKernel, bufs []*smemBuffer, total, static, reserved int64, handPlaced bool, nops int) {
	ks := sched.KernelFor(k.op)
	if ks == nil {
		return
	}
	ks.SMemRuns++
	if ks.SMemRuns == 1 && handPlaced {
		ks.HandPlaced = reserved
	}
	ks.SMemTotal, ks.SMemStatic = total, static
	for _, b := range bufs {
		ks.SMem = append(ks.SMem, &schedule.SMemPlacement{Loc: b.alloc.Loc, Type: b.typ, Offset: b.iv.Offset, Size: b.iv.Size,
			Align: b.iv.Align, Why: b.why, Start: b.iv.Start, End: b.iv.End, Run: ks.SMemRuns, Alloc: b.alloc,
			Whole: b.iv.Start == 0 && b.iv.End >= nops, Barriers: b.alloc.HasAttr(tmac.MBarrierMemoryAttr), Swizzle: b.swizzle})
	}
}
