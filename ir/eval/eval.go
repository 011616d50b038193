// Package eval evaluates elementwise ops through the semantics declared on
// their definitions (ir.Semantics): it builds those semantics for the
// dialect packages (IntBinary, FloatUnary, ...) and applies them for the
// consumers — constant folding (Fold), the reference interpreter, the
// emulator and the host-plan executor (Compile, CompileGPU), and passes
// that reason about integer constants (Ints).
//
// A lane holds integers as IntegerAttr does (i1 as 0 or 1, other widths
// sign-extended to 64 bits) and floats as float64 values of their type; see
// ir.Lane.
package eval

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/tmac-dev/tmac/ir"
)

// Wrap returns v truncated to w bits as a lane holds it: i1 as 0 or 1,
// other widths sign-extended (w of 64 or more, or 0: v itself).
func Wrap(v int64, w int) int64 {
	switch {
	case w <= 0 || w >= 64:
		return v
	case w == 1:
		return v & 1
	}
	s := uint(64 - w)
	return v << s >> s
}

// Signed returns the w-bit integer v as a signed number (i1 true is -1).
func Signed(v int64, w int) int64 {
	if w <= 0 || w >= 64 {
		return v
	}
	s := uint(64 - w)
	return v << s >> s
}

// Unsigned returns the w-bit integer v as an unsigned number.
func Unsigned(v int64, w int) uint64 {
	if w <= 0 || w >= 64 {
		return uint64(v)
	}
	return uint64(v) & (1<<uint(w) - 1)
}

// Round rounds v to the float format k (to nearest, ties to even).
func Round(v float64, k ir.FloatKind) float64 {
	switch k {
	case ir.F64:
		return v
	case ir.F32:
		return float64(float32(v))
	}
	return ir.RoundToFloatKind(v, k)
}

// IntWidth returns the width of t's element type if it is a signless
// integer of at most 64 bits or index (64), else an error.
func IntWidth(t ir.Type) (int, error) {
	e := ir.ElementTypeOrSelf(t)
	if ir.IsIndex(e) {
		return 64, nil
	}
	if ir.IsSignlessInteger(e) {
		if w := ir.BitWidth(e); w <= 64 {
			return w, nil
		}
	}
	return 0, fmt.Errorf("values of type %s are not evaluated (integers of at most 64 bits, index and floats are)", e)
}

// FloatKind returns the format of t's element type if it is a float type.
func FloatKind(t ir.Type) (ir.FloatKind, error) {
	if ft, ok := ir.ElementTypeOrSelf(t).(*ir.FloatType); ok {
		return ft.Kind, nil
	}
	return 0, fmt.Errorf("values of type %s are not evaluated here (a float type is expected)", ir.ElementTypeOrSelf(t))
}

// IntToFloat converts the integer whose magnitude is u (negative if neg)
// to the float format k, rounding once (to nearest, ties to even).
func IntToFloat(neg bool, u uint64, k ir.FloatKind) float64 {
	var f float64
	switch {
	case k == ir.F64:
		f = float64(u)
	case k == ir.F32:
		f = float64(float32(u))
	case u < 1<<53:
		f = Round(float64(u), k)
	default:
		// Round to odd at 53 bits first: the second rounding, to a format
		// of at most 24 bits of precision, is then correct.
		shift := bits.Len64(u) - 53
		lost := u & (1<<uint(shift) - 1)
		u >>= uint(shift)
		if lost != 0 {
			u |= 1
		}
		f = Round(math.Ldexp(float64(u), shift), k)
	}
	if neg {
		return -f
	}
	return f
}

