package bundle

import (
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"
)

// The expression language of host plans (manifest format 2): signed 64-bit
// integers over the entry's arguments, scratch allocations and loop
// variables.
//
//	expr  := term (("+" | "-") term)*
//	term  := unary (("*" | "/" | "%") unary)*
//	unary := "-" unary | atom
//	atom  := INT | ref | FUNC "(" expr ("," expr)* ")" | "(" expr ")"
//	FUNC  := "ceildiv" | "min" | "max"   (ceildiv: 2 arguments; min, max: 2 or more)
//	ref   := "arg" N "." field | "arg" N | "tmp" N "." field | "i" N
//	field := "dim" N | "stride" N | "ptr"
//
// Every intermediate value outside int64 is an error; / and % truncate
// toward zero; /, % and ceildiv fail on a zero divisor or a negative
// operand. Python's evaluator (python/tmac/_plan.py) implements the same
// rules.

// Limits on expressions, so a hostile manifest cannot exhaust the stack or
// memory of a reader.
const (
	MaxExprLen   = 4096
	MaxExprDepth = 64
)

// RefKind says what a reference names.
type RefKind uint8

const (
	RefArg  RefKind = iota // argN (an integer scalar argument) or argN.field
	RefTmp                 // tmpN.field (a scratch allocation)
	RefLoop                // iN (the loop variable of the N-th enclosing for)
)

// Ref is a reference inside an expression.
type Ref struct {
	Kind  RefKind
	Index int
	// Field is "", "dim", "stride" or "ptr"; Dim is the dimension of
	// dim and stride.
	Field string
	Dim   int
}

func (r Ref) String() string {
	s := [...]string{RefArg: "arg", RefTmp: "tmp", RefLoop: "i"}[r.Kind] + strconv.Itoa(r.Index)
	switch r.Field {
	case "dim", "stride":
		s += "." + r.Field + strconv.Itoa(r.Dim)
	case "ptr":
		s += ".ptr"
	}
	return s
}

// Expr is a parsed expression.
type Expr struct {
	src  string
	root *node
}

type node struct {
	op   string // "int", "ref", "neg", "+", "-", "*", "/", "%", "ceildiv", "min", "max"
	val  int64
	ref  Ref
	args []*node
	text string // the source text of the node, for error messages
}

// String returns the expression's source text.
func (e *Expr) String() string { return e.src }

// Refs calls f for every reference in the expression.
func (e *Expr) Refs(f func(Ref)) {
	var walk func(n *node)
	walk = func(n *node) {
		if n.op == "ref" {
			f(n.ref)
		}
		for _, a := range n.args {
			walk(a)
		}
	}
	walk(e.root)
}

// Const reports the value of an expression that has no references and
// evaluates without error.
func (e *Expr) Const() (int64, bool) {
	hasRef := false
	e.Refs(func(Ref) { hasRef = true })
	if hasRef {
		return 0, false
	}
	v, err := e.Eval(nil)
	return v, err == nil
}

// ParseExpr parses an expression of the host plan language.
func ParseExpr(s string) (*Expr, error) {
	if len(s) > MaxExprLen {
		return nil, fmt.Errorf("expression of %d bytes is longer than %d", len(s), MaxExprLen)
	}
	p := &exprParser{src: s}
	p.next()
	n, err := p.expr(0)
	if err != nil {
		return nil, fmt.Errorf("expression %q: %v", s, err)
	}
	if p.tok != "" {
		return nil, fmt.Errorf("expression %q: unexpected %q at offset %d", s, p.tok, p.start)
	}
	return &Expr{src: s, root: n}, nil
}

// MustParseExpr parses an expression known to be well-formed.
func MustParseExpr(s string) *Expr {
	e, err := ParseExpr(s)
	if err != nil {
		panic(err)
	}
	return e
}

type exprParser struct {
	src        string
	pos        int
	tok        string // "" at the end
	start, end int    // the token's span
}

func isIdent(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.'
}

// next reads the next token: a number, a word (letters, digits, dots) or
// one punctuation character.
func (p *exprParser) next() {
	for p.pos < len(p.src) && p.src[p.pos] == ' ' {
		p.pos++
	}
	p.start = p.pos
	if p.pos >= len(p.src) {
		p.tok, p.end = "", p.pos
		return
	}
	if isIdent(p.src[p.pos]) {
		for p.pos < len(p.src) && isIdent(p.src[p.pos]) {
			p.pos++
		}
	} else {
		p.pos++
	}
	p.tok, p.end = p.src[p.start:p.pos], p.pos
}

