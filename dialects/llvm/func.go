package llvm

import (
	"slices"
	"strings"

	funcdialect "github.com/tmac-dev/tmac/dialects/func"
	"github.com/tmac-dev/tmac/ir"
)

// Functions, calls and global constants: llvm.func, llvm.return,
// llvm.call, llvm.mlir.global and llvm.mlir.addressof, with the
// !llvm.func type and the #llvm.linkage, #llvm.cconv, #llvm.tailcallkind
// and #llvm.fastmath attributes their properties hold.

// FuncData holds the parameters of !llvm.func<result (params[, ...])>.
type FuncData struct {
	Result   ir.Type // !llvm.void for none
	Params   []ir.Type
	Variadic bool
}

// FuncType returns !llvm.func<result (params[, ...])>.
func FuncType(result ir.Type, params []ir.Type, variadic bool) *ir.DialectType {
	parts := make([]string, len(params), len(params)+1)
	for i, t := range params {
		parts[i] = Inner(t)
	}
	if variadic {
		parts = append(parts, "...")
	}
	text := "!llvm.func<" + Inner(result) + " (" + strings.Join(parts, ", ") + ")>"
	ps := append([]ir.Type(nil), params...)
	return ir.DialectTypeOf("llvm", "func", text, func() any { return &FuncData{Result: result, Params: ps, Variadic: variadic} })
}

// FuncOf returns the parameters of an !llvm.func type, or nil.
func FuncOf(t ir.Type) *FuncData { return ir.TypeData[FuncData](t) }

// Results returns the function's result types (none for void).
func (d *FuncData) Results() []ir.Type {
	if ir.TypeData[VoidData](d.Result) != nil {
		return nil
	}
	return []ir.Type{d.Result}
}

func parseFuncType(p *ir.Parser) (ir.Type, error) {
	if err := p.ParsePunct("<"); err != nil {
		return nil, err
	}
	result, err := parseNestedType(p)
	if err != nil {
		return nil, err
	}
	var params []ir.Type
	variadic := false
	if err := p.ParseCommaSeparatedList(ir.DelimParen, func() error {
		if variadic {
			return p.Errorf("variadic argument must be the last one")
		}
		if p.ParseOptionalPunct("...") {
			variadic = true
			return nil
		}
		t, err := parseNestedType(p)
		params = append(params, t)
		return err
	}); err != nil {
		return nil, err
	}
	if err := p.ParsePunct(">"); err != nil {
		return nil, err
	}
	return FuncType(result, params, variadic), nil
}

// keywordAttr is an LLVM enum attribute written #llvm.<mnemonic><keyword>.
type keywordAttr struct {
	mnemonic string
	values   []string
}

// KeywordData is the value of a keyword attribute.
type KeywordData struct{ Value string }

var (
	Linkage      = &keywordAttr{"linkage", []string{"private", "internal", "available_externally", "linkonce", "weak", "common", "appending", "extern_weak", "linkonce_odr", "weak_odr", "external"}}
	CConv        = &keywordAttr{"cconv", []string{"ccc", "fastcc", "coldcc", "cc_10", "cc_11", "anyregcc", "preserve_mostcc", "preserve_allcc", "swiftcc", "cxx_fast_tlscc", "tailcc", "cfguard_checkcc", "swifttailcc", "x86_stdcallcc", "x86_fastcallcc", "arm_apcscc", "arm_aapcscc", "arm_aapcs_vfpcc", "msp430_intrcc", "x86_thiscallcc", "ptx_kernelcc", "ptx_devicecc", "spir_funccc", "spir_kernelcc", "intel_ocl_bicc", "x86_64_sysvcc", "win64cc", "x86_vectorcallcc", "hhvm_ccc", "hhvmcc", "x86_intrcc", "avr_intrcc", "avr_builtincc", "amdgpu_vscc", "amdgpu_gscc", "amdgpu_cscc", "amdgpu_kernelcc", "x86_regcallcc", "amdgpu_hscc", "msp430_builtincc", "amdgpu_lscc", "amdgpu_escc", "aarch64_vectorcallcc", "aarch64_sve_vectorcallcc", "wasm_emscripten_invokecc", "amdgpu_gfxcc", "m68k_intrcc"}}
	TailCallKind = &keywordAttr{"tailcallkind", []string{"none", "tail", "musttail", "notail"}}
)

