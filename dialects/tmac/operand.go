package tmac

import (
	"fmt"

	"github.com/tmac-dev/tmac/dialects/llvm"
	"github.com/tmac-dev/tmac/dialects/nvgpu"
	"github.com/tmac-dev/tmac/dialects/nvvm"
	"github.com/tmac-dev/tmac/ir"
)

// wgmma with A in registers (the RS form of wgmma.mma_async; upstream
// nvgpu and NVVM only have the descriptor form, llvm issue 133733):
//
//	!tmac.warpgroup.operand<MxKxbf16>  A fragments of M/64 m64nNk16 wgmmas
//	tmac.warpgroup.acc.to_operand      f32 accumulator -> A fragments
//	tmac.warpgroup.mma                 D += A (registers) · B (descriptor)
//	tmac.wgmma.mma_async               one RS wgmma instruction, what
//	                                   lower-nvgpu makes of tmac.warpgroup.mma
//
// For 16-bit inputs the A fragment of k16 step j is the f32 accumulator's
// registers 8j..8j+7 packed in pairs (dialects/tmac/SPEC.md).

const operandName = "warpgroup.operand"

// Operand is the parameter of !tmac.warpgroup.operand<MxKxT>.
type Operand struct {
	M, K int64
	Elem ir.Type
}

// OperandType returns !tmac.warpgroup.operand<MxKxelem>.
func OperandType(m, k int64, elem ir.Type) *ir.DialectType {
	text := fmt.Sprintf("!tmac.%s<%dx%dx%s>", operandName, m, k, elem)
	return ir.DialectTypeOf("tmac", operandName, text, func() any { return &Operand{M: m, K: k, Elem: elem} })
}

// AsOperand returns the parameter of a !tmac.warpgroup.operand type.
func AsOperand(t ir.Type) (*Operand, bool) {
	d, ok := t.(*ir.DialectType)
	if !ok || d.Dialect != "tmac" || d.Name != operandName {
		return nil, false
	}
	return d.Data.(*Operand), true
}

// IsOperandElem reports whether an A operand in registers may hold
// elements of type t: f16 or bf16 (fp8 A fragments are not the
// accumulator's layout, and tf32 ones are not supported).
func IsOperandElem(t ir.Type) bool {
	f, ok := t.(*ir.FloatType)
	return ok && (f.Kind == ir.F16 || f.Kind == ir.BF16)
}

// CheckOperandShape reports why MxK cannot be the shape of an A operand
// in registers ("" when it can): M a positive multiple of 64 (one wgmma
// per 64-row slice), K a multiple of 16 from 16 to 256 (one k16 step per
// 16 columns; K is the N of the accumulator it is converted from).
func CheckOperandShape(m, k int64) string {
	if m <= 0 || m%64 != 0 {
		return fmt.Sprintf("M = %d is not a positive multiple of 64", m)
	}
	if k < 16 || k > 256 || k%16 != 0 {
		return fmt.Sprintf("K = %d is not a multiple of 16 from 16 to 256", k)
	}
	return ""
}

func parseOperandType(p *ir.Parser) (ir.Type, error) {
	dims, elem, err := typeShape{
		rank:   2,
		arity:  "expected two static dimensions in !tmac." + operandName + "<MxKxT>",
		elemOK: IsOperandElem,
		elem:   "!tmac." + operandName + " holds f16 or bf16 elements, not %s",
		check: func(dims []int64) string {
			if msg := CheckOperandShape(dims[0], dims[1]); msg != "" {
				return "!tmac." + operandName + ": " + msg
			}
			return ""
		},
	}.parse(p)
	if err != nil {
		return nil, err
	}
	return OperandType(dims[0], dims[1], elem), nil
}

var (
	operandC = ir.TypeConstraint{Desc: "warpgroup A operand in registers", OK: func(t ir.Type) bool { _, ok := AsOperand(t); return ok }}
	wgDescC  = ir.TypeConstraint{Desc: "warpgroup descriptor type", OK: func(t ir.Type) bool { _, ok := nvgpu.AsWarpgroupDescriptor(t); return ok }}
	i64C     = ir.TypeConstraint{Desc: "64-bit signless integer", OK: func(t ir.Type) bool { return ir.IsIntegerOfWidth(t, 64) }}
	attrOfC  = func(desc, name string) ir.AttrConstraint {
		return ir.AttrConstraint{Desc: desc, OK: func(a ir.Attribute) bool {
			d, ok := a.(*ir.DialectAttr)
			return ok && d.Dialect == "nvvm" && d.Name == name
		}}
	}
)

