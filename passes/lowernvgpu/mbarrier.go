package lowernvgpu

import (
	"fmt"

	"github.com/tmac-dev/tmac/dialects/arith"
	"github.com/tmac-dev/tmac/dialects/gpu"
	"github.com/tmac-dev/tmac/dialects/llvm"
	"github.com/tmac-dev/tmac/dialects/memref"
	"github.com/tmac-dev/tmac/dialects/nvgpu"
	"github.com/tmac-dev/tmac/dialects/nvvm"
	"github.com/tmac-dev/tmac/dialects/tmac"
	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/passes/internal/passutil"
)

// mbarrier lowering.
//
// An !nvgpu.mbarrier.group<num_barriers = N> becomes shared memory,
// memref<N x i64, #gpu.address_space<workgroup>> with 8-byte alignment (a
// memref.alloca, which codegen places in a shared-memory global), and
// barrier i of the group is addressed as an !llvm.ptr<3> to its i64
// (memref.subview + builtin.unrealized_conversion_cast). Group values may
// only be used by nvgpu ops; tokens (!nvgpu.mbarrier.token, the i64 state
// returned by an arrive) likewise.
//
// nvgpu.mbarrier.init is followed by the fences its uses need:
//   - `fence.proxy.async.shared::cta` (nvvm.fence.proxy async.shared, cta)
//     when a TMA load of the kernel completes on the group: the barrier is
//     written by the generic proxy and updated by the TMA unit (async proxy);
//   - `fence.mbarrier_init.release.cluster` (nvvm.fence.mbarrier.init) when
//     the kernel runs in clusters of more than one block (known_cluster_size),
//     so that other blocks of the cluster (multicast loads, remote arrives)
//     see the initialised barrier.
// Consecutive inits share one set of fences, emitted after the last one.
// No execution barrier is inserted (upstream nvgpu inserts none either): the
// program must make the initialisation visible to the other threads before
// they use the barrier, typically by initialising from one thread and then
// running gpu.barrier (or, with clusters, nvvm.cluster.arrive +
// nvvm.cluster.wait) before the first arrive, TMA load or wait.
//
// nvgpu.mbarrier.try_wait.parity becomes nvvm.mbarrier.try_wait.parity,
// which codegen lowers to a loop around try_wait.parity with the suspend
// time hint (`ticks`), never to a hint-less spin.
//
// nvgpu has no op to invalidate a barrier: use nvvm.mbarrier.inval on the
// address of nvgpu.mbarrier.get converted with llvm.inttoptr to !llvm.ptr<3>.

const (
	stateTMAGroups    = "mbarrier.tma-groups"    // map[ir.Value]bool: groups TMA loads complete on
	stateFencePending = "mbarrier.fence-pending" // initFences of inits still waiting for their fences
)

// initFences records which fences follow an mbarrier.init.
type initFences struct{ async, cluster bool }

// findTMABarrierGroups records the groups that TMA loads complete on,
// before the loads are rewritten.
func findTMABarrierGroups(rw *NVGPURewriter) error {
	groups := map[ir.Value]bool{}
	ir.Walk(rw.Kernel, func(op *ir.Operation) ir.WalkResult {
		if l, ok := nvgpu.AsTmaAsyncLoad(op); ok {
			groups[l.Barriers()] = true
		}
		return ir.Advance
	})
	rw.State[stateTMAGroups] = groups
	return nil
}

// kernelHasClusters reports whether the kernel is known to run in clusters
// of more than one block.
func kernelHasClusters(k *ir.Operation) bool {
	a, ok := gpu.FuncOp{Op: k}.KnownClusterSize().(*ir.DenseArrayAttr)
	if !ok {
		return false
	}
	n := int64(1)
	for _, v := range a.Ints {
		n *= v
	}
	return n > 1
}

// barrierMemRefType is the shared memory of a group of n barriers.
func barrierMemRefType(n int64) *ir.MemRefType {
	return ir.MemRefTypeOf([]int64{n}, ir.I64, nil, gpu.AddressSpaceAttr("workgroup"))
}

func lowerMBarrierCreate(rw *NVGPURewriter, op *ir.Operation) error {
	res := nvgpu.MbarrierCreateOp{Op: op}.Barriers()
	g, _ := nvgpu.AsMBarrierGroup(res.Type())
	if !nvgpu.IsSharedMemory(g.MemorySpace) {
		return rw.Errorf(op, "mbarrier groups must live in shared memory (memorySpace = #gpu.address_space<workgroup>), got %s", g.MemorySpace)
	}
	if g.NumBarriers == 0 {
		return rw.Errorf(op, "an mbarrier group needs at least one barrier (num_barriers = 0)")
	}
	if err := checkNVGPUOnlyUses(op, res, "an !nvgpu.mbarrier.group"); err != nil {
		return err
	}
	alloca := rw.Create(memref.Alloca, nil, []ir.Type{barrierMemRefType(int64(g.NumBarriers))},
		ir.NamedAttr{Name: "alignment", Value: ir.IntAttr(8, ir.I64)},
		ir.NamedAttr{Name: "operandSegmentSizes", Value: ir.DenseI32Array(0, 0)},
		ir.NamedAttr{Name: tmac.MBarrierMemoryAttr, Value: ir.Unit})
	rw.Replaced[res] = alloca.Result(0)
	op.Erase()
	return nil
}

