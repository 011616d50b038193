package interp

import (
	memrefdialect "github.com/tmac-dev/tmac/dialects/memref"
	"github.com/tmac-dev/tmac/ir"
)

// The memref ops of issue 16 in the reference interpreter: views
// (expand_shape, collapse_shape, transpose, reshape, memory_space_cast,
// distinct_objects), metadata (extract_strided_metadata, rank), copy,
// realloc (a new buffer), alloca_scope, prefetch and the atomics (one thread: a read-modify-write
// in program order).

// moreMemref compiles the ops above; ok is false for other ops.
func (fc *fcomp) moreMemref(op *ir.Operation) (f instr, ok bool, err error) {
	switch op.Name() {
	case memrefdialect.CollapseShape:
		c := memrefdialect.CollapseShapeOp{Op: op}
		groups, _ := memrefdialect.Reassociation(c.Reassociation())
		return fc.review(op, c.Src(), c.Result(), func(_ *frame, m *memref) ([]int64, []int64) {
			return memrefdialect.CollapsedLayout(m.sizes, m.strides, groups)
		}), true, nil
	case memrefdialect.ExpandShape:
		e := memrefdialect.ExpandShapeOp{Op: op}
		groups, _ := memrefdialect.Reassociation(e.Reassociation())
		static := e.StaticOutputShape().(*ir.DenseArrayAttr).Ints
		dyn := fc.idxSlots(op, e.OutputShape())
		return fc.review(op, e.Src(), e.Result(), func(fr *frame, m *memref) ([]int64, []int64) {
			sizes := fr.mixedInts(static, dyn)
			strides, bad := memrefdialect.ExpandedLayout(m.sizes, m.strides, sizes, groups)
			if bad >= 0 {
				fail(op, "output_shape %v does not split dimension %d of size %d", sizes, bad, m.sizes[bad])
			}
			return sizes, strides
		}), true, nil
	case memrefdialect.Transpose:
		t := memrefdialect.TransposeOp{Op: op}
		perm, _ := memrefdialect.Permutation(t.Permutation())
		return fc.review(op, t.In(), t.Result(), func(_ *frame, m *memref) ([]int64, []int64) {
			return memrefdialect.Permuted(m.sizes, m.strides, perm)
		}), true, nil
	case memrefdialect.Reshape:
		r := memrefdialect.ReshapeOp{Op: op}
		sh := fc.sl(op, r.Shape())
		load := loadInt(r.Shape().Type().(*ir.MemRefType).Elem)
		return fc.review(op, r.Source(), r.Result(), func(fr *frame, _ *memref) ([]int64, []int64) {
			s := fr.m[sh]
			noteRead(fr, s)
			sizes := make([]int64, s.sizes[0])
			for i := range sizes {
				sizes[i] = load(s.data, s.offset+int64(i)*s.strides[0])
			}
			return sizes, ir.IdentityStrides(sizes)
		}), true, nil
	case memrefdialect.MemorySpaceCast:
		c := memrefdialect.MemorySpaceCastOp{Op: op}
		return fc.review(op, c.Source(), c.Dest(), func(_ *frame, m *memref) ([]int64, []int64) {
			return m.sizes, m.strides
		}), true, nil
	case memrefdialect.DistinctObjects:
		var srcs, dsts []int32
		for i, v := range op.Operands() {
			srcs, dsts = append(srcs, fc.sl(op, v)), append(dsts, fc.sl(op, op.Result(i)))
		}
		return func(fr *frame) {
			for i, s := range srcs {
				fr.m[dsts[i]] = fr.m[s]
			}
		}, true, nil
	case memrefdialect.Rank:
		r := memrefdialect.RankOp{Op: op}
		s, d := fc.sl(op, r.Memref()), fc.sl(op, r.Result())
		return func(fr *frame) { fr.i[d] = int64(len(fr.m[s].sizes)) }, true, nil
	case memrefdialect.ExtractStridedMetadata:
		x := memrefdialect.ExtractStridedMetadataOp{Op: op}
		s, base, off := fc.sl(op, x.Source()), fc.sl(op, x.BaseBuffer()), fc.sl(op, x.Offset())
		sizes, strides := fc.idxSlots(op, x.Sizes()), fc.idxSlots(op, x.Strides())
		return func(fr *frame) {
			m := fr.m[s]
			b := *m
			b.offset, b.sizes, b.strides = 0, nil, nil
			fr.m[base] = &b
			fr.i[off] = m.offset
			for i := range sizes {
				fr.i[sizes[i]], fr.i[strides[i]] = m.sizes[i], m.strides[i]
			}
		}, true, nil
	case memrefdialect.Copy:
		f, err := fc.copyOp(memrefdialect.CopyOp{Op: op})
		return f, true, err
	case memrefdialect.AllocaScope:
		body, err := fc.region(memrefdialect.AllocaScopeOp{Op: op}.BodyRegion(), fc.operandsTo(fc.resultSlots(op)))
		if err != nil {
			return nil, true, err
		}
		return func(fr *frame) { runList(fr, body) }, true, nil
	case memrefdialect.Realloc:
		r := memrefdialect.ReallocOp{Op: op}
		s, d := fc.sl(op, r.Source()), fc.sl(op, r.Result())
		n, dyn := r.Result().Type().(*ir.MemRefType).Shape()[0], int32(-1)
		if v := r.DynamicResultSize(); v != nil {
			dyn = fc.sl(op, v)
		}
		return func(fr *frame) {
			src, size := fr.m[s], n
			if dyn >= 0 {
				size = fr.i[dyn]
			}
			if size < 0 || size > 1<<34/src.esize {
				fail(op, "cannot reallocate to %d elements", size)
			}
			noteRead(fr, src)
			m := &memref{data: make([]byte, size*src.esize), elem: src.elem, esize: src.esize, sizes: []int64{size}, strides: []int64{1}, arg: -1}
			for i := int64(0); i < min(size, src.sizes[0]); i++ {
				o := src.offset + i*src.strides[0]
				copy(m.data[i*m.esize:(i+1)*m.esize], src.data[o*src.esize:(o+1)*src.esize])
			}
			fr.m[d] = m
		}, true, nil
	case memrefdialect.Prefetch:
		return func(*frame) {}, true, nil
	case memrefdialect.AtomicRmw:
		f, err := fc.atomicRMW(memrefdialect.AtomicRmwOp{Op: op})
		return f, true, err
	case memrefdialect.GenericAtomicRmw:
		f, err := fc.genericAtomicRMW(memrefdialect.GenericAtomicRmwOp{Op: op})
		return f, true, err
	}
	return nil, false, nil
}

