package memref

import (
	"math/bits"

	"github.com/tmac-dev/tmac/ir"
)

// Type constraints, with upstream's wording.
var (
	memRefC = ir.TypeConstraint{Desc: "memref of any type values", OK: isMemRef, Kind: "builtin.memref"}
	// baseMemRefC is a ranked or unranked memref; type($x) in custom form
	// rejects other types without naming the expected kind.
	baseMemRefC   = ir.TypeConstraint{Desc: "ranked or unranked memref of any type values", OK: isBaseMemRef, KindOK: isBaseMemRef}
	staticMemRefC = ir.TypeConstraint{Desc: "statically shaped memref of any type values", OK: func(t ir.Type) bool {
		m, ok := t.(*ir.MemRefType)
		return ok && ir.HasStaticShape(m.Shape())
	}, KindOK: isMemRef, Kind: "builtin.memref"}
	stridedMemRefC = ir.TypeConstraint{Desc: "strided memref of any type values", OK: func(t ir.Type) bool {
		m, ok := t.(*ir.MemRefType)
		return ok && IsStrided(m)
	}, KindOK: isMemRef, Kind: "builtin.memref"}
	viewSourceC = ir.TypeConstraint{Desc: "1D memref of 8-bit signless integer values", OK: func(t ir.Type) bool {
		m, ok := t.(*ir.MemRefType)
		return ok && m.Rank() == 1 && ir.IsIntegerOfWidth(m.Elem, 8)
	}}
	dimSourceC = ir.TypeConstraint{Desc: "unranked.memref of any type values or non-0-ranked.memref of any type values", OK: func(t ir.Type) bool {
		switch t := t.(type) {
		case *ir.UnrankedMemRefType:
			return true
		case *ir.MemRefType:
			return t.Rank() > 0
		}
		return false
	}}
)

// Attribute constraints.
var (
	alignmentC = ir.AttrConstraint{Desc: "64-bit signless integer attribute whose value is positive and whose value is a power of two > 0", OK: func(a ir.Attribute) bool {
		ia, ok := a.(*ir.IntegerAttr)
		return ok && ir.IsIntegerOfWidth(ia.Type(), 64) && ia.Int() > 0 && bits.OnesCount64(uint64(ia.Int())) == 1
	}}
	positiveI32C = ir.AttrConstraint{Desc: "32-bit signless integer attribute whose value is positive", OK: func(a ir.Attribute) bool {
		ia, ok := a.(*ir.IntegerAttr)
		return ok && ir.IsIntegerOfWidth(ia.Type(), 32) && ia.Int() > 0
	}}
	memRefTypeAttrC = ir.AttrConstraint{Desc: "memref type attribute", OK: func(a ir.Attribute) bool {
		ta, ok := a.(*ir.TypeAttr)
		return ok && isMemRef(ta.Value)
	}}
)

var (
	// A string printed and parsed quoted ("private").
	stringSyntax = &ir.AttrSyntax{
		Parse: func(p *ir.Parser) (ir.Attribute, error) {
			s, err := p.ParseString()
			return ir.Str(s), err
		},
		Print:    func(a ir.Attribute) string { return a.String() },
		CanStart: func(p *ir.Parser) bool { return p.Tok().Kind == ir.TokString },
	}
	// A symbol name printed and parsed as @name.
	symbolNameSyntax = &ir.AttrSyntax{
		Parse: func(p *ir.Parser) (ir.Attribute, error) {
			s, err := p.ParseSymbolName()
			return ir.Str(s), err
		},
		Print: func(a ir.Attribute) string {
			if s, ok := a.(*ir.StringAttr); ok {
				return ir.FormatSymbolName(s.Value)
			}
			return a.String()
		},
		CanStart: func(p *ir.Parser) bool { return p.Tok().Kind == ir.TokAt },
	}
	// An i32 integer written without its type.
	i32Syntax = &ir.AttrSyntax{
		Parse: func(p *ir.Parser) (ir.Attribute, error) {
			v, err := p.ParseInteger()
			return ir.I32Attr(v), err
		},
		Print: ir.AttrWithoutType,
	}
)

func indexes(name string) ir.ArgSpec {
	return ir.ArgSpec{Name: name, Kind: ir.Variadic, Type: ir.IndexOnly}
}

// resultElemType derives a load's result (or a store's value) type from the
// memref type.
func resultElemType(t ir.Type) (ir.Type, error) {
	if m, ok := t.(*ir.MemRefType); ok {
		return m.Elem, nil
	}
	return t, nil
}

