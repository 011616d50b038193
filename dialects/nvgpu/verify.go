package nvgpu

import (
	"fmt"
	"strings"

	"github.com/tmac-dev/tmac/ir"
)

// Limits used by the verifiers.
const (
	MaxTMATensorRank     = 5
	MaxTMADimension      = 256
	TMALastDimByteModulo = 16
	WarpSize             = 32
	WgmmaMGranule        = 64
)

// IsSharedMemory reports whether a memref memory space is the GPU shared
// ("workgroup") space: the integer 3 or #gpu.address_space<workgroup>.
func IsSharedMemory(space ir.Attribute) bool {
	switch a := space.(type) {
	case *ir.IntegerAttr:
		return a.Int() == 3
	case *ir.DialectAttr:
		return a.Dialect == "gpu" && a.String() == "#gpu.address_space<workgroup>"
	}
	return false
}

// IsGlobalMemory reports whether a memref memory space is global memory:
// none, the integer 1 or #gpu.address_space<global>.
func IsGlobalMemory(space ir.Attribute) bool {
	switch a := space.(type) {
	case nil:
		return true
	case *ir.IntegerAttr:
		return a.Int() == 1
	case *ir.DialectAttr:
		return a.String() == "#gpu.address_space<global>"
	}
	return false
}

func bitWidth(t ir.Type) int64 { return int64(ir.BitWidth(t)) }

// VerifyTensorMapDescriptor checks the descriptor rules shared by the TMA
// ops and returns upstream's message for the first violation, or "".
func VerifyTensorMapDescriptor(d *TensorMapDescriptor) string {
	if d.Interleave != InterleaveNone {
		return "Interleave options are not supported yet."
	}
	t := d.Tensor
	if !IsSharedMemory(t.MemorySpace) {
		return "the tensor map descriptor has incorrect address space, it must be shared memory address space."
	}
	if !ir.HasStaticShape(t.Shape()) {
		return "the tensor map descriptor must be static shaped"
	}
	for _, dim := range t.Shape() {
		if dim <= 0 || dim > MaxTMADimension {
			return fmt.Sprintf("the tensor map descriptor must have dimensions between 1 and %d but it is %d", MaxTMADimension, dim)
		}
	}
	if t.Rank() > 1 && d.Swizzle != SwizzleNone {
		last := t.Shape()[t.Rank()-1]
		bytes := bitWidth(t.Elem) * last / 8
		if bytes != d.Swizzle.Bytes() {
			return fmt.Sprintf("the tensormap descriptor must have last dimension of %d bytes but it is %d bytes", d.Swizzle.Bytes(), bytes)
		}
	}
	return ""
}

// verifyDescriptorAndMemref adds the memref checks of tma.async.load/store.
func verifyDescriptorAndMemref(d *TensorMapDescriptor, m *ir.MemRefType) string {
	if msg := VerifyTensorMapDescriptor(d); msg != "" {
		return msg
	}
	t := d.Tensor
	if t.Elem != m.Elem {
		return "the element type of tensor map descriptor and memref must be same"
	}
	if !IsSharedMemory(m.MemorySpace) {
		return "the destination memref has incorrect address space, it must be shared memory address space."
	}
	if !ir.HasStaticShape(m.Shape()) {
		return "the destination memref must be static shaped"
	}
	if m.Rank() != t.Rank() {
		return "the shape of tensor map descriptor and memref must have same rank"
	}
	for i, dim := range t.Shape() {
		if m.Shape()[i] != dim {
			return fmt.Sprintf("memref and tensor map shapes mismatch '%s' != '%s'", t, m)
		}
	}
	if t.Rank() > 0 {
		last := t.Shape()[t.Rank()-1]
		if bitWidth(t.Elem)*last/8%TMALastDimByteModulo != 0 {
			return "the bytes in the last dimension of the tensor map must be a multiple of 16"
		}
	}
	return ""
}

func verifyCreateDescriptor(op *ir.Operation) error {
	if op.NumOperands()-1 > MaxTMATensorRank {
		return op.EmitError("Maximum %d coordinates are supported.", MaxTMATensorRank)
	}
	d, _ := AsTensorMapDescriptor(op.Result(0).Type())
	if msg := VerifyTensorMapDescriptor(d); msg != "" {
		return op.EmitError("%s", msg)
	}
	return nil
}

