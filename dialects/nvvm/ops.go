package nvvm

import (
	"strconv"

	"github.com/tmac-dev/tmac/dialects/llvm"
	"github.com/tmac-dev/tmac/ir"
)

func intType(w int) ir.TypeConstraint {
	t := ir.IntegerTypeOf(w)
	return ir.TypeConstraint{Desc: strconv.Itoa(w) + "-bit signless integer", OK: func(x ir.Type) bool { return x == ir.Type(t) }, Fixed: t}
}

var (
	tI1  = intType(1)
	tI16 = intType(16)
	tI32 = intType(32)
	tI64 = intType(64)

	tI64orI32 = ir.TypeConstraint{Desc: "64-bit signless integer or 32-bit signless integer", OK: func(t ir.Type) bool {
		return ir.IsIntegerOfWidth(t, 64) || ir.IsIntegerOfWidth(t, 32)
	}}
	tI32orF32 = ir.TypeConstraint{Desc: "32-bit signless integer or 32-bit float", OK: func(t ir.Type) bool {
		return ir.IsIntegerOfWidth(t, 32) || t == ir.Type(ir.F32T)
	}}
	tI32orI1 = ir.TypeConstraint{Desc: "32-bit signless integer or 1-bit signless integer", OK: func(t ir.Type) bool {
		return ir.IsIntegerOfWidth(t, 32) || ir.IsIntegerOfWidth(t, 1)
	}}
	tShflRes = ir.TypeConstraint{Desc: "32-bit signless integer or 32-bit float or LLVM structure type", OK: func(t ir.Type) bool {
		return ir.IsIntegerOfWidth(t, 32) || t == ir.Type(ir.F32T) || llvm.StructOf(t) != nil
	}}
)

// Attribute helpers.

func intAttrSyntax(t ir.Type) *ir.AttrSyntax {
	return &ir.AttrSyntax{
		Parse: func(p *ir.Parser) (ir.Attribute, error) {
			v, err := p.ParseInteger()
			if err != nil {
				return nil, err
			}
			return ir.IntAttr(v, t), nil
		},
		Print: func(a ir.Attribute) string {
			if ia, ok := a.(*ir.IntegerAttr); ok {
				return strconv.FormatInt(ia.Int(), 10)
			}
			return a.String()
		},
		CanStart: func(p *ir.Parser) bool { return p.Tok().Kind == ir.TokInt || p.IsPunct("-") },
	}
}

func i32Attr(name string, bare bool) ir.AttrSpec {
	s := ir.AttrSpec{Name: name, Constraint: ir.I32AttrC}
	if bare {
		s.Syntax = intAttrSyntax(ir.I32)
	}
	return s
}

func unitAttr(name string) ir.AttrSpec {
	return ir.AttrSpec{Name: name, Constraint: ir.UnitAttrC, Optional: true}
}

func enumAttr(op, name string, e *enumDef, desc string, optional bool, def ir.Attribute, custom bool) ir.AttrSpec {
	s := ir.AttrSpec{Name: name, Constraint: e.Constraint(desc), Optional: optional, Default: def}
	if custom {
		s.Syntax = e.syntax(op)
	}
	return s
}

var (
	boolAttrC = ir.AttrConstraint{Desc: "bool attribute", OK: ir.IsBool}
	rangeC    = ir.AttrConstraint{Desc: "A range of two integers, corresponding to LLVM's ConstantRange", OK: func(a ir.Attribute) bool { return llvm.RangeOf(a) != nil }}
)

// Special-register tables: name suffix, rangeable, pure, required SM.
type sreg struct {
	name      string
	rangeable bool
	pure      bool
	sm        int
}

func sregs() []sreg {
	var out []sreg
	add := func(r bool, p bool, sm int, names ...string) {
		for _, n := range names {
			out = append(out, sreg{n, r, p, sm})
		}
	}
	add(true, true, 0, "tid.x", "tid.y", "tid.z", "ntid.x", "ntid.y", "ntid.z",
		"ctaid.x", "ctaid.y", "ctaid.z", "nctaid.x", "nctaid.y", "nctaid.z",
		"laneid", "warpsize", "warpid", "nwarpid", "smid", "nsmid", "gridid",
		"clusterid.y", "clusterid.z", "nclusterid.x", "nclusterid.y", "nclusterid.z",
		"cluster.nctaid.z", "cluster.nctarank")
	add(true, true, 90, "clusterid.x", "cluster.ctaid.x", "cluster.ctaid.y", "cluster.ctaid.z",
		"cluster.nctaid.x", "cluster.nctaid.y", "cluster.ctarank")
	add(false, true, 0, "lanemask.eq", "lanemask.le", "lanemask.lt", "lanemask.ge", "lanemask.gt")
	for i := 0; i < 32; i++ {
		add(false, true, 0, "envreg"+strconv.Itoa(i))
	}
	add(false, false, 0, "clock", "clock64", "globaltimer", "globaltimer.lo")
	return out
}

