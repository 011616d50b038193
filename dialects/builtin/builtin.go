// Package builtin registers the builtin dialect ops: module and
// unrealized_conversion_cast. Builtin types and attributes live in package ir.
package builtin

import (
	"strings"

	"github.com/tmac-dev/tmac/ir"
)

func init() {
	ir.RegisterDialect(&ir.Dialect{Name: "builtin", Summary: "The top-level container (module) and the conversion cast used between lowerings"})
	ir.Register(
		&ir.OpDef{
			Name:    "builtin.module",
			Summary: "A top level container operation",
			Traits:  ir.IsolatedFromAbove | ir.SymbolTable | ir.NoTerminator | ir.SingleBlock | ir.GraphRegions,
			Attrs: []ir.AttrSpec{
				{Name: "sym_name", Constraint: ir.SymbolNameC, Optional: true},
				{Name: "sym_visibility", Constraint: ir.StringAttrC, Optional: true},
			},
			Regions:          []ir.RegionSpec{{Name: "bodyRegion"}},
			DefaultDialect:   "builtin",
			Parse:            parseModule,
			Print:            printModule,
			VerifyProps:      verifyModuleProps,
			VerifyInvariants: verifyModule,
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
	return ParseModuleBody(p, st)
}

func printModule(p *ir.Printer, op *ir.Operation) {
	if name := op.SymbolName(); name != "" {
		p.Write(" ")
		p.PrintSymbolName(name)
	}
	PrintModuleBody(p, op, "sym_name")
}

// ParseModuleBody parses what ends a module-like op (builtin.module,
// gpu.module): `attributes {...}` if present and the body region, given
// its one block when written empty.
func ParseModuleBody(p *ir.Parser, st *ir.OperationState) error {
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

// PrintModuleBody prints what ParseModuleBody reads, without the elided
// attributes (those the op's custom form prints before it).
func PrintModuleBody(p *ir.Printer, op *ir.Operation, elided ...string) {
	p.PrintOptionalAttrDictWithKeyword(op.AllAttrs(), elided...)
	p.Write(" ")
	p.PrintRegion(op.Region(0), false, false, false)
}

func verifyModuleProps(op *ir.Operation) error {
	for _, a := range op.Props() {
		if a.Name != "sym_name" && a.Name != "sym_visibility" {
			continue
		}
		if _, ok := a.Value.(*ir.StringAttr); !ok {
			return ir.Errorf(op.Loc, "invalid properties %s for op %s: Invalid attribute `%s` in property conversion: %s",
				ir.FormatAttrDict(op.Props()), op.Name(), a.Name, a.Value)
		}
	}
	return nil
}

// verifyModule checks, in upstream's order, the module's traits (no region
// arguments, one block), its symbol rules and its attribute names.
func verifyModule(op *ir.Operation) error {
	body := op.Region(0)
	if !body.Empty() && body.Entry().NumArgs() > 0 {
		return op.EmitOpError("region should have no arguments")
	}
	if len(body.Blocks()) != 1 {
		return op.EmitOpError("region #0 ('bodyRegion') failed to verify constraint: region with 1 blocks")
	}
	if op.HasAttr("sym_name") {
		if parent := op.ParentOp(); parent != nil && !parent.HasTrait(ir.SymbolTable) {
			return op.EmitOpError("symbol's parent must have the SymbolTable trait")
		}
	}
	if vis := op.StrAttrOf("sym_visibility"); vis != "" && vis != "public" && vis != "private" && vis != "nested" {
		return op.EmitOpError("visibility expected to be one of [\"public\", \"private\", \"nested\"], but got %s", ir.QuoteString(vis))
	}
	for _, a := range op.DiscardableAttrs() {
		if !strings.Contains(a.Name, ".") {
			return op.EmitOpError("can only contain attributes with dialect-prefixed names, found: '%s'", a.Name)
		}
	}
	return nil
}
