package arith

import (
	"fmt"
	"slices"

	"github.com/tmac-dev/tmac/ir"
)

// Kinds of shaped containers, for the element-wise verifiers.
const (
	kScalar = iota
	kVector
	kTensor
	kMemRef
)

func shapeOf(t ir.Type) (elem ir.Type, shape []int64, kind int) {
	switch s := t.(type) {
	case *ir.VectorType:
		return s.Elem, s.Shape(), kVector
	case *ir.TensorType:
		return s.Elem, s.Shape(), kTensor
	case *ir.UnrankedTensorType:
		return s.Elem, nil, kTensor
	case *ir.MemRefType:
		return s.Elem, s.Shape(), kMemRef
	}
	return t, nil, kScalar
}

// like accepts scalars satisfying elemOK and vectors/tensors of them
// (and memrefs of them when memref is set).
func like(desc string, memref bool, elemOK func(ir.Type) bool) ir.TypeConstraint {
	return ir.TypeConstraint{Desc: desc, OK: func(t ir.Type) bool {
		elem, _, k := shapeOf(t)
		if k == kMemRef && !memref {
			return false
		}
		return elemOK(elem)
	}}
}

var (
	signlessIntLike = like("signless-integer-like", false, ir.IsSignlessIntOrIndex)
	fixedIntLike    = like("signless-fixed-width-integer-like", false, ir.IsSignlessInteger)
	// FloatLike is upstream's floating-point-like constraint (scalar, vector
	// or tensor of floats).
	FloatLike   = like("floating-point-like", false, ir.IsFloat)
	boolLike    = like("bool-like", false, func(t ir.Type) bool { return ir.IsIntegerOfWidth(t, 1) })
	indexCastC  = like("signless-integer-like or memref of signless-integer", true, ir.IsSignlessIntOrIndex)
	bitcastC    = like("signless-integer-or-float-like or memref of signless-integer or float", true, func(t ir.Type) bool { return ir.IsSignlessInteger(t) || ir.IsFloat(t) })
	typedValueC = ir.TypedAttrC
	// constantValueC is TypedAttr; string attributes count as typed, as upstream.
	constantValueC = ir.AttrConstraint{Desc: "TypedAttr instance", OK: func(a ir.Attribute) bool {
		_, isStr := a.(*ir.StringAttr)
		return isStr || typedValueC.OK(a)
	}}
)

// props lists how each property of an arith op is converted at parse time.
var propConversion = map[string]ir.AttrConstraint{
	"fastmath":      FastMathC,
	"overflowFlags": OverflowC,
	"isExact":       ir.UnitAttrC,
	"roundingmode":  roundingModeC,
	"value":         constantValueC,
}

// PreVerify returns the checks upstream makes before operand types:
// property conversion, enum constraints, then region, result and operand
// counts. The math dialect uses it too.
func PreVerify(numOperands int) func(op *ir.Operation) error { return preVerify(numOperands, 1) }

// preVerify is PreVerify for ops of numResults results (1 or 2).
func preVerify(numOperands, numResults int) func(op *ir.Operation) error {
	return func(op *ir.Operation) error {
		for _, a := range op.Props() {
			if c, ok := propConversion[a.Name]; ok && op.Def().IsInherentAttr(a.Name) && !c.OK(a.Value) {
				return ir.Errorf(op.Loc, "invalid properties %s for op %s: Invalid attribute `%s` in property conversion: %s",
					ir.FormatAttrDict(op.Props()), op.Name(), a.Name, a.Value)
			}
		}
		for _, spec := range op.Def().Attrs {
			if spec.Name != "predicate" {
				continue
			}
			if a := op.Attr(spec.Name); a != nil && !spec.Constraint.OK(a) {
				return op.EmitOpError("attribute '%s' failed to satisfy constraint: %s", spec.Name, spec.Constraint.Desc)
			}
		}
		if len(op.Successors()) > 0 {
			return ir.Errorf(op.Loc, "successors in non-terminator")
		}
		if op.NumRegions() != 0 {
			return op.EmitOpError("requires zero regions")
		}
		switch n := op.NumResults(); {
		case n == numResults:
		case numResults == 1:
			return op.EmitOpError("requires one result")
		default:
			return op.EmitOpError("expected %d results", numResults)
		}
		if n := op.NumOperands(); n != numOperands {
			switch numOperands {
			case 0:
				return op.EmitOpError("requires zero operands")
			case 1:
				return op.EmitOpError("requires a single operand")
			}
			return op.EmitOpError("expected %d operands, but found %d", numOperands, n)
		}
		return nil
	}
}

