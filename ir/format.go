package ir

// Declarative assembly formats.
//
// An OpDef.Format string describes an op's custom syntax as a sequence of
// elements, in the same spirit as MLIR's ODS assembly formats (so upstream
// syntax can be transcribed directly):
//
//	$name                     an operand group, attribute, region or successor
//	`lit`                     a keyword or punctuation; ` ` forces a space,
//	                          `` suppresses one, `\n` starts a new line
//	type($x) qualified(...)   the type(s) of an operand or result group
//	type(results) type(operands)
//	functional-type(a, b)     (types of a) -> types of b
//	attr-dict                 remaining attributes; attr-dict-with-keyword
//	operands                  all operands
//	custom<Name>(args...)     a registered custom directive (ref($x) allowed)
//	( ... $x^ ... )?          optional group, present when anchor $x is
//	( ... ) : ( ... )?        optional group with an else branch
//
// Spacing follows upstream's rules exactly: it is decided statically per
// element, including the quirk that elements printing nothing still emit
// their leading space, so output matches mlir-opt byte for byte.

import (
	"fmt"
	"strings"
	"sync"
)

type fmtKind uint8

const (
	fkLiteral fmtKind = iota
	fkSpace           // ` ` (text " ") or `` (text "")
	fkNewline
	fkOperand
	fkResult // only inside type()/functional-type()
	fkAttr
	fkRegion
	fkSuccessor
	fkType
	fkFunctionalType
	fkAttrDict
	fkAllOperands
	fkAllResults // only inside type()
	fkCustom
	fkOptional
	fkRef
)

type fmtElem struct {
	kind      fmtKind
	text      string // literal text or custom directive name
	name      string // variable name
	qualified bool
	args      []*fmtElem // type/functional-type/custom arguments
	then, els []*fmtElem
	anchor    *fmtElem
	isAnchor  bool
	withKw    bool // attr-dict-with-keyword

	spaceBefore bool // printing: emit ' ' before the element
	// variable bindings
	argSpec  *ArgSpec
	attrSpec *AttrSpec
}

type format struct {
	def   *OpDef
	elems []*fmtElem
	// names of attributes spelled by the format (elided from attr-dict)
	used map[string]bool
}

// CustomDirective implements custom<Name>(...) in formats.
type CustomDirective struct {
	Parse func(p *Parser, fs *FormatState, args []string) error
	Print func(p *Printer, op *Operation, args []string)
}

var customDirectives = map[string]*CustomDirective{}

// RegisterCustomDirective makes custom<name>(...) available to formats.
// Args are passed as the variable names ("$x" for a variable, "type($x)" for
// its type, "ref($x)" for a reference), so one directive can serve many ops.
func RegisterCustomDirective(name string, d *CustomDirective) {
	customDirectives[name] = d
}

// FormatState collects what a format parse has read so far; custom
// directives read and fill it.
type FormatState struct {
	St       *OperationState
	Operands map[string][]UnresolvedOperand
	Types    map[string][]Type // by operand or result group name
	Regions  map[string][]*Region
	Succs    map[string][]*Block
	// RegionArgs declares entry-block arguments for regions parsed later.
	RegionArgs map[string][]Argument
}

// compileFormat parses a format string for def.
func compileFormat(def *OpDef, src string) (*format, error) {
	c := &fmtCompiler{TextScanner: TextScanner{Src: src}, def: def}
	elems, err := c.parseElems(false)
	if err != nil {
		return nil, err
	}
	if c.Pos < len(c.Src) {
		return nil, fmt.Errorf("unexpected %q at %d", c.Src[c.Pos:], c.Pos)
	}
	f := &format{def: def, elems: elems, used: map[string]bool{}}
	f.collectUsed(elems)
	shouldEmitSpace, lastWasPunct := true, false
	computeSpacing(elems, &shouldEmitSpace, &lastWasPunct)
	return f, nil
}

func (f *format) collectUsed(es []*fmtElem) {
	for _, e := range es {
		if e.kind == fkAttr {
			f.used[e.name] = true
		}
		if e.kind == fkCustom {
			for _, a := range e.args {
				if a.kind == fkAttr {
					f.used[a.name] = true
				}
			}
		}
		f.collectUsed(e.then)
		f.collectUsed(e.els)
	}
}

type fmtCompiler struct {
	TextScanner
	def *OpDef
}

