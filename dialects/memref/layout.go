package memref

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tmac-dev/tmac/ir"
)

// Dynamic is the sentinel of a dynamic size, offset or stride (`?`, printed
// as -9223372036854775808 in static_* arrays).
const Dynamic = ir.Dynamic

// SatAdd adds two offset/stride values; a dynamic operand makes the sum
// dynamic.
func SatAdd(a, b int64) int64 {
	if a == Dynamic || b == Dynamic {
		return Dynamic
	}
	return a + b
}

// SatMul multiplies two offset/stride values. A static zero wins over a
// dynamic value (0 * ? = 0); otherwise a dynamic operand makes the product
// dynamic.
func SatMul(a, b int64) int64 {
	if a == 0 || b == 0 {
		return 0
	}
	if a == Dynamic || b == Dynamic {
		return Dynamic
	}
	return a * b
}

// StridesAndOffset returns the strides and offset of a ranked memref type:
// row-major strides for the identity layout, the values of a strided<>
// layout, or those of an affine-map layout of the form sum(d_i * s_i) + off
// (symbols make the coefficient or offset dynamic). ok is false when the
// layout is not strided.
func StridesAndOffset(t *ir.MemRefType) (strides []int64, offset int64, ok bool) {
	switch l := t.Layout.(type) {
	case nil:
		return ir.IdentityStrides(t.Shape()), 0, true
	case *ir.StridedLayoutAttr:
		return append([]int64(nil), l.Strides...), l.Offset, true
	}
	m, err := ParseAffineMap(t.Layout.String())
	if err != nil || m.NumDims != t.Rank() {
		return nil, 0, false
	}
	if m.IsIdentity() {
		return ir.IdentityStrides(t.Shape()), 0, true
	}
	if len(m.Results) != 1 {
		return nil, 0, false
	}
	e := m.Results[0]
	if !e.Linear {
		return nil, 0, false
	}
	return append([]int64(nil), e.Coeffs...), e.Const, true
}

// IsStrided reports whether the memref type has a strided layout.
func IsStrided(t *ir.MemRefType) bool {
	_, _, ok := StridesAndOffset(t)
	return ok
}

// NumLayoutSymbols is the number of symbols of the memref's layout map (0
// for identity and strided<> layouts).
func NumLayoutSymbols(t *ir.MemRefType) int {
	if t.Layout == nil {
		return 0
	}
	if _, ok := t.Layout.(*ir.StridedLayoutAttr); ok {
		return 0
	}
	m, err := ParseAffineMap(t.Layout.String())
	if err != nil {
		return 0
	}
	return m.NumSymbols
}

// InferSubViewResultType computes the (not rank-reduced) result type of a
// subview of source with the given static offsets, sizes and strides
// (Dynamic for SSA entries): the shape is sizes, strides are source stride
// times op stride, and the offset is the source offset plus the sum of
// offset times source stride, all in saturated arithmetic. The layout is
// always an explicit strided<> layout. ok is false if the source is not
// strided or the list lengths differ from the source rank.
func InferSubViewResultType(source *ir.MemRefType, offsets, sizes, strides []int64) (*ir.MemRefType, bool) {
	srcStrides, srcOffset, ok := StridesAndOffset(source)
	n := source.Rank()
	if !ok || len(offsets) != n || len(sizes) != n || len(strides) != n {
		return nil, false
	}
	resStrides := make([]int64, n)
	off := srcOffset
	for i := 0; i < n; i++ {
		off = SatAdd(off, SatMul(offsets[i], srcStrides[i]))
		resStrides[i] = SatMul(srcStrides[i], strides[i])
	}
	return ir.MemRefTypeOf(sizes, source.Elem, ir.StridedLayout(resStrides, off), source.MemorySpace), true
}

// InferRankReducedSubViewResultType infers the subview type and drops the
// dims whose static size is 1 so that the result has rank resultRank (the
// leading unit dims are dropped first). ok is false when this is impossible.
func InferRankReducedSubViewResultType(resultRank int, source *ir.MemRefType, offsets, sizes, strides []int64) (*ir.MemRefType, bool) {
	full, ok := InferSubViewResultType(source, offsets, sizes, strides)
	if !ok {
		return nil, false
	}
	drop := full.Rank() - resultRank
	if drop < 0 {
		return nil, false
	}
	if drop == 0 {
		return full, true
	}
	st, off, _ := StridesAndOffset(full)
	var shape, keptStrides []int64
	for i, d := range full.Shape() {
		if drop > 0 && d == 1 {
			drop--
			continue
		}
		shape = append(shape, d)
		keptStrides = append(keptStrides, st[i])
	}
	if drop > 0 {
		return nil, false
	}
	return ir.MemRefTypeOf(shape, full.Elem, ir.StridedLayout(keptStrides, off), full.MemorySpace), true
}