type flagKind int

const (
	noFlags flagKind = iota
	overflowFlags
	exactFlag
	fastmathFlags
)

func binary(name string, tc ir.TypeConstraint, flags flagKind, traits ir.Trait, sem *ir.Semantics) *ir.OpDef {
	d := &ir.OpDef{
		Name:        name,
		Semantics:   sem,
		Traits:      traits | ir.SameOperandsAndResultType,
		Operands:    []ir.ArgSpec{{Name: "lhs", Type: tc}, {Name: "rhs", Type: tc}},
		Results:     []ir.ArgSpec{{Name: "result", Type: tc}},
		TypeRules:   []ir.TypeRule{{Target: "lhs", From: "result"}, {Target: "rhs", From: "result"}},
		VerifyProps: PreVerify(2),
	}
	d.Format = "$lhs `,` $rhs " + flagGroup(d, flags) + " attr-dict `:` type($result)"
	return d
}

// flagGroup adds the flag property of kind to d and returns its format group.
func flagGroup(d *ir.OpDef, flags flagKind) string {
	switch flags {
	case overflowFlags:
		d.Attrs = append(d.Attrs, ir.AttrSpec{Name: "overflowFlags", Constraint: OverflowC, Default: OverflowNone, Syntax: overflowSyntax(d.Name)})
		return "(`overflow` `` $overflowFlags^)?"
	case exactFlag:
		d.Attrs = append(d.Attrs, ir.AttrSpec{Name: "isExact", Constraint: ir.UnitAttrC, Optional: true})
		return "(`exact` $isExact^)?"
	case fastmathFlags:
		d.Attrs = append(d.Attrs, ir.AttrSpec{Name: "fastmath", Constraint: FastMathC, Default: FastMathNone, Syntax: FastMathSyntax(d.Name)})
		return "(`fastmath` `` $fastmath^)?"
	}
	return ""
}

func cmp(name string, tc ir.TypeConstraint, preds []string, fastmath bool, sem *ir.Semantics) *ir.OpDef {
	pc := cmpIPredicateC
	if len(preds) == len(cmpFPredicates) {
		pc = cmpFPredicateC
	}
	d := &ir.OpDef{
		Name:     name,
		Traits:   ir.Pure,
		Operands: []ir.ArgSpec{{Name: "lhs", Type: tc}, {Name: "rhs", Type: tc}},
		Results:  []ir.ArgSpec{{Name: "result", Type: boolLike}},
		Attrs:    []ir.AttrSpec{{Name: "predicate", Constraint: pc, Syntax: predicateSyntax(name, preds)}},
		TypeRules: []ir.TypeRule{{Target: "rhs", From: "lhs"}, {Target: "result", From: "lhs", Fn: func(t ir.Type) (ir.Type, error) {
			if !tc.OK(t) {
				return nil, fmt.Errorf("custom op '%s' 'lhs' must be %s, but got '%s'", name, tc.Desc, t)
			}
			return i1Like(t), nil
		}}},
		VerifyProps: PreVerify(2),
		Parse:       parseCmp(name, tc, preds, fastmath),
		Verify:      verifyCmp,
		Fold:        foldCmp,
		Semantics:   sem,
	}
	group := ""
	if fastmath {
		group = flagGroup(d, fastmathFlags)
	}
	d.Format = "$predicate `,` $lhs `,` $rhs " + group + " attr-dict `:` type($lhs)"
	return d
}

