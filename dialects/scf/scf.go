// Package scf registers the structured control flow dialect: scf.for,
// scf.if, scf.while, scf.execute_region, scf.index_switch, scf.parallel,
// scf.forall and their terminators.
package scf

import (
	"github.com/tmac-dev/tmac/ir"
)

var i1C = ir.TypeConstraint{Desc: "1-bit signless integer", OK: func(t ir.Type) bool { return ir.IsIntegerOfWidth(t, 1) }, Fixed: ir.IntegerTypeOf(1)}

var intOrIndex = ir.TypeConstraint{Desc: "signless integer or index", OK: ir.IsSignlessIntOrIndex}

func init() {
	ir.RegisterDialect(&ir.Dialect{Name: "scf", Summary: "Structured control flow: for, while, parallel and forall loops, if, index_switch"})
	ir.Register(
		&ir.OpDef{
			Name:    "scf.for",
			Summary: "for operation",
			Traits:  ir.SingleBlock | ir.RecursiveSideEffects,
			Operands: []ir.ArgSpec{
				{Name: "lowerBound", Type: intOrIndex},
				{Name: "upperBound", Type: intOrIndex},
				{Name: "step", Type: intOrIndex},
				{Name: "initArgs", Kind: ir.Variadic, Type: ir.AnyType},
			},
			Results:            []ir.ArgSpec{{Name: "results", Kind: ir.Variadic, Type: ir.AnyType}},
			Attrs:              []ir.AttrSpec{{Name: "unsignedCmp", Constraint: ir.UnitAttrC, Optional: true}},
			Regions:            []ir.RegionSpec{{Name: "region"}},
			ImplicitTerminator: "scf.yield",
			Parse:              parseFor,
			Print:              printFor,
			VerifyInvariants:   verifyForInvariants,
			Verify:             verifyForRegions,
		},
		&ir.OpDef{
			Name:               "scf.if",
			Summary:            "if-then-else operation",
			Traits:             ir.SingleBlock | ir.RecursiveSideEffects,
			Operands:           []ir.ArgSpec{{Name: "condition", Type: i1C}},
			Results:            []ir.ArgSpec{{Name: "results", Kind: ir.Variadic, Type: ir.AnyType}},
			Regions:            []ir.RegionSpec{{Name: "thenRegion"}, {Name: "elseRegion"}},
			ImplicitTerminator: "scf.yield",
			Parse:              parseIf,
			Print:              printIf,
			VerifyInvariants:   verifyIfInvariants,
			Verify:             verifyIfRegions,
		},
		&ir.OpDef{
			Name:             "scf.while",
			Summary:          "a generic 'while' loop",
			Traits:           ir.SingleBlock | ir.RecursiveSideEffects,
			Operands:         []ir.ArgSpec{{Name: "inits", Kind: ir.Variadic, Type: ir.AnyType}},
			Results:          []ir.ArgSpec{{Name: "results", Kind: ir.Variadic, Type: ir.AnyType}},
			Regions:          []ir.RegionSpec{{Name: "before"}, {Name: "after"}},
			Parse:            parseWhile,
			Print:            printWhile,
			VerifyInvariants: verifyWhileInvariants,
			Verify:           verifyWhileRegions,
		},
		&ir.OpDef{
			Name:     "scf.yield",
			Summary:  "loop yield and termination operation",
			Traits:   ir.Terminator | ir.ReturnLike | ir.Pure,
			Parents:  []string{"scf.execute_region", "scf.for", "scf.if", "scf.index_switch", "scf.while"},
			Operands: []ir.ArgSpec{{Name: "results", Kind: ir.Variadic, Type: ir.AnyType}},
			Format:   "attr-dict ($results^ `:` type($results))?",
		},
		&ir.OpDef{
			Name:    "scf.condition",
			Summary: "loop continuation condition",
			Traits:  ir.Terminator | ir.Pure,
			Parents: []string{"scf.while"},
			Operands: []ir.ArgSpec{
				{Name: "condition", Type: i1C},
				{Name: "args", Kind: ir.Variadic, Type: ir.AnyType},
			},
			Format: "`(` $condition `)` attr-dict ($args^ `:` type($args))?",
		},
	)
}

// --- scf.for --------------------------------------------------------------

