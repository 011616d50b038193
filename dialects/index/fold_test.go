package index_test

import (
	"fmt"
	"testing"

	_ "github.com/tmac-dev/tmac/dialects/all"
	"github.com/tmac-dev/tmac/internal/testutil"
	"github.com/tmac-dev/tmac/ir"
)

// TestFoldTargetIndependent folds binary ops and cmp of constants: a fold
// happens only where a 64-bit and a 32-bit index agree (upstream's rule),
// never on an undefined result.
func TestFoldTargetIndependent(t *testing.T) {
	const big = int64(1) << 32
	cases := []struct {
		op     string
		x, y   int64
		want   int64
		folded bool
	}{
		{"add", big, 7, big + 7, true},
		{"mul", big, big, 0, true},
		{"sub", 3, 5, -2, true},
		{"divs", -7, 2, -3, true},
		{"divs", 7, 0, 0, false},
		{"divs", -1 << 63, -1, 0, false},
		{"divu", 7, big, 0, false},
		{"divu", -1, 2, 0, false},
		{"ceildivs", -7, 2, -3, true},
		{"ceildivs", 7, -2, -3, true},
		{"ceildivu", 7, 2, 4, true},
		{"floordivs", -7, 2, -4, true},
		{"floordivs", 7, -2, -4, true},
		{"rems", -7, 2, -1, true},
		{"remu", -7, 2, 1, true},
		{"remu", -7, 7, 0, false},
		{"maxu", big, 2, 0, false},
		{"minu", -2, 2, 2, true},
		{"maxs", -2, 2, 2, true},
		{"shl", 7, 3, 56, true},
		{"shl", 7, 40, 0, false},
		{"shrs", -7, 3, -1, true},
		{"shru", -7, 3, 0, false},
		{"xor", big + 1, 1, big, true},
	}
	for _, c := range cases {
		src := fmt.Sprintf("func.func @f() -> index {\n  %%x = index.constant %d\n  %%y = index.constant %d\n  %%r = index.%s %%x, %%y\n  return %%r : index\n}\n", c.x, c.y, c.op)
		op := testutil.Parse(t, src).Region(0).Entry().First().Region(0).Entry().Ops()[2]
		got := op.Def().Fold(op, []ir.Attribute{op.Operand(0).DefiningOp().Attr("value"), op.Operand(1).DefiningOp().Attr("value")})
		if !c.folded {
			if got != nil {
				t.Errorf("index.%s %d, %d folded to %v; want no fold", c.op, c.x, c.y, got)
			}
			continue
		}
		if len(got) != 1 || got[0] != ir.Attribute(ir.IntAttr(c.want, ir.Index)) {
			t.Errorf("index.%s %d, %d folded to %v; want %d", c.op, c.x, c.y, got, c.want)
		}
	}
	for _, c := range []struct {
		pred   string
		x, y   int64
		want   bool
		folded bool
	}{
		{"ult", -2, 2, false, true},
		{"sgt", big, 2, false, false},
		{"eq", big, 0, false, false},
		{"ne", big + 1, 1, true, false},
		{"slt", -1, 1, true, true},
	} {
		src := fmt.Sprintf("func.func @f() -> i1 {\n  %%x = index.constant %d\n  %%y = index.constant %d\n  %%r = index.cmp %s(%%x, %%y)\n  return %%r : i1\n}\n", c.x, c.y, c.pred)
		op := testutil.Parse(t, src).Region(0).Entry().First().Region(0).Entry().Ops()[2]
		got := op.Def().Fold(op, []ir.Attribute{op.Operand(0).DefiningOp().Attr("value"), op.Operand(1).DefiningOp().Attr("value")})
		switch {
		case !c.folded && got != nil:
			t.Errorf("index.cmp %s(%d, %d) folded to %v; want no fold", c.pred, c.x, c.y, got)
		case c.folded && (len(got) != 1 || got[0] != ir.Attribute(ir.Bool(c.want))):
			t.Errorf("index.cmp %s(%d, %d) folded to %v; want %v", c.pred, c.x, c.y, got, c.want)
		}
	}
}