// parseCmp parses `PRED, %lhs, %rhs [fastmath<..>] {attrs} : T`; upstream
// checks T before inferring the result type and reports it at the op.
func parseCmp(name string, tc ir.TypeConstraint, preds []string, fastmath bool) func(p *ir.Parser, st *ir.OperationState) error {
	syntax := predicateSyntax(name, preds)
	fm := FastMathSyntax(name)
	return func(p *ir.Parser, st *ir.OperationState) error {
		pred, err := syntax.Parse(p)
		if err != nil {
			return err
		}
		st.AddAttr("predicate", pred)
		lhs, err := p.ParseOperandAfter(",")
		if err != nil {
			return err
		}
		rhs, err := p.ParseOperandAfter(",")
		if err != nil {
			return err
		}
		if fastmath && p.ParseOptionalKeyword("fastmath") {
			a, err := fm.Parse(p)
			if err != nil {
				return err
			}
			st.AddAttr("fastmath", a)
		}
		if err := p.ParseOptionalAttrDict(st); err != nil {
			return err
		}
		t, err := p.ParseColonType()
		if err != nil {
			return err
		}
		if !tc.OK(t) {
			return ir.Errorf(st.Loc, "custom op '%s' 'lhs' must be %s, but got '%s'", name, tc.Desc, t)
		}
		st.ResultTypes = []ir.Type{i1Like(t)}
		return p.ResolveOperands([]ir.UnresolvedOperand{lhs, rhs}, []ir.Type{t, t}, st)
	}
}

// i1Like returns i1 with the shape of t (a tensor keeps its encoding, as
// upstream's getI1SameShape does).
func i1Like(t ir.Type) ir.Type {
	switch t.(type) {
	case *ir.VectorType, *ir.TensorType, *ir.UnrankedTensorType:
		return ir.WithElementType(t, ir.I1)
	}
	return ir.I1
}

func verifyCmp(op *ir.Operation) error {
	if op.Operand(0).Type() != op.Operand(1).Type() {
		return op.EmitOpError("requires all operands to have the same type")
	}
	if op.Result(0).Type() != i1Like(op.Operand(0).Type()) {
		return op.EmitOpError("failed to verify that result type has i1 element type and same shape as operands")
	}
	return nil
}

type castCompat func(src, dst ir.Type) bool

func cast(name string, in, out ir.TypeConstraint, compat castCompat, flags flagKind, sem *ir.Semantics) *ir.OpDef {
	d := &ir.OpDef{
		Name:        name,
		Semantics:   sem,
		Traits:      ir.Pure,
		Operands:    []ir.ArgSpec{{Name: "in", Type: in}},
		Results:     []ir.ArgSpec{{Name: "out", Type: out}},
		VerifyProps: PreVerify(1),
		Verify:      verifyCast(compat),
		Fold:        foldCast,
	}
	group := ""
	switch {
	case name == "arith.truncf":
		d.Attrs = append(d.Attrs, ir.AttrSpec{Name: "roundingmode", Constraint: roundingModeC, Optional: true, Syntax: roundingSyntax})
		d.Attrs = append(d.Attrs, ir.AttrSpec{Name: "fastmath", Constraint: FastMathC, Optional: true, Syntax: FastMathSyntax(name)})
		group = "($roundingmode^)? (`fastmath` `` $fastmath^)?"
	case flags == fastmathFlags:
		d.Attrs = append(d.Attrs, ir.AttrSpec{Name: "fastmath", Constraint: FastMathC, Optional: true, Syntax: FastMathSyntax(name)})
		group = "(`fastmath` `` $fastmath^)?"
	default:
		group = flagGroup(d, flags)
	}
	d.Format = "$in " + group + " attr-dict `:` type($in) `to` type($out)"
	return d
}

// verifyCast checks, in upstream's order: the tensor dimensions of in and
// out (a predicate ODS checks before the traits), the same shape for both
// (compatible dims, the same scalable dims), then cast compatibility.
func verifyCast(compat castCompat) func(op *ir.Operation) error {
	return func(op *ir.Operation) error {
		src, dst := op.Operand(0).Type(), op.Result(0).Type()
		se, ss, sk := shapeOf(src)
		de, ds, dk := shapeOf(dst)
		if !sameTensorDims(src, dst) {
			return op.EmitOpError("failed to verify that input and output have the same tensor dimensions")
		}
		if (sk == kScalar) != (dk == kScalar) || !compatibleShapes(ss, ds) || !sameScalable(src, dst) {
			return op.EmitOpError("requires the same shape for all operands and results")
		}
		if !compat(se, de) || !sameEncoding(src, dst) {
			return op.EmitOpError("operand type '%s' and result type '%s' are cast incompatible", src, dst)
		}
		return nil
	}
}

