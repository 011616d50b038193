package vector

import (
	"slices"

	"github.com/tmac-dev/tmac/dialects/arith"
	"github.com/tmac-dev/tmac/dialects/math"
	"github.com/tmac-dev/tmac/dialects/memref"
	"github.com/tmac-dev/tmac/ir"
)

// The ops that compute: fma, reduction, multi_reduction, scan,
// outerproduct, contract, and the mask region with its yield.

// KindOf is the combining kind of a reduction, scan, outer product or
// contraction (add where a defaulted kind is absent).
func KindOf(op *ir.Operation) string {
	if k := CombiningKind.Value(op.Attr("kind")); k != "" {
		return k
	}
	return "add"
}

// KindSupports reports whether the combining kind k applies to elements of
// type t: add and mul to integers, index and floats, the integer min/max
// and bitwise kinds to integers and index, the float min/max kinds to
// floats.
func KindSupports(k string, t ir.Type) bool {
	isInt := ir.IsInteger(t) || ir.IsIndex(t)
	switch k {
	case "add", "mul":
		return isInt || ir.IsFloat(t)
	case "minui", "minsi", "maxui", "maxsi", "and", "or", "xor":
		return isInt
	case "minnumf", "maxnumf", "minimumf", "maximumf":
		return ir.IsFloat(t)
	}
	return false
}

func verifyReduction(op *ir.Operation) error {
	src := vectorType(op.OperandNamed("vector"))
	dest := op.Result(0).Type()
	if err := sameElemType(op, src, dest, "source operand and result"); err != nil {
		return err
	}
	if acc := op.OperandNamed("acc"); acc != nil && acc.Type() != dest {
		return op.EmitOpError("failed to verify that dest and acc have the same type")
	}
	if r := len(src.Shape()); r > 1 {
		return op.EmitOpError("unsupported reduction rank: %d", r)
	}
	if k := KindOf(op); !KindSupports(k, dest) {
		return op.EmitOpError("unsupported reduction type ''%s'' for kind '%s'", dest, k)
	}
	return nil
}

// ReducedType is the type of reducing the dims of src marked in dims: the
// remaining dims, or the element type when none remain.
func ReducedType(src *ir.VectorType, dims []int64) ir.Type {
	var shape []int64
	var sc []bool
	for i, d := range src.Shape() {
		if !slices.Contains(dims, int64(i)) {
			shape = append(shape, d)
			sc = append(sc, scalableAt(src, i))
		}
	}
	if len(shape) == 0 {
		return src.Elem
	}
	return ir.ScalableVectorTypeOf(shape, sc, src.Elem)
}

func verifyMultiReduction(op *ir.Operation) error {
	src := vectorType(op.OperandNamed("source"))
	if op.Result(0).Type() != op.OperandNamed("acc").Type() {
		return op.EmitOpError("failed to verify that all of {dest, acc} have same type")
	}
	if err := sameElemType(op, src, op.Result(0).Type(), "source operand and result"); err != nil {
		return err
	}
	if want := ReducedType(src, Ints(op.Attr("reduction_dims"))); want != op.Result(0).Type() {
		return op.EmitOpError("destination type '%s' is incompatible with source type '%s'", op.Result(0).Type(), src)
	}
	return nil
}

func verifyScan(op *ir.Operation) error {
	src, init := vectorType(op.OperandNamed("source")), vectorType(op.OperandNamed("initial_value"))
	rank := int64(len(src.Shape()))
	dim, _ := ir.AttrInt(op.Attr("reduction_dim"))
	if dim >= rank {
		return op.EmitOpError("reduction dimension %d has to be less than %d", dim, rank)
	}
	if r := int64(len(init.Shape())); r != rank-1 {
		return op.EmitOpError("initial value rank %d has to be equal to %d", r, rank-1)
	}
	var want []int64
	for i, d := range src.Shape() {
		if int64(i) != dim {
			want = append(want, d)
		}
	}
	if !slices.Equal(want, init.Shape()) {
		return op.EmitOpError("incompatible input/initial value shapes")
	}
	if k := KindOf(op); !KindSupports(k, src.Elem) {
		return op.EmitOpError("unsupported reduction type '%s' for kind '%s'", src.Elem, k)
	}
	return nil
}

