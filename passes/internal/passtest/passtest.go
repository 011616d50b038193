// Package passtest holds what the tests of the pass families share.
package passtest

import (
	"testing"

	_ "github.com/tmac-dev/tmac/dialects/all"
	"github.com/tmac-dev/tmac/dialects/gpu"
	"github.com/tmac-dev/tmac/ir"
)

// Parse parses and verifies a module, failing the test on an error.
func Parse(t *testing.T, src string) *ir.Operation {
	t.Helper()
	m, err := ir.Parse("test.tma", src, ir.ParseOptions{})
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	if err := ir.VerifyModule(m); err != nil {
		t.Fatalf("verify input: %v", err)
	}
	return m
}

// Kernels returns the gpu.func ops of m.
func Kernels(m *ir.Operation) []*ir.Operation { return ir.Nested(m, gpu.Func) }
