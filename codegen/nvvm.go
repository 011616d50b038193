package codegen

import (
	"fmt"
	"strings"

	"github.com/llir/llvm/ir/constant"
	"github.com/llir/llvm/ir/enum"
	"github.com/llir/llvm/ir/types"
	"github.com/llir/llvm/ir/value"

	"github.com/tmac-dev/tmac/dialects/llvm"
	"github.com/tmac-dev/tmac/dialects/nvvm"
	"github.com/tmac-dev/tmac/ir"
)

// nvvm dialect ops. Every op maps to an LLVM 22 NVVM intrinsic where one
// exists (names and signatures checked against llc 22, sm_90a); inline PTX
// is used only for wgmma.mma_async and the predicated TMA copies, which
// have no intrinsic. Other predicated forms branch around the intrinsic.
//
// Pointer operands are !llvm.ptr<N> values (i8 addrspace(N)* here); a
// tensor-map kernel parameter ([128 x i8]* byval) is accepted wherever a
// generic pointer is expected and bitcast.
//
// Some forms need more than tmac's default target (sm_90a, PTX 8.0):
// fence.proxy.acquire/release need PTX 8.3 (--ptx-version=83), relaxed
// mbarrier ops and TMA loads into shared::cta (isCTAOnly) PTX 8.6; llc
// reports them otherwise. Forms that need sm_100 (cta_group, im2col_w,
// tile_gather4/scatter4, 8x16/16x16 ldmatrix, 16x8 stmatrix) are rejected.

func init() {
	Register(lowerNVVMSreg, nvvmSregOps()...)
	Register(func(fe *FuncEmitter, op *ir.Operation) { fe.gpuBarrier() }, nvvm.Barrier0)
	Register(lowerNVVMBarrier, nvvm.Barrier)
	Register(lowerNVVMBarrierArrive, nvvm.BarrierArrive)
	Register(lowerNVVMCluster, nvvm.ClusterArrive, nvvm.ClusterArriveRelaxed, nvvm.ClusterWait)
	Register(lowerNVVMFenceProxy, nvvm.FenceProxy)
	Register(lowerNVVMFenceTensormap, nvvm.FenceProxyAcquire, nvvm.FenceProxyRelease)
	Register(nvvmSimple("llvm.nvvm.fence.mbarrier_init.release.cluster"), nvvm.FenceMbarrierInit)
	Register(nvvmSimple("llvm.nvvm.fence.sc.cluster"), nvvm.FenceScCluster)
	Register(lowerNVVMMemoryBarrier, nvvm.MemoryBarrier)
	Register(lowerNVVMMbarrierInit, nvvm.MbarrierInit)
	Register(lowerNVVMMbarrierInval, nvvm.MbarrierInval)
	Register(lowerNVVMMbarrierArrive, nvvm.MbarrierArrive)
	Register(lowerNVVMMbarrierNoComplete, nvvm.MbarrierArriveNocomplete)
	Register(lowerNVVMMbarrierExpectTx, nvvm.MbarrierArriveExpectTx)
	Register(lowerNVVMMbarrierWait, nvvm.MbarrierTestWait, nvvm.MbarrierTryWait)
	Register(lowerNVVMMbarrierTryWaitParity, nvvm.MbarrierTryWaitParity)
	Register(lowerNVVMTMALoad, nvvm.CpAsyncBulkTensorSharedClusterGlobal)
	Register(lowerNVVMTMAStore, nvvm.CpAsyncBulkTensorGlobalSharedCta)
	Register(lowerNVVMTMAPrefetch, nvvm.CpAsyncBulkTensorPrefetch)
	Register(nvvmSimple("llvm.nvvm.cp.async.bulk.commit.group"), nvvm.CpAsyncBulkCommitGroup)
	Register(lowerNVVMBulkWaitGroup, nvvm.CpAsyncBulkWaitGroup)
	Register(lowerNVVMCpAsync, nvvm.CpAsyncSharedGlobal)
	Register(nvvmSimple("llvm.nvvm.cp.async.commit.group"), nvvm.CpAsyncCommitGroup)
	Register(func(fe *FuncEmitter, op *ir.Operation) {
		fe.CallIntrinsic("llvm.nvvm.cp.async.wait.group", types.Void, I32(nvvm.AttrInt(op, "n", 0)))
	}, nvvm.CpAsyncWaitGroup)
	Register(lowerNVVMCpAsyncMbarrierArrive, nvvm.CpAsyncMbarrierArrive)
	Register(lowerNVVMElectSync, nvvm.ElectSync)
	Register(lowerNVVMMapa, nvvm.Mapa)
	Register(lowerNVVMShfl, nvvm.ShflSync)
	Register(lowerNVVMVote, nvvm.VoteSync)
	Register(lowerNVVMSetMaxReg, nvvm.Setmaxregister)
	Register(lowerNVVMPrefetch, nvvm.Prefetch)
	Register(lowerNVVMLdMatrix, nvvm.Ldmatrix)
	Register(lowerNVVMStMatrix, nvvm.Stmatrix)
	Register(nvvmSimple("llvm.nvvm.wgmma.fence.sync.aligned"), nvvm.WgmmaFenceAligned)
	Register(nvvmSimple("llvm.nvvm.wgmma.commit_group.sync.aligned"), nvvm.WgmmaCommitGroupSyncAligned)
	Register(func(fe *FuncEmitter, op *ir.Operation) {
		fe.CallIntrinsic("llvm.nvvm.wgmma.wait_group.sync.aligned", types.Void, I64(nvvm.AttrInt(op, "group", 0)))
	}, nvvm.WgmmaWaitGroupSyncAligned)
	Register(lowerNVVMWgmma, nvvm.WgmmaMmaAsync)
}

// nvvmSimple lowers an op without operands or results to a call of a
// void intrinsic without arguments.
func nvvmSimple(intrinsic string) LowerFunc {
	return func(fe *FuncEmitter, op *ir.Operation) { fe.CallIntrinsic(intrinsic, types.Void) }
}

