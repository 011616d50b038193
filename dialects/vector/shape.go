package vector

import (
	"slices"

	"github.com/tmac-dev/tmac/dialects/memref"
	"github.com/tmac-dev/tmac/ir"
)

// The ops that move elements around without computing: extract, insert,
// shape_cast, bitcast, transpose, the strided slices, shuffle,
// interleave/deinterleave, from_elements/to_elements, step, the mask
// constructors, scalable.insert/extract, type_cast and vscale.

// Poison is the position (extract, insert) or shuffle mask entry that
// selects no element: the result is undefined there.
const Poison = -1

// intListSyntax writes a DenseI64ArrayAttr as `[1, 0]` (transpose's
// permutation, constant_mask's sizes, multi_reduction's dims, shuffle's
// mask).
var intListSyntax = &ir.AttrSyntax{
	Parse: func(p *ir.Parser) (ir.Attribute, error) {
		vals, err := p.ParseIntegerList(ir.DelimSquare)
		if err != nil {
			return nil, err
		}
		return ir.DenseI64Array(vals...), nil
	},
	Print: func(a ir.Attribute) string {
		if da, ok := a.(*ir.DenseArrayAttr); ok {
			return memref.FormatDynamicIndexList(da.Ints, nil)
		}
		return a.String()
	},
	CanStart: func(p *ir.Parser) bool { return p.IsPunct("[") },
}

// i64Syntax writes an i64 attribute as a bare integer.
var i64Syntax = &ir.AttrSyntax{
	Parse: func(p *ir.Parser) (ir.Attribute, error) {
		v, err := p.ParseInteger()
		if err != nil {
			return nil, err
		}
		return ir.I64Attr(v), nil
	},
	Print: func(a ir.Attribute) string { return ir.AttrWithoutType(a) },
}

// i64ArrayC is upstream's I64ArrayAttr: an array of i64 integer attributes.
var i64ArrayC = ir.AttrConstraint{Desc: "64-bit integer array attribute", OK: func(a ir.Attribute) bool {
	arr, ok := a.(*ir.ArrayAttr)
	if !ok {
		return false
	}
	for _, e := range arr.Elems {
		if ia, ok := e.(*ir.IntegerAttr); !ok || !ir.IsIntegerOfWidth(ia.Type(), 64) {
			return false
		}
	}
	return true
}}

// Ints returns the values of an I64ArrayAttr or DenseI64ArrayAttr.
func Ints(a ir.Attribute) []int64 {
	switch a := a.(type) {
	case *ir.DenseArrayAttr:
		return a.Ints
	case *ir.ArrayAttr:
		out := make([]int64, len(a.Elems))
		for i, e := range a.Elems {
			out[i], _ = ir.AttrInt(e)
		}
		return out
	}
	return nil
}

// I64ArrayAttr returns [v0, v1, ...] as an array of i64 attributes.
func I64ArrayAttr(vals []int64) *ir.ArrayAttr {
	elems := make([]ir.Attribute, len(vals))
	for i, v := range vals {
		elems[i] = ir.I64Attr(v)
	}
	return ir.Array(elems...)
}

func vectorType(v ir.Value) *ir.VectorType {
	t, _ := v.Type().(*ir.VectorType)
	return t
}

// NumElements is the number of elements of a fixed-size vector (1 for 0-D).
func NumElements(t *ir.VectorType) int64 {
	n := int64(1)
	for _, d := range t.Shape() {
		n *= d
	}
	return n
}

// Rows is how an n-D vector is read from or written to memory: as rows of
// its innermost dimension, the leading dimensions stepping along the
// memref's dimensions in front of the innermost one. rows are the leading
// indices of each row; n is the row length.
func Rows(shape []int64) (rows [][]int64, n int64) {
	if len(shape) <= 1 {
		n = 1
		if len(shape) == 1 {
			n = shape[0]
		}
		return [][]int64{nil}, n
	}
	lead := shape[:len(shape)-1]
	for r := range ir.NumElements(lead) {
		rows = append(rows, ir.Delinearize(lead, r))
	}
	return rows, shape[len(shape)-1]
}

// scalableAt reports whether dim i of t is scalable.
func scalableAt(t *ir.VectorType, i int) bool { return i < len(t.Scalable) && t.Scalable[i] }

// subVector is the type of t with its leading n dims removed: the element
// type when none are left.
func subVector(t *ir.VectorType, n int) ir.Type {
	if n >= len(t.Shape()) {
		return t.Elem
	}
	var sc []bool
	if t.Scalable != nil {
		sc = t.Scalable[n:]
	}
	return ir.ScalableVectorTypeOf(t.Shape()[n:], sc, t.Elem)
}

func sameElemType(op *ir.Operation, a, b ir.Type, what string) error {
	if ir.ElementTypeOrSelf(a) != ir.ElementTypeOrSelf(b) {
		return op.EmitOpError("failed to verify that %s have same element type", what)
	}
	return nil
}

// validPosition: a static position is in [0, dim) or poison.
func validPosition(p, dim int64, poison bool) bool {
	return (p >= 0 && p < dim) || (poison && p == Poison)
}

