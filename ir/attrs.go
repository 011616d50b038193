package ir

import (
	"encoding/hex"
	"math"
	"math/big"
	"sort"
	"strconv"
	"strings"
)

// Attribute is an interned compile-time constant value. Like types,
// attributes are uniqued: equal attributes are the same Go value.
type Attribute interface {
	// String returns the attribute in MLIR syntax, as upstream prints it.
	String() string
	isAttr()
}

// TypedAttr is an attribute that carries a type (integers, floats, dense).
type TypedAttr interface {
	Attribute
	Type() Type
}

type attrBase struct{ text string }

func (a *attrBase) String() string { return a.text }
func (*attrBase) isAttr()          {}

var attrTable internTable[Attribute]

// internAttr returns the canonical attribute printed as text.
func internAttr(text string, build func(base attrBase) Attribute) Attribute {
	return internAttrKeyed(text, text, build)
}

// UnitAttr is the attribute `unit`, whose presence is the information.
type UnitAttr struct{ attrBase }

// Unit is the unit attribute.
var Unit = internAttr("unit", func(b attrBase) Attribute { return &UnitAttr{b} }).(*UnitAttr)

// Bool returns true or false: an i1 IntegerAttr, printed as upstream
// prints booleans.
func Bool(v bool) *IntegerAttr {
	if v {
		return IntAttr(1, I1)
	}
	return IntAttr(0, I1)
}

// IsBool reports whether a is an i1 integer attribute (true/false).
func IsBool(a Attribute) bool {
	ia, ok := a.(*IntegerAttr)
	return ok && IsIntegerOfWidth(ia.typ, 1)
}

// IntegerAttr is an integer or index constant with its type. Values wider
// than 64 bits are kept in Big.
type IntegerAttr struct {
	attrBase
	typ Type
	val int64
	Big *big.Int // non-nil only for values that do not fit in int64 semantics
}

func (a *IntegerAttr) Type() Type { return a.typ }

// Int returns the value sign-extended to int64.
func (a *IntegerAttr) Int() int64 { return a.val }

// Uint returns the value zero-extended from the type's width.
func (a *IntegerAttr) Uint() uint64 {
	w := BitWidth(a.typ)
	if w >= 64 || w == 0 {
		return uint64(a.val)
	}
	return uint64(a.val) & (1<<uint(w) - 1)
}

// IntAttr returns the integer attribute `v : t`, wrapping v to t's width.
// i1 values print as true and false.
func IntAttr(v int64, t Type) *IntegerAttr {
	v = truncInt(v, t)
	text := formatIntValue(v, t) + " : " + t.String()
	if IsIntegerOfWidth(t, 1) {
		text = strconv.FormatBool(v != 0)
	}
	return internAttr(text, func(b attrBase) Attribute {
		return &IntegerAttr{attrBase: b, typ: t, val: v}
	}).(*IntegerAttr)
}

// BigIntAttr returns the integer attribute `v : t` for any width, wrapping v
// to it. Signless and signed values are kept signed, unsigned ones
// unsigned, as upstream prints them; a value that fits in an int64 is held
// there and Big stays nil.
func BigIntAttr(v *big.Int, t Type) *IntegerAttr {
	w := uint(BitWidth(t))
	if w == 0 || w > 64 {
		v = wrapBig(v, w, t)
	}
	if v.IsInt64() {
		return IntAttr(v.Int64(), t)
	}
	if v.Sign() > 0 && v.IsUint64() && w == 64 {
		return IntAttr(int64(v.Uint64()), t)
	}
	v = new(big.Int).Set(v)
	return internAttr(v.String()+" : "+t.String(), func(b attrBase) Attribute {
		return &IntegerAttr{attrBase: b, typ: t, Big: v}
	}).(*IntegerAttr)
}