// lowerNVVMMemoryBarrier lowers nvvm.memory.barrier as upstream does:
// membar.cta, fence.sc.cluster, membar.gl or membar.sys by scope.
func lowerNVVMMemoryBarrier(fe *FuncEmitter, op *ir.Operation) {
	intrinsic := map[string]string{
		"cta": "llvm.nvvm.membar.cta", "cluster": "llvm.nvvm.fence.sc.cluster",
		"gpu": "llvm.nvvm.membar.gl", "sys": "llvm.nvvm.membar.sys",
	}[nvvm.EnumOf(op, "scope")]
	if intrinsic == "" {
		Fail(op, "memory barrier scope %q is not cta, cluster, gpu or sys", nvvm.EnumOf(op, "scope"))
	}
	fe.CallIntrinsic(intrinsic, types.Void)
}

// nvvmOpt returns the lowered value of an optional operand v (as a view
// returns it), or nil when it is absent.
func (fe *FuncEmitter) nvvmOpt(v ir.Value) value.Value {
	if v == nil {
		return nil
	}
	return fe.Val(v)
}

// nvvmPtr returns the pointer operand v of op as an i8 pointer in address
// space as (bitcasting other pointee types, casting other address spaces).
func (fe *FuncEmitter) nvvmPtr(op *ir.Operation, v ir.Value, as types.AddrSpace) value.Value {
	return fe.nvvmPtrValue(op, fe.Val(v), as)
}

func (fe *FuncEmitter) nvvmPtrValue(op *ir.Operation, v value.Value, as types.AddrSpace) value.Value {
	pt, ok := v.Type().(*types.PointerType)
	if !ok {
		Fail(op, "expected a pointer operand, got LLVM type '%s'", v.Type())
	}
	if !pt.ElemType.Equal(types.I8) {
		v = fe.B().NewBitCast(v, PtrTo(types.I8, pt.AddrSpace))
	}
	if pt.AddrSpace != as {
		v = fe.B().NewAddrSpaceCast(v, PtrTo(types.I8, as))
	}
	return v
}

// nvvmPtrSpace returns the address space of an !llvm.ptr operand.
func nvvmPtrSpace(v ir.Value) types.AddrSpace {
	as, _ := llvm.PtrAddrSpace(v.Type())
	return types.AddrSpace(as)
}

// nvvmGuard emits body only when pred (i1) is true.
func (fe *FuncEmitter) nvvmGuard(pred value.Value, body func()) {
	then, cont := fe.NewBlock("pred.then"), fe.NewBlock("pred.cont")
	fe.B().NewCondBr(pred, then, cont)
	fe.SetBlock(then)
	body()
	fe.B().NewBr(cont)
	fe.SetBlock(cont)
}

// ---------------------------------------------------------------- sregs

// nvvmSregs lists the special registers the nvvm dialect reads.
var nvvmSregs = func() []string {
	s := []string{
		"tid.x", "tid.y", "tid.z", "ntid.x", "ntid.y", "ntid.z",
		"ctaid.x", "ctaid.y", "ctaid.z", "nctaid.x", "nctaid.y", "nctaid.z",
		"laneid", "warpsize", "warpid", "nwarpid", "smid", "nsmid", "gridid",
		"clusterid.x", "clusterid.y", "clusterid.z", "nclusterid.x", "nclusterid.y", "nclusterid.z",
		"cluster.ctaid.x", "cluster.ctaid.y", "cluster.ctaid.z",
		"cluster.nctaid.x", "cluster.nctaid.y", "cluster.nctaid.z", "cluster.ctarank", "cluster.nctarank",
		"lanemask.eq", "lanemask.le", "lanemask.lt", "lanemask.ge", "lanemask.gt",
		"clock", "clock64", "globaltimer", "globaltimer.lo",
	}
	for i := 0; i < 32; i++ {
		s = append(s, fmt.Sprintf("envreg%d", i))
	}
	return s
}()

// nvvmSregPrefix is the common prefix of the sreg ops' names
// (nvvm.ReadPtxSregTidX and the others), followed by the register.
const nvvmSregPrefix = "nvvm.read.ptx.sreg."

func nvvmSregOps() []string {
	var ops []string
	for _, s := range nvvmSregs {
		ops = append(ops, nvvmSregPrefix+s)
	}
	return ops
}

// nvvmSregWidth is the width of the value the sreg intrinsic returns.
func nvvmSregWidth(reg string) uint64 {
	switch reg {
	case "clock64", "globaltimer":
		return 64
	}
	return 32
}

func lowerNVVMSreg(fe *FuncEmitter, op *ir.Operation) {
	// Every sreg op declares a result res and an optional range attribute.
	reg := strings.TrimPrefix(op.Name(), nvvmSregPrefix)
	w := nvvmSregWidth(reg)
	it := types.NewInt(w)
	call := fe.CallIntrinsic("llvm.nvvm.read.ptx.sreg."+reg, it)
	if r := llvm.RangeOf(op.Attr("range")); r != nil && uint64(r.Width) == w && r.Lower != r.Upper {
		call.ReturnAttrs = append(call.ReturnAttrs, llRangeAttr{it, r.Lower, r.Upper})
	}
	rt, ok := op.Result(0).Type().(*ir.IntegerType)
	if !ok {
		Fail(op, "reading %%%s into a value of type '%s' is not supported (use an integer type)", reg, op.Result(0).Type())
	}
	var v value.Value = call
	switch {
	case uint64(rt.Width) > w:
		v = fe.B().NewZExt(call, types.NewInt(uint64(rt.Width)))
	case uint64(rt.Width) < w:
		v = fe.B().NewTrunc(call, types.NewInt(uint64(rt.Width)))
	}
	fe.Set(op.Result(0), v)
}

// ------------------------------------------------------------- barriers

func lowerNVVMBarrier(fe *FuncEmitter, op *ir.Operation) {
	b := nvvm.BarrierOp{Op: op}
	id := fe.nvvmOpt(b.BarrierId())
	n := fe.nvvmOpt(b.NumberOfThreads())
	red := nvvm.EnumValue(b.ReductionOp())
	pred := fe.nvvmOpt(b.ReductionPredicate())
	if red != "" || pred != nil {
		if red == "" || pred == nil || id != nil || n != nil {
			Fail(op, "a barrier reduction needs both the operation and the predicate, on barrier 0")
		}
		p := fe.B().NewICmp(enum.IPredNE, pred, I32(0))
		var r value.Value
		if red == "popc" {
			r = fe.CallIntrinsic("llvm.nvvm.barrier.cta.red.popc.aligned.all", types.I32, I32(0), p)
		} else {
			r = fe.B().NewZExt(fe.CallIntrinsic("llvm.nvvm.barrier.cta.red."+red+".aligned.all", types.I1, I32(0), p), types.I32)
		}
		if res := b.Res(); res != nil {
			fe.Set(res, r)
		}
		return
	}
	if b.Res() != nil {
		Fail(op, "a barrier without a reduction has no result")
	}
	if id == nil {
		id = I32(0)
	}
	if n != nil {
		fe.CallIntrinsic("llvm.nvvm.barrier.cta.sync.aligned.count", types.Void, id, n)
	} else {
		fe.CallIntrinsic("llvm.nvvm.barrier.cta.sync.aligned.all", types.Void, id)
	}
}

