package gpu

import (
	"github.com/tmac-dev/tmac/dialects/builtin"
	funcdialect "github.com/tmac-dev/tmac/dialects/func"
	"github.com/tmac-dev/tmac/ir"
)

// --- gpu.module -----------------------------------------------------------

// parseNameAndHandler parses `@name` and an optional `<#offloading.handler>`,
// the common prefix of gpu.module and gpu.binary.
func parseNameAndHandler(p *ir.Parser, st *ir.OperationState) error {
	name, err := p.ParseSymbolName()
	if err != nil {
		return err
	}
	st.AddAttr("sym_name", ir.Str(name))
	if p.ParseOptionalPunct("<") {
		a, err := p.ParseAttribute(nil)
		if err != nil {
			return err
		}
		if err := p.ParsePunct(">"); err != nil {
			return err
		}
		st.AddAttr("offloadingHandler", a)
	}
	return nil
}

func parseModule(p *ir.Parser, st *ir.OperationState) error {
	if err := parseNameAndHandler(p, st); err != nil {
		return err
	}
	if p.IsPunct("[") {
		a, err := p.ParseAttribute(nil)
		if err != nil {
			return err
		}
		st.AddAttr("targets", a)
	}
	return builtin.ParseModuleBody(p, st)
}

func printModule(p *ir.Printer, op *ir.Operation) {
	p.Write(" ")
	p.PrintSymbolName(op.SymbolName())
	if h := op.Attr("offloadingHandler"); h != nil {
		p.Write("<")
		p.PrintAttribute(h)
		p.Write(">")
	}
	if t := op.Attr("targets"); t != nil {
		p.Write(" ")
		p.PrintAttribute(t)
	}
	builtin.PrintModuleBody(p, op, "sym_name", "targets", "offloadingHandler")
}

func verifyModule(op *ir.Operation) error {
	if parent := op.ParentOp(); parent != nil && !parent.HasTrait(ir.SymbolTable) {
		return op.EmitOpError("symbol's parent must have the SymbolTable trait")
	}
	if r := op.Region(0); !r.Empty() && r.Entry().NumArgs() > 0 {
		return op.EmitOpError("region should have no arguments")
	}
	return nil
}

// --- gpu.binary -----------------------------------------------------------

func parseBinary(p *ir.Parser, st *ir.OperationState) error {
	if err := parseNameAndHandler(p, st); err != nil {
		return err
	}
	if err := p.ParseOptionalAttrDict(st); err != nil {
		return err
	}
	a, err := p.ParseAttribute(nil)
	if err != nil {
		return err
	}
	st.AddAttr("objects", a)
	return nil
}

func printBinary(p *ir.Printer, op *ir.Operation) {
	p.Write(" ")
	p.PrintSymbolName(op.SymbolName())
	p.Write(" ")
	if h := op.Attr("offloadingHandler"); h != nil && h != ir.Attribute(selectObjectDefault) {
		p.Write("<")
		p.PrintAttribute(h)
		p.Write(">")
	}
	p.PrintOptionalAttrDict(op.AllAttrs(), "sym_name", "offloadingHandler", "objects")
	p.Write(" ")
	p.PrintAttribute(op.Attr("objects"))
}

// --- attributions (gpu.func and gpu.launch) ---------------------------------

// parseAttributions parses the attributions of gpu.func and gpu.launch,
// `workgroup(...)` and `private(...)`, each if present.
func parseAttributions(p *ir.Parser) (workgroup, private []ir.Argument, err error) {
	if workgroup, err = parseAttributionList(p, "workgroup"); err != nil {
		return nil, nil, err
	}
	private, err = parseAttributionList(p, "private")
	return workgroup, private, err
}

// parseAttributionList parses `keyword(%a : type {attrs}?, ...)` if present.
func parseAttributionList(p *ir.Parser, keyword string) ([]ir.Argument, error) {
	if !p.ParseOptionalKeyword(keyword) {
		return nil, nil
	}
	var args []ir.Argument
	err := p.ParseCommaSeparatedList(ir.DelimParen, func() error {
		a, err := p.ParseArgument(true, true)
		args = append(args, a)
		return err
	})
	return args, err
}

