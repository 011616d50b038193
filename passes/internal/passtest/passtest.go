// Package passtest holds what the tests of the pass families share.
package passtest

import (
	"testing"

	"github.com/tmac-dev/tmac/dialects/gpu"
	"github.com/tmac-dev/tmac/internal/testutil"
	"github.com/tmac-dev/tmac/ir"
)

// Parse parses and verifies a module, failing the test on an error.
func Parse(t *testing.T, src string) *ir.Operation {
	t.Helper()
	return testutil.ParseNamed(t, "test.tma", src)
}

// Kernels returns the gpu.func ops of m.
func Kernels(m *ir.Operation) []*ir.Operation { return ir.Nested(m, gpu.Func) }