func parseFor(p *ir.Parser, st *ir.OperationState) error {
	if p.ParseOptionalKeyword("unsigned") {
		st.AddAttr("unsignedCmp", ir.Unit)
	}
	ivArg, lb, err := p.ParseAssignment()
	if err != nil {
		return err
	}
	ub, err := p.ParseOperandAfter("to")
	if err != nil {
		return err
	}
	step, err := p.ParseOperandAfter("step")
	if err != nil {
		return err
	}
	var iterArgs []ir.Argument
	var inits []ir.UnresolvedOperand
	if p.ParseOptionalKeyword("iter_args") {
		var err error
		if iterArgs, inits, err = p.ParseAssignmentList(); err != nil {
			return err
		}
		ts, err := p.ParseArrowTypeList()
		if err != nil {
			return err
		}
		st.ResultTypes = ts
	}
	var boundType ir.Type = ir.Index
	if p.ParseOptionalPunct(":") {
		if boundType, err = p.ParseType(); err != nil {
			return err
		}
	}
	if len(inits) != len(st.ResultTypes) {
		// At the op's name, as upstream reports it.
		return ir.Errorf(st.Loc, "custom op 'scf.for' mismatch in number of loop-carried values and defined values")
	}
	if err := p.ResolveOperands([]ir.UnresolvedOperand{lb, ub, step}, []ir.Type{boundType, boundType, boundType}, st); err != nil {
		return err
	}
	if err := p.ResolveOperands(inits, st.ResultTypes, st); err != nil {
		return err
	}
	ivArg.Type = boundType
	args := []ir.Argument{ivArg}
	for i := range iterArgs {
		iterArgs[i].Type = st.ResultTypes[i]
		args = append(args, iterArgs[i])
	}
	r := st.AddRegion()
	if err := p.ParseRegion(r, args); err != nil {
		return err
	}
	r.EnsureTerminator("scf.yield", st.Loc)
	return p.ParseOptionalAttrDict(st)
}

func printFor(p *ir.Printer, op *ir.Operation) {
	p.Write(" ")
	if op.HasAttr("unsignedCmp") {
		p.Write("unsigned ")
	}
	body := op.Region(0)
	var bodyArgs []*ir.BlockArgument
	if !body.Empty() {
		bodyArgs = body.Entry().Args()
	}
	if len(bodyArgs) > 0 {
		p.PrintOperand(bodyArgs[0])
	}
	p.Write(" = ")
	p.PrintOperand(op.Operand(0))
	p.Write(" to ")
	p.PrintOperand(op.Operand(1))
	p.Write(" step ")
	p.PrintOperand(op.Operand(2))
	inits := op.Operands()[3:]
	if len(inits) > 0 {
		p.Write(" iter_args(")
		for i, v := range inits {
			if i > 0 {
				p.Write(", ")
			}
			if i+1 < len(bodyArgs) {
				p.PrintOperand(bodyArgs[i+1])
			}
			p.Write(" = ")
			p.PrintOperand(v)
		}
		p.Write(") -> (")
		p.PrintTypes(op.ResultTypes())
		p.Write(")")
	}
	if t := op.Operand(0).Type(); !ir.IsIndex(t) {
		p.Write("  : ")
		p.PrintType(t)
	}
	p.Write(" ")
	p.PrintRegion(body, false, len(inits) > 0, false)
	p.PrintOptionalAttrDict(op.AllAttrs(), "unsignedCmp")
}

// yieldedValues returns the operands of the scf.yield ending r's entry
// block (nil if it does not end with one).
func yieldedValues(r *ir.Region) ([]ir.Value, *ir.Operation) {
	if r.Empty() {
		return nil, nil
	}
	last := r.Entry().Last()
	if last == nil || last.Name() != "scf.yield" {
		return nil, nil
	}
	return last.Operands(), last
}

// checkSizedRegion is ODS's SizedRegion<1> constraint.
func checkSizedRegion(op *ir.Operation, i int, name string) error {
	if len(op.Region(i).Blocks()) != 1 {
		return op.EmitOpError("region #%d ('%s') failed to verify constraint: region with 1 blocks", i, name)
	}
	return nil
}

// checkImplicitTerminator is SingleBlockImplicitTerminator<scf.yield>.
func checkImplicitTerminator(op *ir.Operation) error {
	for _, r := range op.Regions() {
		if r.Empty() {
			continue
		}
		last := r.Entry().Last()
		if last == nil || !last.HasTrait(ir.Terminator) {
			return op.EmitOpError("expects regions to end with 'scf.yield'").
				AttachNote(op.Loc, "in custom textual format, the absence of terminator implies 'scf.yield'")
		}
		if last.Name() != "scf.yield" {
			return op.EmitOpError("expects regions to end with 'scf.yield', found '%s'", last.Name()).
				AttachNote(op.Loc, "in custom textual format, the absence of terminator implies 'scf.yield'")
		}
	}
	return nil
}