func printAttributions(p *ir.Printer, keyword string, args []*ir.BlockArgument, attrs ir.Attribute) {
	if len(args) == 0 {
		return
	}
	dicts, _ := attrs.(*ir.ArrayAttr)
	p.Write(" " + keyword + "(")
	for i, a := range args {
		if i > 0 {
			p.Write(", ")
		}
		printTypedOperand(p, a)
		if dicts != nil && i < len(dicts.Elems) {
			if d, ok := dicts.Elems[i].(*ir.DictAttr); ok && len(d.Entries) > 0 {
				p.Write(" ")
				p.PrintAttribute(d)
			}
		}
	}
	p.Write(")")
}

// printTypedOperand prints `%v : type`.
func printTypedOperand(p *ir.Printer, v ir.Value) {
	p.PrintOperand(v)
	p.Write(" : ")
	p.PrintType(v.Type())
}

// attributionAttrs returns the array of attribution dictionaries, or nil if
// none has attributes.
func attributionAttrs(args []ir.Argument) ir.Attribute {
	dicts := make([]*ir.DictAttr, len(args))
	for i, a := range args {
		dicts[i] = a.Attrs
	}
	return ir.DictArrayOrNil(dicts)
}

// verifyAttributions checks that attributions are memrefs in the expected
// gpu address space (other memory spaces are not checked).
func verifyAttributions(op *ir.Operation, args []*ir.BlockArgument, space string) error {
	for _, a := range args {
		m, ok := a.Type().(*ir.MemRefType)
		if !ok {
			return op.EmitOpError("expected memref type in attribution")
		}
		if s := addressSpaceOf(m.MemorySpace); s != "" && s != space {
			return op.EmitOpError("expected memory space %s in attribution", space)
		}
	}
	return nil
}

// --- gpu.func ---------------------------------------------------------------

func parseFunc(p *ir.Parser, st *ir.OperationState) error {
	name, err := p.ParseSymbolName()
	if err != nil {
		return err
	}
	st.AddAttr("sym_name", ir.Str(name))
	sigTok := p.Tok()
	sig, err := funcdialect.ParseFunctionSignature(p, true)
	if err != nil {
		return err
	}
	if sig.Declaration && len(sig.Args) > 0 {
		return p.ErrorAt(sigTok, "custom op 'gpu.func' gpu.func requires named arguments")
	}
	st.AddAttr("function_type", ir.TypeAttrOf(ir.FunctionTypeOf(sig.ArgTypes(), sig.Results)))
	if a := sig.ArgAttrs(); a != nil {
		st.AddAttr("arg_attrs", a)
	}
	if a := sig.ResAttrsAttr(); a != nil {
		st.AddAttr("res_attrs", a)
	}
	workgroup, private, err := parseAttributions(p)
	if err != nil {
		return err
	}
	if p.ParseOptionalKeyword("kernel") {
		st.AddAttr("gpu.kernel", ir.Unit)
	}
	if err := p.ParseOptionalAttrDictWithKeyword(st); err != nil {
		return err
	}
	st.AddAttr("workgroup_attributions", ir.I64Attr(int64(len(workgroup))))
	if a := attributionAttrs(workgroup); a != nil {
		st.AddAttr("workgroup_attrib_attrs", a)
	}
	if a := attributionAttrs(private); a != nil {
		st.AddAttr("private_attrib_attrs", a)
	}
	// Inherent attributes of the wrong kind in the dictionary are dropped,
	// as upstream's property conversion does in the custom form.
	var kept []ir.NamedAttr
	for _, a := range st.Attrs {
		switch a.Name {
		case "known_block_size", "known_grid_size", "known_cluster_size":
			if d, ok := a.Value.(*ir.DenseArrayAttr); !ok || d.Elem != ir.I32 {
				continue
			}
		}
		kept = append(kept, a)
	}
	st.Attrs = kept
	var args []ir.Argument
	args = append(args, sig.Args...)
	args = append(args, workgroup...)
	args = append(args, private...)
	for i := range args {
		args[i].Attrs = nil
	}
	r := st.AddRegion()
	return p.ParseRegion(r, args)
}

// numWorkgroup returns the workgroup_attributions count, or -1 when it is
// negative or absurdly large (the verifiers reject that; the printers
// then print no attributions).
func numWorkgroup(op *ir.Operation) int {
	n := op.IntAttrOf("workgroup_attributions", 0)
	if n < 0 || n > 1<<20 {
		return -1
	}
	return int(n)
}

