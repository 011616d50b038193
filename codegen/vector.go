package codegen

import (
	"math/bits"

	"github.com/llir/llvm/ir/constant"
	"github.com/llir/llvm/ir/enum"
	"github.com/llir/llvm/ir/types"
	"github.com/llir/llvm/ir/value"

	"github.com/tmac-dev/tmac/dialects/vector"
	"github.com/tmac-dev/tmac/ir"
)

// Lowering of the vector dialect. A vector of any rank is one LLVM vector
// of its elements in row-major order (LLType): a shape_cast is free, and
// extracting, inserting, broadcasting, transposing, slicing, shuffling and
// interleaving are shufflevectors whose masks follow from the shapes.
// Reductions, fma, outer products and the masked memory ops are in
// vector_compute.go, vector.print in vector_print.go.

func init() {
	Register(lowerVectorLoad, vector.Load, vector.TransferRead)
	Register(lowerVectorStore, vector.Store, vector.TransferWrite)
	Register(lowerBroadcast, vector.Broadcast)
	Register(lowerExtract, vector.Extract)
	Register(lowerInsert, vector.Insert)
	Register(lowerShapeCast, vector.ShapeCast)
	Register(lowerVectorBitcast, vector.Bitcast)
	Register(lowerTranspose, vector.Transpose)
	Register(lowerExtractStridedSlice, vector.ExtractStridedSlice)
	Register(lowerInsertStridedSlice, vector.InsertStridedSlice)
	Register(lowerShuffle, vector.Shuffle)
	Register(lowerInterleave, vector.Interleave)
	Register(lowerDeinterleave, vector.Deinterleave)
	Register(lowerFromElements, vector.FromElements)
	Register(lowerToElements, vector.ToElements)
	Register(lowerStep, vector.Step)
	Register(lowerConstantMask, vector.ConstantMask)
	Register(lowerCreateMask, vector.CreateMask)
	Register(rejectVectorOp, vector.Contract, vector.Mask, vector.Yield, vector.Scan,
		vector.Vscale, vector.ScalableInsert, vector.ScalableExtract, vector.TypeCast)
}

// rejections says why an op of the vector dialect is not compiled.
var rejections = map[string]string{
	vector.Contract:        "lower it to vector.outerproduct, vector.fma or nvgpu/wgmma ops first",
	vector.Mask:            "write the masked form of the op instead (vector.maskedload, a select on the result)",
	vector.Yield:           "it only terminates vector.mask, which is not compiled either",
	vector.Scan:            "write the prefix reduction with vector.extract and scalar arithmetic",
	vector.Vscale:          "NVIDIA GPUs have no scalable vectors",
	vector.ScalableInsert:  "NVIDIA GPUs have no scalable vectors",
	vector.ScalableExtract: "NVIDIA GPUs have no scalable vectors",
	vector.TypeCast:        "use vector.load on the memref instead",
}