// OuterProductType is the result type of an outer product of lhs and rhs
// (a vector: lhs x rhs; a scalar: lhs's shape).
func OuterProductType(lhs *ir.VectorType, rhs ir.Type) *ir.VectorType {
	if rv, ok := rhs.(*ir.VectorType); ok && len(rv.Shape()) > 0 && len(lhs.Shape()) > 0 {
		return ir.ScalableVectorTypeOf([]int64{lhs.Shape()[0], rv.Shape()[0]}, []bool{scalableAt(lhs, 0), scalableAt(rv, 0)}, lhs.Elem)
	}
	var n int64
	if len(lhs.Shape()) > 0 {
		n = lhs.Shape()[0]
	}
	return ir.ScalableVectorTypeOf([]int64{n}, []bool{scalableAt(lhs, 0)}, lhs.Elem)
}

func parseOuterProduct(p *ir.Parser, st *ir.OperationState) error {
	nameLoc := st.Loc
	us, err := p.ParseOperandList(ir.DelimNone)
	if err != nil {
		return err
	}
	if err := p.ParseOptionalAttrDict(st); err != nil {
		return err
	}
	lt, err := p.ParseColonType()
	if err != nil {
		return err
	}
	if err := p.ParsePunct(","); err != nil {
		return err
	}
	rt, err := p.ParseType()
	if err != nil {
		return err
	}
	if len(us) < 2 {
		return ir.Errorf(nameLoc, "custom op 'vector.outerproduct' expected at least 2 operands")
	}
	lv, ok := lt.(*ir.VectorType)
	if !ok {
		return ir.Errorf(nameLoc, "custom op 'vector.outerproduct' expected vector type for operand #1")
	}
	res := OuterProductType(lv, rt)
	if st.Attr("kind") == nil {
		st.AddAttr("kind", CombiningKind.Attr("add"))
	}
	ts := []ir.Type{lt, rt, res}
	if err := p.ResolveOperands(us, ts[:min(len(us), 3)], st); err != nil {
		return err
	}
	st.ResultTypes = []ir.Type{res}
	return nil
}

func printOuterProduct(p *ir.Printer, op *ir.Operation) {
	p.Write(" ")
	p.PrintOperands(op.Operands())
	var elided []string
	if op.NumOperands() < 3 {
		// Without an accumulator the kind does not matter.
		elided = append(elided, "kind")
	}
	p.PrintOptionalAttrDict(op.AllAttrs(), elided...)
	p.Write(" : ")
	p.PrintTypes([]ir.Type{op.Operand(0).Type(), op.Operand(1).Type()})
}

func verifyOuterProduct(op *ir.Operation) error {
	lhs, res := vectorType(op.OperandNamed("lhs")), vectorType(op.ResultNamed("result"))
	if err := sameElemType(op, lhs, res, "lhs operand and result"); err != nil {
		return err
	}
	if err := sameElemType(op, op.OperandNamed("rhs").Type(), res, "rhs operand and result"); err != nil {
		return err
	}
	if len(lhs.Shape()) != 1 {
		return op.EmitOpError("expected 1-d vector for operand #1")
	}
	if rhs, ok := op.OperandNamed("rhs").Type().(*ir.VectorType); ok {
		if len(rhs.Shape()) != 1 {
			return op.EmitOpError("expected 1-d vector for operand #2")
		}
		if len(res.Shape()) != 2 {
			return op.EmitOpError("expected 2-d vector result")
		}
		if lhs.Shape()[0] != res.Shape()[0] {
			return op.EmitOpError("expected #1 operand dim to match result dim #1")
		}
		if rhs.Shape()[0] != res.Shape()[1] {
			return op.EmitOpError("expected #2 operand dim to match result dim #2")
		}
		if numScalable(lhs) > 0 && numScalable(rhs) == 0 {
			return op.EmitOpError("expected either both or only #2 operand dim to be scalable")
		}
	} else {
		if len(res.Shape()) != 1 {
			return op.EmitOpError("expected 1-d vector result")
		}
		if lhs.Shape()[0] != res.Shape()[0] {
			return op.EmitOpError("expected #1 operand dim to match result dim #1")
		}
	}
	if acc := op.OperandNamed("acc"); acc != nil && acc.Type() != res {
		return op.EmitOpError("expected operand #3 of same type as result type")
	}
	if !KindSupports(KindOf(op), res.Elem) {
		return op.EmitOpError("unsupported outerproduct type")
	}
	return nil
}

