package codegen

import (
	"fmt"
	"math"
	"math/big"

	lir "github.com/llir/llvm/ir"
	"github.com/llir/llvm/ir/constant"
	"github.com/llir/llvm/ir/enum"
	"github.com/llir/llvm/ir/types"
	"github.com/llir/llvm/ir/value"

	"github.com/tmac-dev/tmac/dialects/arith"
	"github.com/tmac-dev/tmac/ir"
)

// The arith dialect, scalar and 1-D vector forms (LLVM vectors).
//
// Integer ops map one to one onto LLVM instructions (with their overflow and
// exact flags) or onto the llvm.{s,u}{min,max} intrinsics. Float ops on f16,
// bf16, f32 and f64 map onto LLVM float instructions with the op's fastmath
// flags. Two formats have no LLVM type and need care:
//
//   - fp8 (f8E4M3FN, f8E5M2) values are i8 bit patterns. Arithmetic is done
//     in f32 and rounded back; conversions go through the NVVM cvt
//     intrinsics (sm_89+), with fix-ups so that overflow follows the IEEE
//     rules that arith constant folding uses (E5M2 overflows to infinity,
//     E4M3FN to NaN) rather than PTX's saturation. Vectors of even length
//     are rounded in pairs (one cvt per two elements); an operand clamped
//     to bounds that round to finite values needs no fix-up.
//   - tf32 values are floats whose low 13 mantissa bits are zero. Results
//     computed in f32 are rounded back to tf32 (roundTF32).
//
// Computing in f32 and rounding once more to a format of precision p is
// correctly rounded for +, -, *, / and sqrt when 24 >= 2p+2 (Figueroa's
// double-rounding theorem): p = 11 for tf32, 4 or 3 for fp8. Conversions
// from sources wider than f32 (f64, wide integers) to tf32 and fp8 first
// round to f32 with round-to-odd, which makes the second rounding correct.
// Operations with no correctly rounded lowering (fma on tf32/fp8, for
// example) are rejected.

func init() {
	Register(lowerConstant, arith.Constant)
	Register(lowerIntBinary,
		arith.Addi, arith.Subi, arith.Muli, arith.Shli,
		arith.Divui, arith.Divsi, arith.Shrui, arith.Shrsi,
		arith.Ceildivui, arith.Ceildivsi, arith.Floordivsi, arith.Remui, arith.Remsi,
		arith.Andi, arith.Ori, arith.Xori,
		arith.Maxsi, arith.Minsi, arith.Maxui, arith.Minui)
	Register(lowerFloatBinary,
		arith.Addf, arith.Subf, arith.Mulf, arith.Divf,
		arith.Maximumf, arith.Minimumf, arith.Maxnumf, arith.Minnumf, arith.Remf)
	Register(lowerAdduiExtended, arith.AdduiExtended)
	Register(lowerMulExtended, arith.MuluiExtended, arith.MulsiExtended)
	Register(func(fe *FuncEmitter, op *ir.Operation) {
		Fail(op, "'%s' is not supported on sm_90a: Hopper has no MX (block-scaled) conversions and tmac has no f8E8M0FNU scale type; "+
			"scale with arith.mulf or arith.divf and convert with arith.extf or arith.truncf", op.Name())
	}, arith.ScalingExtf, arith.ScalingTruncf)
	Register(lowerNegf, arith.Negf)
	Register(lowerCmpi, arith.Cmpi)
	Register(lowerCmpf, arith.Cmpf)
	Register(lowerSelect, arith.Select)
	Register(lowerIntCast, arith.Extui, arith.Extsi, arith.Trunci,
		arith.IndexCast, arith.IndexCastui)
	Register(lowerExtf, arith.Extf)
	Register(lowerTruncf, arith.Truncf)
	Register(lowerIntToFloat, arith.Sitofp, arith.Uitofp)
	Register(lowerFloatToInt, arith.Fptosi, arith.Fptoui)
	Register(lowerBitcast, arith.Bitcast)
}

// ---------------------------------------------------------------------------
// Types and flags

// elemType returns the element type of a scalar or vector type.
func elemType(t ir.Type) ir.Type {
	if v, ok := t.(*ir.VectorType); ok {
		return v.Elem
	}
	return t
}

// floatKind returns the float format of a scalar or vector type.
func floatKind(t ir.Type) (ir.FloatKind, bool) {
	if ft, ok := elemType(t).(*ir.FloatType); ok {
		return ft.Kind, true
	}
	return 0, false
}

func isFP8(k ir.FloatKind) bool { return k == ir.F8E4M3FN || k == ir.F8E5M2 }

// native reports whether LLVM float arithmetic on the format is correctly
// rounded as it is (f16, bf16, f32, f64).
func native(k ir.FloatKind) bool { return k == ir.F16 || k == ir.BF16 || k == ir.F32 || k == ir.F64 }

// withElem returns t (a scalar or vector LLVM type) with its element type
// replaced by elem.
func withElem(t, elem types.Type) types.Type {
	if v, ok := t.(*types.VectorType); ok {
		return types.NewVector(v.Len, elem)
	}
	return elem
}

// intrinsicSuffix is the overload suffix of an LLVM intrinsic for type t
// (i32, f16, bf16, v4f32, ...).
func intrinsicSuffix(t types.Type) string {
	switch t := t.(type) {
	case *types.IntType:
		return fmt.Sprintf("i%d", t.BitSize)
	case *types.FloatType:
		if b := floatBitsOf(t); b != 0 {
			return fmt.Sprintf("f%d", b)
		}
	case *bfloatType:
		return "bf16"
	case *types.VectorType:
		return fmt.Sprintf("v%d%s", t.Len, intrinsicSuffix(t.ElemType))
	}
	panic("no intrinsic suffix for " + t.String())
}

