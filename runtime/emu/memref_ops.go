package emu

import (
	"math"
	"sync"

	memrefdialect "github.com/tmac-dev/tmac/dialects/memref"
	"github.com/tmac-dev/tmac/ir"
)

// The memref ops beside load, store and the views of exec.go: reshapes
// and other descriptor ops, copy, alloca_scope, prefetch, and the atomics.

func init() {
	register(prepareCollapseShape, memrefdialect.CollapseShape)
	register(prepareExpandShape, memrefdialect.ExpandShape)
	register(prepareTranspose, memrefdialect.Transpose)
	register(prepareReshape, memrefdialect.Reshape)
	register(prepareReinterpretCast, memrefdialect.ReinterpretCast)
	register(prepareMemorySpaceCast, memrefdialect.MemorySpaceCast)
	register(prepareExtractStridedMetadata, memrefdialect.ExtractStridedMetadata)
	register(prepareExtractAlignedPointer, memrefdialect.ExtractAlignedPointerAsIndex)
	register(prepareRank, memrefdialect.Rank)
	register(prepareDim, memrefdialect.Dim)
	register(prepareDistinctObjects, memrefdialect.DistinctObjects)
	register(prepareCopy, memrefdialect.Copy)
	register(direct(func(t *thread, in *instr) {
		res := t.runCode(in.regions[0], nil)
		for i := range in.out {
			t.set(in, i, res[i])
		}
	}), memrefdialect.AllocaScope)
	// The terminators end their region in runCode; a prefetch is a hint.
	register(direct(func(*thread, *instr) {}), memrefdialect.Prefetch, memrefdialect.AtomicYield, memrefdialect.AllocaScopeReturn)
	register(prepareAtomicRMW, memrefdialect.AtomicRmw)
	register(prepareGenericAtomicRMW, memrefdialect.GenericAtomicRmw)
}

// view copies m's descriptor with new sizes and strides (and offset).
func view(m *memref, offset int64, sizes, strides []int64) *memref {
	return &memref{space: m.space, base: m.base, offset: offset, sizes: sizes, strides: strides, elem: m.elem, esize: m.esize}
}

// prepareReinterpretCast: the source's base with the op's offset, sizes
// and strides (the source's own offset is replaced, not added to, as in
// code generation). Accesses are checked against the view's sizes and the
// memory's bounds as for any view.
func prepareReinterpretCast(k *kernel, op *ir.Operation) runFunc {
	r := memrefdialect.ReinterpretCastOp{Op: op}
	src := k.slot(r.Source())
	offs, sizes, strides := k.slots(r.Offsets()), k.slots(r.Sizes()), k.slots(r.Strides())
	staticOffs := r.StaticOffsets().(*ir.DenseArrayAttr).Ints
	staticSizes := r.StaticSizes().(*ir.DenseArrayAttr).Ints
	staticStrides := r.StaticStrides().(*ir.DenseArrayAttr).Ints
	return func(t *thread, in *instr) {
		m := t.mem(in, src)
		off := t.mixedInts(in, staticOffs, offs)
		sz := t.mixedInts(in, staticSizes, sizes)
		for d, n := range sz {
			if n < 0 {
				t.failf(in.op, "negative size %d in dimension %d", n, d)
			}
		}
		t.set(in, 0, view(m, off[0], sz, t.mixedInts(in, staticStrides, strides)))
	}
}

func prepareCollapseShape(k *kernel, op *ir.Operation) runFunc {
	c := memrefdialect.CollapseShapeOp{Op: op}
	src := k.slot(c.Src())
	groups, _ := memrefdialect.Reassociation(c.Reassociation())
	return func(t *thread, in *instr) {
		m := t.mem(in, src)
		sizes, strides := memrefdialect.CollapsedLayout(m.sizes, m.strides, groups)
		t.set(in, 0, view(m, m.offset, sizes, strides))
	}
}

func prepareExpandShape(k *kernel, op *ir.Operation) runFunc {
	e := memrefdialect.ExpandShapeOp{Op: op}
	src, dyn := k.slot(e.Src()), k.slots(e.OutputShape())
	groups, _ := memrefdialect.Reassociation(e.Reassociation())
	static := e.StaticOutputShape().(*ir.DenseArrayAttr).Ints
	return func(t *thread, in *instr) {
		m := t.mem(in, src)
		sizes := t.mixedInts(in, static, dyn)
		strides, bad := memrefdialect.ExpandedLayout(m.sizes, m.strides, sizes, groups)
		if bad >= 0 {
			t.failf(in.op, "output_shape %v does not split dimension %d of size %d", sizes, bad, m.sizes[bad])
		}
		t.set(in, 0, view(m, m.offset, sizes, strides))
	}
}

