package nvvm

import (
	"slices"
	"strconv"

	"github.com/tmac-dev/tmac/dialects/llvm"
	"github.com/tmac-dev/tmac/ir"
)

// Enum attributes of the warp reductions and matches, grid dependency
// control and the integer dot products.
var (
	ReduxKind      = defEnum(&enumDef{mnemonic: "redux_kind", cpp: "ReduxKind", bare: true, values: []string{"add", "and", "max", "min", "or", "umax", "umin", "xor", "fmin", "fmax"}})
	MatchSyncKind  = defEnum(&enumDef{mnemonic: "match_sync_kind", cpp: "MatchSyncKind", bare: true, values: []string{"any", "all"}})
	GridDepAction  = defEnum(&enumDef{mnemonic: "grid_dep_action", cpp: "GridDepActionKind", attrName: "GridDepActionAttr", bare: true, i32Desc: "Action kind for grid dependency control", values: []string{"wait", "launch_dependents"}})
	DotAccumulate  = defEnum(&enumDef{mnemonic: "dot_accumulate_type", cpp: "DotAccumulateType", values: []string{"signed", "unsigned"}})
	tF32           = ir.TypeConstraint{Desc: "32-bit float", OK: func(t ir.Type) bool { return t == ir.Type(ir.F32T) }, Fixed: ir.F32T}
	tI32orI64      = ir.TypeConstraint{Desc: "32-bit signless integer or 64-bit signless integer", OK: func(t ir.Type) bool { return ir.IsIntegerOfWidth(t, 32) || ir.IsIntegerOfWidth(t, 64) }}
	tMatchRes      = ir.TypeConstraint{Desc: "32-bit signless integer or LLVM structure type", OK: func(t ir.Type) bool { return ir.IsIntegerOfWidth(t, 32) || llvm.StructOf(t) != nil }}
	tVec4xI8       = vectorType(4, 8)
	tVec2xI16      = vectorType(2, 16)
	stBulkInitValC = ir.AttrConstraint{Desc: "64-bit signless integer attribute", OK: func(a ir.Attribute) bool {
		ia, ok := a.(*ir.IntegerAttr)
		return ok && ir.IsIntegerOfWidth(ia.Type(), 64)
	}}
)

// vectorType accepts vector<n x iw>.
func vectorType(n int64, w int) ir.TypeConstraint {
	desc := "vector of " + strconv.Itoa(w) + "-bit signless integer values of length " + strconv.FormatInt(n, 10)
	return ir.TypeConstraint{Desc: desc, OK: func(t ir.Type) bool {
		v, ok := t.(*ir.VectorType)
		return ok && len(v.Shape()) == 1 && v.Shape()[0] == n && !slices.Contains(v.Scalable, true) && ir.IsIntegerOfWidth(v.Elem, w)
	}}
}