func lowerNVVMBarrierArrive(fe *FuncEmitter, op *ir.Operation) {
	b := nvvm.BarrierArriveOp{Op: op}
	id := fe.nvvmOpt(b.BarrierId())
	if id == nil {
		id = I32(0)
	}
	fe.CallIntrinsic("llvm.nvvm.barrier.cta.arrive.aligned.count", types.Void, id, fe.Val(b.NumberOfThreads()))
}

// lowerNVVMCluster lowers the cluster barrier ops, which all declare the
// one attribute aligned.
func lowerNVVMCluster(fe *FuncEmitter, op *ir.Operation) {
	name := "llvm.nvvm.barrier." + strings.TrimPrefix(op.Name(), "nvvm.")
	if nvvm.IsTrue(op, "aligned") {
		name += ".aligned"
	}
	fe.CallIntrinsic(name, types.Void)
}

// --------------------------------------------------------------- fences

func lowerNVVMFenceProxy(fe *FuncEmitter, op *ir.Operation) {
	f := nvvm.FenceProxyOp{Op: op}
	kind := nvvm.EnumValue(f.Kind())
	space := nvvm.EnumValue(f.Space())
	var name string
	switch kind {
	case "alias", "async", "async.global":
		name = "llvm.nvvm.fence.proxy." + kind
	case "async.shared":
		if space == "" {
			Fail(op, "async_shared fence requires space attribute")
		}
		name = "llvm.nvvm.fence.proxy.async.shared_" + space
	default:
		Fail(op, "fence.proxy of kind '%s' cannot be compiled", kind)
	}
	fe.CallIntrinsic(name, types.Void)
}

// lowerNVVMFenceTensormap lowers the uni-directional generic->tensormap
// proxy fences (PTX 8.3), acquire and release, which declare the same
// attributes.
func lowerNVVMFenceTensormap(fe *FuncEmitter, op *ir.Operation) {
	if from, to := nvvm.EnumOf(op, "fromProxy"), nvvm.EnumOf(op, "toProxy"); (from != "" && from != "generic") || (to != "" && to != "tensormap") {
		Fail(op, "only generic to tensormap proxy fences can be compiled")
	}
	scope := nvvm.EnumOf(op, "scope")
	if scope == "" {
		scope = "cta"
	}
	fe.Mod.RequirePTX(83, op)
	acq, ok := nvvm.AsFenceProxyAcquire(op)
	if !ok {
		fe.CallIntrinsic("llvm.nvvm.fence.proxy.tensormap_generic.release."+scope, types.Void)
		return
	}
	size := fe.Val(acq.Size())
	if n, ok := constInt(size); !ok || n != 128 {
		Fail(op, "the size of a tensormap acquire fence must be the constant 128 (the size of a CUtensorMap)")
	}
	fe.CallIntrinsic("llvm.nvvm.fence.proxy.tensormap_generic.acquire."+scope, types.Void,
		fe.nvvmPtr(op, acq.Addr(), 0), I32(128))
}

// ------------------------------------------------------------- mbarriers

// nvvmArriveScope returns the scope of an mbarrier arrive or wait ("cta"
// by default) and whether it is relaxed (which needs PTX 8.6).
func (fe *FuncEmitter) nvvmArriveScope(op *ir.Operation) (scope string, relaxed bool) {
	switch scope = nvvm.EnumOf(op, "scope"); scope {
	case "":
		scope = "cta"
	case "cta", "cluster":
	default:
		Fail(op, "mbarrier scope must be either CTA or Cluster")
	}
	if relaxed = nvvm.IsTrue(op, "relaxed"); relaxed {
		fe.Mod.RequirePTX(86, op)
	}
	return scope, relaxed
}

// nvvmSharedSuffix returns ".shared" for an addrspace(3) mbarrier operand
// and "" for a generic one (the two forms of the older mbarrier
// intrinsics).
func nvvmSharedSuffix(op *ir.Operation, mbar ir.Value) (string, types.AddrSpace) {
	switch as := nvvmPtrSpace(mbar); as {
	case 0:
		return "", 0
	case 3:
		return ".shared", 3
	}
	Fail(op, "the mbarrier must be a generic or shared::cta pointer")
	return "", 0
}

func lowerNVVMMbarrierInval(fe *FuncEmitter, op *ir.Operation) {
	inv := nvvm.MbarrierInvalOp{Op: op}
	sfx, as := nvvmSharedSuffix(op, inv.Addr())
	fe.CallIntrinsic("llvm.nvvm.mbarrier.inval"+sfx, types.Void, fe.nvvmPtr(op, inv.Addr(), as))
}

func lowerNVVMMbarrierInit(fe *FuncEmitter, op *ir.Operation) {
	init := nvvm.MbarrierInitOp{Op: op}
	sfx, as := nvvmSharedSuffix(op, init.Addr())
	addr := fe.nvvmPtr(op, init.Addr(), as)
	count := fe.Val(init.Count())
	emit := func() { fe.CallIntrinsic("llvm.nvvm.mbarrier.init"+sfx, types.Void, addr, count) }
	if p := fe.nvvmOpt(init.Predicate()); p != nil {
		fe.nvvmGuard(p, emit)
	} else {
		emit()
	}
}

// nvvmArriveName returns the scoped arrive-family intrinsic name, e.g.
// llvm.nvvm.mbarrier.arrive.expect.tx.relaxed.scope.cta.space.cta.
func nvvmArriveName(base string, relaxed bool, scope string, cluster bool) string {
	name := "llvm.nvvm.mbarrier." + base
	if relaxed {
		name += ".relaxed"
	}
	name += ".scope." + scope
	if cluster {
		return name + ".space.cluster"
	}
	return name + ".space.cta"
}

