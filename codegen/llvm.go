package codegen

import (
	"math"

	"github.com/llir/llvm/ir/constant"
	"github.com/llir/llvm/ir/types"
	"github.com/llir/llvm/ir/value"

	"github.com/tmac-dev/tmac/dialects/llvm"
	"github.com/tmac-dev/tmac/ir"
)

// llvm dialect ops that appear in device code (mostly from the nvgpu to
// nvvm lowering): constants, poison/undef/zero, aggregate element access,
// pointer casts and unreachable.

func init() {
	Register(lowerLLVMUndefLike, llvm.MlirPoison, llvm.MlirUndef, llvm.MlirZero)
	Register(lowerLLVMConstant, llvm.MlirConstant)
	Register(lowerLLVMExtractValue, llvm.Extractvalue)
	Register(lowerLLVMInsertValue, llvm.Insertvalue)
	Register(func(fe *FuncEmitter, op *ir.Operation) { fe.B().NewUnreachable() }, llvm.Unreachable)
	Register(lowerLLVMPtrCast, llvm.Ptrtoint, llvm.Inttoptr, llvm.Addrspacecast)
}

// lowerLLVMPtrCast lowers the scalar pointer casts (pointers are i8* of
// their address space). Each of the three declares one operand (arg) and
// one result (res), read by position.
func lowerLLVMPtrCast(fe *FuncEmitter, op *ir.Operation) {
	in, out := op.Operand(0), op.Result(0)
	if _, ok := in.Type().(*ir.VectorType); ok {
		Fail(op, "'%s' of vectors cannot be compiled", op.Name())
	}
	as, _ := llvm.PtrAddrSpace(out.Type())
	switch op.Name() {
	case llvm.Ptrtoint:
		fe.Set(out, fe.B().NewPtrToInt(fe.Val(in), fe.Type(op, out.Type())))
	case llvm.Inttoptr:
		fe.Set(out, fe.B().NewIntToPtr(fe.Val(in), PtrTo(types.I8, types.AddrSpace(as))))
	default:
		fe.Set(out, fe.castPointer(op, fe.Val(in), types.AddrSpace(as)))
	}
}

func lowerLLVMUndefLike(fe *FuncEmitter, op *ir.Operation) {
	t := fe.Type(op, op.Result(0).Type())
	if t.Equal(types.Void) {
		Fail(op, "'%s' cannot produce a void value", op.Name())
	}
	var v value.Value
	switch op.Name() {
	case llvm.MlirPoison:
		v = constant.NewPoison(t)
	case llvm.MlirUndef:
		v = constant.NewUndef(t)
	default:
		v = zero(t)
	}
	fe.Set(op.Result(0), v)
}

// llvmPosition returns the indices of extract/insertvalue's position
// attribute pos.
func llvmPosition(op *ir.Operation, pos ir.Attribute) []uint64 {
	da, ok := pos.(*ir.DenseArrayAttr)
	if !ok || len(da.Ints) == 0 {
		Fail(op, "'%s' needs a non-empty position", op.Name())
	}
	idx := make([]uint64, len(da.Ints))
	for i, v := range da.Ints {
		if v < 0 {
			Fail(op, "position out of bounds: %d", v)
		}
		idx[i] = uint64(v)
	}
	return idx
}

func lowerLLVMExtractValue(fe *FuncEmitter, op *ir.Operation) {
	e := llvm.ExtractvalueOp{Op: op}
	fe.Set(e.Res(), fe.B().NewExtractValue(fe.Val(e.Container()), llvmPosition(op, e.Position())...))
}

func lowerLLVMInsertValue(fe *FuncEmitter, op *ir.Operation) {
	i := llvm.InsertvalueOp{Op: op}
	fe.Set(i.Res(), fe.B().NewInsertValue(fe.Val(i.Container()), fe.Val(i.Value()), llvmPosition(op, i.Position())...))
}

func lowerLLVMConstant(fe *FuncEmitter, op *ir.Operation) {
	c := llvm.MlirConstantOp{Op: op}
	rt := c.Res().Type()
	var elem ir.Type = rt
	if vt, ok := rt.(*ir.VectorType); ok {
		elem = vt.Elem
	}
	fe.Set(c.Res(), llvmConstant(op, c.Value(), fe.Type(op, rt), elem))
}

// llvmConstant converts a constant attribute to an LLVM constant of type t
// (elem is the IR scalar type of the constant or of its elements).
func llvmConstant(op *ir.Operation, a ir.Attribute, t types.Type, elem ir.Type) constant.Constant {
	switch a := a.(type) {
	case *ir.IntegerAttr:
		return llvmScalarConst(op, float64(a.Int()), a.Int(), true, t, elem)
	case *ir.FloatAttr:
		return llvmScalarConst(op, a.Value, 0, false, t, elem)
	case *ir.StringAttr:
		at, ok := t.(*types.ArrayType)
		if !ok || !at.ElemType.Equal(types.I8) || at.Len != uint64(len(a.Value)) {
			Fail(op, "expected array type of %d i8 elements for the string constant", len(a.Value))
		}
		return constant.NewCharArrayFromString(a.Value)
	case *ir.DenseAttr:
		vt, ok := t.(*types.VectorType)
		if !ok {
			Fail(op, "a dense constant must have a 1-D vector type, not '%s'", t)
		}
		elems := make([]constant.Constant, vt.Len)
		for i := range elems {
			j := i
			if a.Splat {
				j = 0
			}
			if a.Floats != nil {
				elems[i] = llvmScalarConst(op, a.Floats[j], 0, false, vt.ElemType, elem)
			} else {
				elems[i] = llvmScalarConst(op, float64(a.Ints[j]), a.Ints[j], true, vt.ElemType, elem)
			}
		}
		return constant.NewVector(vt, elems...)
	case nil:
		Fail(op, "llvm.mlir.constant needs a value")
	}
	Fail(op, "llvm.mlir.constant with value %s cannot be compiled", a)
	return nil
}

// llvmScalarConst returns a scalar constant of type t: the integer i when
// isInt, otherwise the float f (integer attributes may initialise floats
// and float attributes integers only when exact). elem is the IR type:
// fp8 values are bytes holding the encoding, tf32 values floats rounded to
// tf32.
func llvmScalarConst(op *ir.Operation, f float64, i int64, isInt bool, t types.Type, elem ir.Type) constant.Constant {
	if ft, ok := elem.(*ir.FloatType); ok {
		if isInt {
			f, isInt = float64(i), false
		}
		switch ft.Kind {
		case ir.F8E4M3FN, ir.F8E5M2:
			return constant.NewInt(types.I8, int64(ir.FloatToBits(f, ft.Kind)))
		case ir.TF32:
			f = ir.RoundToFloatKind(f, ir.TF32)
		}
	}
	switch t := t.(type) {
	case *types.IntType:
		if !isInt {
			if f != math.Trunc(f) {
				Fail(op, "a float value cannot initialise an integer constant")
			}
			i = int64(f)
		}
		return constant.NewInt(t, i)
	case *types.FloatType:
		switch t.Kind {
		case types.FloatKindHalf:
			return constant.NewFloat(t, ir.RoundToFloatKind(f, ir.F16))
		case types.FloatKindFloat:
			return constant.NewFloat(t, ir.RoundToFloatKind(f, ir.F32))
		case types.FloatKindDouble:
			return constant.NewFloat(t, f)
		}
	case *bfloatType:
		return &BFloatConst{Bits: uint16(ir.FloatToBits(f, ir.BF16))}
	}
	Fail(op, "a constant of LLVM type '%s' cannot be compiled", t)
	return nil
}
