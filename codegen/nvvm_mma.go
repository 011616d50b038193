package codegen

import (
	"fmt"

	"github.com/tmac-dev/tmac/dialects/nvvm"
	"github.com/tmac-dev/tmac/ir"
)

// nvvm.mma.sync: one llvm.nvvm.mma.* intrinsic, named as LLVM names them:
// the b1 operation, the shape, the layouts, satfinite, then the types
// (f16 inputs: the result and accumulator types; otherwise A's, and B's
// when it differs).

func init() {
	Register(lowerNVVMMMA, nvvm.MmaSync)
}

func lowerNVVMMMA(fe *FuncEmitter, op *ir.Operation) {
	m := nvvm.MmaSyncOp{Op: op}
	shape := nvvm.ShapeOf(m.Shape())
	layoutA, layoutB := nvvm.EnumValue(m.LayoutA()), nvvm.EnumValue(m.LayoutB())
	if !(shape.M == 8 && shape.N == 8 && shape.K == 4) && (layoutA != "row" || layoutB != "col") {
		Fail(op, "'%s' of shape m%dn%dk%d takes layoutA = row and layoutB = col (PTX has no other layouts for it)", op.Name(), shape.M, shape.N, shape.K)
	}
	name := "llvm.nvvm.mma"
	switch b1 := nvvm.EnumValue(m.B1Op()); b1 {
	case "xor_popc", "and_popc":
		name += "." + b1[:3] + ".popc"
	}
	name += fmtShape(shape) + "." + layoutA + "." + layoutB
	if nvvm.EnumValue(m.IntOverflowBehavior()) == "satfinite" {
		name += ".satfinite"
	}
	a, b := nvvm.EnumValue(m.MultiplicandAPtxType()), nvvm.EnumValue(m.MultiplicandBPtxType())
	switch {
	case a == "f16":
		c := m.OperandC()
		name += "." + nvvm.InferMMAType(m.Res().Type(), true) + "." + nvvm.InferMMAType(c[0].Type(), true)
	case a == b:
		name += "." + a
	default:
		name += "." + a + "." + b
	}
	args := fe.Vals(m.OperandA())
	args = append(args, fe.Vals(m.OperandB())...)
	args = append(args, fe.Vals(m.OperandC())...)
	fe.Set(m.Res(), fe.CallIntrinsic(name, fe.Type(op, m.Res().Type()), args...))
}

func fmtShape(s *nvvm.ShapeData) string {
	return fmt.Sprintf(".m%dn%dk%d", s.M, s.N, s.K)
}
