// Package interp executes plain scalar IR (func, arith, math, scf, cf,
// memref) on the CPU. `tmac run` uses it to run a program's
// func.func @reference on the same inputs as the GPU, as an independent
// check of the results.
package interp

import (
	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/runtime/buffer"
)

// Arg is an argument or result of an interpreted function: a
// *buffer.Buffer for a memref, an int64 for integers and index, a float64
// for floats.
type Arg any

// Call runs the function named fn of module with args (memref buffers are
// modified in place) and returns its results.
func Call(module *ir.Operation, fn string, args []Arg) ([]Arg, error) {
	return call(module, fn, args)
}

var _ = buffer.New
