// Package tmac registers tmac's own small dialect: the ops of the simple
// tile-loop form that the tma-pipeline and mbarrier-phase passes rewrite
// into explicit mbarrier pipelines (see SPEC.md beside this file).
//
//	tmac.tma.load %map[%x, %y] to %tile : !desc -> memref<...>
//	tmac.tma.wait %a, %b : memref<...>, memref<...>
//	tmac.tma.store %tile to %map[%x, %y] : memref<...> -> !desc
//	tmac.mbarrier.wait %bars[%i] : !nvgpu.mbarrier.group<...>
//	tmac.warpgroup.mma.store %acc, %dst[%m0, %n0] : !nvgpu.warpgroup.accumulator<...> to memref<?x?xbf16|f16|f32|f8E4M3FN, ...>
//
// None of them reaches code generation: tma-pipeline lowers the first
// three to nvgpu/nvvm ops, mbarrier-phase turns the parity-less wait into
// nvgpu.mbarrier.try_wait.parity, and lower-nvgpu lowers the converting
// accumulator store (as it lowers nvgpu.warpgroup.mma.store). The register
// tile math of the other files is lowered by lower-nvgpu too, but for
// tmac.wgmma.mma_async (operand.go), the wgmma with A in registers that
// lower-nvgpu makes of tmac.warpgroup.mma and code generation emits.
package tmac

import (
	"github.com/tmac-dev/tmac/dialects/memref"
	"github.com/tmac-dev/tmac/dialects/nvgpu"
	"github.com/tmac-dev/tmac/ir"
)

// StagesAttr is the discardable attribute on an scf.for that sets the
// number of pipeline stages tma-pipeline builds for it.
const StagesAttr = "tmac.stages"

// StoreStagesAttr sets the number of rotating output tiles for the
// tmac.tma.store ops of a loop.
const StoreStagesAttr = "tmac.store_stages"

var (
	tensorMapC = ir.TypeConstraint{Desc: "TensorMap descriptor", OK: func(t ir.Type) bool { _, ok := nvgpu.AsTensorMapDescriptor(t); return ok }}
	mbarGroupC = ir.TypeConstraint{Desc: "mbarrier barrier type", OK: func(t ir.Type) bool { _, ok := nvgpu.AsMBarrierGroup(t); return ok }}
	wgAccC     = ir.TypeConstraint{Desc: "warpgroup accumulator type", OK: func(t ir.Type) bool { _, ok := nvgpu.AsWarpgroupAccumulator(t); return ok }}
)

// tileCopyOperands are the operands of tmac.tma.load and store: the tile
// (named dst or src), the tensor map and one coordinate per box dimension.
func tileCopyOperands(tile string) []ir.ArgSpec {
	return []ir.ArgSpec{{Name: tile, Type: ir.AnyMemRef}, {Name: "tensorMap", Type: tensorMapC},
		{Name: "coordinates", Kind: ir.Variadic, Type: ir.IndexOnly}}
}

// tileRules is what tmac.tma.load and tmac.tma.store ask of their tile and
// tensor map (checked by verifyTileCopy).
const tileRules = "`tensorMap` follows the rules of `nvgpu.tma.create.descriptor`; its box has rank 1 to 5 and a last dimension of a multiple of 16 bytes. " +
	"The tile is a statically shaped shared-memory memref with the identity layout and the box's element type and rank, shaped like the box " +
	"except in one dimension, the innermost or (when the innermost equals the box's) the outermost, which may be a multiple of the box's: " +
	"the tile is then copied box after box, each box contiguous, side by side or one below the other " +
	"(each box must then start aligned: 128 bytes, or 8 rows of the swizzle span with a swizzle). One coordinate per box dimension. " +
	"A load may fill only the leading rows of a tile: its tile is then a `memref.subview` of them (zero offsets, unit strides), " +
	"copied by the same rules into the top of each of the whole tile's boxes; the other rows keep what they held. "

