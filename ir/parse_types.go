package ir

import (
	"strconv"
	"strings"
)

// isTypeStart reports whether the current token can begin a type.
func (p *Parser) isTypeStart() bool {
	switch p.tok.Kind {
	case TokBang:
		return true
	case TokBareID:
		return isBuiltinTypeKeyword(p.tok.Text)
	case TokPunct:
		return p.tok.Text == "("
	}
	return false
}

func isBuiltinTypeKeyword(s string) bool {
	switch s {
	case "index", "none", "memref", "vector", "tensor", "tuple", "complex":
		return true
	}
	if floatKindOf(s) >= 0 {
		return true
	}
	return intTypeWidth(s) >= 0
}

// floatKindByName maps each float type keyword to its FloatKind.
var floatKindByName = func() map[string]int {
	m := make(map[string]int, len(floatNames))
	for k, n := range floatNames {
		m[n] = k
	}
	return m
}()

// floatKindOf returns the FloatKind spelled s, or -1.
func floatKindOf(s string) int {
	if k, ok := floatKindByName[s]; ok {
		return k
	}
	return -1
}

// maxIntWidth is upstream's limit on integer type widths.
const maxIntWidth = 1<<24 - 1

// intTypeWidth returns N for iN, siN, uiN (i0 included), or -1. Widths
// past the limit come back as maxIntWidth+1.
func intTypeWidth(s string) int {
	switch {
	case strings.HasPrefix(s, "si"), strings.HasPrefix(s, "ui"):
		s = s[2:]
	case strings.HasPrefix(s, "i"):
		s = s[1:]
	default:
		return -1
	}
	if s == "0" {
		return 0
	}
	if s == "" || s[0] == '0' {
		return -1
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return -1
		}
		if n <= maxIntWidth {
			n = n*10 + int(s[i]-'0')
		}
	}
	return min(n, maxIntWidth+1)
}

// ParseOptionalType parses a type if one starts here.
func (p *Parser) ParseOptionalType() (Type, bool, error) {
	if !p.isTypeStart() {
		return nil, false, nil
	}
	t, err := p.ParseType()
	return t, true, err
}

// ParseType parses a type.
func (p *Parser) ParseType() (Type, error) {
	// Types spelled `kw<...>` or `!d.t<...>` are cached by their source text:
	// modules repeat the same few types many times.
	if (p.tok.Kind == TokBareID || p.tok.Kind == TokBang) && p.tok.Offset+len(p.tok.Text) < len(p.src) && p.src[p.tok.Offset+len(p.tok.Text)] == '<' {
		if end := balancedAngleEnd(p.src, p.tok.Offset+len(p.tok.Text)); end > 0 {
			text := p.src[p.tok.Offset:end]
			if t, ok := p.typeCache[text]; ok {
				p.skipTo(end)
				return t, nil
			}
			t, err := p.parseTypeUncached()
			if err == nil && p.tok.Offset >= end {
				p.typeCache[text] = t
			}
			return t, err
		}
	}
	return p.parseTypeUncached()
}

// balancedAngleEnd returns the offset just past the '>' matching the '<' at
// src[i], or -1. It skips strings and does not treat "->" as a bracket.
func balancedAngleEnd(src string, i int) int {
	depth := 0
	for ; i < len(src); i++ {
		switch c := src[i]; c {
		case '<':
			depth++
		case '>':
			if i > 0 && src[i-1] == '-' {
				continue
			}
			depth--
			if depth == 0 {
				return i + 1
			}
		case '"', '\n':
			return -1
		}
	}
	return -1
}

// skipTo advances the token stream to the first token at or after offset end.
func (p *Parser) skipTo(end int) {
	for p.tok.Kind != TokEOF && p.tok.Offset < end {
		p.next()
	}
}

