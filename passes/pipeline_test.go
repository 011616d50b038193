package passes_test

import (
	"strings"
	"testing"

	funcdialect "github.com/tmac-dev/tmac/dialects/func"
	"github.com/tmac-dev/tmac/passes"
	_ "github.com/tmac-dev/tmac/passes/transforms"
)

func TestParsePipeline(t *testing.T) {
	steps, err := passes.ParsePipeline("builtin.module(canonicalize{max-iterations=3}, func.func(cse), cse)")
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != 3 || steps[0].PassName != "canonicalize" || steps[1].Anchor != funcdialect.Func ||
		len(steps[1].Nested) != 1 || steps[1].Nested[0].PassName != "cse" || steps[2].PassName != "cse" {
		t.Fatalf("unexpected steps: %+v", steps)
	}
	if steps, err := passes.ParsePipeline("  "); err != nil || steps != nil {
		t.Errorf("empty pipeline: %v %v", steps, err)
	}
	if steps, err := passes.ParsePipeline("builtin.module()"); err != nil || len(steps) != 0 {
		t.Errorf("empty module pipeline: %v %v", steps, err)
	}
}

func TestParsePipelineErrors(t *testing.T) {
	cases := map[string]string{
		"builtin.module(cse":                           "invalid pass pipeline",
		"builtin.module(nope)":                         "'nope' does not refer to a registered pass",
		"canonicalize{max-iterations=abc}":             "expects an integer",
		"cse{x=1}":                                     "no such option 'x' for pass 'cse'",
		"builtin.module(canonicalize{max-iterations})": "invalid pass pipeline",
	}
	for in, want := range cases {
		_, err := passes.ParsePipeline(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want %q", in, err, want)
		}
	}
}

func TestParseOptionString(t *testing.T) {
	opts, err := passes.ParseOptionString(`stages=4 mode="fast path" depth=-1`)
	if err != nil {
		t.Fatal(err)
	}
	if opts["stages"] != "4" || opts["mode"] != "fast path" || opts["depth"] != "-1" {
		t.Errorf("options: %v", opts)
	}
}
