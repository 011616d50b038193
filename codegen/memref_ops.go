package codegen

import (
	"slices"

	lir "github.com/llir/llvm/ir"
	"github.com/llir/llvm/ir/constant"
	"github.com/llir/llvm/ir/enum"
	"github.com/llir/llvm/ir/metadata"
	"github.com/llir/llvm/ir/types"
	"github.com/llir/llvm/ir/value"

	"github.com/tmac-dev/tmac/dialects/gpu"
	"github.com/tmac-dev/tmac/dialects/memref"
	"github.com/tmac-dev/tmac/internal/sm90"
	"github.com/tmac-dev/tmac/ir"
)

// Lowering of the memref ops inside kernels. Memrefs never exist as LLVM
// values: every op here computes a new MemRef descriptor (base pointer plus
// i64 offset, sizes and strides, constants where the type is static) or
// reads/writes memory through one. Index arithmetic is i64 throughout.

func init() {
	Register(lowerMemLoad, memref.Load)
	Register(lowerMemStore, memref.Store)
	Register(lowerAlloc, memref.Alloc, memref.Alloca)
	Register(lowerDealloc, memref.Dealloc)
	Register(lowerView, memref.View)
	Register(lowerSubView, memref.Subview)
	Register(lowerMemCast, memref.Cast)
	Register(lowerReinterpretCast, memref.ReinterpretCast)
	Register(lowerGetGlobal, memref.GetGlobal)
	Register(lowerDim, memref.Dim)
	Register(lowerAssumeAlignment, memref.AssumeAlignment)
	Register(lowerDynamicSharedMemory, gpu.DynamicSharedMemory)
}

// Address spaces of the NVPTX target.
const (
	asGeneric types.AddrSpace = 0
	asGlobal  types.AddrSpace = 1
	asShared  types.AddrSpace = 3
	asLocal   types.AddrSpace = 5
)

// defaultSharedAlign is the alignment of a shared-memory allocation without
// an `alignment` attribute. TMA destinations need 128 (1024 with 128-byte
// swizzling): such allocations must say so explicitly.
const defaultSharedAlign = 16

// rankedMemRef returns the ranked memref type of v, failing at op on
// unranked memrefs (they have no lowering inside kernels).
func rankedMemRef(op *ir.Operation, v ir.Value) *ir.MemRefType {
	switch t := v.Type().(type) {
	case *ir.MemRefType:
		return t
	case *ir.UnrankedMemRefType:
		Fail(op, "unranked memref '%s' cannot be compiled in a kernel", t)
	}
	Fail(op, "expected a memref, got '%s'", v.Type())
	return nil
}

// memSpace returns the NVPTX address space of a memref type.
func memSpace(op *ir.Operation, t *ir.MemRefType) types.AddrSpace {
	as, ok := addrSpace(t.MemorySpace)
	if !ok {
		Fail(op, "memory space of '%s' is not supported", t)
	}
	return as
}

// describe builds the descriptor of a memref of type t at base: offset,
// sizes and strides the type makes static are constants, the others come
// from the computed values (which may themselves be constants). Layouts
// that are not strided are rejected.
func describe(op *ir.Operation, t *ir.MemRefType, base, offset value.Value, sizes, strides []value.Value) *MemRef {
	st, off, ok := memref.StridesAndOffset(t)
	if !ok {
		Fail(op, "layout of '%s' is not strided", t)
	}
	m := &MemRef{Type: t, Base: base, Offset: offset}
	if off != ir.Dynamic {
		m.Offset = I64(off)
	}
	for i, s := range t.Shape() {
		if s != ir.Dynamic {
			m.Sizes = append(m.Sizes, I64(s))
		} else {
			m.Sizes = append(m.Sizes, sizes[i])
		}
	}
	for i, s := range st {
		if s != ir.Dynamic {
			m.Strides = append(m.Strides, I64(s))
		} else {
			m.Strides = append(m.Strides, strides[i])
		}
	}
	return m
}

// mixed returns the values of an offsets/sizes/strides list: the static
// entries of the dense array attribute static (named attr), with each
// dynamic entry taken in order from dyn.
func mixed(fe *FuncEmitter, op *ir.Operation, attr string, static ir.Attribute, dyn []ir.Value) []value.Value {
	a := staticInts(op, attr, static)
	out := make([]value.Value, len(a))
	for i, s := range a {
		if s != ir.Dynamic {
			out[i] = I64(s)
			continue
		}
		if len(dyn) == 0 {
			Fail(op, "too few dynamic values for '%s'", attr)
		}
		out[i], dyn = fe.Val(dyn[0]), dyn[1:]
	}
	return out
}