func rejectVectorOp(fe *FuncEmitter, op *ir.Operation) {
	Fail(op, "'%s' is not supported by tmac's code generation for sm_90a: %s", op.Name(), rejections[op.Name()])
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

// shapeOf is the shape of a vector type (nil for scalars and 0-D vectors).
func shapeOf(t ir.Type) []int64 {
	if v, ok := t.(*ir.VectorType); ok {
		return v.Shape()
	}
	return nil
}

// rowMajorStrides are the element strides of a row-major shape.
func rowMajorStrides(shape []int64) []int64 { return ir.IdentityStrides(shape) }

// undefLane marks a shuffle lane whose value does not matter.
const undefLane = -1

// shuffle returns the lanes mask of a and b side by side (b undefined when
// nil; a and b must have the same type): lane i of the result is lane
// mask[i] of a++b, undefined for undefLane.
func (fe *FuncEmitter) shuffle(a, b value.Value, mask []int64) value.Value {
	if b == nil {
		b = constant.NewUndef(a.Type())
	}
	ms := make([]constant.Constant, len(mask))
	for i, m := range mask {
		if m == undefLane {
			ms[i] = constant.NewUndef(types.I32)
		} else {
			ms[i] = I32(m)
		}
	}
	return fe.B().NewShuffleVector(a, b, constant.NewVector(types.NewVector(uint64(len(mask)), types.I32), ms...))
}

// lanes is the number of lanes of an LLVM vector value.
func lanes(v value.Value) int64 { return int64(v.Type().(*types.VectorType).Len) }

// widen pads v with undefined lanes to n lanes (n >= its length).
func (fe *FuncEmitter) widen(v value.Value, n int64) value.Value {
	l := lanes(v)
	if l == n {
		return v
	}
	mask := make([]int64, n)
	for i := range mask {
		mask[i] = undefLane
		if int64(i) < l {
			mask[i] = int64(i)
		}
	}
	return fe.shuffle(v, nil, mask)
}

// select2 picks lanes from a and b (any lengths, same element type) into a
// vector of len(pick) lanes: pick[i] = {0, k} is lane k of a, {1, k} lane
// k of b.
func (fe *FuncEmitter) select2(a, b value.Value, pick [][2]int64) value.Value {
	n := max(lanes(a), lanes(b))
	a, b = fe.widen(a, n), fe.widen(b, n)
	mask := make([]int64, len(pick))
	for i, p := range pick {
		mask[i] = p[0]*n + p[1]
	}
	return fe.shuffle(a, b, mask)
}

// concat joins vectors of the same element type end to end.
func (fe *FuncEmitter) concat(parts []value.Value) value.Value {
	for len(parts) > 1 {
		var next []value.Value
		for i := 0; i+1 < len(parts); i += 2 {
			a, b := parts[i], parts[i+1]
			var pick [][2]int64
			for k := range lanes(a) {
				pick = append(pick, [2]int64{0, k})
			}
			for k := range lanes(b) {
				pick = append(pick, [2]int64{1, k})
			}
			next = append(next, fe.select2(a, b, pick))
		}
		if len(parts)%2 == 1 {
			next = append(next, parts[len(parts)-1])
		}
		parts = next
	}
	return parts[0]
}

// rowIndices are the memref indices of a row: idx with the row's leading
// indices added to the dimensions in front of the innermost one.
func (fe *FuncEmitter) rowIndices(idx []value.Value, row []int64) []value.Value {
	out := append([]value.Value(nil), idx...)
	first := len(idx) - 1 - len(row)
	for k, r := range row {
		if r != 0 {
			out[first+k] = fe.Add(out[first+k], I64(r))
		}
	}
	return out
}

// vectorAccess is what a vector load or store needs: the memref, the start
// indices, the IR vector type and the alignment to use for each access
// (0: the row's natural alignment).
type vectorAccess struct {
	m     *MemRef
	idx   []value.Value
	vt    *ir.VectorType
	align ir.Attribute
	nt    ir.Attribute
	// elemAligned: without an alignment attribute, align to the element
	// rather than to the row (the transfers promise no more).
	elemAligned bool
}

// access describes the memory access of a vector.load/store or of a
// simple transfer (rejecting the transfer forms code generation does not
// lower).
func (fe *FuncEmitter) access(op *ir.Operation) vectorAccess {
	switch op.Name() {
	case vector.Load:
		l := vector.LoadOp{Op: op}
		return vectorAccess{fe.Mem(l.Base()), fe.Vals(l.Indices()), l.Result().Type().(*ir.VectorType), l.Alignment(), l.Nontemporal(), false}
	case vector.Store:
		s := vector.StoreOp{Op: op}
		return vectorAccess{fe.Mem(s.Base()), fe.Vals(s.Indices()), s.ValueToStore().Type().(*ir.VectorType), s.Alignment(), s.Nontemporal(), false}
	case vector.TransferRead:
		t := vector.TransferReadOp{Op: op}
		checkSimpleTransfer(op)
		return vectorAccess{fe.Mem(t.Base()), fe.Vals(t.Indices()), t.Vector().Type().(*ir.VectorType), nil, nil, true}
	}
	t := vector.TransferWriteOp{Op: op}
	checkSimpleTransfer(op)
	return vectorAccess{fe.Mem(t.Base()), fe.Vals(t.Indices()), t.ValueToStore().Type().(*ir.VectorType), nil, nil, true}
}

// checkSimpleTransfer rejects the transfers that are not plain loads and
// stores (vector.SimpleTransfer says which are).
func checkSimpleTransfer(op *ir.Operation) {
	if why := vector.SimpleTransfer(op); why != "" {
		Fail(op, "'%s' cannot be compiled: %s; tmac compiles the in-bounds, unmasked, minor-identity transfers of memrefs of scalars", op.Name(), why)
	}
}

// rowPtr returns a pointer to a row of n elements at the memref indices
// idx, with the row's LLVM type.
func (fe *FuncEmitter) rowPtr(op *ir.Operation, a vectorAccess, idx []value.Value, rowT types.Type) value.Value {
	return fe.pointerCast(fe.ElemPtr(op, a.m, idx), rowT)
}

// rowAlign is the alignment of one row access.
func (fe *FuncEmitter) rowAlign(op *ir.Operation, a vectorAccess, rowT *types.VectorType) int64 {
	if a.elemAligned {
		return elemBytes(op, rowT.ElemType)
	}
	return vectorAlign(op, rowT)
}

// lowerVectorLoad reads a vector as rows of its innermost dimension, each
// one LLVM vector load (one load in all for 1-D vectors and for memrefs
// whose element is the vector).
func lowerVectorLoad(fe *FuncEmitter, op *ir.Operation) {
	a := fe.access(op)
	vt := fe.Type(op, a.vt).(*types.VectorType)
	rows, n := vector.Rows(a.vt.Shape())
	if _, vecElem := a.m.Type.Elem.(*ir.VectorType); vecElem {
		rows, n = [][]int64{nil}, int64(vt.Len)
	}
	rowT := types.NewVector(uint64(n), vt.ElemType)
	var parts []value.Value
	for _, row := range rows {
		ld := fe.B().NewLoad(rowT, fe.rowPtr(op, a, fe.rowIndices(a.idx, row), rowT))
		fe.memAccessAttrs(a.align, a.nt, &ld.Align, &ld.Metadata, fe.rowAlign(op, a, rowT))
		parts = append(parts, ld)
	}
	fe.Set(op.Result(0), fe.concat(parts))
}

// lowerVectorStore writes a vector row by row (see lowerVectorLoad).
func lowerVectorStore(fe *FuncEmitter, op *ir.Operation) {
	a := fe.access(op)
	v := fe.Val(op.Operand(0))
	vt := v.Type().(*types.VectorType)
	rows, n := vector.Rows(a.vt.Shape())
	if _, vecElem := a.m.Type.Elem.(*ir.VectorType); vecElem {
		rows, n = [][]int64{nil}, int64(vt.Len)
	}
	rowT := types.NewVector(uint64(n), vt.ElemType)
	for r, row := range rows {
		x := v
		if len(rows) > 1 {
			x = fe.shuffle(v, nil, iota64(int64(r)*n, n))
		}
		st := fe.B().NewStore(x, fe.rowPtr(op, a, fe.rowIndices(a.idx, row), rowT))
		fe.memAccessAttrs(a.align, a.nt, &st.Align, &st.Metadata, fe.rowAlign(op, a, rowT))
	}
}

// iota64 is [from, from+n).
func iota64(from, n int64) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = from + int64(i)
	}
	return out
}