// smReq records ops' SM requirements: a minimum version, or (arch) exact
// arch-specific versions.
type smReq struct {
	min  int
	arch []int
}

var smRequirements = map[string]smReq{}

// RequiredSM returns the minimum SM version an op needs (0: none) and the
// arch-specific versions it is limited to (nil: none).
func RequiredSM(opName string) (int, []int) {
	r := smRequirements[opName]
	return r.min, r.arch
}

func simple(name, summary string) *ir.OpDef {
	return &ir.OpDef{Name: name, Summary: summary, Format: "attr-dict"}
}

func init() {
	ir.RegisterCustomDirective("NVVMPtrType", ptrTypeDirective)
	ir.RegisterCustomDirective("NVVMOperandTypes", operandTypesDirective)

	var defs []*ir.OpDef
	for _, s := range sregs() {
		d := &ir.OpDef{
			Name:    "nvvm.read.ptx.sreg." + s.name,
			Summary: "Read the PTX special register %" + s.name,
			Results: []ir.ArgSpec{{Name: "res", Type: llvm.CompatibleType}},
			Format:  "attr-dict `:` type($res)",
			Verify:  verifyNoProps,
		}
		if s.pure {
			d.Traits |= ir.Pure
		}
		if s.rangeable {
			d.Attrs = []ir.AttrSpec{{Name: "range", Constraint: rangeC, Optional: true, Syntax: llvm.RangeSyntax}}
			d.Format = "(`range` $range^)? attr-dict `:` type($res)"
			d.Verify = verifyRange
		}
		if s.sm > 0 {
			smRequirements[d.Name] = smReq{min: s.sm}
		}
		defs = append(defs, d)
	}

	memScopeDef := MemScope.Attr("cta")
	relaxedDef := ir.Bool(false)
	scopeAttrs := []ir.AttrSpec{
		{Name: "relaxed", Constraint: boolAttrC, Default: relaxedDef},
		enumAttr("", "scope", MemScope, "NVVM Memory Scope", false, memScopeDef, false),
	}
	tmaLoadMode := enumAttr("", "mode", TMALoadMode, "List of Load-Modes supported for TMA Tensor Ops", false, TMALoadMode.Attr("tile"), false)
	// The layout attributes of ldmatrix and stmatrix.
	ldStEltType := enumAttr("", "eltType", LdStEltType, "Element type for ldmatrix and stmatrix", false, nil, false)
	ldStLayout := enumAttr("", "layout", MMALayout, "NVVM MMA layout", false, nil, false)
	ldStShape := ir.AttrSpec{Name: "shape", Constraint: ir.AttrConstraint{Desc: "Matrix shape for ldmatrix and stmatrix", OK: isLdStShape}}
	ptr03 := llvm.PtrInSpaces(0, 3)
	ptr037 := llvm.PtrInSpaces(0, 3, 7)

	defs = append(defs,
		simple("nvvm.barrier0", "CTA barrier on barrier 0"),
		&ir.OpDef{
			Name:    "nvvm.barrier",
			Summary: "CTA barrier with optional id, thread count and reduction",
			Traits:  ir.AttrSizedOperandSegments,
			Operands: []ir.ArgSpec{
				{Name: "barrierId", Kind: ir.Optional, Type: tI32},
				{Name: "numberOfThreads", Kind: ir.Optional, Type: tI32},
				{Name: "reductionPredicate", Kind: ir.Optional, Type: tI32},
			},
			Results: []ir.ArgSpec{{Name: "res", Kind: ir.Optional, Type: tI32}},
			Attrs:   []ir.AttrSpec{enumAttr("nvvm.barrier", "reductionOp", Reduction, "NVVM barrier reduction operation", true, nil, false)},
			Format:  "(`id` `=` $barrierId^)? (`number_of_threads` `=` $numberOfThreads^)? ($reductionOp^ ($reductionPredicate^)?)? (`->` type($res)^)? attr-dict",
			Verify:  verifyBarrier,
		},
		&ir.OpDef{
			Name:    "nvvm.barrier.arrive",
			Summary: "Arrive at a named barrier",
			Operands: []ir.ArgSpec{
				{Name: "barrierId", Kind: ir.Optional, Type: tI32},
				{Name: "numberOfThreads", Type: tI32},
			},
			Format: "(`id` `=` $barrierId^)? `number_of_threads` `=` $numberOfThreads attr-dict",
		},
	)
	for _, n := range []string{"nvvm.cluster.arrive", "nvvm.cluster.arrive.relaxed", "nvvm.cluster.wait"} {
		defs = append(defs, &ir.OpDef{Name: n, Summary: "Cluster barrier", Attrs: []ir.AttrSpec{unitAttr("aligned")}, Format: "attr-dict", Verify: verifySM})
	}
	smRequirements["nvvm.cluster.arrive.relaxed"] = smReq{min: 90}
	smRequirements["nvvm.cluster.wait"] = smReq{min: 90}

	proxyAttrs := func(op string) []ir.AttrSpec {
		return []ir.AttrSpec{
			enumAttr(op, "fromProxy", ProxyKind, "Proxy kind", false, ProxyKind.Attr("generic"), false),
			enumAttr(op, "scope", MemScope, "NVVM Memory Scope", false, nil, true),
			enumAttr(op, "toProxy", ProxyKind, "Proxy kind", false, ProxyKind.Attr("tensormap"), false),
		}
	}
	defs = append(defs,
		&ir.OpDef{
			Name:    "nvvm.fence.proxy",
			Summary: "Bidirectional proxy fence",
			Attrs: []ir.AttrSpec{
				enumAttr("", "kind", ProxyKind, "Proxy kind", false, nil, false),
				enumAttr("", "space", SharedSpace, "Shared memory space", true, nil, false),
			},
			Format: "attr-dict",
			Verify: verifyFenceProxy,
		},
		&ir.OpDef{
			Name:     "nvvm.fence.proxy.acquire",
			Summary:  "Uni-directional proxy fence with acquire semantics",
			Operands: []ir.ArgSpec{{Name: "addr", Type: llvm.PtrInSpaces(0)}, {Name: "size", Type: tI32}},
			Attrs:    proxyAttrs("nvvm.fence.proxy.acquire"),
			Format:   "$scope $addr `,` $size (`from_proxy` `=` $fromProxy^)? (`to_proxy` `=` $toProxy^)? attr-dict",
			Verify:   verifyUniProxy,
		},
		&ir.OpDef{
			Name:    "nvvm.fence.proxy.release",
			Summary: "Uni-directional proxy fence with release semantics",
			Attrs:   proxyAttrs("nvvm.fence.proxy.release"),
			Format:  "$scope (`from_proxy` `=` $fromProxy^)? (`to_proxy` `=` $toProxy^)? attr-dict",
			Verify:  verifyUniProxy,
		},
		&ir.OpDef{
			Name:    "nvvm.memory.barrier",
			Summary: "Memory barrier: this thread's earlier memory accesses are performed at the scope before its later ones (membar / fence.sc.cluster)",
			Attrs:   []ir.AttrSpec{enumAttr("nvvm.memory.barrier", "scope", MemScope, "NVVM Memory Scope", false, nil, true)},
			Format:  "$scope attr-dict",
		},
		simple("nvvm.fence.mbarrier.init", "Release fence for mbarrier.init"),
		simple("nvvm.fence.sc.cluster", "Sequentially-consistent cluster fence"),

		&ir.OpDef{
			Name:     "nvvm.mbarrier.init",
			Summary:  "Initialise an mbarrier",
			Operands: []ir.ArgSpec{{Name: "addr", Type: ptr03}, {Name: "count", Type: tI32}, {Name: "predicate", Kind: ir.Optional, Type: tI1}},
			Format:   "$addr `,` $count (`,` `predicate` `=` $predicate^)? attr-dict `:` custom<NVVMOperandTypes>()",
		},
		&ir.OpDef{
			Name:     "nvvm.mbarrier.inval",
			Summary:  "Invalidate an mbarrier",
			Operands: []ir.ArgSpec{{Name: "addr", Type: ptr03}},
			Format:   "$addr attr-dict `:` custom<NVVMOperandTypes>()",
		},
		&ir.OpDef{
			Name:     "nvvm.mbarrier.arrive",
			Summary:  "Arrive on an mbarrier",
			Operands: []ir.ArgSpec{{Name: "addr", Type: ptr037}, {Name: "count", Kind: ir.Optional, Type: tI32}},
			Results:  []ir.ArgSpec{{Name: "res", Kind: ir.Optional, Type: tI64}},
			Attrs:    scopeAttrs,
			Format:   "$addr (`,` $count^)? attr-dict `:` type($addr) (`->` type($res)^)?",
			Verify:   verifyArriveLike,
		},
		&ir.OpDef{
			Name:     "nvvm.mbarrier.arrive.nocomplete",
			Summary:  "Arrive without completing the phase",
			Operands: []ir.ArgSpec{{Name: "addr", Type: ptr03}, {Name: "count", Type: tI32}},
			Results:  []ir.ArgSpec{{Name: "res", Type: tI64}},
			Format:   "$addr `,` $count attr-dict `:` custom<NVVMOperandTypes>() `->` type($res)",
		},
		&ir.OpDef{
			Name:     "nvvm.mbarrier.arrive.expect_tx",
			Summary:  "expect-tx then arrive",
			Operands: []ir.ArgSpec{{Name: "addr", Type: ptr037}, {Name: "txcount", Type: tI32}, {Name: "predicate", Kind: ir.Optional, Type: tI1}},
			Results:  []ir.ArgSpec{{Name: "res", Kind: ir.Optional, Type: tI64}},
			Attrs:    scopeAttrs,
			Format:   "$addr `,` $txcount (`,` `predicate` `=` $predicate^)? attr-dict `:` custom<NVVMOperandTypes>() (`->` type($res)^)?",
			Verify:   verifyExpectTx,
		},
		&ir.OpDef{
			Name:     "nvvm.mbarrier.test.wait",
			Summary:  "Test an mbarrier phase for completion",
			Operands: []ir.ArgSpec{{Name: "addr", Type: ptr03}, {Name: "stateOrPhase", Type: tI64orI32}},
			Results:  []ir.ArgSpec{{Name: "res", Type: tI1}},
			Attrs:    scopeAttrs,
			Format:   "$addr `,` $stateOrPhase attr-dict `:` custom<NVVMOperandTypes>() `->` type($res)",
			Verify:   verifyScopeOnly,
		},
		&ir.OpDef{
			Name:     "nvvm.mbarrier.try_wait.parity",
			Summary:  "Wait on an mbarrier phase parity",
			Operands: []ir.ArgSpec{{Name: "addr", Type: ptr03}, {Name: "phase", Type: tI32}, {Name: "ticks", Type: tI32}},
			Format:   "$addr `,` $phase `,` $ticks attr-dict `:` custom<NVVMOperandTypes>()",
		},
		&ir.OpDef{
			Name:     "nvvm.mbarrier.try_wait",
			Summary:  "Try-wait on an mbarrier",
			Operands: []ir.ArgSpec{{Name: "addr", Type: ptr03}, {Name: "stateOrPhase", Type: tI64orI32}, {Name: "ticks", Kind: ir.Optional, Type: tI32}},
			Results:  []ir.ArgSpec{{Name: "res", Type: tI1}},
			Attrs:    scopeAttrs,
			Format:   "$addr `,` $stateOrPhase (`,` $ticks^)? attr-dict `:` custom<NVVMOperandTypes>() `->` type($res)",
			Verify:   verifyScopeOnly,
		},

		&ir.OpDef{
			Name:    "nvvm.cp.async.bulk.tensor.shared.cluster.global",
			Summary: "TMA load from global to shared::cluster memory",
			Traits:  ir.AttrSizedOperandSegments,
			Operands: []ir.ArgSpec{
				{Name: "dstMem", Type: llvm.PtrInSpaces(3, 7)},
				{Name: "tmaDescriptor", Type: llvm.PtrInSpaces(0)},
				{Name: "coordinates", Kind: ir.Variadic, Type: tI32},
				{Name: "mbar", Type: llvm.PtrInSpaces(3)},
				{Name: "im2colOffsets", Kind: ir.Variadic, Type: tI16},
				{Name: "multicastMask", Kind: ir.Optional, Type: tI16},
				{Name: "l2CacheHint", Kind: ir.Optional, Type: tI64},
				{Name: "predicate", Kind: ir.Optional, Type: tI1},
			},
			Attrs: []ir.AttrSpec{
				enumAttr("", "group", CTAGroup, "NVVM CTA group", true, nil, false),
				{Name: "isCTAOnly", Constraint: boolAttrC, Default: ir.Bool(false)},
				tmaLoadMode,
			},
			Format: "$dstMem `,` $tmaDescriptor `,` $mbar `,` `box` `[` $coordinates `]` (`im2col` `[` $im2colOffsets^ `]`)? " +
				"(`multicast_mask` `=` $multicastMask^)? (`l2_cache_hint` `=` $l2CacheHint^)? (`predicate` `=` $predicate^)? " +
				"attr-dict `:` type($dstMem) `,` custom<NVVMPtrType>(type($tmaDescriptor))",
			Verify: verifyTMALoad,
		},
		&ir.OpDef{
			Name:    "nvvm.cp.async.bulk.tensor.global.shared.cta",
			Summary: "TMA store from shared::cta to global memory",
			Traits:  ir.AttrSizedOperandSegments,
			Operands: []ir.ArgSpec{
				{Name: "tmaDescriptor", Type: llvm.PtrInSpaces(0)},
				{Name: "srcMem", Type: llvm.PtrInSpaces(3)},
				{Name: "coordinates", Kind: ir.Variadic, Type: tI32},
				{Name: "l2CacheHint", Kind: ir.Optional, Type: tI64},
				{Name: "predicate", Kind: ir.Optional, Type: tI1},
			},
			Attrs: []ir.AttrSpec{
				enumAttr("", "mode", TMAStoreMode, "List of Store-Modes supported for TMA Tensor Ops", false, TMAStoreMode.Attr("tile"), false),
			},
			Format: "$tmaDescriptor `,` $srcMem `,` `box` `[` $coordinates `]` (`l2_cache_hint` `=` $l2CacheHint^)? (`,` `predicate` `=` $predicate^)? " +
				"attr-dict `:` custom<NVVMPtrType>(type($tmaDescriptor)) `,` custom<NVVMPtrType>(type($srcMem))",
			Verify:  verifyTMAStore,
			Effects: []ir.Effect{{Kind: ir.Read, Operand: "srcMem", Proxy: ir.AsyncProxy}},
		},
		&ir.OpDef{
			Name:    "nvvm.cp.async.bulk.tensor.prefetch",
			Summary: "TMA prefetch into L2",
			Traits:  ir.AttrSizedOperandSegments,
			Operands: []ir.ArgSpec{
				{Name: "tmaDescriptor", Type: llvm.PtrInSpaces(0)},
				{Name: "coordinates", Kind: ir.Variadic, Type: tI32},
				{Name: "im2colOffsets", Kind: ir.Variadic, Type: tI16},
				{Name: "l2CacheHint", Kind: ir.Optional, Type: tI64},
			},
			Attrs: []ir.AttrSpec{
				tmaLoadMode,
			},
			Format: "$tmaDescriptor `,` `box` `[` $coordinates `]` (`im2col` `[` $im2colOffsets^ `]`)? (`l2_cache_hint` `=` $l2CacheHint^)? " +
				"attr-dict `:` custom<NVVMPtrType>(type($tmaDescriptor))",
			Verify: verifyTMAPrefetch,
		},
		simple("nvvm.cp.async.bulk.commit.group", "Commit bulk async copies into a group"),
		&ir.OpDef{
			Name:    "nvvm.cp.async.bulk.wait_group",
			Summary: "Wait for bulk async groups",
			Attrs: []ir.AttrSpec{
				{Name: "group", Constraint: ir.AttrConstraint{Desc: "32-bit signless integer attribute whose minimum value is 0", OK: func(a ir.Attribute) bool {
					ia, ok := a.(*ir.IntegerAttr)
					return ok && ir.IsIntegerOfWidth(ia.Type(), 32) && ia.Int() >= 0
				}}, Syntax: intAttrSyntax(ir.I32)},
				unitAttr("read"),
			},
			Format: "$group attr-dict",
			Verify: verifySM,
		},

		&ir.OpDef{
			Name:     "nvvm.cp.async.shared.global",
			Summary:  "Async copy from global to shared memory",
			Operands: []ir.ArgSpec{{Name: "dst", Type: llvm.PtrInSpaces(3)}, {Name: "src", Type: llvm.PtrInSpaces(1)}, {Name: "cpSize", Kind: ir.Optional, Type: tI32}},
			Attrs: []ir.AttrSpec{
				enumAttr("nvvm.cp.async.shared.global", "modifier", LoadCacheMod, "NVVM load cache modifier kind", false, nil, true),
				i32Attr("size", true),
			},
			Format: "$dst `,` $src `,` $size `,` `cache` `=` $modifier (`,` $cpSize^)? attr-dict `:` custom<NVVMOperandTypes>()",
			Verify: verifyCpAsync,
		},
		simple("nvvm.cp.async.commit.group", "Commit cp.async ops into a group"),
		&ir.OpDef{
			Name:    "nvvm.cp.async.wait.group",
			Summary: "Wait for cp.async groups",
			Attrs:   []ir.AttrSpec{i32Attr("n", true)},
			Format:  "$n attr-dict",
		},
		&ir.OpDef{
			Name:     "nvvm.cp.async.mbarrier.arrive",
			Summary:  "Make an mbarrier track prior cp.async ops",
			Operands: []ir.ArgSpec{{Name: "addr", Type: ptr03}},
			Attrs:    []ir.AttrSpec{{Name: "noinc", Constraint: ir.IntAttrOfWidth(1), Default: ir.Bool(false)}},
			Format:   "$addr attr-dict `:` custom<NVVMOperandTypes>()",
		},

		&ir.OpDef{
			Name:     "nvvm.elect.sync",
			Summary:  "Elect a leader lane",
			Operands: []ir.ArgSpec{{Name: "membermask", Kind: ir.Optional, Type: tI32}},
			Results:  []ir.ArgSpec{{Name: "pred", Type: tI1}},
			Format:   "($membermask^)? attr-dict `->` type(results)",
		},
		&ir.OpDef{
			Name:    "nvvm.shfl.sync",
			Summary: "Warp shuffle",
			Operands: []ir.ArgSpec{
				{Name: "thread_mask", Type: tI32}, {Name: "val", Type: tI32orF32},
				{Name: "offset", Type: tI32}, {Name: "mask_and_clamp", Type: tI32},
			},
			Results: []ir.ArgSpec{{Name: "res", Type: tShflRes}},
			Attrs: []ir.AttrSpec{
				enumAttr("nvvm.shfl.sync", "kind", ShflKind, "NVVM shuffle kind", false, nil, true),
				unitAttr("return_value_and_is_valid"),
			},
			Format: "$kind $thread_mask `,` $val `,` $offset `,` $mask_and_clamp attr-dict `:` type($val) `->` type($res)",
			Verify: verifyShfl,
		},
		&ir.OpDef{
			Name:     "nvvm.vote.sync",
			Summary:  "Warp vote",
			Operands: []ir.ArgSpec{{Name: "mask", Type: tI32}, {Name: "pred", Type: tI1}},
			Results:  []ir.ArgSpec{{Name: "res", Type: tI32orI1}},
			Attrs:    []ir.AttrSpec{enumAttr("nvvm.vote.sync", "kind", VoteSyncKind, "NVVM vote sync kind", false, nil, true)},
			Format:   "$kind $mask `,` $pred attr-dict `->` type($res)",
			Verify:   verifyVote,
		},
		&ir.OpDef{
			Name:    "nvvm.setmaxregister",
			Summary: "Warpgroup register budget hint",
			Attrs: []ir.AttrSpec{
				enumAttr("nvvm.setmaxregister", "action", MaxRegAction, "NVVM set max register action", false, nil, true),
				i32Attr("regCount", true),
			},
			Format: "$action $regCount attr-dict",
			Verify: verifySetMaxReg,
		},
		&ir.OpDef{
			Name:     "nvvm.mapa",
			Summary:  "Map the address of a shared memory variable to the corresponding address in another CTA of the cluster",
			Operands: []ir.ArgSpec{{Name: "a", Type: llvm.PtrInSpaces(0, 3)}, {Name: "b", Type: tI32}},
			Results:  []ir.ArgSpec{{Name: "res", Type: llvm.PtrInSpaces(0, 7)}},
			Format:   "$a `,` $b attr-dict `:` type($a) `->` type($res)",
			Verify: func(op *ir.Operation) error {
				a, _ := llvm.PtrAddrSpace(op.Operand(0).Type())
				r, _ := llvm.PtrAddrSpace(op.Result(0).Type())
				if !(a == 3 && r == 7) && !(a == 0 && r == 0) {
					return op.EmitOpError("failed to verify that Valid address-space check(or mapping) for mapa Op")
				}
				return nil
			},
		},
		&ir.OpDef{
			Name:     "nvvm.prefetch",
			Summary:  "Prefetch data or a tensormap",
			Operands: []ir.ArgSpec{{Name: "addr", Type: llvm.PtrInSpaces(1, 5, 0, 4)}, {Name: "predicate", Kind: ir.Optional, Type: tI1}},
			Attrs: []ir.AttrSpec{
				enumAttr("nvvm.prefetch", "cacheLevel", PrefetchLevel, "NVVM Prefetch Cache Level", true, nil, true),
				enumAttr("nvvm.prefetch", "evictPriority", EvictPriority, "NVVM Cache Eviction Priority", true, nil, true),
				unitAttr("in_param_space"),
				unitAttr("tensormap"),
				unitAttr("uniform"),
			},
			Format: "(`level` `=` $cacheLevel^ (`uniform` $uniform^)? `,`)? (`tensormap` $tensormap^ (`in_param_space` $in_param_space^)? `,`)? " +
				"(`evict_priority` `=` $evictPriority^ `,`)? $addr (`,` `predicate` `=` $predicate^)? attr-dict `:` custom<NVVMOperandTypes>()",
			Verify: verifyPrefetch,
		},

		&ir.OpDef{
			Name:     "nvvm.ldmatrix",
			Summary:  "Warp-cooperative matrix load",
			Operands: []ir.ArgSpec{{Name: "ptr", Type: llvm.PtrInSpaces(3)}},
			Results:  []ir.ArgSpec{{Name: "res", Type: ir.AnyType}},
			Attrs:    []ir.AttrSpec{ldStEltType, ldStLayout, i32Attr("num", false), ldStShape},
			Format:   "$ptr attr-dict `:` functional-type($ptr, $res)",
			Verify:   verifyLdMatrix,
			Effects:  []ir.Effect{{Kind: ir.Read, Operand: "ptr"}},
		},
		&ir.OpDef{
			Name:     "nvvm.stmatrix",
			Summary:  "Warp-cooperative matrix store",
			Operands: []ir.ArgSpec{{Name: "ptr", Type: llvm.PtrInSpaces(3)}, {Name: "sources", Kind: ir.Variadic, Type: tI32}},
			Attrs:    []ir.AttrSpec{ldStEltType, ldStLayout, ldStShape},
			Format:   "$ptr `,` $sources attr-dict `:` custom<NVVMOperandTypes>()",
			Verify:   verifyStMatrix,
		},

		&ir.OpDef{Name: "nvvm.wgmma.fence.aligned", Summary: "Fence before wgmma.mma_async", Format: "attr-dict", Verify: verifySM},
		&ir.OpDef{Name: "nvvm.wgmma.commit.group.sync.aligned", Summary: "Commit wgmma ops into a group", Format: "attr-dict", Verify: verifySM},
		&ir.OpDef{
			Name:    "nvvm.wgmma.wait.group.sync.aligned",
			Summary: "Wait for wgmma groups",
			Attrs:   []ir.AttrSpec{{Name: "group", Constraint: ir.I64AttrC, Syntax: intAttrSyntax(ir.I64)}},
			Format:  "attr-dict $group",
			Verify:  verifySM,
		},
		wgmmaDef(),
	)
	for _, n := range []string{"nvvm.wgmma.fence.aligned", "nvvm.wgmma.commit.group.sync.aligned", "nvvm.wgmma.wait.group.sync.aligned"} {
		smRequirements[n] = smReq{arch: []int{90}}
	}
	smRequirements["nvvm.shfl.sync"] = smReq{min: 30}
	smRequirements["nvvm.cp.async.bulk.wait_group"] = smReq{min: 90}
	smRequirements["nvvm.cp.async.bulk.tensor.shared.cluster.global"] = smReq{min: 90}
	for _, d := range defs {
		if d.Verify == nil {
			d.Verify = verifyNoProps
		}
	}
	ir.Register(defs...)
}

