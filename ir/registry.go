package ir

import (
	"fmt"
	"sort"
	"strings"
	"sync"
)

// Trait is a set of structural properties of an op.
type Trait uint64

const (
	// Terminator ops end a block.
	Terminator Trait = 1 << iota
	// IsolatedFromAbove ops' regions cannot use values defined outside.
	IsolatedFromAbove
	// SymbolTable ops hold symbols (module, gpu.module).
	SymbolTable
	// Symbol ops define a symbol through their sym_name attribute.
	Symbol
	// NoTerminator ops have single-block regions without a terminator.
	NoTerminator
	// SingleBlock ops have regions of at most one block.
	SingleBlock
	// Pure ops have no side effects (they may be CSE'd and removed if unused).
	Pure
	// Commutative ops' operands can be reordered.
	Commutative
	// ConstantLike ops materialise their "value" attribute.
	ConstantLike
	// ReturnLike terminators return control to the parent op.
	ReturnLike
	// AttrSizedOperandSegments ops carry operandSegmentSizes.
	AttrSizedOperandSegments
	// AttrSizedResultSegments ops carry resultSegmentSizes.
	AttrSizedResultSegments
	// SameOperandsAndResultType ops have all operand and result types equal.
	SameOperandsAndResultType
	// RecursiveSideEffects ops have the effects of the ops in their regions.
	RecursiveSideEffects
	// GraphRegions ops have regions without dominance (module bodies).
	GraphRegions
	// NoMemoryEffect ops read and write no memory but are not Pure (they
	// may not be speculated: an integer division by zero).
	NoMemoryEffect
	// SameVariadicResultSize ops split the results left by their single
	// results equally among their variadic groups (upstream's trait of the
	// same name: memref.extract_strided_metadata's sizes and strides).
	SameVariadicResultSize
)

// ArgKind says how many values an operand or result spec matches.
type ArgKind uint8

const (
	Single ArgKind = iota
	Optional
	Variadic
)

// TypeConstraint restricts the type of an operand or result. Desc is the
// wording upstream uses in "must be ..." messages.
type TypeConstraint struct {
	Desc string
	OK   func(Type) bool
	// Fixed, if set, is the only type allowed; assembly formats may then
	// omit the type (upstream "buildable" types such as index).
	Fixed Type
	// Kind, if set, is the builtin type kind ("builtin.vector") that a
	// declarative format's type($x) must parse to; others are rejected with
	// upstream's "invalid kind of type specified" error.
	Kind string
	// KindOK, if set, is the kind test instead of OK (a class check looser
	// than the constraint); with an empty Kind the error has no
	// "expected ..." suffix (upstream's BaseMemRefType and similar).
	KindOK func(Type) bool
}

// AnyType accepts every type.
var AnyType = TypeConstraint{Desc: "any type", OK: func(Type) bool { return true }}

// ArgSpec declares an operand or a result.
type ArgSpec struct {
	Name string
	Kind ArgKind
	Type TypeConstraint
}

// AttrConstraint restricts an inherent attribute.
type AttrConstraint struct {
	Desc string
	OK   func(Attribute) bool
}

// AttrSpec declares an inherent attribute (a property).
type AttrSpec struct {
	Name       string
	Constraint AttrConstraint
	// Optional attributes may be absent. Default, if non-nil, is the value
	// an absent attribute has; upstream prints it in the generic form.
	Optional bool
	Default  Attribute
	// Syntax, if set, is how the attribute is written when it appears as a
	// $variable in an assembly format (a keyword enum, a symbol name, a
	// typeless integer). Nil means the full attribute syntax.
	Syntax *AttrSyntax
}

// AttrSyntax parses and prints an attribute's value inside a custom op form.
type AttrSyntax struct {
	Parse func(p *Parser) (Attribute, error)
	Print func(a Attribute) string
	// CanStart reports whether the current token can begin the value (for
	// optional attributes in optional groups).
	CanStart func(p *Parser) bool
}

