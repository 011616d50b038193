package lowernvgpu

import (
	"github.com/tmac-dev/tmac/dialects/arith"
	"github.com/tmac-dev/tmac/dialects/llvm"
	"github.com/tmac-dev/tmac/dialects/memref"
	"github.com/tmac-dev/tmac/dialects/nvgpu"
	"github.com/tmac-dev/tmac/dialects/nvvm"
	"github.com/tmac-dev/tmac/dialects/scf"
	"github.com/tmac-dev/tmac/dialects/tmac"
	"github.com/tmac-dev/tmac/dialects/vector"
	"github.com/tmac-dev/tmac/ir"
)

// lower-nvgpu, rows and cols values (!tmac.rows<Mxf32>, !tmac.cols<Nxf32>;
// dialects/tmac/rows.go, SPEC.md) and the ops on them.
//
// A rows or cols value becomes a flat !llvm.struct of the f32 values the
// thread holds, in the layout the accumulator fragment implies
// (wgmmaAccumulatorCoord): for rows<M>, 2·M/64 values, value 2s + h being
// row 64s + 16w + l/4 + 8h (slice s, warp w, lane l); for cols<N>, N/4
// values, value 2i + k being column 8i + 2(l%4) + k. Like accumulators,
// rows and cols block arguments and results of other ops (scf.for
// iter_args and results) are retyped in place (prepareWarpgroupValues).
//
//   - tmac.warpgroup.acc.reduce waits for every wgmma group, combines the
//     thread's values of each row in column order (arith.maximumf or
//     arith.addf), then across the quad with nvvm.shfl.sync bfly xor 1 and
//     xor 2: all 4 lanes end with the same bits, as both operations are
//     commutative.
//   - tmac.rows.map clones its region once per value the thread holds,
//     with the block arguments mapped to the operands' values and the
//     value's row (computed only when the region uses it).
//   - tmac.warpgroup.acc.load_rows and load_cols read each value the
//     thread holds under an scf.if on its index (unsigned) below the
//     source's size, extending to f32, else 0.0; load_cols reads each pair
//     of adjacent columns with one vector load where the pair is aligned
//     and inside (loadColPairs).
//   - tmac.warpgroup.rows.store stores from lane l%4 == 0 of each quad,
//     each row under an scf.if on that lane and on the row's index being
//     inside the destination (one unsigned compare also skips negative
//     indices), converting with arith.truncf (round to nearest even).

// rowsLoweredType returns the lowered type of a rows or cols type.
func rowsLoweredType(t ir.Type) (ir.Type, bool) {
	n, ok := threadValues(t)
	if !ok {
		return nil, false
	}
	return f32Struct(n), true
}

// threadValues returns how many values of a rows or cols type a thread
// holds.
func threadValues(t ir.Type) (int64, bool) {
	if r, ok := tmac.AsRows(t); ok {
		return 2 * r.Len / 64, true
	}
	if c, ok := tmac.AsCols(t); ok {
		return c.Len / 4, true
	}
	return 0, false
}

// f32Struct is !llvm.struct<(f32, ...)> of n values.
func f32Struct(n int64) ir.Type {
	regs := make([]ir.Type, n)
	for i := range regs {
		regs[i] = ir.F32T
	}
	return llvm.Struct(regs, false)
}

// rowsIndex is the index, in a lowered rows value, of the row that the
// accumulator register pair p lies in.
func rowsIndex(p wgmmaPair) int64 {
	_, _, dr, _ := wgmmaAccumulatorCoord(0, p.Reg)
	return 2*p.Slice + dr/8
}

// rowsValueRow is the row of value i of a lowered rows value relative to the
// thread's fragment origin row0.
func rowsValueRow(i int64) int64 { return 64*(i/2) + 8*(i%2) }

// extractF32 extracts value i of a lowered rows or cols value.
func (rw *NVGPURewriter) extractF32(v ir.Value, i int64) ir.Value {
	return rw.Create(llvm.Extractvalue, []ir.Value{v}, []ir.Type{ir.F32T}, ir.NamedAttr{Name: "position", Value: ir.DenseI64Array(i)}).Result(0)
}

