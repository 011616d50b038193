package nvvm

import (
	"github.com/tmac-dev/tmac/dialects/llvm"
	"github.com/tmac-dev/tmac/ir"
)

// Accessors used by verifiers and lowerings.

// EnumOf returns the keyword of the enum attribute name on op ("" if absent).
func EnumOf(op *ir.Operation, name string) string { return EnumValue(op.Attr(name)) }

// WGMMAShape returns the m, n, k of an nvvm.wgmma.mma_async op.
func WGMMAShape(op *ir.Operation) (m, n, k int64) {
	if d := ShapeOf(op.Attr("shape")); d != nil {
		return d.M, d.N, d.K
	}
	return 0, 0, 0
}

// WGMMATypes returns typeA, typeB and typeD of an nvvm.wgmma.mma_async op
// ("f16", "bf16", "tf32", "e4m3", "e5m2", "s8", "u8", "b1", "f32", "s32").
func WGMMATypes(op *ir.Operation) (a, b, d string) {
	return EnumOf(op, "typeA"), EnumOf(op, "typeB"), EnumOf(op, "typeD")
}

// WGMMALayouts returns layoutA and layoutB ("row" or "col").
func WGMMALayouts(op *ir.Operation) (a, b string) {
	return EnumOf(op, "layoutA"), EnumOf(op, "layoutB")
}

// WGMMAScales returns scaleA, scaleB ("one"/"neg") and scaleD ("zero"/"one").
func WGMMAScales(op *ir.Operation) (a, b, d string) {
	return EnumOf(op, "scaleA"), EnumOf(op, "scaleB"), EnumOf(op, "scaleD")
}

// AttrInt returns an integer attribute of op (def if absent).
func AttrInt(op *ir.Operation, name string, def int64) int64 { return op.IntAttrOf(name, def) }

// IsTrue reports whether a bool / unit attribute is set on op.
func IsTrue(op *ir.Operation, name string) bool {
	switch a := op.Attr(name).(type) {
	case *ir.UnitAttr:
		return true
	case *ir.IntegerAttr:
		return a.Int() != 0
	}
	return false
}

func addrSpace(op *ir.Operation, i int) int64 {
	as, _ := llvm.PtrAddrSpace(op.Operand(i).Type())
	return as
}

func verifyNoProps(op *ir.Operation) error {
	d := op.Def()
	if len(d.Attrs) == 0 && d.Traits&ir.AttrSizedOperandSegments == 0 && len(op.Props()) > 0 {
		return op.EmitError("invalid properties %s for op %s: this operation does not support properties", ir.Dict(op.Props()), op.Name())
	}
	return verifySM(op)
}

// verifySM checks the op's SM requirement against the #nvvm.target of the
// enclosing gpu.module, if any.
func verifySM(op *ir.Operation) error {
	req, ok := smRequirements[op.Name()]
	if !ok {
		return nil
	}
	mod := op.ParentOfName("gpu.module")
	if mod == nil {
		return nil
	}
	targets, _ := mod.Attr("targets").(*ir.ArrayAttr)
	if targets == nil {
		return nil
	}
	for _, t := range targets.Elems {
		td := TargetOf(t)
		if td == nil || !td.VerifyTarget {
			continue
		}
		ver, arch, ok := SMVersion(td.Chip)
		if !ok {
			continue
		}
		supported := true
		if req.min > 0 && ver < req.min {
			supported = false
		}
		if req.arch != nil {
			found := false
			for _, v := range req.arch {
				if v == ver {
					found = true
				}
			}
			if !arch || !found {
				supported = false
			}
		}
		if !supported {
			return op.EmitOpError("is not supported on %s", td.Chip)
		}
		return nil
	}
	return nil
}

func verifyRange(op *ir.Operation) error {
	if r := llvm.RangeOf(op.Attr("range")); r != nil && r.Lower == r.Upper && r.Lower != 0 && r.Lower != -1 {
		max := uint64(1)<<uint(r.Width) - 1
		if r.Width >= 64 {
			max = ^uint64(0)
		}
		return op.EmitOpError("invalid range attribute: Lower == Upper, but they aren't min (0) or max (%d) value! This is an invalid constant range.", max)
	}
	return verifySM(op)
}

func groupLen(op *ir.Operation, name string) int { return len(op.OperandGroup(name)) }

