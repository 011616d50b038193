package ir

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ParseOptions control parsing.
type ParseOptions struct {
	// AllowUnregistered accepts ops of unknown dialects in generic form.
	AllowUnregistered bool
	// LineOffset is added to line numbers (for split input files).
	LineOffset int
}

// Parser parses MLIR textual IR. Custom op syntax hooks (OpDef.Parse) and
// dialect type/attribute parsers use its exported methods.
type Parser struct {
	sc   *Scanner
	tok  Token
	prev Token // the token before tok, for errors at the end of input
	file string
	src  string
	opts ParseOptions

	typeAliases map[string]Type
	attrAliases map[string]Attribute
	typeCache   map[string]Type

	scopes  []*isolatedScope
	regions []*regionScope
	opStack []*OpDef // ops whose custom syntax is being parsed
	// opGeneric parallels opStack: whether the op is written in the
	// generic form, whose regions keep the enclosing default dialect.
	opGeneric []bool
	dialects  []string // default dialect stack

	numResultBindings int // result names bound by the custom op being parsed
}

// NumResultBindings returns how many results the custom op being parsed had
// bound by name (`%a, %b = ...`); 0 when none.
func (p *Parser) NumResultBindings() int { return p.numResultBindings }

// UnresolvedOperand is an operand reference (%name or %name#N) whose value
// is looked up when its type is known.
type UnresolvedOperand struct {
	Name   string // without the %
	Number int
	Tok    Token
}

// Argument is a region argument being declared: %name: type {attrs} loc(...).
type Argument struct {
	Operand UnresolvedOperand
	Type    Type
	Attrs   *DictAttr
	Loc     Location
}

// isolatedScope holds the SSA names visible in an isolated-from-above region
// nest, and the forward references not yet defined.
type isolatedScope struct {
	values      map[string][]Value
	forwardRefs map[string]*forwardRef
}

type forwardRef struct {
	placeholder *Operation
	use         Token
}

// regionScope tracks the names defined in a region (removed when it ends)
// and its block labels.
type regionScope struct {
	defined []string
	blocks  map[string]*blockDef
}

type blockDef struct {
	block   *Block
	defined bool
	use     Token
}

var placeholderDef = &OpDef{Name: "builtin.forward_ref", unregistered: true}

// Parse parses a module from src. A file whose only top-level op is a
// builtin.module returns that module; otherwise the top-level ops are
// wrapped in a new module, as upstream does.
func Parse(file, src string, opts ParseOptions) (op *Operation, err error) {
	p := newParser(file, src, opts)
	defer func() {
		if r := recover(); r != nil {
			n, ok := r.(nestingError)
			if !ok {
				panic(r)
			}
			op, err = nil, p.ErrorAt(n.tok, "nesting deeper than %d levels of brackets and regions (tmac's limit)", MaxNesting)
		}
	}()
	if looksUTF16(src) {
		return nil, Errorf(FileLineColLoc{File: file, Line: 1 + opts.LineOffset, Col: 1}, "the input looks like UTF-16 text; tmac reads UTF-8")
	}
	return p.parseTopLevel()
}

// looksUTF16 reports text that starts with a UTF-16 byte order mark, or
// with two ASCII characters encoded as UTF-16 (a NUL byte beside each).
func looksUTF16(s string) bool {
	if strings.HasPrefix(s, "\xff\xfe") || strings.HasPrefix(s, "\xfe\xff") {
		return true
	}
	if len(s) < 4 {
		return false
	}
	ascii := func(c byte) bool { return c >= 0x09 && c < 0x7f }
	return s[1] == 0 && s[3] == 0 && ascii(s[0]) && ascii(s[2]) || s[0] == 0 && s[2] == 0 && ascii(s[1]) && ascii(s[3])
}

// MaxNesting bounds how deep brackets, and with them regions, types and
// attributes, may nest. The parser recurses once per level: input nested
// thousands deep (a generator gone wrong, a fuzzer) would otherwise take
// quadratic time and memory to print, or exhaust the stack.
const MaxNesting = 256

// nestingError unwinds the parser from the token that opened one level
// too many; Parse turns it into a diagnostic.
type nestingError struct{ tok Token }

func newParser(file, src string, opts ParseOptions) *Parser {
	p := &Parser{
		sc: NewScanner(src), file: file, src: src, opts: opts,
		typeAliases: map[string]Type{}, attrAliases: map[string]Attribute{},
		typeCache: map[string]Type{},
	}
	p.next()
	return p
}

func (p *Parser) next() {
	p.prev = p.tok
	p.tok = p.sc.Next()
	if p.sc.depth > MaxNesting {
		panic(nestingError{p.tok})
	}
}

// Tok returns the current token.
func (p *Parser) Tok() Token { return p.tok }

// LocOf returns the source location of a token. The end of the input is
// located just after the last token (not on a blank line past it, or on
// the next part of a split input file).
func (p *Parser) LocOf(t Token) Location {
	if t.Kind == TokEOF && p.prev.Text != "" && p.prev.Kind != TokEOF {
		t = p.endOfPrev()
	}
	return FileLineColLoc{File: p.file, Line: t.Line + p.opts.LineOffset, Col: t.Col}
}

// endOfPrev is a position just after the previous token.
func (p *Parser) endOfPrev() Token {
	return Token{Kind: p.prev.Kind, Offset: p.prev.Offset + len(p.prev.Text), Line: p.prev.Line, Col: p.prev.Col + len(p.prev.Text)}
}

// CurrentLoc returns the location of the current token.
func (p *Parser) CurrentLoc() Location { return p.LocOf(p.tok) }

// Errorf returns an error diagnostic at the current token.
func (p *Parser) Errorf(format string, args ...any) error { return p.ErrorAt(p.tok, format, args...) }

// CustomOpErrorf returns an error at the current token prefixed with
// "custom op 'name' ", as upstream's custom-op parser errors are.
func (p *Parser) CustomOpErrorf(format string, args ...any) error {
	return p.CustomOpErrorAt(p.tok, format, args...)
}

// CustomOpErrorAt is CustomOpErrorf at tok.
func (p *Parser) CustomOpErrorAt(t Token, format string, args ...any) error {
	if len(p.opStack) > 0 && p.opStack[len(p.opStack)-1] != nil {
		format = "custom op '" + strings.ReplaceAll(p.opStack[len(p.opStack)-1].Name, "%", "%%") + "' " + format
	}
	return p.ErrorAt(t, format, args...)
}

