package ir

import (
	"strconv"
	"strings"
)

// Affine maps as upstream prints them. An affine_map<...> attribute is
// kept as text (OpaqueAttr), but the text is upstream's canonical form:
// the parsed expressions are built with the simplifications upstream's
// AffineExpr operators apply as they build them (constants folded and moved
// to the right, a - b as a + b * -1, products and quotients by constants
// folded), dimensions and symbols renamed d0.. and s0.., and printed with
// upstream's precedence and its "pretty" subtractions. Text this parser
// does not understand is kept as written.

type affineKind uint8

const (
	affineDim affineKind = iota
	affineSymbol
	affineConst
	affineAdd
	affineMul
	affineMod
	affineFloorDiv
	affineCeilDiv
)

// affineExpr is one node of an affine expression: a dimension or symbol
// (pos), a constant (val) or a binary operation (lhs, rhs).
type affineExpr struct {
	kind     affineKind
	pos      int
	val      int64
	lhs, rhs *affineExpr
}

func affineConstant(v int64) *affineExpr { return &affineExpr{kind: affineConst, val: v} }

func (e *affineExpr) isConst() bool { return e.kind == affineConst }

// symbolicOrConstant reports an expression without dimensions.
func (e *affineExpr) symbolicOrConstant() bool {
	switch e.kind {
	case affineDim:
		return false
	case affineSymbol, affineConst:
		return true
	}
	return e.lhs.symbolicOrConstant() && e.rhs.symbolicOrConstant()
}

func affineBinary(k affineKind, lhs, rhs *affineExpr) *affineExpr {
	return &affineExpr{kind: k, lhs: lhs, rhs: rhs}
}

// add is upstream's AffineExpr::operator+ (simplifyAdd, for the forms
// affine maps in memref layouts and vector ops take).
func (e *affineExpr) add(rhs *affineExpr) *affineExpr {
	lhs := e
	if lhs.isConst() && rhs.isConst() {
		return affineConstant(lhs.val + rhs.val)
	}
	// Constants on the right; a symbolic term right of a dimensional one.
	if lhs.isConst() || lhs.symbolicOrConstant() && !rhs.symbolicOrConstant() {
		return rhs.add(lhs)
	}
	if rhs.isConst() {
		if rhs.val == 0 {
			return lhs
		}
		if lhs.kind == affineAdd && lhs.rhs.isConst() {
			return lhs.lhs.add(affineConstant(lhs.rhs.val + rhs.val))
		}
	}
	// (d0 + 2) + d1 is (d0 + d1) + 2.
	if lhs.kind == affineAdd && lhs.rhs.isConst() {
		return lhs.lhs.add(rhs).add(lhs.rhs)
	}
	return affineBinary(affineAdd, lhs, rhs)
}

// mul is upstream's AffineExpr::operator* (simplifyMul).
func (e *affineExpr) mul(rhs *affineExpr) *affineExpr {
	lhs := e
	if lhs.isConst() && rhs.isConst() {
		return affineConstant(lhs.val * rhs.val)
	}
	if !lhs.symbolicOrConstant() && !rhs.symbolicOrConstant() {
		return affineBinary(affineMul, lhs, rhs)
	}
	// The constant or symbolic factor on the right.
	if !rhs.symbolicOrConstant() || lhs.isConst() {
		return rhs.mul(lhs)
	}
	if rhs.isConst() {
		switch rhs.val {
		case 1:
			return lhs
		case 0:
			return rhs
		}
		if lhs.kind == affineMul && lhs.rhs.isConst() {
			return lhs.lhs.mul(affineConstant(lhs.rhs.val * rhs.val))
		}
	}
	// (d0 * 2) * d1 is (d0 * d1) * 2.
	if lhs.kind == affineMul && lhs.rhs.isConst() {
		return lhs.lhs.mul(rhs).mul(lhs.rhs)
	}
	return affineBinary(affineMul, lhs, rhs)
}