// Attr returns #llvm.<mnemonic><v>.
func (k *keywordAttr) Attr(v string) *ir.DialectAttr {
	return ir.DialectAttrOf("llvm", k.mnemonic, "#llvm."+k.mnemonic+"<"+v+">", &KeywordData{Value: v})
}

// Value returns the keyword of a, or "" if a is not one of k's attributes.
func (k *keywordAttr) Value(a ir.Attribute) string {
	if da, ok := a.(*ir.DialectAttr); ok && da.Dialect == "llvm" && da.Name == k.mnemonic {
		if d, ok := da.Data.(*KeywordData); ok {
			return d.Value
		}
	}
	return ""
}

func (k *keywordAttr) isValue(v string) bool {
	for _, x := range k.values {
		if x == v {
			return true
		}
	}
	return false
}

func (k *keywordAttr) parse(p *ir.Parser) (ir.Attribute, error) {
	if err := p.ParsePunct("<"); err != nil {
		return nil, err
	}
	tok := p.Tok()
	v, err := p.ParseAnyKeyword()
	if err != nil {
		return nil, err
	}
	if !k.isValue(v) {
		return nil, ir.Errorf(p.LocOf(tok), "unknown %s: %s", k.mnemonic, v)
	}
	if err := p.ParsePunct(">"); err != nil {
		return nil, err
	}
	return k.Attr(v), nil
}

func (k *keywordAttr) constraint(desc string) ir.AttrConstraint {
	return ir.AttrConstraint{Desc: desc, OK: func(a ir.Attribute) bool { return k.Value(a) != "" }}
}

// FastmathData holds the flags of #llvm.fastmath<...>.
type FastmathData struct{ Flags []string }

var fastmathFlags = []string{"nnan", "ninf", "nsz", "arcp", "contract", "afn", "reassoc", "fast", "none"}

// Fastmath returns #llvm.fastmath<flags> (none when empty).
func Fastmath(flags ...string) *ir.DialectAttr {
	text := "none"
	if len(flags) > 0 {
		text = strings.Join(flags, ", ")
	}
	return ir.DialectAttrOf("llvm", "fastmath", "#llvm.fastmath<"+text+">", &FastmathData{Flags: flags})
}

func parseFastmath(p *ir.Parser) (ir.Attribute, error) {
	if err := p.ParsePunct("<"); err != nil {
		return nil, err
	}
	var flags []string
	for {
		tok := p.Tok()
		f, err := p.ParseAnyKeyword()
		if err != nil {
			return nil, err
		}
		known := false
		for _, x := range fastmathFlags {
			known = known || x == f
		}
		if !known {
			return nil, ir.Errorf(p.LocOf(tok), "expected one of [none, reassoc, nnan, ninf, nsz, arcp, contract, afn, fast] for LLVM fastmath flags, got: %s", f)
		}
		if f != "none" {
			flags = append(flags, f)
		}
		if !p.ParseOptionalPunct(",") {
			break
		}
	}
	if err := p.ParsePunct(">"); err != nil {
		return nil, err
	}
	return Fastmath(flags...), nil
}

var (
	funcTypeC  = ir.AttrConstraint{Desc: "type attribute of LLVM function type", OK: func(a ir.Attribute) bool { t, ok := a.(*ir.TypeAttr); return ok && FuncOf(t.Value) != nil }}
	fastmathC  = ir.AttrConstraint{Desc: "LLVM fastmath flags", OK: func(a ir.Attribute) bool { return ir.AttrData[FastmathData](a) != nil }}
	i64AttrC   = ir.IntAttrOfWidth(64)
	unitAttrC  = ir.UnitAttrC
	anyAttr    = ir.AnyAttr
	stringAttr = ir.StringAttrC
)

