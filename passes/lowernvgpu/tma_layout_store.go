package lowernvgpu

import (
	"github.com/tmac-dev/tmac/dialects/arith"
	"github.com/tmac-dev/tmac/dialects/memref"
	"github.com/tmac-dev/tmac/dialects/nvgpu"
	"github.com/tmac-dev/tmac/dialects/vector"
	"github.com/tmac-dev/tmac/ir"
)

// lower-nvgpu, tmac.warpgroup.mma.store {tmaLayout = T}: the accumulator
// written into a shared-memory tile in the layout a tmac.tma.store through
// a tensor map of type T reads (dialects/tmac/SPEC.md).
//
// The destination is rows of a tile Rb x C: Rb the box's rows, C the
// destination's row stride, a multiple of the box's W columns. Element
// (R, K) of the tile (R, K from the element's offset L in the buffer:
// R = L div C, K = L mod C; R beyond Rb is a later tile of a stack,
// e.g. warp-specialize's output slots) lives in box K div W at
//
//	(R div Rb)·Rb·C + (K div W)·Rb·W + (R mod Rb)·W + (K mod W)
//
// elements from the buffer's start, and a swizzled box moves it within
// its row: the 16-byte chunk index (bits 4.. of the byte offset) is XORed
// with the bits above the swizzle span (bits 7..), as TMA does on the
// shared address. With W·e the span (the tensor map's rule) and Rb a
// multiple of 8 (the verifier's), those bits are ((R mod Rb)·span >> 7)
// & (span/16 - 1): the row alone decides the XOR, and a register pair (two
// adjacent columns, the first even) stays adjacent. The buffer's start
// must be aligned to the pattern's repeat (8 rows of the span), which
// tma-pipeline gives every tile a tmac.tma.store reads.
//
// Per thread the row terms are computed once per row it holds and the
// column terms (with the XOR) once per column; a pair's index is then one
// addi.
// A warp's pair stores land in 8 rows at the same chunk of each: the XOR
// spreads them over the 8 chunks of a 128-byte row, all 32 banks, where
// the plain row-major tile (a row stride of a multiple of 128 bytes) puts
// them all in the same 4 banks (an 8-way conflict).

