package interp

import (
	"sync"
	"sync/atomic"

	"github.com/tmac-dev/tmac/dialects/arith"
	funcdialect "github.com/tmac-dev/tmac/dialects/func"
	memrefdialect "github.com/tmac-dev/tmac/dialects/memref"
	"github.com/tmac-dev/tmac/dialects/scf"
	"github.com/tmac-dev/tmac/ir"
)

// parallelFor runs the iterations of a loop proven safe by ParallelSafe on
// fr.workers goroutines, each with its own copy of the register file. With
// ks set, only the iterations of those ordinals run (lo + k*step for k in
// ks; hi is then unused).
func parallelFor(fr *frame, op *ir.Operation, lo, hi, step int64, iv int32, body []instr, ks []int64) {
	n := (hi - lo + step - 1) / step
	if ks != nil {
		n = int64(len(ks))
	}
	workers := int64(fr.workers)
	if workers > n {
		workers = n
	}
	chunk := n / (workers * 16)
	if chunk < 1 {
		chunk = 1
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	var firstErr atomic.Value
	accs := make([][]uint8, workers)
	for w := int64(0); w < workers; w++ {
		wfr := &frame{
			i:   append([]int64(nil), fr.i...),
			f:   append([]float64(nil), fr.f...),
			m:   append([]*memref(nil), fr.m...),
			acc: append([]uint8(nil), fr.acc...),
		}
		accs[w] = wfr.acc
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if r := recover(); r != nil {
					if re, ok := r.(runError); ok {
						firstErr.CompareAndSwap(nil, re)
						return
					}
					firstErr.CompareAndSwap(nil, runError{opErr(op, "internal error: %v", r)})
				}
			}()
			for firstErr.Load() == nil {
				start := next.Add(chunk) - chunk
				if start >= n {
					return
				}
				end := min(start+chunk, n)
				for k := start; k < end; k++ {
					if ks != nil {
						wfr.i[iv] = lo + ks[k]*step
					} else {
						wfr.i[iv] = lo + k*step
					}
					for _, in := range body {
						in(wfr)
					}
				}
			}
		}()
	}
	wg.Wait()
	if e := firstErr.Load(); e != nil {
		panic(e.(runError))
	}
	for i, a := range fr.acc {
		if a != 0 {
			continue
		}
		var m uint8
		for _, wa := range accs {
			m |= wa[i]
		}
		fr.acc[i] = m
	}
}