func (p *exprParser) text(from int) string { return strings.TrimSpace(p.src[from:p.start]) }

func (p *exprParser) expr(depth int) (*node, error) {
	if depth > MaxExprDepth {
		return nil, fmt.Errorf("nested deeper than %d", MaxExprDepth)
	}
	from := p.start
	n, err := p.term(depth)
	if err != nil {
		return nil, err
	}
	for p.tok == "+" || p.tok == "-" {
		op := p.tok
		p.next()
		r, err := p.term(depth)
		if err != nil {
			return nil, err
		}
		n = &node{op: op, args: []*node{n, r}}
		n.text = p.text(from)
	}
	return n, nil
}

func (p *exprParser) term(depth int) (*node, error) {
	from := p.start
	n, err := p.unary(depth)
	if err != nil {
		return nil, err
	}
	for p.tok == "*" || p.tok == "/" || p.tok == "%" {
		op := p.tok
		p.next()
		r, err := p.unary(depth)
		if err != nil {
			return nil, err
		}
		n = &node{op: op, args: []*node{n, r}}
		n.text = p.text(from)
	}
	return n, nil
}

func (p *exprParser) unary(depth int) (*node, error) {
	if depth > MaxExprDepth {
		return nil, fmt.Errorf("nested deeper than %d", MaxExprDepth)
	}
	from := p.start
	if p.tok == "-" {
		p.next()
		a, err := p.unary(depth + 1)
		if err != nil {
			return nil, err
		}
		return &node{op: "neg", args: []*node{a}, text: p.text(from)}, nil
	}
	return p.atom(depth)
}

func (p *exprParser) atom(depth int) (*node, error) {
	from := p.start
	tok := p.tok
	switch {
	case tok == "":
		return nil, fmt.Errorf("unexpected end")
	case tok == "(":
		p.next()
		n, err := p.expr(depth + 1)
		if err != nil {
			return nil, err
		}
		if p.tok != ")" {
			return nil, fmt.Errorf("missing ) at offset %d", p.start)
		}
		p.next()
		return n, nil
	case tok[0] >= '0' && tok[0] <= '9':
		v, err := strconv.ParseInt(tok, 10, 64)
		if err != nil || strings.ContainsAny(tok, "._") {
			return nil, fmt.Errorf("bad integer %q", tok)
		}
		p.next()
		return &node{op: "int", val: v, text: tok}, nil
	case tok == "ceildiv" || tok == "min" || tok == "max":
		p.next()
		if p.tok != "(" {
			return nil, fmt.Errorf("%s needs arguments in parentheses", tok)
		}
		n := &node{op: tok}
		for {
			p.next()
			a, err := p.expr(depth + 1)
			if err != nil {
				return nil, err
			}
			n.args = append(n.args, a)
			if p.tok != "," {
				break
			}
		}
		if p.tok != ")" {
			return nil, fmt.Errorf("missing ) at offset %d", p.start)
		}
		p.next()
		if tok == "ceildiv" && len(n.args) != 2 {
			return nil, fmt.Errorf("ceildiv takes 2 arguments, not %d", len(n.args))
		}
		if len(n.args) < 2 {
			return nil, fmt.Errorf("%s takes at least 2 arguments", tok)
		}
		n.text = p.text(from)
		return n, nil
	}
	r, err := ParseRef(tok)
	if err != nil {
		return nil, err
	}
	p.next()
	return &node{op: "ref", ref: r, text: tok}, nil
}

