package memref

import (
	"strconv"
	"strings"

	"github.com/tmac-dev/tmac/ir"
)

// registerDirectives registers the custom format directives of the dialect.
// DynamicIndexList is shared: any op with an offsets/sizes/strides-like list
// can use custom<DynamicIndexList>($values, $static_values).
func registerDirectives() {
	ir.RegisterCustomDirective("DynamicIndexList", &ir.CustomDirective{
		Parse: parseDynamicIndexListDirective,
		Print: printDynamicIndexListDirective,
	})
	ir.RegisterCustomDirective("GlobalMemrefOpTypeAndInitialValue", &ir.CustomDirective{
		Parse: parseGlobalTypeAndInitialValue,
		Print: printGlobalTypeAndInitialValue,
	})
}

func varName(arg string) string { return strings.TrimPrefix(arg, "$") }

// ParseDynamicIndexList parses `[` (ssa-value | integer) (`,` ...)* `]` (or
// `[]`): integers are static entries, SSA values are dynamic ones (recorded
// as Dynamic in the static list and returned in order).
func ParseDynamicIndexList(p *ir.Parser) (values []ir.UnresolvedOperand, static []int64, err error) {
	return ParseDynamicIndexListIn(p, ir.DelimSquare)
}

// ParseDynamicIndexListIn is ParseDynamicIndexList with delimiter d
// (scf.forall's bounds are in parentheses).
func ParseDynamicIndexListIn(p *ir.Parser, d ir.Delimiter) (values []ir.UnresolvedOperand, static []int64, err error) {
	static = []int64{}
	err = p.ParseCommaSeparatedList(d, func() error {
		if p.Tok().Kind == ir.TokPercent {
			u, err := p.ParseOperand()
			if err != nil {
				return err
			}
			values = append(values, u)
			static = append(static, Dynamic)
			return nil
		}
		v, ok, err := p.ParseOptionalInteger()
		if err != nil {
			return err
		}
		if !ok {
			return ir.DiagList{
				p.CustomOpErrorf("expected integer value").(*ir.Diagnostic),
				p.CustomOpErrorf("expected SSA value or integer").(*ir.Diagnostic),
			}
		}
		static = append(static, v)
		return nil
	})
	return values, static, err
}

// FormatDynamicIndexList prints a static list, taking the values of the
// Dynamic entries from names in order: `[0, %a, 4]`.
func FormatDynamicIndexList(static []int64, names []string) string {
	var sb strings.Builder
	sb.WriteByte('[')
	j := 0
	for i, s := range static {
		if i > 0 {
			sb.WriteString(", ")
		}
		if s == Dynamic && j < len(names) {
			sb.WriteString(names[j])
			j++
		} else {
			sb.WriteString(strconv.FormatInt(s, 10))
		}
	}
	sb.WriteByte(']')
	return sb.String()
}

func parseDynamicIndexListDirective(p *ir.Parser, fs *ir.FormatState, args []string) error {
	values, static, err := ParseDynamicIndexList(p)
	if err != nil {
		return err
	}
	fs.Operands[varName(args[0])] = values
	fs.St.AddAttr(varName(args[1]), ir.DenseI64Array(static...))
	return nil
}

func printDynamicIndexListDirective(p *ir.Printer, op *ir.Operation, args []string) {
	var static []int64
	if a, ok := op.Attr(varName(args[1])).(*ir.DenseArrayAttr); ok {
		static = a.Ints
	}
	var names []string
	for _, v := range op.OperandGroup(varName(args[0])) {
		names = append(names, p.ValueName(v))
	}
	p.Write(FormatDynamicIndexList(static, names))
}

// parseGlobalTypeAndInitialValue parses `memref-type [= (uninitialized |
// elements-literal)]` for memref.global.
func parseGlobalTypeAndInitialValue(p *ir.Parser, fs *ir.FormatState, args []string) error {
	opTok := p.Tok()
	t, err := p.ParseType()
	if err != nil {
		return err
	}
	mt, ok := t.(*ir.MemRefType)
	if !ok || !ir.HasStaticShape(mt.Shape()) {
		return p.CustomOpErrorAt(opTok, "type should be static shaped memref, but got '%s'", t)
	}
	fs.St.AddAttr(varName(args[0]), ir.TypeAttrOf(t))
	if !p.ParseOptionalPunct("=") {
		return nil
	}
	if p.ParseOptionalKeyword("uninitialized") {
		fs.St.AddAttr(varName(args[1]), ir.Unit)
		return nil
	}
	init, err := p.ParseAttribute(ir.TensorTypeOf(mt.Shape(), mt.Elem))
	if err != nil {
		return err
	}
	if !isElementsAttr(init) {
		return p.CustomOpErrorAt(opTok, "initial value should be a unit or elements attribute")
	}
	fs.St.AddAttr(varName(args[1]), init)
	return nil
}

func printGlobalTypeAndInitialValue(p *ir.Printer, op *ir.Operation, args []string) {
	if ta, ok := op.Attr(varName(args[0])).(*ir.TypeAttr); ok {
		p.PrintType(ta.Value)
	}
	init := op.Attr(varName(args[1]))
	if init == nil {
		return
	}
	p.Write(" = ")
	if _, ok := init.(*ir.UnitAttr); ok {
		p.Write("uninitialized")
		return
	}
	p.Write(attrWithoutType(init))
}

// attrWithoutType prints an elements attribute without its `: type` suffix.
func attrWithoutType(a ir.Attribute) string {
	s := a.String()
	if ta, ok := a.(interface{ Type() ir.Type }); ok {
		return strings.TrimSuffix(s, " : "+ta.Type().String())
	}
	return s
}

// isElementsAttr reports whether a is an elements attribute (dense<...>).
func isElementsAttr(a ir.Attribute) bool {
	if _, ok := a.(*ir.DenseAttr); ok {
		return true
	}
	ta, ok := a.(interface{ Type() ir.Type })
	if !ok {
		return false
	}
	switch ta.Type().(type) {
	case *ir.TensorType, *ir.VectorType:
		return true
	}
	return false
}
