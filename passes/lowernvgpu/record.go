package lowernvgpu

import (
	"github.com/tmac-dev/tmac/dialects/arith"
	"github.com/tmac-dev/tmac/dialects/nvgpu"
	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/passes/internal/passutil"
	"github.com/tmac-dev/tmac/passes/schedule"
)

// observeBarrierOp records what lower-nvgpu is about to lower on a barrier
// group: its creation (the group is returned, to record its memory once
// lowered), init counts, arrivals, expect_tx bytes, the TMA loads that
// complete on it and, for groups written in the program, the parities of
// its waits.
func observeBarrierOp(s *schedule.Schedule, kernel, op *ir.Operation) ir.Value {
	if s == nil {
		return nil
	}
	if c, ok := nvgpu.AsMbarrierCreate(op); ok {
		s.Group(kernel, c.Barriers())
		return c.Barriers()
	}
	b, ok := passutil.BarrierOp(op)
	if !ok {
		return nil
	}
	g := s.ExistingGroup(b.Barriers())
	if g == nil {
		return nil
	}
	switch o := b.(type) {
	case nvgpu.MbarrierInitOp:
		if c, ok := arith.ConstantInt(o.Count()); ok {
			g.InitCounts = append(g.InitCounts, c)
		}
	case nvgpu.MbarrierArriveExpectTxOp:
		g.Arrives++
		if c, ok := arith.ConstantInt(o.Txcount()); ok {
			g.ExpectTx = append(g.ExpectTx, c)
		}
	case nvgpu.MbarrierArriveOp, nvgpu.MbarrierArriveNocompleteOp:
		g.Arrives++
	case nvgpu.TmaAsyncLoadOp:
		g.TMALoads++
		if d, ok := nvgpu.AsTensorMapDescriptor(o.TensorMapDescriptor().Type()); ok {
			g.TMABytes += d.BoxBytes()
		}
	case nvgpu.MbarrierTryWaitParityOp:
		if g.Role != "" {
			return nil
		}
		for _, w := range g.Waits {
			if w.By != "program" {
				return nil // a pass computed the parities
			}
		}
		w := &schedule.BarrierWait{Loc: op.Loc, By: "program"}
		if c, ok := arith.ConstantInt(o.PhaseParity()); ok {
			w.Constant, w.Parity = true, c&1
		}
		g.Waits = append(g.Waits, w)
	}
	return nil
}