func verifyTMACopy(op *ir.Operation, memName string) error {
	d, _ := AsTensorMapDescriptor(op.OperandGroup("tensorMapDescriptor")[0].Type())
	m := op.OperandGroup(memName)[0].Type().(*ir.MemRefType)
	if msg := verifyDescriptorAndMemref(d, m); msg != "" {
		return op.EmitError("%s", msg)
	}
	n := len(op.OperandGroup("coordinates"))
	if n > MaxTMATensorRank {
		return op.EmitError("Maximum %d coordinates are supported.", MaxTMATensorRank)
	}
	if n != d.Tensor.Rank() {
		return op.EmitError("number of coordinates do not match with the rank of tensor descriptor map.")
	}
	return nil
}

func verifyAsyncLoad(op *ir.Operation) error  { return verifyTMACopy(op, "dst") }
func verifyAsyncStore(op *ir.Operation) error { return verifyTMACopy(op, "src") }

func verifyGenerateDescriptor(op *ir.Operation) error {
	d, _ := AsTensorMapDescriptor(op.Operand(1).Type())
	if msg := VerifyTensorMapDescriptor(d); msg != "" {
		return op.EmitError("%s", msg)
	}
	// Upstream accepts only the 128-byte swizzle; tmac also builds the
	// descriptors of 64- and 32-byte swizzled tiles (the layout types
	// wgmma defines for them), which tiles of 32 or 16 bf16 columns need.
	if d.Swizzle != Swizzle128B && d.Swizzle != Swizzle64B && d.Swizzle != Swizzle32B {
		return op.EmitError("supports only %s, %s or %s (tmac extends upstream's %s)", Swizzle128B, Swizzle64B, Swizzle32B, Swizzle128B)
	}
	if d.Interleave != InterleaveNone {
		return op.EmitError("supports only %s is supported for the time being", InterleaveNone)
	}
	return nil
}

// --- wgmma ----------------------------------------------------------------

func isF8(t ir.Type) bool {
	f, ok := t.(*ir.FloatType)
	return ok && (f.Kind == ir.F8E4M3FN || f.Kind == ir.F8E5M2)
}

func isFloatKind(t ir.Type, k ir.FloatKind) bool {
	f, ok := t.(*ir.FloatType)
	return ok && f.Kind == k
}

// WgmmaAllowedN reports whether N is a valid wgmma N dimension for the
// element type of operand A (or of the accumulator, for init.accumulator).
func WgmmaAllowedN(elem ir.Type, n int64) bool {
	switch {
	case isFloatKind(elem, ir.F16), isFloatKind(elem, ir.BF16), isFloatKind(elem, ir.F32),
		isFloatKind(elem, ir.TF32), isF8(elem):
		return n >= 8 && n <= 256 && n%8 == 0
	case ir.IsIntegerOfWidth(elem, 8), ir.IsIntegerOfWidth(elem, 1):
		if n == 8 || n == 24 {
			return true
		}
		return n >= 16 && n <= 256 && n%16 == 0
	}
	return false
}

// wgmmaTypesSupported reports whether D += A * B is a supported wgmma
// element-type combination.
func wgmmaTypesSupported(d, a, b ir.Type) bool {
	f32 := isFloatKind(d, ir.F32)
	f16 := isFloatKind(d, ir.F16)
	switch {
	case isFloatKind(a, ir.F16) && isFloatKind(b, ir.F16):
		return f32 || f16
	case isFloatKind(a, ir.TF32) && isFloatKind(b, ir.TF32):
		return f32
	case ir.IsIntegerOfWidth(a, 16) && ir.IsIntegerOfWidth(b, 16):
		return ir.IsIntegerOfWidth(d, 32)
	case ir.IsIntegerOfWidth(a, 1) && ir.IsIntegerOfWidth(b, 1):
		return ir.IsIntegerOfWidth(d, 32)
	case isFloatKind(a, ir.BF16) && isFloatKind(b, ir.BF16):
		return f32 || f16
	case isF8(a) && isF8(b):
		return f32 || f16
	}
	return false
}