// packF32 builds a lowered rows or cols value of type t (its tmac type)
// from the thread's values and records t for later rewrites.
func (rw *NVGPURewriter) packF32(vals []ir.Value, t ir.Type) ir.Value {
	lt, _ := rowsLoweredType(t)
	var s ir.Value = rw.Create(llvm.MlirUndef, nil, []ir.Type{lt}).Result(0)
	for i, x := range vals {
		s = rw.Create(llvm.Insertvalue, []ir.Value{s, x}, []ir.Type{lt}, ir.NamedAttr{Name: "position", Value: ir.DenseI64Array(int64(i))}).Result(0)
	}
	wgmmaStateOf(rw).orig[s] = t
	return s
}

func lowerAccReduce(rw *NVGPURewriter, op *ir.Operation) error {
	r := tmac.WarpgroupAccReduceOp{Op: op}
	st := wgmmaStateOf(rw)
	acc, ok := nvgpu.AsWarpgroupAccumulator(st.nvgpuType(r.Acc()))
	if !ok {
		return rw.Errorf(op, "has an unexpected accumulator type")
	}
	d := acc.Fragmented
	if msg := checkAccumulatorShape(d); msg != "" {
		return rw.Errorf(op, "cannot reduce an accumulator that %s", msg)
	}
	combine := arith.Maximumf
	if r.Kind().(*ir.StringAttr).Value == tmac.ReduceSum {
		combine = arith.Addf
	}
	rw.Create(nvvm.WgmmaWaitGroupSyncAligned, nil, nil, ir.NamedAttr{Name: "group", Value: ir.I64Attr(0)})
	vals := make([]ir.Value, 2*d.Shape()[0]/64)
	frag := &wgmmaFragment{rw: rw, d: d, c: rw.Lookup(r.Acc())}
	frag.pairs(func(p wgmmaPair) {
		i := rowsIndex(p)
		for k := int64(0); k < 2; k++ {
			if x := p.Value(k); vals[i] == nil {
				vals[i] = x
			} else {
				vals[i] = rw.binary(combine, vals[i], x)
			}
		}
	})
	all, clamp := rw.IntConst(-1, ir.I32), rw.IntConst(31, ir.I32)
	lanes := []ir.Value{rw.IntConst(1, ir.I32), rw.IntConst(2, ir.I32)}
	for i, x := range vals {
		for _, lane := range lanes {
			y := rw.Create(nvvm.ShflSync, []ir.Value{all, x, lane, clamp}, []ir.Type{ir.F32T},
				ir.NamedAttr{Name: "kind", Value: nvvm.ShflKind.Attr("bfly")}).Result(0)
			x = rw.binary(combine, x, y)
		}
		vals[i] = x
	}
	rw.Replace(op, rw.packF32(vals, st.nvgpuType(op.Result(0))))
	return nil
}

func lowerRowsMap(rw *NVGPURewriter, op *ir.Operation) error {
	resT := wgmmaStateOf(rw).nvgpuType(op.Result(0))
	rows, ok := tmac.AsRows(resT)
	if !ok {
		return rw.Errorf(op, "has an unexpected result type")
	}
	body := op.Region(0).Entry()
	rowArg := body.Arg(op.NumOperands())
	var row0 ir.Value
	if ir.HasUses(rowArg) {
		row0, _ = fragmentOrigin(rw)
	}
	vals := make([]ir.Value, 2*rows.Len/64)
	for i := range vals {
		bm := ir.NewIRMapping()
		for j, v := range op.Operands() {
			bm.Map(body.Arg(j), rw.extractF32(rw.Lookup(v), int64(i)))
		}
		if row0 != nil {
			row := row0
			if off := rowsValueRow(int64(i)); off != 0 {
				row = rw.binary(arith.Addi, row0, rw.IndexConst(off))
			}
			bm.Map(rowArg, row)
		}
		vals[i] = rw.cloneElement(body, bm)
	}
	rw.Replace(op, rw.packF32(vals, resT))
	return nil
}

// cloneElement clones the ops of body, a region computing one element
// (of tmac.warpgroup.acc.map or tmac.rows.map, ending with tmac.yield), at the insertion point with its arguments
// mapped by bm, and returns the value tmac.yield gives.
func (rw *NVGPURewriter) cloneElement(body *ir.Block, bm *ir.IRMapping) ir.Value {
	for _, o := range body.Ops() {
		if _, ok := tmac.AsYield(o); ok {
			return bm.Lookup(o.Operand(0))
		}
		rw.B.Insert(o.Clone(bm))
	}
	return nil // the verifier requires the tmac.yield
}