func verifyForInvariants(op *ir.Operation) error {
	t := op.Operand(0).Type()
	if op.Operand(1).Type() != t || op.Operand(2).Type() != t {
		return op.EmitOpError("failed to verify that all of {lowerBound, upperBound, step} have same type")
	}
	if err := checkSizedRegion(op, 0, "region"); err != nil {
		return err
	}
	inits := op.Operands()[3:]
	if len(inits) != op.NumResults() {
		return op.EmitOpError("mismatch in number of loop-carried values and defined values")
	}
	// LoopLikeOpInterface checks.
	body := op.Region(0).Entry()
	nIter := uint64(body.NumArgs()) - 1 // wraps around like upstream's size_t
	if uint64(len(inits)) != nIter {
		return op.EmitOpError("different number of inits and region iter_args: %d != %d", len(inits), nIter)
	}
	iterArgs := body.Args()[1:]
	yielded, _ := yieldedValues(op.Region(0))
	if len(yielded) > 0 && len(iterArgs) != len(yielded) {
		return op.EmitOpError("different number of region iter_args and yielded values: %d != %d", len(iterArgs), len(yielded))
	}
	for i, a := range iterArgs {
		if inits[i].Type() != a.Type() {
			return op.EmitOpError("%d-th init and %d-th region iter_arg have different type: '%s' != '%s'", i, i, inits[i].Type(), a.Type())
		}
		if len(yielded) > 0 && a.Type() != yielded[i].Type() {
			return op.EmitOpError("%d-th region iter_arg and %d-th yielded value have different type: '%s' != '%s'", i, i, a.Type(), yielded[i].Type())
		}
	}
	for i, a := range iterArgs {
		if a.Type() != op.Result(i).Type() {
			return op.EmitOpError("%d-th region iter_arg and %d-th loop result have different type: '%s' != '%s'", i, i, a.Type(), op.Result(i).Type())
		}
	}
	return nil
}

func verifyForRegions(op *ir.Operation) error {
	if err := checkImplicitTerminator(op); err != nil {
		return err
	}
	body := op.Region(0).Entry()
	if body.Arg(0).Type() != op.Operand(0).Type() {
		return op.EmitOpError("expected induction variable to be same type as bounds and step")
	}
	return nil
}

// --- scf.if ---------------------------------------------------------------

func parseIf(p *ir.Parser, st *ir.OperationState) error {
	if err := p.ParseOperandOfType(ir.I1, st); err != nil {
		return err
	}
	if p.IsPunct("->") {
		ts, err := p.ParseArrowTypeList()
		if err != nil {
			return err
		}
		st.ResultTypes = ts
	}
	then := st.AddRegion()
	if err := p.ParseRegion(then, nil); err != nil {
		return err
	}
	then.EnsureTerminator("scf.yield", st.Loc)
	els := st.AddRegion()
	if p.ParseOptionalKeyword("else") {
		if err := p.ParseRegion(els, nil); err != nil {
			return err
		}
		els.EnsureTerminator("scf.yield", st.Loc)
	}
	return p.ParseOptionalAttrDict(st)
}

func printIf(p *ir.Printer, op *ir.Operation) {
	p.Write(" ")
	p.PrintOperand(op.Operand(0))
	if op.NumResults() > 0 {
		p.Write(" -> (")
		p.PrintTypes(op.ResultTypes())
		p.Write(")")
	}
	terms := op.NumResults() > 0
	p.Write(" ")
	p.PrintRegion(op.Region(0), false, terms, false)
	if !op.Region(1).Empty() {
		p.Write(" else ")
		p.PrintRegion(op.Region(1), false, terms, false)
	}
	p.PrintOptionalAttrDict(op.AllAttrs())
}

func verifyIfInvariants(op *ir.Operation) error {
	for i, r := range op.Regions() {
		if !r.Empty() && r.Entry().NumArgs() > 0 {
			return op.EmitOpError("region #%d should have no arguments", i)
		}
	}
	if err := checkSizedRegion(op, 0, "thenRegion"); err != nil {
		return err
	}
	if op.NumResults() != 0 && op.Region(1).Empty() {
		return op.EmitOpError("must have an else block if defining values")
	}
	return nil
}

// checkEdge compares the values passed along a region-branch edge with
// the inputs of the successor, with upstream's wording.
func checkEdge(op *ir.Operation, from, to string, pointLoc ir.Location, operands []ir.Value, inputs []ir.Type) error {
	if len(operands) != len(inputs) {
		return op.EmitOpError("along control flow edge from %s to %s: region branch point has %d operands, but region successor needs %d inputs", from, to, len(operands), len(inputs)).
			AttachNote(pointLoc, "region branch point")
	}
	for i, v := range operands {
		if v.Type() != inputs[i] {
			return op.EmitOpError("along control flow edge from %s to %s: successor operand type #%d '%s' should match successor input type #%d '%s'", from, to, i, v.Type(), i, inputs[i]).
				AttachNote(pointLoc, "region branch point")
		}
	}
	return nil
}

