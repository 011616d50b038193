// Package math registers the math dialect ops absf, exp, sqrt and fma.
// Their fastmath property is the arith dialect's #arith.fastmath attribute.
package math

import (
	gomath "math"

	"github.com/tmac-dev/tmac/dialects/arith"
	"github.com/tmac-dev/tmac/ir"
)

func unary(name string, fold func(float64) float64) *ir.OpDef {
	d := &ir.OpDef{
		Name:        name,
		Traits:      ir.Pure | ir.SameOperandsAndResultType,
		Operands:    []ir.ArgSpec{{Name: "operand", Type: arith.FloatLike}},
		Results:     []ir.ArgSpec{{Name: "result", Type: arith.FloatLike}},
		Attrs:       []ir.AttrSpec{{Name: "fastmath", Constraint: arith.FastMathC, Default: arith.FastMathNone, Syntax: arith.FastMathSyntax(name)}},
		TypeRules:   []ir.TypeRule{{Target: "operand", From: "result"}},
		Format:      "$operand (`fastmath` `` $fastmath^)? attr-dict `:` type($result)",
		VerifyProps: arith.PreVerify(1),
	}
	if fold != nil {
		d.Fold = func(op *ir.Operation, operands []ir.Attribute) []any {
			fa, ok := operands[0].(*ir.FloatAttr)
			ft, isF := op.Result(0).Type().(*ir.FloatType)
			if !ok || !isF {
				return nil
			}
			return []any{ir.FloatAttrOf(fold(fa.Value), ft)}
		}
	}
	return d
}

func init() {
	ir.RegisterDialect(&ir.Dialect{Name: "math", Summary: "Floating-point math functions beyond arith"})
	ir.Register(
		unary("math.absf", gomath.Abs),
		unary("math.exp", nil),
		unary("math.sqrt", nil),
		&ir.OpDef{
			Name:   "math.fma",
			Traits: ir.Pure | ir.SameOperandsAndResultType,
			Operands: []ir.ArgSpec{
				{Name: "a", Type: arith.FloatLike}, {Name: "b", Type: arith.FloatLike}, {Name: "c", Type: arith.FloatLike},
			},
			Results: []ir.ArgSpec{{Name: "result", Type: arith.FloatLike}},
			Attrs:   []ir.AttrSpec{{Name: "fastmath", Constraint: arith.FastMathC, Default: arith.FastMathNone, Syntax: arith.FastMathSyntax("math.fma")}},
			TypeRules: []ir.TypeRule{
				{Target: "a", From: "result"}, {Target: "b", From: "result"}, {Target: "c", From: "result"},
			},
			Format:      "$a `,` $b `,` $c (`fastmath` `` $fastmath^)? attr-dict `:` type($result)",
			VerifyProps: arith.PreVerify(3),
		},
	)
}
