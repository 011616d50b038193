// Package llvm registers a minimal llvm dialect: the pointer, struct, array
// and void types, the #llvm.constant_range attribute, and the few ops that
// the NVVM lowerings produce (llvm.mlir.poison/undef/zero/constant,
// llvm.extractvalue, llvm.insertvalue).
package llvm

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tmac-dev/tmac/ir"
)

// PtrData is the parameter of !llvm.ptr<N>.
type PtrData struct{ AddrSpace int64 }

// MemorySpaceNumber returns the address space.
func (d *PtrData) MemorySpaceNumber() int64 { return d.AddrSpace }

// StructData holds the parameters of an !llvm.struct type.
type StructData struct {
	Name   string // identified structs only
	Packed bool
	Opaque bool
	Body   []ir.Type
}

// ArrayData holds the parameters of !llvm.array<N x T>.
type ArrayData struct {
	N    int64
	Elem ir.Type
}

// VoidData marks !llvm.void.
type VoidData struct{}

// Ptr returns !llvm.ptr (address space 0) or !llvm.ptr<as>.
func Ptr(as int64) *ir.DialectType {
	text := "!llvm.ptr"
	if as != 0 {
		text = fmt.Sprintf("!llvm.ptr<%d>", as)
	}
	return ir.DialectTypeOf("llvm", "ptr", text, func() any { return &PtrData{AddrSpace: as} })
}

// Void returns !llvm.void.
func Void() *ir.DialectType {
	return ir.DialectTypeOf("llvm", "void", "!llvm.void", func() any { return &VoidData{} })
}

// Inner returns how t is spelled nested inside another llvm type: llvm
// types drop their `!llvm.` prefix.
func Inner(t ir.Type) string {
	s := t.String()
	if dt, ok := t.(*ir.DialectType); ok && dt.Dialect == "llvm" {
		return strings.TrimPrefix(s, "!llvm.")
	}
	return s
}

