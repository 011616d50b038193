package memref

import (
	"fmt"
	"slices"

	"github.com/tmac-dev/tmac/ir"
)

// automaticAllocationScopes are the ops with upstream's
// AutomaticAllocationScope trait that tmac knows about.
var automaticAllocationScopes = map[string]bool{
	"func.func":           true,
	"gpu.func":            true,
	"gpu.launch":          true,
	"llvm.func":           true,
	"memref.alloca_scope": true,
	"async.execute":       true,
	"affine.parallel":     true,
	"scf.forall":          true,
	"transform.sequence":  true,
}

func memrefOf(v ir.Value) *ir.MemRefType {
	m, _ := v.Type().(*ir.MemRefType)
	return m
}

func countDynamic(shape []int64) int {
	n := 0
	for _, d := range shape {
		if d == Dynamic {
			n++
		}
	}
	return n
}

func verifyAllocLike(op *ir.Operation) error {
	mt := memrefOf(op.Result(0))
	if mt == nil {
		return nil
	}
	sizes := op.OperandGroup("dynamicSizes")
	if want := countDynamic(mt.Shape()); len(sizes) != want {
		return op.EmitOpError("incorrect number of dynamic sizes, has %d, expected %d", len(sizes), want)
	}
	syms := op.OperandGroup("symbolOperands")
	if want := NumLayoutSymbols(mt); len(syms) != want {
		return op.EmitOpError("symbol operand count does not equal memref symbol count: expected %d, got %d", want, len(syms))
	}
	return nil
}

func verifyAlloc(op *ir.Operation) error { return verifyAllocLike(op) }

func verifyAlloca(op *ir.Operation) error {
	found := false
	for p := op.ParentOp(); p != nil; p = p.ParentOp() {
		if automaticAllocationScopes[p.Name()] {
			found = true
			break
		}
	}
	if !found {
		return op.EmitOpError("requires an ancestor op with AutomaticAllocationScope trait")
	}
	return verifyAllocLike(op)
}

func verifyLoad(op *ir.Operation) error {
	mt := memrefOf(op.Operand(0))
	if op.Result(0).Type() != mt.Elem {
		return op.EmitOpError("failed to verify that result type matches element type of 'memref'")
	}
	if n := op.NumOperands() - 1; n != mt.Rank() {
		return op.EmitOpError("incorrect number of indices for load, expected %d but got %d", mt.Rank(), n)
	}
	return nil
}

func verifyStore(op *ir.Operation) error {
	mt := memrefOf(op.Operand(1))
	if op.Operand(0).Type() != mt.Elem {
		return op.EmitOpError("failed to verify that type of 'value' matches element type of 'memref'")
	}
	if op.NumOperands()-2 != mt.Rank() {
		return op.EmitOpError("store index operand count not equal to memref rank")
	}
	return nil
}

// hasIdentityLayout reports whether a memref's layout is the identity
// (none, a row-major strided<> or an identity affine map).
func hasIdentityLayout(t *ir.MemRefType) bool {
	switch l := t.Layout.(type) {
	case nil:
		return true
	case *ir.StridedLayoutAttr:
		return l.IsIdentityFor(t.Shape())
	}
	m, err := ParseAffineMap(t.Layout.String())
	return err == nil && m.IsIdentity()
}

func verifyView(op *ir.Operation) error {
	base := memrefOf(op.Operand(0))
	view := memrefOf(op.Result(0))
	if !hasIdentityLayout(base) {
		return op.EmitError("unsupported map for base memref type '%s'", base)
	}
	if !hasIdentityLayout(view) {
		return op.EmitError("unsupported map for result memref type '%s'", view)
	}
	if base.MemorySpace != view.MemorySpace {
		return op.EmitError("different memory spaces specified for base memref type '%s' and view memref type '%s'", base, view)
	}
	if n, want := len(op.OperandGroup("sizes")), countDynamic(view.Shape()); n != want {
		return op.EmitOpError("incorrect number of dynamic sizes, has %d, expected %d", n, want)
	}
	return nil
}

func staticList(op *ir.Operation, name string) []int64 {
	if a, ok := op.Attr(name).(*ir.DenseArrayAttr); ok {
		return a.Ints
	}
	return nil
}

