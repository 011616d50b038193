// Package vector registers the vector dialect of MLIR 22: every op of
// upstream's dialect with its syntax and verifier, and the semantics of
// vector.fma. Code generation (codegen/vector*.go) lowers the fixed-size
// forms and rejects the rest (scalable vectors, vector.contract,
// vector.mask, ...) naming the op; SPEC.md records the upstream facts.
package vector

import (
	"strconv"

	"github.com/tmac-dev/tmac/ir"
)

// Type constraints, in upstream's words.
var (
	// anyRankVector is AnyVectorOfAnyRank (0-D included).
	anyRankVector = vectorOf("vector of any type values", true, func(ir.Type) bool { return true })
	// nonZeroRankVector is AnyVector (rank >= 1).
	nonZeroRankVector = vectorOf("vector of any type values", false, func(ir.Type) bool { return true })
	// fixedVector is AnyFixedVectorOfAnyRank.
	fixedVector = ir.TypeConstraint{Desc: "fixed-length vector of any type values", OK: func(t ir.Type) bool {
		v, ok := t.(*ir.VectorType)
		return ok && v.Scalable == nil
	}, Kind: "builtin.vector", KindOK: isVector}
	floatVector = vectorOf("vector of floating-point values", true, ir.IsFloat)
	i1Vector    = vectorOf("vector of 1-bit signless integer values", false, isI1)
	i1VectorAny = vectorOf("vector of 1-bit signless integer values", true, isI1)
)

func isI1(t ir.Type) bool { return ir.IsIntegerOfWidth(t, 1) }

// vectorOf accepts vectors whose element type satisfies elem (0-D vectors
// only when zeroRank).
func vectorOf(desc string, zeroRank bool, elem func(ir.Type) bool) ir.TypeConstraint {
	return ir.TypeConstraint{Desc: desc, OK: func(t ir.Type) bool {
		v, ok := t.(*ir.VectorType)
		return ok && (zeroRank || len(v.Shape()) > 0) && elem(v.Elem)
	}, Kind: "builtin.vector", KindOK: isVector}
}

func isVector(t ir.Type) bool { _, ok := t.(*ir.VectorType); return ok }

// alignmentC is upstream's constraint on the optional `alignment` property.
var alignmentC = ir.AttrConstraint{
	Desc: "64-bit signless integer attribute whose value is positive and whose value is a power of two > 0",
	OK: func(a ir.Attribute) bool {
		ia, ok := a.(*ir.IntegerAttr)
		if !ok || !ir.IsIntegerOfWidth(ia.Type(), 64) {
			return false
		}
		v := ia.Int()
		return v > 0 && v&(v-1) == 0
	},
}

var indexVariadic = ir.TypeConstraint{Desc: "index", OK: ir.IsIndex, Fixed: ir.Index}

func memAttrs() []ir.AttrSpec {
	return []ir.AttrSpec{
		{Name: "alignment", Constraint: alignmentC, Optional: true},
		{Name: "nontemporal", Constraint: ir.BoolAttrC, Optional: true, Default: ir.Bool(false)},
	}
}

func init() {
	var defs []*ir.OpDef
	defs = append(defs, shapeOps()...)
	defs = append(defs, computeOps()...)
	defs = append(defs, memoryOps()...)
	defs = append(defs, printOp())
	ir.Register(defs...)
	ir.Register(
		&ir.OpDef{
			Name:    "vector.load",
			Summary: "reads an n-D slice of memory into an n-D vector",
			Operands: []ir.ArgSpec{
				{Name: "base", Type: ir.AnyMemRef},
				{Name: "indices", Kind: ir.Variadic, Type: indexVariadic},
			},
			Results: []ir.ArgSpec{{Name: "result", Type: ir.AnyVector}},
			Attrs:   memAttrs(),
			Format:  "$base `[` $indices `]` attr-dict `:` type($base) `,` type($result)",
			Effects: []ir.Effect{{Kind: ir.Read, Operand: "base"}},
			Verify: func(op *ir.Operation) error {
				mt := op.Operand(0).Type().(*ir.MemRefType)
				vt := op.Result(0).Type().(*ir.VectorType)
				return verifyLoadStore(op, mt, vt, op.NumOperands()-1,
					"destination memref has lower rank than the result vector",
					"base memref and result vector types should match",
					"base and result element types should match")
			},
		},
		&ir.OpDef{
			Name:    "vector.store",
			Summary: "writes an n-D vector to an n-D slice of memory",
			Operands: []ir.ArgSpec{
				{Name: "valueToStore", Type: ir.AnyVector},
				{Name: "base", Type: ir.AnyMemRef},
				{Name: "indices", Kind: ir.Variadic, Type: indexVariadic},
			},
			Attrs:   memAttrs(),
			Format:  "$valueToStore `,` $base `[` $indices `]` attr-dict `:` type($base) `,` type($valueToStore)",
			Effects: []ir.Effect{{Kind: ir.Write, Operand: "base"}},
			Verify: func(op *ir.Operation) error {
				vt := op.Operand(0).Type().(*ir.VectorType)
				mt := op.Operand(1).Type().(*ir.MemRefType)
				return verifyLoadStore(op, mt, vt, op.NumOperands()-2,
					"source memref has lower rank than the vector to store",
					"base memref and valueToStore vector types should match",
					"base and valueToStore element type should match")
			},
		},
		&ir.OpDef{
			Name:     "vector.broadcast",
			Summary:  "broadcast operation",
			Traits:   ir.Pure,
			Operands: []ir.ArgSpec{{Name: "source", Type: ir.AnyType}},
			Results:  []ir.ArgSpec{{Name: "vector", Type: ir.AnyVector}},
			Format:   "$source attr-dict `:` type($source) `to` type($vector)",
			Verify:   verifyBroadcast,
		},
	)
}