func init() {
	ir.RegisterDialect(&ir.Dialect{
		Name:         "tmac",
		Summary:      "tmac's simple tile-loop form (rewritten by tma-pipeline and mbarrier-phase)",
		VerifyOpAttr: verifyOpAttr,
		ParseType:    parseType,
	})
	ir.Register(
		&ir.OpDef{
			Name:     "tmac.tma.load",
			Summary:  "asynchronous TMA load of a tile into logical shared memory, completed by tmac.tma.wait",
			Operands: tileCopyOperands("dst"),
			Format:   "$tensorMap `[` $coordinates `]` `to` $dst attr-dict `:` type($tensorMap) `->` type($dst)",
			Effects:  []ir.Effect{{Kind: ir.Write, Operand: "dst", Proxy: ir.AsyncProxy}},
			Doc: tileRules +
				"`tma-pipeline` (and `warp-specialize`) accept it only in the simple tile-loop form: in an `scf.for` at the top level of a kernel, " +
				"into a tile allocated outside the loop and used only in it, read after a `tmac.tma.wait` on the tile.",
			Verify: verifyTileCopy,
		},
		&ir.OpDef{
			Name:     "tmac.tma.store",
			Summary:  "asynchronous TMA store of a shared-memory tile to global memory",
			Operands: tileCopyOperands("src"),
			Format:   "$src `to` $tensorMap `[` $coordinates `]` attr-dict `:` type($src) `->` type($tensorMap)",
			Effects:  []ir.Effect{{Kind: ir.Read, Operand: "src", Proxy: ir.AsyncProxy}},
			Doc: tileRules +
				"`tma-pipeline` accepts it in the body of a tile loop (adding the proxy fence, the barrier and the rotation over `tmac.store_stages` " +
				"output tiles) or at the top level of the kernel (an epilogue: the fence, the barrier, the store and the wait for its reads).",
			Verify: verifyTileCopy,
		},
		&ir.OpDef{
			Name:     "tmac.tma.wait",
			Summary:  "wait until the TMA loads into the given tiles have landed",
			Operands: []ir.ArgSpec{{Name: "tiles", Kind: ir.Variadic, Type: ir.AnyMemRef}},
			Format:   "$tiles attr-dict `:` type($tiles)",
			Doc:      "At least one tile; every tile is in shared memory. `tma-pipeline` turns it into a wait on the stage's mbarrier.",
			Verify: func(op *ir.Operation) error {
				if op.NumOperands() == 0 {
					return op.EmitError("needs at least one tile")
				}
				for _, t := range op.Operands() {
					if !nvgpu.IsSharedMemory(t.Type().(*ir.MemRefType).MemorySpace) {
						return op.EmitError("tile %s is not in shared memory (#gpu.address_space<workgroup>)", t.Type())
					}
				}
				return nil
			},
		},
		&ir.OpDef{
			Name:     "tmac.mbarrier.wait",
			Summary:  "wait for the next phase of an mbarrier; mbarrier-phase computes the parity",
			Operands: []ir.ArgSpec{{Name: "barriers", Type: mbarGroupC}, {Name: "mbarId", Type: ir.IndexOnly}},
			Format:   "$barriers `[` $mbarId `]` attr-dict `:` type($barriers)",
			Doc: "Waits for the next phase of barrier `mbarId` that the executing thread has not waited for yet: the k-th wait of a thread " +
				"on a barrier waits for phase k (parity k mod 2). `mbarrier-phase` computes the parity and rewrites the op into " +
				"`nvgpu.mbarrier.try_wait.parity`, or reports why it cannot.",
		},
		&ir.OpDef{
			Name:    "tmac.warpgroup.mma.store",
			Summary: "stores an f32 wgmma accumulator into a memref of f32, f16, bf16 or f8E4M3FN, rounding to nearest even",
			Operands: []ir.ArgSpec{{Name: "matrixD", Type: wgAccC}, {Name: "dstMemref", Type: ir.AnyMemRef},
				{Name: "indices", Kind: ir.Variadic, Type: ir.IndexOnly}},
			Attrs: []ir.AttrSpec{{Name: "tmaLayout", Optional: true, Constraint: ir.AttrConstraint{Desc: "TensorMap descriptor type attribute",
				OK: func(a ir.Attribute) bool { t, ok := a.(*ir.TypeAttr); return ok && tensorMapC.OK(t.Value) }}},
				{Name: "columns", Optional: true, Constraint: ir.DenseI64ArrayC}},
			Format:  "$matrixD `,` $dstMemref (`[` $indices^ `]`)? attr-dict `:` type($matrixD) `to` type($dstMemref)",
			Verify:  verifyConvertStore,
			Effects: []ir.Effect{{Kind: ir.Write, Operand: "dstMemref"}},
			Doc: "The accumulator is 2-D and holds f32; the destination is a 2-D memref of f32, f16, bf16 or f8E4M3FN (saturating: " +
				"values beyond ±448 store ±448, NaN stays NaN), in global or shared memory, with a strided layout whose innermost stride is 1. " +
				"Without indices the destination has the accumulator's shape. With two indices `[%m0, %n0]` (the masked form, for edge " +
				"tiles) element (r, c) goes to `%dst[%m0 + r, %n0 + c]` when both are inside the destination's dimensions and nowhere else; " +
				"the destination may then have any 2-D shape. With `tmaLayout = T` (a tensor map type) the shared-memory destination " +
				"(rows of a tile of the box's rows, of the destination's row-stride columns) is written in the layout a `tmac.tma.store` " +
				"through a map of type T reads: box after box, each box swizzled as T says, so that the warps' stores do not conflict " +
				"on banks. With `columns = array<i64: first, count>` only the accumulator's columns [first, first + count) are stored, " +
				"as if the accumulator were those columns alone (first and count multiples of 8): an epilogue can write a tile a few " +
				"columns at a time through a smaller shared buffer.",
		},
	)
}

