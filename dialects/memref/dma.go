package memref

import (
	"github.com/tmac-dev/tmac/ir"
)

// memref.dma_start and memref.dma_wait: upstream's generic DMA ops (for
// accelerators with a DMA engine). They parse, print and verify as
// upstream's; codegen rejects them (Hopper's bulk copies are the nvgpu and
// nvvm TMA ops).

func rankOf(v ir.Value) int {
	if m, ok := v.Type().(*ir.MemRefType); ok {
		return m.Rank()
	}
	return 0
}

func verifyDmaStart(op *ir.Operation) error {
	ops := op.Operands()
	n := len(ops)
	if n < 4 {
		return op.EmitOpError("expected at least 4 operands")
	}
	allIndex := func(vs []ir.Value) bool {
		for _, v := range vs {
			if !ir.IsIndex(v.Type()) {
				return false
			}
		}
		return true
	}
	if !isMemRef(ops[0].Type()) {
		return op.EmitOpError("expected source to be of memref type")
	}
	sr := rankOf(ops[0])
	if n < sr+4 {
		return op.EmitOpError("expected at least %d operands", sr+4)
	}
	if !allIndex(ops[1 : 1+sr]) {
		return op.EmitOpError("expected source indices to be of index type")
	}
	dst := ops[1+sr]
	if !isMemRef(dst.Type()) {
		return op.EmitOpError("expected destination to be of memref type")
	}
	dr := rankOf(dst)
	want := sr + dr + 4
	if n < want {
		return op.EmitOpError("expected at least %d operands", want)
	}
	if !allIndex(ops[2+sr : 2+sr+dr]) {
		return op.EmitOpError("expected destination indices to be of index type")
	}
	if !ir.IsIndex(ops[2+sr+dr].Type()) {
		return op.EmitOpError("expected num elements to be of index type")
	}
	tag := ops[3+sr+dr]
	if !isMemRef(tag.Type()) {
		return op.EmitOpError("expected tag to be of memref type")
	}
	want += rankOf(tag)
	if n < want {
		return op.EmitOpError("expected at least %d operands", want)
	}
	if !allIndex(ops[4+sr+dr : want]) {
		return op.EmitOpError("expected tag indices to be of index type")
	}
	if n != want && n != want+2 {
		return op.EmitOpError("incorrect number of operands")
	}
	if n == want+2 && !allIndex(ops[want:]) {
		return op.EmitOpError("expected stride and num elements per stride to be of type index")
	}
	return nil
}

// parseMemRefAccess parses `%memref[%i, %j]`.
func parseMemRefAccess(p *ir.Parser) (ir.UnresolvedOperand, []ir.UnresolvedOperand, error) {
	m, err := p.ParseOperand()
	if err != nil {
		return m, nil, err
	}
	idx, err := p.ParseOperandList(ir.DelimSquare)
	return m, idx, err
}

// printMemRefAccess prints ` %memref[%i, %j]`, what parseMemRefAccess
// reads.
func printMemRefAccess(p *ir.Printer, m ir.Value, idx []ir.Value) {
	p.Write(" ")
	p.PrintOperand(m)
	p.Write("[")
	p.PrintOperands(idx)
	p.Write("]")
}

// resolveMemRefAccess resolves what parseMemRefAccess read: the memref as
// type t, the indices as index.
func resolveMemRefAccess(p *ir.Parser, st *ir.OperationState, m ir.UnresolvedOperand, idx []ir.UnresolvedOperand, t ir.Type) error {
	if err := p.ResolveOperands([]ir.UnresolvedOperand{m}, []ir.Type{t}, st); err != nil {
		return err
	}
	return p.ResolveOperandsSameType(idx, ir.Index, st)
}