// callOverloaded calls the overloaded intrinsic base.<suffix of args[0]>,
// returning the type of args[0].
func (fe *FuncEmitter) callOverloaded(base string, fm []enum.FastMathFlag, args ...value.Value) value.Value {
	t := args[0].Type()
	c := fe.CallIntrinsic(base+"."+intrinsicSuffix(t), t, args...)
	c.FastMathFlags = fm
	return c
}

// fastMath maps an op's #arith.fastmath flags to LLVM fast-math flags.
func fastMath(op *ir.Operation) []enum.FastMathFlag {
	f := arith.FastMathOf(op)
	// Bit order of #arith.fastmath: reassoc, nnan, ninf, nsz, arcp, contract, afn.
	order := []enum.FastMathFlag{
		enum.FastMathFlagReassoc, enum.FastMathFlagNNaN, enum.FastMathFlagNInf,
		enum.FastMathFlagNSZ, enum.FastMathFlagARcp, enum.FastMathFlagContract, enum.FastMathFlagAFn,
	}
	var out []enum.FastMathFlag
	for i, fl := range order {
		if f&(1<<i) != 0 {
			out = append(out, fl)
		}
	}
	return out
}

// overflow maps an op's #arith.overflow flags (nsw=1, nuw=2).
func overflow(op *ir.Operation) []enum.OverflowFlag {
	var out []enum.OverflowFlag
	if d, ok := op.Attr("overflowFlags").(*ir.DialectAttr); ok {
		if f, ok := d.Data.(arith.OverflowFlags); ok {
			if f&1 != 0 {
				out = append(out, enum.OverflowFlagNSW)
			}
			if f&2 != 0 {
				out = append(out, enum.OverflowFlagNUW)
			}
		}
	}
	return out
}

// ---------------------------------------------------------------------------
// Constants

// floatBits is an LLVM half, float or double constant written in hex, so
// every value (NaN payloads included) is exact.
type floatBits struct {
	typ  *types.FloatType
	bits uint64 // in the type's own encoding
}

func (c *floatBits) String() string   { return c.typ.String() + " " + c.Ident() }
func (c *floatBits) Type() types.Type { return c.typ }
func (c *floatBits) IsConstant()      {}
func (c *floatBits) Ident() string {
	switch c.typ.Kind {
	case types.FloatKindHalf:
		return fmt.Sprintf("0xH%04X", c.bits)
	case types.FloatKindFloat:
		// LLVM writes float constants as the double of the same value.
		b := uint32(c.bits)
		f := math.Float32frombits(b)
		var d uint64
		if f != f {
			d = uint64(b>>31)<<63 | 0x7FF<<52 | uint64(b&0x7FFFFF)<<29
		} else {
			d = math.Float64bits(float64(f))
		}
		return fmt.Sprintf("0x%016X", d)
	}
	return fmt.Sprintf("0x%016X", c.bits)
}

var _ constant.Constant = (*floatBits)(nil)

// floatConst returns the LLVM constant of value v in format k.
func floatConst(v float64, k ir.FloatKind) constant.Constant {
	switch k {
	case ir.F16:
		return &floatBits{types.Half, ir.FloatToBits(v, k)}
	case ir.BF16:
		return &BFloatConst{Bits: uint16(ir.FloatToBits(v, k))}
	case ir.F32:
		return &floatBits{types.Float, ir.FloatToBits(v, k)}
	case ir.TF32:
		// tf32 values are exact f32 values.
		return &floatBits{types.Float, ir.FloatToBits(ir.RoundToFloatKind(v, ir.TF32), ir.F32)}
	case ir.F64:
		return &floatBits{types.Double, ir.FloatToBits(v, k)}
	}
	// fp8: the byte, as a (signed) i8.
	return constant.NewInt(types.I8, int64(int8(ir.FloatToBits(v, k))))
}

// intConst returns the LLVM constant of an integer attribute value.
func intConst(t *types.IntType, a *ir.IntegerAttr) constant.Constant {
	if a.Big != nil {
		return &constant.Int{Typ: t, X: new(big.Int).Set(a.Big)}
	}
	return constant.NewInt(t, a.Int())
}

func lowerConstant(fe *FuncEmitter, op *ir.Operation) {
	c := arith.ConstantOp{Op: op}
	rt := c.Result().Type()
	fe.Set(c.Result(), constantValue(op, c.Value(), rt, fe.Type(op, rt)))
}

func constantValue(op *ir.Operation, a ir.Attribute, irT ir.Type, t types.Type) constant.Constant {
	switch a := a.(type) {
	case *ir.IntegerAttr:
		if it, ok := t.(*types.IntType); ok {
			return intConst(it, a)
		}
	case *ir.FloatAttr:
		if k, ok := floatKind(irT); ok {
			return floatConst(a.Value, k)
		}
	case *ir.DenseAttr:
		vt, ok := t.(*types.VectorType)
		if !ok {
			break
		}
		n := int(vt.Len)
		elems := make([]constant.Constant, n)
		elem := elemType(irT)
		for i := range elems {
			j := i
			if a.Splat {
				j = 0
			}
			if a.Floats != nil {
				elems[i] = floatConst(a.Floats[j], elem.(*ir.FloatType).Kind)
			} else {
				it, ok := vt.ElemType.(*types.IntType)
				if !ok {
					Fail(op, "integer elements for a vector of '%s'", elem)
				}
				elems[i] = constant.NewInt(it, a.Ints[j])
			}
		}
		return constant.NewVector(vt, elems...)
	}
	Fail(op, "constant '%s' cannot be lowered to LLVM IR", a)
	return nil
}

// ---------------------------------------------------------------------------
// Integer arithmetic

// lowerIntBinary and lowerFloatBinary lower every binary op of their kind:
// each declares its operands lhs and rhs (operands 0 and 1), so they read
// them by position rather than through eighteen views.
func lowerIntBinary(fe *FuncEmitter, op *ir.Operation) { fe.intBinary(op, op.Name()) }