func lowerRowsStore(rw *NVGPURewriter, op *ir.Operation) error {
	s := tmac.WarpgroupRowsStoreOp{Op: op}
	rows, ok := tmac.AsRows(wgmmaStateOf(rw).nvgpuType(s.Value()))
	dst := s.Dst()
	mt, okM := dst.Type().(*ir.MemRefType)
	if !ok || !okM || mt.Rank() != 1 || !tmac.IsRowsMemElem(mt.Elem) {
		// The verifier rules these out.
		return rw.Errorf(op, "needs a rows value and a rank-1 memref of f32, f16 or bf16, not '%s'", dst.Type())
	}
	row0, quadLane := fragmentOrigin(rw)
	leader := rw.Create(arith.Cmpi, []ir.Value{quadLane, rw.IndexConst(0)}, []ir.Type{ir.I1},
		ir.NamedAttr{Name: "predicate", Value: ir.I64Attr(arith.CmpIEq)}).Result(0)
	base := rw.binary(arith.Addi, s.Offset(), row0)
	size := rw.dimSize(dst, 0)
	v := rw.Lookup(s.Value())
	for i := int64(0); i < 2*rows.Len/64; i++ {
		idx := base
		if off := rowsValueRow(i); off != 0 {
			idx = rw.binary(arith.Addi, base, rw.IndexConst(off))
		}
		inside := rw.Create(arith.Cmpi, []ir.Value{idx, size}, []ir.Type{ir.I1},
			ir.NamedAttr{Name: "predicate", Value: ir.I64Attr(arith.CmpIUlt)}).Result(0)
		store := func() {
			x := rw.extractF32(v, i)
			if mt.Elem != ir.F32T {
				x = rw.Create(arith.Truncf, []ir.Value{x}, []ir.Type{mt.Elem}).Result(0)
			}
			rw.Create(memref.Store, []ir.Value{x, dst, idx}, nil)
		}
		rw.ifThen(rw.binary(arith.Andi, leader, inside), store)
	}
	op.Erase()
	return nil
}

// dimSize returns dimension d of memref m: a constant, or read from its
// descriptor with memref.extract_strided_metadata (which, unlike
// memref.dim, the emulator runs).
func (rw *NVGPURewriter) dimSize(m ir.Value, d int) ir.Value {
	mt := m.Type().(*ir.MemRefType)
	if n := mt.Shape()[d]; n != ir.Dynamic {
		return rw.IndexConst(n)
	}
	md := rw.Create(memref.ExtractStridedMetadata, []ir.Value{m}, memref.StridedMetadataTypes(mt))
	return md.Result(2 + d) // the base buffer, the offset, then the sizes
}

// lowerLoadVector lowers tmac.warpgroup.acc.load_rows and load_cols: each
// value the thread holds is its element of the source at the offset, read
// under an scf.if on the index (unsigned) below the source's size and
// converted with arith.extf, else 0.0. load_cols reads the thread's
// adjacent column pairs with one vector load where it can (loadColPairs).
func lowerLoadVector(rw *NVGPURewriter, op *ir.Operation) error {
	resT := wgmmaStateOf(rw).nvgpuType(op.Result(0))
	src, offset := op.Operand(0), op.Operand(1)
	mt, ok := src.Type().(*ir.MemRefType)
	if !ok || mt.Rank() != 1 || !tmac.IsRowsMemElem(mt.Elem) {
		// The verifier rules these out.
		return rw.Errorf(op, "needs a rank-1 memref of f32, f16 or bf16, not '%s'", src.Type())
	}
	// The thread's first row or column and the offset of value i from it.
	row0, quadLane := fragmentOrigin(rw)
	_, isRows := tmac.AsRows(resT)
	first, pos := row0, rowsValueRow
	if !isRows {
		first, pos = rw.binary(arith.Muli, quadLane, rw.IndexConst(2)), colsValueCol
	}
	n, _ := threadValues(resT)
	base := rw.binary(arith.Addi, rw.Lookup(offset), first)
	ld := &vectorLoad{rw: rw, src: src, elem: mt.Elem, size: rw.dimSize(src, 0)}
	ld.zero = rw.Create(arith.Constant, nil, []ir.Type{ir.F32T}, ir.NamedAttr{Name: "value", Value: ir.FloatAttrOf(0, ir.F32T)}).Result(0)
	index := func(i int64) ir.Value {
		if off := pos(i); off != 0 {
			return rw.binary(arith.Addi, base, rw.IndexConst(off))
		}
		return base
	}
	vals := make([]ir.Value, n)
	if !isRows && unitStride(mt) {
		ld.loadColPairs(vals, base, index)
	} else {
		for i := range vals {
			vals[i] = ld.element(index(int64(i)))
		}
	}
	rw.Replace(op, rw.packF32(vals, resT))
	return nil
}