// staticInts returns the static entries of a dense i64 array attribute
// (static, named attr).
func staticInts(op *ir.Operation, attr string, static ir.Attribute) []int64 {
	a, ok := static.(*ir.DenseArrayAttr)
	if !ok {
		Fail(op, "missing '%s'", attr)
	}
	return a.Ints
}

// nontemporalNode returns the module's `!{i32 1}` node used by the
// !nontemporal attachment (NVPTX turns it into an .L1::no_allocate /
// streaming access where the target supports one), adding it once.
func (fe *FuncEmitter) nontemporalNode() *metadata.Tuple {
	for _, d := range fe.Mod.M.MetadataDefs {
		if t, ok := d.(*metadata.Tuple); ok && len(t.Fields) == 1 && t.Fields[0].String() == "i32 1" {
			return t
		}
	}
	t := &metadata.Tuple{MetadataID: -1, Fields: []metadata.Field{I32(1)}}
	fe.Mod.M.MetadataDefs = append(fe.Mod.M.MetadataDefs, t)
	return t
}

// attrIntOr returns the value of an integer attribute, or def when a is
// absent or not an integer.
func attrIntOr(a ir.Attribute, def int64) int64 {
	if v, ok := ir.AttrInt(a); ok {
		return v
	}
	return def
}

// memAccessAttrs applies the `alignment` and `nontemporal` attributes of a
// load/store op to an LLVM access. defAlign is used without an explicit
// alignment (0: the ABI alignment of the accessed type).
func (fe *FuncEmitter) memAccessAttrs(alignment, nontemporal ir.Attribute, align *lir.Align, md *lir.Metadata, defAlign int64) {
	if a := attrIntOr(alignment, defAlign); a > 0 {
		*align = lir.Align(a)
	}
	if attrIntOr(nontemporal, 0) != 0 {
		*md = append(*md, &metadata.Attachment{Name: "nontemporal", Node: fe.nontemporalNode()})
	}
}

func lowerMemLoad(fe *FuncEmitter, op *ir.Operation) {
	l := memref.LoadOp{Op: op}
	m := fe.Mem(l.Memref())
	p := fe.ElemPtr(op, m, fe.Vals(l.Indices()))
	ld := fe.B().NewLoad(fe.ElemType(op, m), p)
	fe.memAccessAttrs(l.Alignment(), l.Nontemporal(), &ld.Align, &ld.Metadata, 0)
	fe.Set(l.Result(), ld)
}

func lowerMemStore(fe *FuncEmitter, op *ir.Operation) {
	s := memref.StoreOp{Op: op}
	v := fe.Val(s.Value())
	m := fe.Mem(s.Memref())
	p := fe.ElemPtr(op, m, fe.Vals(s.Indices()))
	st := fe.B().NewStore(v, p)
	fe.memAccessAttrs(s.Alignment(), s.Nontemporal(), &st.Align, &st.Metadata, 0)
}

// lowerAlloc lowers memref.alloc and memref.alloca by memory space:
// workgroup (3) allocations become static shared-memory globals; private
// (5) allocations, and allocas without a memory space, become LLVM allocas
// (static ones in the entry block); global-memory allocations cannot be
// made by a kernel.
func lowerAlloc(fe *FuncEmitter, op *ir.Operation) {
	a, _ := memref.AsAllocLike(op)
	t := a.Memref().Type().(*ir.MemRefType)
	if t.Layout != nil {
		if st, off, ok := memref.StridesAndOffset(t); !ok || off != 0 || !slices.Equal(st, ir.IdentityStrides(t.Shape())) {
			Fail(op, "allocations with a non-identity layout cannot be compiled ('%s')", t)
		}
	}
	as := memSpace(op, t)
	switch {
	case as == asShared:
		fe.SetMem(a.Memref(), fe.staticAlloc(op, t, asShared, int(attrIntOr(a.Alignment(), defaultSharedAlign))))
	case as == asLocal || (as == asGeneric && op.Name() == memref.Alloca):
		if b, ok := ir.ShapeBytes(t.Shape(), ir.BitWidth(t.Elem)); ok && b > sm90.MaxLocalBytesPerThread {
			Fail(op, "a private buffer of %d bytes in each thread ('%s'), more than the %d KB of local memory a thread can have", b, t, sm90.MaxLocalBytesPerThread>>10)
		}
		fe.SetMem(a.Memref(), fe.stackAlloc(a, op, t, as))
	default:
		Fail(op, "'%s' of '%s' cannot be compiled in a kernel: only shared (#gpu.address_space<workgroup>) and private memory can be allocated on the device; allocate global memory on the host and pass it as an argument", op.Name(), t)
	}
}