// funcProps are the properties of llvm.func tmac knows (upstream has
// more; others are kept as discardable attributes).
var funcProps = []ir.AttrSpec{
	{Name: "CConv", Constraint: CConv.constraint("LLVM Calling Convention specification")},
	{Name: "alignment", Constraint: i64AttrC, Optional: true},
	{Name: "always_inline", Constraint: unitAttrC, Optional: true},
	{Name: "arg_attrs", Constraint: ir.DictArrayC, Optional: true},
	{Name: "convergent", Constraint: unitAttrC, Optional: true},
	{Name: "dso_local", Constraint: unitAttrC, Optional: true},
	{Name: "frame_pointer", Constraint: anyAttr, Optional: true},
	{Name: "function_type", Constraint: funcTypeC},
	{Name: "garbage_collector", Constraint: stringAttr, Optional: true},
	{Name: "linkage", Constraint: Linkage.constraint("LLVM Linkage specification")},
	{Name: "no_inline", Constraint: unitAttrC, Optional: true},
	{Name: "no_unwind", Constraint: unitAttrC, Optional: true},
	{Name: "optimize_none", Constraint: unitAttrC, Optional: true},
	{Name: "passthrough", Constraint: anyAttr, Optional: true},
	{Name: "res_attrs", Constraint: ir.DictArrayC, Optional: true},
	{Name: "section", Constraint: stringAttr, Optional: true},
	{Name: "sym_name", Constraint: ir.SymbolNameC},
	{Name: "sym_visibility", Constraint: stringAttr, Optional: true},
	{Name: "target_cpu", Constraint: stringAttr, Optional: true},
	{Name: "target_features", Constraint: anyAttr, Optional: true},
	{Name: "unnamed_addr", Constraint: i64AttrC, Optional: true},
	{Name: "visibility_", Constraint: i64AttrC, Optional: true},
	{Name: "will_return", Constraint: unitAttrC, Optional: true},
}