// checkNVGPUOnlyUses fails when v, a value of an nvgpu type that lowering
// replaces by something of another type, is used by a non-nvgpu op.
func checkNVGPUOnlyUses(op *ir.Operation, v ir.Value, what string) error {
	for _, u := range ir.Uses(v) {
		user := u.Owner()
		if user.Dialect() != "nvgpu" {
			d := op.EmitOpError("result is %s used by '%s'; tmac lowers %s values only when nvgpu ops alone use them (they cannot be passed through control flow, calls or casts)", what, user.Name(), what[3:])
			return d.AttachNote(user.Loc, "used here")
		}
	}
	return nil
}

// replaceNVGPUValue replaces v (an nvgpu-typed result of op, used by nvgpu
// ops only) by lowered for the rewrites of its users, and erases op.
func (rw *NVGPURewriter) replaceNVGPUValue(op *ir.Operation, v ir.Value, lowered ir.Value, what string) error {
	if err := checkNVGPUOnlyUses(op, v, what); err != nil {
		return err
	}
	if lowered != nil {
		rw.Replaced[v] = lowered
	}
	op.Erase()
	return nil
}

// toI32 converts an index (or narrower integer) value to i32.
func (rw *NVGPURewriter) toI32(v ir.Value) ir.Value {
	if c, ok := arith.ConstantInt(v); ok {
		if ir.BitWidth(v.Type()) == 1 {
			c &= 1
		}
		return rw.IntConst(c, ir.I32)
	}
	switch t := v.Type().(type) {
	case *ir.IndexType:
		return rw.Create(arith.IndexCast, []ir.Value{v}, []ir.Type{ir.I32}).Result(0)
	case *ir.IntegerType:
		switch {
		case t.Width == 32:
			return v
		case t.Width == 1:
			return rw.Create(arith.Extui, []ir.Value{v}, []ir.Type{ir.I32}).Result(0)
		case t.Width < 32:
			return rw.Create(arith.Extsi, []ir.Value{v}, []ir.Type{ir.I32}).Result(0)
		}
		return rw.Create(arith.Trunci, []ir.Value{v}, []ir.Type{ir.I32}).Result(0)
	}
	panic(fmt.Sprintf("lower-nvgpu: toI32 of %s", v.Type()))
}

// barrierMemRef returns the shared memory of a barrier group operand.
func (rw *NVGPURewriter) barrierMemRef(op *ir.Operation, group ir.Value) (ir.Value, error) {
	m, ok := rw.Replaced[group]
	if !ok {
		return nil, rw.Errorf(op, "the mbarrier group must be created by nvgpu.mbarrier.create in this kernel")
	}
	return m, nil
}

// barrierPtr returns an !llvm.ptr<3> to barrier id of a group.
func (rw *NVGPURewriter) barrierPtr(op *ir.Operation, group, id ir.Value) (ir.Value, error) {
	m, err := rw.barrierMemRef(op, group)
	if err != nil {
		return nil, err
	}
	mt := m.Type().(*ir.MemRefType)
	n := mt.Shape()[0]
	c, static := arith.ConstantInt(id)
	if static && (c < 0 || c >= n) {
		return nil, rw.Errorf(op, "barrier %d is out of range: the group has %d barrier(s)", c, n)
	}
	if static && c == 0 {
		return rw.Cast(m, llvm.Ptr(3)), nil
	}
	off := ir.Dynamic
	var dyn []ir.Value
	if static {
		off = c
	} else {
		dyn = []ir.Value{id}
	}
	rt, ok := memref.InferSubViewResultType(mt, []int64{off}, []int64{1}, []int64{1})
	if !ok {
		return nil, rw.Errorf(op, "cannot address a barrier of '%s'", mt)
	}
	sv := rw.Create(memref.Subview, append([]ir.Value{m}, dyn...), []ir.Type{rt},
		ir.NamedAttr{Name: "operandSegmentSizes", Value: ir.DenseI32Array(1, int64(len(dyn)), 0, 0)},
		ir.NamedAttr{Name: "static_offsets", Value: ir.DenseI64Array(off)},
		ir.NamedAttr{Name: "static_sizes", Value: ir.DenseI64Array(1)},
		ir.NamedAttr{Name: "static_strides", Value: ir.DenseI64Array(1)})
	return rw.Cast(sv.Result(0), llvm.Ptr(3)), nil
}

// opBarrierPtr is barrierPtr for the barrier op (of view b) addresses.
func (rw *NVGPURewriter) opBarrierPtr(op *ir.Operation, b passutil.BarrierOperands) (ir.Value, error) {
	return rw.barrierPtr(op, b.Barriers(), b.MbarId())
}

// optional returns an optional operand v as a group: empty if v is nil.
func optional(v ir.Value) []ir.Value {
	if v == nil {
		return nil
	}
	return []ir.Value{v}
}

