package nvgpu

import (
	"strings"

	"github.com/tmac-dev/tmac/ir"
)

// Type constraints, with upstream's summaries. Kind drives the "invalid kind
// of type specified" parse error of type($x) directives.
var (
	tensorMapC = ir.TypeConstraint{Desc: "TensorMap descriptor", Kind: typeKindPrefix + tensorMapName,
		OK: func(t ir.Type) bool { _, ok := AsTensorMapDescriptor(t); return ok }}
	mbarGroupC = ir.TypeConstraint{Desc: "mbarrier barrier type", Kind: typeKindPrefix + mbarGroupName,
		OK: func(t ir.Type) bool { _, ok := AsMBarrierGroup(t); return ok }}
	mbarTokenC = ir.TypeConstraint{Desc: "", Kind: typeKindPrefix + mbarTokenName, OK: IsMBarrierToken}
	wgDescC    = ir.TypeConstraint{Desc: "Warpgroup matrix descriptor type", Kind: typeKindPrefix + wgDescName,
		OK: func(t ir.Type) bool { _, ok := AsWarpgroupDescriptor(t); return ok }}
	wgAccC = ir.TypeConstraint{Desc: "", Kind: typeKindPrefix + wgAccName,
		OK: func(t ir.Type) bool { _, ok := AsWarpgroupAccumulator(t); return ok }}
	asyncTokenC = ir.TypeConstraint{Desc: "device async token type", Kind: typeKindPrefix + asyncTokenName,
		OK: IsDeviceAsyncToken, Fixed: DeviceAsyncTokenType()}
	unrankedMemRefC = ir.TypeConstraint{Desc: "unranked.memref of any type values", Kind: "builtin.unranked_memref",
		OK: func(t ir.Type) bool { _, ok := t.(*ir.UnrankedMemRefType); return ok }}
	// anyVectorC accepts every vector at parse time; 0-d vectors are
	// rejected by the op verifiers with the ODS message.
	anyVectorC = ir.TypeConstraint{Desc: "vector of any type values", Kind: "builtin.vector",
		OK: func(t ir.Type) bool { _, ok := t.(*ir.VectorType); return ok }}
	i1C         = fixedInt(1)
	i16C        = fixedInt(16)
	i32or64C    = ir.IntOfWidths(32, 64)
	sparseMetaC = ir.TypeConstraint{Desc: "fixed-length vector of 16-bit signless integer values of length 2", Fixed: ir.VectorTypeOf([]int64{2}, ir.I16),
		OK: func(t ir.Type) bool { return t == ir.Type(ir.VectorTypeOf([]int64{2}, ir.I16)) }}
	vectorOfF32C  = ir.TypeConstraint{Desc: "vector of 32-bit float values", Kind: "builtin.vector", OK: func(t ir.Type) bool { _, ok := t.(*ir.VectorType); return ok }}
	i64ArrayAttrC = ir.AttrConstraint{Desc: "64-bit integer array attribute", OK: func(a ir.Attribute) bool {
		arr, ok := a.(*ir.ArrayAttr)
		if !ok {
			return false
		}
		for _, e := range arr.Elems {
			ia, ok := e.(*ir.IntegerAttr)
			if !ok || !ir.IsIntegerOfWidth(ia.Type(), 64) {
				return false
			}
		}
		return true
	}}
	rcpRoundingC = ir.AttrConstraint{Desc: "Rcp rounding mode of nvgpu op", OK: func(a ir.Attribute) bool { _, ok := RcpRounding(a); return ok }}
)

const typeKindPrefix = "nvgpu."

func fixedInt(w int) ir.TypeConstraint {
	c := ir.IntOfWidths(w)
	c.Fixed = ir.IntegerTypeOf(w)
	return c
}

func one(name string, c ir.TypeConstraint) ir.ArgSpec {
	return ir.ArgSpec{Name: name, Kind: ir.Single, Type: c}
}

