// Package funcdialect registers the func dialect: func.func, func.return
// and func.call. (The directory is dialects/func; "func" is a Go keyword.)
package funcdialect

import (
	"strings"

	"github.com/tmac-dev/tmac/ir"
)

func init() {
	ir.RegisterDialect(&ir.Dialect{Name: "func", Summary: "Functions, calls and returns"})
	ir.Register(
		&ir.OpDef{
			Name:    "func.func",
			Summary: "An operation with a name containing a single SSACFG region",
			Traits:  ir.IsolatedFromAbove | ir.Symbol,
			Attrs: []ir.AttrSpec{
				{Name: "sym_name", Constraint: ir.SymbolNameC},
				{Name: "function_type", Constraint: ir.FunctionTypeAttrC},
				{Name: "sym_visibility", Constraint: ir.StringAttrC, Optional: true},
				{Name: "arg_attrs", Constraint: ir.DictArrayC, Optional: true},
				{Name: "res_attrs", Constraint: ir.DictArrayC, Optional: true},
				{Name: "no_inline", Constraint: ir.UnitAttrC, Optional: true},
			},
			Regions:          []ir.RegionSpec{{Name: "body"}},
			DefaultDialect:   "func",
			Parse:            parseFunc,
			Print:            printFunc,
			VerifyProps:      propConversion(map[string]func(ir.Attribute) bool{"sym_name": isStr, "function_type": isTypeAttr, "sym_visibility": isStr, "arg_attrs": isArray, "res_attrs": isArray, "no_inline": isUnit}),
			VerifyInvariants: verifyFunc,
		},
		&ir.OpDef{
			Name:     "func.return",
			Summary:  "Function return operation",
			Traits:   ir.Terminator | ir.ReturnLike | ir.Pure,
			Parents:  []string{"func.func"},
			Operands: []ir.ArgSpec{{Name: "operands", Kind: ir.Variadic, Type: ir.AnyType}},
			Format:   "attr-dict ($operands^ `:` type($operands))?",
			Verify:   verifyReturn,
		},
		&ir.OpDef{
			Name:     "func.call",
			Summary:  "Call operation",
			Operands: []ir.ArgSpec{{Name: "operands", Kind: ir.Variadic, Type: ir.AnyType}},
			Results:  []ir.ArgSpec{{Name: "results", Kind: ir.Variadic, Type: ir.AnyType}},
			Attrs: []ir.AttrSpec{
				{Name: "callee", Constraint: ir.FlatSymbolRefC, Syntax: ir.FlatSymbolRefSyntax},
				{Name: "arg_attrs", Constraint: ir.DictArrayC, Optional: true},
				{Name: "res_attrs", Constraint: ir.DictArrayC, Optional: true},
				{Name: "no_inline", Constraint: ir.UnitAttrC, Optional: true},
			},
			Format:      "$callee `(` $operands `)` attr-dict `:` functional-type($operands, $results)",
			VerifyProps: propConversion(map[string]func(ir.Attribute) bool{"callee": isFlatRef, "arg_attrs": isArray, "res_attrs": isArray, "no_inline": isUnit}),
			Verify:      verifyCall,
		},
	)
}

func isStr(a ir.Attribute) bool      { _, ok := a.(*ir.StringAttr); return ok }
func isTypeAttr(a ir.Attribute) bool { _, ok := a.(*ir.TypeAttr); return ok }
func isArray(a ir.Attribute) bool    { _, ok := a.(*ir.ArrayAttr); return ok }
func isUnit(a ir.Attribute) bool     { _, ok := a.(*ir.UnitAttr); return ok }
func isFlatRef(a ir.Attribute) bool {
	r, ok := a.(*ir.SymbolRefAttr)
	return ok && len(r.Nested) == 0
}

// propConversion reports upstream's property conversion failure for an
// inherent attribute whose kind does not match its storage.
func propConversion(kinds map[string]func(ir.Attribute) bool) func(op *ir.Operation) error {
	return func(op *ir.Operation) error {
		for _, a := range op.Props() {
			if ok := kinds[a.Name]; ok != nil && !ok(a.Value) {
				return ir.Errorf(op.Loc, "invalid properties %s for op %s: Invalid attribute `%s` in property conversion: %s",
					ir.FormatAttrDict(op.Props()), op.Name(), a.Name, a.Value)
			}
		}
		return nil
	}
}

// FunctionType returns the signature of a func.func (or gpu.func).
func FunctionType(op *ir.Operation) *ir.FunctionType {
	if t, ok := op.Attr("function_type").(*ir.TypeAttr); ok {
		if ft, ok := t.Value.(*ir.FunctionType); ok {
			return ft
		}
	}
	return ir.FunctionTypeOf(nil, nil)
}