func allocDef(name, hint string, verify func(*ir.Operation) error) *ir.OpDef {
	return &ir.OpDef{
		Name:     name,
		Traits:   ir.AttrSizedOperandSegments,
		Operands: []ir.ArgSpec{indexes("dynamicSizes"), indexes("symbolOperands")},
		Results:  []ir.ArgSpec{{Name: "memref", Type: memRefC}},
		Attrs: []ir.AttrSpec{
			{Name: "alignment", Constraint: alignmentC, Optional: true},
		},
		Format:      "`(`$dynamicSizes`)` (`` `[` $symbolOperands^ `]`)? attr-dict `:` type($memref)",
		ResultNames: ir.NameResults(hint),
		Verify:      verify,
		Effects:     []ir.Effect{{Kind: ir.Allocate}},
	}
}

// stridedViewDef defines a view of source given by offsets, sizes and
// strides (memref.subview, memref.reinterpret_cast): the dynamic entries
// of each list are operands after the source, the lists themselves are
// the static_* attributes (Dynamic where an operand stands).
func stridedViewDef(name, hint string, source, result ir.TypeConstraint, verify func(*ir.Operation) error, format string) *ir.OpDef {
	return &ir.OpDef{
		Name:     name,
		Traits:   ir.Pure | ir.AttrSizedOperandSegments,
		Operands: []ir.ArgSpec{{Name: "source", Type: source}, indexes("offsets"), indexes("sizes"), indexes("strides")},
		Results:  []ir.ArgSpec{{Name: "result", Type: result}},
		Attrs: []ir.AttrSpec{
			{Name: "static_offsets", Constraint: ir.DenseI64ArrayC},
			{Name: "static_sizes", Constraint: ir.DenseI64ArrayC},
			{Name: "static_strides", Constraint: ir.DenseI64ArrayC},
		},
		Format:      format,
		ResultNames: ir.NameResults(hint),
		Verify:      verify,
	}
}

