// Package math registers the math dialect of upstream MLIR 22: the
// transcendental functions (log, exp, tanh, erf, sin, powf, ...), rounding
// (floor, ceil, round, roundeven, trunc), copysign, clampf, fma, sqrt and
// rsqrt, fpowi and ipowi, the bit counts (ctlz, cttz, ctpop), absf and
// absi, the classifications (isnan, isinf, isfinite, isnormal) and sincos.
// Their fastmath property is the arith dialect's #arith.fastmath
// attribute. Each op's definition says what it computes (ir.Semantics,
// semantics.go) and how the GPU computes it and how accurately (gpu.go,
// shown by `tmac doc`).
package math

import (
	"fmt"

	"github.com/tmac-dev/tmac/dialects/arith"
	"github.com/tmac-dev/tmac/ir"
)

// Type constraints of upstream's math ops. Upstream's signless-integer-like
// takes index too.
var (
	signlessIntLike = ir.TypeConstraint{Desc: "signless-integer-like", OK: func(t ir.Type) bool {
		return likeOf(t, ir.IsSignlessIntOrIndex)
	}}
	boolLike = ir.TypeConstraint{Desc: "bool-like", OK: func(t ir.Type) bool {
		return likeOf(t, func(e ir.Type) bool { return ir.IsIntegerOfWidth(e, 1) })
	}}
)

// likeOf reports whether t is a scalar, vector or tensor whose element
// type satisfies elemOK.
func likeOf(t ir.Type, elemOK func(ir.Type) bool) bool {
	switch s := t.(type) {
	case *ir.VectorType:
		return elemOK(s.Elem)
	case *ir.TensorType:
		return elemOK(s.Elem)
	case *ir.MemRefType:
		return false
	}
	return elemOK(t)
}

// fastmathAttr is the fastmath property every float op of the dialect has.
func fastmathAttr(name string) ir.AttrSpec {
	return ir.AttrSpec{Name: "fastmath", Constraint: arith.FastMathC, Default: arith.FastMathNone, Syntax: arith.FastMathSyntax(name)}
}

// fastmathGroup is the optional `fastmath<...>` of the custom forms.
const fastmathGroup = "(`fastmath` `` $fastmath^)? "

// elementwise returns a definition of an op whose operands and one result
// all have one type of constraint tc: `OP %a[, %b[, %c]] [fastmath<..>]
// {attrs} : T`, the fastmath property when fastmath is set.
func elementwise(name, summary string, tc ir.TypeConstraint, operands []string, fastmath bool, sem *ir.Semantics) *ir.OpDef {
	d := &ir.OpDef{
		Name:        name,
		Summary:     summary,
		Traits:      ir.Pure | ir.SameOperandsAndResultType,
		Results:     []ir.ArgSpec{{Name: "result", Type: tc}},
		VerifyProps: arith.PreVerify(len(operands)),
		Semantics:   sem,
	}
	format := ""
	for i, n := range operands {
		d.Operands = append(d.Operands, ir.ArgSpec{Name: n, Type: tc})
		d.TypeRules = append(d.TypeRules, ir.TypeRule{Target: n, From: "result"})
		if i > 0 {
			format += "`,` "
		}
		format += "$" + n + " "
	}
	if fastmath {
		d.Attrs = []ir.AttrSpec{fastmathAttr(name)}
		format += fastmathGroup
	}
	d.Format = format + "attr-dict `:` type($result)"
	return d
}

// floatUnary is a float op of one operand (math.log, math.floor, ...).
func floatUnary(name, summary string, sem *ir.Semantics) *ir.OpDef {
	return elementwise(name, summary, arith.FloatLike, []string{"operand"}, true, sem)
}

// floatBinary is a float op of two operands (math.atan2, math.powf, ...).
func floatBinary(name, summary string, sem *ir.Semantics) *ir.OpDef {
	return elementwise(name, summary, arith.FloatLike, []string{"lhs", "rhs"}, true, sem)
}