// asVector returns x itself when it is a vector, else a one-lane vector
// holding it.
func (fe *FuncEmitter) asVector(x value.Value) value.Value {
	if _, ok := x.Type().(*types.VectorType); ok {
		return x
	}
	return fe.B().NewInsertElement(constant.NewUndef(types.NewVector(1, x.Type())), x, I32(0))
}

// lowerBroadcast: result lane i takes the source lane its index maps to
// (leading result dims dropped, source dims of size 1 pinned to 0): one
// shufflevector.
func lowerBroadcast(fe *FuncEmitter, op *ir.Operation) {
	b := vector.BroadcastOp{Op: op}
	rt := b.Vector().Type().(*ir.VectorType)
	fe.Type(op, rt)
	src := fe.Val(b.Source())
	if b.Source().Type() == ir.Type(rt) {
		fe.Set(b.Vector(), src)
		return
	}
	mask := vector.BroadcastLanes(shapeOf(b.Source().Type()), rt.Shape())
	if !isVectorType(src.Type()) {
		// Into lane 0 of the result type first: one shuffle of the same
		// type then splats it.
		src = fe.B().NewInsertElement(constant.NewUndef(fe.Type(op, rt)), src, I32(0))
	}
	fe.Set(b.Vector(), fe.shuffle(src, nil, mask))
}