// wrapBig reduces v modulo 2^w and, unless t is unsigned, reads the result
// as a signed w-bit number.
func wrapBig(v *big.Int, w uint, t Type) *big.Int {
	if w == 0 {
		return v
	}
	m := new(big.Int).Lsh(big.NewInt(1), w)
	r := new(big.Int).Mod(v, m)
	if it, ok := t.(*IntegerType); ok && it.Signedness == Unsigned {
		return r
	}
	if r.Bit(int(w)-1) == 1 {
		r.Sub(r, m)
	}
	return r
}

// I64Attr is shorthand for IntAttr(v, I64).
func I64Attr(v int64) *IntegerAttr { return IntAttr(v, I64) }

// I32Attr is shorthand for IntAttr(v, I32).
func I32Attr(v int64) *IntegerAttr { return IntAttr(v, I32) }

// IndexAttr is shorthand for IntAttr(v, Index).
func IndexAttr(v int64) *IntegerAttr { return IntAttr(v, Index) }

// truncInt wraps v to the width of t: signless and signed types are kept
// sign-extended, unsigned ones zero-extended.
func truncInt(v int64, t Type) int64 {
	w := BitWidth(t)
	if w == 0 || w >= 64 {
		return v
	}
	if w == 1 {
		return v & 1
	}
	shift := uint(64 - w)
	if it, ok := t.(*IntegerType); ok && it.Signedness == Unsigned {
		return int64(uint64(v) << shift >> shift)
	}
	return v << shift >> shift
}

func formatIntValue(v int64, t Type) string {
	if it, ok := t.(*IntegerType); ok && it.Signedness == Unsigned {
		return strconv.FormatUint(uint64(v), 10)
	}
	if it, ok := t.(*IntegerType); ok && it.Width == 1 {
		// i1 values print as their unsigned value inside dense/typed forms.
		return strconv.FormatInt(v&1, 10)
	}
	return strconv.FormatInt(v, 10)
}

// FloatAttr is a floating-point constant with its type. The value is kept as
// a float64, which represents every value of the supported formats exactly.
type FloatAttr struct {
	attrBase
	typ   Type
	Value float64
}

func (a *FloatAttr) Type() Type { return a.typ }

// FloatAttrOf returns `v : t`, rounding v to t's format.
func FloatAttrOf(v float64, t *FloatType) *FloatAttr {
	v = RoundToFloatKind(v, t.Kind)
	text := FormatFloat(v, t.Kind) + " : " + t.String()
	return internAttr(text, func(b attrBase) Attribute {
		return &FloatAttr{attrBase: b, typ: t, Value: v}
	}).(*FloatAttr)
}

// StringAttr is a string constant.
type StringAttr struct {
	attrBase
	Value string
	// Typ is the type written after the string ("s" : i32), nil without one.
	Typ Type
}

// Str returns the string attribute with value s.
func Str(s string) *StringAttr {
	return internAttr(QuoteString(s), func(b attrBase) Attribute { return &StringAttr{attrBase: b, Value: s} }).(*StringAttr)
}

// TypedStr returns the string attribute "s" : t.
func TypedStr(s string, t Type) *StringAttr {
	return internAttr(QuoteString(s)+" : "+t.String(), func(b attrBase) Attribute {
		return &StringAttr{attrBase: b, Value: s, Typ: t}
	}).(*StringAttr)
}

// QuoteString quotes s as MLIR prints strings: printable ASCII other than
// `"` and `\` as is, `\` as `\\`, everything else (`"` included) as \XX
// hex escapes.
func QuoteString(s string) string {
	var sb strings.Builder
	sb.Grow(len(s) + 2)
	sb.WriteByte('"')
	const hex = "0123456789ABCDEF"
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\':
			sb.WriteString(`\\`)
		case c >= 0x20 && c < 0x7f && c != '"':
			sb.WriteByte(c)
		default:
			sb.WriteByte('\\')
			sb.WriteByte(hex[c>>4])
			sb.WriteByte(hex[c&15])
		}
	}
	sb.WriteByte('"')
	return sb.String()
}

