package plan

import (
	"fmt"
	"math"
	"strings"

	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/runtime/buffer"
)

// Tolerance returns the default relative and absolute tolerances for
// results of element type t: f32/f64 rtol 1e-5 atol 1e-6, tf32 1e-3,
// f16/bf16 1e-2, fp8 5e-2, integers exact.
func Tolerance(t ir.Type) (rtol, atol float64) {
	ft, ok := t.(*ir.FloatType)
	if !ok {
		return 0, 0
	}
	switch ft.Kind {
	case ir.F16, ir.BF16:
		return 1e-2, 1e-2
	case ir.TF32:
		return 1e-3, 1e-3
	case ir.F8E4M3FN, ir.F8E5M2:
		return 5e-2, 5e-2
	}
	return 1e-5, 1e-6
}

// DefaultTolerance returns the tolerances for an output of element type
// out computed from inputs of the given element types: the relative
// tolerance of the least precise floating-point type involved (an f32
// result of an f16 GEMM is only as exact as f16 allows), and an absolute
// tolerance of rtol times the largest reference magnitude, so results that
// are sums of many terms (where an element near zero carries the rounding
// error of its large terms) are judged on the output's scale.
func DefaultTolerance(out ir.Type, inputs []ir.Type, ref *buffer.Buffer) (rtol, atol float64) {
	return DefaultToleranceWritten(out, inputs, ref, nil)
}

// DefaultToleranceWritten is DefaultTolerance with the largest reference
// magnitude taken over the elements where written is true only (all of
// them when written is nil): a sampled reference leaves the others
// unwritten.
func DefaultToleranceWritten(out ir.Type, inputs []ir.Type, ref *buffer.Buffer, written []bool) (rtol, atol float64) {
	rtol, _ = Tolerance(out)
	if rtol == 0 {
		return 0, 0 // integers: exact
	}
	for _, t := range inputs {
		if r, _ := Tolerance(t); r > rtol {
			rtol = r
		}
	}
	maxRef := 0.0
	if ref != nil && ref.IsFloat() {
		for i := 0; i < ref.Len(); i++ {
			if written != nil && (i >= len(written) || !written[i]) {
				continue
			}
			if v := math.Abs(ref.Float(i)); v > maxRef && !math.IsInf(v, 0) {
				maxRef = v
			}
		}
	}
	return rtol, rtol * maxRef
}

// Comparison is the result of comparing an output with its reference.
type Comparison struct {
	N          int // elements compared
	Of         int // elements of the output
	MaxAbs     float64
	MaxRel     float64
	RelNorm    float64 // ‖out−ref‖₂/‖ref‖₂
	Mismatches int
	First      []int // flat indices of the first mismatches (up to 5)
}

// OK reports whether every element is within tolerance.
func (c *Comparison) OK() bool { return c.Mismatches == 0 }

// Compare checks out against ref element by element: an element matches
// when |out−ref| ≤ atol + rtol·|ref|; NaN matches only NaN (a poisoned
// element left unwritten therefore fails against a finite reference).
func Compare(out, ref *buffer.Buffer, rtol, atol float64) (*Comparison, error) {
	return compare(out, ref, nil, rtol, atol)
}

// CompareWritten is Compare restricted to the elements where written is
// true (one entry per element): those a sampled reference computed. The
// norms and maxima are over those elements only. It is an error when no
// element was written: nothing would be checked.
func CompareWritten(out, ref *buffer.Buffer, written []bool, rtol, atol float64) (*Comparison, error) {
	if len(written) != out.Len() {
		return nil, fmt.Errorf("the write mask has %d entries for %d elements", len(written), out.Len())
	}
	n := 0
	for _, w := range written {
		if w {
			n++
		}
	}
	if n == 0 {
		return nil, fmt.Errorf("the sampled reference wrote none of the %d elements of this output, so nothing could be compared", out.Len())
	}
	return compare(out, ref, written, rtol, atol)
}

func compare(out, ref *buffer.Buffer, written []bool, rtol, atol float64) (*Comparison, error) {
	if out.Len() != ref.Len() || out.Elem.String() != ref.Elem.String() {
		return nil, fmt.Errorf("output and reference differ in shape or type (%v %s vs %v %s)", out.Shape, out.Elem, ref.Shape, ref.Elem)
	}
	c := &Comparison{Of: out.Len()}
	isF := out.IsFloat()
	var diff2, ref2 float64
	for i := 0; i < out.Len(); i++ {
		if written != nil && !written[i] {
			continue
		}
		c.N++
		var o, r float64
		if isF {
			o, r = out.Float(i), ref.Float(i)
		} else {
			o, r = float64(out.Int(i)), float64(ref.Int(i))
		}
		bad := false
		if math.IsNaN(o) || math.IsNaN(r) {
			bad = math.IsNaN(o) != math.IsNaN(r)
			if bad {
				c.MaxAbs, c.MaxRel = math.Inf(1), math.Inf(1)
			}
		} else if math.IsInf(o, 0) || math.IsInf(r, 0) {
			bad = o != r
		} else {
			d := math.Abs(o - r)
			diff2 += d * d
			ref2 += r * r
			c.MaxAbs = math.Max(c.MaxAbs, d)
			if r != 0 {
				c.MaxRel = math.Max(c.MaxRel, d/math.Abs(r))
			} else if d != 0 {
				c.MaxRel = math.Max(c.MaxRel, math.Inf(1))
			}
			if isF {
				bad = d > atol+rtol*math.Abs(r)
			} else {
				bad = out.Int(i) != ref.Int(i)
			}
		}
		if bad {
			c.Mismatches++
			if len(c.First) < 5 {
				c.First = append(c.First, i)
			}
		}
	}
	switch {
	case ref2 > 0:
		c.RelNorm = math.Sqrt(diff2 / ref2)
	case diff2 > 0:
		c.RelNorm = math.Inf(1)
	}
	return c, nil
}

// Index renders a flat index as a multi-dimensional one.
func Index(shape []int64, flat int) string {
	idx := make([]string, len(shape))
	f := int64(flat)
	for i := len(shape) - 1; i >= 0; i-- {
		if shape[i] > 0 {
			idx[i] = fmt.Sprint(f % shape[i])
			f /= shape[i]
		}
	}
	return "[" + strings.Join(idx, ", ") + "]"
}