// stackAlloc lowers a private allocation to an LLVM alloca. The data layout
// keeps allocas in the generic address space (llc places them in .local);
// a memref in address space 5 gets an addrspacecast to a local pointer.
// Statically shaped allocas go to the start of the entry block, so an
// allocation inside a loop does not grow the stack; dynamic ones are
// emitted in place (PTX `alloca`, sm_52+ with PTX 7.3+).
func (fe *FuncEmitter) stackAlloc(alloc memref.AllocLike, op *ir.Operation, t *ir.MemRefType, as types.AddrSpace) *MemRef {
	elem := fe.Type(op, t.Elem)
	dyn := fe.Vals(alloc.DynamicSizes())
	if len(alloc.SymbolOperands()) != 0 {
		Fail(op, "allocations with layout symbols cannot be compiled")
	}
	var sizes []value.Value
	for _, s := range t.Shape() {
		if s == ir.Dynamic {
			sizes, dyn = append(sizes, dyn[0]), dyn[1:]
		} else {
			sizes = append(sizes, I64(s))
		}
	}
	// Row-major strides over the (possibly dynamic) sizes.
	strides := make([]value.Value, len(sizes))
	count := value.Value(I64(1))
	static := ir.HasStaticShape(t.Shape())
	for i := len(sizes) - 1; i >= 0; i-- {
		strides[i] = count
		if static {
			count = I64(mulConst(count, sizes[i]))
		} else {
			count = fe.Mul(count, sizes[i])
		}
	}
	var a *lir.InstAlloca
	if static {
		a = lir.NewAlloca(elem)
	} else {
		a = fe.B().NewAlloca(elem)
	}
	a.NElems = count
	if c, ok := constInt(count); ok && c == 1 {
		a.NElems = nil
	}
	if al := attrIntOr(alloc.Alignment(), 0); al > 0 {
		a.Align = lir.Align(al)
	}
	var base value.Value = a
	if static {
		entry := fe.Fn.Blocks[0]
		insts := []lir.Instruction{a}
		if as != asGeneric {
			c := lir.NewAddrSpaceCast(a, PtrTo(elem, as))
			insts = append(insts, c)
			base = c
		}
		// After the static allocas already hoisted, keeping program order.
		at := 0
		for at < len(entry.Insts) {
			switch x := entry.Insts[at].(type) {
			case *lir.InstAlloca:
				if _, ok := x.NElems.(*constant.Int); ok || x.NElems == nil {
					at++
					continue
				}
			case *lir.InstAddrSpaceCast:
				if _, ok := x.From.(*lir.InstAlloca); ok {
					at++
					continue
				}
			}
			break
		}
		rest := append(insts, entry.Insts[at:]...)
		entry.Insts = append(entry.Insts[:at:at], rest...)
	} else {
		if as != asGeneric {
			base = fe.B().NewAddrSpaceCast(a, PtrTo(elem, as))
		}
	}
	return describe(op, t, base, I64(0), sizes, strides)
}

func mulConst(a, b value.Value) int64 {
	x, _ := constInt(a)
	y, _ := constInt(b)
	return x * y
}

// lowerDealloc accepts deallocations of shared and private memory (static
// globals and allocas, which need no freeing) and rejects the others.
func lowerDealloc(fe *FuncEmitter, op *ir.Operation) {
	t := rankedMemRef(op, memref.DeallocOp{Op: op}.Memref())
	switch memSpace(op, t) {
	case asShared, asLocal:
		return
	}
	Fail(op, "memref.dealloc of '%s' cannot be compiled in a kernel: only shared and private memory can be deallocated (as a no-op)", t)
}

