package tmac

import (
	"github.com/tmac-dev/tmac/dialects/nvgpu"
	"github.com/tmac-dev/tmac/ir"
)

// tmac.warpgroup.acc.load is the inverse of tmac.warpgroup.mma.store: it
// reads a 2-D memref into a wgmma accumulator, each thread the elements of
// its own fragment. A split-K or stream-K reduction adds partial tiles to
// an accumulator with it (and tmac.warpgroup.acc.map), in registers.
func init() {
	ir.Register(&ir.OpDef{
		Name:    "tmac.warpgroup.acc.load",
		Summary: "loads a wgmma accumulator from a memref of f32, f16 or bf16, each thread its fragment's elements (0.0 outside the memref in the masked form)",
		Operands: []ir.ArgSpec{{Name: "srcMemref", Type: ir.AnyMemRef},
			{Name: "indices", Kind: ir.Variadic, Type: ir.IndexOnly}},
		Results: []ir.ArgSpec{{Name: "result", Type: wgAccC}},
		Format:  "$srcMemref (`[` $indices^ `]`)? attr-dict `:` type($srcMemref) `->` type($result)",
		Verify:  verifyAccLoad,
		Effects: []ir.Effect{{Kind: ir.Read, Operand: "srcMemref"}},
		Doc: "The result is a 2-D accumulator of f32; the source is a 2-D memref of f32, f16 or bf16 (converted exactly with " +
			"`arith.extf`), in global or shared memory, with a strided layout whose innermost stride is 1. Without indices the " +
			"source has the accumulator's shape and element (r, c) is `%src[r, c]`. With two indices `[%m0, %n0]` (the masked " +
			"form, for edge tiles) element (r, c) is `%src[%m0 + r, %n0 + c]` when both indices are inside the source's " +
			"dimensions (compared unsigned) and 0.0 otherwise; the source may then have any 2-D shape. Executed by whole " +
			"warpgroups, each thread loading the elements it holds in the wgmma fragment layout; no synchronisation is implied.",
	})
}

// verifyAccLoad checks tmac.warpgroup.acc.load: an f32 accumulator of
// shape MxN loaded from a 2-D memref of f32, f16 or bf16 in global or
// shared memory with unit innermost stride; of shape MxN unless the op has
// the two indices of the masked form.
func verifyAccLoad(op *ir.Operation) error {
	acc, _ := nvgpu.AsWarpgroupAccumulator(op.Result(0).Type())
	v := acc.Fragmented
	m := op.Operand(0).Type().(*ir.MemRefType)
	nidx := op.NumOperands() - 1
	if f, ok := v.Elem.(*ir.FloatType); !ok || f.Kind != ir.F32 || len(v.Shape()) != 2 {
		return op.EmitError("result must be a 2-D accumulator of f32, not %s", v)
	}
	return verifyAccMemref(op, v, m, nidx, "source", IsRowsMemElem, "f32, f16 or bf16")
}