func (c *fmtCompiler) ident() string {
	return c.Ident(func(ch byte) bool { return isIDStart(ch) || isDigit(ch) || ch == '-' || ch == '_' })
}

func (c *fmtCompiler) parseElems(inGroup bool) ([]*fmtElem, error) {
	var es []*fmtElem
	for {
		c.SkipSpace()
		if c.Pos >= len(c.Src) || (inGroup && c.Peek(")")) {
			return es, nil
		}
		e, err := c.parseElem()
		if err != nil {
			return nil, err
		}
		if c.Eat("^") {
			e.isAnchor = true
		}
		es = append(es, e)
	}
}

func (c *fmtCompiler) parseElem() (*fmtElem, error) {
	c.SkipSpace()
	switch {
	case c.Eat("`"):
		end := strings.IndexByte(c.Src[c.Pos:], '`')
		if end < 0 {
			return nil, fmt.Errorf("unterminated literal")
		}
		lit := c.Src[c.Pos : c.Pos+end]
		c.Pos += end + 1
		switch lit {
		case " ", "":
			return &fmtElem{kind: fkSpace, text: lit}, nil
		case `\n`:
			return &fmtElem{kind: fkNewline}, nil
		}
		return &fmtElem{kind: fkLiteral, text: lit}, nil
	case c.Eat("$"):
		return c.variable(c.ident())
	case c.Eat("("):
		then, err := c.groupBody("optional")
		if err != nil {
			return nil, err
		}
		g := &fmtElem{kind: fkOptional, then: then}
		if c.Eat(":") {
			if !c.Eat("(") {
				return nil, fmt.Errorf("expected '(' for else group")
			}
			if g.els, err = c.groupBody("else"); err != nil {
				return nil, err
			}
		}
		if !c.Eat("?") {
			return nil, fmt.Errorf("expected '?' after optional group")
		}
		for _, e := range g.then {
			if e.isAnchor {
				g.anchor = e
			}
		}
		if g.anchor == nil {
			return nil, fmt.Errorf("optional group has no anchor (^)")
		}
		return g, nil
	}
	kw := c.ident()
	switch kw {
	case "attr-dict":
		return &fmtElem{kind: fkAttrDict}, nil
	case "attr-dict-with-keyword":
		return &fmtElem{kind: fkAttrDict, withKw: true}, nil
	case "operands":
		return &fmtElem{kind: fkAllOperands}, nil
	case "results":
		return &fmtElem{kind: fkAllResults}, nil
	case "type", "qualified":
		if !c.Eat("(") {
			return nil, fmt.Errorf("expected '(' after %s", kw)
		}
		var inner *fmtElem
		var err error
		if kw == "qualified" {
			inner, err = c.parseElem()
			if err != nil {
				return nil, err
			}
			inner.qualified = true
		} else {
			arg, err := c.parseElem()
			if err != nil {
				return nil, err
			}
			inner = &fmtElem{kind: fkType, args: []*fmtElem{arg}}
		}
		if !c.Eat(")") {
			return nil, fmt.Errorf("expected ')' after %s", kw)
		}
		return inner, nil
	case "functional-type":
		args, err := c.directiveArgs(2)
		return &fmtElem{kind: fkFunctionalType, args: args}, err
	case "ref":
		args, err := c.directiveArgs(1)
		return &fmtElem{kind: fkRef, args: args}, err
	case "custom":
		if !c.Eat("<") {
			return nil, fmt.Errorf("expected '<' after custom")
		}
		name := c.ident()
		if !c.Eat(">") || !c.Eat("(") {
			return nil, fmt.Errorf("expected '>(' in custom directive")
		}
		e := &fmtElem{kind: fkCustom, text: name}
		for !c.Eat(")") {
			a, err := c.parseElem()
			if err != nil {
				return nil, err
			}
			e.args = append(e.args, a)
			c.Eat(",")
		}
		if _, ok := customDirectives[name]; !ok {
			return nil, fmt.Errorf("unknown custom directive %q", name)
		}
		return e, nil
	}
	return nil, fmt.Errorf("unknown format element %q at %d", kw, c.Pos)
}

// groupBody parses the elements of an optional or else group after its
// '(', and the ')'.
func (c *fmtCompiler) groupBody(which string) ([]*fmtElem, error) {
	es, err := c.parseElems(true)
	if err != nil {
		return nil, err
	}
	if !c.Eat(")") {
		return nil, fmt.Errorf("expected ')' in %s group", which)
	}
	return es, nil
}