// position is the flat lane offset of an extract/insert position in a
// vector of the given shape, and the number of lanes it covers: a constant
// (dyn nil) when every index is static; poison when an index is -1.
type position struct {
	off    int64
	dyn    value.Value // i32 offset when some index is dynamic
	size   int64
	poison bool
}

func (fe *FuncEmitter) position(shape []int64, static []int64, dynamic []ir.Value) position {
	strides := rowMajorStrides(shape)
	p := position{size: 1}
	if len(static) < len(shape) {
		p.size = ir.NumElements(shape[len(static):])
	}
	next := 0
	var dyn value.Value
	for d, s := range static {
		if s == ir.Dynamic {
			i := fe.B().NewTrunc(fe.Val(dynamic[next]), types.I32)
			next++
			term := value.Value(i)
			if strides[d] != 1 {
				term = fe.B().NewMul(i, I32(strides[d]))
			}
			if dyn == nil {
				dyn = term
			} else {
				dyn = fe.B().NewAdd(dyn, term)
			}
			continue
		}
		if s == vector.Poison {
			p.poison = true
		}
		p.off += s * strides[d]
	}
	if dyn != nil && p.off != 0 {
		dyn = fe.B().NewAdd(dyn, I32(p.off))
	}
	p.dyn = dyn
	return p
}

// lanesAt returns lanes [off, off+size) of v (dynamic offset: one
// extractelement per lane).
func (fe *FuncEmitter) lanesAt(v value.Value, p position) []value.Value {
	out := make([]value.Value, p.size)
	for k := range out {
		var i value.Value = I32(p.off + int64(k))
		if p.dyn != nil {
			i = p.dyn
			if k > 0 {
				i = fe.B().NewAdd(p.dyn, I32(int64(k)))
			}
		}
		out[k] = fe.B().NewExtractElement(v, i)
	}
	return out
}

func lowerExtract(fe *FuncEmitter, op *ir.Operation) {
	x := vector.ExtractOp{Op: op}
	src := fe.Val(x.Vector())
	res := x.Result().Type()
	rt := fe.Type(op, res)
	p := fe.position(shapeOf(x.Vector().Type()), vector.Ints(x.StaticPosition()), x.DynamicPosition())
	switch {
	case p.poison:
		fe.Set(x.Result(), constant.NewUndef(rt))
	case p.dyn == nil && isVectorType(rt):
		fe.Set(x.Result(), fe.shuffle(src, nil, iota64(p.off, p.size)))
	case isVectorType(rt):
		var acc value.Value = constant.NewUndef(rt)
		for k, e := range fe.lanesAt(src, p) {
			acc = fe.B().NewInsertElement(acc, e, I32(int64(k)))
		}
		fe.Set(x.Result(), acc)
	default:
		fe.Set(x.Result(), fe.lanesAt(src, p)[0])
	}
}

func isVectorType(t types.Type) bool { _, ok := t.(*types.VectorType); return ok }

