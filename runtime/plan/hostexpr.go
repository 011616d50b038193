package plan

import (
	"strconv"

	"github.com/tmac-dev/tmac/bundle"
)

// sexpr is an integer expression of the host plan language being built by
// the translator (decl.go): its text, the precedence of its outermost
// operator, and its value when it is a constant.
type sexpr struct {
	text    string
	prec    int // 1: + -, 2: * / % and unary -, 3: atoms
	val     int64
	isConst bool
}

func constExpr(v int64) *sexpr {
	if v < 0 {
		return &sexpr{text: strconv.FormatInt(v, 10), prec: 2, val: v, isConst: true}
	}
	return &sexpr{text: strconv.FormatInt(v, 10), prec: 3, val: v, isConst: true}
}

func refExpr(r string) *sexpr { return &sexpr{text: r, prec: 3} }

// paren writes e as an operand that needs at least precedence prec.
func (e *sexpr) paren(prec int) string {
	if e.prec < prec {
		return "(" + e.text + ")"
	}
	return e.text
}

// binExpr builds `a op b` for + - * / % ceildiv min max, folding constants
// (when the language's rules give a value) and the identities x+0, x-0,
// x*1, x/1, x*0.
func binExpr(op string, a, b *sexpr) *sexpr {
	if a.isConst && b.isConst {
		switch op {
		case "min":
			return constExpr(min(a.val, b.val))
		case "max":
			return constExpr(max(a.val, b.val))
		}
		if v, ok := bundle.Arith(op, a.val, b.val); ok {
			return constExpr(v)
		}
	}
	isConst := func(e *sexpr, v int64) bool { return e.isConst && e.val == v }
	switch {
	case (op == "+" || op == "-") && isConst(b, 0), (op == "*" || op == "/") && isConst(b, 1):
		return a
	case op == "+" && isConst(a, 0), op == "*" && isConst(a, 1):
		return b
	case op == "*" && (isConst(a, 0) || isConst(b, 0)):
		return constExpr(0)
	}
	switch op {
	case "+", "-":
		return &sexpr{text: a.paren(1) + " " + op + " " + b.paren(2), prec: 1}
	case "*", "/", "%":
		return &sexpr{text: a.paren(2) + " " + op + " " + b.paren(3), prec: 2}
	}
	// ceildiv, min, max
	return &sexpr{text: op + "(" + a.text + ", " + b.text + ")", prec: 3}
}
