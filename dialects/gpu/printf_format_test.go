package gpu

import "testing"

func TestPrintfFormatProblem(t *testing.T) {
	for _, c := range []struct {
		format string
		bad    bool
	}{
		{"%d %ld %hd %x\n", false},
		{"%hhd\n", true},
		{"%-4hhx\n", true},
		{"100%% hh\n", false},
		{"%%hhd\n", false},
		{"ok\x00%hhd", false}, // after the NUL, nothing is read
	} {
		if got := PrintfFormatProblem(c.format) != ""; got != c.bad {
			t.Errorf("PrintfFormatProblem(%q) reports %v, want %v", c.format, got, c.bad)
		}
	}
}
