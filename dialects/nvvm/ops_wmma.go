package nvvm

import (
	"github.com/tmac-dev/tmac/dialects/llvm"
	"github.com/tmac-dev/tmac/ir"
)

// nvvm.wmma.load, nvvm.wmma.store and nvvm.wmma.mma: the warp-level
// matrix ops of PTX's wmma (sm_70 shapes m16n16k16, m32n8k16 and
// m8n32k16; tf32 m16n16k8 and f64 m8n8k4 of sm_80), with upstream's
// verifiers.

// MMAFrag names a wmma fragment.
var MMAFrag = defEnum(&enumDef{mnemonic: "mma_frag", cpp: "MMAFrag", values: []string{"a", "b", "c"}})

func init() {
	i32 := func(name string) ir.AttrSpec { return ir.AttrSpec{Name: name, Constraint: ir.I32AttrC} }
	anyPtr := ir.TypeConstraint{Desc: "LLVM pointer type", OK: func(t ir.Type) bool { return llvm.IsPtr(t) }}
	ir.Register(
		&ir.OpDef{
			Name:     "nvvm.wmma.load",
			Summary:  "Warp-level load of a wmma fragment",
			Operands: []ir.ArgSpec{{Name: "ptr", Type: anyPtr}, {Name: "stride", Type: tI32}},
			Results:  []ir.ArgSpec{{Name: "res", Type: ir.TypeConstraint{Desc: "LLVM structure type or 64-bit float", OK: func(t ir.Type) bool { return llvm.StructOf(t) != nil || t == ir.Type(ir.F64T) }}}},
			Attrs: []ir.AttrSpec{
				enumAttr("", "eltype", MMAType, "NVVM MMA types", false, nil, false),
				enumAttr("", "frag", MMAFrag, "NVVM MMA frag type", false, nil, false),
				i32("k"),
				enumAttr("", "layout", MMALayout, "NVVM MMA layout", false, nil, false),
				i32("m"), i32("n"),
			},
			Format:  "$ptr `,` $stride attr-dict `:` functional-type($ptr, $res)",
			Verify:  verifyWMMALoad,
			Effects: []ir.Effect{{Kind: ir.Read, Operand: "ptr"}},
		},
		&ir.OpDef{
			Name:    "nvvm.wmma.store",
			Summary: "Warp-level store of a wmma fragment",
			Operands: []ir.ArgSpec{
				{Name: "ptr", Type: anyPtr},
				{Name: "args", Kind: ir.Variadic, Type: llvm.CompatibleType},
				{Name: "stride", Type: tI32},
			},
			Attrs: []ir.AttrSpec{
				enumAttr("", "eltype", MMAType, "NVVM MMA types", false, nil, false),
				i32("k"),
				enumAttr("", "layout", MMALayout, "NVVM MMA layout", false, nil, false),
				i32("m"), i32("n"),
			},
			Format:  "$ptr `,` $stride `,` $args attr-dict `:` qualified(type($ptr)) `,` type($args)",
			Verify:  verifyWMMAStore,
			Effects: []ir.Effect{{Kind: ir.Write, Operand: "ptr"}},
		},
		&ir.OpDef{
			Name:     "nvvm.wmma.mma",
			Summary:  "Warp-level matrix multiply-accumulate of wmma fragments",
			Traits:   ir.Pure,
			Operands: []ir.ArgSpec{{Name: "args", Kind: ir.Variadic, Type: llvm.CompatibleType}},
			Results:  []ir.ArgSpec{{Name: "res", Type: llvm.AnyStruct}},
			Attrs: []ir.AttrSpec{
				enumAttr("", "eltypeA", MMAType, "NVVM MMA types", false, nil, false),
				enumAttr("", "eltypeB", MMAType, "NVVM MMA types", false, nil, false),
				i32("k"),
				enumAttr("", "layoutA", MMALayout, "NVVM MMA layout", false, nil, false),
				enumAttr("", "layoutB", MMALayout, "NVVM MMA layout", false, nil, false),
				i32("m"), i32("n"),
			},
			Format: "$args attr-dict `:` functional-type($args, $res)",
			Verify: verifyWMMAMma,
		},
	)
	for _, n := range []string{"nvvm.wmma.load", "nvvm.wmma.store", "nvvm.wmma.mma"} {
		smRequirements[n] = smReq{min: 70}
	}
}

// WMMAShape returns the m, n, k attributes of a wmma op.
func WMMAShape(op *ir.Operation) (m, n, k int64) {
	return op.IntAttrOf("m", 0), op.IntAttrOf("n", 0), op.IntAttrOf("k", 0)
}

// WMMALoadStoreValid reports whether LLVM has a wmma load or store of
// fragment frag ("a", "b", "c"; a store writes "c") of type t for shape
// m, n, k.
func WMMALoadStoreValid(m, n, k int64, frag, t string) bool {
	switch {
	case k == 16 && (m == 16 && n == 16 || m == 32 && n == 8 || m == 8 && n == 32):
		if frag == "c" {
			return t == "f16" || t == "f32" || t == "s32"
		}
		return t == "f16" || t == "s8" || t == "u8"
	case m == 16 && n == 16 && k == 8:
		return frag == "c" && t == "f32" || frag != "c" && t == "tf32"
	case m == 8 && n == 8 && k == 4:
		return t == "f64"
	}
	return false
}