// ErrorAt returns an error diagnostic at tok.
//
// A missing token is reported where it is missing, as upstream does: an
// "expected ..." error at the current token when that token starts a new
// line points just after the previous token rather than at the next line
// (and so does any error at the end of the input: see LocOf).
func (p *Parser) ErrorAt(t Token, format string, args ...any) error {
	if t.Kind == TokError && t.Offset == p.tok.Offset && p.tok.Kind == TokError {
		// The scanner could not read the token: that is the error, whatever
		// the parser expected there.
		return p.tokenError(t)
	}
	msg := fmt.Sprintf(format, args...)
	if p.prev.Text != "" && t.Offset == p.tok.Offset && t.Kind == p.tok.Kind && t.Kind != TokEOF &&
		t.Line > p.prev.Line && isExpectedMsg(msg) {
		t = p.endOfPrev()
	}
	return Errorf(p.LocOf(t), "%s", msg)
}

// escapeTok returns a token at the backslash of the first invalid escape
// of the string literal that starts skip bytes into t.
func (p *Parser) escapeTok(t Token, skip int) Token {
	if i := BadEscape(t.Text[skip:]); i >= 0 {
		t.Col += skip + i
		t.Offset += skip + i
	}
	return t
}

// tokenError says what is wrong with a token the scanner could not read:
// an unterminated string, a sigil without a name, or a character that
// cannot start a token (reported as such, with its code point: a stray
// byte order mark, a NUL, a byte that is not UTF-8, a non-ASCII letter).
func (p *Parser) tokenError(t Token) error {
	s := t.Text
	loc := p.LocOf(t)
	switch {
	case strings.HasPrefix(s, "\"") || strings.HasPrefix(s, "@\""):
		return Errorf(loc, "string literal is missing its closing '\"'")
	case len(s) == 1 && strings.Contains("%^#!@", s):
		return Errorf(loc, "'%s' must be followed by a name (letters, digits, $ . _ -)", s)
	}
	return Errorf(loc, "%s", DescribeChar(s))
}

// DescribeChar describes an unexpected character (one UTF-8 sequence, or
// one byte that is not valid UTF-8) for an error message.
func DescribeChar(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	switch {
	case r == utf8.RuneError && n <= 1:
		return fmt.Sprintf("unexpected byte 0x%02X (not valid UTF-8)", s[0])
	case r == 0:
		return "unexpected NUL byte (0x00)"
	case r == 0xFEFF:
		return "unexpected byte order mark (U+FEFF); tmac reads UTF-8 without one"
	case r < 0x80 && strconv.IsPrint(r):
		return fmt.Sprintf("unexpected character '%c'", r)
	case r >= 0x80 && unicode.IsGraphic(r) && !unicode.IsSpace(r):
		return fmt.Sprintf("unexpected character '%c' (U+%04X)", r, r)
	}
	return fmt.Sprintf("unexpected character U+%04X", r)
}

// isExpectedMsg reports an "expected X" error, also as a custom op's
// ("custom op 'name' expected X").
func isExpectedMsg(msg string) bool {
	if strings.HasPrefix(msg, "custom op '") {
		if i := strings.Index(msg[len("custom op '"):], "' "); i >= 0 {
			msg = msg[len("custom op '")+i+2:]
		}
	}
	return strings.HasPrefix(msg, "expected ")
}

// expected reports "expected X" at the current token (see ErrorAt), or
// what is wrong with the token when the scanner could not read one.
func (p *Parser) expected(what string) error {
	if p.tok.Kind == TokError {
		return p.tokenError(p.tok)
	}
	return p.Errorf("expected %s", what)
}

func (p *Parser) parseTopLevel() (*Operation, error) {
	top := NewRegion()
	block := top.AddBlock(&Block{})
	p.pushIsolated()
	p.pushRegion()
	for p.tok.Kind != TokEOF {
		switch {
		case p.tok.Kind == TokBang && p.peekIsAliasDef():
			if err := p.parseTypeAliasDef(); err != nil {
				return nil, err
			}
		case p.tok.Kind == TokHash && p.peekIsAliasDef():
			if err := p.parseAttrAliasDef(); err != nil {
				return nil, err
			}
		case p.tok.Kind == TokPunct && p.tok.Text == "{" && strings.HasPrefix(p.src[p.tok.Offset:], "{-#"):
			if err := p.skipFileMetadata(); err != nil {
				return nil, err
			}
		default:
			op, err := p.parseOperation()
			if err != nil {
				return nil, err
			}
			block.Append(op)
		}
	}
	if err := p.popRegion(); err != nil {
		return nil, err
	}
	if err := p.popIsolated(); err != nil {
		return nil, err
	}
	if err := p.resolveLocAliases(block); err != nil {
		return nil, err
	}
	ops := block.Ops()
	if len(ops) == 1 && ops[0].Name() == "builtin.module" {
		ops[0].Remove()
		return ops[0], nil
	}
	// Wrap in an implicit module.
	// Upstream locates the implicit module at line 0, column 0 of the buffer.
	st := &OperationState{Name: "builtin.module", Loc: FileLineColLoc{File: p.file, Line: 0, Col: 0}}
	r := st.AddRegion()
	body := r.AddBlock(&Block{})
	for _, op := range ops {
		op.Remove()
		body.Append(op)
	}
	return NewOperation(st), nil
}

// peekIsAliasDef reports whether the current !name / #name token is followed
// by '=' (an alias definition).
func (p *Parser) peekIsAliasDef() bool {
	save, saveTok, savePrev := *p.sc, p.tok, p.prev
	p.next()
	is := p.tok.Kind == TokPunct && p.tok.Text == "="
	*p.sc, p.tok, p.prev = save, saveTok, savePrev
	return is
}

// peekIsResultList reports whether the tokens from the current %name are
// the result list of an operation (`%a, %b:2 =`) rather than operands: a
// trailing variadic or optional operand group of a custom format that is
// empty would otherwise take the next op's results, so an op printed with
// no operands there did not parse back.
func (p *Parser) peekIsResultList() bool {
	if p.tok.Kind != TokPercent {
		return false
	}
	save, saveTok, savePrev := *p.sc, p.tok, p.prev
	defer func() { *p.sc, p.tok, p.prev = save, saveTok, savePrev }()
	for p.tok.Kind == TokPercent {
		p.next()
		if p.tok.Kind == TokPunct && p.tok.Text == ":" {
			p.next()
			if p.tok.Kind != TokInt {
				return false
			}
			p.next()
		}
		switch {
		case p.tok.Kind == TokPunct && p.tok.Text == "=":
			return true
		case p.tok.Kind == TokPunct && p.tok.Text == ",":
			p.next()
		default:
			return false
		}
	}
	return false
}

func (p *Parser) skipFileMetadata() error {
	end := strings.Index(p.src[p.tok.Offset:], "#-}")
	if end < 0 {
		return p.Errorf("unterminated file metadata block")
	}
	target := p.tok.Offset + end + 3
	for p.tok.Kind != TokEOF && p.tok.Offset < target {
		p.next()
	}
	return nil
}