func (p *Parser) parseTypeUncached() (Type, error) {
	t0 := p.tok
	switch p.tok.Kind {
	case TokPunct:
		if p.tok.Text == "(" {
			return p.ParseFunctionType()
		}
	case TokBang:
		return p.parseDialectType()
	case TokBareID:
		kw := p.tok.Text
		if w := intTypeWidth(kw); w >= 0 {
			if w > maxIntWidth {
				return nil, p.ErrorAt(t0, "integer bitwidth is limited to %d bits", maxIntWidth)
			}
			p.next()
			sign := Signless
			if kw[0] == 's' {
				sign = Signed
			} else if kw[0] == 'u' {
				sign = Unsigned
			}
			return IntegerTypeWithSign(w, sign), nil
		}
		if k := floatKindOf(kw); k >= 0 {
			p.next()
			return FloatTypeOf(FloatKind(k)), nil
		}
		switch kw {
		case "index":
			p.next()
			return Index, nil
		case "none":
			p.next()
			return None, nil
		case "memref":
			p.next()
			return p.parseMemRefType()
		case "vector":
			p.next()
			return p.parseVectorType()
		case "tensor":
			p.next()
			return p.parseTensorType()
		case "tuple":
			p.next()
			var ts []Type
			if err := p.ParsePunct("<"); err != nil {
				return nil, err
			}
			if !p.ParseOptionalPunct(">") {
				var err error
				if ts, err = p.ParseTypeList(); err != nil {
					return nil, err
				}
				if err := p.closeType("'>' in tuple type"); err != nil {
					return nil, err
				}
			}
			return TupleTypeOf(ts), nil
		case "complex":
			p.next()
			if err := p.ParsePunct("<"); err != nil {
				return nil, err
			}
			elem, err := p.parseElementType("invalid element type for complex", func(t Type) bool { return IsInteger(t) || IsFloat(t) })
			if err != nil {
				return nil, err
			}
			return ComplexTypeOf(elem), p.closeType("'>' in complex type")
		}
	}
	return nil, p.ErrorAt(t0, "expected non-function type")
}

// ParseTypeList parses type (, type)*.
func (p *Parser) ParseTypeList() ([]Type, error) {
	return p.parseTypesIn(DelimNone)
}

// parseTypesIn parses a comma-separated list of types within delim.
func (p *Parser) parseTypesIn(delim Delimiter) ([]Type, error) {
	ts := []Type{}
	err := p.ParseCommaSeparatedList(delim, func() error {
		t, err := p.ParseType()
		ts = append(ts, t)
		return err
	})
	return ts, err
}

// typesAfter parses lead (`:` or `->`) followed by what parse reads; with
// optional, nothing when lead does not follow.
func (p *Parser) typesAfter(lead string, optional bool, parse func() ([]Type, error)) ([]Type, error) {
	if optional && !p.IsPunct(lead) {
		return nil, nil
	}
	if err := p.ParsePunct(lead); err != nil {
		return nil, err
	}
	return parse()
}

// ParseColonType parses `: type`.
func (p *Parser) ParseColonType() (Type, error) {
	if err := p.ParsePunct(":"); err != nil {
		return nil, err
	}
	return p.ParseType()
}

// ParseColonTypeList parses `: type, type, ...`.
func (p *Parser) ParseColonTypeList() ([]Type, error) {
	return p.typesAfter(":", false, p.ParseTypeList)
}

// ParseOptionalColonTypeList parses `: types` if a colon follows.
func (p *Parser) ParseOptionalColonTypeList() ([]Type, error) {
	return p.typesAfter(":", true, p.ParseTypeList)
}

// ParseFunctionResultTypes parses a single type or a parenthesised list.
func (p *Parser) ParseFunctionResultTypes() ([]Type, error) {
	if p.IsPunct("(") {
		return p.parseParenTypeList()
	}
	t, err := p.ParseType()
	if err != nil {
		return nil, err
	}
	return []Type{t}, nil
}

// ParseArrowTypeList parses `-> type` or `-> (types)`.
func (p *Parser) ParseArrowTypeList() ([]Type, error) {
	return p.typesAfter("->", false, p.ParseFunctionResultTypes)
}

// ParseOptionalArrowTypeList parses `-> types` if an arrow follows.
func (p *Parser) ParseOptionalArrowTypeList() ([]Type, error) {
	return p.typesAfter("->", true, p.ParseFunctionResultTypes)
}

func (p *Parser) parseParenTypeList() ([]Type, error) {
	return p.parseTypesIn(DelimParen)
}

// ParseFunctionType parses (inputs) -> results.
func (p *Parser) ParseFunctionType() (*FunctionType, error) {
	ins, err := p.parseParenTypeList()
	if err != nil {
		return nil, err
	}
	outs, err := p.ParseArrowTypeList()
	if err != nil {
		return nil, err
	}
	return FunctionTypeOf(ins, outs), nil
}

// ParseDimensionList parses `4x?x8x` (each dim followed by 'x'), returning
// the dims; with allowDynamic false, '?' is rejected. It stops before the
// element type. The scanner lexes "4x8xf32" as 4 then "x8xf32"; this splits
// such identifiers at each 'x'.
func (p *Parser) ParseDimensionList(allowDynamic bool) ([]int64, error) {
	var dims []int64
	for {
		switch {
		case p.tok.Kind == TokInt:
			v, err := strconv.ParseInt(p.tok.Text, 0, 64)
			if err != nil || strings.HasPrefix(p.tok.Text, "0x") {
				// "0x4" lexes as a hex literal; it means 0 then x4...
				if strings.HasPrefix(p.tok.Text, "0x") {
					p.sc.ResetTo(p.tok, p.tok.Offset+1)
					p.tok = Token{Kind: TokInt, Text: "0", Offset: p.tok.Offset, Line: p.tok.Line, Col: p.tok.Col}
					v = 0
				} else {
					return nil, p.Errorf("invalid dimension")
				}
			}
			dims = append(dims, v)
			p.next()
		case p.IsPunct("?"):
			if !allowDynamic {
				return nil, p.Errorf("expected static shape")
			}
			dims = append(dims, Dynamic)
			p.next()
		default:
			return dims, nil
		}
		if err := p.parseXInDimensionList(); err != nil {
			return nil, err
		}
	}
}

