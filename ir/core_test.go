package ir_test

import (
	"strings"
	"testing"

	_ "github.com/tmac-dev/tmac/dialects/builtin"
	_ "github.com/tmac-dev/tmac/dialects/func"
	"github.com/tmac-dev/tmac/ir"
)

func mustParse(t *testing.T, src string) *ir.Operation {
	t.Helper()
	m, err := ir.Parse("test.tma", src, ir.ParseOptions{AllowUnregistered: true})
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	if err := ir.VerifyModule(m); err != nil {
		t.Fatalf("verify: %v", err)
	}
	return m
}

func TestTypesAreInterned(t *testing.T) {
	if ir.IntegerTypeOf(32) != ir.I32 {
		t.Error("i32 not interned")
	}
	a := ir.MemRefTypeOf([]int64{128, ir.Dynamic}, ir.F16T, nil, ir.IntAttr(3, ir.I64))
	b := ir.MemRefTypeOf([]int64{128, ir.Dynamic}, ir.F16T, nil, ir.IntAttr(3, ir.I64))
	if a != b || a.String() != "memref<128x?xf16, 3>" {
		t.Errorf("memref interning: %p %p %s", a, b, a)
	}
	// An identity strided layout is kept, as upstream does.
	c := ir.MemRefTypeOf([]int64{4, 8}, ir.F32T, ir.StridedLayout([]int64{8, 1}, 0), nil)
	if c.String() != "memref<4x8xf32, strided<[8, 1]>>" {
		t.Errorf("identity layout printed: %s", c)
	}
	if ir.IntAttr(255, ir.I8).String() != "-1 : i8" {
		t.Errorf("i8 wrap: %s", ir.IntAttr(255, ir.I8))
	}
	if ir.Bool(true) != ir.IntAttr(1, ir.I1) || ir.Bool(true).String() != "true" {
		t.Error("bool attribute is not the i1 integer attribute")
	}
}

const sample = `module {
  func.func @f(%arg0: i32, %arg1: i32) -> i32 {
    %0 = "test.add"(%arg0, %arg1) : (i32, i32) -> i32
    %1:2 = "test.pair"(%0) : (i32) -> (i32, i32)
    %2 = "test.add"(%1#0, %1#1) : (i32, i32) -> i32
    return %2 : i32
  }
}
`

func TestParsePrintFixedPoint(t *testing.T) {
	m := mustParse(t, sample)
	out := ir.Print(m, ir.PrintOptions{})
	if out != sample {
		t.Errorf("printed:\n%s\nwant:\n%s", out, sample)
	}
}

func TestUseListsAndReplace(t *testing.T) {
	m := mustParse(t, sample)
	fn := m.Region(0).Entry().First()
	ops := fn.Region(0).Entry().Ops()
	add, pair := ops[0], ops[1]
	if n := len(ir.Uses(add.Result(0))); n != 1 {
		t.Fatalf("add has %d uses, want 1", n)
	}
	// Replace the pair's first result by the add: add gains a use.
	ir.ReplaceAllUsesWith(pair.Result(0), add.Result(0))
	if n := len(ir.Uses(add.Result(0))); n != 2 {
		t.Fatalf("after RAUW add has %d uses, want 2", n)
	}
	if ir.HasUses(pair.Result(0)) {
		t.Fatal("pair#0 still used")
	}
	if err := ir.VerifyModule(m); err != nil {
		t.Fatal(err)
	}
}

func TestEraseDropsUses(t *testing.T) {
	m := mustParse(t, sample)
	fn := m.Region(0).Entry().First()
	ops := fn.Region(0).Entry().Ops()
	ret := ops[3]
	sum := ops[2]
	ret.Erase()
	if ir.HasUses(sum.Result(0)) {
		t.Fatal("erased op still uses its operand")
	}
	sum.Erase()
	if ir.HasUses(ops[1].Result(0)) || ir.HasUses(ops[1].Result(1)) {
		t.Fatal("uses of erased op remain")
	}
}

func TestBuilderAndClone(t *testing.T) {
	m := mustParse(t, sample)
	fn := m.Region(0).Entry().First()
	clone := fn.Clone(nil)
	clone.SetAttr("sym_name", ir.Str("g"))
	m.Region(0).Entry().Append(clone)
	if err := ir.VerifyModule(m); err != nil {
		t.Fatalf("clone does not verify: %v", err)
	}
	// The clone's ops use the clone's values, not the original's.
	orig := fn.Region(0).Entry().First()
	for _, op := range clone.Region(0).Entry().Ops() {
		for _, v := range op.Operands() {
			if v == orig.Result(0) {
				t.Fatal("clone refers to original value")
			}
		}
	}
	b := ir.NewBuilder(ir.UnknownLoc{})
	b.SetInsertionPoint(clone.Region(0).Entry().Last())
	arg := clone.Region(0).Entry().Arg(0)
	op := b.CreateOp("test.neg", []ir.Value{arg}, []ir.Type{ir.I32})
	if op.Next() != clone.Region(0).Entry().Last() {
		t.Fatal("builder did not insert before the terminator")
	}
	out := ir.Print(m, ir.PrintOptions{})
	if !strings.Contains(out, `func.func @g(`) || !strings.Contains(out, `"test.neg"(%arg0) : (i32) -> i32`) {
		t.Errorf("unexpected print:\n%s", out)
	}
}

