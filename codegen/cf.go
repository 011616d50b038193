package codegen

import (
	"github.com/tmac-dev/tmac/ir"
)

// Unstructured control flow and function terminators.

func init() {
	Register(func(fe *FuncEmitter, op *ir.Operation) {
		fe.Branch(op.Successors()[0], op.Operands())
	}, "cf.br")
	Register(lowerCondBr, "cf.cond_br")
	Register(lowerReturn, "gpu.return", "func.return")
	Register(lowerCall, "func.call")
}

func lowerCondBr(fe *FuncEmitter, op *ir.Operation) {
	cond := fe.Val(op.Operand(0))
	trueArgs := op.OperandGroup("trueDestOperands")
	falseArgs := op.OperandGroup("falseDestOperands")
	t, f := op.Successors()[0], op.Successors()[1]
	if len(fe.phis[t]) != len(trueArgs) || len(fe.phis[f]) != len(falseArgs) {
		Fail(op, "branch operands do not match the successor arguments")
	}
	from := fe.cur
	fe.AddIncoming(t, fe.Vals(trueArgs), from)
	fe.AddIncoming(f, fe.Vals(falseArgs), from)
	from.NewCondBr(cond, fe.Successor(t), fe.Successor(f))
}

func lowerReturn(fe *FuncEmitter, op *ir.Operation) {
	switch op.NumOperands() {
	case 0:
		fe.cur.NewRet(nil)
	case 1:
		fe.cur.NewRet(fe.Val(op.Operand(0)))
	default:
		Fail(op, "returning several values is not supported")
	}
}

func lowerCall(fe *FuncEmitter, op *ir.Operation) {
	ref, _ := op.Attr("callee").(*ir.SymbolRefAttr)
	f, ok := fe.Mod.funcs[ref.Leaf()]
	if !ok {
		Fail(op, "callee @%s is not a function of this gpu.module", ref.Leaf())
	}
	for _, v := range op.Operands() {
		if _, isMem := v.Type().(*ir.MemRefType); isMem {
			Fail(op, "calls with memref arguments are not supported")
		}
	}
	call := fe.Call(f, fe.Vals(op.Operands())...)
	if op.NumResults() == 1 {
		fe.Set(op.Result(0), call)
	}
}
