package scf

import (
	"strings"
	"testing"

	_ "github.com/tmac-dev/tmac/dialects/builtin"
	_ "github.com/tmac-dev/tmac/dialects/func"
	"github.com/tmac-dev/tmac/ir"
)

func init() {
	// A terminator without parent constraints, standing in for upstream's
	// ub.unreachable.
	ir.Register(&ir.OpDef{Name: "scftest.term", Traits: ir.Terminator, Format: "attr-dict"})
}

func verifyText(t *testing.T, src string) error {
	t.Helper()
	m, err := ir.Parse("t.mlir", src, ir.ParseOptions{})
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return ir.VerifyModule(m)
}

func TestWrongTerminator(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{`func.func @f(%i: index) {
  scf.for %k = %i to %i step %i {
    scftest.term
  }
  return
}`, "'scf.for' op expects regions to end with 'scf.yield', found 'scftest.term'"},
		{`func.func @f(%c: i1) {
  scf.if %c {
    scftest.term
  }
  return
}`, "'scf.if' op expects regions to end with 'scf.yield', found 'scftest.term'"},
	} {
		err := verifyText(t, tc.src)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("got %v, want %q", err, tc.want)
			continue
		}
		d := err.(*ir.Diagnostic)
		if len(d.Notes) != 1 || !strings.Contains(d.Notes[0].Msg, "absence of terminator implies 'scf.yield'") {
			t.Errorf("missing note: %+v", d.Notes)
		}
	}
}

func TestImplicitYieldInserted(t *testing.T) {
	m, err := ir.Parse("t.mlir", `func.func @f(%i: index, %c: i1) {
  scf.for %k = %i to %i step %i {
  }
  scf.if %c {
  } else {
  }
  return
}`, ir.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := ir.VerifyModule(m); err != nil {
		t.Fatal(err)
	}
	n := 0
	ir.Walk(m, func(op *ir.Operation) ir.WalkResult {
		if op.Name() == "scf.yield" {
			n++
		}
		return ir.Advance
	})
	if n != 3 {
		t.Errorf("got %d implicit scf.yield ops, want 3", n)
	}
}

func TestForIterArgCountUnderflow(t *testing.T) {
	err := verifyText(t, `func.func @f(%i: index) {
  "scf.for"(%i, %i, %i) ({
  ^bb0:
    scf.yield
  }) : (index, index, index) -> ()
  return
}`)
	if err == nil || !strings.Contains(err.Error(), "0 != 18446744073709551615") {
		t.Errorf("got %v", err)
	}
}
