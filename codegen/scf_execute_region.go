package codegen

import (
	lir "github.com/llir/llvm/ir"

	"github.com/tmac-dev/tmac/dialects/scf"
	"github.com/tmac-dev/tmac/ir"
)

func init() {
	Register(lowerExecuteRegion, scf.ExecuteRegion)
}

// lowerExecuteRegion inlines the op's region where it stands: a single
// block's ops are lowered in place and its yielded values become the
// results; blocks joined by cf branches become basic blocks, each
// scf.yield a branch to a join block whose phis are the results (memrefs
// cannot be carried there).
func lowerExecuteRegion(fe *FuncEmitter, op *ir.Operation) {
	x := scf.ExecuteRegionOp{Op: op}
	blocks := x.Region().Blocks()
	if len(blocks) == 1 && blocks[0].Last().Name() == scf.Yield {
		// Memrefs pass through as the descriptors they are.
		yielded := fe.emitNested(blocks[0])
		for i, r := range x.Results() {
			if _, isMem := r.Type().(*ir.MemRefType); isMem {
				fe.SetMem(r, fe.Mem(yielded[i]))
			} else {
				fe.Set(r, fe.Val(yielded[i]))
			}
		}
		return
	}
	// The entry block gets its own basic block: a branch may come back
	// to it.
	for _, b := range blocks {
		fe.blocks[b] = fe.NewBlock("region.bb")
		for _, a := range b.Args() {
			fe.carried(op, a)
			phi := newPhi(fe.blocks[b], fe.Type(op, a.Type()))
			fe.phis[b] = append(fe.phis[b], phi)
			fe.Set(a, phi)
		}
	}
	exit := fe.NewBlock("region.exit")
	var results []*lir.InstPhi
	for _, r := range x.Results() {
		fe.carried(op, r)
		results = append(results, newPhi(exit, fe.Type(op, r.Type())))
	}
	fe.cur.NewBr(fe.blocks[blocks[0]])
	for _, b := range blocks {
		fe.cur = fe.blocks[b]
		for o := b.First(); o != nil; o = o.Next() {
			if o != b.Last() || o.Name() != scf.Yield {
				fe.EmitOp(o)
				continue
			}
			for i, v := range fe.Vals(o.Operands()) {
				results[i].Incs = append(results[i].Incs, lir.NewIncoming(v, fe.cur))
			}
			fe.cur.NewBr(exit)
		}
	}
	fe.cur = exit
	for i, r := range x.Results() {
		fe.Set(r, results[i])
	}
}
