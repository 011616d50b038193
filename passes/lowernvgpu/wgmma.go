package lowernvgpu

import (
	"fmt"

	"github.com/tmac-dev/tmac/dialects/arith"
	"github.com/tmac-dev/tmac/dialects/gpu"
	"github.com/tmac-dev/tmac/dialects/llvm"
	"github.com/tmac-dev/tmac/dialects/memref"
	"github.com/tmac-dev/tmac/dialects/nvgpu"
	"github.com/tmac-dev/tmac/dialects/nvvm"
	"github.com/tmac-dev/tmac/dialects/scf"
	"github.com/tmac-dev/tmac/dialects/tmac"
	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/passes/internal/passutil"
)

// lower-nvgpu, warpgroup MMA (wgmma) family:
//
//   - nvgpu.warpgroup.generate.descriptor becomes the 64-bit shared-memory
//     matrix descriptor (an i64), computed from the tile's 32-bit shared
//     address and constants derived from the tensor map's swizzle and the
//     tile's type (see wgmmaOperand);
//   - nvgpu.warpgroup.mma.init.accumulator becomes llvm.mlir.zero of the
//     accumulator struct;
//   - nvgpu.warpgroup.mma becomes one nvvm.wgmma.fence.aligned, one
//     nvvm.wgmma.mma_async per 64-row slice of the accumulator and per
//     instruction-K step, one nvvm.wgmma.commit.group.sync.aligned and one
//     nvvm.wgmma.wait.group.sync.aligned with the op's waitGroup (default 1:
//     the group just issued may stay in flight while the previous one must
//     have completed, so consecutive warpgroup.mma ops overlap);
//   - nvgpu.warpgroup.mma.store waits for all wgmma groups (wait_group 0:
//     reading accumulators of an mma in flight is undefined), then stores
//     each thread's fragment with llvm.extractvalue + memref.store
//     (wgmmaFragment, shared with tmac.warpgroup.mma.store, which converts
//     to f16/bf16: convert_store.go).
//
// Accumulators (!nvgpu.warpgroup.accumulator<fragmented = vector<MxNxT>>)
// become !llvm.struct values, one inner struct per 64-row slice (N/2 f32
// registers, or N/4 vector<2xf16> registers for f16 accumulators), and
// descriptors become i64. Values of these types that are block arguments or
// results of other ops (scf.for iter_args and results, scf.if/while results,
// ...) are retyped in place before any op is rewritten; the nvgpu types they
// had are remembered for the rewrites that need them.
//
// Operand tiles. A descriptor's tensor type gives the logical shape of the
// operand (A: MxK, B: KxN). Its storage follows the wgmma canonical layouts:
// A is K-major (K contiguous) unless transposeA, B is K-major (stored as N
// rows of K) unless transposeB, in which case it is N-major (K rows of N).
// This is upstream's meaning of the flags: mma_layout row for A and col for
// B are the K-major forms (wgmma imm-trans 0). In storage the contiguous
// dimension is split into chunks as wide as the swizzle span S (128, 64 or
// 32 bytes; 16 bytes without swizzle), each chunk holding all rows of the
// other (strided) dimension with a row pitch of S: chunk j starts at byte
// j*rows*S. That is what TMA writes when the tile is loaded as boxes whose
// inner dimension is S bytes, one box per chunk at consecutive addresses.

// ---------------------------------------------------------------- layouts

// wgmmaMajor says which dimension of an operand tile is contiguous.
type wgmmaMajor int

const (
	wgmmaKMajor  wgmmaMajor = iota // K contiguous (imm-trans 0)
	wgmmaMNMajor                   // M (for A) or N (for B) contiguous (imm-trans 1)
)

func (m wgmmaMajor) String() string {
	if m == wgmmaKMajor {
		return "K-major"
	}
	return "MN-major"
}

// wgmmaChunkBytes returns the width S of a storage chunk: the swizzle span,
// or 16 bytes (one core-matrix row) without swizzle.
func wgmmaChunkBytes(sw nvgpu.SwizzleKind) int64 {
	if b := sw.Bytes(); b != 0 {
		return b
	}
	return 16
}

// wgmmaSwizzleMode is the descriptor's layout type, bits 62-63.
func wgmmaSwizzleMode(sw nvgpu.SwizzleKind) uint64 {
	switch sw {
	case nvgpu.Swizzle128B:
		return 1
	case nvgpu.Swizzle64B:
		return 2
	case nvgpu.Swizzle32B:
		return 3
	}
	return 0
}

// wgmmaOperand is an operand tile in shared memory, as wgmma reads it.
type wgmmaOperand struct {
	Swizzle  nvgpu.SwizzleKind
	ElemBits int64
	Major    wgmmaMajor
	// Strided is the extent of the strided (row) dimension: M or N for a
	// K-major tile, K for an MN-major one. Contig is the extent of the
	// contiguous dimension, in elements.
	Strided, Contig int64
}

// wgmmaOperandOf returns the operand tile of A (isA) or B with logical type
// t (A: MxK, B: KxN) and the mma's transpose flag for it.
func wgmmaOperandOf(t *ir.MemRefType, sw nvgpu.SwizzleKind, isA, transpose bool) wgmmaOperand {
	s := t.Shape()
	o := wgmmaOperand{Swizzle: sw, ElemBits: int64(ir.BitWidth(t.Elem))}
	switch {
	case isA && !transpose: // M rows of K
		o.Major, o.Strided, o.Contig = wgmmaKMajor, s[0], s[1]
	case isA: // K rows of M
		o.Major, o.Strided, o.Contig = wgmmaMNMajor, s[1], s[0]
	case !transpose: // N rows of K
		o.Major, o.Strided, o.Contig = wgmmaKMajor, s[1], s[0]
	default: // K rows of N
		o.Major, o.Strided, o.Contig = wgmmaMNMajor, s[0], s[1]
	}
	return o
}

