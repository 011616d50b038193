package codegen

import (
	"github.com/llir/llvm/ir/types"
	"github.com/llir/llvm/ir/value"

	"github.com/tmac-dev/tmac/dialects/builtin"
	"github.com/tmac-dev/tmac/dialects/llvm"
	"github.com/tmac-dev/tmac/dialects/nvgpu"
	"github.com/tmac-dev/tmac/ir"
)

// builtin.unrealized_conversion_cast appears where IR of different levels
// meets (nvgpu values handed to nvvm ops). It lowers when the two sides have
// the same machine representation: identical LLVM types, a tensor map to a
// pointer (the address of its by-value parameter), or a memref to a pointer
// (its aligned base plus offset).

func init() {
	Register(lowerUnrealizedCast, builtin.UnrealizedConversionCast)
}

func lowerUnrealizedCast(fe *FuncEmitter, op *ir.Operation) {
	c := builtin.UnrealizedConversionCastOp{Op: op}
	ins, outs := c.Inputs(), c.Outputs()
	if len(ins) != len(outs) {
		Fail(op, "only one-to-one unrealized_conversion_cast ops can be compiled")
	}
	for i, in := range ins {
		out := outs[i]
		switch {
		case isTensorMap(in.Type()) && llvm.IsPtr(out.Type()):
			as, _ := llvm.PtrAddrSpace(out.Type())
			fe.Set(out, fe.castPointer(op, fe.Val(in), types.AddrSpace(as)))
		case isMemRef(in.Type()) && llvm.IsPtr(out.Type()):
			m := fe.Mem(in)
			p := fe.ElemPtr(op, m, nil)
			as, _ := llvm.PtrAddrSpace(out.Type())
			fe.Set(out, fe.castPointer(op, p, types.AddrSpace(as)))
		default:
			it, err1 := LLType(in.Type())
			ot, err2 := LLType(out.Type())
			if err1 != nil || err2 != nil || !it.Equal(ot) {
				Fail(op, "cannot compile a conversion from '%s' to '%s' (the two types have different machine representations)", in.Type(), out.Type())
			}
			fe.Set(out, fe.Val(in))
		}
	}
}

func isTensorMap(t ir.Type) bool { _, ok := nvgpu.AsTensorMapDescriptor(t); return ok }

func isMemRef(t ir.Type) bool { _, ok := t.(*ir.MemRefType); return ok }

// castPointer converts a pointer to i8* in address space as (bitcast, then
// addrspacecast when the spaces differ).
func (fe *FuncEmitter) castPointer(op *ir.Operation, p value.Value, as types.AddrSpace) value.Value {
	pt, ok := p.Type().(*types.PointerType)
	if !ok {
		Fail(op, "expected a pointer, got '%s'", p.Type())
	}
	v := fe.pointerCast(p, types.I8)
	if pt.AddrSpace != as {
		v = fe.cur.NewAddrSpaceCast(v, PtrTo(types.I8, as))
	}
	return v
}
