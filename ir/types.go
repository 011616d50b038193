package ir

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Type is an interned IR type. Two types are equal exactly when they are the
// same Go value, so types can be compared with == and used as map keys.
type Type interface {
	// String returns the type in MLIR textual syntax, as upstream prints it.
	String() string
	isType()
}

// typeBase is embedded in every type; it caches the printed form, which is
// also the interning key.
type typeBase struct{ text string }

func (t *typeBase) String() string { return t.text }
func (*typeBase) isType()          {}

// internTable holds the canonical instance of each type (or attribute) by
// its key.
type internTable[T any] struct {
	sync.Mutex
	m map[string]T
}

// get returns the instance under key, calling build to create it the first
// time key is seen.
func (t *internTable[T]) get(key string, build func() T) T {
	t.Lock()
	defer t.Unlock()
	if v, ok := t.m[key]; ok {
		return v
	}
	if t.m == nil {
		t.m = make(map[string]T, 256)
	}
	v := build()
	t.m[key] = v
	return v
}

var typeTable internTable[Type]

// internType returns the canonical instance of a type whose printed form is
// text, calling build to create it the first time it is seen.
func internType(text string, build func(base typeBase) Type) Type {
	return typeTable.get(text, func() Type { return build(typeBase{text: text}) })
}

// Signedness of an integer type.
type Signedness uint8

const (
	Signless Signedness = iota
	Signed
	Unsigned
)

// IntegerType is iN, siN or uiN.
type IntegerType struct {
	typeBase
	Width      int
	Signedness Signedness
}

// IntegerTypeOf returns the signless integer type of the given width.
func IntegerTypeOf(width int) *IntegerType { return IntegerTypeWithSign(width, Signless) }

// IntegerTypeWithSign returns iN, siN or uiN.
func IntegerTypeWithSign(width int, s Signedness) *IntegerType {
	prefix := [...]string{"i", "si", "ui"}[s]
	return internType(prefix+strconv.Itoa(width), func(b typeBase) Type {
		return &IntegerType{typeBase: b, Width: width, Signedness: s}
	}).(*IntegerType)
}

// IsSignless reports whether t is a signless integer.
func (t *IntegerType) IsSignless() bool { return t.Signedness == Signless }

// IndexType is the target-sized integer type `index`.
type IndexType struct{ typeBase }

// FloatKind identifies a floating-point format.
type FloatKind uint8

const (
	F16 FloatKind = iota
	BF16
	F32
	F64
	F8E4M3FN
	F8E5M2
	TF32
	// F80 (x87 extended) and F128 (IEEE quad) are types only: tmac reads,
	// verifies and prints them as upstream does, but holds no values of
	// them (a float64 cannot) and compiles none.
	F80
	F128
	// The other small formats of upstream's builtin dialect, types only as
	// F80 and F128 are: Hopper computes with none of them.
	F8E4M3FNUZ
	F8E5M2FNUZ
	F8E4M3B11FNUZ
	F8E4M3
	F8E3M4
	F8E8M0FNU
	F4E2M1FN
	F6E2M3FN
	F6E3M2FN
)

var floatNames = [...]string{"f16", "bf16", "f32", "f64", "f8E4M3FN", "f8E5M2", "tf32", "f80", "f128",
	"f8E4M3FNUZ", "f8E5M2FNUZ", "f8E4M3B11FNUZ", "f8E4M3", "f8E3M4", "f8E8M0FNU", "f4E2M1FN", "f6E2M3FN", "f6E3M2FN"}
var floatWidths = [...]int{16, 16, 32, 64, 8, 8, 19, 80, 128, 8, 8, 8, 8, 8, 8, 4, 6, 6}

// HoldsValues reports whether tmac holds values of format k: the formats
// sm_90a computes with. The others are types only; their constants are
// rejected where they are parsed.
func (k FloatKind) HoldsValues() bool { return k <= TF32 }

// FloatType is one of the builtin floating-point types.
type FloatType struct {
	typeBase
	Kind FloatKind
}

// Width is the storage width in bits (tf32 reports 19, as upstream does).
func (t *FloatType) Width() int { return floatWidths[t.Kind] }

