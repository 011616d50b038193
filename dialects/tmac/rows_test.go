package tmac_test

import (
	"strings"
	"testing"

	"github.com/tmac-dev/tmac/dialects/tmac"
	"github.com/tmac-dev/tmac/ir"
)

func TestRowsColsTypes(t *testing.T) {
	src := `func.func @f(%r: !tmac.rows<128xf32>, %c: !tmac.cols<256xf32>) {
  return
}
`
	m := parse(t, src)
	out := ir.Print(m, ir.PrintOptions{})
	if !strings.Contains(out, "%arg0: !tmac.rows<128xf32>, %arg1: !tmac.cols<256xf32>") {
		t.Errorf("printed types differ:\n%s", out)
	}
	if a, b := tmac.RowsType(128, ir.F32T), tmac.RowsType(128, ir.F32T); a != b {
		t.Errorf("RowsType is not uniqued")
	}
	r, ok := tmac.AsRows(tmac.RowsType(128, ir.F32T))
	if !ok || r.Len != 128 || r.Elem != ir.F32T {
		t.Errorf("AsRows(rows<128xf32>) = %v, %v", r, ok)
	}
	if _, ok := tmac.AsRows(tmac.ColsType(64, ir.F32T)); ok {
		t.Errorf("AsRows accepts a cols type")
	}
	c, ok := tmac.AsCols(tmac.ColsType(64, ir.F32T))
	if !ok || c.Len != 64 {
		t.Errorf("AsCols(cols<64xf32>) = %v, %v", c, ok)
	}
}

func TestRowsColsTypeErrors(t *testing.T) {
	for _, tc := range []struct{ typ, want string }{
		{"!tmac.rows<100xf32>", "t.tma:1:29: error: a rows length must be a positive multiple of 64 (an accumulator's M), not 100"},
		{"!tmac.rows<0xf32>", "a rows length must be a positive multiple of 64"},
		{"!tmac.cols<12xf32>", "a cols length must be a multiple of 8 from 8 to 256 (an accumulator's N), not 12"},
		{"!tmac.cols<264xf32>", "not 264"},
		{"!tmac.rows<64xf16>", "t.tma:1:32: error: !tmac.rows holds f32 elements, not f16"},
		{"!tmac.rows<64x64xf32>", "expected one static length in !tmac.rows<Lxf32>"},
		{"!tmac.rows<?xf32>", "expected static shape"},
		{"!tmac.vec<64xf32>", "unknown type `vec` in dialect `tmac`"},
	} {
		_, err := ir.Parse("t.tma", "func.func @f(%r: "+tc.typ+") {\n  return\n}\n", ir.ParseOptions{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got error %v, want %q", tc.typ, err, tc.want)
		}
	}
}
