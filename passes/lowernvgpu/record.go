package lowernvgpu

import (
	"github.com/tmac-dev/tmac/dialects/arith"
	"github.com/tmac-dev/tmac/dialects/nvgpu"
	"github.com/tmac-dev/tmac/ir"
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
	if op.Name() == "nvgpu.mbarrier.create" {
		s.Group(kernel, op.Result(0))
		return op.Result(0)
	}
	var g *schedule.BarrierGroup
	switch op.Name() {
	case "nvgpu.mbarrier.init", "nvgpu.mbarrier.arrive.expect_tx", "nvgpu.mbarrier.arrive", "nvgpu.mbarrier.arrive.nocomplete",
		"nvgpu.mbarrier.try_wait.parity", "nvgpu.tma.async.load":
		g = s.ExistingGroup(op.OperandNamed("barriers"))
	}
	if g == nil {
		return nil
	}
	switch op.Name() {
	case "nvgpu.mbarrier.init":
		if c, ok := arith.ConstantInt(op.OperandNamed("count")); ok {
			g.InitCounts = append(g.InitCounts, c)
		}
	case "nvgpu.mbarrier.arrive.expect_tx":
		g.Arrives++
		if c, ok := arith.ConstantInt(op.OperandNamed("txcount")); ok {
			g.ExpectTx = append(g.ExpectTx, c)
		}
	case "nvgpu.mbarrier.arrive", "nvgpu.mbarrier.arrive.nocomplete":
		g.Arrives++
	case "nvgpu.tma.async.load":
		g.TMALoads++
		if d, ok := nvgpu.AsTensorMapDescriptor(op.OperandNamed("tensorMapDescriptor").Type()); ok {
			g.TMABytes += d.BoxBytes()
		}
	case "nvgpu.mbarrier.try_wait.parity":
		if g.Role != "" {
			return nil
		}
		for _, w := range g.Waits {
			if w.By != "program" {
				return nil // a pass computed the parities
			}
		}
		w := &schedule.BarrierWait{Loc: op.Loc, By: "program"}
		if c, ok := arith.ConstantInt(op.OperandNamed("phaseParity")); ok {
			w.Constant, w.Parity = true, c&1
		}
		g.Waits = append(g.Waits, w)
	}
	return nil
}
