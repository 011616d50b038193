package gpu

import (
	"strings"
	"testing"

	"github.com/tmac-dev/tmac/ir"
)

func TestLayoutSymbolCount(t *testing.T) {
	cases := map[string]int{
		"affine_map<(d0) -> (d0)>":             0,
		"affine_map<(d0)[s0] -> (d0 + s0)>":    1,
		"affine_map<(d0, d1)[s0, s1] -> (d0)>": 2,
		"affine_map<(d0)[] -> (d0)>":           0,
		"strided<[1], offset: ?>":              0,
	}
	for text, want := range cases {
		if got := layoutSymbolCount(ir.OpaqueAttrOf(text)); got != want {
			t.Errorf("%s: got %d symbols, want %d", text, got, want)
		}
	}
	if layoutSymbolCount(nil) != 0 {
		t.Error("identity layout has symbols")
	}
}

func TestAddressSpaceNumbers(t *testing.T) {
	for s, want := range map[string]int64{"global": 1, "workgroup": 3, "private": 5} {
		n, ok := ir.MemorySpaceNumber(AddressSpaceAttr(s))
		if !ok || n != want {
			t.Errorf("%s: got %d (%v), want %d", s, n, ok, want)
		}
		if addressSpaceOf(AddressSpaceAttr(s)) != s {
			t.Errorf("addressSpaceOf(%s) wrong", s)
		}
	}
	if addressSpaceOf(ir.I64Attr(3)) != "" {
		t.Error("numeric memory space taken for a gpu address space")
	}
}

func TestTargetAttrs(t *testing.T) {
	for text, want := range map[string]bool{
		"#rocdl.target":                  true,
		`#rocdl.target<chip = "gfx90a">`: true,
		"#rocdl.targetx":                 false,
		"#foo.bar":                       false,
	} {
		if got := isTargetAttr(ir.OpaqueAttrOf(text)); got != want {
			t.Errorf("%s: got %v, want %v", text, got, want)
		}
	}
	if isTargetAttr(ir.I64Attr(1)) {
		t.Error("integer accepted as a target")
	}
}

func TestDimAttr(t *testing.T) {
	for _, d := range dimNames {
		a := DimAttr(d)
		if a.String() != "#gpu<dim "+d+">" || DimOf(a) != d {
			t.Errorf("dim %s: %s / %q", d, a, DimOf(a))
		}
	}
	if DimOf(ir.I64Attr(0)) != "" {
		t.Error("DimOf accepted an integer")
	}
}

// An op whose defaulted attribute was removed prints the default where its
// format requires the attribute (as upstream's getter returns it), so the
// printed form parses again (found by FuzzCompile).
func TestRemovedDefaultedAttrPrintsDefault(t *testing.T) {
	src := `func.func @f(%n: index, %m: memref<?xf64>) {
  %s = gpu.create_2to4_spmat {PRUNE_ONLY} %n, %n, %m : memref<?xf64>
  return
}`
	mod, err := ir.Parse("f.tma", src, ir.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var op *ir.Operation
	ir.Walk(mod, func(o *ir.Operation) ir.WalkResult {
		if o.Name() == Create2to4Spmat {
			op = o
		}
		return ir.Advance
	})
	op.RemoveAttr("pruneFlag")
	text := ir.Print(mod, ir.PrintOptions{})
	if !strings.Contains(text, "gpu.create_2to4_spmat { PRUNE_AND_CHECK} %") {
		t.Errorf("printed:\n%s\nwant the default PRUNE_AND_CHECK in the braces", text)
	}
	if _, err := ir.Parse("printed.tma", text, ir.ParseOptions{}); err != nil {
		t.Errorf("the printed form does not parse: %v\n%s", err, text)
	}
}
