package vector

import (
	"math"
	"strconv"
	"strings"

	"github.com/tmac-dev/tmac/ir"
)

// vector.print prints a scalar or a vector (`( 1, 2, 3 )`, nested for n-D
// vectors), a string, or punctuation, the way upstream's runtime does:
// integers in decimal, floats as C's %g.

var printable = ir.TypeConstraint{Desc: "", OK: func(t ir.Type) bool {
	switch t.(type) {
	case *ir.VectorType, *ir.IntegerType, *ir.IndexType, *ir.FloatType:
		return true
	}
	return false
}}

// print's custom form:
//
//	(%source : type)? (str "text")? (punctuation <kind>)? attr-dict
//
// with the str and punctuation clauses in either order.
func parsePrint(p *ir.Parser, st *ir.OperationState) error {
	if p.Tok().Kind == ir.TokPercent {
		u, err := p.ParseOperand()
		if err != nil {
			return err
		}
		t, err := p.ParseColonType()
		if err != nil {
			return err
		}
		if err := p.ResolveOperands([]ir.UnresolvedOperand{u}, []ir.Type{t}, st); err != nil {
			return err
		}
	}
	punct := Punctuation.syntax("vector.print")
	for {
		switch {
		case p.IsKeyword("str") && st.Attr("stringLiteral") == nil:
			p.ParseKeyword("str")
			s, err := p.ParseString()
			if err != nil {
				return err
			}
			st.AddAttr("stringLiteral", ir.Str(s))
			continue
		case p.IsKeyword("punctuation") && st.Attr("punctuation") == nil:
			p.ParseKeyword("punctuation")
			a, err := punct.Parse(p)
			if err != nil {
				return err
			}
			st.AddAttr("punctuation", a)
			continue
		}
		break
	}
	if err := p.ParseOptionalAttrDict(st); err != nil {
		return err
	}
	if st.Attr("punctuation") == nil {
		st.AddAttr("punctuation", Punctuation.Attr("newline"))
	}
	return nil
}

func printPrint(p *ir.Printer, op *ir.Operation) {
	if op.NumOperands() > 0 {
		p.Write(" ")
		p.PrintOperand(op.Operand(0))
		p.Write(" : ")
		p.PrintType(op.Operand(0).Type())
	}
	if s := op.Attr("stringLiteral"); s != nil {
		p.Write(" str ")
		p.PrintAttribute(s)
	}
	elided := []string{"stringLiteral", "punctuation"}
	if a := op.Attr("punctuation"); a != nil && Punctuation.Value(a) != "newline" {
		p.Write(" punctuation " + Punctuation.syntax("vector.print").Print(a))
	}
	p.PrintOptionalAttrDict(op.AllAttrs(), elided...)
}

func verifyPrint(op *ir.Operation) error {
	if op.Attr("stringLiteral") != nil && (op.NumOperands() > 0 || Punctuation.Value(op.Attr("punctuation")) != "newline") {
		return op.EmitOpError("failed to verify that `source` or `punctuation` are not set when printing strings")
	}
	return nil
}

func printOp() *ir.OpDef {
	return &ir.OpDef{
		Name:     "vector.print",
		Summary:  "prints a scalar, a vector, a string or punctuation",
		Operands: []ir.ArgSpec{{Name: "source", Kind: ir.Optional, Type: printable}},
		Attrs: []ir.AttrSpec{
			{Name: "punctuation", Constraint: Punctuation.constraint("Punctuation for separating vectors or vector elements"), Default: Punctuation.Attr("newline")},
			{Name: "stringLiteral", Constraint: ir.StringAttrC, Optional: true},
		},
		Parse:  parsePrint,
		Print:  printPrint,
		Verify: verifyPrint,
		Doc: `Prints as upstream's runtime does: a vector as ` + "`( 1, 2, 3 )`" + ` (n-D vectors
nested: ` + "`( ( 1, 2 ), ( 3, 4 ) )`" + `), integers in decimal (i1 as 0 or 1), floats as
C's %g, then the punctuation (a newline by default). On the host it
prints to standard output; in a kernel it is lowered to vprintf (every
thread that runs it prints, as gpu.printf does), and the emulator prints
the same text.`,
	}
}

// PrintText is what a vector.print op prints: its string, or its source
// (elem gives the text of element i, the whole value for a scalar) and
// its punctuation.
func PrintText(op *ir.Operation, elem func(i int) string) string {
	if s, ok := op.Attr("stringLiteral").(*ir.StringAttr); ok {
		return s.Value
	}
	var sb strings.Builder
	if op.NumOperands() > 0 {
		if vt, ok := op.Operand(0).Type().(*ir.VectorType); ok {
			n := 0
			PrintNested(&sb, vt.Shape(), func() string {
				n++
				return elem(n - 1)
			})
		} else {
			sb.WriteString(elem(0))
		}
	}
	sb.WriteString(PunctuationText(Punctuation.Value(op.Attr("punctuation"))))
	return sb.String()
}

// PrintNested writes a vector of the given shape as vector.print does,
// `( 1, 2 )` per row, nested for each outer dimension (`( 1 )` for a 0-D
// vector), taking the text of each element from elem in row-major order.
func PrintNested(sb *strings.Builder, shape []int64, elem func() string) {
	var row func(d int)
	row = func(d int) {
		sb.WriteString("( ")
		n := int64(1)
		if d < len(shape) {
			n = shape[d]
		}
		for i := int64(0); i < n; i++ {
			if i > 0 {
				sb.WriteString(", ")
			}
			if d+1 >= len(shape) {
				sb.WriteString(elem())
			} else {
				row(d + 1)
			}
		}
		sb.WriteString(" )")
	}
	row(0)
}

// PunctuationText is what vector.print prints after its value for a
// punctuation kind (a newline by default).
func PunctuationText(kind string) string {
	switch kind {
	case "no_punctuation":
		return ""
	case "comma":
		return ", "
	case "open":
		return "( "
	case "close":
		return " )"
	}
	return "\n"
}

// FormatElement is the text of one value of type t, held as an int64 (an
// integer lane: sign-extended, i1 as 0 or 1) or a float64: floats as C's
// %g, signless and signed integers in decimal, i1, unsigned integers and
// index as unsigned numbers (upstream's printF32/printI64/printU64).
func FormatElement(x any, t ir.Type) string {
	switch x := x.(type) {
	case float64:
		switch {
		case math.IsNaN(x) && math.Signbit(x):
			return "-nan"
		case math.IsNaN(x):
			return "nan"
		case math.IsInf(x, 1):
			return "inf"
		case math.IsInf(x, -1):
			return "-inf"
		}
		return strconv.FormatFloat(x, 'g', 6, 64)
	case int64:
		w := ir.BitWidth(t)
		if it, ok := t.(*ir.IntegerType); ok && (it.Width == 1 || it.Signedness == ir.Unsigned) || ir.IsIndex(t) {
			if w < 64 {
				return strconv.FormatUint(uint64(x)&(1<<w-1), 10)
			}
			return strconv.FormatUint(uint64(x), 10)
		}
		return strconv.FormatInt(x, 10)
	}
	return "?"
}
