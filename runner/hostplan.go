package runner

import (
	"errors"

	"github.com/tmac-dev/tmac/bundle"
	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/runtime/plan"
)

// hostRun runs the entry function's host code on a device with the
// arguments of plan.Plan.Run, calling onLaunch after every launch.
type hostRun func(dev plan.Device, args []plan.Value, onLaunch func(*plan.Launch) error) error

// hostRunner chooses how the entry's host code runs: a format-2 bundle's
// declarative plan (what Python runs too); for a source file the plan
// translated from it, or the IR executor (p) when its host code is
// outside the plan language; the IR executor for format-1 bundles.
// declarative says whether it runs a declarative plan.
func hostRunner(prog *Program, entry *ir.Operation, p *plan.Plan) (run hostRun, declarative bool) {
	irRun := func(dev plan.Device, args []plan.Value, onLaunch func(*plan.Launch) error) error {
		return p.Run(dev, args, onLaunch)
	}
	var e *bundle.Entry
	if prog.FromBundle != nil {
		if e, _ = prog.FromBundle.Entry(entry.SymbolName()); e == nil {
			return irRun, false // format 1: no plans
		}
	} else {
		var err error
		if e, err = plan.Describe(prog.Module, entry); err != nil {
			return irRun, false
		}
	}
	return func(dev plan.Device, args []plan.Value, onLaunch func(*plan.Launch) error) error {
		err := plan.RunDecl(dev, e, args, onLaunch)
		if prog.FromBundle != nil {
			return err
		}
		return stepDiagnostic(entry, err)
	}, true
}

// stepDiagnostic turns the failure of a plan step translated from source
// into a diagnostic at the op the step came from, as the IR executor
// reports it: a device's own diagnostic (the emulator's, in the kernel)
// gets the launch as a note; a watchdog's DeadlockError stays as it is.
func stepDiagnostic(entry *ir.Operation, err error) error {
	var se *plan.StepError
	var dl *plan.DeadlockError
	if !errors.As(err, &se) || errors.As(err, &dl) {
		return err
	}
	var op *ir.Operation
	ir.Walk(entry, func(o *ir.Operation) ir.WalkResult {
		if op == nil && o != entry && plan.LocString(o.Loc) == se.Loc {
			op = o
		}
		return ir.Advance
	})
	if op == nil {
		return err
	}
	var dg interface{ Diagnostic() *ir.Diagnostic }
	if errors.As(se.Err, &dg) {
		return dg.Diagnostic().AttachNote(op.Loc, "in the kernel launched here")
	}
	return op.EmitError("%v", se.Err)
}