// sameEncoding reports whether a and b carry the same tensor encoding (none
// for other types).
func sameEncoding(a, b ir.Type) bool {
	encoding := func(t ir.Type) string {
		if tt, ok := t.(*ir.TensorType); ok && tt.Encoding != nil {
			return tt.Encoding.String()
		}
		return ""
	}
	return encoding(a) == encoding(b)
}

func compatibleShapes(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] && a[i] >= 0 && b[i] >= 0 {
			return false
		}
	}
	return true
}

func sameScalable(a, b ir.Type) bool {
	va, oka := a.(*ir.VectorType)
	vb, okb := b.(*ir.VectorType)
	if !oka || !okb {
		return oka == okb
	}
	if len(va.Scalable) != len(vb.Scalable) {
		return false
	}
	for i := range va.Scalable {
		if va.Scalable[i] != vb.Scalable[i] {
			return false
		}
	}
	return true
}

func intWidth(t ir.Type) int {
	if ir.IsSignlessInteger(t) {
		return ir.BitWidth(t)
	}
	return -1
}

func floatWidth(t ir.Type) int {
	if ft, ok := t.(*ir.FloatType); ok {
		return ft.Width()
	}
	return -1
}

var (
	widerInt      = func(s, d ir.Type) bool { return intWidth(s) > 0 && intWidth(d) > intWidth(s) }
	narrowerInt   = func(s, d ir.Type) bool { return intWidth(d) > 0 && intWidth(s) > intWidth(d) }
	widerFloat    = func(s, d ir.Type) bool { return floatWidth(s) > 0 && floatWidth(d) > floatWidth(s) }
	narrowerFloat = func(s, d ir.Type) bool { return floatWidth(d) > 0 && floatWidth(s) > floatWidth(d) }
	intToFloat    = func(s, d ir.Type) bool { return ir.IsSignlessInteger(s) && ir.IsFloat(d) }
	floatToInt    = func(s, d ir.Type) bool { return ir.IsFloat(s) && ir.IsSignlessInteger(d) }
	indexCompat   = func(s, d ir.Type) bool {
		return ir.IsIndex(s) && ir.IsSignlessInteger(d) || ir.IsSignlessInteger(s) && ir.IsIndex(d)
	}
	bitcastCompat = func(s, d ir.Type) bool {
		return (ir.IsSignlessInteger(s) || ir.IsFloat(s)) && ir.BitWidth(s) == ir.BitWidth(d) && ir.BitWidth(s) > 0
	}
)

