package interp

import (
	"fmt"

	"github.com/tmac-dev/tmac/ir"
)

// call is replaced by the real interpreter (being written).
func call(module *ir.Operation, fn string, args []Arg) ([]Arg, error) {
	return nil, fmt.Errorf("the reference interpreter is not implemented yet")
}