func init() {
	ir.RegisterDialect(&ir.Dialect{Name: "memref", Summary: "Memory buffers (memrefs): allocation, loads and stores, views and globals"})
	registerDirectives()
	loadStoreAttrs := []ir.AttrSpec{
		{Name: "nontemporal", Constraint: ir.BoolAttrC, Optional: true, Default: ir.Bool(false)},
		{Name: "alignment", Constraint: alignmentC, Optional: true},
	}
	ir.Register(
		allocDef("memref.alloc", "alloc", verifyAlloc),
		allocDef("memref.alloca", "alloca", verifyAlloca),
		&ir.OpDef{
			Name:     "memref.dealloc",
			Operands: []ir.ArgSpec{{Name: "memref", Type: baseMemRefC}},
			Effects:  []ir.Effect{{Kind: ir.Free, Operand: "memref"}},
			Format:   "$memref attr-dict `:` type($memref)",
		},
		&ir.OpDef{
			Name:      "memref.load",
			Operands:  []ir.ArgSpec{{Name: "memref", Type: memRefC}, indexes("indices")},
			Results:   []ir.ArgSpec{{Name: "result", Type: ir.AnyType}},
			Attrs:     loadStoreAttrs,
			TypeRules: []ir.TypeRule{{Target: "result", From: "memref", Fn: resultElemType}},
			Format:    "$memref `[` $indices `]` attr-dict `:` type($memref)",
			Verify:    verifyLoad,
			Effects:   []ir.Effect{{Kind: ir.Read, Operand: "memref"}},
		},
		&ir.OpDef{
			Name:      "memref.store",
			Operands:  []ir.ArgSpec{{Name: "value", Type: ir.AnyType}, {Name: "memref", Type: memRefC}, indexes("indices")},
			Attrs:     loadStoreAttrs,
			TypeRules: []ir.TypeRule{{Target: "value", From: "memref", Fn: resultElemType}},
			Format:    "$value `,` $memref `[` $indices `]` attr-dict `:` type($memref)",
			Verify:    verifyStore,
			Effects:   []ir.Effect{{Kind: ir.Write, Operand: "memref"}},
		},
		&ir.OpDef{
			Name:   "memref.view",
			Traits: ir.Pure,
			Operands: []ir.ArgSpec{
				{Name: "source", Type: viewSourceC},
				{Name: "byte_shift", Type: ir.IndexOnly},
				indexes("sizes"),
			},
			// Upstream parses the result type as any type: a wrong kind is
			// reported by the verifier.
			Results:     []ir.ArgSpec{{Name: "result", Type: ir.TypeConstraint{Desc: memRefC.Desc, OK: isMemRef}}},
			Format:      "$source `[` $byte_shift `]` `` `[` $sizes `]` attr-dict `:` type($source) `to` type($result)",
			ResultNames: ir.NameResults("view"),
			Verify:      verifyView,
		},
		stridedViewDef("memref.subview", "subview", memRefC, memRefC, verifySubView,
			"$source `` custom<DynamicIndexList>($offsets, $static_offsets)"+
				" custom<DynamicIndexList>($sizes, $static_sizes)"+
				" custom<DynamicIndexList>($strides, $static_strides)"+
				" attr-dict `:` type($source) `to` type($result)"),
		&ir.OpDef{
			Name:        "memref.cast",
			Traits:      ir.Pure,
			Operands:    []ir.ArgSpec{{Name: "source", Type: baseMemRefC}},
			Results:     []ir.ArgSpec{{Name: "dest", Type: baseMemRefC}},
			Format:      "$source attr-dict `:` type($source) `to` type($dest)",
			ResultNames: ir.NameResults("cast"),
			Verify:      verifyCast,
		},
		stridedViewDef("memref.reinterpret_cast", "reinterpret_cast", baseMemRefC, stridedMemRefC, verifyReinterpretCast,
			"$source `to` `offset` `` `:` custom<DynamicIndexList>($offsets, $static_offsets)"+
				" `,` `sizes` `` `:` custom<DynamicIndexList>($sizes, $static_sizes)"+
				" `,` `strides` `` `:` custom<DynamicIndexList>($strides, $static_strides)"+
				" attr-dict `:` type($source) `to` type($result)"),
		&ir.OpDef{
			Name:    "memref.get_global",
			Traits:  ir.Pure,
			Results: []ir.ArgSpec{{Name: "result", Type: staticMemRefC}},
			Attrs:   []ir.AttrSpec{{Name: "name", Constraint: ir.FlatSymbolRefC}},
			Format:  "$name `:` type($result) attr-dict",
			Verify:  verifyGetGlobal,
		},
		&ir.OpDef{
			Name:   "memref.global",
			Traits: ir.Symbol,
			Attrs: []ir.AttrSpec{
				{Name: "sym_name", Constraint: ir.SymbolNameC, Syntax: symbolNameSyntax},
				{Name: "sym_visibility", Constraint: ir.StringAttrC, Optional: true, Syntax: stringSyntax},
				{Name: "type", Constraint: memRefTypeAttrC},
				{Name: "initial_value", Constraint: ir.AnyAttr, Optional: true},
				{Name: "constant", Constraint: ir.UnitAttrC, Optional: true},
				{Name: "alignment", Constraint: alignmentC, Optional: true},
			},
			Format: "($sym_visibility^)? (`constant` $constant^)? $sym_name `:`" +
				" custom<GlobalMemrefOpTypeAndInitialValue>($type, $initial_value) attr-dict",
			Verify: verifyGlobal,
		},
		&ir.OpDef{
			Name:        "memref.assume_alignment",
			Traits:      ir.Pure,
			Operands:    []ir.ArgSpec{{Name: "memref", Type: memRefC}},
			Results:     []ir.ArgSpec{{Name: "result", Type: memRefC}},
			Attrs:       []ir.AttrSpec{{Name: "alignment", Constraint: positiveI32C, Syntax: i32Syntax}},
			TypeRules:   []ir.TypeRule{{Target: "result", From: "memref"}},
			Format:      "$memref `,` $alignment attr-dict `:` type($memref)",
			ResultNames: ir.NameResults("assume_align"),
			Verify:      verifyAssumeAlignment,
		},
		&ir.OpDef{
			Name:        "memref.dim",
			Traits:      ir.Pure,
			Operands:    []ir.ArgSpec{{Name: "source", Type: dimSourceC}, {Name: "index", Type: ir.IndexOnly}},
			Results:     []ir.ArgSpec{{Name: "result", Type: ir.IndexOnly}},
			Format:      "attr-dict $source `,` $index `:` type($source)",
			ResultNames: ir.NameResults("dim"),
		},
	)
}

func isMemRef(t ir.Type) bool { _, ok := t.(*ir.MemRefType); return ok }

func isBaseMemRef(t ir.Type) bool {
	switch t.(type) {
	case *ir.MemRefType, *ir.UnrankedMemRefType:
		return true
	}
	return false
}
