package passes

import (
	"fmt"
	"slices"

	"github.com/tmac-dev/tmac/ir"
)

// The pass table: a pass declares the passes that must run before it
// (Info.Needs), and a pass that others need says which ops it rewrites
// away (Info.Rewrites). Two rules follow.
//
// Order, when a pipeline is built (CheckOrder: ParsePipeline, and tmac
// opt's pass flags): a pass may not come after a pass that needs it
// unless it also comes before. "mbarrier-phase, tma-pipeline" is
// rejected whatever the input: tma-pipeline's waits would never get their
// parities.
//
// Input, as the pipeline runs (RunPipeline, before each pass): a need
// whose pass has not run earlier in the pipeline applies only when the IR
// holds an op that pass rewrites; the error points at that op. So a pass
// may run alone on IR that is already past its prerequisites: lower-nvgpu
// on hand-written nvgpu with explicit parities needs neither tma-pipeline
// nor mbarrier-phase, but lower-nvgpu on a tmac.mbarrier.wait is told that
// mbarrier-phase has to compute its parity first. A need marked OrderOnly
// never looks at the IR: the pass accepts the other's input ops (smem-plan
// places a tile that tma-pipeline has not made a ring yet), and only the
// order is checked.

// Need is one pass that must run before the pass declaring it.
type Need struct {
	Pass string
	// Why completes "X needs Pass before it, ..." in messages and docs.
	Why string
	// OrderOnly: only the order of a pipeline running both is checked,
	// not the IR.
	OrderOnly bool
}

// CheckOrder reports a pass of steps that comes after a pass needing it
// without also coming before it (nested pipelines count in the order
// their steps are written).
func CheckOrder(steps []*Step) error {
	var names []string
	var flatten func([]*Step)
	flatten = func(ss []*Step) {
		for _, s := range ss {
			if s.Anchor != "" {
				flatten(s.Nested)
			} else {
				names = append(names, s.PassName)
			}
		}
	}
	flatten(steps)
	for i, name := range names {
		info := Lookup(name)
		if info == nil {
			continue
		}
		for _, n := range info.Needs {
			if !slices.Contains(names[:i], n.Pass) && slices.Contains(names[i+1:], n.Pass) {
				return fmt.Errorf("%s needs %s before it, %s; the pipeline runs %s after it", name, n.Pass, n.Why, n.Pass)
			}
		}
	}
	return nil
}

// checkNeeds reports an op of top left for a pass that info needs and
// that has not run (ran holds the passes run so far).
func checkNeeds(top *ir.Operation, info *Info, ran map[string]bool) error {
	for _, n := range info.Needs {
		need := Lookup(n.Pass)
		if n.OrderOnly || ran[n.Pass] || need == nil || need.Rewrites == nil {
			continue
		}
		var left *ir.Operation
		ir.Walk(top, func(op *ir.Operation) ir.WalkResult {
			if op != top && need.Rewrites(op) {
				left = op
				return ir.Interrupt
			}
			return ir.Advance
		})
		if left != nil {
			return left.EmitError("%s needs %s before it, %s", info.Name, n.Pass, n.Why)
		}
	}
	return nil
}
