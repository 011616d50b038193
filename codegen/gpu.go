package codegen

import (
	"fmt"

	lir "github.com/llir/llvm/ir"
	"github.com/llir/llvm/ir/constant"
	"github.com/llir/llvm/ir/enum"
	"github.com/llir/llvm/ir/types"
	"github.com/llir/llvm/ir/value"

	"github.com/tmac-dev/tmac/dialects/gpu"
	"github.com/tmac-dev/tmac/ir"
)

// Device-side gpu dialect ops: thread/block/grid/cluster indices and
// sizes (PTX special registers, or constants when the kernel declares
// known_*_size), lane and subgroup queries, gpu.barrier and gpu.printf
// (through CUDA's vprintf).

func init() {
	Register(lowerGPUIndex, gpu.ThreadId, gpu.BlockId, gpu.BlockDim, gpu.GridDim,
		gpu.ClusterId, gpu.ClusterDim, gpu.ClusterBlockId, gpu.ClusterDimBlocks,
		gpu.GlobalId)
	Register(lowerGPULaneID, gpu.LaneId)
	Register(lowerGPUSubgroup, gpu.SubgroupId, gpu.NumSubgroups, gpu.SubgroupSize)
	Register(func(fe *FuncEmitter, op *ir.Operation) { fe.gpuBarrier() }, gpu.Barrier)
	Register(lowerGPUPrintf, gpu.Printf)
}

// llRangeAttr is LLVM's `range(iN lo, hi)` return attribute (a half-open,
// possibly wrapping interval; lo != hi), which llir/llvm v0.3.6 lacks.
type llRangeAttr struct {
	Typ    types.Type
	Lo, Hi int64
}

func (r llRangeAttr) String() string {
	return fmt.Sprintf("range(%s %d, %d)", r.Typ, r.Lo, r.Hi)
}

// IsReturnAttribute makes llRangeAttr an llir return attribute.
func (llRangeAttr) IsReturnAttribute() {}

// gpuSreg reads a 32-bit PTX special register (llvm.nvvm.read.ptx.sreg.NAME)
// and, when hi > lo >= 0, tells LLVM the value lies in [lo, hi).
func (fe *FuncEmitter) gpuSreg(name string, lo, hi int64) value.Value {
	call := fe.CallIntrinsic("llvm.nvvm.read.ptx.sreg."+name, types.I32)
	if lo >= 0 && hi > lo && hi <= 1<<32 {
		call.ReturnAttrs = append(call.ReturnAttrs, llRangeAttr{types.I32, lo, hi})
	}
	return call
}

// gpuIndexSreg reads a special register as an index (i64): registers are
// unsigned, so the value is zero-extended.
func (fe *FuncEmitter) gpuIndexSreg(name string, lo, hi int64) value.Value {
	return fe.B().NewZExt(fe.gpuSreg(name, lo, hi), types.I64)
}

// gpuKnownSize returns dimension d of the enclosing kernel's
// known_<what>_size (or gpu.known_<what>_size) attribute, or 0.
func (fe *FuncEmitter) gpuKnownSize(what string, d int) int64 {
	for _, name := range []string{"known_" + what + "_size", "gpu.known_" + what + "_size"} {
		if a, ok := fe.Op.Attr(name).(*ir.DenseArrayAttr); ok && len(a.Ints) == 3 && a.Ints[d] > 0 {
			return a.Ints[d]
		}
	}
	return 0
}

// gpuUpperBound returns the value of an op's upper_bound attribute ub, or 0.
func gpuUpperBound(ub ir.Attribute) int64 {
	if a, ok := ub.(*ir.IntegerAttr); ok && a.Int() > 0 {
		return a.Int()
	}
	return 0
}

// minPositive returns the smallest of the positive values (0 if none).
func minPositive(vs ...int64) int64 {
	var m int64
	for _, v := range vs {
		if v > 0 && (m == 0 || v < m) {
			m = v
		}
	}
	return m
}

var gpuDims = map[string]int{"x": 0, "y": 1, "z": 2}

// gpuID returns an index in [0, size) read from register reg, where size
// (0: unknown) bounds it; an index into a dimension of size 1 is 0.
func (fe *FuncEmitter) gpuID(reg string, size int64) value.Value {
	if size == 1 {
		return I64(0)
	}
	return fe.gpuIndexSreg(reg, 0, size)
}

// gpuDim returns a dimension size: the constant known when known > 0,
// else the register (at most bound when bound > 0).
func (fe *FuncEmitter) gpuDim(reg string, known, bound int64) value.Value {
	if known > 0 {
		return I64(known)
	}
	if bound > 0 {
		return fe.gpuIndexSreg(reg, 1, bound+1)
	}
	return fe.gpuIndexSreg(reg, 0, 0)
}

