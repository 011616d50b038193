package lowernvgpu

import (
	"github.com/tmac-dev/tmac/dialects/arith"
	"github.com/tmac-dev/tmac/dialects/llvm"
	"github.com/tmac-dev/tmac/dialects/memref"
	"github.com/tmac-dev/tmac/dialects/nvgpu"
	"github.com/tmac-dev/tmac/dialects/scf"
	"github.com/tmac-dev/tmac/dialects/tmac"
	"github.com/tmac-dev/tmac/dialects/vector"
	"github.com/tmac-dev/tmac/ir"
)

// lower-nvgpu, tmac.warpgroup.mma.store: an f32 wgmma accumulator stored
// into a memref of f32, f16 or bf16 (dialects/tmac/SPEC.md).
//
// Like nvgpu.warpgroup.mma.store it first waits for every wgmma group
// (wait_group 0), then walks the thread's fragment (wgmmaFragment). It
// works on register pairs: registers (r, r+1), r even, hold two adjacent
// elements of one row, (row, col) and (row, col+1) with col even. A pair
// is converted with one arith.truncf vector<2xf32> to vector<2xf16|bf16>
// (round to nearest even; llc selects cvt.rn.f16x2.f32 /
// cvt.rn.bf16x2.f32) and stored with one vector.store of 2 elements (one
// st.b32 for f16/bf16, st.v2.f32 for f32) aligned to the pair's size.
//
// That store needs every pair's address aligned to the pair size 2e (e
// the element size): as col is even, that is the address of element
// (0, 0) being a multiple of 2e and the row stride being even. What the
// type fixes is decided here (a static odd stride: no pair stores); the
// rest is checked at run time, once per store, on values uniform across
// the block: the address of element (0, 0), and with a dynamic stride the
// address of element (1, 0) too. The kernel then takes one of two
// branches of an scf.if: the pair stores, or the element-wise stores
// (arith.truncf of each element, memref.store), which any strided layout
// with unit innermost stride allows.
//
// The pair is built as arith.select(dense<[true, false]>, splat x0,
// splat x1): vector.broadcast is the only vector constructor codegen has,
// and llc folds the select of two splats into a two-element build_vector.

// convertStorePairs says how a destination's layout admits pair stores.
type convertStorePairs int

const (
	pairsNever         convertStorePairs = iota // static odd row stride (or no strided layout)
	pairsIfBaseAligned                          // static even row stride: check the (0, 0) address
	pairsIfAligned                              // dynamic row stride: check the (0, 0) and (1, 0) addresses
)

// convertStorePlan returns how pair stores may be used for a 2-D
// destination memref type of unit innermost stride.
func convertStorePlan(t *ir.MemRefType) convertStorePairs {
	st, _, ok := memref.StridesAndOffset(t)
	switch {
	case !ok || len(st) != 2 || st[1] != 1:
		return pairsNever
	case st[0] == ir.Dynamic:
		return pairsIfAligned
	case st[0]%2 != 0:
		return pairsNever
	}
	return pairsIfBaseAligned
}