func (p *Parser) parseTypeAliasDef() error {
	return parseAliasDef(p, "type", p.typeAliases, p.ParseType)
}

func (p *Parser) parseAttrAliasDef() error {
	return parseAliasDef(p, "attribute", p.attrAliases, func() (Attribute, error) { return p.ParseAttribute(nil) })
}

// parseAliasDef parses `!name = type` or `#name = attr` (kind says which)
// into aliases, with parse reading the value.
func parseAliasDef[T any](p *Parser, kind string, aliases map[string]T, parse func() (T, error)) error {
	name := p.tok.Text[1:]
	t0 := p.tok
	if strings.Contains(name, ".") {
		return p.ErrorAt(t0, "%s names with a '.' are reserved for dialect-defined names", kind)
	}
	p.next()
	p.next() // '='
	if _, dup := aliases[name]; dup {
		return p.ErrorAt(t0, "redefinition of %s alias id '%s'", kind, name)
	}
	v, err := parse()
	if err != nil {
		return err
	}
	aliases[name] = v
	return nil
}

// --- punctuation and keywords -------------------------------------------

// IsPunct reports whether the current token is the punctuation s.
func (p *Parser) IsPunct(s string) bool { return p.tok.Kind == TokPunct && p.tok.Text == s }

// ParseOptionalPunct consumes s if it is next.
func (p *Parser) ParseOptionalPunct(s string) bool { return p.consumeIf(p.IsPunct(s)) }

// ParsePunct consumes s or fails with "expected 's'".
func (p *Parser) ParsePunct(s string) error { return p.require(p.ParseOptionalPunct(s), s) }

// IsKeyword reports whether the current token is the bare identifier kw.
func (p *Parser) IsKeyword(kw string) bool { return p.tok.Kind == TokBareID && p.tok.Text == kw }

// ParseOptionalKeyword consumes kw if it is next.
func (p *Parser) ParseOptionalKeyword(kw string) bool { return p.consumeIf(p.IsKeyword(kw)) }

// ParseKeyword consumes kw or fails with "expected 'kw'".
func (p *Parser) ParseKeyword(kw string) error { return p.require(p.ParseOptionalKeyword(kw), kw) }

// consumeIf moves past the current token when it is the one looked for
// (found), and returns found.
func (p *Parser) consumeIf(found bool) bool {
	if found {
		p.next()
	}
	return found
}

// require is nil when lit was found, else the error "expected 'lit'".
func (p *Parser) require(found bool, lit string) error {
	if found {
		return nil
	}
	return p.expected("'" + lit + "'")
}

// ParseLiteral consumes lit, a keyword (`to`) or punctuation (`=`), or
// fails with "expected 'lit'", as a literal of a declarative format does.
func (p *Parser) ParseLiteral(lit string) error {
	if isKeywordLiteral(lit) {
		return p.ParseKeyword(lit)
	}
	return p.ParsePunct(lit)
}

// isKeywordLiteral reports whether a format literal is a keyword rather
// than punctuation.
func isKeywordLiteral(lit string) bool { return isAlpha(lit[0]) || lit[0] == '_' }

// ParseOptionalAnyKeyword consumes and returns any bare identifier.
func (p *Parser) ParseOptionalAnyKeyword() (string, bool) {
	if p.tok.Kind == TokBareID {
		s := p.tok.Text
		p.next()
		return s, true
	}
	return "", false
}

// ParseAnyKeyword consumes a bare identifier or fails.
func (p *Parser) ParseAnyKeyword() (string, error) {
	if s, ok := p.ParseOptionalAnyKeyword(); ok {
		return s, nil
	}
	return "", p.expected("valid keyword")
}

// ParseKeywordOrString consumes a bare identifier or a string literal.
func (p *Parser) ParseKeywordOrString() (string, error) {
	if p.tok.Kind == TokString {
		return p.ParseString()
	}
	return p.ParseAnyKeyword()
}

// ParseString consumes a string literal and returns its value.
func (p *Parser) ParseString() (string, error) {
	if p.tok.Kind != TokString {
		return "", p.expected("string")
	}
	s, ok := UnquoteString(p.tok.Text)
	if !ok {
		return "", p.ErrorAt(p.escapeTok(p.tok, 0), "unknown escape in string literal")
	}
	p.next()
	return s, nil
}

// ParseOptionalInteger parses an optionally negative integer literal.
func (p *Parser) ParseOptionalInteger() (int64, bool, error) {
	neg := false
	if p.IsPunct("-") {
		save, saveTok, savePrev := *p.sc, p.tok, p.prev
		p.next()
		if p.tok.Kind != TokInt {
			*p.sc, p.tok, p.prev = save, saveTok, savePrev
			return 0, false, nil
		}
		neg = true
	}
	if p.tok.Kind != TokInt {
		return 0, false, nil
	}
	v, err := parseIntLiteral(p.tok.Text, neg)
	if err != nil {
		return 0, true, p.Errorf("integer value too large")
	}
	p.next()
	return v, true, nil
}

// ParseInteger parses an integer literal or fails.
func (p *Parser) ParseInteger() (int64, error) {
	v, ok, err := p.ParseOptionalInteger()
	if err != nil {
		return 0, err
	}
	if !ok {
		return 0, p.expected("integer value")
	}
	return v, nil
}

// ParseIntegerList parses comma-separated integers within d: `[1, 2]`.
func (p *Parser) ParseIntegerList(d Delimiter) ([]int64, error) {
	var vals []int64
	err := p.ParseCommaSeparatedList(d, func() error {
		v, err := p.ParseInteger()
		vals = append(vals, v)
		return err
	})
	return vals, err
}

func parseIntLiteral(text string, neg bool) (int64, error) {
	var u uint64
	var err error
	if strings.HasPrefix(text, "0x") {
		u, err = strconv.ParseUint(text[2:], 16, 64)
	} else {
		u, err = strconv.ParseUint(text, 10, 64)
	}
	if err != nil {
		return 0, err
	}
	if neg {
		if u > 1<<63 {
			return 0, fmt.Errorf("overflow")
		}
		return -int64(u), nil
	}
	return int64(u), nil
}

// ParseSymbolName parses @name.
func (p *Parser) ParseSymbolName() (string, error) {
	if p.tok.Kind != TokAt {
		return "", p.expected("valid '@'-identifier for symbol name")
	}
	name, err := p.symbolText(p.tok)
	if err != nil {
		return "", err
	}
	p.next()
	return name, nil
}

// ParseOptionalSymbolName parses @name if present.
func (p *Parser) ParseOptionalSymbolName() (string, bool, error) {
	if p.tok.Kind != TokAt {
		return "", false, nil
	}
	s, err := p.ParseSymbolName()
	return s, true, err
}

