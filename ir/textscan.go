package ir

import "strings"

// TextScanner reads the small languages written inside strings: the
// declarative op formats here, affine maps in memref layouts. Pos indexes
// Src; Peek and Eat skip white space first.
type TextScanner struct {
	Src string
	Pos int
}

// SkipSpace moves past spaces, tabs and newlines.
func (s *TextScanner) SkipSpace() {
	for s.Pos < len(s.Src) && (s.Src[s.Pos] == ' ' || s.Src[s.Pos] == '\n' || s.Src[s.Pos] == '\t') {
		s.Pos++
	}
}

// Peek reports whether lit comes next.
func (s *TextScanner) Peek(lit string) bool {
	s.SkipSpace()
	return strings.HasPrefix(s.Src[s.Pos:], lit)
}

// Eat consumes lit if it comes next.
func (s *TextScanner) Eat(lit string) bool {
	if s.Peek(lit) {
		s.Pos += len(lit)
		return true
	}
	return false
}

// Ident consumes and returns the longest run of characters that isIDChar
// accepts ("" if none).
func (s *TextScanner) Ident(isIDChar func(byte) bool) string {
	s.SkipSpace()
	start := s.Pos
	for s.Pos < len(s.Src) && isIDChar(s.Src[s.Pos]) {
		s.Pos++
	}
	return s.Src[start:s.Pos]
}