func init() {
	ir.Register(
		&ir.OpDef{
			Name:             "llvm.func",
			Summary:          "LLVM dialect function: a definition, or a declaration such as printf",
			Traits:           ir.IsolatedFromAbove | ir.Symbol,
			Attrs:            funcProps,
			Regions:          []ir.RegionSpec{{Name: "body"}},
			Parse:            parseLLVMFunc,
			Print:            printLLVMFunc,
			VerifyInvariants: verifyLLVMFunc,
			Doc: "A declaration (no body) must have `external` or `extern_weak` linkage. In kernels " +
				"tmac compiles definitions (as internal device functions) and calls to a declared " +
				"`printf` (lowered to CUDA's vprintf); calls to other declarations are rejected.",
		},
		&ir.OpDef{
			Name:     "llvm.return",
			Summary:  "LLVM dialect return",
			Traits:   ir.Terminator | ir.ReturnLike | ir.Pure,
			Operands: []ir.ArgSpec{{Name: "arg", Kind: ir.Optional, Type: CompatibleType}},
			Format:   "attr-dict ($arg^ `:` type($arg))?",
			Verify:   verifyLLVMReturn,
		},
		&ir.OpDef{
			Name:    "llvm.call",
			Summary: "Call to an LLVM function",
			Traits:  ir.AttrSizedOperandSegments,
			Operands: []ir.ArgSpec{
				{Name: "callee_operands", Kind: ir.Variadic, Type: CompatibleType},
				{Name: "op_bundle_operands", Kind: ir.Variadic, Type: ir.AnyType},
			},
			Results: []ir.ArgSpec{{Name: "result", Kind: ir.Optional, Type: CompatibleType}},
			Attrs: []ir.AttrSpec{
				{Name: "CConv", Constraint: CConv.constraint("LLVM Calling Convention specification"), Default: CConv.Attr("ccc")},
				{Name: "TailCallKind", Constraint: TailCallKind.constraint("Tail Call Kind"), Default: TailCallKind.Attr("none")},
				{Name: "callee", Constraint: ir.FlatSymbolRefC, Syntax: ir.FlatSymbolRefSyntax},
				{Name: "fastmathFlags", Constraint: fastmathC, Default: Fastmath()},
				{Name: "op_bundle_sizes", Constraint: ir.AttrConstraint{Desc: "i32 dense array attribute", OK: func(a ir.Attribute) bool { return a != nil }}, Default: ir.DenseI32Array()},
				{Name: "var_callee_type", Constraint: funcTypeC, Optional: true},
			},
			Format: "$callee `(` $callee_operands `)` (`vararg` `(` $var_callee_type^ `)`)? attr-dict `:` functional-type($callee_operands, results)",
			Verify: verifyLLVMCall,
			Doc:    "Direct calls only (upstream's indirect calls and operand bundles are not accepted).",
		},
		&ir.OpDef{
			Name:    "llvm.mlir.global",
			Summary: "An LLVM global variable or constant (a printf format string)",
			Traits:  ir.Symbol,
			Attrs: []ir.AttrSpec{
				{Name: "addr_space", Constraint: ir.I32AttrC},
				{Name: "alignment", Constraint: i64AttrC, Optional: true},
				{Name: "constant", Constraint: unitAttrC, Optional: true},
				{Name: "dso_local", Constraint: unitAttrC, Optional: true},
				{Name: "global_type", Constraint: ir.AttrConstraint{Desc: "any type attribute", OK: func(a ir.Attribute) bool { _, ok := a.(*ir.TypeAttr); return ok }}},
				{Name: "linkage", Constraint: Linkage.constraint("LLVM Linkage specification")},
				{Name: "section", Constraint: stringAttr, Optional: true},
				{Name: "sym_name", Constraint: ir.SymbolNameC},
				{Name: "thread_local_", Constraint: unitAttrC, Optional: true},
				{Name: "unnamed_addr", Constraint: i64AttrC, Optional: true},
				{Name: "value", Constraint: anyAttr, Optional: true},
				{Name: "visibility_", Constraint: i64AttrC, Optional: true},
			},
			Regions: []ir.RegionSpec{{Name: "initializer"}},
			Parse:   parseGlobal,
			Print:   printGlobal,
			Verify:  verifyGlobal,
			Doc: "In kernels tmac compiles constants with a value (no initializer region): " +
				"a string is an `!llvm.array<N x i8>`, such as a printf format.",
		},
		&ir.OpDef{
			Name:    "llvm.mlir.addressof",
			Summary: "The address of an LLVM global or function",
			Traits:  ir.Pure,
			Results: []ir.ArgSpec{{Name: "res", Type: ir.TypeConstraint{Desc: "LLVM pointer type", OK: func(t ir.Type) bool { return IsPtr(t) }}}},
			Attrs:   []ir.AttrSpec{{Name: "global_name", Constraint: ir.FlatSymbolRefC, Syntax: ir.FlatSymbolRefSyntax}},
			Format:  "$global_name attr-dict `:` qualified(type($res))",
			Verify:  verifyAddressOf,
		},
	)
}