func TestWalkOrder(t *testing.T) {
	m := mustParse(t, sample)
	var names []string
	ir.Walk(m, func(op *ir.Operation) ir.WalkResult {
		names = append(names, op.Name())
		return ir.Advance
	})
	want := "builtin.module func.func test.add test.pair test.add func.return"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("walk order %q, want %q", got, want)
	}
	var post []string
	ir.WalkPost(m, func(op *ir.Operation) { post = append(post, op.Name()) })
	if post[len(post)-1] != "builtin.module" {
		t.Errorf("post-order ends with %s", post[len(post)-1])
	}
}

func TestDiagnostics(t *testing.T) {
	cases := []struct{ src, want string }{
		{`"test.a"(%x) : (i32) -> ()`, "test.tma:1:10: error: use of undeclared SSA value name '%x'"},
		{"func.func @f() {\n  %0 = \"test.a\"(%0) : (i32) -> i32\n  return\n}", "does not dominate this use"},
		{"func.func @f() {\n  %0 = \"test.a\"() : () -> i32\n  %0 = \"test.a\"() : () -> i32\n  return\n}", "redefinition of SSA value '%0'"},
		{`func.func @f() { return } func.func @f() { return }`, "redefinition of symbol named 'f'"},
		{`%0 = "test.a"() : () -> memref<4xf32, 3, 4>`, "multiple memory spaces"},
		{`"test.a"() {x = dense<[1, 2]> : vector<3xi32>} : () -> ()`, "inferred shape of elements literal ([2]) does not match type ([3])"},
		{"\"test.a\"() : () -> ()\n\"test.b\"(", "test.tma:2:10: error: expected SSA operand"},
		{`"test.a"() {v = 300 : i8} : () -> ()`, "integer constant out of range"},
	}
	for _, c := range cases {
		m, err := ir.Parse("test.tma", c.src, ir.ParseOptions{AllowUnregistered: true})
		if err == nil {
			err = ir.VerifyModule(m)
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %q", c.src, err, c.want)
		}
	}
}

func TestRenderShowsSourceAndCaret(t *testing.T) {
	src := "func.func @f() {\n  %0 = \"test.a\"(%bad) : (i32) -> i32\n  return\n}\n"
	_, err := ir.Parse("k.tma", src, ir.ParseOptions{AllowUnregistered: true})
	sm := ir.NewSourceMgr()
	sm.Add("k.tma", src)
	got := ir.AsDiagnostics(err)[0].Render(sm)
	want := "k.tma:2:17: error: use of undeclared SSA value name '%bad'\n  %0 = \"test.a\"(%bad) : (i32) -> i32\n                ^\n"
	if got != want {
		t.Errorf("render:\n%s\nwant:\n%s", got, want)
	}
}

func TestUnregisteredRejectedByDefault(t *testing.T) {
	_, err := ir.Parse("t.tma", `"foo.bar"() : () -> ()`, ir.ParseOptions{})
	if err == nil || !strings.Contains(err.Error(), "allow-unregistered-dialect") {
		t.Errorf("got %v", err)
	}
}

func TestGenericNumberingIsModuleWide(t *testing.T) {
	src := "func.func @a(%x: i32) { return }\nfunc.func @b(%y: i32) { return }\n"
	m := mustParse(t, src)
	out := ir.Print(m, ir.PrintOptions{Generic: true})
	// Upstream numbers generic output module-wide, last region first.
	if !strings.Contains(out, "^bb0(%arg1: i32)") || !strings.Contains(out, "^bb0(%arg0: i32)") ||
		strings.Index(out, "%arg1") > strings.Index(out, "%arg0") {
		t.Errorf("generic numbering:\n%s", out)
	}
}

func TestIsBeforeInBlock(t *testing.T) {
	m := mustParse(t, `"test.a"() ({
  "test.b"() : () -> ()
}) : () -> ()
"test.c"() : () -> ()
"test.d"() : () -> ()`)
	ops := m.Region(0).Entry().Ops()
	a, c, d := ops[0], ops[1], ops[2]
	b := a.Region(0).Entry().Ops()[0]
	for _, x := range []struct {
		p, q *ir.Operation
		want bool
	}{{a, c, true}, {a, d, true}, {c, d, true}, {d, a, false}, {c, c, false}, {b, c, false}, {a, b, false}} {
		if got := x.p.IsBeforeInBlock(x.q); got != x.want {
			t.Errorf("%s.IsBeforeInBlock(%s) = %v, want %v", x.p.Name(), x.q.Name(), got, x.want)
		}
	}
}