// FloatTypeOf returns the float type of the given kind.
func FloatTypeOf(k FloatKind) *FloatType {
	return internType(floatNames[k], func(b typeBase) Type { return &FloatType{typeBase: b, Kind: k} }).(*FloatType)
}

// ComplexType is complex<T> with an integer or float element type.
type ComplexType struct {
	typeBase
	Elem Type
}

// ComplexTypeOf returns complex<elem>.
func ComplexTypeOf(elem Type) *ComplexType {
	return internType("complex<"+elem.String()+">", func(b typeBase) Type { return &ComplexType{typeBase: b, Elem: elem} }).(*ComplexType)
}

// NoneType is the builtin `none` type.
type NoneType struct{ typeBase }

// Common types.
var (
	I1    = IntegerTypeOf(1)
	I8    = IntegerTypeOf(8)
	I16   = IntegerTypeOf(16)
	I32   = IntegerTypeOf(32)
	I64   = IntegerTypeOf(64)
	Index = internType("index", func(b typeBase) Type { return &IndexType{b} }).(*IndexType)
	None  = internType("none", func(b typeBase) Type { return &NoneType{b} }).(*NoneType)
	F16T  = FloatTypeOf(F16)
	BF16T = FloatTypeOf(BF16)
	F32T  = FloatTypeOf(F32)
	F64T  = FloatTypeOf(F64)
)

// Dynamic marks a dynamic dimension, stride or offset (`?`).
const Dynamic int64 = -1 << 63

func formatDim(d int64) string {
	if d == Dynamic {
		return "?"
	}
	return strconv.FormatInt(d, 10)
}

func writeShape(sb *strings.Builder, shape []int64) {
	for _, d := range shape {
		sb.WriteString(formatDim(d))
		sb.WriteByte('x')
	}
}

// ShapedType is implemented by memref, vector and tensor types.
type ShapedType interface {
	Type
	ElementType() Type
	Shape() []int64
}

// NumElements returns the product of a static shape, or -1 if any dim is
// dynamic. A product past the int64 range saturates at math.MaxInt64 (so
// that it cannot wrap to a small or negative count); code that computes
// sizes from shapes checks for that with ShapeBytes.
func NumElements(shape []int64) int64 {
	n, ok := CheckedNumElements(shape)
	switch {
	case n == -1:
		return -1
	case !ok:
		return math.MaxInt64
	}
	return n
}

// CheckedNumElements returns the product of a static shape (-1 if a dim is
// dynamic) and whether it fits in an int64.
func CheckedNumElements(shape []int64) (int64, bool) {
	for _, d := range shape {
		if d == Dynamic {
			return -1, true
		}
	}
	n := int64(1)
	for _, d := range shape {
		if d < 0 {
			return 0, false
		}
		hi, lo := bits.Mul64(uint64(n), uint64(d))
		if hi != 0 || lo > math.MaxInt64 {
			return 0, false
		}
		n = int64(lo)
	}
	return n, true
}

// ShapeBytes returns the size in bytes of a static shape of elements of
// elemBits bits (rounded up to whole bytes), and false when a dim is
// dynamic or the size does not fit in an int64.
func ShapeBytes(shape []int64, elemBits int) (int64, bool) {
	n, ok := CheckedNumElements(shape)
	if !ok || n < 0 || elemBits < 0 {
		return 0, false
	}
	hi, lo := bits.Mul64(uint64(n), uint64(elemBits))
	if hi != 0 || lo > math.MaxInt64-7 {
		return 0, false
	}
	return (int64(lo) + 7) / 8, true
}

// StaticSize returns the size in bytes of a statically shaped type (0 for
// any other type), and an error with TooLarge's message when that size
// does not fit in 64 bits.
func StaticSize(t Type) (int64, error) {
	st, ok := t.(ShapedType)
	if !ok || !HasStaticShape(st.Shape()) {
		return 0, nil
	}
	b, ok := ShapeBytes(st.Shape(), BitWidth(st.ElementType()))
	if !ok {
		return 0, errors.New(TooLarge(st))
	}
	return b, nil
}