// WMMAMmaValid reports whether LLVM has a wmma mma with A and B of type a
// and C and D of type c for shape m, n, k.
func WMMAMmaValid(m, n, k int64, a, c string) bool {
	switch {
	case k == 16 && (m == 16 && n == 16 || m == 32 && n == 8 || m == 8 && n == 32):
		return a == "f16" && (c == "f16" || c == "f32") || (a == "s8" || a == "u8") && c == "s32"
	case m == 16 && n == 16 && k == 8:
		return a == "tf32" && c == "f32"
	case m == 8 && n == 8 && k == 4:
		return a == "f64" && c == "f64"
	}
	return false
}

// wmmaFragment is upstream's inferMMATypeFromMNK: the register type and
// count of fragment frag of element type t.
func wmmaFragment(t, frag string, m, n, k int64) (ir.Type, int) {
	switch t {
	case "f16":
		if frag == "c" {
			return ir.VectorTypeOf([]int64{2}, ir.F16T), 4
		}
		return ir.VectorTypeOf([]int64{2}, ir.F16T), 8
	case "f32":
		return ir.F32T, 8
	case "f64":
		if frag == "c" {
			return ir.F64T, 2
		}
		return ir.F64T, 1
	case "tf32":
		return ir.I32, 4
	case "s8", "u8":
		parallel := m // rows of A
		if frag == "b" {
			parallel = n // columns of B
		}
		return ir.I32, map[int64]int{16: 2, 8: 1, 32: 4}[parallel]
	case "s32":
		return ir.I32, 8
	}
	return nil, 0
}

// repeatedStruct is !llvm.struct<(t, t, ...)> of n fields.
func repeatedStruct(t ir.Type, n int) ir.Type {
	body := make([]ir.Type, n)
	for i := range body {
		body[i] = t
	}
	return llvm.Struct(body, false)
}

func wmmaPtrSpaceOK(op *ir.Operation) bool {
	as := addrSpace(op, 0)
	return as == 0 || as == 1 || as == 3
}

func verifyWMMALoad(op *ir.Operation) error {
	if !wmmaPtrSpaceOK(op) {
		return op.EmitOpError("expected source pointer in memory space 0, 1, 3")
	}
	m, n, k := WMMAShape(op)
	t, frag := EnumOf(op, "eltype"), EnumOf(op, "frag")
	if !WMMALoadStoreValid(m, n, k, frag, t) {
		return op.EmitOpError("invalid attribute combination")
	}
	et, count := wmmaFragment(t, frag, m, n, k)
	rt := op.Result(0).Type()
	if et == ir.Type(ir.F64T) && count == 1 {
		if rt != et {
			return op.EmitOpError("expected destination type to be f64")
		}
		return verifySM(op)
	}
	if rt != repeatedStruct(et, count) {
		return op.EmitOpError("expected destination type is a structure of %d elements of type '%s'", count, et)
	}
	return verifySM(op)
}

func verifyWMMAStore(op *ir.Operation) error {
	if !wmmaPtrSpaceOK(op) {
		return op.EmitOpError("expected operands to be a source pointer in memory space 0, 1, 3")
	}
	m, n, k := WMMAShape(op)
	t := EnumOf(op, "eltype")
	if !WMMALoadStoreValid(m, n, k, "c", t) {
		return op.EmitOpError("invalid attribute combination")
	}
	et, count := wmmaFragment(t, "c", m, n, k)
	args := op.OperandGroup("args")
	if len(args) != count {
		return op.EmitOpError("expected %d data operands", count)
	}
	for _, a := range args {
		if a.Type() != et {
			return op.EmitOpError("expected data operands of type '%s'", et)
		}
	}
	return verifySM(op)
}

func verifyWMMAMma(op *ir.Operation) error {
	m, n, k := WMMAShape(op)
	a, c := EnumOf(op, "eltypeA"), EnumOf(op, "eltypeB")
	if !WMMAMmaValid(m, n, k, a, c) {
		return op.EmitOpError("invalid attribute combination")
	}
	var want []ir.Type
	for _, f := range []struct{ t, frag string }{{a, "a"}, {a, "b"}, {c, "c"}} {
		et, count := wmmaFragment(f.t, f.frag, m, n, k)
		for i := 0; i < count; i++ {
			want = append(want, et)
		}
	}
	args := op.Operands()
	if len(args) != len(want) {
		return op.EmitOpError("expected %d arguments", len(want))
	}
	for i, t := range want {
		if args[i].Type() != t {
			return op.EmitOpError("expected argument %d to be of type '%s'", i, t)
		}
	}
	et, count := wmmaFragment(c, "c", m, n, k)
	if op.Result(0).Type() != repeatedStruct(et, count) {
		return op.EmitOpError("expected destination type is a structure of %d elements of type '%s'", count, et)
	}
	return verifySM(op)
}
