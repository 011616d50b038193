package nvvm

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tmac-dev/tmac/dialects/llvm"
	"github.com/tmac-dev/tmac/ir"
)

// nvvm.mma.sync, the warp-level matrix multiply-accumulate (PTX
// mma.sync.aligned, sm_80 shapes and m8n8k4), with upstream's syntax,
// type inference and verifier.

var (
	MMAType = defEnum(&enumDef{mnemonic: "mma_type", cpp: "MMATypes", values: []string{"f16", "f32", "tf32", "bf16", "s8", "u8", "s32", "s4", "u4", "b1", "f64", "e4m3", "e5m2", "e3m2", "e2m3", "e2m1"}})
	MMAB1Op = defEnum(&enumDef{mnemonic: "mma_b1op", cpp: "MMAB1Op", values: []string{"none", "xor_popc", "and_popc"}})
)

func init() {
	ir.Register(&ir.OpDef{
		Name:    "nvvm.mma.sync",
		Summary: "Warp-level matrix multiply-accumulate (PTX mma.sync)",
		Traits:  ir.Pure | ir.AttrSizedOperandSegments,
		Operands: []ir.ArgSpec{
			{Name: "operandA", Kind: ir.Variadic, Type: ir.AnyType},
			{Name: "operandB", Kind: ir.Variadic, Type: ir.AnyType},
			{Name: "operandC", Kind: ir.Variadic, Type: ir.AnyType},
		},
		Results: []ir.ArgSpec{{Name: "res", Type: llvm.AnyStruct}},
		Attrs: []ir.AttrSpec{
			enumAttr("", "b1Op", MMAB1Op, "MMA binary operations", true, nil, false),
			enumAttr("", "intOverflowBehavior", MMAIntOverflow, "MMA overflow options", true, nil, false),
			enumAttr("", "layoutA", MMALayout, "NVVM MMA layout", false, nil, false),
			enumAttr("", "layoutB", MMALayout, "NVVM MMA layout", false, nil, false),
			enumAttr("", "multiplicandAPtxType", MMAType, "NVVM MMA types", true, nil, false),
			enumAttr("", "multiplicandBPtxType", MMAType, "NVVM MMA types", true, nil, false),
			{Name: "shape", Constraint: ir.AttrConstraint{Desc: "Attribute for MMA operation shape.", OK: func(a ir.Attribute) bool { return ShapeOf(a) != nil }}},
		},
		Parse:  parseMMA,
		Print:  printMMA,
		Verify: verifyMMA,
		Doc: "The PTX types of A and B are inferred from their operand types where they can be " +
			"(vector<2xf16>: f16, f64, f32: tf32) and must be given otherwise (i32 holds bf16, tf32 " +
			"and the integer types).",
	})
	smRequirements["nvvm.mma.sync"] = smReq{min: 70}
}

var mmaGroups = []string{"operandA", "operandB", "operandC"}

// InferMMAType is upstream's inferOperandMMAType: the PTX type an
// operand of type t stands for, or "".
func InferMMAType(t ir.Type, accumulator bool) string {
	if s := llvm.StructOf(t); s != nil {
		if len(s.Body) == 0 {
			return ""
		}
		return InferMMAType(s.Body[0], accumulator)
	}
	half2 := ir.VectorTypeOf([]int64{2}, ir.F16T)
	switch {
	case t == ir.Type(ir.F64T):
		return "f64"
	case t == ir.Type(ir.F16T) || t == ir.Type(half2):
		return "f16"
	case t == ir.Type(ir.F32T) && accumulator:
		return "f32"
	case t == ir.Type(ir.F32T):
		return "tf32"
	}
	if _, ok := t.(*ir.IntegerType); ok && accumulator {
		return "s32"
	}
	return ""
}

