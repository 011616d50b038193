package plan

import (
	"github.com/tmac-dev/tmac/dialects/nvgpu"
	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/runtime/buffer"
)

// CheckTensorMaps checks, at compile time, the tensor maps the host code
// of mod creates (nvgpu.tma.create.descriptor outside gpu.modules) over a
// memref whose shape and layout are static: the same rules TiledDesc
// applies when tmac run creates them (box rank and sizes, element type,
// device memory, contiguous innermost dimension, global strides a multiple
// of 16 bytes and below 2^40, dimensions up to 2^32, the swizzle span).
// The memref is followed through memref.cast to a function argument (in
// device memory, as tmac run passes it) or an allocation. A box size or
// a shape known only when the program runs is left to that check. The
// error is at the op.
func CheckTensorMaps(mod *ir.Operation) error {
	var err error
	ir.Walk(mod, func(op *ir.Operation) ir.WalkResult {
		switch op.Name() {
		case "gpu.module":
			return ir.Skip
		case "nvgpu.tma.create.descriptor":
			if e := checkTensorMap(op); e != nil {
				err = e
				return ir.Interrupt
			}
		}
		return ir.Advance
	})
	return err
}

func checkTensorMap(op *ir.Operation) error {
	d, ok := nvgpu.AsTensorMapDescriptor(op.Result(0).Type())
	if !ok || op.NumOperands() < 1 {
		return nil
	}
	box := make([]int64, 0, op.NumOperands()-1)
	for _, v := range op.Operands()[1:] {
		c, ok := ir.AttrInt(ir.ConstantValue(v))
		if !ok {
			return nil
		}
		box = append(box, c)
	}
	// The memref behind the casts, and where it lives.
	v := op.Operand(0)
	onHost := false
	for {
		r, ok := v.(*ir.OpResult)
		if !ok {
			break // a function argument: tmac run puts it in device memory
		}
		def := r.DefiningOp()
		if def.Name() == "memref.cast" {
			v = def.Operand(0)
			continue
		}
		if def.Name() != "memref.alloc" && def.Name() != "gpu.alloc" {
			return nil
		}
		onHost = def.Name() == "memref.alloc"
		break
	}
	mt, ok := v.Type().(*ir.MemRefType)
	if !ok || !ir.HasStaticShape(mt.Shape()) {
		return nil
	}
	if _, ok := ir.ShapeBytes(mt.Shape(), ir.BitWidth(mt.Elem)); !ok {
		return nil // reported as too large by outline-kernels
	}
	strides, offset, ok := mt.StridesAndOffset()
	if !ok || offset == ir.Dynamic {
		return nil
	}
	for _, s := range strides {
		if s == ir.Dynamic {
			return nil
		}
	}
	es, err := buffer.ElemSize(mt.Elem)
	if err != nil {
		return nil
	}
	// Device allocations are 256-byte aligned: any such base will do.
	m := &Mem{Dev: 256, Elem: mt.Elem, ElemSize: es, Shape: mt.Shape(), Strides: strides, Offset: offset}
	if onHost {
		m.Host = []byte{}
	}
	if _, err := TiledDesc(d, m, box); err != nil {
		return op.EmitError("%v", err)
	}
	return nil
}