// intBinary lowers op as the arith integer op name (the index dialect's ops
// lower as their arith counterparts on i64).
func (fe *FuncEmitter) intBinary(op *ir.Operation, name string) {
	x, y := fe.Val(op.Operand(0)), fe.Val(op.Operand(1))
	if it, ok := elemType(op.Result(0).Type()).(*ir.IntegerType); ok && it.Width > 64 {
		switch name {
		case arith.Divui, arith.Divsi, arith.Ceildivui, arith.Ceildivsi, arith.Floordivsi, arith.Remui, arith.Remsi:
			// NVPTX has no i128 division (it would be a library call).
			Fail(op, "'%s' on integers wider than 64 bits cannot be compiled for the GPU", op.Name())
		}
	}
	b := fe.B()
	var r value.Value
	switch name {
	case arith.Addi:
		i := b.NewAdd(x, y)
		i.OverflowFlags = overflow(op)
		r = i
	case arith.Subi:
		i := b.NewSub(x, y)
		i.OverflowFlags = overflow(op)
		r = i
	case arith.Muli:
		i := b.NewMul(x, y)
		i.OverflowFlags = overflow(op)
		r = i
	case arith.Shli:
		i := b.NewShl(x, y)
		i.OverflowFlags = overflow(op)
		r = i
	case arith.Divui:
		i := b.NewUDiv(x, y)
		i.Exact = op.HasAttr("isExact")
		r = i
	case arith.Divsi:
		i := b.NewSDiv(x, y)
		i.Exact = op.HasAttr("isExact")
		r = i
	case arith.Shrui:
		i := b.NewLShr(x, y)
		i.Exact = op.HasAttr("isExact")
		r = i
	case arith.Shrsi:
		i := b.NewAShr(x, y)
		i.Exact = op.HasAttr("isExact")
		r = i
	case arith.Ceildivui:
		// ceil(x/y) = x == 0 ? 0 : (x-1)/y + 1, which cannot overflow.
		zero := zero(x.Type())
		one := oneOf(x.Type())
		q := b.NewUDiv(b.NewSub(x, one), y)
		r = b.NewSelect(b.NewICmp(enum.IPredEQ, x, zero), zero, b.NewAdd(q, one))
	case arith.Ceildivsi, arith.Floordivsi:
		// The truncated quotient q, moved by one when the remainder is not
		// zero and the signs of x and y agree (ceil: q+1) or differ
		// (floor: q-1). Overflow only where sdiv's is undefined.
		q := b.NewSDiv(x, y)
		inexact := b.NewICmp(enum.IPredNE, b.NewSub(x, b.NewMul(q, y)), zero(x.Type()))
		pred, step := enum.IPredSGE, oneOf(x.Type())
		if name == arith.Floordivsi {
			pred, step = enum.IPredSLT, splatInt(x.Type(), -1)
		}
		signs := b.NewICmp(pred, b.NewXor(x, y), zero(x.Type()))
		r = b.NewSelect(b.NewAnd(inexact, signs), b.NewAdd(q, step), q)
	case arith.Remui:
		r = b.NewURem(x, y)
	case arith.Remsi:
		r = b.NewSRem(x, y)
	case arith.Andi:
		r = b.NewAnd(x, y)
	case arith.Ori:
		r = b.NewOr(x, y)
	case arith.Xori:
		r = b.NewXor(x, y)
	case arith.Maxsi:
		r = fe.callOverloaded("llvm.smax", nil, x, y)
	case arith.Minsi:
		r = fe.callOverloaded("llvm.smin", nil, x, y)
	case arith.Maxui:
		r = fe.callOverloaded("llvm.umax", nil, x, y)
	case arith.Minui:
		r = fe.callOverloaded("llvm.umin", nil, x, y)
	}
	fe.Set(op.Result(0), r)
}

// lowerAdduiExtended: the sum, and the carry as sum < lhs (unsigned).
func lowerAdduiExtended(fe *FuncEmitter, op *ir.Operation) {
	a := arith.AdduiExtendedOp{Op: op}
	x, y := fe.Val(a.Lhs()), fe.Val(a.Rhs())
	sum := fe.B().NewAdd(x, y)
	fe.Set(a.Sum(), sum)
	fe.Set(a.Overflow(), fe.B().NewICmp(enum.IPredULT, sum, x))
}

// lowerMulExtended multiplies at twice the width (zero- or sign-extended
// operands) and splits the product; llc selects mul.lo and mul.hi.
func lowerMulExtended(fe *FuncEmitter, op *ir.Operation) {
	x, y := fe.Val(op.Operand(0)), fe.Val(op.Operand(1))
	w := intBits(x.Type())
	if w > 64 {
		Fail(op, "'%s' on integers wider than 64 bits cannot be compiled for the GPU", op.Name())
	}
	b := fe.B()
	wide := withElem(x.Type(), types.NewInt(2*w))
	ext := func(v value.Value) value.Value {
		if op.Name() == arith.MulsiExtended {
			return b.NewSExt(v, wide)
		}
		return b.NewZExt(v, wide)
	}
	p := b.NewMul(ext(x), ext(y))
	fe.Set(op.Result(0), b.NewMul(x, y))
	fe.Set(op.Result(1), b.NewTrunc(b.NewLShr(p, splatInt(wide, int64(w))), x.Type()))
}

// oneOf returns the constant 1 of an integer or integer-vector type.
func oneOf(t types.Type) constant.Constant {
	return splatInt(t, 1)
}

// splatInt returns n in integer type t, splatted when t is a vector.
func splatInt(t types.Type, n int64) constant.Constant {
	if v, ok := t.(*types.VectorType); ok {
		e := constant.NewInt(v.ElemType.(*types.IntType), n)
		elems := make([]constant.Constant, v.Len)
		for i := range elems {
			elems[i] = e
		}
		return constant.NewVector(v, elems...)
	}
	return constant.NewInt(t.(*types.IntType), n)
}