// --- vector.contract ---------------------------------------------------------

var contractTraitAttrs = []string{"indexing_maps", "iterator_types", "kind"}

// contract's custom form: `{indexing_maps = [...], iterator_types =
// ["parallel", ...], kind = #vector.kind<add>} %lhs, %rhs, %acc attr-dict :
// lhs-type, rhs-type into acc-type`; the iterator types are written as
// strings and held as #vector.iterator_type attributes.
func parseContract(p *ir.Parser, st *ir.OperationState) error {
	dictTok := p.Tok()
	a, err := p.ParseAttribute(nil)
	if err != nil {
		return err
	}
	dict, ok := a.(*ir.DictAttr)
	if !ok {
		return p.Errorf("expected dictionary attribute")
	}
	var us []ir.UnresolvedOperand
	for i, sep := range []string{"", ",", ","} {
		var u ir.UnresolvedOperand
		if i == 0 {
			u, err = p.ParseOperand()
		} else {
			u, err = p.ParseOperandAfter(sep)
		}
		if err != nil {
			return err
		}
		us = append(us, u)
	}
	var masks []ir.UnresolvedOperand
	for p.ParseOptionalPunct(",") {
		u, err := p.ParseOperand()
		if err != nil {
			return err
		}
		masks = append(masks, u)
	}
	if err := p.ParseOptionalAttrDict(st); err != nil {
		return err
	}
	ts, err := p.ParseColonTypeList()
	if err != nil {
		return err
	}
	if err := p.ParseKeyword("into"); err != nil {
		return err
	}
	rt, err := p.ParseType()
	if err != nil {
		return err
	}
	if len(ts) != 2 {
		return p.Errorf("expected 2 operand types")
	}
	for _, e := range dict.Entries {
		st.AddAttr(e.Name, e.Value)
	}
	its, ok := st.Attr("iterator_types").(*ir.ArrayAttr)
	if !ok {
		return p.CustomOpErrorAt(dictTok, "expected \"iterator_types\" array attribute")
	}
	var iters []ir.Attribute
	for _, e := range its.Elems {
		s, _ := e.(*ir.StringAttr)
		if s == nil || !slices.Contains(IteratorType.values, s.Value) {
			return ir.Errorf(st.Loc, "unexpected iterator_type (%s)", ir.AttrWithoutType(e))
		}
		iters = append(iters, IteratorType.Attr(s.Value))
	}
	st.AddAttr("iterator_types", ir.Array(iters...))
	if st.Attr("kind") == nil {
		st.AddAttr("kind", CombiningKind.Attr("add"))
	}
	if len(masks) != 0 {
		return ir.Errorf(st.Loc, "expected zero or exactly 2 vector mask operands")
	}
	st.ResultTypes = []ir.Type{rt}
	return p.ResolveOperands(us, []ir.Type{ts[0], ts[1], rt}, st)
}

