package memref

import (
	"fmt"
	"strings"

	"github.com/tmac-dev/tmac/ir"
)

// memref.copy, memref.rank, memref.memory_space_cast,
// memref.extract_strided_metadata, memref.extract_aligned_pointer_as_index,
// memref.alloca_scope and its return, memref.realloc, memref.prefetch.

func verifyCopy(op *ir.Operation) error {
	src, dst := op.Operand(0).Type(), op.Operand(1).Type()
	se, _ := elemAndSpace(src)
	de, _ := elemAndSpace(dst)
	if se != de {
		return op.EmitOpError("requires the same element type for all operands")
	}
	sm, ok1 := src.(*ir.MemRefType)
	dm, ok2 := dst.(*ir.MemRefType)
	if ok1 && ok2 && fmt.Sprint(sm.Shape()) != fmt.Sprint(dm.Shape()) {
		return op.EmitOpError("requires the same shape for all operands")
	}
	return nil
}

// memorySpaceCastCompatible: the same type but for the memory space.
func memorySpaceCastCompatible(a, b ir.Type) bool {
	switch a := a.(type) {
	case *ir.MemRefType:
		b, ok := b.(*ir.MemRefType)
		return ok && a.Elem == b.Elem && a.Layout == b.Layout && fmt.Sprint(a.Shape()) == fmt.Sprint(b.Shape())
	case *ir.UnrankedMemRefType:
		b, ok := b.(*ir.UnrankedMemRefType)
		return ok && a.Elem == b.Elem
	}
	return false
}

func verifyMemorySpaceCast(op *ir.Operation) error {
	src, dst := op.Operand(0).Type(), op.Result(0).Type()
	if !memorySpaceCastCompatible(src, dst) {
		return op.EmitOpError("operand type '%s' and result type '%s' are cast incompatible", src, dst)
	}
	return nil
}

// StridedMetadataTypes are the result types of
// memref.extract_strided_metadata on a memref of type t: the rank-0 base
// buffer, the offset, the sizes and the strides.
func StridedMetadataTypes(t *ir.MemRefType) []ir.Type {
	ts := []ir.Type{ir.MemRefTypeOf(nil, t.Elem, nil, t.MemorySpace), ir.Index}
	for range 2 * t.Rank() {
		ts = append(ts, ir.Index)
	}
	return ts
}

func verifyExtractStridedMetadata(op *ir.Operation) error {
	want := StridedMetadataTypes(memrefOf(op.Operand(0)))
	got := op.ResultTypes()
	if fmt.Sprint(want) != fmt.Sprint(got) {
		return ir.DiagList{
			op.EmitOpError("inferred type(s) %s are incompatible with return type(s) of operation %s", quotedTypes(want), quotedTypes(got)),
			op.EmitOpError("failed to infer returned types"),
		}
	}
	return nil
}

func quotedTypes(ts []ir.Type) string {
	var parts []string
	for _, t := range ts {
		parts = append(parts, "'"+t.String()+"'")
	}
	return strings.Join(parts, ", ")
}

// metadataResultNames names the results as upstream does: %base_buffer,
// %offset, %sizes, %strides.
func metadataResultNames(op *ir.Operation, name func(v ir.Value, name string)) {
	name(op.Result(0), "base_buffer")
	name(op.Result(1), "offset")
	if rank := (op.NumResults() - 2) / 2; rank > 0 {
		name(op.Result(2), "sizes")
		name(op.Result(2+rank), "strides")
	}
}

func parseAllocaScope(p *ir.Parser, st *ir.OperationState) error {
	if p.IsPunct("->") {
		ts, err := p.ParseArrowTypeList()
		if err != nil {
			return err
		}
		st.ResultTypes = ts
	}
	r := st.AddRegion()
	if err := p.ParseRegion(r, nil); err != nil {
		return err
	}
	r.EnsureTerminator("memref.alloca_scope.return", st.Loc)
	return p.ParseOptionalAttrDict(st)
}

// printAllocaScope prints as upstream does, with two spaces before the
// region or the result types.
func printAllocaScope(p *ir.Printer, op *ir.Operation) {
	p.Write(" ")
	if op.NumResults() > 0 {
		p.Write(" -> (")
		p.PrintTypes(op.ResultTypes())
		p.Write(")")
	}
	p.Write(" ")
	p.PrintRegion(op.Region(0), false, op.NumResults() > 0, false)
	p.PrintOptionalAttrDict(op.AllAttrs())
}