// TooLarge describes a shaped type whose size does not fit in 64 bits,
// with its exact element count: "'memref<...>' is too large: N elements
// of 4 bytes do not fit in a 64-bit size".
func TooLarge(t ShapedType) string {
	n := big.NewInt(1)
	for _, d := range t.Shape() {
		n.Mul(n, big.NewInt(d))
	}
	each := "bits"
	b := BitWidth(t.ElementType())
	if b%8 == 0 {
		b, each = b/8, "bytes"
	}
	if b == 1 {
		each = strings.TrimSuffix(each, "s")
	}
	return fmt.Sprintf("'%s' is too large: %s elements of %d %s do not fit in a 64-bit size", t, n, b, each)
}

// HasStaticShape reports whether no dimension is dynamic.
func HasStaticShape(shape []int64) bool {
	for _, d := range shape {
		if d == Dynamic {
			return false
		}
	}
	return true
}

// VectorType is vector<4x8xf32>, optionally with scalable dims (vector<[4]xf32>).
type VectorType struct {
	typeBase
	shape    []int64
	Scalable []bool
	Elem     Type
}

func (t *VectorType) ElementType() Type { return t.Elem }
func (t *VectorType) Shape() []int64    { return t.shape }

// VectorTypeOf returns vector<shape x elem>.
func VectorTypeOf(shape []int64, elem Type) *VectorType {
	return ScalableVectorTypeOf(shape, nil, elem)
}

// ScalableVectorTypeOf returns a vector type with some dims marked scalable.
func ScalableVectorTypeOf(shape []int64, scalable []bool, elem Type) *VectorType {
	var sb strings.Builder
	sb.WriteString("vector<")
	anyScalable := false
	for i, d := range shape {
		if i < len(scalable) && scalable[i] {
			anyScalable = true
			sb.WriteString("[" + formatDim(d) + "]x")
		} else {
			sb.WriteString(formatDim(d) + "x")
		}
	}
	sb.WriteString(elem.String())
	sb.WriteByte('>')
	if !anyScalable {
		scalable = nil
	}
	return internType(sb.String(), func(b typeBase) Type {
		return &VectorType{typeBase: b, shape: append([]int64(nil), shape...), Scalable: append([]bool(nil), scalable...), Elem: elem}
	}).(*VectorType)
}

// TensorType is a ranked tensor (tensor<4x?xf32>). tmac uses tensors only as
// the type of dense attributes.
type TensorType struct {
	typeBase
	shape []int64
	Elem  Type
	// Encoding is the optional attribute after the element type
	// (tensor<8xf32, "csr">); nil without one.
	Encoding Attribute
}

func (t *TensorType) ElementType() Type { return t.Elem }
func (t *TensorType) Shape() []int64    { return t.shape }

// TensorTypeOf returns tensor<shape x elem>.
func TensorTypeOf(shape []int64, elem Type) *TensorType { return EncodedTensorTypeOf(shape, elem, nil) }

// EncodedTensorTypeOf returns tensor<shape x elem, encoding> (no encoding
// when it is nil).
func EncodedTensorTypeOf(shape []int64, elem Type, encoding Attribute) *TensorType {
	var sb strings.Builder
	sb.WriteString("tensor<")
	writeShape(&sb, shape)
	sb.WriteString(elem.String())
	if encoding != nil {
		sb.WriteString(", ")
		sb.WriteString(encoding.String())
	}
	sb.WriteByte('>')
	return internType(sb.String(), func(b typeBase) Type {
		return &TensorType{typeBase: b, shape: append([]int64(nil), shape...), Elem: elem, Encoding: encoding}
	}).(*TensorType)
}

// WithElementType returns t with its element type replaced by elem: the
// same vector (scalable dimensions included) or tensor (encoding included)
// shape, or elem itself for a scalar. Other shaped types are returned as
// elem too; callers decide what a memref of another element type means.
func WithElementType(t, elem Type) Type {
	switch s := t.(type) {
	case *VectorType:
		return ScalableVectorTypeOf(s.Shape(), s.Scalable, elem)
	case *TensorType:
		return EncodedTensorTypeOf(s.Shape(), elem, s.Encoding)
	case *UnrankedTensorType:
		return UnrankedTensorTypeOf(elem)
	}
	return elem
}

