package memref

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tmac-dev/tmac/ir"
)

// Ops that give a memref another shape or layout without moving data:
// memref.expand_shape, memref.collapse_shape, memref.reshape,
// memref.transpose.

// reassociationC is upstream's IndexListArrayAttr.
var reassociationC = ir.AttrConstraint{Desc: "Array of 64-bit integer array attributes", OK: func(a ir.Attribute) bool {
	_, ok := Reassociation(a)
	return ok
}}

// Reassociation returns the groups of a reassociation attribute ([[0, 1],
// [2]]): which dimensions of the expanded type form each dimension of the
// collapsed one.
func Reassociation(a ir.Attribute) ([][]int64, bool) {
	arr, ok := a.(*ir.ArrayAttr)
	if !ok {
		return nil, false
	}
	groups := make([][]int64, 0, len(arr.Elems))
	for _, g := range arr.Elems {
		ga, ok := g.(*ir.ArrayAttr)
		if !ok {
			return nil, false
		}
		var group []int64
		for _, e := range ga.Elems {
			ia, ok := e.(*ir.IntegerAttr)
			if !ok || !ir.IsIntegerOfWidth(ia.Type(), 64) {
				return nil, false
			}
			group = append(group, ia.Int())
		}
		groups = append(groups, group)
	}
	return groups, true
}

// verifyCollapsedShape is upstream's check of a reassociation between a
// collapsed and an expanded shape (shared by both ops).
func verifyCollapsedShape(op *ir.Operation, collapsed, expanded []int64, groups [][]int64) error {
	if len(collapsed) != len(groups) {
		return op.EmitOpError("invalid number of reassociation groups: found %d, expected %d", len(groups), len(collapsed))
	}
	next := int64(0)
	for i, group := range groups {
		dynamic := false
		for _, d := range group {
			if d != next {
				return op.EmitOpError("reassociation indices must be contiguous")
			}
			next++
			if d >= int64(len(expanded)) {
				return op.EmitOpError("reassociation index %d is out of bounds", d)
			}
			if expanded[d] == Dynamic {
				dynamic = true
			}
		}
		if (collapsed[i] == Dynamic) != dynamic {
			return op.EmitOpError("collapsed dim (%d) must be dynamic if and only if reassociation group is dynamic", i)
		}
		if !dynamic {
			size := int64(1)
			for _, d := range group {
				size *= expanded[d]
			}
			if size != collapsed[i] {
				return op.EmitOpError("collapsed dim size (%d) must equal reassociation group size (%d)", collapsed[i], size)
			}
		}
	}
	if len(collapsed) == 0 {
		for _, d := range expanded {
			if d != 1 {
				return op.EmitOpError("rank 0 memrefs can only be extended/collapsed with/from ones")
			}
		}
	} else if next != int64(len(expanded)) {
		return op.EmitOpError("expanded rank (%d) inconsistent with number of reassociation indices (%d)", len(expanded), next)
	}
	return nil
}

// CollapsedStrides is upstream's computeCollapsedLayoutMap: the stride of
// each group is that of its last dimension not of size 1 (dynamic when
// that dimension's size is), and the dimensions of a group must be
// contiguous where the strides say so statically. ok is false for a
// source without strides or non-contiguous groups.
func CollapsedStrides(src *ir.MemRefType, groups [][]int64) (strides []int64, offset int64, ok bool) {
	srcStrides, offset, ok := StridesAndOffset(src)
	if !ok {
		return nil, 0, false
	}
	shape := src.Shape()
	for _, g := range groups {
		ref := g
		for len(ref) > 1 && shape[ref[len(ref)-1]] == 1 {
			ref = ref[:len(ref)-1]
		}
		last := ref[len(ref)-1]
		if shape[last] != Dynamic || len(ref) == 1 {
			strides = append(strides, srcStrides[last])
		} else {
			strides = append(strides, Dynamic)
		}
	}
	for gi := len(groups) - 1; gi >= 0; gi-- {
		stride := strides[gi]
		g := groups[gi]
		for k := len(g) - 1; k >= 1; k-- {
			idx := g[k]
			stride = SatMul(stride, shape[idx])
			if shape[idx-1] == 1 {
				continue
			}
			if s := srcStrides[idx-1]; stride != Dynamic && s != Dynamic && stride != s {
				return nil, 0, false
			}
		}
	}
	return strides, offset, true
}

