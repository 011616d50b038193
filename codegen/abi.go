package codegen

import (
	"github.com/llir/llvm/ir/types"

	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/kernelabi"
)

// Param is a parameter of the kernel ABI (package kernelabi) with the
// LLVM type code generation gives it.
type Param struct {
	kernelabi.Param
	Type types.Type
}

// Params lays out the LLVM parameters for arguments of the given types:
// kernelabi's layout, refusing the first argument whose type cannot be
// lowered.
func Params(args []ir.Type, kernel bool) ([]Param, error) {
	layout, err := kernelabi.Params(args, kernel, func(t ir.Type) error {
		_, err := LLType(t)
		return err
	})
	if err != nil {
		return nil, err
	}
	ps := make([]Param, len(layout))
	for i, p := range layout {
		ps[i] = Param{Param: p, Type: paramType(p, args[p.Arg])}
	}
	return ps, nil
}

// paramType is the LLVM type of parameter p of an argument of type t
// (which kernelabi.Params has accepted).
func paramType(p kernelabi.Param, t ir.Type) types.Type {
	switch p.Role {
	case kernelabi.RoleBase:
		mt := t.(*ir.MemRefType)
		elem, _ := LLType(mt.Elem)
		as, _ := addrSpace(mt.MemorySpace)
		return PtrTo(elem, as)
	case kernelabi.RoleOffset, kernelabi.RoleSize, kernelabi.RoleStride:
		return types.I64
	case kernelabi.RoleTensorMap:
		return types.NewPointer(TensorMapType)
	}
	lt, _ := LLType(t)
	return lt
}

// bindParams maps the entry block arguments to the LLVM parameters.
func (fe *FuncEmitter) bindParams(entry *ir.Block, params []Param) {
	args := entry.Args()
	mems := map[int]*MemRef{}
	for i, p := range params {
		lp := fe.Fn.Params[i]
		arg := args[p.Arg]
		switch p.Role {
		case kernelabi.RoleScalar:
			fe.Set(arg, lp)
		case kernelabi.RoleTensorMap:
			fe.Set(arg, lp)
		case kernelabi.RoleBase:
			m := newStaticMemRef(arg.Type().(*ir.MemRefType), lp)
			mems[p.Arg] = m
			fe.SetMem(arg, m)
		case kernelabi.RoleOffset:
			mems[p.Arg].Offset = lp
		case kernelabi.RoleSize:
			mems[p.Arg].Sizes[p.Dim] = lp
		case kernelabi.RoleStride:
			mems[p.Arg].Strides[p.Dim] = lp
		}
	}
}