func verifyAllocaScope(op *ir.Operation) error {
	r := op.Region(0)
	if r.Empty() {
		return nil
	}
	term := r.Entry().Last()
	if term == nil || term.Name() != "memref.alloca_scope.return" {
		return nil
	}
	if term.NumOperands() != op.NumResults() {
		return op.EmitOpError("along control flow edge from Operation memref.alloca_scope.return to parent: region branch point has %d operands, but region successor needs %d inputs", term.NumOperands(), op.NumResults()).
			AttachNote(term.Loc, "region branch point")
	}
	for i, v := range term.Operands() {
		if v.Type() != op.Result(i).Type() {
			return op.EmitOpError("along control flow edge from Operation memref.alloca_scope.return to parent: successor operand type #%d '%s' should match successor input type #%d '%s'", i, v.Type(), i, op.Result(i).Type()).
				AttachNote(term.Loc, "region branch point")
		}
	}
	return nil
}

func verifyDistinctObjects(op *ir.Operation) error {
	if op.NumOperands() == 0 {
		return op.EmitOpError("expected at least one operand")
	}
	if fmt.Sprint(op.OperandTypes()) != fmt.Sprint(op.ResultTypes()) {
		return op.EmitOpError("operand types and result types must match")
	}
	return nil
}

func verifyRealloc(op *ir.Operation) error {
	src, res := memrefOf(op.Operand(0)), memrefOf(op.Result(0))
	switch {
	case !layoutIsIdentityMap(src):
		return ir.Errorf(op.Loc, "unsupported layout for source memref type '%s'", src)
	case !layoutIsIdentityMap(res):
		return ir.Errorf(op.Loc, "unsupported layout for result memref type '%s'", res)
	case src.MemorySpace != res.MemorySpace:
		return ir.Errorf(op.Loc, "different memory spaces specified for source memref type '%s' and result memref type '%s'", src, res)
	case src.Elem != res.Elem:
		return ir.Errorf(op.Loc, "different element types specified for source memref type '%s' and result memref type '%s'", src, res)
	}
	dyn := op.OperandNamed("dynamicResultSize") != nil
	if res.Shape()[0] == Dynamic && !dyn {
		return ir.Errorf(op.Loc, "missing dimension operand for result type '%s'", res)
	}
	if res.Shape()[0] != Dynamic && dyn {
		return ir.Errorf(op.Loc, "unnecessary dimension operand for result type '%s'", res)
	}
	return nil
}

// oneDimC is a rank-1 memref (any layout: the verifier names others).
var oneDimC = ir.TypeConstraint{Desc: "1D memref of any type values", OK: func(t ir.Type) bool {
	m, ok := t.(*ir.MemRefType)
	return ok && m.Rank() == 1
}, KindOK: isMemRef, Kind: "builtin.memref"}

func parsePrefetch(p *ir.Parser, st *ir.OperationState) error {
	mem, idx, err := parseMemRefAccess(p)
	if err != nil {
		return err
	}
	if err := p.ParsePunct(","); err != nil {
		return err
	}
	rw, err := p.ParseAnyKeyword()
	if err != nil {
		return err
	}
	if rw != "read" && rw != "write" {
		return ir.Errorf(st.Loc, "custom op 'memref.prefetch' rw specifier has to be 'read' or 'write'")
	}
	if err := p.ParsePunct(","); err != nil {
		return err
	}
	if err := p.ParseKeyword("locality"); err != nil {
		return err
	}
	if err := p.ParsePunct("<"); err != nil {
		return err
	}
	loc, err := p.ParseInteger()
	if err != nil {
		return err
	}
	if err := p.ParsePunct(">"); err != nil {
		return err
	}
	if err := p.ParsePunct(","); err != nil {
		return err
	}
	cache, err := p.ParseAnyKeyword()
	if err != nil {
		return err
	}
	if cache != "data" && cache != "instr" {
		return ir.Errorf(st.Loc, "custom op 'memref.prefetch' cache type has to be 'data' or 'instr'")
	}
	if err := p.ParseOptionalAttrDict(st); err != nil {
		return err
	}
	t, err := p.ParseColonType()
	if err != nil {
		return err
	}
	if err := resolveMemRefAccess(p, st, mem, idx, t); err != nil {
		return err
	}
	st.AddAttr("isWrite", ir.Bool(rw == "write"))
	st.AddAttr("localityHint", ir.I32Attr(loc))
	st.AddAttr("isDataCache", ir.Bool(cache == "data"))
	return nil
}

