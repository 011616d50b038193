package ir

import (
	"fmt"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Severity of a diagnostic.
type Severity uint8

const (
	SevError Severity = iota
	SevWarning
	SevNote
	SevRemark
)

func (s Severity) String() string {
	return [...]string{"error", "warning", "note", "remark"}[s]
}

// Diagnostic is an error, warning, note or remark attached to a location.
// It implements error so parse and verify functions can return it.
type Diagnostic struct {
	Severity Severity
	Loc      Location
	Msg      string
	Notes    []*Diagnostic
}

func (d *Diagnostic) Error() string {
	var sb strings.Builder
	d.write(&sb, nil)
	return strings.TrimRight(sb.String(), "\n")
}

// AttachNote adds a note (at loc, or at the diagnostic's location if nil).
func (d *Diagnostic) AttachNote(loc Location, format string, args ...any) *Diagnostic {
	if loc == nil {
		loc = d.Loc
	}
	n := &Diagnostic{Severity: SevNote, Loc: loc, Msg: fmt.Sprintf(format, args...)}
	d.Notes = append(d.Notes, n)
	return d
}

// Errorf returns an error diagnostic at loc.
func Errorf(loc Location, format string, args ...any) *Diagnostic {
	return &Diagnostic{Severity: SevError, Loc: loc, Msg: fmt.Sprintf(format, args...)}
}

// EmitOpError returns an error at op's location prefixed with "'name' op ",
// the upstream convention for verifier messages.
func (op *Operation) EmitOpError(format string, args ...any) *Diagnostic {
	return Errorf(op.Loc, "'%s' op %s", op.Name(), fmt.Sprintf(format, args...))
}

// EmitError returns an error at op's location without the op prefix.
func (op *Operation) EmitError(format string, args ...any) *Diagnostic {
	return Errorf(op.Loc, format, args...)
}

// EmitWarning returns a warning at op's location.
func (op *Operation) EmitWarning(format string, args ...any) *Diagnostic {
	return &Diagnostic{Severity: SevWarning, Loc: op.Loc, Msg: fmt.Sprintf(format, args...)}
}

// Render formats d as file:line:col: severity: message, followed by the
// source line and a caret when the source is known to sm, then the notes.
func (d *Diagnostic) Render(sm *SourceMgr) string {
	var sb strings.Builder
	d.write(&sb, sm)
	return sb.String()
}

func (d *Diagnostic) write(sb *strings.Builder, sm *SourceMgr) {
	pos, hasPos := FileLineCol(d.Loc)
	if hasPos {
		fmt.Fprintf(sb, "%s:%d:%d: ", printable(pos.File), pos.Line, pos.Col)
	} else if d.Loc != nil {
		if _, unknown := d.Loc.(UnknownLoc); !unknown {
			fmt.Fprintf(sb, "loc(%s): ", d.Loc)
		}
	}
	fmt.Fprintf(sb, "%s: %s\n", d.Severity, printable(d.Msg))
	if hasPos && sm != nil {
		if line, ok := sm.Line(pos.File, pos.Line); ok {
			col := pos.Col - 1
			if col > len(line) {
				col = len(line)
			}
			line, col = clipLine(line, col)
			writeQuoted(sb, line, col)
		}
	}
	for _, n := range d.Notes {
		n.write(sb, sm)
	}
}

// isControl reports the characters a diagnostic does not print as they
// are: bytes that are not UTF-8, control characters other than tab and
// newline, and the bidirectional controls that can make a quoted line read
// differently from what the compiler sees ("Trojan source").
func isControl(r rune, size int) bool {
	return r == utf8.RuneError && size <= 1 || r < 0x20 && r != '\t' && r != '\n' || r >= 0x7f && r < 0xa0 ||
		unicode.Is(unicode.Bidi_Control, r)
}

// printable replaces the control characters of s (see isControl) by '?'.
func printable(s string) string {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if isControl(r, n) {
			var sb strings.Builder
			writeSafe(&sb, s)
			return sb.String()
		}
		i += n
	}
	return s
}

