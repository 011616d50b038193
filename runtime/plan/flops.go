package plan

import (
	"github.com/tmac-dev/tmac/dialects/gpu"
	"github.com/tmac-dev/tmac/dialects/nvvm"
	"github.com/tmac-dev/tmac/dialects/scf"
	"github.com/tmac-dev/tmac/dialects/tmac"
	"github.com/tmac-dev/tmac/ir"
)

// CountFlops derives the floating-point work of one run of entry from the
// program itself: every nvvm.wgmma.mma_async of a kernel does 2·m·n·k
// operations per warpgroup that executes it (tmac.wgmma.mma_async, its
// form with A in registers, too), times the static trip counts
// of the loops around it; a kernel runs with grid × block/128 warpgroups
// (static launch sizes), and the launches' own host loops multiply again.
// It returns false when something is not static (a dynamic loop bound or
// launch size), and it assumes every warpgroup executes every mma (an mma
// under a condition that excludes warpgroups is counted too often), except
// in kernels carrying ConsumerWarpgroupsAttr (set by warp-specialize),
// where that many warpgroups per block do.
// Programs whose work is not in wgmma (SIMT kernels) give 0.
func CountFlops(mod, entry *ir.Operation) (float64, bool) {
	total := 0.0
	ok := true
	ir.Walk(entry, func(op *ir.Operation) ir.WalkResult {
		l, isLaunch := gpu.AsLaunchFunc(op)
		if !isLaunch {
			return ir.Advance
		}
		ref, _ := l.Kernel().(*ir.SymbolRefAttr)
		if ref == nil {
			ok = false
			return ir.Interrupt
		}
		kernel := ir.ResolveSymbolRef(op, ref)
		host, hostOK := loopTrips(op, entry)
		grid, gOK := staticProduct(l.GridSizeX(), l.GridSizeY(), l.GridSizeZ())
		block, bOK := staticProduct(l.BlockSizeX(), l.BlockSizeY(), l.BlockSizeZ())
		if kernel == nil || !hostOK || !gOK || !bOK {
			ok = false
			return ir.Interrupt
		}
		warpgroups := grid * float64(int64(block)/128)
		// A warp-specialised kernel runs its mma ops in its consumer
		// warpgroups only (the producer issues TMA).
		if c, ok := ir.AttrInt(kernel.Attr(ConsumerWarpgroupsAttr)); ok && c > 0 {
			warpgroups = grid * float64(c)
		}
		ir.Walk(kernel, func(k *ir.Operation) ir.WalkResult {
			if k.Name() != nvvm.WgmmaMmaAsync && k.Name() != tmac.WgmmaMmaAsync {
				return ir.Advance
			}
			m, n, kk := nvvm.WGMMAShape(k)
			trips, tOK := loopTrips(k, kernel)
			if !tOK {
				ok = false
				return ir.Interrupt
			}
			total += 2 * float64(m*n*kk) * trips * warpgroups * host
			return ir.Advance
		})
		if !ok {
			return ir.Interrupt
		}
		return ir.Advance
	})
	return total, ok
}

// ConsumerWarpgroupsAttr on a kernel is the number of its warpgroups per
// block that execute its wgmma ops (warp-specialize sets it).
const ConsumerWarpgroupsAttr = "tmac.consumer_warpgroups"

// staticProduct multiplies the constant values of vs (false if one is
// absent or not constant).
func staticProduct(vs ...ir.Value) (float64, bool) {
	p := 1.0
	for _, v := range vs {
		if v == nil {
			return 0, false
		}
		c, ok := ir.AttrInt(ir.ConstantValue(v))
		if !ok {
			return 0, false
		}
		p *= float64(c)
	}
	return p, true
}

// loopTrips multiplies the static trip counts of the scf.for loops around
// op, up to (not including) top.
func loopTrips(op, top *ir.Operation) (float64, bool) {
	trips := 1.0
	for p := op.ParentOp(); p != nil && p != top; p = p.ParentOp() {
		switch p.Name() {
		case scf.For:
			f := scf.ForOp{Op: p}
			lb, ok1 := ir.AttrInt(ir.ConstantValue(f.LowerBound()))
			ub, ok2 := ir.AttrInt(ir.ConstantValue(f.UpperBound()))
			st, ok3 := ir.AttrInt(ir.ConstantValue(f.Step()))
			if !ok1 || !ok2 || !ok3 || st <= 0 {
				return 0, false
			}
			if ub > lb {
				trips *= float64((ub - lb + st - 1) / st)
			} else {
				trips = 0
			}
		case scf.While:
			return 0, false
		}
	}
	return trips, true
}