func init() {
	typeParsers[operandName] = parseOperandType
	ir.Register(
		&ir.OpDef{
			Name:     "tmac.warpgroup.acc.to_operand",
			Summary:  "converts an f32 wgmma accumulator into A fragments (f16 or bf16) of a wgmma with A in registers",
			Operands: []ir.ArgSpec{{Name: "acc", Type: wgAccC}},
			Results:  []ir.ArgSpec{{Name: "operand", Type: operandC}},
			Format:   "$acc attr-dict `:` type($acc) `->` type($operand)",
			Verify:   verifyToOperand,
			Doc: "The accumulator is MxK f32 (M a multiple of 64, K a multiple of 16 up to 256); the result is " +
				"`!tmac.warpgroup.operand<MxKxT>`, T f16 or bf16, each element rounded to nearest even. " +
				"Waits for every wgmma group first (the accumulator may be the result of an mma in flight).",
		},
		&ir.OpDef{
			Name:     "tmac.warpgroup.mma",
			Summary:  "warpgroup MMA with A in registers: D = A · B + C, B read from shared memory through its descriptor",
			Operands: []ir.ArgSpec{{Name: "a", Type: operandC}, {Name: "descriptorB", Type: wgDescC}, {Name: "matrixC", Type: wgAccC}},
			Results:  []ir.ArgSpec{{Name: "matrixD", Type: wgAccC}},
			Attrs: []ir.AttrSpec{
				{Name: "waitGroup", Constraint: ir.I64AttrC, Optional: true, Default: ir.I64Attr(1)},
				{Name: "transposeB", Constraint: ir.UnitAttrC, Optional: true},
			},
			Format: "$a `,` $descriptorB `,` $matrixC attr-dict `:` type($a) `,` type($descriptorB) `,` type($matrixC) `->` type($matrixD)",
			Verify: verifyRegisterMma,
			// B is read from shared memory through its descriptor.
			Effects: []ir.Effect{{Kind: ir.Read, Proxy: ir.AsyncProxy}},
			Doc: "A is `!tmac.warpgroup.operand<MxKxT>`, B's descriptor a KxN tile of T (f16 or bf16), C and D the same MxN f32 " +
				"accumulator type, N from 8 to 256 in steps of 8. `transposeB` as in `nvgpu.warpgroup.mma` (B stored N-major); " +
				"there is no transposeA (A in registers has one layout). `waitGroup` (default 1) is how many wgmma groups " +
				"may still be in flight when the op returns.",
		},
		&ir.OpDef{
			Name:     "tmac.wgmma.mma_async",
			Summary:  "one wgmma.mma_async with A in registers (the RS form, which nvvm.wgmma.mma_async lacks)",
			Operands: []ir.ArgSpec{{Name: "a", Type: llvm.AnyStruct}, {Name: "descriptorB", Type: i64C}, {Name: "inouts", Type: llvm.AnyStruct}},
			Results:  []ir.ArgSpec{{Name: "results", Type: llvm.AnyStruct}},
			Attrs: []ir.AttrSpec{
				{Name: "layoutB", Constraint: attrOfC("NVVM MMA layout", "mma_layout")},
				{Name: "shape", Constraint: attrOfC("Attribute for MMA operation shape.", "shape")},
				{Name: "typeA", Constraint: attrOfC("NVVM WGMMA types", "wgmma_type")},
				{Name: "typeB", Constraint: attrOfC("NVVM WGMMA types", "wgmma_type")},
				{Name: "typeD", Constraint: attrOfC("NVVM WGMMA types", "wgmma_type")},
			},
			Format: "$a `,` $descriptorB `,` $inouts attr-dict `:` type($a) `,` type($descriptorB) `,` type($inouts) `->` type($results)",
			Verify: verifyWgmmaRS,
			// B is read from shared memory through its descriptor.
			Effects: []ir.Effect{{Kind: ir.Read, Proxy: ir.AsyncProxy}},
			Doc: "What `lower-nvgpu` makes of `tmac.warpgroup.mma`, one per 64-row slice and k16 step; code generation emits " +
				"it as inline PTX. Shape m64nNk16, typeA = typeB f16 or bf16, typeD f32; `a` is a struct of the thread's 4 A " +
				"registers (`vector<2xT>` each), `inouts` and the result the struct of its N/2 f32 accumulator registers. " +
				"layoutB `col` is K-major B (imm-trans-b 0), `row` N-major (1).",
		},
	)
}

