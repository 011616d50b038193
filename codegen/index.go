package codegen

import (
	"github.com/llir/llvm/ir/constant"
	"github.com/llir/llvm/ir/types"

	"github.com/tmac-dev/tmac/dialects/index"
	"github.com/tmac-dev/tmac/ir"
)

// The index dialect on i64, the width of index in NVPTX code: each binary
// op lowers as its arith counterpart (index.divs as arith.divsi), index.cmp
// as icmp, the casts as sign- or zero-extension or truncation, and
// index.sizeof as the constant 64.

func init() {
	Register(func(fe *FuncEmitter, op *ir.Operation) { fe.intBinary(op, index.ArithOp(op.Name())) },
		index.Add, index.Sub, index.Mul, index.Divs, index.Divu, index.Ceildivs, index.Ceildivu, index.Floordivs,
		index.Rems, index.Remu, index.Maxs, index.Maxu, index.Mins, index.Minu,
		index.Shl, index.Shrs, index.Shru, index.And, index.Or, index.Xor)
	Register(func(fe *FuncEmitter, op *ir.Operation) {
		c := index.CmpOp{Op: op}
		fe.Set(c.Result(), fe.B().NewICmp(iPreds[index.PredicateOf(c.Pred())], fe.Val(c.Lhs()), fe.Val(c.Rhs())))
	}, index.Cmp)
	Register(func(fe *FuncEmitter, op *ir.Operation) { fe.intCast(op, op.Name() == index.Castu) }, index.Casts, index.Castu)
	Register(func(fe *FuncEmitter, op *ir.Operation) {
		c := index.ConstantOp{Op: op}
		v, _ := ir.AttrInt(c.Value())
		fe.Set(c.Result(), constant.NewInt(types.I64, v))
	}, index.Constant)
	Register(func(fe *FuncEmitter, op *ir.Operation) {
		c := index.BoolConstantOp{Op: op}
		v, _ := ir.AttrInt(c.Value())
		fe.Set(c.Result(), constant.NewInt(types.I1, v&1))
	}, index.BoolConstant)
	Register(func(fe *FuncEmitter, op *ir.Operation) { fe.Set(op.Result(0), I64(64)) }, index.Sizeof)
}