// directiveArgs parses the n comma-separated elements of a directive,
// `(a, b)`.
func (c *fmtCompiler) directiveArgs(n int) ([]*fmtElem, error) {
	if !c.Eat("(") {
		return nil, fmt.Errorf("expected '('")
	}
	args := make([]*fmtElem, n)
	for i := range args {
		if i > 0 && !c.Eat(",") {
			return nil, fmt.Errorf("expected ','")
		}
		a, err := c.parseElem()
		if err != nil {
			return nil, err
		}
		args[i] = a
	}
	if !c.Eat(")") {
		return nil, fmt.Errorf("expected ')'")
	}
	return args, nil
}

func (c *fmtCompiler) variable(name string) (*fmtElem, error) {
	d := c.def
	for i := range d.Operands {
		if d.Operands[i].Name == name {
			return &fmtElem{kind: fkOperand, name: name, argSpec: &d.Operands[i]}, nil
		}
	}
	for i := range d.Results {
		if d.Results[i].Name == name {
			return &fmtElem{kind: fkResult, name: name, argSpec: &d.Results[i]}, nil
		}
	}
	for i := range d.Attrs {
		if d.Attrs[i].Name == name {
			return &fmtElem{kind: fkAttr, name: name, attrSpec: &d.Attrs[i]}, nil
		}
	}
	for _, r := range d.Regions {
		if r.Name == name {
			return &fmtElem{kind: fkRegion, name: name}, nil
		}
	}
	if name == "successors" || strings.HasPrefix(name, "dest") || strings.HasSuffix(name, "Dest") {
		return &fmtElem{kind: fkSuccessor, name: name}, nil
	}
	return nil, fmt.Errorf("unknown variable $%s", name)
}

// computeSpacing decides, statically and in order, which elements print a
// leading space. Optional groups thread the state through the then branch
// and then the else branch, whatever is present at run time.
func computeSpacing(es []*fmtElem, shouldEmitSpace, lastWasPunct *bool) {
	for _, e := range es {
		switch e.kind {
		case fkLiteral:
			e.spaceBefore = *shouldEmitSpace && shouldEmitSpaceBefore(e.text, *lastWasPunct)
			*shouldEmitSpace = len(e.text) != 1 || !strings.ContainsRune("<({[", rune(e.text[0]))
			*lastWasPunct = e.text[0] != '_' && !isAlpha(e.text[0])
		case fkSpace:
			if e.text == " " {
				*lastWasPunct = false
			} else {
				*lastWasPunct = true
			}
			*shouldEmitSpace = false
		case fkNewline:
		case fkOptional:
			computeSpacing(e.then, shouldEmitSpace, lastWasPunct)
			computeSpacing(e.els, shouldEmitSpace, lastWasPunct)
		case fkAttrDict:
			*lastWasPunct = false
		default:
			if e.kind == fkAttr && e.attrSpec != nil && isUnitSpec(e.attrSpec) {
				// Unit attributes print nothing: the group's literal stands for them.
				continue
			}
			e.spaceBefore = *shouldEmitSpace || !*lastWasPunct
			*lastWasPunct = false
			*shouldEmitSpace = true
		}
	}
}

func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func shouldEmitSpaceBefore(value string, lastWasPunct bool) bool {
	if len(value) != 1 && value != "->" {
		return true
	}
	if lastWasPunct {
		return !strings.ContainsRune(">)}],", rune(value[0]))
	}
	return !strings.ContainsRune("<>(){}[],", rune(value[0]))
}

func isUnitSpec(a *AttrSpec) bool { return a.Constraint.Desc == UnitAttrC.Desc }

// --- printing -----------------------------------------------------------

func (f *format) print(p *Printer, op *Operation) {
	f.printElems(p, op, f.elems)
}

func (f *format) printElems(p *Printer, op *Operation, es []*fmtElem) {
	for _, e := range es {
		f.printElem(p, op, e)
	}
}