// typeParsers parse the rest of each tmac type after its mnemonic; the
// files defining the types fill it in their init.
var typeParsers = map[string]func(p *ir.Parser) (ir.Type, error){}

func parseType(p *ir.Parser, mnemonic string) (ir.Type, error) {
	parse, ok := typeParsers[mnemonic]
	if !ok {
		return nil, p.Errorf("unknown type `%s` in dialect `tmac`", mnemonic)
	}
	return parse(p)
}

// verifyConvertStore checks tmac.warpgroup.mma.store: an f32 accumulator
// of shape MxN stored into a 2-D memref of f32, f16, bf16 or f8E4M3FN in
// global or shared memory, with a strided layout whose innermost stride is
// 1; of shape MxN unless the op has the two indices of the masked form.
func verifyConvertStore(op *ir.Operation) error {
	acc, _ := nvgpu.AsWarpgroupAccumulator(op.Operand(0).Type())
	v := acc.Fragmented
	m := op.Operand(1).Type().(*ir.MemRefType)
	nidx := op.NumOperands() - 2
	if f, ok := v.Elem.(*ir.FloatType); !ok || f.Kind != ir.F32 {
		return op.EmitError("the accumulator must hold f32 elements, not %s", v.Elem)
	}
	if len(v.Shape()) != 2 {
		return op.EmitError("the accumulator %s must be 2-D", v)
	}
	if a, ok := op.Attr("columns").(*ir.DenseArrayAttr); ok && len(a.Ints) != 2 {
		return op.EmitError("columns must be array<i64: first, count>, not %d values", len(a.Ints))
	}
	if first, count, ok := StoreColumns(op); ok {
		n := v.Shape()[1]
		if first < 0 || count < 8 || first%8 != 0 || count%8 != 0 || first+count > n {
			return op.EmitError("columns [%d, %d + %d) must be a non-empty range of the accumulator's %d columns, starting and ending at multiples of 8 (a thread's registers cover columns in groups of 8)", first, first, count, n)
		}
		v = ir.VectorTypeOf([]int64{v.Shape()[0], count}, v.Elem)
	}
	if err := verifyAccMemref(op, v, m, nidx, "destination", IsConvertStoreElem, "f32, f16, bf16 or f8E4M3FN"); err != nil {
		return err
	}
	if a := op.Attr("tmaLayout"); a != nil {
		return verifyTMALayout(op, m, nidx, a.(*ir.TypeAttr).Value)
	}
	return nil
}

