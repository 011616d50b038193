package interp

import (
	"encoding/binary"
	"math"
	"sync"

	memrefdialect "github.com/tmac-dev/tmac/dialects/memref"
	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/ir/eval"
	"github.com/tmac-dev/tmac/runtime/buffer"
)

// offsetOf computes the element offset of the indices in slots ix, checking
// each against its dimension.
func offsetOf(op *ir.Operation, fr *frame, m *memref, ix []int32) int64 {
	off := m.offset
	for d, s := range ix {
		v := fr.i[s]
		if uint64(v) >= uint64(m.sizes[d]) {
			fail(op, "index %d out of bounds for dimension %d of size %d", v, d, m.sizes[d])
		}
		off += v * m.strides[d]
	}
	return off
}

// offset2 is offsetOf for the two indices v0, v1 of a rank-2 memref: the
// fast path of 2-D f32, f16 and bf16 loads and stores.
func offset2(op *ir.Operation, m *memref, v0, v1 int64) int64 {
	if uint64(v0) >= uint64(m.sizes[0]) || uint64(v1) >= uint64(m.sizes[1]) {
		oob2(op, m, v0, v1)
	}
	return m.offset + v0*m.strides[0] + v1*m.strides[1]
}

//go:noinline
func oob2(op *ir.Operation, m *memref, v0, v1 int64) {
	fail(op, "index [%d, %d] out of bounds of a memref of shape %v", v0, v1, m.sizes)
}

func noteRead(fr *frame, m *memref) {
	if m.arg >= 0 && fr.acc[m.arg] == 0 {
		fr.acc[m.arg] = accReadFirst | accTouched
	}
}

func noteWrite(fr *frame, m *memref) {
	if m.arg >= 0 && fr.acc[m.arg]&accWritten == 0 {
		fr.acc[m.arg] |= accWritten | accTouched
	}
}

// noteStore notes a write of the element at off: in the argument's access
// flags and, when the call tracks writes, its write mask.
func noteStore(fr *frame, m *memref, off int64) {
	noteWrite(fr, m)
	if m.wmask != nil {
		markWritten(m, off)
	}
}

// markWritten records in the argument's write mask (when the call tracks
// writes) that the element at off was stored.
func markWritten(m *memref, off int64) {
	b := m.wmask[off*m.esize : (off+1)*m.esize]
	for i := range b {
		b[i] = 1
	}
}

var (
	tables16   [2]*[1 << 16]float64
	tables16Mu sync.Mutex
)

// table16 returns the values of all 2^16 encodings of f16 or bf16 (built
// once with ir.FloatFromBits, so decoding through it is exactly that).
func table16(k ir.FloatKind) *[1 << 16]float64 {
	i := 0
	if k == ir.BF16 {
		i = 1
	}
	tables16Mu.Lock()
	defer tables16Mu.Unlock()
	if tables16[i] == nil {
		t := new([1 << 16]float64)
		for b := range t {
			t[b] = ir.FloatFromBits(uint64(b), k)
		}
		tables16[i] = t
	}
	return tables16[i]
}

// Element decoders/encoders by element type.
func loadFloat(t ir.Type) func(p []byte, off int64) float64 {
	k := t.(*ir.FloatType).Kind
	switch k {
	case ir.F32:
		return func(p []byte, off int64) float64 {
			return float64(math.Float32frombits(binary.LittleEndian.Uint32(p[off*4:])))
		}
	case ir.F64:
		return func(p []byte, off int64) float64 { return math.Float64frombits(binary.LittleEndian.Uint64(p[off*8:])) }
	case ir.F16, ir.BF16:
		tab := table16(k)
		return func(p []byte, off int64) float64 {
			return tab[binary.LittleEndian.Uint16(p[off*2:])]
		}
	case ir.TF32:
		return func(p []byte, off int64) float64 {
			return ir.RoundToFloatKind(float64(math.Float32frombits(binary.LittleEndian.Uint32(p[off*4:]))), ir.TF32)
		}
	}
	return func(p []byte, off int64) float64 { return ir.FloatFromBits(uint64(p[off]), k) }
}