func (f *format) printElem(p *Printer, op *Operation, e *fmtElem) {
	if e.kind == fkOptional {
		if f.anchorPresent(op, e.anchor) {
			for _, c := range e.then {
				f.printElem(p, op, c)
			}
		} else {
			for _, c := range e.els {
				f.printElem(p, op, c)
			}
		}
		return
	}
	if e.spaceBefore {
		p.WriteByte(' ')
	}
	switch e.kind {
	case fkLiteral:
		p.Write(e.text)
	case fkSpace:
		p.Write(e.text)
	case fkNewline:
		p.PrintNewline()
	case fkOperand:
		p.PrintOperands(op.OperandGroup(e.name))
	case fkAllOperands:
		p.PrintOperands(op.Operands())
	case fkAttr:
		a := op.Attr(e.name)
		if a == nil && e.attrSpec != nil && !e.attrSpec.Optional {
			// An absent defaulted attribute reads as its default (as
			// upstream's getter does), so a required position prints it.
			a = e.attrSpec.Default
		}
		if a == nil || isUnitSpec(e.attrSpec) {
			return
		}
		if e.attrSpec.Syntax != nil {
			p.Write(e.attrSpec.Syntax.Print(a))
		} else {
			p.PrintAttribute(a)
		}
	case fkRegion:
		for i, r := range f.regionsNamed(op, e.name) {
			if i > 0 {
				p.Write(", ")
			}
			p.PrintRegion(r, true, true, false)
		}
	case fkSuccessor:
		for i, b := range op.Successors() {
			if i > 0 {
				p.Write(", ")
			}
			p.PrintSuccessor(b)
		}
	case fkType:
		p.PrintTypes(f.typesOf(op, e.args[0]))
	case fkFunctionalType:
		p.PrintFunctionalTypes(f.typesOf(op, e.args[0]), f.typesOf(op, e.args[1]))
	case fkAttrDict:
		elided := []string{"operandSegmentSizes", "resultSegmentSizes"}
		for n := range f.used {
			elided = append(elided, n)
		}
		for _, spec := range f.def.Attrs {
			if spec.Default != nil && op.Attr(spec.Name) == spec.Default {
				elided = append(elided, spec.Name)
			}
		}
		if e.withKw {
			p.PrintOptionalAttrDictWithKeyword(op.AllAttrs(), elided...)
		} else {
			p.PrintOptionalAttrDict(op.AllAttrs(), elided...)
		}
	case fkCustom:
		customDirectives[e.text].Print(p, op, argNames(e.args))
	}
}

func argNames(args []*fmtElem) []string {
	names := make([]string, len(args))
	for i, a := range args {
		switch a.kind {
		case fkType:
			names[i] = "type($" + a.args[0].name + ")"
		case fkRef:
			names[i] = "ref($" + a.args[0].name + ")"
		case fkAttrDict:
			names[i] = "attr-dict"
		default:
			names[i] = "$" + a.name
		}
	}
	return names
}

func (f *format) regionsNamed(op *Operation, name string) []*Region {
	for i, r := range f.def.Regions {
		if r.Name == name {
			if r.Variadic {
				return op.Regions()[i:]
			}
			if i < op.NumRegions() {
				return []*Region{op.Region(i)}
			}
		}
	}
	return nil
}

func (f *format) typesOf(op *Operation, e *fmtElem) []Type {
	switch e.kind {
	case fkOperand:
		return valueTypes(op.OperandGroup(e.name))
	case fkResult:
		return valueTypes(op.ResultGroup(e.name))
	case fkAllOperands:
		return op.OperandTypes()
	case fkAllResults:
		return op.ResultTypes()
	}
	return nil
}

func valueTypes(vs []Value) []Type {
	ts := make([]Type, len(vs))
	for i, v := range vs {
		ts[i] = v.Type()
	}
	return ts
}

func (f *format) anchorPresent(op *Operation, a *fmtElem) bool {
	switch a.kind {
	case fkOperand:
		return len(op.OperandGroup(a.name)) > 0
	case fkResult:
		return len(op.ResultGroup(a.name)) > 0
	case fkAttr:
		v := op.Attr(a.name)
		if v == nil {
			return false
		}
		// A default-valued attribute equal to its default is elided, as upstream does.
		if a.attrSpec != nil && a.attrSpec.Default != nil && v == a.attrSpec.Default {
			return false
		}
		return true
	case fkRegion:
		for _, r := range f.regionsNamed(op, a.name) {
			if !r.Empty() {
				return true
			}
		}
		return false
	case fkType:
		return f.anchorPresent(op, a.args[0])
	case fkCustom:
		for _, arg := range a.args {
			if arg.kind != fkRef && f.anchorPresent(op, arg) {
				return true
			}
		}
		return false
	case fkSuccessor:
		return len(op.Successors()) > 0
	}
	return true
}