// splatFloat returns the f32/f64 constant v, splatted when t is a vector.
func splatFloat(t types.Type, v float64) constant.Constant {
	elem := t
	if vt, ok := t.(*types.VectorType); ok {
		elem = vt.ElemType
	}
	var c constant.Constant
	if elem.Equal(types.Double) {
		c = floatConst(v, ir.F64)
	} else {
		c = floatConst(v, ir.F32)
	}
	if vt, ok := t.(*types.VectorType); ok {
		elems := make([]constant.Constant, vt.Len)
		for i := range elems {
			elems[i] = c
		}
		return constant.NewVector(vt, elems...)
	}
	return c
}

// ---------------------------------------------------------------------------
// Float arithmetic

func lowerFloatBinary(fe *FuncEmitter, op *ir.Operation) {
	k, _ := floatKind(op.Result(0).Type())
	fm := fastMath(op)
	x, y := fe.Val(op.Operand(0)), fe.Val(op.Operand(1))
	if !native(k) {
		x, y = fe.toF32(x, k), fe.toF32(y, k)
	}
	b := fe.B()
	var r value.Value
	switch op.Name() {
	case arith.Addf:
		i := b.NewFAdd(x, y)
		i.FastMathFlags = fm
		r = i
	case arith.Subf:
		i := b.NewFSub(x, y)
		i.FastMathFlags = fm
		r = i
	case arith.Mulf:
		i := b.NewFMul(x, y)
		i.FastMathFlags = fm
		r = i
	case arith.Divf:
		i := b.NewFDiv(x, y)
		i.FastMathFlags = fm
		r = i
	case arith.Maximumf:
		// NaN-propagating maximum, -0 < +0: max.NaN on sm_80+.
		r = fe.callOverloaded("llvm.maximum", fm, x, y)
	case arith.Minimumf:
		r = fe.callOverloaded("llvm.minimum", fm, x, y)
	case arith.Maxnumf:
		// IEEE maxNum: a NaN operand gives the other (max.f32 and kin).
		r = fe.callOverloaded("llvm.maxnum", fm, x, y)
	case arith.Minnumf:
		r = fe.callOverloaded("llvm.minnum", fm, x, y)
	case arith.Remf:
		r = fe.remf(x, y)
	}
	if !native(k) {
		r = fe.fromF32(r, k)
	}
	fe.Set(op.Result(0), r)
}

// remf returns C's fmod of x and y (scalars or vectors of half, bfloat,
// float or double), exactly: see remF64.
func (fe *FuncEmitter) remf(x, y value.Value) value.Value {
	elem := x.Type()
	if vt, ok := elem.(*types.VectorType); ok {
		elem = vt.ElemType
	}
	// Element by element: y's element i is taken beside x's.
	i := 0
	var ys []value.Value
	if _, ok := y.Type().(*types.VectorType); ok {
		ys = fe.elements(y)
	}
	return fe.mapScalar(x, elem, func(v value.Value) value.Value {
		w := y
		if ys != nil {
			w = ys[i]
		}
		i++
		return fe.exactFloatCast(fe.remF64(fe.exactFloatCast(v, types.Double), fe.exactFloatCast(w, types.Double)), elem)
	})
}

// elements extracts the elements of a vector value.
func (fe *FuncEmitter) elements(v value.Value) []value.Value {
	n := v.Type().(*types.VectorType).Len
	out := make([]value.Value, n)
	for i := range out {
		out[i] = fe.B().NewExtractElement(v, I32(int64(i)))
	}
	return out
}

// remChunk is the number of quotient bits remF64 produces per step: a
// remainder below 2^53 shifted left by 11 stays below 2^64.
const remChunk = 11

// remF64 returns fmod(x, y) for doubles, exactly, by long division of the
// significands: with |x| = mx·2^ex and |y| = my·2^ey (mx, my integers below
// 2^53, subnormals included), |x| mod |y| = (mx·2^(ex-ey) mod my)·2^ey,
// computed remChunk bits at a time in a loop, then given x's sign. NaN for
// a NaN operand, an infinite x or a zero y; x itself where |x| < |y| (an
// infinite y included). Values of narrower formats are exact in f64, and
// so is their remainder, so the caller converts exactly on either side.
func (fe *FuncEmitter) remF64(x, y value.Value) value.Value {
	b := fe.B()
	const mant, inf = 1<<52 - 1, 0x7FF << 52
	i64 := func(n int64) constant.Constant { return I64(n) }
	bx, by := b.NewBitCast(x, types.I64), b.NewBitCast(y, types.I64)
	ax, ay := b.NewAnd(bx, i64(math.MaxInt64)), b.NewAnd(by, i64(math.MaxInt64))
	special := b.NewOr(b.NewOr(b.NewICmp(enum.IPredUGE, ax, i64(inf)), b.NewICmp(enum.IPredUGT, ay, i64(inf))), b.NewICmp(enum.IPredEQ, ay, i64(0)))
	early := b.NewSelect(special, floatConst(math.NaN(), ir.F64), x)
	done := b.NewOr(special, b.NewICmp(enum.IPredULT, ax, ay))
	// Significand and exponent; a subnormal's exponent field 0 counts as 1.
	split := func(a value.Value) (m, e value.Value) {
		e = b.NewLShr(a, i64(52))
		m = b.NewAnd(a, i64(mant))
		normal := b.NewICmp(enum.IPredNE, e, i64(0))
		return b.NewOr(m, b.NewSelect(normal, i64(mant+1), i64(0))), b.NewSelect(normal, e, i64(1))
	}
	mx, ex := split(ax)
	my, ey := split(ay)
	entry := fe.cur
	loop := fe.NewBlock("rem.loop")
	tail := fe.NewBlock("rem.tail")
	exit := fe.NewBlock("rem.exit")

	// r = (r << s) mod my for s = min(d, remChunk) until d = 0; the first
	// step (s = 0 when the exponents are equal) reduces mx itself.
	diff := b.NewSub(ex, ey)
	entry.NewCondBr(done, exit, loop)
	fe.cur = loop
	r := newPhi(loop, types.I64, lir.NewIncoming(mx, entry))
	d := newPhi(loop, types.I64, lir.NewIncoming(diff, entry))
	s := fe.callOverloaded("llvm.umin", nil, d, i64(remChunk))
	r1 := loop.NewURem(loop.NewShl(r, s), my)
	d1 := loop.NewSub(d, s)
	r.Incs = append(r.Incs, lir.NewIncoming(r1, loop))
	d.Incs = append(d.Incs, lir.NewIncoming(d1, loop))
	loop.NewCondBr(loop.NewICmp(enum.IPredUGT, d1, i64(0)), loop, tail)

	// r·2^(ey-1075), exact: 2^(ey-1075) is a normal double for ey > 52
	// and a subnormal one (bit ey-1 alone) below.
	e := tail.NewSub(ey, i64(1075))
	pow := tail.NewSelect(tail.NewICmp(enum.IPredSGE, e, i64(-1022)),
		tail.NewShl(tail.NewAdd(e, i64(1023)), i64(52)),
		tail.NewShl(i64(1), tail.NewSub(ey, i64(1))))
	mag := tail.NewFMul(tail.NewUIToFP(r1, types.Double), tail.NewBitCast(pow, types.Double))
	sign := tail.NewAnd(bx, i64(math.MinInt64))
	rem := tail.NewBitCast(tail.NewOr(tail.NewBitCast(mag, types.I64), sign), types.Double)
	tail.NewBr(exit)

	fe.cur = exit
	return newPhi(exit, types.Double, lir.NewIncoming(early, entry), lir.NewIncoming(rem, tail))
}