// strides returns the descriptor's leading and stride dimension byte
// offsets (LBO, SBO), and whether the hardware reads the LBO.
//
// Derivation, with S the chunk width and R = o.Strided the rows per chunk.
// wgmma sees a tile as core matrices of 8 rows x 16 bytes. Swizzled layouts
// group them into swizzle atoms of 8 rows x S bytes (1024, 512 or 256
// bytes), repeating at 8*S bytes down the rows of a chunk.
//   - K-major, swizzled: SBO is the distance between 8-row groups along M/N,
//     8*S; LBO, the step between core matrices along K, is implied by the
//     swizzle (one instruction reads 32 bytes of K, within one atom row) and
//     not used by the hardware ("assumed 1"): it is encoded as 1 (16 bytes).
//   - K-major, no swizzle: the 8 rows of a core matrix are 16-byte rows of
//     one chunk, so they are contiguous and the next 8 rows follow: SBO =
//     8*16 = 128; the next 16 bytes of K are in the next chunk: LBO = R*16.
//   - MN-major, swizzled: a chunk holds S bytes of M/N for all K rows; LBO is
//     the distance between chunks along M/N, R*S, and SBO the distance
//     between 8-row groups along K, 8*S.
//   - MN-major, no swizzle: the roles swap (the PTX ISA defines the LBO of
//     MN-major interleaved layouts as the stride between groups of 8 K
//     columns): LBO = 128 (the next 8 K rows of a chunk), SBO = R*16 (the
//     next 16 bytes of M/N, one chunk further).
func (o wgmmaOperand) strides() (lbo, sbo int64, lboUsed bool) {
	s := wgmmaChunkBytes(o.Swizzle)
	swizzled := o.Swizzle != nvgpu.SwizzleNone
	switch {
	case o.Major == wgmmaKMajor && swizzled:
		return 16, 8 * s, false
	case o.Major == wgmmaKMajor:
		return o.Strided * 16, 128, true
	case swizzled:
		return o.Strided * s, 8 * s, true
	default:
		return 128, o.Strided * 16, true
	}
}

// byteOffset returns the byte offset, from the tile's start, of the element
// at row r of the strided dimension and column c of the contiguous one,
// before swizzling. Sub-tiles of an operand start at such offsets (rows a
// multiple of 8): the hardware applies the swizzle to the address bits, so
// a start address moved inside a swizzle atom row reads the right data as
// long as the tile itself is aligned to the atom's repeat (1024 bytes for
// 128B swizzle; the descriptor's base offset is 0).
func (o wgmmaOperand) byteOffset(r, c int64) int64 {
	s := wgmmaChunkBytes(o.Swizzle)
	cb := c * o.ElemBits / 8
	return (cb/s)*o.Strided*s + r*s + cb%s
}

// subTileOffset returns the byte offset of the sub-tile an instruction reads
// at M/N offset mn and K offset k.
func (o wgmmaOperand) subTileOffset(mn, k int64) int64 {
	if o.Major == wgmmaKMajor {
		return o.byteOffset(mn, k)
	}
	return o.byteOffset(k, mn)
}

// check reports why the tile cannot be described by a descriptor ("" when
// it can): its contiguous extent must fill whole chunks and its rows whole
// core matrices.
func (o wgmmaOperand) check() string {
	s := wgmmaChunkBytes(o.Swizzle)
	if cb := o.Contig * o.ElemBits / 8; cb%s != 0 {
		return fmt.Sprintf("its contiguous dimension (%d elements, %d bytes) is not a multiple of the %d-byte rows of its %s layout", o.Contig, cb, s, o.layoutName())
	}
	if o.Strided%8 != 0 {
		return fmt.Sprintf("its strided dimension (%d) is not a multiple of 8 rows", o.Strided)
	}
	lbo, sbo, _ := o.strides()
	for _, v := range []int64{lbo, sbo} {
		if v>>4 >= 1<<14 {
			return fmt.Sprintf("a byte offset of its layout (%d) does not fit the descriptor's 14-bit fields", v)
		}
	}
	return ""
}

func (o wgmmaOperand) layoutName() string {
	if o.Swizzle == nvgpu.SwizzleNone {
		return o.Major.String() + " unswizzled"
	}
	return fmt.Sprintf("%s %dB-swizzled", o.Major, o.Swizzle.Bytes())
}

// wgmmaDescriptorBits returns the constant part of a descriptor (everything
// but the start address, bits 0-13): LBO>>4 in bits 16-29, SBO>>4 in bits
// 32-45, base offset 0 in bits 49-51 and the swizzle mode in bits 62-63.
func wgmmaDescriptorBits(sw nvgpu.SwizzleKind, lbo, sbo int64) uint64 {
	return uint64(lbo>>4)<<16 | uint64(sbo>>4)<<32 | wgmmaSwizzleMode(sw)<<62
}

// wgmmaInstrK is the K of one wgmma instruction for an element type: 32
// bytes of K (f16/bf16: 16, tf32: 8, fp8: 32).
func wgmmaInstrK(elem ir.Type) int64 { return 256 / int64(ir.BitWidth(elem)) }