// positions checks the static and dynamic position lists of an extract or
// insert agree.
func positions(op *ir.Operation, static []int64, dynamic int) error {
	n := 0
	for _, s := range static {
		if s == ir.Dynamic {
			n++
		}
	}
	if n != dynamic {
		return op.EmitOpError("mismatch between dynamic and static positions (kDynamic marker but no corresponding dynamic position) -- this can only happen due to an incorrect fold/rewrite")
	}
	return nil
}

// inferMismatch is the pair of errors upstream reports when a result type
// differs from the one the op infers.
func inferMismatch(op *ir.Operation, inferred, actual ir.Type) error {
	return ir.DiagList{
		op.EmitOpError("inferred type(s) '%s' are incompatible with return type(s) of operation '%s'", inferred, actual),
		op.EmitOpError("failed to infer returned types"),
	}
}

func verifyExtract(op *ir.Operation) error {
	src := vectorType(op.OperandNamed("vector"))
	res := op.ResultNamed("result").Type()
	if err := sameElemType(op, src, res, "operand and result"); err != nil {
		return err
	}
	if rv, ok := res.(*ir.VectorType); ok && len(rv.Shape()) == 0 {
		return op.EmitError("expected a scalar instead of a 0-d vector as the result type")
	}
	pos := Ints(op.Attr("static_position"))
	if err := positions(op, pos, len(op.OperandGroup("dynamic_position"))); err != nil {
		return err
	}
	if len(pos) > len(src.Shape()) {
		return op.EmitOpError("expected position attribute of rank no greater than vector rank")
	}
	for i, p := range pos {
		if p != ir.Dynamic && !validPosition(p, src.Shape()[i], true) {
			return op.EmitOpError("expected position attribute #%d to be a non-negative integer smaller than the corresponding vector dimension or poison (-1)", i+1)
		}
	}
	inferred := subVector(src, len(pos))
	if inferred != res && !oneElementOf(inferred, res) && !oneElementOf(res, inferred) {
		return inferMismatch(op, inferred, res)
	}
	return nil
}

// oneElementOf reports whether a is vector<1xT> for b = T (extract allows
// either for a single element).
func oneElementOf(a, b ir.Type) bool {
	v, ok := a.(*ir.VectorType)
	return ok && slices.Equal(v.Shape(), []int64{1}) && v.Scalable == nil && v.Elem == b
}

func verifyInsert(op *ir.Operation) error {
	src := op.OperandNamed("valueToStore").Type()
	dst := vectorType(op.OperandNamed("dest"))
	if err := sameElemType(op, src, op.ResultNamed("result").Type(), "source operand and result"); err != nil {
		return err
	}
	if dst != op.ResultNamed("result").Type() {
		return op.EmitOpError("failed to verify that all of {dest, result} have same type")
	}
	sv, srcIsVector := src.(*ir.VectorType)
	if srcIsVector && len(sv.Shape()) == 0 {
		return op.EmitError("expected a scalar instead of a 0-d vector as the source operand")
	}
	pos := Ints(op.Attr("static_position"))
	if err := positions(op, pos, len(op.OperandGroup("dynamic_position"))); err != nil {
		return err
	}
	rank := len(dst.Shape())
	if len(pos) > rank {
		return op.EmitOpError("expected position attribute of rank no greater than dest vector rank")
	}
	if srcIsVector && len(sv.Shape())+len(pos) != rank {
		return op.EmitOpError("expected position attribute rank + source rank to match dest vector rank")
	}
	if !srcIsVector && len(pos) != rank {
		return op.EmitOpError("expected position attribute rank to match the dest vector rank")
	}
	for i, p := range pos {
		if p != ir.Dynamic && !validPosition(p, dst.Shape()[i], true) {
			return op.EmitOpError("expected position attribute #%d to be a non-negative integer smaller than the corresponding dest vector dimension", i+1)
		}
	}
	return nil
}

func numScalable(t *ir.VectorType) int {
	n := 0
	for _, s := range t.Scalable {
		if s {
			n++
		}
	}
	return n
}

func verifyShapeCast(op *ir.Operation) error {
	src, res := vectorType(op.OperandNamed("source")), vectorType(op.ResultNamed("result"))
	if src.Elem != res.Elem {
		return op.EmitOpError("has different source and result element types")
	}
	if a, b := NumElements(src), NumElements(res); a != b {
		return op.EmitOpError("has different number of elements at source (%d) and result (%d)", a, b)
	}
	if a, b := numScalable(src), numScalable(res); a != b {
		return op.EmitOpError("has different number of scalable dims at source (%d) and result (%d)", a, b)
	}
	return nil
}

func verifyBitcast(op *ir.Operation) error {
	src, res := vectorType(op.OperandNamed("source")), vectorType(op.ResultNamed("result"))
	rank := len(src.Shape())
	if rank != len(res.Shape()) {
		return op.EmitOpError("failed to verify that all of {source, result} have same rank")
	}
	for i := 0; i < rank-1; i++ {
		if src.Shape()[i] != res.Shape()[i] {
			return op.EmitOpError("dimension size mismatch at: %d", i)
		}
	}
	sb, rb := int64(ir.BitWidth(src.Elem)), int64(ir.BitWidth(res.Elem))
	if rank == 0 {
		if sb != rb {
			return op.EmitOpError("source/result bitwidth of the 0-D vector element types must be equal")
		}
	} else if sb*src.Shape()[rank-1] != rb*res.Shape()[rank-1] {
		return op.EmitOpError("source/result bitwidth of the minor 1-D vectors must be equal")
	}
	return nil
}

