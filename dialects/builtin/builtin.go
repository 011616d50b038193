// Package builtin registers the builtin dialect ops: module and
// unrealized_conversion_cast. Builtin types and attributes live in package ir.
package builtin

import "github.com/tmac-dev/tmac/ir"

func init() {
	ir.Register(
		&ir.OpDef{
			Name:    "builtin.module",
			Summary: "A top level container operation",
			Traits:  ir.IsolatedFromAbove | ir.SymbolTable | ir.NoTerminator | ir.SingleBlock | ir.GraphRegions,
			Attrs: []ir.AttrSpec{
				{Name: "sym_name", Constraint: ir.SymbolNameC, Optional: true},
				{Name: "sym_visibility", Constraint: ir.StringAttrC, Optional: true},
			},
			Regions:        []ir.RegionSpec{{Name: "bodyRegion"}},
			DefaultDialect: "builtin",
			Parse:          parseModule,
			Print:          printModule,
			Verify: func(op *ir.Operation) error {
				if op.Region(0).Empty() {
					return op.EmitOpError("expects a non-empty block")
				}
				return nil
			},
		},
		&ir.OpDef{
			Name:     "builtin.unrealized_conversion_cast",
			Summary:  "An unrealized conversion from one set of types to another",
			Traits:   ir.Pure,
			Operands: []ir.ArgSpec{{Name: "inputs", Kind: ir.Variadic, Type: ir.AnyType}},
			Results:  []ir.ArgSpec{{Name: "outputs", Kind: ir.Variadic, Type: ir.AnyType}},
			Format:   "($inputs^ `:` type($inputs))? `to` type($outputs) attr-dict",
			Verify: func(op *ir.Operation) error {
				if op.NumResults() == 0 {
					return op.EmitOpError("expected at least one result for cast operation")
				}
				return nil
			},
		},
	)
}

func parseModule(p *ir.Parser, st *ir.OperationState) error {
	if name, ok, err := p.ParseOptionalSymbolName(); err != nil {
		return err
	} else if ok {
		st.AddAttr("sym_name", ir.Str(name))
	}
	if err := p.ParseOptionalAttrDictWithKeyword(st); err != nil {
		return err
	}
	r := st.AddRegion()
	if err := p.ParseRegion(r, nil); err != nil {
		return err
	}
	if r.Empty() {
		r.AddBlock(ir.NewBlock(nil, nil))
	}
	return nil
}

func printModule(p *ir.Printer, op *ir.Operation) {
	if name := op.SymbolName(); name != "" {
		p.Write(" ")
		p.PrintSymbolName(name)
	}
	p.PrintOptionalAttrDictWithKeyword(op.AllAttrs(), "sym_name")
	p.Write(" ")
	p.PrintRegion(op.Region(0), false, false, false)
}