func storeFloat(t ir.Type) func(p []byte, off int64, v float64) {
	k := t.(*ir.FloatType).Kind
	switch k {
	case ir.F32, ir.TF32:
		return func(p []byte, off int64, v float64) {
			binary.LittleEndian.PutUint32(p[off*4:], math.Float32bits(float32(v)))
		}
	case ir.F64:
		return func(p []byte, off int64, v float64) { binary.LittleEndian.PutUint64(p[off*8:], math.Float64bits(v)) }
	case ir.F16, ir.BF16:
		return func(p []byte, off int64, v float64) {
			binary.LittleEndian.PutUint16(p[off*2:], uint16(ir.FloatToBits(v, k)))
		}
	}
	return func(p []byte, off int64, v float64) { p[off] = byte(ir.FloatToBits(v, k)) }
}

func loadInt(t ir.Type) func(p []byte, off int64) int64 {
	w := intWidth(t)
	switch {
	case w == 1:
		return func(p []byte, off int64) int64 { return int64(p[off] & 1) }
	case w <= 8:
		return func(p []byte, off int64) int64 { return eval.Signed(int64(p[off]), w) }
	case w <= 16:
		return func(p []byte, off int64) int64 { return eval.Signed(int64(binary.LittleEndian.Uint16(p[off*2:])), w) }
	case w <= 32:
		return func(p []byte, off int64) int64 { return eval.Signed(int64(binary.LittleEndian.Uint32(p[off*4:])), w) }
	}
	return func(p []byte, off int64) int64 { return int64(binary.LittleEndian.Uint64(p[off*8:])) }
}

func storeInt(t ir.Type) func(p []byte, off int64, v int64) {
	w := intWidth(t)
	switch {
	case w == 1:
		return func(p []byte, off int64, v int64) { p[off] = byte(v & 1) }
	case w <= 8:
		return func(p []byte, off int64, v int64) { p[off] = byte(v) }
	case w <= 16:
		return func(p []byte, off int64, v int64) { binary.LittleEndian.PutUint16(p[off*2:], uint16(v)) }
	case w <= 32:
		return func(p []byte, off int64, v int64) { binary.LittleEndian.PutUint32(p[off*4:], uint32(v)) }
	}
	return func(p []byte, off int64, v int64) { binary.LittleEndian.PutUint64(p[off*8:], uint64(v)) }
}

func (fc *fcomp) idxSlots(op *ir.Operation, vs []ir.Value) []int32 {
	var ss []int32
	for _, v := range vs {
		ss = append(ss, fc.sl(op, v))
	}
	return ss
}

func (fc *fcomp) memref(op *ir.Operation) (instr, error) {
	for _, t := range append(op.OperandTypes(), op.ResultTypes()...) {
		if _, err := kindOf(t); err != nil {
			return nil, opErr(op, "%v", err)
		}
	}
	switch op.Name() {
	case memrefdialect.Load:
		return fc.load(memrefdialect.LoadOp{Op: op})
	case memrefdialect.Store:
		return fc.store(memrefdialect.StoreOp{Op: op})
	case memrefdialect.Alloc, memrefdialect.Alloca:
		return fc.alloc(op)
	case memrefdialect.Dealloc:
		return nil, nil
	case memrefdialect.Dim:
		dim := memrefdialect.DimOp{Op: op}
		s, ix := fc.sl(op, dim.Source()), fc.sl(op, dim.Index())
		d := fc.sl(op, dim.Result())
		return func(fr *frame) {
			m, i := fr.m[s], fr.i[ix]
			if uint64(i) >= uint64(len(m.sizes)) {
				fail(op, "dimension %d out of range for rank %d", i, len(m.sizes))
			}
			fr.i[d] = m.sizes[i]
		}, nil
	case memrefdialect.Cast, memrefdialect.AssumeAlignment:
		var src, res ir.Value
		if c, ok := memrefdialect.AsCast(op); ok {
			src, res = c.Source(), c.Dest()
		} else {
			a := memrefdialect.AssumeAlignmentOp{Op: op}
			src, res = a.Memref(), a.Result()
		}
		s, d := fc.sl(op, src), fc.sl(op, res)
		mt, _ := res.Type().(*ir.MemRefType)
		if mt == nil {
			return nil, opErr(op, "unranked memrefs are not supported by the reference interpreter")
		}
		shape := mt.Shape()
		strides, off, _ := mt.StridesAndOffset()
		if mt.Layout == nil {
			strides = nil // identity: checked through the shape
		}
		return func(fr *frame) {
			m := fr.m[s]
			for i, dim := range shape {
				if dim != ir.Dynamic && dim != m.sizes[i] {
					fail(op, "dimension %d is %d, not %d", i, m.sizes[i], dim)
				}
			}
			for i, st := range strides {
				if st != ir.Dynamic && st != m.strides[i] && m.sizes[i] > 1 {
					fail(op, "stride %d is %d, not %d", i, m.strides[i], st)
				}
			}
			if mt.Layout != nil && off != ir.Dynamic && off != m.offset {
				fail(op, "offset is %d, not %d", m.offset, off)
			}
			fr.m[d] = m
		}, nil
	case memrefdialect.Subview:
		return fc.subview(op, memrefdialect.SubviewOp{Op: op}, false)
	case memrefdialect.ReinterpretCast:
		return fc.subview(op, memrefdialect.ReinterpretCastOp{Op: op}, true)
	case memrefdialect.View:
		return fc.view(memrefdialect.ViewOp{Op: op})
	case memrefdialect.GetGlobal:
		return fc.getGlobal(memrefdialect.GetGlobalOp{Op: op})
	}
	if f, ok, err := fc.moreMemref(op); ok {
		return f, err
	}
	return nil, opErr(op, "operation not supported by the reference interpreter")
}

