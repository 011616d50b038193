package vector

import (
	"strings"

	"github.com/tmac-dev/tmac/dialects/memref"
	"github.com/tmac-dev/tmac/ir"
)

// The memory ops beyond vector.load and vector.store: the masked loads and
// stores, gathers and scatters, expanding loads and compressing stores,
// and the transfers.

var (
	tensorOrMemRef = ir.TypeConstraint{Desc: "Tensor or MemRef of any type values", OK: func(t ir.Type) bool {
		switch t.(type) {
		case *ir.MemRefType, *ir.TensorType:
			return true
		}
		return false
	}}
	intOrIndexVector = vectorOf("vector of integer or index values", false, func(t ir.Type) bool { return ir.IsInteger(t) || ir.IsIndex(t) })
	fixedI1Vector    = ir.TypeConstraint{Desc: "fixed-length vector of 1-bit signless integer values", OK: func(t ir.Type) bool {
		v, ok := t.(*ir.VectorType)
		return ok && v.Scalable == nil && len(v.Shape()) > 0 && isI1(v.Elem)
	}, Kind: "builtin.vector", KindOK: isVector}
	anyShaped = ir.TypeConstraint{Desc: "shaped of any type values", OK: func(t ir.Type) bool {
		_, ok := t.(ir.ShapedType)
		return ok
	}}
	rankedTensor = ir.TypeConstraint{Desc: "ranked tensor of any type values", OK: func(t ir.Type) bool {
		_, ok := t.(*ir.TensorType)
		return ok
	}}
)

// shapedOf returns the rank and element type of a memref or tensor.
func shapedOf(t ir.Type) (int, ir.Type) {
	switch t := t.(type) {
	case *ir.MemRefType:
		return t.Rank(), t.Elem
	case *ir.TensorType:
		return len(t.Shape()), t.Elem
	}
	return 0, nil
}

func alignmentAttr() ir.AttrSpec {
	return ir.AttrSpec{Name: "alignment", Constraint: alignmentC, Optional: true}
}

// maskedAccess describes the rules shared by maskedload/maskedstore,
// gather/scatter and expandload/compressstore.
type maskedAccess struct {
	value   string // "result" or "valueToStore"
	index   string // the group whose count must equal the base's rank
	indices bool   // gather/scatter: an index vector of the value's shape
	// dimWord is how the messages name the shape comparison ("shape" for
	// maskedload/maskedstore, "dim" for the others).
	dimWord string
}

func (a maskedAccess) verify(op *ir.Operation) error {
	var value ir.Type
	if a.value == "result" {
		value = op.Result(0).Type()
	} else {
		value = op.OperandNamed(a.value).Type()
	}
	vt := value.(*ir.VectorType)
	rank, elem := shapedOf(op.OperandNamed("base").Type())
	if vt.Elem != elem {
		return op.EmitOpError("base and %s element type should match", a.value)
	}
	if n := len(op.OperandGroup(a.index)); n != rank {
		return op.EmitOpError("requires %d indices", rank)
	}
	shape := func(name string) []int64 { return vectorType(op.OperandNamed(name)).Shape() }
	if a.indices && !equalShapes(vt.Shape(), shape("indices")) {
		return op.EmitOpError("expected %s dim to match indices dim", a.value)
	}
	if !equalShapes(vt.Shape(), shape("mask")) {
		return op.EmitOpError("expected %s %s to match mask %s", a.value, a.dimWord, a.dimWord)
	}
	if a.value == "result" && op.OperandNamed("pass_thru").Type() != value {
		return op.EmitOpError("expected pass_thru of same type as result type")
	}
	return nil
}