func verifyWarpgroupMma(op *ir.Operation) error {
	if op.HasAttr("transposeA") && !op.HasAttr("transposeB") {
		return op.EmitOpError("supports non-transpose A (Row Major) and transpose B (Column Major) for the time being ")
	}
	a, _ := AsWarpgroupDescriptor(op.Operand(0).Type())
	b, _ := AsWarpgroupDescriptor(op.Operand(1).Type())
	c, _ := AsWarpgroupAccumulator(op.Operand(2).Type())
	d, _ := AsWarpgroupAccumulator(op.Result(0).Type())
	if op.Operand(2).Type() != op.Result(0).Type() {
		return op.EmitOpError("type of matrix C and matrix D must be the same")
	}
	am, bm, cv := a.Tensor, b.Tensor, c.Fragmented
	if am.Rank() != 2 || bm.Rank() != 2 || len(cv.Shape()) != 2 || len(d.Fragmented.Shape()) != 2 {
		return op.EmitOpError("has matrices A, B, C and D, they must be 2 dimensional")
	}
	as, bs, cs := am.Shape(), bm.Shape(), cv.Shape()
	if as[1] != bs[0] {
		return op.EmitOpError("2nd dim matrix-A (%d)!= 1st dim matrix-B (%d )", as[1], bs[0])
	}
	if as[0] != cs[0] {
		return op.EmitOpError("1st dim matrix-A ( %d )!= 1st dim matrix-C ( %d )", as[0], cs[0])
	}
	if bs[1] != cs[1] {
		return op.EmitOpError("2nd dim matrix-B ( %d ) != 2nd dim matrix-C ( %d )", bs[1], cs[1])
	}
	de, ae, be := cv.Elem, am.Elem, bm.Elem
	if !wgmmaTypesSupported(de, ae, be) {
		return op.EmitOpError("'%s' += '%s' * '%s', it is not supported.", de, ae, be)
	}
	if !WgmmaAllowedN(ae, bs[1]) {
		return op.EmitOpError("has input type '%s' n is set to %d, it is not supported", bm, bs[1])
	}
	if !isFloatKind(de, ir.F32) && !isFloatKind(ae, ir.F16) && !isFloatKind(ae, ir.BF16) {
		return op.EmitOpError("hit a limitation: '%s' += '%s' * '%s', it is not supported yet", de, ae, be)
	}
	return nil
}

func verifyWarpgroupMmaStore(op *ir.Operation) error {
	acc, _ := AsWarpgroupAccumulator(op.Operand(0).Type())
	v := acc.Fragmented
	m := op.Operand(1).Type().(*ir.MemRefType)
	if !isFloatKind(v.Elem, ir.F32) {
		return op.EmitOpError("hit a limitation: only f32 results for the time being")
	}
	vs, ms := v.Shape(), m.Shape()
	dim := func(s []int64, i int) int64 {
		if i < len(s) {
			return s[i]
		}
		return 0
	}
	if dim(vs, 0) != dim(ms, 0) || dim(vs, 1) != dim(ms, 1) {
		return op.EmitOpError("results ['%s'][%d] values. However, destination memref[%d][%d]  does not have same size as results",
			v, dim(vs, 0), dim(ms, 0), dim(ms, 1))
	}
	return nil
}

func verifyInitAccumulator(op *ir.Operation) error {
	acc, _ := AsWarpgroupAccumulator(op.Result(0).Type())
	v := acc.Fragmented
	s := v.Shape()
	var m, n int64
	if len(s) > 0 {
		m = s[0]
	}
	if len(s) > 1 {
		n = s[1]
	}
	if m%WgmmaMGranule != 0 || !WgmmaAllowedN(v.Elem, n) {
		return op.EmitOpError("has type '%s'. It does not fit into warp-group level (wgmma) matrix multiplication instruction (or not supported yet)", v)
	}
	return nil
}

// --- warp-level mma ---------------------------------------------------------

// checkVectorsNonZeroRank reports ODS's "vector of any type values" failure
// for 0-d vectors, in operand-then-result order.
func checkVectorsNonZeroRank(op *ir.Operation, operands int) error {
	for i := 0; i < operands; i++ {
		if v, ok := op.Operand(i).Type().(*ir.VectorType); ok && len(v.Shape()) == 0 {
			return op.EmitOpError("operand #%d must be vector of any type values, but got '%s'", i, v)
		}
	}
	for i := 0; i < op.NumResults(); i++ {
		if v, ok := op.Result(i).Type().(*ir.VectorType); ok && len(v.Shape()) == 0 {
			return op.EmitOpError("result #%d must be vector of any type values, but got '%s'", i, v)
		}
	}
	return nil
}