func lowerNegf(fe *FuncEmitter, op *ir.Operation) {
	n := arith.NegfOp{Op: op}
	k, _ := floatKind(n.Result().Type())
	x := fe.Val(n.Operand())
	if isFP8(k) {
		// Flip the sign bit of the byte (exact for every value).
		fe.Set(n.Result(), fe.B().NewXor(x, splatInt(x.Type(), -128)))
		return
	}
	i := fe.B().NewFNeg(x)
	i.FastMathFlags = fastMath(op)
	fe.Set(n.Result(), i)
}

var iPreds = []enum.IPred{
	enum.IPredEQ, enum.IPredNE, enum.IPredSLT, enum.IPredSLE, enum.IPredSGT,
	enum.IPredSGE, enum.IPredULT, enum.IPredULE, enum.IPredUGT, enum.IPredUGE,
}

// In the order of arith's CmpFPredicate.
var fPreds = []enum.FPred{
	enum.FPredFalse, enum.FPredOEQ, enum.FPredOGT, enum.FPredOGE, enum.FPredOLT,
	enum.FPredOLE, enum.FPredONE, enum.FPredORD, enum.FPredUEQ, enum.FPredUGT,
	enum.FPredUGE, enum.FPredULT, enum.FPredULE, enum.FPredUNE, enum.FPredUNO,
	enum.FPredTrue,
}

// fcmp appends an fcmp; its result type is set here because llir cannot
// compute it for bfloat operands.
func (fe *FuncEmitter) fcmp(p enum.FPred, x, y value.Value) *lir.InstFCmp {
	i := &lir.InstFCmp{Pred: p, X: x, Y: y, Typ: types.I1}
	if v, ok := x.Type().(*types.VectorType); ok {
		i.Typ = types.NewVector(v.Len, types.I1)
	}
	fe.B().Insts = append(fe.B().Insts, i)
	return i
}

// predicate returns the index of a comparison's predicate attribute a
// among n predicates.
func predicate(op *ir.Operation, a ir.Attribute, n int) int {
	ia, ok := a.(*ir.IntegerAttr)
	if !ok || ia.Int() < 0 || ia.Int() >= int64(n) {
		Fail(op, "invalid predicate")
	}
	return int(ia.Int())
}

func lowerCmpi(fe *FuncEmitter, op *ir.Operation) {
	c := arith.CmpiOp{Op: op}
	p := iPreds[predicate(op, c.Predicate(), len(iPreds))]
	fe.Set(c.Result(), fe.B().NewICmp(p, fe.Val(c.Lhs()), fe.Val(c.Rhs())))
}

func lowerCmpf(fe *FuncEmitter, op *ir.Operation) {
	c := arith.CmpfOp{Op: op}
	p := fPreds[predicate(op, c.Predicate(), len(fPreds))]
	k, _ := floatKind(c.Lhs().Type())
	x, y := fe.Val(c.Lhs()), fe.Val(c.Rhs())
	if isFP8(k) {
		x, y = fe.toF32(x, k), fe.toF32(y, k)
	}
	i := fe.fcmp(p, x, y)
	i.FastMathFlags = fastMath(op)
	fe.Set(c.Result(), i)
}

func lowerSelect(fe *FuncEmitter, op *ir.Operation) {
	s := arith.SelectOp{Op: op}
	for _, v := range []ir.Value{s.TrueValue(), s.FalseValue()} {
		if _, isMem := v.Type().(*ir.MemRefType); isMem {
			Fail(op, "'arith.select' of memrefs cannot be compiled (select the indices instead)")
		}
	}
	c, t, f := fe.Val(s.Condition()), fe.Val(s.TrueValue()), fe.Val(s.FalseValue())
	fe.Set(s.Result(), fe.B().NewSelect(c, t, f))
}

// ---------------------------------------------------------------------------
// Casts

// failOnMemRef rejects a cast whose operand in is a memref.
func failOnMemRef(op *ir.Operation, in ir.Value) {
	if _, isMem := in.Type().(*ir.MemRefType); isMem {
		Fail(op, "'%s' on memrefs cannot be compiled", op.Name())
	}
}

func intBits(t types.Type) uint64 {
	if v, ok := t.(*types.VectorType); ok {
		t = v.ElemType
	}
	return t.(*types.IntType).BitSize
}

// lowerIntCast lowers the five integer casts; each declares one operand
// (in) and one result (out), read by position.
func lowerIntCast(fe *FuncEmitter, op *ir.Operation) {
	fe.intCast(op, op.Name() == arith.Extui || op.Name() == arith.IndexCastui)
}