// StoreColumns returns the accumulator column range [first, first+count)
// a tmac.warpgroup.mma.store's columns attribute selects; ok is false
// without the attribute (every column) or with a malformed one, which
// the verifier rejects.
func StoreColumns(op *ir.Operation) (first, count int64, ok bool) {
	a, ok := op.Attr("columns").(*ir.DenseArrayAttr)
	if !ok || len(a.Ints) != 2 {
		return 0, 0, false
	}
	return a.Ints[0], a.Ints[1], true
}

// verifyTMALayout checks a tmac.warpgroup.mma.store's tmaLayout (the
// tensor map type t of the TMA store that will read the destination m):
// the unmasked form into shared memory; a valid 2-D, non-interleaved
// tensor map of m's element type; m's row stride static, at least its
// columns (rows do not overlap) and a multiple of the box's columns; a
// swizzled box a multiple of 8 rows (the swizzle pattern's repeat), so
// that the pattern of each element follows from its row and column.
func verifyTMALayout(op *ir.Operation, m *ir.MemRefType, nidx int, t ir.Type) error {
	d, _ := nvgpu.AsTensorMapDescriptor(t)
	if msg := nvgpu.VerifyTensorMapDescriptor(d); msg != "" {
		return op.EmitError("tmaLayout: %s", msg)
	}
	box := d.Tensor
	st, _, _ := memref.StridesAndOffset(m)
	switch {
	case nidx != 0:
		return op.EmitError("tmaLayout is for the unmasked form (no indices): a TMA store clips the tile at the matrix's bounds itself")
	case !nvgpu.IsSharedMemory(m.MemorySpace):
		return op.EmitError("tmaLayout needs a destination in shared memory, not %s", m)
	case box.Rank() != 2:
		return op.EmitError("tmaLayout needs a 2-D tensor map box, not %s", box)
	case box.Elem != m.Elem:
		return op.EmitError("tmaLayout's box element type %s differs from the destination's %s", box.Elem, m.Elem)
	case d.Interleave != nvgpu.InterleaveNone:
		return op.EmitError("tmaLayout needs a tensor map without interleave, not %s", d.Interleave)
	case st[0] == ir.Dynamic || st[0] < m.Shape()[1] || st[0]%box.Shape()[1] != 0:
		return op.EmitError("tmaLayout needs the destination's row stride static, at least its %d columns and a multiple of the box's %d columns (the tile's width), not %s",
			m.Shape()[1], box.Shape()[1], m)
	case d.Swizzle != nvgpu.SwizzleNone && box.Shape()[0]%8 != 0:
		return op.EmitError("tmaLayout needs a swizzled box of a multiple of 8 rows (the swizzle pattern's repeat), not %d", box.Shape()[0])
	}
	return nil
}

// verifyAccMemref checks the memref m an accumulator of vector type v is
// stored to or loaded from (role: destination or source) with nidx
// indices: none (m has the accumulator's shape) or the masked form's 2
// (any 2-D m); elements elemOK (listed in elems); a strided layout of unit
// innermost stride; global or shared memory.
func verifyAccMemref(op *ir.Operation, v *ir.VectorType, m *ir.MemRefType, nidx int, role string, elemOK func(ir.Type) bool, elems string) error {
	switch {
	case nidx != 0 && nidx != 2:
		return op.EmitError("expected no indices or 2 (the %s row and column of the accumulator's element (0, 0)), got %d", role, nidx)
	case nidx == 2 && m.Rank() != 2:
		return op.EmitError("%s %s must be 2-D", role, m)
	case nidx == 0 && (m.Rank() != 2 || m.Shape()[0] != v.Shape()[0] || m.Shape()[1] != v.Shape()[1]):
		return op.EmitError("%s %s must have the accumulator's shape %dx%d", role, m, v.Shape()[0], v.Shape()[1])
	}
	if !elemOK(m.Elem) {
		return op.EmitError("%s element type %s must be %s", role, m.Elem, elems)
	}
	if st, _, ok := memref.StridesAndOffset(m); !ok || st[1] != 1 {
		return op.EmitError("%s %s must have a strided layout with innermost stride 1", role, m)
	}
	if !nvgpu.IsSharedMemory(m.MemorySpace) && !nvgpu.IsGlobalMemory(m.MemorySpace) {
		return op.EmitError("%s %s must be in global or shared memory", role, m)
	}
	return nil
}