// wgmmaAccumulatorCoord returns where register r of thread t (0..127 in
// the warpgroup) of an m64nN f32 accumulator lies in the 64xN slice, as the
// PTX ISA's "Matrix fragments for wgmma .m64nNk*" accumulator figure shows:
// warp w = t/32 owns rows 16w..16w+15; lane l holds, for each 8-column
// group i = r/4, the pairs (16w + l/4, 8i + 2(l%4) + {0,1}) in registers
// 4i, 4i+1 and the same columns 8 rows lower in 4i+2, 4i+3. The result is
// split into a per-thread part (row0, col0) and a per-register part
// (dr, dc), so that the lowering computes the former once.
func wgmmaAccumulatorCoord(t, r int64) (row0, col0, dr, dc int64) {
	w, l := t/32, t%32
	return 16*w + l/4, 2 * (l % 4), 8 * ((r % 4) / 2), 8*(r/4) + r%2
}

// ------------------------------------------------------------ state & types

const stateWgmma = "wgmma"

type wgmmaState struct {
	// orig holds the nvgpu type of values that were retyped in place or that
	// replace a result of an nvgpu op.
	orig map[ir.Value]ir.Type
	// swizzle holds the tensor map swizzle of each lowered descriptor.
	swizzle map[ir.Value]nvgpu.SwizzleKind
}

func wgmmaStateOf(rw *NVGPURewriter) *wgmmaState {
	st, ok := rw.State[stateWgmma].(*wgmmaState)
	if !ok {
		st = &wgmmaState{orig: map[ir.Value]ir.Type{}, swizzle: map[ir.Value]nvgpu.SwizzleKind{}}
		rw.State[stateWgmma] = st
	}
	return st
}

// nvgpuType returns the nvgpu type v has or had.
func (st *wgmmaState) nvgpuType(v ir.Value) ir.Type {
	if t, ok := st.orig[v]; ok {
		return t
	}
	return v.Type()
}

// wgmmaSliceType is the struct of one 64-row slice of an accumulator.
func wgmmaSliceType(v *ir.VectorType) ir.Type {
	n := v.Shape()[1]
	var regs []ir.Type
	if f, ok := v.Elem.(*ir.FloatType); ok && f.Kind == ir.F16 {
		h2 := ir.VectorTypeOf([]int64{2}, v.Elem)
		for i := int64(0); i < n/4; i++ {
			regs = append(regs, h2)
		}
	} else {
		for i := int64(0); i < n/2; i++ {
			regs = append(regs, v.Elem)
		}
	}
	return llvm.Struct(regs, false)
}

// wgmmaAccumulatorStruct is the lowered type of an accumulator: a struct of
// M/64 slice structs.
func wgmmaAccumulatorStruct(v *ir.VectorType) ir.Type {
	slice := wgmmaSliceType(v)
	var slices []ir.Type
	for i := int64(0); i < v.Shape()[0]/64; i++ {
		slices = append(slices, slice)
	}
	return llvm.Struct(slices, false)
}

// wgmmaLoweredType returns the lowered type of a warpgroup type.
func wgmmaLoweredType(t ir.Type) (ir.Type, bool) {
	if acc, ok := nvgpu.AsWarpgroupAccumulator(t); ok {
		return wgmmaAccumulatorStruct(acc.Fragmented), true
	}
	if _, ok := nvgpu.AsWarpgroupDescriptor(t); ok {
		return ir.I64, true
	}
	return rowsLoweredType(t)
}

func isWarpgroupOp(op *ir.Operation) bool {
	switch op.Name() {
	case nvgpu.WarpgroupGenerateDescriptor, nvgpu.WarpgroupMma,
		nvgpu.WarpgroupMmaStore, nvgpu.WarpgroupMmaInitAccumulator,
		tmac.WarpgroupMmaStore, tmac.WarpgroupAccMap,
		tmac.WarpgroupAccReduce, tmac.WarpgroupRowsStore, tmac.RowsMap,
		tmac.WarpgroupAccLoadRows, tmac.WarpgroupAccLoadCols, tmac.WarpgroupAccLoad:
		return true
	}
	return false
}

// prepareWarpgroupValues runs before the kernel's ops are rewritten: it
// checks the block size of kernels with warpgroup ops, checks accumulator
// shapes, and retypes block arguments and non-nvgpu results of warpgroup
// types in place.
func prepareWarpgroupValues(rw *NVGPURewriter) error {
	var first *ir.Operation
	var retype []ir.Value
	for _, a := range (gpu.FuncOp{Op: rw.Kernel}).Body().Entry().Args() {
		if _, ok := wgmmaLoweredType(a.Type()); ok {
			what := "warpgroup descriptors and accumulators"
			if _, ok := threadValues(a.Type()); ok {
				what = "rows and cols values (registers of a warpgroup)"
			}
			return rw.Kernel.EmitOpError("has an argument of type '%s': %s cannot be kernel arguments", a.Type(), what)
		}
	}
	ir.Walk(rw.Kernel, func(op *ir.Operation) ir.WalkResult {
		if isWarpgroupOp(op) && first == nil {
			first = op
		}
		for _, r := range op.Regions() {
			for _, b := range r.Blocks() {
				if op == rw.Kernel && b == r.Entry() {
					continue
				}
				for _, a := range b.Args() {
					retype = append(retype, a)
				}
			}
		}
		if op.Dialect() != "nvgpu" {
			retype = append(retype, op.Results()...)
		}
		return ir.Advance
	})
	if first == nil {
		return nil
	}
	if err := checkWarpgroupBlockSize(rw.Kernel, first); err != nil {
		return err
	}
	st := wgmmaStateOf(rw)
	for _, v := range retype {
		t := v.Type()
		lt, ok := wgmmaLoweredType(t)
		if !ok {
			continue
		}
		if acc, ok := nvgpu.AsWarpgroupAccumulator(t); ok {
			if msg := checkAccumulatorShape(acc.Fragmented); msg != "" {
				return errorAtValue(v, rw.Kernel, "a warpgroup accumulator %s", msg)
			}
		}
		st.orig[v] = t
		v.SetType(lt)
	}
	return nil
}

