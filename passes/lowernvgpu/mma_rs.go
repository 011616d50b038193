package lowernvgpu

import (
	"github.com/tmac-dev/tmac/dialects/arith"
	"github.com/tmac-dev/tmac/dialects/gpu"
	"github.com/tmac-dev/tmac/dialects/llvm"
	"github.com/tmac-dev/tmac/dialects/nvgpu"
	"github.com/tmac-dev/tmac/dialects/nvvm"
	"github.com/tmac-dev/tmac/dialects/tmac"
	"github.com/tmac-dev/tmac/dialects/vector"
	"github.com/tmac-dev/tmac/ir"
)

// lower-nvgpu, wgmma with A in registers (dialects/tmac/SPEC.md):
//
//   - an A operand in registers (!tmac.warpgroup.operand<MxKxT>) becomes a
//     struct of M/64 slice structs of K/4 vector<2xT> registers: register i
//     of a slice holds the elements (row, col), (row, col+1) of the
//     accumulator's register pair (2i, 2i+1) (wgmmaAccumulatorCoord), so
//     registers 4j..4j+3 are the A fragment of k16 step j, the PTX ISA's
//     m64nNk16 A layout (a0..a7: rows 16w + l/4 (+8), columns 16j +
//     2(l%4) (+1) (+8), the accumulator's order);
//   - tmac.warpgroup.acc.to_operand waits for every wgmma group, then
//     rounds each pair with one arith.truncf vector<2xf32> (llc selects
//     cvt.rn.bf16x2.f32 / cvt.rn.f16x2.f32);
//   - tmac.warpgroup.mma becomes what nvgpu.warpgroup.mma becomes (fence,
//     commit, wait with the op's waitGroup), with one tmac.wgmma.mma_async
//     per 64-row slice and k16 step, fed the step's 4 registers and B's
//     descriptor advanced to the step's K offset.
//
// Operand values that are block arguments or results of other ops are
// retyped in place before any op is rewritten, as accumulators are.

func init() {
	nvgpuLowerings[tmac.WarpgroupAccToOperand] = lowerToOperand
	nvgpuLowerings[tmac.WarpgroupMma] = lowerRegisterMma
	nvgpuKernelChecks = append(nvgpuKernelChecks, prepareOperandValues)
}

// operandSliceType is the struct of one 64-row slice of an A operand.
func operandSliceType(o *tmac.Operand) ir.Type {
	regs := make([]ir.Type, o.K/4)
	for i := range regs {
		regs[i] = ir.VectorTypeOf([]int64{2}, o.Elem)
	}
	return llvm.Struct(regs, false)
}

// operandStruct is the lowered type of an A operand in registers.
func operandStruct(o *tmac.Operand) ir.Type {
	slices := make([]ir.Type, o.M/64)
	for i := range slices {
		slices[i] = operandSliceType(o)
	}
	return llvm.Struct(slices, false)
}

// prepareOperandValues retypes the block arguments and op results of
// operand type in place (the kernel's own arguments cannot have it).
func prepareOperandValues(rw *NVGPURewriter) error {
	for _, a := range (gpu.FuncOp{Op: rw.Kernel}).Body().Entry().Args() {
		if _, ok := tmac.AsOperand(a.Type()); ok {
			return rw.Kernel.EmitOpError("has an argument of type '%s': warpgroup operands cannot be kernel arguments", a.Type())
		}
	}
	st := wgmmaStateOf(rw)
	retype := func(v ir.Value) {
		if o, ok := tmac.AsOperand(v.Type()); ok {
			st.orig[v] = v.Type()
			v.SetType(operandStruct(o))
		}
	}
	ir.Walk(rw.Kernel, func(op *ir.Operation) ir.WalkResult {
		for _, r := range op.Regions() {
			for _, b := range r.Blocks() {
				if op == rw.Kernel && b == r.Entry() {
					continue
				}
				for _, a := range b.Args() {
					retype(a)
				}
			}
		}
		for _, r := range op.Results() {
			retype(r)
		}
		return ir.Advance
	})
	return nil
}