func printContract(p *ir.Printer, op *ir.Operation) {
	var trait []ir.NamedAttr
	for _, n := range contractTraitAttrs {
		a := op.Attr(n)
		if a == nil {
			continue
		}
		if arr, ok := a.(*ir.ArrayAttr); ok && n == "iterator_types" {
			var names []ir.Attribute
			for _, e := range arr.Elems {
				names = append(names, ir.Str(IteratorType.Value(e)))
			}
			a = ir.Array(names...)
		}
		trait = append(trait, ir.NamedAttr{Name: n, Value: a})
	}
	p.Write(" ")
	p.PrintAttribute(ir.Dict(trait))
	p.Write(" ")
	p.PrintOperands(op.Operands())
	p.PrintOptionalAttrDict(op.AllAttrs(), contractTraitAttrs...)
	p.Write(" : ")
	p.PrintTypes([]ir.Type{op.Operand(0).Type(), op.Operand(1).Type()})
	p.Write(" into ")
	p.PrintType(op.Result(0).Type())
}

// resultIndex is the position of dim d among m's results, or -1.
func resultIndex(m *memref.AffineMap, d int) int {
	for i, r := range m.Results {
		if r.IsDim == d {
			return i
		}
	}
	return -1
}

func verifyContract(op *ir.Operation) error {
	lhs, rhs := vectorType(op.OperandNamed("lhs")), vectorType(op.OperandNamed("rhs"))
	accT, resT := op.OperandNamed("acc").Type(), op.ResultNamed("result").Type()
	if lhs.Elem != rhs.Elem {
		return op.EmitOpError("failed to verify that lhs and rhs have same element type")
	}
	if ir.ElementTypeOrSelf(accT) != ir.ElementTypeOrSelf(resT) {
		return op.EmitOpError("failed to verify that third operand acc and result have same element type")
	}
	if ir.IsInteger(lhs.Elem) && !ir.IsSignlessInteger(lhs.Elem) {
		return op.EmitOpError("only supports signless integer types")
	}
	mapsAttr, _ := op.Attr("indexing_maps").(*ir.ArrayAttr)
	if mapsAttr == nil || len(mapsAttr.Elems) != 3 {
		return op.EmitOpError("expected an indexing map for each vector operand")
	}
	iters, _ := op.Attr("iterator_types").(*ir.ArrayAttr)
	numIters := len(iters.Elems)
	maps := make([]*memref.AffineMap, 3)
	for i, a := range mapsAttr.Elems {
		m, err := memref.ParseAffineMap(a.String())
		if err != nil {
			return op.EmitOpError("expected indexing map %d to be an affine map", i)
		}
		maps[i] = m
		if m.NumSymbols != 0 {
			return op.EmitOpError("expected indexing map %d to have no symbols", i)
		}
		rank := 0
		if v := vectorType(op.Operand(i)); v != nil {
			rank = len(v.Shape())
		}
		if m.NumDims != numIters {
			return op.EmitOpError("expected indexing map %d to have %d number of inputs", i, numIters)
		}
		if len(m.Results) != rank {
			return op.EmitOpError("expected indexing map %d to have %d number of outputs", i, rank)
		}
		seen := map[int]bool{}
		for _, r := range m.Results {
			if r.IsDim < 0 || seen[r.IsDim] {
				return op.EmitOpError("expected indexing map %d to be a projected permutation of its inputs", i)
			}
			seen[r.IsDim] = true
		}
	}
	dimMap := func(kind string) [][2]int {
		var out [][2]int
		for i, it := range iters.Elems {
			if IteratorType.Value(it) != kind {
				continue
			}
			l, r := resultIndex(maps[0], i), resultIndex(maps[1], i)
			if l >= 0 && r >= 0 {
				out = append(out, [2]int{l, r})
			}
		}
		return out
	}
	contracting, batch := dimMap("reduction"), dimMap("parallel")
	if len(contracting) == 0 {
		return op.EmitOpError("expected at least one contracting dimension pair")
	}
	validPairs := func(pairs [][2]int) bool {
		for _, pr := range pairs {
			if pr[0] >= len(lhs.Shape()) || pr[1] >= len(rhs.Shape()) || lhs.Shape()[pr[0]] != rhs.Shape()[pr[1]] {
				return false
			}
		}
		return true
	}
	if !validPairs(contracting) {
		return op.EmitOpError("invalid contracting dimension map")
	}
	if !validPairs(batch) {
		return op.EmitOpError("invalid batch dimension map")
	}
	if err := verifyContractShape(op, lhs, rhs, accT, resT, maps, contracting, batch); err != nil {
		return err
	}
	if !KindSupports(KindOf(op), ir.ElementTypeOrSelf(resT)) {
		return op.EmitOpError("unsupported contraction type")
	}
	return nil
}

