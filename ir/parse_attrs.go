package ir

import (
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
)

// ParseOptionalAttribute parses an attribute if one starts here.
func (p *Parser) ParseOptionalAttribute(t Type) (Attribute, bool, error) {
	switch p.tok.Kind {
	case TokInt, TokFloat, TokString, TokAt, TokHash, TokBang:
	case TokPunct:
		if p.tok.Text != "[" && p.tok.Text != "{" && p.tok.Text != "-" && p.tok.Text != "(" {
			return nil, false, nil
		}
	case TokBareID:
		switch p.tok.Text {
		case "true", "false", "unit", "dense", "array", "strided", "affine_map", "affine_set", "loc":
		default:
			if !isBuiltinTypeKeyword(p.tok.Text) {
				return nil, false, nil
			}
		}
	default:
		return nil, false, nil
	}
	a, err := p.ParseAttribute(t)
	return a, true, err
}

// ParseAttribute parses an attribute. t, if non-nil, is the type an
// untyped literal takes (otherwise integers default to i64, floats to f64).
func (p *Parser) ParseAttribute(t Type) (Attribute, error) {
	t0 := p.tok
	switch p.tok.Kind {
	case TokInt, TokFloat:
		return p.parseNumberAttr(false, t)
	case TokString:
		s, err := p.ParseString()
		if err != nil {
			return nil, err
		}
		if p.IsPunct(":") && t == nil {
			// A typed string: "foo" : i32.
			save, saveTok, savePrev := *p.sc, p.tok, p.prev
			p.next()
			if p.tok.Kind == TokError {
				return nil, p.tokenError(p.tok)
			}
			ty, ok, err := p.ParseOptionalType()
			if err != nil {
				return nil, err
			}
			if ok {
				return TypedStr(s, ty), nil
			}
			*p.sc, p.tok, p.prev = save, saveTok, savePrev
		}
		return Str(s), nil
	case TokAt:
		root, err := p.ParseSymbolName()
		if err != nil {
			return nil, err
		}
		var nested []string
		for p.IsPunct("::") {
			p.next()
			n, err := p.ParseSymbolName()
			if err != nil {
				return nil, err
			}
			nested = append(nested, n)
		}
		return SymbolRef(root, nested...), nil
	case TokHash:
		return p.parseHashAttr()
	case TokBang:
		ty, err := p.ParseType()
		if err != nil {
			return nil, err
		}
		return TypeAttrOf(ty), nil
	case TokPunct:
		switch p.tok.Text {
		case "-":
			p.next()
			if p.tok.Kind != TokInt && p.tok.Kind != TokFloat {
				return nil, p.expected("constant integer or floating point value")
			}
			return p.parseNumberAttr(true, t)
		case "[":
			var elems []Attribute
			err := p.ParseCommaSeparatedList(DelimSquare, func() error {
				a, err := p.ParseAttribute(nil)
				elems = append(elems, a)
				return err
			})
			if err != nil {
				return nil, err
			}
			return Array(elems...), nil
		case "{":
			entries, err := p.parseAttrDictEntries()
			if err != nil {
				return nil, err
			}
			return Dict(entries), nil
		case "(":
			ft, err := p.ParseFunctionType()
			if err != nil {
				return nil, err
			}
			return TypeAttrOf(ft), nil
		}
	case TokBareID:
		switch p.tok.Text {
		case "true", "false":
			v := p.tok.Text == "true"
			p.next()
			if p.IsPunct(":") && t == nil {
				// "true : i1" is accepted.
				save, saveTok, savePrev := *p.sc, p.tok, p.prev
				p.next()
				if p.tok.Kind == TokError {
					return nil, p.tokenError(p.tok)
				}
				if ty, ok, _ := p.ParseOptionalType(); !ok || !IsIntegerOfWidth(ty, 1) {
					*p.sc, p.tok, p.prev = save, saveTok, savePrev
				}
			}
			return Bool(v), nil
		case "unit":
			p.next()
			return Unit, nil
		case "dense":
			return p.parseDenseAttr(t)
		case "array":
			return p.parseDenseArrayAttr()
		case "strided":
			return p.parseStridedLayout()
		case "affine_map", "affine_set":
			p.next()
			body, err := p.skipBalancedAngle()
			if err != nil {
				return nil, err
			}
			if canon, ok := canonicalAffineMap(t0.Text + body); ok {
				return OpaqueAttrOf(canon), nil
			}
			return OpaqueAttrOf(t0.Text + body), nil
		case "loc":
			l, err := p.ParseLocation()
			if err != nil {
				return nil, err
			}
			return LocAttrOf(l), nil
		}
		if isBuiltinTypeKeyword(p.tok.Text) {
			ty, err := p.ParseType()
			if err != nil {
				return nil, err
			}
			return TypeAttrOf(ty), nil
		}
	}
	if t0.Kind == TokError || t0.Kind == TokEOF {
		return nil, p.expected("attribute value")
	}
	return nil, p.ErrorAt(t0, "expected attribute value")
}