// ExpandedStrides is upstream's computeExpandedLayoutMap: each source
// stride is that of the innermost dimension of its group, multiplied
// outwards by the sizes of the group.
func ExpandedStrides(src *ir.MemRefType, shape []int64, groups [][]int64) (strides []int64, offset int64, ok bool) {
	srcStrides, offset, ok := StridesAndOffset(src)
	if !ok || len(srcStrides) != len(groups) {
		return nil, 0, false
	}
	strides = make([]int64, len(shape))
	for i := range strides {
		strides[i] = 1
	}
	at := len(shape) - 1
	for gi := len(groups) - 1; gi >= 0; gi-- {
		s := srcStrides[gi]
		for range groups[gi] {
			if at < 0 {
				return nil, 0, false
			}
			strides[at] = s
			s = SatMul(s, shape[at])
			at--
		}
	}
	return strides, offset, true
}

// layoutIsIdentityMap reports whether t's layout is the identity map, as
// upstream's isIdentity asks it: no layout, or a strided layout whose map
// is the identity (offset 0 and, at rank 1, stride 1; strided<[4, 1]> at
// rank 2 is d0 * 4 + d1, not the identity).
func layoutIsIdentityMap(t *ir.MemRefType) bool {
	sl, ok := t.Layout.(*ir.StridedLayoutAttr)
	if !ok {
		if t.Layout == nil {
			return true
		}
		m, err := ParseAffineMap(t.Layout.String())
		return err == nil && m.IsIdentity()
	}
	strides, offset, _ := StridesAndOffset(t)
	switch t.Rank() {
	case 0:
		return offset == 0 && sl != nil
	case 1:
		return offset == 0 && strides[0] == 1
	}
	return false
}

// CollapsedLayout is the sizes and strides of a collapse_shape view of
// a memref with the given sizes and strides: a group's size is the
// product of its sizes, its stride that of its innermost dimension whose
// size is not 1 (a dimension of size 1 may have any stride).
func CollapsedLayout(sizes, strides []int64, groups [][]int64) (outSizes, outStrides []int64) {
	outSizes, outStrides = make([]int64, len(groups)), make([]int64, len(groups))
	for i, g := range groups {
		outSizes[i], outStrides[i] = 1, strides[g[0]]
		for _, d := range g {
			outSizes[i] *= sizes[d]
			if sizes[d] != 1 {
				outStrides[i] = strides[d]
			}
		}
	}
	return outSizes, outStrides
}

// ExpandedLayout is the strides of an expand_shape view with the given
// output sizes of a memref with the given sizes and strides: within a
// group the innermost dimension keeps the source stride, each outer one
// is the next inner stride times the next inner size. bad is the first
// source dimension whose group's sizes do not multiply to its size, or -1.
func ExpandedLayout(srcSizes, srcStrides, sizes []int64, groups [][]int64) (strides []int64, bad int) {
	strides = make([]int64, len(sizes))
	for i := range strides {
		strides[i] = 1
	}
	bad = -1
	for i, g := range groups {
		n, s := int64(1), srcStrides[i]
		for k := len(g) - 1; k >= 0; k-- {
			strides[g[k]] = s
			s *= sizes[g[k]]
			n *= sizes[g[k]]
		}
		if n != srcSizes[i] && bad < 0 {
			bad = i
		}
	}
	return strides, bad
}

