package codegen

import (
	"fmt"
	"strings"

	"github.com/llir/llvm/ir/types"

	"github.com/tmac-dev/tmac/dialects/nvvm"
	"github.com/tmac-dev/tmac/dialects/tmac"
	"github.com/tmac-dev/tmac/ir"
)

// tmac.wgmma.mma_async: wgmma.mma_async with A in registers (the RS form),
// inline PTX like nvvm.wgmma.mma_async (LLVM has no wgmma intrinsic).

func init() {
	Register(lowerTmacWgmmaRS, tmac.WgmmaMmaAsync)
	Register(lowerTmacWgmmaScaleD, tmac.WgmmaMmaAsyncScaleD)
}

// lowerTmacWgmmaScaleD emits tmac.wgmma.mma_async.scale_d as
// nvvm.wgmma.mma_async is emitted, its scale-d predicate set from the i1
// operand (zero-extended to the b32 that setp tests).
func lowerTmacWgmmaScaleD(fe *FuncEmitter, op *ir.Operation) {
	w := tmac.WgmmaMmaAsyncScaleDOp{Op: op}
	emitWgmmaSS(fe, op, w.Inouts(), w.DescriptorA(), w.DescriptorB(), w.Results(), fe.B().NewZExt(fe.Val(w.ScaleD()), types.I32), "r")
}

// wgmmaRSAsm returns the PTX of an m64nNk16 wgmma.mma_async with A in
// registers: accumulator registers $0..$(nacc-1) (tied to inputs
// $nacc..$(2nacc-1)), the 4 A registers $(2nacc)..$(2nacc+3), B's
// descriptor $(2nacc+4) and the scale-d immediate $(2nacc+5). The operand
// list is d, a, b-desc, scale-d, imm-scale-a, imm-scale-b, imm-trans-b: A
// from registers has no transpose (PTX ISA, wgmma.mma_async).
func wgmmaRSAsm(n int64, typeA, typeB, typeD, layoutB string, nacc int) string {
	regs := func(from, count int) string {
		r := make([]string, count)
		for i := range r {
			r[i] = fmt.Sprintf("$%d", from+i)
		}
		return strings.Join(r, ", ")
	}
	transB := 0
	if layoutB == "row" {
		transB = 1
	}
	return fmt.Sprintf("{\n.reg .pred p;\nsetp.ne.b32 p, $%d, 0;\nwgmma.mma_async.sync.aligned.m64n%dk16.%s.%s.%s {%s}, {%s}, $%d, p, 1, 1, %d;\n}\n",
		2*nacc+5, n, typeD, typeA, typeB, regs(0, nacc), regs(2*nacc, 4), 2*nacc+4, transB)
}

func lowerTmacWgmmaRS(fe *FuncEmitter, op *ir.Operation) {
	w := tmac.WgmmaMmaAsyncOp{Op: op}
	_, n, _ := nvvm.WGMMAShape(op)
	ta, tb, td := nvvm.WGMMATypes(op)
	_, lb := nvvm.WGMMALayouts(op)
	st, ok := fe.Type(op, w.Results().Type()).(*types.StructType)
	if !ok {
		Fail(op, "the accumulator of tmac.wgmma.mma_async must be an LLVM struct")
	}
	nacc := len(st.Fields)
	args, cons := wgmmaAccumulatorOperands(fe, fe.Val(w.Inouts()), nacc, types.Float, "f")
	a := fe.Val(w.A())
	// Each A register is a pair of halves: passed as the b32 holding it.
	for i := uint64(0); i < 4; i++ {
		args = append(args, fe.B().NewBitCast(fe.B().NewExtractValue(a, i), types.I32))
		cons = append(cons, "r")
	}
	args = append(args, fe.Val(w.DescriptorB()), I32(1))
	cons = append(cons, "l", "n")
	asm := wgmmaRSAsm(n, ta, tb, td, lb, nacc)
	fe.Set(w.Results(), fe.InlineAsm(st, asm, strings.Join(cons, ","), true, args...))
}