// TypeAttr wraps a type as an attribute.
type TypeAttr struct {
	attrBase
	Value Type
}

// TypeAttrOf returns the attribute holding t.
func TypeAttrOf(t Type) *TypeAttr {
	// The key is prefixed so a type attribute never collides with another
	// attribute of the same spelling.
	return internAttrKeyed("type:"+t.String(), t.String(), func(b attrBase) Attribute { return &TypeAttr{b, t} }).(*TypeAttr)
}

// internAttrKeyed interns under key but prints as text.
func internAttrKeyed(key, text string, build func(base attrBase) Attribute) Attribute {
	return attrTable.get(key, func() Attribute { return build(attrBase{text: text}) })
}

// ArrayAttr is [a, b, ...].
type ArrayAttr struct {
	attrBase
	Elems []Attribute
}

// Array returns the array attribute of elems.
func Array(elems ...Attribute) *ArrayAttr {
	return internAttr("["+CommaSeparated(elems, arrayElemString)+"]", func(b attrBase) Attribute {
		return &ArrayAttr{b, append([]Attribute(nil), elems...)}
	}).(*ArrayAttr)
}

// arrayElemString prints an array element: i64 integers and f64 floats
// drop their default type there, as upstream prints them.
func arrayElemString(e Attribute) string {
	switch e := e.(type) {
	case *IntegerAttr:
		if e.typ == Type(I64) {
			return formatIntValue(e.val, e.typ)
		}
	case *FloatAttr:
		if e.typ == Type(F64T) {
			return FormatFloat(e.Value, F64)
		}
	}
	return e.String()
}

// NamedAttr is a name = value pair.
type NamedAttr struct {
	Name  string
	Value Attribute
}

// DictAttr is {a = 1, b}, with entries sorted by name.
type DictAttr struct {
	attrBase
	Entries []NamedAttr
}

// Get returns the value of name, or nil.
func (d *DictAttr) Get(name string) Attribute {
	for _, e := range d.Entries {
		if e.Name == name {
			return e.Value
		}
	}
	return nil
}

// Dict returns the dictionary attribute of entries (sorted by name).
func Dict(entries []NamedAttr) *DictAttr {
	es := append([]NamedAttr(nil), entries...)
	sort.SliceStable(es, func(i, j int) bool { return es[i].Name < es[j].Name })
	return internAttr(FormatAttrDict(es), func(b attrBase) Attribute { return &DictAttr{b, es} }).(*DictAttr)
}

// FormatAttrDict prints {a = 1, b} with entries in the given order; unit
// entries print as their name alone.
func FormatAttrDict(es []NamedAttr) string {
	var sb strings.Builder
	sb.WriteByte('{')
	for i, e := range es {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString(FormatAttrName(e.Name))
		if _, unit := e.Value.(*UnitAttr); !unit {
			sb.WriteString(" = ")
			sb.WriteString(e.Value.String())
		}
	}
	sb.WriteByte('}')
	return sb.String()
}

// FormatAttrName prints an attribute name bare when it is a valid bare
// identifier and quoted otherwise.
func FormatAttrName(name string) string {
	if IsBareIdentifier(name) {
		return name
	}
	return QuoteString(name)
}

// IsBareIdentifier reports whether s matches [a-zA-Z_][a-zA-Z0-9_$.]*.
func IsBareIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_':
		case i > 0 && (c >= '0' && c <= '9' || c == '$' || c == '.'):
		default:
			return false
		}
	}
	return true
}

// SymbolRefAttr is @root or @root::@nested::@leaf.
type SymbolRefAttr struct {
	attrBase
	Root   string
	Nested []string
}

// Leaf returns the last name in the reference.
func (a *SymbolRefAttr) Leaf() string {
	if len(a.Nested) > 0 {
		return a.Nested[len(a.Nested)-1]
	}
	return a.Root
}

