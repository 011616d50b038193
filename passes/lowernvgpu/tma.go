package lowernvgpu

import (
	"fmt"
	"strings"

	"github.com/tmac-dev/tmac/dialects/arith"
	"github.com/tmac-dev/tmac/dialects/gpu"
	"github.com/tmac-dev/tmac/dialects/llvm"
	"github.com/tmac-dev/tmac/dialects/memref"
	"github.com/tmac-dev/tmac/dialects/nvgpu"
	"github.com/tmac-dev/tmac/dialects/nvvm"
	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/passes/internal/passutil"
)

// TMA lowering.
//
// TMA coordinates in the IR are in elements, innermost dimension first, as
// in upstream nvgpu and in the hardware instruction: for a tile of
// memref<ROWSxCOLSxT>, `%desc[%col, %row]`. lower-nvgpu converts them to i32
// and passes them through in the same order; it converts nothing else.
//
//   - nvgpu.tma.async.load → nvvm.cp.async.bulk.tensor.shared.cluster.global
//     (tile mode, 1–5 dimensions), destination !llvm.ptr<7> (the block's own
//     shared memory seen through the shared::cluster window), completing on
//     the barrier's !llvm.ptr<3>; multicast_mask and predicate are passed
//     through. nvgpu has no L2 cache hint.
//   - nvgpu.tma.async.store → nvvm.cp.async.bulk.tensor.global.shared.cta
//     followed by nvvm.cp.async.bulk.commit.group: each store is its own bulk
//     group. nvgpu has no op to wait for bulk groups; the program writes
//     `nvvm.cp.async.bulk.wait_group N {read}` before it overwrites the
//     shared source of one of the last N+1 stores (or before the block exits,
//     with N = 0), and `nvvm.cp.async.bulk.wait_group 0` when it needs the
//     stores visible in global memory.
//   - nvgpu.tma.prefetch.descriptor → nvvm.prefetch tensormap on the generic
//     address of the (by-value, grid-constant) tensor map parameter.
//   - nvgpu.tma.fence.descriptor → nvvm.fence.proxy.acquire <sys> on the
//     tensor map's 128 bytes (generic → tensormap proxy; codegen raises the
//     PTX version to 8.3).
//   - nvgpu.tma.create.descriptor runs on the host; inside a kernel it is
//     rejected.
//
// Static checks (besides the nvgpu verifiers: box dimensions 1..256, the
// inner dimension a multiple of 16 bytes and equal to the swizzle span):
//   - a rank-1 swizzled box must not exceed the swizzle span (upstream's
//     verifier skips rank 1);
//   - the shared memory of a TMA load or store must be 128-byte aligned
//     (1024-byte with 128B swizzle): an allocation (memref.alloca/alloc,
//     memref.global) without an alignment attribute gets one; a smaller
//     explicit alignment, or a statically known offset that breaks it, is an
//     error;
//   - the bytes an mbarrier.arrive.expect_tx announces must equal the bytes
//     the TMA loads on the same barrier in the same block bring (full boxes),
//     when all are static, no load multicasts and no load on that barrier
//     (same group and index value) is in another block.

// stateAutoAligned holds the allocations whose alignment lower-nvgpu set.
const stateAutoAligned = "tma.auto-aligned"

// checkTMACopy adds the tmac checks of a TMA copy between the tensor map
// desc and the shared memory smem: the descriptor's box, then smem's
// alignment (ensureTMAAlignment).
func checkTMACopy(rw *NVGPURewriter, op *ir.Operation, desc, smem ir.Value) error {
	d, _ := nvgpu.AsTensorMapDescriptor(desc.Type())
	t := d.Tensor
	if t.Rank() == 1 && d.Swizzle != nvgpu.SwizzleNone {
		if b := t.Shape()[0] * int64(ir.BitWidth(t.Elem)) / 8; b > d.Swizzle.Bytes() {
			return rw.Errorf(op, "the inner box dimension of a %s tensor map is %d bytes; TMA allows at most the swizzle span, %d bytes", d.Swizzle, b, d.Swizzle.Bytes())
		}
	}
	return ensureTMAAlignment(rw, op, smem, d.SharedAlign(), alignWhy(d))
}