func verifyTranspose(op *ir.Operation) error {
	src, res := vectorType(op.OperandNamed("vector")), vectorType(op.ResultNamed("result"))
	if err := sameElemType(op, src, res, "operand and result"); err != nil {
		return err
	}
	rank := len(res.Shape())
	if len(src.Shape()) != rank {
		return op.EmitOpError("vector result rank mismatch: %d", rank)
	}
	perm := Ints(op.Attr("permutation"))
	if len(perm) != rank {
		return op.EmitOpError("transposition length mismatch: %d", len(perm))
	}
	seen := make([]bool, rank)
	for i, p := range perm {
		if p < 0 || p >= int64(rank) {
			return op.EmitOpError("transposition index out of range: %d", p)
		}
		if seen[p] {
			return op.EmitOpError("duplicate position index: %d", p)
		}
		seen[p] = true
		if res.Shape()[i] != src.Shape()[p] {
			return op.EmitOpError("dimension size mismatch at: %d", p)
		}
	}
	return nil
}

// confined checks each value of vals (named name) lies in [lo, bound(i)).
func confined(op *ir.Operation, vals []int64, name string, lo int64, bound func(i int) int64) error {
	for i, v := range vals {
		if hi := bound(i); v < lo || v >= hi {
			return op.EmitOpError("expected %s dimension %d to be confined to [%d, %d)", name, i, lo, hi)
		}
	}
	return nil
}

func unitStrides(op *ir.Operation, strides []int64) error {
	for _, s := range strides {
		if s != 1 {
			return op.EmitOpError("expected strides to be confined to [1, 2)")
		}
	}
	return nil
}

// StridedSliceType is the result type of extracting sizes at offsets from
// src: the leading dims take the sizes, the others stay.
func StridedSliceType(src *ir.VectorType, sizes []int64) *ir.VectorType {
	shape := append(slices.Clone(sizes), src.Shape()[len(sizes):]...)
	return ir.ScalableVectorTypeOf(shape, src.Scalable, src.Elem)
}

func verifyExtractStridedSlice(op *ir.Operation) error {
	src := vectorType(op.OperandNamed("vector"))
	if err := sameElemType(op, src, op.ResultNamed("result").Type(), "operand and result"); err != nil {
		return err
	}
	offsets, sizes, strides := Ints(op.Attr("offsets")), Ints(op.Attr("sizes")), Ints(op.Attr("strides"))
	if len(offsets) != len(sizes) || len(offsets) != len(strides) {
		return op.EmitOpError("expected offsets, sizes and strides attributes of same size")
	}
	shape := src.Shape()
	for _, l := range []struct {
		name string
		vals []int64
	}{{"offsets", offsets}, {"sizes", sizes}, {"strides", strides}} {
		if len(l.vals) > len(shape) {
			return op.EmitOpError("expected %s attribute of rank no greater than vector rank", l.name)
		}
	}
	if err := confined(op, offsets, "offsets", 0, func(i int) int64 { return shape[i] }); err != nil {
		return err
	}
	if err := confined(op, sizes, "sizes", 1, func(i int) int64 { return shape[i] + 1 }); err != nil {
		return err
	}
	if err := unitStrides(op, strides); err != nil {
		return err
	}
	for i := range offsets {
		if s := offsets[i] + sizes[i]; s < 0 || s > shape[i] {
			return op.EmitOpError("expected sum(offsets, sizes) dimension %d to be confined to [1, %d)", i, shape[i]+1)
		}
	}
	if want := StridedSliceType(src, sizes); op.ResultNamed("result").Type() != want {
		return op.EmitOpError("expected result type to be '%s'", want)
	}
	for i, s := range sizes {
		if scalableAt(src, i) && s != shape[i] {
			return op.EmitOpError("expected size at idx=%d to match the corresponding base size from the input vector (%d vs %d)", i, s, shape[i])
		}
	}
	return nil
}

func verifyInsertStridedSlice(op *ir.Operation) error {
	src, dst := vectorType(op.OperandNamed("valueToStore")), vectorType(op.OperandNamed("dest"))
	if err := sameElemType(op, src, op.ResultNamed("res").Type(), "operand #0 and result"); err != nil {
		return err
	}
	if dst != op.ResultNamed("res").Type() {
		return op.EmitOpError("failed to verify that all of {dest, res} have same type")
	}
	offsets, strides := Ints(op.Attr("offsets")), Ints(op.Attr("strides"))
	ss, ds := src.Shape(), dst.Shape()
	if len(offsets) != len(ds) {
		return op.EmitOpError("expected offsets of same size as destination vector rank")
	}
	if len(strides) != len(ss) {
		return op.EmitOpError("expected strides of same size as source vector rank")
	}
	if len(ss) > len(ds) {
		return op.EmitOpError("expected source rank to be no greater than destination rank")
	}
	lead := len(ds) - len(ss)
	if err := confined(op, offsets, "offsets", 0, func(i int) int64 { return ds[i] }); err != nil {
		return err
	}
	if err := unitStrides(op, strides); err != nil {
		return err
	}
	for i, o := range offsets {
		var size int64
		if i >= lead {
			size = ss[i-lead]
		}
		if s := o + size; s < 0 || s > ds[i] {
			return op.EmitOpError("expected sum(offsets, source vector shape) dimension %d to be confined to [1, %d)", i, ds[i]+1)
		}
	}
	for i := range ss {
		if scalableAt(src, i) != scalableAt(dst, i+lead) {
			return op.EmitOpError("mismatching scalable flags (at source vector idx=%d)", i)
		}
		if scalableAt(src, i) && ss[i] != ds[i+lead] {
			return op.EmitOpError("expected size at idx=%d to match the corresponding base size from the input vector (%d vs %d)", i, ss[i], ds[i+lead])
		}
	}
	return nil
}