func lowerConvertStore(rw *NVGPURewriter, op *ir.Operation) error {
	s := tmac.WarpgroupMmaStoreOp{Op: op}
	d, err := storedAccumulator(rw, op, s.MatrixD())
	if err != nil {
		return err
	}
	dst := s.DstMemref()
	mt, ok := dst.Type().(*ir.MemRefType)
	if f, _ := d.Elem.(*ir.FloatType); f == nil || f.Kind != ir.F32 || !ok || mt.Rank() != 2 || !tmac.IsConvertStoreElem(mt.Elem) {
		// The verifier rules these out.
		return rw.Errorf(op, "needs an f32 accumulator and a 2-D memref of f32, f16 or bf16, not '%s'", dst.Type())
	}
	elem := mt.Elem
	convert := elem != d.Elem
	pairBytes := 2 * int64(ir.BitWidth(elem)) / 8
	plan := convertStorePlan(mt)

	frag := newWgmmaFragment(rw, d, rw.Lookup(s.MatrixD()))
	elementWise := func() {
		frag.pairs(func(p wgmmaPair) {
			for k := int64(0); k < 2; k++ {
				x := p.Value(k)
				if convert {
					x = rw.Create(arith.Truncf, []ir.Value{x}, []ir.Type{elem}).Result(0)
				}
				rw.Create(memref.Store, []ir.Value{x, dst, p.Row(), p.Col(k)}, nil)
			}
		})
	}
	if plan == pairsNever {
		elementWise()
		op.Erase()
		return nil
	}

	// The alignment test: (addr(0,0) [| addr(1,0)]) mod pairBytes == 0.
	as := int64(0)
	if nvgpu.IsSharedMemory(mt.MemorySpace) {
		as = 3
	}
	addr := func(p ir.Value) ir.Value {
		return rw.Create(llvm.Ptrtoint, []ir.Value{p}, []ir.Type{ir.I64}).Result(0)
	}
	a := addr(rw.Cast(dst, llvm.Ptr(as)))
	if plan == pairsIfAligned {
		p1, err := rw.elementPtr(op, dst, []ir.Value{rw.IndexConst(1), rw.IndexConst(0)}, as)
		if err != nil {
			return err
		}
		a = rw.binary(arith.Ori, a, addr(p1))
	}
	low := rw.binary(arith.Andi, a, rw.IntConst(pairBytes-1, ir.I64))
	aligned := rw.Create(arith.Cmpi, []ir.Value{low, rw.IntConst(0, ir.I64)}, []ir.Type{ir.I1},
		ir.NamedAttr{Name: "predicate", Value: ir.I64Attr(arith.CmpIEq)}).Result(0)

	pairs := func() {
		v2f32 := ir.VectorTypeOf([]int64{2}, d.Elem)
		v2i1 := ir.VectorTypeOf([]int64{2}, ir.I1)
		v2 := ir.VectorTypeOf([]int64{2}, elem)
		var first ir.Value
		frag.pairs(func(p wgmmaPair) {
			if first == nil {
				// One mask per branch, before the first pair.
				first = rw.Create(arith.Constant, nil, []ir.Type{v2i1}, ir.NamedAttr{Name: "value", Value: ir.DenseInts([]int64{1, 0}, v2i1)}).Result(0)
			}
			x0 := rw.Create(vector.Broadcast, []ir.Value{p.Value(0)}, []ir.Type{v2f32}).Result(0)
			x1 := rw.Create(vector.Broadcast, []ir.Value{p.Value(1)}, []ir.Type{v2f32}).Result(0)
			v := rw.Create(arith.Select, []ir.Value{first, x0, x1}, []ir.Type{v2f32}).Result(0)
			if convert {
				v = rw.Create(arith.Truncf, []ir.Value{v}, []ir.Type{v2}).Result(0)
			}
			rw.Create(vector.Store, []ir.Value{v, dst, p.Row(), p.Col(0)}, nil,
				ir.NamedAttr{Name: "alignment", Value: ir.I64Attr(pairBytes)})
		})
	}
	rw.ifElse(aligned, pairs, elementWise)
	rw.B.SetInsertionPoint(op)
	op.Erase()
	return nil
}

// ifElse builds `scf.if cond { then } else { els }` at the insertion point;
// the callbacks emit at the rewriter's insertion point, inside their
// branch. The insertion point is left inside the else branch.
func (rw *NVGPURewriter) ifElse(cond ir.Value, then, els func()) {
	regions := []*ir.Region{ir.NewRegion(), ir.NewRegion()}
	blocks := []*ir.Block{regions[0].AddBlock(ir.NewBlock(nil, nil)), regions[1].AddBlock(ir.NewBlock(nil, nil))}
	rw.B.Create(&ir.OperationState{Name: scf.If, Operands: []ir.Value{cond}, Regions: regions})
	for i, body := range []func(){then, els} {
		rw.B.SetInsertionPointToEnd(blocks[i])
		body()
		rw.Create(scf.Yield, nil, nil)
	}
}