// LocAttrOf wraps a location as an attribute.
func LocAttrOf(l Location) *LocAttr {
	text := "loc(" + l.String() + ")"
	return internAttrKeyed("loc:"+text, text, func(b attrBase) Attribute { return &LocAttr{b, l} }).(*LocAttr)
}

// parseNumberAttr parses an integer or float literal (the sign was already
// consumed) with an optional `: type`.
func (p *Parser) parseNumberAttr(neg bool, t Type) (Attribute, error) {
	litTok := p.tok
	p.next()
	if t == nil && p.IsPunct(":") {
		save, saveTok, savePrev := *p.sc, p.tok, p.prev
		p.next()
		if p.tok.Kind == TokError {
			// Not a type, and nothing else either: report what the
			// scanner found rather than backtracking over it.
			return nil, p.tokenError(p.tok)
		}
		ty, ok, err := p.ParseOptionalType()
		if err != nil {
			return nil, err
		}
		if ok {
			t = ty
		} else {
			*p.sc, p.tok, p.prev = save, saveTok, savePrev
		}
	}
	return p.numberAttrOfType(litTok, neg, t)
}

// noValuesOf rejects a constant of a float type tmac holds no values of.
func (p *Parser) noValuesOf(tok Token, t Type) error {
	if ft, ok := t.(*FloatType); ok && !ft.Kind.HoldsValues() {
		why := "it holds float values as 64-bit floats"
		if ft.Kind != F80 && ft.Kind != F128 {
			why = "sm_90a does not compute with that format"
		}
		return p.ErrorAt(tok, "tmac does not support %s constants: %s", ft, why)
	}
	return nil
}

func (p *Parser) numberAttrOfType(litTok Token, neg bool, t Type) (Attribute, error) {
	if err := p.noValuesOf(litTok, t); err != nil {
		return nil, err
	}
	text := litTok.Text
	if litTok.Kind == TokFloat {
		if t == nil {
			t = F64T
		}
		ft, ok := t.(*FloatType)
		if !ok {
			// Upstream reports this at the token after the literal and its type.
			return nil, p.Errorf("floating point value not valid for specified type")
		}
		v, err := strconv.ParseFloat(text, 64)
		if err != nil && !strings.Contains(err.Error(), "range") {
			return nil, p.ErrorAt(litTok, "invalid floating point value")
		}
		if ft.Kind != F64 {
			// Round from the exact decimal, not through float64, for f32.
			if ft.Kind == F32 {
				v32, _ := strconv.ParseFloat(text, 32)
				v = v32
			}
		}
		if neg {
			v = -v
		}
		return FloatAttrOf(v, ft), nil
	}
	if t == nil {
		t = I64
	}
	switch tt := t.(type) {
	case *FloatType:
		if !strings.HasPrefix(text, "0x") {
			// An integer literal for a float type: "1 : f32" is rejected upstream.
			return nil, Errorf(p.LocOf(litTok), "unexpected decimal integer literal for a floating point value").
				AttachNote(nil, "add a trailing dot to make the literal a float")
		}
		if neg {
			return nil, p.ErrorAt(litTok, "hexadecimal float literal should not have a leading minus")
		}
		bits, err := strconv.ParseUint(text[2:], 16, 64)
		if err != nil || (tt.Kind.StorageBits() < 64 && bits>>uint(tt.Kind.StorageBits()) != 0) {
			return nil, p.ErrorAt(litTok, "hexadecimal float constant out of range for type")
		}
		return FloatAttrOf(FloatFromBits(bits, tt.Kind), tt), nil
	case *IntegerType, *IndexType:
		if it, ok := t.(*IntegerType); ok && it.Signedness == Unsigned && neg {
			return nil, p.ErrorAt(litTok, "negative integer literal not valid for unsigned integer type")
		}
		if BitWidth(t) > 64 {
			v, ok := wideIntLiteral(text, neg, t)
			if !ok {
				return nil, p.ErrorAt(litTok, "integer constant out of range for attribute")
			}
			return BigIntAttr(v, t), nil
		}
		v, err := parseIntLiteral(text, neg)
		if err != nil {
			return nil, p.ErrorAt(litTok, "integer constant out of range for attribute")
		}
		if !intFits(v, neg, text, t) {
			return nil, p.ErrorAt(litTok, "integer constant out of range for attribute")
		}
		if it, ok := t.(*IntegerType); ok && it.Width == 1 {
			return Bool(v != 0), nil
		}
		return IntAttr(v, t), nil
	}
	return nil, p.ErrorAt(litTok, "integer literal not valid for specified type")
}