// ShuffleType is the result type of shuffling v1 and v2 with a mask of n
// entries: n leading elements, the operands' trailing dims.
func ShuffleType(v1 *ir.VectorType, n int) *ir.VectorType {
	shape := []int64{int64(n)}
	if len(v1.Shape()) > 0 {
		shape = append(shape, v1.Shape()[1:]...)
	}
	return ir.VectorTypeOf(shape, v1.Elem)
}

func verifyShuffle(op *ir.Operation) error {
	v1, v2, res := vectorType(op.OperandNamed("v1")), vectorType(op.OperandNamed("v2")), vectorType(op.Result(0))
	if err := sameElemType(op, v1, res, "first operand v1 and result"); err != nil {
		return err
	}
	if err := sameElemType(op, v2, res, "second operand v2 and result"); err != nil {
		return err
	}
	r, r1, r2 := len(res.Shape()), len(v1.Shape()), len(v2.Shape())
	if !(r1 == 0 && r2 == 0 && r == 1) && !(r1 == r && r2 == r) {
		return op.EmitOpError("rank mismatch")
	}
	for i := 1; i < r1; i++ {
		if res.Shape()[i] != v1.Shape()[i] || v1.Shape()[i] != v2.Shape()[i] {
			return op.EmitOpError("dimension mismatch")
		}
	}
	mask := Ints(op.Attr("mask"))
	if len(mask) == 0 {
		return op.EmitOpError("invalid mask length")
	}
	if int64(len(mask)) != res.Shape()[0] {
		return op.EmitOpError("mask length mismatch")
	}
	lead := func(t *ir.VectorType) int64 {
		if len(t.Shape()) == 0 {
			return 1
		}
		return t.Shape()[0]
	}
	for i, m := range mask {
		if !validPosition(m, lead(v1)+lead(v2), true) {
			return op.EmitOpError("mask index #%d out of range", i+1)
		}
	}
	if want := ShuffleType(v1, len(mask)); want != res {
		return inferMismatch(op, want, res)
	}
	return nil
}

// shuffle's custom form: `%a, %b [0, 3] : vector<2xf32>, vector<2xf32>`,
// the result type inferred.
func parseShuffle(p *ir.Parser, st *ir.OperationState) error {
	a, err := p.ParseOperand()
	if err != nil {
		return err
	}
	b, err := p.ParseOperandAfter(",")
	if err != nil {
		return err
	}
	mask, err := intListSyntax.Parse(p)
	if err != nil {
		return err
	}
	st.AddAttr("mask", mask)
	if err := p.ParseOptionalAttrDict(st); err != nil {
		return err
	}
	ts, err := p.ParseColonTypeList()
	if err != nil {
		return err
	}
	if err := p.ResolveOperands([]ir.UnresolvedOperand{a, b}, ts, st); err != nil {
		return err
	}
	v1, ok := ts[0].(*ir.VectorType)
	if !ok {
		return p.CustomOpErrorf("'v1' must be fixed-length vector of any type values, but got '%s'", ts[0])
	}
	st.ResultTypes = []ir.Type{ShuffleType(v1, len(Ints(mask)))}
	return nil
}

func printShuffle(p *ir.Printer, op *ir.Operation) {
	p.Write(" ")
	p.PrintOperands(op.Operands())
	p.Write(" " + intListSyntax.Print(op.Attr("mask")))
	p.PrintOptionalAttrDict(op.AllAttrs(), "mask")
	p.Write(" : ")
	p.PrintTypes([]ir.Type{op.OperandNamed("v1").Type(), op.OperandNamed("v2").Type()})
}

// InterleaveType is the result of interleaving two vectors of type t: the
// trailing dim doubled (vector<2xT> for 0-D operands).
func InterleaveType(t *ir.VectorType) *ir.VectorType {
	if len(t.Shape()) == 0 {
		return ir.VectorTypeOf([]int64{2}, t.Elem)
	}
	shape := slices.Clone(t.Shape())
	shape[len(shape)-1] *= 2
	return ir.ScalableVectorTypeOf(shape, t.Scalable, t.Elem)
}