// operandsTo moves the operands of a region's terminator (atomic_yield,
// alloca_scope.return) into dsts.
func (fc *fcomp) operandsTo(dsts []slot) func(*ir.Operation) (instr, error) {
	return func(t *ir.Operation) (instr, error) { return fc.moves(t.Operands(), dsts) }
}

// review is a view of src's storage with the sizes and strides shape
// computes from src's descriptor.
func (fc *fcomp) review(op *ir.Operation, src, res ir.Value, shape func(fr *frame, m *memref) ([]int64, []int64)) instr {
	if _, ok := res.Type().(*ir.MemRefType); !ok {
		panic(runError{opErr(op, "unranked memrefs are not supported by the reference interpreter")})
	}
	s, d := fc.sl(op, src), fc.sl(op, res)
	return func(fr *frame) {
		m := fr.m[s]
		v := *m
		v.sizes, v.strides = shape(fr, m)
		fr.m[d] = &v
	}
}

// copyOp copies element by element in row-major order.
func (fc *fcomp) copyOp(c memrefdialect.CopyOp) (instr, error) {
	op := c.Op
	if _, ok := c.Source().Type().(*ir.MemRefType); !ok {
		return nil, opErr(op, "unranked memrefs are not supported by the reference interpreter")
	}
	s, d := fc.sl(op, c.Source()), fc.sl(op, c.Target())
	return func(fr *frame) {
		src, dst := fr.m[s], fr.m[d]
		empty, err := memrefdialect.CheckCopySizes(src.sizes, dst.sizes)
		if err != nil {
			fail(op, "%v", err)
		}
		if empty {
			return
		}
		idx := make([]int64, len(src.sizes))
		noteRead(fr, src)
		for {
			so, do := src.offset, dst.offset
			for k, i := range idx {
				so += i * src.strides[k]
				do += i * dst.strides[k]
			}
			copy(dst.data[do*dst.esize:(do+1)*dst.esize], src.data[so*src.esize:(so+1)*src.esize])
			noteStore(fr, dst, do)
			if !ir.NextIndex(idx, src.sizes) {
				return
			}
		}
	}, nil
}