// SymbolRef returns @root::@nested....
func SymbolRef(root string, nested ...string) *SymbolRefAttr {
	text := FormatSymbolName(root)
	for _, n := range nested {
		text += "::" + FormatSymbolName(n)
	}
	return internAttr(text, func(b attrBase) Attribute {
		return &SymbolRefAttr{b, root, append([]string(nil), nested...)}
	}).(*SymbolRefAttr)
}

// FormatSymbolName prints @name, quoting names that are not bare identifiers.
func FormatSymbolName(name string) string {
	if IsBareIdentifier(name) {
		return "@" + name
	}
	return "@" + QuoteString(name)
}

// DenseArrayAttr is array<i64: 1, 2> (integers) or array<f32: 1.0> (floats).
type DenseArrayAttr struct {
	attrBase
	Elem   Type
	Ints   []int64
	Floats []float64
}

// Len returns the number of elements.
func (a *DenseArrayAttr) Len() int {
	if IsFloat(a.Elem) {
		return len(a.Floats)
	}
	return len(a.Ints)
}

// DenseI64Array returns array<i64: vals...>.
func DenseI64Array(vals ...int64) *DenseArrayAttr { return DenseIntArray(I64, vals) }

// DenseI32Array returns array<i32: vals...>.
func DenseI32Array(vals ...int64) *DenseArrayAttr { return DenseIntArray(I32, vals) }

// DenseIntArray returns array<elem: vals...>; i1 arrays print true/false.
func DenseIntArray(elem Type, vals []int64) *DenseArrayAttr {
	text := denseArrayText(elem, vals, func(v int64) string {
		if IsIntegerOfWidth(elem, 1) {
			return strconv.FormatBool(v != 0)
		}
		return formatIntValue(truncInt(v, elem), elem)
	})
	return internAttr(text, func(b attrBase) Attribute {
		return &DenseArrayAttr{attrBase: b, Elem: elem, Ints: append([]int64{}, vals...)}
	}).(*DenseArrayAttr)
}

// DenseFloatArray returns array<f32: vals...>.
func DenseFloatArray(elem *FloatType, vals []float64) *DenseArrayAttr {
	text := denseArrayText(elem, vals, func(v float64) string { return FormatFloat(RoundToFloatKind(v, elem.Kind), elem.Kind) })
	return internAttr(text, func(b attrBase) Attribute {
		return &DenseArrayAttr{attrBase: b, Elem: elem, Floats: append([]float64{}, vals...)}
	}).(*DenseArrayAttr)
}

// denseArrayText prints array<elem: v, ...> (array<elem> when empty).
func denseArrayText[T any](elem Type, vals []T, str func(T) string) string {
	if len(vals) == 0 {
		return "array<" + elem.String() + ">"
	}
	return "array<" + elem.String() + ": " + CommaSeparated(vals, str) + ">"
}

// DenseAttr is dense<...> : type, a splat or a full list of elements for a
// vector or tensor type. Integer elements are in Ints, floats in Floats.
type DenseAttr struct {
	attrBase
	typ    ShapedType
	Splat  bool
	Ints   []int64
	Floats []float64
}

func (a *DenseAttr) Type() Type { return a.typ }

// ShapedType returns the vector or tensor type.
func (a *DenseAttr) ShapedType() ShapedType { return a.typ }

// DenseSplatInt returns dense<v> : t.
func DenseSplatInt(v int64, t ShapedType) *DenseAttr {
	return denseOf(t, true, []int64{v}, nil)
}

// DenseSplatFloat returns dense<v> : t.
func DenseSplatFloat(v float64, t ShapedType) *DenseAttr {
	return denseOf(t, true, nil, []float64{v})
}