// --- parsing ------------------------------------------------------------

// formatStates recycles FormatStates: every op parsed with a declarative
// format needs one, and their maps dominate the allocations otherwise.
var formatStates = sync.Pool{New: func() any {
	return &FormatState{
		Operands:   map[string][]UnresolvedOperand{},
		Types:      map[string][]Type{},
		Regions:    map[string][]*Region{},
		Succs:      map[string][]*Block{},
		RegionArgs: map[string][]Argument{},
	}
}}

func (f *format) parse(p *Parser, st *OperationState) error {
	fs := formatStates.Get().(*FormatState)
	defer func() {
		fs.St = nil
		clear(fs.Operands)
		clear(fs.Types)
		clear(fs.Regions)
		clear(fs.Succs)
		clear(fs.RegionArgs)
		formatStates.Put(fs)
	}()
	fs.St = st
	if err := f.parseElems(p, fs, f.elems); err != nil {
		return err
	}
	return f.finish(p, fs)
}

func (f *format) parseElems(p *Parser, fs *FormatState, es []*fmtElem) error {
	for _, e := range es {
		if err := f.parseElem(p, fs, e); err != nil {
			return err
		}
	}
	return nil
}

// groupStarts reports whether the first element of an optional group is
// present in the input.
func (f *format) groupStarts(p *Parser, e *fmtElem) bool {
	switch e.kind {
	case fkLiteral:
		if isKeywordLiteral(e.text) {
			return p.IsKeyword(e.text)
		}
		return p.IsPunct(e.text)
	case fkOperand, fkAllOperands:
		return p.tok.Kind == TokPercent
	case fkAttr:
		if e.attrSpec.Syntax != nil && e.attrSpec.Syntax.CanStart != nil {
			return e.attrSpec.Syntax.CanStart(p)
		}
		if e.attrSpec.Constraint.Desc == SymbolNameC.Desc {
			return p.tok.Kind == TokAt
		}
		// A '{' where the attribute could start is the attr-dict when the
		// attribute cannot be a dictionary (nvvm.barrier {foo} otherwise
		// took {foo} as its reduction, so tmac printed a barrier with
		// discardable attributes as text it could not read back).
		if p.IsPunct("{") && e.attrSpec.Constraint.OK != nil && !e.attrSpec.Constraint.OK(Dict(nil)) {
			return false
		}
		_, ok, _ := p.peekAttribute()
		return ok
	case fkRegion:
		return p.IsPunct("{")
	case fkSuccessor:
		return p.tok.Kind == TokCaret
	case fkType:
		return p.isTypeStart()
	case fkCustom:
		// A custom directive first in a group decides by its own first
		// token; the common case is an operand or keyword.
		return p.tok.Kind == TokPercent || p.tok.Kind == TokBareID || p.IsPunct("[") || p.IsPunct("(")
	case fkAttrDict:
		return p.IsPunct("{")
	}
	return false
}

// peekAttribute reports whether an attribute starts here without consuming.
func (p *Parser) peekAttribute() (Attribute, bool, error) {
	switch p.tok.Kind {
	case TokInt, TokFloat, TokString, TokAt, TokHash, TokBang:
		return nil, true, nil
	case TokPunct:
		return nil, p.tok.Text == "[" || p.tok.Text == "{" || p.tok.Text == "-", nil
	case TokBareID:
		switch p.tok.Text {
		case "true", "false", "unit", "dense", "array", "strided", "affine_map":
			return nil, true, nil
		}
		return nil, isBuiltinTypeKeyword(p.tok.Text), nil
	}
	return nil, false, nil
}