// Permuted is sizes and strides in the order perm gives (a transpose).
func Permuted(sizes, strides []int64, perm []int) (outSizes, outStrides []int64) {
	outSizes, outStrides = make([]int64, len(perm)), make([]int64, len(perm))
	for i, d := range perm {
		outSizes[i], outStrides[i] = sizes[d], strides[d]
	}
	return outSizes, outStrides
}

// collapsedType is the type collapse_shape gives src: identity layouts
// stay identity, others are computed.
func collapsedType(src *ir.MemRefType, shape []int64, groups [][]int64) (*ir.MemRefType, bool) {
	if layoutIsIdentityMap(src) {
		return ir.MemRefTypeOf(shape, src.Elem, nil, src.MemorySpace), true
	}
	strides, offset, ok := CollapsedStrides(src, groups)
	if !ok {
		return nil, false
	}
	return ir.MemRefTypeOf(shape, src.Elem, ir.StridedLayout(strides, offset), src.MemorySpace), true
}

func expandedType(src *ir.MemRefType, shape []int64, groups [][]int64) (*ir.MemRefType, bool) {
	if layoutIsIdentityMap(src) {
		return ir.MemRefTypeOf(shape, src.Elem, nil, src.MemorySpace), true
	}
	strides, offset, ok := ExpandedStrides(src, shape, groups)
	if !ok {
		return nil, false
	}
	return ir.MemRefTypeOf(shape, src.Elem, ir.StridedLayout(strides, offset), src.MemorySpace), true
}

func verifyCollapseShape(op *ir.Operation) error {
	src, res := memrefOf(op.Operand(0)), memrefOf(op.Result(0))
	groups, _ := Reassociation(op.Attr("reassociation"))
	if src.Rank() < res.Rank() {
		return op.EmitOpError("has source rank %d and result rank %d. This is not a collapse (%d < %d).", src.Rank(), res.Rank(), src.Rank(), res.Rank())
	}
	if err := verifyCollapsedShape(op, res.Shape(), src.Shape(), groups); err != nil {
		return err
	}
	want, ok := collapsedType(src, res.Shape(), groups)
	if !ok {
		return op.EmitOpError("invalid source layout map or collapsing non-contiguous dims")
	}
	if want != res {
		return op.EmitOpError("expected collapsed type to be '%s' but found '%s'", want, res)
	}
	return nil
}

func verifyExpandShape(op *ir.Operation) error {
	src, res := memrefOf(op.Operand(0)), memrefOf(op.Result(0))
	groups, _ := Reassociation(op.Attr("reassociation"))
	if src.Rank() > res.Rank() {
		return op.EmitOpError("has source rank %d and result rank %d. This is not an expansion (%d > %d).", src.Rank(), res.Rank(), src.Rank(), res.Rank())
	}
	if err := verifyCollapsedShape(op, src.Shape(), res.Shape(), groups); err != nil {
		return err
	}
	want, ok := expandedType(src, res.Shape(), groups)
	if !ok {
		return op.EmitOpError("invalid source layout map")
	}
	if want != res {
		return op.EmitOpError("expected expanded type to be '%s' but found '%s'", want, res)
	}
	static := staticInts(op, "static_output_shape")
	if len(static) != res.Rank() {
		return op.EmitOpError("expected number of static shape bounds to be equal to the output rank (%d) but found %d inputs instead", res.Rank(), len(static))
	}
	if n, dyn := len(op.OperandGroup("output_shape")), countDynamic(static); n != dyn {
		return op.EmitOpError("mismatch in dynamic dims in output_shape and static_output_shape: static_output_shape has %d dynamic dims while output_shape has %d values", dyn, n)
	}
	for i, d := range res.Shape() {
		if d != Dynamic && d != static[i] {
			return op.EmitOpError("invalid output shape provided at pos %d", i)
		}
	}
	return nil
}

func staticInts(op *ir.Operation, name string) []int64 {
	if a, ok := op.Attr(name).(*ir.DenseArrayAttr); ok {
		return a.Ints
	}
	return nil
}