// DenseInts returns dense<[...]> : t (a splat when all values are equal).
func DenseInts(vals []int64, t ShapedType) *DenseAttr {
	if allEqualInts(vals) {
		return denseOf(t, true, vals[:1], nil)
	}
	return denseOf(t, false, vals, nil)
}

// DenseFloats returns dense<[...]> : t (a splat when all values are equal).
func DenseFloats(vals []float64, t ShapedType) *DenseAttr {
	if allEqualFloats(vals) {
		return denseOf(t, true, nil, vals[:1])
	}
	return denseOf(t, false, nil, vals)
}

func allEqualInts(v []int64) bool {
	for _, x := range v {
		if x != v[0] {
			return false
		}
	}
	return len(v) > 0
}

func allEqualFloats(v []float64) bool {
	for _, x := range v {
		if math.Float64bits(x) != math.Float64bits(v[0]) {
			return false
		}
	}
	return len(v) > 0
}

func denseOf(t ShapedType, splat bool, ints []int64, floats []float64) *DenseAttr {
	elem := t.ElementType()
	var elems []string
	if floats != nil {
		fk := elem.(*FloatType).Kind
		for i := range floats {
			floats[i] = RoundToFloatKind(floats[i], fk)
			elems = append(elems, FormatFloat(floats[i], fk))
		}
	} else {
		for i := range ints {
			ints[i] = truncInt(ints[i], elem)
			if IsIntegerOfWidth(elem, 1) {
				elems = append(elems, strconv.FormatBool(ints[i] != 0))
			} else {
				elems = append(elems, formatIntValue(ints[i], elem))
			}
		}
	}
	var sb strings.Builder
	sb.WriteString("dense<")
	switch {
	case splat:
		sb.WriteString(elems[0])
	case NumElements(t.Shape()) == 0:
		// Upstream prints empty elements as dense<>.
	case len(elems) > denseHexThreshold:
		sb.WriteString(`"` + denseRawHex(elem, ints, floats) + `"`)
	default:
		writeNested(&sb, t.Shape(), elems)
	}
	sb.WriteString("> : ")
	sb.WriteString(t.String())
	return internAttr(sb.String(), func(b attrBase) Attribute {
		return &DenseAttr{attrBase: b, typ: t, Splat: splat, Ints: ints, Floats: floats}
	}).(*DenseAttr)
}

// denseHexThreshold is mlir-opt's default bound for printing dense
// elements as a list: more elements than this (and not a splat) print as a
// hex string of their raw data.
const denseHexThreshold = 100

// denseRawHex is the raw data of dense elements as upstream stores and
// prints it: each element in the fewest whole bytes of its storage width,
// little-endian, and i1 elements packed eight to a byte, the first in the
// lowest bit.
func denseRawHex(elem Type, ints []int64, floats []float64) string {
	var raw []byte
	switch {
	case floats != nil:
		k := elem.(*FloatType).Kind
		n := (k.StorageBits() + 7) / 8
		for _, f := range floats {
			raw = appendLittleEndian(raw, FloatToBits(f, k), n, false)
		}
	case IsIntegerOfWidth(elem, 1):
		raw = make([]byte, (len(ints)+7)/8)
		for i, v := range ints {
			if v&1 != 0 {
				raw[i/8] |= 1 << uint(i%8)
			}
		}
	default:
		n := (BitWidth(elem) + 7) / 8
		for _, v := range ints {
			raw = appendLittleEndian(raw, uint64(v), n, v < 0)
		}
	}
	return "0x" + strings.ToUpper(hex.EncodeToString(raw))
}

// appendLittleEndian appends the n low bytes of v, the lowest first; bytes
// past the eighth repeat the sign (neg).
func appendLittleEndian(raw []byte, v uint64, n int, neg bool) []byte {
	for i := 0; i < n; i++ {
		switch {
		case i < 8:
			raw = append(raw, byte(v>>(8*uint(i))))
		case neg:
			raw = append(raw, 0xFF)
		default:
			raw = append(raw, 0)
		}
	}
	return raw
}