func parseDmaStart(p *ir.Parser, st *ir.OperationState) error {
	src, srcIdx, err := parseMemRefAccess(p)
	if err != nil {
		return err
	}
	if err := p.ParsePunct(","); err != nil {
		return err
	}
	dst, dstIdx, err := parseMemRefAccess(p)
	if err != nil {
		return err
	}
	if err := p.ParsePunct(","); err != nil {
		return err
	}
	num, err := p.ParseOperand()
	if err != nil {
		return err
	}
	if err := p.ParsePunct(","); err != nil {
		return err
	}
	tag, tagIdx, err := parseMemRefAccess(p)
	if err != nil {
		return err
	}
	var stride []ir.UnresolvedOperand
	for p.ParseOptionalPunct(",") {
		u, err := p.ParseOperand()
		if err != nil {
			return err
		}
		stride = append(stride, u)
	}
	if len(stride) != 0 && len(stride) != 2 {
		return ir.Errorf(st.Loc, "custom op 'memref.dma_start' expected two stride related operands")
	}
	ts, err := p.ParseColonTypeList()
	if err != nil {
		return err
	}
	if len(ts) != 3 {
		return ir.Errorf(st.Loc, "custom op 'memref.dma_start' fewer/more types expected")
	}
	if err := resolveMemRefAccess(p, st, src, srcIdx, ts[0]); err != nil {
		return err
	}
	if err := resolveMemRefAccess(p, st, dst, dstIdx, ts[1]); err != nil {
		return err
	}
	if err := p.ResolveOperandsSameType([]ir.UnresolvedOperand{num}, ir.Index, st); err != nil {
		return err
	}
	if err := resolveMemRefAccess(p, st, tag, tagIdx, ts[2]); err != nil {
		return err
	}
	if err := p.ResolveOperandsSameType(stride, ir.Index, st); err != nil {
		return err
	}
	for i, what := range []string{"source", "destination", "tag"} {
		if !isMemRef(ts[i]) {
			return ir.Errorf(st.Loc, "custom op 'memref.dma_start' expected %s to be of memref type", what)
		}
	}
	return nil
}

// printDmaStart prints as upstream does, including the attribute
// dictionary before the types (which upstream's parser does not read
// back).
func printDmaStart(p *ir.Printer, op *ir.Operation) {
	ops := op.Operands()
	at := 0
	group := func(withIndices bool) {
		m := ops[at]
		at++
		if !withIndices {
			p.Write(" ")
			p.PrintOperand(m)
			return
		}
		r := rankOf(m)
		printMemRefAccess(p, m, ops[at:at+r])
		at += r
	}
	group(true)
	p.Write(",")
	group(true)
	p.Write(",")
	group(false)
	p.Write(",")
	tag := ops[at]
	group(true)
	for ; at < len(ops); at++ {
		p.Write(", ")
		p.PrintOperand(ops[at])
	}
	p.PrintOptionalAttrDict(op.AllAttrs())
	p.Write(" : ")
	p.PrintType(ops[0].Type())
	p.Write(", ")
	p.PrintType(ops[1+rankOf(ops[0])].Type())
	p.Write(", ")
	p.PrintType(tag.Type())
}

func verifyDmaWait(op *ir.Operation) error {
	tag := op.Operand(0)
	if got, want := len(op.OperandGroup("tagIndices")), rankOf(tag); got != want {
		return op.EmitOpError("expected tagIndices to have the same number of elements as the tagMemRef rank, expected %d, but got %d", want, got)
	}
	return nil
}

func init() {
	ir.Register(
		&ir.OpDef{
			Name:     "memref.dma_start",
			Summary:  "Starts a DMA transfer (not on sm_90a: use the TMA ops)",
			Operands: []ir.ArgSpec{{Name: "operands", Kind: ir.Variadic, Type: ir.AnyType}},
			Parse:    parseDmaStart,
			Print:    printDmaStart,
			Verify:   verifyDmaStart,
			Effects:  []ir.Effect{{Kind: ir.Read, Operand: "operands"}, {Kind: ir.Write, Operand: "operands"}},
			Doc: `Rejected by tmac compile: Hopper has no such DMA engine; its bulk
copies are nvgpu.tma.async.load/store (or tmac.tma.load/store).`,
		},
		&ir.OpDef{
			Name:    "memref.dma_wait",
			Summary: "Waits for a DMA transfer (not on sm_90a: use the TMA ops)",
			Operands: []ir.ArgSpec{
				{Name: "tagMemRef", Type: memRefC},
				indexes("tagIndices"),
				{Name: "numElements", Type: ir.IndexOnly},
			},
			Format:  "$tagMemRef `[` $tagIndices `]` `,` $numElements attr-dict `:` type($tagMemRef)",
			Verify:  verifyDmaWait,
			Effects: []ir.Effect{{Kind: ir.Read, Operand: "tagMemRef"}, {Kind: ir.Write, Operand: "tagMemRef"}},
			Doc:     `Rejected by tmac compile, as memref.dma_start.`,
		},
	)
}
