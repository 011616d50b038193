package codegen

import (
	"math"

	lir "github.com/llir/llvm/ir"
	"github.com/llir/llvm/ir/constant"
	"github.com/llir/llvm/ir/enum"
	"github.com/llir/llvm/ir/types"
	"github.com/llir/llvm/ir/value"

	"github.com/tmac-dev/tmac/dialects/memref"
	"github.com/tmac-dev/tmac/ir"
)

// MemRef is the lowered form of a memref value: a pointer to the element
// type plus offset, sizes and strides as i64 values (constants when the
// type makes them static), all in elements.
type MemRef struct {
	Type    *ir.MemRefType
	Base    value.Value
	Offset  value.Value
	Sizes   []value.Value
	Strides []value.Value
}

// newStaticMemRef describes a memref of type t at base, taking every static
// offset, size and stride from the type (dynamic ones are left nil for the
// caller to fill).
func newStaticMemRef(t *ir.MemRefType, base value.Value) *MemRef {
	m := &MemRef{Type: t, Base: base}
	strides, offset, _ := t.StridesAndOffset()
	if offset != ir.Dynamic {
		m.Offset = I64(offset)
	}
	for _, s := range t.Shape() {
		if s == ir.Dynamic {
			m.Sizes = append(m.Sizes, nil)
		} else {
			m.Sizes = append(m.Sizes, I64(s))
		}
	}
	for _, s := range strides {
		if s == ir.Dynamic {
			m.Strides = append(m.Strides, nil)
		} else {
			m.Strides = append(m.Strides, I64(s))
		}
	}
	return m
}

// NewMemRef describes a memref of type t at base; dynamic parts come from
// dyn (offset, then sizes, then strides, for the dynamic ones only).
func NewMemRef(t *ir.MemRefType, base value.Value, dynOffset value.Value, dynSizes, dynStrides []value.Value) *MemRef {
	m := newStaticMemRef(t, base)
	if m.Offset == nil {
		m.Offset = dynOffset
	}
	for i := range m.Sizes {
		if m.Sizes[i] == nil && len(dynSizes) > 0 {
			m.Sizes[i], dynSizes = dynSizes[0], dynSizes[1:]
		}
	}
	for i := range m.Strides {
		if m.Strides[i] == nil && len(dynStrides) > 0 {
			m.Strides[i], dynStrides = dynStrides[0], dynStrides[1:]
		}
	}
	return m
}

// SetMem records the lowered form of a memref value.
func (fe *FuncEmitter) SetMem(v ir.Value, m *MemRef) { fe.mems[v] = m }

// Mem returns the lowered form of a memref value.
func (fe *FuncEmitter) Mem(v ir.Value) *MemRef {
	m, ok := fe.mems[v]
	if !ok {
		owner := fe.Op
		if d := v.DefiningOp(); d != nil {
			owner = d
		}
		Fail(owner, "memref of type '%s' has no lowering here", v.Type())
	}
	return m
}

// ElemType returns the LLVM element type of a memref.
func (fe *FuncEmitter) ElemType(op *ir.Operation, m *MemRef) types.Type {
	return fe.Type(op, m.Type.Elem)
}

// LinearIndex returns offset + Σ idx[k]·stride[k] (in elements).
func (fe *FuncEmitter) LinearIndex(m *MemRef, idx []value.Value) value.Value {
	lin := m.Offset
	for k, i := range idx {
		lin = fe.Add(lin, fe.Mul(i, m.Strides[k]))
	}
	return lin
}

// ElemPtr returns a pointer to the element at idx.
func (fe *FuncEmitter) ElemPtr(op *ir.Operation, m *MemRef, idx []value.Value) value.Value {
	lin := fe.LinearIndex(m, idx)
	if c, ok := constInt(lin); ok && c == 0 {
		return m.Base
	}
	gep := fe.cur.NewGetElementPtr(fe.ElemType(op, m), m.Base, lin)
	gep.InBounds = true
	return gep
}

// staticAlloc places a statically shaped memref in a new global of the
// given address space (3: shared memory).
func (fe *FuncEmitter) staticAlloc(op *ir.Operation, t *ir.MemRefType, as types.AddrSpace, align int) *MemRef {
	if !ir.HasStaticShape(t.Shape()) {
		Fail(op, "shared memory allocations need a static shape, got '%s'", t)
	}
	elem := fe.Type(op, t.Elem)
	n := ir.NumElements(t.Shape())
	g := fe.Mod.NewSharedGlobal("__tmac_smem", types.NewArray(uint64(n), elem), align)
	base := fe.cur.NewBitCast(g, PtrTo(elem, as))
	return newStaticMemRef(t, base)
}