// gpuClustersPerGrid returns the number of clusters along d when both the
// grid and the cluster size are known (0 otherwise).
func (fe *FuncEmitter) gpuClustersPerGrid(d int) int64 {
	g, c := fe.gpuKnownSize("grid", d), fe.gpuKnownSize("cluster", d)
	if g > 0 && c > 0 && g%c == 0 {
		return g / c
	}
	return 0
}

// lowerGPUIndex lowers the nine index and size ops, which all declare a
// `dimension` and an `upper_bound` attribute and one result.
func lowerGPUIndex(fe *FuncEmitter, op *ir.Operation) {
	dim := gpu.DimOf(op.Attr("dimension"))
	d, ok := gpuDims[dim]
	if !ok {
		Fail(op, "'%s' needs a dimension x, y or z", op.Name())
	}
	ub := gpuUpperBound(op.Attr("upper_bound"))
	block, grid, cluster := fe.gpuKnownSize("block", d), fe.gpuKnownSize("grid", d), fe.gpuKnownSize("cluster", d)
	var v value.Value
	switch op.Name() {
	case gpu.ThreadId:
		v = fe.gpuID("tid."+dim, minPositive(block, ub))
	case gpu.BlockDim:
		v = fe.gpuDim("ntid."+dim, block, ub)
	case gpu.BlockId:
		v = fe.gpuID("ctaid."+dim, minPositive(grid, ub))
	case gpu.GridDim:
		v = fe.gpuDim("nctaid."+dim, grid, ub)
	case gpu.ClusterId:
		v = fe.gpuID("clusterid."+dim, minPositive(fe.gpuClustersPerGrid(d), ub))
	case gpu.ClusterDim:
		v = fe.gpuDim("nclusterid."+dim, fe.gpuClustersPerGrid(d), ub)
	case gpu.ClusterBlockId:
		v = fe.gpuID("cluster.ctaid."+dim, minPositive(cluster, ub))
	case gpu.ClusterDimBlocks:
		v = fe.gpuDim("cluster.nctaid."+dim, cluster, ub)
	case gpu.GlobalId:
		// blockIdx * blockDim + threadIdx.
		bid := fe.gpuID("ctaid."+dim, grid)
		bdim := fe.gpuDim("ntid."+dim, block, 0)
		tid := fe.gpuID("tid."+dim, block)
		v = fe.Add(fe.Mul(bid, bdim), tid)
	}
	fe.Set(op.Result(0), v)
}

func lowerGPULaneID(fe *FuncEmitter, op *ir.Operation) {
	l := gpu.LaneIdOp{Op: op}
	fe.Set(l.Result(), fe.gpuIndexSreg("laneid", 0, minPositive(32, gpuUpperBound(l.UpperBound()))))
}

// gpuWarpSize is the subgroup size of NVIDIA GPUs.
const gpuWarpSize = 32

func lowerGPUSubgroup(fe *FuncEmitter, op *ir.Operation) {
	var v value.Value
	switch op.Name() {
	case gpu.SubgroupSize:
		v = I64(gpuWarpSize)
	case gpu.SubgroupId:
		// The linear thread index in the block divided by the warp size
		// (%warpid is not stable over a thread's lifetime).
		var lin value.Value = I64(0)
		for d := 2; d >= 0; d-- {
			dim := "xyz"[d : d+1]
			block := fe.gpuKnownSize("block", d)
			lin = fe.Add(fe.Mul(lin, fe.gpuDim("ntid."+dim, block, 0)), fe.gpuID("tid."+dim, block))
		}
		if c, ok := constInt(lin); ok {
			v = I64(c / gpuWarpSize)
		} else {
			v = fe.B().NewLShr(lin, I64(5))
		}
	case gpu.NumSubgroups:
		// ceil(threads per block / warp size).
		var n value.Value = I64(1)
		for d := 0; d < 3; d++ {
			n = fe.Mul(n, fe.gpuDim("ntid."+"xyz"[d:d+1], fe.gpuKnownSize("block", d), 0))
		}
		if c, ok := constInt(n); ok {
			v = I64((c + gpuWarpSize - 1) / gpuWarpSize)
		} else {
			v = fe.B().NewLShr(fe.B().NewAdd(n, I64(gpuWarpSize-1)), I64(5))
		}
	}
	fe.Set(op.Result(0), v)
}

// gpuBarrier emits a CTA-wide barrier on barrier 0 (bar.sync 0).
func (fe *FuncEmitter) gpuBarrier() {
	fe.CallIntrinsic("llvm.nvvm.barrier.cta.sync.aligned.all", types.Void, I32(0))
}

