package scf

import (
	"github.com/tmac-dev/tmac/dialects/arith"
	"github.com/tmac-dev/tmac/ir"
)

// scf.parallel is a loop nest whose iterations may run in any order; its
// body ends with scf.reduce, whose regions combine the values each
// iteration contributes into the op's results.

func init() {
	ir.Register(
		&ir.OpDef{
			Name:    "scf.parallel",
			Summary: "parallel for operation",
			Doc: "A loop nest over `(%i, ...) = (lbs) to (ubs) step (steps)` whose iterations are independent; " +
				"the body ends with `scf.reduce`, whose `n`-th region combines the `n`-th value each iteration " +
				"passes with the running `n`-th result (starting from the `n`-th `init` value). Outside a " +
				"mapping to GPU ids its meaning is that of upstream's scf-to-cf: tmac lowers it, interprets it " +
				"and emulates it as sequential nested loops in the thread running it (the first bound outermost), " +
				"applying the reductions in iteration order. Steps must be positive.",
			Traits: ir.AttrSizedOperandSegments | ir.SingleBlock | ir.RecursiveSideEffects,
			Operands: []ir.ArgSpec{
				{Name: "lowerBound", Kind: ir.Variadic, Type: ir.IndexOnly},
				{Name: "upperBound", Kind: ir.Variadic, Type: ir.IndexOnly},
				{Name: "step", Kind: ir.Variadic, Type: ir.IndexOnly},
				{Name: "initVals", Kind: ir.Variadic, Type: ir.AnyType},
			},
			Results:            []ir.ArgSpec{{Name: "results", Kind: ir.Variadic, Type: ir.AnyType}},
			Regions:            []ir.RegionSpec{{Name: "region"}},
			ImplicitTerminator: "scf.reduce",
			Parse:              parseParallel,
			Print:              printParallel,
			VerifyInvariants:   verifyParallel,
		},
		&ir.OpDef{
			Name:    "scf.reduce",
			Summary: "reduce operation for scf.parallel",
			Doc: "Ends an `scf.parallel` body: each operand is combined into the matching result of the loop " +
				"by the matching region, whose two arguments are the running value and the operand and whose " +
				"`scf.reduce.return` gives the new running value.",
			Traits:           ir.Terminator | ir.RecursiveSideEffects,
			Parents:          []string{"scf.parallel"},
			Operands:         []ir.ArgSpec{{Name: "operands", Kind: ir.Variadic, Type: ir.AnyType}},
			Regions:          []ir.RegionSpec{{Name: "reductions", Variadic: true}},
			Parse:            parseReduce,
			Print:            printReduce,
			VerifyInvariants: checkReductionRegionsSized,
			Verify:           verifyReduceRegions,
		},
		&ir.OpDef{
			Name:             "scf.reduce.return",
			Summary:          "terminator for reduce operation",
			Traits:           ir.Terminator | ir.Pure,
			Parents:          []string{"scf.reduce"},
			Operands:         []ir.ArgSpec{{Name: "result", Type: ir.AnyType}},
			Format:           "$result attr-dict `:` type($result)",
			VerifyInvariants: verifyReduceReturn,
		},
	)
}

// parseArgumentList parses `(%a, %b, ...)`: new, untyped region arguments.
func parseArgumentList(p *ir.Parser) ([]ir.Argument, error) {
	var args []ir.Argument
	err := p.ParseCommaSeparatedList(ir.DelimParen, func() error {
		a, err := p.ParseArgument(false, false)
		args = append(args, a)
		return err
	})
	return args, err
}

// parseCountedOperandList parses `(%a, ...)` of exactly n operands, with
// upstream's "expected n operands" at the list.
func parseCountedOperandList(p *ir.Parser, n int) ([]ir.UnresolvedOperand, error) {
	tok := p.Tok()
	us, err := p.ParseOperandList(ir.DelimParen)
	if err != nil {
		return nil, err
	}
	if len(us) != n {
		return nil, p.CustomOpErrorAt(tok, "expected %d operands", n)
	}
	return us, nil
}