func opt(name string, c ir.TypeConstraint) ir.ArgSpec {
	return ir.ArgSpec{Name: name, Kind: ir.Optional, Type: c}
}

func many(name string, c ir.TypeConstraint) ir.ArgSpec {
	return ir.ArgSpec{Name: name, Kind: ir.Variadic, Type: c}
}

// nvType is the format directive for type positions whose constraint is a
// parameterised nvgpu type: printed without the `!nvgpu.mnemonic` prefix.
const nvType = "custom<NVGPUType>"

func ty(name string) string { return nvType + "(type($" + name + "))" }

func init() {
	ir.RegisterCustomDirective("NVGPUType", &ir.CustomDirective{
		Parse: parseNVGPUTypeDirective,
		Print: printNVGPUTypeDirective,
	})
	predicate := "(`,` `predicate` `=` $predicate^)?"
	ir.Register(
		&ir.OpDef{
			Name:     "nvgpu.tma.create.descriptor",
			Summary:  "TMA create descriptor",
			Operands: []ir.ArgSpec{one("tensor", unrankedMemRefC), many("boxDimensions", ir.IndexOnly)},
			Results:  []ir.ArgSpec{one("tensorMap", tensorMapC)},
			Format:   "$tensor `box` `[` $boxDimensions `]` attr-dict `:` type($tensor) `->` " + ty("tensorMap"),
			Verify:   verifyCreateDescriptor,
			Doc:      "At most 5 box dimensions. The result: the descriptor's tensor is a statically shaped memref in shared memory (address space 3 or `#gpu.address_space<workgroup>`) with every dimension from 1 to 256; with a swizzle and a rank above 1 its last dimension spans exactly the swizzle's bytes (32, 64 or 128); interleave is not supported yet.",
		},
		&ir.OpDef{
			Name:    "nvgpu.tma.async.load",
			Summary: "TMA asynchronous load",
			Traits:  ir.AttrSizedOperandSegments,
			Operands: []ir.ArgSpec{one("dst", ir.AnyMemRef), one("barriers", mbarGroupC), one("tensorMapDescriptor", tensorMapC),
				many("coordinates", ir.IndexOnly), one("mbarId", ir.IndexOnly), opt("multicastMask", i16C), opt("predicate", i1C)},
			Format: "$tensorMapDescriptor `[` $coordinates `]` `,` $barriers `[` $mbarId `]` `to` $dst " +
				"(`multicast_mask` `=` $multicastMask^)? " + predicate + " attr-dict `:` " +
				ty("tensorMapDescriptor") + " `,` " + ty("barriers") + " `->` type($dst)",
			Verify:  verifyAsyncLoad,
			Effects: []ir.Effect{{Kind: ir.Write, Operand: "dst", Proxy: ir.AsyncProxy}},
			Doc: "The descriptor follows the rules of `nvgpu.tma.create.descriptor`. `dst` has the descriptor's element type, rank and shape, " +
				"is statically shaped and in shared memory, and its last dimension is a multiple of 16 bytes. One coordinate per dimension (at most 5), " +
				"innermost first. The copy completes the transaction bytes on barrier `mbarId` of `barriers`; `multicastMask` also writes the tile " +
				"to the same offset in the blocks of the cluster whose bits are set.",
		},
		&ir.OpDef{
			Name:     "nvgpu.tma.async.store",
			Summary:  "TMA asynchronous store",
			Traits:   ir.AttrSizedOperandSegments,
			Operands: []ir.ArgSpec{one("src", ir.AnyMemRef), one("tensorMapDescriptor", tensorMapC), many("coordinates", ir.IndexOnly), opt("predicate", i1C)},
			Format:   "$src `to` $tensorMapDescriptor `[` $coordinates `]` " + predicate + " attr-dict `:` type($src) `->` " + ty("tensorMapDescriptor"),
			Verify:   verifyAsyncStore,
			Effects:  []ir.Effect{{Kind: ir.Read, Operand: "src", Proxy: ir.AsyncProxy}},
			Doc: "The descriptor follows the rules of `nvgpu.tma.create.descriptor`. `src` has the descriptor's element type, rank and shape, " +
				"is statically shaped and in shared memory, and its last dimension is a multiple of 16 bytes. One coordinate per dimension (at most 5), " +
				"innermost first. Threads' writes to `src` must be made visible to the TMA unit first (`nvvm.fence.proxy` async.shared and a barrier).",
		},
		&ir.OpDef{
			Name:     "nvgpu.tma.prefetch.descriptor",
			Summary:  "Prefetch given `nvgpu.tensormap.descriptor`",
			Operands: []ir.ArgSpec{one("tensorMapDescriptor", tensorMapC), opt("predicate", i1C)},
			Format:   "$tensorMapDescriptor " + predicate + " attr-dict `:` " + ty("tensorMapDescriptor"),
		},
		&ir.OpDef{
			Name:     "nvgpu.tma.fence.descriptor",
			Summary:  "Insert fence given `nvgpu.tensormap.descriptor`",
			Operands: []ir.ArgSpec{one("tensorMapDescriptor", tensorMapC)},
			Format:   "$tensorMapDescriptor attr-dict `:` " + ty("tensorMapDescriptor"),
		},
		&ir.OpDef{
			Name:    "nvgpu.mbarrier.create",
			Summary: "Creates a `nvgpu.mbarrier` object.",
			Results: []ir.ArgSpec{one("barriers", mbarGroupC)},
			Format:  "attr-dict `->` " + ty("barriers"),
		},
		&ir.OpDef{
			Name:     "nvgpu.mbarrier.get",
			Summary:  "Return a pointer to an `nvgpu.mbarrier`.",
			Operands: []ir.ArgSpec{one("barriers", mbarGroupC), one("mbarId", ir.IndexOnly)},
			Results:  []ir.ArgSpec{one("mbarrierPointer", i32or64C)},
			Format:   "$barriers `[` $mbarId `]` attr-dict `:` " + ty("barriers") + " `->` type($mbarrierPointer)",
		},
		&ir.OpDef{
			Name:     "nvgpu.mbarrier.init",
			Summary:  "Initialize the `nvgpu.mbarrier`.",
			Operands: []ir.ArgSpec{one("barriers", mbarGroupC), one("count", ir.IndexOnly), one("mbarId", ir.IndexOnly), opt("predicate", i1C)},
			Format:   "$barriers `[` $mbarId `]` `,` $count " + predicate + " attr-dict `:` " + ty("barriers"),
		},
		&ir.OpDef{
			Name:     "nvgpu.mbarrier.arrive",
			Summary:  "Performs arrive operation on the `nvgpu.mbarrier.arrive`.",
			Operands: []ir.ArgSpec{one("barriers", mbarGroupC), one("mbarId", ir.IndexOnly)},
			Results:  []ir.ArgSpec{one("token", mbarTokenC)},
			Format:   "$barriers `[` $mbarId `]` attr-dict `:` " + ty("barriers") + " `->` type($token)",
		},
		&ir.OpDef{
			Name:     "nvgpu.mbarrier.arrive.nocomplete",
			Summary:  "Performs arrive operation on the `nvgpu.mbarrier.arrive.nocomplete` as non-blocking.",
			Operands: []ir.ArgSpec{one("barriers", mbarGroupC), one("mbarId", ir.IndexOnly), one("count", ir.IndexOnly)},
			Results:  []ir.ArgSpec{one("token", mbarTokenC)},
			Format:   "$barriers `[` $mbarId `]` `,` $count attr-dict `:` " + ty("barriers") + " `->` type($token)",
		},
		&ir.OpDef{
			Name:     "nvgpu.mbarrier.arrive.expect_tx",
			Summary:  "Performs expect_tx operation on the `nvgpu.mbarrier.arrive`",
			Operands: []ir.ArgSpec{one("barriers", mbarGroupC), one("txcount", ir.IndexOnly), one("mbarId", ir.IndexOnly), opt("predicate", i1C)},
			Format:   "$barriers `[` $mbarId `]` `,` $txcount " + predicate + " attr-dict `:` " + ty("barriers"),
		},
		&ir.OpDef{
			Name:     "nvgpu.mbarrier.test.wait",
			Summary:  "Checks if the `nvgpu.mbarrier` has completed its current phase.",
			Operands: []ir.ArgSpec{one("barriers", mbarGroupC), one("token", mbarTokenC), one("mbarId", ir.IndexOnly)},
			Results:  []ir.ArgSpec{one("waitComplete", i1C)},
			Format:   "$barriers `[` $mbarId `]` `,` $token attr-dict `:` " + ty("barriers") + " `,` type($token)",
		},
		&ir.OpDef{
			Name:     "nvgpu.mbarrier.try_wait.parity",
			Summary:  "Waits for the `nvgpu.mbarrier` to complete its current phase.",
			Operands: []ir.ArgSpec{one("barriers", mbarGroupC), one("phaseParity", i1C), one("ticks", ir.IndexOnly), one("mbarId", ir.IndexOnly)},
			Format:   "$barriers `[` $mbarId `]` `,` $phaseParity `,` $ticks attr-dict `:` " + ty("barriers"),
		},
		&ir.OpDef{
			Name:     "nvgpu.warpgroup.generate.descriptor",
			Summary:  "Generate a warpgroup matrix descriptor",
			Operands: []ir.ArgSpec{one("tensor", ir.AnyMemRef), one("tensorMap", tensorMapC)},
			Results:  []ir.ArgSpec{one("descriptor", wgDescC)},
			Format:   "$tensor `,` $tensorMap attr-dict `:` type($tensor) `,` " + ty("tensorMap") + " `->` " + ty("descriptor"),
			Verify:   verifyGenerateDescriptor,
			Doc: "The tensor map descriptor follows the rules of `nvgpu.tma.create.descriptor` and must use a 128-, 64- or 32-byte swizzle without interleave " +
				"(upstream MLIR accepts `swizzle_128b` only; the 64- and 32-byte layouts serve tiles whose contiguous rows are 64 or 32 bytes).",
		},
		&ir.OpDef{
			Name:     "nvgpu.warpgroup.mma",
			Summary:  "Warpgroup-level matrix multiply and accumulate (wgmma)",
			Operands: []ir.ArgSpec{one("descriptorA", wgDescC), one("descriptorB", wgDescC), one("matrixC", wgAccC)},
			Results:  []ir.ArgSpec{one("matrixD", wgAccC)},
			Attrs: []ir.AttrSpec{
				{Name: "waitGroup", Constraint: ir.I64AttrC, Optional: true, Default: ir.I64Attr(1)},
				{Name: "transposeA", Constraint: ir.UnitAttrC, Optional: true},
				{Name: "transposeB", Constraint: ir.UnitAttrC, Optional: true},
			},
			Format: "$descriptorA `,` $descriptorB `,` $matrixC attr-dict `:` " + ty("descriptorA") + " `,` " + ty("descriptorB") +
				" `,` " + ty("matrixC") + " `->` " + ty("matrixD"),
			Verify: verifyWarpgroupMma,
			// A and B are read from shared memory through their descriptors.
			Effects: []ir.Effect{{Kind: ir.Read, Proxy: ir.AsyncProxy}},
			Doc: "`transposeA` needs `transposeB`. `matrixC` and `matrixD` have the same type. A (M x K), B (K x N) and the accumulator (M x N) are 2-D " +
				"with matching dimensions. Element types D += A * B: f32 or f16 += f16 * f16, bf16 * bf16 or f8 * f8 (f8E4M3FN, f8E5M2), " +
				"f32 += tf32 * tf32 (an f16 accumulator only with f16 or bf16 inputs); N from 8 to 256 in steps of 8 for these types. " +
				"`waitGroup` (default 1) is how many wgmma groups may still be in flight when the op returns: with 1, consecutive " +
				"`nvgpu.warpgroup.mma` ops overlap. `lower-nvgpu` checks the operand layouts against the swizzle.",
		},
		&ir.OpDef{
			Name:     "nvgpu.warpgroup.mma.store",
			Summary:  "Stores a fragmented wgmma accumulator into memory",
			Operands: []ir.ArgSpec{one("matrixD", wgAccC), one("dstMemref", ir.AnyMemRef)},
			Format:   "$matrixD `,` $dstMemref attr-dict `:` " + ty("matrixD") + " `to` type($dstMemref)",
			Verify:   verifyWarpgroupMmaStore,
			Effects:  []ir.Effect{{Kind: ir.Write, Operand: "dstMemref"}},
			Doc: "Only f32 accumulators; the destination's first two dimensions are the accumulator's M x N. The lowering waits for all " +
				"pending wgmma groups before storing (`tmac.warpgroup.mma.store` stores to f16 or bf16).",
		},
		&ir.OpDef{
			Name:    "nvgpu.warpgroup.mma.init.accumulator",
			Summary: "Initializes the accumulator matrix",
			Traits:  ir.NoMemoryEffect,
			Results: []ir.ArgSpec{one("matrixC", wgAccC)},
			Format:  "attr-dict `->` " + ty("matrixC"),
			Verify:  verifyInitAccumulator,
			Doc:     "M is a multiple of 64 and N a wgmma N for the element type (8 to 256 in steps of 8 for float types). The accumulator starts at zero.",
		},
		&ir.OpDef{
			Name:     "nvgpu.mma.sync",
			Summary:  "device-wide synchronous matrix multiply-accumulate",
			Traits:   ir.Pure,
			Operands: []ir.ArgSpec{one("matrixA", anyVectorC), one("matrixB", anyVectorC), one("matrixC", anyVectorC)},
			Results:  []ir.ArgSpec{one("res", anyVectorC)},
			Attrs: []ir.AttrSpec{
				{Name: "mmaShape", Constraint: i64ArrayAttrC},
				{Name: "tf32Enabled", Constraint: ir.UnitAttrC, Optional: true},
			},
			Format: "`(` $matrixA `,` $matrixB `,` $matrixC `)` attr-dict `:` `(` type($matrixA) `,` type($matrixB) `,` type($matrixC) `)` `->` type($res)",
			Verify: func(op *ir.Operation) error { return verifyMmaSync(op, false) },
		},
		&ir.OpDef{
			Name:     "nvgpu.mma.sp.sync",
			Summary:  "device-wide synchronous sparse matrix multiply-accumulate",
			Traits:   ir.Pure,
			Operands: []ir.ArgSpec{one("matrixA", anyVectorC), one("matrixB", anyVectorC), one("matrixC", anyVectorC), one("sparseMetadata", sparseMetaC)},
			Results:  []ir.ArgSpec{one("res", anyVectorC)},
			Attrs: []ir.AttrSpec{
				{Name: "mmaShape", Constraint: i64ArrayAttrC},
				{Name: "sparsitySelector", Constraint: ir.I32AttrC, Default: ir.I32Attr(0)},
				{Name: "tf32Enabled", Constraint: ir.UnitAttrC, Optional: true},
			},
			Format: "`(` $matrixA `,` $matrixB `,` $matrixC `)` `metadata` `(` $sparseMetadata `)` attr-dict `:` `(` type($matrixA) `,` type($matrixB) `,` type($matrixC) `)` `->` type($res)",
			Verify: func(op *ir.Operation) error { return verifyMmaSync(op, true) },
		},
		&ir.OpDef{
			Name:     "nvgpu.ldmatrix",
			Summary:  "Loads a matrix fragment from shared memory into registers",
			Operands: []ir.ArgSpec{one("srcMemref", ir.AnyMemRef), many("indices", ir.IndexOnly)},
			Results:  []ir.ArgSpec{one("res", anyVectorC)},
			Attrs: []ir.AttrSpec{
				{Name: "transpose", Constraint: ir.BoolAttrC},
				{Name: "numTiles", Constraint: ir.I32AttrC},
			},
			Format:  "$srcMemref `[` $indices `]` attr-dict `:` type($srcMemref) `->` type($res)",
			Verify:  verifyLdMatrix,
			Effects: []ir.Effect{{Kind: ir.Read, Operand: "srcMemref"}},
		},
		&ir.OpDef{
			Name:    "nvgpu.device_async_copy",
			Summary: "device-side asynchronous copy",
			Traits:  ir.AttrSizedOperandSegments,
			Operands: []ir.ArgSpec{one("dst", ir.AnyMemRef), many("dstIndices", ir.IndexOnly), one("src", ir.AnyMemRef),
				many("srcIndices", ir.IndexOnly), opt("srcElements", ir.IndexOnly)},
			Results: []ir.ArgSpec{one("asyncToken", asyncTokenC)},
			Attrs: []ir.AttrSpec{
				{Name: "dstElements", Constraint: ir.IndexAttrC, Syntax: &ir.AttrSyntax{
					Parse: func(p *ir.Parser) (ir.Attribute, error) {
						v, err := p.ParseInteger()
						if err != nil {
							return nil, err
						}
						return ir.IndexAttr(v), nil
					},
					Print: ir.AttrWithoutType,
				}},
				{Name: "bypassL1", Constraint: ir.UnitAttrC, Optional: true},
			},
			Format: "$src `[` $srcIndices `]` `,` $dst `[` $dstIndices `]` `,` $dstElements (`,` $srcElements^)? attr-dict `:` type($src) `to` type($dst)",
			Verify: verifyDeviceAsyncCopy,
		},
		&ir.OpDef{
			Name:     "nvgpu.device_async_create_group",
			Summary:  "device side asynchronous create group operation",
			Operands: []ir.ArgSpec{many("inputTokens", asyncTokenC)},
			Results:  []ir.ArgSpec{one("asyncToken", asyncTokenC)},
			Format:   "$inputTokens attr-dict",
		},
		&ir.OpDef{
			Name:     "nvgpu.device_async_wait",
			Summary:  "Wait for async gpu ops to complete.",
			Operands: []ir.ArgSpec{one("asyncDependencies", asyncTokenC)},
			Attrs:    []ir.AttrSpec{{Name: "numGroups", Constraint: ir.I32AttrC, Optional: true}},
			Format:   "$asyncDependencies attr-dict",
		},
		&ir.OpDef{
			Name:     "nvgpu.rcp",
			Summary:  "The reciprocal calculation for vector types",
			Traits:   ir.Pure | ir.SameOperandsAndResultType,
			Operands: []ir.ArgSpec{one("in", vectorOfF32C)},
			Results:  []ir.ArgSpec{one("out", vectorOfF32C)},
			Attrs: []ir.AttrSpec{
				{Name: "rounding", Constraint: rcpRoundingC, Default: RcpRoundingAttr(RcpApprox)},
				{Name: "ftz", Constraint: ir.UnitAttrC, Optional: true},
			},
			Parse:  parseRcp,
			Print:  printRcp,
			Verify: verifyRcp,
		},
	)
}

