package codegen

import (
	"github.com/llir/llvm/ir/metadata"
	"github.com/llir/llvm/ir/types"
	"github.com/llir/llvm/ir/value"

	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/toolchain"
)

// Calls to NVIDIA's libdevice (__nv_logf, __nv_tanh, ...), the accurate
// math functions the math dialect lowers to by default, as upstream MLIR's
// NVVM lowering does. The module only declares them; toolchain.CompilePTX
// links libdevice in (toolchain/libdevice.go).

// LibdeviceUse is the first libdevice call of a module: the op lowered to
// it and the function.
type LibdeviceUse struct {
	Op   *ir.Operation
	Func string
}

// callLibdevice calls the libdevice function name for op, declaring it
// once. The first call also sets the module flag that libdevice's
// __nvvm_reflect("__CUDA_FTZ") reads: 0, subnormals are kept, as in the
// rest of the kernel.
func (fe *FuncEmitter) callLibdevice(op *ir.Operation, name string, ret types.Type, args ...value.Value) value.Value {
	me := fe.Mod
	if me.libdevice == nil {
		me.libdevice = &LibdeviceUse{Op: op, Func: name}
		flag := &metadata.Tuple{MetadataID: -1, Fields: []metadata.Field{I32(4), &metadata.String{Value: "nvvm-reflect-ftz"}, I32(0)}}
		me.M.NamedMetadataDefs["llvm.module.flags"] = &metadata.NamedDef{Name: "llvm.module.flags", Nodes: []metadata.Node{flag}}
		me.M.MetadataDefs = append(me.M.MetadataDefs, flag)
	}
	return fe.CallIntrinsic(name, ret, args...)
}

// CheckLibdevice returns an error at the first op lowered to a libdevice
// call when libdevice cannot be found (explicit is --libdevice), so that
// the program's source line is shown rather than only llc's input.
func (o *Output) CheckLibdevice(explicit string) error {
	if o.Libdevice == nil {
		return nil
	}
	if _, err := toolchain.FindLibdevice(explicit); err != nil {
		u := o.Libdevice
		return u.Op.EmitError("'%s' is computed by %s from NVIDIA's libdevice, which is needed to compile it: %v", u.Op.Name(), u.Func, err)
	}
	return nil
}
