package gpu

import (
	"fmt"
	"slices"

	"github.com/tmac-dev/tmac/dialects/memref"
	"github.com/tmac-dev/tmac/ir"
)

// !gpu.mma_matrix and the gpu.subgroup_mma_* ops: warp-level WMMA
// fragments. They parse, print and verify as upstream's; codegen rejects
// them on sm_90a (Hopper's tensor cores are driven by warpgroup MMA:
// nvgpu.warpgroup.mma, or nvvm.wgmma).

// MMAMatrix is the data of !gpu.mma_matrix<RxCxT, "Operand">.
type MMAMatrix struct {
	Shape   [2]int64
	Elem    ir.Type
	Operand string // AOp, BOp or COp
}

// MMAMatrixOf returns !gpu.mma_matrix<rows x cols x elem, "operand">.
func MMAMatrixOf(rows, cols int64, elem ir.Type, operand string) *ir.DialectType {
	text := fmt.Sprintf("!gpu.mma_matrix<%dx%dx%s, %s>", rows, cols, elem, ir.QuoteString(operand))
	return ir.DialectTypeOf("gpu", "mma_matrix", text, func() any {
		return &MMAMatrix{Shape: [2]int64{rows, cols}, Elem: elem, Operand: operand}
	})
}

// MMAMatrixData returns the parameters of an !gpu.mma_matrix, or nil.
func MMAMatrixData(t ir.Type) *MMAMatrix { return ir.TypeData[MMAMatrix](t) }

// mmaElemOK: SI8, UI8, I32, F16, F32 or F64.
func mmaElemOK(t ir.Type) bool {
	if it, ok := t.(*ir.IntegerType); ok {
		return it.Width == 8 && it.Signedness != ir.Signless || it.Width == 32 && it.Signedness == ir.Signless
	}
	if ft, ok := t.(*ir.FloatType); ok {
		return ft.Kind == ir.F16 || ft.Kind == ir.F32 || ft.Kind == ir.F64
	}
	return false
}

// parseMMAMatrix parses `<RxCxT, "Operand">` after the mnemonic; the
// type's checks are reported at the mnemonic, as upstream does.
func parseMMAMatrix(p *ir.Parser, mnemonic string) (ir.Type, error) {
	at := p.Tok()
	at.Col -= len(mnemonic)
	at.Offset -= len(mnemonic)
	if err := p.ParsePunct("<"); err != nil {
		return nil, err
	}
	dims, err := p.ParseDimensionList(false)
	if err != nil {
		return nil, err
	}
	elem, err := p.ParseType()
	if err != nil {
		return nil, err
	}
	if err := p.ParsePunct(","); err != nil {
		return nil, err
	}
	operand, err := p.ParseString()
	if err != nil {
		return nil, err
	}
	if err := p.ParsePunct(">"); err != nil {
		return nil, err
	}
	switch {
	case len(dims) != 2:
		return nil, p.ErrorAt(at, "MMAMatrixType must have exactly two dimensions")
	case !slices.Contains([]string{"AOp", "BOp", "COp"}, operand):
		return nil, p.ErrorAt(at, "operand expected to be one of AOp, BOp or COp")
	case !mmaElemOK(elem):
		return nil, p.ErrorAt(at, "MMAMatrixType elements must be SI8, UI8, I32, F16, F32, or F64")
	}
	return MMAMatrixOf(dims[0], dims[1], elem, operand), nil
}

// Type constraints of the mma ops, with upstream's wording.
var (
	mmaMatrixC = ir.TypeConstraint{Desc: "MMAMatrix type", OK: func(t ir.Type) bool { return MMAMatrixData(t) != nil }}
	// mmaMemRefC is GPU_MMAMemRef: a memref of the fragment element
	// types or of 1-D vectors of them.
	mmaMemRefC = ir.TypeConstraint{Desc: "memref of 8-bit signless integer or 32-bit signless integer or 16-bit float or 32-bit float or 64-bit float or vector of 8-bit signless integer or 32-bit signless integer or 16-bit float or 32-bit float or 64-bit float values of ranks 1 values", OK: func(t ir.Type) bool {
		m, ok := t.(*ir.MemRefType)
		if !ok {
			return false
		}
		e := m.Elem
		if v, ok := e.(*ir.VectorType); ok {
			if len(v.Shape()) != 1 {
				return false
			}
			e = v.Elem
		}
		return ir.IsIntegerOfWidth(e, 8) || ir.IsIntegerOfWidth(e, 32) || ir.IsFloat(e) && slices.Contains([]ir.FloatKind{ir.F16, ir.F32, ir.F64}, e.(*ir.FloatType).Kind)
	}}
	mmaABC  = mmaMatrixOf("8-bit signed integer or 8-bit unsigned integer or 16-bit float or 32-bit float or 64-bit float", func(t ir.Type) bool { return !ir.IsIntegerOfWidth(t, 32) })
	mmaCC   = mmaMatrixOf("32-bit signless integer or 16-bit float or 32-bit float or 64-bit float", func(t ir.Type) bool { _, isInt := t.(*ir.IntegerType); return !isInt || ir.IsIntegerOfWidth(t, 32) })
	mmaAnyC = mmaMatrixOf("8-bit signed integer or 8-bit unsigned integer or 32-bit signless integer or 16-bit float or 32-bit float or 64-bit float", func(ir.Type) bool { return true })
	// mmaScalarC: the element types a constant matrix is filled with.
	mmaScalarC = ir.TypeConstraint{Desc: "8-bit signed integer or 8-bit unsigned integer or 32-bit signless integer or 16-bit float or 32-bit float", OK: func(t ir.Type) bool {
		ft, isFloat := t.(*ir.FloatType)
		return mmaElemOK(t) && (!isFloat || ft.Kind != ir.F64)
	}}
)

