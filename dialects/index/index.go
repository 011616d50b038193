// Package index registers upstream MLIR's index dialect: arithmetic,
// comparisons, constants, casts and sizeof on values of type index, whose
// width is the target's (64 bits on NVPTX). The arithmetic ops compute what
// the arith op of the same meaning computes on index (their semantics are
// arith's: index.divs is arith.divsi); folding follows upstream's rule for
// a target-dependent width, folding only where 64- and 32-bit targets get
// the same result.
package index

import (
	"strings"

	"github.com/tmac-dev/tmac/dialects/arith"
	"github.com/tmac-dev/tmac/ir"
)

// Predicates of #index<cmp_predicate ...>, in arith.cmpi's order (the
// attribute's Data is the arith.CmpI predicate).
var predicates = []string{"eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"}

// Predicate returns #index<cmp_predicate p> for the p-th predicate.
func Predicate(p int) *ir.DialectAttr {
	return ir.DialectAttrOf("index", "cmp_predicate", "#index<cmp_predicate "+predicates[p]+">", p)
}

// PredicateOf returns the predicate number of a #index<cmp_predicate>
// attribute (arith.CmpI's numbering), or -1.
func PredicateOf(a ir.Attribute) int {
	if d, ok := a.(*ir.DialectAttr); ok && d.Dialect == "index" && d.Name == "cmp_predicate" {
		return d.Data.(int)
	}
	return -1
}

var predicateC = ir.DialectAttrC("index comparison predicate", "index", "cmp_predicate")

// parsePredicate parses a predicate keyword; errPrefix starts the
// messages ("custom op 'index.cmp' " in the op's custom form).
func parsePredicate(p *ir.Parser, errPrefix string) (ir.Attribute, error) {
	tok := p.Tok()
	second := func() *ir.Diagnostic {
		return ir.Errorf(p.CurrentLoc(), "%sfailed to parse IndexCmpPredicateAttr parameter 'value' which is to be a `::mlir::index::IndexCmpPredicate`", errPrefix)
	}
	if tok.Kind != ir.TokBareID && tok.Kind != ir.TokString {
		return nil, ir.DiagList{ir.Errorf(p.LocOf(tok), "%sexpected valid keyword or string", errPrefix), second()}
	}
	kw, _ := p.ParseKeywordOrString()
	for i, n := range predicates {
		if kw == n {
			return Predicate(i), nil
		}
	}
	first := ir.Errorf(p.LocOf(tok), "%sexpected ::mlir::index::IndexCmpPredicate to be one of: %s", errPrefix, strings.Join(predicates, ", "))
	return nil, ir.DiagList{first, second()}
}

func init() {
	ir.RegisterDialect(&ir.Dialect{
		Name:    "index",
		Summary: "Integer arithmetic, comparisons and casts on index values",
		ParseAttr: func(p *ir.Parser, mnemonic string) (ir.Attribute, error) {
			if mnemonic == "cmp_predicate" {
				return parsePredicate(p, "")
			}
			return nil, p.Errorf("unknown attribute `%s` in dialect `index`", mnemonic)
		},
	})
	var defs []*ir.OpDef
	for _, b := range binaryOps {
		defs = append(defs, binaryDef(b))
	}
	defs = append(defs, cmpDef(), castDef("index.casts", "index signed cast", "arith.index_cast"),
		castDef("index.castu", "index unsigned cast", "arith.index_castui"),
		constantDef(), boolConstantDef(), sizeofDef())
	ir.Register(defs...)
}

// A binary op: its name, summary, traits and the arith op computing the
// same on index.
type binaryOp struct {
	name, summary string
	traits        ir.Trait
	arith         string
}

var (
	pure     = ir.Pure
	pureComm = ir.Pure | ir.Commutative
	// Divisions and remainders have no memory effect but are not
	// speculatable (upstream's LICM leaves them in the loop).
	condSpec = ir.NoMemoryEffect
)