// ParseRef parses a reference: argN, argN.dimK, argN.strideK, argN.ptr,
// tmpN.field, iN.
func ParseRef(s string) (Ref, error) {
	name, field, hasField := strings.Cut(s, ".")
	var r Ref
	var digits string
	switch {
	case strings.HasPrefix(name, "arg"):
		r.Kind, digits = RefArg, name[3:]
	case strings.HasPrefix(name, "tmp"):
		r.Kind, digits = RefTmp, name[3:]
	case strings.HasPrefix(name, "i"):
		r.Kind, digits = RefLoop, name[1:]
	default:
		return r, fmt.Errorf("unknown name %q", s)
	}
	var ok bool
	if r.Index, ok = number(digits); !ok {
		return r, fmt.Errorf("unknown name %q", s)
	}
	switch {
	case !hasField && r.Kind == RefTmp:
		return r, fmt.Errorf("%q needs a field (dimN, strideN or ptr)", s)
	case !hasField:
		return r, nil
	case r.Kind == RefLoop:
		return r, fmt.Errorf("loop variable %q has no fields", s)
	case field == "ptr":
		r.Field = "ptr"
	case strings.HasPrefix(field, "dim"):
		r.Field = "dim"
		r.Dim, ok = number(field[3:])
	case strings.HasPrefix(field, "stride"):
		r.Field = "stride"
		r.Dim, ok = number(field[6:])
	default:
		ok = false
	}
	if !ok {
		return r, fmt.Errorf("unknown field in %q", s)
	}
	return r, nil
}

// number parses a small decimal number without sign or leading zeros.
func number(s string) (int, bool) {
	if s == "" || len(s) > 6 || (len(s) > 1 && s[0] == '0') {
		return 0, false
	}
	n := 0
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// Eval evaluates the expression; lookup gives the value of a reference
// (nil: the expression must have none).
func (e *Expr) Eval(lookup func(Ref) (int64, error)) (int64, error) {
	return e.root.eval(lookup)
}

func (n *node) eval(lookup func(Ref) (int64, error)) (int64, error) {
	switch n.op {
	case "int":
		return n.val, nil
	case "ref":
		if lookup == nil {
			return 0, fmt.Errorf("%s has no value here", n.ref)
		}
		return lookup(n.ref)
	}
	vs := make([]int64, len(n.args))
	for i, a := range n.args {
		v, err := a.eval(lookup)
		if err != nil {
			return 0, err
		}
		vs[i] = v
	}
	switch n.op {
	case "neg":
		if vs[0] == math.MinInt64 {
			return 0, fmt.Errorf("integer overflow in %s", n.text)
		}
		return -vs[0], nil
	case "min", "max":
		r := vs[0]
		for _, v := range vs[1:] {
			if (n.op == "min") == (v < r) {
				r = v
			}
		}
		return r, nil
	}
	r, ok := Arith(n.op, vs[0], vs[1])
	if !ok {
		switch {
		case (n.op == "/" || n.op == "%" || n.op == "ceildiv") && vs[1] == 0:
			return 0, fmt.Errorf("division by zero in %s", n.text)
		case n.op == "/" || n.op == "%" || n.op == "ceildiv":
			return 0, fmt.Errorf("negative operand in %s (%d and %d)", n.text, vs[0], vs[1])
		}
		return 0, fmt.Errorf("integer overflow in %s", n.text)
	}
	return r, nil
}

// Arith applies a binary operator of the language (+ - * / % ceildiv) with
// its rules: false on an int64 overflow, a zero divisor or a negative
// operand of / % ceildiv.
func Arith(op string, a, b int64) (int64, bool) {
	switch op {
	case "+":
		r := a + b
		return r, (r > a) == (b > 0)
	case "-":
		r := a - b
		return r, (r < a) == (b > 0)
	case "*":
		if a == 0 || b == 0 {
			return 0, true
		}
		hi, lo := bits.Mul64(uint64(abs(a)), uint64(abs(b)))
		neg := (a < 0) != (b < 0)
		if hi != 0 || lo > math.MaxInt64+uint64(boolInt(neg)) || a == math.MinInt64 || b == math.MinInt64 {
			// MinInt64 times 1 or -1 is the only product with an
			// operand of MinInt64 that could fit; abs cannot show it.
			if (a == math.MinInt64 && b == 1) || (b == math.MinInt64 && a == 1) {
				return math.MinInt64, true
			}
			return 0, false
		}
		if neg {
			return -int64(lo), true
		}
		return int64(lo), true
	case "/", "%", "ceildiv":
		if b <= 0 || a < 0 {
			return 0, false
		}
		switch op {
		case "/":
			return a / b, true
		case "%":
			return a % b, true
		}
		q := a / b
		if a%b != 0 {
			q++
		}
		return q, true
	}
	return 0, false
}

func abs(a int64) int64 {
	if a < 0 {
		return -a
	}
	return a
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