// lowerView reinterprets a byte buffer: the result's base is the byte at
// source offset + byte_shift, cast to the element type; the layout is the
// row-major one over the static and dynamic sizes, with offset 0.
func lowerView(fe *FuncEmitter, op *ir.Operation) {
	v := memref.ViewOp{Op: op}
	src := fe.Mem(v.Source())
	t := v.Result().Type().(*ir.MemRefType)
	elem := fe.Type(op, t.Elem)
	shift := fe.Add(src.Offset, fe.Val(v.ByteShift()))
	bytes := fe.pointerCast(src.Base, types.I8)
	if c, ok := constInt(shift); !ok || c != 0 {
		gep := fe.B().NewGetElementPtr(types.I8, bytes, shift)
		gep.InBounds = true
		bytes = gep
	}
	base := fe.pointerCast(bytes, elem)
	dyn := fe.Vals(v.Sizes())
	sizes := make([]value.Value, t.Rank())
	for i, s := range t.Shape() {
		if s == ir.Dynamic {
			sizes[i], dyn = dyn[0], dyn[1:]
		} else {
			sizes[i] = I64(s)
		}
	}
	strides := make([]value.Value, t.Rank())
	run := value.Value(I64(1))
	for i := t.Rank() - 1; i >= 0; i-- {
		strides[i] = run
		if i > 0 {
			run = fe.Mul(run, sizes[i])
		}
	}
	fe.SetMem(v.Result(), describe(op, t, base, I64(0), sizes, strides))
}

// lowerSubView: offset' = offset + Σ off_i·stride_i, size'_i = size_i,
// stride'_i = stride_i·step_i, then the dims the result type drops (static
// size 1, chosen as the verifier does) are removed.
func lowerSubView(fe *FuncEmitter, op *ir.Operation) {
	sv := memref.SubviewOp{Op: op}
	srcT := rankedMemRef(op, sv.Source())
	src := fe.Mem(sv.Source())
	resT := sv.Result().Type().(*ir.MemRefType)
	offs := mixed(fe, op, "static_offsets", sv.StaticOffsets(), sv.Offsets())
	sizes := mixed(fe, op, "static_sizes", sv.StaticSizes(), sv.Sizes())
	steps := mixed(fe, op, "static_strides", sv.StaticStrides(), sv.Strides())
	off := src.Offset
	strides := make([]value.Value, len(steps))
	for i := range offs {
		off = fe.Add(off, fe.Mul(offs[i], src.Strides[i]))
		strides[i] = fe.Mul(src.Strides[i], steps[i])
	}
	dropped := subviewDroppedDims(sv, srcT, resT)
	var keptSizes, keptStrides []value.Value
	for i := range sizes {
		if !dropped[i] {
			keptSizes = append(keptSizes, sizes[i])
			keptStrides = append(keptStrides, strides[i])
		}
	}
	fe.SetMem(sv.Result(), describe(op, resT, src.Base, off, keptSizes, keptStrides))
}

// subviewDroppedDims tells which source dims a rank-reducing subview drops.
func subviewDroppedDims(sv memref.SubviewOp, srcT, resT *ir.MemRefType) []bool {
	op := sv.Op
	n := srcT.Rank()
	if resT.Rank() == n {
		return make([]bool, n)
	}
	full, ok := memref.InferSubViewResultType(srcT, staticInts(op, "static_offsets", sv.StaticOffsets()),
		staticInts(op, "static_sizes", sv.StaticSizes()), staticInts(op, "static_strides", sv.StaticStrides()))
	if !ok {
		Fail(op, "cannot infer the layout of this subview")
	}
	if d, ok := memref.StrideDroppedDims(full, resT); ok {
		return d
	}
	if d, ok := memref.RankReductionMask(full.Shape(), resT.Shape()); ok {
		return d
	}
	Fail(op, "cannot tell which dims this rank-reducing subview drops")
	return nil
}

// lowerMemCast keeps the descriptor; the result type may make dynamic
// parts static (they are then taken as constants) or static parts dynamic.
func lowerMemCast(fe *FuncEmitter, op *ir.Operation) {
	c := memref.CastOp{Op: op}
	rankedMemRef(op, c.Source())
	resT := rankedMemRef(op, c.Dest())
	src := fe.Mem(c.Source())
	fe.SetMem(c.Dest(), describe(op, resT, src.Base, src.Offset, src.Sizes, src.Strides))
}

