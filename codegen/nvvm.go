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
	Register(func(fe *FuncEmitter, op *ir.Operation) { fe.gpuBarrier() }, "nvvm.barrier0")
	Register(lowerNVVMBarrier, "nvvm.barrier")
	Register(lowerNVVMBarrierArrive, "nvvm.barrier.arrive")
	Register(lowerNVVMCluster, "nvvm.cluster.arrive", "nvvm.cluster.arrive.relaxed", "nvvm.cluster.wait")
	Register(lowerNVVMFenceProxy, "nvvm.fence.proxy")
	Register(lowerNVVMFenceTensormap, "nvvm.fence.proxy.acquire", "nvvm.fence.proxy.release")
	Register(nvvmSimple("llvm.nvvm.fence.mbarrier_init.release.cluster"), "nvvm.fence.mbarrier.init")
	Register(nvvmSimple("llvm.nvvm.fence.sc.cluster"), "nvvm.fence.sc.cluster")
	Register(lowerNVVMMbarrierInitInval, "nvvm.mbarrier.init", "nvvm.mbarrier.inval")
	Register(lowerNVVMMbarrierArrive, "nvvm.mbarrier.arrive")
	Register(lowerNVVMMbarrierNoComplete, "nvvm.mbarrier.arrive.nocomplete")
	Register(lowerNVVMMbarrierExpectTx, "nvvm.mbarrier.arrive.expect_tx")
	Register(lowerNVVMMbarrierWait, "nvvm.mbarrier.test.wait", "nvvm.mbarrier.try_wait")
	Register(lowerNVVMMbarrierTryWaitParity, "nvvm.mbarrier.try_wait.parity")
	Register(lowerNVVMTMALoad, "nvvm.cp.async.bulk.tensor.shared.cluster.global")
	Register(lowerNVVMTMAStore, "nvvm.cp.async.bulk.tensor.global.shared.cta")
	Register(lowerNVVMTMAPrefetch, "nvvm.cp.async.bulk.tensor.prefetch")
	Register(nvvmSimple("llvm.nvvm.cp.async.bulk.commit.group"), "nvvm.cp.async.bulk.commit.group")
	Register(lowerNVVMBulkWaitGroup, "nvvm.cp.async.bulk.wait_group")
	Register(lowerNVVMCpAsync, "nvvm.cp.async.shared.global")
	Register(nvvmSimple("llvm.nvvm.cp.async.commit.group"), "nvvm.cp.async.commit.group")
	Register(func(fe *FuncEmitter, op *ir.Operation) {
		fe.CallIntrinsic("llvm.nvvm.cp.async.wait.group", types.Void, I32(nvvm.AttrInt(op, "n", 0)))
	}, "nvvm.cp.async.wait.group")
	Register(lowerNVVMCpAsyncMbarrierArrive, "nvvm.cp.async.mbarrier.arrive")
	Register(lowerNVVMElectSync, "nvvm.elect.sync")
	Register(lowerNVVMMapa, "nvvm.mapa")
	Register(lowerNVVMShfl, "nvvm.shfl.sync")
	Register(lowerNVVMVote, "nvvm.vote.sync")
	Register(lowerNVVMSetMaxReg, "nvvm.setmaxregister")
	Register(lowerNVVMPrefetch, "nvvm.prefetch")
	Register(lowerNVVMLdMatrix, "nvvm.ldmatrix")
	Register(lowerNVVMStMatrix, "nvvm.stmatrix")
	Register(nvvmSimple("llvm.nvvm.wgmma.fence.sync.aligned"), "nvvm.wgmma.fence.aligned")
	Register(nvvmSimple("llvm.nvvm.wgmma.commit_group.sync.aligned"), "nvvm.wgmma.commit.group.sync.aligned")
	Register(func(fe *FuncEmitter, op *ir.Operation) {
		fe.CallIntrinsic("llvm.nvvm.wgmma.wait_group.sync.aligned", types.Void, I64(nvvm.AttrInt(op, "group", 0)))
	}, "nvvm.wgmma.wait.group.sync.aligned")
	Register(lowerNVVMWgmma, "nvvm.wgmma.mma_async")
}

// nvvmSimple lowers an op without operands or results to a call of a
// void intrinsic without arguments.
func nvvmSimple(intrinsic string) LowerFunc {
	return func(fe *FuncEmitter, op *ir.Operation) { fe.CallIntrinsic(intrinsic, types.Void) }
}