func verifyInterleave(op *ir.Operation) error {
	if op.OperandNamed("lhs").Type() != op.OperandNamed("rhs").Type() {
		return op.EmitOpError("failed to verify that all of {lhs, rhs} have same type")
	}
	if InterleaveType(vectorType(op.OperandNamed("lhs"))) != op.ResultNamed("result").Type() {
		return op.EmitOpError("failed to verify that type of 'result' is double the width of the inputs")
	}
	return nil
}

func verifyDeinterleave(op *ir.Operation) error {
	src := vectorType(op.OperandNamed("source"))
	n := len(src.Shape())
	if src.Shape()[n-1]%2 != 0 {
		return op.EmitOpError("failed to verify that the trailing dimension of the source vector has an even number of elements")
	}
	r1 := vectorType(op.ResultNamed("res1"))
	if len(r1.Shape()) != n || InterleaveType(r1) != src {
		return op.EmitOpError("failed to verify that the trailing dimension of the results is half the width of source trailing dimension")
	}
	if op.ResultNamed("res1").Type() != op.ResultNamed("res2").Type() {
		return op.EmitOpError("failed to verify that all of {res1, res2} have same type")
	}
	return nil
}

// elementsOf is the list of a vector's element type, once per element
// (from_elements' operand types, to_elements' result types).
func elementsOf(t ir.Type) []ir.Type {
	v, ok := t.(*ir.VectorType)
	if !ok {
		return nil
	}
	ts := make([]ir.Type, NumElements(v))
	for i := range ts {
		ts[i] = v.Elem
	}
	return ts
}

func typesOf(vs []ir.Value) []ir.Type {
	ts := make([]ir.Type, len(vs))
	for i, v := range vs {
		ts[i] = v.Type()
	}
	return ts
}

func verifyElements(vec, elems string) func(op *ir.Operation) error {
	return func(op *ir.Operation) error {
		var v ir.Value
		var es []ir.Value
		if vec == "dest" {
			v, es = op.Result(0), op.Operands()
		} else {
			v, es = op.Operand(0), op.Results()
		}
		if !slices.Equal(elementsOf(v.Type()), typesOf(es)) {
			return op.EmitOpError("failed to verify that shaped type '%s' matches '%s' element count and types", vec, elems)
		}
		return nil
	}
}

// from_elements: `%a, %b : vector<2xf32>`, the operands of the element
// type, one per element.
func parseFromElements(p *ir.Parser, st *ir.OperationState) error {
	tok := p.Tok()
	us, err := p.ParseOperandList(ir.DelimNone)
	if err != nil {
		return err
	}
	if err := p.ParseOptionalAttrDict(st); err != nil {
		return err
	}
	t, err := p.ParseColonType()
	if err != nil {
		return err
	}
	if !fixedVector.KindOK(t) {
		return p.CustomOpErrorAt(tok, "invalid kind of type specified: expected builtin.vector, but found '%s'", t)
	}
	if !fixedVector.OK(t) {
		return p.CustomOpErrorAt(tok, "'dest' must be %s, but got '%s'", fixedVector.Desc, t)
	}
	ts := elementsOf(t)
	if len(us) != len(ts) {
		return p.CustomOpErrorAt(tok, "number of operands and types do not match: got %d operands and %d types", len(us), len(ts))
	}
	st.ResultTypes = []ir.Type{t}
	return p.ResolveOperands(us, ts, st)
}

func printFromElements(p *ir.Printer, op *ir.Operation) {
	if op.NumOperands() > 0 {
		p.Write(" ")
		p.PrintOperands(op.Operands())
	}
	p.PrintOptionalAttrDict(op.AllAttrs())
	p.Write(" : ")
	p.PrintType(op.Result(0).Type())
}

// to_elements: `%v : vector<2xf32>`, one result per element.
func parseToElements(p *ir.Parser, st *ir.OperationState) error {
	u, err := p.ParseOperand()
	if err != nil {
		return err
	}
	if err := p.ParseOptionalAttrDict(st); err != nil {
		return err
	}
	tok := p.Tok()
	t, err := p.ParseColonType()
	if err != nil {
		return err
	}
	if !fixedVector.KindOK(t) {
		return p.CustomOpErrorAt(tok, "invalid kind of type specified: expected builtin.vector, but found '%s'", t)
	}
	st.ResultTypes = elementsOf(t)
	return p.ResolveOperands([]ir.UnresolvedOperand{u}, []ir.Type{t}, st)
}

func printToElements(p *ir.Printer, op *ir.Operation) {
	p.Write(" ")
	p.PrintOperand(op.Operand(0))
	p.PrintOptionalAttrDict(op.AllAttrs())
	p.Write(" : ")
	p.PrintType(op.Operand(0).Type())
}

func verifyConstantMask(op *ir.Operation) error {
	res := vectorType(op.ResultNamed("result"))
	sizes := Ints(op.Attr("mask_dim_sizes"))
	if len(res.Shape()) == 0 {
		if len(sizes) != 1 {
			return op.EmitError("array attr must have length 1 for 0-D vectors")
		}
		if sizes[0] != 0 && sizes[0] != 1 {
			return op.EmitError("mask dim size must be either 0 or 1 for 0-D vectors")
		}
		return nil
	}
	if len(sizes) != len(res.Shape()) {
		return op.EmitOpError("must specify array attr of size equal vector result rank")
	}
	zeros := 0
	for i, s := range sizes {
		if s < 0 || s > res.Shape()[i] {
			return op.EmitOpError("array attr of size out of bounds of vector result dimension size")
		}
		if scalableAt(res, i) && s != 0 && s != res.Shape()[i] {
			return op.EmitOpError("only supports 'none set' or 'all set' scalable dimensions")
		}
		if s == 0 {
			zeros++
		}
	}
	if zeros > 0 && zeros < len(sizes) {
		return op.EmitOpError("expected all mask dim sizes to be zeros, as a result of conjunction with zero mask dim")
	}
	return nil
}

