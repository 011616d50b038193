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
		return rw.Errorf(op, "needs an f32 accumulator and a 2-D memref of f32, f16, bf16 or f8E4M3FN, not '%s'", dst.Type())
	}
	cs := &fragmentAccess{rw: rw, mem: dst, elem: mt.Elem}
	plan := convertStorePlan(mt)

	cs.frag = newWgmmaFragment(rw, d, rw.Lookup(s.MatrixD()))
	cs.frag.colFirst, cs.frag.colCount, _ = tmac.StoreColumns(op)
	if a, ok := op.Attr("tmaLayout").(*ir.TypeAttr); ok {
		return lowerTMALayoutStore(rw, op, cs, mt, a.Value)
	}
	if idx := s.Indices(); len(idx) == 2 {
		cs.mask(mt, idx[0], idx[1])
	}
	elementWise := func() {
		cs.frag.pairs(func(p wgmmaPair) {
			for k := int64(0); k < 2; k++ {
				cs.storeElement(p, k)
			}
		})
	}
	if plan == pairsNever {
		elementWise()
		op.Erase()
		return nil
	}

	aligned, err := cs.pairsAligned(op, mt, plan)
	if err != nil {
		return err
	}

	pairs := func() {
		var first ir.Value
		cs.frag.pairs(func(p wgmmaPair) {
			if first == nil {
				// One mask per branch, before the first pair.
				first = cs.pairMask()
			}
			store := func() {
				rw.Create(vector.Store, []ir.Value{cs.convertPair(p, first), dst, cs.row(p), cs.col(p, 0)}, nil,
					ir.NamedAttr{Name: "alignment", Value: ir.I64Attr(cs.pairBytes())})
			}
			if !cs.masked() {
				store()
				return
			}
			// Both columns inside: the pair; else at most the first
			// (col + 1 inside implies col inside).
			rw.B.SetInsertionPointAfter(rw.ifElse(cs.inside(p, 1), store, func() { cs.storeElement(p, 0) }))
		})
	}
	rw.ifElse(aligned, pairs, elementWise)
	rw.B.SetInsertionPoint(op)
	op.Erase()
	return nil
}

// pairMask returns the vector<2xi1> [true, false] that convertPair
// selects with.
func (cs *fragmentAccess) pairMask() ir.Value {
	v2i1 := ir.VectorTypeOf([]int64{2}, ir.I1)
	return cs.rw.Create(arith.Constant, nil, []ir.Type{v2i1}, ir.NamedAttr{Name: "value", Value: ir.DenseInts([]int64{1, 0}, v2i1)}).Result(0)
}

// convertPair returns pair p as a vector of 2 in the destination's
// element type: select(first, splat x0, splat x1), converted.
func (cs *fragmentAccess) convertPair(p wgmmaPair, first ir.Value) ir.Value {
	rw := cs.rw
	v2f32 := ir.VectorTypeOf([]int64{2}, cs.frag.d.Elem)
	x0 := rw.Create(vector.Broadcast, []ir.Value{p.Value(0)}, []ir.Type{v2f32}).Result(0)
	x1 := rw.Create(vector.Broadcast, []ir.Value{p.Value(1)}, []ir.Type{v2f32}).Result(0)
	return cs.convert(rw.Create(arith.Select, []ir.Value{first, x0, x1}, []ir.Type{v2f32}).Result(0))
}

// fragmentAccess holds what lowering one tmac.warpgroup.mma.store or
// tmac.warpgroup.acc.load (acc_load.go) needs to address, bound and
// convert the fragment's elements in the memref mem.
type fragmentAccess struct {
	rw   *NVGPURewriter
	frag *wgmmaFragment
	mem  ir.Value // the destination (store) or source (load)
	elem ir.Type  // mem's element type

	// The masked form: the origin (m0, n0), nil when unmasked, and, for
	// every row and column offset of the thread's fragment (dr + 64s, dc of
	// wgmmaAccumulatorCoord), the destination index and whether it is
	// inside the destination; computed once, before the stores.
	m0, n0       ir.Value
	rows, cols   map[int64]ir.Value
	rowIn, colIn map[int64]ir.Value
	meta         *ir.Operation
}

func (cs *fragmentAccess) masked() bool { return cs.m0 != nil }

// pairBytes is the size of a register pair's two elements in mem, the
// alignment of its vector load or store.
func (cs *fragmentAccess) pairBytes() int64 { return 2 * int64(ir.BitWidth(cs.elem)) / 8 }