func lowerNVVMMbarrierArrive(fe *FuncEmitter, op *ir.Operation) {
	a := nvvm.MbarrierArriveOp{Op: op}
	scope, relaxed := fe.nvvmArriveScope(op)
	count := fe.nvvmOpt(a.Count())
	as := nvvmPtrSpace(a.Addr())
	if as == 7 {
		if a.Res() != nil {
			Fail(op, "mbarrier in shared_cluster space cannot return any value")
		}
		if count == nil {
			count = I32(1)
		}
		fe.CallIntrinsic(nvvmArriveName("arrive", relaxed, scope, true), types.Void, fe.nvvmPtr(op, a.Addr(), 7), count)
		return
	}
	var r value.Value
	if count == nil && scope == "cta" && !relaxed {
		sfx, as := nvvmSharedSuffix(op, a.Addr())
		r = fe.CallIntrinsic("llvm.nvvm.mbarrier.arrive"+sfx, types.I64, fe.nvvmPtr(op, a.Addr(), as))
	} else {
		if count == nil {
			count = I32(1)
		}
		r = fe.CallIntrinsic(nvvmArriveName("arrive", relaxed, scope, false), types.I64, fe.nvvmPtr(op, a.Addr(), 3), count)
	}
	if res := a.Res(); res != nil {
		fe.Set(res, r)
	}
}

func lowerNVVMMbarrierNoComplete(fe *FuncEmitter, op *ir.Operation) {
	a := nvvm.MbarrierArriveNocompleteOp{Op: op}
	sfx, as := nvvmSharedSuffix(op, a.Addr())
	r := fe.CallIntrinsic("llvm.nvvm.mbarrier.arrive.noComplete"+sfx, types.I64,
		fe.nvvmPtr(op, a.Addr(), as), fe.Val(a.Count()))
	fe.Set(a.Res(), r)
}

func lowerNVVMMbarrierExpectTx(fe *FuncEmitter, op *ir.Operation) {
	a := nvvm.MbarrierArriveExpectTxOp{Op: op}
	scope, relaxed := fe.nvvmArriveScope(op)
	tx := fe.Val(a.Txcount())
	cluster := nvvmPtrSpace(a.Addr()) == 7
	if cluster && a.Res() != nil {
		Fail(op, "mbarrier in shared_cluster space cannot return any value")
	}
	var as types.AddrSpace = 3
	var ret types.Type = types.I64
	if cluster {
		as, ret = 7, types.Void
	}
	addr := fe.nvvmPtr(op, a.Addr(), as)
	name := nvvmArriveName("arrive.expect.tx", relaxed, scope, cluster)
	if p := fe.nvvmOpt(a.Predicate()); p != nil {
		if a.Res() != nil {
			Fail(op, "return-value is not supported when using predicate")
		}
		fe.nvvmGuard(p, func() { fe.CallIntrinsic(name, ret, addr, tx) })
		return
	}
	r := fe.CallIntrinsic(name, ret, addr, tx)
	if res := a.Res(); res != nil {
		fe.Set(res, r)
	}
}

// mbarrierWaitOp is the view of nvvm.mbarrier.test.wait and try_wait.
type mbarrierWaitOp interface {
	Addr() ir.Value
	StateOrPhase() ir.Value
	Res() ir.Value
}

// lowerNVVMMbarrierWait lowers the non-blocking test.wait and the single
// try_wait (optionally with a time limit); both return whether the phase
// completed.
func lowerNVVMMbarrierWait(fe *FuncEmitter, op *ir.Operation) {
	var w mbarrierWaitOp = nvvm.MbarrierTestWaitOp{Op: op}
	tryWait, isTry := nvvm.AsMbarrierTryWait(op)
	if isTry {
		w = tryWait
	}
	scope, relaxed := fe.nvvmArriveScope(op)
	state := fe.Val(w.StateOrPhase())
	parity := state.Type().Equal(types.I32)
	test := !isTry
	var r value.Value
	if test && !parity && scope == "cta" && !relaxed {
		sfx, as := nvvmSharedSuffix(op, w.Addr())
		r = fe.CallIntrinsic("llvm.nvvm.mbarrier.test.wait"+sfx, types.I1, fe.nvvmPtr(op, w.Addr(), as), state)
	} else {
		nvvmSharedSuffix(op, w.Addr()) // checks the address space
		name := "llvm.nvvm.mbarrier.try.wait"
		if test {
			name = "llvm.nvvm.mbarrier.test.wait"
		}
		if parity {
			name += ".parity"
		}
		args := []value.Value{fe.nvvmPtr(op, w.Addr(), 3), state}
		if isTry {
			if t := fe.nvvmOpt(tryWait.Ticks()); t != nil {
				name += ".tl"
				args = append(args, t)
			}
		}
		if relaxed {
			name += ".relaxed"
		}
		name += ".scope." + scope + ".space.cta"
		r = fe.CallIntrinsic(name, types.I1, args...)
	}
	fe.Set(w.Res(), r)
}

// lowerNVVMMbarrierTryWaitParity waits until the phase with the given
// parity has completed: a loop around try_wait.parity with the suspend
// time hint.
func lowerNVVMMbarrierTryWaitParity(fe *FuncEmitter, op *ir.Operation) {
	w := nvvm.MbarrierTryWaitParityOp{Op: op}
	nvvmSharedSuffix(op, w.Addr())
	addr := fe.nvvmPtr(op, w.Addr(), 3)
	phase, ticks := fe.Val(w.Phase()), fe.Val(w.Ticks())
	loop, done := fe.NewBlock("mbar.wait"), fe.NewBlock("mbar.done")
	fe.B().NewBr(loop)
	fe.SetBlock(loop)
	ok := fe.CallIntrinsic("llvm.nvvm.mbarrier.try.wait.parity.tl.scope.cta.space.cta", types.I1, addr, phase, ticks)
	loop.NewCondBr(ok, done, loop)
	fe.SetBlock(done)
}

func lowerNVVMCpAsyncMbarrierArrive(fe *FuncEmitter, op *ir.Operation) {
	a := nvvm.CpAsyncMbarrierArriveOp{Op: op}
	sfx, as := nvvmSharedSuffix(op, a.Addr())
	name := "llvm.nvvm.cp.async.mbarrier.arrive"
	if nvvm.IsTrue(op, "noinc") {
		name += ".noinc"
	}
	fe.CallIntrinsic(name+sfx, types.Void, fe.nvvmPtr(op, a.Addr(), as))
}

// -------------------------------------------------------------------- TMA

