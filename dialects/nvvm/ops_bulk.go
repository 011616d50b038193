package nvvm

import (
	"github.com/tmac-dev/tmac/dialects/llvm"
	"github.com/tmac-dev/tmac/ir"
)

// The non-tensor bulk copies (cp.async.bulk between global and shared
// memory, and its L2 prefetch), the TMA reduction, mbarrier.arrive_drop,
// and nanosleep, pmevent, breakpoint and exit.

// TMAReduxKind is the reduction of a TMA reduce.
var TMAReduxKind = defEnum(&enumDef{mnemonic: "tma_redux_kind", cpp: "TMAReduxKind", values: []string{"add", "max", "min", "inc", "dec", "and", "or", "xor"}})

func init() {
	l2Hint := ir.ArgSpec{Name: "l2CacheHint", Kind: ir.Optional, Type: tI64}
	defs := []*ir.OpDef{
		{
			Name:    "nvvm.cp.async.bulk.shared.cluster.global",
			Summary: "Bulk copy from global to shared::cluster memory, completing on an mbarrier",
			Traits:  ir.AttrSizedOperandSegments,
			Operands: []ir.ArgSpec{
				{Name: "dstMem", Type: llvm.PtrInSpaces(3, 7)},
				{Name: "srcMem", Type: llvm.PtrInSpaces(1)},
				{Name: "mbar", Type: llvm.PtrInSpaces(3)},
				{Name: "size", Type: tI32},
				{Name: "multicastMask", Kind: ir.Optional, Type: tI16},
				l2Hint,
			},
			Format: "$dstMem `,` $srcMem `,` $mbar `,` $size (`multicast_mask` `=` $multicastMask^)? (`l2_cache_hint` `=` $l2CacheHint^)? " +
				"attr-dict `:` type($dstMem) `,` custom<NVVMPtrType>(type($srcMem))",
			Effects: []ir.Effect{{Kind: ir.Write, Operand: "dstMem", Proxy: ir.AsyncProxy}},
		},
		{
			Name:    "nvvm.cp.async.bulk.global.shared.cta",
			Summary: "Bulk copy from shared::cta to global memory, completing in a bulk async-group",
			Traits:  ir.AttrSizedOperandSegments,
			Operands: []ir.ArgSpec{
				{Name: "dstMem", Type: llvm.PtrInSpaces(1)},
				{Name: "srcMem", Type: llvm.PtrInSpaces(3)},
				{Name: "size", Type: tI32},
				l2Hint,
				{Name: "byteMask", Kind: ir.Optional, Type: tI16},
			},
			Format: "$dstMem `,` $srcMem `,` $size (`l2_cache_hint` `=` $l2CacheHint^)? (`byte_mask` `=` $byteMask^)? " +
				"attr-dict `:` custom<NVVMPtrType>(type($dstMem)) `,` custom<NVVMPtrType>(type($srcMem))",
			Effects: []ir.Effect{{Kind: ir.Read, Operand: "srcMem", Proxy: ir.AsyncProxy}},
		},
		{
			Name:     "nvvm.cp.async.bulk.prefetch",
			Summary:  "Bulk prefetch of global memory into L2",
			Operands: []ir.ArgSpec{{Name: "srcMem", Type: llvm.PtrInSpaces(1)}, {Name: "size", Type: tI32}, l2Hint},
			Format:   "$srcMem `,` $size (`l2_cache_hint` `=` $l2CacheHint^)? attr-dict `:` custom<NVVMPtrType>(type($srcMem))",
		},
		{
			Name:    "nvvm.cp.async.bulk.tensor.reduce",
			Summary: "TMA reduction of a shared::cta tile into a global tensor",
			Traits:  ir.AttrSizedOperandSegments,
			Operands: []ir.ArgSpec{
				{Name: "tmaDescriptor", Type: llvm.PtrInSpaces(0)},
				{Name: "srcMem", Type: llvm.PtrInSpaces(3)},
				{Name: "coordinates", Kind: ir.Variadic, Type: tI32},
				l2Hint,
			},
			Attrs: []ir.AttrSpec{
				enumAttr("", "mode", TMAStoreMode, "List of Store-Modes supported for TMA Tensor Ops", false, TMAStoreMode.Attr("tile"), false),
				enumAttr("", "redKind", TMAReduxKind, "NVVM TMA redux kind", false, nil, false),
			},
			Format: "$tmaDescriptor `,` $srcMem `,` `box` `[` $coordinates `]` (`l2_cache_hint` `=` $l2CacheHint^)? " +
				"attr-dict `:` type($tmaDescriptor) `,` custom<NVVMPtrType>(type($srcMem))",
			Verify:  verifyTMAReduce,
			Effects: []ir.Effect{{Kind: ir.Read, Operand: "srcMem", Proxy: ir.AsyncProxy}},
		},
		{
			Name:     "nvvm.mbarrier.arrive_drop",
			Summary:  "Arrive on an mbarrier and drop this thread from its expected count",
			Operands: []ir.ArgSpec{{Name: "addr", Type: llvm.PtrInSpaces(0, 3, 7)}, {Name: "count", Kind: ir.Optional, Type: tI32}},
			Results:  []ir.ArgSpec{{Name: "res", Kind: ir.Optional, Type: tI64}},
			Attrs: []ir.AttrSpec{
				{Name: "relaxed", Constraint: boolAttrC, Default: ir.Bool(false)},
				enumAttr("", "scope", MemScope, "NVVM Memory Scope", false, MemScope.Attr("cta"), false),
			},
			Format: "$addr (`,` $count^)? attr-dict `:` type($addr) (`->` type($res)^)?",
			Verify: verifyArriveLike,
		},
		{
			Name:     "nvvm.nanosleep",
			Summary:  "Suspend the thread for about the given number of nanoseconds",
			Operands: []ir.ArgSpec{{Name: "duration", Type: tI32}},
			Format:   "attr-dict $duration",
		},
		{
			Name:    "nvvm.pmevent",
			Summary: "Trigger performance-monitor events",
			Attrs: []ir.AttrSpec{
				{Name: "eventId", Constraint: ir.IntAttrOfWidth(32), Optional: true, Syntax: intAttrSyntax(ir.I32)},
				{Name: "maskedEventId", Constraint: ir.IntAttrOfWidth(16), Optional: true, Syntax: intAttrSyntax(ir.I16)},
			},
			Format: "attr-dict (`id` `=` $eventId^)? (`mask` `=` $maskedEventId^)?",
			Verify: verifyPmevent,
		},
		simple("nvvm.breakpoint", "Suspend the thread for a debugger (PTX brkpt)"),
		simple("nvvm.exit", "End the thread (PTX exit)"),
	}
	for _, n := range []string{"nvvm.cp.async.bulk.shared.cluster.global", "nvvm.cp.async.bulk.global.shared.cta", "nvvm.cp.async.bulk.prefetch", "nvvm.cp.async.bulk.tensor.reduce"} {
		smRequirements[n] = smReq{min: 90}
	}
	smRequirements["nvvm.nanosleep"] = smReq{min: 70}
	for _, d := range defs {
		if d.Verify == nil {
			d.Verify = verifyNoProps
		}
	}
	ir.Register(defs...)
}

func verifyTMAReduce(op *ir.Operation) error {
	dims := groupLen(op, "coordinates")
	switch mode := EnumOf(op, "mode"); {
	case mode == "tile_scatter4":
		return op.EmitError("Scatter mode unsupported for CpAsyncBulkTensorReduceOp")
	case dims < 1 || dims > 5:
		return op.EmitError("expects coordinates between 1 to 5 dimension")
	case mode == "im2col" && dims < 3:
		return op.EmitError("to use im2col mode, the tensor has to be at least 3-dimensional")
	}
	return verifySM(op)
}

func verifyPmevent(op *ir.Operation) error {
	id, hasID := op.Attr("eventId").(*ir.IntegerAttr)
	_, hasMask := op.Attr("maskedEventId").(*ir.IntegerAttr)
	switch {
	case hasID && hasMask:
		return op.EmitOpError("`id` and `mask` cannot be set at the same time")
	case !hasID && !hasMask:
		return op.EmitOpError("either `id` or `mask` must be set")
	case hasID && (id.Int() < 0 || id.Int() > 15):
		return op.EmitOpError("`id` must be between 0 and 15")
	}
	return nil
}