// TypeRule says how to derive a type the assembly format does not spell:
// the types of Target are Fn(types of From), or equal to them if Fn is nil.
type TypeRule struct {
	Target, From string
	Fn           func(Type) (Type, error)
}

// RegionSpec declares a region.
type RegionSpec struct {
	Name     string
	Variadic bool
}

// OpDef defines an operation: its signature, traits, syntax and verifier.
type OpDef struct {
	Name    string
	Summary string
	Traits  Trait

	Operands   []ArgSpec
	Results    []ArgSpec
	Attrs      []AttrSpec
	Regions    []RegionSpec
	Successors int // number of successors (-1: variadic)

	// TypeRules derive operand and result types the format leaves out.
	TypeRules []TypeRule

	// ImplicitTerminator names the terminator that the custom form omits
	// when it has no operands (e.g. "scf.yield").
	ImplicitTerminator string
	// DefaultDialect is the dialect whose ops print without a prefix inside
	// this op's regions (func.func: "func").
	DefaultDialect string

	// Format is a declarative assembly format (see format.go). Parse and
	// Print, when set, take precedence.
	Format string
	Parse  func(p *Parser, st *OperationState) error
	Print  func(p *Printer, op *Operation)

	// VerifyProps, if set, runs before the generic checks: upstream reports
	// property conversion and attribute-constraint errors first.
	VerifyProps func(op *Operation) error
	// Parents, if set, are the ops this op must be directly nested in
	// (upstream HasParent / ParentOneOf), checked first.
	Parents []string
	// VerifyInvariants checks op-specific rules that upstream verifies
	// before the nested ops (ODS constraints, traits, verify()); it runs
	// after the generic checks and before the regions are verified.
	VerifyInvariants func(op *Operation) error
	// Verify checks op-specific rules after the generic checks passed.
	Verify func(op *Operation) error
	// ResultNames suggests SSA names for results when printing (%c0, %alloc).
	ResultNames func(op *Operation, name func(v Value, name string))
	// BlockArgNames suggests names for the entry block arguments of regions.
	BlockArgNames func(op *Operation, r *Region, name func(v Value, name string))
	// Fold, if set, returns constant attributes or values for the results
	// given constant operands (nil entries for non-constant operands).
	Fold func(op *Operation, operands []Attribute) []any
	// Effects are the op's memory effects (effects.go): which operands it
	// reads or writes and through which proxy.
	Effects []Effect
	// Semantics, if set, says what an elementwise op computes lane by
	// lane (semantics.go); folding, the interpreters and the emulator
	// evaluate the op through it.
	Semantics *Semantics

	// Doc is extra documentation: verifier rules and notes.
	Doc string

	unregistered bool
	format       *format
	inherent     map[string]bool
	// The positions of the single operands and results that precede every
	// optional or variadic group, by name (OperandNamed's fast path).
	fixedOperands, fixedResults map[string]int
}

// NameResults is a ResultNames that suggests names[i] for result i.
func NameResults(names ...string) func(op *Operation, name func(v Value, name string)) {
	return func(op *Operation, name func(v Value, name string)) {
		for i, n := range names {
			name(op.Result(i), n)
		}
	}
}

// Dialect returns the dialect prefix of the op name.
func (d *OpDef) Dialect() string {
	dl, _ := splitName(d.Name)
	return dl
}

// IsInherentAttr reports whether name is declared by the op definition.
func (d *OpDef) IsInherentAttr(name string) bool {
	if d.inherent == nil {
		return false
	}
	return d.inherent[name]
}

// AttrSpec returns the spec of an inherent attribute, or nil.
func (d *OpDef) AttrSpec(name string) *AttrSpec {
	for i := range d.Attrs {
		if d.Attrs[i].Name == name {
			return &d.Attrs[i]
		}
	}
	return nil
}