// nvvmAsmPtrConstraint is the inline-asm register class of a pointer in
// address space as: 32-bit for the shared/const/local spaces (see the data
// layout), 64-bit otherwise.
func nvvmAsmPtrConstraint(as types.AddrSpace) string {
	switch as {
	case 3, 4, 5, 6, 7:
		return "r"
	}
	return "l"
}

// nvvmAsmOperands accumulates inline-asm operands and their constraints.
type nvvmAsmOperands struct {
	args []value.Value
	cons []string
}

// add appends an operand and returns its "$n" reference.
func (a *nvvmAsmOperands) add(v value.Value, constraint string) string {
	a.args = append(a.args, v)
	a.cons = append(a.cons, constraint)
	return fmt.Sprintf("$%d", len(a.args)-1)
}

// list appends operands and returns "$i, $j, ..." for them.
func (a *nvvmAsmOperands) list(vs []value.Value, constraint string) string {
	var refs []string
	for _, v := range vs {
		refs = append(refs, a.add(v, constraint))
	}
	return strings.Join(refs, ", ")
}

// nvvmTMAMode checks a TMA load/prefetch mode and its coordinate and
// im2col offset counts, returning the intrinsic's mode name.
func nvvmTMAMode(op *ir.Operation, mode string, dims, offsets int) string {
	switch mode {
	case "", "tile":
		mode = "tile"
	case "im2col":
	case "im2col_w", "im2col_w_128", "tile_gather4", "tile_scatter4":
		Fail(op, "TMA mode '%s' needs sm_100; it cannot be compiled for sm_90a", mode)
	default:
		Fail(op, "unknown TMA mode '%s'", mode)
	}
	if dims < 1 || dims > 5 {
		Fail(op, "expects coordinates between 1 to 5 dimension")
	}
	want := 0
	if mode == "im2col" {
		if dims < 3 {
			Fail(op, "to use im2col mode, the tensor has to be at least 3-dimensional")
		}
		want = dims - 2
	}
	if offsets != want {
		Fail(op, "im2col offsets expected %d (provided %d)", want, offsets)
	}
	return mode
}

func lowerNVVMTMALoad(fe *FuncEmitter, op *ir.Operation) {
	ld := nvvm.CpAsyncBulkTensorSharedClusterGlobalOp{Op: op}
	if ld.Group() != nil {
		Fail(op, "TMA loads with a CTA group need sm_100; they cannot be compiled for sm_90a")
	}
	coords := fe.Vals(ld.Coordinates())
	offsets := fe.Vals(ld.Im2colOffsets())
	mode := nvvmTMAMode(op, nvvm.EnumValue(ld.Mode()), len(coords), len(offsets))
	ctaOnly := nvvm.IsTrue(op, "isCTAOnly")
	if ctaOnly {
		fe.Mod.RequirePTX(86, op)
	}
	tmap := fe.nvvmPtr(op, ld.TmaDescriptor(), 0)
	mbar := fe.nvvmPtr(op, ld.Mbar(), 3)
	mask, hint := fe.nvvmOpt(ld.MulticastMask()), fe.nvvmOpt(ld.L2CacheHint())
	dims := len(coords)

	if pred := fe.nvvmOpt(ld.Predicate()); pred != nil {
		if ctaOnly {
			Fail(op, "Predicate is supported only for shared::cluster mode.")
		}
		// No intrinsic takes a predicate: inline PTX.
		dstAS := nvvmPtrSpace(ld.DstMem())
		var a nvvmAsmOperands
		dst := a.add(fe.nvvmPtr(op, ld.DstMem(), dstAS), nvvmAsmPtrConstraint(dstAS))
		tm := a.add(tmap, "l")
		cs := a.list(coords, "r")
		mb := a.add(mbar, "r")
		var sb strings.Builder
		fmt.Fprintf(&sb, "cp.async.bulk.tensor.%dd.shared::cluster.global.%s.mbarrier::complete_tx::bytes", dims, mode)
		tail := ""
		if len(offsets) > 0 {
			tail += ", {" + a.list(offsets, "h") + "}"
		}
		if mask != nil {
			sb.WriteString(".multicast::cluster")
			tail += ", " + a.add(mask, "h")
		}
		if hint != nil {
			sb.WriteString(".L2::cache_hint")
			tail += ", " + a.add(hint, "l")
		}
		p := a.add(pred, "b")
		asm := fmt.Sprintf("@%s %s [%s], [%s, {%s}], [%s]%s;", p, sb.String(), dst, tm, cs, mb, tail)
		fe.InlineAsm(types.Void, asm, strings.Join(a.cons, ","), true, a.args...)
		return
	}

	var args []value.Value
	var name string
	if hint == nil {
		hint = I64(0)
	}
	hasHint := nvvmFlag(ld.L2CacheHint() != nil)
	if ctaOnly {
		if mask != nil {
			Fail(op, "Multicast is not supported with shared::cta mode.")
		}
		name = fmt.Sprintf("llvm.nvvm.cp.async.bulk.tensor.g2s.cta.%s.%dd", mode, dims)
		args = append(args, fe.nvvmPtr(op, ld.DstMem(), 3), mbar, tmap)
		args = append(append(args, coords...), offsets...)
		args = append(args, hint, hasHint)
	} else {
		hasMask := nvvmFlag(mask != nil)
		if mask == nil {
			mask = constant.NewInt(types.I16, 0)
		}
		name = fmt.Sprintf("llvm.nvvm.cp.async.bulk.tensor.g2s.%s.%dd", mode, dims)
		args = append(args, fe.nvvmPtr(op, ld.DstMem(), 7), mbar, tmap)
		args = append(append(args, coords...), offsets...)
		args = append(args, mask, hint, hasMask, hasHint, I32(0))
	}
	fe.CallIntrinsic(name, types.Void, args...)
}