func parseMMA(p *ir.Parser, st *ir.OperationState) error {
	nameLoc := st.Loc
	var groups [3][]ir.UnresolvedOperand
	for i, kw := range []string{"A", "B", "C"} {
		if err := p.ParseKeyword(kw); err != nil {
			return err
		}
		us, err := p.ParseOperandList(ir.DelimOptionalSquare)
		if err != nil {
			return err
		}
		groups[i] = us
	}
	n := len(st.Attrs)
	if err := p.ParseOptionalAttrDict(st); err != nil {
		return err
	}
	given := st.Attrs[n:]
	if err := p.ParsePunct(":"); err != nil {
		return err
	}
	if err := p.ParsePunct("("); err != nil {
		return err
	}
	ts, err := p.ParseTypeList()
	if err != nil {
		return err
	}
	if err := p.ParsePunct(")"); err != nil {
		return err
	}
	if len(ts) != 3 {
		return ir.Errorf(nameLoc, "expected one type for each operand segment but got %d types", len(ts))
	}
	var inferred [2]string
	for i, us := range groups {
		types := make([]ir.Type, len(us))
		for j := range types {
			types[j] = ts[i]
		}
		if err := p.ResolveOperands(us, types, st); err != nil {
			return err
		}
		if i < 2 {
			// Upstream infers A and B as accumulators here.
			inferred[i] = InferMMAType(ts[i], true)
		}
	}
	if err := p.ParsePunct("->"); err != nil {
		return err
	}
	rt, err := p.ParseType()
	if err != nil {
		return err
	}
	for i, name := range []string{"multiplicandAPtxType", "multiplicandBPtxType"} {
		if slices.ContainsFunc(given, func(a ir.NamedAttr) bool { return a.Name == name }) {
			continue
		}
		if inferred[i] == "" {
			return ir.Errorf(nameLoc, "attribute %s is not provided explicitly and cannot be inferred", name)
		}
		st.AddAttr(name, MMAType.Attr(inferred[i]))
	}
	st.ResultTypes = append(st.ResultTypes, rt)
	st.AddAttr("operandSegmentSizes", ir.DenseI32Array(int64(len(groups[0])), int64(len(groups[1])), int64(len(groups[2]))))
	return nil
}

func printMMA(p *ir.Printer, op *ir.Operation) {
	ignored := []string{"operandSegmentSizes"}
	// Upstream infers from A's type for all three groups.
	var aType ir.Type
	if a := op.OperandGroup("operandA"); len(a) > 0 {
		aType = a[0].Type()
	}
	for i, name := range []string{"multiplicandAPtxType", "multiplicandBPtxType"} {
		if aType != nil && InferMMAType(aType, i >= 2) != "" {
			ignored = append(ignored, name)
		}
	}
	var firsts []ir.Type
	for i, g := range mmaGroups {
		vs := op.OperandGroup(g)
		p.Write(" " + "ABC"[i:i+1] + "[")
		p.PrintOperands(vs)
		p.Write("] ")
		if len(vs) > 0 {
			firsts = append(firsts, vs[0].Type())
		}
	}
	p.PrintOptionalAttrDict(op.AllAttrs(), ignored...)
	p.Write(" : (")
	p.PrintTypes(firsts)
	p.Write(") -> ")
	p.PrintType(op.Result(0).Type())
}

// mmaFrag is an allowed operand group: n values of type t.
type mmaFrag struct {
	n int
	t ir.Type
}