// errorAtValue reports an error at the op defining v (or owning the block
// of a block argument).
func errorAtValue(v ir.Value, kernel *ir.Operation, format string, args ...any) error {
	if op := v.DefiningOp(); op != nil {
		return op.EmitOpError(format, args...)
	}
	if a, ok := v.(*ir.BlockArgument); ok {
		if op := a.Owner().ParentOp(); op != nil {
			return op.EmitOpError(format, args...)
		}
	}
	return kernel.EmitOpError(format, args...)
}

// checkWarpgroupBlockSize rejects warpgroup ops in kernels whose known block
// size is not a whole number of warpgroups (128 threads).
func checkWarpgroupBlockSize(kernel, op *ir.Operation) error {
	for _, name := range []string{"known_block_size", "gpu.known_block_size"} {
		a, ok := kernel.Attr(name).(*ir.DenseArrayAttr)
		if !ok || len(a.Ints) != 3 {
			continue
		}
		n := a.Ints[0] * a.Ints[1] * a.Ints[2]
		if n%128 != 0 {
			return op.EmitOpError("needs whole warpgroups, but the kernel's block of %dx%dx%d = %d threads is not a multiple of 128", a.Ints[0], a.Ints[1], a.Ints[2], n)
		}
	}
	return nil
}

// checkAccumulatorShape reports why an accumulator vector cannot be held in
// wgmma registers ("" when it can).
func checkAccumulatorShape(v *ir.VectorType) string {
	s := v.Shape()
	if len(s) != 2 {
		return fmt.Sprintf("must be 2-D, not '%s'", v)
	}
	if s[0] <= 0 || s[0]%64 != 0 {
		return fmt.Sprintf("needs a multiple of 64 rows, not %d ('%s')", s[0], v)
	}
	f, ok := v.Elem.(*ir.FloatType)
	if !ok || (f.Kind != ir.F32 && f.Kind != ir.F16) {
		return fmt.Sprintf("of '%s' elements is not supported (f32 or f16)", v.Elem)
	}
	if s[1] < 8 || s[1] > 256 || s[1]%8 != 0 {
		return fmt.Sprintf("needs N a multiple of 8 up to 256, not %d", s[1])
	}
	return ""
}

// --------------------------------------------------------------- descriptor

func lowerWarpgroupGenerateDescriptor(rw *NVGPURewriter, op *ir.Operation) error {
	st := wgmmaStateOf(rw)
	g := nvgpu.WarpgroupGenerateDescriptorOp{Op: op}
	mem, ok := g.Tensor().Type().(*ir.MemRefType)
	if !ok {
		return rw.Errorf(op, "needs a memref tile, not '%s'", g.Tensor().Type())
	}
	tm, _ := nvgpu.AsTensorMapDescriptor(st.nvgpuType(g.TensorMap()))
	desc, ok := nvgpu.AsWarpgroupDescriptor(g.Descriptor().Type())
	if tm == nil || !ok {
		return rw.Errorf(op, "has unexpected operand or result types")
	}
	t := desc.Tensor
	if !nvgpu.IsSharedMemory(mem.MemorySpace) {
		return rw.Errorf(op, "needs a tile in shared memory (workgroup address space), not '%s'", mem)
	}
	// The tile may be typed as the logical operand or as its storage (for
	// example NxK for a K-major B): the shapes match up to a transpose.
	if t.Rank() != 2 || mem.Rank() != 2 || t.Elem != mem.Elem ||
		!((t.Shape()[0] == mem.Shape()[0] && t.Shape()[1] == mem.Shape()[1]) || (t.Shape()[0] == mem.Shape()[1] && t.Shape()[1] == mem.Shape()[0])) {
		return rw.Errorf(op, "describes a tile of type '%s' but is given '%s': their element types and shapes (up to a transpose) must match", t, mem)
	}
	if tm.Tensor.Elem != t.Elem {
		return rw.Errorf(op, "has a tensor map of '%s' elements for a tile of '%s'", tm.Tensor.Elem, t.Elem)
	}
	if tm.Interleave != nvgpu.InterleaveNone {
		return rw.Errorf(op, "needs a tensor map without interleave")
	}
	if sw := tm.Swizzle; sw != nvgpu.SwizzleNone && tm.Tensor.Rank() >= 1 {
		inner := tm.Tensor.Shape()[tm.Tensor.Rank()-1] * int64(ir.BitWidth(t.Elem)) / 8
		if inner != sw.Bytes() {
			return rw.Errorf(op, "needs the tensor map's box rows (%d bytes) to be as wide as its %d-byte swizzle, the row width of the wgmma layout", inner, sw.Bytes())
		}
	}

	// The layouts the tile is read with, from the warpgroup.mma ops using
	// the descriptor directly.
	lbo, sbo := int64(-1), int64(-1)
	unknown := false
	for _, u := range ir.Uses(g.Descriptor()) {
		// The use's index tells A (descriptorA, operand 0) from B
		// (descriptorB, operand 1) where one descriptor serves both.
		mma, ok := nvgpu.AsWarpgroupMma(u.Owner())
		if !ok || u.Index() > 1 {
			unknown = true
			continue
		}
		if msg := checkUserMma(st, mma); msg != "" {
			// Report what the mma cannot do there rather than a layout.
			return mma.Op.EmitOpError("%s", msg)
		}
		isA := u.Index() == 0
		tr := mma.TransposeA() != nil
		if !isA {
			tr = mma.TransposeB() != nil
		}
		o := wgmmaOperandOf(t, tm.Swizzle, isA, tr)
		if msg := o.check(); msg != "" {
			return rw.Errorf(op, "cannot describe '%s' with %s swizzle as a wgmma operand: %s", t, tm.Swizzle, msg)
		}
		l, s, used := o.strides()
		if (sbo >= 0 && s != sbo) || (used && lbo >= 0 && l != lbo) {
			return rw.Errorf(op, "is used by warpgroup.mma ops that read the tile with different layouts (one descriptor cannot serve them all)")
		}
		sbo = s
		if used {
			lbo = l
		}
	}
	if sbo < 0 || (lbo < 0 && unknown) {
		// Not (only) used by warpgroup.mma directly: the storage is the tile's
		// type, row-major (dim 0 strided, dim 1 contiguous), which is the
		// transposed B's layout (and fits a K-major reader when swizzled).
		if tm.Swizzle == nvgpu.SwizzleNone {
			return rw.Errorf(op, "without swizzle needs to know how the tile is read: use the descriptor directly in nvgpu.warpgroup.mma")
		}
		o := wgmmaOperandOf(t, tm.Swizzle, false, true)
		if msg := o.check(); msg != "" {
			return rw.Errorf(op, "cannot describe '%s' with %s swizzle as a wgmma operand: %s", t, tm.Swizzle, msg)
		}
		l, s, _ := o.strides()
		if sbo >= 0 && s != sbo {
			return rw.Errorf(op, "is used by warpgroup.mma ops that read the tile with different layouts (one descriptor cannot serve them all)")
		}
		lbo, sbo = l, s
	}
	if lbo < 0 {
		lbo = 16
	}
	bits := wgmmaDescriptorBits(tm.Swizzle, lbo, sbo)

	// start address: bits 4..17 of the 32-bit shared address.
	ptr := rw.Pointer(g.Tensor(), 3)
	var addr ir.Value = rw.Create(llvm.Ptrtoint, []ir.Value{ptr}, []ir.Type{ir.I64}).Result(0)
	addr = rw.binary(arith.Andi, addr, rw.IntConst(0x3FFFF, ir.I64))
	addr = rw.binary(arith.Shrui, addr, rw.IntConst(4, ir.I64))
	d := rw.binary(arith.Ori, addr, rw.IntConst(int64(bits), ir.I64))
	st.orig[d] = g.Descriptor().Type()
	st.swizzle[d] = tm.Swizzle
	rw.Replace(op, d)
	return nil
}