// SliceCheck is the outcome of comparing a candidate result type with the
// inferred (not rank-reduced) type.
type SliceCheck int

const (
	SliceOK SliceCheck = iota
	SliceRankTooLarge
	SliceSizeMismatch
	SliceElemTypeMismatch
	SliceMemSpaceMismatch
	SliceLayoutMismatch
)

// RankReductionMask returns, for each dim of original, whether it is dropped
// when matching reduced's shape greedily from the left: a dim is kept when it
// equals the next unmatched reduced dim, else dropped if it is the static
// size 1. ok is false when the shapes cannot be matched.
func RankReductionMask(original, reduced []int64) ([]bool, bool) {
	if len(reduced) > len(original) {
		return nil, false
	}
	mask := make([]bool, len(original))
	j := 0
	for i, d := range original {
		if j < len(reduced) && d == reduced[j] {
			j++
			continue
		}
		if d != 1 {
			return nil, false
		}
		mask[i] = true
	}
	return mask, j == len(reduced)
}

// StrideDroppedDims decides which static size-1 dims of expected are dropped
// to obtain the (lower rank) candidate, using the strides: candidate dims
// are those of size 1; when there are more than the rank difference, a
// candidate is dropped iff its stride occurs more often among the still
// unaccounted expected strides than among the candidate's strides. ok is
// false when no consistent choice exists.
func StrideDroppedDims(expected, candidate *ir.MemRefType) ([]bool, bool) {
	n := expected.Rank()
	dropped := make([]bool, n)
	count := 0
	for i, d := range expected.Shape() {
		if d == 1 {
			dropped[i] = true
			count++
		}
	}
	if count+candidate.Rank() == n {
		return dropped, true
	}
	expStrides, _, ok1 := StridesAndOffset(expected)
	candStrides, _, ok2 := StridesAndOffset(candidate)
	if !ok1 || !ok2 {
		return nil, false
	}
	unaccounted := map[int64]int{}
	for _, s := range expStrides {
		unaccounted[s]++
	}
	inCand := map[int64]int{}
	for _, s := range candStrides {
		inCand[s]++
	}
	for i := 0; i < n; i++ {
		if !dropped[i] {
			continue
		}
		s := expStrides[i]
		switch {
		case unaccounted[s] > inCand[s]:
			unaccounted[s]--
		case unaccounted[s] == inCand[s]:
			dropped[i] = false
			count--
		default:
			return nil, false
		}
	}
	if count+candidate.Rank() != n {
		return nil, false
	}
	return dropped, true
}

// CheckSubViewResult compares a subview's declared result type with the
// inferred type expected (from InferSubViewResultType), allowing rank
// reduction: rank, sizes, element type, memory space, then offset and
// strides (a `?` only matches a `?`).
func CheckSubViewResult(expected, result *ir.MemRefType) SliceCheck {
	if result.Rank() > expected.Rank() {
		return SliceRankTooLarge
	}
	if _, ok := RankReductionMask(expected.Shape(), result.Shape()); !ok {
		return SliceSizeMismatch
	}
	if expected.Elem != result.Elem {
		return SliceElemTypeMismatch
	}
	if !sameMemorySpace(expected.MemorySpace, result.MemorySpace) {
		return SliceMemSpaceMismatch
	}
	_, expOff, _ := StridesAndOffset(expected)
	resStrides, resOff, ok := StridesAndOffset(result)
	if !ok || expOff != resOff {
		return SliceLayoutMismatch
	}
	dropped, ok := StrideDroppedDims(expected, result)
	if !ok {
		return SliceLayoutMismatch
	}
	expStrides, _, _ := StridesAndOffset(expected)
	j := 0
	for i, s := range expStrides {
		if dropped[i] {
			continue
		}
		if j >= len(resStrides) || resStrides[j] != s {
			return SliceLayoutMismatch
		}
		j++
	}
	return SliceOK
}

func sameMemorySpace(a, b ir.Attribute) bool { return a == b }