func init() {
	dotAccumulate := func(name, summary string, a ir.TypeConstraint, withBHi bool) *ir.OpDef {
		d := &ir.OpDef{
			Name:     name,
			Summary:  summary,
			Traits:   ir.Pure,
			Operands: []ir.ArgSpec{{Name: "a", Type: a}, {Name: "b", Type: tVec4xI8}, {Name: "c", Type: tI32}},
			Results:  []ir.ArgSpec{{Name: "res", Type: tI32}},
			Attrs: []ir.AttrSpec{
				enumAttr(name, "a_type", DotAccumulate, "NVVM DotAccumulateType", false, nil, true),
				enumAttr(name, "b_type", DotAccumulate, "NVVM DotAccumulateType", false, nil, true),
			},
			Format: "$a $a_type `,` $b $b_type `,` $c attr-dict `:` type($a) `,` type($b)",
		}
		if withBHi {
			d.Attrs = append(d.Attrs, ir.AttrSpec{Name: "b_hi", Constraint: boolAttrC})
		}
		return d
	}
	defs := []*ir.OpDef{
		{
			Name:     "nvvm.redux.sync",
			Summary:  "Reduction of a 32-bit value across the lanes of a member mask",
			Operands: []ir.ArgSpec{{Name: "val", Type: tI32orF32}, {Name: "mask_and_clamp", Type: tI32}},
			Results:  []ir.ArgSpec{{Name: "res", Type: tI32orF32}},
			Attrs: []ir.AttrSpec{
				{Name: "abs", Constraint: boolAttrC, Default: ir.Bool(false)},
				enumAttr("nvvm.redux.sync", "kind", ReduxKind, "NVVM redux kind", false, nil, true),
				{Name: "nan", Constraint: boolAttrC, Default: ir.Bool(false)},
			},
			Format: "$kind $val `,` $mask_and_clamp attr-dict `:` type($val) `->` type($res)",
			Verify: verifyRedux,
		},
		{
			Name:     "nvvm.match.sync",
			Summary:  "The lanes of a member mask holding the same value",
			Operands: []ir.ArgSpec{{Name: "thread_mask", Type: tI32}, {Name: "val", Type: tI32orI64}},
			Results:  []ir.ArgSpec{{Name: "res", Type: tMatchRes}},
			Attrs:    []ir.AttrSpec{enumAttr("nvvm.match.sync", "kind", MatchSyncKind, "NVVM match sync kind", false, nil, true)},
			Format:   "$kind $thread_mask `,` $val attr-dict `:` type($val) `->` type($res)",
			Verify:   verifyMatch,
		},
		{
			Name:     "nvvm.bar.warp.sync",
			Summary:  "Synchronise the lanes of a member mask",
			Operands: []ir.ArgSpec{{Name: "mask", Type: tI32}},
			Format:   "$mask attr-dict `:` type($mask)",
		},
		{
			Name:     "nvvm.rcp.approx.ftz.f",
			Summary:  "Approximate f32 reciprocal, subnormals flushed to zero",
			Traits:   ir.Pure,
			Operands: []ir.ArgSpec{{Name: "arg", Type: tF32}},
			Results:  []ir.ArgSpec{{Name: "res", Type: tF32}},
			Format:   "$arg attr-dict `:` type($res)",
		},
		{
			Name:    "nvvm.griddepcontrol",
			Summary: "Programmatic dependent launch: wait for the prerequisite grids, or let the dependent grids launch",
			Attrs:   []ir.AttrSpec{enumAttr("nvvm.griddepcontrol", "kind", GridDepAction, "Action kind for grid dependency control", false, nil, true)},
			Format:  "$kind attr-dict",
		},
		{
			Name:     "nvvm.st.bulk",
			Summary:  "Bulk initialisation of memory (sm_100)",
			Operands: []ir.ArgSpec{{Name: "addr", Type: llvm.PtrInSpaces(0, 3)}, {Name: "size", Type: tI64}},
			Attrs:    []ir.AttrSpec{{Name: "initVal", Constraint: stBulkInitValC, Default: ir.IntAttr(0, ir.I64), Syntax: intAttrSyntax(ir.I64)}},
			Format:   "$addr `,` `size` `=` $size (`,` `init` `=` $initVal^)? attr-dict `:` type($addr)",
			Verify: func(op *ir.Operation) error {
				if v := op.IntAttrOf("initVal", 0); v != 0 {
					return op.EmitOpError("only 0 is supported for initVal, got %d", v)
				}
				return nil
			},
			Effects: []ir.Effect{{Kind: ir.Write, Operand: "addr"}},
		},
		dotAccumulate("nvvm.dot.accumulate.4way", "Four-way dot product of 8-bit integers accumulated into i32", tVec4xI8, false),
		dotAccumulate("nvvm.dot.accumulate.2way", "Two-way dot product of 16-bit by 8-bit integers accumulated into i32", tVec2xI16, true),
	}
	smRequirements["nvvm.redux.sync"] = smReq{min: 80}
	for _, d := range defs {
		if d.Verify == nil {
			d.Verify = verifyNoProps
		}
	}
	ir.Register(defs...)
}

func verifyRedux(op *ir.Operation) error {
	kind := EnumOf(op, "kind")
	t := op.Operand(0).Type()
	if op.Result(0).Type() != t {
		return op.EmitOpError("failed to verify that all of {res, val} have same type")
	}
	isFloatKind := kind == "fmin" || kind == "fmax"
	// Upstream's order: the f32-only attributes before the kind.
	switch {
	case t != ir.Type(ir.F32T) && IsTrue(op, "abs"):
		return op.EmitOpError("abs attribute is supported only for f32 type")
	case t != ir.Type(ir.F32T) && IsTrue(op, "nan"):
		return op.EmitOpError("nan attribute is supported only for f32 type")
	case isFloatKind && t != ir.Type(ir.F32T):
		return op.EmitOpError("'%s' redux kind unsupported with '%s' type. Only supported type is 'f32'.", kind, t)
	case !isFloatKind && t != ir.Type(ir.I32):
		return op.EmitOpError("'%s' redux kind unsupported with '%s' type. Only supported type is 'i32'.", kind, t)
	}
	return verifySM(op)
}

func verifyMatch(op *ir.Operation) error {
	rt := op.Result(0).Type()
	switch EnumOf(op, "kind") {
	case "any":
		if !ir.IsIntegerOfWidth(rt, 32) {
			return op.EmitOpError("match.sync 'any' returns an i32")
		}
	case "all":
		s := llvm.StructOf(rt)
		if s == nil || len(s.Body) != 2 || !ir.IsIntegerOfWidth(s.Body[0], 32) || !ir.IsIntegerOfWidth(s.Body[1], 1) {
			return op.EmitOpError("match.sync 'all' returns a two element struct with first element as i32 and second element as i1")
		}
	}
	return nil
}