// wideIntLiteral parses an integer literal for a type wider than 64 bits
// and checks it fits as upstream's APInt does: a negative value in the
// signed range, a positive one in the width (and in the signed range for
// si types).
func wideIntLiteral(text string, neg bool, t Type) (*big.Int, bool) {
	v, base := new(big.Int), 10
	if s, ok := strings.CutPrefix(text, "0x"); ok {
		text, base = s, 16
	}
	if _, ok := v.SetString(text, base); !ok {
		return nil, false
	}
	w := uint(BitWidth(t))
	if neg {
		v.Neg(v)
		return v, v.Cmp(new(big.Int).Neg(new(big.Int).Lsh(big.NewInt(1), w-1))) >= 0
	}
	if it, ok := t.(*IntegerType); ok && it.Signedness == Signed {
		w--
	}
	return v, v.BitLen() <= int(w)
}

// intFits reports whether a literal fits the width of t (as a signed or
// unsigned value, like upstream's APInt checks).
func intFits(v int64, neg bool, text string, t Type) bool {
	w := BitWidth(t)
	if w >= 64 {
		if it, ok := t.(*IntegerType); ok && it.Signedness == Unsigned && neg {
			return false
		}
		if !neg && !strings.HasPrefix(text, "0x") {
			u, err := strconv.ParseUint(text, 10, 64)
			if err != nil {
				return false
			}
			if it, ok := t.(*IntegerType); ok && it.Signedness == Signed && u > math.MaxInt64 {
				return false
			}
		}
		return true
	}
	it, _ := t.(*IntegerType)
	switch {
	case it != nil && it.Signedness == Unsigned:
		return !neg && uint64(v) < 1<<uint(w)
	case it != nil && it.Signedness == Signed:
		return v >= -(1<<uint(w-1)) && v < 1<<uint(w-1)
	}
	// Signless: accept the signed or unsigned range.
	if neg {
		return v >= -(1 << uint(w-1))
	}
	return uint64(v) < 1<<uint(w)
}

func (p *Parser) parseHashAttr() (Attribute, error) {
	return parseDialectEntity(p, p.attrAliases, "attributes",
		func(d *Dialect) func(*Parser, string) (Attribute, error) { return d.ParseAttr },
		func(text string) Attribute { return OpaqueAttrOf(text) })
}

// parseDialectEntity parses what follows '!' (types) or '#' (attributes):
// an alias, `dialect.mnemonic<...>` (the dialect parses the rest) or
// `dialect<mnemonic ...>`. Unknown dialects are kept opaque only with
// --allow-unregistered-dialect.
func parseDialectEntity[T any](p *Parser, aliases map[string]T, what string,
	hook func(*Dialect) func(*Parser, string) (T, error), opaque func(string) T) (T, error) {
	var zero T
	t0 := p.tok
	name := p.tok.Text[1:]
	dialect, mnemonic, hasDot := strings.Cut(name, ".")
	if !hasDot {
		if v, ok := aliases[name]; ok {
			p.next()
			return v, nil
		}
	}
	var parse func(*Parser, string) (T, error)
	if d := LookupDialect(dialect); d != nil {
		parse = hook(d)
	}
	p.next()
	if parse == nil {
		if !hasDot && !p.IsPunct("<") {
			return zero, p.ErrorAt(t0, "undefined symbol alias id '%s'", name)
		}
		if !p.opts.AllowUnregistered {
			return zero, p.ErrorAt(t0, "dialect '%s' is unknown (or has no %s); use --allow-unregistered-dialect to keep it opaque", dialect, what)
		}
		body, err := p.skipBalancedAngle()
		if err != nil {
			return zero, err
		}
		return opaque(t0.Text + body), nil
	}
	if hasDot {
		return parse(p, mnemonic)
	}
	if err := p.ParsePunct("<"); err != nil {
		return zero, err
	}
	m, err := p.ParseAnyKeyword()
	if err != nil {
		return zero, err
	}
	v, err := parse(p, m)
	if err != nil {
		return zero, err
	}
	return v, p.ParsePunct(">")
}

