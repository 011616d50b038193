package ir

import (
	"io"

	"github.com/alecthomas/participle/v2/lexer"
)

// TokKind classifies tokens of the MLIR textual syntax.
type TokKind uint8

const (
	TokEOF     TokKind = iota
	TokError           // an invalid character or unterminated literal
	TokBareID          // foo, i32, x64xf16 (also keywords)
	TokPercent         // %name
	TokCaret           // ^bb0
	TokHash            // #alias, #dialect.attr, #1
	TokBang            // !alias, !dialect.type
	TokAt              // @sym or @"sym"
	TokInt             // 42, 0x2A
	TokFloat           // 1.5, 2.0e-3
	TokString          // "text"
	TokPunct           // ( ) { } [ ] < > , : = + - * ? -> :: ... |
)

var tokKindNames = [...]string{"EOF", "Error", "BareIdent", "PercentIdent", "CaretIdent", "HashIdent", "BangIdent", "AtIdent", "Int", "Float", "String", "Punct"}

func (k TokKind) String() string { return tokKindNames[k] }

// Token is one lexed token. Text is a slice of the source.
type Token struct {
	Kind      TokKind
	Text      string
	Offset    int
	Line, Col int
}

// Scanner splits MLIR source text into tokens. It is hand-written for speed
// (the parser must handle 100k-line modules in well under a second); its
// behaviour is specified by, and tested against, the participle regular
// expression lexer in lexer_spec.go.
type Scanner struct {
	src       string
	pos       int
	line, col int
	depth     int // open brackets ( [ { < not yet closed
}

// NewScanner returns a scanner over src.
func NewScanner(src string) *Scanner { return &Scanner{src: src, line: 1, col: 1} }

// ResetTo restarts scanning at byte offset off, which must lie on the same
// line as tok and at or after its start (used to split `x64xf16` in shapes).
func (s *Scanner) ResetTo(tok Token, off int) {
	s.pos = off
	s.line = tok.Line
	s.col = tok.Col + (off - tok.Offset)
}