// ParallelSafe reports whether the iterations of scf.for op may run in any
// order and concurrently: the loop has no iter_args, calls no function,
// and every memref it stores to (other than memrefs allocated inside it)
// is, in all its accesses in the loop, addressed directly (through
// memref.cast at most) with one same index value in one dimension that is
// an injective function of the induction variable (the variable itself,
// plus or minus a loop-invariant value, times a nonzero constant). Then
// different iterations touch disjoint elements of every stored memref.
func ParallelSafe(op *ir.Operation) bool {
	loop, isFor := scf.AsFor(op)
	if !isFor || op.NumResults() != 0 {
		return false
	}
	iv := ir.Value(loop.Region().Entry().Arg(0))
	type access struct {
		idx   []ir.Value
		exact bool
		store bool
	}
	byRoot := map[ir.Value][]access{}
	unknownLoads, unknownStores := false, false
	ok := true
	inside := func(v ir.Value) bool {
		if d := v.DefiningOp(); d != nil {
			return op.IsAncestorOf(d)
		}
		b := v.ParentBlock()
		return b != nil && b.ParentOp() != nil && op.IsAncestorOf(b.ParentOp())
	}
	// record notes an access to mem at idx.
	record := func(mem ir.Value, idx []ir.Value, store bool) {
		root, exact := memRoot(mem)
		if root != nil && inside(root) {
			return // private to the iteration
		}
		if root == nil {
			if store {
				unknownStores = true
			} else {
				unknownLoads = true
			}
			return
		}
		byRoot[root] = append(byRoot[root], access{idx, exact, store})
	}
	var walk func(o *ir.Operation)
	walk = func(o *ir.Operation) {
		switch {
		case o.Name() == funcdialect.Call || o.AccessesMemory(ir.Free):
			ok = false
		case o.Name() == memrefdialect.Load:
			l := memrefdialect.LoadOp{Op: o}
			record(l.Memref(), l.Indices(), false)
		case o.Name() == memrefdialect.Store:
			s := memrefdialect.StoreOp{Op: o}
			record(s.Memref(), s.Indices(), true)
		}
		if o.Dialect() == "vector" {
			ok = false
		}
		for _, r := range o.Regions() {
			for _, b := range r.Blocks() {
				for c := b.First(); c != nil; c = c.Next() {
					walk(c)
				}
			}
		}
	}
	for _, b := range loop.Region().Blocks() {
		for c := b.First(); c != nil; c = c.Next() {
			walk(c)
		}
	}
	if !ok || unknownStores {
		return false
	}
	stores := false
	for root, accs := range byRoot {
		stored := false
		for _, a := range accs {
			stored = stored || a.store
		}
		if !stored {
			continue
		}
		stores = true
		if mt, _ := root.Type().(*ir.MemRefType); mt == nil || mt.Layout != nil {
			return false
		}
		found := false
		for d := range accs[0].idx {
			v := accs[0].idx[d]
			same := injective(v, iv, op, inside)
			for _, a := range accs {
				same = same && a.exact && d < len(a.idx) && a.idx[d] == v
			}
			if same {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return !(stores && unknownLoads)
}

// memRoot follows memref.cast / assume_alignment to the memref a value
// views: a function argument or an alloc/alloca/get_global result. exact
// is false when the chain goes through a subview, view or
// reinterpret_cast (the addressing differs from the root's). root is nil
// when the origin is unknown (a block argument of an inner block, a
// select, an scf result).
func memRoot(v ir.Value) (root ir.Value, exact bool) {
	exact = true
	for {
		d := v.DefiningOp()
		if d == nil {
			b := v.ParentBlock()
			if b != nil && b.IsEntry() && b.ParentOp() != nil && b.ParentOp().Name() == funcdialect.Func {
				return v, exact
			}
			return nil, false
		}
		switch d.Name() {
		case memrefdialect.Alloc, memrefdialect.Alloca, memrefdialect.GetGlobal:
			return v, exact
		case memrefdialect.Cast:
			v = memrefdialect.CastOp{Op: d}.Source()
		case memrefdialect.AssumeAlignment:
			v = memrefdialect.AssumeAlignmentOp{Op: d}.Memref()
		case memrefdialect.Subview:
			v, exact = memrefdialect.SubviewOp{Op: d}.Source(), false
		case memrefdialect.View:
			v, exact = memrefdialect.ViewOp{Op: d}.Source(), false
		case memrefdialect.ReinterpretCast:
			v, exact = memrefdialect.ReinterpretCastOp{Op: d}.Source(), false
		default:
			return nil, false
		}
	}
}

func injective(v, iv ir.Value, loop *ir.Operation, inside func(ir.Value) bool) bool {
	if v == iv {
		return true
	}
	d := v.DefiningOp()
	if d == nil || !inside(v) {
		return false
	}
	switch d.Name() {
	case arith.Addi:
		a := arith.AddiOp{Op: d}
		return injectiveOffset(a.Lhs(), a.Rhs(), iv, loop, inside)
	case arith.Subi:
		s := arith.SubiOp{Op: d}
		return injectiveOffset(s.Lhs(), s.Rhs(), iv, loop, inside)
	case arith.Muli:
		m := arith.MuliOp{Op: d}
		a, b := m.Lhs(), m.Rhs()
		return injective(a, iv, loop, inside) && nonzeroConst(b) || injective(b, iv, loop, inside) && nonzeroConst(a)
	case arith.IndexCast:
		c := arith.IndexCastOp{Op: d}
		in, out := c.In(), c.Out()
		return ir.BitWidth(in.Type()) <= ir.BitWidth(out.Type()) && injective(in, iv, loop, inside) ||
			ir.IsIndex(in.Type()) && ir.IsIntegerOfWidth(out.Type(), 64) && injective(in, iv, loop, inside)
	}
	return false
}

// injectiveOffset reports whether a ± b is injective in iv: one side is,
// and the other is loop-invariant.
func injectiveOffset(a, b, iv ir.Value, loop *ir.Operation, inside func(ir.Value) bool) bool {
	return injective(a, iv, loop, inside) && !inside(b) || injective(b, iv, loop, inside) && !inside(a)
}

func nonzeroConst(v ir.Value) bool {
	c, isConst := arith.AsConstant(v.DefiningOp())
	if !isConst {
		return false
	}
	n, ok := ir.AttrInt(c.Value())
	return ok && n != 0
}
