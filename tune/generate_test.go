package tune

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseParam(t *testing.T) {
	p, err := ParseParam("bm=64, 128,64,256")
	if err != nil || p.Name != "bm" || !reflect.DeepEqual(p.Values, []string{"64", "128", "256"}) {
		t.Fatalf("ParseParam = %+v, %v", p, err)
	}
	for _, bad := range []string{"bm", "=1", "BM=1", "out=1", "1a=2", "bm=", "bm=1,,2", "bm=a b", "bm=x/y"} {
		if _, err := ParseParam(bad); err == nil {
			t.Errorf("ParseParam(%q) accepted", bad)
		}
	}
}

func TestGeneratorCheckAndCombinations(t *testing.T) {
	g := &Generator{Command: "gen --bm {bm} --bn {bn} -o {out}",
		Params: []Param{{"bm", []string{"64", "128"}}, {"bn", []string{"64", "128", "256"}}}}
	if err := g.check(); err != nil {
		t.Fatal(err)
	}
	got := g.combinations()
	want := [][]string{{"64", "64"}, {"64", "128"}, {"64", "256"}, {"128", "64"}, {"128", "128"}, {"128", "256"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("combinations = %v, want %v (first parameter slowest)", got, want)
	}
	for _, c := range []struct {
		g    Generator
		want string
	}{
		{Generator{Command: "gen {a}", Params: []Param{{"a", []string{"1"}}}}, "{out}"},
		{Generator{Command: "gen {out}"}, "at least one --param"},
		{Generator{Command: "gen {out}", Params: []Param{{"a", []string{"1"}}}}, "does not use {a}"},
		{Generator{Command: "gen {out} {a} {c}", Params: []Param{{"a", []string{"1"}}}}, "uses {c}"},
		{Generator{Command: "gen {out} {a}", Params: []Param{{"a", []string{"1"}}, {"a", []string{"2"}}}}, "given twice"},
		{Generator{Command: "gen {out} {a} {b}", Params: []Param{{"a", make([]string, 30)}, {"b", make([]string, 30)}}}, "more than 512"},
	} {
		if err := c.g.check(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("check(%q) = %v, want an error with %q", c.g.Command, err, c.want)
		}
	}
}

func TestGeneratorRun(t *testing.T) {
	dir := t.TempDir()
	// Writes a program for a=1 and a=3, refuses a=2 with a reason.
	g := &Generator{Command: `if [ {a} = 2 ]; then echo "two is refused" >&2; echo more >&2; exit 3; fi; echo 'x {a}' > {out}`,
		Params: []Param{{"a", []string{"1", "2", "3"}}}}
	var log strings.Builder
	progs, err := g.run(dir, &log)
	if err != nil {
		t.Fatal(err)
	}
	if len(progs) != 2 || progs[0].name != "a1" || progs[1].name != "a3" || progs[1].params["a"] != "3" {
		t.Fatalf("programs %+v", progs)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "a3.tma")); string(data) != "x 3\n" {
		t.Errorf("a3.tma = %q", data)
	}
	if len(g.Refused) != 1 || g.Refused[0].Reason != "two is refused" || g.Refused[0].Params["a"] != "2" {
		t.Errorf("refused %+v", g.Refused)
	}
	if !strings.Contains(log.String(), "refused  a2: two is refused") {
		t.Errorf("log %q", log.String())
	}
	// A path with a quote is passed to sh quoted.
	odd := filepath.Join(t.TempDir(), "it's")
	if err := os.Mkdir(odd, 0o755); err != nil {
		t.Fatal(err)
	}
	g = &Generator{Command: "echo {a} > {out}", Params: []Param{{"a", []string{"1"}}}}
	if _, err := g.run(odd, &log); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(odd, "a1.tma")); err != nil {
		t.Error(err)
	}
}