func (f *format) parseElem(p *Parser, fs *FormatState, e *fmtElem) error {
	switch e.kind {
	case fkOptional:
		first := e.then[0]
		if first.kind == fkSpace || first.kind == fkNewline {
			first = e.then[1]
		}
		if f.groupStarts(p, first) {
			// A unit-attribute anchor is set by the group's presence.
			if e.anchor.kind == fkAttr && isUnitSpec(e.anchor.attrSpec) {
				fs.St.AddAttr(e.anchor.name, Unit)
			}
			return f.parseElems(p, fs, e.then)
		}
		return f.parseElems(p, fs, e.els)
	case fkLiteral:
		return p.ParseLiteral(e.text)
	case fkSpace, fkNewline:
		return nil
	case fkOperand:
		switch e.argSpec.Kind {
		case Single:
			u, err := p.ParseOperand()
			if err != nil {
				return err
			}
			fs.Operands[e.name] = []UnresolvedOperand{u}
		case Optional:
			if p.peekIsResultList() {
				break // the next op's results: no operand here
			}
			u, ok, err := p.ParseOptionalOperand()
			if err != nil {
				return err
			}
			if ok {
				fs.Operands[e.name] = []UnresolvedOperand{u}
			}
		case Variadic:
			if p.peekIsResultList() {
				break
			}
			us, err := p.ParseOperandList(DelimNone)
			if err != nil {
				return err
			}
			fs.Operands[e.name] = us
		}
	case fkAllOperands:
		if p.peekIsResultList() {
			break
		}
		us, err := p.ParseOperandList(DelimNone)
		if err != nil {
			return err
		}
		fs.Operands["$operands"] = us
	case fkAttr:
		if isUnitSpec(e.attrSpec) {
			return nil
		}
		var a Attribute
		var err error
		switch {
		case e.attrSpec.Syntax != nil:
			a, err = e.attrSpec.Syntax.Parse(p)
		case e.attrSpec.Constraint.Desc == SymbolNameC.Desc:
			var s string
			s, err = p.ParseSymbolName()
			a = Str(s)
		case p.tok.Kind == TokString:
			// As upstream's generated parsers read a string attribute: a
			// colon after it belongs to the op's format, not to the string.
			var s string
			s, err = p.ParseString()
			a = Str(s)
		default:
			a, err = p.ParseAttribute(nil)
		}
		if err != nil {
			return err
		}
		fs.St.AddAttr(e.name, a)
	case fkRegion:
		r := fs.St.AddRegion()
		if err := p.ParseRegion(r, fs.RegionArgs[e.name]); err != nil {
			return err
		}
		fs.Regions[e.name] = append(fs.Regions[e.name], r)
	case fkSuccessor:
		return p.ParseCommaSeparatedList(DelimNone, func() error {
			b, err := p.ParseSuccessor()
			fs.St.Successors = append(fs.St.Successors, b)
			return err
		})
	case fkType:
		return f.parseTypeElem(p, fs, e.args[0])
	case fkFunctionalType:
		ft, err := p.ParseFunctionType()
		if err != nil {
			return err
		}
		fs.Types[typeKey(e.args[0])] = ft.Inputs
		fs.Types[typeKey(e.args[1])] = ft.Results
	case fkAttrDict:
		tok := p.tok
		first := len(fs.St.Attrs)
		var err error
		if e.withKw {
			err = p.ParseOptionalAttrDictWithKeyword(fs.St)
		} else {
			err = p.ParseOptionalAttrDict(fs.St)
		}
		if err != nil {
			return err
		}
		// Like upstream's generated parsers, check the inherent attributes
		// given in the dictionary against their constraints.
		// Only the dictionary's entries: attributes parsed by other format
		// elements are checked by the verifier.
		for _, a := range fs.St.Attrs[first:] {
			if spec := f.def.AttrSpec(a.Name); spec != nil && spec.Constraint.OK != nil && !spec.Constraint.OK(a.Value) {
				return p.CustomOpErrorAt(tok, "'%s' op attribute '%s' failed to satisfy constraint: %s", f.def.Name, a.Name, spec.Constraint.Desc)
			}
		}
		return nil
	case fkCustom:
		return customDirectives[e.text].Parse(p, fs, argNames(e.args))
	}
	return nil
}

func typeKey(e *fmtElem) string {
	switch e.kind {
	case fkAllOperands:
		return "$operands"
	case fkAllResults:
		return "$results"
	}
	return e.name
}