func verifyContractShape(op *ir.Operation, lhs, rhs *ir.VectorType, accT, resT ir.Type, maps []*memref.AffineMap, contracting, batch [][2]int) error {
	lc, rc, rb := map[int]bool{}, map[int]bool{}, map[int]bool{}
	for _, pr := range contracting {
		lc[pr[0]], rc[pr[1]] = true, true
	}
	for _, pr := range batch {
		rb[pr[1]] = true
	}
	n := 0
	for i := range lhs.Shape() {
		if !lc[i] {
			n++
		}
	}
	for i := range rhs.Shape() {
		if !rc[i] && !rb[i] {
			n++
		}
	}
	resV, resIsVec := resT.(*ir.VectorType)
	accV, accIsVec := accT.(*ir.VectorType)
	if n == 0 {
		if resIsVec || accIsVec {
			return op.EmitOpError("invalid accumulator/result vector shape")
		}
		return nil
	}
	if !resIsVec || !accIsVec {
		return op.EmitOpError("invalid accumulator/result vector shape")
	}
	extents := make([]int64, maps[0].NumDims)
	known := make([]bool, maps[0].NumDims)
	for k, v := range []*ir.VectorType{lhs, rhs} {
		for i, r := range maps[k].Results {
			if !known[r.IsDim] {
				extents[r.IsDim], known[r.IsDim] = v.Shape()[i], true
			}
		}
	}
	for _, ok := range known {
		if !ok {
			return op.EmitOpError("expected all dimensions to be either a LHS or a RHS dimension")
		}
	}
	shape := make([]int64, len(maps[2].Results))
	for i, r := range maps[2].Results {
		shape[i] = extents[r.IsDim]
	}
	want := ir.ScalableVectorTypeOf(shape, resV.Scalable, resV.Elem)
	if resV != want || accV != want {
		return op.EmitOpError("invalid accumulator/result vector shape, expected: '%s'", want)
	}
	return nil
}

// --- vector.mask -----------------------------------------------------------

// MaskableOps are the ops vector.mask may hold, with the mask type each
// expects.
var maskTypes = map[string]func(op *ir.Operation) ir.Type{
	"vector.reduction": func(op *ir.Operation) ir.Type {
		return i1Of(vectorType(op.Operand(0)))
	},
	"vector.multi_reduction": func(op *ir.Operation) ir.Type {
		return i1Of(vectorType(op.Operand(0)))
	},
	"vector.transfer_read": func(op *ir.Operation) ir.Type {
		return transferMaskType(op, vectorType(op.Result(0)))
	},
	"vector.transfer_write": func(op *ir.Operation) ir.Type {
		return transferMaskType(op, vectorType(op.Operand(0)))
	},
	"vector.outerproduct": func(op *ir.Operation) ir.Type {
		return i1Of(vectorType(op.Result(0)))
	},
	"vector.contract": func(op *ir.Operation) ir.Type { return nil },
	"vector.gather":   func(op *ir.Operation) ir.Type { return i1Of(vectorType(op.Result(0))) },
	"vector.scatter": func(op *ir.Operation) ir.Type {
		return i1Of(vectorType(op.Operand(op.NumOperands() - 1)))
	},
}

func i1Of(t *ir.VectorType) ir.Type {
	return ir.ScalableVectorTypeOf(t.Shape(), t.Scalable, ir.I1)
}