// intCast converts op's one integer operand to its result's width,
// zero-extending if unsigned, else sign-extending, or truncating.
func (fe *FuncEmitter) intCast(op *ir.Operation, unsigned bool) {
	in := op.Operand(0)
	failOnMemRef(op, in)
	x := fe.Val(in)
	to := fe.Type(op, op.Result(0).Type())
	from, want := intBits(x.Type()), intBits(to)
	b := fe.B()
	var r value.Value
	switch {
	case from == want:
		r = x
	case from > want:
		// trunci's overflow flags only allow LLVM to assume more; dropping
		// them is correct (llir has no flags on trunc).
		r = b.NewTrunc(x, to)
	case unsigned:
		r = b.NewZExt(x, to)
	default:
		r = b.NewSExt(x, to)
	}
	fe.Set(op.Result(0), r)
}

// checkRounding rejects truncf rounding modes other than the default.
func checkRounding(t arith.TruncfOp) {
	if a, ok := t.Roundingmode().(*ir.IntegerAttr); ok && a.Int() != 0 {
		Fail(t.Op, "'arith.truncf' with a rounding mode other than to_nearest_even cannot be compiled")
	}
}

func lowerExtf(fe *FuncEmitter, op *ir.Operation) {
	e := arith.ExtfOp{Op: op}
	sk, _ := floatKind(e.In().Type())
	x := fe.Val(e.In())
	to := fe.Type(op, e.Out().Type())
	// Every extension is exact. fp8 goes through f32 (exact); tf32 values
	// are f32 values.
	if isFP8(sk) {
		if dk, _ := floatKind(e.Out().Type()); dk == ir.F16 {
			fe.Set(e.Out(), fe.fp8ToHalf(x, sk))
			return
		}
		x = fe.toF32(x, sk)
	}
	fe.Set(e.Out(), fe.exactFloatCast(x, to))
}

// exactFloatCast converts x to the float type to when the value is known to
// be representable in it (fpext, or fptrunc of a representable value).
func (fe *FuncEmitter) exactFloatCast(x value.Value, to types.Type) value.Value {
	if x.Type().Equal(to) {
		return x
	}
	if floatBitsOf(x.Type()) < floatBitsOf(to) {
		return fe.B().NewFPExt(x, to)
	}
	return fe.B().NewFPTrunc(x, to)
}

// floatBitsOf returns the width of a float type, or of a vector's float
// elements; 0 for other types.
func floatBitsOf(t types.Type) int {
	if v, ok := t.(*types.VectorType); ok {
		t = v.ElemType
	}
	switch t := t.(type) {
	case *bfloatType:
		return 16
	case *types.FloatType:
		switch t.Kind {
		case types.FloatKindHalf:
			return 16
		case types.FloatKindFloat:
			return 32
		case types.FloatKindDouble:
			return 64
		}
	}
	return 0
}

func lowerTruncf(fe *FuncEmitter, op *ir.Operation) {
	t := arith.TruncfOp{Op: op}
	checkRounding(t)
	sk, _ := floatKind(t.In().Type())
	dk, _ := floatKind(t.Out().Type())
	x := fe.Val(t.In())
	to := fe.Type(op, t.Out().Type())
	var r value.Value
	switch {
	case native(dk):
		// f64/f32/tf32 -> f32/f16/bf16: one LLVM rounding. (fp8 sources
		// are narrower than every native format.)
		r = fe.B().NewFPTrunc(x, to)
	case sk == ir.F64:
		r = fe.fromF32(fe.mapScalar(x, types.Float, fe.roundOddF64), dk)
	case sk == ir.F32 && isFP8(dk) && clampedFinite(t.In(), dk):
		// The saturating PTX conversion is already the IEEE result.
		r = fe.f32ToFP8s(x, dk, false)
	default:
		r = fe.fromF32(fe.toF32(x, sk), dk)
	}
	fe.Set(t.Out(), r)
}

// lowerIntToFloat (sitofp, uitofp) and lowerFloatToInt (fptosi, fptoui)
// read the one operand (in) and result (out) of either op by position.
func lowerIntToFloat(fe *FuncEmitter, op *ir.Operation) {
	signed := op.Name() == arith.Sitofp
	dk, _ := floatKind(op.Result(0).Type())
	x := fe.Val(op.Operand(0))
	to := fe.Type(op, op.Result(0).Type())
	w := intBits(x.Type())
	if w > 64 {
		Fail(op, "'%s' from integers wider than 64 bits cannot be compiled for the GPU", op.Name())
	}
	b := fe.B()
	conv := func(x value.Value, to types.Type) value.Value {
		if signed {
			return b.NewSIToFP(x, to)
		}
		return b.NewUIToFP(x, to)
	}
	if native(dk) {
		fe.Set(op.Result(0), conv(x, to))
		return
	}
	// tf32 and fp8: to f32, exactly when the integer fits in 24 bits,
	// else rounded to odd, then rounded to the format.
	f32 := withElem(x.Type(), types.Float)
	var f value.Value
	if w <= 24 {
		f = conv(x, f32)
	} else {
		f = fe.mapScalar(x, types.Float, func(v value.Value) value.Value { return fe.roundOddInt(v, signed) })
	}
	fe.Set(op.Result(0), fe.fromF32(f, dk))
}

func lowerFloatToInt(fe *FuncEmitter, op *ir.Operation) {
	in := op.Operand(0)
	sk, _ := floatKind(in.Type())
	x := fe.Val(in)
	to := fe.Type(op, op.Result(0).Type())
	if intBits(to) > 64 {
		Fail(op, "'%s' to integers wider than 64 bits cannot be compiled for the GPU", op.Name())
	}
	if isFP8(sk) {
		x = fe.toF32(x, sk)
	}
	if op.Name() == arith.Fptosi {
		fe.Set(op.Result(0), fe.B().NewFPToSI(x, to))
	} else {
		fe.Set(op.Result(0), fe.B().NewFPToUI(x, to))
	}
}

