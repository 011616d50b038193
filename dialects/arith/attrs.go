// Package arith registers the arith dialect: integer and floating-point
// arithmetic, comparisons, select, casts and constants, with the dialect's
// enum attributes (#arith.fastmath, #arith.overflow) and constant folders.
package arith

import (
	"strings"

	"github.com/tmac-dev/tmac/ir"
)

// FastMath flag bits, in upstream's canonical printing order.
var fastMathNames = []string{"reassoc", "nnan", "ninf", "nsz", "arcp", "contract", "afn"}

const fastMathAll = 127

// FastMathFlags is the Data of a #arith.fastmath attribute.
type FastMathFlags uint32

// OverflowFlags is the Data of a #arith.overflow attribute (nsw=1, nuw=2).
type OverflowFlags uint32

// FastMath returns the interned #arith.fastmath<...> attribute for flags.
func FastMath(f FastMathFlags) *ir.DialectAttr {
	return ir.DialectAttrOf("arith", "fastmath", "#arith.fastmath<"+fastMathBody(f)+">", f)
}

func fastMathBody(f FastMathFlags) string {
	if f == 0 {
		return "none"
	}
	if f&fastMathAll == fastMathAll {
		return "fast"
	}
	var parts []string
	for i, n := range fastMathNames {
		if f&(1<<i) != 0 {
			parts = append(parts, n)
		}
	}
	return strings.Join(parts, ",")
}

// Overflow returns the interned #arith.overflow<...> attribute for flags.
func Overflow(f OverflowFlags) *ir.DialectAttr {
	return ir.DialectAttrOf("arith", "overflow", "#arith.overflow<"+overflowBody(f)+">", f)
}

func overflowBody(f OverflowFlags) string {
	switch f & 3 {
	case 1:
		return "nsw"
	case 2:
		return "nuw"
	case 3:
		return "nsw, nuw"
	}
	return "none"
}

// FastMathNone is the default fastmath attribute.
var FastMathNone = FastMath(0)

// OverflowNone is the default overflow attribute.
var OverflowNone = Overflow(0)

// FastMathC accepts #arith.fastmath attributes.
var FastMathC = ir.DialectAttrC("arith fastmath flags", "arith", "fastmath")

// OverflowC accepts #arith.overflow attributes.
var OverflowC = ir.DialectAttrC("arith integer overflow flags", "arith", "overflow")

// parseFlagList parses `<kw, kw, ...>` for a bit enum. errPrefix is put in
// front of the messages ("custom op 'arith.addf' " in custom forms).
func parseFlagList(p *ir.Parser, errPrefix, enum, attrName string, names []string, extra map[string]uint32) (uint32, error) {
	if err := p.ParsePunct("<"); err != nil {
		return 0, err
	}
	second := func() *ir.Diagnostic {
		return ir.Errorf(p.CurrentLoc(), "%sfailed to parse %s parameter 'value' which is to be a `::mlir::arith::%s`", errPrefix, attrName, enum)
	}
	var v uint32
	for {
		tok := p.Tok()
		if tok.Kind != ir.TokBareID && tok.Kind != ir.TokString {
			first := ir.Errorf(p.CurrentLoc(), "%sexpected valid keyword or string", errPrefix)
			return 0, ir.DiagList{first, second()}
		}
		kw, _ := p.ParseKeywordOrString()
		found := false
		if kw == "none" {
			found = true
		} else if b, ok := extra[kw]; ok {
			v |= b
			found = true
		} else {
			for i, n := range names {
				if n == kw {
					v |= 1 << i
					found = true
				}
			}
		}
		if !found {
			all := append([]string{"none"}, names...)
			if _, ok := extra["fast"]; ok {
				all = append(all, "fast")
			}
			first := diagAt(p, tok, "%sexpected ::mlir::arith::%s to be one of: %s", errPrefix, enum, strings.Join(all, ", "))
			return 0, ir.DiagList{first, second()}
		}
		if !p.ParseOptionalPunct(",") {
			break
		}
	}
	return v, p.ParsePunct(">")
}

func parseFastMath(p *ir.Parser, prefix string) (ir.Attribute, error) {
	v, err := parseFlagList(p, prefix, "FastMathFlags", "Arith_FastMathAttr", fastMathNames, map[string]uint32{"fast": fastMathAll})
	if err != nil {
		return nil, err
	}
	return FastMath(FastMathFlags(v)), nil
}

func parseOverflow(p *ir.Parser, prefix string) (ir.Attribute, error) {
	v, err := parseFlagList(p, prefix, "IntegerOverflowFlags", "Arith_IntegerOverflowAttr", []string{"nsw", "nuw"}, nil)
	if err != nil {
		return nil, err
	}
	return Overflow(OverflowFlags(v)), nil
}