func verifyReshape(op *ir.Operation) error {
	src, shape := op.Operand(0).Type(), memrefOf(op.Operand(1))
	res := op.Result(0).Type()
	srcElem, srcSpace := elemAndSpace(src)
	resElem, resSpace := elemAndSpace(res)
	if srcElem != resElem {
		return op.EmitOpError("element types of source and destination memref types should be the same")
	}
	if srcSpace != resSpace {
		return op.EmitOpError("source and destination memref types should have the same memory space")
	}
	if m, ok := src.(*ir.MemRefType); ok && m.Layout != nil {
		return op.EmitOpError("source memref type should have identity affine map")
	}
	n := shape.Shape()[0]
	if m, ok := res.(*ir.MemRefType); ok {
		if m.Layout != nil {
			return op.EmitOpError("result memref type should have identity affine map")
		}
		if n == Dynamic {
			return op.EmitOpError("cannot use shape operand with dynamic length to reshape to statically-ranked memref type")
		}
		if n != int64(m.Rank()) {
			return op.EmitOpError("length of shape operand differs from the result's memref rank")
		}
	}
	return nil
}

func elemAndSpace(t ir.Type) (ir.Type, ir.Attribute) {
	switch t := t.(type) {
	case *ir.MemRefType:
		return t.Elem, t.MemorySpace
	case *ir.UnrankedMemRefType:
		return t.Elem, t.MemorySpace
	}
	return nil, nil
}

// Permutation returns the dimensions of a permutation map attribute
// (affine_map<(d0, d1) -> (d1, d0)>): result i is input dimension perm[i].
func Permutation(a ir.Attribute) ([]int, bool) {
	text, ok := strings.CutPrefix(a.String(), "affine_map<")
	if !ok {
		return nil, false
	}
	text = strings.TrimSuffix(text, ">")
	ins, outs, ok := strings.Cut(text, " -> ")
	if !ok || !strings.HasPrefix(ins, "(") || !strings.HasPrefix(outs, "(") {
		return nil, false
	}
	n := len(splitIDs(ins))
	perm := []int{}
	seen := make([]bool, n)
	for _, id := range splitIDs(outs) {
		var d int
		if _, err := fmt.Sscanf(id, "d%d", &d); err != nil || fmt.Sprintf("d%d", d) != id || d >= n || seen[d] {
			return nil, false
		}
		seen[d] = true
		perm = append(perm, d)
	}
	return perm, len(perm) == n
}

func splitIDs(list string) []string {
	list = strings.TrimSuffix(strings.TrimPrefix(list, "("), ")")
	if list == "" {
		return nil
	}
	return strings.Split(list, ", ")
}

// dimMapAttr is the affine map of n dimensions whose results are the
// dimensions dims.
func dimMapAttr(n int, dims []int) ir.Attribute {
	ins, outs := make([]string, n), make([]string, len(dims))
	for i := range ins {
		ins[i] = fmt.Sprintf("d%d", i)
	}
	for i, d := range dims {
		outs[i] = fmt.Sprintf("d%d", d)
	}
	return ir.OpaqueAttrOf("affine_map<(" + strings.Join(ins, ", ") + ") -> (" + strings.Join(outs, ", ") + ")>")
}

var permutationC = ir.AttrConstraint{Desc: "AffineMap attribute", OK: func(a ir.Attribute) bool {
	return strings.HasPrefix(a.String(), "affine_map<")
}}

