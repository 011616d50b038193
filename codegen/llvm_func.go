package codegen

import (
	lir "github.com/llir/llvm/ir"
	"github.com/llir/llvm/ir/constant"
	"github.com/llir/llvm/ir/enum"
	"github.com/llir/llvm/ir/types"
	"github.com/llir/llvm/ir/value"

	"github.com/tmac-dev/tmac/dialects/gpu"
	"github.com/tmac-dev/tmac/dialects/llvm"
	"github.com/tmac-dev/tmac/ir"
)

// Device-side llvm.func, llvm.call, llvm.return, llvm.mlir.global and
// llvm.mlir.addressof. A defined llvm.func is an internal device function
// like a func.func; a declared one has no code to link against, except
// printf: a call to it becomes CUDA's vprintf, as clang and gpu.printf do
// (the arguments after the format, promoted as C promotes variadic
// arguments, in a local buffer).

func init() {
	Register(lowerReturn, llvm.Return)
	Register(lowerLLVMCall, llvm.Call)
	Register(lowerLLVMAddressOf, llvm.MlirAddressof)
	// Emit lowers these where they belong, directly in a gpu.module.
	Register(func(fe *FuncEmitter, op *ir.Operation) {
		Fail(op, "'%s' can only be compiled directly inside a gpu.module", op.Name())
	}, llvm.Func, llvm.MlirGlobal)
}

// llvmFuncView is an llvm.func seen as the functions declareFunc and
// defineFunc lower.
type llvmFuncView struct{ op *ir.Operation }

func (v llvmFuncView) FunctionType() ir.Attribute {
	ft := llvm.FuncSignature(v.op)
	return ir.TypeAttrOf(ir.FunctionTypeOf(ft.Params, ft.Results()))
}

func (v llvmFuncView) Body() *ir.Region { return v.op.Region(0) }

// declareLLVMFunc declares a defined llvm.func and reports whether it has
// a body to lower; declarations are resolved at their calls.
func (me *ModuleEmitter) declareLLVMFunc(op *ir.Operation) bool {
	if op.Region(0).Empty() {
		return false
	}
	if llvm.FuncSignature(op).Variadic {
		Fail(op, "variadic function definitions cannot be compiled")
	}
	me.declareFunc(op)
	return true
}

// llvmGlobal defines an llvm.mlir.global constant with a value.
func (me *ModuleEmitter) llvmGlobal(op *ir.Operation) {
	g := llvm.MlirGlobalOp{Op: op}
	if !op.Region(0).Empty() {
		Fail(op, "an llvm.mlir.global with an initializer region cannot be compiled (give its value as an attribute)")
	}
	if g.Value() == nil {
		Fail(op, "an llvm.mlir.global without a value (an external global) cannot be compiled: kernels are not linked with other device code")
	}
	t := llvm.GlobalType(op)
	lt, err := LLType(t)
	if err != nil {
		Fail(op, "%v", err)
	}
	var init constant.Constant
	if s, ok := g.Value().(*ir.StringAttr); ok {
		init = constant.NewCharArrayFromString(s.Value)
	} else {
		init = llvmConstant(op, g.Value(), lt, ir.ElementTypeOrSelf(t))
	}
	name := op.SymbolName()
	checkSymbolName(op, name, false)
	if _, dup := me.globals[name]; dup {
		Fail(op, "global '%s' is defined more than once", name)
	}
	lg := me.M.NewGlobalDef(name, init)
	lg.Linkage = enum.LinkageInternal
	lg.Immutable = op.HasAttr("constant")
	as := types.AddrSpace(op.IntAttrOf("addr_space", 0))
	lg.AddrSpace = as
	lg.Typ.AddrSpace = as
	if a := op.IntAttrOf("alignment", 0); a > 0 {
		lg.Align = lir.Align(a)
	}
	me.globals[name] = lg
}

func lowerLLVMAddressOf(fe *FuncEmitter, op *ir.Operation) {
	a := llvm.MlirAddressofOp{Op: op}
	ref, _ := a.GlobalName().(*ir.SymbolRefAttr)
	g, ok := fe.Mod.globals[ref.Leaf()]
	if !ok {
		Fail(op, "'%s' of @%s cannot be compiled: only the address of an llvm.mlir.global of this gpu.module can be taken", op.Name(), ref.Leaf())
	}
	fe.Set(a.Res(), fe.B().NewBitCast(g, PtrTo(types.I8, g.AddrSpace)))
}

func lowerLLVMCall(fe *FuncEmitter, op *ir.Operation) {
	c := llvm.CallOp{Op: op}
	callee := llvm.CalleeOf(op)
	if callee == nil {
		Fail(op, "'%s' needs a callee that is an llvm.func", op.Name())
	}
	name := callee.SymbolName()
	if callee.Region(0).Empty() {
		if name != "printf" {
			Fail(op, "'%s' of @%s cannot be compiled: @%s is only declared, and kernels are not linked with other device code (printf, lowered to CUDA's vprintf, is the one declared function tmac provides)", op.Name(), name, name)
		}
		fe.Set(c.Result(), fe.printfCall(op))
		return
	}
	f, ok := fe.Mod.funcs[name]
	if !ok {
		Fail(op, "callee @%s is not a function of this gpu.module", name)
	}
	call := fe.Call(f, fe.Vals(c.CalleeOperands())...)
	if r := c.Result(); r != nil {
		fe.Set(r, call)
	}
}

// printfCall lowers llvm.call @printf(format, args...) to vprintf and
// returns its result.
func (fe *FuncEmitter) printfCall(op *ir.Operation) value.Value {
	ft := llvm.FuncSignature(llvm.CalleeOf(op))
	if !ft.Variadic || len(ft.Params) != 1 || !llvm.IsPtr(ft.Params[0]) || !ir.IsIntegerOfWidth(ft.Result, 32) {
		Fail(op, "'%s' of @printf: printf must be declared as llvm.func @printf(!llvm.ptr, ...) -> i32", op.Name())
	}
	operands := llvm.CallOp{Op: op}.CalleeOperands()
	if text, ok := llvm.StringGlobalAddressed(operands[0]); ok {
		if msg := gpu.PrintfFormatProblem(text); msg != "" {
			Fail(op, "%s", msg)
		}
	}
	format := fe.castPointer(op, fe.Val(operands[0]), 0)
	var args []value.Value
	for i, a := range operands[1:] {
		x := fe.Val(a)
		if llvm.IsPtr(a.Type()) {
			// %s and %p take generic pointers.
			args = append(args, fe.castPointer(op, x, 0))
			continue
		}
		args = append(args, fe.printfArg(op, i+1, a.Type(), x))
	}
	return fe.vprintf(format, args)
}
