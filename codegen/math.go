package codegen

import (
	"math"
	"slices"

	"github.com/llir/llvm/ir/enum"
	"github.com/llir/llvm/ir/types"
	"github.com/llir/llvm/ir/value"

	mathdialect "github.com/tmac-dev/tmac/dialects/math"
	"github.com/tmac-dev/tmac/ir"
)

// The math dialect (absf, sqrt, fma, exp, log2), scalar and 1-D vector forms.
// See arith.go for how tf32 and fp8 values are represented.

func init() {
	Register(lowerAbsf, mathdialect.Absf)
	Register(lowerSqrt, mathdialect.Sqrt)
	Register(lowerFma, mathdialect.Fma)
	Register(lowerExp, mathdialect.Exp)
	Register(lowerLog2, mathdialect.Log2)
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
// (llvm.nvvm.ex2.approx.f); llc has no lowering of llvm.exp for NVPTX. Its
// accuracy is documented on math.exp's definition (dialects/math).
func lowerExp(fe *FuncEmitter, op *ir.Operation) {
	e := mathdialect.ExpOp{Op: op}
	x, k := fe.f32Operand(op, e.Operand(), e.Result(), "there is no f64 exponential on the GPU (only the f32 ex2.approx)")
	y := fe.B().NewFMul(x, splatFloat(x.Type(), float64(float32(math.Log2E))))
	fe.Set(e.Result(), fe.fromF32(fe.mapF32Intrinsic("llvm.nvvm.ex2.approx.f", y), k))
}

// lowerLog2 computes log2(x) as math.log2's definition documents: in f64
// (log2F64) by default, PTX's lg2.approx.f32 with fastmath afn. llc has
// no lowering of llvm.log2 for NVPTX.
func lowerLog2(fe *FuncEmitter, op *ir.Operation) {
	l := mathdialect.Log2Op{Op: op}
	x, k := fe.f32Operand(op, l.Operand(), l.Result(), "only f32 and narrower formats have a GPU lowering")
	var r value.Value
	if slices.Contains(fastMath(op), enum.FastMathFlagAFn) {
		r = fe.mapF32Intrinsic("llvm.nvvm.lg2.approx.f", x)
	} else {
		r = fe.log2F64(x)
	}
	fe.Set(l.Result(), fe.fromF32(r, k))
}

// f32Operand returns the operand x of a unary math op computed in f32,
// converted to f32 exactly, and the op's float format (see arith.go); an
// f64 op is rejected, saying why.
func (fe *FuncEmitter) f32Operand(op *ir.Operation, x, result ir.Value, why string) (value.Value, ir.FloatKind) {
	k, _ := floatKind(result.Type())
	if k == ir.F64 {
		Fail(op, "'%s' on f64 cannot be compiled: %s", op.Name(), why)
	}
	return fe.toF32(fe.Val(x), k), k
}

// mapF32Intrinsic applies the f32 -> f32 intrinsic name to x (f32 or a
// vector of f32), element by element.
func (fe *FuncEmitter) mapF32Intrinsic(name string, x value.Value) value.Value {
	return fe.mapScalar(x, types.Float, func(v value.Value) value.Value {
		return fe.CallIntrinsic(name, types.Float, v)
	})
}

// log2Terms is the number of terms of the atanh series log2F64 sums:
// enough that the f32 result is correctly rounded but for rare near-ties.
const log2Terms = 7

// log2F64 returns log2 of x (f32 or a vector of f32), computed in f64: x
// (normal in f64 even when subnormal in f32) = m·2^e with m in [√½, √2),
// log2 x = e + ln(m)·log2 e with ln(m) = 2·atanh(s) = 2·Σ s^(2i+1)/(2i+1),
// s = (m-1)/(m+1). Zero, infinity, negative numbers and NaN are selected
// at the end.
func (fe *FuncEmitter) log2F64(x value.Value) value.Value {
	b := fe.B()
	dt := withElem(x.Type(), types.Double)
	it := withElem(x.Type(), types.I64)
	d := b.NewFPExt(x, dt)
	bits := b.NewBitCast(d, it)
	e := b.NewSub(b.NewLShr(bits, splatInt(it, 52)), splatInt(it, 1023))
	m := b.NewBitCast(b.NewOr(b.NewAnd(bits, splatInt(it, 1<<52-1)), splatInt(it, 1023<<52)), dt)
	// m in [1, 2): halve it above √2 so that |s| stays small.
	big := fe.fcmp(enum.FPredOGT, m, splatFloat(dt, math.Sqrt2))
	mv := b.NewSelect(big, b.NewFMul(m, splatFloat(dt, 0.5)), m)
	ev := b.NewSelect(big, b.NewAdd(e, splatInt(it, 1)), e)
	s := b.NewFDiv(b.NewFSub(mv, splatFloat(dt, 1)), b.NewFAdd(mv, splatFloat(dt, 1)))
	z := b.NewFMul(s, s)
	var p value.Value = splatFloat(dt, 1/float64(2*log2Terms-1))
	for i := log2Terms - 2; i >= 0; i-- {
		p = fe.callOverloaded("llvm.fma", nil, p, z, splatFloat(dt, 1/float64(2*i+1)))
	}
	ln := b.NewFMul(b.NewFMul(s, p), splatFloat(dt, 2))
	r64 := fe.callOverloaded("llvm.fma", nil, ln, splatFloat(dt, math.Log2E), b.NewSIToFP(ev, dt))
	r := value.Value(b.NewFPTrunc(r64, x.Type()))
	inf := splatFloat(x.Type(), math.Inf(1))
	r = b.NewSelect(fe.fcmp(enum.FPredOEQ, x, inf), inf, r)
	r = b.NewSelect(fe.fcmp(enum.FPredOEQ, x, splatFloat(x.Type(), 0)), splatFloat(x.Type(), math.Inf(-1)), r)
	// Unordered or below zero: NaN and negative numbers (not -0).
	return b.NewSelect(fe.fcmp(enum.FPredULT, x, splatFloat(x.Type(), 0)), splatFloat(x.Type(), math.NaN()), r)
}