// IsConvertStoreElem reports whether tmac.warpgroup.mma.store can store
// elements of type t: f32, f16, bf16 or f8E4M3FN.
func IsConvertStoreElem(t ir.Type) bool {
	f, ok := t.(*ir.FloatType)
	return ok && (f.Kind == ir.F32 || f.Kind == ir.F16 || f.Kind == ir.BF16 || f.Kind == ir.F8E4M3FN)
}

// verifyTileCopy checks the tile of a tmac.tma.load or store (its first
// operand) against its tensor map (the second; the coordinates follow): a
// static, row-major shared-memory memref of the box's element type and
// rank, whose shape is the box's except in one dimension, the innermost or
// the outermost, which may be a multiple of the box's (the tile is then
// copied box after box, each box contiguous: side by side in the innermost
// dimension, the layout wgmma reads for 128B-swizzled operands wider than
// one swizzle span; one below the other in the outermost, so that a
// multicast tile of one swizzle span's width can be shared out among a
// cluster's blocks). A load's tile may also be a view of a tile's leading
// rows (LeadingRows), checked against the box by its own shape.
func verifyTileCopy(op *ir.Operation) error {
	tile, desc, ncoords := op.Operand(0), op.Operand(1), op.NumOperands()-2
	d, _ := nvgpu.AsTensorMapDescriptor(desc.Type())
	if msg := nvgpu.VerifyTensorMapDescriptor(d); msg != "" {
		return op.EmitError("%s", msg)
	}
	m := tile.Type().(*ir.MemRefType)
	whole, rows := LeadingRows(tile)
	if rows > 0 && op.Name() == "tmac.tma.store" {
		return op.EmitError("a TMA store copies a whole tile, not a subview of its leading rows (the tensor map's bounds already clip the rows outside the matrix)")
	}
	box := d.Tensor
	if box.Rank() < 1 || box.Rank() > nvgpu.MaxTMATensorRank {
		return op.EmitError("the tensor map box must have rank 1 to %d, got %d", nvgpu.MaxTMATensorRank, box.Rank())
	}
	boxBytes := ir.NumElements(box.Shape()) * int64(ir.BitWidth(box.Elem)) / 8
	if int64(ir.BitWidth(box.Elem))*box.Shape()[box.Rank()-1]/8%nvgpu.TMALastDimByteModulo != 0 {
		return op.EmitError("the bytes in the last dimension of the tensor map must be a multiple of %d", nvgpu.TMALastDimByteModulo)
	}
	switch {
	case !nvgpu.IsSharedMemory(m.MemorySpace):
		return op.EmitError("tile %s is not in shared memory (#gpu.address_space<workgroup>)", m)
	case !ir.HasStaticShape(m.Shape()):
		return op.EmitError("tile %s must have a static shape", m)
	case m.Layout != nil && rows == 0: // a view's boxes lie in the whole tile (CopyBoxes)
		return op.EmitError("tile %s must have the identity layout (or be a memref.subview of a tile's leading rows)", m)
	case m.Elem != box.Elem:
		return op.EmitError("tile element type %s differs from the tensor map's %s", m.Elem, box.Elem)
	case m.Rank() != box.Rank():
		return op.EmitError("tile rank %d differs from the tensor map box rank %d", m.Rank(), box.Rank())
	case ncoords != box.Rank():
		return op.EmitError("expected %d coordinates (the box rank), got %d", box.Rank(), ncoords)
	}
	r := m.Rank()
	bx := boxesInto(m, box, whole) // the box's sizes are positive (VerifyTensorMapDescriptor)
	split := bx.Dim                // the dimension the boxes are laid along
	for i := 0; i < r; i++ {
		if i != split && m.Shape()[i] != box.Shape()[i] {
			return op.EmitError("tile %s does not match the box %s in dimension %d", m, box, i)
		}
	}
	ext, boxExt := m.Shape()[split], bx.Extent
	if ext == 0 || ext%boxExt != 0 {
		which := "innermost"
		if split != r-1 {
			which = "outermost"
		}
		return op.EmitError("tile %s: %s dimension %d is not a positive multiple of the box's %d", m, which, ext, boxExt)
	}
	// Box i lands at byte offset i*stride (the box's bytes, or the whole
	// tile's box for a copy into its leading rows); every box must start at
	// the alignment TMA (and the swizzle pattern wgmma assumes) needs.
	stride := bx.Stride
	if align := BoxAlignment(d.Swizzle); ext/boxExt > 1 && stride%align != 0 {
		if stride != boxBytes {
			return op.EmitError("tile %s holds %d boxes %d bytes apart: each box must start %d-byte aligned, so that distance must be a multiple of %d bytes", m, ext/boxExt, stride, align, align)
		}
		return op.EmitError("tile %s holds %d boxes of %d bytes: each box must start %d-byte aligned, so the box size must be a multiple of %d bytes", m, ext/boxExt, boxBytes, align, align)
	}
	return nil
}