// binary creates a two-operand arith op with the type of a.
func (rw *NVGPURewriter) binary(name string, a, b ir.Value) ir.Value {
	return rw.Create(name, []ir.Value{a, b}, []ir.Type{a.Type()}).Result(0)
}

// ------------------------------------------------------------- accumulator

func lowerWarpgroupInitAccumulator(rw *NVGPURewriter, op *ir.Operation) error {
	t := nvgpu.WarpgroupMmaInitAccumulatorOp{Op: op}.MatrixC().Type()
	acc, _ := nvgpu.AsWarpgroupAccumulator(t)
	if msg := checkAccumulatorShape(acc.Fragmented); msg != "" {
		return rw.Errorf(op, "cannot hold a wgmma accumulator: it %s", msg)
	}
	z := rw.Create(llvm.MlirZero, nil, []ir.Type{wgmmaAccumulatorStruct(acc.Fragmented)}).Result(0)
	wgmmaStateOf(rw).orig[z] = t
	rw.Replace(op, z)
	return nil
}

// wgmmaTypeName is the nvvm.wgmma_type of an element type.
func wgmmaTypeName(t ir.Type) string {
	f, ok := t.(*ir.FloatType)
	if !ok {
		return ""
	}
	switch f.Kind {
	case ir.F16:
		return "f16"
	case ir.BF16:
		return "bf16"
	case ir.TF32:
		return "tf32"
	case ir.F32:
		return "f32"
	case ir.F8E4M3FN:
		return "e4m3"
	case ir.F8E5M2:
		return "e5m2"
	}
	return ""
}

// checkWarpgroupMma reports what wgmma cannot do for op ("" when it can).
func checkWarpgroupMma(a, b *ir.MemRefType, d *ir.VectorType, transA, transB bool) string {
	ta, tb, td := wgmmaTypeName(a.Elem), wgmmaTypeName(b.Elem), wgmmaTypeName(d.Elem)
	switch {
	case ta == "" || tb == "" || ta == "f32" || tb == "f32":
		return fmt.Sprintf("has '%s' x '%s' operands, which wgmma does not multiply (f16, bf16, tf32, e4m3, e5m2)", a.Elem, b.Elem)
	case (ta == "e4m3" || ta == "e5m2") != (tb == "e4m3" || tb == "e5m2"), !(ta == tb || (ta == "e4m3" || ta == "e5m2")):
		return fmt.Sprintf("has '%s' x '%s' operands: wgmma needs the same type on both sides (or two fp8 types)", a.Elem, b.Elem)
	case td != "f32" && !(td == "f16" && (ta == "f16" || ta == "bf16")):
		return fmt.Sprintf("accumulates '%s' += '%s' x '%s', which wgmma does not support (f32, or f16 for f16/bf16 inputs)", d.Elem, a.Elem, b.Elem)
	case (transA || transB) && ta != "f16" && ta != "bf16":
		return fmt.Sprintf("transposes a '%s' operand: wgmma reads MN-major (transposed) tiles only for f16 and bf16; %s operands must both be K-major (no transposeA, no transposeB)", a.Elem, ta)
	}
	if msg := checkAccumulatorShape(d); msg != "" {
		return "has an accumulator that " + msg
	}
	m, k := a.Shape()[0], a.Shape()[1]
	if m%64 != 0 {
		return fmt.Sprintf("has M = %d, not a multiple of the instruction's 64 rows", m)
	}
	if kk := wgmmaInstrK(a.Elem); k%kk != 0 {
		return fmt.Sprintf("has K = %d, not a multiple of the instruction's K = %d for %s", k, kk, ta)
	}
	return ""
}

