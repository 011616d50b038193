package codegen

import (
	"math"

	"github.com/llir/llvm/ir/constant"
	"github.com/llir/llvm/ir/enum"
	"github.com/llir/llvm/ir/types"
	"github.com/llir/llvm/ir/value"

	lir "github.com/llir/llvm/ir"

	mathdialect "github.com/tmac-dev/tmac/dialects/math"
	"github.com/tmac-dev/tmac/ir"
)

// The math dialect, scalar and 1-D vector forms (see arith.go for how tf32
// and fp8 values are represented). The transcendental functions call
// NVIDIA's libdevice, as upstream MLIR's NVVM lowering does, or with
// fastmath<afn> use PTX's approximations; which, and how accurately, is
// declared with each op (dialects/math/gpu.go). Rounding, copysign,
// classification, clampf and the integer ops are exact instructions.

func init() {
	Register(lowerAbsf, mathdialect.Absf)
	Register(lowerSqrt, mathdialect.Sqrt)
	Register(lowerFma, mathdialect.Fma)
	Register(lowerLog2, mathdialect.Log2)
	for name := range mathdialect.Lowerings {
		if name != mathdialect.Log2 && name != mathdialect.Fpowi {
			Register(lowerFloatFunc, name)
		}
	}
	Register(lowerRounding, mathdialect.Ceil, mathdialect.Floor, mathdialect.Round, mathdialect.Roundeven, mathdialect.Trunc)
	Register(lowerCopysign, mathdialect.Copysign)
	Register(lowerClampf, mathdialect.Clampf)
	Register(lowerClassification, mathdialect.Isfinite, mathdialect.Isinf, mathdialect.Isnan, mathdialect.Isnormal)
	Register(lowerSincos, mathdialect.Sincos)
	Register(lowerFpowi, mathdialect.Fpowi)
	Register(lowerIntUnary, mathdialect.Absi, mathdialect.Ctlz, mathdialect.Cttz, mathdialect.Ctpop)
	Register(lowerIpowi, mathdialect.Ipowi)
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

// approxFuncs compute float ops on f32 (or vectors of f32) with PTX's
// approximations, for fastmath<afn>; dialects/math/gpu.go documents them.
var approxFuncs = map[string]func(fe *FuncEmitter, xs ...value.Value) value.Value{
	// exp(x) = 2^(x·log2 e), the product rounded to f32 (llc has no
	// llvm.exp for NVPTX).
	mathdialect.Exp: func(fe *FuncEmitter, xs ...value.Value) value.Value {
		y := fe.B().NewFMul(xs[0], splatFloat(xs[0].Type(), float64(float32(math.Log2E))))
		return fe.mapF32Intrinsic("llvm.nvvm.ex2.approx.f", y)
	},
	// 2^x with subnormal results flushed to zero (ex2.approx.ftz.f32: one
	// MUFU.EX2, where ex2.approx.f32 adds a range test and two multiplies
	// to reach the subnormal results).
	mathdialect.Exp2: func(fe *FuncEmitter, xs ...value.Value) value.Value {
		return fe.mapF32Intrinsic("llvm.nvvm.ex2.approx.ftz.f", xs[0])
	},
	mathdialect.Log:   func(fe *FuncEmitter, xs ...value.Value) value.Value { return fe.lg2Times(xs[0], math.Ln2) },
	mathdialect.Log10: func(fe *FuncEmitter, xs ...value.Value) value.Value { return fe.lg2Times(xs[0], math.Ln2/math.Ln10) },
	mathdialect.Log2: func(fe *FuncEmitter, xs ...value.Value) value.Value {
		return fe.mapF32Intrinsic("llvm.nvvm.lg2.approx.f", xs[0])
	},
	mathdialect.Sin: func(fe *FuncEmitter, xs ...value.Value) value.Value {
		return fe.mapF32Intrinsic("llvm.nvvm.sin.approx.f", xs[0])
	},
	mathdialect.Cos: func(fe *FuncEmitter, xs ...value.Value) value.Value {
		return fe.mapF32Intrinsic("llvm.nvvm.cos.approx.f", xs[0])
	},
	mathdialect.Tan: func(fe *FuncEmitter, xs ...value.Value) value.Value {
		s := fe.mapF32Intrinsic("llvm.nvvm.sin.approx.f", xs[0])
		c := fe.mapF32Intrinsic("llvm.nvvm.cos.approx.f", xs[0])
		return fe.mapLanes(types.Float, func(l ...value.Value) value.Value {
			return fe.CallIntrinsic("llvm.nvvm.div.approx.f", types.Float, l...)
		}, s, c)
	},
	mathdialect.Tanh: func(fe *FuncEmitter, xs ...value.Value) value.Value {
		return fe.mapF32Intrinsic("llvm.nvvm.tanh.approx.f32", xs[0])
	},
	// pow(x, y) = 2^(y·log2 x) (CUDA's __powf).
	mathdialect.Powf: func(fe *FuncEmitter, xs ...value.Value) value.Value {
		l := fe.mapF32Intrinsic("llvm.nvvm.lg2.approx.f", xs[0])
		return fe.mapF32Intrinsic("llvm.nvvm.ex2.approx.f", fe.B().NewFMul(xs[1], l))
	},
}

// instrFuncs compute the f32 case of a float op with instructions instead
// of libdevice (dialects/math/gpu.go: Lowering.Instr), whatever the
// fastmath flags.
var instrFuncs = map[string]func(fe *FuncEmitter, xs ...value.Value) value.Value{
	// libdevice's exp2f and rsqrtf are these instructions themselves.
	mathdialect.Exp2: func(fe *FuncEmitter, xs ...value.Value) value.Value {
		return fe.mapF32Intrinsic("llvm.nvvm.ex2.approx.f", xs[0])
	},
	mathdialect.Rsqrt: func(fe *FuncEmitter, xs ...value.Value) value.Value {
		return fe.mapF32Intrinsic("llvm.nvvm.rsqrt.approx.f", xs[0])
	},
	mathdialect.Log2: func(fe *FuncEmitter, xs ...value.Value) value.Value { return fe.log2F64(xs[0]) },
}

// lg2Times returns lg2.approx(x)·c, the product in f32.
func (fe *FuncEmitter) lg2Times(x value.Value, c float64) value.Value {
	l := fe.mapF32Intrinsic("llvm.nvvm.lg2.approx.f", x)
	return fe.B().NewFMul(l, splatFloat(x.Type(), float64(float32(c))))
}

// lowerFloatFunc lowers a float op of one or two operands listed in
// mathdialect.Lowerings: f64 through libdevice; f32 (and the narrower
// formats, through f32) through the op's approximation with fastmath<afn>,
// its instructions, or libdevice.
func lowerFloatFunc(fe *FuncEmitter, op *ir.Operation) {
	fe.Set(op.Result(0), fe.floatFunc(op, op.Name(), fe.Vals(op.Operands())))
}

// floatFunc computes the float op name (a key of mathdialect.Lowerings) on
// xs, for op (which gives the type and the fastmath flags).
func (fe *FuncEmitter) floatFunc(op *ir.Operation, name string, xs []value.Value) value.Value {
	l := mathdialect.Lowerings[name]
	k, _ := floatKind(op.Operand(0).Type())
	if k == ir.F64 {
		return fe.mapLanes(types.Double, func(ls ...value.Value) value.Value {
			return fe.callLibdevice(op, l.F64, types.Double, ls...)
		}, xs...)
	}
	for i, x := range xs {
		xs[i] = fe.toF32(x, k)
	}
	var r value.Value
	if f := approxFuncs[name]; f != nil && mathdialect.Approx(op) {
		r = f(fe, xs...)
	} else if f := instrFuncs[name]; f != nil {
		r = f(fe, xs...)
	} else {
		r = fe.mapLanes(types.Float, func(ls ...value.Value) value.Value {
			return fe.callLibdevice(op, l.F32, types.Float, ls...)
		}, xs...)
	}
	return fe.fromF32(r, k)
}

// lowerLog2 computes log2(x) as math.log2's definition documents: for f32
// and narrower formats in f64 (log2F64) by default, PTX's lg2.approx.f32
// with fastmath afn; libdevice's log2 for f64.
func lowerLog2(fe *FuncEmitter, op *ir.Operation) {
	l := mathdialect.Log2Op{Op: op}
	fe.Set(l.Result(), fe.floatFunc(op, mathdialect.Log2, []value.Value{fe.Val(l.Operand())}))
}

// lowerSincos computes the sine and the cosine as math.sin and math.cos
// do (libdevice's sincosf would return them through local memory).
func lowerSincos(fe *FuncEmitter, op *ir.Operation) {
	s := mathdialect.SincosOp{Op: op}
	x := fe.Val(s.Operand())
	fe.Set(s.Sin(), fe.floatFunc(op, mathdialect.Sin, []value.Value{x}))
	fe.Set(s.Cos(), fe.floatFunc(op, mathdialect.Cos, []value.Value{x}))
}

// lowerFpowi calls libdevice's powif (f32; narrower formats through f32)
// or powi (f64), whose power is an i32: narrower powers are sign-extended,
// wider ones clamped to i32 keeping their parity (x^n is 0, infinite or
// ±1 beyond i32, and the same for the clamped power).
func lowerFpowi(fe *FuncEmitter, op *ir.Operation) {
	p := mathdialect.FpowiOp{Op: op}
	k, _ := floatKind(p.Result().Type())
	x, n := fe.Val(p.Lhs()), fe.Val(p.Rhs())
	name, elem := mathdialect.Lowerings[mathdialect.Fpowi].F32, types.Type(types.Float)
	if k == ir.F64 {
		name, elem = mathdialect.Lowerings[mathdialect.Fpowi].F64, types.Double
	} else {
		x = fe.toF32(x, k)
	}
	r := fe.mapLanes(elem, func(ls ...value.Value) value.Value {
		return fe.callLibdevice(op, name, elem, ls[0], fe.powiExponent(ls[1]))
	}, x, n)
	if k != ir.F64 {
		r = fe.fromF32(r, k)
	}
	fe.Set(p.Result(), r)
}

// powiExponent converts a scalar integer power to the i32 libdevice takes
// (mathdialect.FpowiExponent).
func (fe *FuncEmitter) powiExponent(n value.Value) value.Value {
	b := fe.B()
	t := n.Type().(*types.IntType)
	switch {
	case t.BitSize < 32:
		return b.NewSExt(n, types.I32)
	case t.BitSize == 32:
		return n
	}
	odd := b.NewTrunc(b.NewAnd(n, constant.NewInt(t, 1)), types.I32)
	hi := b.NewAdd(I32(math.MaxInt32-1), odd)
	lo := b.NewAdd(I32(math.MinInt32), odd)
	r := b.NewSelect(b.NewICmp(enum.IPredSGT, n, constant.NewInt(t, math.MaxInt32)), hi, b.NewTrunc(n, types.I32))
	return b.NewSelect(b.NewICmp(enum.IPredSLT, n, constant.NewInt(t, math.MinInt32)), lo, r)
}

// roundingIntrinsics are the LLVM intrinsics of the rounding ops (PTX's
// cvt.rpi, cvt.rmi, cvt.rni, cvt.rzi; llvm.round is expanded by llc).
var roundingIntrinsics = map[string]string{
	mathdialect.Ceil:      "llvm.ceil",
	mathdialect.Floor:     "llvm.floor",
	mathdialect.Round:     "llvm.round",
	mathdialect.Roundeven: "llvm.roundeven",
	mathdialect.Trunc:     "llvm.trunc",
}

// lowerRounding rounds to an integral value. tf32 and fp8 go through f32:
// an integral value of a format is representable in it, so rounding back
// is exact.
func lowerRounding(fe *FuncEmitter, op *ir.Operation) {
	k, _ := floatKind(op.Result(0).Type())
	x := fe.Val(op.Operand(0))
	if native(k) {
		fe.Set(op.Result(0), fe.callOverloaded(roundingIntrinsics[op.Name()], nil, x))
		return
	}
	r := fe.callOverloaded(roundingIntrinsics[op.Name()], nil, fe.toF32(x, k))
	fe.Set(op.Result(0), fe.fromF32(r, k))
}

// lowerCopysign: llvm.copysign (PTX copysign, or sign-bit arithmetic for
// f16 and bf16), on the f32 container for tf32, and on the byte for fp8.
func lowerCopysign(fe *FuncEmitter, op *ir.Operation) {
	c := mathdialect.CopysignOp{Op: op}
	k, _ := floatKind(c.Result().Type())
	x, y := fe.Val(c.Lhs()), fe.Val(c.Rhs())
	if isFP8(k) {
		b := fe.B()
		mag := b.NewAnd(x, splatInt(x.Type(), 0x7F))
		fe.Set(c.Result(), b.NewOr(mag, b.NewAnd(y, splatInt(y.Type(), -0x80))))
		return
	}
	fe.Set(c.Result(), fe.callOverloaded("llvm.copysign", nil, x, y))
}

// lowerClampf is maximumf(minimumf(x, max), min) (math.clampf's
// definition): PTX's min.NaN and max.NaN; tf32 and fp8 through f32, exact
// since the result is one of the operands.
func lowerClampf(fe *FuncEmitter, op *ir.Operation) {
	c := mathdialect.ClampfOp{Op: op}
	k, _ := floatKind(c.Result().Type())
	x, lo, hi := fe.Val(c.Operand()), fe.Val(c.Min()), fe.Val(c.Max())
	if !native(k) {
		x, lo, hi = fe.toF32(x, k), fe.toF32(lo, k), fe.toF32(hi, k)
	}
	r := fe.callOverloaded("llvm.maximum", nil, fe.callOverloaded("llvm.minimum", nil, x, hi), lo)
	if !native(k) {
		r = fe.fromF32(r, k)
	}
	fe.Set(c.Result(), r)
}

// lowerClassification compares the operand (f64, or exactly in f32) with
// infinity and the smallest normal number of its format.
func lowerClassification(fe *FuncEmitter, op *ir.Operation) {
	k, _ := floatKind(op.Operand(0).Type())
	x := fe.Val(op.Operand(0))
	if k != ir.F64 {
		x = fe.toF32(x, k)
	}
	t := x.Type()
	abs := func() value.Value { return fe.callOverloaded("llvm.fabs", nil, x) }
	inf := splatFloat(t, math.Inf(1))
	var r value.Value
	switch op.Name() {
	case mathdialect.Isnan:
		r = fe.fcmp(enum.FPredUNO, x, x)
	case mathdialect.Isinf:
		r = fe.fcmp(enum.FPredOEQ, abs(), inf)
	case mathdialect.Isfinite:
		r = fe.fcmp(enum.FPredOLT, abs(), inf)
	case mathdialect.Isnormal:
		a := abs()
		r = fe.B().NewAnd(fe.fcmp(enum.FPredOLT, a, inf), fe.fcmp(enum.FPredOGE, a, splatFloat(t, mathdialect.SmallestNormal(k))))
	}
	fe.Set(op.Result(0), r)
}

// intIntrinsics are the LLVM intrinsics of the integer ops; all but ctpop
// take an i1 saying whether their special input (the most negative value,
// zero) is poison: false.
var intIntrinsics = map[string]string{
	mathdialect.Absi:  "llvm.abs",
	mathdialect.Ctlz:  "llvm.ctlz",
	mathdialect.Cttz:  "llvm.cttz",
	mathdialect.Ctpop: "llvm.ctpop",
}

func lowerIntUnary(fe *FuncEmitter, op *ir.Operation) {
	x := fe.Val(op.Operand(0))
	args := []value.Value{x}
	if op.Name() != mathdialect.Ctpop {
		args = append(args, constant.False)
	}
	fe.Set(op.Result(0), fe.callOverloaded(intIntrinsics[op.Name()], nil, args...))
}

// lowerIpowi computes x^n by square-and-multiply over the bits of n (a loop
// per element), wrapping; a negative n gives mathdialect.Ipow's values (0
// for x = 0, which is undefined upstream).
func lowerIpowi(fe *FuncEmitter, op *ir.Operation) {
	p := mathdialect.IpowiOp{Op: op}
	x, n := fe.Val(p.Lhs()), fe.Val(p.Rhs())
	elem := x.Type()
	if vt, ok := elem.(*types.VectorType); ok {
		elem = vt.ElemType
	}
	fe.Set(p.Result(), fe.mapLanes(elem, func(ls ...value.Value) value.Value { return fe.ipow(ls[0], ls[1]) }, x, n))
}

// ipow is lowerIpowi on scalars.
func (fe *FuncEmitter) ipow(x, n value.Value) value.Value {
	t := x.Type().(*types.IntType)
	c := func(v int64) constant.Constant {
		if t.BitSize == 1 {
			v &= 1 // i1: -1 is true
		}
		return constant.NewInt(t, v)
	}
	b := fe.B()
	neg := b.NewICmp(enum.IPredSLT, n, c(0))
	e0 := b.NewSelect(neg, c(0), n)
	pre := b
	loop, exit := fe.NewBlock("ipow"), fe.NewBlock("ipow.done")
	b.NewBr(loop)
	fe.SetBlock(loop)
	r := loop.NewPhi(lir.NewIncoming(c(1), pre))
	base := loop.NewPhi(lir.NewIncoming(x, pre))
	e := loop.NewPhi(lir.NewIncoming(e0, pre))
	odd := loop.NewICmp(enum.IPredNE, loop.NewAnd(e, c(1)), c(0))
	r2 := loop.NewSelect(odd, loop.NewMul(r, base), r)
	base2 := loop.NewMul(base, base)
	e2 := loop.NewLShr(e, c(1))
	r.Incs = append(r.Incs, lir.NewIncoming(r2, loop))
	base.Incs = append(base.Incs, lir.NewIncoming(base2, loop))
	e.Incs = append(e.Incs, lir.NewIncoming(e2, loop))
	loop.NewCondBr(loop.NewICmp(enum.IPredEQ, e2, c(0)), exit, loop)
	fe.SetBlock(exit)
	// Negative powers: 1 for x = 1, ±1 by the parity of n for x = -1, else 0.
	oddN := exit.NewICmp(enum.IPredNE, exit.NewAnd(n, c(1)), c(0))
	minus := exit.NewSelect(oddN, c(-1), c(1))
	small := exit.NewSelect(exit.NewICmp(enum.IPredEQ, x, c(-1)), minus, c(0))
	small = exit.NewSelect(exit.NewICmp(enum.IPredEQ, x, c(1)), c(1), small)
	return exit.NewSelect(neg, small, r2)
}

// mapLanes applies f to the scalars of xs (or to each lane of xs when they
// are vectors of one length), building a value whose element type is elem.
// f may add blocks: each lane is inserted where f left off.
func (fe *FuncEmitter) mapLanes(elem types.Type, f func(xs ...value.Value) value.Value, xs ...value.Value) value.Value {
	vt, ok := xs[0].Type().(*types.VectorType)
	if !ok {
		return f(xs...)
	}
	var acc value.Value = constant.NewUndef(types.NewVector(vt.Len, elem))
	for i := uint64(0); i < vt.Len; i++ {
		lanes := make([]value.Value, len(xs))
		for j, x := range xs {
			lanes[j] = fe.B().NewExtractElement(x, I32(int64(i)))
		}
		r := f(lanes...)
		acc = fe.B().NewInsertElement(acc, r, I32(int64(i)))
	}
	return acc
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
