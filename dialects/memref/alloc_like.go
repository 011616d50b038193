//go:build !opgen

package memref

import "github.com/tmac-dev/tmac/ir"

// AllocLike is what the views of memref.alloc and memref.alloca share:
// they declare the same operands, result and attributes.
type AllocLike interface {
	DynamicSizes() []ir.Value
	SymbolOperands() []ir.Value
	Memref() ir.Value
	Alignment() ir.Attribute
}

// AsAllocLike returns the view of a memref.alloc or memref.alloca, and
// whether op is one.
func AsAllocLike(op *ir.Operation) (AllocLike, bool) {
	if a, ok := AsAlloca(op); ok {
		return a, true
	}
	if a, ok := AsAlloc(op); ok {
		return a, true
	}
	return nil, false
}