// checkUserMma runs checkWarpgroupMma on a warpgroup.mma not lowered yet.
func checkUserMma(st *wgmmaState, mma nvgpu.WarpgroupMmaOp) string {
	da, okA := nvgpu.AsWarpgroupDescriptor(st.nvgpuType(mma.DescriptorA()))
	db, okB := nvgpu.AsWarpgroupDescriptor(st.nvgpuType(mma.DescriptorB()))
	acc, okD := nvgpu.AsWarpgroupAccumulator(mma.MatrixD().Type())
	if !okA || !okB || !okD {
		return ""
	}
	return checkWarpgroupMma(da.Tensor, db.Tensor, acc.Fragmented, mma.TransposeA() != nil, mma.TransposeB() != nil)
}

func lowerWarpgroupMma(rw *NVGPURewriter, op *ir.Operation) error {
	st := wgmmaStateOf(rw)
	mma := nvgpu.WarpgroupMmaOp{Op: op}
	da, okA := nvgpu.AsWarpgroupDescriptor(st.nvgpuType(mma.DescriptorA()))
	db, okB := nvgpu.AsWarpgroupDescriptor(st.nvgpuType(mma.DescriptorB()))
	acc, okD := nvgpu.AsWarpgroupAccumulator(mma.MatrixD().Type())
	if !okA || !okB || !okD {
		return rw.Errorf(op, "has unexpected operand types")
	}
	transA, transB := mma.TransposeA() != nil, mma.TransposeB() != nil
	a, b, d := da.Tensor, db.Tensor, acc.Fragmented
	if msg := checkWarpgroupMma(a, b, d, transA, transB); msg != "" {
		return rw.Errorf(op, "%s", msg)
	}
	// The swizzle is not part of the descriptor type; the K-step offsets
	// need it, so find it where the descriptors are made.
	swA, err := descriptorSwizzle(rw, op, mma.DescriptorA())
	if err != nil {
		return err
	}
	swB, err := descriptorSwizzle(rw, op, mma.DescriptorB())
	if err != nil {
		return err
	}
	oa := wgmmaOperandOf(a, swA, true, transA)
	ob := wgmmaOperandOf(b, swB, false, transB)
	for _, o := range []struct {
		name string
		o    wgmmaOperand
		t    *ir.MemRefType
	}{{"A", oa, a}, {"B", ob, b}} {
		if msg := o.o.check(); msg != "" {
			return rw.Errorf(op, "cannot read operand %s ('%s', %s) as a wgmma operand: %s", o.name, o.t, o.o.layoutName(), msg)
		}
	}

	m, k, n := a.Shape()[0], a.Shape()[1], b.Shape()[1]
	kInst := wgmmaInstrK(a.Elem)
	ta, tb, td := wgmmaTypeName(a.Elem), wgmmaTypeName(b.Elem), wgmmaTypeName(d.Elem)
	layoutA, layoutB := "row", "col"
	if transA {
		layoutA = "col"
	}
	if transB {
		layoutB = "row"
	}
	attrs := []ir.NamedAttr{
		{Name: "layoutA", Value: nvvm.MMALayout.Attr(layoutA)},
		{Name: "layoutB", Value: nvvm.MMALayout.Attr(layoutB)},
		{Name: "scaleA", Value: nvvm.WGMMAScaleIn.Attr("one")},
		{Name: "scaleB", Value: nvvm.WGMMAScaleIn.Attr("one")},
		{Name: "scaleD", Value: nvvm.WGMMAScaleOut.Attr("one")},
		{Name: "shape", Value: nvvm.Shape(64, n, kInst)},
		{Name: "typeA", Value: nvvm.WGMMAType.Attr(ta)},
		{Name: "typeB", Value: nvvm.WGMMAType.Attr(tb)},
		{Name: "typeD", Value: nvvm.WGMMAType.Attr(td)},
	}
	descA, descB := rw.Lookup(mma.DescriptorA()), rw.Lookup(mma.DescriptorB())
	c := rw.Lookup(mma.MatrixC())
	sliceT, accT := wgmmaSliceType(d), wgmmaAccumulatorStruct(d)
	advance := func(desc ir.Value, bytes int64) ir.Value {
		if bytes == 0 {
			return desc
		}
		return rw.binary(arith.Addi, desc, rw.IntConst(bytes>>4, ir.I64))
	}

	rw.Create(nvvm.WgmmaFenceAligned, nil, nil)
	var res ir.Value = rw.Create(llvm.MlirUndef, nil, []ir.Type{accT}).Result(0)
	bSteps := make([]ir.Value, k/kInst)
	for i := int64(0); i < m/64; i++ {
		var s ir.Value = rw.Create(llvm.Extractvalue, []ir.Value{c}, []ir.Type{sliceT}, ir.NamedAttr{Name: "position", Value: ir.DenseI64Array(i)}).Result(0)
		for kk := int64(0); kk < k/kInst; kk++ {
			dA := advance(descA, oa.subTileOffset(64*i, kk*kInst))
			if bSteps[kk] == nil {
				bSteps[kk] = advance(descB, ob.subTileOffset(0, kk*kInst))
			}
			s = rw.Create(nvvm.WgmmaMmaAsync, []ir.Value{s, dA, bSteps[kk]}, []ir.Type{sliceT}, attrs...).Result(0)
		}
		res = rw.Create(llvm.Insertvalue, []ir.Value{res, s}, []ir.Type{accT}, ir.NamedAttr{Name: "position", Value: ir.DenseI64Array(i)}).Result(0)
	}
	rw.Create(nvvm.WgmmaCommitGroupSyncAligned, nil, nil)
	rw.Create(nvvm.WgmmaWaitGroupSyncAligned, nil, nil, ir.NamedAttr{Name: "group", Value: ir.I64Attr(passutil.MmaWaitGroup(mma))})
	st.orig[res] = mma.MatrixD().Type()
	rw.Replace(op, res)
	return nil
}