// pointerCast converts a pointer to point to elem in the same address space.
func (fe *FuncEmitter) pointerCast(p value.Value, elem types.Type) value.Value {
	pt := p.Type().(*types.PointerType)
	want := PtrTo(elem, pt.AddrSpace)
	if pt.Equal(want) {
		return p
	}
	return fe.cur.NewBitCast(p, want)
}

// global lowers a memref.global inside a gpu.module: shared-memory globals
// become addrspace(3) globals (undefined initial contents, as shared memory
// has none); others become globals with their initial value.
func (me *ModuleEmitter) global(gl memref.GlobalOp) {
	op := gl.Op
	t, ok := gl.Type().(*ir.TypeAttr)
	if !ok {
		Fail(op, "memref.global without a type")
	}
	mt, ok := t.Value.(*ir.MemRefType)
	if !ok || !ir.HasStaticShape(mt.Shape()) {
		Fail(op, "only statically shaped memref.global can be compiled")
	}
	as, ok := addrSpace(mt.MemorySpace)
	if !ok {
		Fail(op, "memory space of '%s' is not supported", mt)
	}
	elem, err := LLType(mt.Elem)
	if err != nil {
		Fail(op, "%v", err)
	}
	arr := types.NewArray(uint64(ir.NumElements(mt.Shape())), elem)
	var init constant.Constant = constant.NewUndef(arr)
	if as != 3 {
		init = constant.NewZeroInitializer(arr)
		if d, ok := gl.InitialValue().(*ir.DenseAttr); ok {
			init = denseConstant(op, d, arr, elem)
		}
	}
	name := op.SymbolName()
	checkSymbolName(op, name, false)
	g := me.M.NewGlobalDef(name, init)
	g.Linkage = enum.LinkageInternal
	g.AddrSpace = as
	g.Typ.AddrSpace = as
	if gl.Constant() != nil {
		g.Immutable = true
	}
	align := attrIntOr(gl.Alignment(), 16)
	g.Align = lir.Align(align)
	me.globals[name] = g
}

// MaxInitElements bounds the initial value of a memref.global that code
// generation writes out element by element: LLVM IR has no splat syntax
// for arrays, and a 16M-element splat took minutes and 180 MB of text.
const MaxInitElements = 1 << 20

// isZeroSplat reports whether a splat's value is zero (+0.0 for floats).
func isZeroSplat(d *ir.DenseAttr) bool {
	switch {
	case len(d.Ints) > 0:
		return d.Ints[0] == 0
	case len(d.Floats) > 0:
		return d.Floats[0] == 0 && !math.Signbit(d.Floats[0])
	}
	return false
}

// denseConstant builds an LLVM array constant from a dense attribute.
func denseConstant(op *ir.Operation, d *ir.DenseAttr, arr *types.ArrayType, elem types.Type) constant.Constant {
	if d.Splat && isZeroSplat(d) {
		return constant.NewZeroInitializer(arr)
	}
	if arr.Len > MaxInitElements {
		Fail(op, "the initial value has %d elements; tmac writes initial values of at most %d elements (all-zero ones of any size)", arr.Len, MaxInitElements)
	}
	n := int(arr.Len)
	elems := make([]constant.Constant, n)
	for i := 0; i < n; i++ {
		j := i
		if d.Splat {
			j = 0
		}
		switch et := elem.(type) {
		case *types.IntType:
			elems[i] = constant.NewInt(et, d.Ints[j])
		case *types.FloatType:
			elems[i] = constant.NewFloat(et, d.Floats[j])
		default:
			Fail(op, "initial values of element type '%s' are not supported", elem)
		}
	}
	return constant.NewArray(arr, elems...)
}

// GlobalPtr returns a pointer to the first element of a memref.global.
func (fe *FuncEmitter) GlobalPtr(op *ir.Operation, name string, mt *ir.MemRefType) value.Value {
	g, ok := fe.Mod.globals[name]
	if !ok {
		Fail(op, "memref.global @%s is not defined in this gpu.module", name)
	}
	elem := fe.Type(op, mt.Elem)
	return fe.cur.NewBitCast(g, PtrTo(elem, g.Typ.AddrSpace))
}