func (fc *fcomp) load(l memrefdialect.LoadOp) (instr, error) {
	op := l.Op
	ms := fc.sl(op, l.Memref())
	ix := fc.idxSlots(op, l.Indices())
	d := fc.sl(op, l.Result())
	et := l.Result().Type()
	if ft, ok := et.(*ir.FloatType); ok {
		if ft.Kind == ir.F32 && len(ix) == 2 {
			i0, i1 := ix[0], ix[1]
			return func(fr *frame) {
				m := fr.m[ms]
				off := offset2(op, m, fr.i[i0], fr.i[i1])
				noteRead(fr, m)
				fr.f[d] = float64(math.Float32frombits(binary.LittleEndian.Uint32(m.data[off*4:])))
			}, nil
		}
		if (ft.Kind == ir.F16 || ft.Kind == ir.BF16) && len(ix) == 2 {
			i0, i1 := ix[0], ix[1]
			tab := table16(ft.Kind)
			return func(fr *frame) {
				m := fr.m[ms]
				off := offset2(op, m, fr.i[i0], fr.i[i1])
				noteRead(fr, m)
				fr.f[d] = tab[binary.LittleEndian.Uint16(m.data[off*2:])]
			}, nil
		}
		get := loadFloat(et)
		return func(fr *frame) {
			m := fr.m[ms]
			off := offsetOf(op, fr, m, ix)
			noteRead(fr, m)
			fr.f[d] = get(m.data, off)
		}, nil
	}
	get := loadInt(et)
	return func(fr *frame) {
		m := fr.m[ms]
		off := offsetOf(op, fr, m, ix)
		noteRead(fr, m)
		fr.i[d] = get(m.data, off)
	}, nil
}

func (fc *fcomp) store(s memrefdialect.StoreOp) (instr, error) {
	op := s.Op
	vs := fc.sl(op, s.Value())
	ms := fc.sl(op, s.Memref())
	ix := fc.idxSlots(op, s.Indices())
	et := s.Value().Type()
	if ft, ok := et.(*ir.FloatType); ok {
		if ft.Kind == ir.F32 && len(ix) == 2 {
			i0, i1 := ix[0], ix[1]
			return func(fr *frame) {
				m := fr.m[ms]
				off := offset2(op, m, fr.i[i0], fr.i[i1])
				noteStore(fr, m, off)
				binary.LittleEndian.PutUint32(m.data[off*4:], math.Float32bits(float32(fr.f[vs])))
			}, nil
		}
		put := storeFloat(et)
		return func(fr *frame) {
			m := fr.m[ms]
			off := offsetOf(op, fr, m, ix)
			noteStore(fr, m, off)
			put(m.data, off, fr.f[vs])
		}, nil
	}
	put := storeInt(et)
	return func(fr *frame) {
		m := fr.m[ms]
		off := offsetOf(op, fr, m, ix)
		noteStore(fr, m, off)
		put(m.data, off, fr.i[vs])
	}, nil
}

