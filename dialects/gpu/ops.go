package gpu

import (
	"strings"

	"github.com/tmac-dev/tmac/ir"
)

// Type constraints with upstream's wording.
var (
	tokenC     = ir.TypeConstraint{Desc: "async token type", OK: func(t ir.Type) bool { return t == ir.Type(AsyncToken) }, Fixed: AsyncToken}
	launchDimC = ir.TypeConstraint{Desc: "index or 32-bit signless integer or 64-bit signless integer", OK: func(t ir.Type) bool {
		return ir.IsIndex(t) || ir.IsIntegerOfWidth(t, 32) || ir.IsIntegerOfWidth(t, 64)
	}}
	i32C       = ir.TypeConstraint{Desc: "32-bit signless integer", OK: func(t ir.Type) bool { return ir.IsIntegerOfWidth(t, 32) }, Fixed: ir.I32}
	printfArgC = ir.TypeConstraint{Desc: "integer or index or floating-point", OK: func(t ir.Type) bool {
		return ir.IsInteger(t) || ir.IsIndex(t) || ir.IsFloat(t)
	}}
	unrankedC = ir.TypeConstraint{Desc: "unranked.memref of any type values", OK: func(t ir.Type) bool {
		_, ok := t.(*ir.UnrankedMemRefType)
		return ok
	}}
	dsmC = ir.TypeConstraint{Desc: "1D memref of 8-bit signless integer values", OK: func(t ir.Type) bool {
		m, ok := t.(*ir.MemRefType)
		return ok && m.Rank() == 1 && ir.IsIntegerOfWidth(m.Elem, 8)
	}}
)

var (
	dense3I32C = ir.AttrConstraint{Desc: "i32 dense array attribute with 3 elements (if present)", OK: func(a ir.Attribute) bool {
		d, ok := a.(*ir.DenseArrayAttr)
		return ok && d.Elem == ir.I32 && d.Len() == 3
	}}
	targetsC = ir.AttrConstraint{Desc: "array of GPU target attributes with at least 1 elements", OK: func(a ir.Attribute) bool {
		arr, ok := a.(*ir.ArrayAttr)
		if !ok || len(arr.Elems) == 0 {
			return false
		}
		for _, e := range arr.Elems {
			if !isTargetAttr(e) {
				return false
			}
		}
		return true
	}}
	handlerC = ir.AttrConstraint{Desc: "any attribute with the `OffloadingTranslationAttrTrait` trait.", OK: func(a ir.Attribute) bool {
		d, ok := a.(*ir.DialectAttr)
		return ok && d.Dialect == "gpu" && d.Name == "select_object"
	}}
	dimC = ir.AttrConstraint{Desc: "GPU dimension", OK: func(a ir.Attribute) bool { return DimOf(a) != "" }}
)

// upperBoundSyntax writes an index attribute as a bare integer.
var upperBoundSyntax = &ir.AttrSyntax{
	Parse: func(p *ir.Parser) (ir.Attribute, error) {
		a, err := p.ParseAttribute(ir.Index)
		if err != nil {
			if d, ok := err.(*ir.Diagnostic); ok && strings.HasPrefix(d.Msg, "floating point value") {
				return nil, p.Errorf("%s", d.Msg)
			}
		}
		return a, err
	},
	Print:    ir.AttrWithoutType,
	CanStart: func(p *ir.Parser) bool { return p.Tok().Kind == ir.TokInt || p.IsPunct("-") },
}

var formatStrSyntax = &ir.AttrSyntax{
	Parse: func(p *ir.Parser) (ir.Attribute, error) {
		if p.Tok().Kind != ir.TokString {
			if p.Tok().Kind == ir.TokInt {
				return nil, p.Errorf("integer literal not valid for specified type")
			}
			return nil, p.Errorf("expected attribute value")
		}
		s, err := p.ParseString()
		return ir.Str(s), err
	},
	Print: func(a ir.Attribute) string { return a.String() },
}

