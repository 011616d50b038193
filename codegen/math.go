package codegen

import (
	"math"

	"github.com/llir/llvm/ir/types"
	"github.com/llir/llvm/ir/value"

	mathdialect "github.com/tmac-dev/tmac/dialects/math"
	"github.com/tmac-dev/tmac/ir"
)

// The math dialect (absf, sqrt, fma, exp), scalar and 1-D vector forms.
// See arith.go for how tf32 and fp8 values are represented.

func init() {
	Register(lowerAbsf, mathdialect.Absf)
	Register(lowerSqrt, mathdialect.Sqrt)
	Register(lowerFma, mathdialect.Fma)
	Register(lowerExp, mathdialect.Exp)
}

func lowerAbsf(fe *FuncEmitter, op *ir.Operation) {
	a := mathdialect.AbsfOp{Op: op}
	k, _ := floatKind(a.Result().Type())
	x := fe.Val(a.Operand())
	if isFP8(k) {
		// Clear the sign bit of the byte (exact for every value).
		fe.Set(a.Result(), fe.B().NewAnd(x, splatInt(x.Type(), 0x7F)))
		return
	}
	fe.Set(a.Result(), fe.callOverloaded("llvm.fabs", fastMath(op), x))
}

func lowerSqrt(fe *FuncEmitter, op *ir.Operation) {
	s := mathdialect.SqrtOp{Op: op}
	k, _ := floatKind(s.Result().Type())
	x := fe.Val(s.Operand())
	if native(k) {
		// sqrt.rn (correctly rounded) unless fastmath allows approximations.
		fe.Set(s.Result(), fe.callOverloaded("llvm.sqrt", fastMath(op), x))
		return
	}
	// tf32, fp8: f32 square root rounded once more is correctly rounded
	// (see arith.go).
	r := fe.callOverloaded("llvm.sqrt", fastMath(op), fe.toF32(x, k))
	fe.Set(s.Result(), fe.fromF32(r, k))
}

func lowerFma(fe *FuncEmitter, op *ir.Operation) {
	f := mathdialect.FmaOp{Op: op}
	k, _ := floatKind(f.Result().Type())
	if !native(k) {
		// An f32 fma rounded again to tf32/fp8 is not correctly rounded
		// (double rounding of a fused result), and there is no tf32/fp8 fma.
		Fail(op, "'math.fma' on %s cannot be compiled (no correctly rounded lowering); extend the operands to f32 first", ir.FloatTypeOf(k))
	}
	a, b, c := fe.Val(f.A()), fe.Val(f.B()), fe.Val(f.C())
	fe.Set(f.Result(), fe.callOverloaded("llvm.fma", fastMath(op), a, b, c))
}

// lowerExp computes exp(x) as 2^(x·log2 e) with PTX's ex2.approx.f32
// (llvm.nvvm.ex2.approx.f); llc has no lowering of llvm.exp for NVPTX.
//
// Accuracy: this is not correctly rounded. ex2.approx.f32 has a small
// relative error, and rounding x·log2 e to f32 first adds a relative error
// of about |x|·2^-24 to the result, so the error grows with |x|. Measured on
// an H200 against exp rounded to f32: at most 2 ulp for |x| < 1, 7 ulp for
// |x| < 10, 28 ulp for |x| < 40 and 62 ulp near the overflow bound
// (|x| ≈ 88); mean about 1 ulp. f16 and bf16 (computed in f32) are well
// within their precision. exp(+inf) = inf, exp(-inf) = 0, NaN stays NaN,
// overflow gives +inf and underflow 0. f64 is rejected: there is no f64
// exponential instruction, and no software exp is provided.
func lowerExp(fe *FuncEmitter, op *ir.Operation) {
	e := mathdialect.ExpOp{Op: op}
	k, _ := floatKind(e.Result().Type())
	if k == ir.F64 {
		Fail(op, "'math.exp' on f64 cannot be compiled: there is no f64 exponential on the GPU (only the f32 ex2.approx)")
	}
	x := fe.toF32(fe.Val(e.Operand()), k)
	y := fe.B().NewFMul(x, splatFloat(x.Type(), float64(float32(math.Log2E))))
	r := fe.mapScalar(y, types.Float, func(v value.Value) value.Value {
		return fe.CallIntrinsic("llvm.nvvm.ex2.approx.f", types.Float, v)
	})
	fe.Set(e.Result(), fe.fromF32(r, k))
}