func (fc *fcomp) alloc(op *ir.Operation) (instr, error) {
	mt := op.Result(0).Type().(*ir.MemRefType)
	if mt.Layout != nil {
		if sl, ok := mt.Layout.(*ir.StridedLayoutAttr); !ok || !sl.IsIdentityFor(mt.Shape()) {
			return nil, opErr(op, "allocation with the layout %s is not supported by the reference interpreter", mt.Layout)
		}
	}
	es, err := buffer.ElemSize(mt.Elem)
	if err != nil {
		return nil, opErr(op, "%v", err)
	}
	dyn := fc.idxSlots(op, op.OperandGroup("dynamicSizes"))
	if len(dyn) == 0 {
		dyn = fc.idxSlots(op, op.Operands())
	}
	shape := mt.Shape()
	d := fc.sl(op, op.Result(0))
	return func(fr *frame) {
		sizes := make([]int64, len(shape))
		k := 0
		for i, s := range shape {
			if s == ir.Dynamic {
				s = fr.i[dyn[k]]
				k++
				if s < 0 {
					fail(op, "negative size %d", s)
				}
			}
			sizes[i] = s
		}
		bytes, ok := ir.ShapeBytes(sizes, 8*int(es))
		if !ok {
			fail(op, "%s", ir.TooLarge(ir.MemRefTypeOf(sizes, mt.Elem, nil, nil)))
		}
		if bytes > 1<<34 {
			fail(op, "allocation of %d elements (%d bytes) is too large", bytes/int64(es), bytes)
		}
		fr.m[d] = &memref{data: make([]byte, bytes), elem: mt.Elem, esize: int64(es), sizes: sizes, strides: ir.IdentityStrides(sizes), arg: -1}
	}, nil
}

// subviewOp is the view of memref.subview and memref.reinterpret_cast,
// which declare the same operands, result and attributes.
type subviewOp interface {
	Source() ir.Value
	Offsets() []ir.Value
	Sizes() []ir.Value
	Strides() []ir.Value
	Result() ir.Value
	StaticOffsets() ir.Attribute
	StaticSizes() ir.Attribute
	StaticStrides() ir.Attribute
}

// subview implements memref.subview (relative to the source) and, when
// reinterpret, memref.reinterpret_cast (absolute on the source's storage);
// sv views op.
func (fc *fcomp) subview(op *ir.Operation, sv subviewOp, reinterpret bool) (instr, error) {
	src := fc.sl(op, sv.Source())
	d := fc.sl(op, sv.Result())
	rt := sv.Result().Type().(*ir.MemRefType)
	type list struct {
		static []int64
		dyn    []int32
	}
	get := func(static ir.Attribute, dyn []ir.Value) list {
		a, _ := static.(*ir.DenseArrayAttr)
		var l list
		if a != nil {
			l.static = a.Ints
		}
		l.dyn = fc.idxSlots(op, dyn)
		return l
	}
	offs := get(sv.StaticOffsets(), sv.Offsets())
	sizes := get(sv.StaticSizes(), sv.Sizes())
	strides := get(sv.StaticStrides(), sv.Strides())
	eval := func(fr *frame, l list) []int64 { return fr.mixedInts(l.static, l.dyn) }
	// Dropped unit dimensions of a rank-reducing subview.
	n := len(sizes.static)
	drop := make([]bool, n)
	if !reinterpret && rt.Rank() < n {
		need := n - rt.Rank()
		rs := rt.Shape()
		r := 0
		for i := 0; i < n; i++ {
			if need > 0 && sizes.static[i] == 1 && (r >= len(rs) || rs[r] != 1 || n-i-1 >= len(rs)-r) {
				drop[i] = true
				need--
				continue
			}
			r++
		}
		if need != 0 {
			return nil, opErr(op, "cannot match the result type %s to the sizes of the subview", rt)
		}
	}
	return func(fr *frame) {
		m := fr.m[src]
		of, sz, st := eval(fr, offs), eval(fr, sizes), eval(fr, strides)
		nm := &memref{data: m.data, elem: m.elem, esize: m.esize, arg: m.arg, wmask: m.wmask}
		if reinterpret {
			nm.offset, nm.sizes, nm.strides = of[0], sz, st
			span := nm.offset
			for i := range sz {
				if sz[i] == 0 {
					span = -1
					break
				}
				span += (sz[i] - 1) * st[i]
			}
			if nm.offset < 0 || span >= int64(len(m.data))/m.esize {
				fail(op, "the result addresses elements outside the source buffer")
			}
			fr.m[d] = nm
			return
		}
		nm.offset = m.offset
		for i := range sz {
			if of[i] < 0 || sz[i] < 0 || (sz[i] > 0 && of[i]+(sz[i]-1)*st[i] >= m.sizes[i]) {
				fail(op, "dimension %d: offset %d, size %d, stride %d exceed the source size %d", i, of[i], sz[i], st[i], m.sizes[i])
			}
			nm.offset += of[i] * m.strides[i]
			if !drop[i] {
				nm.sizes = append(nm.sizes, sz[i])
				nm.strides = append(nm.strides, st[i]*m.strides[i])
			}
		}
		fr.m[d] = nm
	}, nil
}