// pairsAligned returns an i1 that is true when every register pair's
// address in mem is aligned to the pair size (plan is not pairsNever):
// (addr(0,0) [| addr(1,0)]) mod pairBytes == 0, with the masked form's
// origin (m0, n0) for (0, 0) (originAlignment). Uniform across the block:
// tested once per op.
func (cs *fragmentAccess) pairsAligned(op *ir.Operation, mt *ir.MemRefType, plan convertStorePairs) (ir.Value, error) {
	rw := cs.rw
	as := int64(0)
	if nvgpu.IsSharedMemory(mt.MemorySpace) {
		as = 3
	}
	addr := func(p ir.Value) ir.Value {
		return rw.Create(llvm.Ptrtoint, []ir.Value{p}, []ir.Type{ir.I64}).Result(0)
	}
	var a ir.Value
	if cs.masked() {
		a = cs.originAlignment(mt, addr(rw.Cast(cs.mem, llvm.Ptr(as))), plan == pairsIfAligned)
	} else {
		a = addr(rw.Cast(cs.mem, llvm.Ptr(as)))
		if plan == pairsIfAligned {
			p1, err := rw.elementPtr(op, cs.mem, []ir.Value{rw.IndexConst(1), rw.IndexConst(0)}, as)
			if err != nil {
				return nil, err
			}
			a = rw.binary(arith.Ori, a, addr(p1))
		}
	}
	low := rw.binary(arith.Andi, a, rw.IntConst(cs.pairBytes()-1, ir.I64))
	return rw.Create(arith.Cmpi, []ir.Value{low, rw.IntConst(0, ir.I64)}, []ir.Type{ir.I1},
		ir.NamedAttr{Name: "predicate", Value: ir.I64Attr(arith.CmpIEq)}).Result(0), nil
}

// metadata returns the destination's memref.extract_strided_metadata
// (base, offset, 2 sizes, 2 strides), created at the first call: the
// dynamic sizes and row stride of the masked form.
func (cs *fragmentAccess) metadata(mt *ir.MemRefType) *ir.Operation {
	if cs.meta == nil {
		cs.meta = cs.rw.Create(memref.ExtractStridedMetadata, []ir.Value{cs.mem}, memref.StridedMetadataTypes(mt))
	}
	return cs.meta
}

// mask sets up the masked form: the origin (m0, n0) and the destination
// rows and columns of the thread's elements, with their bounds checks.
// An index is inside when it is below the dimension, unsigned: an index
// below zero is outside too.
func (cs *fragmentAccess) mask(mt *ir.MemRefType, m0, n0 ir.Value) {
	rw := cs.rw
	cs.m0, cs.n0 = rw.Lookup(m0), rw.Lookup(n0)
	size := func(d int) ir.Value {
		if n := mt.Shape()[d]; n != ir.Dynamic {
			return rw.IndexConst(n)
		}
		return cs.metadata(mt).Result(2 + d)
	}
	m, n := size(0), size(1)
	cs.rows, cs.cols = map[int64]ir.Value{}, map[int64]ir.Value{}
	cs.rowIn, cs.colIn = map[int64]ir.Value{}, map[int64]ir.Value{}
	add := func(idx, in map[int64]ir.Value, off int64, origin, base, bound ir.Value) {
		if _, ok := idx[off]; ok {
			return
		}
		idx[off] = rw.binary(arith.Addi, origin, cs.frag.offset(base, off))
		in[off] = rw.Create(arith.Cmpi, []ir.Value{idx[off], bound}, []ir.Type{ir.I1},
			ir.NamedAttr{Name: "predicate", Value: ir.I64Attr(arith.CmpIUlt)}).Result(0)
	}
	d := cs.frag.d
	for sl := int64(0); sl < d.Shape()[0]/64; sl++ {
		for r := int64(0); r < d.Shape()[1]/2; r++ {
			_, _, dr, dc := wgmmaAccumulatorCoord(0, r)
			if !cs.frag.inWindow(dc) {
				continue
			}
			add(cs.rows, cs.rowIn, 64*sl+dr, cs.m0, cs.frag.row0, m)
			add(cs.cols, cs.colIn, dc-cs.frag.colFirst, cs.n0, cs.frag.col0, n)
		}
	}
}

// pairRowOffset and pairColOffset are the accumulator row and column of element
// k of pair p relative to the thread's fragment origin (the column in the
// fragment's column window).
func pairRowOffset(p wgmmaPair) int64 {
	_, _, dr, _ := wgmmaAccumulatorCoord(0, p.Reg)
	return 64*p.Slice + dr
}

func pairColOffset(p wgmmaPair, k int64) int64 {
	_, _, _, dc := wgmmaAccumulatorCoord(0, p.Reg+k)
	return dc - p.f.colFirst
}

// row returns the destination row of pair p.
func (cs *fragmentAccess) row(p wgmmaPair) ir.Value {
	if !cs.masked() {
		return p.Row()
	}
	return cs.rows[pairRowOffset(p)]
}

// col returns the destination column of element k of pair p.
func (cs *fragmentAccess) col(p wgmmaPair, k int64) ir.Value {
	if !cs.masked() {
		return p.Col(k)
	}
	return cs.cols[pairColOffset(p, k)]
}

// inside returns whether element k of pair p is inside the destination
// (masked form only).
func (cs *fragmentAccess) inside(p wgmmaPair, k int64) ir.Value {
	return cs.rw.binary(arith.Andi, cs.rowIn[pairRowOffset(p)], cs.colIn[pairColOffset(p, k)])
}

