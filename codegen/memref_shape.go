package codegen

import (
	"github.com/llir/llvm/ir/enum"
	"github.com/llir/llvm/ir/types"
	"github.com/llir/llvm/ir/value"

	"github.com/tmac-dev/tmac/dialects/memref"
	"github.com/tmac-dev/tmac/ir"
)

// Lowering of the memref ops that only compute a new descriptor (views,
// metadata): expand_shape, collapse_shape, transpose, reshape,
// memory_space_cast, extract_strided_metadata,
// extract_aligned_pointer_as_index, rank, distinct_objects.

func init() {
	Register(lowerCollapseShape, memref.CollapseShape)
	Register(lowerExpandShape, memref.ExpandShape)
	Register(lowerMemTranspose, memref.Transpose)
	Register(lowerReshape, memref.Reshape)
	Register(lowerMemorySpaceCast, memref.MemorySpaceCast)
	Register(lowerExtractStridedMetadata, memref.ExtractStridedMetadata)
	Register(lowerExtractAlignedPointer, memref.ExtractAlignedPointerAsIndex)
	Register(lowerRank, memref.Rank)
	Register(lowerDistinctObjects, memref.DistinctObjects)
}

// innerStride is the stride of a collapsed group so far (stride, of the
// outer dimensions) with a dimension of the given size and stride added
// inside: the inner stride unless the size is 1, decided at run time
// when the size is dynamic.
func (fe *FuncEmitter) innerStride(stride, size, inner value.Value) value.Value {
	if c, ok := constInt(size); ok {
		if c == 1 {
			return stride
		}
		return inner
	}
	return fe.B().NewSelect(fe.B().NewICmp(enum.IPredEQ, size, I64(1)), stride, inner)
}

// lowerCollapseShape: a group's size is the product of its sizes, its
// stride that of its innermost dimension whose size is not 1 (dimensions
// of size 1 may have any stride), chosen at run time for dynamic sizes.
func lowerCollapseShape(fe *FuncEmitter, op *ir.Operation) {
	c := memref.CollapseShapeOp{Op: op}
	src := fe.Mem(c.Src())
	resT := c.Result().Type().(*ir.MemRefType)
	groups, _ := memref.Reassociation(c.Reassociation())
	sizes := make([]value.Value, len(groups))
	strides := make([]value.Value, len(groups))
	for i, g := range groups {
		size := value.Value(I64(1))
		stride := src.Strides[g[0]]
		for k, d := range g {
			size = fe.Mul(size, src.Sizes[d])
			if k > 0 {
				stride = fe.innerStride(stride, src.Sizes[d], src.Strides[d])
			}
		}
		sizes[i], strides[i] = size, stride
	}
	fe.SetMem(c.Result(), describe(op, resT, src.Base, src.Offset, sizes, strides))
}

// lowerExpandShape: the sizes are the output shape; within a group the
// innermost dimension keeps the source stride and each outer one is the
// next inner stride times the next inner size.
func lowerExpandShape(fe *FuncEmitter, op *ir.Operation) {
	e := memref.ExpandShapeOp{Op: op}
	src := fe.Mem(e.Src())
	resT := e.Result().Type().(*ir.MemRefType)
	groups, _ := memref.Reassociation(e.Reassociation())
	sizes := mixed(fe, op, "static_output_shape", e.StaticOutputShape(), e.OutputShape())
	strides := make([]value.Value, resT.Rank())
	for i := range strides {
		strides[i] = I64(1)
	}
	for i, g := range groups {
		s := src.Strides[i]
		for k := len(g) - 1; k >= 0; k-- {
			strides[g[k]] = s
			s = fe.Mul(s, sizes[g[k]])
		}
	}
	fe.SetMem(e.Result(), describe(op, resT, src.Base, src.Offset, sizes, strides))
}