func dimSyntax(opName string) *ir.AttrSyntax {
	return &ir.AttrSyntax{
		Parse: func(p *ir.Parser) (ir.Attribute, error) {
			return parseDim(p, "custom op '"+opName+"' ")
		},
		// Upstream's enum printer adds its own leading space: `gpu.thread_id  x`.
		Print: func(a ir.Attribute) string { return " " + DimOf(a) },
	}
}

func upperBound() ir.AttrSpec {
	return ir.AttrSpec{Name: "upper_bound", Constraint: ir.IndexAttrC, Optional: true, Syntax: upperBoundSyntax}
}

func asyncOperands(rest ...ir.ArgSpec) []ir.ArgSpec {
	return append([]ir.ArgSpec{{Name: "asyncDependencies", Kind: ir.Variadic, Type: tokenC}}, rest...)
}

var asyncResult = ir.ArgSpec{Name: "asyncToken", Kind: ir.Optional, Type: tokenC}

func init() {
	registerDirectives()
	var defs []*ir.OpDef
	for _, m := range []string{"thread_id", "block_id", "block_dim", "grid_dim", "cluster_id", "cluster_dim", "cluster_block_id", "cluster_dim_blocks", "global_id"} {
		name := "gpu." + m
		mnemonic := m
		defs = append(defs, &ir.OpDef{
			Name:    name,
			Summary: "GPU index op (" + m + ")",
			Traits:  ir.Pure,
			Results: []ir.ArgSpec{{Name: "result", Type: ir.IndexOnly}},
			Attrs: []ir.AttrSpec{
				{Name: "dimension", Constraint: dimC, Syntax: dimSyntax(name)},
				upperBound(),
			},
			Format: "$dimension (`upper_bound` $upper_bound^)? attr-dict",
			ResultNames: func(op *ir.Operation, name func(ir.Value, string)) {
				if d := DimOf(op.Attr("dimension")); d != "" {
					name(op.Result(0), mnemonic+"_"+d)
				}
			},
		})
	}
	defs = append(defs, &ir.OpDef{
		Name:    "gpu.lane_id",
		Summary: "Lane id within the subgroup",
		Traits:  ir.Pure,
		Results: []ir.ArgSpec{{Name: "result", Type: ir.IndexOnly}},
		Attrs:   []ir.AttrSpec{upperBound()},
		Format:  "(`upper_bound` $upper_bound^)? attr-dict",
	})
	for _, m := range []string{"subgroup_id", "num_subgroups", "subgroup_size"} {
		defs = append(defs, &ir.OpDef{
			Name:    "gpu." + m,
			Summary: "Subgroup query (" + m + ")",
			Traits:  ir.Pure,
			Results: []ir.ArgSpec{{Name: "result", Type: ir.IndexOnly}},
			Attrs:   []ir.AttrSpec{upperBound()},
			Format:  "(`upper_bound` $upper_bound^)? attr-dict `:` custom<GPUIndexType>(type($result))",
		})
	}
	defs = append(defs,
		&ir.OpDef{
			Name:    "gpu.barrier",
			Summary: "Synchronizes all work items of a workgroup",
			Format:  "attr-dict",
		},
		&ir.OpDef{
			Name:     "gpu.printf",
			Summary:  "Device-side printf",
			Operands: []ir.ArgSpec{{Name: "args", Kind: ir.Variadic, Type: printfArgC}},
			Attrs:    []ir.AttrSpec{{Name: "format", Constraint: ir.StringAttrC, Syntax: formatStrSyntax}},
			Format:   "$format attr-dict (`,` $args^ `:` type($args))?",
		},
		&ir.OpDef{
			Name:    "gpu.dynamic_shared_memory",
			Summary: "Memref view of the dynamic shared memory",
			Traits:  ir.Pure,
			Results: []ir.ArgSpec{{Name: "resultMemref", Type: dsmC}},
			Format:  "attr-dict `:` type($resultMemref)",
			Verify:  verifyDynamicSharedMemory,
		},
		&ir.OpDef{
			Name:     "gpu.wait",
			Summary:  "Wait for async gpu ops to complete",
			Operands: asyncOperands(),
			Results:  []ir.ArgSpec{asyncResult},
			Format:   "custom<GPUAsyncDependencies>(type($asyncToken), $asyncDependencies) attr-dict",
		},
		&ir.OpDef{
			Name:    "gpu.alloc",
			Summary: "GPU memory allocation operation",
			Traits:  ir.AttrSizedOperandSegments,
			Operands: asyncOperands(
				ir.ArgSpec{Name: "dynamicSizes", Kind: ir.Variadic, Type: ir.IndexOnly},
				ir.ArgSpec{Name: "symbolOperands", Kind: ir.Variadic, Type: ir.IndexOnly}),
			Results: []ir.ArgSpec{{Name: "memref", Type: ir.AnyMemRef}, asyncResult},
			Attrs:   []ir.AttrSpec{{Name: "hostShared", Constraint: ir.UnitAttrC, Optional: true}},
			Format:  "custom<GPUAsyncDependencies>(type($asyncToken), $asyncDependencies) (` ` `host_shared` $hostShared^)? ` ` `(` $dynamicSizes `)` (`` `[` $symbolOperands^ `]`)? attr-dict `:` custom<GPUMemRefType>(type($memref))",
			ResultNames: func(op *ir.Operation, name func(ir.Value, string)) {
				name(op.Result(0), "memref")
				if op.NumResults() > 1 {
					name(op.Result(1), "asyncToken")
				}
			},
			Verify: verifyAlloc,
		},
		&ir.OpDef{
			Name:     "gpu.dealloc",
			Summary:  "GPU memory deallocation operation",
			Operands: asyncOperands(ir.ArgSpec{Name: "memref", Type: ir.AnyMemRef}),
			Results:  []ir.ArgSpec{asyncResult},
			Format:   "custom<GPUAsyncDependencies>(type($asyncToken), $asyncDependencies) $memref attr-dict `:` custom<GPUMemRefType>(type($memref))",
		},
		&ir.OpDef{
			Name:     "gpu.memcpy",
			Summary:  "GPU memcpy operation",
			Operands: asyncOperands(ir.ArgSpec{Name: "dst", Type: ir.AnyMemRef}, ir.ArgSpec{Name: "src", Type: ir.AnyMemRef}),
			Results:  []ir.ArgSpec{asyncResult},
			Format:   "custom<GPUAsyncDependencies>(type($asyncToken), $asyncDependencies) $dst `,` $src `:` custom<GPUMemRefType>(type($dst)) `,` custom<GPUMemRefType>(type($src)) attr-dict",
			Verify:   verifyMemcpy,
		},
		&ir.OpDef{
			Name:     "gpu.memset",
			Summary:  "GPU memset operation",
			Operands: asyncOperands(ir.ArgSpec{Name: "dst", Type: ir.AnyMemRef}, ir.ArgSpec{Name: "value", Type: ir.AnyType}),
			Results:  []ir.ArgSpec{asyncResult},
			Format:   "custom<GPUAsyncDependencies>(type($asyncToken), $asyncDependencies) $dst `,` $value `:` custom<GPUMemRefType>(type($dst)) `,` type($value) attr-dict",
			Verify: func(op *ir.Operation) error {
				dst := op.OperandNamed("dst")
				val := op.OperandNamed("value")
				if ir.ElementTypeOrSelf(dst.Type()) != ir.ElementTypeOrSelf(val.Type()) {
					return op.EmitOpError("failed to verify that all of {dst, value} have same element type")
				}
				return nil
			},
		},
		&ir.OpDef{
			Name:     "gpu.host_register",
			Summary:  "Registers a memref for access from device",
			Operands: []ir.ArgSpec{{Name: "value", Type: unrankedC}},
			Format:   "$value attr-dict `:` custom<GPUUnrankedMemRefType>(type($value))",
		},
		&ir.OpDef{
			Name:     "gpu.host_unregister",
			Summary:  "Unregisters a memref for access from device",
			Operands: []ir.ArgSpec{{Name: "value", Type: unrankedC}},
			Format:   "$value attr-dict `:` custom<GPUUnrankedMemRefType>(type($value))",
		},
		&ir.OpDef{
			Name:    "gpu.terminator",
			Summary: "Terminator for GPU launch regions",
			Traits:  ir.Terminator | ir.Pure,
			Format:  "attr-dict",
			Verify:  hasParent("gpu.launch"),
		},
		&ir.OpDef{
			Name:     "gpu.return",
			Summary:  "Terminator for GPU functions",
			Traits:   ir.Terminator | ir.Pure | ir.ReturnLike,
			Operands: []ir.ArgSpec{{Name: "operands", Kind: ir.Variadic, Type: ir.AnyType}},
			Format:   "attr-dict ($operands^ `:` type($operands))?",
			Verify:   verifyReturn,
		},
		&ir.OpDef{
			Name:    "gpu.module",
			Summary: "A top level compilation container for GPU code",
			Traits:  ir.IsolatedFromAbove | ir.SymbolTable | ir.Symbol | ir.NoTerminator | ir.SingleBlock,
			Attrs: []ir.AttrSpec{
				{Name: "sym_name", Constraint: ir.SymbolNameC},
				{Name: "targets", Constraint: targetsC, Optional: true},
				{Name: "offloadingHandler", Constraint: handlerC, Optional: true},
			},
			Regions: []ir.RegionSpec{{Name: "bodyRegion"}},
			Parse:   parseModule,
			Print:   printModule,
			Verify:  verifyModule,
		},
		&ir.OpDef{
			Name:    "gpu.binary",
			Summary: "An op for storing serialized GPU binary objects",
			Traits:  ir.Symbol,
			Attrs: []ir.AttrSpec{
				{Name: "sym_name", Constraint: ir.SymbolNameC},
				{Name: "offloadingHandler", Constraint: handlerC, Default: selectObjectDefault},
				{Name: "objects", Constraint: objectsC},
			},
			Parse: parseBinary,
			Print: printBinary,
		},
		&ir.OpDef{
			Name:    "gpu.func",
			Summary: "Function executable on a GPU",
			Traits:  ir.IsolatedFromAbove | ir.Symbol,
			Attrs: []ir.AttrSpec{
				{Name: "function_type", Constraint: ir.FunctionTypeAttrC},
				{Name: "arg_attrs", Constraint: ir.DictArrayC, Optional: true},
				{Name: "res_attrs", Constraint: ir.DictArrayC, Optional: true},
				{Name: "workgroup_attrib_attrs", Constraint: ir.DictArrayC, Optional: true},
				{Name: "private_attrib_attrs", Constraint: ir.DictArrayC, Optional: true},
				{Name: "known_block_size", Constraint: dense3I32C, Optional: true},
				{Name: "known_grid_size", Constraint: dense3I32C, Optional: true},
				{Name: "known_cluster_size", Constraint: dense3I32C, Optional: true},
			},
			Regions: []ir.RegionSpec{{Name: "body"}},
			Parse:   parseFunc,
			Print:   printFunc,
			// Upstream checks the signature and the body's arguments in
			// the function interface's trait, before the nested ops.
			VerifyInvariants: verifyFunc,
		},
		&ir.OpDef{
			Name:    "gpu.launch",
			Summary: "GPU kernel launch operation",
			Traits:  ir.AttrSizedOperandSegments | ir.RecursiveSideEffects,
			Operands: asyncOperands(
				ir.ArgSpec{Name: "gridSizeX", Type: ir.IndexOnly},
				ir.ArgSpec{Name: "gridSizeY", Type: ir.IndexOnly},
				ir.ArgSpec{Name: "gridSizeZ", Type: ir.IndexOnly},
				ir.ArgSpec{Name: "blockSizeX", Type: ir.IndexOnly},
				ir.ArgSpec{Name: "blockSizeY", Type: ir.IndexOnly},
				ir.ArgSpec{Name: "blockSizeZ", Type: ir.IndexOnly},
				ir.ArgSpec{Name: "clusterSizeX", Kind: ir.Optional, Type: ir.IndexOnly},
				ir.ArgSpec{Name: "clusterSizeY", Kind: ir.Optional, Type: ir.IndexOnly},
				ir.ArgSpec{Name: "clusterSizeZ", Kind: ir.Optional, Type: ir.IndexOnly},
				ir.ArgSpec{Name: "dynamicSharedMemorySize", Kind: ir.Optional, Type: i32C}),
			Results: []ir.ArgSpec{asyncResult},
			Attrs: []ir.AttrSpec{
				{Name: "module", Constraint: ir.FlatSymbolRefC, Optional: true},
				{Name: "function", Constraint: ir.FlatSymbolRefC, Optional: true},
			},
			Regions: []ir.RegionSpec{{Name: "body"}},
			Parse:   parseLaunch,
			Print:   printLaunch,
			Verify:  verifyLaunch,
		},
		&ir.OpDef{
			Name:   "gpu.launch_func",
			Traits: ir.AttrSizedOperandSegments,
			Operands: asyncOperands(
				ir.ArgSpec{Name: "gridSizeX", Type: launchDimC},
				ir.ArgSpec{Name: "gridSizeY", Type: launchDimC},
				ir.ArgSpec{Name: "gridSizeZ", Type: launchDimC},
				ir.ArgSpec{Name: "blockSizeX", Type: launchDimC},
				ir.ArgSpec{Name: "blockSizeY", Type: launchDimC},
				ir.ArgSpec{Name: "blockSizeZ", Type: launchDimC},
				ir.ArgSpec{Name: "clusterSizeX", Kind: ir.Optional, Type: launchDimC},
				ir.ArgSpec{Name: "clusterSizeY", Kind: ir.Optional, Type: launchDimC},
				ir.ArgSpec{Name: "clusterSizeZ", Kind: ir.Optional, Type: launchDimC},
				ir.ArgSpec{Name: "dynamicSharedMemorySize", Kind: ir.Optional, Type: i32C},
				ir.ArgSpec{Name: "kernelOperands", Kind: ir.Variadic, Type: ir.AnyType},
				ir.ArgSpec{Name: "asyncObject", Kind: ir.Optional, Type: ir.AnyType}),
			Results: []ir.ArgSpec{asyncResult},
			Attrs:   []ir.AttrSpec{{Name: "kernel", Constraint: ir.SymbolRefC, Syntax: ir.SymbolRefSyntax}},
			Format: "custom<GPUAsyncDependencies>(type($asyncToken), $asyncDependencies) (`<` $asyncObject^ `:` type($asyncObject) `>`)? $kernel " +
				"( `clusters` `in` ` ` `(` $clusterSizeX^ `,` $clusterSizeY `,` $clusterSizeZ `)` )? " +
				"`blocks` `in` ` ` `(` $gridSizeX `,` $gridSizeY `,` $gridSizeZ `)` " +
				"`threads` `in` ` ` `(` $blockSizeX `,` $blockSizeY `,` $blockSizeZ `)` " +
				"custom<GPULaunchDimType>(type($gridSizeX), ref($clusterSizeX), type($clusterSizeX), type($clusterSizeY), type($clusterSizeZ)) " +
				"(`dynamic_shared_memory_size` $dynamicSharedMemorySize^)? " +
				"custom<GPULaunchFuncOperands>($kernelOperands, type($kernelOperands)) attr-dict",
			Verify: verifyLaunchFunc,
		},
	)
	ir.Register(defs...)
}

func hasParent(name string) func(op *ir.Operation) error {
	return func(op *ir.Operation) error {
		if p := op.ParentOp(); p == nil || p.Name() != name {
			return op.EmitOpError("expects parent op '%s'", name)
		}
		return nil
	}
}
