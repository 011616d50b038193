package lowernvgpu

import (
	"github.com/tmac-dev/tmac/dialects/llvm"
	"github.com/tmac-dev/tmac/dialects/tmac"
	"github.com/tmac-dev/tmac/ir"
)

// lower-nvgpu, tmac.warpgroup.acc.map (dialects/tmac/SPEC.md): an
// elementwise computation over f32 accumulators.
//
// Like the accumulator stores it first waits for every wgmma group
// (wait_group 0: an mma in flight may still write its accumulator) and
// computes the thread's fragment origin (wgmmaFragment). Then, for each
// 64-row slice and each register r of the slice, it extracts register r of
// every accumulator operand (the same registers hold the same positions in
// every accumulator of one shape: wgmmaAccumulatorCoord), the value of the
// register's row from every rows operand and of its column from every cols
// operand (the layouts of rows.go: a thread's rows and columns are its
// accumulator elements' ones), clones the region's ops with the block
// arguments mapped to those values and to the element's row and column,
// and inserts the value tmac.yield gives into register r of the result.
// The row and column, and the rows and cols values, are materialised only
// when the region uses them, once per distinct value.

func lowerAccMap(rw *NVGPURewriter, op *ir.Operation) error {
	st := wgmmaStateOf(rw)
	resT, d, err := resultAccumulator(rw, op, "compute on")
	if err != nil {
		return err
	}
	m := tmac.WarpgroupAccMapOp{Op: op}
	accs, rowsOps, colsOps := m.Accs(), m.Rows(), m.Cols()
	body := op.Region(0).Entry()
	n := op.NumOperands()
	rowArg, colArg := body.Arg(n), body.Arg(n+1)

	frags := make([]*wgmmaFragment, len(accs))
	frags[0] = newWgmmaFragment(rw, d, rw.Lookup(accs[0]))
	for i := 1; i < len(accs); i++ {
		f := *frags[0]
		f.c = rw.Lookup(accs[i])
		frags[i] = &f
	}
	// The per-thread values of the rows and cols operands, by operand and
	// index in the lowered value, extracted on first use.
	broadcast := func(ops []ir.Value) []map[int64]ir.Value {
		ms := make([]map[int64]ir.Value, len(ops))
		for i := range ms {
			ms[i] = map[int64]ir.Value{}
		}
		return ms
	}
	rowsVals, colsVals := broadcast(rowsOps), broadcast(colsOps)

	sliceT := wgmmaSliceType(d)
	accT := wgmmaAccumulatorStruct(d)
	position := func(i int64) ir.NamedAttr {
		return ir.NamedAttr{Name: "position", Value: ir.DenseI64Array(i)}
	}
	rows := map[int64]ir.Value{} // by row offset from the thread's origin
	cols := map[int64]ir.Value{} // by column offset
	var res ir.Value = rw.Create(llvm.MlirUndef, nil, []ir.Type{accT}).Result(0)
	for s := int64(0); s < d.Shape()[0]/64; s++ {
		slices := make([]ir.Value, len(frags))
		for i, f := range frags {
			slices[i] = rw.Create(llvm.Extractvalue, []ir.Value{f.c}, []ir.Type{sliceT}, position(s)).Result(0)
		}
		var out ir.Value = rw.Create(llvm.MlirUndef, nil, []ir.Type{sliceT}).Result(0)
		for r := int64(0); r < d.Shape()[1]/2; r++ {
			bm := ir.NewIRMapping()
			for i := range frags {
				x := rw.Create(llvm.Extractvalue, []ir.Value{slices[i]}, []ir.Type{d.Elem}, position(r)).Result(0)
				bm.Map(body.Arg(i), x)
			}
			_, _, dr, dc := wgmmaAccumulatorCoord(0, r)
			// Value 2s + dr/8 of a lowered rows value, 2(r/4) + r%2 of a
			// lowered cols value (rows.go).
			ri, ci := 2*s+dr/8, 2*(r/4)+r%2
			for i, v := range rowsOps {
				if a := body.Arg(len(accs) + i); ir.HasUses(a) {
					bm.Map(a, cached(rowsVals[i], ri, func() ir.Value { return rw.extractF32(rw.Lookup(v), ri) }))
				}
			}
			for i, v := range colsOps {
				if a := body.Arg(len(accs) + len(rowsOps) + i); ir.HasUses(a) {
					bm.Map(a, cached(colsVals[i], ci, func() ir.Value { return rw.extractF32(rw.Lookup(v), ci) }))
				}
			}
			if ir.HasUses(rowArg) {
				bm.Map(rowArg, cached(rows, 64*s+dr, func() ir.Value { return frags[0].offset(frags[0].row0, 64*s+dr) }))
			}
			if ir.HasUses(colArg) {
				bm.Map(colArg, cached(cols, dc, func() ir.Value { return frags[0].offset(frags[0].col0, dc) }))
			}
			y := rw.cloneElement(body, bm)
			out = rw.Create(llvm.Insertvalue, []ir.Value{out, y}, []ir.Type{sliceT}, position(r)).Result(0)
		}
		res = rw.Create(llvm.Insertvalue, []ir.Value{res, out}, []ir.Type{accT}, position(s)).Result(0)
	}
	st.orig[res] = resT
	rw.Replace(op, res)
	return nil
}

// cached returns m[k], computing and recording it with make the first time.
func cached(m map[int64]ir.Value, k int64, make func() ir.Value) ir.Value {
	v, ok := m[k]
	if !ok {
		v = make()
		m[k] = v
	}
	return v
}
