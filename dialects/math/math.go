// Package math registers the math dialect ops absf, exp, log2, sqrt and fma.
// Their fastmath property is the arith dialect's #arith.fastmath attribute.
// Each op's definition says what it computes (ir.Semantics) and, where
// the GPU computes something else, what the GPU computes and how far that
// is from the exact result.
package math

import (
	gomath "math"

	"github.com/tmac-dev/tmac/dialects/arith"
	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/ir/eval"
)

func unary(name string, sem *ir.Semantics, doc string) *ir.OpDef {
	d := &ir.OpDef{
		Name:        name,
		Traits:      ir.Pure | ir.SameOperandsAndResultType,
		Operands:    []ir.ArgSpec{{Name: "operand", Type: arith.FloatLike}},
		Results:     []ir.ArgSpec{{Name: "result", Type: arith.FloatLike}},
		Attrs:       []ir.AttrSpec{{Name: "fastmath", Constraint: arith.FastMathC, Default: arith.FastMathNone, Syntax: arith.FastMathSyntax(name)}},
		TypeRules:   []ir.TypeRule{{Target: "operand", From: "result"}},
		Format:      "$operand (`fastmath` `` $fastmath^)? attr-dict `:` type($result)",
		VerifyProps: arith.PreVerify(1),
		Semantics:   sem,
		Doc:         doc,
	}
	return d
}

// foldConstant folds an op whose operands are float scalar constants. Only
// ops whose GPU lowering is exact fold: a folded approximate op (exp)
// would differ from what the same op computes at run time.
func foldConstant(op *ir.Operation, operands []ir.Attribute) []any {
	for _, a := range operands {
		if _, ok := a.(*ir.FloatAttr); !ok {
			return nil
		}
	}
	if r := eval.Fold(op, operands); r != nil {
		return []any{r}
	}
	return nil
}

// expGPU is what the GPU computes for math.exp: 2^(x·log2 e) with the
// product rounded to f32 and PTX's ex2.approx.f32 (modelled as exact: its
// own error, at most 2 ulp, is below the product's rounding error for
// |x| > 1).
func expGPU(x float64) float64 {
	y := float32(float32(x) * float32(gomath.Log2E))
	return gomath.Exp2(float64(y))
}

const expDoc = `**Accuracy on the GPU.** exp(x) is computed as 2^(x·log2 e) with PTX's
ex2.approx.f32: not correctly rounded. Rounding x·log2 e to f32 adds a
relative error of about |x|·2^-24, so the error grows with |x|. Measured on
an H200 against exp rounded to f32: at most 2 ulp for |x| < 1, 7 ulp for
|x| < 10, 28 ulp for |x| < 40 and 62 ulp near the overflow bound (|x| ≈ 88);
mean about 1 ulp. f16 and bf16 (computed in f32) are well within their
precision. exp(+inf) = inf, exp(-inf) = 0, NaN stays NaN, overflow gives +inf
and underflow 0. f64 is rejected: there is no f64 exponential instruction.
The emulator computes the f32 rounding of the product as the GPU does; the
reference interpreter computes exp exactly.`

const log2Doc = `**Accuracy on the GPU.** By default log2(x) is computed in f64 from the
decomposition x = m·2^e, m in [√½, √2): e + ln(m)·log2 e, with ln(m) =
2·atanh(s) summed to s^13 (s = (m-1)/(m+1), |s| < 0.172; the truncation is
below 2^-30 relative), then rounded to f32. Measured on an H100 over 2^24
f32 inputs spread over every binade (docs/gpu-tests.md, step 9): correctly
rounded on all of them (max 0.5 ulp); rare near-ties may round the other
way (at most 1 ulp). f16, bf16, tf32 and fp8 inputs go through f32.
log2(0) = -inf, log2(+inf) = +inf, log2 of a negative number or NaN is NaN.
With ` + "`fastmath<afn>`" + ` (or ` + "`fast`" + `) it is PTX's lg2.approx.f32 instead: on the same
inputs a mean error of 1.2 ulp and an absolute error of at most 2.1e-7 on
[0.5, 2] (so an unbounded relative error where log2 x nears 0), which the
emulator does not model. f64 is rejected.`

func init() {
	ir.RegisterDialect(&ir.Dialect{Name: "math", Summary: "Floating-point math functions beyond arith"})
	absf := unary("math.absf", eval.FloatUnary(gomath.Abs), "")
	absf.Fold = foldConstant
	ir.Register(
		absf,
		unary("math.exp", &ir.Semantics{Lane: eval.FloatUnaryLane(gomath.Exp), GPU: eval.FloatUnaryLane(expGPU)}, expDoc),
		unary("math.log2", eval.FloatUnary(gomath.Log2), log2Doc),
		unary("math.sqrt", eval.FloatUnary(gomath.Sqrt), ""),
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
			Semantics:   FMA,
		},
	)
}

// FMA is the semantics of a fused multiply-add (math.fma, vector.fma):
// a·b+c computed in float64 with one rounding, then rounded to the type.
var FMA = eval.FloatTernary(gomath.FMA)