func lowerInsert(fe *FuncEmitter, op *ir.Operation) {
	x := vector.InsertOp{Op: op}
	dst := fe.Val(x.Dest())
	p := fe.position(shapeOf(x.Dest().Type()), vector.Ints(x.StaticPosition()), x.DynamicPosition())
	if p.poison {
		fe.Set(x.Result(), constant.NewUndef(dst.Type()))
		return
	}
	scalar := fe.Val(x.ValueToStore())
	if p.dyn != nil && !isVectorType(scalar.Type()) {
		fe.Set(x.Result(), fe.B().NewInsertElement(dst, scalar, p.dyn))
		return
	}
	src := fe.asVector(scalar)
	if p.dyn == nil {
		pick := make([][2]int64, lanes(dst))
		for i := range pick {
			pick[i] = [2]int64{0, int64(i)}
			if k := int64(i) - p.off; k >= 0 && k < p.size {
				pick[i] = [2]int64{1, k}
			}
		}
		fe.Set(x.Result(), fe.select2(dst, src, pick))
		return
	}
	acc := dst
	for k := range p.size {
		e := fe.B().NewExtractElement(src, I32(k))
		i := value.Value(p.dyn)
		if k > 0 {
			i = fe.B().NewAdd(p.dyn, I32(k))
		}
		acc = fe.B().NewInsertElement(acc, e, i)
	}
	fe.Set(x.Result(), acc)
}

// lowerShapeCast: the flat lanes do not change.
func lowerShapeCast(fe *FuncEmitter, op *ir.Operation) {
	x := vector.ShapeCastOp{Op: op}
	fe.Type(op, x.Result().Type())
	fe.Set(x.Result(), fe.Val(x.Source()))
}

// lowerVectorBitcast: the rows of the innermost dimension are contiguous
// in the flat vector, so one bitcast of the whole vector reinterprets each.
func lowerVectorBitcast(fe *FuncEmitter, op *ir.Operation) {
	x := vector.BitcastOp{Op: op}
	rt := fe.Type(op, x.Result().Type())
	src := fe.Val(x.Source())
	if src.Type().Equal(rt) {
		fe.Set(x.Result(), src)
		return
	}
	fe.Set(x.Result(), fe.B().NewBitCast(src, rt))
}

func lowerTranspose(fe *FuncEmitter, op *ir.Operation) {
	x := vector.TransposeOp{Op: op}
	perm := vector.Ints(x.Permutation())
	mask := vector.TransposeLanes(shapeOf(x.Vector().Type()), shapeOf(x.Result().Type()), perm)
	fe.Set(x.Result(), fe.shuffle(fe.Val(x.Vector()), nil, mask))
}

func lowerExtractStridedSlice(fe *FuncEmitter, op *ir.Operation) {
	x := vector.ExtractStridedSliceOp{Op: op}
	offsets := vector.Ints(x.Offsets())
	mask := vector.ExtractStridedSliceLanes(shapeOf(x.Vector().Type()), shapeOf(x.Result().Type()), offsets)
	fe.Set(x.Result(), fe.shuffle(fe.Val(x.Vector()), nil, mask))
}

func lowerInsertStridedSlice(fe *FuncEmitter, op *ir.Operation) {
	x := vector.InsertStridedSliceOp{Op: op}
	offsets := vector.Ints(x.Offsets())
	pick := vector.InsertStridedSliceLanes(shapeOf(x.ValueToStore().Type()), shapeOf(x.Dest().Type()), offsets)
	fe.Set(x.Res(), fe.select2(fe.Val(x.Dest()), fe.Val(x.ValueToStore()), pick))
}

// lowerShuffle copies whole rows (the trailing dims) of v1 and v2 by the
// mask over their leading dimension.
func lowerShuffle(fe *FuncEmitter, op *ir.Operation) {
	x := vector.ShuffleOp{Op: op}
	pick := vector.ShuffleLanes(shapeOf(x.V1().Type()), vector.Ints(x.Mask()))
	a, b := fe.Val(x.V1()), fe.Val(x.V2())
	n := max(lanes(a), lanes(b))
	fe.Set(x.Vector(), fe.shuffle(fe.widen(a, n), fe.widen(b, n), twoSourceMask(pick, n)))
}

// twoSourceMask is the shufflevector mask of a two-operand lane map, the
// operands n lanes each.
func twoSourceMask(pick [][2]int64, n int64) []int64 {
	mask := make([]int64, len(pick))
	for i, p := range pick {
		mask[i] = p[0]*n + p[1]
		if p[1] == undefLane {
			mask[i] = undefLane
		}
	}
	return mask
}