var binaryOps = []binaryOp{
	{"index.add", "index addition", pureComm, "arith.addi"},
	{"index.sub", "index subtraction", pure, "arith.subi"},
	{"index.mul", "index multiplication", pureComm, "arith.muli"},
	{"index.divs", "index signed division", condSpec, "arith.divsi"},
	{"index.divu", "index unsigned division", condSpec, "arith.divui"},
	{"index.ceildivs", "index signed ceil division", condSpec, "arith.ceildivsi"},
	{"index.ceildivu", "index unsigned ceil division", condSpec, "arith.ceildivui"},
	{"index.floordivs", "index signed floor division", condSpec, "arith.floordivsi"},
	{"index.rems", "index signed remainder", condSpec, "arith.remsi"},
	{"index.remu", "index unsigned remainder", condSpec, "arith.remui"},
	{"index.maxs", "index signed maximum", pureComm, "arith.maxsi"},
	{"index.maxu", "index unsigned maximum", pureComm, "arith.maxui"},
	{"index.mins", "index signed minimum", pureComm, "arith.minsi"},
	{"index.minu", "index unsigned minimum", pureComm, "arith.minui"},
	{"index.shl", "index shift left", pure, "arith.shli"},
	{"index.shrs", "signed index shift right", pure, "arith.shrsi"},
	{"index.shru", "unsigned index shift right", pure, "arith.shrui"},
	{"index.and", "index bitwise and", pureComm, "arith.andi"},
	{"index.or", "index bitwise or", pureComm, "arith.ori"},
	{"index.xor", "index bitwise xor", pureComm, "arith.xori"},
}

// ArithOp returns the arith op that computes what the binary index op
// name computes (index.divs: arith.divsi), or "".
func ArithOp(name string) string {
	for _, b := range binaryOps {
		if b.name == name {
			return b.arith
		}
	}
	return ""
}

func binaryDef(b binaryOp) *ir.OpDef {
	return &ir.OpDef{
		Name:      b.name,
		Summary:   b.summary,
		Traits:    b.traits,
		Operands:  []ir.ArgSpec{{Name: "lhs", Type: ir.IndexOnly}, {Name: "rhs", Type: ir.IndexOnly}},
		Results:   []ir.ArgSpec{{Name: "result", Type: ir.IndexOnly}},
		Format:    "$lhs `,` $rhs attr-dict",
		Fold:      foldBinary,
		Semantics: ir.LookupOp(b.arith).Semantics,
		Doc: "Computes what `" + b.arith + "` computes on index (64 bits on the GPU, an i64 instruction). " +
			"Constant operands fold only where 64- and 32-bit targets agree, as upstream.",
	}
}

var i1C = ir.TypeConstraint{Desc: "1-bit signless integer", OK: func(t ir.Type) bool { return ir.IsIntegerOfWidth(t, 1) }, Fixed: ir.I1}

func cmpDef() *ir.OpDef {
	return &ir.OpDef{
		Name:     "index.cmp",
		Summary:  "index compare",
		Traits:   ir.Pure,
		Operands: []ir.ArgSpec{{Name: "lhs", Type: ir.IndexOnly}, {Name: "rhs", Type: ir.IndexOnly}},
		Results:  []ir.ArgSpec{{Name: "result", Type: i1C}},
		Attrs: []ir.AttrSpec{{Name: "pred", Constraint: predicateC, Syntax: &ir.AttrSyntax{
			Parse: func(p *ir.Parser) (ir.Attribute, error) { return parsePredicate(p, "custom op 'index.cmp' ") },
			// Upstream's enum printer adds its own leading space.
			Print: func(a ir.Attribute) string { return " " + predicates[PredicateOf(a)] },
		}}},
		Format:      "`` $pred `(` $lhs `,` $rhs `)` attr-dict",
		VerifyProps: convertProps("pred", predicateC),
		Fold:        foldCmp,
		Semantics:   cmpSem,
	}
}

// convertProps reports upstream's property-conversion error for a
// property of the wrong kind in the generic form.
func convertProps(name string, c ir.AttrConstraint) func(op *ir.Operation) error {
	return func(op *ir.Operation) error {
		if a := op.Attr(name); a != nil && op.Def().IsInherentAttr(name) && !c.OK(a) {
			return ir.Errorf(op.Loc, "invalid properties %s for op %s: Invalid attribute `%s` in property conversion: %s",
				ir.FormatAttrDict(op.Props()), op.Name(), name, a)
		}
		return nil
	}
}

var intOrIndex = ir.TypeConstraint{Desc: "integer or index", OK: func(t ir.Type) bool {
	_, isInt := t.(*ir.IntegerType)
	return isInt || ir.IsIndex(t)
}}