func verifyMmaSync(op *ir.Operation, sparse bool) error {
	if err := checkVectorsNonZeroRank(op, 3); err != nil {
		return err
	}
	av := op.Operand(0).Type().(*ir.VectorType)
	bv := op.Operand(1).Type().(*ir.VectorType)
	cv := op.Operand(2).Type().(*ir.VectorType)
	if av.Elem != bv.Elem {
		return op.EmitOpError("failed to verify that matrixA and matrixB have same element type")
	}
	if sparse {
		if sel, ok := op.Attr("sparsitySelector").(*ir.IntegerAttr); ok && (sel.Int() < 0 || sel.Int() > 1) {
			return op.EmitOpError("sparsity selector should be 0 or 1")
		}
	}
	shape := op.Attr("mmaShape").(*ir.ArrayAttr)
	if len(shape.Elems) != 3 {
		return op.EmitOpError("expected mmaShape to have 3 elements")
	}
	var mnk [3]int64
	for i, e := range shape.Elems {
		mnk[i] = e.(*ir.IntegerAttr).Int()
	}
	m, n, k := mnk[0], mnk[1], mnk[2]
	elem := av.Elem
	var shapeK, elemsA, elemsB int64
	switch {
	case isFloatKind(elem, ir.F64):
		if sparse {
			return op.EmitError("f64 is not supported for sparse mode")
		}
		shapeK, elemsA, elemsB = 4, 1, 1
	case isFloatKind(elem, ir.F32), isFloatKind(elem, ir.BF16), isFloatKind(elem, ir.F16),
		isIntOfWidthAnySign(elem, 8), isIntOfWidthAnySign(elem, 4):
		bw := bitWidth(elem)
		shapeK, elemsA, elemsB = 128/bw, 32/bw, 32/bw
	default:
		return op.EmitError("expected input data type (i4,i8,f16,bf16,tf32,f64) supported by %s", op.Name())
	}
	for i, name := range []string{"matrixA", "matrixB", "matrixC"} {
		if len([]*ir.VectorType{av, bv, cv}[i].Shape()) != 2 {
			return op.EmitError("%s must be 2 dimensional vector", name)
		}
	}
	as, bs, cs := av.Shape(), bv.Shape(), cv.Shape()
	sparseFactor := int64(1)
	if sparse {
		sparseFactor = 2
	}
	if as[0]*as[1]*WarpSize != m*k/sparseFactor {
		return op.EmitOpError("expected %d warp-wide matrix A elements", m*k)
	}
	if bs[0]*bs[1]*WarpSize != k*n {
		return op.EmitOpError("expected %d warp-wide matrix B elements", k*n)
	}
	if cs[0]*cs[1]*WarpSize != m*n {
		return op.EmitOpError("expected %d warp-wide matrix C elements", m*n)
	}
	if op.HasAttr("tf32Enabled") && !isFloatKind(elem, ir.F32) {
		return op.EmitOpError("expected tf32 tensor cores only for F32 operands")
	}
	mTile, nTile, kTile := m/8, n/8, k/shapeK
	if as[0] != mTile*kTile/sparseFactor || as[1] != elemsA {
		return op.EmitOpError("expected matrix A to be shaped (%d x %d)", mTile*kTile, elemsA)
	}
	if bs[0] != kTile*nTile || bs[1] != elemsB {
		return op.EmitOpError("expected matrix B to be shaped (%d x %d)", kTile*nTile, elemsB)
	}
	if cs[0] != mTile*nTile || cs[1] != 2 {
		return op.EmitOpError("expected matrix C to be shaped (%d x %d)", mTile*nTile, 2)
	}
	return nil
}

func isIntOfWidthAnySign(t ir.Type, w int) bool {
	it, ok := t.(*ir.IntegerType)
	return ok && it.Width == w
}

