package mbarrier

import (
	"github.com/tmac-dev/tmac/dialects/memref"
	"github.com/tmac-dev/tmac/dialects/nvgpu"
	"github.com/tmac-dev/tmac/dialects/scf"
	"github.com/tmac-dev/tmac/dialects/vector"
	"github.com/tmac-dev/tmac/ir"
)

// mbarrier-phase, part (c): a thread read of a TMA load's destination that
// nothing orders after the load's completion. The load writes its tile
// asynchronously; only a wait on its mbarrier that sees the phase the load
// completes (by this thread, or by another one and passed on through a
// barrier) makes the bytes readable. The emulator catches a missing wait
// at run time when the copy is still in flight; this check catches, at
// compile time, the cases where it is certain whatever the schedule: the
// read (memref.load, vector.load, any op reading the tile or a view of it
// through the generic proxy) comes after the load in the same thread's
// program order, and no op between them (nor around them inside the ops
// that hold them) can synchronise: no wait, barrier, warp collective,
// polling loop or op the check does not know. Whenever something could
// order the two it stays silent.

// checkTMAReads reports the first certain read-before-wait of kernel.
func checkTMAReads(kernel *ir.Operation) error {
	var err error
	ir.Walk(kernel, func(op *ir.Operation) ir.WalkResult {
		l, ok := nvgpu.AsTmaAsyncLoad(op)
		if !ok {
			return ir.Advance
		}
		for _, v := range views(l.Dst()) {
			for _, u := range ir.Uses(v) {
				r := u.Owner()
				if !r.ReadsThrough(v, ir.GenericProxy) || !unorderedAfter(op, r) {
					continue
				}
				d := r.EmitError("reads the destination of a TMA load that no wait on the load's mbarrier orders before it: the load may still be writing these bytes (wait for the phase the load completes, with nvgpu.mbarrier.try_wait.parity, before reading; a thread that did not wait needs a barrier after one that did)")
				d.AttachNote(op.Loc, "the TMA load, issued here")
				err = d
				return ir.Interrupt
			}
		}
		return ir.Advance
	})
	return err
}

// views are v and the memrefs viewing part of it, transitively: the
// memref results of pure ops taking it as their first operand (subview,
// cast, reshapes), not reinterpret_cast, which may point elsewhere.
func views(v ir.Value) []ir.Value {
	out := []ir.Value{v}
	for i := 0; i < len(out); i++ {
		for _, u := range ir.Uses(out[i]) {
			o := u.Owner()
			if !o.HasNoMemoryEffect() || o.Name() == memref.ReinterpretCast || o.NumOperands() == 0 || o.Operand(0) != out[i] || o.NumResults() != 1 {
				continue
			}
			if _, ok := o.Result(0).Type().(*ir.MemRefType); ok {
				out = append(out, o.Result(0))
			}
		}
	}
	return out
}

// unorderedAfter reports whether r certainly runs after load in the
// thread that issued it with nothing between them that could synchronise:
// in the innermost block holding both, the op holding load comes before
// the op holding r, and neither those two ops nor the ops between them
// hold an op that may synchronise.
func unorderedAfter(load, r *ir.Operation) bool {
	for ar := r; ar != nil; ar = ar.ParentOp() {
		var al *ir.Operation
		for x := load; x != nil; x = x.ParentOp() {
			if x.Block() == ar.Block() {
				al = x
				break
			}
		}
		if al == nil {
			continue
		}
		if al == ar {
			return false // different regions of one op, or r inside a loop with the load
		}
		between := false
		for _, x := range ar.Block().Ops() {
			switch {
			case x == al:
				between = true
			case x == ar:
				return between && !maySync(al) && !maySync(ar)
			case between && maySync(x):
				return false
			}
		}
		return false // r before the load
	}
	return false
}

// maySync reports whether op, or an op nested in it, may order memory
// between threads or wait for an mbarrier (anything but the ops known not
// to).
func maySync(op *ir.Operation) bool {
	found := false
	ir.Walk(op, func(x *ir.Operation) ir.WalkResult {
		if !syncFree(x) {
			found = true
			return ir.Interrupt
		}
		return ir.Advance
	})
	return found
}

// syncFree: ops that neither wait nor order memory between threads (ops
// with regions: as far as the ops in them go, but a while loop, which may
// poll).
func syncFree(op *ir.Operation) bool {
	if op.HasNoMemoryEffect() || op.HasTrait(ir.RecursiveSideEffects) && op.Name() != scf.While {
		return true
	}
	switch op.Name() {
	case memref.Load, memref.Store, memref.Alloca, memref.Alloc,
		vector.Load, vector.Store,
		nvgpu.TmaAsyncLoad, nvgpu.TmaAsyncStore, nvgpu.TmaPrefetchDescriptor,
		nvgpu.MbarrierCreate, nvgpu.MbarrierInit, nvgpu.MbarrierArrive, nvgpu.MbarrierArriveExpectTx, nvgpu.MbarrierArriveNocomplete:
		return true
	}
	return false
}