func isLdStShape(a ir.Attribute) bool {
	da, ok := a.(*ir.DialectAttr)
	return ok && da.Name == "ld_st_matrix_shape"
}

func wgmmaDef() *ir.OpDef {
	op := "nvvm.wgmma.mma_async"
	return &ir.OpDef{
		Name:    op,
		Summary: "Warpgroup asynchronous matrix multiply-accumulate",
		Operands: []ir.ArgSpec{
			{Name: "inouts", Type: llvm.AnyStruct},
			{Name: "descriptorA", Type: tI64},
			{Name: "descriptorB", Type: tI64},
		},
		Results: []ir.ArgSpec{{Name: "results", Type: llvm.AnyStruct}},
		Attrs: []ir.AttrSpec{
			enumAttr(op, "layoutA", MMALayout, "NVVM MMA layout", false, nil, true),
			enumAttr(op, "layoutB", MMALayout, "NVVM MMA layout", false, nil, true),
			enumAttr(op, "satfinite", MMAIntOverflow, "MMA overflow options", true, nil, true),
			enumAttr(op, "scaleA", WGMMAScaleIn, "WGMMA input predicate", false, nil, true),
			enumAttr(op, "scaleB", WGMMAScaleIn, "WGMMA input predicate", false, nil, true),
			enumAttr(op, "scaleD", WGMMAScaleOut, "WGMMA overflow options", false, nil, true),
			{Name: "shape", Constraint: ir.AttrConstraint{Desc: "Attribute for MMA operation shape.", OK: func(a ir.Attribute) bool {
				da, ok := a.(*ir.DialectAttr)
				return ok && da.Name == "shape"
			}}, Syntax: shapeSyntax()},
			enumAttr(op, "typeA", WGMMAType, "NVVM WGMMA types", false, nil, true),
			enumAttr(op, "typeB", WGMMAType, "NVVM WGMMA types", false, nil, true),
			enumAttr(op, "typeD", WGMMAType, "NVVM WGMMA types", false, nil, true),
		},
		Format: "$descriptorA `,` $descriptorB `,` $inouts `,` $shape `,` " +
			"`D` `[` $typeD `,` $scaleD (`,` $satfinite^)? `]` `,` " +
			"`A` `[` $typeA `,` $scaleA `,` $layoutA `]` `,` " +
			"`B` `[` $typeB `,` $scaleB `,` $layoutB `]` " +
			"attr-dict `:` type($inouts) `->` type($results)",
		Verify: verifyWgmma,
	}
}

