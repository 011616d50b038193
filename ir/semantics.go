package ir

// What an elementwise op computes, declared once on its definition and used
// by every consumer that evaluates ops without a GPU: constant folding, the
// reference interpreter (runtime/interp), the emulator (runtime/emu), the
// host-plan executor (runtime/plan) and the passes that reason about
// constants (mbarrier-phase). Package ir/eval builds Semantics values and
// applies them to attributes, scalars and vectors.

// Lane is one element of an integer or floating-point value. Integers (and
// index, as 64 bits) are held in I as IntegerAttr holds them: i1 as 0 or 1,
// other widths sign-extended to 64 bits. Floats are held in F as the
// float64 equal to a value of their type (already rounded to it).
type Lane struct {
	I int64
	F float64
}

// LaneFunc computes one lane of an elementwise op's result from the same
// lane of its operands, in operand order (ops with fewer than three
// operands ignore the rest). The result is already wrapped or rounded to the
// result's element type. ok is false where the op's result is undefined
// (poison or undefined behaviour upstream: an integer division by zero, a
// shift by the width or more, a float-to-integer conversion out of range);
// folding then leaves the op alone, and the evaluators report an error.
type LaneFunc func(x, y, z Lane) (r Lane, ok bool)

// Lane2Func is LaneFunc for ops with two results (arith.addui_extended:
// the sum and the overflow bit; the extended multiplications: the low and
// the high half): one lane of each result, each wrapped to its own type.
type Lane2Func func(x, y, z Lane) (r0, r1 Lane, ok bool)

// Semantics describes what an elementwise op computes.
type Semantics struct {
	// Lane returns op's exact lane function for its operand and result
	// types and its attributes, or an error saying why this form is not
	// evaluated (a type wider than 64 bits, a rounding mode other than
	// to_nearest_even).
	Lane func(op *Operation) (LaneFunc, error)
	// Lane2 takes Lane's place for an op with two results; such an op
	// leaves Lane and GPU nil (what it computes is exact on the GPU).
	Lane2 func(op *Operation) (Lane2Func, error)
	// GPU, if set, is what tmac's lowering computes on the GPU where that
	// differs from Lane (math.exp goes through ex2.approx; a float-to-
	// integer conversion saturates). The emulator uses it, so that it
	// matches the GPU; folding, the reference interpreter and the host use
	// Lane.
	GPU func(op *Operation) (LaneFunc, error)
	// Undefined says when Lane reports an undefined result ("division by
	// zero"), for error messages; empty if it never does.
	Undefined string
	// IntBinary, for a binary integer op, computes it on operands held as
	// signed numbers of width w, reporting false where the result is
	// undefined; Lane applies it at the result's width. Folding the index
	// dialect evaluates it at 32 and 64 bits (index's width is the
	// target's). Nil for other ops.
	IntBinary func(x, y int64, w int) (int64, bool)
}
