package lowernvgpu

import (
	"github.com/tmac-dev/tmac/dialects/arith"
	"github.com/tmac-dev/tmac/dialects/llvm"
	"github.com/tmac-dev/tmac/dialects/memref"
	"github.com/tmac-dev/tmac/dialects/tmac"
	"github.com/tmac-dev/tmac/dialects/vector"
	"github.com/tmac-dev/tmac/ir"
)

// lower-nvgpu, tmac.warpgroup.acc.load (dialects/tmac/SPEC.md): a wgmma
// accumulator read from a 2-D memref of f32, f16 or bf16, the mirror of
// tmac.warpgroup.mma.store (convert_store.go), whose addressing it shares
// (fragmentAccess).
//
// Each thread reads the elements of its fragment, by register pairs: the
// pair (r, r+1), r even, is the elements (row, col) and (row, col+1), col
// even. Where every pair's address is aligned to the pair size (tested
// once per op at run time, as for the store; a static odd row stride
// rules it out), the whole fragment is read in one branch of an scf.if
// with one vector.load of vector<2xT> per pair (ld.v2.f32, or one ld.b32
// of two f16/bf16 and a cvt), else element by element with memref.load.
// The other branch is the element-wise one. Each loaded element is
// widened with arith.extf. The masked form reads a pair only when both of
// its columns and its row are inside the source, else its elements one by
// one, each under its own bounds test, 0.0 outside. The accumulator struct
// (wgmmaAccumulatorStruct) is built with llvm.insertvalue and is the
// scf.if's result. Reading needs no wgmma.wait_group: no accumulator is
// read.

func lowerAccLoad(rw *NVGPURewriter, op *ir.Operation) error {
	l := tmac.WarpgroupAccLoadOp{Op: op}
	st := wgmmaStateOf(rw)
	resT, d, err := resultAccumulator(rw, op, "load")
	if err != nil {
		return err
	}
	src := l.SrcMemref()
	mt, ok := src.Type().(*ir.MemRefType)
	if f, _ := d.Elem.(*ir.FloatType); f == nil || f.Kind != ir.F32 || !ok || mt.Rank() != 2 || !tmac.IsRowsMemElem(mt.Elem) {
		// The verifier rules these out.
		return rw.Errorf(op, "needs an f32 accumulator and a 2-D memref of f32, f16 or bf16, not '%s'", src.Type())
	}
	frag := fragmentAt(rw, d, nil)
	fa := &fragmentAccess{rw: rw, frag: frag, mem: src, elem: mt.Elem}
	if idx := l.Indices(); len(idx) == 2 {
		fa.mask(mt, idx[0], idx[1])
	}
	zero := rw.Create(arith.Constant, nil, []ir.Type{ir.F32T}, ir.NamedAttr{Name: "value", Value: ir.FloatAttrOf(0, ir.F32T)}).Result(0)
	extend := func(x ir.Value, t ir.Type) ir.Value {
		if mt.Elem == ir.F32T {
			return x
		}
		return rw.Create(arith.Extf, []ir.Value{x}, []ir.Type{t}).Result(0)
	}
	element := func(p wgmmaPair, k int64) ir.Value {
		load := func() ir.Value {
			x := rw.Create(memref.Load, []ir.Value{src, fa.row(p), fa.col(p, k)}, []ir.Type{mt.Elem}).Result(0)
			return extend(x, ir.F32T)
		}
		if !fa.masked() {
			return load()
		}
		return rw.ifValue(fa.inside(p, k), load, zero)
	}
	elementPair := func(p wgmmaPair) []ir.Value { return []ir.Value{element(p, 0), element(p, 1)} }

	accT, sliceT := wgmmaAccumulatorStruct(d), wgmmaSliceType(d)
	position := func(i int64) ir.NamedAttr { return ir.NamedAttr{Name: "position", Value: ir.DenseI64Array(i)} }
	// build reads the fragment pair by pair and packs it into the
	// accumulator struct.
	build := func(pair func(p wgmmaPair) []ir.Value) ir.Value {
		var res ir.Value = rw.Create(llvm.MlirUndef, nil, []ir.Type{accT}).Result(0)
		for s := int64(0); s < d.Shape()[0]/64; s++ {
			var out ir.Value = rw.Create(llvm.MlirUndef, nil, []ir.Type{sliceT}).Result(0)
			for r := int64(0); r < d.Shape()[1]/2; r += 2 {
				for k, x := range pair(wgmmaPair{f: frag, Slice: s, Reg: r}) {
					out = rw.Create(llvm.Insertvalue, []ir.Value{out, x}, []ir.Type{sliceT}, position(r+int64(k))).Result(0)
				}
			}
			res = rw.Create(llvm.Insertvalue, []ir.Value{res, out}, []ir.Type{accT}, position(s)).Result(0)
		}
		return res
	}

	var res ir.Value
	if plan := convertStorePlan(mt); plan == pairsNever {
		res = build(elementPair)
	} else {
		aligned, err := fa.pairsAligned(op, mt, plan)
		if err != nil {
			return err
		}
		v2 := ir.VectorTypeOf([]int64{2}, mt.Elem)
		v2f32 := ir.VectorTypeOf([]int64{2}, ir.F32T)
		vectorPair := func(p wgmmaPair) []ir.Value {
			var x ir.Value = rw.Create(vector.Load, []ir.Value{src, fa.row(p), fa.col(p, 0)}, []ir.Type{v2},
				ir.NamedAttr{Name: "alignment", Value: ir.I64Attr(fa.pairBytes())}).Result(0)
			x = extend(x, v2f32)
			get := func(k int64) ir.Value {
				return rw.Create(vector.Extract, []ir.Value{x}, []ir.Type{ir.F32T},
					ir.NamedAttr{Name: "static_position", Value: ir.DenseI64Array(k)}).Result(0)
			}
			return []ir.Value{get(0), get(1)}
		}
		pairs := func(p wgmmaPair) []ir.Value {
			if !fa.masked() {
				return vectorPair(p)
			}
			// Both columns inside (col even, so col + 1 inside implies
			// col inside): the pair; else at most the first element.
			return rw.ifValues(fa.inside(p, 1), []ir.Type{ir.F32T, ir.F32T}, func() []ir.Value { return vectorPair(p) },
				func() []ir.Value { return []ir.Value{element(p, 0), zero} })
		}
		res = rw.ifValues(aligned, []ir.Type{accT},
			func() []ir.Value { return []ir.Value{build(pairs)} },
			func() []ir.Value { return []ir.Value{build(elementPair)} })[0]
	}
	st.orig[res] = resT
	rw.Replace(op, res)
	return nil
}