// LeadingRows reports whether tile is a memref.subview of the leading rows
// of a statically shaped, identity-layout memref: zero offsets, unit
// strides, every size but the outermost the source's, rank 2 or more. It
// returns the source and the number of rows, or (nil, 0).
//
// A tmac.tma.load into such a view fills only those rows of each of the
// whole tile's boxes (box i still starts where the whole tile's box i
// does: the layout wgmma reads) and leaves the other rows as they were. A
// GEMM whose M is below its tile's rows loads only the M valid rows of A
// that way, instead of having TMA write zeros to the rest.
func LeadingRows(tile ir.Value) (ir.Value, int64) {
	// By name and attribute names: the generated memref accessors are not
	// there when the generator itself builds this package (internal/opgen).
	sv := tile.DefiningOp()
	if sv == nil || sv.Name() != "memref.subview" || sv.NumOperands() == 0 {
		return nil, 0
	}
	src, ok1 := sv.Operand(0).Type().(*ir.MemRefType)
	offs, ok2 := sv.Attr("static_offsets").(*ir.DenseArrayAttr)
	sizes, ok3 := sv.Attr("static_sizes").(*ir.DenseArrayAttr)
	strides, ok4 := sv.Attr("static_strides").(*ir.DenseArrayAttr)
	if !ok1 || !ok2 || !ok3 || !ok4 || src.Layout != nil || !ir.HasStaticShape(src.Shape()) || src.Rank() < 2 ||
		len(offs.Ints) != src.Rank() || len(sizes.Ints) != src.Rank() || len(strides.Ints) != src.Rank() {
		return nil, 0
	}
	for i := range src.Rank() {
		if offs.Ints[i] != 0 || strides.Ints[i] != 1 || (i > 0 && sizes.Ints[i] != src.Shape()[i]) {
			return nil, 0
		}
	}
	if rows := sizes.Ints[0]; rows > 0 && rows <= src.Shape()[0] {
		return sv.Operand(0), rows
	}
	return nil, 0
}

// boxesInto is BoxesOfBox for a copy of tile m, which is a view of the
// leading rows of whole (or whole is nil). The boxes of such a view are
// placed in the whole tile: side by side, box i starts where the whole
// tile's box i does (a box as tall as the whole tile after the previous
// one: each fills the top of its own column of boxes); one below the
// other, the leading rows are contiguous and the stride stays the box's.
func boxesInto(m, box *ir.MemRefType, whole ir.Value) TileBoxes {
	bx, _ := BoxesOfBox(m, box)
	if whole != nil && bx.Dim != 0 {
		shape := append([]int64{}, box.Shape()...)
		shape[0] = whole.Type().(*ir.MemRefType).Shape()[0]
		bx.Stride = TileBytes(ir.MemRefTypeOf(shape, box.Elem, nil, box.MemorySpace))
	}
	return bx
}