// denseElem is one literal of a dense attribute, before its type is known.
type denseElem struct {
	tok  Token
	neg  bool
	bval int // -1 when not a boolean
}

func (p *Parser) parseDenseAttr(hint Type) (Attribute, error) {
	t0 := p.tok
	p.next()
	if err := p.ParsePunct("<"); err != nil {
		return nil, err
	}
	var elems []denseElem
	var shape []int64
	isSplat := false
	hexTok := Token{}
	switch {
	case p.IsPunct(">"):
	case p.tok.Kind == TokString:
		hexTok = p.tok
		p.next()
	case p.IsPunct("["):
		var err error
		shape, err = p.parseDenseList(&elems, 0)
		if err != nil {
			return nil, err
		}
	default:
		isSplat = true
		e, err := p.parseDenseElem()
		if err != nil {
			return nil, err
		}
		elems = append(elems, e)
	}
	if err := p.ParsePunct(">"); err != nil {
		return nil, err
	}
	tyTok := p.tok
	var ty Type
	if _, shaped := hint.(ShapedType); shaped && !p.IsPunct(":") {
		// The type comes from the context (memref.global's initial value).
		ty = hint
	} else {
		if err := p.ParsePunct(":"); err != nil {
			return nil, err
		}
		tyTok = p.tok
		var err error
		if ty, err = p.ParseType(); err != nil {
			return nil, err
		}
	}
	if _, unranked := ty.(*UnrankedTensorType); unranked {
		return nil, p.ErrorAt(tyTok, "elements literal type must have static shape")
	}
	st, ok := ty.(ShapedType)
	if !ok {
		return nil, p.ErrorAt(tyTok, "elements literal must be a shaped type")
	}
	if _, isMem := ty.(*MemRefType); isMem {
		return nil, p.ErrorAt(tyTok, "elements literal must be a shaped type")
	}
	if !HasStaticShape(st.Shape()) {
		return nil, p.ErrorAt(tyTok, "elements literal type must have static shape")
	}
	elem := st.ElementType()
	n, fits := CheckedNumElements(st.Shape())
	if hexTok.Text != "" {
		return p.denseFromHex(hexTok, st)
	}
	if !fits {
		// More elements than an int64 counts: only a splat can stand for
		// them, and the count must not pass for 0 or 1 below.
		n = -2
	}
	if !isSplat {
		if len(elems) == 0 && n != 0 {
			return nil, p.ErrorAt(tyTok, "parsed zero elements, but type (%s) expected at least 1", ty)
		}
		if !slices.Equal(shape, st.Shape()) && !(len(elems) == 1 && n == 1) && !(len(elems) == 0 && n == 0) {
			return nil, p.ErrorAt(t0, "inferred shape of elements literal ([%s]) does not match type ([%s])", CommaSeparated(shape, formatDim), CommaSeparated(st.Shape(), formatDim))
		}
	}
	switch et := elem.(type) {
	case *FloatType:
		vals := make([]float64, len(elems))
		for i, e := range elems {
			a, err := p.numberAttrOfType(e.tok, e.neg, et)
			if e.bval >= 0 {
				return nil, p.ErrorAt(e.tok, "expected floating point elements, but parsed boolean")
			}
			if err != nil {
				return nil, err
			}
			vals[i] = a.(*FloatAttr).Value
		}
		if isSplat {
			return DenseSplatFloat(vals[0], st), nil
		}
		return DenseFloats(vals, st), nil
	case *IntegerType, *IndexType:
		vals := make([]int64, len(elems))
		for i, e := range elems {
			if e.bval >= 0 {
				if !IsIntegerOfWidth(et, 1) {
					return nil, p.ErrorAt(e.tok, "expected i1 type for 'true' or 'false' values")
				}
				vals[i] = int64(e.bval)
				continue
			}
			if e.tok.Kind == TokFloat {
				return nil, p.ErrorAt(e.tok, "expected integer elements, but parsed floating-point")
			}
			if it, ok := et.(*IntegerType); ok && it.Signedness == Unsigned && e.neg {
				return nil, p.ErrorAt(e.tok, "expected unsigned integer elements, but parsed negative value")
			}
			a, err := p.numberAttrOfType(e.tok, e.neg, et)
			if err != nil {
				return nil, err
			}
			vals[i], _ = AttrInt(a)
		}
		if isSplat {
			return DenseSplatInt(vals[0], st), nil
		}
		return DenseInts(vals, st), nil
	}
	return nil, p.ErrorAt(tyTok, "dense elements of type '%s' are not supported", elem)
}

