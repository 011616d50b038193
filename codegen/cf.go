package codegen

import (
	"github.com/tmac-dev/tmac/dialects/cf"
	funcdialect "github.com/tmac-dev/tmac/dialects/func"
	"github.com/tmac-dev/tmac/dialects/gpu"
	"github.com/tmac-dev/tmac/ir"
)

// Unstructured control flow and function terminators.

func init() {
	Register(func(fe *FuncEmitter, op *ir.Operation) {
		fe.Branch(op.Successors()[0], cf.BrOp{Op: op}.DestOperands())
	}, cf.Br)
	Register(lowerCondBr, cf.CondBr)
	Register(lowerReturn, gpu.Return, funcdialect.Return)
	Register(lowerCall, funcdialect.Call)
}

func lowerCondBr(fe *FuncEmitter, op *ir.Operation) {
	br := cf.CondBrOp{Op: op}
	cond := fe.Val(br.Condition())
	trueArgs := br.TrueDestOperands()
	falseArgs := br.FalseDestOperands()
	t, f := op.Successors()[0], op.Successors()[1]
	if len(fe.phis[t]) != len(trueArgs) || len(fe.phis[f]) != len(falseArgs) {
		Fail(op, "branch operands do not match the successor arguments")
	}
	from := fe.cur
	fe.AddIncoming(t, fe.Vals(trueArgs), from)
	fe.AddIncoming(f, fe.Vals(falseArgs), from)
	from.NewCondBr(cond, fe.Successor(t), fe.Successor(f))
}

// lowerReturn lowers gpu.return and func.return, whose operands are all
// returned values.
func lowerReturn(fe *FuncEmitter, op *ir.Operation) {
	switch vals := op.Operands(); len(vals) {
	case 0:
		fe.cur.NewRet(nil)
	case 1:
		fe.cur.NewRet(fe.Val(vals[0]))
	default:
		Fail(op, "returning several values is not supported")
	}
}

func lowerCall(fe *FuncEmitter, op *ir.Operation) {
	c := funcdialect.CallOp{Op: op}
	ref, _ := c.Callee().(*ir.SymbolRefAttr)
	f, ok := fe.Mod.funcs[ref.Leaf()]
	if !ok {
		Fail(op, "callee @%s is not a function of this gpu.module", ref.Leaf())
	}
	for _, v := range c.Operands() {
		if _, isMem := v.Type().(*ir.MemRefType); isMem {
			Fail(op, "calls with memref arguments are not supported")
		}
	}
	call := fe.Call(f, fe.Vals(c.Operands())...)
	if res := c.Results(); len(res) == 1 {
		fe.Set(res[0], call)
	}
}