func verifyBarrier(op *ir.Operation) error {
	hasID := groupLen(op, "barrierId") > 0
	if groupLen(op, "numberOfThreads") > 0 && !hasID {
		return op.EmitOpError("barrier id is missing, it should be set between 0 to 15")
	}
	hasRed, hasPred := op.Attr("reductionOp") != nil, groupLen(op, "reductionPredicate") > 0
	if hasID && (hasRed || hasPred) {
		return op.EmitOpError("reduction are only available when id is 0")
	}
	if hasRed != hasPred {
		return op.EmitOpError("reduction predicate and reduction operation must be specified together")
	}
	return nil
}

func verifyFenceProxy(op *ir.Operation) error {
	kind := EnumOf(op, "kind")
	switch kind {
	case "tensormap":
		return op.EmitOpError("tensormap proxy is not a supported proxy kind")
	case "generic":
		return op.EmitOpError("generic proxy not a supported proxy kind")
	}
	hasSpace := op.Attr("space") != nil
	if kind == "async.shared" && !hasSpace {
		return op.EmitOpError("async_shared fence requires space attribute")
	}
	if kind != "async.shared" && hasSpace {
		return op.EmitOpError("only async_shared fence can have space attribute")
	}
	return nil
}

func verifyUniProxy(op *ir.Operation) error {
	if EnumOf(op, "fromProxy") != "generic" {
		return op.EmitOpError("uni-directional proxies only support generic for from_proxy attribute")
	}
	if EnumOf(op, "toProxy") != "tensormap" {
		return op.EmitOpError("uni-directional proxies only support tensormap for to_proxy attribute")
	}
	return nil
}

func verifyScopeOnly(op *ir.Operation) error {
	if s := EnumOf(op, "scope"); s != "cta" && s != "cluster" {
		return op.EmitError("mbarrier scope must be either CTA or Cluster")
	}
	return nil
}

func verifyArriveLike(op *ir.Operation) error {
	if err := verifyScopeOnly(op); err != nil {
		return err
	}
	if addrSpace(op, 0) == 7 && op.NumResults() > 0 {
		return op.EmitError("mbarrier in shared_cluster space cannot return any value")
	}
	return nil
}

func verifyExpectTx(op *ir.Operation) error {
	if groupLen(op, "predicate") > 0 {
		switch {
		case EnumOf(op, "scope") != "cta":
			return op.EmitError("mbarrier scope must be CTA when using predicate")
		case addrSpace(op, 0) == 7:
			return op.EmitError("mbarrier in shared_cluster space is not supported when using predicate")
		case op.NumResults() > 0:
			return op.EmitError("return-value is not supported when using predicate")
		case IsTrue(op, "relaxed"):
			return op.EmitError("mbarrier with relaxed semantics is not supported when using predicate")
		}
	}
	return verifyArriveLike(op)
}

// verifyTMADims checks coordinates and im2col offsets for a load mode.
func verifyTMADims(op *ir.Operation, mode string, dims, offsets int) error {
	expectedOffsets := 0
	switch mode {
	case "tile_gather4":
		if dims != 5 {
			return op.EmitError("Gather4 mode expects 5 coordinates")
		}
	default:
		if dims < 1 || dims > 5 {
			return op.EmitError("expects coordinates between 1 to 5 dimension")
		}
		switch mode {
		case "im2col", "im2col_w", "im2col_w_128":
			if dims < 3 {
				return op.EmitError("to use %s mode, the tensor has to be at least 3-dimensional", mode)
			}
			expectedOffsets = 2
			if mode == "im2col" {
				expectedOffsets = dims - 2
			}
		}
	}
	if offsets != expectedOffsets {
		return op.EmitError(" im2col offsets expected %d (provided %d)", expectedOffsets, offsets)
	}
	return nil
}

func verifyTMALoad(op *ir.Operation) error {
	mode := EnumOf(op, "mode")
	cta := IsTrue(op, "isCTAOnly")
	if groupLen(op, "predicate") > 0 {
		if cta {
			return op.EmitError("Predicate is supported only for shared::cluster mode.")
		}
		if mode != "tile" && mode != "im2col" {
			return op.EmitError("Predicate is supported only for Tile and Im2col modes.")
		}
	} else if !cta {
		if addrSpace(op, 0) != 7 {
			return op.EmitError("Shared::cluster destination requires address-space 7.")
		}
	} else {
		if addrSpace(op, 0) != 3 {
			return op.EmitError("Shared::cta destination requires address-space 3.")
		}
		if groupLen(op, "multicastMask") > 0 {
			return op.EmitError("Multicast is not supported with shared::cta mode.")
		}
		if op.Attr("group") != nil {
			return op.EmitError("CTAGroup is not supported with shared::cta mode.")
		}
	}
	if err := verifyTMADims(op, mode, groupLen(op, "coordinates"), groupLen(op, "im2colOffsets")); err != nil {
		return err
	}
	return verifySM(op)
}

