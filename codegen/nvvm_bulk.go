package codegen

import (
	"fmt"

	"github.com/llir/llvm/ir/constant"
	"github.com/llir/llvm/ir/types"
	"github.com/llir/llvm/ir/value"

	"github.com/tmac-dev/tmac/dialects/nvvm"
	"github.com/tmac-dev/tmac/ir"
)

// The non-tensor bulk copies and their L2 prefetch, the TMA reduction,
// mbarrier.arrive_drop, nanosleep, pmevent, breakpoint and exit: LLVM 22
// intrinsics (llvm.debugtrap for breakpoint). An optional L2 cache hint
// or multicast mask is passed with a flag saying whether it is used, as
// the intrinsics take them. The byte mask of a bulk store needs sm_100.

func init() {
	Register(lowerNVVMBulkG2S, nvvm.CpAsyncBulkSharedClusterGlobal)
	Register(lowerNVVMBulkS2G, nvvm.CpAsyncBulkGlobalSharedCta)
	Register(lowerNVVMBulkPrefetch, nvvm.CpAsyncBulkPrefetch)
	Register(lowerNVVMTMAReduce, nvvm.CpAsyncBulkTensorReduce)
	Register(lowerNVVMMbarrierArriveDrop, nvvm.MbarrierArriveDrop)
	Register(func(fe *FuncEmitter, op *ir.Operation) {
		fe.CallIntrinsic("llvm.nvvm.nanosleep", types.Void, fe.Val(nvvm.NanosleepOp{Op: op}.Duration()))
	}, nvvm.Nanosleep)
	Register(lowerNVVMPmevent, nvvm.Pmevent)
	Register(nvvmSimple("llvm.debugtrap"), nvvm.Breakpoint)
	Register(nvvmSimple("llvm.nvvm.exit"), nvvm.Exit)
}

// nvvmOptional returns v's value and the flag true, or zero and false
// when the optional operand v is absent.
func (fe *FuncEmitter) nvvmOptional(v ir.Value, zero value.Value) (value.Value, value.Value) {
	if v == nil {
		return zero, nvvmFlag(false)
	}
	return fe.Val(v), nvvmFlag(true)
}

func lowerNVVMBulkG2S(fe *FuncEmitter, op *ir.Operation) {
	c := nvvm.CpAsyncBulkSharedClusterGlobalOp{Op: op}
	mask, hasMask := fe.nvvmOptional(c.MulticastMask(), constant.NewInt(types.I16, 0))
	hint, hasHint := fe.nvvmOptional(c.L2CacheHint(), I64(0))
	fe.CallIntrinsic("llvm.nvvm.cp.async.bulk.global.to.shared.cluster", types.Void,
		fe.nvvmPtr(op, c.DstMem(), 7), fe.nvvmPtr(op, c.Mbar(), 3), fe.nvvmPtr(op, c.SrcMem(), 1),
		fe.Val(c.Size()), mask, hint, hasMask, hasHint)
}

func lowerNVVMBulkS2G(fe *FuncEmitter, op *ir.Operation) {
	c := nvvm.CpAsyncBulkGlobalSharedCtaOp{Op: op}
	if c.ByteMask() != nil {
		Fail(op, "'%s' with a byte mask is not supported on sm_90a: it needs sm_100", op.Name())
	}
	hint, hasHint := fe.nvvmOptional(c.L2CacheHint(), I64(0))
	fe.CallIntrinsic("llvm.nvvm.cp.async.bulk.shared.cta.to.global", types.Void,
		fe.nvvmPtr(op, c.DstMem(), 1), fe.nvvmPtr(op, c.SrcMem(), 3), fe.Val(c.Size()), hint, hasHint)
}

func lowerNVVMBulkPrefetch(fe *FuncEmitter, op *ir.Operation) {
	c := nvvm.CpAsyncBulkPrefetchOp{Op: op}
	hint, hasHint := fe.nvvmOptional(c.L2CacheHint(), I64(0))
	fe.CallIntrinsic("llvm.nvvm.cp.async.bulk.prefetch.L2", types.Void,
		fe.nvvmPtr(op, c.SrcMem(), 1), fe.Val(c.Size()), hint, hasHint)
}

func lowerNVVMTMAReduce(fe *FuncEmitter, op *ir.Operation) {
	r := nvvm.CpAsyncBulkTensorReduceOp{Op: op}
	coords := fe.Vals(r.Coordinates())
	mode := nvvm.EnumValue(r.Mode())
	switch {
	case mode == "":
		mode = "tile"
	case mode == "tile_scatter4":
		Fail(op, "Scatter mode unsupported for CpAsyncBulkTensorReduceOp")
	}
	if len(coords) < 1 || len(coords) > 5 || mode == "im2col" && len(coords) < 3 {
		Fail(op, "a %s-mode TMA reduction of %d coordinates cannot be compiled", mode, len(coords))
	}
	hint, hasHint := fe.nvvmOptional(r.L2CacheHint(), I64(0))
	args := append([]value.Value{fe.nvvmPtr(op, r.SrcMem(), 3), fe.nvvmPtr(op, r.TmaDescriptor(), 0)}, coords...)
	args = append(args, hint, hasHint)
	name := fmt.Sprintf("llvm.nvvm.cp.async.bulk.tensor.reduce.%s.%s.%dd", nvvm.EnumValue(r.RedKind()), mode, len(coords))
	fe.CallIntrinsic(name, types.Void, args...)
}

func lowerNVVMMbarrierArriveDrop(fe *FuncEmitter, op *ir.Operation) {
	a := nvvm.MbarrierArriveDropOp{Op: op}
	scope, relaxed := fe.nvvmArriveScope(op)
	count := fe.nvvmOpt(a.Count())
	if count == nil {
		count = I32(1)
	}
	if nvvmPtrSpace(a.Addr()) == 7 {
		if a.Res() != nil {
			Fail(op, "mbarrier in shared_cluster space cannot return any value")
		}
		fe.CallIntrinsic(nvvmArriveName("arrive.drop", relaxed, scope, true), types.Void, fe.nvvmPtr(op, a.Addr(), 7), count)
		return
	}
	r := fe.CallIntrinsic(nvvmArriveName("arrive.drop", relaxed, scope, false), types.I64, fe.nvvmPtr(op, a.Addr(), 3), count)
	if res := a.Res(); res != nil {
		fe.Set(res, r)
	}
}

// lowerNVVMPmevent triggers event id as the one-bit mask 1<<id, as
// upstream's translation does.
func lowerNVVMPmevent(fe *FuncEmitter, op *ir.Operation) {
	mask := op.IntAttrOf("maskedEventId", 0)
	if id, ok := op.Attr("eventId").(*ir.IntegerAttr); ok {
		mask = 1 << id.Int()
	}
	fe.CallIntrinsic("llvm.nvvm.pm.event.mask", types.Void, constant.NewInt(types.I16, mask))
}