func lowerNVVMTMAStore(fe *FuncEmitter, op *ir.Operation) {
	st := nvvm.CpAsyncBulkTensorGlobalSharedCtaOp{Op: op}
	coords := fe.Vals(st.Coordinates())
	dims := len(coords)
	mode := nvvm.EnumValue(st.Mode())
	switch mode {
	case "", "tile":
		mode = "tile"
	case "im2col":
		if dims < 3 {
			Fail(op, "to use im2col mode, the tensor has to be at least 3-dimensional")
		}
	case "tile_scatter4":
		Fail(op, "TMA mode 'tile_scatter4' needs sm_100; it cannot be compiled for sm_90a")
	default:
		Fail(op, "unknown TMA store mode '%s'", mode)
	}
	if dims < 1 || dims > 5 {
		Fail(op, "expects coordinates between 1 to 5 dimension")
	}
	tmap := fe.nvvmPtr(op, st.TmaDescriptor(), 0)
	src := fe.nvvmPtr(op, st.SrcMem(), 3)
	hint := fe.nvvmOpt(st.L2CacheHint())
	if pred := fe.nvvmOpt(st.Predicate()); pred != nil {
		if mode != "tile" || hint != nil {
			Fail(op, "a predicated TMA store must be a tile-mode store without an L2 cache hint")
		}
		var a nvvmAsmOperands
		tm := a.add(tmap, "l")
		cs := a.list(coords, "r")
		s := a.add(src, "r")
		p := a.add(pred, "b")
		asm := fmt.Sprintf("@%s cp.async.bulk.tensor.%dd.global.shared::cta.tile.bulk_group [%s, {%s}], [%s];", p, dims, tm, cs, s)
		fe.InlineAsm(types.Void, asm, strings.Join(a.cons, ","), true, a.args...)
		return
	}
	hasHint := nvvmFlag(hint != nil)
	if hint == nil {
		hint = I64(0)
	}
	args := append([]value.Value{src, tmap}, coords...)
	args = append(args, hint, hasHint)
	fe.CallIntrinsic(fmt.Sprintf("llvm.nvvm.cp.async.bulk.tensor.s2g.%s.%dd", mode, dims), types.Void, args...)
}

func lowerNVVMTMAPrefetch(fe *FuncEmitter, op *ir.Operation) {
	pf := nvvm.CpAsyncBulkTensorPrefetchOp{Op: op}
	coords := fe.Vals(pf.Coordinates())
	offsets := fe.Vals(pf.Im2colOffsets())
	mode := nvvmTMAMode(op, nvvm.EnumValue(pf.Mode()), len(coords), len(offsets))
	hint := fe.nvvmOpt(pf.L2CacheHint())
	hasHint := nvvmFlag(hint != nil)
	if hint == nil {
		hint = I64(0)
	}
	args := append([]value.Value{fe.nvvmPtr(op, pf.TmaDescriptor(), 0)}, coords...)
	args = append(append(args, offsets...), hint, hasHint)
	fe.CallIntrinsic(fmt.Sprintf("llvm.nvvm.cp.async.bulk.tensor.prefetch.%s.%dd", mode, len(coords)), types.Void, args...)
}

func lowerNVVMBulkWaitGroup(fe *FuncEmitter, op *ir.Operation) {
	name := "llvm.nvvm.cp.async.bulk.wait.group"
	if nvvm.IsTrue(op, "read") {
		name += ".read"
	}
	fe.CallIntrinsic(name, types.Void, I32(nvvm.AttrInt(op, "group", 0)))
}

// nvvmFlag returns the i1 constant b (the flag arguments of intrinsics).
func nvvmFlag(b bool) value.Value { return constant.NewBool(b) }

// ---------------------------------------------------------- cp.async

func lowerNVVMCpAsync(fe *FuncEmitter, op *ir.Operation) {
	cp := nvvm.CpAsyncSharedGlobalOp{Op: op}
	size := nvvm.AttrInt(op, "size", 0)
	mod := nvvm.EnumValue(cp.Modifier())
	switch {
	case mod != "ca" && mod != "cg":
		Fail(op, "Only CG and CA cache modifiers are supported.")
	case size != 4 && size != 8 && size != 16:
		Fail(op, "expected byte size to be either 4, 8 or 16.")
	case mod == "cg" && size != 16:
		Fail(op, "CG cache modifier is only support for 16 bytes copy.")
	}
	name := fmt.Sprintf("llvm.nvvm.cp.async.%s.shared.global.%d", mod, size)
	args := []value.Value{fe.nvvmPtr(op, cp.Dst(), 3), fe.nvvmPtr(op, cp.Src(), 1)}
	if n := fe.nvvmOpt(cp.CpSize()); n != nil {
		name += ".s"
		args = append(args, n)
	}
	fe.CallIntrinsic(name, types.Void, args...)
}

// ------------------------------------------------------------ warp level

func lowerNVVMElectSync(fe *FuncEmitter, op *ir.Operation) {
	e := nvvm.ElectSyncOp{Op: op}
	mask := fe.nvvmOpt(e.Membermask())
	if mask == nil {
		mask = I32(-1)
	}
	r := fe.CallIntrinsic("llvm.nvvm.elect.sync", types.NewStruct(types.I32, types.I1), mask)
	fe.Set(e.Pred(), fe.B().NewExtractValue(r, 1))
}

func lowerNVVMShfl(fe *FuncEmitter, op *ir.Operation) {
	sh := nvvm.ShflSyncOp{Op: op}
	kind := nvvm.EnumValue(sh.Kind())
	val := fe.Val(sh.Val())
	suffix := "i32"
	if val.Type().Equal(types.Float) {
		suffix = "f32"
	}
	if nvvm.IsTrue(op, "return_value_and_is_valid") {
		suffix += "p"
	}
	rt := fe.Type(op, sh.Res().Type())
	r := fe.CallIntrinsic("llvm.nvvm.shfl.sync."+kind+"."+suffix, rt,
		fe.Val(sh.ThreadMask()), val, fe.Val(sh.Offset()), fe.Val(sh.MaskAndClamp()))
	fe.Set(sh.Res(), r)
}

func lowerNVVMVote(fe *FuncEmitter, op *ir.Operation) {
	v := nvvm.VoteSyncOp{Op: op}
	kind := nvvm.EnumValue(v.Kind())
	var rt types.Type = types.I1
	if kind == "ballot" {
		rt = types.I32
	}
	r := fe.CallIntrinsic("llvm.nvvm.vote."+kind+".sync", rt, fe.Val(v.Mask()), fe.Val(v.Pred()))
	fe.Set(v.Res(), r)
}

func lowerNVVMSetMaxReg(fe *FuncEmitter, op *ir.Operation) {
	n := nvvm.AttrInt(op, "regCount", 0)
	if n < 24 || n > 256 || n%8 != 0 {
		Fail(op, "new register size must be a multiple of 8 between 24 and 256")
	}
	dir := "inc"
	if nvvm.EnumOf(op, "action") == "decrease" {
		dir = "dec"
	}
	fe.CallIntrinsic("llvm.nvvm.setmaxnreg."+dir+".sync.aligned.u32", types.Void, I32(n))
}