func verifyTMAPrefetch(op *ir.Operation) error {
	return verifyTMADims(op, EnumOf(op, "mode"), groupLen(op, "coordinates"), groupLen(op, "im2colOffsets"))
}

func verifyTMAStore(op *ir.Operation) error {
	mode := EnumOf(op, "mode")
	if groupLen(op, "predicate") > 0 {
		if mode != "tile" {
			return op.EmitError("Inline-ptx lowering supported only for Tile mode.")
		}
		if groupLen(op, "l2CacheHint") > 0 {
			return op.EmitError("Inline-ptx lowering unsupported with L2 cache-hint.")
		}
	}
	dims := groupLen(op, "coordinates")
	switch mode {
	case "tile_scatter4":
		if dims != 5 {
			return op.EmitError("Scatter4 mode expects 5 coordinates")
		}
	default:
		if dims < 1 || dims > 5 {
			return op.EmitError("expects coordinates between 1 to 5 dimension")
		}
		if mode == "im2col" && dims < 3 {
			return op.EmitError("to use im2col mode, the tensor has to be at least 3-dimensional")
		}
	}
	return nil
}

func verifyCpAsync(op *ir.Operation) error {
	mod := EnumOf(op, "modifier")
	size := op.IntAttrOf("size", 0)
	if mod != "cg" && mod != "ca" {
		return op.EmitError("Only CG and CA cache modifiers are supported.")
	}
	if size != 4 && size != 8 && size != 16 {
		return op.EmitError("expected byte size to be either 4, 8 or 16.")
	}
	if mod == "cg" && size != 16 {
		return op.EmitError("CG cache modifier is only support for 16 bytes copy.")
	}
	return nil
}

func verifyShfl(op *ir.Operation) error {
	rt := op.Result(0).Type()
	vt := op.Operand(1).Type()
	st := llvm.StructOf(rt)
	if op.Attr("return_value_and_is_valid") != nil {
		if st == nil || len(st.Body) != 2 {
			return op.EmitOpError("expected return type to be a two-element struct")
		}
		if st.Body[0] != vt {
			return op.EmitOpError("expected first element in the returned struct to be of type '%s' but got '%s' instead", vt, st.Body[0])
		}
		if st.Body[1] != ir.Type(ir.I1) {
			return op.EmitOpError("expected second element in the returned struct to be of type 'i1' but got '%s' instead", st.Body[1])
		}
	} else {
		if st != nil {
			return op.EmitOpError("\"return_value_and_is_valid\" attribute must be specified when the return type is a struct type")
		}
		if rt != vt {
			return op.EmitOpError("expected return type to be of type '%s' but got '%s' instead", vt, rt)
		}
	}
	return verifySM(op)
}

func verifyVote(op *ir.Operation) error {
	rt := op.Result(0).Type()
	if EnumOf(op, "kind") == "ballot" {
		if !ir.IsIntegerOfWidth(rt, 32) {
			return op.EmitOpError("vote.sync 'ballot' returns an i32")
		}
	} else if !ir.IsIntegerOfWidth(rt, 1) {
		return op.EmitOpError("vote.sync 'any', 'all' and 'uni' returns an i1")
	}
	return nil
}

func verifySetMaxReg(op *ir.Operation) error {
	n := op.IntAttrOf("regCount", 0)
	if n%8 != 0 {
		return op.EmitOpError("new register size must be multiple of 8")
	}
	if n < 24 || n > 256 {
		return op.EmitOpError("new register size must be in between 24 to 256")
	}
	return nil
}

