package plan

import (
	"testing"

	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/runtime/buffer"
)

func TestDefaultToleranceUsesLeastPreciseInputAndOutputScale(t *testing.T) {
	ref, _ := buffer.New(ir.F32T, []int64{3})
	ref.SetFloat(0, 100)
	ref.SetFloat(1, -250)
	ref.SetFloat(2, 0.001)
	rtol, atol := DefaultTolerance(ir.F32T, []ir.Type{ir.F16T, ir.F16T}, ref)
	if rtol != 1e-2 || atol != 2.5 {
		t.Errorf("f16 GEMM into f32: rtol %g atol %g, want 1e-2 2.5", rtol, atol)
	}
	rtol, atol = DefaultTolerance(ir.F32T, []ir.Type{ir.F32T}, ref)
	if rtol != 1e-5 || atol != 250e-5 {
		t.Errorf("f32: rtol %g atol %g", rtol, atol)
	}
	iref, _ := buffer.New(ir.I32, []int64{1})
	if r, a := DefaultTolerance(ir.I32, []ir.Type{ir.F16T}, iref); r != 0 || a != 0 {
		t.Errorf("integers must be exact, got %g %g", r, a)
	}
	// An element near zero in a large-scale output passes on the scale;
	// a real error does not.
	out := ref.Clone()
	out.SetFloat(2, 0.001+1e-3)
	_, atol = DefaultTolerance(ir.F32T, nil, ref)
	if c, _ := Compare(out, ref, 1e-5, atol); !c.OK() {
		t.Error("rounding-size error near zero rejected")
	}
	out.SetFloat(0, 101)
	if c, _ := Compare(out, ref, 1e-5, atol); c.OK() {
		t.Error("a 1% error accepted")
	}
}