func isIDStart(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' }
func isDigit(c byte) bool   { return c >= '0' && c <= '9' }
func isHex(c byte) bool     { return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

// isSuffixChar reports characters allowed after the prefix of %, ^, #, !
// identifiers: letters, digits and $ . _ -.
func isSuffixChar(c byte) bool {
	return isIDStart(c) || isDigit(c) || c == '$' || c == '.' || c == '-'
}

// skipSpace skips whitespace and // comments.
func (s *Scanner) skipSpace() {
	for s.pos < len(s.src) {
		c := s.src[s.pos]
		switch {
		case c == '\n':
			s.pos++
			s.line++
			s.col = 1
		case c == ' ' || c == '\t' || c == '\r':
			s.pos++
			s.col++
		case c == '/' && s.pos+1 < len(s.src) && s.src[s.pos+1] == '/':
			for s.pos < len(s.src) && s.src[s.pos] != '\n' {
				s.pos++
			}
		default:
			return
		}
	}
}

// Next returns the next token.
func (s *Scanner) Next() Token {
	s.skipSpace()
	start, line, col := s.pos, s.line, s.col
	tok := func(k TokKind) Token {
		// Tokens never contain newlines, except strings, which are handled separately.
		s.col += s.pos - start
		return Token{Kind: k, Text: s.src[start:s.pos], Offset: start, Line: line, Col: col}
	}
	if s.pos >= len(s.src) {
		return Token{Kind: TokEOF, Offset: s.pos, Line: line, Col: col}
	}
	c := s.src[s.pos]
	switch {
	case isIDStart(c):
		s.pos++
		for s.pos < len(s.src) {
			c := s.src[s.pos]
			if isIDStart(c) || isDigit(c) || c == '$' || c == '.' {
				s.pos++
				continue
			}
			break
		}
		return tok(TokBareID)
	case isDigit(c):
		return s.number(start, line, col)
	case c == '"':
		return s.str(start, line, col)
	case c == '%' || c == '^' || c == '#' || c == '!':
		s.pos++
		n := s.pos
		for s.pos < len(s.src) && isSuffixChar(s.src[s.pos]) {
			s.pos++
		}
		if s.pos == n {
			return tok(TokError)
		}
		switch c {
		case '%':
			return tok(TokPercent)
		case '^':
			return tok(TokCaret)
		case '#':
			return tok(TokHash)
		}
		return tok(TokBang)
	case c == '@':
		s.pos++
		if s.pos < len(s.src) && s.src[s.pos] == '"' {
			t := s.str(start, line, col)
			if t.Kind == TokError {
				return t
			}
			t.Kind = TokAt
			return t
		}
		n := s.pos
		for s.pos < len(s.src) && (isIDStart(s.src[s.pos]) || isDigit(s.src[s.pos]) || s.src[s.pos] == '$' || s.src[s.pos] == '.') {
			s.pos++
		}
		if s.pos == n {
			return tok(TokError)
		}
		return tok(TokAt)
	}
	// Punctuation.
	rest := s.src[s.pos:]
	switch {
	case len(rest) >= 3 && rest[:3] == "...":
		s.pos += 3
	case len(rest) >= 2 && (rest[:2] == "->" || rest[:2] == "::"):
		s.pos += 2
	case c == '(' || c == ')' || c == '{' || c == '}' || c == '[' || c == ']' || c == '<' || c == '>' ||
		c == ',' || c == ':' || c == '=' || c == '+' || c == '-' || c == '*' || c == '?' || c == '|':
		s.pos++
	default:
		// Consume one whole UTF-8 sequence so errors quote a full character.
		s.pos++
		for s.pos < len(s.src) && s.src[s.pos]&0xC0 == 0x80 {
			s.pos++
		}
		return tok(TokError)
	}
	switch c {
	case '(', '[', '{', '<':
		s.depth++
	case ')', ']', '}', '>':
		s.depth--
	}
	return tok(TokPunct)
}

func (s *Scanner) number(start, line, col int) Token {
	src := s.src
	fin := func(k TokKind) Token {
		s.col += s.pos - start
		return Token{Kind: k, Text: src[start:s.pos], Offset: start, Line: line, Col: col}
	}
	if src[s.pos] == '0' && s.pos+2 < len(src) && src[s.pos+1] == 'x' && isHex(src[s.pos+2]) {
		s.pos += 2
		for s.pos < len(src) && isHex(src[s.pos]) {
			s.pos++
		}
		return fin(TokInt)
	}
	for s.pos < len(src) && isDigit(src[s.pos]) {
		s.pos++
	}
	if s.pos >= len(src) || src[s.pos] != '.' {
		return fin(TokInt)
	}
	// "1." is a float; "1..." is not (it is 1 followed by an ellipsis).
	if s.pos+1 < len(src) && src[s.pos+1] == '.' {
		return fin(TokInt)
	}
	s.pos++
	for s.pos < len(src) && isDigit(src[s.pos]) {
		s.pos++
	}
	if s.pos < len(src) && (src[s.pos] == 'e' || src[s.pos] == 'E') {
		p := s.pos + 1
		if p < len(src) && (src[p] == '+' || src[p] == '-') {
			p++
		}
		if p < len(src) && isDigit(src[p]) {
			s.pos = p
			for s.pos < len(src) && isDigit(src[s.pos]) {
				s.pos++
			}
		}
	}
	return fin(TokFloat)
}

func (s *Scanner) str(start, line, col int) Token {
	src := s.src
	s.pos++ // opening quote (for @"..." the @ was already consumed)
	if src[s.pos-1] != '"' {
		s.pos++
	}
	for s.pos < len(src) {
		c := src[s.pos]
		switch c {
		case '"':
			s.pos++
			s.col += s.pos - start
			return Token{Kind: TokString, Text: src[start:s.pos], Offset: start, Line: line, Col: col}
		case '\n':
			s.col += s.pos - start
			return Token{Kind: TokError, Text: src[start:s.pos], Offset: start, Line: line, Col: col}
		case '\\':
			// A backslash escapes the next character, but not a line
			// break: the string is unterminated there.
			if s.pos+1 >= len(src) || src[s.pos+1] == '\n' {
				s.pos++
				s.col += s.pos - start
				return Token{Kind: TokError, Text: src[start:s.pos], Offset: start, Line: line, Col: col}
			}
			s.pos += 2
			continue
		}
		s.pos++
	}
	if s.pos > len(src) {
		s.pos = len(src)
	}
	s.col += s.pos - start
	return Token{Kind: TokError, Text: src[start:s.pos], Offset: start, Line: line, Col: col}
}

// BadEscape returns the byte offset in lit (a string literal with its
// quotes) of the backslash of its first escape that UnquoteString rejects,
// or -1.
func BadEscape(lit string) int {
	for i := 1; i < len(lit)-1; i++ {
		if lit[i] != '\\' {
			continue
		}
		if i+1 < len(lit)-1 {
			switch n := lit[i+1]; {
			case n == 'n' || n == 't' || n == '"' || n == '\\':
				i++
				continue
			case i+2 < len(lit)-1 && isHex(n) && isHex(lit[i+2]):
				i += 2
				continue
			}
		}
		return i
	}
	return -1
}

// UnquoteString decodes an MLIR string literal (with quotes). Escapes are
// \n \t \" \\ and two hex digits \XX.
func UnquoteString(lit string) (string, bool) {
	if len(lit) < 2 || lit[0] != '"' || lit[len(lit)-1] != '"' {
		return "", false
	}
	body := lit[1 : len(lit)-1]
	hasEscape := false
	for i := 0; i < len(body); i++ {
		if body[i] == '\\' {
			hasEscape = true
			break
		}
	}
	if !hasEscape {
		return body, true
	}
	out := make([]byte, 0, len(body))
	for i := 0; i < len(body); i++ {
		c := body[i]
		if c != '\\' {
			out = append(out, c)
			continue
		}
		if i+1 >= len(body) {
			return "", false
		}
		n := body[i+1]
		switch {
		case n == 'n':
			out = append(out, '\n')
			i++
		case n == 't':
			out = append(out, '\t')
			i++
		case n == '"' || n == '\\':
			out = append(out, n)
			i++
		case i+2 < len(body) && isHex(n) && isHex(body[i+2]):
			out = append(out, hexVal(n)<<4|hexVal(body[i+2]))
			i += 2
		default:
			return "", false
		}
	}
	return string(out), true
}

func hexVal(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}

// LexerDefinition exposes the scanner as a participle lexer.Definition, so
// participle grammars (and participle's tooling) can run over MLIR tokens.
type LexerDefinition struct{}

// Lexer is the participle definition of the MLIR token set.
var Lexer lexer.Definition = LexerDefinition{}

// Symbols implements lexer.Definition.
func (LexerDefinition) Symbols() map[string]lexer.TokenType {
	m := map[string]lexer.TokenType{"EOF": lexer.EOF}
	for k := TokError; k <= TokPunct; k++ {
		m[k.String()] = lexer.TokenType(k)
	}
	return m
}

// Lex implements lexer.Definition.
func (d LexerDefinition) Lex(filename string, r io.Reader) (lexer.Lexer, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	return d.LexString(filename, string(b))
}

// LexString implements lexer.StringDefinition.
func (LexerDefinition) LexString(filename string, src string) (lexer.Lexer, error) {
	return &participleLexer{file: filename, s: NewScanner(src)}, nil
}

type participleLexer struct {
	file string
	s    *Scanner
}

func (l *participleLexer) Next() (lexer.Token, error) {
	t := l.s.Next()
	pos := lexer.Position{Filename: l.file, Offset: t.Offset, Line: t.Line, Column: t.Col}
	switch t.Kind {
	case TokEOF:
		return lexer.EOFToken(pos), nil
	case TokError:
		return lexer.Token{}, &lexer.Error{Msg: "invalid token " + QuoteString(t.Text), Pos: pos}
	}
	return lexer.Token{Type: lexer.TokenType(t.Kind), Value: t.Text, Pos: pos}, nil
}