func parseFunc(p *ir.Parser, st *ir.OperationState) error {
	if vis, ok := p.ParseOptionalAnyKeyword(); ok {
		if vis != "private" && vis != "public" && vis != "nested" {
			return p.Errorf("expected 'public', 'private', or 'nested'")
		}
		st.AddAttr("sym_visibility", ir.Str(vis))
	}
	name, err := p.ParseSymbolName()
	if err != nil {
		return err
	}
	st.AddAttr("sym_name", ir.Str(name))
	sig, err := ParseFunctionSignature(p, true)
	if err != nil {
		return err
	}
	st.AddAttr("function_type", ir.TypeAttrOf(ir.FunctionTypeOf(sig.ArgTypes(), sig.Results)))
	if a := sig.ArgAttrs(); a != nil {
		st.AddAttr("arg_attrs", a)
	}
	if a := sig.ResAttrsAttr(); a != nil {
		st.AddAttr("res_attrs", a)
	}
	dictTok := p.Tok()
	n := len(st.Attrs)
	if err := p.ParseOptionalAttrDictWithKeyword(st); err != nil {
		return err
	}
	for _, a := range st.Attrs[n:] {
		switch a.Name {
		case "sym_visibility", "sym_name", "function_type":
			return p.CustomOpErrorAt(dictTok, "'%s' is an inferred attribute and should not be specified in the explicit attribute dictionary", a.Name)
		}
	}
	r := st.AddRegion()
	if p.IsPunct("{") {
		// With bare argument types the body declares its entry block
		// arguments itself (^bb0(%a: f32):), as upstream allows; the
		// verifier checks them against the signature.
		entry := sig.Args
		if sig.Declaration {
			entry = nil
		}
		regionTok := p.Tok()
		if err := p.ParseRegion(r, entry); err != nil {
			return err
		}
		if r.Empty() {
			return p.CustomOpErrorAt(regionTok, "expected non-empty function body")
		}
	}
	return nil
}

// Signature is a parsed function signature: arguments (named or not),
// result types and their attributes.
type Signature struct {
	Args        []ir.Argument
	Declaration bool // arguments were written as bare types
	Variadic    bool // the argument list ends with `...` (llvm.func)
	Results     []ir.Type
	ResAttrs    []*ir.DictAttr
}

// ArgTypes returns the argument types.
func (s *Signature) ArgTypes() []ir.Type {
	ts := make([]ir.Type, len(s.Args))
	for i, a := range s.Args {
		ts[i] = a.Type
	}
	return ts
}

// ArgAttrs returns the arg_attrs array, or nil if all are empty.
func (s *Signature) ArgAttrs() ir.Attribute {
	dicts := make([]*ir.DictAttr, len(s.Args))
	for i, a := range s.Args {
		dicts[i] = a.Attrs
	}
	return ir.DictArrayOrNil(dicts)
}

// ResAttrsAttr returns the res_attrs array, or nil if all are empty.
func (s *Signature) ResAttrsAttr() ir.Attribute { return ir.DictArrayOrNil(s.ResAttrs) }

// ParseFunctionSignature parses (args) [-> results]. Arguments are either
// all named (%a: t {attrs} loc(..)) or, when allowDecl, all bare types.
func ParseFunctionSignature(p *ir.Parser, allowDecl bool) (*Signature, error) {
	return parseSignature(p, allowDecl, "")
}

// ParseVariadicFunctionSignature is ParseFunctionSignature for functions
// whose argument list may end with `...`; opName is the op, for the error
// of arguments after it.
func ParseVariadicFunctionSignature(p *ir.Parser, opName string) (*Signature, error) {
	return parseSignature(p, true, opName)
}