// Dialect defines a dialect's types and attributes. Ops register separately.
type Dialect struct {
	Name    string
	Summary string
	// ParseType parses the rest of `!dialect.mnemonic...` after the
	// mnemonic, or the body of `!dialect<mnemonic ...>`.
	ParseType func(p *Parser, mnemonic string) (Type, error)
	// ParseAttr parses the rest of `#dialect.mnemonic...`, or the body of
	// `#dialect<mnemonic ...>`.
	ParseAttr func(p *Parser, mnemonic string) (Attribute, error)
	// AllowUnknownOps accepts unregistered ops of this dialect in generic
	// form (upstream's nvvm does).
	AllowUnknownOps bool
	// VerifyOpAttr, if set, checks a discardable attribute named
	// `dialect.xxx` on any op; it runs before the op's own verification and
	// before the ops nested in it (upstream verifyOperationAttribute).
	VerifyOpAttr func(op *Operation, attr NamedAttr) error
}

var registry struct {
	sync.RWMutex
	ops      map[string]*OpDef
	dialects map[string]*Dialect
}

// RegisterDialect registers a dialect's type and attribute parsers.
func RegisterDialect(d *Dialect) {
	registry.Lock()
	defer registry.Unlock()
	if registry.dialects == nil {
		registry.dialects = map[string]*Dialect{}
	}
	registry.dialects[d.Name] = d
}

// LookupDialect returns a registered dialect, or nil.
func LookupDialect(name string) *Dialect {
	registry.RLock()
	defer registry.RUnlock()
	return registry.dialects[name]
}

