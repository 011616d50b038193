package docgen

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/tmac-dev/tmac/dialects/all"
	"github.com/tmac-dev/tmac/driver"
	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/passes"
)

func files(t *testing.T) map[string]string {
	t.Helper()
	f, err := Files()
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// Every registered op has a section on its dialect's page, is listed in
// the page's index, and has an example (all ops have one today: keep it so).
func TestEveryOpDocumented(t *testing.T) {
	f := files(t)
	idx := f["dialects/README.md"]
	for _, d := range ir.RegisteredOps() {
		page, ok := f["dialects/"+d.Dialect()+".md"]
		if !ok {
			t.Fatalf("no page for dialect %s", d.Dialect())
		}
		if !strings.Contains(idx, "["+"`"+d.Dialect()+"`](") {
			t.Errorf("dialects/README.md does not link %s", d.Dialect())
		}
		head := "\n## `" + d.Name + "`\n"
		i := strings.Index(page, head)
		if i < 0 {
			t.Errorf("%s: no section", d.Name)
			continue
		}
		if !strings.Contains(page, "[`"+d.Name+"`](#"+anchor(d.Name)+")") {
			t.Errorf("%s: not in the page's index", d.Name)
		}
		sec := page[i+len(head):]
		if j := strings.Index(sec, "\n## "); j >= 0 {
			sec = sec[:j]
		}
		if strings.Contains(sec, "No example yet") || !strings.Contains(sec, "```mlir\n") {
			t.Errorf("%s: no example", d.Name)
		}
		for _, a := range d.Attrs {
			if !strings.Contains(sec, "| `"+a.Name+"` |") {
				t.Errorf("%s: attribute %s missing", d.Name, a.Name)
			}
		}
		for _, a := range append(append([]ir.ArgSpec{}, d.Operands...), d.Results...) {
			if a.Name != "" && !strings.Contains(sec, "| `"+a.Name+"` |") {
				t.Errorf("%s: operand or result %s missing", d.Name, a.Name)
			}
		}
		if d.Format != "" && d.Parse == nil && !strings.Contains(sec, d.Format) {
			t.Errorf("%s: format missing", d.Name)
		}
	}
}

// Every pass has a page with its description, every option and its
// default, and an example produced by running it.
func TestEveryPassDocumented(t *testing.T) {
	f := files(t)
	idx := f["passes/README.md"]
	for _, info := range passes.All() {
		page, ok := f["passes/"+info.Name+".md"]
		if !ok {
			t.Errorf("no page for pass %s", info.Name)
			continue
		}
		if !strings.Contains(idx, "[`"+info.Name+"`]("+info.Name+".md)") {
			t.Errorf("passes/README.md does not link %s", info.Name)
		}
		if info.Description == "" || !strings.Contains(page, strings.TrimSpace(info.Description)) {
			t.Errorf("%s: no description", info.Name)
		}
		for _, o := range info.Options {
			if !strings.Contains(page, "| `"+o.Name+"` | `"+o.Default+"` |") {
				t.Errorf("%s: option %s missing", info.Name, o.Name)
			}
		}
		if !strings.Contains(page, "\nAfter `tmac opt --"+info.Name) || strings.Count(page, "```mlir\n") != 2 {
			t.Errorf("%s: no before/after example", info.Name)
		}
	}
}

// The pass examples change the IR (an example the pass leaves alone shows
// nothing).
func TestPassExamplesChangeTheIR(t *testing.T) {
	exs, err := loadPassExamples()
	if err != nil {
		t.Fatal(err)
	}
	for name, ex := range exs {
		if ex.before == ex.after {
			t.Errorf("%s: the example is unchanged by the pass", name)
		}
	}
}

// Generating twice gives the same pages.
func TestDeterministic(t *testing.T) {
	a, b := files(t), files(t)
	for name := range a {
		if a[name] != b[name] {
			t.Errorf("%s differs between two runs", name)
		}
	}
}

// An example that does not verify is an error that points at the file and
// line; so is one that names an op it does not use.
func TestBadExamples(t *testing.T) {
	sm := ir.NewSourceMgr()
	text := "// -----\n// example: arith.addi\nfunc.func @f(%a: i32) -> i64 {\n  %r = arith.addi %a, %a : i32\n  return %r : i32\n}\n"
	sm.Add("x.tma", text)
	c := driver.Split("x.tma", text, true)[1]
	_, err := parseOpExample(c, "arith", sm)
	if err == nil || !strings.Contains(err.Error(), "x.tma:5:") || !strings.Contains(err.Error(), "does not verify") {
		t.Errorf("got %v", err)
	}
	text = "// -----\n// example: arith.muli\nfunc.func @f(%a: i32) -> i32 {\n  return %a : i32\n}\n"
	c = driver.Split("x.tma", text, true)[1]
	if _, err := parseOpExample(c, "arith", sm); err == nil || !strings.Contains(err.Error(), "does not use it") {
		t.Errorf("got %v", err)
	}
	c = driver.Split("x.tma", "// -----\n// example: scf.for\n", true)[1]
	if _, err := parseOpExample(c, "arith", sm); err == nil || !strings.Contains(err.Error(), "examples of the scf dialect") {
		t.Errorf("got %v", err)
	}
	c = driver.Split("x.tma", "// -----\nfunc.func @f() {\n  return\n}\n", true)[1]
	if _, err := parseOpExample(c, "arith", sm); err == nil || !strings.Contains(err.Error(), "must start with") {
		t.Errorf("got %v", err)
	}
}

// Generate writes the pages, leaves other files alone, removes stale pages,
// and reports an unwritable directory as an error.
func TestGenerate(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "passes"), 0o755); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(dir, "passes", "gone.md")
	other := filepath.Join(dir, "passes", "notes.txt")
	for _, p := range []string{stale, other} {
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := Generate(dir); err != nil {
		t.Fatal(err)
	}
	f := files(t)
	for name, want := range f {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || string(got) != want {
			t.Errorf("%s not written as generated (%v)", name, err)
		}
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("stale page kept")
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("non-Markdown file removed")
	}
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Generate(filepath.Join(file, "docs")); err == nil {
		t.Errorf("no error for a directory under a file")
	}
}
