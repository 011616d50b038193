// Package cf registers a minimal control flow dialect: cf.br, cf.cond_br
// and cf.assert, with upstream's syntax and verifier messages.
package cf

import (
	"strconv"

	"github.com/tmac-dev/tmac/ir"
)

var i1C = ir.TypeConstraint{Desc: "1-bit signless integer", OK: func(t ir.Type) bool { return ir.IsIntegerOfWidth(t, 1) }, Fixed: ir.IntegerTypeOf(1)}

func init() {
	ir.RegisterDialect(&ir.Dialect{Name: "cf", Summary: "Unstructured control flow: branches between blocks, and assertions"})
	ir.Register(
		&ir.OpDef{
			Name:       "cf.br",
			Summary:    "branch operation",
			Traits:     ir.Terminator | ir.Pure,
			Operands:   []ir.ArgSpec{{Name: "destOperands", Kind: ir.Variadic, Type: ir.AnyType}},
			Successors: 1,
			Parse:      parseBr,
			Print:      printBr,
			VerifyInvariants: func(op *ir.Operation) error {
				return VerifySuccessorOperands(op, 0, op.Operands())
			},
		},
		&ir.OpDef{
			Name:    "cf.cond_br",
			Summary: "conditional branch operation",
			Traits:  ir.Terminator | ir.Pure | ir.AttrSizedOperandSegments,
			Operands: []ir.ArgSpec{
				{Name: "condition", Type: i1C},
				{Name: "trueDestOperands", Kind: ir.Variadic, Type: ir.AnyType},
				{Name: "falseDestOperands", Kind: ir.Variadic, Type: ir.AnyType},
			},
			Attrs:            []ir.AttrSpec{{Name: "branch_weights", Constraint: ir.DenseI32ArrayC, Optional: true}},
			Successors:       2,
			Parse:            parseCondBr,
			Print:            printCondBr,
			VerifyInvariants: verifyCondBr,
		},
		&ir.OpDef{
			Name:     "cf.assert",
			Summary:  "Assert operation with message attribute",
			Operands: []ir.ArgSpec{{Name: "arg", Type: i1C}},
			Attrs:    []ir.AttrSpec{{Name: "msg", Constraint: ir.StringAttrC, Syntax: stringSyntax}},
			Format:   "$arg `,` $msg attr-dict",
		},
	)
}

// stringSyntax spells a string attribute as a plain string literal (the
// format engine would otherwise take a string attribute for a symbol name).
var stringSyntax = &ir.AttrSyntax{
	Parse: func(p *ir.Parser) (ir.Attribute, error) {
		s, err := p.ParseString()
		return ir.Str(s), err
	},
	Print:    func(a ir.Attribute) string { return a.String() },
	CanStart: func(p *ir.Parser) bool { return p.Tok().Kind == ir.TokString },
}

// VerifySuccessorOperands checks the values passed to successor #idx
// against its block arguments (upstream's BranchOpInterface messages).
func VerifySuccessorOperands(op *ir.Operation, idx int, vals []ir.Value) error {
	dest := op.Successors()[idx]
	if len(vals) != dest.NumArgs() {
		return op.EmitError("branch has %d operands for successor #%d, but target block has %d", len(vals), idx, dest.NumArgs())
	}
	for i, v := range vals {
		if v.Type() != dest.Arg(i).Type() {
			return op.EmitError("type mismatch for bb argument #%d of successor #%d", i, idx)
		}
	}
	return nil
}

func verifyCondBr(op *ir.Operation) error {
	if w, ok := op.Attr("branch_weights").(*ir.DenseArrayAttr); ok && len(w.Ints) != 0 && len(w.Ints) != 2 {
		return op.EmitError("expects number of branch weights to match number of successors: %d vs 2", len(w.Ints))
	}
	if err := VerifySuccessorOperands(op, 0, op.OperandGroup("trueDestOperands")); err != nil {
		return err
	}
	return VerifySuccessorOperands(op, 1, op.OperandGroup("falseDestOperands"))
}

// parseSuccessorAndOperands parses ^bb or ^bb(%a, %b : t1, t2).
func parseSuccessorAndOperands(p *ir.Parser, st *ir.OperationState) (int, error) {
	b, err := p.ParseSuccessor()
	if err != nil {
		return 0, err
	}
	st.Successors = append(st.Successors, b)
	if !p.ParseOptionalPunct("(") {
		return 0, nil
	}
	us, err := p.ParseOperandList(ir.DelimNone)
	if err != nil {
		return 0, err
	}
	if err := p.ParsePunct(":"); err != nil {
		return 0, err
	}
	ts, err := p.ParseTypeList()
	if err != nil {
		return 0, err
	}
	if err := p.ParsePunct(")"); err != nil {
		return 0, err
	}
	if err := p.ResolveOperands(us, ts, st); err != nil {
		return 0, err
	}
	return len(us), nil
}

func printSuccessorAndOperands(p *ir.Printer, b *ir.Block, vals []ir.Value) {
	p.PrintSuccessor(b)
	if len(vals) == 0 {
		return
	}
	p.Write("(")
	p.PrintOperands(vals)
	p.Write(" : ")
	ts := make([]ir.Type, len(vals))
	for i, v := range vals {
		ts[i] = v.Type()
	}
	p.PrintTypes(ts)
	p.Write(")")
}

func parseBr(p *ir.Parser, st *ir.OperationState) error {
	if _, err := parseSuccessorAndOperands(p, st); err != nil {
		return err
	}
	return p.ParseOptionalAttrDict(st)
}

func printBr(p *ir.Printer, op *ir.Operation) {
	p.Write(" ")
	printSuccessorAndOperands(p, op.Successors()[0], op.Operands())
	p.PrintOptionalAttrDict(op.AllAttrs())
}

func parseCondBr(p *ir.Parser, st *ir.OperationState) error {
	if err := p.ParseOperandOfType(ir.I1, st); err != nil {
		return err
	}
	if p.ParseOptionalKeyword("weights") {
		if err := p.ParsePunct("("); err != nil {
			return err
		}
		ws, err := p.ParseIntegerList(ir.DelimSquare)
		if err != nil {
			return err
		}
		if err := p.ParsePunct(")"); err != nil {
			return err
		}
		st.AddAttr("branch_weights", ir.DenseI32Array(ws...))
	}
	if err := p.ParsePunct(","); err != nil {
		return err
	}
	nt, err := parseSuccessorAndOperands(p, st)
	if err != nil {
		return err
	}
	if err := p.ParsePunct(","); err != nil {
		return err
	}
	nf, err := parseSuccessorAndOperands(p, st)
	if err != nil {
		return err
	}
	st.AddAttr("operandSegmentSizes", ir.DenseI32Array(1, int64(nt), int64(nf)))
	return p.ParseOptionalAttrDict(st)
}

func printCondBr(p *ir.Printer, op *ir.Operation) {
	p.Write(" ")
	p.PrintOperand(op.Operand(0))
	if w, ok := op.Attr("branch_weights").(*ir.DenseArrayAttr); ok {
		p.Write(" weights([" + ir.CommaSeparated(w.Ints, func(v int64) string { return strconv.FormatInt(v, 10) }) + "])")
	}
	p.Write(", ")
	printSuccessorAndOperands(p, op.Successors()[0], op.OperandGroup("trueDestOperands"))
	p.Write(", ")
	printSuccessorAndOperands(p, op.Successors()[1], op.OperandGroup("falseDestOperands"))
	p.PrintOptionalAttrDict(op.AllAttrs(), "operandSegmentSizes", "branch_weights")
}