// descriptorSwizzle finds the swizzle of the tensor map a descriptor
// operand of op was generated with (following scf.for iter_args back to
// their initial value).
func descriptorSwizzle(rw *NVGPURewriter, op *ir.Operation, v ir.Value) (nvgpu.SwizzleKind, error) {
	st := wgmmaStateOf(rw)
	for {
		if sw, ok := st.swizzle[v]; ok {
			return sw, nil
		}
		if g, ok := nvgpu.AsWarpgroupGenerateDescriptor(v.DefiningOp()); ok {
			tm, _ := nvgpu.AsTensorMapDescriptor(st.nvgpuType(g.TensorMap()))
			return tm.Swizzle, nil
		}
		a, ok := v.(*ir.BlockArgument)
		if !ok {
			break
		}
		loop, ok := scf.AsFor(a.Owner().ParentOp())
		if !ok || a.Index() == 0 || a.Owner() != loop.Region().Entry() {
			break
		}
		v = loop.InitArgs()[a.Index()-1] // argument 0 is the induction variable
	}
	return 0, rw.Errorf(op, "needs to know how its descriptors were made: use descriptors of nvgpu.warpgroup.generate.descriptor, directly or through scf.for iter_args")
}

// -------------------------------------------------------------------- store

func lowerWarpgroupMmaStore(rw *NVGPURewriter, op *ir.Operation) error {
	s := nvgpu.WarpgroupMmaStoreOp{Op: op}
	d, err := storedAccumulator(rw, op, s.MatrixD())
	if err != nil {
		return err
	}
	if f, _ := d.Elem.(*ir.FloatType); f == nil || f.Kind != ir.F32 {
		return rw.Errorf(op, "stores only f32 accumulators")
	}
	dst := s.DstMemref()
	mt, ok := dst.Type().(*ir.MemRefType)
	if !ok || mt.Rank() != 2 || mt.Elem != d.Elem {
		return rw.Errorf(op, "needs a 2-D memref of '%s', not '%s'", d.Elem, dst.Type())
	}
	frag := newWgmmaFragment(rw, d, rw.Lookup(s.MatrixD()))
	frag.pairs(func(p wgmmaPair) {
		for k := int64(0); k < 2; k++ {
			x := p.Value(k)
			rw.Create(memref.Store, []ir.Value{x, dst, p.Row(), p.Col(k)}, nil)
		}
	})
	op.Erase()
	return nil
}

// storedAccumulator returns the fragmented vector type of the accumulator
// acc that op (nvgpu or tmac warpgroup.mma.store) stores, or why it cannot
// be stored.
func storedAccumulator(rw *NVGPURewriter, op *ir.Operation, acc ir.Value) (*ir.VectorType, error) {
	a, ok := nvgpu.AsWarpgroupAccumulator(wgmmaStateOf(rw).nvgpuType(acc))
	if !ok {
		return nil, rw.Errorf(op, "has an unexpected accumulator type")
	}
	if msg := checkAccumulatorShape(a.Fragmented); msg != "" {
		return nil, rw.Errorf(op, "cannot store an accumulator that %s", msg)
	}
	return a.Fragmented, nil
}

// resultAccumulator returns the nvgpu type of op's accumulator result and
// its fragmented vector type, or why wgmma registers cannot hold it
// (what the op does with it, for the message: "compute on", "load").
func resultAccumulator(rw *NVGPURewriter, op *ir.Operation, what string) (ir.Type, *ir.VectorType, error) {
	resT := wgmmaStateOf(rw).nvgpuType(op.Result(0))
	acc, ok := nvgpu.AsWarpgroupAccumulator(resT)
	if !ok {
		return nil, nil, rw.Errorf(op, "has an unexpected result type")
	}
	if msg := checkAccumulatorShape(acc.Fragmented); msg != "" {
		return nil, nil, rw.Errorf(op, "cannot %s an accumulator that %s", what, msg)
	}
	return resT, acc.Fragmented, nil
}

// wgmmaFragment is a thread's part of a lowered f32 accumulator, ready to
// be read: newWgmmaFragment has waited for every wgmma group and computed
// the thread's fragment origin. nvgpu.warpgroup.mma.store and
// tmac.warpgroup.mma.store (convert_store.go) share it.
type wgmmaFragment struct {
	rw         *NVGPURewriter
	d          *ir.VectorType // the accumulator's fragmented vector type (MxNxf32)
	c          ir.Value       // the lowered accumulator struct
	row0, col0 ir.Value       // the thread's (row, col) origin in a 64-row slice
	// A column window [colFirst, colFirst+colCount) of the accumulator
	// (tmac.warpgroup.mma.store's columns; colCount 0: every column):
	// pairs visits only its registers, and columns count from colFirst.
	colFirst, colCount int64
}

