// Package passutil holds the few helpers that several pass families share
// and no dialect owns: integer arithmetic for offsets and phases, and IR
// queries that cross dialects.
package passutil

import (
	funcdialect "github.com/tmac-dev/tmac/dialects/func"
	"github.com/tmac-dev/tmac/dialects/gpu"
	"github.com/tmac-dev/tmac/dialects/memref"
	"github.com/tmac-dev/tmac/dialects/nvgpu"
	"github.com/tmac-dev/tmac/dialects/scf"
	"github.com/tmac-dev/tmac/ir"
)

// AlignUp rounds x up to a multiple of a (x itself when a <= 1).
func AlignUp(x, a int64) int64 {
	if a <= 1 {
		return x
	}
	return (x + a - 1) / a * a
}

// FloorDiv is a / n rounded toward negative infinity.
func FloorDiv(a, n int64) int64 {
	q := a / n
	if a%n != 0 && (a < 0) != (n < 0) {
		q--
	}
	return q
}

// loopOps are the ops whose body may run more than once (affine.for, of a
// dialect tmac does not register, with --allow-unregistered-dialect).
var loopOps = map[string]bool{scf.For: true, scf.While: true, "affine.for": true}

// IsLoop reports whether op is a loop: its body may run more than once.
func IsLoop(op *ir.Operation) bool { return loopOps[op.Name()] }

// LookupGlobal finds the memref.global named by a symbol reference in the
// gpu.module around kernel.
func LookupGlobal(kernel *ir.Operation, ref ir.Attribute) *ir.Operation {
	sym, ok := ref.(*ir.SymbolRefAttr)
	if !ok || kernel.ParentOp() == nil {
		return nil
	}
	var found *ir.Operation
	ir.Walk(kernel.ParentOp(), func(o *ir.Operation) ir.WalkResult {
		if o.Name() == memref.Global && o.SymbolName() == sym.Root {
			found = o
			return ir.Interrupt
		}
		if o.Name() == gpu.Func || o.Name() == funcdialect.Func {
			return ir.Skip
		}
		return ir.Advance
	})
	return found
}

// KernelBody returns the body of a gpu.func kernel (gpu.kernel, with a
// body), and whether op is one.
func KernelBody(op *ir.Operation) (*ir.Region, bool) {
	f, ok := gpu.AsFunc(op)
	if !ok || op.NumRegions() == 0 || f.Body().Empty() {
		return nil, false
	}
	_, ok = op.Attr("gpu.kernel").(*ir.UnitAttr)
	return f.Body(), ok
}

// BarrierOperands is what the views of the ops that address one barrier
// of an mbarrier group share: the group and the barrier's index.
type BarrierOperands interface {
	Barriers() ir.Value
	MbarId() ir.Value
}

// BarrierOp returns the view of an op that addresses one barrier of a
// group (init, the arrives, the waits, get and TMA loads).
func BarrierOp(op *ir.Operation) (BarrierOperands, bool) {
	switch op.Name() {
	case nvgpu.MbarrierGet:
		return nvgpu.MbarrierGetOp{Op: op}, true
	case nvgpu.MbarrierInit:
		return nvgpu.MbarrierInitOp{Op: op}, true
	case nvgpu.MbarrierArrive:
		return nvgpu.MbarrierArriveOp{Op: op}, true
	case nvgpu.MbarrierArriveNocomplete:
		return nvgpu.MbarrierArriveNocompleteOp{Op: op}, true
	case nvgpu.MbarrierArriveExpectTx:
		return nvgpu.MbarrierArriveExpectTxOp{Op: op}, true
	case nvgpu.MbarrierTestWait:
		return nvgpu.MbarrierTestWaitOp{Op: op}, true
	case nvgpu.MbarrierTryWaitParity:
		return nvgpu.MbarrierTryWaitParityOp{Op: op}, true
	case nvgpu.TmaAsyncLoad:
		return nvgpu.TmaAsyncLoadOp{Op: op}, true
	}
	return nil, false
}

// BarrierPredicate returns the predicate operand of a barrier op that
// declares one (nil if it has none).
func BarrierPredicate(b BarrierOperands) ir.Value {
	if p, ok := b.(interface{ Predicate() ir.Value }); ok {
		return p.Predicate()
	}
	return nil
}

// MmaWaitGroup is the waitGroup of an nvgpu.warpgroup.mma: how many wgmma
// groups may still be pending after it (1 when the attribute is absent).
func MmaWaitGroup(mma nvgpu.WarpgroupMmaOp) int64 { return WaitGroup(mma.Op) }

// WaitGroup is the waitGroup of a wgmma op (see IsWarpgroupMma): how many
// wgmma groups may still be pending after it, 1 when the attribute is
// absent. An op without the attribute (a lowered wgmma, retired only by
// a separate wait_group) also gets 1: not known to be complete.
func WaitGroup(op *ir.Operation) int64 { return op.IntAttrOf("waitGroup", 1) }

// ReadsThroughDescriptors reports whether op reads shared memory that no
// operand names through the async proxy: a wgmma, whose descriptors lead
// to its tiles. The read lasts until a wgmma wait_group retires the op's
// group.
func ReadsThroughDescriptors(op *ir.Operation) bool {
	for _, e := range op.Effects() {
		if e.Kind == ir.Read && e.Proxy == ir.AsyncProxy && e.Operand == "" {
			return true
		}
	}
	return false
}

// IsWarpgroupMma reports whether op is a wgmma that reads its tiles
// through descriptors and commits and waits for its own group, which its
// waitGroup attribute bounds: nvgpu.warpgroup.mma, tmac.warpgroup.mma
// (not the lowered tmac.wgmma.mma_async, which leaves both to other ops).
func IsWarpgroupMma(op *ir.Operation) bool {
	if !ReadsThroughDescriptors(op) {
		return false
	}
	for _, a := range op.Def().Attrs {
		if a.Name == "waitGroup" {
			return true
		}
	}
	return false
}