// badWorkgroupCount is the verifiers' error for a negative or absurdly
// large workgroup_attributions count.
func badWorkgroupCount(op *ir.Operation) error {
	return op.EmitOpError("requires 'workgroup_attributions' to be a count from 0 to %d, not %d",
		1<<20, op.IntAttrOf("workgroup_attributions", 0))
}

func isKernel(op *ir.Operation) bool {
	_, ok := op.Attr("gpu.kernel").(*ir.UnitAttr)
	return ok
}

func printFunc(p *ir.Printer, op *ir.Operation) {
	p.Write(" ")
	p.PrintSymbolName(op.SymbolName())
	ft := funcdialect.FunctionType(op)
	body := op.Region(0)
	funcdialect.PrintFunctionSignature(p, op, ft, body)
	if !body.Empty() {
		args := body.Entry().Args()
		nIn, nW := len(ft.Inputs), numWorkgroup(op)
		if nW >= 0 && nIn+nW <= len(args) {
			printAttributions(p, "workgroup", args[nIn:nIn+nW], op.Attr("workgroup_attrib_attrs"))
			printAttributions(p, "private", args[nIn+nW:], op.Attr("private_attrib_attrs"))
		}
	}
	elided := []string{"sym_name", "function_type", "arg_attrs", "res_attrs", "workgroup_attrib_attrs", "private_attrib_attrs", "workgroup_attributions"}
	if isKernel(op) {
		p.Write(" kernel")
		elided = append(elided, "gpu.kernel")
	}
	p.PrintOptionalAttrDictWithKeyword(op.AllAttrs(), elided...)
	if !body.Empty() {
		p.Write(" ")
		p.PrintRegion(body, false, true, false)
	}
}

func verifyFunc(op *ir.Operation) error {
	if _, ok := op.Attr("sym_name").(*ir.StringAttr); !ok {
		return op.EmitOpError("requires string attribute 'sym_name'")
	}
	if err := hasParent("gpu.module")(op); err != nil {
		return err
	}
	ft := funcdialect.FunctionType(op)
	if a, ok := op.Attr("arg_attrs").(*ir.ArrayAttr); ok && len(a.Elems) != len(ft.Inputs) {
		return op.EmitOpError("expects argument attribute array to have the same number of elements as the number of function arguments, got %d, but expected %d", len(a.Elems), len(ft.Inputs))
	}
	if a, ok := op.Attr("res_attrs").(*ir.ArrayAttr); ok && len(a.Elems) != len(ft.Results) {
		return op.EmitOpError("expects result attribute array to have the same number of elements as the number of function results, got %d, but expected %d", len(a.Elems), len(ft.Results))
	}
	if isKernel(op) && len(ft.Results) != 0 {
		return op.EmitOpError("expected void return type for kernel function")
	}
	body := op.Region(0)
	if body.Empty() {
		return op.EmitOpError("expected body with at least one block")
	}
	nIn, nW := len(ft.Inputs), numWorkgroup(op)
	args := body.Entry().Args()
	if nW < 0 {
		return badWorkgroupCount(op)
	}
	if len(args) < nIn+nW {
		return op.EmitOpError("expected at least %d arguments to body region", nIn+nW)
	}
	for i, t := range ft.Inputs {
		if args[i].Type() != t {
			return op.EmitOpError("expected body region argument #%d to be of type '%s', got '%s'", i, t, args[i].Type())
		}
	}
	if err := verifyAttributions(op, args[nIn:nIn+nW], "workgroup"); err != nil {
		return err
	}
	return verifyAttributions(op, args[nIn+nW:], "private")
}

func verifyReturn(op *ir.Operation) error {
	fn := op.ParentOp()
	if fn == nil || fn.Name() != "gpu.func" {
		return op.EmitOpError("expects parent op 'gpu.func'")
	}
	ft := funcdialect.FunctionType(fn)
	if op.NumOperands() != len(ft.Results) {
		return op.EmitOpError("expected %d result operands", len(ft.Results)).AttachNote(fn.Loc, "return type declared here")
	}
	for i, t := range op.OperandTypes() {
		if t != ft.Results[i] {
			return op.EmitOpError("unexpected type `'%s'' for operand #%d", t, i)
		}
	}
	return nil
}