// verifyToOperand checks tmac.warpgroup.acc.to_operand: an f32 MxK
// accumulator to an operand of the same shape.
func verifyToOperand(op *ir.Operation) error {
	acc, _ := nvgpu.AsWarpgroupAccumulator(op.Operand(0).Type())
	o, _ := AsOperand(op.Result(0).Type())
	v := acc.Fragmented
	if f, ok := v.Elem.(*ir.FloatType); !ok || f.Kind != ir.F32 {
		return op.EmitError("the accumulator must hold f32 elements, not %s", v.Elem)
	}
	if len(v.Shape()) != 2 || v.Shape()[0] != o.M || v.Shape()[1] != o.K {
		return op.EmitError("the accumulator %s must have the operand's shape %dx%d", v, o.M, o.K)
	}
	return nil
}

// verifyRegisterMma checks tmac.warpgroup.mma: A MxK in registers, B KxN
// of A's element type, C and D MxN f32 of one type.
func verifyRegisterMma(op *ir.Operation) error {
	a, _ := AsOperand(op.Operand(0).Type())
	db, _ := nvgpu.AsWarpgroupDescriptor(op.Operand(1).Type())
	c, _ := nvgpu.AsWarpgroupAccumulator(op.Operand(2).Type())
	if op.Operand(2).Type() != op.Result(0).Type() {
		return op.EmitError("matrixC and matrixD must have the same type")
	}
	b, v := db.Tensor, c.Fragmented
	if b.Rank() != 2 || len(v.Shape()) != 2 {
		return op.EmitError("B and the accumulator must be 2-D")
	}
	if b.Elem != a.Elem {
		return op.EmitError("B holds %s, A %s: wgmma needs the same type on both sides", b.Elem, a.Elem)
	}
	if f, ok := v.Elem.(*ir.FloatType); !ok || f.Kind != ir.F32 {
		return op.EmitError("the accumulator must hold f32 elements, not %s", v.Elem)
	}
	if b.Shape()[0] != a.K {
		return op.EmitError("B has %d rows, A's K is %d", b.Shape()[0], a.K)
	}
	if v.Shape()[0] != a.M || v.Shape()[1] != b.Shape()[1] {
		return op.EmitError("the accumulator %s must be %dx%d (A's M by B's N)", v, a.M, b.Shape()[1])
	}
	if n := b.Shape()[1]; n < 8 || n > 256 || n%8 != 0 {
		return op.EmitError("N = %d is not a multiple of 8 from 8 to 256", n)
	}
	return nil
}

// verifyWgmmaRS checks tmac.wgmma.mma_async: an m64nNk16 f32 += f16|bf16
// shape and types, 4 A registers and N/2 accumulator registers.
func verifyWgmmaRS(op *ir.Operation) error {
	m, n, k := nvvm.WGMMAShape(op)
	ta, tb, td := nvvm.WGMMATypes(op)
	if m != 64 || k != 16 || n < 8 || n > 256 || n%8 != 0 {
		return op.EmitError("shape m%dn%dk%d is not m64nNk16 with N a multiple of 8 from 8 to 256", m, n, k)
	}
	if ta != tb || (ta != "f16" && ta != "bf16") || td != "f32" {
		return op.EmitError("types D %s, A %s, B %s are not f32 += f16·f16 or bf16·bf16", td, ta, tb)
	}
	elem := ir.Type(ir.F16T)
	if ta == "bf16" {
		elem = ir.BF16T
	}
	pair := ir.VectorTypeOf([]int64{2}, elem)
	if !structOf(op.Operand(0).Type(), 4, pair) {
		return op.EmitError("A must be a struct of 4 %s registers, not %s", pair, op.Operand(0).Type())
	}
	for _, t := range []ir.Type{op.Operand(2).Type(), op.Result(0).Type()} {
		if !structOf(t, n/2, ir.F32T) {
			return op.EmitError("the accumulator must be a struct of %d f32 registers, not %s", n/2, t)
		}
	}
	return nil
}

// structOf reports whether t is an LLVM struct of n fields of type elem.
func structOf(t ir.Type, n int64, elem ir.Type) bool {
	s := llvm.StructOf(t)
	if s == nil || int64(len(s.Body)) != n {
		return false
	}
	for _, f := range s.Body {
		if f != elem {
			return false
		}
	}
	return true
}
