package plan

import (
	"github.com/tmac-dev/tmac/dialects/gpu"
	"github.com/tmac-dev/tmac/dialects/memref"
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
		case gpu.Module:
			return ir.Skip
		case nvgpu.TmaCreateDescriptor:
			if e := checkTensorMap(nvgpu.TmaCreateDescriptorOp{Op: op}); e != nil {
				err = e
				return ir.Interrupt
			}
		}
		return ir.Advance
	})
	return err
}

func checkTensorMap(c nvgpu.TmaCreateDescriptorOp) error {
	d, ok := nvgpu.AsTensorMapDescriptor(c.TensorMap().Type())
	if !ok || c.Op.NumOperands() < 1 {
		return nil
	}
	dims := c.BoxDimensions()
	box := make([]int64, 0, len(dims))
	for _, v := range dims {
		n, ok := ir.AttrInt(ir.ConstantValue(v))
		if !ok {
			return nil
		}
		box = append(box, n)
	}
	// The memref behind the casts, and where it lives.
	v := c.Tensor()
	onHost := false
	for {
		r, ok := v.(*ir.OpResult)
		if !ok {
			break // a function argument: tmac run puts it in device memory
		}
		def := r.DefiningOp()
		if cast, ok := memref.AsCast(def); ok {
			v = cast.Source()
			continue
		}
		if def.Name() != memref.Alloc && def.Name() != gpu.Alloc {
			return nil
		}
		onHost = def.Name() == memref.Alloc
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
		return c.Op.EmitError("%v", err)
	}
	return nil
}