func verifyCreateMask(op *ir.Operation) error {
	res := vectorType(op.Result(0))
	if len(res.Shape()) == 0 {
		if op.NumOperands() != 1 {
			return op.EmitOpError("must specify exactly one operand for 0-D create_mask")
		}
	} else if op.NumOperands() != len(res.Shape()) {
		return op.EmitOpError("must specify an operand for each result vector dimension")
	}
	return nil
}

func verifyTypeCast(op *ir.Operation) error {
	src := op.OperandNamed("memref").Type().(*ir.MemRefType)
	res, ok := op.ResultNamed("result").Type().(*ir.MemRefType)
	if !ok {
		return nil
	}
	if src.Layout != nil {
		return op.EmitOpError("expects operand to be a memref with identity layout")
	}
	if res.Layout != nil {
		return op.EmitOpError("expects result to be a memref with identity layout")
	}
	if src.MemorySpace != res.MemorySpace {
		return op.EmitOpError("expects result in same memory space")
	}
	var shape []int64
	shape = append(shape, res.Shape()...)
	elem := res.Elem
	if v, ok := elem.(*ir.VectorType); ok {
		shape = append(shape, v.Shape()...)
		elem = v.Elem
	}
	if src.Elem != elem || !slices.Equal(src.Shape(), shape) {
		return op.EmitOpError("expects concatenated result and operand shapes to be equal: '%s'", res)
	}
	return nil
}

func verifyScalableInsert(op *ir.Operation) error {
	src, dst := vectorType(op.OperandNamed("valueToStore")), vectorType(op.OperandNamed("dest"))
	if src.Elem != dst.Elem {
		return op.EmitOpError("failed to verify that all of {valueToStore, dest} have same element type")
	}
	if dst != op.ResultNamed("res").Type() {
		return op.EmitOpError("failed to verify that all of {dest, res} have same type")
	}
	if pos, _ := ir.AttrInt(op.Attr("pos")); pos%NumElements(src) != 0 {
		return op.EmitOpError("failed to verify that position is a multiple of the source length.")
	}
	return nil
}

func verifyScalableExtract(op *ir.Operation) error {
	src, res := vectorType(op.OperandNamed("source")), vectorType(op.ResultNamed("res"))
	if src.Elem != res.Elem {
		return op.EmitOpError("failed to verify that all of {source, res} have same element type")
	}
	if pos, _ := ir.AttrInt(op.Attr("pos")); pos%NumElements(res) != 0 {
		return op.EmitOpError("failed to verify that position is a multiple of the result length.")
	}
	return nil
}

// rank1Vector is VectorOfRank<[1]> (scalable: ScalableVectorOfRank<[1]>).
func rank1Vector(scalable bool) ir.TypeConstraint {
	desc := "vector of any type values of ranks 1"
	if scalable {
		desc = " of ranks 1"
	}
	return ir.TypeConstraint{Desc: desc, OK: func(t ir.Type) bool {
		v, ok := t.(*ir.VectorType)
		return ok && len(v.Shape()) == 1 && (!scalable || numScalable(v) > 0)
	}, Kind: "builtin.vector", KindOK: isVector}
}

var (
	indexStepVector = ir.TypeConstraint{Desc: "vector of index values of ranks 1", OK: func(t ir.Type) bool {
		v, ok := t.(*ir.VectorType)
		return ok && len(v.Shape()) == 1 && ir.IsIndex(v.Elem)
	}, Kind: "builtin.vector", KindOK: isVector}
	staticMemRef = ir.TypeConstraint{Desc: "statically shaped memref of any type values", OK: func(t ir.Type) bool {
		m, ok := t.(*ir.MemRefType)
		return ok && ir.HasStaticShape(m.Shape())
	}, Kind: "builtin.memref", KindOK: func(t ir.Type) bool { _, ok := t.(*ir.MemRefType); return ok }}
)