func parseLLVMFunc(p *ir.Parser, st *ir.OperationState) error {
	linkage := "external"
	if kw, ok := p.ParseOptionalAnyKeyword(); ok {
		if !Linkage.isValue(kw) {
			return p.Errorf("custom op 'llvm.func' expected a linkage (%s), got '%s'", strings.Join(Linkage.values, ", "), kw)
		}
		linkage = kw
	}
	name, err := p.ParseSymbolName()
	if err != nil {
		return err
	}
	sig, err := funcdialect.ParseVariadicFunctionSignature(p, "llvm.func")
	if err != nil {
		return err
	}
	if len(sig.Results) > 1 {
		return p.Errorf("custom op 'llvm.func' expected zero or one function result")
	}
	result := ir.Type(Void())
	if len(sig.Results) == 1 {
		result = sig.Results[0]
	}
	st.AddAttr("CConv", CConv.Attr("ccc"))
	st.AddAttr("function_type", ir.TypeAttrOf(FuncType(result, sig.ArgTypes(), sig.Variadic)))
	st.AddAttr("linkage", Linkage.Attr(linkage))
	st.AddAttr("sym_name", ir.Str(name))
	st.AddAttr("unnamed_addr", ir.IntAttr(0, ir.I64))
	st.AddAttr("visibility_", ir.IntAttr(0, ir.I64))
	if a := sig.ArgAttrs(); a != nil {
		st.AddAttr("arg_attrs", a)
	}
	if a := sig.ResAttrsAttr(); a != nil {
		st.AddAttr("res_attrs", a)
	}
	if err := p.ParseOptionalAttrDictWithKeyword(st); err != nil {
		return err
	}
	r := st.AddRegion()
	if p.IsPunct("{") {
		entry := sig.Args
		if sig.Declaration {
			entry = nil
		}
		if err := p.ParseRegion(r, entry); err != nil {
			return err
		}
	}
	return nil
}

func printLLVMFunc(p *ir.Printer, op *ir.Operation) {
	p.Write(" ")
	if l := Linkage.Value(op.Attr("linkage")); l != "" && l != "external" {
		p.Write(l + " ")
	}
	p.PrintSymbolName(op.SymbolName())
	ft := FuncSignature(op)
	funcdialect.PrintVariadicFunctionSignature(p, op, ir.FunctionTypeOf(ft.Params, ft.Results()), op.Region(0), ft.Variadic)
	elided := []string{"CConv", "function_type", "linkage", "sym_name", "arg_attrs", "res_attrs"}
	if op.IntAttrOf("unnamed_addr", 0) == 0 {
		elided = append(elided, "unnamed_addr")
	}
	if op.IntAttrOf("visibility_", 0) == 0 {
		elided = append(elided, "visibility_")
	}
	p.PrintOptionalAttrDictWithKeyword(op.AllAttrs(), elided...)
	if body := op.Region(0); !body.Empty() {
		p.Write(" ")
		p.PrintRegion(body, false, true, false)
	}
}

// FuncSignature returns the !llvm.func type of an llvm.func op.
func FuncSignature(op *ir.Operation) *FuncData {
	if t, ok := op.Attr("function_type").(*ir.TypeAttr); ok {
		if d := FuncOf(t.Value); d != nil {
			return d
		}
	}
	return &FuncData{Result: Void()}
}

func verifyLLVMFunc(op *ir.Operation) error {
	if CConv.Value(op.Attr("CConv")) != "ccc" && CConv.Value(op.Attr("CConv")) != "" {
		return op.EmitOpError("only the C calling convention is supported by tmac")
	}
	ft := FuncSignature(op)
	body := op.Region(0)
	if body.Empty() {
		if l := Linkage.Value(op.Attr("linkage")); l != "external" && l != "extern_weak" {
			return op.EmitOpError("external functions must have 'external' or 'extern_weak' linkage")
		}
		return nil
	}
	return funcdialect.VerifyEntryArgs(op, ft.Params)
}

func verifyLLVMReturn(op *ir.Operation) error {
	fn := op.ParentOp()
	if fn == nil || fn.Name() != "llvm.func" {
		return nil
	}
	results := FuncSignature(fn).Results()
	var msg string
	switch {
	case len(results) == 0 && op.NumOperands() > 0:
		msg = "expected no operands"
	case len(results) == 1 && op.NumOperands() == 0:
		msg = "expected 1 operand"
	case len(results) == 1 && op.Operand(0).Type() != results[0]:
		msg = "mismatching result types"
	default:
		return nil
	}
	return op.EmitOpError("%s", msg).AttachNote(fn.Loc, "when returning from function")
}

// CalleeOf returns the llvm.func a call names, or nil.
func CalleeOf(call *ir.Operation) *ir.Operation {
	ref, _ := call.Attr("callee").(*ir.SymbolRefAttr)
	if ref == nil {
		return nil
	}
	fn := ir.ResolveSymbolRef(call, ref)
	if fn == nil || fn.Name() != "llvm.func" {
		return nil
	}
	return fn
}