// MemRefType is a ranked memref with an optional layout and memory space.
type MemRefType struct {
	typeBase
	shape []int64
	Elem  Type
	// Layout is nil for the identity layout, or a *StridedLayoutAttr (or
	// another layout attribute such as an affine map kept opaque).
	Layout Attribute
	// MemorySpace is nil for the default space, an IntegerAttr (3) or a
	// dialect attribute (#gpu.address_space<workgroup>).
	MemorySpace Attribute
}

func (t *MemRefType) ElementType() Type { return t.Elem }
func (t *MemRefType) Shape() []int64    { return t.shape }
func (t *MemRefType) Rank() int         { return len(t.shape) }

// MemRefTypeOf returns a memref type. Layout and memory space may be nil.
func MemRefTypeOf(shape []int64, elem Type, layout, space Attribute) *MemRefType {
	// A strided layout is kept even when it is the row-major one: upstream
	// prints memref<4x4xf32, strided<[4, 1]>> as written. An identity
	// affine map is the default layout, as upstream's MemRefType::get
	// makes it.
	if ia, ok := space.(*IntegerAttr); ok && ia.Int() == 0 {
		space = nil
	}
	if layout != nil && isIdentityAffineMap(layout.String()) {
		layout = nil
	}
	var sb strings.Builder
	sb.WriteString("memref<")
	writeShape(&sb, shape)
	sb.WriteString(elem.String())
	if layout != nil {
		sb.WriteString(", ")
		sb.WriteString(layout.String())
	}
	if space != nil {
		sb.WriteString(", ")
		sb.WriteString(printMemorySpace(space))
	}
	sb.WriteByte('>')
	return internType(sb.String(), func(b typeBase) Type {
		return &MemRefType{typeBase: b, shape: append([]int64(nil), shape...), Elem: elem, Layout: layout, MemorySpace: space}
	}).(*MemRefType)
}

// printMemorySpace prints an integer memory space without its `: i64` type,
// as upstream does.
func printMemorySpace(a Attribute) string {
	if ia, ok := a.(*IntegerAttr); ok && ia.Type() == I64 {
		return strconv.FormatInt(ia.Int(), 10)
	}
	return a.String()
}

// MemorySpaceNumber returns the numeric address space of a memory space
// attribute: 0 for nil, the value of an integer, or what a dialect attribute
// maps to (via MemorySpaceNumberer).
func MemorySpaceNumber(a Attribute) (int64, bool) {
	switch a := a.(type) {
	case nil:
		return 0, true
	case *IntegerAttr:
		return a.Int(), true
	case MemorySpaceNumberer:
		return a.MemorySpaceNumber(), true
	}
	return 0, false
}

// MemorySpaceNumberer is implemented by dialect attributes usable as memref
// memory spaces (e.g. #gpu.address_space<workgroup> is 3).
type MemorySpaceNumberer interface {
	MemorySpaceNumber() int64
}

// StridesAndOffset returns the strides and offset of a memref, computing the
// row-major identity strides when there is no explicit layout.
func (t *MemRefType) StridesAndOffset() (strides []int64, offset int64, ok bool) {
	switch l := t.Layout.(type) {
	case nil:
		return IdentityStrides(t.shape), 0, true
	case *StridedLayoutAttr:
		return l.Strides, l.Offset, true
	}
	return nil, 0, false
}

// IdentityStrides returns the row-major strides of shape; dims after a dynamic
// dim get dynamic strides.
func IdentityStrides(shape []int64) []int64 {
	strides := make([]int64, len(shape))
	running := int64(1)
	for i := len(shape) - 1; i >= 0; i-- {
		strides[i] = running
		if running != Dynamic {
			if shape[i] == Dynamic {
				running = Dynamic
			} else {
				running *= shape[i]
			}
		}
	}
	return strides
}