// parseXInDimensionList consumes the 'x' after a dimension, splitting a
// bare identifier such as "x64xf16" and re-lexing what follows the 'x'.
func (p *Parser) parseXInDimensionList() error {
	if p.tok.Kind != TokBareID || p.tok.Text[0] != 'x' {
		return p.expected("'x' in dimension list")
	}
	if len(p.tok.Text) == 1 {
		p.next()
		return nil
	}
	p.sc.ResetTo(p.tok, p.tok.Offset+1)
	p.next()
	return nil
}

func (p *Parser) parseMemRefType() (Type, error) {
	if err := p.ParsePunct("<"); err != nil {
		return nil, err
	}
	if p.IsPunct("*") {
		p.next()
		if err := p.parseXInDimensionList(); err != nil {
			return nil, err
		}
		elem, err := p.ParseType()
		if err != nil {
			return nil, err
		}
		var space Attribute
		if p.ParseOptionalPunct(",") {
			if space, err = p.ParseAttribute(nil); err != nil {
				return nil, err
			}
		}
		return UnrankedMemRefTypeOf(elem, space), p.closeMemRefType(space == nil)
	}
	dims, err := p.ParseDimensionList(true)
	if err != nil {
		return nil, err
	}
	elem, err := p.parseElementType("invalid memref element type", isValidMemRefElement)
	if err != nil {
		return nil, err
	}
	var layout, space Attribute
	for p.ParseOptionalPunct(",") {
		at := p.tok
		a, err := p.ParseAttribute(nil)
		if err != nil {
			return nil, err
		}
		isLayout := false
		switch a.(type) {
		case *StridedLayoutAttr:
			isLayout = true
		case *OpaqueAttr:
			isLayout = strings.HasPrefix(a.String(), "affine_map")
		}
		if isLayout {
			if layout != nil || space != nil {
				return nil, p.ErrorAt(at, "expected memory space after the layout")
			}
			if s, ok := a.(*StridedLayoutAttr); ok && len(s.Strides) != len(dims) {
				return nil, p.ErrorAt(at, "expected the number of strides to match the rank")
			}
			if n, ok := affineMapNumDims(a.String()); ok && n != len(dims) {
				return nil, p.ErrorAt(at, "memref layout mismatch between rank and affine map: %d != %d", len(dims), n)
			}
			layout = a
			continue
		}
		if space != nil {
			return nil, p.ErrorAt(at, "multiple memory spaces specified in memref type")
		}
		space = a
	}
	if err := p.closeMemRefType(layout == nil && space == nil); err != nil {
		return nil, err
	}
	for _, d := range dims {
		if d < 0 && d != Dynamic {
			return nil, p.Errorf("invalid memref size")
		}
	}
	return MemRefTypeOf(dims, elem, layout, space), nil
}

// affineMapNumDims counts the dimensions of an affine_map<(d0, ...) -> ...>
// written as text.
func affineMapNumDims(text string) (int, bool) {
	rest, ok := strings.CutPrefix(text, "affine_map<(")
	if !ok {
		return 0, false
	}
	end := strings.IndexByte(rest, ')')
	if end < 0 {
		return 0, false
	}
	if strings.TrimSpace(rest[:end]) == "" {
		return 0, true
	}
	return strings.Count(rest[:end], ",") + 1, true
}

// parseElementType parses the element type of a container type; one that
// valid rejects is reported at its first token with msg.
func (p *Parser) parseElementType(msg string, valid func(Type) bool) (Type, error) {
	tok := p.tok
	elem, err := p.ParseType()
	if err != nil {
		return nil, err
	}
	if !valid(elem) {
		return nil, p.ErrorAt(tok, "%s", msg)
	}
	return elem, nil
}

func isValidMemRefElement(t Type) bool {
	switch t.(type) {
	case *IntegerType, *IndexType, *FloatType, *VectorType, *MemRefType, *DialectType, *OpaqueType, *TupleType, *ComplexType:
		return true
	}
	return false
}

