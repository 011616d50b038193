package passes

import (
	"fmt"
	"strings"

	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"

	"github.com/tmac-dev/tmac/dialects/builtin"
)

// The textual pipeline syntax, as upstream's --pass-pipeline:
//
//	builtin.module(canonicalize, cse, func.func(cse), tma-pipeline{stages=4})
//
// is parsed with a participle grammar.

type pipelineAST struct {
	Elems []*elemAST `parser:"@@ ( \",\" @@ )*"`
}

type elemAST struct {
	Name   string       `parser:"@Ident"`
	Nested *pipelineAST `parser:"( \"(\" @@? \")\""`
	Opts   []*optAST    `parser:"| \"{\" @@* \"}\" )?"`
}

type optAST struct {
	Key   string `parser:"@Ident \"=\""`
	Value string `parser:"@( Ident | Number | String )"`
}

var pipelineLexer = lexer.MustSimple([]lexer.SimpleRule{
	{Name: "String", Pattern: `"(\\.|[^"\\])*"|'[^']*'`},
	{Name: "Number", Pattern: `-?[0-9]+(\.[0-9]+)?`},
	{Name: "Ident", Pattern: `[a-zA-Z_][a-zA-Z0-9_.\-+]*`},
	{Name: "Punct", Pattern: `[(){}=,]`},
	{Name: "Space", Pattern: `\s+`},
})

var pipelineParser = participle.MustBuild[pipelineAST](
	participle.Lexer(pipelineLexer),
	participle.Elide("Space"),
	participle.Unquote("String"),
)

// ParsePipeline parses a textual pipeline into steps and checks their
// order (CheckOrder). A top-level builtin.module(...) wrapper is accepted
// and removed.
func ParsePipeline(text string) ([]*Step, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return nil, nil
	}
	ast, err := pipelineParser.ParseString("pass-pipeline", text)
	if err != nil {
		return nil, fmt.Errorf("invalid pass pipeline '%s': %v", text, err)
	}
	elems := ast.Elems
	if len(elems) == 1 && elems[0].Name == builtin.Module && elems[0].Opts == nil {
		if elems[0].Nested == nil {
			return nil, nil
		}
		elems = elems[0].Nested.Elems
	}
	steps, err := buildSteps(elems)
	if err != nil {
		return nil, err
	}
	if err := CheckOrder(steps); err != nil {
		return nil, err
	}
	return steps, nil
}

func buildSteps(elems []*elemAST) ([]*Step, error) {
	var steps []*Step
	for _, e := range elems {
		if e.Nested != nil || (strings.Contains(e.Name, ".") && Lookup(e.Name) == nil) {
			var nested []*Step
			if e.Nested != nil {
				var err error
				if nested, err = buildSteps(e.Nested.Elems); err != nil {
					return nil, err
				}
			}
			steps = append(steps, &Step{Anchor: e.Name, Nested: nested})
			continue
		}
		opts := map[string]string{}
		for _, o := range e.Opts {
			opts[o.Key] = o.Value
		}
		p, err := Instantiate(e.Name, opts)
		if err != nil {
			return nil, err
		}
		steps = append(steps, &Step{PassName: e.Name, Pass: p})
	}
	return steps, nil
}

// ParseOptionString parses `a=1 b=2` (the value of a -pass-name=... flag).
func ParseOptionString(s string) (map[string]string, error) {
	opts := map[string]string{}
	s = strings.TrimSpace(s)
	if s == "" {
		return opts, nil
	}
	ast, err := pipelineParser.ParseString("pass-options", "p{"+s+"}")
	if err != nil {
		return nil, fmt.Errorf("invalid pass options '%s': %v", s, err)
	}
	for _, o := range ast.Elems[0].Opts {
		opts[o.Key] = o.Value
	}
	return opts, nil
}
