package arith

import "github.com/tmac-dev/tmac/ir"

// arith.cmpi predicates, as the `predicate` attribute holds them
// (upstream's numbering).
const (
	CmpIEq  = 0
	CmpINe  = 1
	CmpISlt = 2
	CmpISle = 3
	CmpISgt = 4
	CmpISge = 5
	CmpIUlt = 6
	CmpIUle = 7
	CmpIUgt = 8
	CmpIUge = 9
)

// ConstantInt returns the value of v when an integer or index
// arith.constant defines it.
func ConstantInt(v ir.Value) (int64, bool) {
	r, ok := v.(*ir.OpResult)
	if !ok || r.DefiningOp().Name() != "arith.constant" {
		return 0, false
	}
	return ir.AttrInt(r.DefiningOp().Attr("value"))
}
