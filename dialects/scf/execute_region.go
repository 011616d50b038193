package scf

import "github.com/tmac-dev/tmac/ir"

// scf.execute_region runs its region once; the values its scf.yield
// passes are the op's results. The region may hold several blocks joined
// by cf branches, each path ending in an scf.yield.

func init() {
	ir.Register(&ir.OpDef{
		Name:    "scf.execute_region",
		Summary: "operation that executes its region exactly once",
		Doc: "Runs its region once, in place: the region takes no arguments and every path through it ends " +
			"with an `scf.yield` of the op's result types. A single-block region is inlined; in kernels a region of " +
			"several blocks (joined by `cf.br`/`cf.cond_br`) is lowered to branches, and the reference interpreter " +
			"runs it, but the emulator, which runs structured regions only, rejects it with the op named. " +
			"`no_inline` is upstream's hint to its own inliner; tmac keeps it and lowers the op the same way.",
		Traits:           ir.RecursiveSideEffects,
		Results:          []ir.ArgSpec{{Name: "results", Kind: ir.Variadic, Type: ir.AnyType}},
		Attrs:            []ir.AttrSpec{{Name: "no_inline", Constraint: ir.UnitAttrC, Optional: true}},
		Regions:          []ir.RegionSpec{{Name: "region"}},
		VerifyProps:      verifyNoInlineProp,
		Parse:            parseExecuteRegion,
		Print:            printExecuteRegion,
		VerifyInvariants: verifyExecuteRegionInvariants,
		Verify:           verifyExecuteRegionRegions,
	})
}

// parseExecuteRegion parses `(-> types)? no_inline? region attr-dict`.
func parseExecuteRegion(p *ir.Parser, st *ir.OperationState) error {
	ts, err := p.ParseOptionalArrowTypeList()
	if err != nil {
		return err
	}
	st.ResultTypes = ts
	if p.ParseOptionalKeyword("no_inline") {
		st.AddAttr("no_inline", ir.Unit)
	}
	if !p.IsPunct("{") {
		return p.Errorf("expected '{' to begin a region")
	}
	if err := p.ParseRegion(st.AddRegion(), nil); err != nil {
		return err
	}
	return p.ParseOptionalAttrDict(st)
}

func printExecuteRegion(p *ir.Printer, op *ir.Operation) {
	if op.NumResults() > 0 {
		p.Write(" ")
		p.PrintArrowTypeList(op.ResultTypes())
	}
	p.Write(" ")
	if op.HasAttr("no_inline") {
		p.Write("no_inline ")
	}
	p.PrintRegion(op.Region(0), false, true, false)
	p.PrintOptionalAttrDict(op.AllAttrs(), "no_inline")
}

// verifyNoInlineProp is upstream's property conversion of the unit
// property no_inline, reported before anything else.
func verifyNoInlineProp(op *ir.Operation) error {
	if a := op.Attr("no_inline"); a != nil && !ir.UnitAttrC.OK(a) {
		return ir.Errorf(op.Loc, "invalid properties %s for op %s: Invalid attribute `no_inline` in property conversion: %s",
			ir.FormatAttrDict(op.Props()), op.Name(), a)
	}
	return nil
}

func verifyExecuteRegionInvariants(op *ir.Operation) error {
	r := op.Region(0)
	if r.Empty() {
		return op.EmitOpError("region needs to have at least one block")
	}
	if r.Entry().NumArgs() > 0 {
		return op.EmitOpError("region cannot have any arguments")
	}
	return nil
}

// verifyExecuteRegionRegions checks every scf.yield of the region against
// the results (RegionBranchOpInterface's edges to the parent).
func verifyExecuteRegionRegions(op *ir.Operation) error {
	for _, b := range op.Region(0).Blocks() {
		if y := b.Last(); y != nil && y.Name() == "scf.yield" {
			if err := checkEdge(op, "Operation scf.yield", "parent", y.Loc, y.Operands(), op.ResultTypes()); err != nil {
				return err
			}
		}
	}
	return nil
}