func (p *Parser) parseVectorType() (Type, error) {
	if err := p.ParsePunct("<"); err != nil {
		return nil, err
	}
	var dims []int64
	var scalable []bool
	for {
		if p.IsPunct("[") {
			p.next()
			if p.tok.Kind != TokInt {
				return nil, p.Errorf("invalid dimension")
			}
			v, _ := strconv.ParseInt(p.tok.Text, 10, 64)
			p.next()
			if err := p.ParsePunct("]"); err != nil {
				return nil, err
			}
			dims = append(dims, v)
			scalable = append(scalable, true)
		} else if p.tok.Kind == TokInt {
			if strings.HasPrefix(p.tok.Text, "0x") {
				// "0xf32" is the dimension 0 followed by "xf32".
				p.sc.ResetTo(p.tok, p.tok.Offset+1)
				p.tok = Token{Kind: TokInt, Text: "0", Offset: p.tok.Offset, Line: p.tok.Line, Col: p.tok.Col}
			}
			v, err := strconv.ParseInt(p.tok.Text, 10, 64)
			if err != nil {
				return nil, p.Errorf("invalid vector dimension")
			}
			if v <= 0 {
				return nil, p.Errorf("vector types must have positive constant sizes but got %d", v)
			}
			p.next()
			dims = append(dims, v)
			scalable = append(scalable, false)
		} else if p.IsPunct("?") {
			return nil, p.Errorf("expected static shape")
		} else {
			break
		}
		if err := p.parseXInDimensionList(); err != nil {
			return nil, err
		}
	}
	elem, err := p.parseElementType("failed to verify 'elementType': VectorElementTypeInterface instance", func(t Type) bool {
		return IsInteger(t) || IsIndex(t) || IsFloat(t)
	})
	if err != nil {
		return nil, err
	}
	return ScalableVectorTypeOf(dims, scalable, elem), p.closeType("'>' in vector type")
}

func (p *Parser) parseTensorType() (Type, error) {
	if err := p.ParsePunct("<"); err != nil {
		return nil, err
	}
	validElem := func(t Type) bool {
		switch t.(type) {
		case *MemRefType, *UnrankedMemRefType, *FunctionType:
			return false
		}
		return true
	}
	if p.IsPunct("*") {
		p.next()
		if err := p.parseXInDimensionList(); err != nil {
			return nil, err
		}
		elem, err := p.parseElementType("invalid tensor element type", validElem)
		if err != nil {
			return nil, err
		}
		return UnrankedTensorTypeOf(elem), p.closeType("'>' in tensor type")
	}
	dims, err := p.ParseDimensionList(true)
	if err != nil {
		return nil, err
	}
	elem, err := p.parseElementType("invalid tensor element type", validElem)
	if err != nil {
		return nil, err
	}
	var encoding Attribute
	if p.ParseOptionalPunct(",") {
		if encoding, err = p.ParseAttribute(nil); err != nil {
			return nil, err
		}
	}
	return EncodedTensorTypeOf(dims, elem, encoding), p.closeType("'>' in tensor type")
}

// closeType consumes the '>' that ends a builtin type; without one the
// error says what was expected in upstream's words ("expected '>' in
// vector type").
func (p *Parser) closeType(what string) error {
	if p.ParseOptionalPunct(">") {
		return nil
	}
	return p.expected(what)
}

// closeMemRefType is closeType for a memref, where a layout or memory space
// may follow; upstream names the memref type only before the first of them.
func (p *Parser) closeMemRefType(first bool) error {
	if first {
		return p.closeType("',' or '>' in memref type")
	}
	return p.closeType("',' or '>'")
}

// parseDialectType parses !alias, !dialect.mnemonic<...> or !dialect<...>.
func (p *Parser) parseDialectType() (Type, error) {
	return parseDialectEntity(p, p.typeAliases, "types",
		func(d *Dialect) func(*Parser, string) (Type, error) { return d.ParseType },
		func(text string) Type { return OpaqueTypeOf(text) })
}

// skipBalancedAngle returns the text of a balanced <...> group starting at
// the current token, consuming it; it returns "" when no '<' follows.
func (p *Parser) skipBalancedAngle() (string, error) {
	if !p.IsPunct("<") {
		return "", nil
	}
	start := p.tok.Offset
	depth := 0
	for {
		switch {
		case p.tok.Kind == TokEOF:
			return "", p.expected("'>'")
		case p.IsPunct("<"):
			depth++
		case p.IsPunct(">") && !strings.HasPrefix(p.src[p.tok.Offset:], ">="):
			// (">=" is a comparison inside affine sets.)
			depth--
		}
		end := p.tok.Offset + len(p.tok.Text)
		p.next()
		if depth == 0 {
			return p.src[start:end], nil
		}
	}
}