func verifyPrefetch(op *ir.Operation) error {
	as := addrSpace(op, 0)
	level := EnumOf(op, "cacheLevel")
	evict := EnumOf(op, "evictPriority")
	tensormap := op.Attr("tensormap") != nil
	if tensormap && level != "" {
		return op.EmitOpError("cannot specify both tensormap and cache level")
	}
	switch {
	case tensormap:
		if as != 0 && as != 4 {
			return op.EmitOpError("prefetch tensormap requires a generic or constant pointer")
		}
		if evict != "" {
			return op.EmitOpError("prefetch tensormap does not support eviction priority")
		}
		if op.Attr("in_param_space") != nil && as != 0 {
			return op.EmitOpError("in_param_space can only be specified for a generic pointer")
		}
	case level != "":
		if as != 0 && as != 1 && as != 5 {
			return op.EmitOpError("prefetch to cache level requires a generic, global, or local pointer")
		}
		if op.Attr("uniform") != nil {
			if level != "L1" {
				return op.EmitOpError("unsupported cache level, the only supported uniform cache level is L1")
			}
			if as != 0 {
				return op.EmitOpError("prefetch to uniform cache requires a generic pointer")
			}
		}
		if evict != "" {
			if level != "L2" {
				return op.EmitOpError("cache eviction priority supported only for cache level L2")
			}
			if as != 1 {
				return op.EmitOpError("cache eviction priority requires a global pointer")
			}
			if evict != "evict_last" && evict != "evict_normal" {
				return op.EmitOpError("unsupported cache eviction priority, only evict_last and evict_normal are supported")
			}
		}
		if groupLen(op, "predicate") > 0 {
			return op.EmitOpError("predicate supported only on prefetch tensormap")
		}
	default:
		return op.EmitOpError("requires specification of either cache level or tensormap")
	}
	return nil
}

func verifyLdMatrix(op *ir.Operation) error {
	sh := ShapeOf(op.Attr("shape"))
	num := op.IntAttrOf("num", 0)
	layout := EnumOf(op, "layout")
	elt := EnumOf(op, "eltType")
	switch {
	case sh.M == 8 && sh.N == 8:
		if num != 1 && num != 2 && num != 4 {
			return op.EmitOpError("expected num attribute to be 1, 2 or 4 for 8x8 matrix")
		}
		if elt != "b16" {
			return op.EmitOpError("expected element type to be b16 for 8x8 matrix")
		}
	case sh.M == 8 && sh.N == 16:
		if num != 1 && num != 2 && num != 4 {
			return op.EmitOpError("expected num attribute to be 1, 2 or 4 for 8x16 matrix")
		}
		if layout != "row" {
			return op.EmitOpError("expected layout to be row for 8x16 matrix")
		}
		if elt != "b8x16.b4x16_p64" && elt != "b8x16.b6x16_p32" {
			return op.EmitOpError("expected element type to be b8x16.b4x16_p64 or b8x16.b6x16_p32 for 8x16 matrix")
		}
	case sh.M == 16 && sh.N == 16:
		if num != 1 && num != 2 {
			return op.EmitOpError("expected num attribute to be 1 or 2 for 16x16 matrix")
		}
		if layout != "col" {
			return op.EmitOpError("expected layout to be col for 16x16 matrix")
		}
		if elt != "b8" && elt != "b8x16.b4x16_p64" && elt != "b8x16.b6x16_p32" {
			return op.EmitOpError("expected element type to be b8, b8x16.b4x16_p64 or b8x16.b6x16_p32 for 16x16 matrix")
		}
	default:
		return op.EmitOpError("expected shape to be 8x8, 8x16 or 16x16")
	}
	n := num
	if sh.M == 16 && sh.N == 16 {
		n *= 2
	}
	rt := op.Result(0).Type()
	if n == 1 {
		if !ir.IsIntegerOfWidth(rt, 32) {
			return op.EmitOpError("expected destination type is i32")
		}
		return nil
	}
	st := llvm.StructOf(rt)
	ok := st != nil && int64(len(st.Body)) == n
	if ok {
		for _, e := range st.Body {
			if !ir.IsIntegerOfWidth(e, 32) {
				ok = false
			}
		}
	}
	if !ok {
		return op.EmitOpError("expected destination type is a structure of %d elements of type i32", n)
	}
	return nil
}