func writeSafe(sb *strings.Builder, s string) {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if isControl(r, n) {
			sb.WriteByte('?')
		} else {
			sb.WriteString(s[i : i+n])
		}
		i += n
	}
}

// writeQuoted writes a quoted source line and the caret under byte col.
// Control characters and bytes that are not UTF-8 are shown as '?', so a
// hostile input cannot send escape sequences to the terminal; the caret
// counts characters, not bytes, so it stays under a multi-byte character.
func writeQuoted(sb *strings.Builder, line string, col int) {
	writeSafe(sb, line)
	sb.WriteByte('\n')
	for i := 0; i < col && i < len(line); {
		r, n := utf8.DecodeRuneInString(line[i:])
		if r == '\t' {
			sb.WriteByte('\t')
		} else {
			sb.WriteByte(' ')
		}
		i += n
	}
	sb.WriteString("^\n")
}

// maxQuoted is the longest source line a diagnostic quotes whole; longer
// ones (minified or generated input) are cut to a window around the caret.
const maxQuoted = 160

// clipLine returns the part of line a diagnostic quotes and the caret's
// column in it: line itself when short, otherwise a window of maxQuoted
// bytes around col, cut at character boundaries and marked with "...".
func clipLine(line string, col int) (string, int) {
	if len(line) <= maxQuoted {
		return line, col
	}
	start := max(0, col-maxQuoted/2)
	end := min(len(line), start+maxQuoted)
	for start > 0 && start < len(line) && line[start]&0xC0 == 0x80 {
		start--
	}
	for end < len(line) && line[end]&0xC0 == 0x80 {
		end++
	}
	out, c := line[start:end], col-start
	if start > 0 {
		out, c = "..."+out, c+3
	}
	if end < len(line) {
		out += "..."
	}
	return out, c
}

// SourceMgr remembers the text of the files read, so diagnostics can quote
// the offending line.
type SourceMgr struct {
	mu    sync.Mutex
	files map[string]string
}

// NewSourceMgr returns an empty source manager.
func NewSourceMgr() *SourceMgr { return &SourceMgr{files: map[string]string{}} }

// Add records the text of a file.
func (sm *SourceMgr) Add(name, text string) {
	sm.mu.Lock()
	defer sm.mu.Unlock()
	sm.files[name] = text
}

// Line returns line n (1-based) of file, without the newline.
func (sm *SourceMgr) Line(file string, n int) (string, bool) {
	sm.mu.Lock()
	text, ok := sm.files[file]
	sm.mu.Unlock()
	if !ok || n < 1 {
		return "", false
	}
	for i := 1; i < n; i++ {
		j := strings.IndexByte(text, '\n')
		if j < 0 {
			return "", false
		}
		text = text[j+1:]
	}
	if j := strings.IndexByte(text, '\n'); j >= 0 {
		text = text[:j]
	}
	return strings.TrimRight(text, "\r"), true
}

// DiagList collects diagnostics (parse errors, verifier errors, warnings).
type DiagList []*Diagnostic

// HasErrors reports whether any diagnostic is an error.
func (l DiagList) HasErrors() bool {
	for _, d := range l {
		if d.Severity == SevError {
			return true
		}
	}
	return false
}

// Error joins the diagnostics.
func (l DiagList) Error() string {
	var parts []string
	for _, d := range l {
		parts = append(parts, d.Error())
	}
	return strings.Join(parts, "\n")
}

// AsDiagnostics unpacks an error into diagnostics.
func AsDiagnostics(err error) DiagList {
	switch e := err.(type) {
	case nil:
		return nil
	case *Diagnostic:
		return DiagList{e}
	case DiagList:
		return e
	}
	return DiagList{&Diagnostic{Severity: SevError, Loc: UnknownLoc{}, Msg: err.Error()}}
}