// laneAccess reads and writes an element of type et, and a frame slot
// of its kind, as an ir.Lane.
func laneAccess(et ir.Type) (load func(p []byte, off int64) ir.Lane, store func(p []byte, off int64, l ir.Lane), get func(fr *frame, s int32) ir.Lane, set func(fr *frame, s int32, l ir.Lane)) {
	if ir.IsFloat(et) {
		lf, sf := loadFloat(et), storeFloat(et)
		return func(p []byte, off int64) ir.Lane { return ir.Lane{F: lf(p, off)} },
			func(p []byte, off int64, l ir.Lane) { sf(p, off, l.F) },
			func(fr *frame, s int32) ir.Lane { return ir.Lane{F: fr.f[s]} },
			func(fr *frame, s int32, l ir.Lane) { fr.f[s] = l.F }
	}
	li, si := loadInt(et), storeInt(et)
	return func(p []byte, off int64) ir.Lane { return ir.Lane{I: li(p, off)} },
		func(p []byte, off int64, l ir.Lane) { si(p, off, l.I) },
		func(fr *frame, s int32) ir.Lane { return ir.Lane{I: fr.i[s]} },
		func(fr *frame, s int32, l ir.Lane) { fr.i[s] = l.I }
}

// readModifyWrite replaces the element at the indices ix of the memref in
// slot ms by update(old) and puts old in slot d.
func readModifyWrite(op *ir.Operation, et ir.Type, ms int32, ix []int32, d int32, update func(fr *frame, old ir.Lane) ir.Lane) instr {
	load, store, _, set := laneAccess(et)
	return func(fr *frame) {
		m := fr.m[ms]
		off := offsetOf(op, fr, m, ix)
		noteRead(fr, m)
		old := load(m.data, off)
		store(m.data, off, update(fr, old))
		noteStore(fr, m, off)
		set(fr, d, old)
	}
}

func (fc *fcomp) atomicRMW(a memrefdialect.AtomicRmwOp) (instr, error) {
	op := a.Op
	et := a.Value().Type()
	combine, err := memrefdialect.AtomicCombine(op, false)
	if err != nil {
		return nil, opErr(op, "kind %s on '%s': %v", memrefdialect.AtomicKind(op), et, err)
	}
	vs := fc.sl(op, a.Value())
	_, _, get, _ := laneAccess(et)
	return readModifyWrite(op, et, fc.sl(op, a.Memref()), fc.idxSlots(op, a.Indices()), fc.sl(op, a.Result()),
		func(fr *frame, old ir.Lane) ir.Lane { return combine(old, get(fr, vs)) }), nil
}

// genericAtomicRMW runs the region on the element's value; what it
// yields (moved into the block argument's slot) is stored, and the result
// is the value read.
func (fc *fcomp) genericAtomicRMW(g memrefdialect.GenericAtomicRmwOp) (instr, error) {
	op := g.Op
	arg, err := fc.slotOf(g.AtomicBody().Entry().Arg(0))
	if err != nil {
		return nil, opErr(op, "%v", err)
	}
	body, err := fc.region(g.AtomicBody(), fc.operandsTo([]slot{arg}))
	if err != nil {
		return nil, err
	}
	et := g.Result().Type()
	_, _, get, set := laneAccess(et)
	return readModifyWrite(op, et, fc.sl(op, g.Memref()), fc.idxSlots(op, g.Indices()), fc.sl(op, g.Result()),
		func(fr *frame, old ir.Lane) ir.Lane {
			set(fr, arg.i, old)
			runList(fr, body)
			return get(fr, arg.i)
		}), nil
}