func lowerBitcast(fe *FuncEmitter, op *ir.Operation) {
	bc := arith.BitcastOp{Op: op}
	failOnMemRef(op, bc.In())
	x := fe.Val(bc.In())
	to := fe.Type(op, bc.Out().Type())
	var r value.Value = x // fp8 <-> i8, f8E4M3FN <-> f8E5M2: same byte
	if !x.Type().Equal(to) {
		r = fe.B().NewBitCast(x, to)
	}
	if k, ok := floatKind(bc.Out().Type()); ok && k == ir.TF32 {
		// tf32 lives in a 32-bit container (as in MMA operands), whose low
		// 13 bits are not part of the value: clear them, as the tensor
		// cores ignore them.
		it := withElem(to, types.I32)
		r = fe.B().NewBitCast(fe.B().NewAnd(fe.B().NewBitCast(r, it), splatInt(it, -0x2000)), to)
	}
	fe.Set(bc.Out(), r)
}

// ---------------------------------------------------------------------------
// tf32 and fp8 helpers

// mapScalar applies f to x, or to each element of x when it is a vector,
// building a value whose element type is elem.
func (fe *FuncEmitter) mapScalar(x value.Value, elem types.Type, f func(value.Value) value.Value) value.Value {
	vt, ok := x.Type().(*types.VectorType)
	if !ok {
		return f(x)
	}
	out := types.NewVector(vt.Len, elem)
	var acc value.Value = constant.NewUndef(out)
	for i := uint64(0); i < vt.Len; i++ {
		e := fe.B().NewExtractElement(x, I32(int64(i)))
		r := f(e) // may end in another block (remF64's loop)
		acc = fe.B().NewInsertElement(acc, r, I32(int64(i)))
	}
	return acc
}

// toF32 converts x (a scalar or vector of format k) to f32 exactly.
func (fe *FuncEmitter) toF32(x value.Value, k ir.FloatKind) value.Value {
	switch {
	case k == ir.TF32 || k == ir.F32:
		return x
	case isFP8(k):
		return fe.B().NewFPExt(fe.fp8ToHalf(x, k), withElem(x.Type(), types.Float))
	}
	return fe.B().NewFPExt(x, withElem(x.Type(), types.Float))
}

// fp8ToHalf converts fp8 bytes (scalar or vector) to f16, exactly.
func (fe *FuncEmitter) fp8ToHalf(x value.Value, k ir.FloatKind) value.Value {
	name := "llvm.nvvm.e4m3x2.to.f16x2.rn"
	if k == ir.F8E5M2 {
		name = "llvm.nvvm.e5m2x2.to.f16x2.rn"
	}
	return fe.mapScalar(x, types.Half, func(v value.Value) value.Value {
		b := fe.B()
		// The low byte converts to element 0 of the pair.
		pair := fe.CallIntrinsic(name, types.NewVector(2, types.Half), b.NewZExt(v, types.I16))
		return b.NewExtractElement(pair, I32(0))
	})
}

// fromF32 rounds x (f32 or a vector of f32) to format k (not f64).
func (fe *FuncEmitter) fromF32(x value.Value, k ir.FloatKind) value.Value {
	switch {
	case k == ir.F32:
		return x
	case k == ir.TF32:
		return fe.roundTF32(x)
	case isFP8(k):
		return fe.f32ToFP8s(x, k, true)
	}
	t, _ := LLType(ir.FloatTypeOf(k))
	return fe.B().NewFPTrunc(x, withElem(x.Type(), t))
}

// f32ToFP8s rounds x (f32 or a vector of f32) to fp8 bytes of format k,
// with IEEE overflow (f32ToFP8) when ieee is set, else saturating. A
// vector of even length is converted in pairs, elements 2i and 2i+1 with
// one PTX cvt (cvt.rn.satfinite.e4m3x2.f32 or .e5m2x2).
func (fe *FuncEmitter) f32ToFP8s(x value.Value, k ir.FloatKind, ieee bool) value.Value {
	vt, ok := x.Type().(*types.VectorType)
	if !ok || vt.Len%2 != 0 {
		return fe.mapScalar(x, types.I8, func(v value.Value) value.Value { return fe.f32ToFP8(v, k, ieee) })
	}
	b := fe.B()
	var acc value.Value = constant.NewUndef(types.NewVector(vt.Len, types.I8))
	for i := uint64(0); i < vt.Len; i += 2 {
		lo := b.NewExtractElement(x, I32(int64(i)))
		hi := b.NewExtractElement(x, I32(int64(i+1)))
		pair := fe.CallIntrinsic(fp8PairCvt(k), types.I16, hi, lo)
		acc = b.NewInsertElement(acc, fe.fp8Overflow(b.NewTrunc(pair, types.I8), lo, k, ieee), I32(int64(i)))
		high := b.NewTrunc(b.NewLShr(pair, constant.NewInt(types.I16, 8)), types.I8)
		acc = b.NewInsertElement(acc, fe.fp8Overflow(high, hi, k, ieee), I32(int64(i+1)))
	}
	return acc
}

// clampedFinite reports whether v, an f32 value (or vector) about to be
// rounded to fp8 format k, is a clamp arith.minimumf(arith.maximumf(x,
// lo), hi) (either order) by constants within the range that rounds to
// finite values of k (|c| <= 464 for E4M3FN, < 61440 for E5M2): there the
// saturating conversion equals the IEEE one (NaN stays NaN in both).
func clampedFinite(v ir.Value, k ir.FloatKind) bool {
	finite := func(c float64) bool {
		if k == ir.F8E5M2 {
			return math.Abs(c) < 61440
		}
		return math.Abs(c) <= 464
	}
	var seen [2]bool // maximumf with lo, minimumf with hi
	for range 2 {
		r, ok := v.(*ir.OpResult)
		if !ok {
			return false
		}
		op := r.DefiningOp()
		var i int
		switch op.Name() {
		case arith.Maximumf:
			i = 0
		case arith.Minimumf:
			i = 1
		default:
			return false
		}
		cs, ok := floatConstants(op.Operand(1))
		if !ok || seen[i] {
			return false
		}
		for _, c := range cs {
			if !finite(c) {
				return false
			}
		}
		seen[i] = true
		v = op.Operand(0)
	}
	return true
}