// IntBinary is the semantics of a binary integer op: f gets the operands as
// signed numbers of the result's width w (64 for index) and returns the
// result (wrapped to w by the caller) and false where it is undefined.
func IntBinary(undefined string, f func(x, y int64, w int) (int64, bool)) *ir.Semantics {
	return &ir.Semantics{Undefined: undefined, IntBinary: f, Lane: func(op *ir.Operation) (ir.LaneFunc, error) {
		w, err := IntWidth(op.Result(0).Type())
		if err != nil {
			return nil, err
		}
		return func(x, y, _ ir.Lane) (ir.Lane, bool) {
			r, ok := f(Signed(x.I, w), Signed(y.I, w), w)
			return ir.Lane{I: Wrap(r, w)}, ok
		}, nil
	}}
}

// IntBinary2 is the semantics of a binary integer op with two results: f
// gets the operands as signed numbers of their width w (64 for index) and
// returns the results, which the caller wraps to each result's width.
func IntBinary2(undefined string, f func(x, y int64, w int) (r0, r1 int64, ok bool)) *ir.Semantics {
	return &ir.Semantics{Undefined: undefined, Lane2: func(op *ir.Operation) (ir.Lane2Func, error) {
		var ws [3]int
		for i, v := range []ir.Value{op.Operand(0), op.Result(0), op.Result(1)} {
			w, err := IntWidth(v.Type())
			if err != nil {
				return nil, err
			}
			ws[i] = w
		}
		w, w0, w1 := ws[0], ws[1], ws[2]
		return func(x, y, _ ir.Lane) (ir.Lane, ir.Lane, bool) {
			r0, r1, ok := f(Signed(x.I, w), Signed(y.I, w), w)
			return ir.Lane{I: Wrap(r0, w0)}, ir.Lane{I: Wrap(r1, w1)}, ok
		}, nil
	}}
}

// Float ops compute exactly in float64 and round once to the result's
// format: correct for the formats up to f32 when f is correctly rounded in
// float64 (53 >= 2*24+2). Each arity has its own lane functions so that a
// lane costs one call of f (the interpreter's inner loops run through
// them).

// FloatUnary is the semantics of a float op of one operand.
func FloatUnary(f func(x float64) float64) *ir.Semantics {
	return &ir.Semantics{Lane: FloatUnaryLane(f)}
}

// FloatUnaryLane is FloatUnary's lane compiler, for semantics that also
// declare what the GPU computes.
func FloatUnaryLane(f func(x float64) float64) func(op *ir.Operation) (ir.LaneFunc, error) {
	return func(op *ir.Operation) (ir.LaneFunc, error) {
		k, err := FloatKind(op.Result(0).Type())
		switch {
		case err != nil:
			return nil, err
		case k == ir.F64:
			return func(x, _, _ ir.Lane) (ir.Lane, bool) { return ir.Lane{F: f(x.F)}, true }, nil
		case k == ir.F32:
			return func(x, _, _ ir.Lane) (ir.Lane, bool) { return ir.Lane{F: float64(float32(f(x.F)))}, true }, nil
		}
		return func(x, _, _ ir.Lane) (ir.Lane, bool) { return ir.Lane{F: ir.RoundToFloatKind(f(x.F), k)}, true }, nil
	}
}

// Maximum and Minimum are IEEE 754-2019 maximum and minimum (arith's
// maximumf/minimumf, PTX max.NaN/min.NaN): NaN when either operand is
// NaN, -0 ordered below +0. Go's math.Max and math.Min are not quite
// that: math.Max(+Inf, NaN) is +Inf and math.Min(-Inf, NaN) is -Inf.
func Maximum(x, y float64) float64 {
	if math.IsNaN(x) || math.IsNaN(y) {
		return math.NaN()
	}
	return math.Max(x, y)
}

// Minimum: see Maximum.
func Minimum(x, y float64) float64 {
	if math.IsNaN(x) || math.IsNaN(y) {
		return math.NaN()
	}
	return math.Min(x, y)
}

