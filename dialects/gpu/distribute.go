package gpu

import (
	"github.com/tmac-dev/tmac/ir"
)

// gpu.warp_execute_on_lane_0 (the vector-distribution op: its region runs
// on lane 0 with the whole vectors the lanes hold pieces of) and
// gpu.set_default_device (a host runtime call). Both parse, print and
// verify as upstream's; codegen and tmac run reject them.

const warpExecuteDoc = `**Not compiled by tmac.** Upstream rewrites it with the vector-distribution
patterns before lowering; tmac has no such rewrite and ` + "`tmac compile`" + `
rejects it. Write the per-lane code directly (gpu.shuffle,
gpu.subgroup_reduce and gpu.subgroup_broadcast move values between lanes).`

func init() {
	ir.Register(
		&ir.OpDef{
			Name:    "gpu.warp_execute_on_lane_0",
			Summary: "Runs a region on lane 0 with the vectors the lanes hold pieces of (not compiled)",
			Operands: []ir.ArgSpec{
				{Name: "laneid", Type: ir.IndexOnly},
				{Name: "args", Kind: ir.Variadic, Type: ir.AnyType},
			},
			Results:          []ir.ArgSpec{{Name: "results", Kind: ir.Variadic, Type: ir.AnyType}},
			Attrs:            []ir.AttrSpec{{Name: "warp_size", Constraint: ir.I64AttrC}},
			Regions:          []ir.RegionSpec{{Name: "warpRegion"}},
			Parse:            parseWarpExecute,
			Print:            printWarpExecute,
			VerifyInvariants: verifyWarpExecuteRegion,
			Verify:           verifyWarpExecute,
			Doc:              warpExecuteDoc,
		},
		&ir.OpDef{
			Name:     "gpu.set_default_device",
			Summary:  "Sets the default GPU of the host runtime (not run by tmac)",
			Operands: []ir.ArgSpec{{Name: "devIndex", Type: i32C}},
			Format:   "attr-dict $devIndex",
			Doc:      "A host runtime call; `tmac run` uses the device given by --device and rejects it.",
		},
	)
}

// parseWarpExecute: `(` %laneid `)` `[` warp size `]` (`args` `(` operands
// `:` types `)`)? (`->` `(` types `)`)? region attr-dict; a block without
// a terminator gets an empty gpu.yield.
func parseWarpExecute(p *ir.Parser, st *ir.OperationState) error {
	if err := p.ParsePunct("("); err != nil {
		return err
	}
	if err := p.ParseOperandOfType(ir.Index, st); err != nil {
		return err
	}
	if err := p.ParsePunct(")"); err != nil {
		return err
	}
	if err := p.ParsePunct("["); err != nil {
		return err
	}
	size, err := p.ParseInteger()
	if err != nil {
		return err
	}
	if err := p.ParsePunct("]"); err != nil {
		return err
	}
	st.AddAttr("warp_size", ir.I64Attr(size))
	if p.ParseOptionalKeyword("args") {
		if err := p.ParsePunct("("); err != nil {
			return err
		}
		us, err := p.ParseOperandList(ir.DelimNone)
		if err != nil {
			return err
		}
		ts, err := p.ParseColonTypeList()
		if err != nil {
			return err
		}
		if err := p.ResolveOperands(us, ts, st); err != nil {
			return err
		}
		if err := p.ParsePunct(")"); err != nil {
			return err
		}
	}
	results, err := p.ParseOptionalArrowTypeList()
	if err != nil {
		return err
	}
	st.ResultTypes = results
	r := st.AddRegion()
	if err := p.ParseRegion(r, nil); err != nil {
		return err
	}
	r.EnsureTerminator("gpu.yield", st.Loc)
	return p.ParseOptionalAttrDict(st)
}

func printWarpExecute(p *ir.Printer, op *ir.Operation) {
	p.Write("(")
	p.PrintOperand(op.Operand(0))
	p.Write(")[")
	p.Write(ir.AttrWithoutType(op.Attr("warp_size")))
	p.Write("]")
	if args := op.Operands()[1:]; len(args) > 0 {
		p.Write(" args(")
		p.PrintOperands(args)
		p.Write(" : ")
		p.PrintTypes(op.OperandTypes()[1:])
		p.Write(")")
	}
	if op.NumResults() > 0 {
		p.Write(" -> (")
		p.PrintTypes(op.ResultTypes())
		p.Write(")")
	}
	p.Write(" ")
	p.PrintRegion(op.Region(0), true, op.NumResults() > 0, false)
	p.PrintOptionalAttrDict(op.AllAttrs(), "warp_size")
}

// verifyWarpExecuteRegion checks the region's shape before the ops in it:
// SizedRegion<1> and SingleBlockImplicitTerminator<gpu.yield>.
func verifyWarpExecuteRegion(op *ir.Operation) error {
	r := op.Region(0)
	if len(r.Blocks()) != 1 {
		return op.EmitOpError("region #0 ('warpRegion') failed to verify constraint: region with 1 blocks")
	}
	if last := r.Entry().Last(); last == nil || last.Name() != "gpu.yield" {
		name := "nothing"
		if last != nil {
			name = "'" + last.Name() + "'"
		}
		return op.EmitOpError("expects regions to end with 'gpu.yield', found %s", name).
			AttachNote(op.Loc, "in custom textual format, the absence of terminator implies 'gpu.yield'")
	}
	return nil
}

func verifyWarpExecute(op *ir.Operation) error {
	entry := op.Region(0).Entry()
	args := op.Operands()[1:]
	if len(args) != entry.NumArgs() {
		return op.EmitOpError("expected same number op arguments and block arguments.")
	}
	yield := entry.Last()
	if yield.NumOperands() != op.NumResults() {
		return op.EmitOpError("expected same number of yield operands and return values.")
	}
	size := intValue(op.Attr("warp_size"))
	for i, a := range args {
		if err := verifyDistributed(op, entry.Arg(i).Type(), a.Type(), size); err != nil {
			return err
		}
	}
	for i, r := range op.Results() {
		if err := verifyDistributed(op, yield.Operand(i).Type(), r.Type(), size); err != nil {
			return err
		}
	}
	return nil
}

// verifyDistributed checks that the lanes' pieces (distributed) make up
// the whole (expanded): the same vector type, or one whose dimensions
// divide the whole's, with warp size pieces in all.
func verifyDistributed(op *ir.Operation, expanded, distributed ir.Type, warpSize int64) error {
	if expanded == distributed {
		return nil
	}
	ev, eok := expanded.(*ir.VectorType)
	dv, dok := distributed.(*ir.VectorType)
	if !eok || !dok {
		return op.EmitOpError("expected vector type for distributed operands.")
	}
	es, ds := ev.Shape(), dv.Shape()
	if len(es) != len(ds) || ev.Elem != dv.Elem {
		return op.EmitOpError("expected distributed vectors to have same rank and element type.")
	}
	pieces := int64(1)
	for i := range es {
		if es[i] == ds[i] {
			continue
		}
		if ds[i] == 0 || es[i]%ds[i] != 0 {
			return op.EmitOpError("expected expanded vector dimension #%d (%d) to be a multipler of the distributed vector dimension (%d)", i, es[i], ds[i])
		}
		pieces *= es[i] / ds[i]
	}
	if pieces != warpSize {
		return op.EmitOpError("incompatible distribution dimensions from '%s' to '%s' with warp size = %d", expanded, distributed, warpSize)
	}
	return nil
}
