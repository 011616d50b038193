package scf

import (
	"fmt"

	"github.com/tmac-dev/tmac/ir"
)

// scf.index_switch runs the region of the case equal to its index operand,
// or the default region; the scf.yield of the region run gives the results.
// Region 0 is the default, the case regions follow in the order of cases.

func init() {
	ir.Register(&ir.OpDef{
		Name:    "scf.index_switch",
		Summary: "switch-case operation on an index argument",
		Doc: "Runs the region of the `case` whose value equals the index operand, else the `default` region; " +
			"the `scf.yield` ending the region run gives the results. Case values are distinct. In kernels it " +
			"becomes an LLVM `switch` whose arms branch to a join block, the results phis there.",
		Traits:             ir.SingleBlock | ir.RecursiveSideEffects,
		Operands:           []ir.ArgSpec{{Name: "arg", Type: ir.IndexOnly}},
		Results:            []ir.ArgSpec{{Name: "results", Kind: ir.Variadic, Type: ir.AnyType}},
		Attrs:              []ir.AttrSpec{{Name: "cases", Constraint: ir.DenseI64ArrayC}},
		Regions:            []ir.RegionSpec{{Name: "defaultRegion"}, {Name: "caseRegions", Variadic: true}},
		ImplicitTerminator: "scf.yield",
		Parse:              parseIndexSwitch,
		Print:              printIndexSwitch,
		VerifyInvariants:   verifyIndexSwitch,
		Verify:             checkImplicitTerminator,
	})
}

// parseIndexSwitch parses `$arg attr-dict (-> types)? (case N region)*
// default region`.
func parseIndexSwitch(p *ir.Parser, st *ir.OperationState) error {
	if err := p.ParseOperandOfType(ir.Index, st); err != nil {
		return err
	}
	if err := p.ParseOptionalAttrDict(st); err != nil {
		return err
	}
	if p.ParseOptionalPunct("->") {
		ts, err := p.ParseTypeList()
		if err != nil {
			return err
		}
		st.ResultTypes = ts
	}
	defaultRegion := st.AddRegion()
	cases := []int64{}
	for p.ParseOptionalKeyword("case") {
		v, err := p.ParseInteger()
		if err != nil {
			return err
		}
		r := st.AddRegion()
		// Upstream's custom<SwitchCases> adds no implicit terminator.
		if err := p.ParseRegion(r, nil); err != nil {
			return err
		}
		cases = append(cases, v)
	}
	st.AddAttr("cases", ir.DenseI64Array(cases...))
	if err := p.ParseKeyword("default"); err != nil {
		return err
	}
	if err := p.ParseRegion(defaultRegion, nil); err != nil {
		return err
	}
	defaultRegion.EnsureTerminator("scf.yield", st.Loc)
	return nil
}

// printIndexSwitch prints as upstream's declarative format does, with its
// space before the line break of each case: case regions print every
// terminator (custom<SwitchCases>), the default region elides an empty
// scf.yield.
func printIndexSwitch(p *ir.Printer, op *ir.Operation) {
	p.Write(" ")
	p.PrintOperand(op.Operand(0))
	p.PrintOptionalAttrDict(op.AllAttrs(), "cases")
	if op.NumResults() > 0 {
		p.Write(" -> ")
		p.PrintTypes(op.ResultTypes())
	}
	p.Write(" ")
	cases := switchCases(op)
	for i, r := range op.Regions()[1:] {
		p.PrintNewline()
		if i < len(cases) {
			p.Write(fmt.Sprintf("case %d ", cases[i]))
		}
		p.PrintRegion(r, false, true, false)
	}
	p.PrintNewline()
	p.Write("default ")
	p.PrintRegion(op.Region(0), true, printsTerminator(op.Region(0)), false)
}

// printsTerminator reports whether the declarative format prints r's
// terminator: it elides an implicit scf.yield without operands or
// attributes.
func printsTerminator(r *ir.Region) bool {
	if r.Empty() {
		return false
	}
	last := r.Entry().Last()
	return last == nil || last.Name() != "scf.yield" || last.NumOperands() > 0 || len(last.AllAttrs()) > 0
}

// switchCases returns the case values of an scf.index_switch.
func switchCases(op *ir.Operation) []int64 {
	if a, ok := op.Attr("cases").(*ir.DenseArrayAttr); ok {
		return a.Ints
	}
	return nil
}

// SwitchCases returns the case values of an scf.index_switch, in the
// order of its case regions (op.Region(1+i) for case i).
func SwitchCases(op *ir.Operation) []int64 { return switchCases(op) }

// verifyIndexSwitch is upstream's IndexSwitchOp::verify.
func verifyIndexSwitch(op *ir.Operation) error {
	for i := range op.Regions() {
		name := "defaultRegion"
		if i > 0 {
			name = "caseRegions"
		}
		if err := checkSizedRegion(op, i, name); err != nil {
			return err
		}
	}
	cases := switchCases(op)
	if n := op.NumRegions() - 1; n != len(cases) {
		return op.EmitOpError("has %d case regions but %d case values", n, len(cases))
	}
	seen := map[int64]bool{}
	for _, c := range cases {
		if seen[c] {
			return op.EmitOpError("has duplicate case value: %d", c)
		}
		seen[c] = true
	}
	check := func(r *ir.Region, name string) error {
		y := r.Entry().Last()
		if y == nil {
			return op.EmitOpError("expected region to end with scf.yield, but got nothing")
		}
		if y.Name() != "scf.yield" {
			return op.EmitOpError("expected region to end with scf.yield, but got %s", y.Name())
		}
		if y.NumOperands() != op.NumResults() {
			return op.EmitOpError("expected each region to return %d values, but %s returns %d", op.NumResults(), name, y.NumOperands()).
				AttachNote(y.Loc, "see yield operation here")
		}
		for i, t := range op.ResultTypes() {
			if got := y.Operand(i).Type(); got != t {
				return op.EmitOpError("expected result #%d of each region to be '%s'", i, t).
					AttachNote(y.Loc, "%s returns '%s' here", name, got)
			}
		}
		return nil
	}
	if err := check(op.Region(0), "default region"); err != nil {
		return err
	}
	for i, r := range op.Regions()[1:] {
		if err := check(r, fmt.Sprintf("case region #%d", i)); err != nil {
			return err
		}
	}
	return nil
}