// argSpec finds the operand or result spec named name of op name.
func argSpec(opName, name string) (*ir.ArgSpec, bool) {
	def := ir.LookupOp(opName)
	if def == nil {
		return nil, false
	}
	for i := range def.Operands {
		if def.Operands[i].Name == name {
			return &def.Operands[i], true
		}
	}
	for i := range def.Results {
		if def.Results[i].Name == name {
			return &def.Results[i], false
		}
	}
	return nil, false
}

func typeArgName(arg string) string {
	return strings.TrimSuffix(strings.TrimPrefix(arg, "type($"), ")")
}

func parseNVGPUTypeDirective(p *ir.Parser, fs *ir.FormatState, args []string) error {
	name := typeArgName(args[0])
	spec, _ := argSpec(fs.St.Name, name)
	tok := p.Tok()
	var t ir.Type
	var err error
	if p.IsPunct("<") && spec != nil {
		tp := &tparser{p: p, inOp: true}
		t, err = tp.parseTypeBody(strings.TrimPrefix(spec.Type.Kind, typeKindPrefix), tok)
	} else {
		t, err = p.ParseType()
	}
	if err != nil {
		return err
	}
	if spec != nil && spec.Type.OK != nil && !spec.Type.OK(t) {
		return p.CustomOpErrorAt(tok, "invalid kind of type specified: expected %s, but found '%s'", spec.Type.Kind, t)
	}
	fs.Types[name] = []ir.Type{t}
	return nil
}