func lowerNVVMPrefetch(fe *FuncEmitter, op *ir.Operation) {
	pf := nvvm.PrefetchOp{Op: op}
	as := nvvmPtrSpace(pf.Addr())
	pred := fe.nvvmOpt(pf.Predicate())
	if nvvm.IsTrue(op, "tensormap") {
		addr := fe.nvvmPtr(op, pf.Addr(), as)
		suffix := ".p0"
		switch {
		case as == 4:
			suffix = ".p4"
		case as == 0 && nvvm.IsTrue(op, "in_param_space"):
			addr = fe.nvvmPtrValue(op, addr, 101)
			suffix = ".p101"
		case as != 0:
			Fail(op, "prefetch tensormap requires a generic or constant pointer")
		}
		emit := func() { fe.CallIntrinsic("llvm.nvvm.prefetch.tensormap"+suffix, types.Void, addr) }
		if pred != nil {
			fe.nvvmGuard(pred, emit)
		} else {
			emit()
		}
		return
	}
	if pred != nil {
		Fail(op, "predicate supported only on prefetch tensormap")
	}
	level := nvvm.EnumOf(op, "cacheLevel")
	if level != "L1" && level != "L2" {
		Fail(op, "requires specification of either cache level or tensormap")
	}
	evict := nvvm.EnumOf(op, "evictPriority")
	var name string
	switch {
	case nvvm.IsTrue(op, "uniform"):
		if level != "L1" || as != 0 {
			Fail(op, "prefetch to the uniform cache needs level L1 and a generic pointer")
		}
		name = "llvm.nvvm.prefetchu.L1"
	case evict != "":
		if level != "L2" || as != 1 || (evict != "evict_last" && evict != "evict_normal") {
			Fail(op, "cache eviction priority needs level L2, a global pointer and evict_last or evict_normal")
		}
		name = "llvm.nvvm.prefetch.global.L2." + strings.ReplaceAll(evict, "_", ".")
	default:
		switch as {
		case 0:
			name = "llvm.nvvm.prefetch." + level
		case 1:
			name = "llvm.nvvm.prefetch.global." + level
		case 5:
			name = "llvm.nvvm.prefetch.local." + level
		default:
			Fail(op, "prefetch to cache level requires a generic, global, or local pointer")
		}
	}
	fe.CallIntrinsic(name, types.Void, fe.nvvmPtr(op, pf.Addr(), as))
}

// -------------------------------------------------------- ld/st matrix

// nvvmMatrixShape returns the m and n of an ld/stmatrix shape attribute.
func nvvmMatrixShape(shape ir.Attribute) (int64, int64) {
	if d := nvvm.ShapeOf(shape); d != nil {
		return d.M, d.N
	}
	return 0, 0
}

func lowerNVVMLdMatrix(fe *FuncEmitter, op *ir.Operation) {
	ld := nvvm.LdmatrixOp{Op: op}
	m, n := nvvmMatrixShape(ld.Shape())
	elt := nvvm.EnumValue(ld.EltType())
	num := nvvm.AttrInt(op, "num", 0)
	if m != 8 || n != 8 || elt != "b16" {
		Fail(op, "ldmatrix of %dx%d %s matrices needs sm_100; only 8x8 b16 matrices can be compiled for sm_90a", m, n, elt)
	}
	if num != 1 && num != 2 && num != 4 {
		Fail(op, "expected num attribute to be 1, 2 or 4 for 8x8 matrix")
	}
	trans := ""
	if nvvm.EnumValue(ld.Layout()) == "col" {
		trans = ".trans"
	}
	var rt types.Type = types.I32
	if num > 1 {
		fields := make([]types.Type, num)
		for i := range fields {
			fields[i] = types.I32
		}
		rt = types.NewStruct(fields...)
	}
	if want := fe.Type(op, ld.Res().Type()); !want.Equal(rt) {
		Fail(op, "the result of an ldmatrix of %d matrices must be '%s'", num, rt)
	}
	name := fmt.Sprintf("llvm.nvvm.ldmatrix.sync.aligned.m8n8.x%d%s.b16.p3", num, trans)
	fe.Set(ld.Res(), fe.CallIntrinsic(name, rt, fe.nvvmPtr(op, ld.Ptr(), 3)))
}

func lowerNVVMStMatrix(fe *FuncEmitter, op *ir.Operation) {
	st := nvvm.StmatrixOp{Op: op}
	m, n := nvvmMatrixShape(st.Shape())
	elt := nvvm.EnumValue(st.EltType())
	if m != 8 || n != 8 || elt != "b16" {
		Fail(op, "stmatrix of %dx%d %s matrices needs sm_100; only 8x8 b16 matrices can be compiled for sm_90a", m, n, elt)
	}
	srcs := fe.Vals(st.Sources())
	if k := len(srcs); k != 1 && k != 2 && k != 4 {
		Fail(op, "expected num attribute to be 1, 2 or 4")
	}
	trans := ""
	if nvvm.EnumValue(st.Layout()) == "col" {
		trans = ".trans"
	}
	name := fmt.Sprintf("llvm.nvvm.stmatrix.sync.aligned.m8n8.x%d%s.b16.p3", len(srcs), trans)
	fe.CallIntrinsic(name, types.Void, append([]value.Value{fe.nvvmPtr(op, st.Ptr(), 3)}, srcs...)...)
}

// ----------------------------------------------------------------- wgmma