// FastMathSyntax is the custom-form syntax of a fastmath property
// (`fastmath<nnan,ninf>` after the `fastmath` keyword) for op opName.
func FastMathSyntax(opName string) *ir.AttrSyntax {
	return &ir.AttrSyntax{
		Parse: func(p *ir.Parser) (ir.Attribute, error) { return parseFastMath(p, "custom op '"+opName+"' ") },
		Print: func(a ir.Attribute) string { return "<" + fastMathBody(flagsOf[FastMathFlags](a)) + ">" },
	}
}

func overflowSyntax(opName string) *ir.AttrSyntax {
	return &ir.AttrSyntax{
		Parse: func(p *ir.Parser) (ir.Attribute, error) { return parseOverflow(p, "custom op '"+opName+"' ") },
		Print: func(a ir.Attribute) string { return "<" + overflowBody(flagsOf[OverflowFlags](a)) + ">" },
	}
}

func flagsOf[T FastMathFlags | OverflowFlags](a ir.Attribute) T {
	if d, ok := a.(*ir.DialectAttr); ok {
		if v, ok := d.Data.(T); ok {
			return v
		}
	}
	return 0
}

// FastMathOf returns the fastmath flags of op (0 if absent).
func FastMathOf(op *ir.Operation) FastMathFlags { return flagsOf[FastMathFlags](op.Attr("fastmath")) }

// Integer enums printed as keywords in custom form.
var (
	cmpIPredicates   = []string{"eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"}
	cmpFPredicates   = []string{"false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord", "ueq", "ugt", "uge", "ult", "ule", "une", "uno", "true"}
	roundingModes    = []string{"to_nearest_even", "downward", "upward", "toward_zero", "to_nearest_away"}
	cmpIPredicateC   = enumC(cmpIPredicates, 64)
	cmpFPredicateC   = enumC(cmpFPredicates, 64)
	roundingModeC    = enumC(roundingModes, 32)
	predicateFailure = "expected string or keyword containing one of the following enum values for attribute 'predicate' [%s]"
)

func enumC(names []string, width int) ir.AttrConstraint {
	var cases []string
	for i := range names {
		cases = append(cases, ir.Sprintf("%d", i))
	}
	return ir.AttrConstraint{
		Desc: ir.Sprintf("allowed %d-bit signless integer cases: %s", width, strings.Join(cases, ", ")),
		OK: func(a ir.Attribute) bool {
			ia, ok := a.(*ir.IntegerAttr)
			return ok && ir.IsIntegerOfWidth(ia.Type(), width) && ia.Big == nil && ia.Int() >= 0 && ia.Int() < int64(len(names))
		},
	}
}

func enumName(names []string, a ir.Attribute) string {
	if ia, ok := a.(*ir.IntegerAttr); ok && ia.Int() >= 0 && ia.Int() < int64(len(names)) {
		return names[ia.Int()]
	}
	return ir.AttrWithoutType(a)
}

func predicateSyntax(opName string, names []string) *ir.AttrSyntax {
	return &ir.AttrSyntax{
		Parse: func(p *ir.Parser) (ir.Attribute, error) {
			tok := p.Tok()
			if tok.Kind == ir.TokBareID || tok.Kind == ir.TokString {
				s, _ := p.ParseKeywordOrString()
				for i, n := range names {
					if n == s {
						return ir.I64Attr(int64(i)), nil
					}
				}
			}
			return nil, diagAt(p, tok, "custom op '%s' "+predicateFailure, opName, strings.Join(names, ", "))
		},
		Print: func(a ir.Attribute) string { return enumName(names, a) },
	}
}

var roundingSyntax = &ir.AttrSyntax{
	Parse: func(p *ir.Parser) (ir.Attribute, error) {
		s, err := p.ParseAnyKeyword()
		if err != nil {
			return nil, err
		}
		for i, n := range roundingModes {
			if n == s {
				return ir.I32Attr(int64(i)), nil
			}
		}
		return nil, p.Errorf("expected ':'")
	},
	Print: func(a ir.Attribute) string { return enumName(roundingModes, a) },
	CanStart: func(p *ir.Parser) bool {
		for _, n := range roundingModes {
			if p.IsKeyword(n) {
				return true
			}
		}
		return false
	},
}

func init() {
	ir.RegisterDialect(&ir.Dialect{
		Name:    "arith",
		Summary: "Basic integer and floating point arithmetic",
		ParseAttr: func(p *ir.Parser, mnemonic string) (ir.Attribute, error) {
			switch mnemonic {
			case "fastmath":
				return parseFastMath(p, "")
			case "overflow":
				return parseOverflow(p, "")
			}
			return nil, p.Errorf("unknown attribute `%s` in dialect `arith`", mnemonic)
		},
	})
}

func diagAt(p *ir.Parser, tok ir.Token, format string, args ...any) *ir.Diagnostic {
	return ir.Errorf(p.LocOf(tok), format, args...)
}