func verifyLdMatrix(op *ir.Operation) error {
	if err := checkVectorsNonZeroRank(op, 0); err != nil {
		return err
	}
	src := op.Operand(0).Type().(*ir.MemRefType)
	res := op.Result(0).Type().(*ir.VectorType)
	if src.Elem != res.Elem {
		return op.EmitOpError("failed to verify that srcMemref and res have same element type")
	}
	if !IsSharedMemory(src.MemorySpace) {
		return op.EmitError("expected nvgpu.ldmatrix srcMemref must have a memory space attribute of IntegerAttr(3) or gpu::AddressSpaceAttr(Workgroup)")
	}
	w := bitWidth(res.Elem)
	if w > 32 {
		return op.EmitError("nvgpu.ldmatrix works for 32b or lower")
	}
	if t, ok := op.Attr("transpose").(*ir.IntegerAttr); ok && t.Int() != 0 && w != 16 {
		return op.EmitError("nvgpu.ldmatrix transpose works only at 16b granularity")
	}
	if len(res.Shape()) != 2 {
		return op.EmitError("results must be 2 dimensional vector")
	}
	if w == 0 || res.Shape()[1] != 32/w {
		return op.EmitError("expected vector register shape[1] = %d", 32/max(w, 1))
	}
	if nt, ok := op.Attr("numTiles").(*ir.IntegerAttr); ok && res.Shape()[0] != nt.Int() {
		return op.EmitError("expected vector register shape[0] and numTiles to match")
	}
	return nil
}

// --- cp.async ---------------------------------------------------------------

func innermostUnitStride(m *ir.MemRefType) bool {
	if m.Rank() == 0 {
		return true
	}
	strides, _, ok := m.StridesAndOffset()
	return ok && strides[len(strides)-1] == 1
}

func verifyDeviceAsyncCopy(op *ir.Operation) error {
	src := op.OperandGroup("src")[0].Type().(*ir.MemRefType)
	dst := op.OperandGroup("dst")[0].Type().(*ir.MemRefType)
	if !innermostUnitStride(src) {
		return op.EmitError("source memref most minor dim must have unit stride")
	}
	if !innermostUnitStride(dst) {
		return op.EmitError("destination memref most minor dim must have unit stride")
	}
	if !IsSharedMemory(dst.MemorySpace) {
		return op.EmitError("destination memref must have a memory space attribute of IntegerAttr(3) or gpu::AddressSpaceAttr(Workgroup)")
	}
	if src.Elem != dst.Elem {
		return op.EmitError("source and destination must have the same element type")
	}
	if n := len(op.OperandGroup("srcIndices")); n != src.Rank() {
		return op.EmitOpError("expected %d source indices, got %d", src.Rank(), n)
	}
	if n := len(op.OperandGroup("dstIndices")); n != dst.Rank() {
		return op.EmitOpError("expected %d destination indices, got %d", dst.Rank(), n)
	}
	w := bitWidth(dst.Elem)
	elems, _ := ir.AttrInt(op.Attr("dstElements"))
	bytes := w * elems / 8
	if w == 0 || (bytes != 4 && bytes != 8 && bytes != 16) {
		var sb strings.Builder
		fmt.Fprintf(&sb, "Requested copy elements is %d with width %d. But copy elements could be one of ", elems, w)
		if w > 0 {
			if q := 32 / w; q > 0 {
				fmt.Fprintf(&sb, "%d, ", q)
			}
			if q := 64 / w; q > 0 {
				fmt.Fprintf(&sb, "%d, ", q)
			}
			if q := 128 / w; q > 0 {
				fmt.Fprintf(&sb, "%d.", q)
			}
		}
		return op.EmitError("%s", sb.String())
	}
	if op.HasAttr("bypassL1") && bytes != 16 {
		return op.EmitOpError("bypassL1 does not satify alignment for '%s' with destination element %d. Unset bypassL1, or set destination element to %d",
			dst, elems, 128/w)
	}
	return nil
}

// --- rcp --------------------------------------------------------------------

func verifyRcp(op *ir.Operation) error {
	in := op.Operand(0).Type()
	if v, ok := in.(*ir.VectorType); !ok || len(v.Shape()) == 0 || !isFloatKind(v.Elem, ir.F32) {
		return op.EmitOpError("operand #0 must be vector of 32-bit float values, but got '%s'", in)
	}
	a := op.Attr("rounding")
	mode, ok := RcpRounding(a)
	if !ok {
		a, mode = RcpRoundingAttr(RcpApprox), RcpApprox
	}
	if mode != RcpApprox || !op.HasAttr("ftz") {
		return op.EmitOpError("has a limitation. %s or non-ftz is not supported yet.", a)
	}
	return nil
}