// nvvmWgmmaAsm returns the PTX of a wgmma.mma_async with nacc accumulator
// registers $0..$(nacc-1) (tied to inputs $nacc..$(2nacc-1)), descriptors
// $(2nacc) and $(2nacc+1), and the scale-d immediate $(2nacc+2).
func nvvmWgmmaAsm(m, n, k int64, a, b, d string, satfinite bool, scaleA, scaleB, layoutA, layoutB string, nacc int) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "{\n.reg .pred p;\nsetp.ne.b32 p, $%d, 0;\nwgmma.mma_async.sync.aligned.m%dn%dk%d", 2*nacc+2, m, n, k)
	if satfinite {
		sb.WriteString(".satfinite")
	}
	fmt.Fprintf(&sb, ".%s.%s.%s", d, a, b)
	if a == "b1" {
		sb.WriteString(".and.popc")
	}
	regs := make([]string, nacc)
	for i := range regs {
		regs[i] = fmt.Sprintf("$%d", i)
	}
	fmt.Fprintf(&sb, " {%s}, $%d, $%d, p", strings.Join(regs, ", "), 2*nacc, 2*nacc+1)
	imm := func(s string) string {
		if s == "neg" {
			return "-1"
		}
		return "1"
	}
	switch a {
	case "f16", "bf16", "tf32", "e4m3", "e5m2":
		// Floating-point inputs take the input scales.
		fmt.Fprintf(&sb, ", %s, %s", imm(scaleA), imm(scaleB))
	}
	if a == "f16" || a == "bf16" {
		// ... and 16-bit ones the transposes (A is K-major when row-major,
		// B when column-major).
		ta, tb := 0, 0
		if layoutA == "col" {
			ta = 1
		}
		if layoutB == "row" {
			tb = 1
		}
		fmt.Fprintf(&sb, ", %d, %d", ta, tb)
	}
	sb.WriteString(";\n}\n")
	return sb.String()
}

// wgmmaAccumulatorOperands returns the inline-asm operands of a wgmma's
// nacc accumulator registers (of type reg, constraint class cons): the
// registers of acc as inputs tied to outputs $0..$(nacc-1), and the
// constraints of those outputs and inputs.
func wgmmaAccumulatorOperands(fe *FuncEmitter, acc value.Value, nacc int, reg types.Type, cons string) ([]value.Value, []string) {
	var args []value.Value
	var constraints []string
	for i := 0; i < nacc; i++ {
		constraints = append(constraints, "="+cons)
	}
	for i := 0; i < nacc; i++ {
		var x value.Value = fe.B().NewExtractValue(acc, uint64(i))
		if !x.Type().Equal(reg) {
			x = fe.B().NewBitCast(x, reg)
		}
		args = append(args, x)
		constraints = append(constraints, fmt.Sprint(i))
	}
	return args, constraints
}

func lowerNVVMWgmma(fe *FuncEmitter, op *ir.Operation) {
	w := nvvm.WgmmaMmaAsyncOp{Op: op}
	_, _, sd := nvvm.WGMMAScales(op)
	scaleD := int64(1)
	if sd == "zero" {
		scaleD = 0
	}
	emitWgmmaSS(fe, op, w.Inouts(), w.DescriptorA(), w.DescriptorB(), w.Results(), I32(scaleD), "n")
}

// emitWgmmaSS emits a wgmma.mma_async with both operands through
// descriptors (op's shape, type, layout and scale attributes): scaleD is
// the i32 that sets its scale-d predicate, an immediate (constraint "n")
// or a register ("r", tmac.wgmma.mma_async.scale_d).
func emitWgmmaSS(fe *FuncEmitter, op *ir.Operation, inouts, descA, descB, result ir.Value, scaleD value.Value, scaleCons string) {
	m, n, k := nvvm.WGMMAShape(op)
	ta, tb, td := nvvm.WGMMATypes(op)
	sa, sb, _ := nvvm.WGMMAScales(op)
	la, lb := nvvm.WGMMALayouts(op)
	st, ok := fe.Type(op, result.Type()).(*types.StructType)
	if !ok {
		Fail(op, "the accumulator of wgmma.mma_async must be an LLVM struct")
	}
	nacc := int(n / 2)
	var reg types.Type = types.Float
	cons := "f"
	switch td {
	case "f32":
	case "s32":
		reg, cons = types.I32, "r"
	case "f16":
		// Pairs of halves in 32-bit registers.
		nacc = int(n / 4)
		reg, cons = types.I32, "r"
	default:
		Fail(op, "does not support the given output type %s", td)
	}
	if len(st.Fields) != nacc {
		Fail(op, "results %d, however output struct has %d elements", nacc, len(st.Fields))
	}
	for _, f := range st.Fields {
		if td == "f16" {
			if !f.Equal(types.I32) && !f.Equal(types.NewVector(2, types.Half)) {
				Fail(op, "an f16 accumulator must hold pairs of halves: a struct of vector<2xf16> or i32, not of '%s'", f)
			}
		} else if !f.Equal(reg) {
			Fail(op, "the accumulator elements must be '%s', not '%s'", reg, f)
		}
	}
	args, constraints := wgmmaAccumulatorOperands(fe, fe.Val(inouts), nacc, reg, cons)
	args = append(args, fe.Val(descA), fe.Val(descB), scaleD)
	constraints = append(constraints, "l", "l", scaleCons)
	satfinite := nvvm.EnumValue(op.Attr("satfinite")) == "satfinite"
	asm := nvvmWgmmaAsm(m, n, k, ta, tb, td, satfinite, sa, sb, la, lb, nacc)
	regFields := make([]types.Type, nacc)
	for i := range regFields {
		regFields[i] = reg
	}
	rs := types.NewStruct(regFields...)
	res := value.Value(fe.InlineAsm(rs, asm, strings.Join(constraints, ","), true, args...))
	if !rs.Equal(st) {
		// Rebuild the struct of the IR type (vector<2xf16> elements).
		var out value.Value = zeroUndef(st)
		for i, f := range st.Fields {
			x := value.Value(fe.B().NewExtractValue(res, uint64(i)))
			if !f.Equal(reg) {
				x = fe.B().NewBitCast(x, f)
			}
			out = fe.B().NewInsertValue(out, x, uint64(i))
		}
		res = out
	}
	fe.Set(result, res)
}

// lowerNVVMMapa maps a shared memory address (space 3, to the cluster's
// shared window, space 7) or a generic one to the same variable in the
// cluster's CTA b.
func lowerNVVMMapa(fe *FuncEmitter, op *ir.Operation) {
	m := nvvm.MapaOp{Op: op}
	cta := fe.Val(m.B())
	if nvvmPtrSpace(m.A()) == 3 {
		fe.Set(m.Res(), fe.CallIntrinsic("llvm.nvvm.mapa.shared.cluster", PtrTo(types.I8, 7), fe.nvvmPtr(op, m.A(), 3), cta))
		return
	}
	fe.Set(m.Res(), fe.CallIntrinsic("llvm.nvvm.mapa", PtrTo(types.I8, 0), fe.nvvmPtr(op, m.A(), 0), cta))
}