func (p *Parser) symbolText(t Token) (string, error) {
	body := t.Text[1:]
	if strings.HasPrefix(body, "\"") {
		s, ok := UnquoteString(body)
		if !ok {
			return "", p.ErrorAt(p.escapeTok(t, 1), "unknown escape in string literal")
		}
		return s, nil
	}
	return body, nil
}

// --- delimited lists ----------------------------------------------------

// Delimiter selects the brackets around a list.
type Delimiter uint8

const (
	DelimNone Delimiter = iota
	DelimParen
	DelimSquare
	DelimLessGreater
	DelimBraces
	DelimOptionalParen
	DelimOptionalSquare
	DelimOptionalLessGreater
	DelimOptionalBraces
)

var delimPairs = [...][2]string{{"", ""}, {"(", ")"}, {"[", "]"}, {"<", ">"}, {"{", "}"}, {"(", ")"}, {"[", "]"}, {"<", ">"}, {"{", "}"}}

// ParseCommaSeparatedList parses elements separated by commas, enclosed in
// the delimiters. An optional delimiter that is absent parses nothing.
func (p *Parser) ParseCommaSeparatedList(d Delimiter, elem func() error) error {
	return p.ParseCommaSeparatedListIn(d, "", elem)
}

// ParseCommaSeparatedListIn is ParseCommaSeparatedList whose missing
// delimiters are reported with context appended ("expected ')' in
// argument list"), as upstream's contextMessage argument does.
func (p *Parser) ParseCommaSeparatedListIn(d Delimiter, context string, elem func() error) error {
	open, close := delimPairs[d][0], delimPairs[d][1]
	if d != DelimNone {
		if d >= DelimOptionalParen {
			if !p.ParseOptionalPunct(open) {
				return nil
			}
		} else if !p.ParseOptionalPunct(open) {
			return p.expected("'" + open + "'" + context)
		}
		if p.ParseOptionalPunct(close) {
			return nil
		}
	}
	for {
		if err := elem(); err != nil {
			return err
		}
		if !p.ParseOptionalPunct(",") {
			break
		}
	}
	if d != DelimNone && !p.ParseOptionalPunct(close) {
		return p.expected("'" + close + "'" + context)
	}
	return nil
}

// --- SSA values ---------------------------------------------------------

func (p *Parser) pushIsolated() {
	p.scopes = append(p.scopes, &isolatedScope{values: map[string][]Value{}, forwardRefs: map[string]*forwardRef{}})
}

func (p *Parser) popIsolated() error {
	s := p.scopes[len(p.scopes)-1]
	p.scopes = p.scopes[:len(p.scopes)-1]
	var first *forwardRef
	var firstName string
	for name, fr := range s.forwardRefs {
		if first == nil || fr.use.Offset < first.use.Offset {
			first, firstName = fr, name
		}
	}
	if first != nil {
		return p.ErrorAt(first.use, "use of undeclared SSA value name '%%%s'", strings.SplitN(firstName, "#", 2)[0])
	}
	return nil
}

func (p *Parser) pushRegion() {
	p.regions = append(p.regions, &regionScope{blocks: map[string]*blockDef{}})
}

func (p *Parser) popRegion() error {
	rs := p.regions[len(p.regions)-1]
	p.regions = p.regions[:len(p.regions)-1]
	scope := p.scopes[len(p.scopes)-1]
	for _, name := range rs.defined {
		delete(scope.values, name)
	}
	for name, bd := range rs.blocks {
		if !bd.defined {
			return p.ErrorAt(bd.use, "reference to an undefined block '^%s'", name)
		}
	}
	return nil
}

// ParseOptionalOperand parses %name or %name#N if present.
func (p *Parser) ParseOptionalOperand() (UnresolvedOperand, bool, error) {
	if p.tok.Kind != TokPercent {
		return UnresolvedOperand{}, false, nil
	}
	u, err := p.ParseOperand()
	return u, true, err
}

// ParseOperand parses %name or %name#N.
func (p *Parser) ParseOperand() (UnresolvedOperand, error) {
	if p.tok.Kind != TokPercent {
		return UnresolvedOperand{}, p.expected("SSA operand")
	}
	u := UnresolvedOperand{Name: p.tok.Text[1:], Tok: p.tok}
	p.next()
	// Like upstream, a hash identifier after an operand is its result
	// number, with or without space between them (`%x#1`, `%x #1`).
	if p.tok.Kind == TokHash {
		n, err := strconv.Atoi(p.tok.Text[1:])
		if err != nil {
			return u, p.Errorf("invalid SSA value result number")
		}
		u.Number = n
		p.next()
	}
	return u, nil
}

// ParseOperandList parses a delimited list of operands.
func (p *Parser) ParseOperandList(d Delimiter) ([]UnresolvedOperand, error) {
	var us []UnresolvedOperand
	if d == DelimNone && p.tok.Kind != TokPercent {
		return nil, nil
	}
	err := p.ParseCommaSeparatedList(d, func() error {
		u, err := p.ParseOperand()
		us = append(us, u)
		return err
	})
	return us, err
}

// ResolveOperand returns the value u names, which must have type t. A use
// before the definition creates a placeholder filled in later.
func (p *Parser) ResolveOperand(u UnresolvedOperand, t Type) (Value, error) {
	scope := p.scopes[len(p.scopes)-1]
	if vals, ok := scope.values[u.Name]; ok {
		if u.Number >= len(vals) {
			return nil, p.ErrorAt(u.Tok, "reference to invalid result number")
		}
		v := vals[u.Number]
		if t != nil && v.Type() != t {
			return nil, Errorf(p.LocOf(u.Tok), "use of value '%%%s' expects different type than prior uses: '%s' vs '%s'", u.Name, t, v.Type()).
				AttachNote(v.Loc(), "prior use here")
		}
		return v, nil
	}
	key := u.Name
	if u.Number != 0 {
		key += "#" + strconv.Itoa(u.Number)
	}
	if fr, ok := scope.forwardRefs[key]; ok {
		v := fr.placeholder.Result(0)
		if t != nil && v.Type() != t {
			return nil, p.ErrorAt(u.Tok, "use of value '%%%s' expects different type than prior uses: '%s' vs '%s'", u.Name, t, v.Type())
		}
		return v, nil
	}
	// Like upstream, values defined above an isolated-from-above region
	// stay visible by name; the verifier rejects their uses.
	for i := len(p.scopes) - 2; i >= 0; i-- {
		if vals, ok := p.scopes[i].values[u.Name]; ok && u.Number < len(vals) {
			v := vals[u.Number]
			if t != nil && v.Type() != t {
				return nil, Errorf(p.LocOf(u.Tok), "use of value '%%%s' expects different type than prior uses: '%s' vs '%s'", u.Name, t, v.Type()).
					AttachNote(v.Loc(), "prior use here")
			}
			return v, nil
		}
	}
	if t == nil {
		return nil, p.ErrorAt(u.Tok, "use of undeclared SSA value name '%%%s'", u.Name)
	}
	ph := &Operation{def: placeholderDef, Loc: p.LocOf(u.Tok)}
	ph.results = []OpResult{{valueImpl: valueImpl{typ: t}, owner: ph}}
	scope.forwardRefs[key] = &forwardRef{placeholder: ph, use: u.Tok}
	return ph.Result(0), nil
}