// floatConstants returns the values of a float or float-vector
// arith.constant.
func floatConstants(v ir.Value) ([]float64, bool) {
	r, ok := v.(*ir.OpResult)
	if !ok || r.DefiningOp().Name() != arith.Constant {
		return nil, false
	}
	switch a := r.DefiningOp().Attr("value").(type) {
	case *ir.FloatAttr:
		return []float64{a.Value}, true
	case *ir.DenseAttr:
		return a.Floats, len(a.Floats) > 0
	}
	return nil, false
}

// fp8PairCvt is the NVVM intrinsic converting two f32 (the second to the
// low byte) to two fp8 bytes of format k, saturating.
func fp8PairCvt(k ir.FloatKind) string {
	if k == ir.F8E5M2 {
		return "llvm.nvvm.ff.to.e5m2x2.rn"
	}
	return "llvm.nvvm.ff.to.e4m3x2.rn"
}

// roundTF32 rounds f32 values to tf32 (nearest, ties to even) in integer
// arithmetic on the bit pattern: add half an ulp of tf32 (minus one, plus
// the lowest kept bit for ties to even) and clear the 13 dropped bits.
// Carries into the exponent give the right result, including overflow to
// infinity; NaNs are kept as they are.
func (fe *FuncEmitter) roundTF32(x value.Value) value.Value {
	b := fe.B()
	it := withElem(x.Type(), types.I32)
	bits := b.NewBitCast(x, it)
	lsb := b.NewAnd(b.NewLShr(bits, splatInt(it, 13)), splatInt(it, 1))
	sum := b.NewAdd(b.NewAdd(bits, splatInt(it, 0xFFF)), lsb)
	rounded := b.NewBitCast(b.NewAnd(sum, splatInt(it, -0x2000)), x.Type())
	isNaN := fe.fcmp(enum.FPredUNO, x, x)
	return b.NewSelect(isNaN, x, rounded)
}

// f32ToFP8 rounds a scalar f32 to an fp8 byte. The PTX conversion
// (cvt.rn.satfinite) saturates values beyond the largest finite one; with
// ieee set, the fix-up gives IEEE round-to-nearest overflow instead: E5M2
// rounds |x| >= 61440 (the midpoint above 57344) to infinity, E4M3FN
// rounds |x| > 464 (the midpoint above 448, which ties to 448) to NaN, as
// constant folding does.
func (fe *FuncEmitter) f32ToFP8(x value.Value, k ir.FloatKind, ieee bool) value.Value {
	// The second operand converts to the low byte.
	pair := fe.CallIntrinsic(fp8PairCvt(k), types.I16, floatConst(0, ir.F32), x)
	return fe.fp8Overflow(fe.B().NewTrunc(pair, types.I8), x, k, ieee)
}

// fp8Overflow replaces r, the saturated conversion of the f32 x to format
// k, by the IEEE overflow result (f32ToFP8 says which) where x is beyond
// the format's rounding limit; it returns r when ieee is not set.
func (fe *FuncEmitter) fp8Overflow(r, x value.Value, k ir.FloatKind, ieee bool) value.Value {
	if !ieee {
		return r
	}
	b := fe.B()
	special, pred, limit := int64(0x7F), enum.FPredOGT, 464.0
	if k == ir.F8E5M2 {
		special, pred, limit = 0x7C, enum.FPredOGE, 61440.0
	}
	abs := fe.CallIntrinsic("llvm.fabs.f32", types.Float, x)
	over := fe.fcmp(pred, abs, floatConst(limit, ir.F32))
	sign := b.NewAnd(r, constant.NewInt(types.I8, -128))
	return b.NewSelect(over, b.NewOr(sign, constant.NewInt(types.I8, special)), r)
}

// roundOdd sets the lowest bit of the f32 r when inexact is true: with r
// rounded toward zero, that is rounding to odd, after which one more
// rounding to a format at least two bits narrower is correctly rounded.
func (fe *FuncEmitter) roundOdd(r, inexact value.Value) value.Value {
	b := fe.B()
	bits := b.NewBitCast(r, types.I32)
	return b.NewBitCast(b.NewOr(bits, b.NewZExt(inexact, types.I32)), types.Float)
}

// roundOddF64 rounds a scalar double to f32 with round-to-odd.
func (fe *FuncEmitter) roundOddF64(x value.Value) value.Value {
	r := fe.CallIntrinsic("llvm.nvvm.d2f.rz", types.Float, x)
	back := fe.B().NewFPExt(r, types.Double)
	// Ordered: NaNs stay as they are.
	return fe.roundOdd(r, fe.fcmp(enum.FPredONE, back, x))
}

// roundOddInt converts a scalar integer of at most 64 bits to f32 with
// round-to-odd.
func (fe *FuncEmitter) roundOddInt(x value.Value, signed bool) value.Value {
	b := fe.B()
	if intBits(x.Type()) < 64 {
		if signed {
			x = b.NewSExt(x, types.I64)
		} else {
			x = b.NewZExt(x, types.I64)
		}
	}
	var r value.Value
	var back value.Value
	if signed {
		r = fe.CallIntrinsic("llvm.nvvm.ll2f.rz", types.Float, x)
		back = b.NewFPToSI(r, types.I64) // |r| <= |x|: in range
	} else {
		r = fe.CallIntrinsic("llvm.nvvm.ull2f.rz", types.Float, x)
		back = b.NewFPToUI(r, types.I64)
	}
	return fe.roundOdd(r, b.NewICmp(enum.IPredNE, back, x))
}