func verifyLLVMCall(op *ir.Operation) error {
	ref, _ := op.Attr("callee").(*ir.SymbolRefAttr)
	if ref == nil {
		return op.EmitOpError("requires a 'callee' symbol reference attribute")
	}
	target := ir.ResolveSymbolRef(op, ref)
	if target == nil {
		return op.EmitOpError("'%s' does not reference a symbol in the current scope", ref.Root)
	}
	if target.Name() != "llvm.func" {
		return op.EmitOpError("'%s' does not reference a valid LLVM function or IFunc", ref.Root)
	}
	ft := FuncSignature(target)
	args := op.OperandGroup("callee_operands")
	if vt, ok := op.Attr("var_callee_type").(*ir.TypeAttr); ok {
		if v := FuncOf(vt.Value); v != nil {
			for i := 0; i < len(v.Params) && i < len(ft.Params); i++ {
				if v.Params[i] != ft.Params[i] {
					return op.EmitOpError("var_callee_type parameter type mismatch: '%s' != '%s'", v.Params[i], ft.Params[i])
				}
			}
		}
	} else if ft.Variadic {
		return op.EmitOpError("missing var_callee_type attribute for vararg call")
	}
	if len(args) != len(ft.Params) && !(ft.Variadic && len(args) >= len(ft.Params)) {
		return op.EmitOpError("incorrect number of operands (%d) for callee (expecting: %d)", len(args), len(ft.Params))
	}
	for i, t := range ft.Params {
		if args[i].Type() != t {
			return op.EmitOpError("operand type mismatch for operand %d: '%s' != '%s'", i, args[i].Type(), t)
		}
	}
	results := ft.Results()
	switch {
	case len(results) == 0 && op.NumResults() > 0:
		return op.EmitOpError("expected function call to produce no value")
	case len(results) == 1 && op.NumResults() == 0:
		return op.EmitOpError("expected function call to produce a value")
	case len(results) == 1 && op.Result(0).Type() != results[0]:
		return op.EmitOpError("result type mismatch: '%s' != '%s'", op.Result(0).Type(), results[0])
	}
	return nil
}

func verifyAddressOf(op *ir.Operation) error {
	ref, _ := op.Attr("global_name").(*ir.SymbolRefAttr)
	if ref == nil {
		return nil
	}
	target := ir.ResolveSymbolRef(op, ref)
	if target == nil || (target.Name() != "llvm.mlir.global" && target.Name() != "llvm.func") {
		return op.EmitOpError("must reference a global defined by 'llvm.mlir.global', 'llvm.mlir.alias' or 'llvm.func' or 'llvm.mlir.ifunc'")
	}
	if target.Name() == "llvm.mlir.global" {
		as, _ := PtrAddrSpace(op.Result(0).Type())
		if as != target.IntAttrOf("addr_space", 0) {
			return op.EmitOpError("pointer address space must match address space of the referenced global or alias")
		}
	}
	return nil
}

