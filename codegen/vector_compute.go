package codegen

import (
	"fmt"

	"github.com/llir/llvm/ir/constant"
	"github.com/llir/llvm/ir/enum"
	"github.com/llir/llvm/ir/types"
	"github.com/llir/llvm/ir/value"

	"github.com/tmac-dev/tmac/dialects/vector"
	"github.com/tmac-dev/tmac/ir"
)

// The vector ops that compute (fma, reductions, outer products) and the
// masked memory ops, through LLVM's vector intrinsics, which llc expands
// for NVPTX (reductions into shuffles and scalar ops, masked accesses into
// one predicated access per lane).

func init() {
	Register(lowerVectorFma, vector.Fma)
	Register(lowerReduction, vector.Reduction)
	Register(lowerMultiReduction, vector.MultiReduction)
	Register(lowerOuterProduct, vector.Outerproduct)
	Register(lowerMaskedLoad, vector.Maskedload, vector.Expandload)
	Register(lowerMaskedStore, vector.Maskedstore, vector.Compressstore)
	Register(lowerGather, vector.Gather)
	Register(lowerScatter, vector.Scatter)
}

// nativeFloats rejects element types without a correctly rounded LLVM
// lowering (tf32 and fp8 are computed in f32 and would round twice).
func nativeFloats(op *ir.Operation, t ir.Type) {
	if k, ok := floatKind(ir.ElementTypeOrSelf(t)); ok && !native(k) {
		Fail(op, "'%s' on %s cannot be compiled (no correctly rounded lowering); extend the operands to f32 first", op.Name(), ir.FloatTypeOf(k))
	}
}

func lowerVectorFma(fe *FuncEmitter, op *ir.Operation) {
	x := vector.FmaOp{Op: op}
	nativeFloats(op, x.Result().Type())
	fe.Set(x.Result(), fe.callOverloaded("llvm.fma", nil, fe.Val(x.Lhs()), fe.Val(x.Rhs()), fe.Val(x.Acc())))
}

// reduceIntrinsics name the llvm.vector.reduce.* intrinsic of each
// combining kind (fadd and fmul for float add and mul).
var reduceIntrinsics = map[string]string{
	"add": "add", "mul": "mul", "minui": "umin", "minsi": "smin", "maxui": "umax", "maxsi": "smax",
	"and": "and", "or": "or", "xor": "xor",
	"minnumf": "fmin", "maxnumf": "fmax", "minimumf": "fminimum", "maximumf": "fmaximum",
}

// combineIntrinsics name the elementwise intrinsic of the min/max kinds.
var combineIntrinsics = map[string]string{
	"minui": "llvm.umin", "minsi": "llvm.smin", "maxui": "llvm.umax", "maxsi": "llvm.smax",
	"minnumf": "llvm.minnum", "maxnumf": "llvm.maxnum", "minimumf": "llvm.minimum", "maximumf": "llvm.maximum",
}

// combine returns a kind b, elementwise.
func (fe *FuncEmitter) combine(kind string, a, b value.Value, fm []enum.FastMathFlag) value.Value {
	isFloat := isFloatType(a.Type())
	bl := fe.B()
	switch kind {
	case "add":
		if isFloat {
			i := bl.NewFAdd(a, b)
			i.FastMathFlags = fm
			return i
		}
		return bl.NewAdd(a, b)
	case "mul":
		if isFloat {
			i := bl.NewFMul(a, b)
			i.FastMathFlags = fm
			return i
		}
		return bl.NewMul(a, b)
	case "and":
		return bl.NewAnd(a, b)
	case "or":
		return bl.NewOr(a, b)
	case "xor":
		return bl.NewXor(a, b)
	}
	return fe.callOverloaded(combineIntrinsics[kind], fm, a, b)
}

// isFloatType reports whether t is a float type or a vector of floats.
func isFloatType(t types.Type) bool {
	if v, ok := t.(*types.VectorType); ok {
		t = v.ElemType
	}
	switch t.(type) {
	case *types.FloatType, *bfloatType:
		return true
	}
	return false
}

// reduce combines the lanes of v with kind, then acc (nil: none). Float
// add and mul are ordered from acc (or the identity) through the lanes in
// turn unless fm allows reassociation, as LLVM defines them.
func (fe *FuncEmitter) reduce(kind string, v, acc value.Value, fm []enum.FastMathFlag) value.Value {
	vt := v.Type().(*types.VectorType)
	et := vt.ElemType
	name := "llvm.vector.reduce."
	if isFloatType(et) && (kind == "add" || kind == "mul") {
		start := acc
		if start == nil {
			start = llvmFloat(et, map[string]float64{"add": negZero, "mul": 1}[kind])
		}
		c := fe.CallIntrinsic(name+"f"+kind+"."+intrinsicSuffix(vt), et, start, v)
		c.FastMathFlags = fm
		return c
	}
	c := fe.CallIntrinsic(name+reduceIntrinsics[kind]+"."+intrinsicSuffix(vt), et, v)
	if isFloatType(et) {
		c.FastMathFlags = fm
	}
	if acc == nil {
		return c
	}
	return fe.combine(kind, acc, c, fm)
}