func (fc *fcomp) view(v memrefdialect.ViewOp) (instr, error) {
	op := v.Op
	src := fc.sl(op, v.Source())
	shift := fc.sl(op, v.ByteShift())
	dyn := fc.idxSlots(op, v.Sizes())
	d := fc.sl(op, v.Result())
	rt := v.Result().Type().(*ir.MemRefType)
	es, err := buffer.ElemSize(rt.Elem)
	if err != nil {
		return nil, opErr(op, "%v", err)
	}
	return func(fr *frame) {
		m := fr.m[src]
		sizes := fr.mixedInts(rt.Shape(), dyn)
		n := int64(1)
		for _, s := range sizes {
			n *= s
		}
		start := m.offset*m.esize + fr.i[shift]
		if start < 0 || start+n*int64(es) > int64(len(m.data)) {
			fail(op, "the view of %d bytes at byte %d exceeds the source", n*int64(es), start)
		}
		nm := &memref{data: m.data[start:], elem: rt.Elem, esize: int64(es), sizes: sizes, strides: ir.IdentityStrides(sizes), arg: m.arg}
		if m.wmask != nil {
			nm.wmask = m.wmask[start:]
		}
		fr.m[d] = nm
	}, nil
}

func (fc *fcomp) getGlobal(gg memrefdialect.GetGlobalOp) (instr, error) {
	op := gg.Op
	ref, _ := gg.Name().(*ir.SymbolRefAttr)
	if ref == nil {
		return nil, opErr(op, "no global name")
	}
	gop := ir.LookupSymbol(fc.p.module, ref.Leaf())
	g, ok := memrefdialect.AsGlobal(gop)
	if !ok {
		return nil, opErr(op, "@%s is not a memref.global of the module", ref.Leaf())
	}
	if g.Constant() == nil {
		return nil, opErr(op, "global @%s is not constant; only constant globals are supported by the reference interpreter", ref.Leaf())
	}
	m, ok := fc.p.globals[gop]
	if !ok {
		ta, _ := g.Type().(*ir.TypeAttr)
		mt, _ := ta.Value.(*ir.MemRefType)
		if mt == nil {
			return nil, opErr(op, "global @%s has no memref type", ref.Leaf())
		}
		b, err := buffer.New(mt.Elem, mt.Shape())
		if err != nil {
			return nil, opErr(op, "%v", err)
		}
		dense, _ := g.InitialValue().(*ir.DenseAttr)
		if dense == nil {
			return nil, opErr(op, "global @%s has no dense initial value", ref.Leaf())
		}
		for i := 0; i < b.Len(); i++ {
			j := i
			if dense.Splat {
				j = 0
			}
			if b.IsFloat() {
				b.SetFloat(i, dense.Floats[j])
			} else {
				b.SetInt(i, dense.Ints[j])
			}
		}
		es, _ := buffer.ElemSize(mt.Elem)
		m = &memref{data: b.Bytes, elem: mt.Elem, esize: int64(es), sizes: b.Shape, strides: ir.IdentityStrides(b.Shape), arg: -1}
		fc.p.globals[gop] = m
	}
	d := fc.sl(op, gg.Result())
	return func(fr *frame) { fr.m[d] = m }, nil
}