// lowerInterleave: row r of the result alternates lanes of row r of lhs
// and rhs.
func lowerInterleave(fe *FuncEmitter, op *ir.Operation) {
	x := vector.InterleaveOp{Op: op}
	a, b := fe.Val(x.Lhs()), fe.Val(x.Rhs())
	pick := vector.InterleaveLanes(shapeOf(x.Lhs().Type()))
	fe.Set(x.Result(), fe.shuffle(a, b, twoSourceMask(pick, lanes(a))))
}

func lowerDeinterleave(fe *FuncEmitter, op *ir.Operation) {
	x := vector.DeinterleaveOp{Op: op}
	src := fe.Val(x.Source())
	s := shapeOf(x.Source().Type())
	for half, res := range []ir.Value{x.Res1(), x.Res2()} {
		fe.Set(res, fe.shuffle(src, nil, vector.DeinterleaveLanes(s, half)))
	}
}

func lowerFromElements(fe *FuncEmitter, op *ir.Operation) {
	x := vector.FromElementsOp{Op: op}
	var acc value.Value = constant.NewUndef(fe.Type(op, x.Dest().Type()))
	for i, e := range x.Elements() {
		acc = fe.B().NewInsertElement(acc, fe.Val(e), I32(int64(i)))
	}
	fe.Set(x.Dest(), acc)
}

func lowerToElements(fe *FuncEmitter, op *ir.Operation) {
	x := vector.ToElementsOp{Op: op}
	src := fe.Val(x.Source())
	for i, e := range x.Elements() {
		fe.Set(e, fe.B().NewExtractElement(src, I32(int64(i))))
	}
}

func lowerStep(fe *FuncEmitter, op *ir.Operation) {
	x := vector.StepOp{Op: op}
	vt := fe.Type(op, x.Result().Type()).(*types.VectorType)
	elems := make([]constant.Constant, vt.Len)
	for i := range elems {
		elems[i] = I64(int64(i))
	}
	fe.Set(x.Result(), constant.NewVector(vt, elems...))
}

// maskLanes is the i1 constant whose lane i is set(index of i).
func maskLanes(vt *types.VectorType, shape []int64, set func(idx []int64) bool) constant.Constant {
	elems := make([]constant.Constant, vt.Len)
	for i := range elems {
		v := int64(0)
		if set(ir.Delinearize(shape, int64(i))) {
			v = 1
		}
		elems[i] = constant.NewInt(types.I1, v)
	}
	return constant.NewVector(vt, elems...)
}

func lowerConstantMask(fe *FuncEmitter, op *ir.Operation) {
	x := vector.ConstantMaskOp{Op: op}
	vt := fe.Type(op, x.Result().Type()).(*types.VectorType)
	sizes := vector.Ints(x.MaskDimSizes())
	shape := shapeOf(x.Result().Type())
	fe.Set(x.Result(), maskLanes(vt, shape, func(idx []int64) bool {
		if len(shape) == 0 {
			return sizes[0] == 1
		}
		for d, i := range idx {
			if i >= sizes[d] {
				return false
			}
		}
		return true
	}))
}

// lowerCreateMask: lane set when each of its indices is below the
// operand of that dimension (signed: a negative size sets nothing).
func lowerCreateMask(fe *FuncEmitter, op *ir.Operation) {
	x := vector.CreateMaskOp{Op: op}
	vt := fe.Type(op, x.Result().Type()).(*types.VectorType)
	shape := shapeOf(x.Result().Type())
	b := fe.B()
	it := types.NewVector(vt.Len, types.I64)
	var acc value.Value
	for d, size := range x.Operands() {
		elems := make([]constant.Constant, vt.Len)
		for i := range elems {
			k := int64(0)
			if len(shape) > 0 {
				k = ir.Delinearize(shape, int64(i))[d]
			}
			elems[i] = I64(k)
		}
		splat := fe.shuffle(b.NewInsertElement(constant.NewUndef(it), fe.Val(size), I32(0)), nil, make([]int64, vt.Len))
		c := b.NewICmp(enum.IPredSLT, constant.NewVector(it, elems...), splat)
		if acc == nil {
			acc = c
		} else {
			acc = b.NewAnd(acc, c)
		}
	}
	fe.Set(x.Result(), acc)
}
