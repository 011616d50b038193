// Package kernelabi describes the kernel ABI: how the arguments of a
// gpu.func are passed as PTX parameters. Code generation emits kernels
// with this layout (giving each parameter its LLVM type), and the host
// plan, the emulator and bundle manifests bind launch arguments with it,
// so the layout is written once, here, in IR terms only.
//
//   - A memref is passed as its base pointer (to the element type, in the
//     memref's address space; generic for global memory), followed by one
//     i64 for the offset if it is dynamic, one per dynamic size and one per
//     dynamic stride, in that order. Static values are not passed.
//   - !nvgpu.tensormap.descriptor is passed by value: a 128-byte,
//     64-byte-aligned byval parameter marked nvvm.grid_constant, so TMA
//     instructions read the CUtensorMap straight from parameter space.
//   - index is i64; integers, floats and vectors are passed as themselves.
package kernelabi

import (
	"fmt"

	"github.com/tmac-dev/tmac/dialects/nvgpu"
	"github.com/tmac-dev/tmac/ir"
)

// Role says which part of an argument a parameter carries.
type Role uint8

const (
	RoleScalar    Role = iota // the argument itself
	RoleBase                  // memref base pointer
	RoleOffset                // memref dynamic offset (elements)
	RoleSize                  // memref dynamic size of dimension Dim
	RoleStride                // memref dynamic stride of dimension Dim (elements)
	RoleTensorMap             // CUtensorMap by value
)

// roleNames are the roles' names in bundle manifests.
var roleNames = [...]string{
	RoleScalar:    "scalar",
	RoleBase:      "base",
	RoleOffset:    "offset",
	RoleSize:      "size",
	RoleStride:    "stride",
	RoleTensorMap: "tensormap",
}

// String returns the role's name as bundle manifests write it.
func (r Role) String() string {
	if int(r) < len(roleNames) {
		return roleNames[r]
	}
	return fmt.Sprintf("Role(%d)", r)
}

// ParseRole returns the role a manifest names.
func ParseRole(name string) (Role, bool) {
	for r, n := range roleNames {
		if n == name {
			return Role(r), true
		}
	}
	return 0, false
}

// Param is one parameter of a function.
type Param struct {
	Arg  int // index of the IR argument
	Role Role
	Dim  int    // for RoleSize and RoleStride
	Name string // arg3, arg3.offset, arg3.size0, arg3.stride1
}

// Params lays out the parameters of a function taking arguments of the
// given types; a kernel cannot take a shared-memory memref. vet, if not
// nil, is asked about every scalar argument type and memref element type
// as the arguments are laid out: a code generator passes its check that
// it can lower the type, so the first argument it cannot pass is the one
// reported.
func Params(args []ir.Type, kernel bool, vet func(ir.Type) error) ([]Param, error) {
	var ps []Param
	for i, t := range args {
		switch t := t.(type) {
		case *ir.MemRefType:
			n, ok := ir.MemorySpaceNumber(t.MemorySpace)
			if !ok || n < 0 {
				return nil, fmt.Errorf("argument #%d: memory space of '%s' is not supported", i, t)
			}
			if kernel && n == 3 {
				return nil, fmt.Errorf("argument #%d: a kernel cannot take a shared-memory memref ('%s')", i, t)
			}
			if err := vetType(vet, i, t.Elem); err != nil {
				return nil, err
			}
			strides, offset, ok := t.StridesAndOffset()
			if !ok {
				return nil, fmt.Errorf("argument #%d: layout of '%s' is not strided", i, t)
			}
			ps = append(ps, Param{Arg: i, Role: RoleBase, Name: fmt.Sprintf("arg%d", i)})
			if offset == ir.Dynamic {
				ps = append(ps, Param{Arg: i, Role: RoleOffset, Name: fmt.Sprintf("arg%d.offset", i)})
			}
			for d, s := range t.Shape() {
				if s == ir.Dynamic {
					ps = append(ps, Param{Arg: i, Role: RoleSize, Dim: d, Name: fmt.Sprintf("arg%d.size%d", i, d)})
				}
			}
			for d, s := range strides {
				if s == ir.Dynamic {
					ps = append(ps, Param{Arg: i, Role: RoleStride, Dim: d, Name: fmt.Sprintf("arg%d.stride%d", i, d)})
				}
			}
		default:
			if _, ok := nvgpu.AsTensorMapDescriptor(t); ok {
				ps = append(ps, Param{Arg: i, Role: RoleTensorMap, Name: fmt.Sprintf("arg%d", i)})
				continue
			}
			if err := vetType(vet, i, t); err != nil {
				return nil, err
			}
			ps = append(ps, Param{Arg: i, Role: RoleScalar, Name: fmt.Sprintf("arg%d", i)})
		}
	}
	return ps, nil
}

func vetType(vet func(ir.Type) error, arg int, t ir.Type) error {
	if vet == nil {
		return nil
	}
	if err := vet(t); err != nil {
		return fmt.Errorf("argument #%d: %v", arg, err)
	}
	return nil
}