// Dialects returns the registered dialect names, sorted.
func Dialects() []string {
	registry.RLock()
	defer registry.RUnlock()
	seen := map[string]bool{}
	for n := range registry.dialects {
		seen[n] = true
	}
	for _, d := range registry.ops {
		seen[d.Dialect()] = true
	}
	var names []string
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Register adds op definitions. It panics on a malformed definition, since
// that is a programming error found at start-up.
func Register(defs ...*OpDef) {
	registry.Lock()
	defer registry.Unlock()
	if registry.ops == nil {
		registry.ops = map[string]*OpDef{}
	}
	for _, d := range defs {
		if _, dup := registry.ops[d.Name]; dup {
			panic("ir: op registered twice: " + d.Name)
		}
		d.inherent = map[string]bool{}
		for _, a := range d.Attrs {
			d.inherent[a.Name] = true
		}
		if d.Traits&AttrSizedOperandSegments != 0 {
			d.inherent["operandSegmentSizes"] = true
		}
		if d.Traits&AttrSizedResultSegments != 0 {
			d.inherent["resultSegmentSizes"] = true
		}
		d.fixedOperands = fixedPositions(d.Operands, d.Traits&AttrSizedOperandSegments != 0)
		d.fixedResults = fixedPositions(d.Results, d.Traits&AttrSizedResultSegments != 0)
		if d.Format != "" {
			f, err := compileFormat(d, d.Format)
			if err != nil {
				panic(fmt.Sprintf("ir: bad format for %s: %v", d.Name, err))
			}
			d.format = f
		}
		registry.ops[d.Name] = d
	}
}

// fixedPositions maps the names of the single values that precede every
// optional or variadic group to their index; none when segment sizes place
// every group.
func fixedPositions(specs []ArgSpec, segmented bool) map[string]int {
	if segmented {
		return nil
	}
	m := map[string]int{}
	for i, s := range specs {
		if s.Kind != Single {
			break
		}
		m[s.Name] = i
	}
	return m
}

// LookupOp returns the definition of a registered op, or nil.
func LookupOp(name string) *OpDef {
	registry.RLock()
	defer registry.RUnlock()
	return registry.ops[name]
}

// RegisteredOps returns all op definitions sorted by name.
func RegisteredOps() []*OpDef {
	registry.RLock()
	defer registry.RUnlock()
	defs := make([]*OpDef, 0, len(registry.ops))
	for _, d := range registry.ops {
		defs = append(defs, d)
	}
	sort.Slice(defs, func(i, j int) bool { return defs[i].Name < defs[j].Name })
	return defs
}

var unregisteredDefs sync.Map // name -> *OpDef

func unregisteredDef(name string) *OpDef {
	if d, ok := unregisteredDefs.Load(name); ok {
		return d.(*OpDef)
	}
	d, _ := unregisteredDefs.LoadOrStore(name, &OpDef{Name: name, unregistered: true, Successors: -1})
	return d.(*OpDef)
}

// Common type constraints, with upstream's wording.
var (
	SignlessIntegerLike = TypeConstraint{Desc: "signless-integer-like", OK: func(t Type) bool {
		return IsSignlessIntOrIndex(elemOfVector(t))
	}}
	FloatLike = TypeConstraint{Desc: "floating-point-like", OK: func(t Type) bool {
		return IsFloat(elemOfVector(t))
	}}
	IndexOnly = TypeConstraint{Desc: "index", OK: IsIndex, Fixed: Index}
	I1Like    = TypeConstraint{Desc: "bool-like", OK: func(t Type) bool {
		return IsIntegerOfWidth(elemOfVector(t), 1)
	}}
	AnyMemRef = TypeConstraint{Desc: "memref of any type values", OK: func(t Type) bool {
		_, ok := t.(*MemRefType)
		return ok
	}, Kind: "builtin.memref"}
	AnyRankedOrUnrankedMemRef = TypeConstraint{Desc: "ranked or unranked memref of any type values", OK: func(t Type) bool {
		switch t.(type) {
		case *MemRefType, *UnrankedMemRefType:
			return true
		}
		return false
	}}
	AnySignlessInteger = TypeConstraint{Desc: "signless integer", OK: IsSignlessInteger}
	AnyFloat           = TypeConstraint{Desc: "floating-point", OK: IsFloat}
	AnyVector          = TypeConstraint{Desc: "vector of any type values", OK: func(t Type) bool {
		_, ok := t.(*VectorType)
		return ok
	}, Kind: "builtin.vector"}
)

// IntOfWidths accepts signless integers of the given widths ("32-bit signless integer").
func IntOfWidths(widths ...int) TypeConstraint {
	var parts []string
	for _, w := range widths {
		parts = append(parts, fmt.Sprintf("%d-bit signless integer", w))
	}
	return TypeConstraint{Desc: strings.Join(parts, " or "), OK: func(t Type) bool {
		for _, w := range widths {
			if IsIntegerOfWidth(t, w) {
				return true
			}
		}
		return false
	}}
}

// TypeIs accepts exactly one type (by its printed form).
func TypeIs(t Type) TypeConstraint {
	return TypeConstraint{Desc: t.String(), OK: func(x Type) bool { return x == t }, Fixed: t}
}

func elemOfVector(t Type) Type {
	if v, ok := t.(*VectorType); ok {
		return v.Elem
	}
	return t
}

// Common attribute constraints.
var (
	AnyAttr        = AttrConstraint{"any attribute", func(Attribute) bool { return true }}
	UnitAttrC      = AttrConstraint{"unit attribute", func(a Attribute) bool { _, ok := a.(*UnitAttr); return ok }}
	StringAttrC    = AttrConstraint{"string attribute", func(a Attribute) bool { _, ok := a.(*StringAttr); return ok }}
	SymbolNameC    = StringAttrC
	FlatSymbolRefC = AttrConstraint{"flat symbol reference attribute", func(a Attribute) bool {
		s, ok := a.(*SymbolRefAttr)
		return ok && len(s.Nested) == 0
	}}
	SymbolRefC = AttrConstraint{"symbol reference attribute", func(a Attribute) bool { _, ok := a.(*SymbolRefAttr); return ok }}
	TypeAttrC  = AttrConstraint{"any type attribute", func(a Attribute) bool { _, ok := a.(*TypeAttr); return ok }}
	ArrayAttrC = AttrConstraint{"array attribute", func(a Attribute) bool { _, ok := a.(*ArrayAttr); return ok }}
	DictAttrC  = AttrConstraint{"dictionary of named attribute values", func(a Attribute) bool { _, ok := a.(*DictAttr); return ok }}
	BoolAttrC  = AttrConstraint{"bool attribute", IsBool}
	I32AttrC   = IntAttrOfWidth(32)
	I64AttrC   = IntAttrOfWidth(64)
	IndexAttrC = AttrConstraint{"index attribute", func(a Attribute) bool {
		ia, ok := a.(*IntegerAttr)
		return ok && IsIndex(ia.Type())
	}}
	DenseI64ArrayC = DenseArrayOf(I64)
	DenseI32ArrayC = DenseArrayOf(I32)
	TypedAttrC     = AttrConstraint{"TypedAttr instance", func(a Attribute) bool { _, ok := a.(TypedAttr); return ok }}
)

// SymbolRefSyntax and FlatSymbolRefSyntax read a $symbol variable of an
// assembly format as upstream's typed attribute parser does: an attribute
// of another kind is "invalid kind of attribute specified" at parse time.
var (
	SymbolRefSyntax     = typedSymbolSyntax(SymbolRefC)
	FlatSymbolRefSyntax = typedSymbolSyntax(FlatSymbolRefC)
)

func typedSymbolSyntax(c AttrConstraint) *AttrSyntax {
	return &AttrSyntax{
		Parse: func(p *Parser) (Attribute, error) {
			tok := p.Tok()
			a, err := p.ParseAttribute(nil)
			if err != nil {
				return nil, err
			}
			if !c.OK(a) {
				return nil, p.CustomOpErrorAt(tok, "invalid kind of attribute specified")
			}
			return a, nil
		},
		Print:    func(a Attribute) string { return a.String() },
		CanStart: func(p *Parser) bool { return p.Tok().Kind == TokAt },
	}
}

// IntAttrOfWidth accepts signless integer attributes of width w.
func IntAttrOfWidth(w int) AttrConstraint {
	return AttrConstraint{fmt.Sprintf("%d-bit signless integer attribute", w), func(a Attribute) bool {
		ia, ok := a.(*IntegerAttr)
		return ok && IsIntegerOfWidth(ia.Type(), w)
	}}
}

// DenseArrayOf accepts array<elem: ...> attributes.
func DenseArrayOf(elem Type) AttrConstraint {
	return AttrConstraint{elem.String() + " dense array attribute", func(a Attribute) bool {
		da, ok := a.(*DenseArrayAttr)
		return ok && da.Elem == elem
	}}
}

// DialectAttrC accepts dialect attributes with the given dialect and name.
func DialectAttrC(desc, dialect, name string) AttrConstraint {
	return AttrConstraint{desc, func(a Attribute) bool {
		d, ok := a.(*DialectAttr)
		return ok && d.Dialect == dialect && d.Name == name
	}}
}

// DictArrayC accepts arrays of dictionaries (per-argument attributes).
var DictArrayC = AttrConstraint{Desc: "Array of dictionary attributes", OK: func(a Attribute) bool {
	arr, ok := a.(*ArrayAttr)
	if !ok {
		return false
	}
	for _, e := range arr.Elems {
		if _, ok := e.(*DictAttr); !ok {
			return false
		}
	}
	return true
}}

// FunctionTypeAttrC accepts type attributes holding a function type.
var FunctionTypeAttrC = AttrConstraint{Desc: "type attribute of function type", OK: func(a Attribute) bool {
	t, ok := a.(*TypeAttr)
	if !ok {
		return false
	}
	_, ok = t.Value.(*FunctionType)
	return ok
}}

// DictArrayOrNil returns the array of dictionaries (nil entries become {}),
// or nil when every dictionary is empty, as upstream omits such arrays.
func DictArrayOrNil(dicts []*DictAttr) Attribute {
	nonEmpty := false
	elems := make([]Attribute, len(dicts))
	for i, d := range dicts {
		if d == nil {
			d = Dict(nil)
		}
		if len(d.Entries) > 0 {
			nonEmpty = true
		}
		elems[i] = d
	}
	if !nonEmpty {
		return nil
	}
	return Array(elems...)
}