// vectorLoad holds what lowering one load_rows or load_cols needs.
type vectorLoad struct {
	rw         *NVGPURewriter
	src        ir.Value
	elem       ir.Type  // the source's element type
	size, zero ir.Value // the source's size; 0.0
}

// inside returns whether idx is inside the source (unsigned: a negative
// index is outside).
func (ld *vectorLoad) inside(idx ir.Value) ir.Value {
	return ld.rw.Create(arith.Cmpi, []ir.Value{idx, ld.size}, []ir.Type{ir.I1},
		ir.NamedAttr{Name: "predicate", Value: ir.I64Attr(arith.CmpIUlt)}).Result(0)
}

// element returns the source's element idx extended to f32, or 0.0 where
// idx is outside.
func (ld *vectorLoad) element(idx ir.Value) ir.Value {
	rw := ld.rw
	return rw.ifValue(ld.inside(idx), func() ir.Value {
		x := rw.Create(memref.Load, []ir.Value{ld.src, idx}, []ir.Type{ld.elem}).Result(0)
		if ld.elem != ir.F32T {
			x = rw.Create(arith.Extf, []ir.Value{x}, []ir.Type{ir.F32T}).Result(0)
		}
		return x
	}, ld.zero)
}

// unitStride reports whether a rank-1 memref type has stride 1, so that
// a thread's column pairs are adjacent in memory.
func unitStride(t *ir.MemRefType) bool {
	st, _, ok := memref.StridesAndOffset(t)
	return ok && len(st) == 1 && st[0] == 1
}

// loadColPairs fills vals, the values of a cols value, from a source of
// unit stride. Values 2j and 2j+1 are columns c and c+1 with c = base + 8j,
// and c - base even: every pair's address is aligned to the pair size 2e
// (e the element size) when the address of element base is, which is
// tested once, at run time (the memref's base pointer is not known here).
// Each pair is then read with one vector.load of vector<2xT> (one
// ld.b32 for f16/bf16, ld.v2.f32 for f32) when aligned and both columns
// are inside the source, else element by element (a pair that the bound
// cuts, or a misaligned source).
func (ld *vectorLoad) loadColPairs(vals []ir.Value, base ir.Value, index func(int64) ir.Value) {
	rw := ld.rw
	mt := ld.src.Type().(*ir.MemRefType)
	as := int64(0)
	if nvgpu.IsSharedMemory(mt.MemorySpace) {
		as = 3
	}
	e := int64(ir.BitWidth(ld.elem)) / 8
	ptr := rw.Create(llvm.Ptrtoint, []ir.Value{rw.Cast(ld.src, llvm.Ptr(as))}, []ir.Type{ir.I64}).Result(0)
	off := rw.binary(arith.Muli, rw.Create(arith.IndexCast, []ir.Value{base}, []ir.Type{ir.I64}).Result(0), rw.IntConst(e, ir.I64))
	low := rw.binary(arith.Andi, rw.binary(arith.Addi, ptr, off), rw.IntConst(2*e-1, ir.I64))
	aligned := rw.Create(arith.Cmpi, []ir.Value{low, rw.IntConst(0, ir.I64)}, []ir.Type{ir.I1},
		ir.NamedAttr{Name: "predicate", Value: ir.I64Attr(arith.CmpIEq)}).Result(0)
	v2 := ir.VectorTypeOf([]int64{2}, ld.elem)
	v2f32 := ir.VectorTypeOf([]int64{2}, ir.F32T)
	f32x2 := []ir.Type{ir.F32T, ir.F32T}
	for i := 0; i+1 < len(vals); i += 2 {
		c0, c1 := index(int64(i)), index(int64(i+1))
		// Both inside: c0 alone may not be (c0 = -1 is outside, c1 = 0 inside).
		in := rw.binary(arith.Andi, ld.inside(c0), ld.inside(c1))
		pair := rw.ifValues(rw.binary(arith.Andi, aligned, in), f32x2, func() []ir.Value {
			x := rw.Create(vector.Load, []ir.Value{ld.src, c0}, []ir.Type{v2},
				ir.NamedAttr{Name: "alignment", Value: ir.I64Attr(2 * e)}).Result(0)
			if ld.elem != ir.F32T {
				x = rw.Create(arith.Extf, []ir.Value{x}, []ir.Type{v2f32}).Result(0)
			}
			return []ir.Value{ld.extract(x, 0), ld.extract(x, 1)}
		}, func() []ir.Value {
			return []ir.Value{ld.element(c0), ld.element(c1)}
		})
		vals[i], vals[i+1] = pair[0], pair[1]
	}
}

