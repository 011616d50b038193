package codegen

import (
	lir "github.com/llir/llvm/ir"
	"github.com/llir/llvm/ir/enum"
	"github.com/llir/llvm/ir/types"
	"github.com/llir/llvm/ir/value"

	"github.com/tmac-dev/tmac/dialects/memref"
	"github.com/tmac-dev/tmac/ir"
)

// Lowering of memref.copy, memref.alloca_scope, memref.prefetch, and the
// rejection of memref.realloc and the DMA ops in kernels.

func init() {
	Register(lowerMemCopy, memref.Copy)
	Register(lowerAllocaScope, memref.AllocaScope)
	Register(lowerPrefetch, memref.Prefetch)
	Register(lowerRealloc, memref.Realloc)
	Register(lowerDma, memref.DmaStart, memref.DmaWait)
}

// loopNest emits for i0 < sizes[0], i1 < sizes[1], ...: body(indices) in
// the innermost block; the current block is the exit afterwards.
func (fe *FuncEmitter) loopNest(sizes []value.Value, body func(idx []value.Value)) {
	if len(sizes) == 0 {
		body(nil)
		return
	}
	pre := fe.B()
	header := fe.NewBlock("copy.header")
	inner := fe.NewBlock("copy.body")
	exit := fe.NewBlock("copy.exit")
	pre.NewBr(header)
	iv := newPhi(header, I64(0).Type(), lir.NewIncoming(I64(0), pre))
	header.NewCondBr(header.NewICmp(enum.IPredSLT, iv, sizes[0]), inner, exit)
	fe.SetBlock(inner)
	fe.loopNest(sizes[1:], func(rest []value.Value) {
		body(append([]value.Value{iv}, rest...))
	})
	latch := fe.B()
	next := latch.NewAdd(iv, I64(1))
	latch.NewBr(header)
	iv.Incs = append(iv.Incs, lir.NewIncoming(next, latch))
	fe.SetBlock(exit)
}

// lowerMemCopy copies element by element in the thread that executes it
// (a kernel's threads share the work only if the program divides it).
func lowerMemCopy(fe *FuncEmitter, op *ir.Operation) {
	c := memref.CopyOp{Op: op}
	rankedMemRef(op, c.Source())
	rankedMemRef(op, c.Target())
	src, dst := fe.Mem(c.Source()), fe.Mem(c.Target())
	fe.loopNest(src.Sizes, func(idx []value.Value) {
		v := fe.B().NewLoad(fe.ElemType(op, src), fe.ElemPtr(op, src, idx))
		fe.B().NewStore(v, fe.ElemPtr(op, dst, idx))
	})
}

// lowerAllocaScope emits the body in place. Static allocas are hoisted to
// the entry block and so never grow the stack; a scope holding a dynamic
// one saves and restores the stack pointer around it, which frees it.
func lowerAllocaScope(fe *FuncEmitter, op *ir.Operation) {
	s := memref.AllocaScopeOp{Op: op}
	body := s.BodyRegion().Entry()
	dynamic := false
	ir.Walk(op, func(o *ir.Operation) ir.WalkResult {
		if o.Name() == memref.Alloca && len(o.Operands()) > 0 {
			dynamic = true
		}
		return ir.Advance
	})
	var saved value.Value
	if dynamic {
		saved = fe.CallIntrinsic("llvm.stacksave.p0", PtrTo(types.I8, asGeneric))
	}
	yielded := fe.emitNested(body)
	for i, r := range s.Results() {
		if m, ok := fe.mems[yielded[i]]; ok {
			fe.SetMem(r, m)
			continue
		}
		fe.Set(r, fe.Val(yielded[i]))
	}
	if dynamic {
		fe.CallIntrinsic("llvm.stackrestore.p0", types.Void, saved)
	}
}

// lowerPrefetch emits nothing: the op is a hint, and sm_90a's prefetch
// instructions are for global memory only.
func lowerPrefetch(*FuncEmitter, *ir.Operation) {}

func lowerRealloc(_ *FuncEmitter, op *ir.Operation) {
	Fail(op, "'memref.realloc' is not supported in kernels: a kernel cannot allocate or free global memory; allocate the larger buffer on the host and pass it as an argument")
}

func lowerDma(_ *FuncEmitter, op *ir.Operation) {
	Fail(op, "'%s' is not supported on sm_90a: Hopper has no such DMA engine; copy with nvgpu.tma.async.load/store (or tmac.tma.load/store) and wait on an mbarrier", op.Name())
}