// printfFormatPrefix names the constant-space globals holding printf
// format strings.
const printfFormatPrefix = "__tmac_printf_fmt"

// printfFormat returns the addrspace(4) global holding the NUL-terminated
// format string s, creating it once per module.
func (me *ModuleEmitter) printfFormat(s string) *lir.Global {
	init := constant.NewCharArrayFromString(s + "\x00")
	n := 0
	for _, g := range me.M.Globals {
		if len(g.Name()) < len(printfFormatPrefix) || g.Name()[:len(printfFormatPrefix)] != printfFormatPrefix {
			continue
		}
		n++
		if ca, ok := g.Init.(*constant.CharArray); ok && string(ca.X) == string(init.X) {
			return g
		}
	}
	g := me.M.NewGlobalDef(fmt.Sprintf("%s_%d", printfFormatPrefix, n), init)
	g.Linkage = enum.LinkageInternal
	g.Immutable = true
	g.AddrSpace = 4
	g.Typ.AddrSpace = 4
	g.Align = 1
	return g
}

// lowerGPUPrintf calls vprintf(format, args): the arguments are stored in
// a stack struct after C's default argument promotions (floats to double,
// integers narrower than int to int).
func lowerGPUPrintf(fe *FuncEmitter, op *ir.Operation) {
	p := gpu.PrintfOp{Op: op}
	format, _ := p.Format().(*ir.StringAttr)
	if format == nil {
		Fail(op, "gpu.printf needs a format string")
	}
	if msg := gpu.PrintfFormatProblem(format.Value); msg != "" {
		Fail(op, "%s", msg)
	}
	fmtPtr := fe.printfFormatPtr(format.Value)
	var args []value.Value
	for i, a := range p.Args() {
		args = append(args, fe.printfArg(op, i, a.Type(), fe.Val(a)))
	}
	fe.vprintf(fmtPtr, args)
}

// printfArg promotes argument #i (x, of type t) of a printf as C promotes
// variadic arguments: floats to double, integers narrower than int to int.
func (fe *FuncEmitter) printfArg(op *ir.Operation, i int, t ir.Type, x value.Value) value.Value {
	switch t := t.(type) {
	case *ir.FloatType:
		switch t.Kind {
		case ir.F16, ir.BF16, ir.F32, ir.TF32:
			return fe.B().NewFPExt(x, types.Double)
		case ir.F64:
			return x
		}
	case *ir.IntegerType:
		switch {
		case t.Width == 1:
			return fe.B().NewZExt(x, types.I32)
		case t.Width < 32 && t.Signedness == ir.Unsigned:
			return fe.B().NewZExt(x, types.I32)
		case t.Width < 32:
			return fe.B().NewSExt(x, types.I32)
		case t.Width == 32 || t.Width == 64:
			return x
		}
		Fail(op, "%s cannot print argument #%d of type '%s' (integers wider than 64 bits)", op.Name(), i, t)
	case *ir.IndexType:
		return x
	}
	Fail(op, "%s cannot print argument #%d of type '%s'", op.Name(), i, t)
	return nil
}

// printfFormatPtr returns a generic i8* to the format string s.
func (fe *FuncEmitter) printfFormatPtr(s string) value.Value {
	g := fe.Mod.printfFormat(s)
	return fe.B().NewAddrSpaceCast(fe.B().NewBitCast(g, PtrTo(types.I8, 4)), types.NewPointer(types.I8))
}

// vprintf calls CUDA's vprintf(format, args) with args already promoted
// (doubles, 32- and 64-bit integers) in a stack struct, and returns the
// call (the number of arguments printed, or a negative error).
func (fe *FuncEmitter) vprintf(fmtPtr value.Value, args []value.Value) *lir.InstCall {
	i8p := types.NewPointer(types.I8)
	var buf value.Value = constant.NewNull(i8p)
	if len(args) > 0 {
		var fields []types.Type
		for _, a := range args {
			fields = append(fields, a.Type())
		}
		st := types.NewStruct(fields...)
		// The buffer lives in the entry block so loops do not grow the stack.
		alloca := lir.NewAlloca(st)
		alloca.Align = 8
		entry := fe.Fn.Blocks[0]
		entry.Insts = append([]lir.Instruction{alloca}, entry.Insts...)
		for i, a := range args {
			p := fe.B().NewGetElementPtr(st, alloca, I32(0), I32(int64(i)))
			fe.B().NewStore(a, p)
		}
		buf = fe.B().NewBitCast(alloca, i8p)
	}
	vprintf := fe.Mod.Intrinsic("vprintf", types.I32, i8p, i8p)
	return fe.Call(vprintf, fmtPtr, buf)
}