// extract returns element k of a vector<2xf32>.
func (ld *vectorLoad) extract(v ir.Value, k int64) ir.Value {
	return ld.rw.Create(vector.Extract, []ir.Value{v}, []ir.Type{ir.F32T},
		ir.NamedAttr{Name: "static_position", Value: ir.DenseI64Array(k)}).Result(0)
}

// colsValueCol is the column of value i of a lowered cols value relative
// to the thread's first column 2(l%4).
func colsValueCol(i int64) int64 { return 8*(i/2) + i%2 }

// ifValue builds `%v = scf.if cond -> f32 { then } else { els }` at the
// insertion point: then emits inside the then branch and returns what it
// yields; els is yielded by the else branch. The insertion point is left
// after the scf.if.
func (rw *NVGPURewriter) ifValue(cond ir.Value, then func() ir.Value, els ir.Value) ir.Value {
	return rw.ifValues(cond, []ir.Type{els.Type()},
		func() []ir.Value { return []ir.Value{then()} },
		func() []ir.Value { return []ir.Value{els} })[0]
}

// ifValues builds `scf.if cond -> (types) { then } else { els }` at the
// insertion point: each callback emits inside its branch and returns what
// the branch yields. The insertion point is left after the scf.if.
func (rw *NVGPURewriter) ifValues(cond ir.Value, types []ir.Type, then, els func() []ir.Value) []ir.Value {
	regions := []*ir.Region{ir.NewRegion(), ir.NewRegion()}
	blocks := []*ir.Block{regions[0].AddBlock(ir.NewBlock(nil, nil)), regions[1].AddBlock(ir.NewBlock(nil, nil))}
	ifOp := rw.B.Create(&ir.OperationState{Name: scf.If, Operands: []ir.Value{cond}, ResultTypes: types, Regions: regions})
	for i, body := range []func() []ir.Value{then, els} {
		rw.B.SetInsertionPointToEnd(blocks[i])
		rw.Create(scf.Yield, body(), nil)
	}
	rw.B.SetInsertionPointAfter(ifOp)
	return ifOp.Results()
}

// fragmentOrigin returns, from the thread's index t = 32w + l in its
// warpgroup, the thread's first row in a 64-row accumulator slice, 16w +
// l/4, and its lane in its quad, l % 4 (its first column is 2(l%4)).
func fragmentOrigin(rw *NVGPURewriter) (row0, quadLane ir.Value) {
	t := linearThreadID(rw)
	t = rw.binary(arith.Remui, t, rw.IndexConst(128))
	w := rw.binary(arith.Divui, t, rw.IndexConst(32))
	l := rw.binary(arith.Remui, t, rw.IndexConst(32))
	row0 = rw.binary(arith.Addi, rw.binary(arith.Muli, w, rw.IndexConst(16)), rw.binary(arith.Divui, l, rw.IndexConst(4)))
	return row0, rw.binary(arith.Remui, l, rw.IndexConst(4))
}