// verifyOffsetSizeStride checks the offsets/sizes/strides lists of subview
// and reinterpret_cast (upstream's OffsetSizeAndStrideOpInterface); maxRanks
// are the required list lengths.
func verifyOffsetSizeStride(op *ir.Operation, maxRanks [3]int) error {
	names := [3]string{"offsets", "sizes", "strides"}
	var lists [3][]int64
	for i, n := range names {
		lists[i] = staticList(op, "static_"+n)
	}
	for _, i := range []int{1, 2, 0} {
		n := names[i]
		if got, want := len(op.OperandGroup(n)), countDynamic(lists[i]); got != want {
			return op.EmitError("expected the number of '%s' to match the number of dynamic entries in 'static_%s' (%d vs %d)", n, n, got, want)
		}
	}
	offs, sizes, strides := lists[0], lists[1], lists[2]
	if len(offs) != len(sizes) && !(maxRanks[0] == 1 && len(offs) == 1) {
		return op.EmitError("expected mixed offsets rank to match mixed sizes rank (%d vs %d) so the rank of the result type is well-formed.", len(offs), len(sizes))
	}
	if len(sizes) != len(strides) {
		return op.EmitError("expected mixed sizes rank to match mixed strides rank (%d vs %d) so the rank of the result type is well-formed.", len(sizes), len(strides))
	}
	what := [3]string{"offset", "size", "stride"}
	for i := range lists {
		if len(lists[i]) != maxRanks[i] {
			return op.EmitError("expected %d %s values, got %d", maxRanks[i], what[i], len(lists[i]))
		}
	}
	for i, n := range names[:2] {
		for _, v := range lists[i] {
			if v != Dynamic && v < 0 {
				return op.EmitError("expected %s to be non-negative, but got %d", n, v)
			}
		}
	}
	return nil
}

func verifySubView(op *ir.Operation) error {
	base := memrefOf(op.Operand(0))
	result := memrefOf(op.Result(0))
	n := base.Rank()
	if err := verifyOffsetSizeStride(op, [3]int{n, n, n}); err != nil {
		return err
	}
	if base.MemorySpace != result.MemorySpace {
		return op.EmitError("different memory spaces specified for base memref type '%s' and subview memref type '%s'", base, result)
	}
	if !IsStrided(base) {
		return op.EmitError("base type '%s' is not strided", base)
	}
	offs, sizes, strides := staticList(op, "static_offsets"), staticList(op, "static_sizes"), staticList(op, "static_strides")
	expected, _ := InferSubViewResultType(base, offs, sizes, strides)
	switch CheckSubViewResult(expected, result) {
	case SliceRankTooLarge:
		return op.EmitError("expected result rank to be smaller or equal to the source rank, but got '%s'", result)
	case SliceSizeMismatch:
		return op.EmitError("expected result type to be '%s' or a rank-reduced version. (mismatch of result sizes), but got '%s'", expected, result)
	case SliceElemTypeMismatch:
		return op.EmitError("expected result element type to be '%s', but got '%s'", expected.Elem, result)
	case SliceMemSpaceMismatch:
		return op.EmitError("expected result and source memory spaces to match, but got '%s'", result)
	case SliceLayoutMismatch:
		return op.EmitError("expected result type to be '%s' or a rank-reduced version. (mismatch of result layout), but got '%s'", expected, result)
	}
	if msg := SliceBoundsError(base.Shape(), offs, sizes, strides); msg != "" {
		return op.EmitError("%s", msg)
	}
	return nil
}

// SliceBoundsError checks a static slice against the source shape: per
// dim, an offset at or past the (static) dim size, or a last accessed index
// offset + (size-1)*stride at or past it, is out of bounds. Dynamic values
// skip the check. It returns the upstream message, or "".
func SliceBoundsError(shape, offsets, sizes, strides []int64) string {
	for i, dim := range shape {
		if i >= len(offsets) || i >= len(sizes) || i >= len(strides) {
			break
		}
		o := offsets[i]
		if dim == Dynamic || o == Dynamic {
			continue
		}
		if o >= dim {
			return fmt.Sprintf("offset %d is out-of-bounds: %d >= %d", i, o, dim)
		}
		z, t := sizes[i], strides[i]
		if z == Dynamic || t == Dynamic {
			continue
		}
		if last := o + (z-1)*t; last >= dim {
			return fmt.Sprintf("slice along dimension %d runs out-of-bounds: %d >= %d", i, last, dim)
		}
	}
	return ""
}

func verifyCast(op *ir.Operation) error {
	src, dst := op.Operand(0).Type(), op.Result(0).Type()
	if !IsCastCompatible(src, dst) {
		return op.EmitOpError("operand type '%s' and result type '%s' are cast incompatible", src, dst)
	}
	return nil
}

func dimString(v int64) string {
	if v == Dynamic {
		return "dynamic"
	}
	return fmt.Sprint(v)
}