func (p *Parser) parseDenseElem() (denseElem, error) {
	e := denseElem{bval: -1}
	if p.IsKeyword("true") || p.IsKeyword("false") {
		e.tok = p.tok
		if p.tok.Text == "true" {
			e.bval = 1
		} else {
			e.bval = 0
		}
		p.next()
		return e, nil
	}
	if p.ParseOptionalPunct("-") {
		e.neg = true
	}
	if p.tok.Kind != TokInt && p.tok.Kind != TokFloat {
		return e, p.expected("element literal of primitive type")
	}
	e.tok = p.tok
	p.next()
	return e, nil
}

// parseDenseList parses nested [..] lists, returning the inferred shape.
func (p *Parser) parseDenseList(elems *[]denseElem, depth int) ([]int64, error) {
	if depth > 32 {
		return nil, p.Errorf("dense literal nested too deeply")
	}
	var shape []int64
	count := int64(0)
	first := true
	err := p.ParseCommaSeparatedList(DelimSquare, func() error {
		count++
		if p.IsPunct("[") {
			sub, err := p.parseDenseList(elems, depth+1)
			if err != nil {
				return err
			}
			if first {
				shape = sub
			} else if !slices.Equal(shape, sub) {
				return p.Errorf("tensor literal is invalid; ranks are not consistent between elements")
			}
		} else {
			if !first && shape != nil {
				return p.Errorf("tensor literal is invalid; ranks are not consistent between elements")
			}
			e, err := p.parseDenseElem()
			if err != nil {
				return err
			}
			*elems = append(*elems, e)
		}
		first = false
		return nil
	})
	return append([]int64{count}, shape...), err
}

func (p *Parser) denseFromHex(tok Token, st ShapedType) (Attribute, error) {
	s, _ := UnquoteString(tok.Text)
	if !strings.HasPrefix(s, "0x") || len(s)%2 != 0 {
		return nil, p.ErrorAt(tok, "expected string containing hex digits starting with `0x`")
	}
	raw := make([]byte, (len(s)-2)/2)
	for i := range raw {
		hi, lo := s[2+2*i], s[3+2*i]
		if !isHex(hi) || !isHex(lo) {
			return nil, p.ErrorAt(tok, "expected string containing hex digits starting with `0x`")
		}
		raw[i] = hexVal(hi)<<4 | hexVal(lo)
	}
	elem := st.ElementType()
	if err := p.noValuesOf(tok, elem); err != nil {
		return nil, err
	}
	if IsIntegerOfWidth(elem, 1) {
		return p.denseBitsAttr(tok, raw, st)
	}
	bits := BitWidth(elem)
	if ft, ok := elem.(*FloatType); ok {
		bits = ft.Kind.StorageBits()
	}
	bytesPer := (bits + 7) / 8
	size, fits := ShapeBytes(st.Shape(), 8*bytesPer)
	if bytesPer == 0 || (!fits || int64(len(raw)) != size) && len(raw) != bytesPer {
		return nil, p.ErrorAt(tok, "elements hex data size is invalid for provided type: '%s'", st)
	}
	count := len(raw) / bytesPer
	word := func(i int) uint64 {
		var v uint64
		for b := bytesPer - 1; b >= 0; b-- { // little-endian
			v = v<<8 | uint64(raw[i*bytesPer+b])
		}
		return v
	}
	if ft, ok := elem.(*FloatType); ok {
		vals := make([]float64, count)
		for i := range vals {
			vals[i] = FloatFromBits(word(i), ft.Kind)
		}
		if count == 1 {
			return DenseSplatFloat(vals[0], st), nil
		}
		return DenseFloats(vals, st), nil
	}
	vals := make([]int64, count)
	for i := range vals {
		vals[i] = int64(word(i))
	}
	if count == 1 {
		return DenseSplatInt(vals[0], st), nil
	}
	return DenseInts(vals, st), nil
}