func parseSignature(p *ir.Parser, allowDecl bool, variadicOp string) (*Signature, error) {
	sig := &Signature{}
	first := true
	err := p.ParseCommaSeparatedList(ir.DelimParen, func() error {
		if sig.Variadic {
			return p.Errorf("custom op '%s' variadic arguments must be in the end of the argument list", variadicOp)
		}
		if variadicOp != "" && p.ParseOptionalPunct("...") {
			sig.Variadic = true
			return nil
		}
		if p.Tok().Kind == ir.TokPercent {
			if !first && sig.Declaration {
				return p.Errorf("expected type instead of SSA identifier")
			}
			a, err := p.ParseArgument(true, true)
			if err != nil {
				return err
			}
			sig.Args = append(sig.Args, a)
		} else {
			if !first && !sig.Declaration {
				return p.Errorf("expected SSA identifier")
			}
			if !allowDecl {
				return p.Errorf("expected SSA identifier")
			}
			sig.Declaration = true
			t, err := p.ParseType()
			if err != nil {
				return err
			}
			a := ir.Argument{Type: t}
			if p.IsPunct("{") {
				st := &ir.OperationState{}
				if err := p.ParseOptionalAttrDict(st); err != nil {
					return err
				}
				a.Attrs = ir.Dict(st.Attrs)
			}
			if p.IsKeyword("loc") {
				l, err := p.ParseLocation()
				if err != nil {
					return err
				}
				a.Loc = l
			}
			sig.Args = append(sig.Args, a)
		}
		first = false
		return nil
	})
	if err != nil {
		return nil, err
	}
	if !p.ParseOptionalPunct("->") {
		return sig, nil
	}
	parseRes := func(withAttrs bool) error {
		t, err := p.ParseType()
		if err != nil {
			return err
		}
		var d *ir.DictAttr
		if withAttrs && p.IsPunct("{") {
			st := &ir.OperationState{}
			if err := p.ParseOptionalAttrDict(st); err != nil {
				return err
			}
			d = ir.Dict(st.Attrs)
		}
		sig.Results = append(sig.Results, t)
		sig.ResAttrs = append(sig.ResAttrs, d)
		return nil
	}
	if p.IsPunct("(") {
		// A parenthesised result list, unless it is a function type result.
		if err := p.ParseCommaSeparatedList(ir.DelimParen, func() error { return parseRes(true) }); err != nil {
			return nil, err
		}
		if sig.Results == nil {
			sig.Results = []ir.Type{}
		}
		return sig, nil
	}
	// A bare result type cannot carry attributes: a '{' starts the body.
	return sig, parseRes(false)
}

func printFunc(p *ir.Printer, op *ir.Operation) {
	p.Write(" ")
	if vis := op.StrAttrOf("sym_visibility"); vis != "" {
		p.Write(vis + " ")
	}
	p.PrintSymbolName(op.SymbolName())
	ft := FunctionType(op)
	body := op.Region(0)
	PrintFunctionSignature(p, op, ft, body)
	p.PrintOptionalAttrDictWithKeyword(op.AllAttrs(), "sym_name", "function_type", "sym_visibility", "arg_attrs", "res_attrs")
	if !body.Empty() {
		p.Write(" ")
		p.PrintRegion(body, false, true, false)
	}
}

// PrintFunctionSignature prints (args) -> results with argument and result
// attributes; named arguments come from body's entry block when present.
func PrintFunctionSignature(p *ir.Printer, op *ir.Operation, ft *ir.FunctionType, body *ir.Region) {
	PrintVariadicFunctionSignature(p, op, ft, body, false)
}

// PrintVariadicFunctionSignature is PrintFunctionSignature with `...`
// after the arguments when variadic.
func PrintVariadicFunctionSignature(p *ir.Printer, op *ir.Operation, ft *ir.FunctionType, body *ir.Region, variadic bool) {
	argAttrs := attrDicts(op.Attr("arg_attrs"), len(ft.Inputs))
	resAttrs := attrDicts(op.Attr("res_attrs"), len(ft.Results))
	p.Write("(")
	for i, t := range ft.Inputs {
		if i > 0 {
			p.Write(", ")
		}
		if !body.Empty() && i < body.Entry().NumArgs() {
			p.PrintRegionArgument(body.Entry().Arg(i), argAttrs[i])
			continue
		}
		p.PrintType(t)
		if argAttrs[i] != nil && len(argAttrs[i].Entries) > 0 {
			p.Write(" " + argAttrs[i].String())
		}
	}
	if variadic {
		if len(ft.Inputs) > 0 {
			p.Write(", ")
		}
		p.Write("...")
	}
	p.Write(")")
	if len(ft.Results) == 0 {
		return
	}
	p.Write(" -> ")
	anyAttrs := false
	for _, d := range resAttrs {
		if d != nil && len(d.Entries) > 0 {
			anyAttrs = true
		}
	}
	_, isFn := ft.Results[0].(*ir.FunctionType)
	if len(ft.Results) == 1 && !anyAttrs && !isFn {
		p.PrintType(ft.Results[0])
		return
	}
	p.Write("(")
	for i, t := range ft.Results {
		if i > 0 {
			p.Write(", ")
		}
		p.PrintType(t)
		if resAttrs[i] != nil && len(resAttrs[i].Entries) > 0 {
			p.Write(" " + resAttrs[i].String())
		}
	}
	p.Write(")")
}

func attrDicts(a ir.Attribute, n int) []*ir.DictAttr {
	out := make([]*ir.DictAttr, n)
	if arr, ok := a.(*ir.ArrayAttr); ok {
		for i, e := range arr.Elems {
			if i < n {
				out[i], _ = e.(*ir.DictAttr)
			}
		}
	}
	return out
}