func verifyReinterpretCast(op *ir.Operation) error {
	src := op.Operand(0).Type()
	result := memrefOf(op.Result(0))
	if err := verifyOffsetSizeStride(op, [3]int{1, result.Rank(), result.Rank()}); err != nil {
		return err
	}
	srcElem, srcSpace, _ := baseMemRef(src)
	if srcSpace != result.MemorySpace {
		return op.EmitError("different memory spaces specified for source type '%s' and result memref type '%s'", src, result)
	}
	if srcElem != result.Elem {
		return op.EmitError("different element types specified for source type '%s' and result memref type '%s'", src, result)
	}
	sizes := staticList(op, "static_sizes")
	for i, d := range result.Shape() {
		if d != Dynamic && sizes[i] != d {
			return op.EmitError("expected result type with size = %s instead of %d in dim = %d", dimString(sizes[i]), d, i)
		}
	}
	strides, offset, ok := StridesAndOffset(result)
	if !ok {
		return op.EmitError("expected result type to have strided layout but found '%s'", result)
	}
	if want := staticList(op, "static_offsets")[0]; offset != Dynamic && want != offset {
		return op.EmitError("expected result type with offset = %s instead of %d", dimString(want), offset)
	}
	opStrides := staticList(op, "static_strides")
	for i, s := range strides {
		if s != Dynamic && opStrides[i] != s {
			return op.EmitError("expected result type with stride = %s instead of %d in dim = %d", dimString(opStrides[i]), s, i)
		}
	}
	return nil
}

func verifyGetGlobal(op *ir.Operation) error {
	ref, _ := op.Attr("name").(*ir.SymbolRefAttr)
	global := ir.ResolveSymbolRef(op, ref)
	if global == nil || global.Name() != "memref.global" {
		return op.EmitOpError("'%s' does not reference a valid global memref", ref.Root)
	}
	ta, _ := global.Attr("type").(*ir.TypeAttr)
	if ta == nil {
		return nil
	}
	if rt := op.Result(0).Type(); rt != ta.Value {
		return op.EmitOpError("result type '%s' does not match type '%s' of the global memref @%s", rt, ta.Value, ref.Root)
	}
	return nil
}

func verifyGlobal(op *ir.Operation) error {
	if vis := op.Attr("sym_visibility"); vis != nil {
		if s, ok := vis.(*ir.StringAttr); !ok || (s.Value != "public" && s.Value != "private" && s.Value != "nested") {
			return op.EmitOpError("visibility expected to be one of [\"public\", \"private\", \"nested\"], but got %s", vis)
		}
	}
	if p := op.ParentOp(); p == nil || !p.HasTrait(ir.SymbolTable) {
		return op.EmitOpError("symbol's parent must have the SymbolTable trait")
	}
	t := op.Attr("type").(*ir.TypeAttr).Value.(*ir.MemRefType)
	if !ir.HasStaticShape(t.Shape()) {
		return op.EmitOpError("type should be static shaped memref, but got '%s'", t)
	}
	init := op.Attr("initial_value")
	if init == nil {
		return nil
	}
	if _, unit := init.(*ir.UnitAttr); unit {
		return nil
	}
	if !isElementsAttr(init) {
		return op.EmitOpError("initial value should be a unit or elements attribute, but got %s", init)
	}
	st, ok := init.(interface{ Type() ir.Type }).Type().(ir.ShapedType)
	if !ok {
		return nil
	}
	if st.ElementType() != t.Elem {
		return op.EmitOpError("initial value element expected to be of type '%s', but was of type '%s'", t.Elem, st.ElementType())
	}
	if !slices.Equal(st.Shape(), t.Shape()) {
		return op.EmitOpError("initial value shape expected to be %s but was %s", joinShape(t.Shape()), joinShape(st.Shape()))
	}
	return nil
}

// joinShape writes a shape as upstream's verifier does: "1, 2".
func joinShape(s []int64) string {
	out := ""
	for i, d := range s {
		if i > 0 {
			out += ", "
		}
		out += dimString(d)
	}
	return out
}

func verifyAssumeAlignment(op *ir.Operation) error {
	in, out := op.Operand(0).Type(), op.Result(0).Type()
	if in != out {
		return ir.DiagList{
			op.EmitOpError("inferred type(s) '%s' are incompatible with return type(s) of operation '%s'", in, out),
			op.EmitOpError("failed to infer returned types"),
		}
	}
	if a, ok := op.Attr("alignment").(*ir.IntegerAttr); ok {
		if v := a.Int(); v&(v-1) != 0 {
			return op.EmitOpError("alignment must be power of 2")
		}
	}
	return nil
}