func verifyStMatrix(op *ir.Operation) error {
	n := groupLen(op, "sources")
	if n != 1 && n != 2 && n != 4 {
		return op.EmitOpError("expected num attribute to be 1, 2 or 4")
	}
	sh := ShapeOf(op.Attr("shape"))
	elt := EnumOf(op, "eltType")
	switch {
	case sh.M == 8 && sh.N == 8:
		if elt != "b16" {
			return op.EmitOpError("expected element type to be B16 for 8x8 matrix")
		}
	case sh.M == 16 && sh.N == 8:
		if elt != "b8" {
			return op.EmitOpError("expected element type to be B8 for 16x8 matrix")
		}
		if EnumOf(op, "layout") != "col" {
			return op.EmitOpError("expected layout to be col for 16x8 matrix")
		}
	default:
		return op.EmitOpError("expected shape to be 8x8 or 16x8")
	}
	return nil
}

// WGMMAK returns the K dimension wgmma requires for an input type (0 if the
// type is not an input type).
func WGMMAK(typeA string) int64 {
	switch typeA {
	case "tf32":
		return 8
	case "f16", "bf16":
		return 16
	case "s8", "u8", "e4m3", "e5m2":
		return 32
	case "b1":
		return 256
	}
	return 0
}

func wgmmaTypesOK(a, b, d string) bool {
	in := func(x string, set ...string) bool {
		for _, s := range set {
			if s == x {
				return true
			}
		}
		return false
	}
	switch a {
	case "f16":
		return in(d, "f32", "f16") && b == "f16"
	case "tf32":
		return d == "f32" && b == "tf32"
	case "u8", "s8":
		return d == "s32" && in(b, "u8", "s8")
	case "b1":
		return d == "s32" && b == "b1"
	case "bf16":
		return in(d, "f32", "f16") && b == "bf16"
	case "e4m3", "e5m2":
		return in(d, "f32", "f16") && in(b, "e4m3", "e5m2")
	}
	return false
}

// WGMMANValid reports whether n is a valid N for the input type.
func WGMMANValid(typeA string, n int64) bool {
	switch typeA {
	case "u8", "s8", "b1":
		if n == 8 || n == 16 || n == 24 {
			return true
		}
		return n >= 32 && n <= 256 && n%16 == 0
	}
	return n >= 8 && n <= 256 && n%8 == 0
}

// VerifyWgmma checks an nvvm.wgmma.mma_async, or an op with its
// accumulator operand first, its result and its shape, type, layout and
// scale attributes (tmac.wgmma.mma_async.scale_d).
func VerifyWgmma(op *ir.Operation) error { return verifyWgmma(op) }

func verifyWgmma(op *ir.Operation) error {
	it, rt := op.Operand(0).Type(), op.Result(0).Type()
	if it != rt {
		return op.EmitOpError("failed to verify that input struct and result struct must be the same type")
	}
	st := llvm.StructOf(it)
	for _, e := range st.Body {
		if e != st.Body[0] {
			return op.EmitOpError("all elements in struct must be same type but there is '%s'", e)
		}
	}
	a, b, d := WGMMATypes(op)
	if d != "f32" && d != "f16" && d != "s32" {
		return op.EmitOpError("does not support the given output type %s", d)
	}
	sa, sb, _ := WGMMAScales(op)
	if d == "s32" && (sa == "neg" || sb == "neg") {
		return op.EmitOpError("has s32 output, scaleA and scaleB cannot be neg")
	}
	if !wgmmaTypesOK(a, b, d) {
		return op.EmitOpError("%s += %s * %s, it is not supported.", d, a, b)
	}
	m, n, k := WGMMAShape(op)
	if m != 64 {
		return op.EmitOpError("shape 'm' must be 64")
	}
	if want := WGMMAK(a); k != want {
		return op.EmitOpError("shape 'k' must be %d for input type %s", want, a)
	}
	if !WGMMANValid(a, n) {
		return op.EmitOpError("has input type %s n is set to %d, it is not supported.", a, n)
	}
	la, lb := WGMMALayouts(op)
	if (la == "col" || lb == "row") && a != "f16" && a != "bf16" {
		return op.EmitOpError("given layouts layout_a = %s and layout_b = %s for input types %s and %s requires transpose. However, this is only supported for: f16 and bf16", la, lb, a, b)
	}
	want := n / 2
	if d == "f16" {
		want = n / 4
	}
	if int64(len(st.Body)) != want {
		return op.EmitOpError("results %d, however output struct has %d elements", want, len(st.Body))
	}
	if EnumOf(op, "satfinite") == "satfinite" && d != "s32" {
		return op.EmitOpError(" `satfinite` can be only used with s32 accumulator, however the current accumulator is %s", d)
	}
	return nil
}