// IsCastCompatible reports whether memref.cast may convert a to b (the rule
// is symmetric): ranked types need equal element types, memory spaces and
// ranks, dims that are equal or dynamic on one side, and, when the layouts
// differ, strides and offsets that are equal or dynamic on one side; a
// ranked and an unranked memref (never two unranked ones) need equal element
// types and memory spaces.
func IsCastCompatible(a, b ir.Type) bool {
	ra, aRanked := a.(*ir.MemRefType)
	rb, bRanked := b.(*ir.MemRefType)
	if aRanked && bRanked {
		if ra.Elem != rb.Elem {
			return false
		}
		if ra.Layout != rb.Layout {
			sa, oa, ok1 := StridesAndOffset(ra)
			sb, ob, ok2 := StridesAndOffset(rb)
			if !ok1 || !ok2 || len(sa) != len(sb) {
				return false
			}
			if !compatibleDim(oa, ob) {
				return false
			}
			for i := range sa {
				if !compatibleDim(sa[i], sb[i]) {
					return false
				}
			}
		}
		if ra.MemorySpace != rb.MemorySpace || ra.Rank() != rb.Rank() {
			return false
		}
		for i, d := range ra.Shape() {
			if !compatibleDim(d, rb.Shape()[i]) {
				return false
			}
		}
		return true
	}
	ea, sa, okA := baseMemRef(a)
	eb, sb, okB := baseMemRef(b)
	if !okA || !okB || (!aRanked && !bRanked) {
		return false
	}
	return ea == eb && sa == sb
}

func compatibleDim(a, b int64) bool { return a == b || a == Dynamic || b == Dynamic }

// baseMemRef returns the element type and memory space of a ranked or
// unranked memref.
func baseMemRef(t ir.Type) (ir.Type, ir.Attribute, bool) {
	switch t := t.(type) {
	case *ir.MemRefType:
		return t.Elem, t.MemorySpace, true
	case *ir.UnrankedMemRefType:
		return t.Elem, t.MemorySpace, true
	}
	return nil, nil, false
}

// --- affine maps ------------------------------------------------------------

// AffineMap is the part of an affine_map<...> layout that memref needs: its
// dim and symbol counts and, per result, whether the expression is linear in
// the dims (coefficients and constant; Dynamic where a symbol takes part).
type AffineMap struct {
	NumDims, NumSymbols int
	Results             []AffineExpr
}

// AffineExpr is a result expression reduced to sum(Coeffs[i]*d_i) + Const.
// Linear is false for expressions that are not of that form (floordiv,
// ceildiv, mod, products of dims). IsDim is the dim index when the
// expression is exactly one dim, else -1.
type AffineExpr struct {
	Linear bool
	Coeffs []int64
	Const  int64
	IsDim  int
}

// IsIdentity reports whether the map is (d0, ..., dn-1) -> (d0, ..., dn-1).
func (m *AffineMap) IsIdentity() bool {
	if m.NumSymbols != 0 || len(m.Results) != m.NumDims {
		return false
	}
	for i, r := range m.Results {
		if r.IsDim != i {
			return false
		}
	}
	return true
}

// ParseAffineMap parses the text of an affine_map<...> attribute.
func ParseAffineMap(text string) (*AffineMap, error) {
	body, ok := strings.CutPrefix(text, "affine_map<")
	if !ok || !strings.HasSuffix(body, ">") {
		return nil, fmt.Errorf("not an affine map: %s", text)
	}
	ap := &affineParser{TextScanner: ir.TextScanner{Src: body[:len(body)-1]}}
	m := &AffineMap{}
	dims, err := ap.idList("(", ")")
	if err != nil {
		return nil, err
	}
	m.NumDims = len(dims)
	var syms []string
	if ap.Peek("[") {
		if syms, err = ap.idList("[", "]"); err != nil {
			return nil, err
		}
	}
	m.NumSymbols = len(syms)
	ap.names = map[string]int{}
	for i, d := range dims {
		ap.names[d] = i
	}
	for i, s := range syms {
		ap.names[s] = -1 - i
	}
	ap.nd = len(dims)
	if !ap.Eat("->") || !ap.Eat("(") {
		return nil, fmt.Errorf("expected '-> (' in %s", text)
	}
	for !ap.Eat(")") {
		e, err := ap.expr()
		if err != nil {
			return nil, err
		}
		m.Results = append(m.Results, e.finish())
		ap.Eat(",")
		if ap.Pos >= len(ap.Src) {
			return nil, fmt.Errorf("unterminated affine map %s", text)
		}
	}
	return m, nil
}

type affineParser struct {
	ir.TextScanner
	names map[string]int // dims >= 0, symbols < 0
	nd    int
}

// linExpr is an expression being reduced: nonLinear marks a failure;
// hasDims tells whether some coefficient is non-zero; dim is the single dim
// the expression is (or -1).
type linExpr struct {
	nonLinear bool
	coeffs    []int64
	c         int64
	dim       int
}

func (e *linExpr) hasDims() bool {
	for _, c := range e.coeffs {
		if c != 0 {
			return true
		}
	}
	return false
}

