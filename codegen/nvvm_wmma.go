package codegen

import (
	"fmt"

	"github.com/llir/llvm/ir/types"
	"github.com/llir/llvm/ir/value"

	"github.com/tmac-dev/tmac/dialects/nvvm"
	"github.com/tmac-dev/tmac/ir"
)

// nvvm.wmma.load, store and mma: one llvm.nvvm.wmma.* intrinsic each,
// named as LLVM 22 names them (the pointer's address space in the load
// and store names).

func init() {
	Register(lowerNVVMWMMALoad, nvvm.WmmaLoad)
	Register(lowerNVVMWMMAStore, nvvm.WmmaStore)
	Register(lowerNVVMWMMAMma, nvvm.WmmaMma)
}

func wmmaShape(op *ir.Operation) string {
	m, n, k := nvvm.WMMAShape(op)
	return fmt.Sprintf("m%dn%dk%d", m, n, k)
}

func lowerNVVMWMMALoad(fe *FuncEmitter, op *ir.Operation) {
	l := nvvm.WmmaLoadOp{Op: op}
	as := nvvmPtrSpace(l.Ptr())
	name := fmt.Sprintf("llvm.nvvm.wmma.%s.load.%s.%s.stride.%s.p%d", wmmaShape(op),
		nvvm.EnumValue(l.Frag()), nvvm.EnumValue(l.Layout()), nvvm.EnumValue(l.Eltype()), as)
	fe.Set(l.Res(), fe.CallIntrinsic(name, fe.Type(op, l.Res().Type()), fe.nvvmPtr(op, l.Ptr(), as), fe.Val(l.Stride())))
}

func lowerNVVMWMMAStore(fe *FuncEmitter, op *ir.Operation) {
	s := nvvm.WmmaStoreOp{Op: op}
	as := nvvmPtrSpace(s.Ptr())
	name := fmt.Sprintf("llvm.nvvm.wmma.%s.store.d.%s.stride.%s.p%d", wmmaShape(op),
		nvvm.EnumValue(s.Layout()), nvvm.EnumValue(s.Eltype()), as)
	args := append([]value.Value{fe.nvvmPtr(op, s.Ptr(), as)}, fe.Vals(s.Args())...)
	fe.CallIntrinsic(name, types.Void, append(args, fe.Val(s.Stride()))...)
}

func lowerNVVMWMMAMma(fe *FuncEmitter, op *ir.Operation) {
	w := nvvm.WmmaMmaOp{Op: op}
	a, c := nvvm.EnumValue(w.EltypeA()), nvvm.EnumValue(w.EltypeB())
	suffix := a
	if a == "f16" {
		suffix = c + "." + c
	}
	name := fmt.Sprintf("llvm.nvvm.wmma.%s.mma.%s.%s.%s", wmmaShape(op), nvvm.EnumValue(w.LayoutA()), nvvm.EnumValue(w.LayoutB()), suffix)
	fe.Set(w.Res(), fe.CallIntrinsic(name, fe.Type(op, w.Res().Type()), fe.Vals(w.Args())...))
}