// nvvmOpt returns the value of an optional operand group, or nil.
func (fe *FuncEmitter) nvvmOpt(op *ir.Operation, name string) value.Value {
	if vs := op.OperandGroup(name); len(vs) == 1 {
		return fe.Val(vs[0])
	}
	return nil
}

// nvvmPtr returns operand name of op as an i8 pointer in address space as
// (bitcasting other pointee types, casting other address spaces).
func (fe *FuncEmitter) nvvmPtr(op *ir.Operation, name string, as types.AddrSpace) value.Value {
	return fe.nvvmPtrValue(op, fe.Val(op.OperandNamed(name)), as)
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
func nvvmPtrSpace(op *ir.Operation, name string) types.AddrSpace {
	as, _ := llvm.PtrAddrSpace(op.OperandNamed(name).Type())
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

func nvvmSregOps() []string {
	var ops []string
	for _, s := range nvvmSregs {
		ops = append(ops, "nvvm.read.ptx.sreg."+s)
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
	reg := strings.TrimPrefix(op.Name(), "nvvm.read.ptx.sreg.")
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
	id := fe.nvvmOpt(op, "barrierId")
	n := fe.nvvmOpt(op, "numberOfThreads")
	red := nvvm.EnumOf(op, "reductionOp")
	pred := fe.nvvmOpt(op, "reductionPredicate")
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
		if op.NumResults() == 1 {
			fe.Set(op.Result(0), r)
		}
		return
	}
	if op.NumResults() == 1 {
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
	id := fe.nvvmOpt(op, "barrierId")
	if id == nil {
		id = I32(0)
	}
	fe.CallIntrinsic("llvm.nvvm.barrier.cta.arrive.aligned.count", types.Void, id, fe.Val(op.OperandNamed("numberOfThreads")))
}

func lowerNVVMCluster(fe *FuncEmitter, op *ir.Operation) {
	name := "llvm.nvvm.barrier." + strings.TrimPrefix(op.Name(), "nvvm.")
	if nvvm.IsTrue(op, "aligned") {
		name += ".aligned"
	}
	fe.CallIntrinsic(name, types.Void)
}

// --------------------------------------------------------------- fences

func lowerNVVMFenceProxy(fe *FuncEmitter, op *ir.Operation) {
	kind := nvvm.EnumOf(op, "kind")
	space := nvvm.EnumOf(op, "space")
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
// proxy fences (PTX 8.3).
func lowerNVVMFenceTensormap(fe *FuncEmitter, op *ir.Operation) {
	if from, to := nvvm.EnumOf(op, "fromProxy"), nvvm.EnumOf(op, "toProxy"); (from != "" && from != "generic") || (to != "" && to != "tensormap") {
		Fail(op, "only generic to tensormap proxy fences can be compiled")
	}
	scope := nvvm.EnumOf(op, "scope")
	if scope == "" {
		scope = "cta"
	}
	fe.Mod.RequirePTX(83, op)
	if op.Name() == "nvvm.fence.proxy.release" {
		fe.CallIntrinsic("llvm.nvvm.fence.proxy.tensormap_generic.release."+scope, types.Void)
		return
	}
	size := fe.Val(op.OperandNamed("size"))
	if n, ok := constInt(size); !ok || n != 128 {
		Fail(op, "the size of a tensormap acquire fence must be the constant 128 (the size of a CUtensorMap)")
	}
	fe.CallIntrinsic("llvm.nvvm.fence.proxy.tensormap_generic.acquire."+scope, types.Void,
		fe.nvvmPtr(op, "addr", 0), I32(128))
}

// ------------------------------------------------------------- mbarriers

// nvvmScope returns the scope attribute of an mbarrier op ("cta" by default).
func nvvmScope(op *ir.Operation) string {
	s := nvvm.EnumOf(op, "scope")
	switch s {
	case "":
		return "cta"
	case "cta", "cluster":
		return s
	}
	Fail(op, "mbarrier scope must be either CTA or Cluster")
	return ""
}

// nvvmSharedSuffix returns ".shared" for an addrspace(3) operand and ""
// for a generic one (the two forms of the older mbarrier intrinsics).
func nvvmSharedSuffix(op *ir.Operation, name string) (string, types.AddrSpace) {
	switch as := nvvmPtrSpace(op, name); as {
	case 0:
		return "", 0
	case 3:
		return ".shared", 3
	}
	Fail(op, "the mbarrier must be a generic or shared::cta pointer")
	return "", 0
}

func lowerNVVMMbarrierInitInval(fe *FuncEmitter, op *ir.Operation) {
	sfx, as := nvvmSharedSuffix(op, "addr")
	addr := fe.nvvmPtr(op, "addr", as)
	if op.Name() == "nvvm.mbarrier.inval" {
		fe.CallIntrinsic("llvm.nvvm.mbarrier.inval"+sfx, types.Void, addr)
		return
	}
	count := fe.Val(op.OperandNamed("count"))
	emit := func() { fe.CallIntrinsic("llvm.nvvm.mbarrier.init"+sfx, types.Void, addr, count) }
	if p := fe.nvvmOpt(op, "predicate"); p != nil {
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
	scope := nvvmScope(op)
	relaxed := nvvm.IsTrue(op, "relaxed")
	if relaxed {
		fe.Mod.RequirePTX(86, op)
	}
	count := fe.nvvmOpt(op, "count")
	as := nvvmPtrSpace(op, "addr")
	if as == 7 {
		if op.NumResults() > 0 {
			Fail(op, "mbarrier in shared_cluster space cannot return any value")
		}
		if count == nil {
			count = I32(1)
		}
		fe.CallIntrinsic(nvvmArriveName("arrive", relaxed, scope, true), types.Void, fe.nvvmPtr(op, "addr", 7), count)
		return
	}
	var r value.Value
	if count == nil && scope == "cta" && !relaxed {
		sfx, as := nvvmSharedSuffix(op, "addr")
		r = fe.CallIntrinsic("llvm.nvvm.mbarrier.arrive"+sfx, types.I64, fe.nvvmPtr(op, "addr", as))
	} else {
		if count == nil {
			count = I32(1)
		}
		r = fe.CallIntrinsic(nvvmArriveName("arrive", relaxed, scope, false), types.I64, fe.nvvmPtr(op, "addr", 3), count)
	}
	if op.NumResults() > 0 {
		fe.Set(op.Result(0), r)
	}
}

func lowerNVVMMbarrierNoComplete(fe *FuncEmitter, op *ir.Operation) {
	sfx, as := nvvmSharedSuffix(op, "addr")
	r := fe.CallIntrinsic("llvm.nvvm.mbarrier.arrive.noComplete"+sfx, types.I64,
		fe.nvvmPtr(op, "addr", as), fe.Val(op.OperandNamed("count")))
	fe.Set(op.Result(0), r)
}

func lowerNVVMMbarrierExpectTx(fe *FuncEmitter, op *ir.Operation) {
	scope := nvvmScope(op)
	relaxed := nvvm.IsTrue(op, "relaxed")
	if relaxed {
		fe.Mod.RequirePTX(86, op)
	}
	tx := fe.Val(op.OperandNamed("txcount"))
	cluster := nvvmPtrSpace(op, "addr") == 7
	if cluster && op.NumResults() > 0 {
		Fail(op, "mbarrier in shared_cluster space cannot return any value")
	}
	var as types.AddrSpace = 3
	var ret types.Type = types.I64
	if cluster {
		as, ret = 7, types.Void
	}
	addr := fe.nvvmPtr(op, "addr", as)
	name := nvvmArriveName("arrive.expect.tx", relaxed, scope, cluster)
	if p := fe.nvvmOpt(op, "predicate"); p != nil {
		if op.NumResults() > 0 {
			Fail(op, "return-value is not supported when using predicate")
		}
		fe.nvvmGuard(p, func() { fe.CallIntrinsic(name, ret, addr, tx) })
		return
	}
	r := fe.CallIntrinsic(name, ret, addr, tx)
	if op.NumResults() > 0 {
		fe.Set(op.Result(0), r)
	}
}

// lowerNVVMMbarrierWait lowers the non-blocking test.wait and the single
// try_wait (optionally with a time limit); both return whether the phase
// completed.
func lowerNVVMMbarrierWait(fe *FuncEmitter, op *ir.Operation) {
	scope := nvvmScope(op)
	relaxed := nvvm.IsTrue(op, "relaxed")
	if relaxed {
		fe.Mod.RequirePTX(86, op)
	}
	state := fe.Val(op.OperandNamed("stateOrPhase"))
	parity := state.Type().Equal(types.I32)
	test := op.Name() == "nvvm.mbarrier.test.wait"
	var r value.Value
	if test && !parity && scope == "cta" && !relaxed {
		sfx, as := nvvmSharedSuffix(op, "addr")
		r = fe.CallIntrinsic("llvm.nvvm.mbarrier.test.wait"+sfx, types.I1, fe.nvvmPtr(op, "addr", as), state)
	} else {
		nvvmSharedSuffix(op, "addr") // checks the address space
		name := "llvm.nvvm.mbarrier.try.wait"
		if test {
			name = "llvm.nvvm.mbarrier.test.wait"
		}
		if parity {
			name += ".parity"
		}
		args := []value.Value{fe.nvvmPtr(op, "addr", 3), state}
		if !test {
			if t := fe.nvvmOpt(op, "ticks"); t != nil {
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
	fe.Set(op.Result(0), r)
}

// lowerNVVMMbarrierTryWaitParity waits until the phase with the given
// parity has completed: a loop around try_wait.parity with the suspend
// time hint.
func lowerNVVMMbarrierTryWaitParity(fe *FuncEmitter, op *ir.Operation) {
	nvvmSharedSuffix(op, "addr")
	addr := fe.nvvmPtr(op, "addr", 3)
	phase, ticks := fe.Val(op.OperandNamed("phase")), fe.Val(op.OperandNamed("ticks"))
	loop, done := fe.NewBlock("mbar.wait"), fe.NewBlock("mbar.done")
	fe.B().NewBr(loop)
	fe.SetBlock(loop)
	ok := fe.CallIntrinsic("llvm.nvvm.mbarrier.try.wait.parity.tl.scope.cta.space.cta", types.I1, addr, phase, ticks)
	loop.NewCondBr(ok, done, loop)
	fe.SetBlock(done)
}

func lowerNVVMCpAsyncMbarrierArrive(fe *FuncEmitter, op *ir.Operation) {
	sfx, as := nvvmSharedSuffix(op, "addr")
	name := "llvm.nvvm.cp.async.mbarrier.arrive"
	if nvvm.IsTrue(op, "noinc") {
		name += ".noinc"
	}
	fe.CallIntrinsic(name+sfx, types.Void, fe.nvvmPtr(op, "addr", as))
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
	if op.HasAttr("group") {
		Fail(op, "TMA loads with a CTA group need sm_100; they cannot be compiled for sm_90a")
	}
	coords := fe.Vals(op.OperandGroup("coordinates"))
	offsets := fe.Vals(op.OperandGroup("im2colOffsets"))
	mode := nvvmTMAMode(op, nvvm.EnumOf(op, "mode"), len(coords), len(offsets))
	ctaOnly := nvvm.IsTrue(op, "isCTAOnly")
	if ctaOnly {
		fe.Mod.RequirePTX(86, op)
	}
	tmap := fe.nvvmPtr(op, "tmaDescriptor", 0)
	mbar := fe.nvvmPtr(op, "mbar", 3)
	mask, hint := fe.nvvmOpt(op, "multicastMask"), fe.nvvmOpt(op, "l2CacheHint")
	dims := len(coords)

	if pred := fe.nvvmOpt(op, "predicate"); pred != nil {
		if ctaOnly {
			Fail(op, "Predicate is supported only for shared::cluster mode.")
		}
		// No intrinsic takes a predicate: inline PTX.
		dstAS := nvvmPtrSpace(op, "dstMem")
		var a nvvmAsmOperands
		dst := a.add(fe.nvvmPtr(op, "dstMem", dstAS), nvvmAsmPtrConstraint(dstAS))
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
	hasHint := nvvmFlag(fe.nvvmOpt(op, "l2CacheHint") != nil)
	if ctaOnly {
		if mask != nil {
			Fail(op, "Multicast is not supported with shared::cta mode.")
		}
		name = fmt.Sprintf("llvm.nvvm.cp.async.bulk.tensor.g2s.cta.%s.%dd", mode, dims)
		args = append(args, fe.nvvmPtr(op, "dstMem", 3), mbar, tmap)
		args = append(append(args, coords...), offsets...)
		args = append(args, hint, hasHint)
	} else {
		hasMask := nvvmFlag(mask != nil)
		if mask == nil {
			mask = constant.NewInt(types.I16, 0)
		}
		name = fmt.Sprintf("llvm.nvvm.cp.async.bulk.tensor.g2s.%s.%dd", mode, dims)
		args = append(args, fe.nvvmPtr(op, "dstMem", 7), mbar, tmap)
		args = append(append(args, coords...), offsets...)
		args = append(args, mask, hint, hasMask, hasHint, I32(0))
	}
	fe.CallIntrinsic(name, types.Void, args...)
}

func lowerNVVMTMAStore(fe *FuncEmitter, op *ir.Operation) {
	coords := fe.Vals(op.OperandGroup("coordinates"))
	dims := len(coords)
	mode := nvvm.EnumOf(op, "mode")
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
	tmap := fe.nvvmPtr(op, "tmaDescriptor", 0)
	src := fe.nvvmPtr(op, "srcMem", 3)
	hint := fe.nvvmOpt(op, "l2CacheHint")
	if pred := fe.nvvmOpt(op, "predicate"); pred != nil {
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
	coords := fe.Vals(op.OperandGroup("coordinates"))
	offsets := fe.Vals(op.OperandGroup("im2colOffsets"))
	mode := nvvmTMAMode(op, nvvm.EnumOf(op, "mode"), len(coords), len(offsets))
	hint := fe.nvvmOpt(op, "l2CacheHint")
	hasHint := nvvmFlag(hint != nil)
	if hint == nil {
		hint = I64(0)
	}
	args := append([]value.Value{fe.nvvmPtr(op, "tmaDescriptor", 0)}, coords...)
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
	size := nvvm.AttrInt(op, "size", 0)
	mod := nvvm.EnumOf(op, "modifier")
	switch {
	case mod != "ca" && mod != "cg":
		Fail(op, "Only CG and CA cache modifiers are supported.")
	case size != 4 && size != 8 && size != 16:
		Fail(op, "expected byte size to be either 4, 8 or 16.")
	case mod == "cg" && size != 16:
		Fail(op, "CG cache modifier is only support for 16 bytes copy.")
	}
	name := fmt.Sprintf("llvm.nvvm.cp.async.%s.shared.global.%d", mod, size)
	args := []value.Value{fe.nvvmPtr(op, "dst", 3), fe.nvvmPtr(op, "src", 1)}
	if n := fe.nvvmOpt(op, "cpSize"); n != nil {
		name += ".s"
		args = append(args, n)
	}
	fe.CallIntrinsic(name, types.Void, args...)
}

// ------------------------------------------------------------ warp level

func lowerNVVMElectSync(fe *FuncEmitter, op *ir.Operation) {
	mask := fe.nvvmOpt(op, "membermask")
	if mask == nil {
		mask = I32(-1)
	}
	r := fe.CallIntrinsic("llvm.nvvm.elect.sync", types.NewStruct(types.I32, types.I1), mask)
	fe.Set(op.Result(0), fe.B().NewExtractValue(r, 1))
}

func lowerNVVMShfl(fe *FuncEmitter, op *ir.Operation) {
	kind := nvvm.EnumOf(op, "kind")
	val := fe.Val(op.OperandNamed("val"))
	suffix := "i32"
	if val.Type().Equal(types.Float) {
		suffix = "f32"
	}
	if nvvm.IsTrue(op, "return_value_and_is_valid") {
		suffix += "p"
	}
	rt := fe.Type(op, op.Result(0).Type())
	r := fe.CallIntrinsic("llvm.nvvm.shfl.sync."+kind+"."+suffix, rt,
		fe.Val(op.OperandNamed("thread_mask")), val, fe.Val(op.OperandNamed("offset")), fe.Val(op.OperandNamed("mask_and_clamp")))
	fe.Set(op.Result(0), r)
}

func lowerNVVMVote(fe *FuncEmitter, op *ir.Operation) {
	kind := nvvm.EnumOf(op, "kind")
	var rt types.Type = types.I1
	if kind == "ballot" {
		rt = types.I32
	}
	r := fe.CallIntrinsic("llvm.nvvm.vote."+kind+".sync", rt, fe.Val(op.OperandNamed("mask")), fe.Val(op.OperandNamed("pred")))
	fe.Set(op.Result(0), r)
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
	as := nvvmPtrSpace(op, "addr")
	pred := fe.nvvmOpt(op, "predicate")
	if nvvm.IsTrue(op, "tensormap") {
		addr := fe.nvvmPtr(op, "addr", as)
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
	fe.CallIntrinsic(name, types.Void, fe.nvvmPtr(op, "addr", as))
}

// -------------------------------------------------------- ld/st matrix

// nvvmMatrixShape returns the m and n of an ld/stmatrix shape attribute.
func nvvmMatrixShape(op *ir.Operation) (int64, int64) {
	if d := nvvm.ShapeOf(op.Attr("shape")); d != nil {
		return d.M, d.N
	}
	return 0, 0
}

func lowerNVVMLdMatrix(fe *FuncEmitter, op *ir.Operation) {
	m, n := nvvmMatrixShape(op)
	elt := nvvm.EnumOf(op, "eltType")
	num := nvvm.AttrInt(op, "num", 0)
	if m != 8 || n != 8 || elt != "b16" {
		Fail(op, "ldmatrix of %dx%d %s matrices needs sm_100; only 8x8 b16 matrices can be compiled for sm_90a", m, n, elt)
	}
	if num != 1 && num != 2 && num != 4 {
		Fail(op, "expected num attribute to be 1, 2 or 4 for 8x8 matrix")
	}
	trans := ""
	if nvvm.EnumOf(op, "layout") == "col" {
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
	if want := fe.Type(op, op.Result(0).Type()); !want.Equal(rt) {
		Fail(op, "the result of an ldmatrix of %d matrices must be '%s'", num, rt)
	}
	name := fmt.Sprintf("llvm.nvvm.ldmatrix.sync.aligned.m8n8.x%d%s.b16.p3", num, trans)
	fe.Set(op.Result(0), fe.CallIntrinsic(name, rt, fe.nvvmPtr(op, "ptr", 3)))
}

func lowerNVVMStMatrix(fe *FuncEmitter, op *ir.Operation) {
	m, n := nvvmMatrixShape(op)
	elt := nvvm.EnumOf(op, "eltType")
	if m != 8 || n != 8 || elt != "b16" {
		Fail(op, "stmatrix of %dx%d %s matrices needs sm_100; only 8x8 b16 matrices can be compiled for sm_90a", m, n, elt)
	}
	srcs := fe.Vals(op.OperandGroup("sources"))
	if k := len(srcs); k != 1 && k != 2 && k != 4 {
		Fail(op, "expected num attribute to be 1, 2 or 4")
	}
	trans := ""
	if nvvm.EnumOf(op, "layout") == "col" {
		trans = ".trans"
	}
	name := fmt.Sprintf("llvm.nvvm.stmatrix.sync.aligned.m8n8.x%d%s.b16.p3", len(srcs), trans)
	fe.CallIntrinsic(name, types.Void, append([]value.Value{fe.nvvmPtr(op, "ptr", 3)}, srcs...)...)
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

func lowerNVVMWgmma(fe *FuncEmitter, op *ir.Operation) {
	m, n, k := nvvm.WGMMAShape(op)
	ta, tb, td := nvvm.WGMMATypes(op)
	sa, sb, sd := nvvm.WGMMAScales(op)
	la, lb := nvvm.WGMMALayouts(op)
	st, ok := fe.Type(op, op.Result(0).Type()).(*types.StructType)
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
	acc := fe.Val(op.OperandNamed("inouts"))
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
	scaleD := int64(1)
	if sd == "zero" {
		scaleD = 0
	}
	args = append(args, fe.Val(op.OperandNamed("descriptorA")), fe.Val(op.OperandNamed("descriptorB")), I32(scaleD))
	constraints = append(constraints, "l", "l", "n")
	satfinite := nvvm.EnumOf(op, "satfinite") == "satfinite"
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
	fe.Set(op.Result(0), res)
}

// lowerNVVMMapa maps a shared memory address (space 3, to the cluster's
// shared window, space 7) or a generic one to the same variable in the
// cluster's CTA b.
func lowerNVVMMapa(fe *FuncEmitter, op *ir.Operation) {
	cta := fe.Val(op.Operand(1))
	if nvvmPtrSpace(op, "a") == 3 {
		fe.Set(op.Result(0), fe.CallIntrinsic("llvm.nvvm.mapa.shared.cluster", PtrTo(types.I8, 7), fe.nvvmPtr(op, "a", 3), cta))
		return
	}
	fe.Set(op.Result(0), fe.CallIntrinsic("llvm.nvvm.mapa", PtrTo(types.I8, 0), fe.nvvmPtr(op, "a", 0), cta))
}