// position is the attribute of an llvm.extractvalue/insertvalue index.
func position(i int64) ir.NamedAttr {
	return ir.NamedAttr{Name: "position", Value: ir.DenseI64Array(i)}
}

func (rw *NVGPURewriter) extractAt(agg ir.Value, i int64, t ir.Type) ir.Value {
	return rw.Create(llvm.Extractvalue, []ir.Value{agg}, []ir.Type{t}, position(i)).Result(0)
}

func (rw *NVGPURewriter) insertAt(agg, v ir.Value, i int64) ir.Value {
	return rw.Create(llvm.Insertvalue, []ir.Value{agg, v}, []ir.Type{agg.Type()}, position(i)).Result(0)
}

func lowerToOperand(rw *NVGPURewriter, op *ir.Operation) error {
	st := wgmmaStateOf(rw)
	c := tmac.WarpgroupAccToOperandOp{Op: op}
	acc, okD := nvgpu.AsWarpgroupAccumulator(st.nvgpuType(c.Acc()))
	o, okA := tmac.AsOperand(st.nvgpuType(c.Operand()))
	if !okD || !okA {
		return rw.Errorf(op, "has unexpected operand types")
	}
	if err := checkWarpgroupBlockSize(rw.Kernel, op); err != nil {
		return err
	}
	d := acc.Fragmented
	if msg := checkAccumulatorShape(d); msg != "" {
		return rw.Errorf(op, "cannot convert an accumulator that %s", msg)
	}
	if msg := tmac.CheckOperandShape(o.M, o.K); msg != "" {
		return rw.Errorf(op, "cannot make an A operand in registers: %s", msg)
	}
	opT := operandStruct(o)
	sliceT := operandSliceType(o)
	v2f32 := ir.VectorTypeOf([]int64{2}, d.Elem)
	v2 := ir.VectorTypeOf([]int64{2}, o.Elem)
	v2i1 := ir.VectorTypeOf([]int64{2}, ir.I1)

	// Reading an accumulator of an mma in flight is undefined.
	rw.Create(nvvm.WgmmaWaitGroupSyncAligned, nil, nil, ir.NamedAttr{Name: "group", Value: ir.I64Attr(0)})
	// The pair (x0, x1) is select([true, false], splat x0, splat x1), as
	// in convert_store.go.
	first := rw.Create(arith.Constant, nil, []ir.Type{v2i1}, ir.NamedAttr{Name: "value", Value: ir.DenseInts([]int64{1, 0}, v2i1)}).Result(0)
	src := rw.Lookup(c.Acc())
	var res ir.Value = rw.Create(llvm.MlirUndef, nil, []ir.Type{opT}).Result(0)
	for s := int64(0); s < o.M/64; s++ {
		slice := rw.extractAt(src, s, wgmmaSliceType(d))
		var regs ir.Value = rw.Create(llvm.MlirUndef, nil, []ir.Type{sliceT}).Result(0)
		for i := int64(0); i < o.K/4; i++ {
			x0 := rw.Create(vector.Broadcast, []ir.Value{rw.extractAt(slice, 2*i, d.Elem)}, []ir.Type{v2f32}).Result(0)
			x1 := rw.Create(vector.Broadcast, []ir.Value{rw.extractAt(slice, 2*i+1, d.Elem)}, []ir.Type{v2f32}).Result(0)
			p := rw.Create(arith.Select, []ir.Value{first, x0, x1}, []ir.Type{v2f32}).Result(0)
			p = rw.Create(arith.Truncf, []ir.Value{p}, []ir.Type{v2}).Result(0)
			regs = rw.insertAt(regs, p, i)
		}
		res = rw.insertAt(res, regs, s)
	}
	st.orig[res] = st.nvgpuType(c.Operand())
	rw.Replace(op, res)
	return nil
}