func shapeOps() []*ir.OpDef {
	return []*ir.OpDef{
		{
			Name:    "vector.extract",
			Summary: "extracts an element or a sub-vector at a static or dynamic position",
			Traits:  ir.Pure,
			Operands: []ir.ArgSpec{
				{Name: "vector", Type: anyRankVector},
				{Name: "dynamic_position", Kind: ir.Variadic, Type: indexVariadic},
			},
			Results: []ir.ArgSpec{{Name: "result", Type: ir.AnyType}},
			Attrs:   []ir.AttrSpec{{Name: "static_position", Constraint: ir.DenseI64ArrayC}},
			Format:  "$vector `` custom<DynamicIndexList>($dynamic_position, $static_position) attr-dict `:` type($result) `from` type($vector)",
			Verify:  verifyExtract,
		},
		{
			Name:    "vector.insert",
			Summary: "inserts an element or a sub-vector at a static or dynamic position",
			Traits:  ir.Pure,
			Operands: []ir.ArgSpec{
				{Name: "valueToStore", Type: ir.AnyType},
				{Name: "dest", Type: anyRankVector},
				{Name: "dynamic_position", Kind: ir.Variadic, Type: indexVariadic},
			},
			Results:   []ir.ArgSpec{{Name: "result", Type: anyRankVector}},
			Attrs:     []ir.AttrSpec{{Name: "static_position", Constraint: ir.DenseI64ArrayC}},
			TypeRules: []ir.TypeRule{{Target: "result", From: "dest"}},
			Format:    "$valueToStore `,` $dest custom<DynamicIndexList>($dynamic_position, $static_position) attr-dict `:` type($valueToStore) `into` type($dest)",
			Verify:    verifyInsert,
		},
		{
			Name:     "vector.shape_cast",
			Summary:  "reshapes a vector keeping its elements in row-major order",
			Traits:   ir.Pure,
			Operands: []ir.ArgSpec{{Name: "source", Type: anyRankVector}},
			Results:  []ir.ArgSpec{{Name: "result", Type: anyRankVector}},
			Format:   "$source attr-dict `:` type($source) `to` type($result)",
			Verify:   verifyShapeCast,
		},
		{
			Name:     "vector.bitcast",
			Summary:  "reinterprets the bits of the innermost dimension with another element type",
			Traits:   ir.Pure,
			Operands: []ir.ArgSpec{{Name: "source", Type: anyRankVector}},
			Results:  []ir.ArgSpec{{Name: "result", Type: anyRankVector}},
			Format:   "$source attr-dict `:` type($source) `to` type($result)",
			Verify:   verifyBitcast,
		},
		{
			Name:     "vector.transpose",
			Summary:  "permutes the dimensions of a vector",
			Traits:   ir.Pure,
			Operands: []ir.ArgSpec{{Name: "vector", Type: anyRankVector}},
			Results:  []ir.ArgSpec{{Name: "result", Type: anyRankVector}},
			Attrs:    []ir.AttrSpec{{Name: "permutation", Constraint: ir.DenseI64ArrayC, Syntax: intListSyntax}},
			Format:   "$vector `,` $permutation attr-dict `:` type($vector) `to` type($result)",
			Verify:   verifyTranspose,
		},
		{
			Name:     "vector.extract_strided_slice",
			Summary:  "extracts a sub-vector at static offsets (unit strides)",
			Traits:   ir.Pure,
			Operands: []ir.ArgSpec{{Name: "vector", Type: nonZeroRankVector}},
			Results:  []ir.ArgSpec{{Name: "result", Type: nonZeroRankVector}},
			Attrs: []ir.AttrSpec{
				{Name: "offsets", Constraint: i64ArrayC},
				{Name: "sizes", Constraint: i64ArrayC},
				{Name: "strides", Constraint: i64ArrayC},
			},
			Format: "$vector attr-dict `:` type($vector) `to` type(results)",
			Verify: verifyExtractStridedSlice,
		},
		{
			Name:    "vector.insert_strided_slice",
			Summary: "inserts a sub-vector at static offsets (unit strides)",
			Traits:  ir.Pure,
			Operands: []ir.ArgSpec{
				{Name: "valueToStore", Type: nonZeroRankVector},
				{Name: "dest", Type: nonZeroRankVector},
			},
			Results: []ir.ArgSpec{{Name: "res", Type: nonZeroRankVector}},
			Attrs: []ir.AttrSpec{
				{Name: "offsets", Constraint: i64ArrayC},
				{Name: "strides", Constraint: i64ArrayC},
			},
			TypeRules: []ir.TypeRule{{Target: "res", From: "dest"}},
			Format:    "$valueToStore `,` $dest attr-dict `:` type($valueToStore) `into` type($dest)",
			Verify:    verifyInsertStridedSlice,
		},
		{
			Name:    "vector.shuffle",
			Summary: "selects elements of two vectors along the leading dimension",
			Traits:  ir.Pure,
			Operands: []ir.ArgSpec{
				{Name: "v1", Type: fixedVector},
				{Name: "v2", Type: fixedVector},
			},
			Results: []ir.ArgSpec{{Name: "vector", Type: nonZeroRankVector}},
			Attrs:   []ir.AttrSpec{{Name: "mask", Constraint: ir.DenseI64ArrayC, Syntax: intListSyntax}},
			Parse:   parseShuffle,
			Print:   printShuffle,
			Verify:  verifyShuffle,
		},
		{
			Name:      "vector.interleave",
			Summary:   "interleaves the elements of two vectors along the trailing dimension",
			Traits:    ir.Pure,
			Operands:  []ir.ArgSpec{{Name: "lhs", Type: anyRankVector}, {Name: "rhs", Type: anyRankVector}},
			Results:   []ir.ArgSpec{{Name: "result", Type: nonZeroRankVector}},
			TypeRules: []ir.TypeRule{{Target: "rhs", From: "lhs"}},
			Format:    "$lhs `,` $rhs attr-dict `:` type($lhs) `->` type($result)",
			Verify:    verifyInterleave,
		},
		{
			Name:        "vector.deinterleave",
			Summary:     "splits the even and odd elements of the trailing dimension",
			Traits:      ir.Pure,
			Operands:    []ir.ArgSpec{{Name: "source", Type: nonZeroRankVector}},
			Results:     []ir.ArgSpec{{Name: "res1", Type: nonZeroRankVector}, {Name: "res2", Type: nonZeroRankVector}},
			TypeRules:   []ir.TypeRule{{Target: "res2", From: "res1"}},
			Format:      "$source attr-dict `:` type($source) `->` type($res1)",
			Verify:      verifyDeinterleave,
			ResultNames: ir.NameResults("res1", "res2"),
		},
		{
			Name:     "vector.from_elements",
			Summary:  "builds a vector from its elements in row-major order",
			Traits:   ir.Pure,
			Operands: []ir.ArgSpec{{Name: "elements", Kind: ir.Variadic, Type: ir.AnyType}},
			Results:  []ir.ArgSpec{{Name: "dest", Type: fixedVector}},
			Parse:    parseFromElements,
			Print:    printFromElements,
			Verify:   verifyElements("dest", "elements"),
		},
		{
			Name:     "vector.to_elements",
			Summary:  "returns the elements of a vector in row-major order",
			Traits:   ir.Pure,
			Operands: []ir.ArgSpec{{Name: "source", Type: fixedVector}},
			Results:  []ir.ArgSpec{{Name: "elements", Kind: ir.Variadic, Type: ir.AnyType}},
			Parse:    parseToElements,
			Print:    printToElements,
			Verify:   verifyElements("source", "elements"),
		},
		{
			Name:    "vector.step",
			Summary: "the vector [0, 1, ..., N-1] of index values",
			Traits:  ir.Pure,
			Results: []ir.ArgSpec{{Name: "result", Type: indexStepVector}},
			Format:  "attr-dict `:` type($result)",
		},
		{
			Name:    "vector.constant_mask",
			Summary: "a mask set in a leading hyper-rectangle of static sizes",
			Traits:  ir.Pure,
			Results: []ir.ArgSpec{{Name: "result", Type: i1VectorAny}},
			Attrs:   []ir.AttrSpec{{Name: "mask_dim_sizes", Constraint: ir.DenseI64ArrayC, Syntax: intListSyntax}},
			Format:  "$mask_dim_sizes attr-dict `:` type(results)",
			Verify:  verifyConstantMask,
		},
		{
			Name:     "vector.create_mask",
			Summary:  "a mask set in a leading hyper-rectangle of dynamic sizes",
			Traits:   ir.Pure,
			Operands: []ir.ArgSpec{{Name: "operands", Kind: ir.Variadic, Type: indexVariadic}},
			Results:  []ir.ArgSpec{{Name: "result", Type: i1VectorAny}},
			Format:   "$operands attr-dict `:` type(results)",
			Verify:   verifyCreateMask,
		},
		{
			Name:    "vector.scalable.insert",
			Summary: "inserts a sub-vector into a scalable vector",
			Traits:  ir.Pure,
			Operands: []ir.ArgSpec{
				{Name: "valueToStore", Type: rank1Vector(false)},
				{Name: "dest", Type: rank1Vector(true)},
			},
			Results:   []ir.ArgSpec{{Name: "res", Type: rank1Vector(true)}},
			Attrs:     []ir.AttrSpec{{Name: "pos", Constraint: ir.I64AttrC, Syntax: i64Syntax}},
			TypeRules: []ir.TypeRule{{Target: "res", From: "dest"}},
			Format:    "$valueToStore `,` $dest `[` $pos `]` attr-dict `:` type($valueToStore) `into` type($dest)",
			Verify:    verifyScalableInsert,
		},
		{
			Name:     "vector.scalable.extract",
			Summary:  "extracts a sub-vector from a scalable vector",
			Traits:   ir.Pure,
			Operands: []ir.ArgSpec{{Name: "source", Type: rank1Vector(true)}},
			Results:  []ir.ArgSpec{{Name: "res", Type: rank1Vector(false)}},
			Attrs:    []ir.AttrSpec{{Name: "pos", Constraint: ir.I64AttrC, Syntax: i64Syntax}},
			Format:   "$source `[` $pos `]` attr-dict `:` type($res) `from` type($source)",
			Verify:   verifyScalableExtract,
		},
		{
			Name:     "vector.type_cast",
			Summary:  "views a statically shaped memref as a memref of one vector",
			Traits:   ir.Pure,
			Operands: []ir.ArgSpec{{Name: "memref", Type: staticMemRef}},
			Results:  []ir.ArgSpec{{Name: "result", Type: ir.AnyMemRef}},
			Format:   "$memref attr-dict `:` type($memref) `to` type($result)",
			Verify:   verifyTypeCast,
		},
		{
			Name:        "vector.vscale",
			Summary:     "the scale of scalable vectors (not on NVIDIA GPUs)",
			Traits:      ir.Pure,
			Results:     []ir.ArgSpec{{Name: "res", Type: ir.IndexOnly}},
			Format:      "attr-dict",
			ResultNames: ir.NameResults("vscale"),
		},
	}
}