// mmaMatrixOf is upstream's MMAMatrixOf<[...]>: an !gpu.mma_matrix whose
// element type also passes elemOK.
func mmaMatrixOf(elems string, elemOK func(ir.Type) bool) ir.TypeConstraint {
	return ir.TypeConstraint{Desc: "gpu.mma_matrix of " + elems + " values", OK: func(t ir.Type) bool {
		d := MMAMatrixData(t)
		return d != nil && elemOK(d.Elem)
	}}
}

// unitStride checks that the memref operand i (the source or
// destination) has an innermost stride of 1 (a layout that is not strided
// has not).
func unitStride(i int, what string) func(op *ir.Operation) error {
	return func(op *ir.Operation) error {
		m, ok := op.Operand(i).Type().(*ir.MemRefType)
		if !ok {
			return nil
		}
		if strides, _, ok := memref.StridesAndOffset(m); !ok || len(strides) > 0 && strides[len(strides)-1] != 1 {
			return ir.Errorf(op.Loc, "expected %s memref most minor dim must have unit stride", what)
		}
		return nil
	}
}

func elemTypeMatches(matrix, value string) func(op *ir.Operation) error {
	return func(op *ir.Operation) error {
		if d := MMAMatrixData(valueNamed(op, matrix).Type()); d != nil && d.Elem != valueNamed(op, value).Type() {
			return op.EmitOpError("failed to verify that value type matches element type of mma_matrix")
		}
		return nil
	}
}

var leadDimensionAttr = ir.AttrSpec{Name: "leadDimension", Constraint: ir.IndexAttrC}

