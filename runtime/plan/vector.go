package plan

import (
	"os"

	"github.com/tmac-dev/tmac/dialects/vector"
	"github.com/tmac-dev/tmac/ir"
)

// print runs vector.print on the host: a string, punctuation or a scalar
// (the host holds no vectors), printed to standard output as upstream's
// runtime prints it (vector.PrintText).
func (x *Exec) print(op *ir.Operation) error {
	var v any
	var t ir.Type
	if op.NumOperands() > 0 {
		t = op.Operand(0).Type()
		if _, isVec := t.(*ir.VectorType); isVec {
			return errAt(op, "vector.print of a vector cannot run on the host (the host holds scalars); print it in the kernel, or its elements")
		}
		v = x.vals[op.Operand(0)]
	}
	os.Stdout.WriteString(vector.PrintText(op, func(int) string { return vector.FormatElement(v, t) }))
	return nil
}