// intUnary is an integer op of one operand (math.absi, math.ctlz, ...).
func intUnary(name, summary string, sem *ir.Semantics) *ir.OpDef {
	return elementwise(name, summary, signlessIntLike, []string{"operand"}, false, sem)
}

// classification is a float test with a bool-like result of the operand's
// shape (math.isnan, ...).
func classification(name, summary string, sem *ir.Semantics) *ir.OpDef {
	return &ir.OpDef{
		Name:     name,
		Summary:  summary,
		Traits:   ir.Pure,
		Operands: []ir.ArgSpec{{Name: "operand", Type: arith.FloatLike}},
		Results:  []ir.ArgSpec{{Name: "result", Type: boolLike}},
		Attrs:    []ir.AttrSpec{fastmathAttr(name)},
		TypeRules: []ir.TypeRule{{Target: "result", From: "operand", Fn: func(t ir.Type) (ir.Type, error) {
			if !arith.FloatLike.OK(t) {
				return nil, fmt.Errorf("custom op '%s' 'operand' must be floating-point-like, but got '%s'", name, t)
			}
			return i1Like(t), nil
		}}},
		// Upstream 22 leaves the fastmath property to the attribute
		// dictionary here.
		Format:      "$operand attr-dict `:` type($operand)",
		VerifyProps: arith.PreVerify(1),
		VerifyInvariants: func(op *ir.Operation) error {
			if op.Result(0).Type() != i1Like(op.Operand(0).Type()) {
				return op.EmitOpError("failed to verify that result type has i1 element type and same shape as operands")
			}
			return nil
		},
		Semantics: sem,
	}
}

// i1Like returns i1 with the shape of t.
func i1Like(t ir.Type) ir.Type {
	switch s := t.(type) {
	case *ir.VectorType:
		return ir.ScalableVectorTypeOf(s.Shape(), s.Scalable, ir.I1)
	case *ir.TensorType:
		return ir.TensorTypeOf(s.Shape(), ir.I1)
	}
	return ir.I1
}

// shapeOf returns the shape of t (nil for a scalar) and whether it is
// shaped.
func shapeOf(t ir.Type) ([]int64, bool) {
	if s, ok := t.(ir.ShapedType); ok {
		return s.Shape(), true
	}
	return nil, false
}

// fpowi is math.fpowi: a float base to a signless integer power of the
// same shape, `math.fpowi %b, %p : f32, i32`.
func fpowi() *ir.OpDef {
	return &ir.OpDef{
		Name:        "math.fpowi",
		Summary:     "floating-point base raised to an integer power",
		Traits:      ir.Pure,
		Operands:    []ir.ArgSpec{{Name: "lhs", Type: arith.FloatLike}, {Name: "rhs", Type: signlessIntLike}},
		Results:     []ir.ArgSpec{{Name: "result", Type: arith.FloatLike}},
		Attrs:       []ir.AttrSpec{fastmathAttr("math.fpowi")},
		TypeRules:   []ir.TypeRule{{Target: "result", From: "lhs"}},
		Format:      "$lhs `,` $rhs " + fastmathGroup + "attr-dict `:` type($lhs) `,` type($rhs)",
		VerifyProps: arith.PreVerify(2),
		VerifyInvariants: func(op *ir.Operation) error {
			l, r, res := op.Operand(0).Type(), op.Operand(1).Type(), op.Result(0).Type()
			ls, lShaped := shapeOf(l)
			for _, t := range []ir.Type{r, res} {
				s, shaped := shapeOf(t)
				if shaped != lShaped || fmt.Sprint(s) != fmt.Sprint(ls) {
					return op.EmitOpError("requires the same shape for all operands and results")
				}
			}
			if l != res {
				return op.EmitOpError("failed to verify that all of {lhs, result} have same type")
			}
			return nil
		},
		Semantics: fpowiSem,
	}
}

