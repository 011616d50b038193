package transforms

import (
	"fmt"
	"strings"

	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/passes"
)

func init() {
	passes.Register(&passes.Info{
		Name:    "cse",
		Summary: "Eliminate common sub-expressions: pure ops equal to a dominating op are replaced by it",
		Description: "Replaces each pure op (no side effects, no regions, at least one result, not a terminator) by an equal op that dominates it: same name, operands, attributes and result types. The uses of the later op are redirected to the earlier one's results and the later op is erased.\n" +
			"\n" +
			"Each block is a scope; the entry block of a region also sees the values of the enclosing scopes (they dominate it), except in the regions of ops isolated from above (functions, kernels), which start afresh. Loads, stores and other ops with side effects are never merged.",
		New: func(passes.Options) (passes.Pass, error) {
			return passes.PassFunc(func(op *ir.Operation, _ *passes.Context) error {
				for _, r := range op.Regions() {
					cseRegion(r, &cseScope{known: map[string]*ir.Operation{}})
				}
				return nil
			}), nil
		},
	})
}

type cseScope struct {
	parent *cseScope
	known  map[string]*ir.Operation
}

func (s *cseScope) lookup(k string) *ir.Operation {
	for x := s; x != nil; x = x.parent {
		if op, ok := x.known[k]; ok {
			return op
		}
	}
	return nil
}

// cseRegion processes each block in its own scope; a single-block region
// also sees the enclosing scope (its values dominate the region). Regions
// of isolated ops start afresh.
func cseRegion(r *ir.Region, outer *cseScope) {
	for _, b := range r.Blocks() {
		parent := outer
		if len(r.Blocks()) > 1 && b != r.Entry() {
			parent = nil
		}
		if r.ParentOp() != nil && r.ParentOp().HasTrait(ir.IsolatedFromAbove) {
			parent = nil
		}
		scope := &cseScope{parent: parent, known: map[string]*ir.Operation{}}
		for op := b.First(); op != nil; {
			next := op.Next()
			if key, ok := cseKey(op); ok {
				if prev := scope.lookup(key); prev != nil {
					op.ReplaceAllUsesWith(prev.Results())
					op.Erase()
					op = next
					continue
				}
				scope.known[key] = op
			}
			for _, sub := range op.Regions() {
				cseRegion(sub, scope)
			}
			op = next
		}
	}
}

// cseKey identifies a pure, region-free op by name, operands, attributes
// and result types (attributes and types are interned, so pointers suffice).
func cseKey(op *ir.Operation) (string, bool) {
	if !op.HasTrait(ir.Pure) || op.NumRegions() > 0 || op.NumResults() == 0 || op.HasTrait(ir.Terminator) {
		return "", false
	}
	var sb strings.Builder
	sb.WriteString(op.Name())
	for _, v := range op.Operands() {
		fmt.Fprintf(&sb, "|%p", v)
	}
	for _, a := range op.AllAttrs() {
		fmt.Fprintf(&sb, "|%s=%p", a.Name, a.Value)
	}
	for _, t := range op.ResultTypes() {
		fmt.Fprintf(&sb, "|%p", t)
	}
	return sb.String(), true
}