// ResolveOperands resolves each operand with the matching type.
func (p *Parser) ResolveOperands(us []UnresolvedOperand, ts []Type, st *OperationState) error {
	if len(us) != len(ts) {
		t := p.tok
		if len(us) > 0 {
			t = us[0].Tok
		}
		return p.ErrorAt(t, "%d operands present, but expected %d", len(us), len(ts))
	}
	for i, u := range us {
		v, err := p.ResolveOperand(u, ts[i])
		if err != nil {
			return err
		}
		st.Operands = append(st.Operands, v)
	}
	return nil
}

// ResolveOperandsSameType resolves all operands with type t.
func (p *Parser) ResolveOperandsSameType(us []UnresolvedOperand, t Type, st *OperationState) error {
	for _, u := range us {
		v, err := p.ResolveOperand(u, t)
		if err != nil {
			return err
		}
		st.Operands = append(st.Operands, v)
	}
	return nil
}

// ParseOperandOfType parses an operand whose type the syntax implies (the
// i1 condition of scf.if and cf.cond_br) and adds it to st.
func (p *Parser) ParseOperandOfType(t Type, st *OperationState) error {
	u, err := p.ParseOperand()
	if err != nil {
		return err
	}
	return p.ResolveOperandsSameType([]UnresolvedOperand{u}, t, st)
}

// defineValue binds %name (or the values of a result group) in scope.
func (p *Parser) defineValues(u UnresolvedOperand, vals []Value) error {
	scope := p.scopes[len(p.scopes)-1]
	if prev, dup := scope.values[u.Name]; dup {
		d := Errorf(p.LocOf(u.Tok), "redefinition of SSA value '%%%s'", u.Name)
		if len(prev) > 0 {
			d.AttachNote(prev[0].Loc(), "previously defined here")
		}
		return d
	}
	for i, v := range vals {
		key := u.Name
		if i != 0 {
			key += "#" + strconv.Itoa(i)
		}
		if fr, ok := scope.forwardRefs[key]; ok {
			ph := fr.placeholder.Result(0)
			if ph.Type() != v.Type() {
				return p.ErrorAt(fr.use, "use of value '%%%s' expects different type than prior uses: '%s' vs '%s'", u.Name, ph.Type(), v.Type())
			}
			ReplaceAllUsesWith(ph, v)
			delete(scope.forwardRefs, key)
		}
	}
	// A forward reference to a result number the group does not have.
	for key, fr := range scope.forwardRefs {
		if name, num, ok := strings.Cut(key, "#"); ok && name == u.Name {
			n, _ := strconv.Atoi(num)
			if n >= len(vals) {
				return p.ErrorAt(fr.use, "reference to invalid result number")
			}
		}
	}
	scope.values[u.Name] = vals
	if len(p.regions) > 0 {
		rs := p.regions[len(p.regions)-1]
		rs.defined = append(rs.defined, u.Name)
	}
	return nil
}

// ParseAssignmentList parses `(%arg = %value, ...)`, the syntax of loop
// iter_args and launch sizes: the new region arguments (untyped) and the
// values they are bound to.
func (p *Parser) ParseAssignmentList() ([]Argument, []UnresolvedOperand, error) {
	var args []Argument
	var vals []UnresolvedOperand
	err := p.ParseCommaSeparatedList(DelimParen, func() error {
		a, u, err := p.ParseAssignment()
		if err != nil {
			return err
		}
		args = append(args, a)
		vals = append(vals, u)
		return nil
	})
	return args, vals, err
}

// ParseAssignment parses `%arg = %value`: a new (untyped) region argument
// and the value bound to it.
func (p *Parser) ParseAssignment() (Argument, UnresolvedOperand, error) {
	a, err := p.ParseArgument(false, false)
	if err != nil {
		return a, UnresolvedOperand{}, err
	}
	u, err := p.ParseOperandAfter("=")
	return a, u, err
}

// ParseOperandAfter parses lit (see ParseLiteral) and then an operand:
// `= %lb`, `to %ub`, `, %rhs`.
func (p *Parser) ParseOperandAfter(lit string) (UnresolvedOperand, error) {
	if err := p.ParseLiteral(lit); err != nil {
		return UnresolvedOperand{}, err
	}
	return p.ParseOperand()
}

// --- operations ---------------------------------------------------------

type resultGroup struct {
	name  UnresolvedOperand
	count int
}

func (p *Parser) parseOperation() (*Operation, error) {
	var groups []resultGroup
	numResults := 0
	startTok := p.tok
	if p.tok.Kind == TokPercent {
		for {
			u, err := p.ParseOperand()
			if err != nil {
				return nil, err
			}
			if u.Number != 0 {
				return nil, p.ErrorAt(u.Tok, "expected result name without '#' number")
			}
			g := resultGroup{name: u, count: 1}
			if p.ParseOptionalPunct(":") {
				n, err := p.ParseInteger()
				if err != nil {
					return nil, err
				}
				if n < 1 {
					return nil, p.Errorf("expected named operation to have at least 1 result")
				}
				g.count = int(n)
			}
			groups = append(groups, g)
			numResults += g.count
			if !p.ParseOptionalPunct(",") {
				break
			}
		}
		if err := p.ParsePunct("="); err != nil {
			return nil, err
		}
	}
	var op *Operation
	var err error
	nameTok := p.tok // upstream locates an op at its name, after the results
	switch p.tok.Kind {
	case TokString:
		op, err = p.parseGenericOp()
	case TokBareID:
		op, err = p.parseCustomOp(numResults)
	default:
		if len(groups) == 0 && startTok.Kind != TokPercent {
			return nil, p.expected("operation name in quotes")
		}
		return nil, p.expected("operation name in quotes")
	}
	if err != nil {
		return nil, err
	}
	if op.NumResults() != numResults && len(groups) > 0 {
		if op.NumResults() == 0 {
			return nil, p.ErrorAt(startTok, "cannot name an operation with no results")
		}
		return nil, p.ErrorAt(startTok, "operation defines %d results but was provided %d to bind", op.NumResults(), numResults)
	}
	if loc, ok, err := p.parseOptionalTrailingLoc(); err != nil {
		return nil, err
	} else if ok {
		op.Loc = loc
	} else {
		op.Loc = p.LocOf(nameTok)
	}
	idx := 0
	for _, g := range groups {
		vals := make([]Value, g.count)
		for i := range vals {
			vals[i] = op.Result(idx + i)
		}
		idx += g.count
		if err := p.defineValues(g.name, vals); err != nil {
			return nil, err
		}
	}
	return op, nil
}