// lowerReinterpretCast keeps the source base pointer (the aligned pointer;
// the source offset is replaced, not added to) and takes offset, sizes and
// strides from the op.
func lowerReinterpretCast(fe *FuncEmitter, op *ir.Operation) {
	rc := memref.ReinterpretCastOp{Op: op}
	rankedMemRef(op, rc.Source())
	src := fe.Mem(rc.Source())
	resT := rc.Result().Type().(*ir.MemRefType)
	offs := mixed(fe, op, "static_offsets", rc.StaticOffsets(), rc.Offsets())
	sizes := mixed(fe, op, "static_sizes", rc.StaticSizes(), rc.Sizes())
	strides := mixed(fe, op, "static_strides", rc.StaticStrides(), rc.Strides())
	if len(offs) != 1 {
		Fail(op, "expected one offset")
	}
	fe.SetMem(rc.Result(), describe(op, resT, src.Base, offs[0], sizes, strides))
}

func lowerGetGlobal(fe *FuncEmitter, op *ir.Operation) {
	g := memref.GetGlobalOp{Op: op}
	t := g.Result().Type().(*ir.MemRefType)
	ref, _ := g.Name().(*ir.SymbolRefAttr)
	if ref == nil {
		Fail(op, "memref.get_global without a symbol")
	}
	p := fe.GlobalPtr(op, ref.Leaf(), t)
	if want := memSpace(op, t); p.Type().(*types.PointerType).AddrSpace != want {
		Fail(op, "memref.get_global @%s: the global lives in another memory space than '%s'", ref.Leaf(), t)
	}
	fe.SetMem(g.Result(), describe(op, t, p, I64(0), nil, nil))
}

// lowerDim returns a size of the descriptor; a non-constant dim index
// selects among the sizes.
func lowerDim(fe *FuncEmitter, op *ir.Operation) {
	d := memref.DimOp{Op: op}
	rankedMemRef(op, d.Source())
	m := fe.Mem(d.Source())
	idx := fe.Val(d.Index())
	if k, ok := constInt(idx); ok {
		if k < 0 || int(k) >= len(m.Sizes) {
			Fail(op, "dim index %d is out of range for '%s'", k, m.Type)
		}
		fe.Set(d.Result(), m.Sizes[k])
		return
	}
	res := m.Sizes[0]
	for k := 1; k < len(m.Sizes); k++ {
		is := fe.B().NewICmp(enum.IPredEQ, idx, I64(int64(k)))
		res = fe.B().NewSelect(is, m.Sizes[k], res)
	}
	fe.Set(d.Result(), res)
}

// lowerAssumeAlignment forwards the descriptor and tells LLVM that the
// buffer pointer (base + offset) is aligned: llvm.assume with an "align"
// operand bundle, as upstream MLIR does.
func lowerAssumeAlignment(fe *FuncEmitter, op *ir.Operation) {
	a := memref.AssumeAlignmentOp{Op: op}
	m := fe.Mem(a.Memref())
	align := attrIntOr(a.Alignment(), 1)
	p := fe.ElemPtr(op, m, nil)
	assume := fe.Mod.Intrinsic("llvm.assume", types.Void, types.I1)
	call := fe.B().NewCall(assume, constant.True)
	call.OperandBundles = append(call.OperandBundles, lir.NewOperandBundle("align", p, I64(align)))
	fe.SetMem(a.Result(), m)
}

// lowerDynamicSharedMemory views the kernel's dynamic shared memory (the
// module's extern 1024-byte aligned array) as memref<?xi8, workgroup>; its
// size is the %dynamic_smem_size special register (bytes requested at
// launch).
func lowerDynamicSharedMemory(fe *FuncEmitter, op *ir.Operation) {
	d := gpu.DynamicSharedMemoryOp{Op: op}
	t := d.ResultMemref().Type().(*ir.MemRefType)
	if memSpace(op, t) != asShared {
		Fail(op, "dynamic shared memory must be in #gpu.address_space<workgroup>")
	}
	g := fe.Mod.DynamicSharedMemory()
	base := fe.B().NewBitCast(g, PtrTo(types.I8, asShared))
	n := fe.CallIntrinsic("llvm.nvvm.read.ptx.sreg.dynamic_smem_size", types.I32)
	size := fe.B().NewZExt(n, types.I64)
	fe.SetMem(d.ResultMemref(), describe(op, t, base, I64(0), []value.Value{size}, []value.Value{I64(1)}))
}
