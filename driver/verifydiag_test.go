package driver

import (
	"strings"
	"testing"

	"github.com/tmac-dev/tmac/ir"
)

func TestExpectationsAndMatching(t *testing.T) {
	text := strings.Join([]string{
		"// expected-error @+1 {{bad thing}}",
		"op1",
		"op2 // expected-warning {{careful}}",
		"// expected-note @below {{see here}}",
		"op3",
		"// expected-error-re @-4 {{b[a-z]+ thing}}",
		"// expected-remark @7 {{absolute}}",
	}, "\n")
	c := Chunk{File: "f.tma", Text: text, FirstLine: 10}
	exps, err := ParseExpectations(c)
	if err != nil {
		t.Fatal(err)
	}
	lines := []int{}
	for _, e := range exps {
		lines = append(lines, e.Line)
	}
	if got, want := lines, []int{11, 12, 14, 11, 7}; len(got) != len(want) || got[0] != 11 || got[1] != 12 || got[2] != 14 || got[3] != 11 || got[4] != 7 {
		t.Fatalf("expectation lines %v, want %v", got, want)
	}
	at := func(line int) ir.Location { return ir.FileLineColLoc{File: "f.tma", Line: line, Col: 1} }
	produced := []*ir.Diagnostic{
		{Severity: ir.SevError, Loc: at(11), Msg: "a bad thing happened"},
		{Severity: ir.SevError, Loc: at(11), Msg: "big thing"},
		{Severity: ir.SevWarning, Loc: at(12), Msg: "be careful", Notes: []*ir.Diagnostic{{Severity: ir.SevNote, Loc: at(14), Msg: "see here"}}},
		{Severity: ir.SevRemark, Loc: at(7), Msg: "absolute"},
	}
	if probs := CheckDiagnostics(c, produced, exps); len(probs) != 0 {
		t.Fatalf("unexpected problems: %v", probs)
	}
	// A missing diagnostic and an unexpected one are both reported.
	exps, _ = ParseExpectations(c)
	probs := CheckDiagnostics(c, produced[:1], exps)
	joined := strings.Join(probs, "\n")
	if !strings.Contains(joined, `expected warning "careful" was not produced`) {
		t.Errorf("missing-diagnostic report absent: %s", joined)
	}
	exps, _ = ParseExpectations(c)
	extra := append(produced, &ir.Diagnostic{Severity: ir.SevError, Loc: at(15), Msg: "surprise"})
	if probs := CheckDiagnostics(c, extra, exps); len(probs) != 1 || !strings.Contains(probs[0], "unexpected error: surprise") {
		t.Errorf("unexpected-diagnostic report: %v", probs)
	}
}

// A chunk starts on the line of its "// -----" marker, so line numbers in
// diagnostics stay those of the whole file.
func TestSplitKeepsLineNumbers(t *testing.T) {
	chunks := Split("f", "a\nb\n// -----\nc\n// -----\nd\n", true)
	if len(chunks) != 3 || chunks[1].FirstLine != 3 || chunks[2].FirstLine != 5 || strings.TrimSpace(chunks[2].Text) != "d" {
		t.Fatalf("chunks: %+v", chunks)
	}
	if one := Split("f", "a\n// -----\nb", false); len(one) != 1 {
		t.Fatal("split without flag")
	}
}