func (e *linExpr) finish() AffineExpr {
	return AffineExpr{Linear: !e.nonLinear, Coeffs: e.coeffs, Const: e.c, IsDim: e.dim}
}

func (ap *affineParser) ident() string {
	return ap.Ident(func(c byte) bool {
		return c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
	})
}

func (ap *affineParser) idList(open, close string) ([]string, error) {
	if !ap.Eat(open) {
		return nil, fmt.Errorf("expected %q", open)
	}
	var ids []string
	for !ap.Eat(close) {
		id := ap.ident()
		if id == "" {
			return nil, fmt.Errorf("expected identifier at %d", ap.Pos)
		}
		ids = append(ids, id)
		ap.Eat(",")
	}
	return ids, nil
}

func (ap *affineParser) constant(c int64) *linExpr {
	return &linExpr{coeffs: make([]int64, ap.nd), c: c, dim: -1}
}

// expr := term (('+' | '-') term)*
func (ap *affineParser) expr() (*linExpr, error) {
	e, err := ap.term()
	if err != nil {
		return nil, err
	}
	for {
		neg := false
		switch {
		case ap.Eat("+"):
		case ap.Peek("-") && !ap.Peek("->"):
			ap.Pos++
			neg = true
		default:
			return e, nil
		}
		r, err := ap.term()
		if err != nil {
			return nil, err
		}
		if neg {
			r = mulLin(ap.constant(-1), r)
		}
		e = addLin(e, r)
	}
}

// term := factor (('*' | 'floordiv' | 'ceildiv' | 'mod') factor)*
func (ap *affineParser) term() (*linExpr, error) {
	e, err := ap.factor()
	if err != nil {
		return nil, err
	}
	for {
		switch {
		case ap.Eat("*"):
			r, err := ap.factor()
			if err != nil {
				return nil, err
			}
			e = mulLin(e, r)
		case ap.Peek("floordiv") || ap.Peek("ceildiv") || ap.Peek("mod"):
			ap.ident()
			if _, err := ap.factor(); err != nil {
				return nil, err
			}
			e = &linExpr{nonLinear: true, coeffs: make([]int64, ap.nd), dim: -1}
		default:
			return e, nil
		}
	}
}

func (ap *affineParser) factor() (*linExpr, error) {
	ap.SkipSpace()
	switch {
	case ap.Eat("("):
		e, err := ap.expr()
		if err != nil {
			return nil, err
		}
		if !ap.Eat(")") {
			return nil, fmt.Errorf("expected ')' at %d", ap.Pos)
		}
		return e, nil
	case ap.Peek("-"):
		ap.Pos++
		e, err := ap.factor()
		if err != nil {
			return nil, err
		}
		return mulLin(ap.constant(-1), e), nil
	}
	id := ap.ident()
	if id == "" {
		return nil, fmt.Errorf("expected affine expression at %d", ap.Pos)
	}
	if v, err := strconv.ParseInt(id, 10, 64); err == nil {
		return ap.constant(v), nil
	}
	idx, ok := ap.names[id]
	if !ok {
		return nil, fmt.Errorf("unknown identifier %q", id)
	}
	if idx < 0 {
		return ap.constant(Dynamic), nil
	}
	e := ap.constant(0)
	e.coeffs[idx] = 1
	e.dim = idx
	return e, nil
}

func addLin(a, b *linExpr) *linExpr {
	r := &linExpr{nonLinear: a.nonLinear || b.nonLinear, coeffs: make([]int64, len(a.coeffs)), c: SatAdd(a.c, b.c), dim: -1}
	for i := range r.coeffs {
		r.coeffs[i] = satAddCoeff(a.coeffs[i], b.coeffs[i])
	}
	return r
}

func satAddCoeff(a, b int64) int64 {
	if a == 0 {
		return b
	}
	if b == 0 {
		return a
	}
	return SatAdd(a, b)
}

// mulLin multiplies two expressions; at most one may involve dims.
func mulLin(a, b *linExpr) *linExpr {
	if a.hasDims() && b.hasDims() {
		return &linExpr{nonLinear: true, coeffs: make([]int64, len(a.coeffs)), dim: -1}
	}
	if a.hasDims() {
		a, b = b, a
	}
	// a is a (possibly symbolic) constant.
	r := &linExpr{nonLinear: a.nonLinear || b.nonLinear, coeffs: make([]int64, len(b.coeffs)), c: SatMul(a.c, b.c), dim: -1}
	for i, c := range b.coeffs {
		r.coeffs[i] = SatMul(a.c, c)
	}
	if a.c == 1 {
		r.dim = b.dim
	}
	return r
}