func parseParallel(p *ir.Parser, st *ir.OperationState) error {
	ivs, err := parseArgumentList(p)
	if err != nil {
		return err
	}
	var groups [3][]ir.UnresolvedOperand
	for i, lit := range []string{"=", "to", "step"} {
		if err := p.ParseLiteral(lit); err != nil {
			return err
		}
		if groups[i], err = parseCountedOperandList(p, len(ivs)); err != nil {
			return err
		}
		if err := p.ResolveOperandsSameType(groups[i], ir.Index, st); err != nil {
			return err
		}
	}
	var inits []ir.UnresolvedOperand
	if p.ParseOptionalKeyword("init") {
		if inits, err = p.ParseOperandList(ir.DelimParen); err != nil {
			return err
		}
	}
	if st.ResultTypes, err = p.ParseOptionalArrowTypeList(); err != nil {
		return err
	}
	for i := range ivs {
		ivs[i].Type = ir.Index
	}
	body := st.AddRegion()
	if err := p.ParseRegion(body, ivs); err != nil {
		return err
	}
	st.AddAttr("operandSegmentSizes", ir.DenseI32Array(int64(len(ivs)), int64(len(ivs)), int64(len(ivs)), int64(len(inits))))
	if err := p.ParseOptionalAttrDict(st); err != nil {
		return err
	}
	if len(inits) != len(st.ResultTypes) {
		return ir.Errorf(st.Loc, "custom op 'scf.parallel' number of operands and types do not match: got %d operands and %d types", len(inits), len(st.ResultTypes))
	}
	if err := p.ResolveOperands(inits, st.ResultTypes, st); err != nil {
		return err
	}
	body.EnsureTerminator("scf.reduce", st.Loc)
	return nil
}

func printParallel(p *ir.Printer, op *ir.Operation) {
	body := op.Region(0)
	p.Write(" (")
	if !body.Empty() {
		ir.PrintCommaSeparated(p, body.Entry().Args(), func(a *ir.BlockArgument) { p.PrintOperand(a) })
	}
	p.Write(") = (")
	p.PrintOperands(op.OperandGroup("lowerBound"))
	p.Write(") to (")
	p.PrintOperands(op.OperandGroup("upperBound"))
	p.Write(") step (")
	p.PrintOperands(op.OperandGroup("step"))
	p.Write(")")
	if inits := op.OperandGroup("initVals"); len(inits) > 0 {
		p.Write(" init (")
		p.PrintOperands(inits)
		p.Write(")")
	}
	if op.NumResults() > 0 {
		p.Write(" ")
		p.PrintArrowTypeList(op.ResultTypes())
	}
	p.Write(" ")
	p.PrintRegion(body, false, true, false)
	p.PrintOptionalAttrDict(op.AllAttrs(), "operandSegmentSizes")
}

// verifyParallel is upstream's ParallelOp::verify, which runs before the
// body's ops are verified.
func verifyParallel(op *ir.Operation) error {
	if err := checkSizedRegion(op, 0, "region"); err != nil {
		return err
	}
	steps := op.OperandGroup("step")
	if len(steps) == 0 {
		return op.EmitOpError("needs at least one tuple element for lowerBound, upperBound and step")
	}
	for _, s := range steps {
		if c, ok := arith.ConstantInt(s); ok && c <= 0 {
			return op.EmitOpError("constant step operand must be positive")
		}
	}
	body := op.Region(0).Entry()
	if body.NumArgs() != len(steps) {
		return op.EmitOpError("expects the same number of induction variables: %d as bound and step values: %d", body.NumArgs(), len(steps))
	}
	for _, a := range body.Args() {
		if !ir.IsIndex(a.Type()) {
			return op.EmitOpError("expects arguments for the induction variable to be of index type")
		}
	}
	reduce, err := terminatorOf(op, op.Region(0), "scf.reduce", "expects body to terminate with 'scf.reduce'")
	if err != nil {
		return err
	}
	// Upstream counts the reduce's regions here; scf.reduce checks that
	// they match its operands.
	nResults, nReductions, nInits := op.NumResults(), reduce.NumRegions(), len(op.OperandGroup("initVals"))
	if nResults != nReductions {
		return op.EmitOpError("expects number of results: %d to be the same as number of reductions: %d", nResults, nReductions)
	}
	if nResults != nInits {
		return op.EmitOpError("expects number of results: %d to be the same as number of initial values: %d", nResults, nInits)
	}
	for i, r := range op.Results() {
		if i >= reduce.NumOperands() {
			break
		}
		if t := reduce.Operand(i).Type(); t != r.Type() {
			return reduce.EmitOpError("expects type of %d-th reduction operand: '%s' to be the same as the %d-th result type: '%s'", i, t, i, r.Type())
		}
	}
	return nil
}