func printPrefetch(p *ir.Printer, op *ir.Operation) {
	printMemRefAccess(p, op.Operand(0), op.Operands()[1:])
	rw, cache := "read", "instr"
	if op.IntAttrOf("isWrite", 0) != 0 {
		rw = "write"
	}
	if op.IntAttrOf("isDataCache", 0) != 0 {
		cache = "data"
	}
	p.Write(fmt.Sprintf(", %s, locality<%d>, %s", rw, op.IntAttrOf("localityHint", 0), cache))
	p.PrintOptionalAttrDict(op.AllAttrs(), "isWrite", "localityHint", "isDataCache")
	p.Write(" : ")
	p.PrintType(op.Operand(0).Type())
}

func verifyPrefetch(op *ir.Operation) error {
	if n := op.NumOperands() - 1; n != memrefOf(op.Operand(0)).Rank() {
		return op.EmitOpError("too few indices")
	}
	return nil
}

var localityC = ir.AttrConstraint{Desc: "32-bit signless integer attribute whose minimum value is 0 whose maximum value is 3", OK: func(a ir.Attribute) bool {
	ia, ok := a.(*ir.IntegerAttr)
	return ok && ir.IsIntegerOfWidth(ia.Type(), 32) && ia.Int() >= 0 && ia.Int() <= 3
}}