// verifyLoadStore checks the rules shared by vector.load and vector.store.
func verifyLoadStore(op *ir.Operation, mt *ir.MemRefType, vt *ir.VectorType, nIndices int, rankMsg, vecElemMsg, elemMsg string) error {
	if len(vt.Shape()) > mt.Rank() {
		return op.EmitOpError("%s", rankMsg)
	}
	if !hasUnitInnerStride(mt) {
		return op.EmitOpError("most minor memref dim must have unit stride")
	}
	if ev, ok := mt.Elem.(*ir.VectorType); ok {
		if ev != vt {
			return op.EmitOpError("%s", vecElemMsg)
		}
	} else if mt.Elem != vt.Elem {
		return op.EmitOpError("%s", elemMsg)
	}
	if nIndices != mt.Rank() {
		return op.EmitOpError("requires %d indices", mt.Rank())
	}
	return nil
}

// hasUnitInnerStride reports whether the innermost dimension of mt has
// stride 1 (rank-0 memrefs trivially do).
func hasUnitInnerStride(mt *ir.MemRefType) bool {
	if mt.Rank() == 0 {
		return true
	}
	strides, _, ok := mt.StridesAndOffset()
	if !ok {
		return false
	}
	return strides[len(strides)-1] == 1
}

func dimString(d int64, scalable bool) string {
	s := strconv.FormatInt(d, 10)
	if scalable {
		return "[" + s + "]"
	}
	return s
}

// BroadcastMismatch returns the first (source dim, result dim) pair that
// prevents broadcasting src to dst, formatted as upstream prints them, or
// ok=true when the broadcast is legal. Source dims align with the trailing
// result dims; a fixed 1 stretches to anything, other dims must match
// exactly, scalability included.
func BroadcastMismatch(srcShape []int64, srcScalable []bool, dst *ir.VectorType) (string, string, bool) {
	dstShape := dst.Shape()
	lead := len(dstShape) - len(srcShape)
	at := func(s []bool, i int) bool { return i < len(s) && s[i] }
	for i, sd := range srcShape {
		dd := dstShape[lead+i]
		ss, ds := at(srcScalable, i), at(dst.Scalable, lead+i)
		if sd == 1 && !ss {
			continue
		}
		if sd != dd || ss != ds {
			return dimString(sd, ss), dimString(dd, ds), false
		}
	}
	return "", "", true
}

func verifyBroadcast(op *ir.Operation) error {
	src := op.Operand(0).Type()
	dst := op.Result(0).Type().(*ir.VectorType)
	if ir.ElementTypeOrSelf(src) != dst.Elem {
		return op.EmitOpError("failed to verify that source operand and result have same element type")
	}
	switch s := src.(type) {
	case *ir.VectorType:
		if len(s.Shape()) > len(dst.Shape()) {
			return op.EmitOpError("source rank higher than destination rank")
		}
		if a, b, ok := BroadcastMismatch(s.Shape(), s.Scalable, dst); !ok {
			return op.EmitOpError("dimension mismatch (%s vs. %s)", a, b)
		}
	case ir.ShapedType:
		return op.EmitOpError("source type is not a vector")
	}
	return nil
}