// denseBitsAttr reads i1 elements from hex data as upstream stores them:
// packed eight to a byte, the first in the lowest bit, or one byte of all
// zeros or all ones for a splat.
func (p *Parser) denseBitsAttr(tok Token, raw []byte, st ShapedType) (Attribute, error) {
	if len(raw) == 1 && (raw[0] == 0 || raw[0] == 0xFF) {
		return DenseSplatInt(int64(raw[0]&1), st), nil
	}
	n := NumElements(st.Shape())
	if n < 0 || int64(len(raw)) != (n+7)/8 {
		return nil, p.ErrorAt(tok, "elements hex data size is invalid for provided type: '%s'", st)
	}
	vals := make([]int64, n)
	for i := range vals {
		vals[i] = int64(raw[i/8] >> uint(i%8) & 1)
	}
	return DenseInts(vals, st), nil
}

func (p *Parser) parseDenseArrayAttr() (Attribute, error) {
	p.next()
	if err := p.ParsePunct("<"); err != nil {
		return nil, err
	}
	tyTok := p.tok
	elem, err := p.ParseType()
	if err != nil {
		return nil, err
	}
	switch et := elem.(type) {
	case *IntegerType:
		if !et.IsSignless() || !(et.Width == 1 || et.Width == 8 || et.Width == 16 || et.Width == 32 || et.Width == 64) {
			return nil, p.ErrorAt(tyTok, "expected integer type of width 1, 8, 16, 32 or 64 in dense array")
		}
		var vals []int64
		if p.ParseOptionalPunct(":") {
			err := p.ParseCommaSeparatedList(DelimNone, func() error {
				if et.Width == 1 && (p.IsKeyword("true") || p.IsKeyword("false")) {
					vals = append(vals, map[bool]int64{true: 1, false: 0}[p.tok.Text == "true"])
					p.next()
					return nil
				}
				t := p.tok
				v, ok, err := p.ParseOptionalInteger()
				if err != nil {
					return err
				}
				if !ok {
					return p.Errorf("expected integer literal")
				}
				if !intFits(v, v < 0, t.Text, et) {
					return p.ErrorAt(t, "integer constant out of range for type")
				}
				vals = append(vals, v)
				return nil
			})
			if err != nil {
				return nil, err
			}
		}
		return DenseIntArray(et, vals), p.ParsePunct(">")
	case *FloatType:
		var vals []float64
		if p.ParseOptionalPunct(":") {
			err := p.ParseCommaSeparatedList(DelimNone, func() error {
				neg := p.ParseOptionalPunct("-")
				if p.tok.Kind != TokFloat && p.tok.Kind != TokInt {
					return p.expected("floating point literal")
				}
				t := p.tok
				p.next()
				if t.Kind == TokInt && !strings.HasPrefix(t.Text, "0x") {
					v, _ := strconv.ParseFloat(t.Text, 64)
					if neg {
						v = -v
					}
					vals = append(vals, v)
					return nil
				}
				a, err := p.numberAttrOfType(t, neg, et)
				if err != nil {
					return err
				}
				vals = append(vals, a.(*FloatAttr).Value)
				return nil
			})
			if err != nil {
				return nil, err
			}
		}
		return DenseFloatArray(et, vals), p.ParsePunct(">")
	}
	return nil, p.ErrorAt(tyTok, "expected integer or float type, got: %s", elem)
}

func (p *Parser) parseStridedLayout() (Attribute, error) {
	p.next()
	if err := p.ParsePunct("<"); err != nil {
		return nil, err
	}
	var strides []int64
	parseDimOrDyn := func() (int64, error) {
		if p.ParseOptionalPunct("?") {
			return Dynamic, nil
		}
		return p.ParseInteger()
	}
	err := p.ParseCommaSeparatedList(DelimSquare, func() error {
		v, err := parseDimOrDyn()
		strides = append(strides, v)
		return err
	})
	if err != nil {
		return nil, err
	}
	offset := int64(0)
	if p.ParseOptionalPunct(",") {
		if err := p.ParseKeyword("offset"); err != nil {
			return nil, err
		}
		if err := p.ParsePunct(":"); err != nil {
			return nil, err
		}
		if offset, err = parseDimOrDyn(); err != nil {
			return nil, err
		}
	}
	if strides == nil {
		strides = []int64{}
	}
	return StridedLayout(strides, offset), p.ParsePunct(">")
}