// writeNested prints elems as nested lists following shape, e.g. [[1, 2], [3, 4]].
func writeNested(sb *strings.Builder, shape []int64, elems []string) {
	if len(shape) == 0 {
		if len(elems) > 0 {
			sb.WriteString(elems[0])
		}
		return
	}
	inner := int64(1)
	for _, d := range shape[1:] {
		inner *= d
	}
	sb.WriteByte('[')
	for i := int64(0); i < shape[0]; i++ {
		if i > 0 {
			sb.WriteString(", ")
		}
		lo, hi := i*inner, (i+1)*inner
		if hi > int64(len(elems)) {
			hi = int64(len(elems))
		}
		if lo > hi {
			lo = hi
		}
		writeNested(sb, shape[1:], elems[lo:hi])
	}
	sb.WriteByte(']')
}

// StridedLayoutAttr is strided<[s0, s1, ...], offset: o>.
type StridedLayoutAttr struct {
	attrBase
	Strides []int64
	Offset  int64
}

// StridedLayout returns the strided layout attribute.
func StridedLayout(strides []int64, offset int64) *StridedLayoutAttr {
	text := "strided<[" + CommaSeparated(strides, formatDim) + "]"
	if offset != 0 {
		text += ", offset: " + formatDim(offset)
	}
	return internAttr(text+">", func(b attrBase) Attribute {
		return &StridedLayoutAttr{b, append([]int64{}, strides...), offset}
	}).(*StridedLayoutAttr)
}

// IsIdentityFor reports whether the layout is the row-major layout of shape,
// which upstream prints by omitting the layout.
func (a *StridedLayoutAttr) IsIdentityFor(shape []int64) bool {
	if a.Offset != 0 || len(a.Strides) != len(shape) {
		return false
	}
	id := IdentityStrides(shape)
	for i := range id {
		if id[i] == Dynamic || id[i] != a.Strides[i] {
			return false
		}
	}
	return true
}

// DialectAttr is an attribute defined by a dialect, such as
// #gpu.address_space<workgroup> or #gpu<dim x>. Text is its printed form and
// identity; Data holds the dialect's parsed parameters.
type DialectAttr struct {
	attrBase
	Dialect string
	Name    string
	Data    any
}

// AttrData returns the parameters of a when it is a dialect attribute
// whose parameters are a *P, else nil.
func AttrData[P any](a Attribute) *P {
	if da, ok := a.(*DialectAttr); ok {
		if d, ok := da.Data.(*P); ok {
			return d
		}
	}
	return nil
}

// DialectAttrOf interns a dialect attribute with printed form text.
func DialectAttrOf(dialect, name, text string, data any) *DialectAttr {
	return internAttr(text, func(b attrBase) Attribute {
		return &DialectAttr{attrBase: b, Dialect: dialect, Name: name, Data: data}
	}).(*DialectAttr)
}

// MemorySpaceNumber implements MemorySpaceNumberer for dialect attributes
// whose Data does.
func (a *DialectAttr) MemorySpaceNumber() int64 {
	if n, ok := a.Data.(MemorySpaceNumberer); ok {
		return n.MemorySpaceNumber()
	}
	return -1
}

// OpaqueAttr keeps an attribute the parser does not interpret (an affine map,
// or an attribute of an unregistered dialect) verbatim.
type OpaqueAttr struct{ attrBase }

// OpaqueAttrOf returns the opaque attribute with the given text.
func OpaqueAttrOf(text string) *OpaqueAttr {
	return internAttr(text, func(b attrBase) Attribute { return &OpaqueAttr{b} }).(*OpaqueAttr)
}

// AttrInt returns the integer value of an IntegerAttr or BoolAttr.
func AttrInt(a Attribute) (int64, bool) {
	if ia, ok := a.(*IntegerAttr); ok {
		return ia.Int(), true
	}
	return 0, false
}
