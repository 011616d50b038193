package codegen

import (
	"fmt"

	"github.com/llir/llvm/ir/types"

	"github.com/tmac-dev/tmac/dialects/nvgpu"
	"github.com/tmac-dev/tmac/ir"
)

// The kernel ABI: how the arguments of a gpu.func are passed as LLVM (and
// so PTX) parameters. The runtime builds its launch parameters from the
// same description, so it lives in one place.
//
//   - A memref is passed as its base pointer (to the element type, in the
//     memref's address space; generic for global memory), followed by one
//     i64 for the offset if it is dynamic, one per dynamic size and one per
//     dynamic stride, in that order. Static values are not passed.
//   - !nvgpu.tensormap.descriptor is passed by value: a 128-byte,
//     64-byte-aligned byval parameter marked nvvm.grid_constant, so TMA
//     instructions read the CUtensorMap straight from parameter space.
//   - index is i64; integers, floats and vectors are passed as themselves.

// ParamRole says which part of an argument a parameter carries.
type ParamRole uint8

const (
	RoleScalar    ParamRole = iota
	RoleBase                // memref base pointer
	RoleOffset              // memref dynamic offset (elements)
	RoleSize                // memref dynamic size of dimension Dim
	RoleStride              // memref dynamic stride of dimension Dim (elements)
	RoleTensorMap           // CUtensorMap by value
)

// Param is one LLVM parameter of a function.
type Param struct {
	Arg  int // index of the IR argument
	Role ParamRole
	Dim  int // for RoleSize and RoleStride
	Name string
	Type types.Type
}

// Params lays out the parameters for arguments of the given types.
func Params(args []ir.Type, kernel bool) ([]Param, error) {
	var ps []Param
	for i, t := range args {
		switch t := t.(type) {
		case *ir.MemRefType:
			as, ok := addrSpace(t.MemorySpace)
			if !ok {
				return nil, fmt.Errorf("argument #%d: memory space of '%s' is not supported", i, t)
			}
			if kernel && as == 3 {
				return nil, fmt.Errorf("argument #%d: a kernel cannot take a shared-memory memref ('%s')", i, t)
			}
			elem, err := LLType(t.Elem)
			if err != nil {
				return nil, fmt.Errorf("argument #%d: %v", i, err)
			}
			strides, offset, ok := t.StridesAndOffset()
			if !ok {
				return nil, fmt.Errorf("argument #%d: layout of '%s' is not strided", i, t)
			}
			ps = append(ps, Param{Arg: i, Role: RoleBase, Name: fmt.Sprintf("arg%d", i), Type: PtrTo(elem, as)})
			if offset == ir.Dynamic {
				ps = append(ps, Param{Arg: i, Role: RoleOffset, Name: fmt.Sprintf("arg%d.offset", i), Type: types.I64})
			}
			for d, s := range t.Shape() {
				if s == ir.Dynamic {
					ps = append(ps, Param{Arg: i, Role: RoleSize, Dim: d, Name: fmt.Sprintf("arg%d.size%d", i, d), Type: types.I64})
				}
			}
			for d, s := range strides {
				if s == ir.Dynamic {
					ps = append(ps, Param{Arg: i, Role: RoleStride, Dim: d, Name: fmt.Sprintf("arg%d.stride%d", i, d), Type: types.I64})
				}
			}
		default:
			if _, ok := nvgpu.AsTensorMapDescriptor(t); ok {
				ps = append(ps, Param{Arg: i, Role: RoleTensorMap, Name: fmt.Sprintf("arg%d", i), Type: types.NewPointer(TensorMapType)})
				continue
			}
			lt, err := LLType(t)
			if err != nil {
				return nil, fmt.Errorf("argument #%d: %v", i, err)
			}
			ps = append(ps, Param{Arg: i, Role: RoleScalar, Name: fmt.Sprintf("arg%d", i), Type: lt})
		}
	}
	return ps, nil
}

// bindParams maps the entry block arguments to the LLVM parameters.
func (fe *FuncEmitter) bindParams(entry *ir.Block, params []Param) {
	args := entry.Args()
	mems := map[int]*MemRef{}
	for i, p := range params {
		lp := fe.Fn.Params[i]
		arg := args[p.Arg]
		switch p.Role {
		case RoleScalar:
			fe.Set(arg, lp)
		case RoleTensorMap:
			fe.Set(arg, lp)
		case RoleBase:
			m := newStaticMemRef(arg.Type().(*ir.MemRefType), lp)
			mems[p.Arg] = m
			fe.SetMem(arg, m)
		case RoleOffset:
			mems[p.Arg].Offset = lp
		case RoleSize:
			mems[p.Arg].Sizes[p.Dim] = lp
		case RoleStride:
			mems[p.Arg].Strides[p.Dim] = lp
		}
	}
}