// permutationSyntax writes the map without affine_map<>: `(i, j) -> (j, i)`.
var permutationSyntax = &ir.AttrSyntax{
	Parse: func(p *ir.Parser) (ir.Attribute, error) {
		var ins []string
		if err := p.ParseCommaSeparatedList(ir.DelimParen, func() error {
			id, err := p.ParseAnyKeyword()
			ins = append(ins, id)
			return err
		}); err != nil {
			return nil, err
		}
		if err := p.ParsePunct("->"); err != nil {
			return nil, err
		}
		var outs []int
		if err := p.ParseCommaSeparatedList(ir.DelimParen, func() error {
			id, err := p.ParseAnyKeyword()
			if err != nil {
				return err
			}
			for i, in := range ins {
				if in == id {
					outs = append(outs, i)
					return nil
				}
			}
			return p.CustomOpErrorf("use of undeclared identifier in affine map")
		}); err != nil {
			return nil, err
		}
		return dimMapAttr(len(ins), outs), nil
	},
	Print: func(a ir.Attribute) string {
		s := strings.TrimPrefix(a.String(), "affine_map<")
		return strings.TrimSuffix(s, ">")
	},
}

// TransposedType is the type memref.transpose gives src: the sizes and
// strides permuted, the offset kept.
func TransposedType(src *ir.MemRefType, perm []int) (*ir.MemRefType, bool) {
	strides, offset, ok := StridesAndOffset(src)
	if !ok {
		return nil, false
	}
	shape, ps := make([]int64, len(perm)), make([]int64, len(perm))
	for i, d := range perm {
		shape[i], ps[i] = src.Shape()[d], strides[d]
	}
	return ir.MemRefTypeOf(shape, src.Elem, ir.StridedLayout(ps, offset), src.MemorySpace), true
}

func verifyTranspose(op *ir.Operation) error {
	src, res := memrefOf(op.Operand(0)), memrefOf(op.Result(0))
	perm, ok := Permutation(op.Attr("permutation"))
	if !ok {
		return op.EmitOpError("expected a permutation map")
	}
	if len(perm) != src.Rank() {
		return op.EmitOpError("expected a permutation map of same rank as the input")
	}
	want, ok := TransposedType(src, perm)
	if !ok {
		return op.EmitOpError("expected a strided memref as input")
	}
	if !sameStridedType(want, res) {
		return op.EmitOpError("result type '%s' is not equivalent to the canonical transposed input type '%s'", res, canonicalStridedType(want))
	}
	return nil
}

// sameStridedType compares two memref types by shape, element, memory
// space and strides (a strided layout and the affine map of the same
// strides are the same layout).
func sameStridedType(a, b *ir.MemRefType) bool {
	if a == b {
		return true
	}
	if a.Elem != b.Elem || a.MemorySpace != b.MemorySpace || fmt.Sprint(a.Shape()) != fmt.Sprint(b.Shape()) {
		return false
	}
	sa, oa, ok1 := StridesAndOffset(a)
	sb, ob, ok2 := StridesAndOffset(b)
	return ok1 && ok2 && oa == ob && fmt.Sprint(sa) == fmt.Sprint(sb)
}

// canonicalStridedType is upstream's canonicalizeStridedLayout: a layout
// that is the row-major one is dropped, another becomes the affine map
// upstream builds and simplifies, offset + Σ d_i * stride_i with the
// dynamic offset and strides as symbols in that order: the offset after
// the first dimension's term (d0 * s1 + s0 + d1), a constant one last.
func canonicalStridedType(t *ir.MemRefType) *ir.MemRefType {
	strides, offset, ok := StridesAndOffset(t)
	if !ok {
		return t
	}
	rowMajor := offset == 0
	want := int64(1)
	for i := len(strides) - 1; i >= 0; i-- {
		if strides[i] != want && t.Shape()[i] != 1 {
			rowMajor = false
		}
		want = SatMul(want, t.Shape()[i])
	}
	if rowMajor {
		return ir.MemRefTypeOf(t.Shape(), t.Elem, nil, t.MemorySpace)
	}
	var syms []string
	sym := func() string {
		s := fmt.Sprintf("s%d", len(syms))
		syms = append(syms, s)
		return s
	}
	offTerm := ""
	if offset == Dynamic {
		offTerm = sym()
	}
	dims := make([]string, len(strides))
	var terms []string
	for i, st := range strides {
		dims[i] = fmt.Sprintf("d%d", i)
		switch st {
		case 0:
		case 1:
			terms = append(terms, dims[i])
		case Dynamic:
			terms = append(terms, dims[i]+" * "+sym())
		default:
			terms = append(terms, fmt.Sprintf("%s * %d", dims[i], st))
		}
	}
	if offTerm != "" {
		terms = slices.Insert(terms, min(1, len(terms)), offTerm)
	} else if offset != 0 || len(terms) == 0 {
		terms = append(terms, fmt.Sprint(offset))
	}
	symList := ""
	if len(syms) > 0 {
		symList = "[" + strings.Join(syms, ", ") + "]"
	}
	m := ir.OpaqueAttrOf("affine_map<(" + strings.Join(dims, ", ") + ")" + symList + " -> (" + strings.Join(terms, " + ") + ")>")
	return ir.MemRefTypeOf(t.Shape(), t.Elem, m, t.MemorySpace)
}