func lowerMBarrierGet(rw *NVGPURewriter, op *ir.Operation) error {
	g := nvgpu.MbarrierGetOp{Op: op}
	p, err := rw.opBarrierPtr(op, g)
	if err != nil {
		return err
	}
	// The shared-window address of the barrier, as upstream (ptrtoint of
	// the addrspace(3) pointer, zero-extended for i64).
	rw.Replace(op, rw.Create(llvm.Ptrtoint, []ir.Value{p}, []ir.Type{g.MbarrierPointer().Type()}).Result(0))
	return nil
}

func lowerMBarrierInit(rw *NVGPURewriter, op *ir.Operation) error {
	in := nvgpu.MbarrierInitOp{Op: op}
	p, err := rw.opBarrierPtr(op, in)
	if err != nil {
		return err
	}
	operands := append([]ir.Value{p, rw.toI32(in.Count())}, optional(in.Predicate())...)
	rw.Create(nvvm.MbarrierInit, operands, nil)

	need := initFences{
		async:   rw.State[stateTMAGroups].(map[ir.Value]bool)[in.Barriers()],
		cluster: kernelHasClusters(rw.Kernel),
	}
	if pend, ok := rw.State[stateFencePending].(initFences); ok {
		need.async = need.async || pend.async
		need.cluster = need.cluster || pend.cluster
	}
	if next := op.Next(); next != nil && next.Name() == nvgpu.MbarrierInit {
		rw.State[stateFencePending] = need // the last init of the run fences
	} else {
		delete(rw.State, stateFencePending)
		if need.async {
			rw.Create(nvvm.FenceProxy, nil, nil,
				ir.NamedAttr{Name: "kind", Value: nvvm.ProxyKind.Attr("async.shared")},
				ir.NamedAttr{Name: "space", Value: nvvm.SharedSpace.Attr("cta")})
		}
		if need.cluster {
			rw.Create(nvvm.FenceMbarrierInit, nil, nil)
		}
	}
	op.Erase()
	return nil
}

func lowerMBarrierArrive(rw *NVGPURewriter, op *ir.Operation) error {
	b, _ := passutil.BarrierOp(op)
	p, err := rw.opBarrierPtr(op, b)
	if err != nil {
		return err
	}
	var a, token ir.Value
	if nc, ok := b.(nvgpu.MbarrierArriveNocompleteOp); ok {
		a = rw.Create(nvvm.MbarrierArriveNocomplete, []ir.Value{p, rw.toI32(nc.Count())}, []ir.Type{ir.I64}).Result(0)
		token = nc.Token()
	} else {
		a = rw.Create(nvvm.MbarrierArrive, []ir.Value{p}, []ir.Type{ir.I64},
			ir.NamedAttr{Name: "relaxed", Value: ir.Bool(false)},
			ir.NamedAttr{Name: "scope", Value: nvvm.MemScope.Attr("cta")}).Result(0)
		token = nvgpu.MbarrierArriveOp{Op: op}.Token()
	}
	return rw.replaceNVGPUValue(op, token, a, "an !nvgpu.mbarrier.token")
}

func lowerMBarrierExpectTx(rw *NVGPURewriter, op *ir.Operation) error {
	e := nvgpu.MbarrierArriveExpectTxOp{Op: op}
	p, err := rw.opBarrierPtr(op, e)
	if err != nil {
		return err
	}
	operands := append([]ir.Value{p, rw.toI32(e.Txcount())}, optional(e.Predicate())...)
	rw.Create(nvvm.MbarrierArriveExpectTx, operands, nil,
		ir.NamedAttr{Name: "relaxed", Value: ir.Bool(false)},
		ir.NamedAttr{Name: "scope", Value: nvvm.MemScope.Attr("cta")})
	op.Erase()
	return nil
}

func lowerMBarrierTestWait(rw *NVGPURewriter, op *ir.Operation) error {
	tw := nvgpu.MbarrierTestWaitOp{Op: op}
	p, err := rw.opBarrierPtr(op, tw)
	if err != nil {
		return err
	}
	state, ok := rw.Replaced[tw.Token()]
	if !ok {
		return rw.Errorf(op, "the token must come from an nvgpu.mbarrier.arrive or arrive.nocomplete of this kernel")
	}
	w := rw.Create(nvvm.MbarrierTestWait, []ir.Value{p, state}, []ir.Type{ir.I1},
		ir.NamedAttr{Name: "relaxed", Value: ir.Bool(false)},
		ir.NamedAttr{Name: "scope", Value: nvvm.MemScope.Attr("cta")})
	rw.Replace(op, w.Result(0))
	return nil
}

func lowerMBarrierTryWait(rw *NVGPURewriter, op *ir.Operation) error {
	w := nvgpu.MbarrierTryWaitParityOp{Op: op}
	p, err := rw.opBarrierPtr(op, w)
	if err != nil {
		return err
	}
	rw.Create(nvvm.MbarrierTryWaitParity,
		[]ir.Value{p, rw.toI32(w.PhaseParity()), rw.toI32(w.Ticks())}, nil)
	op.Erase()
	return nil
}