func init() {
	ir.Register(
		&ir.OpDef{
			Name:     "memref.copy",
			Summary:  "Copies the elements of one memref into another of the same shape",
			Operands: []ir.ArgSpec{{Name: "source", Type: baseMemRefC}, {Name: "target", Type: baseMemRefC}},
			Format:   "$source `,` $target attr-dict `:` type($source) `to` type($target)",
			Verify:   verifyCopy,
			Effects:  []ir.Effect{{Kind: ir.Read, Operand: "source"}, {Kind: ir.Write, Operand: "target"}},
			Doc: `In a kernel every thread that executes it copies the whole memref
element by element (a loop nest over the static or dynamic sizes); on
the host tmac run's plan copies contiguous memrefs between host and
device memory in either direction.`,
		},
		&ir.OpDef{
			Name:     "memref.rank",
			Summary:  "The rank of a memref",
			Traits:   ir.Pure,
			Operands: []ir.ArgSpec{{Name: "memref", Type: baseMemRefC}},
			Results:  []ir.ArgSpec{{Name: "result", Type: ir.IndexOnly}},
			Format:   "$memref attr-dict `:` type($memref)",
		},
		&ir.OpDef{
			Name:        "memref.memory_space_cast",
			Summary:     "The same memref in another memory space",
			Traits:      ir.Pure,
			Operands:    []ir.ArgSpec{{Name: "source", Type: baseMemRefC}},
			Results:     []ir.ArgSpec{{Name: "dest", Type: baseMemRefC}},
			Format:      "$source attr-dict `:` type($source) `to` type($dest)",
			ResultNames: ir.NameResults("memspacecast"),
			Verify:      verifyMemorySpaceCast,
		},
		&ir.OpDef{
			Name:     "memref.extract_strided_metadata",
			Summary:  "The base buffer, offset, sizes and strides of a memref",
			Traits:   ir.Pure | ir.SameVariadicResultSize,
			Operands: []ir.ArgSpec{{Name: "source", Type: stridedMemRefC}},
			Results: []ir.ArgSpec{
				{Name: "base_buffer", Type: ir.TypeConstraint{Desc: "strided memref of any type values of rank 0", OK: func(t ir.Type) bool {
					m, ok := t.(*ir.MemRefType)
					return ok && m.Rank() == 0
				}}},
				{Name: "offset", Type: ir.IndexOnly},
				{Name: "sizes", Kind: ir.Variadic, Type: ir.IndexOnly},
				{Name: "strides", Kind: ir.Variadic, Type: ir.IndexOnly},
			},
			Format:      "$source `:` type($source) `->` type(results) attr-dict",
			ResultNames: metadataResultNames,
			Verify:      verifyExtractStridedMetadata,
		},
		&ir.OpDef{
			Name:        "memref.extract_aligned_pointer_as_index",
			Summary:     "The aligned pointer of a memref as an index",
			Traits:      ir.Pure,
			Operands:    []ir.ArgSpec{{Name: "source", Type: baseMemRefC}},
			Results:     []ir.ArgSpec{{Name: "aligned_pointer", Type: ir.IndexOnly}},
			Format:      "$source `:` type($source) `->` type(results) attr-dict",
			ResultNames: ir.NameResults("intptr"),
		},
		&ir.OpDef{
			Name:    "memref.alloca_scope",
			Summary: "A region whose memref.alloca allocations end with it",
			Traits:  ir.RecursiveSideEffects | ir.SingleBlock,
			Results: []ir.ArgSpec{{Name: "results", Kind: ir.Variadic, Type: ir.AnyType}},
			Regions: []ir.RegionSpec{{Name: "bodyRegion"}},
			Parse:   parseAllocaScope,
			Print:   printAllocaScope,
			Verify:  verifyAllocaScope,
		},
		&ir.OpDef{
			Name:     "memref.alloca_scope.return",
			Summary:  "Ends a memref.alloca_scope, yielding its results",
			Traits:   ir.Pure | ir.Terminator | ir.ReturnLike,
			Parents:  []string{"memref.alloca_scope"},
			Operands: []ir.ArgSpec{{Name: "results", Kind: ir.Variadic, Type: ir.AnyType}},
			Format:   "attr-dict ($results^ `:` type($results))?",
		},
		&ir.OpDef{
			Name:     "memref.realloc",
			Summary:  "A larger or smaller copy of a 1-D memref; the source is freed",
			Operands: []ir.ArgSpec{{Name: "source", Type: oneDimC}, {Name: "dynamicResultSize", Kind: ir.Optional, Type: ir.IndexOnly}},
			Results:  []ir.ArgSpec{{Name: "result", Type: oneDimC}},
			Attrs:    []ir.AttrSpec{{Name: "alignment", Constraint: alignmentC, Optional: true}},
			Format:   "$source (`(` $dynamicResultSize^ `)`)? attr-dict `:` type($source) `to` type(results)",
			Verify:   verifyRealloc,
			Effects: []ir.Effect{
				{Kind: ir.Read, Operand: "source"}, {Kind: ir.Free, Operand: "source"}, {Kind: ir.Allocate},
			},
			Doc: `Not supported in kernels (a kernel cannot allocate global memory). On
the host, tmac run's plan allocates the new buffer where the source lives
(host or device memory), copies the elements both sizes hold and frees
the source.`,
		},
		&ir.OpDef{
			Name:      "memref.distinct_objects",
			Summary:   "Its operands, which the program guarantees do not alias",
			Traits:    ir.Pure,
			Operands:  []ir.ArgSpec{{Name: "operands", Kind: ir.Variadic, Type: memRefC}},
			Results:   []ir.ArgSpec{{Name: "results", Kind: ir.Variadic, Type: memRefC}},
			TypeRules: []ir.TypeRule{{Target: "results", From: "operands"}},
			Format:    "$operands attr-dict `:` type($operands)",
			Verify:    verifyDistinctObjects,
			Doc: `Lowered to its operands unchanged (tmac does not pass the no-alias
fact on to LLVM).`,
		},
		&ir.OpDef{
			Name:     "memref.prefetch",
			Summary:  "A hint that an element will be read or written soon",
			Operands: []ir.ArgSpec{{Name: "memref", Type: memRefC}, indexes("indices")},
			Attrs: []ir.AttrSpec{
				{Name: "isWrite", Constraint: ir.BoolAttrC},
				{Name: "localityHint", Constraint: localityC},
				{Name: "isDataCache", Constraint: ir.BoolAttrC},
			},
			Parse:  parsePrefetch,
			Print:  printPrefetch,
			Verify: verifyPrefetch,
		},
	)
}

// CheckCopySizes checks memref.copy's sizes at run time, as the loop nest
// of its lowering meets them, outermost first: the first dimension whose
// sizes differ is an error; an empty dimension before it means nothing
// is copied (empty).
func CheckCopySizes(src, dst []int64) (empty bool, err error) {
	for i := range src {
		if src[i] != dst[i] {
			return false, fmt.Errorf("the source and target sizes differ in dimension %d: %d and %d", i, src[i], dst[i])
		}
		if src[i] == 0 {
			return true, nil
		}
	}
	return false, nil
}
