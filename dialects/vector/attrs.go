package vector

import (
	"strings"

	"github.com/tmac-dev/tmac/ir"
)

// The vector dialect's enum attributes: #vector.kind<add> (the combining
// kind of reductions, contractions and scans), #vector.punctuation<comma>
// (what vector.print prints after its value) and
// #vector.iterator_type<parallel> (vector.contract's iterators).

type enumDef struct {
	mnemonic string
	cpp      string // the C++ enum named in diagnostics
	attr     string // the ODS attribute named in diagnostics
	values   []string
}

// EnumData is the payload of a vector enum attribute.
type EnumData struct {
	Kind  string // the mnemonic: "kind", "punctuation", "iterator_type"
	Value string // the keyword
}

var (
	// CombiningKind is #vector.kind.
	CombiningKind = &enumDef{"kind", "CombiningKind", "Vector_CombiningKindAttr",
		[]string{"add", "mul", "minui", "minsi", "minnumf", "maxui", "maxsi", "maxnumf", "and", "or", "xor", "maximumf", "minimumf"}}
	// Punctuation is #vector.punctuation.
	Punctuation = &enumDef{"punctuation", "PrintPunctuation", "Vector_PrintPunctuation",
		[]string{"no_punctuation", "newline", "comma", "open", "close"}}
	// IteratorType is #vector.iterator_type.
	IteratorType = &enumDef{"iterator_type", "IteratorType", "Vector_IteratorType",
		[]string{"parallel", "reduction"}}
	enums = []*enumDef{CombiningKind, Punctuation, IteratorType}
)

// Attr returns the attribute #vector.<mnemonic><v>; v must be a value of
// the enum.
func (e *enumDef) Attr(v string) *ir.DialectAttr {
	return ir.DialectAttrOf("vector", e.mnemonic, "#vector."+e.mnemonic+"<"+v+">", &EnumData{e.mnemonic, v})
}

// Value returns the keyword of a, or "" when a is not of this enum.
func (e *enumDef) Value(a ir.Attribute) string {
	if d := ir.AttrData[EnumData](a); d != nil && d.Kind == e.mnemonic {
		return d.Value
	}
	return ""
}

func (e *enumDef) constraint(desc string) ir.AttrConstraint {
	return ir.AttrConstraint{Desc: desc, OK: func(a ir.Attribute) bool { return e.Value(a) != "" }}
}

// parseBody parses `<value>`; prefix starts the messages ("custom op
// 'vector.reduction' " inside an op's custom form).
func (e *enumDef) parseBody(p *ir.Parser, prefix string) (ir.Attribute, error) {
	if err := p.ParsePunct("<"); err != nil {
		return nil, err
	}
	tok := p.Tok()
	kw, _ := p.ParseOptionalAnyKeyword()
	for _, v := range e.values {
		if v == kw {
			return e.Attr(v), p.ParsePunct(">")
		}
	}
	return nil, ir.DiagList{
		ir.Errorf(p.LocOf(tok), "%sexpected ::mlir::vector::%s to be one of: %s", prefix, e.cpp, strings.Join(e.values, ", ")),
		ir.Errorf(p.CurrentLoc(), "%sfailed to parse %s parameter 'value' which is to be a `::mlir::vector::%s`", prefix, e.attr, e.cpp),
	}
}

// syntax is the enum inside an op's custom form: `<value>`.
func (e *enumDef) syntax(opName string) *ir.AttrSyntax {
	return &ir.AttrSyntax{
		Parse: func(p *ir.Parser) (ir.Attribute, error) { return e.parseBody(p, "custom op '"+opName+"' ") },
		Print: func(a ir.Attribute) string {
			if v := e.Value(a); v != "" {
				return "<" + v + ">"
			}
			return a.String()
		},
		CanStart: func(p *ir.Parser) bool { return p.IsPunct("<") },
	}
}

func init() {
	ir.RegisterDialect(&ir.Dialect{
		Name:    "vector",
		Summary: "Vector loads and stores, reductions, shape changes, masks and transfers",
		ParseAttr: func(p *ir.Parser, mnemonic string) (ir.Attribute, error) {
			for _, e := range enums {
				if e.mnemonic == mnemonic {
					return e.parseBody(p, "")
				}
			}
			return nil, p.Errorf("unknown attribute `%s` in dialect `vector`", mnemonic)
		},
	})
}