func init() {
	pure := ir.Pure
	pureComm := ir.Pure | ir.Commutative
	// Division is only conditionally speculatable upstream (not Pure).
	condSpec := ir.NoMemoryEffect
	defs := []*ir.OpDef{
		constantDef(),
		binary("arith.addi", signlessIntLike, overflowFlags, pureComm, addiSem),
		binary("arith.subi", signlessIntLike, overflowFlags, pure, subiSem),
		binary("arith.muli", signlessIntLike, overflowFlags, pureComm, muliSem),
		binary("arith.shli", signlessIntLike, overflowFlags, pure, shliSem),
		binary("arith.divui", signlessIntLike, exactFlag, condSpec, divuiSem),
		binary("arith.divsi", signlessIntLike, exactFlag, condSpec, divsiSem),
		binary("arith.shrui", signlessIntLike, exactFlag, pure, shruiSem),
		binary("arith.shrsi", signlessIntLike, exactFlag, pure, shrsiSem),
		binary("arith.ceildivui", signlessIntLike, noFlags, condSpec, ceildivuiSem),
		binary("arith.remui", signlessIntLike, noFlags, pure, remuiSem),
		binary("arith.remsi", signlessIntLike, noFlags, pure, remsiSem),
		binary("arith.andi", signlessIntLike, noFlags, pureComm, andiSem),
		binary("arith.ori", signlessIntLike, noFlags, pureComm, oriSem),
		binary("arith.xori", signlessIntLike, noFlags, pureComm, xoriSem),
		binary("arith.maxsi", signlessIntLike, noFlags, pureComm, maxsiSem),
		binary("arith.minsi", signlessIntLike, noFlags, pureComm, minsiSem),
		binary("arith.maxui", signlessIntLike, noFlags, pureComm, maxuiSem),
		binary("arith.minui", signlessIntLike, noFlags, pureComm, minuiSem),
		binary("arith.addf", FloatLike, fastmathFlags, pureComm, addfSem),
		binary("arith.subf", FloatLike, fastmathFlags, pure, subfSem),
		binary("arith.mulf", FloatLike, fastmathFlags, pureComm, mulfSem),
		binary("arith.divf", FloatLike, fastmathFlags, pure, divfSem),
		binary("arith.maximumf", FloatLike, fastmathFlags, pureComm, maximumfSem),
		binary("arith.minimumf", FloatLike, fastmathFlags, pureComm, minimumfSem),
		negfDef(),
		cmp("arith.cmpi", signlessIntLike, cmpIPredicates, false, cmpiSem),
		cmp("arith.cmpf", FloatLike, cmpFPredicates, true, cmpfSem),
		selectDef(),
		cast("arith.extui", fixedIntLike, fixedIntLike, widerInt, noFlags, zeroExtend),
		cast("arith.extsi", fixedIntLike, fixedIntLike, widerInt, noFlags, signExtend),
		cast("arith.trunci", fixedIntLike, fixedIntLike, narrowerInt, overflowFlags, truncate),
		cast("arith.extf", FloatLike, FloatLike, widerFloat, fastmathFlags, extfSem),
		cast("arith.truncf", FloatLike, FloatLike, narrowerFloat, noFlags, truncfSem),
		cast("arith.index_cast", indexCastC, indexCastC, indexCompat, noFlags, signExtend),
		cast("arith.index_castui", indexCastC, indexCastC, indexCompat, noFlags, zeroExtend),
		cast("arith.sitofp", fixedIntLike, FloatLike, intToFloat, noFlags, intToFloatSem(true)),
		cast("arith.uitofp", fixedIntLike, FloatLike, intToFloat, noFlags, intToFloatSem(false)),
		cast("arith.fptosi", FloatLike, fixedIntLike, floatToInt, noFlags, floatToIntSem(true)),
		cast("arith.fptoui", FloatLike, fixedIntLike, floatToInt, noFlags, floatToIntSem(false)),
		cast("arith.bitcast", bitcastC, bitcastC, bitcastCompat, noFlags, bitcastSem),
		binary("arith.ceildivsi", signlessIntLike, noFlags, condSpec, ceildivsiSem),
		binary("arith.floordivsi", signlessIntLike, noFlags, pure, floordivsiSem),
		binary("arith.remf", FloatLike, fastmathFlags, pure, remfSem),
		binary("arith.maxnumf", FloatLike, fastmathFlags, pureComm, maxnumfSem),
		binary("arith.minnumf", FloatLike, fastmathFlags, pureComm, minnumfSem),
		addUIExtendedDef(),
		mulExtendedDef("arith.mului_extended", mului, mulExtendedDoc),
		mulExtendedDef("arith.mulsi_extended", mulsi, mulExtendedDoc),
		scalingDef("arith.scaling_extf", widerFloat),
		scalingDef("arith.scaling_truncf", narrowerFloat),
	}
	for _, d := range defs {
		if d.Fold == nil {
			d.Fold = binaryFolders[d.Name]
		}
		if doc, ok := binaryDocs[d.Name]; ok {
			d.Doc = doc
		}
	}
	muli := defs[3]
	muli.ResultNames = muliNames
	ir.Register(defs...)
	ir.RegisterConstantMaterializer(materialize)
}