func lowerTMALayoutStore(rw *NVGPURewriter, op *ir.Operation, cs *fragmentAccess, mt *ir.MemRefType, t ir.Type) error {
	d, _ := nvgpu.AsTensorMapDescriptor(t)
	st, _, _ := memref.StridesAndOffset(mt)
	l := tmaTileLayout{
		rb: d.Tensor.Shape()[0], w: d.Tensor.Shape()[1], c: st[0],
		e: int64(ir.BitWidth(mt.Elem)) / 8, span: d.Swizzle.Bytes(),
	}
	meta := cs.metadata(mt)
	origin := meta.Result(1)
	cr := rw.IndexConst(l.c)
	originRow := rw.binary(arith.Divui, origin, cr)
	r0 := rw.binary(arith.Addi, originRow, cs.frag.row0)
	k0 := rw.binary(arith.Addi, rw.binary(arith.Remui, origin, cr), cs.frag.col0)

	// The buffer as one dimension, from its start: through the last tile
	// the destination's rows reach.
	m := mt.Shape()[0]
	lastTile := rw.binary(arith.Divui, rw.binary(arith.Addi, originRow, rw.IndexConst(m-1)), rw.IndexConst(l.rb))
	size := rw.binary(arith.Muli, rw.binary(arith.Addi, lastTile, rw.IndexConst(1)), rw.IndexConst(l.rb*l.c))
	flatT := ir.MemRefTypeOf([]int64{ir.Dynamic}, mt.Elem, nil, mt.MemorySpace)
	flat := rw.Create(memref.ReinterpretCast, []ir.Value{cs.mem, size}, []ir.Type{flatT},
		ir.NamedAttr{Name: "operandSegmentSizes", Value: ir.DenseI32Array(1, 0, 1, 0)},
		ir.NamedAttr{Name: "static_offsets", Value: ir.DenseI64Array(0)},
		ir.NamedAttr{Name: "static_sizes", Value: ir.DenseI64Array(ir.Dynamic)},
		ir.NamedAttr{Name: "static_strides", Value: ir.DenseI64Array(1)}).Result(0)

	// The XOR term depends on the row mod 8 only (Rb is a multiple of 8),
	// the same for the rows r and r+8 a thread holds: one column term
	// (box, column in the box, XOR) per column and row mod 8, one row term
	// per row, and each pair's index is their sum.
	rowBase := map[int64]ir.Value{} // row offset -> tile and row-in-box terms
	colPart := map[[2]int64]ir.Value{}
	xor := map[int64]ir.Value{} // row offset mod 8 -> XOR term
	index := func(p wgmmaPair, k int64) ir.Value {
		dr, dc := pairRowOffset(p), pairColOffset(p, k)
		if _, ok := rowBase[dr]; !ok {
			r := cs.frag.offset(r0, dr)
			rowBase[dr] = rw.binary(arith.Addi,
				rw.binary(arith.Muli, rw.binary(arith.Divui, r, rw.IndexConst(l.rb)), rw.IndexConst(l.rb*l.c)),
				rw.binary(arith.Muli, rw.binary(arith.Remui, r, rw.IndexConst(l.rb)), rw.IndexConst(l.w)))
		}
		key := [2]int64{dc, dr % 8}
		if _, ok := colPart[key]; !ok {
			k := cs.frag.offset(k0, dc)
			in := rw.binary(arith.Remui, k, rw.IndexConst(l.w))
			if l.span != 0 {
				if _, ok := xor[dr%8]; !ok {
					// ((R mod Rb)·span >> 7) & (span/16 - 1) chunks of
					// 16/e elements.
					r := rw.binary(arith.Remui, cs.frag.offset(r0, dr%8), rw.IndexConst(l.rb))
					bits := rw.binary(arith.Andi, rw.binary(arith.Shrui, rw.binary(arith.Muli, r, rw.IndexConst(l.span)), rw.IndexConst(7)),
						rw.IndexConst(l.span/16-1))
					xor[dr%8] = rw.binary(arith.Muli, bits, rw.IndexConst(16/l.e))
				}
				in = rw.binary(arith.Xori, in, xor[dr%8])
			}
			colPart[key] = rw.binary(arith.Addi, rw.binary(arith.Muli, rw.binary(arith.Divui, k, rw.IndexConst(l.w)), rw.IndexConst(l.rb*l.w)), in)
		}
		return rw.binary(arith.Addi, rowBase[dr], colPart[key])
	}
	elementWise := func() {
		cs.frag.pairs(func(p wgmmaPair) {
			for k := int64(0); k < 2; k++ {
				rw.Create(memref.Store, []ir.Value{cs.convert(p.Value(k)), flat, index(p, k)}, nil)
			}
		})
	}
	// W is even (a box row is a multiple of 16 bytes, the tensor map's
	// rule) and so is C, a multiple of W: a pair never straddles boxes,
	// and the pairs are aligned when the destination's element (0, 0) is
	// (its column K0 even; the buffer's start is aligned): tested once.
	aligned, err := cs.pairsAligned(op, mt, pairsIfBaseAligned)
	if err != nil {
		return err
	}
	pairs := func() {
		first := cs.pairMask()
		cs.frag.pairs(func(p wgmmaPair) {
			rw.Create(vector.Store, []ir.Value{cs.convertPair(p, first), flat, index(p, 0)}, nil,
				ir.NamedAttr{Name: "alignment", Value: ir.I64Attr(cs.pairBytes())})
		})
	}
	// The row and column terms are computed in each branch (the maps are
	// per branch: a value of one branch is not visible in the other).
	rw.ifElse(aligned, func() { pairs(); clear(rowBase); clear(colPart); clear(xor) }, elementWise)
	rw.B.SetInsertionPoint(op)
	op.Erase()
	return nil
}

// tmaTileLayout is the shape of a TMA-store tile: boxes of rb rows and w
// columns, rows of c elements of e bytes, swizzle span span bytes (0:
// none).
type tmaTileLayout struct {
	rb, w, c, e, span int64
}
