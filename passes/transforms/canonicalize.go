// Package transforms holds the generic cleanup passes, canonicalize and
// cse.
package transforms

import (
	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/passes"
)

func init() {
	passes.Register(&passes.Info{
		Name:    "canonicalize",
		Summary: "Fold constant expressions and remove dead pure operations, to a fixed point",
		Description: "Sweeps the IR in post-order, repeatedly, until nothing changes (at most `max-iterations` sweeps). Each sweep:\n" +
			"\n" +
			"- erases trivially dead ops: pure ops (no side effects) whose results are unused;\n" +
			"- folds ops whose definition has a folder, given which of their operands are constants: the results become existing values (`x + 0` is `x`) or new constants (`2 * 3` is `6`, materialised as a constant op, such as `arith.constant`, before the op; an op whose constant cannot be materialised is left alone), and the op is erased.\n" +
			"\n" +
			"Constant-like ops themselves are never folded. tmac has no pattern-based canonicalization beyond the folders.",
		Options: []passes.Option{{Name: "max-iterations", Default: "10", Help: "stop after this many sweeps"}},
		New: func(o passes.Options) (passes.Pass, error) {
			n, err := o.Int("max-iterations")
			if err != nil {
				return nil, err
			}
			return passes.PassFunc(func(op *ir.Operation, _ *passes.Context) error {
				for i := 0; i < n && canonicalizeOnce(op); i++ {
				}
				return nil
			}), nil
		},
	})
}

// canonicalizeOnce folds and removes dead ops in one post-order sweep and
// reports whether anything changed.
func canonicalizeOnce(top *ir.Operation) bool {
	changed := false
	ir.WalkPost(top, func(op *ir.Operation) {
		if op == top || op.Block() == nil {
			return
		}
		if ir.IsTriviallyDead(op) {
			op.Erase()
			changed = true
			return
		}
		if foldOp(op) {
			changed = true
		}
	})
	return changed
}

// foldOp replaces op's results by existing values or new constants when
// the op's Fold hook can compute all of them.
func foldOp(op *ir.Operation) bool {
	fold := op.Def().Fold
	if fold == nil || op.HasTrait(ir.ConstantLike) || op.NumResults() == 0 {
		return false
	}
	operands := make([]ir.Attribute, op.NumOperands())
	for i := range operands {
		operands[i] = ir.ConstantValue(op.Operand(i))
	}
	results := fold(op, operands)
	if len(results) != op.NumResults() {
		return false
	}
	b := ir.NewBuilder(op.Loc)
	b.SetInsertionPoint(op)
	vals := make([]ir.Value, len(results))
	var created []*ir.Operation
	for i, r := range results {
		switch r := r.(type) {
		case ir.Value:
			vals[i] = r
		case ir.Attribute:
			c := ir.MaterializeConstant(b, r, op.Result(i).Type())
			if c == nil {
				for _, x := range created {
					x.Erase()
				}
				return false
			}
			created = append(created, c)
			vals[i] = c.Result(0)
		default:
			for _, x := range created {
				x.Erase()
			}
			return false
		}
	}
	op.ReplaceAllUsesWith(vals)
	op.Erase()
	return true
}