// CopyBoxes returns the boxes of a verified tmac.tma.load or store (op),
// the whole tile they land in (the subview's source for a load into a
// tile's leading rows, else the copy's own tile) and the bytes the copy
// moves (what an mbarrier's expect_tx counts).
func CopyBoxes(op *ir.Operation) (bx TileBoxes, whole ir.Value, bytes int64) {
	tile := op.Operand(0)
	d, _ := nvgpu.AsTensorMapDescriptor(op.Operand(1).Type())
	m := tile.Type().(*ir.MemRefType)
	whole, _ = LeadingRows(tile)
	bx = boxesInto(m, d.Tensor, whole)
	if whole == nil {
		whole = tile
	}
	return bx, whole, TileBytes(m)
}

// TileBoxes says how a verified tile is made of its tensor map's boxes: N
// boxes laid along memref dimension Dim (the innermost, or the outermost
// when only it differs from the box), box i at byte offset i * Stride
// and at coordinate Coord (TMA order, innermost first) advanced by i *
// Extent, the box's extent in Dim. Stride is the box's bytes, but for a
// load into a tile's leading rows (CopyBoxes).
type TileBoxes struct {
	N      int64
	Dim    int
	Coord  int
	Extent int64
	Stride int64
}

// BoxesOf returns the boxes of tile for the tensor map type desc; ok is
// false when desc is not a tensor map descriptor whose box has tile's
// rank (>= 1), which a verified tmac.tma.load/store never has.
func BoxesOf(tile *ir.MemRefType, desc ir.Type) (TileBoxes, bool) {
	d, ok := nvgpu.AsTensorMapDescriptor(desc)
	if !ok {
		return TileBoxes{}, false
	}
	return BoxesOfBox(tile, d.Tensor)
}

// BoxesOfBox is BoxesOf for the tensor map's box type.
func BoxesOfBox(tile, box *ir.MemRefType) (TileBoxes, bool) {
	r := tile.Rank()
	if r == 0 || box.Rank() != r {
		return TileBoxes{}, false
	}
	dim := r - 1
	if r > 1 && tile.Shape()[r-1] == box.Shape()[r-1] && tile.Shape()[0] != box.Shape()[0] {
		dim = 0
	}
	ext := box.Shape()[dim]
	if ext <= 0 {
		return TileBoxes{}, false
	}
	return TileBoxes{N: tile.Shape()[dim] / ext, Dim: dim, Coord: r - 1 - dim, Extent: ext, Stride: TileBytes(box)}, true
}

// BoxAlignment is the shared-memory alignment in bytes of a TMA box with
// the given swizzle: 128, or the swizzle pattern's repeat (8 rows of the
// swizzle span: 256, 512 or 1024 bytes).
func BoxAlignment(s nvgpu.SwizzleKind) int64 {
	if s == nvgpu.SwizzleNone {
		return 128
	}
	return 8 * int64(s.Bytes())
}

// verifyOpAttr checks the tmac.* discardable attributes it knows:
// tmac.stages and tmac.store_stages are i64 integers >= 1 on an scf.for.
func verifyOpAttr(op *ir.Operation, attr ir.NamedAttr) error {
	switch attr.Name {
	case StagesAttr, StoreStagesAttr:
		if op.Name() != "scf.for" {
			return op.EmitError("'%s' attribute must be attached to an scf.for, not '%s'", attr.Name, op.Name())
		}
		a, ok := attr.Value.(*ir.IntegerAttr)
		if !ok || a.Type() != ir.I64 || a.Big != nil || a.Int() < 1 {
			return op.EmitError("'%s' must be an i64 integer >= 1, got %s", attr.Name, attr.Value)
		}
		return nil
	}
	return nil // other tmac.* attributes (tmac.output, tmac.flops, ...) are free-form
}

// BoxesPerTile returns how many boxes of the tensor map make up tile.
// It returns 0 when desc is not a tensor map descriptor whose box has
// tile's rank (>= 1); a verified tmac.tma.load/store never has that.
func BoxesPerTile(tile *ir.MemRefType, desc ir.Type) int64 {
	bx, ok := BoxesOf(tile, desc)
	if !ok {
		return 0
	}
	return bx.N
}

// TileBytes returns the size of a static tile in bytes.
func TileBytes(t *ir.MemRefType) int64 {
	return ir.NumElements(t.Shape()) * int64(ir.BitWidth(t.Elem)) / 8
}
