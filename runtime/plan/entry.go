package plan

import (
	"fmt"
	"sort"
	"strings"

	funcdialect "github.com/tmac-dev/tmac/dialects/func"
	"github.com/tmac-dev/tmac/ir"
)

// ReferenceName is the symbol of the reference function.
const ReferenceName = "reference"

// OutputAttr marks an entry argument as an output (written, not read).
const OutputAttr = "tmac.output"

// FlopsAttr on the entry function gives the floating-point operations of
// one run, for --bench when they cannot be counted from the program.
const FlopsAttr = "tmac.flops"

// BytesAttr on the entry function gives the bytes one run moves, for
// --bench when the entry's memref arguments do not say it.
const BytesAttr = "tmac.bytes"

// SelectEntry finds the entry function: the named one, or else the only
// public func.func with a body that is not @reference.
func SelectEntry(mod *ir.Operation, name string) (*ir.Operation, error) {
	var cands []*ir.Operation
	var names []string
	for _, op := range mod.Region(0).Entry().Ops() {
		if op.Name() != funcdialect.Func {
			continue
		}
		if name != "" {
			if op.SymbolName() == name {
				return op, nil
			}
			continue
		}
		if !isEntryCandidate(op) {
			continue
		}
		cands = append(cands, op)
		names = append(names, "@"+op.SymbolName())
	}
	if name != "" {
		return nil, fmt.Errorf("no func.func @%s in the module%s", name, candidates(mod))
	}
	switch len(cands) {
	case 1:
		return cands[0], nil
	case 0:
		return nil, fmt.Errorf("the module has no public func.func to run (other than @reference)")
	}
	sort.Strings(names)
	return nil, fmt.Errorf("the module has %d public functions (%s); choose one with --entry", len(cands), strings.Join(names, ", "))
}

// EntryCandidates lists the functions SelectEntry chooses from without a
// name: the public func.funcs with a body other than @reference, in module
// order. A bundle carries a host plan for each.
func EntryCandidates(mod *ir.Operation) []*ir.Operation {
	var out []*ir.Operation
	for _, op := range mod.Region(0).Entry().Ops() {
		if op.Name() == funcdialect.Func && isEntryCandidate(op) {
			out = append(out, op)
		}
	}
	return out
}

func isEntryCandidate(op *ir.Operation) bool {
	return op.SymbolName() != ReferenceName && op.StrAttrOf("sym_visibility") != "private" &&
		op.NumRegions() > 0 && op.Region(0).Entry() != nil
}

func candidates(mod *ir.Operation) string {
	var names []string
	for _, op := range mod.Region(0).Entry().Ops() {
		if op.Name() == funcdialect.Func && op.SymbolName() != ReferenceName {
			names = append(names, "@"+op.SymbolName())
		}
	}
	if len(names) == 0 {
		return ""
	}
	sort.Strings(names)
	return "; functions: " + strings.Join(names, ", ")
}

// Reference returns the module's func.func @reference, or nil.
func Reference(mod *ir.Operation) *ir.Operation {
	for _, op := range mod.Region(0).Entry().Ops() {
		if op.Name() == funcdialect.Func && op.SymbolName() == ReferenceName {
			return op
		}
	}
	return nil
}

// ArgAttr returns the named attribute of argument i of fn, or nil.
func ArgAttr(fn *ir.Operation, i int, name string) ir.Attribute {
	arr, ok := funcdialect.FuncOp{Op: fn}.ArgAttrs().(*ir.ArrayAttr)
	if !ok || i >= len(arr.Elems) {
		return nil
	}
	d, ok := arr.Elems[i].(*ir.DictAttr)
	if !ok {
		return nil
	}
	return d.Get(name)
}

// Outputs reports which arguments of fn are outputs: those with the
// tmac.output argument attribute, or, where written is given (per
// argument: written before being read, by the reference function), those.
func Outputs(fn *ir.Operation, written []bool) []bool {
	ft, _ := FuncType(fn)
	out := make([]bool, len(ft.Inputs))
	for i := range out {
		out[i] = ArgAttr(fn, i, OutputAttr) != nil || (i < len(written) && written[i])
	}
	return out
}

// Flops returns the tmac.flops attribute of fn, or 0.
func Flops(fn *ir.Operation) float64 {
	switch a := fn.Attr(FlopsAttr).(type) {
	case *ir.IntegerAttr:
		return float64(a.Int())
	case *ir.FloatAttr:
		return a.Value
	}
	return 0
}

// SameSignature checks that ref takes the entry's argument types.
func SameSignature(entry, ref *ir.Operation) error {
	et, _ := FuncType(entry)
	rt, _ := FuncType(ref)
	if et == nil || rt == nil || len(et.Inputs) != len(rt.Inputs) {
		return fmt.Errorf("@reference must take the same arguments as @%s", entry.SymbolName())
	}
	for i := range et.Inputs {
		if et.Inputs[i].String() != rt.Inputs[i].String() {
			return fmt.Errorf("argument #%d of @reference is '%s' but '%s' in @%s", i, rt.Inputs[i], et.Inputs[i], entry.SymbolName())
		}
	}
	return nil
}