// llvmFloat is the constant v of the LLVM float type t.
func llvmFloat(t types.Type, v float64) constant.Constant {
	k := map[int]ir.FloatKind{16: ir.F16, 32: ir.F32, 64: ir.F64}[floatBitsOf(t)]
	if _, bf := t.(*bfloatType); bf {
		k = ir.BF16
	}
	return floatConst(v, k)
}

// negZero is -0.0, the identity of float addition.
var negZero = func() float64 { z := 0.0; return -z }()

func lowerReduction(fe *FuncEmitter, op *ir.Operation) {
	x := vector.ReductionOp{Op: op}
	nativeFloats(op, x.Dest().Type())
	var acc value.Value
	if x.Acc() != nil {
		acc = fe.Val(x.Acc())
	}
	fe.Set(x.Dest(), fe.reduce(vector.KindOf(op), fe.Val(x.Vector()), acc, fastMath(op)))
}

// lowerMultiReduction reduces, for each lane of the result, the source
// lanes that map to it (gathered by a shuffle) into that lane of acc.
func lowerMultiReduction(fe *FuncEmitter, op *ir.Operation) {
	x := vector.MultiReductionOp{Op: op}
	nativeFloats(op, x.Dest().Type())
	kind := vector.KindOf(op)
	src := fe.Val(x.Source())
	shape := shapeOf(x.Source().Type())
	dims := vector.Ints(x.ReductionDims())
	reduced := func(d int) bool {
		for _, r := range dims {
			if r == int64(d) {
				return true
			}
		}
		return false
	}
	var keptShape []int64
	for d, s := range shape {
		if !reduced(d) {
			keptShape = append(keptShape, s)
		}
	}
	groups := make([][]int64, ir.NumElements(keptShape))
	for i := range ir.NumElements(shape) {
		var kept []int64
		for d, k := range ir.Delinearize(shape, i) {
			if !reduced(d) {
				kept = append(kept, k)
			}
		}
		g := ir.Linearize(keptShape, kept)
		groups[g] = append(groups[g], i)
	}
	acc := fe.Val(x.Acc())
	if len(keptShape) == 0 {
		fe.Set(x.Dest(), fe.reduce(kind, src, acc, nil))
		return
	}
	res := value.Value(constant.NewUndef(acc.Type()))
	for g, lanesOf := range groups {
		a := fe.B().NewExtractElement(acc, I32(int64(g)))
		r := fe.reduce(kind, fe.shuffle(src, nil, lanesOf), a, nil)
		res = fe.B().NewInsertElement(res, r, I32(int64(g)))
	}
	fe.Set(x.Dest(), res)
}

// lowerOuterProduct multiplies lhs lane i by rhs lane j into result lane
// (i, j) (by the scalar rhs into lane i), then combines with the
// accumulator: a fused multiply-add for the float add kind.
func lowerOuterProduct(fe *FuncEmitter, op *ir.Operation) {
	x := vector.OuterproductOp{Op: op}
	nativeFloats(op, x.Result().Type())
	lhs, rhs := fe.Val(x.Lhs()), fe.Val(x.Rhs())
	m := lanes(lhs)
	var a, b value.Value
	if _, ok := x.Rhs().Type().(*ir.VectorType); ok {
		n := lanes(rhs)
		rep, tile := make([]int64, m*n), make([]int64, m*n)
		for i := range m * n {
			rep[i], tile[i] = i/n, i%n
		}
		a, b = fe.shuffle(lhs, nil, rep), fe.shuffle(rhs, nil, tile)
	} else {
		a = lhs
		b = fe.shuffle(fe.asVector(rhs), nil, make([]int64, m))
	}
	kind := vector.KindOf(op)
	float := isFloatType(a.Type())
	if x.Acc() != nil && kind == "add" && float {
		fe.Set(x.Result(), fe.callOverloaded("llvm.fma", nil, a, b, fe.Val(x.Acc())))
		return
	}
	prod := fe.combine("mul", a, b, nil)
	if x.Acc() != nil {
		prod = fe.combine(kind, fe.Val(x.Acc()), prod, nil)
	}
	fe.Set(x.Result(), prod)
}

// maskedAccess is the common part of the masked memory ops: the LLVM
// vector type, a pointer to the first element, the mask, and the
// alignment (the `alignment` attribute, else the element's).
type maskedAccess struct {
	vt    *types.VectorType
	ptr   value.Value
	mask  value.Value
	align int64
}