func (p *Parser) parseOptionalTrailingLoc() (Location, bool, error) {
	if !p.IsKeyword("loc") {
		return nil, false, nil
	}
	l, err := p.ParseLocation()
	return l, true, err
}

// ParseLocation parses loc(...).
func (p *Parser) ParseLocation() (Location, error) {
	if err := p.ParseKeyword("loc"); err != nil {
		return nil, err
	}
	if err := p.ParsePunct("("); err != nil {
		return nil, err
	}
	l, err := p.parseLocInstance()
	if err != nil {
		return nil, err
	}
	return l, p.ParsePunct(")")
}

func (p *Parser) parseLocInstance() (Location, error) {
	switch {
	case p.tok.Kind == TokHash:
		name := p.tok.Text[1:]
		a, ok := p.attrAliases[name]
		if !ok {
			// Location aliases may be defined after their use (upstream
			// prints most of them at the end); resolved after parsing.
			l := unresolvedLoc{name: name, tok: p.tok}
			p.next()
			return l, nil
		}
		p.next()
		if la, ok := a.(*LocAttr); ok {
			return la.Loc, nil
		}
		return nil, p.Errorf("expected location attribute")
	case p.IsKeyword("unknown"):
		p.next()
		return UnknownLoc{}, nil
	case p.IsKeyword("callsite"):
		p.next()
		if err := p.ParsePunct("("); err != nil {
			return nil, err
		}
		callee, err := p.parseLocInstance()
		if err != nil {
			return nil, err
		}
		if err := p.ParseKeyword("at"); err != nil {
			return nil, err
		}
		caller, err := p.parseLocInstance()
		if err != nil {
			return nil, err
		}
		return CallSiteLoc{callee, caller}, p.ParsePunct(")")
	case p.IsKeyword("fused"):
		p.next()
		var meta Attribute
		if p.ParseOptionalPunct("<") {
			a, err := p.ParseAttribute(nil)
			if err != nil {
				return nil, err
			}
			meta = a
			if err := p.ParsePunct(">"); err != nil {
				return nil, err
			}
		}
		var locs []Location
		err := p.ParseCommaSeparatedList(DelimSquare, func() error {
			l, err := p.parseLocInstance()
			locs = append(locs, l)
			return err
		})
		if err != nil {
			return nil, err
		}
		return Fused(locs, meta), nil
	case p.tok.Kind == TokString:
		s, err := p.ParseString()
		if err != nil {
			return nil, err
		}
		if p.ParseOptionalPunct(":") {
			line, err := p.ParseInteger()
			if err != nil {
				return nil, err
			}
			// The column is optional ("f":7 is "f":7:0).
			var col int64
			if p.ParseOptionalPunct(":") {
				if col, err = p.ParseInteger(); err != nil {
					return nil, err
				}
			}
			l := FileLineColLoc{File: s, Line: int(line), Col: int(col)}
			// Ranges: "f":1:2 to 3:4, or "f":1:2 to :4 on the same line.
			if p.ParseOptionalKeyword("to") {
				l.EndLine = l.Line
				if v, ok, err := p.ParseOptionalInteger(); err != nil {
					return nil, err
				} else if ok {
					l.EndLine = int(v)
				}
				if p.ParseOptionalPunct(":") {
					v, err := p.ParseInteger()
					if err != nil {
						return nil, err
					}
					l.EndCol = int(v)
				}
				l.HasEnd = true
			}
			return l, nil
		}
		if p.ParseOptionalPunct("(") {
			child, err := p.parseLocInstance()
			if err != nil {
				return nil, err
			}
			return NameLoc{Name: s, Child: child}, p.ParsePunct(")")
		}
		return NameLoc{Name: s}, nil
	}
	return nil, p.expected("location instance")
}

// unresolvedLoc is a use of a location alias not defined yet.
type unresolvedLoc struct {
	name string
	tok  Token
}

func (l unresolvedLoc) String() string { return "#" + l.name }
func (unresolvedLoc) isLoc()           {}

// resolveLocAliases replaces forward references to location aliases in the
// locations of ops and block arguments.
func (p *Parser) resolveLocAliases(b *Block) error {
	resolve := func(l Location) (Location, error) {
		u, ok := l.(unresolvedLoc)
		if !ok {
			return l, nil
		}
		if la, ok := p.attrAliases[u.name].(*LocAttr); ok {
			return la.Loc, nil
		}
		if _, ok := p.attrAliases[u.name]; ok {
			return nil, p.ErrorAt(u.tok, "expected location attribute")
		}
		return nil, p.ErrorAt(u.tok, "undefined symbol alias id '%s'", u.name)
	}
	var err error
	for op := b.first; op != nil && err == nil; op = op.next {
		Walk(op, func(o *Operation) WalkResult {
			if o.Loc, err = resolve(o.Loc); err != nil {
				return Interrupt
			}
			for _, r := range o.regions {
				for _, blk := range r.blocks {
					for _, a := range blk.args {
						if a.loc, err = resolve(a.loc); err != nil {
							return Interrupt
						}
					}
				}
			}
			return Advance
		})
	}
	return err
}

// LocAttr wraps a location as an attribute (for #loc aliases).
type LocAttr struct {
	attrBase
	Loc Location
}

