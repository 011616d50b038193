package ir

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestClipLine: short lines are quoted whole; long ones as a window around
// the caret, marked with "...", never cutting a UTF-8 character, with the
// caret still under the same character.
func TestClipLine(t *testing.T) {
	if got, c := clipLine("short line", 3); got != "short line" || c != 3 {
		t.Fatalf("short line: %q, %d", got, c)
	}
	long := strings.Repeat("é", 200) + "X" + strings.Repeat("ü", 200) // 2-byte characters
	col := strings.Index(long, "X")
	got, c := clipLine(long, col)
	if !strings.HasPrefix(got, "...") || !strings.HasSuffix(got, "...") {
		t.Errorf("window not marked: %q", got)
	}
	if !utf8.ValidString(got) {
		t.Errorf("window cuts a character: %q", got)
	}
	if got[c] != 'X' {
		t.Errorf("caret at %d points at %q, not X", c, got[c:c+1])
	}
	if len(got) > maxQuoted+8 {
		t.Errorf("window of %d bytes", len(got))
	}
	// At the start and the end of the line: one marker only.
	if got, c := clipLine(long, 0); strings.HasPrefix(got, "...") || c != 0 {
		t.Errorf("start: %q, %d", got[:10], c)
	}
	if got, c := clipLine(long, len(long)); strings.HasSuffix(got, "...") || c != len(got) {
		t.Errorf("end: caret %d of %d", c, len(got))
	}
}