// div builds floordiv, ceildiv and mod, folding constants and products by
// a multiple of the divisor, as upstream's simplifyFloorDiv/CeilDiv/Mod do.
func (e *affineExpr) div(k affineKind, rhs *affineExpr) *affineExpr {
	lhs := e
	if !rhs.isConst() || rhs.val < 1 {
		return affineBinary(k, lhs, rhs)
	}
	c := rhs.val
	if lhs.isConst() {
		switch k {
		case affineFloorDiv:
			return affineConstant(floorDiv(lhs.val, c))
		case affineCeilDiv:
			return affineConstant(-floorDiv(-lhs.val, c))
		default:
			return affineConstant(lhs.val - floorDiv(lhs.val, c)*c)
		}
	}
	if c == 1 {
		if k == affineMod {
			return affineConstant(0)
		}
		return lhs
	}
	if lhs.kind == affineMul && lhs.rhs.isConst() && lhs.rhs.val%c == 0 {
		if k == affineMod {
			return affineConstant(0)
		}
		return lhs.lhs.mul(affineConstant(lhs.rhs.val / c))
	}
	return affineBinary(k, lhs, rhs)
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// write prints e as upstream's AsmPrinter does; strong is the binding
// strength of the enclosing operator (true inside *, mod, floordiv,
// ceildiv).
func (e *affineExpr) write(sb *strings.Builder, strong bool) {
	switch e.kind {
	case affineDim:
		sb.WriteString("d" + strconv.Itoa(e.pos))
		return
	case affineSymbol:
		sb.WriteString("s" + strconv.Itoa(e.pos))
		return
	case affineConst:
		sb.WriteString(strconv.FormatInt(e.val, 10))
		return
	}
	if strong {
		sb.WriteByte('(')
		defer sb.WriteByte(')')
	}
	if e.kind != affineAdd {
		if e.kind == affineMul && e.rhs.isConst() && e.rhs.val == -1 {
			sb.WriteByte('-')
			e.lhs.write(sb, true)
			return
		}
		e.lhs.write(sb, true)
		sb.WriteString(map[affineKind]string{affineMul: " * ", affineMod: " mod ", affineFloorDiv: " floordiv ", affineCeilDiv: " ceildiv "}[e.kind])
		e.rhs.write(sb, true)
		return
	}
	// a + b * -1 prints as a - b, a + b * -c as a - b * c, a + -c as a - c.
	if r := e.rhs; r.kind == affineMul && r.rhs.isConst() {
		if r.rhs.val == -1 {
			e.lhs.write(sb, false)
			sb.WriteString(" - ")
			r.lhs.write(sb, r.lhs.kind == affineAdd)
			return
		}
		if r.rhs.val < -1 {
			e.lhs.write(sb, false)
			sb.WriteString(" - ")
			r.lhs.write(sb, true)
			sb.WriteString(" * " + strconv.FormatInt(-r.rhs.val, 10))
			return
		}
	}
	if e.rhs.isConst() && e.rhs.val < 0 {
		e.lhs.write(sb, false)
		sb.WriteString(" - " + strconv.FormatInt(-e.rhs.val, 10))
		return
	}
	e.lhs.write(sb, false)
	sb.WriteString(" + ")
	e.rhs.write(sb, false)
}

// canonicalAffineMap returns the text of the affine_map<...> attribute
// text as upstream prints it, and false if it is not an affine map this
// parser reads.
func canonicalAffineMap(text string) (string, bool) {
	body, ok := strings.CutPrefix(text, "affine_map<")
	if !ok || !strings.HasSuffix(body, ">") {
		return "", false
	}
	ap := &affineMapParser{TextScanner: TextScanner{Src: body[:len(body)-1]}, names: map[string]*affineExpr{}}
	dims, ok := ap.idList("(", ")", affineDim)
	if !ok {
		return "", false
	}
	syms := 0
	if ap.Peek("[") {
		if syms, ok = ap.idList("[", "]", affineSymbol); !ok {
			return "", false
		}
	}
	if !ap.Eat("->") || !ap.Eat("(") {
		return "", false
	}
	var results []*affineExpr
	for !ap.Eat(")") {
		if len(results) > 0 && !ap.Eat(",") {
			return "", false
		}
		r, ok := ap.expr()
		if !ok {
			return "", false
		}
		results = append(results, r)
	}
	ap.SkipSpace()
	if ap.Pos != len(ap.Src) {
		return "", false
	}
	var sb strings.Builder
	sb.WriteString("affine_map<(")
	writeAffineIDs(&sb, "d", dims)
	sb.WriteByte(')')
	if syms > 0 {
		sb.WriteByte('[')
		writeAffineIDs(&sb, "s", syms)
		sb.WriteByte(']')
	}
	sb.WriteString(" -> (")
	for i, r := range results {
		if i > 0 {
			sb.WriteString(", ")
		}
		r.write(&sb, false)
	}
	sb.WriteString(")>")
	return sb.String(), true
}

// writeAffineIDs writes the canonical names of n dimensions or symbols:
// prefix0, prefix1, ...
func writeAffineIDs(sb *strings.Builder, prefix string, n int) {
	for i := range n {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString(prefix + strconv.Itoa(i))
	}
}

type affineMapParser struct {
	TextScanner
	names map[string]*affineExpr
}

func isAffineIDChar(c byte) bool {
	return c == '_' || c == '$' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// idList reads the dimension or symbol names and binds them.
func (ap *affineMapParser) idList(open, close string, kind affineKind) (int, bool) {
	if !ap.Eat(open) {
		return 0, false
	}
	n := 0
	for !ap.Eat(close) {
		if n > 0 && !ap.Eat(",") {
			return 0, false
		}
		ap.SkipSpace()
		id := ap.Ident(isAffineIDChar)
		if id == "" || id[0] >= '0' && id[0] <= '9' || ap.names[id] != nil {
			return 0, false
		}
		ap.names[id] = &affineExpr{kind: kind, pos: n}
		n++
	}
	return n, true
}

// expr parses a sum: term (('+' | '-') term)*.
func (ap *affineMapParser) expr() (*affineExpr, bool) {
	e, ok := ap.term()
	for ok {
		switch {
		case ap.Eat("+"):
			var r *affineExpr
			if r, ok = ap.term(); ok {
				e = e.add(r)
			}
		case ap.Peek("-") && !ap.Peek("->"):
			ap.Eat("-")
			var r *affineExpr
			if r, ok = ap.term(); ok {
				e = e.add(r.mul(affineConstant(-1)))
			}
		default:
			return e, true
		}
	}
	return nil, false
}

// term parses a product: factor (('*' | 'mod' | 'floordiv' | 'ceildiv') factor)*.
func (ap *affineMapParser) term() (*affineExpr, bool) {
	e, ok := ap.factor()
	for ok {
		var k affineKind
		switch {
		case ap.Eat("*"):
			k = affineMul
		case ap.keyword("mod"):
			k = affineMod
		case ap.keyword("floordiv"):
			k = affineFloorDiv
		case ap.keyword("ceildiv"):
			k = affineCeilDiv
		default:
			return e, true
		}
		var r *affineExpr
		if r, ok = ap.factor(); !ok {
			break
		}
		if k == affineMul {
			e = e.mul(r)
		} else {
			e = e.div(k, r)
		}
	}
	return nil, false
}

// keyword consumes kw when it is a whole word.
func (ap *affineMapParser) keyword(kw string) bool {
	if !ap.Peek(kw) {
		return false
	}
	if end := ap.Pos + len(kw); end < len(ap.Src) && isAffineIDChar(ap.Src[end]) {
		return false
	}
	ap.Pos += len(kw)
	return true
}

// factor parses '-' factor, '(' expr ')', an integer or a bound name.
func (ap *affineMapParser) factor() (*affineExpr, bool) {
	switch {
	case ap.Eat("-"):
		e, ok := ap.factor()
		if !ok {
			return nil, false
		}
		return e.mul(affineConstant(-1)), true
	case ap.Eat("("):
		e, ok := ap.expr()
		if !ok || !ap.Eat(")") {
			return nil, false
		}
		return e, true
	}
	ap.SkipSpace()
	id := ap.Ident(isAffineIDChar)
	if id == "" {
		return nil, false
	}
	if id[0] >= '0' && id[0] <= '9' {
		v, err := strconv.ParseInt(id, 10, 64)
		if err != nil {
			return nil, false
		}
		return affineConstant(v), true
	}
	e := ap.names[id]
	return e, e != nil
}
