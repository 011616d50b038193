package nvgpu

import "github.com/tmac-dev/tmac/ir"

// BoxBytes is the number of bytes one TMA copy of the descriptor's box
// moves (out-of-bounds elements included).
func (d *TensorMapDescriptor) BoxBytes() int64 {
	return ir.NumElements(d.Tensor.Shape()) * int64(ir.BitWidth(d.Tensor.Elem)) / 8
}

// SharedAlign is the alignment in bytes TMA needs for the shared-memory
// side of a copy with this descriptor.
func (d *TensorMapDescriptor) SharedAlign() int64 {
	if d.Swizzle == Swizzle128B {
		return 1024
	}
	return 128
}

// MBarrierCount is the number of barriers of an !nvgpu.mbarrier.group
// type, 1 for any other type.
func MBarrierCount(t ir.Type) int64 {
	if g, ok := AsMBarrierGroup(t); ok && g.NumBarriers > 1 {
		return int64(g.NumBarriers)
	}
	return 1
}