// mask's custom form: `%mask(, %passthru)? { op } attr-dict : mask-type
// (-> result-types)?`; the region's vector.yield of the op's results is
// implicit.
func parseMask(p *ir.Parser, st *ir.OperationState) error {
	mask, err := p.ParseOperand()
	if err != nil {
		return err
	}
	var passthru *ir.UnresolvedOperand
	if p.ParseOptionalPunct(",") {
		u, err := p.ParseOperand()
		if err != nil {
			return err
		}
		passthru = &u
	}
	r := st.AddRegion()
	if err := p.ParseRegion(r, nil); err != nil {
		return err
	}
	ensureYield(r, st.Loc)
	if err := p.ParseOptionalAttrDict(st); err != nil {
		return err
	}
	mt, err := p.ParseColonType()
	if err != nil {
		return err
	}
	if st.ResultTypes, err = p.ParseOptionalArrowTypeList(); err != nil {
		return err
	}
	if err := p.ResolveOperands([]ir.UnresolvedOperand{mask}, []ir.Type{mt}, st); err != nil {
		return err
	}
	if passthru != nil {
		if len(st.ResultTypes) == 0 {
			return ir.Errorf(st.Loc, "custom op 'vector.mask' expects a result if passthru operand is provided")
		}
		return p.ResolveOperands([]ir.UnresolvedOperand{*passthru}, st.ResultTypes[:1], st)
	}
	return nil
}

// ensureYield ends the mask region with a vector.yield of the masked op's
// results when the text left it out.
func ensureYield(r *ir.Region, loc ir.Location) {
	if r.Empty() {
		r.AddBlock(ir.NewBlock(nil, nil))
	}
	b := r.Entry()
	last := b.Last()
	if last != nil && last.Name() == "vector.yield" {
		return
	}
	var vals []ir.Value
	if last != nil {
		vals = last.Results()
	}
	b.Append(ir.NewOperation(&ir.OperationState{Name: "vector.yield", Loc: loc, Operands: vals}))
}

func printMask(p *ir.Printer, op *ir.Operation) {
	p.Write(" ")
	p.PrintOperands(op.Operands())
	p.Write(" { ")
	if r := op.Region(0); !r.Empty() && !r.Entry().Empty() {
		p.PrintOpWithoutResults(r.Entry().First())
	}
	p.Write(" }")
	p.PrintOptionalAttrDict(op.AllAttrs())
	p.Write(" : ")
	p.PrintType(op.Operand(0).Type())
	if op.NumResults() > 0 {
		p.Write(" -> ")
		p.PrintTypes(typesOf(op.Results()))
	}
}

func verifyMask(op *ir.Operation) error {
	b := op.Region(0).Entry()
	ops := b.Ops()
	if len(ops) > 2 {
		return op.EmitOpError("expects only one operation to mask")
	}
	yield := b.Terminator()
	if yield.NumOperands() != op.NumResults() {
		return op.EmitOpError("expects number of results to match mask region yielded values")
	}
	if len(ops) == 1 {
		if op.NumOperands() > 1 {
			return op.EmitError("'vector.mask' expects a result if passthru operand is provided")
		}
		return nil
	}
	masked := ops[0]
	maskType, maskable := maskTypes[masked.Name()]
	if !maskable {
		return op.EmitOpError("expects a MaskableOpInterface within the mask region")
	}
	if masked.NumResults() != op.NumResults() {
		return op.EmitOpError("expects number of results to match maskable operation number of results")
	}
	if !slices.Equal(masked.Results(), yield.Operands()) {
		return op.EmitOpError("expects all the results from the MaskableOpInterface to match all the values returned by the terminator")
	}
	if !slices.Equal(typesOf(masked.Results()), typesOf(op.Results())) {
		return op.EmitOpError("expects result type to match maskable operation result type")
	}
	if want := maskType(masked); want != nil && want != op.Operand(0).Type() {
		return op.EmitOpError("expects a '%s' mask for the maskable operation", want)
	}
	if op.NumOperands() > 1 && op.Operand(1).Type() != op.Result(0).Type() {
		return op.EmitOpError("expects result type to match passthru type")
	}
	return nil
}

