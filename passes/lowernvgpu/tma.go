package lowernvgpu

import (
	"fmt"
	"strings"

	"github.com/tmac-dev/tmac/dialects/arith"
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

func init() {
	registerNVGPU(lowerTMALoad, "nvgpu.tma.async.load")
	registerNVGPU(lowerTMAStore, "nvgpu.tma.async.store")
	registerNVGPU(lowerTMAPrefetch, "nvgpu.tma.prefetch.descriptor")
	registerNVGPU(lowerTMAFence, "nvgpu.tma.fence.descriptor")
	registerNVGPU(rejectTMACreate, "nvgpu.tma.create.descriptor")
	registerNVGPUKernelCheck(checkExpectTx)
}

// stateAutoAligned holds the allocations whose alignment lower-nvgpu set.
const stateAutoAligned = "tma.auto-aligned"

// checkTMADescriptor adds the tmac checks of a descriptor used by a copy.
func checkTMADescriptor(rw *NVGPURewriter, op *ir.Operation, d *nvgpu.TensorMapDescriptor) error {
	t := d.Tensor
	if t.Rank() == 1 && d.Swizzle != nvgpu.SwizzleNone {
		if b := t.Shape()[0] * int64(ir.BitWidth(t.Elem)) / 8; b > d.Swizzle.Bytes() {
			return rw.Errorf(op, "the inner box dimension of a %s tensor map is %d bytes; TMA allows at most the swizzle span, %d bytes", d.Swizzle, b, d.Swizzle.Bytes())
		}
	}
	return nil
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
	for {
		r, ok := v.(*ir.OpResult)
		if !ok {
			return nil // a block argument: not checkable
		}
		def := r.DefiningOp()
		switch def.Name() {
		case "memref.subview", "memref.cast":
			a, ok1 := layoutOffset(def.Result(0).Type())
			b, ok2 := layoutOffset(def.Operand(0).Type())
			if ok1 && ok2 {
				off += (a - b) * elemBytes(def.Result(0).Type())
			} else {
				known = false
			}
			v = def.Operand(0)
			continue
		case "memref.view":
			if c, ok := arith.ConstantInt(def.Operand(1)); ok {
				off += c
			} else {
				known = false
			}
			v = def.Operand(0)
			continue
		case "gpu.dynamic_shared_memory":
			return checkTMAOffset(op, def, off, known, need, why) // 1024-byte aligned by codegen
		case "memref.alloca", "memref.alloc":
			if err := alignAllocation(rw, op, def, need, why); err != nil {
				return err
			}
			return checkTMAOffset(op, def, off, known, need, why)
		case "memref.get_global":
			g := passutil.LookupGlobal(rw.Kernel, def.Attr("name"))
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
func tmaCoordinates(rw *NVGPURewriter, op *ir.Operation) []ir.Value {
	var cs []ir.Value
	for _, c := range op.OperandGroup("coordinates") {
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
	descV := op.OperandNamed("tensorMapDescriptor")
	d, _ := nvgpu.AsTensorMapDescriptor(descV.Type())
	if err := checkTMADescriptor(rw, op, d); err != nil {
		return err
	}
	dst := op.OperandNamed("dst")
	if err := ensureTMAAlignment(rw, op, dst, d.SharedAlign(), alignWhy(d)); err != nil {
		return err
	}
	mbar, err := rw.opBarrierPtr(op)
	if err != nil {
		return err
	}
	coords := tmaCoordinates(rw, op)
	mask := op.OperandGroup("multicastMask")
	pred := op.OperandGroup("predicate")
	operands := []ir.Value{rw.Cast(dst, llvm.Ptr(7)), rw.Pointer(descV, 0)}
	operands = append(operands, coords...)
	operands = append(operands, mbar)
	operands = append(append(operands, mask...), pred...)
	rw.Create("nvvm.cp.async.bulk.tensor.shared.cluster.global", operands, nil,
		ir.NamedAttr{Name: "isCTAOnly", Value: ir.Bool(false)},
		ir.NamedAttr{Name: "mode", Value: nvvm.TMALoadMode.Attr("tile")},
		ir.NamedAttr{Name: "operandSegmentSizes", Value: ir.DenseI32Array(1, 1, int64(len(coords)), 1, 0, int64(len(mask)), 0, int64(len(pred)))})
	op.Erase()
	return nil
}

func lowerTMAStore(rw *NVGPURewriter, op *ir.Operation) error {
	descV := op.OperandNamed("tensorMapDescriptor")
	d, _ := nvgpu.AsTensorMapDescriptor(descV.Type())
	if err := checkTMADescriptor(rw, op, d); err != nil {
		return err
	}
	src := op.OperandNamed("src")
	if err := ensureTMAAlignment(rw, op, src, d.SharedAlign(), alignWhy(d)); err != nil {
		return err
	}
	coords := tmaCoordinates(rw, op)
	pred := op.OperandGroup("predicate")
	operands := []ir.Value{rw.Pointer(descV, 0), rw.Cast(src, llvm.Ptr(3))}
	operands = append(append(operands, coords...), pred...)
	rw.Create("nvvm.cp.async.bulk.tensor.global.shared.cta", operands, nil,
		ir.NamedAttr{Name: "mode", Value: nvvm.TMAStoreMode.Attr("tile")},
		ir.NamedAttr{Name: "operandSegmentSizes", Value: ir.DenseI32Array(1, 1, int64(len(coords)), 0, int64(len(pred)))})
	rw.Create("nvvm.cp.async.bulk.commit.group", nil, nil)
	op.Erase()
	return nil
}

func lowerTMAPrefetch(rw *NVGPURewriter, op *ir.Operation) error {
	operands := append([]ir.Value{rw.Pointer(op.OperandNamed("tensorMapDescriptor"), 0)}, op.OperandGroup("predicate")...)
	rw.Create("nvvm.prefetch", operands, nil, ir.NamedAttr{Name: "tensormap", Value: ir.Unit})
	op.Erase()
	return nil
}

func lowerTMAFence(rw *NVGPURewriter, op *ir.Operation) error {
	addr := rw.Pointer(op.OperandNamed("tensorMapDescriptor"), 0)
	rw.Create("nvvm.fence.proxy.acquire", []ir.Value{addr, rw.IntConst(128, ir.I32)}, nil,
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

func barrierKeyOf(op *ir.Operation) barrierKey {
	id := op.OperandNamed("mbarId")
	if c, ok := arith.ConstantInt(id); ok {
		return barrierKey{op.OperandNamed("barriers"), c}
	}
	return barrierKey{op.OperandNamed("barriers"), id}
}

// barrierTraffic collects, per block and barrier, the expect_tx ops and the
// TMA loads.
type barrierTraffic struct {
	expects []*ir.Operation
	loads   []*ir.Operation
}

func optionalOperand(op *ir.Operation, name string) ir.Value {
	if g := op.OperandGroup(name); len(g) == 1 {
		return g[0]
	}
	return nil
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
		if op.Name() != "nvgpu.mbarrier.arrive.expect_tx" && op.Name() != "nvgpu.tma.async.load" {
			return ir.Advance
		}
		k := blockKey{op.Block(), barrierKeyOf(op)}
		t := traffic[k]
		if t == nil {
			t = &barrierTraffic{}
			traffic[k] = t
			order = append(order, k)
		}
		if op.Name() == "nvgpu.tma.async.load" {
			t.loads = append(t.loads, op)
			loadsOn[k.k]++
		} else {
			t.expects = append(t.expects, op)
		}
		return ir.Advance
	})
	for _, k := range order {
		t := traffic[k]
		if len(t.expects) == 0 || len(t.loads) == 0 {
			continue
		}
		pred := optionalOperand(t.expects[0], "predicate")
		want, ok := int64(0), true
		for _, e := range t.expects {
			n, static := arith.ConstantInt(e.OperandNamed("txcount"))
			ok = ok && static && optionalOperand(e, "predicate") == pred
			want += n
		}
		// Loads on the barrier in other blocks (e.g. under a condition,
		// as warp-specialize's multicast boxes) are not seen here.
		ok = ok && loadsOn[k.k] == len(t.loads)
		got := int64(0)
		for _, l := range t.loads {
			d, _ := nvgpu.AsTensorMapDescriptor(l.OperandNamed("tensorMapDescriptor").Type())
			ok = ok && optionalOperand(l, "multicastMask") == nil && optionalOperand(l, "predicate") == pred
			got += d.BoxBytes()
		}
		if !ok || want == got {
			continue
		}
		which := "this barrier"
		if c, isConst := k.k.id.(int64); isConst {
			which = fmt.Sprintf("barrier %d", c)
		}
		e := t.expects[0]
		diag := e.EmitError("expect_tx of %d bytes on %s but the TMA loads on it bring %d bytes", want, which, got)
		for _, x := range t.expects[1:] {
			n, _ := arith.ConstantInt(x.OperandNamed("txcount"))
			diag.AttachNote(x.Loc, "expect_tx of %d more bytes here", n)
		}
		for _, l := range t.loads {
			d, _ := nvgpu.AsTensorMapDescriptor(l.OperandNamed("tensorMapDescriptor").Type())
			diag.AttachNote(l.Loc, "this TMA load brings %d bytes (a %s box)", d.BoxBytes(), boxText(d.Tensor))
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
