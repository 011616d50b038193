package codegen

import (
	"github.com/llir/llvm/ir/constant"
	"github.com/llir/llvm/ir/types"
	"github.com/llir/llvm/ir/value"

	"github.com/tmac-dev/tmac/dialects/nvvm"
	"github.com/tmac-dev/tmac/ir"
)

// The warp reductions and matches, bar.warp.sync, rcp.approx, grid
// dependency control and the integer dot products, each one LLVM 22 NVVM
// intrinsic. The f32 redux.sync kinds and st.bulk need sm_100 and are
// rejected.

func init() {
	Register(lowerNVVMRedux, nvvm.ReduxSync)
	Register(lowerNVVMMatch, nvvm.MatchSync)
	Register(func(fe *FuncEmitter, op *ir.Operation) {
		fe.CallIntrinsic("llvm.nvvm.bar.warp.sync", types.Void, fe.Val(nvvm.BarWarpSyncOp{Op: op}.Mask()))
	}, nvvm.BarWarpSync)
	Register(func(fe *FuncEmitter, op *ir.Operation) {
		r := nvvm.RcpApproxFtzFOp{Op: op}
		fe.Set(r.Res(), fe.CallIntrinsic("llvm.nvvm.rcp.approx.ftz.f", types.Float, fe.Val(r.Arg())))
	}, nvvm.RcpApproxFtzF)
	Register(func(fe *FuncEmitter, op *ir.Operation) {
		name := "llvm.nvvm.griddepcontrol.wait"
		if nvvm.EnumValue(nvvm.GriddepcontrolOp{Op: op}.Kind()) == "launch_dependents" {
			name = "llvm.nvvm.griddepcontrol.launch.dependents"
		}
		fe.CallIntrinsic(name, types.Void)
	}, nvvm.Griddepcontrol)
	Register(func(fe *FuncEmitter, op *ir.Operation) {
		Fail(op, "'%s' is not supported on sm_90a: st.bulk needs sm_100", op.Name())
	}, nvvm.StBulk)
	Register(lowerNVVMDotAccumulate, nvvm.DotAccumulate4way, nvvm.DotAccumulate2way)
}

func lowerNVVMRedux(fe *FuncEmitter, op *ir.Operation) {
	r := nvvm.ReduxSyncOp{Op: op}
	kind := nvvm.EnumValue(r.Kind())
	if kind == "fmin" || kind == "fmax" {
		Fail(op, "'%s' of kind '%s' is not supported on sm_90a: f32 warp reductions need sm_100a", op.Name(), kind)
	}
	fe.Set(r.Res(), fe.CallIntrinsic("llvm.nvvm.redux.sync."+kind, types.I32, fe.Val(r.Val()), fe.Val(r.MaskAndClamp())))
}

func lowerNVVMMatch(fe *FuncEmitter, op *ir.Operation) {
	m := nvvm.MatchSyncOp{Op: op}
	suffix := ".i32"
	if ir.IsIntegerOfWidth(m.Val().Type(), 64) {
		suffix = ".i64"
	}
	kind := nvvm.EnumValue(m.Kind())
	if kind == "all" {
		suffix += "p"
	}
	rt := fe.Type(op, m.Res().Type())
	fe.Set(m.Res(), fe.CallIntrinsic("llvm.nvvm.match."+kind+".sync"+suffix, rt, fe.Val(m.ThreadMask()), fe.Val(m.Val())))
}

// lowerNVVMDotAccumulate lowers dot.accumulate.4way (dp4a) and 2way
// (dp2a): the vector operands are passed as the i32 that holds them.
func lowerNVVMDotAccumulate(fe *FuncEmitter, op *ir.Operation) {
	sign := func(a ir.Attribute) string {
		if nvvm.EnumValue(a) == "signed" {
			return "s"
		}
		return "u"
	}
	asI32 := func(v ir.Value) value.Value { return fe.B().NewBitCast(fe.Val(v), types.I32) }
	if op.Name() == nvvm.DotAccumulate4way {
		d := nvvm.DotAccumulate4wayOp{Op: op}
		a, b := asI32(d.A()), asI32(d.B())
		fe.Set(d.Res(), fe.CallIntrinsic("llvm.nvvm.idp4a."+sign(d.AType())+"."+sign(d.BType()), types.I32, a, b, fe.Val(d.C())))
		return
	}
	d := nvvm.DotAccumulate2wayOp{Op: op}
	a, b := asI32(d.A()), asI32(d.B())
	hi := constant.False
	if nvvm.IsTrue(op, "b_hi") {
		hi = constant.True
	}
	fe.Set(d.Res(), fe.CallIntrinsic("llvm.nvvm.idp2a."+sign(d.AType())+"."+sign(d.BType()), types.I32, a, b, hi, fe.Val(d.C())))
}