// Delinearize is the multi-dimensional index of flat position i in the
// static row-major shape.
func Delinearize(shape []int64, i int64) []int64 {
	idx := make([]int64, len(shape))
	for d := len(shape) - 1; d >= 0; d-- {
		idx[d] = i % shape[d]
		i /= shape[d]
	}
	return idx
}

// Linearize is the flat position of idx in the static row-major shape.
func Linearize(shape, idx []int64) int64 {
	var p int64
	for d, s := range IdentityStrides(shape) {
		p += idx[d] * s
	}
	return p
}

// NextIndex advances idx to the next index of shape in row-major order;
// it reports false, idx back at all zeros, after the last one.
func NextIndex(idx, shape []int64) bool {
	for d := len(idx) - 1; d >= 0; d-- {
		if idx[d]++; idx[d] < shape[d] {
			return true
		}
		idx[d] = 0
	}
	return false
}

// UnrankedTensorType is tensor<*xf32>.
type UnrankedTensorType struct {
	typeBase
	Elem Type
}

// ElementType returns the element type.
func (t *UnrankedTensorType) ElementType() Type { return t.Elem }

// UnrankedTensorTypeOf returns tensor<*xelem>.
func UnrankedTensorTypeOf(elem Type) *UnrankedTensorType {
	return internType("tensor<*x"+elem.String()+">", func(b typeBase) Type {
		return &UnrankedTensorType{typeBase: b, Elem: elem}
	}).(*UnrankedTensorType)
}

// UnrankedMemRefType is memref<*xf32>.
type UnrankedMemRefType struct {
	typeBase
	Elem        Type
	MemorySpace Attribute
}

// UnrankedMemRefTypeOf returns memref<*xelem[, space]>.
func UnrankedMemRefTypeOf(elem Type, space Attribute) *UnrankedMemRefType {
	if ia, ok := space.(*IntegerAttr); ok && ia.Int() == 0 {
		space = nil
	}
	text := "memref<*x" + elem.String()
	if space != nil {
		text += ", " + printMemorySpace(space)
	}
	text += ">"
	return internType(text, func(b typeBase) Type {
		return &UnrankedMemRefType{typeBase: b, Elem: elem, MemorySpace: space}
	}).(*UnrankedMemRefType)
}

// FunctionType is (inputs) -> results.
type FunctionType struct {
	typeBase
	Inputs  []Type
	Results []Type
}

// FunctionTypeOf returns the function type (inputs) -> results.
func FunctionTypeOf(inputs, results []Type) *FunctionType {
	var sb strings.Builder
	sb.WriteByte('(')
	writeTypeList(&sb, inputs)
	sb.WriteString(") -> ")
	writeResultTypes(&sb, results)
	return internType(sb.String(), func(b typeBase) Type {
		return &FunctionType{typeBase: b, Inputs: append([]Type(nil), inputs...), Results: append([]Type(nil), results...)}
	}).(*FunctionType)
}

func writeTypeList(sb *strings.Builder, ts []Type) {
	sb.WriteString(CommaSeparated(ts, Type.String))
}

// writeResultTypes prints a result list as upstream does: a single
// non-function type bare, everything else parenthesised.
func writeResultTypes(sb *strings.Builder, ts []Type) {
	if len(ts) == 1 {
		if _, isFn := ts[0].(*FunctionType); !isFn {
			sb.WriteString(ts[0].String())
			return
		}
	}
	sb.WriteByte('(')
	writeTypeList(sb, ts)
	sb.WriteByte(')')
}

// TupleType is tuple<...>.
type TupleType struct {
	typeBase
	Types []Type
}

// TupleTypeOf returns tuple<types>.
func TupleTypeOf(types []Type) *TupleType {
	var sb strings.Builder
	sb.WriteString("tuple<")
	writeTypeList(&sb, types)
	sb.WriteByte('>')
	return internType(sb.String(), func(b typeBase) Type {
		return &TupleType{typeBase: b, Types: append([]Type(nil), types...)}
	}).(*TupleType)
}