func parseGlobal(p *ir.Parser, st *ir.OperationState) error {
	linkage := "external"
	if kw, ok := p.ParseOptionalAnyKeyword(); ok && kw != "constant" {
		if !Linkage.isValue(kw) {
			return p.Errorf("custom op 'llvm.mlir.global' expected a linkage (%s), got '%s'", strings.Join(Linkage.values, ", "), kw)
		}
		linkage = kw
		if p.ParseOptionalKeyword("constant") {
			st.AddAttr("constant", ir.Unit)
		}
	} else if ok {
		st.AddAttr("constant", ir.Unit)
	}
	name, err := p.ParseSymbolName()
	if err != nil {
		return err
	}
	if err := p.ParsePunct("("); err != nil {
		return err
	}
	var value ir.Attribute
	if !p.IsPunct(")") {
		if value, err = p.ParseAttribute(nil); err != nil {
			return err
		}
	}
	if err := p.ParsePunct(")"); err != nil {
		return err
	}
	st.AddAttr("linkage", Linkage.Attr(linkage))
	st.AddAttr("sym_name", ir.Str(name))
	st.AddAttr("unnamed_addr", ir.IntAttr(0, ir.I64))
	if value != nil {
		st.AddAttr("value", value)
	}
	st.AddAttr("visibility_", ir.IntAttr(0, ir.I64))
	if err := p.ParseOptionalAttrDict(st); err != nil {
		return err
	}
	if !slices.ContainsFunc(st.Attrs, func(a ir.NamedAttr) bool { return a.Name == "addr_space" }) {
		st.AddAttr("addr_space", ir.IntAttr(0, ir.I32))
	}
	var t ir.Type
	if p.ParseOptionalPunct(":") {
		if t, err = p.ParseType(); err != nil {
			return err
		}
	} else if s, ok := value.(*ir.StringAttr); ok {
		t = Array(int64(len(s.Value)), ir.I8)
	} else {
		return p.Errorf("type can only be omitted for string globals")
	}
	st.AddAttr("global_type", ir.TypeAttrOf(t))
	r := st.AddRegion()
	if p.IsPunct("{") {
		return p.ParseRegion(r, nil)
	}
	return nil
}

func printGlobal(p *ir.Printer, op *ir.Operation) {
	p.Write(" ")
	if l := Linkage.Value(op.Attr("linkage")); l != "" {
		p.Write(l + " ")
	}
	if op.HasAttr("constant") {
		p.Write("constant ")
	}
	p.PrintSymbolName(op.SymbolName())
	p.Write("(")
	value := op.Attr("value")
	if value != nil {
		p.PrintAttribute(value)
	}
	p.Write(")")
	elided := []string{"sym_name", "global_type", "value", "linkage", "constant"}
	if op.IntAttrOf("unnamed_addr", 0) == 0 {
		elided = append(elided, "unnamed_addr")
	}
	if op.IntAttrOf("visibility_", 0) == 0 {
		elided = append(elided, "visibility_")
	}
	p.PrintOptionalAttrDict(op.AllAttrs(), elided...)
	if _, isStr := value.(*ir.StringAttr); !isStr {
		p.Write(" : ")
		p.PrintType(GlobalType(op))
	}
	if r := op.Region(0); !r.Empty() {
		p.Write(" ")
		p.PrintRegion(r, false, true, false)
	}
}

// GlobalType returns the type of an llvm.mlir.global.
func GlobalType(op *ir.Operation) ir.Type {
	if t, ok := op.Attr("global_type").(*ir.TypeAttr); ok {
		return t.Value
	}
	return nil
}

func verifyGlobal(op *ir.Operation) error {
	if s, ok := op.Attr("value").(*ir.StringAttr); ok {
		a := ArrayOf(GlobalType(op))
		if a == nil || a.N != int64(len(s.Value)) || !ir.IsIntegerOfWidth(a.Elem, 8) {
			return op.EmitOpError("requires an i8 array type of the length equal to that of the string attribute")
		}
	}
	return nil
}

// StringGlobalAddressed returns the text of the string llvm.mlir.global
// whose llvm.mlir.addressof defines v (a printf format), if it is one.
func StringGlobalAddressed(v ir.Value) (string, bool) {
	return AddressedString(v.DefiningOp())
}

// AddressedString returns the text of the string llvm.mlir.global the
// llvm.mlir.addressof a takes the address of, if a is one and the global
// holds a string.
func AddressedString(a *ir.Operation) (string, bool) {
	if a == nil || a.Name() != "llvm.mlir.addressof" {
		return "", false
	}
	ref, _ := a.Attr("global_name").(*ir.SymbolRefAttr)
	if ref == nil {
		return "", false
	}
	g := ir.ResolveSymbolRef(a, ref)
	if g == nil || g.Name() != "llvm.mlir.global" {
		return "", false
	}
	s, ok := g.Attr("value").(*ir.StringAttr)
	if !ok {
		return "", false
	}
	return s.Value, true
}