// sincos is math.sincos: the sine and cosine of one operand, two results
// named %sin and %cos when printed.
func sincos() *ir.OpDef {
	return &ir.OpDef{
		Name:     "math.sincos",
		Summary:  "sine and cosine of one value",
		Traits:   ir.Pure,
		Operands: []ir.ArgSpec{{Name: "operand", Type: arith.FloatLike}},
		Results:  []ir.ArgSpec{{Name: "sin", Type: arith.FloatLike}, {Name: "cos", Type: arith.FloatLike}},
		Attrs:    []ir.AttrSpec{fastmathAttr("math.sincos")},
		TypeRules: []ir.TypeRule{
			{Target: "sin", From: "operand"}, {Target: "cos", From: "operand"},
		},
		Format:      "$operand " + fastmathGroup + "attr-dict `:` type($operand)",
		VerifyProps: verifySincosCounts,
		VerifyInvariants: func(op *ir.Operation) error {
			t := op.Operand(0).Type()
			if op.Result(0).Type() != t || op.Result(1).Type() != t {
				return op.EmitOpError("failed to verify that all of {operand, sin, cos} have same type")
			}
			return nil
		},
		ResultNames: ir.NameResults("sin", "cos"),
		Doc:         sincosDoc,
	}
}

// verifySincosCounts makes arith.PreVerify's checks for an op of two
// results: the fastmath property, then the region, result and operand
// counts.
func verifySincosCounts(op *ir.Operation) error {
	if a := op.Attr("fastmath"); a != nil && !arith.FastMathC.OK(a) {
		return ir.Errorf(op.Loc, "invalid properties %s for op %s: Invalid attribute `fastmath` in property conversion: %s",
			ir.FormatAttrDict(op.Props()), op.Name(), a)
	}
	switch {
	case op.NumRegions() != 0:
		return op.EmitOpError("requires zero regions")
	case op.NumResults() != 2:
		return op.EmitOpError("expected 2 results")
	case op.NumOperands() != 1:
		return op.EmitOpError("requires a single operand")
	}
	return nil
}

// clampf is math.clampf: `math.clampf %x to [%min, %max] : T`.
func clampf() *ir.OpDef {
	d := elementwise("math.clampf", "clamp a float value to an interval", arith.FloatLike, []string{"operand", "min", "max"}, true, clampfSem)
	d.Format = "$operand `to` ` ` `[` $min `,` $max `]` " + fastmathGroup + "attr-dict `:` type($result)"
	return d
}

func init() {
	ir.RegisterDialect(&ir.Dialect{Name: "math", Summary: "Floating-point and integer math functions beyond arith (upstream MLIR 22's math dialect)"})
	var defs []*ir.OpDef
	for _, f := range floatFuncs {
		var d *ir.OpDef
		if f.binary {
			d = floatBinary(f.name, f.summary, f.sem)
		} else {
			d = floatUnary(f.name, f.summary, f.sem)
		}
		if f.exact {
			d.Fold = foldConstant
		}
		d.Doc = gpuDoc(f.name)
		defs = append(defs, d)
	}
	for _, f := range intFuncs {
		d := intUnary(f.name, f.summary, f.sem)
		if f.binary {
			d = elementwise(f.name, f.summary, signlessIntLike, []string{"lhs", "rhs"}, false, f.sem)
		}
		d.Fold = foldConstant
		d.Doc = f.doc
		defs = append(defs, d)
	}
	for _, f := range classFuncs {
		d := classification(f.name, f.summary, f.sem)
		d.Fold = foldConstant
		d.Doc = classDoc
		defs = append(defs, d)
	}
	fma := elementwise("math.fma", "fused multiply-add", arith.FloatLike, []string{"a", "b", "c"}, true, FMA)
	fma.Doc = fmaDoc
	pow := fpowi()
	pow.Doc = gpuDoc("math.fpowi")
	clamp := clampf()
	clamp.Fold = foldConstant
	clamp.Doc = clampfDoc
	defs = append(defs, fma, pow, sincos(), clamp)
	ir.Register(defs...)
}

// foldConstant folds an op whose operands are scalar or splat constants.
// Only ops whose GPU lowering is exact fold: a folded approximate op (exp)
// would differ from what the same op computes at run time.
func foldConstant(op *ir.Operation, operands []ir.Attribute) []any {
	if r := evalFold(op, operands); r != nil {
		return []any{r}
	}
	return nil
}
