package codegen

import (
	lir "github.com/llir/llvm/ir"
	"github.com/llir/llvm/ir/enum"
	"github.com/llir/llvm/ir/types"
	"github.com/llir/llvm/ir/value"

	"github.com/tmac-dev/tmac/dialects/scf"
	"github.com/tmac-dev/tmac/ir"
)

// Structured control flow becomes basic blocks with phi nodes: loop-carried
// values and if/while results are phis at the join points.

func init() {
	Register(lowerFor, scf.For)
	Register(lowerIf, scf.If)
	Register(lowerWhile, scf.While)
	Register(func(fe *FuncEmitter, op *ir.Operation) {
		Fail(op, "'scf.yield' outside of a structured op")
	}, scf.Yield, scf.Condition)
}

// emitNested lowers the single block of a structured op's region and returns
// the operands of its terminator (scf.yield / scf.condition), without
// lowering the terminator itself.
func (fe *FuncEmitter) emitNested(b *ir.Block) []ir.Value {
	var term *ir.Operation
	for op := b.First(); op != nil; op = op.Next() {
		if op == b.Last() && op.HasTrait(ir.Terminator) {
			term = op
			break
		}
		fe.EmitOp(op)
	}
	if term == nil {
		return nil
	}
	return term.Operands()
}

// newPhi adds a phi of type t at the start of block b; incoming values
// may come later (lir.NewPhi takes its type from the first, so needs one).
func newPhi(b *lir.Block, t types.Type, incs ...*lir.Incoming) *lir.InstPhi {
	phi := &lir.InstPhi{Incs: incs, Typ: t}
	b.Insts = append(b.Insts, phi)
	return phi
}

// bindRegionValue binds a block argument or result to a lowered value,
// handling memrefs, which are carried as descriptors.
func (fe *FuncEmitter) carried(op *ir.Operation, v ir.Value) bool {
	if _, isMem := v.Type().(*ir.MemRefType); isMem {
		Fail(op, "memrefs cannot be carried through '%s' (loop-carried or yielded memrefs are not supported)", op.Name())
	}
	return true
}

func lowerFor(fe *FuncEmitter, op *ir.Operation) {
	f := scf.ForOp{Op: op}
	lb, ub, step := fe.Val(f.LowerBound()), fe.Val(f.UpperBound()), fe.Val(f.Step())
	inits := f.InitArgs()
	body := f.Region().Entry()
	pre := fe.cur
	header := fe.NewBlock("for.header")
	bodyB := fe.NewBlock("for.body")
	exit := fe.NewBlock("for.exit")
	pre.NewBr(header)

	ivType := lb.Type()
	iv := newPhi(header, ivType, lir.NewIncoming(lb, pre))
	var iters []*lir.InstPhi
	for _, v := range inits {
		fe.carried(op, v)
		x := fe.Val(v)
		iters = append(iters, newPhi(header, x.Type(), lir.NewIncoming(x, pre)))
	}
	pred := enum.IPredSLT
	if f.UnsignedCmp() != nil {
		pred = enum.IPredULT
	}
	cond := header.NewICmp(pred, iv, ub)
	header.NewCondBr(cond, bodyB, exit)

	fe.cur = bodyB
	fe.Set(body.Arg(0), iv)
	for i, phi := range iters {
		fe.Set(body.Arg(i+1), phi)
	}
	yielded := fe.Vals(fe.emitNested(body))
	next := fe.cur.NewAdd(iv, step)
	latch := fe.cur
	latch.NewBr(header)
	iv.Incs = append(iv.Incs, lir.NewIncoming(next, latch))
	for i, phi := range iters {
		phi.Incs = append(phi.Incs, lir.NewIncoming(yielded[i], latch))
	}
	fe.cur = exit
	for i, r := range f.Results() {
		fe.Set(r, iters[i])
	}
}

func lowerIf(fe *FuncEmitter, op *ir.Operation) {
	s := scf.IfOp{Op: op}
	cond := fe.Val(s.Condition())
	results := s.Results()
	for _, r := range results {
		fe.carried(op, r)
	}
	thenB := fe.NewBlock("if.then")
	merge := fe.NewBlock("if.end")
	elseB := merge
	hasElse := !s.ElseRegion().Empty()
	if hasElse {
		elseB = fe.NewBlock("if.else")
	}
	fe.cur.NewCondBr(cond, thenB, elseB)

	type arm struct {
		vals []value.Value
		from *lir.Block
	}
	var arms []arm
	fe.cur = thenB
	vals := fe.Vals(fe.emitNested(s.ThenRegion().Entry()))
	fe.cur.NewBr(merge)
	arms = append(arms, arm{vals, fe.cur})
	if hasElse {
		fe.cur = elseB
		vals := fe.Vals(fe.emitNested(s.ElseRegion().Entry()))
		fe.cur.NewBr(merge)
		arms = append(arms, arm{vals, fe.cur})
	}
	fe.cur = merge
	for i, r := range results {
		var incs []*lir.Incoming
		for _, a := range arms {
			incs = append(incs, lir.NewIncoming(a.vals[i], a.from))
		}
		phi := newPhi(merge, arms[0].vals[i].Type(), incs...)
		fe.Set(r, phi)
	}
}

func lowerWhile(fe *FuncEmitter, op *ir.Operation) {
	w := scf.WhileOp{Op: op}
	before := w.Before().Entry()
	after := w.After().Entry()
	pre := fe.cur
	beforeB := fe.NewBlock("while.cond")
	afterB := fe.NewBlock("while.body")
	exit := fe.NewBlock("while.exit")
	pre.NewBr(beforeB)

	var args []*lir.InstPhi
	for i, v := range w.Inits() {
		fe.carried(op, v)
		x := fe.Val(v)
		phi := newPhi(beforeB, x.Type(), lir.NewIncoming(x, pre))
		args = append(args, phi)
		fe.Set(before.Arg(i), phi)
	}
	fe.cur = beforeB
	condOps := fe.emitNested(before)
	cond := fe.Val(condOps[0])
	forwarded := fe.Vals(condOps[1:])
	condFrom := fe.cur
	condFrom.NewCondBr(cond, afterB, exit)
	for i, x := range forwarded {
		fe.Set(after.Arg(i), x)
	}
	fe.cur = afterB
	yielded := fe.Vals(fe.emitNested(after))
	fe.cur.NewBr(beforeB)
	for i, phi := range args {
		phi.Incs = append(phi.Incs, lir.NewIncoming(yielded[i], fe.cur))
	}
	fe.cur = exit
	for i, r := range w.Results() {
		fe.Set(r, forwarded[i])
	}
}