// ensureTMAAlignment checks (and, where the program left it open, sets) the
// alignment of the shared memory a TMA copy reads or writes.
func ensureTMAAlignment(rw *NVGPURewriter, op *ir.Operation, mem ir.Value, need int64, why string) error {
	v := mem
	off, known := int64(0), true // byte offset of mem in its allocation
	elemBytes := func(t ir.Type) int64 { return int64(ir.BitWidth(t.(*ir.MemRefType).Elem)) / 8 }
	layoutOffset := func(t ir.Type) (int64, bool) {
		mt, ok := t.(*ir.MemRefType)
		if !ok {
			return 0, false
		}
		_, o, ok := memref.StridesAndOffset(mt)
		return o, ok && o != ir.Dynamic
	}
	// through accounts for the offset of res, a subview or cast, in src.
	through := func(src, res ir.Value) ir.Value {
		a, ok1 := layoutOffset(res.Type())
		b, ok2 := layoutOffset(src.Type())
		if ok1 && ok2 {
			off += (a - b) * elemBytes(res.Type())
		} else {
			known = false
		}
		return src
	}
	for {
		r, ok := v.(*ir.OpResult)
		if !ok {
			return nil // a block argument: not checkable
		}
		def := r.DefiningOp()
		switch def.Name() {
		case memref.Subview:
			sv := memref.SubviewOp{Op: def}
			v = through(sv.Source(), sv.Result())
			continue
		case memref.Cast:
			c := memref.CastOp{Op: def}
			v = through(c.Source(), c.Dest())
			continue
		case memref.View:
			vw := memref.ViewOp{Op: def}
			if c, ok := arith.ConstantInt(vw.ByteShift()); ok {
				off += c
			} else {
				known = false
			}
			v = vw.Source()
			continue
		case gpu.DynamicSharedMemory:
			return checkTMAOffset(op, def, off, known, need, why) // 1024-byte aligned by codegen
		case memref.Alloca, memref.Alloc:
			if err := alignAllocation(rw, op, def, need, why); err != nil {
				return err
			}
			return checkTMAOffset(op, def, off, known, need, why)
		case memref.GetGlobal:
			g := passutil.LookupGlobal(rw.Kernel, memref.GetGlobalOp{Op: def}.Name())
			if g == nil {
				return nil
			}
			if err := alignAllocation(rw, op, g, need, why); err != nil {
				return err
			}
			return checkTMAOffset(op, def, off, known, need, why)
		}
		return nil
	}
}

// alignAllocation gives an allocation without an alignment attribute the
// alignment TMA needs (raising it later if another copy needs more), and
// rejects a smaller explicit one.
func alignAllocation(rw *NVGPURewriter, op, alloc *ir.Operation, need int64, why string) error {
	auto, _ := rw.State[stateAutoAligned].(map[*ir.Operation]bool)
	if auto == nil {
		auto = map[*ir.Operation]bool{}
		rw.State[stateAutoAligned] = auto
	}
	al := alloc.IntAttrOf("alignment", 0)
	if al == 0 || (auto[alloc] && al < need) {
		alloc.SetAttr("alignment", ir.IntAttr(need, ir.I64))
		auto[alloc] = true
		return nil
	}
	if al < need {
		return op.EmitOpError("needs its shared memory %d-byte aligned (%s), but it is allocated with alignment = %d", need, why, al).
			AttachNote(alloc.Loc, "allocated here")
	}
	return nil
}

func checkTMAOffset(op, alloc *ir.Operation, off int64, known bool, need int64, why string) error {
	if known && off%need != 0 {
		return op.EmitOpError("needs its shared memory %d-byte aligned (%s), but it starts %d bytes into its allocation", need, why, off).
			AttachNote(alloc.Loc, "allocated here")
	}
	return nil
}

// tmaCoordinates converts the coordinates to i32 (same order).
func tmaCoordinates(rw *NVGPURewriter, coords []ir.Value) []ir.Value {
	var cs []ir.Value
	for _, c := range coords {
		cs = append(cs, rw.toI32(c))
	}
	return cs
}