// storeElement converts element k of pair p and stores it alone; in the
// masked form only where it is inside the destination.
func (cs *fragmentAccess) storeElement(p wgmmaPair, k int64) {
	rw := cs.rw
	store := func() {
		x := cs.convert(p.Value(k))
		rw.Create(memref.Store, []ir.Value{x, cs.mem, cs.row(p), cs.col(p, k)}, nil)
	}
	if !cs.masked() {
		store()
		return
	}
	rw.ifThen(cs.inside(p, k), store)
}

// convert rounds x (f32 or vector<2xf32>) to the destination's element
// type. For f8E4M3FN it first clamps x to ±448, the largest finite
// value, so that the conversion saturates (as PTX's cvt.rn.satfinite
// does) where arith.truncf alone would give NaN beyond 464; NaN stays NaN
// (arith.minimumf and maximumf propagate it). Code generation recognises
// the clamp and emits the bare cvt.rn.satfinite.e4m3x2.f32 (one per
// pair), without its overflow fix-up (codegen/arith.go, clampedFinite).
func (cs *fragmentAccess) convert(x ir.Value) ir.Value {
	rw := cs.rw
	t := x.Type()
	f := cs.elem.(*ir.FloatType)
	if f.Kind == ir.F32 {
		return x
	}
	if f.Kind == ir.F8E4M3FN {
		limit := func(v float64) ir.Value {
			var a ir.Attribute = ir.FloatAttrOf(v, ir.FloatTypeOf(ir.F32))
			if vt, ok := t.(*ir.VectorType); ok {
				a = ir.DenseSplatFloat(v, vt)
			}
			return rw.Create(arith.Constant, nil, []ir.Type{t}, ir.NamedAttr{Name: "value", Value: a}).Result(0)
		}
		x = rw.binary(arith.Maximumf, x, limit(-448))
		x = rw.binary(arith.Minimumf, x, limit(448))
	}
	rt := cs.elem
	if vt, ok := t.(*ir.VectorType); ok {
		rt = ir.VectorTypeOf(vt.Shape(), cs.elem)
	}
	return rw.Create(arith.Truncf, []ir.Value{x}, []ir.Type{rt}).Result(0)
}

// originAlignment returns, for the masked form, an i64 whose low bits
// are zero when every pair's address is aligned to the pair size: the
// address of element (m0, n0), ptr + (m0·stride + n0)·e, or'ed with
// stride·e when the row stride is dynamic (a static odd stride has no
// pair stores at all).
func (cs *fragmentAccess) originAlignment(mt *ir.MemRefType, base ir.Value, dynamicStride bool) ir.Value {
	rw := cs.rw
	st, _, _ := memref.StridesAndOffset(mt)
	var stride ir.Value
	if dynamicStride {
		stride = cs.metadata(mt).Result(4)
	} else {
		stride = rw.IndexConst(st[0])
	}
	e := rw.IntConst(int64(ir.BitWidth(cs.elem))/8, ir.I64)
	bytes := func(i ir.Value) ir.Value {
		return rw.binary(arith.Muli, rw.Create(arith.IndexCast, []ir.Value{i}, []ir.Type{ir.I64}).Result(0), e)
	}
	elems := rw.binary(arith.Addi, rw.binary(arith.Muli, cs.m0, stride), cs.n0)
	a := rw.binary(arith.Addi, base, bytes(elems))
	if dynamicStride {
		a = rw.binary(arith.Ori, a, bytes(stride))
	}
	return a
}

// ifThen builds `scf.if cond { then }` at the insertion point, then emits
// at the insertion point inside it, and leaves the insertion point after
// the scf.if.
func (rw *NVGPURewriter) ifThen(cond ir.Value, then func()) {
	region := ir.NewRegion()
	block := region.AddBlock(ir.NewBlock(nil, nil))
	ifOp := rw.B.Create(&ir.OperationState{Name: scf.If, Operands: []ir.Value{cond}, Regions: []*ir.Region{region, ir.NewRegion()}})
	rw.B.SetInsertionPointToEnd(block)
	then()
	rw.Create(scf.Yield, nil, nil)
	rw.B.SetInsertionPointAfter(ifOp)
}

// ifElse builds `scf.if cond { then } else { els }` at the insertion point;
// the callbacks emit at the rewriter's insertion point, inside their
// branch. The insertion point is left inside the else branch; it returns
// the scf.if.
func (rw *NVGPURewriter) ifElse(cond ir.Value, then, els func()) *ir.Operation {
	regions := []*ir.Region{ir.NewRegion(), ir.NewRegion()}
	blocks := []*ir.Block{regions[0].AddBlock(ir.NewBlock(nil, nil)), regions[1].AddBlock(ir.NewBlock(nil, nil))}
	ifOp := rw.B.Create(&ir.OperationState{Name: scf.If, Operands: []ir.Value{cond}, Regions: regions})
	for i, body := range []func(){then, els} {
		rw.B.SetInsertionPointToEnd(blocks[i])
		body()
		rw.Create(scf.Yield, nil, nil)
	}
	return ifOp
}