// binaryDocs document what the GPU computes for the binary ops where that
// needs saying.
var binaryDocs = map[string]string{
	"arith.ceildivsi": "**On the GPU.** `div.s` and the remainder's sign: q+1 where the remainder is not zero and the operands have the same sign. " +
		"Undefined (as upstream) for a zero divisor or the most negative value divided by -1.",
	"arith.floordivsi": "**On the GPU.** `div.s` and the remainder's sign: q-1 where the remainder is not zero and the operands' signs differ. " +
		"Undefined (as upstream) for a zero divisor or the most negative value divided by -1.",
	"arith.remf": "**On the GPU.** Exact, C's fmod (the result has the dividend's sign; NaN for an infinite dividend or a zero divisor; " +
		"the dividend for an infinite divisor). Computed in f64 by long division of the significands, 11 quotient bits per loop step " +
		"(one step while |x/y| < 2^11; at most 26 for f32 operands, 186 for f64), not with llc's `frem` lowering, x - trunc(x/y)·y, " +
		"which is wrong once the quotient passes 2^24. f16, bf16, tf32 and fp8 operands convert exactly. The lowering's LLVM IR, " +
		"compiled for the CPU, matched the C library's fmod bit for bit on 40 million random f32 and f64 operand pairs.",
	"arith.maxnumf": "IEEE maxNum: a NaN operand gives the other operand (NaN only when both are). Folding and the CPU order -0 below +0; " +
		"on the GPU it is PTX's `max` (f32, f16, bf16, f64), for which upstream leaves the choice between +0 and -0 open.",
	"arith.minnumf": "IEEE minNum: a NaN operand gives the other operand (NaN only when both are). Folding and the CPU order -0 below +0; " +
		"on the GPU it is PTX's `min` (f32, f16, bf16, f64), for which upstream leaves the choice between +0 and -0 open.",
}

func negfDef() *ir.OpDef {
	d := &ir.OpDef{
		Name:        "arith.negf",
		Traits:      ir.Pure | ir.SameOperandsAndResultType,
		Operands:    []ir.ArgSpec{{Name: "operand", Type: FloatLike}},
		Results:     []ir.ArgSpec{{Name: "result", Type: FloatLike}},
		TypeRules:   []ir.TypeRule{{Target: "operand", From: "result"}},
		VerifyProps: PreVerify(1),
		Fold:        foldNegf,
		Semantics:   negfSem,
	}
	d.Format = "$operand " + flagGroup(d, fastmathFlags) + " attr-dict `:` type($result)"
	return d
}

func constantDef() *ir.OpDef {
	return &ir.OpDef{
		Name:        "arith.constant",
		Summary:     "integer, float or elements constant",
		Traits:      ir.Pure | ir.ConstantLike,
		Results:     []ir.ArgSpec{{Name: "result", Type: ir.AnyType}},
		Attrs:       []ir.AttrSpec{{Name: "value", Constraint: constantValueC}},
		VerifyProps: PreVerify(0),
		Parse: func(p *ir.Parser, st *ir.OperationState) error {
			if err := p.ParseOptionalAttrDict(st); err != nil {
				return err
			}
			a, err := p.ParseAttribute(nil)
			if err != nil {
				return err
			}
			st.AddAttr("value", a)
			if ta, ok := a.(ir.TypedAttr); ok {
				st.ResultTypes = []ir.Type{ta.Type()}
			} else {
				st.ResultTypes = []ir.Type{ir.None}
			}
			return nil
		},
		Print: func(p *ir.Printer, op *ir.Operation) {
			p.PrintOptionalAttrDict(op.AllAttrs(), "value")
			p.Write(" ")
			p.PrintAttribute(op.Attr("value"))
		},
		Verify:      verifyConstant,
		ResultNames: constantNames,
	}
}