func lowerMemTranspose(fe *FuncEmitter, op *ir.Operation) {
	t := memref.TransposeOp{Op: op}
	src := fe.Mem(t.In())
	resT := t.Result().Type().(*ir.MemRefType)
	perm, ok := memref.Permutation(t.Permutation())
	if !ok {
		Fail(op, "the permutation of memref.transpose is not a permutation map")
	}
	sizes, strides := make([]value.Value, len(perm)), make([]value.Value, len(perm))
	for i, d := range perm {
		sizes[i], strides[i] = src.Sizes[d], src.Strides[d]
	}
	fe.SetMem(t.Result(), describe(op, resT, src.Base, src.Offset, sizes, strides))
}

// lowerReshape reads the sizes from the shape memref; the result is
// row-major over them at the source's base and offset (both have the
// identity layout). An unranked result has no lowering in a kernel.
func lowerReshape(fe *FuncEmitter, op *ir.Operation) {
	r := memref.ReshapeOp{Op: op}
	rankedMemRef(op, r.Source())
	resT := rankedMemRef(op, r.Result())
	src := fe.Mem(r.Source())
	shape := fe.Mem(r.Shape())
	elem := shape.Type.Elem
	sizes := make([]value.Value, resT.Rank())
	for i, s := range resT.Shape() {
		if s != ir.Dynamic {
			sizes[i] = I64(s)
			continue
		}
		v := value.Value(fe.B().NewLoad(fe.ElemType(op, shape), fe.ElemPtr(op, shape, []value.Value{I64(int64(i))})))
		if w := ir.BitWidth(elem); !ir.IsIndex(elem) && w < 64 {
			v = fe.B().NewSExt(v, types.I64)
		}
		sizes[i] = v
	}
	strides := make([]value.Value, resT.Rank())
	run := value.Value(I64(1))
	for i := resT.Rank() - 1; i >= 0; i-- {
		strides[i] = run
		run = fe.Mul(run, sizes[i])
	}
	fe.SetMem(r.Result(), describe(op, resT, src.Base, src.Offset, sizes, strides))
}

// lowerMemorySpaceCast casts the base pointer (addrspacecast); the
// descriptor is otherwise the same.
func lowerMemorySpaceCast(fe *FuncEmitter, op *ir.Operation) {
	c := memref.MemorySpaceCastOp{Op: op}
	rankedMemRef(op, c.Source())
	resT := rankedMemRef(op, c.Dest())
	src := fe.Mem(c.Source())
	base := src.Base
	if as := memSpace(op, resT); base.Type().(*types.PointerType).AddrSpace != as {
		base = fe.B().NewAddrSpaceCast(base, PtrTo(fe.Type(op, resT.Elem), as))
	}
	fe.SetMem(c.Dest(), describe(op, resT, base, src.Offset, src.Sizes, src.Strides))
}

func lowerExtractStridedMetadata(fe *FuncEmitter, op *ir.Operation) {
	x := memref.ExtractStridedMetadataOp{Op: op}
	src := fe.Mem(x.Source())
	baseT := x.BaseBuffer().Type().(*ir.MemRefType)
	fe.SetMem(x.BaseBuffer(), describe(op, baseT, src.Base, I64(0), nil, nil))
	fe.Set(x.Offset(), src.Offset)
	for i, v := range x.Sizes() {
		fe.Set(v, src.Sizes[i])
	}
	for i, v := range x.Strides() {
		fe.Set(v, src.Strides[i])
	}
}

// lowerExtractAlignedPointer gives the base pointer (in its own address
// space) as an integer.
func lowerExtractAlignedPointer(fe *FuncEmitter, op *ir.Operation) {
	x := memref.ExtractAlignedPointerAsIndexOp{Op: op}
	rankedMemRef(op, x.Source())
	fe.Set(x.AlignedPointer(), fe.B().NewPtrToInt(fe.Mem(x.Source()).Base, types.I64))
}

func lowerRank(fe *FuncEmitter, op *ir.Operation) {
	r := memref.RankOp{Op: op}
	t := rankedMemRef(op, r.Memref())
	fe.Set(r.Result(), I64(int64(t.Rank())))
}

// lowerDistinctObjects passes its operands through: the no-alias fact is
// not given to LLVM.
func lowerDistinctObjects(fe *FuncEmitter, op *ir.Operation) {
	for i, v := range op.Operands() {
		fe.SetMem(op.Result(i), fe.Mem(v))
	}
}