// castDef defines index.casts or index.castu, which compute what the arith
// cast of the same extension computes.
func castDef(name, summary, arithCast string) *ir.OpDef {
	return &ir.OpDef{
		Name:     name,
		Summary:  summary,
		Traits:   ir.Pure,
		Operands: []ir.ArgSpec{{Name: "input", Type: intOrIndex}},
		Results:  []ir.ArgSpec{{Name: "output", Type: intOrIndex}},
		Format:   "$input attr-dict `:` type($input) `to` type($output)",
		Verify: func(op *ir.Operation) error {
			in, out := op.Operand(0).Type(), op.Result(0).Type()
			if ir.IsIndex(in) == ir.IsIndex(out) {
				return op.EmitOpError("operand type '%s' and result type '%s' are cast incompatible", in, out)
			}
			return nil
		},
		Fold:      foldCast,
		Semantics: ir.LookupOp(arithCast).Semantics,
		Doc: "Exactly one side is index. On the GPU: sign- (casts) or zero-extension (castu) or truncation between the integer and i64; " +
			"integers wider than 64 bits are truncated to index.",
	}
}

func constantDef() *ir.OpDef {
	return &ir.OpDef{
		Name:    "index.constant",
		Summary: "index constant",
		Traits:  ir.Pure | ir.ConstantLike,
		Results: []ir.ArgSpec{{Name: "result", Type: ir.IndexOnly}},
		Attrs:   []ir.AttrSpec{{Name: "value", Constraint: ir.IndexAttrC, Syntax: constantSyntax(ir.Index, "index.constant")}},
		Format:  "attr-dict $value",
		ResultNames: func(op *ir.Operation, name func(ir.Value, string)) {
			if ia, ok := op.Attr("value").(*ir.IntegerAttr); ok {
				name(op.Result(0), "idx"+ir.AttrWithoutType(ia))
			}
		},
		Semantics: constantSem,
	}
}

func boolConstantDef() *ir.OpDef {
	return &ir.OpDef{
		Name:        "index.bool.constant",
		Summary:     "boolean constant",
		Traits:      ir.Pure | ir.ConstantLike,
		Results:     []ir.ArgSpec{{Name: "result", Type: i1C}},
		Attrs:       []ir.AttrSpec{{Name: "value", Constraint: ir.BoolAttrC, Syntax: constantSyntax(ir.I1, "index.bool.constant")}},
		Format:      "attr-dict $value",
		VerifyProps: convertProps("value", ir.BoolAttrC),
		ResultNames: func(op *ir.Operation, name func(ir.Value, string)) {
			if v, ok := ir.AttrInt(op.Attr("value")); ok {
				name(op.Result(0), map[bool]string{true: "true", false: "false"}[v != 0])
			}
		},
		Semantics: constantSem,
	}
}

// constantSyntax parses the value of a constant as an integer of type t
// (true and false for i1), printed without its type.
func constantSyntax(t ir.Type, opName string) *ir.AttrSyntax {
	return &ir.AttrSyntax{
		Parse: func(p *ir.Parser) (ir.Attribute, error) {
			tok := p.Tok()
			a, err := p.ParseAttribute(t)
			if err != nil {
				// Upstream reports a float literal after it, at the next
				// token.
				if d, ok := err.(*ir.Diagnostic); ok && strings.HasPrefix(d.Msg, "floating point value") {
					return nil, p.Errorf("%s", d.Msg)
				}
				return nil, err
			}
			if ia, ok := a.(*ir.IntegerAttr); !ok || ia.Type() != t {
				return nil, ir.Errorf(p.LocOf(tok), "custom op '%s' invalid kind of attribute specified", opName)
			}
			return a, nil
		},
		Print: ir.AttrWithoutType,
	}
}

func sizeofDef() *ir.OpDef {
	return &ir.OpDef{
		Name:      "index.sizeof",
		Summary:   "size in bits of the index type",
		Traits:    ir.Pure,
		Results:   []ir.ArgSpec{{Name: "result", Type: ir.IndexOnly}},
		Format:    "attr-dict",
		Semantics: sizeofSem,
		Doc:       "64 on the GPU (index is i64 in NVPTX code). Not folded, as upstream (the width is the target's).",
	}
}

// cmpSem compares as arith.cmpi does on index.
var cmpSem = &ir.Semantics{Lane: func(op *ir.Operation) (ir.LaneFunc, error) {
	p := int64(PredicateOf(op.Attr("pred")))
	return func(x, y, _ ir.Lane) (ir.Lane, bool) {
		r, ok := arith.CmpI(p, x.I, y.I, 64)
		if r {
			return ir.Lane{I: 1}, ok
		}
		return ir.Lane{}, ok
	}, nil
}}