func prepareTranspose(k *kernel, op *ir.Operation) runFunc {
	x := memrefdialect.TransposeOp{Op: op}
	src := k.slot(x.In())
	perm, _ := memrefdialect.Permutation(x.Permutation())
	return func(t *thread, in *instr) {
		m := t.mem(in, src)
		sizes, strides := memrefdialect.Permuted(m.sizes, m.strides, perm)
		t.set(in, 0, view(m, m.offset, sizes, strides))
	}
}

// prepareReshape reads the sizes from the shape memref; the view is
// row-major over them (the source has the identity layout).
func prepareReshape(k *kernel, op *ir.Operation) runFunc {
	r := memrefdialect.ReshapeOp{Op: op}
	src, shape := k.slot(r.Source()), k.slot(r.Shape())
	return func(t *thread, in *instr) {
		m, sh := t.mem(in, src), t.mem(in, shape)
		sizes := make([]int64, sh.sizes[0])
		for i := range sizes {
			a, p := t.access(in.op, sh, []int64{int64(i)}, 1)
			t.readShared(in.op, sh.space, a, len(p))
			sizes[i] = readElem(p, sh.elem).(int64)
		}
		t.set(in, 0, view(m, m.offset, sizes, ir.IdentityStrides(sizes)))
	}
}

// prepareMemorySpaceCast keeps the memory the view is of: a generic
// pointer to shared memory still reaches the block's shared memory.
func prepareMemorySpaceCast(k *kernel, op *ir.Operation) runFunc {
	src := k.slot(memrefdialect.MemorySpaceCastOp{Op: op}.Source())
	return func(t *thread, in *instr) {
		m := *t.mem(in, src)
		t.set(in, 0, &m)
	}
}

func prepareExtractStridedMetadata(k *kernel, op *ir.Operation) runFunc {
	src := k.slot(memrefdialect.ExtractStridedMetadataOp{Op: op}.Source())
	return func(t *thread, in *instr) {
		m := t.mem(in, src)
		t.set(in, 0, view(m, 0, nil, nil))
		t.set(in, 1, m.offset)
		for i := range m.sizes {
			t.set(in, 2+i, m.sizes[i])
			t.set(in, 2+len(m.sizes)+i, m.strides[i])
		}
	}
}

// prepareExtractAlignedPointer gives the base address (global) or the
// shared-memory offset of the buffer.
func prepareExtractAlignedPointer(k *kernel, op *ir.Operation) runFunc {
	src := k.slot(memrefdialect.ExtractAlignedPointerAsIndexOp{Op: op}.Source())
	return func(t *thread, in *instr) { t.set(in, 0, int64(t.mem(in, src).base)) }
}

func prepareRank(k *kernel, op *ir.Operation) runFunc {
	src := k.slot(memrefdialect.RankOp{Op: op}.Memref())
	return func(t *thread, in *instr) { t.set(in, 0, int64(len(t.mem(in, src).sizes))) }
}

// prepareDim reads a size of the memref's descriptor; an index outside
// the rank is undefined behaviour upstream, a fault here.
func prepareDim(k *kernel, op *ir.Operation) runFunc {
	d := memrefdialect.DimOp{Op: op}
	src, idx := k.slot(d.Source()), k.slot(d.Index())
	return func(t *thread, in *instr) {
		m, i := t.mem(in, src), t.int(in, idx)
		if i < 0 || i >= int64(len(m.sizes)) {
			t.failf(op, "memref.dim index %d is outside the rank %d", i, len(m.sizes))
		}
		t.set(in, 0, m.sizes[i])
	}
}

func prepareDistinctObjects(k *kernel, op *ir.Operation) runFunc {
	srcs := k.slots(op.Operands())
	return func(t *thread, in *instr) {
		for i, s := range srcs {
			t.set(in, i, t.mem(in, s))
		}
	}
}