// ptrTypeDirective prints an LLVM pointer type constrained to a single
// address space stripped (`<3>`), falling back to the full form for address
// space 0; it parses both forms.
var ptrTypeDirective = &ir.CustomDirective{
	Parse: func(p *ir.Parser, fs *ir.FormatState, args []string) error {
		name := argName(args[0])
		var t ir.Type
		if p.IsPunct("<") {
			p.ParsePunct("<")
			as, err := p.ParseInteger()
			if err != nil {
				return err
			}
			if err := p.ParsePunct(">"); err != nil {
				return err
			}
			t = llvm.Ptr(as)
		} else {
			var err error
			if t, err = p.ParseType(); err != nil {
				return err
			}
		}
		fs.Types[name] = []ir.Type{t}
		return nil
	},
	Print: func(p *ir.Printer, op *ir.Operation, args []string) {
		vs := op.OperandGroup(argName(args[0]))
		if len(vs) != 1 {
			return
		}
		t := vs[0].Type()
		if as, ok := llvm.PtrAddrSpace(t); ok && as != 0 {
			p.Write("<" + strconv.FormatInt(as, 10) + ">")
			return
		}
		p.PrintType(t)
	},
}

// argName turns "type($x)" into "x".
func argName(a string) string {
	if len(a) > 7 && a[:6] == "type($" {
		return a[6 : len(a)-1]
	}
	if len(a) > 1 && a[0] == '$' {
		return a[1:]
	}
	return a
}

// operandTypesDirective is `type(operands)` for ops with named operand
// groups: it distributes the parsed type list over the groups.
var operandTypesDirective = &ir.CustomDirective{
	Parse: func(p *ir.Parser, fs *ir.FormatState, args []string) error {
		ts, err := p.ParseTypeList()
		if err != nil {
			return err
		}
		def := ir.LookupOp(fs.St.Name)
		total := 0
		for _, s := range def.Operands {
			total += len(fs.Operands[s.Name])
		}
		if total != len(ts) {
			return p.Errorf("%d operands present, but expected %d", total, len(ts))
		}
		i := 0
		for _, s := range def.Operands {
			n := len(fs.Operands[s.Name])
			fs.Types[s.Name] = ts[i : i+n]
			i += n
		}
		return nil
	},
	Print: func(p *ir.Printer, op *ir.Operation, args []string) {
		p.PrintTypes(op.OperandTypes())
	},
}