func init() {
	ir.Register(
		&ir.OpDef{
			Name:        "memref.collapse_shape",
			Summary:     "A view that merges groups of contiguous dimensions",
			Traits:      ir.Pure,
			Operands:    []ir.ArgSpec{{Name: "src", Type: stridedMemRefC}},
			Results:     []ir.ArgSpec{{Name: "result", Type: stridedMemRefC}},
			Attrs:       []ir.AttrSpec{{Name: "reassociation", Constraint: reassociationC}},
			Format:      "$src $reassociation attr-dict `:` type($src) `into` type($result)",
			ResultNames: ir.NameResults("collapse_shape"),
			Verify:      verifyCollapseShape,
		},
		&ir.OpDef{
			Name:     "memref.expand_shape",
			Summary:  "A view that splits dimensions into groups",
			Traits:   ir.Pure,
			Operands: []ir.ArgSpec{{Name: "src", Type: stridedMemRefC}, indexes("output_shape")},
			Results:  []ir.ArgSpec{{Name: "result", Type: stridedMemRefC}},
			Attrs: []ir.AttrSpec{
				{Name: "reassociation", Constraint: reassociationC},
				{Name: "static_output_shape", Constraint: ir.DenseI64ArrayC},
			},
			Format: "$src $reassociation `output_shape`" +
				" custom<DynamicIndexList>($output_shape, $static_output_shape) attr-dict `:`" +
				" type($src) `into` type($result)",
			ResultNames: ir.NameResults("expand_shape"),
			Verify:      verifyExpandShape,
		},
		&ir.OpDef{
			Name:    "memref.reshape",
			Summary: "A view of a memref with identity layout under the shape a memref holds",
			Traits:  ir.Pure,
			Operands: []ir.ArgSpec{
				{Name: "source", Type: baseMemRefC},
				{Name: "shape", Type: ir.TypeConstraint{Desc: "1D memref of signless integer or index values", OK: func(t ir.Type) bool {
					m, ok := t.(*ir.MemRefType)
					return ok && m.Rank() == 1 && ir.IsSignlessIntOrIndex(m.Elem)
				}}},
			},
			Results:     []ir.ArgSpec{{Name: "result", Type: baseMemRefC}},
			Format:      "$source `(` $shape `)` attr-dict `:` `(` type($source) `,` type($shape) `)` `->` type($result)",
			ResultNames: ir.NameResults("reshape"),
			Verify:      verifyReshape,
		},
		&ir.OpDef{
			Name:        "memref.transpose",
			Summary:     "A view with the dimensions permuted",
			Traits:      ir.Pure,
			Operands:    []ir.ArgSpec{{Name: "in", Type: stridedMemRefC}},
			Results:     []ir.ArgSpec{{Name: "result", Type: stridedMemRefC}},
			Attrs:       []ir.AttrSpec{{Name: "permutation", Constraint: permutationC, Syntax: permutationSyntax}},
			Format:      "$in $permutation attr-dict `:` type($in) `to` type($result)",
			ResultNames: ir.NameResults("transpose"),
			Verify:      verifyTranspose,
		},
	)
}