func printNVGPUTypeDirective(p *ir.Printer, op *ir.Operation, args []string) {
	name := typeArgName(args[0])
	vals := op.OperandGroup(name)
	if _, isOperand := argSpec(op.Name(), name); !isOperand {
		vals = op.ResultGroup(name)
	}
	for i, v := range vals {
		if i > 0 {
			p.Write(", ")
		}
		p.Write(StrippedTypeText(v.Type()))
	}
}

// --- nvgpu.rcp ---------------------------------------------------------

func parseRcp(p *ir.Parser, st *ir.OperationState) error {
	in, err := p.ParseOperand()
	if err != nil {
		return err
	}
	if !p.ParseOptionalPunct("{") {
		return p.CustomOpErrorf("expected '{'")
	}
	if !p.ParseOptionalKeyword("rounding") {
		return p.CustomOpErrorf("expected 'rounding'")
	}
	if !p.ParseOptionalPunct("=") {
		return p.CustomOpErrorf("expected '='")
	}
	tok := p.Tok()
	tp := &tparser{p: p, inOp: true}
	v, d := tp.parseEnum(rcpEnum)
	if d != nil {
		return tp.failParam(tok, d, "RcpRoundingModeAttr", "value", rcpEnum.cxx)
	}
	st.AddAttr("rounding", RcpRoundingAttr(RcpRoundingMode(v)))
	if p.ParseOptionalPunct(",") {
		if !p.ParseOptionalKeyword("ftz") {
			return p.CustomOpErrorf("expected 'ftz'")
		}
		st.AddAttr("ftz", ir.Unit)
	}
	if !p.ParseOptionalPunct("}") {
		return p.CustomOpErrorf("expected '}'")
	}
	if err := p.ParseOptionalAttrDict(st); err != nil {
		return err
	}
	if !p.ParseOptionalPunct(":") {
		return p.CustomOpErrorf("expected ':'")
	}
	ttok := p.Tok()
	t, err := p.ParseType()
	if err != nil {
		return err
	}
	if _, ok := t.(*ir.VectorType); !ok {
		return p.CustomOpErrorAt(ttok, "invalid kind of type specified: expected builtin.vector, but found '%s'", t)
	}
	v2, err := p.ResolveOperand(in, t)
	if err != nil {
		return err
	}
	st.Operands = append(st.Operands, v2)
	st.ResultTypes = []ir.Type{t}
	return nil
}

func printRcp(p *ir.Printer, op *ir.Operation) {
	p.Write(" ")
	p.PrintOperand(op.Operand(0))
	mode := RcpApprox
	if m, ok := RcpRounding(op.Attr("rounding")); ok {
		mode = m
	}
	p.Write("{rounding =  " + mode.String())
	if op.HasAttr("ftz") {
		p.Write(", ftz")
	}
	p.Write("}")
	p.PrintOptionalAttrDict(op.AllAttrs(), "rounding", "ftz")
	p.Write(" : ")
	p.PrintType(op.Result(0).Type())
}