func (p *Parser) parseGenericOp() (*Operation, error) {
	nameTok := p.tok
	name, err := p.ParseString()
	if err != nil {
		return nil, err
	}
	if name == "" {
		return nil, p.ErrorAt(nameTok, "empty operation name is invalid")
	}
	def := LookupOp(name)
	if def == nil {
		dialect, _ := splitName(name)
		d := LookupDialect(dialect)
		known := d != nil || dialectHasOps(dialect)
		switch {
		case known && (d == nil || !d.AllowUnknownOps):
			return nil, p.ErrorAt(nameTok, "unregistered operation '%s' found in dialect ('%s') that does not allow unknown operations", name, dialect)
		case !known && !p.opts.AllowUnregistered:
			return nil, p.ErrorAt(nameTok, "operation being parsed with an unregistered dialect. If this is intended, please use --allow-unregistered-dialect with tmac")
		}
	}
	st := &OperationState{Name: name, Loc: p.LocOf(nameTok)}
	us, err := p.ParseOperandList(DelimParen)
	if err != nil {
		return nil, err
	}
	if p.IsPunct("[") {
		err := p.ParseCommaSeparatedList(DelimSquare, func() error {
			b, err := p.ParseSuccessor()
			st.Successors = append(st.Successors, b)
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	if p.IsPunct("<") {
		p.next()
		if !p.IsPunct("{") {
			return nil, p.expected("'{' in properties")
		}
		props, err := p.parseAttrDictEntries()
		if err != nil {
			return nil, err
		}
		st.Props = props
		if err := p.ParsePunct(">"); err != nil {
			return nil, err
		}
	}
	if p.IsPunct("(") {
		p.pushOp(def, true)
		err := p.ParseCommaSeparatedList(DelimParen, func() error {
			return p.ParseRegion(st.AddRegion(), nil)
		})
		p.popOp()
		if err != nil {
			return nil, err
		}
	}
	if err := p.ParseOptionalAttrDict(st); err != nil {
		return nil, err
	}
	if err := p.ParsePunct(":"); err != nil {
		return nil, err
	}
	fnTok := p.tok
	ft, err := p.ParseType()
	if err != nil {
		return nil, err
	}
	fn, ok := ft.(*FunctionType)
	if !ok {
		return nil, p.ErrorAt(fnTok, "expected function type")
	}
	if len(us) != len(fn.Inputs) {
		// Upstream's wording and place: the function type is what
		// disagrees. (For one operand upstream writes a NUL byte where
		// the plural "s" goes; tmac writes "type".)
		plural := "s"
		if len(us) == 1 {
			plural = ""
		}
		return nil, p.ErrorAt(fnTok, "expected %d operand type%s but had %d", len(us), plural, len(fn.Inputs))
	}
	if err := p.ResolveOperands(us, fn.Inputs, st); err != nil {
		return nil, err
	}
	st.ResultTypes = fn.Results
	if def != nil {
		// Inherent attributes written in the discardable dictionary move to
		// the properties, as upstream does for compatibility.
		var rest []NamedAttr
		for _, a := range st.Attrs {
			if def.IsInherentAttr(a.Name) {
				st.Props = append(st.Props, a)
			} else {
				rest = append(rest, a)
			}
		}
		st.Attrs = rest
		for _, a := range st.Props {
			if !def.IsInherentAttr(a.Name) {
				return nil, p.ErrorAt(nameTok, "'%s' op property '%s' is not defined by the op", name, a.Name)
			}
		}
	}
	return NewOperation(st), nil
}

func dialectHasOps(dialect string) bool {
	registry.RLock()
	defer registry.RUnlock()
	for name := range registry.ops {
		if d, _ := splitName(name); d == dialect {
			return true
		}
	}
	return false
}

// pushOp enters the regions of op def, written in the generic form or not.
func (p *Parser) pushOp(def *OpDef, generic bool) {
	p.opStack = append(p.opStack, def)
	p.opGeneric = append(p.opGeneric, generic)
}

func (p *Parser) popOp() {
	p.opStack = p.opStack[:len(p.opStack)-1]
	p.opGeneric = p.opGeneric[:len(p.opGeneric)-1]
}

func (p *Parser) currentDefaultDialect() string {
	if len(p.dialects) == 0 {
		return ""
	}
	return p.dialects[len(p.dialects)-1]
}

func (p *Parser) parseCustomOp(numResults int) (*Operation, error) {
	nameTok := p.tok
	name := p.tok.Text
	def := LookupOp(name)
	if def == nil && !strings.Contains(name, ".") {
		if def = LookupOp("builtin." + name); def == nil {
			if dd := p.currentDefaultDialect(); dd != "" {
				def = LookupOp(dd + "." + name)
			}
		}
	}
	if def == nil {
		if dd := p.currentDefaultDialect(); dd != "" && !strings.Contains(name, ".") {
			return nil, p.Errorf("custom op '%s' is unknown (tried '%s.%s' as well)", name, dd, name)
		}
		if i := strings.IndexByte(name, '.'); i > 0 {
			// Say so when the whole dialect is missing (linalg, affine,
			// tensor ...): no spelling of the op will be accepted.
			known := Dialects()
			if !slices.Contains(known, name[:i]) {
				return nil, p.Errorf("custom op '%s' is unknown: tmac does not support the '%s' dialect (it supports %s)", name, name[:i], strings.Join(known, ", "))
			}
		}
		return nil, p.Errorf("custom op '%s' is unknown", name)
	}
	p.next()
	st := &OperationState{Name: def.Name, Loc: p.LocOf(nameTok)}
	p.pushOp(def, false)
	savedBindings := p.numResultBindings
	p.numResultBindings = numResults
	var err error
	switch {
	case def.Parse != nil:
		err = def.Parse(p, st)
	case def.format != nil:
		err = def.format.parse(p, st)
	default:
		err = p.ErrorAt(nameTok, "op '%s' has no custom assembly form; use the generic form", def.Name)
	}
	p.numResultBindings = savedBindings
	p.popOp()
	if err != nil {
		return nil, err
	}
	applyDefaults(def, st)
	return NewOperation(st), nil
}

// applyDefaults materialises non-optional attributes with default values,
// which upstream always stores (and prints in the generic form).
func applyDefaults(def *OpDef, st *OperationState) {
	for _, a := range def.Attrs {
		if a.Default != nil && !a.Optional && st.Attr(a.Name) == nil {
			st.AddAttr(a.Name, a.Default)
		}
	}
}

// --- regions and blocks -------------------------------------------------

// ParseRegion parses { blocks } into r. args, if non-nil, are the entry
// block arguments already declared by the op's syntax (the entry block then
// has no label). Regions of isolated-from-above ops start a new name scope.
func (p *Parser) ParseRegion(r *Region, args []Argument) error {
	if err := p.ParsePunct("{"); err != nil {
		return err
	}
	isolated := false
	var def *OpDef
	generic := false
	if len(p.opStack) > 0 {
		def, generic = p.opStack[len(p.opStack)-1], p.opGeneric[len(p.opGeneric)-1]
	}
	if def != nil && def.Traits&IsolatedFromAbove != 0 {
		isolated = true
	}
	if isolated {
		p.pushIsolated()
	}
	pushedDialect := false
	if def != nil && !generic {
		// As upstream: an op in the custom form sets the default dialect of
		// its regions; one in the generic form leaves the enclosing one
		// (a bare `return` in a generic op inside func.func is func.return).
		p.dialects = append(p.dialects, def.DefaultDialect)
		pushedDialect = true
	}
	p.pushRegion()
	err := p.parseRegionBody(r, args)
	if err == nil {
		err = p.popRegion()
	} else {
		p.regions = p.regions[:len(p.regions)-1]
	}
	if pushedDialect {
		p.dialects = p.dialects[:len(p.dialects)-1]
	}
	if isolated {
		if err == nil {
			err = p.popIsolated()
		} else {
			p.scopes = p.scopes[:len(p.scopes)-1]
		}
	}
	return err
}

// ParseOptionalRegion parses a region if the next token is '{'.
func (p *Parser) ParseOptionalRegion(r *Region, args []Argument) (bool, error) {
	if !p.IsPunct("{") {
		return false, nil
	}
	return true, p.ParseRegion(r, args)
}

func (p *Parser) parseRegionBody(r *Region, args []Argument) error {
	if p.ParseOptionalPunct("}") {
		if len(args) > 0 {
			// An empty region with declared arguments still gets its block.
			b := r.AddBlock(&Block{})
			return p.defineArgs(b, args)
		}
		return nil
	}
	var entry *Block
	if args != nil || !p.IsCaretBlock() {
		entry = r.AddBlock(&Block{})
		if err := p.defineArgs(entry, args); err != nil {
			return err
		}
		if err := p.parseBlockBody(entry); err != nil {
			return err
		}
	} else if args != nil && p.IsCaretBlock() {
		return p.Errorf("invalid block name in region with named arguments")
	}
	for !p.IsPunct("}") {
		if p.tok.Kind == TokEOF {
			return p.expected("'}' to end region")
		}
		if err := p.parseBlock(r); err != nil {
			return err
		}
	}
	p.next()
	return nil
}

// IsCaretBlock reports whether the next token starts a block label.
func (p *Parser) IsCaretBlock() bool { return p.tok.Kind == TokCaret }

func (p *Parser) defineArgs(b *Block, args []Argument) error {
	for _, a := range args {
		loc := a.Loc
		if loc == nil {
			loc = p.LocOf(a.Operand.Tok)
		}
		arg := b.AddArgument(a.Type, loc)
		if a.Operand.Name == "" {
			continue
		}
		if err := p.defineValues(a.Operand, []Value{arg}); err != nil {
			return err
		}
	}
	return nil
}

func (p *Parser) blockFor(name string, use Token) *blockDef {
	rs := p.regions[len(p.regions)-1]
	bd, ok := rs.blocks[name]
	if !ok {
		bd = &blockDef{block: &Block{}, use: use}
		rs.blocks[name] = bd
	}
	return bd
}

func (p *Parser) parseBlock(r *Region) error {
	if p.tok.Kind != TokCaret {
		return p.expected("block name")
	}
	nameTok := p.tok
	name := p.tok.Text[1:]
	bd := p.blockFor(name, nameTok)
	if bd.defined {
		return p.Errorf("redefinition of block '^%s'", name)
	}
	bd.defined = true
	p.next()
	r.AddBlock(bd.block)
	if p.IsPunct("(") {
		err := p.ParseCommaSeparatedList(DelimParen, func() error {
			a, err := p.ParseArgument(true, false)
			if err != nil {
				return err
			}
			return p.defineArgs(bd.block, []Argument{a})
		})
		if err != nil {
			return err
		}
	}
	if err := p.ParsePunct(":"); err != nil {
		return err
	}
	return p.parseBlockBody(bd.block)
}

func (p *Parser) parseBlockBody(b *Block) error {
	for p.tok.Kind != TokCaret && !p.IsPunct("}") {
		if p.tok.Kind == TokEOF {
			return p.expected("'}' to end region")
		}
		op, err := p.parseOperation()
		if err != nil {
			return err
		}
		b.Append(op)
	}
	return nil
}

// ParseSuccessor parses ^label.
func (p *Parser) ParseSuccessor() (*Block, error) {
	if p.tok.Kind != TokCaret {
		return nil, p.expected("block name")
	}
	if len(p.regions) == 0 {
		return nil, p.Errorf("successor outside of a region")
	}
	bd := p.blockFor(p.tok.Text[1:], p.tok)
	p.next()
	return bd.block, nil
}

// ParseArgument parses %name [: type] [{attrs}] [loc(...)].
func (p *Parser) ParseArgument(withType, withAttrs bool) (Argument, error) {
	var a Argument
	u, err := p.ParseOperand()
	if err != nil {
		return a, err
	}
	if u.Number != 0 {
		return a, p.ErrorAt(u.Tok, "expected argument name without '#' number")
	}
	a.Operand = u
	if withType {
		if a.Type, err = p.ParseColonType(); err != nil {
			return a, err
		}
	}
	if withAttrs && p.IsPunct("{") {
		entries, err := p.parseAttrDictEntries()
		if err != nil {
			return a, err
		}
		a.Attrs = Dict(entries)
	}
	if l, ok, err := p.parseOptionalTrailingLoc(); err != nil {
		return a, err
	} else if ok {
		a.Loc = l
	}
	return a, nil
}

// --- attribute dictionaries ---------------------------------------------

// ParseOptionalAttrDict parses {name = value, ...} into st.Attrs if present.
func (p *Parser) ParseOptionalAttrDict(st *OperationState) error {
	if !p.IsPunct("{") {
		return nil
	}
	entries, err := p.parseAttrDictEntries()
	if err != nil {
		return err
	}
	for _, e := range entries {
		if st.Attr(e.Name) != nil {
			return p.Errorf("attribute '%s' occurs more than once in the attribute list", e.Name)
		}
	}
	st.Attrs = append(st.Attrs, entries...)
	return nil
}

// ParseOptionalAttrDictWithKeyword parses `attributes {...}` if present.
func (p *Parser) ParseOptionalAttrDictWithKeyword(st *OperationState) error {
	if !p.ParseOptionalKeyword("attributes") {
		return nil
	}
	if !p.IsPunct("{") {
		return p.expected("'{' in attribute dictionary")
	}
	return p.ParseOptionalAttrDict(st)
}

func (p *Parser) parseAttrDictEntries() ([]NamedAttr, error) {
	var entries []NamedAttr
	seen := map[string]bool{}
	err := p.ParseCommaSeparatedList(DelimBraces, func() error {
		var name string
		nameTok := p.tok
		switch p.tok.Kind {
		case TokBareID:
			name = p.tok.Text
			p.next()
		case TokString:
			s, err := p.ParseString()
			if err != nil {
				return err
			}
			if s == "" {
				return p.ErrorAt(nameTok, "expected valid attribute name")
			}
			name = s
		default:
			return p.expected("attribute name")
		}
		if seen[name] {
			return p.ErrorAt(nameTok, "duplicate key '%s' in dictionary attribute", name)
		}
		seen[name] = true
		if !p.ParseOptionalPunct("=") {
			entries = append(entries, NamedAttr{name, Unit})
			return nil
		}
		a, err := p.ParseAttribute(nil)
		if err != nil {
			return err
		}
		entries = append(entries, NamedAttr{name, a})
		return nil
	})
	if err != nil && p.tok.Kind != TokEOF && strings.Contains(err.Error(), "expected '}'") {
		return nil, p.Errorf("expected '}' in attribute dictionary")
	}
	return entries, err
}