// DialectType is a type defined by a dialect (`!nvgpu.mbarrier.token`). The
// dialect supplies the parsed representation in Data; Text is its printed
// form, which is also its identity.
type DialectType struct {
	typeBase
	Dialect string
	Name    string // e.g. "mbarrier.token"
	Data    any    // dialect-specific parameters
}

// TypeData returns the parameters of t when it is a dialect type whose
// parameters are a *P, else nil.
func TypeData[P any](t Type) *P {
	if dt, ok := t.(*DialectType); ok {
		if d, ok := dt.Data.(*P); ok {
			return d
		}
	}
	return nil
}

// DialectTypeOf interns a dialect type whose printed form is text. make is
// called once to build the parameters.
func DialectTypeOf(dialect, name, text string, data func() any) *DialectType {
	return internType(text, func(b typeBase) Type {
		var d any
		if data != nil {
			d = data()
		}
		return &DialectType{typeBase: b, Dialect: dialect, Name: name, Data: d}
	}).(*DialectType)
}

// OpaqueType holds a type of an unregistered dialect verbatim.
type OpaqueType struct{ typeBase }

// OpaqueTypeOf returns the opaque type with the given full text (`!foo.bar<...>`).
func OpaqueTypeOf(text string) *OpaqueType {
	return internType(text, func(b typeBase) Type { return &OpaqueType{b} }).(*OpaqueType)
}

// Type predicates used by verifiers.

// IsInteger reports whether t is an integer type (any signedness).
func IsInteger(t Type) bool { _, ok := t.(*IntegerType); return ok }

// IsSignlessInteger reports whether t is a signless integer type.
func IsSignlessInteger(t Type) bool {
	it, ok := t.(*IntegerType)
	return ok && it.Signedness == Signless
}

// IsIntegerOfWidth reports whether t is a signless integer of the given width.
func IsIntegerOfWidth(t Type, w int) bool {
	it, ok := t.(*IntegerType)
	return ok && it.Signedness == Signless && it.Width == w
}

// IsIndex reports whether t is `index`.
func IsIndex(t Type) bool { return t == Type(Index) }

// IsFloat reports whether t is a floating-point type.
func IsFloat(t Type) bool { _, ok := t.(*FloatType); return ok }

// IsSignlessIntOrIndex reports whether t is a signless integer or index.
func IsSignlessIntOrIndex(t Type) bool { return IsSignlessInteger(t) || IsIndex(t) }

// ElementTypeOrSelf returns the element type of a shaped type, or t itself.
func ElementTypeOrSelf(t Type) Type {
	if s, ok := t.(ShapedType); ok {
		return s.ElementType()
	}
	return t
}

// BitWidth returns the width of an integer or float type, 64 for index, or 0.
func BitWidth(t Type) int {
	switch t := t.(type) {
	case *IntegerType:
		return t.Width
	case *FloatType:
		if t.Kind == TF32 {
			return 32
		}
		return t.Width()
	case *IndexType:
		return 64
	}
	return 0
}

// isIdentityAffineMap reports whether text is affine_map<(d0, ..., dn) ->
// (d0, ..., dn)>, with or without symbols: upstream's AffineMap::isIdentity.
func isIdentityAffineMap(text string) bool {
	body, ok := strings.CutPrefix(text, "affine_map<")
	if !ok {
		return false
	}
	s := &TextScanner{Src: strings.TrimSuffix(body, ">")}
	isID := func(c byte) bool {
		return c == '_' || c == '$' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
	}
	list := func(open, close string) ([]string, bool) {
		var ids []string
		if !s.Eat(open) {
			return nil, false
		}
		for !s.Eat(close) {
			if len(ids) > 0 && !s.Eat(",") {
				return nil, false
			}
			id := s.Ident(isID)
			if id == "" {
				return nil, false
			}
			ids = append(ids, id)
		}
		return ids, true
	}
	dims, ok := list("(", ")")
	if !ok {
		return false
	}
	if s.Peek("[") {
		if _, ok := list("[", "]"); !ok {
			return false
		}
	}
	if !s.Eat("->") {
		return false
	}
	results, ok := list("(", ")")
	s.SkipSpace()
	return ok && s.Pos == len(s.Src) && slices.Equal(dims, results)
}