func alignWhy(d *nvgpu.TensorMapDescriptor) string {
	if d.Swizzle == nvgpu.Swizzle128B {
		return "TMA with 128B swizzle"
	}
	return "TMA"
}

func lowerTMALoad(rw *NVGPURewriter, op *ir.Operation) error {
	l := nvgpu.TmaAsyncLoadOp{Op: op}
	descV, dst := l.TensorMapDescriptor(), l.Dst()
	if err := checkTMACopy(rw, op, descV, dst); err != nil {
		return err
	}
	mbar, err := rw.opBarrierPtr(op, l)
	if err != nil {
		return err
	}
	coords := tmaCoordinates(rw, l.Coordinates())
	mask := optional(l.MulticastMask())
	pred := optional(l.Predicate())
	operands := []ir.Value{rw.Cast(dst, llvm.Ptr(7)), rw.Pointer(descV, 0)}
	operands = append(operands, coords...)
	operands = append(operands, mbar)
	operands = append(append(operands, mask...), pred...)
	rw.Create(nvvm.CpAsyncBulkTensorSharedClusterGlobal, operands, nil,
		ir.NamedAttr{Name: "isCTAOnly", Value: ir.Bool(false)},
		ir.NamedAttr{Name: "mode", Value: nvvm.TMALoadMode.Attr("tile")},
		ir.NamedAttr{Name: "operandSegmentSizes", Value: ir.DenseI32Array(1, 1, int64(len(coords)), 1, 0, int64(len(mask)), 0, int64(len(pred)))})
	op.Erase()
	return nil
}

func lowerTMAStore(rw *NVGPURewriter, op *ir.Operation) error {
	st := nvgpu.TmaAsyncStoreOp{Op: op}
	descV, src := st.TensorMapDescriptor(), st.Src()
	if err := checkTMACopy(rw, op, descV, src); err != nil {
		return err
	}
	coords := tmaCoordinates(rw, st.Coordinates())
	pred := optional(st.Predicate())
	operands := []ir.Value{rw.Pointer(descV, 0), rw.Cast(src, llvm.Ptr(3))}
	operands = append(append(operands, coords...), pred...)
	rw.Create(nvvm.CpAsyncBulkTensorGlobalSharedCta, operands, nil,
		ir.NamedAttr{Name: "mode", Value: nvvm.TMAStoreMode.Attr("tile")},
		ir.NamedAttr{Name: "operandSegmentSizes", Value: ir.DenseI32Array(1, 1, int64(len(coords)), 0, int64(len(pred)))})
	rw.Create(nvvm.CpAsyncBulkCommitGroup, nil, nil)
	op.Erase()
	return nil
}

func lowerTMAPrefetch(rw *NVGPURewriter, op *ir.Operation) error {
	p := nvgpu.TmaPrefetchDescriptorOp{Op: op}
	operands := append([]ir.Value{rw.Pointer(p.TensorMapDescriptor(), 0)}, optional(p.Predicate())...)
	rw.Create(nvvm.Prefetch, operands, nil, ir.NamedAttr{Name: "tensormap", Value: ir.Unit})
	op.Erase()
	return nil
}

func lowerTMAFence(rw *NVGPURewriter, op *ir.Operation) error {
	addr := rw.Pointer(nvgpu.TmaFenceDescriptorOp{Op: op}.TensorMapDescriptor(), 0)
	rw.Create(nvvm.FenceProxyAcquire, []ir.Value{addr, rw.IntConst(128, ir.I32)}, nil,
		ir.NamedAttr{Name: "fromProxy", Value: nvvm.ProxyKind.Attr("generic")},
		ir.NamedAttr{Name: "scope", Value: nvvm.MemScope.Attr("sys")},
		ir.NamedAttr{Name: "toProxy", Value: nvvm.ProxyKind.Attr("tensormap")})
	op.Erase()
	return nil
}

func rejectTMACreate(rw *NVGPURewriter, op *ir.Operation) error {
	return rw.Errorf(op, "creates a tensor map on the host; it cannot run in a kernel: create the descriptor outside gpu.launch and use it inside (it is passed to the kernel by value)")
}