func (f *format) parseTypeElem(p *Parser, fs *FormatState, target *fmtElem) error {
	kind := Single
	if target.argSpec != nil {
		kind = target.argSpec.Kind
	}
	if target.kind == fkAllOperands || target.kind == fkAllResults {
		kind = Variadic
	}
	key := typeKey(target)
	switch kind {
	case Single:
		tok := p.tok
		t, err := p.ParseType()
		if err != nil {
			return err
		}
		if target.argSpec != nil && (target.argSpec.Type.Kind != "" || target.argSpec.Type.KindOK != nil) {
			c := target.argSpec.Type
			ok := c.OK
			if c.KindOK != nil {
				ok = c.KindOK
			}
			if ok != nil && !ok(t) {
				if c.Kind == "" {
					return p.CustomOpErrorAt(tok, "invalid kind of type specified")
				}
				return p.CustomOpErrorAt(tok, "invalid kind of type specified: expected %s, but found '%s'", c.Kind, t)
			}
		}
		fs.Types[key] = []Type{t}
	case Optional:
		t, ok, err := p.ParseOptionalType()
		if err != nil {
			return err
		}
		if ok {
			fs.Types[key] = []Type{t}
		} else {
			fs.Types[key] = nil
		}
	case Variadic:
		var ts []Type
		if p.isTypeStart() {
			var err error
			if ts, err = p.ParseTypeList(); err != nil {
				return err
			}
		}
		fs.Types[key] = ts
	}
	return nil
}

// finish resolves operand and result types (applying the op's type rules),
// resolves operands in declaration order and sets segment sizes.
func (f *format) finish(p *Parser, fs *FormatState) error {
	def := f.def
	st := fs.St
	if us, ok := fs.Operands["$operands"]; ok {
		ts, ok := fs.Types["$operands"]
		if !ok {
			return p.Errorf("format of '%s' has no types for its operands", def.Name)
		}
		if err := p.ResolveOperands(us, ts, st); err != nil {
			return err
		}
	}
	// Apply fixed types and rules until nothing changes.
	known := func(name string) bool { _, ok := fs.Types[name]; return ok }
	count := func(name string) int {
		if us, ok := fs.Operands[name]; ok {
			return len(us)
		}
		// An optional or variadic operand group the text left out.
		for _, spec := range def.Operands {
			if spec.Name == name {
				return 0
			}
		}
		return -1
	}
	for changed := true; changed; {
		changed = false
		for _, r := range def.TypeRules {
			if known(r.Target) || !known(r.From) {
				continue
			}
			from := fs.Types[r.From]
			n := count(r.Target)
			var out []Type
			for i := 0; ; i++ {
				if n >= 0 && i >= n {
					break
				}
				if n < 0 && i >= max(len(from), 1) {
					break
				}
				src := from[min(i, len(from)-1)]
				if len(from) == 0 {
					break
				}
				t := src
				if r.Fn != nil {
					var err error
					if t, err = r.Fn(src); err != nil {
						// Upstream reports a failed type inference at the op.
						return Errorf(fs.St.Loc, "%s", err)
					}
				}
				out = append(out, t)
			}
			if n < 0 && len(from) == 0 {
				out = nil
			}
			fs.Types[r.Target] = out
			changed = true
		}
	}
	if _, all := fs.Operands["$operands"]; !all {
		var segs []int64
		for _, spec := range def.Operands {
			us := fs.Operands[spec.Name]
			segs = append(segs, int64(len(us)))
			ts, ok := fs.Types[spec.Name]
			if !ok {
				if spec.Type.Fixed != nil {
					ts = make([]Type, len(us))
					for i := range ts {
						ts[i] = spec.Type.Fixed
					}
				} else if len(us) > 0 {
					return p.Errorf("cannot infer the type of operand '%s' of '%s'", spec.Name, def.Name)
				}
			}
			if len(ts) == 1 && len(us) > 1 {
				for len(ts) < len(us) {
					ts = append(ts, ts[0])
				}
			}
			if err := p.ResolveOperands(us, ts, st); err != nil {
				return err
			}
		}
		if def.Traits&AttrSizedOperandSegments != 0 {
			st.AddAttr("operandSegmentSizes", DenseI32Array(segs...))
		}
	}
	if ts, ok := fs.Types["$results"]; ok {
		st.ResultTypes = ts
	} else {
		var segs []int64
		for _, spec := range def.Results {
			ts, ok := fs.Types[spec.Name]
			if !ok {
				if spec.Type.Fixed != nil && spec.Kind == Single {
					ts = []Type{spec.Type.Fixed}
				} else if spec.Kind == Single {
					return p.Errorf("cannot infer the type of result '%s' of '%s'", spec.Name, def.Name)
				}
			}
			segs = append(segs, int64(len(ts)))
			st.ResultTypes = append(st.ResultTypes, ts...)
		}
		if def.Traits&AttrSizedResultSegments != 0 {
			st.AddAttr("resultSegmentSizes", DenseI32Array(segs...))
		}
	}
	return nil
}
