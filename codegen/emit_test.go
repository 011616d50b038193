package codegen

import (
	"strings"
	"testing"

	_ "github.com/tmac-dev/tmac/dialects/all"
	"github.com/tmac-dev/tmac/ir"
)

// emitFuncs compiles a module holding one gpu.module with the given
// functions and returns the LLVM IR text, or the error.
func emitFuncs(t *testing.T, funcs string) (string, error) {
	t.Helper()
	src := "module attributes {gpu.container_module} {\n gpu.module @m {\n" + funcs + "\n }\n}\n"
	mod, err := ir.Parse("test.tma", src, ir.ParseOptions{})
	if err != nil {
		t.Fatalf("parse: %v\n%s", err, src)
	}
	if err := ir.VerifyModule(mod); err != nil {
		t.Fatalf("verify: %v\n%s", err, src)
	}
	m, err := EmitModule(mod)
	if err != nil {
		return "", err
	}
	return m.String(), nil
}

// emitKernel compiles the body of one kernel with the given arguments and
// returns the LLVM IR text, or the error.
func emitKernel(t *testing.T, args, body string) (string, error) {
	t.Helper()
	return emitFuncs(t, "  gpu.func @k("+args+") kernel {\n"+body+"\n   gpu.return\n  }")
}

// wantInOrder fails unless ll contains each of wants, in that order.
func wantInOrder(t *testing.T, ll string, wants ...string) {
	t.Helper()
	rest := ll
	for _, w := range wants {
		i := strings.Index(rest, w)
		if i < 0 {
			t.Fatalf("missing (in order) %q in:\n%s", w, ll)
		}
		rest = rest[i+len(w):]
	}
}