func verifyFunc(op *ir.Operation) error {
	if parent := op.ParentOp(); parent != nil && !parent.HasTrait(ir.SymbolTable) {
		return op.EmitOpError("symbol's parent must have the SymbolTable trait")
	}
	if vis := op.StrAttrOf("sym_visibility"); vis != "" && vis != "public" && vis != "private" && vis != "nested" {
		return op.EmitOpError("visibility expected to be one of [\"public\", \"private\", \"nested\"], but got %s", ir.QuoteString(vis))
	}
	ft := FunctionType(op)
	if a, ok := op.Attr("arg_attrs").(*ir.ArrayAttr); ok && len(a.Elems) != len(ft.Inputs) {
		return op.EmitOpError("expects argument attribute array to have the same number of elements as the number of function arguments, got %d, but expected %d", len(a.Elems), len(ft.Inputs))
	}
	if a, ok := op.Attr("res_attrs").(*ir.ArrayAttr); ok && len(a.Elems) != len(ft.Results) {
		return op.EmitOpError("expects result attribute array to have the same number of elements as the number of function results, got %d, but expected %d", len(a.Elems), len(ft.Results))
	}
	for _, d := range attrDicts(op.Attr("arg_attrs"), len(ft.Inputs)) {
		if !onlyDialectAttrs(d) {
			return op.EmitOpError("arguments may only have dialect attributes")
		}
	}
	for _, d := range attrDicts(op.Attr("res_attrs"), len(ft.Results)) {
		if !onlyDialectAttrs(d) {
			return op.EmitOpError("results may only have dialect attributes")
		}
	}
	body := op.Region(0)
	if body.Empty() {
		if vis := op.StrAttrOf("sym_visibility"); vis == "" || vis == "public" {
			return op.EmitOpError("symbol declaration cannot have public visibility")
		}
		return nil
	}
	return VerifyEntryArgs(op, ft.Inputs)
}

// VerifyEntryArgs checks that the entry block of function op's body takes
// arguments of the types inputs, with upstream's messages.
func VerifyEntryArgs(op *ir.Operation, inputs []ir.Type) error {
	entry := op.Region(0).Entry()
	if entry.NumArgs() != len(inputs) {
		return op.EmitOpError("entry block must have %d arguments to match function signature", len(inputs))
	}
	for i, a := range entry.Args() {
		if a.Type() != inputs[i] {
			return op.EmitOpError("type of entry block argument #%d('%s') must match the type of the corresponding argument in function signature('%s')", i, a.Type(), inputs[i])
		}
	}
	return nil
}

// onlyDialectAttrs reports whether every name in d has a dialect prefix.
func onlyDialectAttrs(d *ir.DictAttr) bool {
	if d == nil {
		return true
	}
	for _, e := range d.Entries {
		if !strings.Contains(e.Name, ".") {
			return false
		}
	}
	return true
}

func verifyReturn(op *ir.Operation) error {
	fn := op.ParentOp()
	if fn == nil || fn.Name() != "func.func" {
		return op.EmitOpError("expects parent op 'func.func'")
	}
	ft := FunctionType(fn)
	if op.NumOperands() != len(ft.Results) {
		return op.EmitOpError("has %d operands, but enclosing function (@%s) returns %d", op.NumOperands(), fn.SymbolName(), len(ft.Results))
	}
	for i, t := range op.OperandTypes() {
		if t != ft.Results[i] {
			return op.EmitError("type of return operand %d ('%s') doesn't match function result type ('%s') in function @%s", i, t, ft.Results[i], fn.SymbolName())
		}
	}
	return nil
}

func verifyCall(op *ir.Operation) error {
	ref, _ := op.Attr("callee").(*ir.SymbolRefAttr)
	if ref == nil {
		return op.EmitOpError("requires a 'callee' symbol reference attribute")
	}
	fn := ir.ResolveSymbolRef(op, ref)
	if fn == nil || fn.Name() != "func.func" {
		return op.EmitOpError("'%s' does not reference a valid function", ref.Root)
	}
	ft := FunctionType(fn)
	if len(ft.Inputs) != op.NumOperands() {
		return op.EmitOpError("incorrect number of operands for callee")
	}
	for i, t := range op.OperandTypes() {
		if t != ft.Inputs[i] {
			return op.EmitOpError("operand type mismatch: expected operand type '%s', but provided '%s' for operand number %d", ft.Inputs[i], t, i)
		}
	}
	if len(ft.Results) != op.NumResults() {
		return op.EmitOpError("incorrect number of results for callee")
	}
	for i, t := range op.ResultTypes() {
		if t != ft.Results[i] {
			return op.EmitOpError("result type mismatch at index %d", i).
				AttachNote(nil, "      op result types: %s", typeList(op.ResultTypes())).
				AttachNote(nil, "function result types: %s", typeList(ft.Results))
		}
	}
	return nil
}

func typeList(ts []ir.Type) string {
	s := ""
	for i, t := range ts {
		if i > 0 {
			s += ", "
		}
		s += "'" + t.String() + "'"
	}
	return s
}