// prepareCopy copies element by element in row-major order, as the
// lowering's loop nest does.
func prepareCopy(k *kernel, op *ir.Operation) runFunc {
	c := memrefdialect.CopyOp{Op: op}
	from, to := k.slot(c.Source()), k.slot(c.Target())
	return func(t *thread, in *instr) {
		src, dst := t.mem(in, from), t.mem(in, to)
		empty, err := memrefdialect.CheckCopySizes(src.sizes, dst.sizes)
		if err != nil {
			t.failf(in.op, "%v", err)
		}
		if empty {
			return
		}
		idx := make([]int64, len(src.sizes))
		for {
			a, p := t.access(in.op, src, idx, 1)
			t.readShared(in.op, src.space, a, len(p))
			v := readElem(p, src.elem)
			a, p = t.access(in.op, dst, idx, 1)
			t.writeShared(in.op, dst.space, a, len(p))
			writeElem(p, dst.elem, v)
			if !ir.NextIndex(idx, src.sizes) {
				return
			}
		}
	}
}

// atomicMu makes each atomic read-modify-write indivisible: blocks run in
// parallel on the host's cores. Ordinary accesses do not take it, as
// they do not wait for atomics on the GPU either.
var atomicMu sync.Mutex

// toLane and fromLane move an emulated scalar in and out of ir.Lane.
func toLane(v any) ir.Lane {
	switch x := v.(type) {
	case float64:
		return ir.Lane{F: x}
	case int64:
		return ir.Lane{I: x}
	}
	return ir.Lane{}
}

func fromLane(l ir.Lane, t ir.Type) any {
	if ir.IsFloat(t) {
		return l.F
	}
	return l.I
}

// atomicAt runs the read-modify-write of one element as one indivisible
// step: update gets the old value and returns the new one. The race
// detector sees an atomic write, which races only with ordinary accesses.
func (t *thread) atomicAt(op *ir.Operation, m *memref, idx []int64, update func(old any) any) any {
	a, p := t.access(op, m, idx, 1)
	t.sharedWrite(op, m.space, a, len(p), true)
	atomicMu.Lock()
	defer atomicMu.Unlock()
	old := readElem(p, m.elem)
	writeElem(p, m.elem, update(old))
	return old
}

func prepareAtomicRMW(k *kernel, op *ir.Operation) runFunc {
	a := memrefdialect.AtomicRmwOp{Op: op}
	val, dst, indices := k.slot(a.Value()), k.slot(a.Memref()), k.slots(a.Indices())
	elem := a.Value().Type()
	combine, err := memrefdialect.AtomicCombine(op, true)
	if err != nil {
		return func(t *thread, in *instr) {
			t.failf(in.op, "kind %s on '%s': %v", memrefdialect.AtomicKind(op), elem, err)
		}
	}
	return func(t *thread, in *instr) {
		m := t.mem(in, dst)
		v := t.vals[val]
		t.set(in, 0, t.atomicAt(in.op, m, t.ints(in, indices), func(old any) any {
			return fromLane(combine(toLane(old), toLane(v)), elem)
		}))
	}
}

// sameBits reports whether two element values are stored as the same bits
// (a compare-and-swap compares bits: NaN equals itself, -0 is not +0).
func sameBits(x, y any) bool {
	if a, ok := x.(float64); ok {
		b, _ := y.(float64)
		return math.Float64bits(a) == math.Float64bits(b)
	}
	return x == y
}

// prepareGenericAtomicRMW runs the region as the lowering's
// compare-and-swap loop does: read, compute, and store only if the
// element still holds what was read, else again from what it holds.
func prepareGenericAtomicRMW(k *kernel, op *ir.Operation) runFunc {
	g := memrefdialect.GenericAtomicRmwOp{Op: op}
	dst, indices := k.slot(g.Memref()), k.slots(g.Indices())
	return func(t *thread, in *instr) {
		m := t.mem(in, dst)
		idx := t.ints(in, indices)
		a, p := t.access(in.op, m, idx, 1)
		atomicMu.Lock()
		seen := readElem(p, m.elem)
		atomicMu.Unlock()
		for {
			next := t.runCode(in.regions[0], []any{seen})[0]
			t.sharedWrite(in.op, m.space, a, len(p), true)
			atomicMu.Lock()
			now := readElem(p, m.elem)
			if sameBits(now, seen) {
				writeElem(p, m.elem, next)
				atomicMu.Unlock()
				t.set(in, 0, seen)
				return
			}
			atomicMu.Unlock()
			seen = now
		}
	}
}