// inWindow reports whether accumulator column offset dc (of
// wgmmaAccumulatorCoord) is in the fragment's column window.
func (f *wgmmaFragment) inWindow(dc int64) bool {
	c := dc &^ 7 // the column group
	return f.colCount == 0 || (c >= f.colFirst && c < f.colFirst+f.colCount)
}

// newWgmmaFragment waits for all wgmma groups (wait_group 0: reading
// accumulators of an mma in flight is undefined), then computes the
// thread's fragment origin (wgmmaAccumulatorCoord's per-thread part) from
// its index t in its warpgroup.
func newWgmmaFragment(rw *NVGPURewriter, d *ir.VectorType, c ir.Value) *wgmmaFragment {
	rw.Create(nvvm.WgmmaWaitGroupSyncAligned, nil, nil, ir.NamedAttr{Name: "group", Value: ir.I64Attr(0)})
	return fragmentAt(rw, d, c)
}

// fragmentAt computes the thread's fragment origin without waiting for
// wgmma groups: for an accumulator that is written, not read
// (tmac.warpgroup.acc.load, whose c is nil).
func fragmentAt(rw *NVGPURewriter, d *ir.VectorType, c ir.Value) *wgmmaFragment {
	row0, quadLane := fragmentOrigin(rw)
	col0 := rw.binary(arith.Muli, quadLane, rw.IndexConst(2))
	return &wgmmaFragment{rw: rw, d: d, c: c, row0: row0, col0: col0}
}

// wgmmaPair is the register pair (Reg, Reg+1), Reg even, of one 64-row
// slice of a fragment: it holds the accumulator elements (row, col) and
// (row, col+1), col even (wgmmaAccumulatorCoord). Its methods emit ops at
// the rewriter's insertion point.
type wgmmaPair struct {
	f     *wgmmaFragment
	slice ir.Value // the slice struct
	Slice int64    // slice index (rows 64*Slice ..)
	Reg   int64    // first register of the pair in the slice
}

// Value extracts register Reg+k (k = 0 or 1).
func (p wgmmaPair) Value(k int64) ir.Value {
	return p.f.rw.Create(llvm.Extractvalue, []ir.Value{p.slice}, []ir.Type{p.f.d.Elem}, ir.NamedAttr{Name: "position", Value: ir.DenseI64Array(p.Reg + k)}).Result(0)
}

// Row returns the pair's row index in the accumulator.
func (p wgmmaPair) Row() ir.Value {
	_, _, dr, _ := wgmmaAccumulatorCoord(0, p.Reg)
	return p.f.offset(p.f.row0, 64*p.Slice+dr)
}

// Col returns the column index of element k of the pair (in the
// fragment's column window).
func (p wgmmaPair) Col(k int64) ir.Value {
	_, _, _, dc := wgmmaAccumulatorCoord(0, p.Reg+k)
	return p.f.offset(p.f.col0, dc-p.f.colFirst)
}

func (f *wgmmaFragment) offset(base ir.Value, by int64) ir.Value {
	if by == 0 {
		return base
	}
	return f.rw.binary(arith.Addi, base, f.rw.IndexConst(by))
}

// pairs extracts each 64-row slice of the accumulator and calls visit for
// its register pairs in the column window, in register order. It may be called more than once
// (at different insertion points) for one fragment.
func (f *wgmmaFragment) pairs(visit func(p wgmmaPair)) {
	m, n := f.d.Shape()[0], f.d.Shape()[1]
	sliceT := wgmmaSliceType(f.d)
	for s := int64(0); s < m/64; s++ {
		slice := f.rw.Create(llvm.Extractvalue, []ir.Value{f.c}, []ir.Type{sliceT}, ir.NamedAttr{Name: "position", Value: ir.DenseI64Array(s)}).Result(0)
		for r := int64(0); r < n/2; r += 2 {
			if _, _, _, dc := wgmmaAccumulatorCoord(0, r); f.inWindow(dc) {
				visit(wgmmaPair{f: f, slice: slice, Slice: s, Reg: r})
			}
		}
	}
}

// linearThreadID returns the thread's linear index in its block (x fastest),
// using only thread_id x when the kernel's block is known to be 1-D.
func linearThreadID(rw *NVGPURewriter) ir.Value {
	tid := func(name, dim string) ir.Value {
		return rw.Create(name, nil, []ir.Type{ir.Index}, ir.NamedAttr{Name: "dimension", Value: gpu.DimAttr(dim)}).Result(0)
	}
	x := tid(gpu.ThreadId, "x")
	for _, name := range []string{"known_block_size", "gpu.known_block_size"} {
		if a, ok := rw.Kernel.Attr(name).(*ir.DenseArrayAttr); ok && len(a.Ints) == 3 && a.Ints[1] == 1 && a.Ints[2] == 1 {
			return x
		}
	}
	y, z := tid(gpu.ThreadId, "y"), tid(gpu.ThreadId, "z")
	bx, by := tid(gpu.BlockDim, "x"), tid(gpu.BlockDim, "y")
	yz := rw.binary(arith.Addi, y, rw.binary(arith.Muli, z, by))
	return rw.binary(arith.Addi, x, rw.binary(arith.Muli, yz, bx))
}