func verifyConstant(op *ir.Operation) error {
	v := op.Attr("value")
	// AllTypesMatch first: a string has type none.
	ta, _ := v.(ir.TypedAttr)
	if _, isStr := v.(*ir.StringAttr); !isStr && (ta == nil || ta.Type() != op.Result(0).Type()) ||
		isStr && op.Result(0).Type() != ir.None {
		return op.EmitOpError("failed to verify that all of {value, result} have same type")
	}
	if _, isStr := v.(*ir.StringAttr); isStr {
		return op.EmitOpError("value must be an integer, float, or elements attribute")
	}
	t := op.Result(0).Type()
	if it, ok := t.(*ir.IntegerType); ok && !it.IsSignless() {
		return op.EmitOpError("integer return type must be signless")
	}
	switch a := v.(type) {
	case *ir.IntegerAttr, *ir.FloatAttr:
	case *ir.DenseAttr:
		if vt, ok := t.(*ir.VectorType); ok && len(vt.Scalable) > 0 && !a.Splat {
			return op.EmitOpError("intializing scalable vectors with elements attribute is not supported unless it's a vector splat")
		}
	default:
		if _, isElems := v.(interface{ ShapedType() ir.ShapedType }); !isElems {
			return op.EmitOpError("value must be an integer, float, or elements attribute")
		}
	}
	return nil
}

func selectDef() *ir.OpDef {
	return &ir.OpDef{
		Name:   "arith.select",
		Traits: ir.Pure,
		Operands: []ir.ArgSpec{
			{Name: "condition", Type: boolLike},
			{Name: "true_value", Type: ir.AnyType},
			{Name: "false_value", Type: ir.AnyType},
		},
		Results:     []ir.ArgSpec{{Name: "result", Type: ir.AnyType}},
		VerifyProps: PreVerify(3),
		Parse:       parseSelect,
		Print:       printSelect,
		Verify:      verifySelect,
		Fold:        foldSelect,
		Semantics:   selectSem,
	}
}

func parseSelect(p *ir.Parser, st *ir.OperationState) error {
	tok := p.Tok()
	us, err := p.ParseOperandList(ir.DelimNone)
	if err != nil {
		return err
	}
	if len(us) != 3 {
		return ir.Errorf(p.LocOf(tok), "custom op 'arith.select' expected 3 operands")
	}
	if err := p.ParseOptionalAttrDict(st); err != nil {
		return err
	}
	t, err := p.ParseColonType()
	if err != nil {
		return err
	}
	cond := ir.Type(ir.I1)
	if p.ParseOptionalPunct(",") {
		cond = t
		if t, err = p.ParseType(); err != nil {
			return err
		}
	}
	st.ResultTypes = []ir.Type{t}
	return p.ResolveOperands(us, []ir.Type{cond, t, t}, st)
}

func printSelect(p *ir.Printer, op *ir.Operation) {
	p.Write(" ")
	p.PrintOperands(op.Operands())
	p.PrintOptionalAttrDict(op.AllAttrs())
	p.Write(" : ")
	if _, _, k := shapeOf(op.Operand(0).Type()); k == kVector || k == kTensor {
		p.PrintType(op.Operand(0).Type())
		p.Write(", ")
	}
	p.PrintType(op.Result(0).Type())
}

func verifySelect(op *ir.Operation) error {
	c, t, f, r := op.Operand(0).Type(), op.Operand(1).Type(), op.Operand(2).Type(), op.Result(0).Type()
	if t != f || t != r {
		return op.EmitOpError("failed to verify that all of {true_value, false_value, result} have same type")
	}
	_, cs, ck := shapeOf(c)
	_, rs, rk := shapeOf(r)
	if ck != kScalar && (rk == kScalar || !slices.Equal(cs, rs)) {
		return op.EmitOpError("failed to verify that condition is signless i1 or has matching shape")
	}
	// Elementwise: memrefs count as scalars.
	nonScalar := func(k int) bool { return k == kVector || k == kTensor }
	if nonScalar(ck) && !nonScalar(rk) {
		return op.EmitOpError("if an operand is non-scalar, then there must be at least one non-scalar result")
	}
	if nonScalar(ck) && nonScalar(rk) && (ck != rk || !sameScalable(c, r)) {
		return op.EmitOpError("all non-scalar operands/results must have the same shape and base type")
	}
	// A shaped condition must also carry the result's tensor encoding.
	if want := i1Like(r); c != ir.I1 && c != want {
		return op.EmitOpError("expected condition type to have the same shape as the result type, expected '%s', but got '%s'", want, c)
	}
	return nil
}