// --- expect_tx check ----------------------------------------------------

// barrierKey identifies one barrier of a group within a block: the group
// value and the barrier index (a constant, or the index value itself).
type barrierKey struct {
	group ir.Value
	id    any
}

func barrierKeyOf(b passutil.BarrierOperands) barrierKey {
	id := b.MbarId()
	if c, ok := arith.ConstantInt(id); ok {
		return barrierKey{b.Barriers(), c}
	}
	return barrierKey{b.Barriers(), id}
}

// barrierTraffic collects, per block and barrier, the expect_tx ops and the
// TMA loads.
type barrierTraffic struct {
	expects []nvgpu.MbarrierArriveExpectTxOp
	loads   []nvgpu.TmaAsyncLoadOp
}

// checkExpectTx compares the bytes announced by expect_tx with the bytes the
// TMA loads on the same barrier in the same block bring.
func checkExpectTx(rw *NVGPURewriter) error {
	type blockKey struct {
		b *ir.Block
		k barrierKey
	}
	traffic := map[blockKey]*barrierTraffic{}
	loadsOn := map[barrierKey]int{} // in any block
	var order []blockKey
	ir.Walk(rw.Kernel, func(op *ir.Operation) ir.WalkResult {
		var b passutil.BarrierOperands
		switch op.Name() {
		case nvgpu.MbarrierArriveExpectTx:
			b = nvgpu.MbarrierArriveExpectTxOp{Op: op}
		case nvgpu.TmaAsyncLoad:
			b = nvgpu.TmaAsyncLoadOp{Op: op}
		default:
			return ir.Advance
		}
		k := blockKey{op.Block(), barrierKeyOf(b)}
		t := traffic[k]
		if t == nil {
			t = &barrierTraffic{}
			traffic[k] = t
			order = append(order, k)
		}
		switch b := b.(type) {
		case nvgpu.TmaAsyncLoadOp:
			t.loads = append(t.loads, b)
			loadsOn[k.k]++
		case nvgpu.MbarrierArriveExpectTxOp:
			t.expects = append(t.expects, b)
		}
		return ir.Advance
	})
	for _, k := range order {
		t := traffic[k]
		if len(t.expects) == 0 || len(t.loads) == 0 {
			continue
		}
		pred := t.expects[0].Predicate()
		want, ok := int64(0), true
		for _, e := range t.expects {
			n, static := arith.ConstantInt(e.Txcount())
			ok = ok && static && e.Predicate() == pred
			want += n
		}
		// Loads on the barrier in other blocks (e.g. under a condition,
		// as warp-specialize's multicast boxes) are not seen here.
		ok = ok && loadsOn[k.k] == len(t.loads)
		got := int64(0)
		for _, l := range t.loads {
			d, _ := nvgpu.AsTensorMapDescriptor(l.TensorMapDescriptor().Type())
			ok = ok && l.MulticastMask() == nil && l.Predicate() == pred
			got += d.BoxBytes()
		}
		if !ok || want == got {
			continue
		}
		which := "this barrier"
		if c, isConst := k.k.id.(int64); isConst {
			which = fmt.Sprintf("barrier %d", c)
		}
		e := t.expects[0].Op
		diag := e.EmitError("expect_tx of %d bytes on %s but the TMA loads on it bring %d bytes", want, which, got)
		for _, x := range t.expects[1:] {
			n, _ := arith.ConstantInt(x.Txcount())
			diag.AttachNote(x.Op.Loc, "expect_tx of %d more bytes here", n)
		}
		for _, l := range t.loads {
			d, _ := nvgpu.AsTensorMapDescriptor(l.TensorMapDescriptor().Type())
			diag.AttachNote(l.Op.Loc, "this TMA load brings %d bytes (a %s box)", d.BoxBytes(), boxText(d.Tensor))
		}
		return diag
	}
	return nil
}

// boxText writes a box as 64x64xf16.
func boxText(t *ir.MemRefType) string {
	var sb strings.Builder
	for _, s := range t.Shape() {
		fmt.Fprintf(&sb, "%dx", s)
	}
	sb.WriteString(t.Elem.String())
	return sb.String()
}