// parseReduce parses `(`(` operands `:` types `)`)? regions attr-dict`,
// the regions separated by commas.
func parseReduce(p *ir.Parser, st *ir.OperationState) error {
	if p.ParseOptionalPunct("(") {
		us, err := p.ParseOperandList(ir.DelimNone)
		if err != nil {
			return err
		}
		ts, err := p.ParseColonTypeList()
		if err != nil {
			return err
		}
		if err := p.ParsePunct(")"); err != nil {
			return err
		}
		if len(us) != len(ts) {
			return p.CustomOpErrorf("%d operands present, but expected %d", len(us), len(ts))
		}
		if err := p.ResolveOperands(us, ts, st); err != nil {
			return err
		}
	}
	if p.IsPunct("{") {
		for {
			if err := p.ParseRegion(st.AddRegion(), nil); err != nil {
				return err
			}
			if !p.ParseOptionalPunct(",") {
				break
			}
		}
	}
	return p.ParseOptionalAttrDict(st)
}

func printReduce(p *ir.Printer, op *ir.Operation) {
	if op.NumOperands() > 0 {
		p.Write("(")
		p.PrintOperands(op.Operands())
		p.Write(" : ")
		p.PrintTypes(op.OperandTypes())
		p.Write(")")
	}
	p.Write(" ")
	for i, r := range op.Regions() {
		if i > 0 {
			p.Write(", ")
		}
		p.PrintRegion(r, true, true, false)
	}
	p.PrintOptionalAttrDict(op.AllAttrs())
}

// checkReductionRegionsSized is ODS's VariadicRegion<SizedRegion<1>>.
func checkReductionRegionsSized(op *ir.Operation) error {
	for i := range op.Regions() {
		if err := checkSizedRegion(op, i, "reductions"); err != nil {
			return err
		}
	}
	return nil
}

// verifyReduceRegions is upstream's ReduceOp::verifyRegions.
func verifyReduceRegions(op *ir.Operation) error {
	if op.NumRegions() != op.NumOperands() {
		return op.EmitOpError("expects number of reduction regions: %d to be the same as number of reduction operands: %d", op.NumRegions(), op.NumOperands())
	}
	for i, r := range op.Regions() {
		t := op.Operand(i).Type()
		b := r.Entry()
		if b.NumArgs() != 2 || b.Arg(0).Type() != t || b.Arg(1).Type() != t {
			return op.EmitOpError("expected two block arguments with type '%s' in the %d-th reduction region", t, i)
		}
		if last := b.Last(); last == nil || last.Name() != "scf.reduce.return" {
			return op.EmitOpError("reduction bodies must be terminated with an 'scf.reduce.return' op")
		}
	}
	return nil
}

func verifyReduceReturn(op *ir.Operation) error {
	b := op.Block()
	if b == nil || b.NumArgs() == 0 {
		return nil
	}
	if want := b.Arg(0).Type(); op.Operand(0).Type() != want {
		return op.EmitOpError("must have type '%s' (the type of the reduction inputs)", want)
	}
	return nil
}