// FloatBinary is the semantics of a float op of two operands.
func FloatBinary(f func(x, y float64) float64) *ir.Semantics {
	return &ir.Semantics{Lane: func(op *ir.Operation) (ir.LaneFunc, error) {
		k, err := FloatKind(op.Result(0).Type())
		switch {
		case err != nil:
			return nil, err
		case k == ir.F64:
			return func(x, y, _ ir.Lane) (ir.Lane, bool) { return ir.Lane{F: f(x.F, y.F)}, true }, nil
		case k == ir.F32:
			return func(x, y, _ ir.Lane) (ir.Lane, bool) { return ir.Lane{F: float64(float32(f(x.F, y.F)))}, true }, nil
		}
		return func(x, y, _ ir.Lane) (ir.Lane, bool) { return ir.Lane{F: ir.RoundToFloatKind(f(x.F, y.F), k)}, true }, nil
	}}
}

// FloatTernary is the semantics of a float op of three operands.
func FloatTernary(f func(x, y, z float64) float64) *ir.Semantics {
	return &ir.Semantics{Lane: func(op *ir.Operation) (ir.LaneFunc, error) {
		k, err := FloatKind(op.Result(0).Type())
		if err != nil {
			return nil, err
		}
		return func(x, y, z ir.Lane) (ir.Lane, bool) { return ir.Lane{F: Round(f(x.F, y.F, z.F), k)}, true }, nil
	}}
}

// Compile returns op's exact lane function (what folding, the reference
// interpreter and the host compute).
func Compile(op *ir.Operation) (ir.LaneFunc, error) {
	s := op.Def().Semantics
	switch {
	case s == nil:
		return nil, fmt.Errorf("'%s' has no evaluation semantics", op.Name())
	case s.Lane == nil:
		return nil, fmt.Errorf("'%s' has two results; it is evaluated by Compile2", op.Name())
	}
	return s.Lane(op)
}

// Compile2 returns the lane function of an op with two results (exact, and
// what the GPU computes).
func Compile2(op *ir.Operation) (ir.Lane2Func, error) {
	s := op.Def().Semantics
	if s == nil || s.Lane2 == nil {
		return nil, fmt.Errorf("'%s' has no evaluation semantics for two results", op.Name())
	}
	return s.Lane2(op)
}

// CompileGPU returns the lane function of what tmac's lowering computes on
// the GPU: the op's GPU semantics where declared, else the exact one.
func CompileGPU(op *ir.Operation) (ir.LaneFunc, error) {
	s := op.Def().Semantics
	if s != nil && s.GPU != nil {
		return s.GPU(op)
	}
	return Compile(op)
}

// Has reports whether op is evaluated through semantics.
func Has(op *ir.Operation) bool { return op.Def().Semantics != nil }

// UndefinedError returns the error an evaluator reports when op's result is
// undefined for the given operand lanes.
func UndefinedError(op *ir.Operation, operands ...string) error {
	why := "undefined result"
	if s := op.Def().Semantics; s != nil && s.Undefined != "" {
		why += " (" + s.Undefined + ")"
	}
	if len(operands) > 0 {
		why += fmt.Sprintf(" for operands %v", operands)
	}
	return fmt.Errorf("%s", why)
}

// Ints evaluates an op on integer operands (sign-extended or, for i1, 0 or
// 1) with an integer result. ok is false if the op has no semantics, is not
// of that form, or its result is undefined.
func Ints(op *ir.Operation, x []int64) (int64, bool) {
	if !Has(op) || op.NumResults() != 1 || len(x) != op.NumOperands() || len(x) > 3 {
		return 0, false
	}
	for _, v := range op.Operands() {
		if _, err := IntWidth(v.Type()); err != nil {
			return 0, false
		}
	}
	if _, err := IntWidth(op.Result(0).Type()); err != nil {
		return 0, false
	}
	f, err := Compile(op)
	if err != nil {
		return 0, false
	}
	var l [3]ir.Lane
	for i, v := range x {
		l[i].I = v
	}
	r, ok := f(l[0], l[1], l[2])
	return r.I, ok
}
