package tmac

import (
	"github.com/tmac-dev/tmac/dialects/nvgpu"
	"github.com/tmac-dev/tmac/ir"
)

// tmac.warpgroup.acc.map: an elementwise computation over wgmma
// accumulators, with row and column broadcasts, in registers
// (docs/design/accumulator-ops.md, item 1):
//
//	%r = tmac.warpgroup.acc.map %a, %b rows(%m) cols(%bias)
//	     : !acc, !acc rows !tmac.rows<128xf32> cols !tmac.cols<256xf32> -> !acc {
//	^bb0(%x: f32, %y: f32, %mr: f32, %c: f32, %row: index, %col: index):
//	  %z = arith.addf %x, %c : f32
//	  tmac.yield %z : f32
//	}
//
// lower-nvgpu clones the region once per element a thread holds
// (passes/lowernvgpu/accmap.go).

func init() {
	ir.Register(
		&ir.OpDef{
			Name:    "tmac.warpgroup.acc.map",
			Summary: "computes an f32 wgmma accumulator element by element from accumulators of its shape, in registers",
			Traits:  ir.SingleBlock | ir.AttrSizedOperandSegments,
			Operands: []ir.ArgSpec{
				{Name: "accs", Kind: ir.Variadic, Type: wgAccC},
				{Name: "rows", Kind: ir.Variadic, Type: rowsC},
				{Name: "cols", Kind: ir.Variadic, Type: colsC},
			},
			Results: []ir.ArgSpec{{Name: "result", Type: wgAccC}},
			Regions: []ir.RegionSpec{{Name: "body"}},
			Parse:   parseAccMap,
			Print:   printAccMap,
			Verify:  verifyAccMap,
			Doc: "At least one accumulator operand; every accumulator operand has the result's type, a 2-D accumulator of f32; " +
				"`rows` operands are `!tmac.rows` of the result's M, `cols` operands `!tmac.cols` of its N. " +
				"The region has one block whose arguments are one f32 per operand, in operand order (the accumulators' elements " +
				"at one position, the rows values of its row, the cols values of its column), " +
				"and then the element's row and column in the accumulator (index), for masking edge tiles. " +
				"It holds only ops without memory effects (arith, math, index) and ends with `tmac.yield` of one f32, " +
				"the result's element at that position; values defined outside the op may be used. " +
				"The op is warpgroup-collective: all 128 threads of the warpgroup execute it, as `nvgpu.warpgroup.mma`.",
		},
		&ir.OpDef{
			Name:     "tmac.yield",
			Summary:  "yields the element a tmac.warpgroup.acc.map or tmac.rows.map region computes",
			Traits:   ir.Pure | ir.Terminator | ir.ReturnLike,
			Parents:  []string{"tmac.warpgroup.acc.map", "tmac.rows.map"},
			Operands: []ir.ArgSpec{{Name: "value", Type: f32C}},
			Format:   "$value attr-dict `:` type($value)",
		},
	)
}

var f32C = ir.TypeConstraint{Desc: "32-bit float", OK: func(t ir.Type) bool { return t == ir.F32T }}

// parseAccMap parses
//
//	%a, %b [rows(%r, ...)] [cols(%c, ...)] attr-dict
//	  : !acc, !acc [rows type, ...] [cols type, ...] -> !acc { region }
func parseAccMap(p *ir.Parser, st *ir.OperationState) error {
	var ops [3][]ir.UnresolvedOperand // by accMapGroups
	var err error
	if ops[0], err = p.ParseOperandList(ir.DelimNone); err != nil {
		return err
	}
	for i, g := range accMapGroups[1:] {
		if !p.ParseOptionalKeyword(g) {
			continue
		}
		if ops[i+1], err = p.ParseOperandList(ir.DelimParen); err != nil {
			return err
		}
	}
	if err := p.ParseOptionalAttrDict(st); err != nil {
		return err
	}
	if err := p.ParsePunct(":"); err != nil {
		return err
	}
	var all []ir.UnresolvedOperand
	var types []ir.Type
	for i, g := range accMapGroups {
		if len(ops[i]) == 0 {
			continue
		}
		if i > 0 {
			if err := p.ParseKeyword(g); err != nil {
				return err
			}
		}
		ts, err := p.ParseTypeList()
		if err != nil {
			return err
		}
		if len(ts) != len(ops[i]) {
			return p.CustomOpErrorf("%d %s operands but %d types", len(ops[i]), g, len(ts))
		}
		all, types = append(all, ops[i]...), append(types, ts...)
	}
	if err := p.ParsePunct("->"); err != nil {
		return err
	}
	res, err := p.ParseType()
	if err != nil {
		return err
	}
	if err := p.ResolveOperands(all, types, st); err != nil {
		return err
	}
	st.AddAttr("operandSegmentSizes", ir.DenseI32Array(int64(len(ops[0])), int64(len(ops[1])), int64(len(ops[2]))))
	st.ResultTypes = []ir.Type{res}
	return p.ParseRegion(st.AddRegion(), nil)
}

// accMapGroups are the operand groups of tmac.warpgroup.acc.map; the
// custom form spells the last two with their names as keywords.
var accMapGroups = []string{"accs", "rows", "cols"}

func printAccMap(p *ir.Printer, op *ir.Operation) {
	p.Write(" ")
	p.PrintOperands(op.OperandGroup("accs"))
	for _, g := range accMapGroups[1:] {
		if vs := op.OperandGroup(g); len(vs) > 0 {
			p.Write(" " + g + "(")
			p.PrintOperands(vs)
			p.Write(")")
		}
	}
	p.PrintOptionalAttrDict(op.AllAttrs(), "operandSegmentSizes")
	p.Write(" : ")
	types := op.OperandTypes()
	for i, g := range accMapGroups {
		n := len(op.OperandGroup(g))
		if n == 0 {
			continue
		}
		if i > 0 {
			p.Write(" " + g + " ")
		}
		p.PrintTypes(types[:n])
		types = types[n:]
	}
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
	if len(op.OperandGroup("accs")) == 0 {
		return op.EmitOpError("needs at least one accumulator operand")
	}
	for i, a := range op.OperandGroup("accs") {
		if a.Type() != op.Result(0).Type() {
			return op.EmitOpError("accumulator operand #%d has type %s, not the result's %s", i, a.Type(), op.Result(0).Type())
		}
	}
	for _, r := range op.OperandGroup("rows") {
		if rv, _ := AsRows(r.Type()); rv.Len != v.Shape()[0] {
			return op.EmitOpError("rows operand %s must have the result's %d rows", r.Type(), v.Shape()[0])
		}
	}
	for _, c := range op.OperandGroup("cols") {
		if cv, _ := AsCols(c.Type()); cv.Len != v.Shape()[1] {
			return op.EmitOpError("cols operand %s must have the result's %d columns", c.Type(), v.Shape()[1])
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
		return op.EmitOpError("region arguments must be %d f32 (one per operand: accumulators, rows, cols), then the row and column (index)", n)
	}
	return verifyElementRegion(op, b)
}