func verifyIfRegions(op *ir.Operation) error {
	if err := checkImplicitTerminator(op); err != nil {
		return err
	}
	for _, r := range op.Regions() {
		vals, y := yieldedValues(r)
		if y == nil {
			continue
		}
		if err := checkEdge(op, "Operation scf.yield", "parent", y.Loc, vals, op.ResultTypes()); err != nil {
			return err
		}
	}
	return nil
}

// --- scf.while ------------------------------------------------------------

func parseWhile(p *ir.Parser, st *ir.OperationState) error {
	var args []ir.Argument
	var inits []ir.UnresolvedOperand
	if p.IsPunct("(") {
		var err error
		if args, inits, err = p.ParseAssignmentList(); err != nil {
			return err
		}
	}
	if err := p.ParsePunct(":"); err != nil {
		return err
	}
	ft, err := p.ParseFunctionType()
	if err != nil {
		return err
	}
	st.ResultTypes = ft.Results
	if len(ft.Inputs) != len(inits) {
		return p.CustomOpErrorf("expected as many input types as operands (expected %d got %d)", len(inits), len(ft.Inputs))
	}
	if err := p.ResolveOperands(inits, ft.Inputs, st); err != nil {
		return err
	}
	for i := range args {
		args[i].Type = ft.Inputs[i]
	}
	if len(args) == 0 {
		args = nil
	}
	before := st.AddRegion()
	if err := p.ParseRegion(before, args); err != nil {
		return err
	}
	if err := p.ParseKeyword("do"); err != nil {
		return err
	}
	after := st.AddRegion()
	if err := p.ParseRegion(after, nil); err != nil {
		return err
	}
	return p.ParseOptionalAttrDictWithKeyword(st)
}

func printWhile(p *ir.Printer, op *ir.Operation) {
	before := op.Region(0)
	if op.NumOperands() > 0 {
		p.Write(" (")
		for i, v := range op.Operands() {
			if i > 0 {
				p.Write(", ")
			}
			if !before.Empty() && i < before.Entry().NumArgs() {
				p.PrintOperand(before.Entry().Arg(i))
			}
			p.Write(" = ")
			p.PrintOperand(v)
		}
		p.Write(")")
	}
	p.Write(" : ")
	p.PrintFunctionalTypes(op.OperandTypes(), op.ResultTypes())
	p.Write(" ")
	p.PrintRegion(before, false, true, false)
	p.Write(" do ")
	p.PrintRegion(op.Region(1), true, true, false)
	p.PrintOptionalAttrDictWithKeyword(op.AllAttrs())
}

// terminatorOf returns the last op of r's entry block if it has name, or a
// diagnostic with the "terminator here" note.
func terminatorOf(op *ir.Operation, r *ir.Region, name, msg string) (*ir.Operation, error) {
	if r.Empty() {
		return nil, op.EmitOpError("%s", msg)
	}
	last := r.Entry().Last()
	if last != nil && last.Name() == name {
		return last, nil
	}
	d := op.EmitOpError("%s", msg)
	if last != nil {
		d.AttachNote(last.Loc, "terminator here")
	}
	return nil, d
}

func verifyWhileInvariants(op *ir.Operation) error {
	if err := checkSizedRegion(op, 0, "before"); err != nil {
		return err
	}
	if err := checkSizedRegion(op, 1, "after"); err != nil {
		return err
	}
	if _, err := terminatorOf(op, op.Region(0), "scf.condition", "expects the 'before' region to terminate with 'scf.condition'"); err != nil {
		return err
	}
	if _, err := terminatorOf(op, op.Region(1), "scf.yield", "expects the 'after' region to terminate with 'scf.yield'"); err != nil {
		return err
	}
	return nil
}

func verifyWhileRegions(op *ir.Operation) error {
	before, after := op.Region(0).Entry(), op.Region(1).Entry()
	if err := checkEdge(op, "parent", "Region #0", op.Loc, op.Operands(), before.ArgTypes()); err != nil {
		return err
	}
	cond := before.Last()
	fwd := cond.Operands()[1:]
	if err := checkEdge(op, "Operation scf.condition", "Region #1", cond.Loc, fwd, after.ArgTypes()); err != nil {
		return err
	}
	if err := checkEdge(op, "Operation scf.condition", "parent", cond.Loc, fwd, op.ResultTypes()); err != nil {
		return err
	}
	y := after.Last()
	return checkEdge(op, "Operation scf.yield", "Region #0", y.Loc, y.Operands(), before.ArgTypes())
}