func equalShapes(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// --- transfers ---------------------------------------------------------------

// TransferMap is a transfer's permutation map: for each vector dim, the
// source dim it walks, or -1 where the vector is broadcast (the constant 0
// result). NumDims is the source rank the map takes.
type TransferMap struct {
	NumDims, NumSymbols int
	Results             []int
	// projected is false when some result is neither a dim nor 0.
	projected bool
}

// ParseTransferMap reads a permutation_map attribute.
func ParseTransferMap(a ir.Attribute) (*TransferMap, bool) {
	if a == nil {
		return nil, false
	}
	m, err := memref.ParseAffineMap(a.String())
	if err != nil {
		return nil, false
	}
	t := &TransferMap{NumDims: m.NumDims, NumSymbols: m.NumSymbols, projected: true}
	for _, r := range m.Results {
		switch {
		case r.IsDim >= 0:
			t.Results = append(t.Results, r.IsDim)
		case r.Linear && r.Const == 0 && !hasDims(r.Coeffs):
			t.Results = append(t.Results, -1)
		default:
			t.Results = append(t.Results, -2)
			t.projected = false
		}
	}
	return t, true
}

func hasDims(coeffs []int64) bool {
	for _, c := range coeffs {
		if c != 0 {
			return true
		}
	}
	return false
}

// IsMinorIdentity reports whether the map walks the innermost source dims
// in order: (d0, ..., dn-1) -> (dn-k, ..., dn-1).
func (m *TransferMap) IsMinorIdentity() bool {
	k := len(m.Results)
	if m.NumSymbols != 0 || k > m.NumDims {
		return false
	}
	for i, r := range m.Results {
		if r != m.NumDims-k+i {
			return false
		}
	}
	return true
}

// minorIdentityMap is the text of (d0, ..., dn-1) -> (dn-k, ..., dn-1).
func minorIdentityMap(n, k int) ir.Attribute {
	dims := make([]string, n)
	for i := range dims {
		dims[i] = "d" + itoa(int64(i))
	}
	return ir.OpaqueAttrOf("affine_map<(" + strings.Join(dims, ", ") + ") -> (" + strings.Join(dims[n-k:], ", ") + ")>")
}

func itoa(v int64) string { return dimString(v, false) }

// elementVectorRank is the rank of a memref's vector element type (0 for
// scalars).
func elementVectorRank(shaped ir.Type) int {
	_, elem := shapedOf(shaped)
	if v, ok := elem.(*ir.VectorType); ok {
		return len(v.Shape())
	}
	return 0
}

// defaultTransferMap is the permutation map a transfer has when its text
// gives none.
func defaultTransferMap(shaped ir.Type, vt *ir.VectorType) ir.Attribute {
	rank, _ := shapedOf(shaped)
	if rank == 0 && equalShapes(vt.Shape(), []int64{1}) {
		return ir.OpaqueAttrOf("affine_map<() -> (0)>")
	}
	return minorIdentityMap(rank, len(vt.Shape())-elementVectorRank(shaped))
}

// TransferMaskType is the mask type of a transfer of vector type vt
// through map m: i1 over the source dims the map uses, in source order
// (one element for 0-D transfers).
func TransferMaskType(m *TransferMap, vt *ir.VectorType) *ir.VectorType {
	var shape []int64
	var sc []bool
	for d := 0; d < m.NumDims; d++ {
		for j, r := range m.Results {
			if r == d {
				shape = append(shape, vt.Shape()[j])
				sc = append(sc, scalableAt(vt, j))
			}
		}
	}
	if len(shape) == 0 {
		shape = []int64{1}
	}
	return ir.ScalableVectorTypeOf(shape, sc, ir.I1)
}

func transferMaskType(op *ir.Operation, vt *ir.VectorType) ir.Type {
	m, ok := ParseTransferMap(op.Attr("permutation_map"))
	if !ok || len(m.Results) != len(vt.Shape()) {
		return nil
	}
	return TransferMaskType(m, vt)
}

// InBounds returns a transfer's in_bounds flags.
func InBounds(op *ir.Operation) []bool {
	arr, _ := op.Attr("in_bounds").(*ir.ArrayAttr)
	if arr == nil {
		return nil
	}
	out := make([]bool, len(arr.Elems))
	for i, e := range arr.Elems {
		out[i] = e == ir.Bool(true)
	}
	return out
}

func allFalse(n int) ir.Attribute {
	elems := make([]ir.Attribute, n)
	for i := range elems {
		elems[i] = ir.Bool(false)
	}
	return ir.Array(elems...)
}

// parseTransfer parses the custom form of transfer_read (read true):
//
//	%base[%i, %j], %padding (, %mask)? attr-dict : shaped-type, vector-type
//
// and of transfer_write:
//
//	%value, %base[%i, %j] (, %mask)? attr-dict : vector-type, shaped-type
func parseTransfer(read bool) func(p *ir.Parser, st *ir.OperationState) error {
	return func(p *ir.Parser, st *ir.OperationState) error {
		first, err := p.ParseOperand()
		if err != nil {
			return err
		}
		var value, base, padding ir.UnresolvedOperand
		if read {
			base = first
		} else {
			value = first
			if base, err = p.ParseOperandAfter(","); err != nil {
				return err
			}
		}
		indices, err := p.ParseOperandList(ir.DelimSquare)
		if err != nil {
			return err
		}
		if read {
			if padding, err = p.ParseOperandAfter(","); err != nil {
				return err
			}
		}
		var mask *ir.UnresolvedOperand
		if p.ParseOptionalPunct(",") {
			u, err := p.ParseOperand()
			if err != nil {
				return err
			}
			mask = &u
		}
		if err := p.ParseOptionalAttrDict(st); err != nil {
			return err
		}
		typesTok := p.Tok()
		ts, err := p.ParseColonTypeList()
		if err != nil {
			return err
		}
		if len(ts) != 2 {
			return p.CustomOpErrorAt(typesTok, "requires two types")
		}
		shaped, vecT := ts[0], ts[1]
		if !read {
			shaped, vecT = ts[1], ts[0]
		}
		checkShaped := func() error {
			switch shaped.(type) {
			case *ir.MemRefType, *ir.TensorType:
				return nil
			}
			return p.CustomOpErrorAt(typesTok, "requires memref or ranked tensor type")
		}
		vt, isVec := vecT.(*ir.VectorType)
		if read {
			if err := checkShaped(); err != nil {
				return err
			}
		}
		if !isVec {
			return p.CustomOpErrorAt(typesTok, "requires vector type")
		}
		if !read {
			if err := checkShaped(); err != nil {
				return err
			}
		}
		rank, elem := shapedOf(shaped)
		if st.Attr("permutation_map") == nil {
			if rank < len(vt.Shape())-elementVectorRank(shaped) {
				return p.CustomOpErrorAt(typesTok, "expected a custom permutation_map when rank(source) != rank(destination)")
			}
			st.AddAttr("permutation_map", defaultTransferMap(shaped, vt))
		}
		pm, ok := ParseTransferMap(st.Attr("permutation_map"))
		if !ok {
			return p.CustomOpErrorAt(typesTok, "expected an affine map for permutation_map")
		}
		if st.Attr("in_bounds") == nil {
			st.AddAttr("in_bounds", allFalse(len(pm.Results)))
		}
		var us []ir.UnresolvedOperand
		var uts []ir.Type
		if read {
			us, uts = append(us, base), append(uts, shaped)
		} else {
			us, uts = append(us, value, base), append(uts, vt, shaped)
		}
		for _, u := range indices {
			us, uts = append(us, u), append(uts, ir.Index)
		}
		if read {
			us, uts = append(us, padding), append(uts, elem)
		}
		if err := p.ResolveOperands(us, uts, st); err != nil {
			return err
		}
		if mask != nil {
			if _, ok := elem.(*ir.VectorType); ok {
				return p.CustomOpErrorAt(mask.Tok, "does not support masks with vector element type")
			}
			if len(vt.Shape()) != len(pm.Results) {
				return p.CustomOpErrorAt(typesTok, "expected the same rank for the vector and the results of the permutation map")
			}
			if err := p.ResolveOperands([]ir.UnresolvedOperand{*mask}, []ir.Type{TransferMaskType(pm, vt)}, st); err != nil {
				return err
			}
		}
		hasMask := int64(0)
		if mask != nil {
			hasMask = 1
		}
		if read {
			st.AddAttr("operandSegmentSizes", ir.DenseI32Array(1, int64(len(indices)), 1, hasMask))
			st.ResultTypes = []ir.Type{vt}
		} else {
			st.AddAttr("operandSegmentSizes", ir.DenseI32Array(1, 1, int64(len(indices)), hasMask))
			if _, ok := shaped.(*ir.TensorType); ok {
				st.ResultTypes = []ir.Type{shaped}
			}
		}
		return nil
	}
}

func printTransfer(read bool) func(p *ir.Printer, op *ir.Operation) {
	return func(p *ir.Printer, op *ir.Operation) {
		base := op.OperandNamed("base")
		p.Write(" ")
		var vt ir.Type
		if read {
			vt = op.Result(0).Type()
		} else {
			vt = op.OperandNamed("valueToStore").Type()
			p.PrintOperand(op.OperandNamed("valueToStore"))
			p.Write(", ")
		}
		p.PrintOperand(base)
		p.Write("[")
		p.PrintOperands(op.OperandGroup("indices"))
		p.Write("]")
		if read {
			p.Write(", ")
			p.PrintOperand(op.OperandNamed("padding"))
		}
		if m := op.OperandNamed("mask"); m != nil {
			p.Write(", ")
			p.PrintOperand(m)
		}
		elided := []string{"operandSegmentSizes"}
		if m, ok := ParseTransferMap(op.Attr("permutation_map")); ok && m.IsMinorIdentity() {
			elided = append(elided, "permutation_map")
		}
		anyIn := false
		for _, b := range InBounds(op) {
			anyIn = anyIn || b
		}
		if !anyIn {
			elided = append(elided, "in_bounds")
		}
		p.PrintOptionalAttrDict(op.AllAttrs(), elided...)
		p.Write(" : ")
		if read {
			p.PrintTypes([]ir.Type{base.Type(), vt})
		} else {
			p.PrintTypes([]ir.Type{vt, base.Type()})
		}
	}
}

func verifyTransfer(read bool) func(op *ir.Operation) error {
	return func(op *ir.Operation) error {
		shaped := op.OperandNamed("base").Type()
		var vt *ir.VectorType
		if read {
			vt = vectorType(op.Result(0))
		} else {
			vt = vectorType(op.OperandNamed("valueToStore"))
		}
		rank, elem := shapedOf(shaped)
		if n := len(op.OperandGroup("indices")); n != rank {
			return op.EmitOpError("requires %d indices", rank)
		}
		pm, ok := ParseTransferMap(op.Attr("permutation_map"))
		if !ok {
			return op.EmitOpError("attribute 'permutation_map' failed to satisfy constraint: AffineMap attribute")
		}
		if !read {
			for _, r := range pm.Results {
				if r == -1 {
					return op.EmitOpError("should not have broadcast dimensions")
				}
			}
		}
		var maskType ir.Type
		if m := op.OperandNamed("mask"); m != nil {
			maskType = m.Type()
		}
		if ev, ok := elem.(*ir.VectorType); ok {
			srcBits := int64(ir.BitWidth(ev.Elem)) * lastDim(ev)
			resBits := int64(ir.BitWidth(vt.Elem)) * lastDim(vt)
			if srcBits == 0 || resBits%srcBits != 0 {
				return op.EmitOpError("requires the bitwidth of the minor 1-D vector to be an integral multiple of the bitwidth of the minor 1-D vector of the source")
			}
			if len(ev.Shape()) > len(vt.Shape()) {
				return op.EmitOpError("requires source vector element and vector result ranks to match.")
			}
			if len(pm.Results) != len(vt.Shape())-len(ev.Shape()) {
				return op.EmitOpError("requires a permutation_map with result dims of the same rank as the vector type")
			}
			if maskType != nil {
				return op.EmitOpError("does not support masks with vector element type")
			}
		} else {
			bits := int64(ir.BitWidth(elem))
			if bits == 0 || int64(ir.BitWidth(vt.Elem))*lastDim(vt)%bits != 0 {
				return op.EmitOpError("requires the bitwidth of the minor 1-D vector to be an integral multiple of the bitwidth of the source element type")
			}
			if len(pm.Results) != len(vt.Shape()) {
				return op.EmitOpError("requires a permutation_map with result dims of the same rank as the vector type")
			}
		}
		if pm.NumSymbols != 0 {
			return op.EmitOpError("requires permutation_map without symbols")
		}
		if pm.NumDims != rank {
			return op.EmitOpError("requires a permutation_map with input dims of the same rank as the source type")
		}
		if maskType != nil {
			if want := TransferMaskType(pm, vt); want != maskType {
				return op.EmitOpError("inferred mask type ('%s') and mask operand type ('%s') don't match", want, maskType)
			}
		}
		if n := len(InBounds(op)); n != len(pm.Results) {
			return op.EmitOpError("expects the in_bounds attr of same rank as permutation_map results: %s vs inBounds of size: %d", op.Attr("permutation_map"), n)
		}
		if read {
			pad := op.OperandNamed("padding").Type()
			if ev, ok := elem.(*ir.VectorType); ok {
				if ir.Type(ev) != pad {
					return op.EmitOpError("requires source element type and padding type to match.")
				}
			} else if pad != elem {
				return op.EmitOpError("requires formal padding and source of the same elemental type")
			}
		}
		seen := make([]bool, pm.NumDims)
		for _, r := range pm.Results {
			if r == -2 {
				return op.EmitOpError("requires a projected permutation_map (at most one dim or the zero constant can appear in each result)")
			}
			if r >= 0 {
				if seen[r] {
					return op.EmitOpError("requires a permutation_map that is a permutation (found one dim used more than once)")
				}
				seen[r] = true
			}
		}
		return nil
	}
}

// lastDim is the innermost size of t (1 for 0-D).
func lastDim(t *ir.VectorType) int64 {
	if n := len(t.Shape()); n > 0 {
		return t.Shape()[n-1]
	}
	return 1
}

// contiguousMasked defines vector.maskedload, maskedstore, expandload and
// compressstore, which differ in their mask type, the word of their
// verifier's diagnostics, whether they load or store, and what they do
// with the lanes.
func contiguousMasked(name, summary string, mask ir.TypeConstraint, dimWord string, store bool) *ir.OpDef {
	value, checked, effect := "pass_thru", "result", ir.Read
	if store {
		value, checked, effect = "valueToStore", "valueToStore", ir.Write
	}
	def := &ir.OpDef{
		Name:    name,
		Summary: summary,
		Operands: []ir.ArgSpec{
			{Name: "base", Type: ir.AnyMemRef},
			{Name: "indices", Kind: ir.Variadic, Type: indexVariadic},
			{Name: "mask", Type: mask},
			{Name: value, Type: nonZeroRankVector},
		},
		Attrs:   []ir.AttrSpec{alignmentAttr()},
		Format:  "$base `[` $indices `]` `,` $mask `,` $" + value + " attr-dict `:` type($base) `,` type($mask) `,` type($" + value + ")",
		Effects: []ir.Effect{{Kind: effect, Operand: "base"}},
		Verify:  maskedAccess{value: checked, index: "indices", dimWord: dimWord}.verify,
	}
	if !store {
		def.Results = []ir.ArgSpec{{Name: "result", Type: nonZeroRankVector}}
		def.Format += " `into` type($result)"
	}
	return def
}

// indexedMasked defines vector.gather and vector.scatter, as
// contiguousMasked the contiguous accesses; a scatter into a tensor has a
// result.
func indexedMasked(name, summary string, store bool) *ir.OpDef {
	value, checked, effect := "pass_thru", "result", ir.Read
	result := ir.ArgSpec{Name: "result", Type: nonZeroRankVector}
	results := " `into` type($result)"
	if store {
		value, checked, effect = "valueToStore", "valueToStore", ir.Write
		result = ir.ArgSpec{Name: "result", Kind: ir.Optional, Type: rankedTensor}
		results = " (`->` type($result)^)?"
	}
	return &ir.OpDef{
		Name:    name,
		Summary: summary,
		Operands: []ir.ArgSpec{
			{Name: "base", Type: tensorOrMemRef},
			{Name: "offsets", Kind: ir.Variadic, Type: indexVariadic},
			{Name: "indices", Type: intOrIndexVector},
			{Name: "mask", Type: i1Vector},
			{Name: value, Type: nonZeroRankVector},
		},
		Results: []ir.ArgSpec{result},
		Attrs:   []ir.AttrSpec{alignmentAttr()},
		Format:  "$base `[` $offsets `]` `[` $indices `]` `,` $mask `,` $" + value + " attr-dict `:` type($base) `,` type($indices) `,` type($mask) `,` type($" + value + ")" + results,
		Effects: []ir.Effect{{Kind: effect, Operand: "base"}},
		Verify:  maskedAccess{value: checked, index: "offsets", indices: true, dimWord: "dim"}.verify,
	}
}

func memoryOps() []*ir.OpDef {
	return []*ir.OpDef{
		contiguousMasked("vector.maskedload", "loads the lanes of a vector whose mask bit is set, the others from pass_thru", i1Vector, "shape", false),
		contiguousMasked("vector.maskedstore", "stores the lanes of a vector whose mask bit is set", i1Vector, "shape", true),
		indexedMasked("vector.gather", "loads the lanes whose mask bit is set from base[offsets] + indices[lane]", false),
		indexedMasked("vector.scatter", "stores the lanes whose mask bit is set to base[offsets] + indices[lane]", true),
		contiguousMasked("vector.expandload", "loads consecutive elements into the lanes whose mask bit is set", fixedI1Vector, "dim", false),
		contiguousMasked("vector.compressstore", "stores the lanes whose mask bit is set to consecutive elements", fixedI1Vector, "dim", true),
		{
			Name:    "vector.transfer_read",
			Summary: "reads a vector from a slice of a memref, with padding, masks, permutations and broadcasts",
			Traits:  ir.AttrSizedOperandSegments,
			Operands: []ir.ArgSpec{
				{Name: "base", Type: anyShaped},
				{Name: "indices", Kind: ir.Variadic, Type: indexVariadic},
				{Name: "padding", Type: ir.AnyType},
				{Name: "mask", Kind: ir.Optional, Type: i1Vector},
			},
			Results: []ir.ArgSpec{{Name: "vector", Type: anyRankVector}},
			Attrs: []ir.AttrSpec{
				{Name: "permutation_map", Constraint: ir.AttrConstraint{Desc: "AffineMap attribute", OK: func(a ir.Attribute) bool { return strings.HasPrefix(a.String(), "affine_map<") }}},
				{Name: "in_bounds", Constraint: boolArrayC},
			},
			Parse:   parseTransfer(true),
			Print:   printTransfer(true),
			Effects: []ir.Effect{{Kind: ir.Read, Operand: "base"}},
			Verify:  verifyTransfer(true),
			Doc: `Code generation lowers the simple form: a memref of scalars, every
dimension in_bounds, no mask, a minor-identity permutation_map (the
innermost source dims in order); it is then vector.load. Others are
rejected naming what is not supported.`,
		},
		{
			Name:    "vector.transfer_write",
			Summary: "writes a vector to a slice of a memref, with masks and permutations",
			Traits:  ir.AttrSizedOperandSegments,
			Operands: []ir.ArgSpec{
				{Name: "valueToStore", Type: anyRankVector},
				{Name: "base", Type: anyShaped},
				{Name: "indices", Kind: ir.Variadic, Type: indexVariadic},
				{Name: "mask", Kind: ir.Optional, Type: i1Vector},
			},
			Results: []ir.ArgSpec{{Name: "result", Kind: ir.Optional, Type: rankedTensor}},
			Attrs: []ir.AttrSpec{
				{Name: "permutation_map", Constraint: ir.AttrConstraint{Desc: "AffineMap attribute", OK: func(a ir.Attribute) bool { return strings.HasPrefix(a.String(), "affine_map<") }}},
				{Name: "in_bounds", Constraint: boolArrayC},
			},
			Parse:   parseTransfer(false),
			Print:   printTransfer(false),
			Effects: []ir.Effect{{Kind: ir.Write, Operand: "base"}},
			Verify:  verifyTransfer(false),
			Doc: `Code generation lowers the simple form (see vector.transfer_read): it
is then vector.store.`,
		},
	}
}

var boolArrayC = ir.AttrConstraint{Desc: "1-bit boolean array attribute", OK: func(a ir.Attribute) bool {
	arr, ok := a.(*ir.ArrayAttr)
	if !ok {
		return false
	}
	for _, e := range arr.Elems {
		if !ir.IsBool(e) {
			return false
		}
	}
	return true
}}

// SimpleTransfer says why a transfer_read or transfer_write is not a plain
// vector load or store ("" when it is one): code generation and the
// emulator compile the transfers of memrefs of scalars that are unmasked,
// in bounds in every dimension, through the minor identity map.
func SimpleTransfer(op *ir.Operation) string {
	base := op.OperandNamed("base")
	mt, isMem := base.Type().(*ir.MemRefType)
	pm, _ := ParseTransferMap(op.Attr("permutation_map"))
	switch {
	case !isMem:
		return "its source is not a memref"
	case op.OperandNamed("mask") != nil:
		return "it has a mask (use vector.maskedload or vector.maskedstore)"
	case pm == nil || !pm.IsMinorIdentity():
		return "its permutation_map is not the minor identity (the innermost dimensions in order)"
	}
	if _, vecElem := mt.Elem.(*ir.VectorType); vecElem {
		return "its memref has vector elements"
	}
	for i, in := range InBounds(op) {
		if !in {
			return "dimension " + itoa(int64(i)) + " may be out of bounds (set in_bounds to true when it is not, or use vector.maskedload or vector.maskedstore)"
		}
	}
	return ""
}
