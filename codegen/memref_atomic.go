package codegen

import (
	lir "github.com/llir/llvm/ir"
	"github.com/llir/llvm/ir/enum"
	"github.com/llir/llvm/ir/types"
	"github.com/llir/llvm/ir/value"

	"github.com/tmac-dev/tmac/dialects/memref"
	"github.com/tmac-dev/tmac/ir"
)

// Lowering of memref.atomic_rmw and memref.generic_atomic_rmw. The kinds
// LLVM has an atomicrmw for become one on 32- and 64-bit values (and f16
// and bf16 add) (acq_rel, as upstream's lowering orders them; NVPTX emits
// atom.{global,shared}.<op>); mulf, muli, the float min/max kinds (which
// have no atomicrmw that llir writes), the other 16-bit ones and
// generic_atomic_rmw are a compare-and-swap loop, as upstream lowers
// generic_atomic_rmw and LLVM expands the float min/max atomicrmw.

func init() {
	Register(lowerAtomicRMW, memref.AtomicRmw)
	Register(lowerGenericAtomicRMW, memref.GenericAtomicRmw)
}

// atomicOps are the kinds one LLVM atomicrmw implements.
var atomicOps = map[string]enum.AtomicOp{
	"addf": enum.AtomicOpFAdd, "addi": enum.AtomicOpAdd, "andi": enum.AtomicOpAnd,
	"assign": enum.AtomicOpXChg, "maxs": enum.AtomicOpMax, "maxu": enum.AtomicOpUMax,
	"mins": enum.AtomicOpMin, "minu": enum.AtomicOpUMin, "ori": enum.AtomicOpOr, "xori": enum.AtomicOpXor,
}

// atomicCombine names the combining kind (vector's, which fe.combine
// emits) of each kind for the CAS loop: mulf, muli and the float min/max
// kinds always (maximumf propagates NaN, maxnumf prefers the number, as
// arith's ops of those names do), the others on 16-bit values, which
// have no atom instruction but f16 and bf16 add; assign stores the value.
var atomicCombine = map[string]string{
	"mulf": "mul", "muli": "mul",
	"maximumf": "maximumf", "minimumf": "minimumf", "maxnumf": "maxnumf", "minnumf": "minnumf",
	"addf": "add", "addi": "add", "andi": "and", "ori": "or", "xori": "xor",
	"maxs": "maxsi", "maxu": "maxui", "mins": "minsi", "minu": "minui",
}

func lowerAtomicRMW(fe *FuncEmitter, op *ir.Operation) {
	a := memref.AtomicRmwOp{Op: op}
	m := fe.Mem(a.Memref())
	p := fe.ElemPtr(op, m, fe.Vals(a.Indices()))
	v := fe.Val(a.Value())
	kind := memref.AtomicKind(op)
	w := ir.BitWidth(a.Value().Type())
	if aop, ok := atomicOps[kind]; ok && (w == 32 || w == 64 || kind == "addf" && w == 16) {
		fe.Set(a.Result(), fe.B().NewAtomicRMW(aop, p, v, enum.AtomicOrderingAcquireRelease))
		return
	}
	fe.Set(a.Result(), fe.casLoop(op, p, a.Value().Type(), func(old value.Value) value.Value {
		if kind == "assign" {
			return v
		}
		return fe.combine(atomicCombine[kind], old, v, nil)
	}))
}

// casLoop atomically replaces the element at p by update(old) with a
// compare-and-swap loop and returns the old value:
//
//	entry: old0 = load p
//	loop:  old = phi [old0, entry], [seen, loop]; new = update(old)
//	       {seen, ok} = cmpxchg p, old, new acq_rel monotonic
//	       br ok, done, loop
//
// Floats are compared and swapped as integers of their width.
func (fe *FuncEmitter) casLoop(op *ir.Operation, p value.Value, elem ir.Type, update func(old value.Value) value.Value) value.Value {
	w := ir.BitWidth(elem)
	if w != 16 && w != 32 && w != 64 {
		Fail(op, "'%s' on '%s' is not supported on sm_90a: compare-and-swap is on 16-, 32- and 64-bit values", op.Name(), elem)
	}
	lt := fe.Type(op, elem)
	it := types.NewInt(uint64(w))
	asInt := func(v value.Value) value.Value {
		if ir.IsFloat(elem) {
			return fe.B().NewBitCast(v, it)
		}
		return v
	}
	first := fe.B().NewLoad(lt, p)
	pre := fe.B()
	loop := fe.NewBlock("atomic.loop")
	done := fe.NewBlock("atomic.done")
	pre.NewBr(loop)
	fe.SetBlock(loop)
	old := newPhi(loop, lt, lir.NewIncoming(first, pre))
	next := update(old)
	casPtr := p
	if ir.IsFloat(elem) {
		casPtr = fe.pointerCast(p, it)
	}
	cas := fe.B().NewCmpXchg(casPtr, asInt(old), asInt(next), enum.AtomicOrderingAcquireRelease, enum.AtomicOrderingMonotonic)
	seenInt := fe.B().NewExtractValue(cas, 0)
	ok := fe.B().NewExtractValue(cas, 1)
	seen := value.Value(seenInt)
	if ir.IsFloat(elem) {
		seen = fe.B().NewBitCast(seenInt, lt)
	}
	latch := fe.B()
	latch.NewCondBr(ok, done, loop)
	old.Incs = append(old.Incs, lir.NewIncoming(seen, latch))
	fe.SetBlock(done)
	return old
}

// lowerGenericAtomicRMW emits the region inside a CAS loop: its block
// argument is the value last read, what it yields is swapped in.
func lowerGenericAtomicRMW(fe *FuncEmitter, op *ir.Operation) {
	g := memref.GenericAtomicRmwOp{Op: op}
	m := fe.Mem(g.Memref())
	p := fe.ElemPtr(op, m, fe.Vals(g.Indices()))
	body := g.AtomicBody().Entry()
	fe.Set(g.Result(), fe.casLoop(op, p, g.Result().Type(), func(old value.Value) value.Value {
		fe.Set(body.Arg(0), old)
		return fe.Val(fe.emitNested(body)[0])
	}))
}
