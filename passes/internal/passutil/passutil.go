// Package passutil holds the few helpers that several pass families share
// and no dialect owns: integer arithmetic for offsets and phases, and IR
// queries that cross dialects.
package passutil

import "github.com/tmac-dev/tmac/ir"

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

// loopOps are the ops whose body may run more than once.
var loopOps = map[string]bool{"scf.for": true, "scf.while": true, "scf.parallel": true, "scf.forall": true, "affine.for": true}

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
		if o.Name() == "memref.global" && o.SymbolName() == sym.Root {
			found = o
			return ir.Interrupt
		}
		if o.Name() == "gpu.func" || o.Name() == "func.func" {
			return ir.Skip
		}
		return ir.Advance
	})
	return found
}
