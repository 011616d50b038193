package codegen

import (
	"math/bits"

	"github.com/llir/llvm/ir/constant"
	"github.com/llir/llvm/ir/types"
	"github.com/llir/llvm/ir/value"

	"github.com/tmac-dev/tmac/dialects/vector"
	"github.com/tmac-dev/tmac/ir"
)

// Lowering of the vector ops (1-D fixed-size vectors, which are LLVM
// vectors).

func init() {
	Register(lowerVectorLoad, vector.Load)
	Register(lowerVectorStore, vector.Store)
	Register(lowerBroadcast, vector.Broadcast)
}

// vectorAlign is the alignment a vector memory access assumes without an
// explicit `alignment` attribute: the vector's natural alignment, its size
// in bytes rounded up to a power of two (<4 x float>: 16, <8 x half>: 16,
// <2 x float>: 8). This is what lets llc emit one ld/st.v4.b32 instead of
// four scalar accesses; it is also a promise: the address of the first
// element must be that aligned (the index times the element size plus the
// memref's base and offset), or the access faults. Programs that cannot
// promise it must pass a smaller `alignment` (e.g. the element size).
func vectorAlign(op *ir.Operation, vt types.Type) int64 {
	v, ok := vt.(*types.VectorType)
	if !ok {
		Fail(op, "expected a vector type, got '%s'", vt)
	}
	size := int64(v.Len) * elemBytes(op, v.ElemType)
	if size <= 1 {
		return 1
	}
	return int64(1) << bits.Len64(uint64(size-1))
}

// elemBytes is the storage size of a vector element type.
func elemBytes(op *ir.Operation, t types.Type) int64 {
	switch t := t.(type) {
	case *types.IntType:
		return int64((t.BitSize + 7) / 8)
	case *types.FloatType, *bfloatType:
		if b := floatBitsOf(t); b != 0 {
			return int64(b) / 8
		}
	case *types.PointerType:
		return 8
	}
	Fail(op, "vector element type '%s' has no known size", t)
	return 0
}

// vectorPtr returns a pointer to the vector of type vt starting at the
// element at the op's indices. The verifier guarantees a unit innermost
// stride, so the vector's elements are contiguous.
func (fe *FuncEmitter) vectorPtr(op *ir.Operation, m *MemRef, indices []ir.Value, vt types.Type) value.Value {
	p := fe.ElemPtr(op, m, fe.Vals(indices))
	return fe.pointerCast(p, vt)
}

func lowerVectorLoad(fe *FuncEmitter, op *ir.Operation) {
	l := vector.LoadOp{Op: op}
	vt := fe.Type(op, l.Result().Type())
	m := fe.Mem(l.Base())
	p := fe.vectorPtr(op, m, l.Indices(), vt)
	ld := fe.B().NewLoad(vt, p)
	fe.memAccessAttrs(l.Alignment(), l.Nontemporal(), &ld.Align, &ld.Metadata, vectorAlign(op, vt))
	fe.Set(l.Result(), ld)
}

func lowerVectorStore(fe *FuncEmitter, op *ir.Operation) {
	s := vector.StoreOp{Op: op}
	vt := fe.Type(op, s.ValueToStore().Type())
	v := fe.Val(s.ValueToStore())
	m := fe.Mem(s.Base())
	p := fe.vectorPtr(op, m, s.Indices(), vt)
	st := fe.B().NewStore(v, p)
	fe.memAccessAttrs(s.Alignment(), s.Nontemporal(), &st.Align, &st.Metadata, vectorAlign(op, vt))
}

// lowerBroadcast: a scalar is inserted into lane 0 and splat with a
// zero-mask shufflevector; a one-element vector is splat the same way; a
// vector of the result type is the result itself.
func lowerBroadcast(fe *FuncEmitter, op *ir.Operation) {
	b := vector.BroadcastOp{Op: op}
	rt := fe.Type(op, b.Vector().Type())
	vt, ok := rt.(*types.VectorType)
	if !ok {
		Fail(op, "vector.broadcast to '%s' cannot be lowered", b.Vector().Type())
	}
	src := fe.Val(b.Source())
	st := src.Type()
	if st.Equal(rt) {
		fe.Set(b.Vector(), src)
		return
	}
	if sv, ok := st.(*types.VectorType); ok {
		if sv.Len != 1 {
			Fail(op, "vector.broadcast from '%s' to '%s' cannot be lowered", b.Source().Type(), b.Vector().Type())
		}
	} else {
		src = fe.B().NewInsertElement(constant.NewUndef(vt), src, I32(0))
	}
	mask := make([]constant.Constant, vt.Len)
	for i := range mask {
		mask[i] = I32(0)
	}
	sh := fe.B().NewShuffleVector(src, constant.NewUndef(src.Type()), constant.NewVector(types.NewVector(vt.Len, types.I32), mask...))
	fe.Set(b.Vector(), sh)
}