func bodyText(body []ir.Type) string {
	parts := make([]string, len(body))
	for i, t := range body {
		parts[i] = Inner(t)
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// Struct returns the literal struct type !llvm.struct<(body...)>.
func Struct(body []ir.Type, packed bool) *ir.DialectType {
	text := "!llvm.struct<"
	if packed {
		text += "packed "
	}
	text += bodyText(body) + ">"
	b := append([]ir.Type(nil), body...)
	return ir.DialectTypeOf("llvm", "struct", text, func() any { return &StructData{Packed: packed, Body: b} })
}

// IdentifiedStruct returns !llvm.struct<"name", (body...)> (opaque when
// opaque is set).
func IdentifiedStruct(name string, body []ir.Type, packed, opaque bool) *ir.DialectType {
	text := "!llvm.struct<" + ir.QuoteString(name)
	switch {
	case opaque:
		text += ", opaque>"
	default:
		text += ", "
		if packed {
			text += "packed "
		}
		text += bodyText(body) + ">"
	}
	b := append([]ir.Type(nil), body...)
	return ir.DialectTypeOf("llvm", "struct", text, func() any {
		return &StructData{Name: name, Packed: packed, Opaque: opaque, Body: b}
	})
}

// Array returns !llvm.array<n x elem>.
func Array(n int64, elem ir.Type) *ir.DialectType {
	text := fmt.Sprintf("!llvm.array<%d x %s>", n, Inner(elem))
	return ir.DialectTypeOf("llvm", "array", text, func() any { return &ArrayData{N: n, Elem: elem} })
}

// PtrAddrSpace returns the address space of an !llvm.ptr type.
func PtrAddrSpace(t ir.Type) (int64, bool) {
	if d := ir.TypeData[PtrData](t); d != nil {
		return d.AddrSpace, true
	}
	return 0, false
}

// IsPtr reports whether t is an !llvm.ptr in one of the given address spaces
// (any address space when none is given).
func IsPtr(t ir.Type, spaces ...int64) bool {
	as, ok := PtrAddrSpace(t)
	if !ok {
		return false
	}
	if len(spaces) == 0 {
		return true
	}
	for _, s := range spaces {
		if s == as {
			return true
		}
	}
	return false
}

// StructOf returns the parameters of an !llvm.struct type, or nil.
func StructOf(t ir.Type) *StructData { return ir.TypeData[StructData](t) }

// ArrayOf returns the parameters of an !llvm.array type, or nil.
func ArrayOf(t ir.Type) *ArrayData { return ir.TypeData[ArrayData](t) }

// IsCompatibleType reports whether t is an LLVM dialect-compatible type.
func IsCompatibleType(t ir.Type) bool {
	switch x := t.(type) {
	case *ir.IntegerType:
		return x.IsSignless()
	case *ir.FloatType:
		return true
	case *ir.VectorType:
		return IsCompatibleType(x.Elem)
	case *ir.DialectType:
		if x.Dialect != "llvm" {
			return false
		}
		if s, ok := x.Data.(*StructData); ok {
			for _, e := range s.Body {
				if !IsCompatibleType(e) {
					return false
				}
			}
		}
		if a, ok := x.Data.(*ArrayData); ok {
			return IsCompatibleType(a.Elem)
		}
		return true
	}
	return false
}

// CompatibleType is the ODS constraint "LLVM dialect-compatible type".
var CompatibleType = ir.TypeConstraint{Desc: "LLVM dialect-compatible type", OK: IsCompatibleType}

// PtrInSpaces is the constraint "LLVM pointer in address space A or ...".
func PtrInSpaces(spaces ...int64) ir.TypeConstraint {
	var parts []string
	for _, s := range spaces {
		parts = append(parts, fmt.Sprintf("LLVM pointer in address space %d", s))
	}
	tc := ir.TypeConstraint{Desc: strings.Join(parts, " or "), OK: func(t ir.Type) bool { return IsPtr(t, spaces...) }}
	if len(spaces) == 1 {
		tc.Fixed = Ptr(spaces[0])
	}
	return tc
}

// AnyStruct is the constraint "LLVM structure type".
var AnyStruct = ir.TypeConstraint{Desc: "LLVM structure type", OK: func(t ir.Type) bool { return StructOf(t) != nil }}

// parseNestedType parses a type inside an llvm type, where llvm types may
// be written without their `!llvm.` prefix.
func parseNestedType(p *ir.Parser) (ir.Type, error) {
	if p.Tok().Kind == ir.TokBareID {
		switch kw := p.Tok().Text; kw {
		case "ptr", "struct", "array", "void", "func":
			p.ParseAnyKeyword()
			return parseType(p, kw)
		}
	}
	return p.ParseType()
}

func parseType(p *ir.Parser, mnemonic string) (ir.Type, error) {
	switch mnemonic {
	case "ptr":
		if !p.ParseOptionalPunct("<") {
			return Ptr(0), nil
		}
		as, err := p.ParseInteger()
		if err != nil {
			return nil, err
		}
		if err := p.ParsePunct(">"); err != nil {
			return nil, err
		}
		return Ptr(as), nil
	case "void":
		return Void(), nil
	case "func":
		return parseFuncType(p)
	case "array":
		if err := p.ParsePunct("<"); err != nil {
			return nil, err
		}
		n, err := p.ParseInteger()
		if err != nil {
			return nil, err
		}
		if err := p.ParseKeyword("x"); err != nil {
			return nil, err
		}
		elem, err := parseNestedType(p)
		if err != nil {
			return nil, err
		}
		if err := p.ParsePunct(">"); err != nil {
			return nil, err
		}
		return Array(n, elem), nil
	case "struct":
		if err := p.ParsePunct("<"); err != nil {
			return nil, err
		}
		name, identified := "", false
		if p.Tok().Kind == ir.TokString {
			s, err := p.ParseString()
			if err != nil {
				return nil, err
			}
			name, identified = s, true
			if p.ParseOptionalPunct(">") {
				return nil, p.Errorf("recursive identified struct references are not supported by tmac")
			}
			if err := p.ParsePunct(","); err != nil {
				return nil, err
			}
			if p.ParseOptionalKeyword("opaque") {
				if err := p.ParsePunct(">"); err != nil {
					return nil, err
				}
				return IdentifiedStruct(name, nil, false, true), nil
			}
		}
		packed := p.ParseOptionalKeyword("packed")
		var body []ir.Type
		if err := p.ParseCommaSeparatedList(ir.DelimParen, func() error {
			t, err := parseNestedType(p)
			body = append(body, t)
			return err
		}); err != nil {
			return nil, err
		}
		if err := p.ParsePunct(">"); err != nil {
			return nil, err
		}
		if identified {
			return IdentifiedStruct(name, body, packed, false), nil
		}
		return Struct(body, packed), nil
	}
	return nil, p.Errorf("unknown LLVM type: %s", mnemonic)
}

// RangeData holds #llvm.constant_range<iN, lower, upper>; bounds are kept
// sign-extended from Width bits.
type RangeData struct {
	Width        int
	Lower, Upper int64
}

func signExtend(v int64, w int) int64 {
	if w >= 64 || w <= 0 {
		return v
	}
	sh := uint(64 - w)
	return v << sh >> sh
}

// RangeBody returns the stripped form `<iN, lo, hi>`.
func RangeBody(d *RangeData) string {
	return fmt.Sprintf("<i%d, %d, %d>", d.Width, d.Lower, d.Upper)
}

// ConstantRange returns #llvm.constant_range<iW, lower, upper>.
func ConstantRange(width int, lower, upper int64) *ir.DialectAttr {
	d := &RangeData{Width: width, Lower: signExtend(lower, width), Upper: signExtend(upper, width)}
	return ir.DialectAttrOf("llvm", "constant_range", "#llvm.constant_range"+RangeBody(d), d)
}

// RangeOf returns the parameters of a #llvm.constant_range attribute.
func RangeOf(a ir.Attribute) *RangeData { return ir.AttrData[RangeData](a) }

// ParseRangeBody parses `<iN, lo, hi>`.
func ParseRangeBody(p *ir.Parser) (ir.Attribute, error) {
	if err := p.ParsePunct("<"); err != nil {
		return nil, err
	}
	t, err := p.ParseType()
	if err != nil {
		return nil, err
	}
	it, ok := t.(*ir.IntegerType)
	if !ok {
		return nil, p.Errorf("expected integer type")
	}
	if err := p.ParsePunct(","); err != nil {
		return nil, err
	}
	lo, err := p.ParseInteger()
	if err != nil {
		return nil, err
	}
	if err := p.ParsePunct(","); err != nil {
		return nil, err
	}
	hi, err := p.ParseInteger()
	if err != nil {
		return nil, err
	}
	if err := p.ParsePunct(">"); err != nil {
		return nil, err
	}
	return ConstantRange(it.Width, lo, hi), nil
}

func parseAttr(p *ir.Parser, mnemonic string) (ir.Attribute, error) {
	switch mnemonic {
	case "constant_range":
		return ParseRangeBody(p)
	case "linkage":
		return Linkage.parse(p)
	case "cconv":
		return CConv.parse(p)
	case "tailcallkind":
		return TailCallKind.parse(p)
	case "fastmath":
		return parseFastmath(p)
	}
	return nil, p.Errorf("unknown LLVM attribute: %s", mnemonic)
}

// RangeSyntax writes a constant range stripped (`<i32, 0, 1024>`) in op
// custom forms and accepts both the stripped and the full form.
var RangeSyntax = &ir.AttrSyntax{
	Parse: func(p *ir.Parser) (ir.Attribute, error) {
		if p.IsPunct("<") {
			return ParseRangeBody(p)
		}
		return p.ParseAttribute(nil)
	},
	Print: func(a ir.Attribute) string {
		if d := RangeOf(a); d != nil {
			return RangeBody(d)
		}
		return a.String()
	},
	CanStart: func(p *ir.Parser) bool { return p.IsPunct("<") || p.Tok().Kind == ir.TokHash },
}

// itoa is strconv.FormatInt in base 10.
func itoa(v int64) string { return strconv.FormatInt(v, 10) }

func init() {
	ir.RegisterDialect(&ir.Dialect{
		Name:      "llvm",
		Summary:   "LLVM IR types and the ops needed by NVVM lowerings",
		ParseType: parseType,
		ParseAttr: parseAttr,
	})
}
