package driver

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/tmac-dev/tmac/ir"
)

// Expectation is one `// expected-error @+1 {{message}}` annotation.
type Expectation struct {
	Severity ir.Severity
	Line     int // line the diagnostic must be on
	Msg      string
	Regex    *regexp.Regexp // for expected-error-re
	AnnLine  int            // line of the annotation itself
	AnnCol   int
	matched  bool
}

var expectRE = regexp.MustCompile(`expected-(error|warning|note|remark)(-re)?\s*(@[^\s{]*)?\s*\{\{(.*?)\}\}`)

// ParseExpectations reads expected-* annotations from a chunk, following
// upstream's conventions: @+N and @-N are relative lines, @above/@below the
// previous/next line, @N an absolute line; no @ means the same line.
func ParseExpectations(c Chunk) ([]*Expectation, error) {
	var exps []*Expectation
	lines := strings.Split(c.Text, "\n")
	for i, l := range lines {
		lineNo := c.FirstLine + i
		for _, m := range expectRE.FindAllStringSubmatchIndex(l, -1) {
			sev := map[string]ir.Severity{"error": ir.SevError, "warning": ir.SevWarning, "note": ir.SevNote, "remark": ir.SevRemark}[l[m[2]:m[3]]]
			e := &Expectation{Severity: sev, Line: lineNo, Msg: l[m[8]:m[9]], AnnLine: lineNo, AnnCol: m[0] + 1}
			if m[4] >= 0 {
				re, err := regexp.Compile(e.Msg)
				if err != nil {
					return nil, fmt.Errorf("%s:%d:%d: error: invalid regex in expected-*-re: %v", c.File, lineNo, m[0]+1, err)
				}
				e.Regex = re
			}
			if m[6] >= 0 {
				spec := l[m[6]+1 : m[7]]
				switch {
				case spec == "above":
					e.Line = lineNo - 1
				case spec == "below":
					e.Line = lineNo + 1
				case strings.HasPrefix(spec, "+") || strings.HasPrefix(spec, "-"):
					n, err := strconv.Atoi(spec)
					if err != nil {
						return nil, fmt.Errorf("%s:%d:%d: error: invalid line offset '%s' in expected-* annotation", c.File, lineNo, m[0]+1, spec)
					}
					e.Line = lineNo + n
				default:
					n, err := strconv.Atoi(spec)
					if err != nil {
						return nil, fmt.Errorf("%s:%d:%d: error: invalid line '%s' in expected-* annotation", c.File, lineNo, m[0]+1, spec)
					}
					e.Line = n
				}
			}
			exps = append(exps, e)
		}
	}
	return exps, nil
}

// CheckDiagnostics matches produced diagnostics (with their notes) against
// expectations, returning one error message per mismatch.
func CheckDiagnostics(c Chunk, produced []*ir.Diagnostic, exps []*Expectation) []string {
	var problems []string
	var flat []*ir.Diagnostic
	var flatten func(d *ir.Diagnostic)
	flatten = func(d *ir.Diagnostic) {
		flat = append(flat, d)
		for _, n := range d.Notes {
			flatten(n)
		}
	}
	for _, d := range produced {
		flatten(d)
	}
	for _, d := range flat {
		pos, ok := ir.FileLineCol(d.Loc)
		found := false
		for _, e := range exps {
			if e.matched || e.Severity != d.Severity {
				continue
			}
			if ok && pos.Line != e.Line {
				continue
			}
			if e.Regex != nil && !e.Regex.MatchString(d.Msg) || e.Regex == nil && !strings.Contains(d.Msg, e.Msg) {
				continue
			}
			e.matched = true
			found = true
			break
		}
		if !found {
			problems = append(problems, fmt.Sprintf("%s:%d:%d: error: unexpected %s: %s", c.File, pos.Line, pos.Col, d.Severity, d.Msg))
		}
	}
	for _, e := range exps {
		if !e.matched {
			problems = append(problems, fmt.Sprintf("%s:%d:%d: error: expected %s \"%s\" was not produced", c.File, e.AnnLine, e.AnnCol, e.Severity, e.Msg))
		}
	}
	return problems
}