func init() {
	indices := ir.ArgSpec{Name: "indices", Kind: ir.Variadic, Type: ir.IndexOnly}
	ir.Register(
		&ir.OpDef{
			Name:        "gpu.subgroup_mma_load_matrix",
			Summary:     "Loads a WMMA fragment (not supported on sm_90a)",
			Operands:    []ir.ArgSpec{{Name: "srcMemref", Type: mmaMemRefC}, indices},
			Results:     []ir.ArgSpec{{Name: "res", Type: mmaMatrixC}},
			Attrs:       []ir.AttrSpec{leadDimensionAttr, unitAttr("transpose")},
			Format:      "$srcMemref`[`$indices`]` attr-dict `:` type($srcMemref) `->` type($res)",
			Verify:      unitStride(0, "source"),
			VerifyProps: propConversion,
			Doc:         mmaDoc,
		},
		&ir.OpDef{
			Name:     "gpu.subgroup_mma_store_matrix",
			Summary:  "Stores a WMMA fragment (not supported on sm_90a)",
			Operands: []ir.ArgSpec{{Name: "src", Type: mmaAnyC}, {Name: "dstMemref", Type: mmaMemRefC}, indices},
			Attrs:    []ir.AttrSpec{leadDimensionAttr, unitAttr("transpose")},
			Format:   "$src`,` $dstMemref`[`$indices`]` attr-dict `:` type($src)`,` type($dstMemref)",
			Verify: func(op *ir.Operation) error {
				if err := unitStride(1, "destination")(op); err != nil {
					return err
				}
				if d := MMAMatrixData(op.Operand(0).Type()); d != nil && d.Operand != "COp" {
					return ir.Errorf(op.Loc, "expected the operand matrix being stored to have 'COp' operand type")
				}
				return nil
			},
			VerifyProps: propConversion,
			Doc:         mmaDoc,
		},
		&ir.OpDef{
			Name:    "gpu.subgroup_mma_compute",
			Summary: "Warp-level matrix multiply-accumulate (not supported on sm_90a)",
			Traits:  ir.Pure,
			Operands: []ir.ArgSpec{
				{Name: "opA", Type: mmaABC}, {Name: "opB", Type: mmaABC}, {Name: "opC", Type: mmaCC},
			},
			Results:   []ir.ArgSpec{{Name: "res", Type: mmaMatrixC}},
			Attrs:     []ir.AttrSpec{unitAttr("a_transpose"), unitAttr("b_transpose")},
			Format:    "$opA`,` $opB`,` $opC attr-dict `:` type($opA)`,` type($opB) `->` type($res)",
			TypeRules: []ir.TypeRule{{Target: "opC", From: "res"}},
			Verify: func(op *ir.Operation) error {
				if err := allTypesMatch("opC", "res")(op); err != nil {
					return err
				}
				a, b, c := MMAMatrixData(op.Operand(0).Type()), MMAMatrixData(op.Operand(1).Type()), MMAMatrixData(op.Operand(2).Type())
				if a.Operand != "AOp" || b.Operand != "BOp" || c.Operand != "COp" {
					return ir.Errorf(op.Loc, "operands must be in the order AOp, BOp, COp")
				}
				// Upstream checks the shapes as written, transposes or not.
				if a.Shape[1] != b.Shape[0] || a.Shape[0] != c.Shape[0] || b.Shape[1] != c.Shape[1] {
					return ir.Errorf(op.Loc, "operand shapes do not satisfy matmul constraints")
				}
				return nil
			},
			VerifyProps: propConversion,
			Doc:         mmaDoc,
		},
		&ir.OpDef{
			Name:      "gpu.subgroup_mma_constant_matrix",
			Summary:   "A WMMA fragment filled with one value (not supported on sm_90a)",
			Traits:    ir.Pure,
			Operands:  []ir.ArgSpec{{Name: "value", Type: mmaScalarC}},
			Results:   []ir.ArgSpec{{Name: "res", Type: mmaMatrixC}},
			Format:    "$value attr-dict `:` type($res)",
			TypeRules: []ir.TypeRule{{Target: "value", From: "res", Fn: mmaElem}},
			Verify:    elemTypeMatches("res", "value"),
			Doc:       mmaDoc,
		},
		&ir.OpDef{
			Name:        "gpu.subgroup_mma_elementwise",
			Summary:     "Elementwise op on WMMA fragments (not supported on sm_90a)",
			Traits:      ir.Pure,
			Operands:    []ir.ArgSpec{{Name: "args", Kind: ir.Variadic, Type: mmaMatrixC}},
			Results:     []ir.ArgSpec{{Name: "res", Type: mmaMatrixC}},
			Attrs:       []ir.AttrSpec{MMAElementwise.attr("gpu.subgroup_mma_elementwise", "opType", "elementwise operation to apply to mma matrix")},
			Format:      "$opType $args attr-dict `:` functional-type($args, $res)",
			VerifyProps: propConversion,
			Doc:         mmaDoc,
		},
		&ir.OpDef{
			Name:     "gpu.subgroup_mma_extract_thread_local",
			Summary:  "Reads an element of this thread's part of a WMMA fragment (not supported on sm_90a)",
			Traits:   ir.Pure,
			Operands: []ir.ArgSpec{{Name: "matrix", Type: mmaMatrixC}, indices},
			Results:  []ir.ArgSpec{{Name: "res", Type: intOrFloatC}},
			Format:   "$matrix`[`$indices`]` attr-dict `:` type($matrix) `->` type($res)",
			Verify:   elemTypeMatches("matrix", "res"),
			Doc:      mmaDoc,
		},
		&ir.OpDef{
			Name:     "gpu.subgroup_mma_insert_thread_local",
			Summary:  "Writes an element of this thread's part of a WMMA fragment (not supported on sm_90a)",
			Traits:   ir.Pure,
			Operands: []ir.ArgSpec{{Name: "value", Type: intOrFloatC}, {Name: "matrix", Type: mmaMatrixC}, indices},
			Results:  []ir.ArgSpec{{Name: "res", Type: mmaMatrixC}},
			Format:   "$value`,` $matrix`[`$indices`]` attr-dict `:` type($value)`,` type($matrix) `->` type($res)",
			Verify:   elemTypeMatches("matrix", "value"),
			Doc:      mmaDoc,
		},
	)
}

func mmaElem(t ir.Type) (ir.Type, error) {
	if d := MMAMatrixData(t); d != nil {
		return d.Elem, nil
	}
	return nil, fmt.Errorf("'%s' is not an !gpu.mma_matrix", t)
}

const mmaDoc = `**Not supported on sm_90a.** The WMMA fragment ops parse, print and
verify as upstream's, and ` + "`tmac compile`" + ` rejects them: Hopper's tensor
cores are programmed with warpgroup MMA (nvgpu.warpgroup.mma, or
nvvm.wgmma.mma_async), which tmac's pipelines and the emulator model.`
