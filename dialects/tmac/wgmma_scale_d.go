package tmac

import (
	"fmt"

	"github.com/tmac-dev/tmac/dialects/llvm"
	"github.com/tmac-dev/tmac/dialects/nvvm"
	"github.com/tmac-dev/tmac/ir"
)

// tmac.wgmma.mma_async.scale_d: nvvm.wgmma.mma_async with scale-d a
// runtime i1 operand instead of an attribute. D = A·B + (scaleD ? D : 0):
// a loop that starts a new accumulation (a new output tile of a cross-tile
// K loop) clears the accumulator through the wgmma itself rather than by
// writing zeros into its registers, which would make ptxas serialise every
// wgmma of the kernel (warning C7514). The wgmma-acc-init pass makes it of
// such loops' first wgmma; code generation emits it as inline PTX, the
// predicate set from the operand.

func init() {
	ir.Register(&ir.OpDef{
		Name:    "tmac.wgmma.mma_async.scale_d",
		Summary: "one wgmma.mma_async whose scale-d (add the accumulator, or start from zero) is a runtime i1 operand",
		Operands: []ir.ArgSpec{{Name: "inouts", Type: llvm.AnyStruct}, {Name: "descriptorA", Type: fixedInt(64)},
			{Name: "descriptorB", Type: fixedInt(64)}, {Name: "scaleD", Type: fixedInt(1)}},
		Results: []ir.ArgSpec{{Name: "results", Type: llvm.AnyStruct}},
		Attrs: []ir.AttrSpec{
			{Name: "layoutA", Constraint: attrOfC("NVVM MMA layout", "mma_layout")},
			{Name: "layoutB", Constraint: attrOfC("NVVM MMA layout", "mma_layout")},
			{Name: "scaleA", Constraint: attrOfC("WGMMA input predicate", "wgmma_scale_in")},
			{Name: "scaleB", Constraint: attrOfC("WGMMA input predicate", "wgmma_scale_in")},
			{Name: "shape", Constraint: attrOfC("Attribute for MMA operation shape.", "shape")},
			{Name: "typeA", Constraint: attrOfC("NVVM WGMMA types", "wgmma_type")},
			{Name: "typeB", Constraint: attrOfC("NVVM WGMMA types", "wgmma_type")},
			{Name: "typeD", Constraint: attrOfC("NVVM WGMMA types", "wgmma_type")},
		},
		Format: "$descriptorA `,` $descriptorB `,` $inouts `,` $scaleD attr-dict `:` type($inouts) `->` type($results)",
		Verify: func(op *ir.Operation) error {
			_, _, td := nvvm.WGMMATypes(op)
			if td != "f32" {
				return op.EmitError("accumulates in %s: only f32 accumulators are supported", td)
			}
			return nvvm.VerifyWgmma(op)
		},
		// A and B are read from shared memory through their descriptors.
		Effects: []ir.Effect{{Kind: ir.Read, Proxy: ir.AsyncProxy}},
		Doc: "The operands and attributes of `nvvm.wgmma.mma_async` (A and B through descriptors; no satfinite) with `scaleD` " +
			"an i1 operand: true adds the product to `inouts`, false ignores `inouts` and starts from zero. f32 accumulators " +
			"only. The `wgmma-acc-init` pass makes it of the first wgmma of a loop whose accumulator is reset to zero in the " +
			"loop; code generation emits inline PTX with the predicate set from the operand.",
	})
}

// fixedInt is the signless integer type of width w as an operand
// constraint whose type the custom form leaves implied.
func fixedInt(w int) ir.TypeConstraint {
	t := ir.IntegerTypeOf(w)
	return ir.TypeConstraint{Desc: fmt.Sprintf("%d-bit signless integer", w), OK: func(x ir.Type) bool { return x == ir.Type(t) }, Fixed: t}
}