func computeOps() []*ir.OpDef {
	return []*ir.OpDef{
		{
			Name:    "vector.fma",
			Summary: "fused multiply-add, element by element",
			Traits:  ir.Pure,
			Operands: []ir.ArgSpec{
				{Name: "lhs", Type: floatVector}, {Name: "rhs", Type: floatVector}, {Name: "acc", Type: floatVector},
			},
			Results:   []ir.ArgSpec{{Name: "result", Type: floatVector}},
			TypeRules: []ir.TypeRule{{Target: "rhs", From: "lhs"}, {Target: "acc", From: "lhs"}, {Target: "result", From: "lhs"}},
			Format:    "$lhs `,` $rhs `,` $acc attr-dict `:` type($lhs)",
			Verify: func(op *ir.Operation) error {
				t := op.Operand(0).Type()
				if op.Operand(1).Type() != t || op.Operand(2).Type() != t || op.Result(0).Type() != t {
					return op.EmitOpError("failed to verify that all of {lhs, rhs, acc, result} have same type")
				}
				return nil
			},
			Semantics: math.FMA,
			Doc: `lhs·rhs+acc with one rounding, lane by lane (math.fma's semantics);
lowered to llvm.fma (PTX fma.rn).`,
		},
		{
			Name:    "vector.reduction",
			Summary: "reduces a 1-D vector to a scalar with a combining kind",
			Traits:  ir.Pure,
			Operands: []ir.ArgSpec{
				{Name: "vector", Type: anyRankVector},
				{Name: "acc", Kind: ir.Optional, Type: ir.AnyType},
			},
			Results: []ir.ArgSpec{{Name: "dest", Type: ir.AnyType}},
			Attrs: []ir.AttrSpec{
				{Name: "kind", Constraint: CombiningKind.constraint("Kind of combining function for contractions and reductions"), Syntax: CombiningKind.syntax("vector.reduction")},
				{Name: "fastmath", Constraint: arith.FastMathC, Default: arith.FastMathNone, Syntax: arith.FastMathSyntax("vector.reduction")},
			},
			TypeRules: []ir.TypeRule{{Target: "acc", From: "dest"}},
			Format:    "$kind `,` $vector (`,` $acc^)? (`fastmath` `` $fastmath^)? attr-dict `:` type($vector) `into` type($dest)",
			Verify:    verifyReduction,
			Doc: `Integer kinds wrap; add and mul of floats are computed in a tree
(pairs of neighbouring lanes, then pairs of those), not in lane order, so
the rounding may differ from a sequential sum; minnumf/maxnumf ignore NaN,
minimumf/maximumf propagate it. The accumulator, when given, is combined
last.`,
		},
		{
			Name:    "vector.multi_reduction",
			Summary: "reduces some dimensions of an n-D vector",
			Traits:  ir.Pure,
			Operands: []ir.ArgSpec{
				{Name: "source", Type: nonZeroRankVector},
				{Name: "acc", Type: ir.AnyType},
			},
			Results: []ir.ArgSpec{{Name: "dest", Type: ir.AnyType}},
			Attrs: []ir.AttrSpec{
				{Name: "kind", Constraint: CombiningKind.constraint("Kind of combining function for contractions and reductions"), Syntax: CombiningKind.syntax("vector.multi_reduction")},
				{Name: "reduction_dims", Constraint: ir.DenseI64ArrayC, Syntax: intListSyntax},
			},
			TypeRules: []ir.TypeRule{{Target: "acc", From: "dest"}},
			Format:    "$kind `,` $source `,` $acc attr-dict $reduction_dims `:` type($source) `to` type($dest)",
			Verify:    verifyMultiReduction,
		},
		{
			Name:    "vector.scan",
			Summary: "prefix reduction along one dimension",
			Traits:  ir.Pure,
			Operands: []ir.ArgSpec{
				{Name: "source", Type: nonZeroRankVector},
				{Name: "initial_value", Type: anyRankVector},
			},
			Results: []ir.ArgSpec{{Name: "dest", Type: nonZeroRankVector}, {Name: "accumulated_value", Type: anyRankVector}},
			Attrs: []ir.AttrSpec{
				{Name: "kind", Constraint: CombiningKind.constraint("Kind of combining function for contractions and reductions"), Syntax: CombiningKind.syntax("vector.scan")},
				{Name: "reduction_dim", Constraint: ir.I64AttrC},
				{Name: "inclusive", Constraint: ir.BoolAttrC},
			},
			TypeRules:   []ir.TypeRule{{Target: "dest", From: "source"}, {Target: "accumulated_value", From: "initial_value"}},
			Format:      "$kind `,` $source `,` $initial_value attr-dict `:` type($source) `,` type($initial_value)",
			Verify:      verifyScan,
			ResultNames: ir.NameResults("dest", "accumulated_value"),
		},
		{
			Name:    "vector.outerproduct",
			Summary: "outer product of two 1-D vectors (or a vector and a scalar) with an optional accumulator",
			Traits:  ir.Pure,
			Operands: []ir.ArgSpec{
				{Name: "lhs", Type: nonZeroRankVector},
				{Name: "rhs", Type: ir.AnyType},
				{Name: "acc", Kind: ir.Optional, Type: nonZeroRankVector},
			},
			Results: []ir.ArgSpec{{Name: "result", Type: nonZeroRankVector}},
			Attrs: []ir.AttrSpec{
				{Name: "kind", Constraint: CombiningKind.constraint("Kind of combining function for contractions and reductions"), Default: CombiningKind.Attr("add")},
			},
			Parse:  parseOuterProduct,
			Print:  printOuterProduct,
			Verify: verifyOuterProduct,
		},
		{
			Name:    "vector.contract",
			Summary: "generalised contraction of two vectors into an accumulator",
			Traits:  ir.Pure,
			Operands: []ir.ArgSpec{
				{Name: "lhs", Type: nonZeroRankVector},
				{Name: "rhs", Type: nonZeroRankVector},
				{Name: "acc", Type: ir.AnyType},
			},
			Results: []ir.ArgSpec{{Name: "result", Type: ir.AnyType}},
			Attrs: []ir.AttrSpec{
				{Name: "indexing_maps", Constraint: ir.ArrayAttrC},
				{Name: "iterator_types", Constraint: ir.AttrConstraint{Desc: "Iterator type should be an enum.", OK: func(a ir.Attribute) bool {
					arr, ok := a.(*ir.ArrayAttr)
					if !ok {
						return false
					}
					for _, e := range arr.Elems {
						if IteratorType.Value(e) == "" {
							return false
						}
					}
					return true
				}}},
				{Name: "kind", Constraint: CombiningKind.constraint("Kind of combining function for contractions and reductions"), Default: CombiningKind.Attr("add")},
			},
			Parse:  parseContract,
			Print:  printContract,
			Verify: verifyContract,
		},
		{
			Name:     "vector.mask",
			Summary:  "applies a mask to the one maskable op in its region",
			Traits:   ir.SingleBlock | ir.RecursiveSideEffects,
			Operands: []ir.ArgSpec{{Name: "mask", Type: i1Vector}, {Name: "passthru", Kind: ir.Optional, Type: ir.AnyType}},
			Results:  []ir.ArgSpec{{Name: "results", Kind: ir.Variadic, Type: ir.AnyType}},
			Regions:  []ir.RegionSpec{{Name: "maskRegion"}},
			Parse:    parseMask,
			Print:    printMask,
			Verify:   verifyMask,
		},
		{
			Name:     "vector.yield",
			Summary:  "terminates vector.mask, yielding the masked op's results",
			Traits:   ir.Pure | ir.Terminator | ir.ReturnLike,
			Operands: []ir.ArgSpec{{Name: "operands", Kind: ir.Variadic, Type: ir.AnyType}},
			Format:   "attr-dict ($operands^ `:` type($operands))?",
		},
	}
}