func (fe *FuncEmitter) maskedAccess(op *ir.Operation, vecT ir.Type) maskedAccess {
	if len(shapeOf(vecT)) != 1 {
		Fail(op, "'%s' of '%s' cannot be compiled: tmac compiles the 1-D forms", op.Name(), vecT)
	}
	vt := fe.Type(op, vecT).(*types.VectorType)
	base := op.OperandNamed("base")
	if _, ok := base.Type().(*ir.MemRefType); !ok {
		Fail(op, "'%s' of a tensor cannot be compiled", op.Name())
	}
	m := fe.Mem(base)
	idx := op.OperandGroup("indices")
	if op.Name() == vector.Gather || op.Name() == vector.Scatter {
		idx = op.OperandGroup("offsets")
	}
	p := fe.ElemPtr(op, m, fe.Vals(idx))
	return maskedAccess{vt: vt, ptr: p, mask: fe.Val(op.OperandNamed("mask")),
		align: attrIntOr(op.Attr("alignment"), elemBytes(op, vt.ElemType))}
}

// addrSpaceSuffix is the pointer overload suffix (p0, p1, p3) of p.
func addrSpaceSuffix(p value.Value) string {
	return fmt.Sprintf("p%d", p.Type().(*types.PointerType).AddrSpace)
}

// generic casts a pointer to the generic address space (the expanding
// loads and compressing stores take only generic pointers).
func (fe *FuncEmitter) generic(p value.Value) value.Value {
	pt := p.Type().(*types.PointerType)
	if pt.AddrSpace == 0 {
		return p
	}
	return fe.B().NewAddrSpaceCast(p, types.NewPointer(pt.ElemType))
}

func lowerMaskedLoad(fe *FuncEmitter, op *ir.Operation) {
	res := op.Result(0)
	a := fe.maskedAccess(op, res.Type())
	pass := fe.Val(op.OperandNamed("pass_thru"))
	suffix := intrinsicSuffix(a.vt)
	if op.Name() == vector.Expandload {
		fe.Set(res, fe.CallIntrinsic("llvm.masked.expandload."+suffix, a.vt, fe.generic(a.ptr), a.mask, pass))
		return
	}
	p := fe.pointerCast(a.ptr, a.vt)
	fe.Set(res, fe.CallIntrinsic("llvm.masked.load."+suffix+"."+addrSpaceSuffix(p), a.vt, p, I32(a.align), a.mask, pass))
}

func lowerMaskedStore(fe *FuncEmitter, op *ir.Operation) {
	val := op.OperandNamed("valueToStore")
	a := fe.maskedAccess(op, val.Type())
	v := fe.Val(val)
	suffix := intrinsicSuffix(a.vt)
	if op.Name() == vector.Compressstore {
		fe.CallIntrinsic("llvm.masked.compressstore."+suffix, types.Void, v, fe.generic(a.ptr), a.mask)
		return
	}
	p := fe.pointerCast(a.ptr, a.vt)
	fe.CallIntrinsic("llvm.masked.store."+suffix+"."+addrSpaceSuffix(p), types.Void, v, p, I32(a.align), a.mask)
}

// lanePointers returns the vector of pointers base + indices[lane].
func (fe *FuncEmitter) lanePointers(op *ir.Operation, a maskedAccess, indices ir.Value) value.Value {
	idx := fe.Val(indices)
	pt := a.ptr.Type().(*types.PointerType)
	vp := types.NewVector(a.vt.Len, pt)
	var ptrs value.Value = constant.NewUndef(vp)
	for i := range int64(a.vt.Len) {
		k := value.Value(fe.B().NewExtractElement(idx, I32(i)))
		if it := k.Type().(*types.IntType); it.BitSize < 64 {
			k = fe.B().NewSExt(k, types.I64)
		}
		g := fe.B().NewGetElementPtr(pt.ElemType, a.ptr, k)
		ptrs = fe.B().NewInsertElement(ptrs, g, I32(i))
	}
	return ptrs
}

func lowerGather(fe *FuncEmitter, op *ir.Operation) {
	x := vector.GatherOp{Op: op}
	a := fe.maskedAccess(op, x.Result().Type())
	ptrs := fe.lanePointers(op, a, x.Indices())
	name := fmt.Sprintf("llvm.masked.gather.%s.v%d%s", intrinsicSuffix(a.vt), a.vt.Len, addrSpaceSuffix(a.ptr))
	fe.Set(x.Result(), fe.CallIntrinsic(name, a.vt, ptrs, I32(a.align), a.mask, fe.Val(x.PassThru())))
}

func lowerScatter(fe *FuncEmitter, op *ir.Operation) {
	x := vector.ScatterOp{Op: op}
	a := fe.maskedAccess(op, x.ValueToStore().Type())
	ptrs := fe.lanePointers(op, a, x.Indices())
	name := fmt.Sprintf("llvm.masked.scatter.%s.v%d%s", intrinsicSuffix(a.vt), a.vt.Len, addrSpaceSuffix(a.ptr))
	fe.CallIntrinsic(name, types.Void, fe.Val(x.ValueToStore()), ptrs, I32(a.align), a.mask)
}
