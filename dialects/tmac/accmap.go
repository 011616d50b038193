package tmac

import (
	"github.com/tmac-dev/tmac/dialects/nvgpu"
	"github.com/tmac-dev/tmac/ir"
)

// tmac.warpgroup.acc.map: an elementwise computation over wgmma
// accumulators, in registers (docs/design/accumulator-ops.md, item 1):
//
//	%r = tmac.warpgroup.acc.map %a, %b : !acc, !acc -> !acc {
//	^bb0(%x: f32, %y: f32, %row: index, %col: index):
//	  %z = arith.addf %x, %y : f32
//	  tmac.yield %z : f32
//	}
//
// lower-nvgpu clones the region once per element a thread holds
// (passes/lowernvgpu/accmap.go).

func init() {
	ir.Register(
		&ir.OpDef{
			Name:     "tmac.warpgroup.acc.map",
			Summary:  "computes an f32 wgmma accumulator element by element from accumulators of its shape, in registers",
			Traits:   ir.SingleBlock,
			Operands: []ir.ArgSpec{{Name: "accs", Kind: ir.Variadic, Type: wgAccC}},
			Results:  []ir.ArgSpec{{Name: "result", Type: wgAccC}},
			Regions:  []ir.RegionSpec{{Name: "body"}},
			Parse:    parseAccMap,
			Print:    printAccMap,
			Verify:   verifyAccMap,
			Doc: "At least one accumulator operand; every operand has the result's type, a 2-D accumulator of f32. " +
				"The region has one block whose arguments are one f32 per operand (the operands' elements at one position) " +
				"and then the element's row and column in the accumulator (index), for masking edge tiles. " +
				"It holds only ops without memory effects (arith, math, index) and ends with `tmac.yield` of one f32, " +
				"the result's element at that position; values defined outside the op may be used. " +
				"The op is warpgroup-collective: all 128 threads of the warpgroup execute it, as `nvgpu.warpgroup.mma`.",
		},
		&ir.OpDef{
			Name:     "tmac.yield",
			Summary:  "yields the element a tmac.warpgroup.acc.map region computes",
			Traits:   ir.Pure | ir.Terminator | ir.ReturnLike,
			Parents:  []string{"tmac.warpgroup.acc.map"},
			Operands: []ir.ArgSpec{{Name: "value", Type: f32C}},
			Format:   "$value attr-dict `:` type($value)",
		},
	)
}

var f32C = ir.TypeConstraint{Desc: "32-bit float", OK: func(t ir.Type) bool { return t == ir.F32T }}

// parseAccMap parses `%a, %b attr-dict : !acc, !acc -> !acc { region }`.
func parseAccMap(p *ir.Parser, st *ir.OperationState) error {
	accs, err := p.ParseOperandList(ir.DelimNone)
	if err != nil {
		return err
	}
	if err := p.ParseOptionalAttrDict(st); err != nil {
		return err
	}
	if err := p.ParsePunct(":"); err != nil {
		return err
	}
	var types []ir.Type
	if len(accs) > 0 {
		if types, err = p.ParseTypeList(); err != nil {
			return err
		}
	}
	if err := p.ParsePunct("->"); err != nil {
		return err
	}
	res, err := p.ParseType()
	if err != nil {
		return err
	}
	if len(types) != len(accs) {
		return p.CustomOpErrorf("%d accumulators but %d types", len(accs), len(types))
	}
	if err := p.ResolveOperands(accs, types, st); err != nil {
		return err
	}
	st.ResultTypes = []ir.Type{res}
	return p.ParseRegion(st.AddRegion(), nil)
}

func printAccMap(p *ir.Printer, op *ir.Operation) {
	p.Write(" ")
	p.PrintOperands(op.Operands())
	p.PrintOptionalAttrDict(op.AllAttrs())
	p.Write(" : ")
	var types []ir.Type
	for _, v := range op.Operands() {
		types = append(types, v.Type())
	}
	p.PrintTypes(types)
	p.Write(" -> ")
	p.PrintType(op.Result(0).Type())
	p.Write(" ")
	p.PrintRegion(op.Region(0), true, true, false)
}

// verifyAccMap checks the operands against the result and the region's
// signature and contents.
func verifyAccMap(op *ir.Operation) error {
	acc, _ := nvgpu.AsWarpgroupAccumulator(op.Result(0).Type())
	v := acc.Fragmented
	if v.Elem != ir.F32T || len(v.Shape()) != 2 {
		return op.EmitOpError("result must be a 2-D accumulator of f32, not %s", v)
	}
	if op.NumOperands() == 0 {
		return op.EmitOpError("needs at least one accumulator operand")
	}
	for i, a := range op.Operands() {
		if a.Type() != op.Result(0).Type() {
			return op.EmitOpError("accumulator operand #%d has type %s, not the result's %s", i, a.Type(), op.Result(0).Type())
		}
	}
	b := op.Region(0).Entry()
	if b == nil {
		return op.EmitOpError("needs a region with one block")
	}
	n := op.NumOperands()
	ok := b.NumArgs() == n+2 && b.Arg(n).Type() == ir.Index && b.Arg(n+1).Type() == ir.Index
	for i := 0; ok && i < n; i++ {
		ok = b.Arg(i).Type() == ir.F32T
	}
	if !ok {
		return op.EmitOpError("region arguments must be %d f32 (one per accumulator operand), then the row and column (index)", n)
	}
	for _, nested := range b.Ops() {
		if !nested.HasNoMemoryEffect() || nested.NumRegions() != 0 {
			return ir.Errorf(nested.Loc, "'%s' is not allowed in a 'tmac.warpgroup.acc.map' region: only ops without memory effects or regions", nested.Name())
		}
	}
	if t := b.Terminator(); t == nil || t.Name() != "tmac.yield" {
		return op.EmitOpError("region must end with tmac.yield")
	}
	return nil
}