func verifyMMA(op *ir.Operation) error {
	half2 := ir.Type(ir.VectorTypeOf([]int64{2}, ir.F16T))
	i32, f32, f64 := ir.Type(ir.I32), ir.Type(ir.F32T), ir.Type(ir.F64T)
	st := repeatedStruct
	shape := ShapeOf(op.Attr("shape"))
	if shape == nil {
		return nil
	}
	m, n, k := shape.M, shape.N, shape.K
	aType := EnumOf(op, "multiplicandAPtxType")
	isInt4, isInt8 := aType == "s4" || aType == "u4", aType == "s8" || aType == "u8"
	isInt := isInt4 || isInt8 || aType == "b1"
	var shapes [][3]int64
	var expA, expB, expC []mmaFrag
	var expRes []ir.Type
	if m == 16 {
		var kFactor int64
		var frag ir.Type
		switch aType {
		case "tf32":
			kFactor, frag = 4, i32
			expRes = append(expRes, st(f32, 4))
		case "bf16":
			kFactor, frag = 8, i32
			expRes = append(expRes, st(f32, 4))
		case "f16":
			kFactor, frag = 8, half2
			expRes = append(expRes, st(half2, 2), st(f32, 4))
		case "s4", "u4":
			kFactor = 32
		case "b1":
			kFactor = 128
		case "s8", "u8":
			kFactor = 16
		default:
			return op.EmitError("invalid shape or multiplicand type: %s", aType)
		}
		if isInt {
			expRes = append(expRes, st(i32, 4))
			expC = append(expC, mmaFrag{4, i32})
			frag = i32
		} else {
			expC = append(expC, mmaFrag{2, half2}, mmaFrag{4, f32})
		}
		expA = append(expA, mmaFrag{int(m / 8 * (k / kFactor)), frag})
		expB = append(expB, mmaFrag{int(n / 8 * (k / kFactor)), frag})
		shapes = append(shapes, [3]int64{16, 8, kFactor}, [3]int64{16, 8, kFactor * 2})
		if c := op.OperandGroup("operandC"); len(c) > 0 && InferMMAType(op.Result(0).Type(), true) != InferMMAType(c[0].Type(), true) {
			return op.EmitOpError("ctype does not match dtype")
		}
	}
	if m == 8 {
		switch {
		case aType == "f16":
			expA = append(expA, mmaFrag{2, half2})
			expB = append(expB, mmaFrag{2, half2})
			expRes = append(expRes, st(half2, 4), st(f32, 8))
			expC = append(expC, mmaFrag{4, half2}, mmaFrag{8, f32})
			shapes = append(shapes, [3]int64{8, 8, 4})
		case aType == "f64":
			expA = append(expA, mmaFrag{1, f64})
			expB = append(expB, mmaFrag{1, f64})
			expC = append(expC, mmaFrag{2, f64})
			expRes = append(expRes, st(f64, 2))
			shapes = append(shapes, [3]int64{8, 8, 4})
		case isInt:
			expA = append(expA, mmaFrag{1, i32})
			expB = append(expB, mmaFrag{1, i32})
			expC = append(expC, mmaFrag{2, i32})
			expRes = append(expRes, st(i32, 2))
			switch {
			case isInt4:
				shapes = append(shapes, [3]int64{8, 8, 32})
			case isInt8:
				shapes = append(shapes, [3]int64{8, 8, 16})
			default:
				shapes = append(shapes, [3]int64{8, 8, 128})
			}
		}
	}
	if len(expA) == 0 || len(expB) == 0 || len(expC) == 0 || !slices.Contains(shapes, [3]int64{m, n, k}) {
		return op.EmitOpError("unimplemented variant for MMA shape <%d, %d, %d>", m, n, k)
	}
	for i, exp := range [][]mmaFrag{expA, expB, expC} {
		vs := op.OperandGroup(mmaGroups[i])
		if !slices.ContainsFunc(exp, func(f mmaFrag) bool { return fragMatches(f, vs) }) {
			var sb strings.Builder
			for _, f := range exp {
				fmt.Fprintf(&sb, "%dx%s ", f.n, f.t)
			}
			got := make([]string, len(vs))
			for j, v := range vs {
				got[j] = v.Type().String()
			}
			return op.EmitOpError("Could not match types for the %s operands; expected one of %sbut got %s", "ABC"[i:i+1], sb.String(), strings.Join(got, ", "))
		}
	}
	if rt := op.Result(0).Type(); !slices.Contains(expRes, rt) {
		exp := make([]string, len(expRes))
		for i, t := range expRes {
			exp[i] = t.String()
		}
		return op.EmitOpError("Could not match allowed types for the result; expected one of %s but got %s", strings.Join(exp, ", "), rt)
	}
	if aType == "b1" && op.Attr("b1Op") == nil {
		return op.EmitOpError("op requires b1Op attribute")
	}
	if (isInt4 || isInt8) && op.Attr("intOverflowBehavior") == nil {
		return op.EmitOpError("op requires intOverflowBehavior attribute")
	}
	return verifySM(op)
}

func fragMatches(f mmaFrag, vs []ir.Value) bool {
	if len(vs) != f.n {
		return false
	}
	for _, v := range vs {
		if v.Type() != f.t {
			return false
		}
	}
	return true
}
