package ir_test

import (
	"testing"

	"github.com/tmac-dev/tmac/ir"
)

func TestSymbolIndex(t *testing.T) {
	mod, err := ir.Parse("t.tma", `
func.func private @a()
func.func private @b()
func.func private @a_1()
`, ir.ParseOptions{AllowUnregistered: true})
	if err != nil {
		t.Fatal(err)
	}
	idx := ir.NewSymbolIndex(mod)
	for _, name := range []string{"a", "b", "a_1"} {
		if got := idx.Lookup(name); got == nil || got != ir.LookupSymbol(mod, name) {
			t.Errorf("Lookup(%q) = %v, want the op LookupSymbol finds", name, got)
		}
	}
	if idx.Lookup("c") != nil {
		t.Error("Lookup(c) found a symbol that does not exist")
	}
	if got := idx.Unique("c"); got != "c" {
		t.Errorf("Unique(c) = %q, want c", got)
	}
	if got := idx.Unique("a"); got != "a_2" {
		t.Errorf("Unique(a) = %q, want a_2 (a and a_1 are taken)", got)
	}
	// A clone of @b under a new name is found once inserted.
	c := idx.Lookup("b").Clone(nil)
	c.SetAttr("sym_name", ir.Str("a_2"))
	mod.Region(0).Entry().Append(c)
	idx.Insert(c)
	if idx.Lookup("a_2") != c || idx.Unique("a") != "a_3" {
		t.Error("an inserted symbol is not seen by Lookup and Unique")
	}
	// The first definition of a name wins, as with LookupSymbol.
	d := c.Clone(nil)
	mod.Region(0).Entry().Append(d)
	idx.Insert(d)
	if idx.Lookup("a_2") != c {
		t.Error("a second definition replaced the first")
	}
}