func lowerRegisterMma(rw *NVGPURewriter, op *ir.Operation) error {
	st := wgmmaStateOf(rw)
	mma := tmac.WarpgroupMmaOp{Op: op}
	a, okA := tmac.AsOperand(st.nvgpuType(mma.A()))
	db, okB := nvgpu.AsWarpgroupDescriptor(st.nvgpuType(mma.DescriptorB()))
	acc, okD := nvgpu.AsWarpgroupAccumulator(st.nvgpuType(mma.MatrixD()))
	if !okA || !okB || !okD {
		return rw.Errorf(op, "has unexpected operand types")
	}
	if err := checkWarpgroupBlockSize(rw.Kernel, op); err != nil {
		return err
	}
	b, d := db.Tensor, acc.Fragmented
	if msg := checkAccumulatorShape(d); msg != "" {
		return rw.Errorf(op, "has an accumulator that %s", msg)
	}
	transB := mma.TransposeB() != nil
	swB, err := descriptorSwizzle(rw, op, mma.DescriptorB())
	if err != nil {
		return err
	}
	ob := wgmmaOperandOf(b, swB, false, transB)
	if msg := ob.check(); msg != "" {
		return rw.Errorf(op, "cannot read operand B ('%s', %s) as a wgmma operand: %s", b, ob.layoutName(), msg)
	}
	n := b.Shape()[1]
	layoutB := "col"
	if transB {
		layoutB = "row"
	}
	t := wgmmaTypeName(a.Elem)
	attrs := []ir.NamedAttr{
		{Name: "layoutB", Value: nvvm.MMALayout.Attr(layoutB)},
		{Name: "shape", Value: nvvm.Shape(64, n, 16)},
		{Name: "typeA", Value: nvvm.WGMMAType.Attr(t)},
		{Name: "typeB", Value: nvvm.WGMMAType.Attr(t)},
		{Name: "typeD", Value: nvvm.WGMMAType.Attr("f32")},
	}
	waitGroup := int64(1)
	if g, ok := ir.AttrInt(mma.WaitGroup()); ok {
		waitGroup = g
	}
	descB, c, regs := rw.Lookup(mma.DescriptorB()), rw.Lookup(mma.MatrixC()), rw.Lookup(mma.A())
	pair := ir.VectorTypeOf([]int64{2}, a.Elem)
	stepT := llvm.Struct([]ir.Type{pair, pair, pair, pair}, false)
	sliceT, accT, regsT := wgmmaSliceType(d), wgmmaAccumulatorStruct(d), operandSliceType(a)

	rw.Create(nvvm.WgmmaFenceAligned, nil, nil)
	var res ir.Value = rw.Create(llvm.MlirUndef, nil, []ir.Type{accT}).Result(0)
	bSteps := make([]ir.Value, a.K/16)
	for i := int64(0); i < a.M/64; i++ {
		s := rw.extractAt(c, i, sliceT)
		as := rw.extractAt(regs, i, regsT)
		for kk := int64(0); kk < a.K/16; kk++ {
			if bSteps[kk] == nil {
				bSteps[kk] = descB
				if off := ob.subTileOffset(0, kk*16); off != 0 {
					bSteps[kk] = rw.binary(arith.Addi, descB, rw.IntConst(off>>4, ir.I64))
				}
			}
			var step ir.Value = rw.Create(llvm.MlirUndef, nil, []ir.Type{stepT}).Result(0)
			for q := int64(0); q < 4; q++ {
				step = rw.insertAt(step, rw.extractAt(as, 4*kk+q, pair), q)
			}
			s = rw.Create(tmac.WgmmaMmaAsync, []ir.Value{step, bSteps[kk], s}, []ir.Type{sliceT}, attrs...).Result(0)
		}
		res = rw.insertAt(res, s, i)
	}
	rw.Create(nvvm.WgmmaCommitGroupSyncAligned, nil, nil)
	rw.Create(nvvm.WgmmaWaitGroupSyncAligned, nil, nil, ir.NamedAttr{Name: "group", Value: ir.I64Attr(waitGroup)})
	st.orig[res] = st.nvgpuType(mma.MatrixD())
	rw.Replace(op, res)
	return nil
}
