package emu

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/tmac-dev/tmac/dialects/gpu"
	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/ir/eval"
)

// Values a thread holds: int64 (integers and index, sign-extended from
// their width), float64 (rounded to their type), vec (vectors), *memref,
// ptr, *tensorMap, []any (LLVM structs), nil (undefined).

type vec struct {
	f []float64
	i []int64
}

// runCode runs c with its block arguments bound to args and returns the
// operands of its terminator (scf.yield), if any.
func (t *thread) runCode(c *code, args []any) []any {
	for i, a := range c.args {
		t.vals[a] = args[i]
	}
	for _, in := range c.instrs {
		switch in.op.Name() {
		case "scf.yield", "scf.condition":
			return t.operands(in)
		case "gpu.return", "func.return", "gpu.terminator":
			return nil
		}
		in.run(t, in)
	}
	return nil
}

func (t *thread) operands(in *instr) []any {
	out := make([]any, len(in.in))
	for i, v := range in.in {
		out[i] = t.vals[v]
	}
	return out
}

func (t *thread) int(in *instr, i int) int64 {
	v, ok := t.vals[in.in[i]].(int64)
	if !ok {
		t.failf(in.op, "operand %d is not an integer value (%T)", i, t.vals[in.in[i]])
	}
	return v
}

func (t *thread) mem(in *instr, i int) *memref {
	v, ok := t.vals[in.in[i]].(*memref)
	if !ok {
		t.failf(in.op, "operand %d is not a memref (%T)", i, t.vals[in.in[i]])
	}
	return v
}

func (t *thread) set(in *instr, i int, v any) { t.vals[in.out[i]] = v }

// wrap truncates v to the width of integer type ty as lanes hold it (i1 as
// 0 or 1, others sign-extended).
func wrap(v int64, ty ir.Type) int64 { return eval.Wrap(v, ir.BitWidth(ty)) }

// zext is v as an unsigned number of ty's width.
func zext(v int64, ty ir.Type) uint64 { return eval.Unsigned(v, ir.BitWidth(ty)) }

// round rounds v to the float type ty (other types: v itself).
func round(v float64, ty ir.Type) float64 {
	if ft, ok := ty.(*ir.FloatType); ok {
		return eval.Round(v, ft.Kind)
	}
	return v
}

func init() {
	// Terminators: runCode returns at them.
	register(func(t *thread, in *instr) {}, "gpu.terminator", "gpu.return", "func.return", "scf.yield", "scf.condition")
	register(runFor, "scf.for")
	register(runIf, "scf.if")
	register(runWhile, "scf.while")
	register(func(t *thread, in *instr) {
		// unrealized casts between memrefs, descriptors and LLVM pointers
		// (codegen's own bridges): a memref becomes a pointer to its first
		// element; anything else passes through.
		v := t.vals[in.in[0]]
		rt := in.op.Result(0).Type()
		if _, isMem := rt.(*ir.MemRefType); !isMem {
			if m, ok := v.(*memref); ok {
				v = ptr{space: m.space, addr: m.base + uint64(m.offset*m.esize), cta: -1}
			}
		}
		t.set(in, 0, v)
	}, "builtin.unrealized_conversion_cast")
	register(runGPUIndex, "gpu.thread_id", "gpu.block_id", "gpu.block_dim", "gpu.grid_dim")
	register(func(t *thread, in *instr) {
		t.set(in, 0, &memref{space: spaceShared, sizes: []int64{int64(len(t.c.smem))}, strides: []int64{1}, elem: ir.I8, esize: 1})
	}, "gpu.dynamic_shared_memory")
	register(func(t *thread, in *instr) { t.barrierAt(in.op, 0, -1, false) }, "gpu.barrier", "nvvm.barrier0")
}

func runFor(t *thread, in *instr) {
	lb, ub, st := t.int(in, 0), t.int(in, 1), t.int(in, 2)
	if st <= 0 {
		t.failf(in.op, "loop step %d is not positive", st)
	}
	args := make([]any, 1+len(in.in)-3)
	for i := 3; i < len(in.in); i++ {
		args[i-2] = t.vals[in.in[i]]
	}
	ty := in.op.Operand(0).Type()
	for iv := lb; iv < ub; iv = wrap(iv+st, ty) {
		args[0] = iv
		res := t.runCode(in.regions[0], args)
		copy(args[1:], res)
		if iv+st < iv { // overflow
			break
		}
	}
	for i := range in.out {
		t.set(in, i, args[1+i])
	}
}

func runIf(t *thread, in *instr) {
	var res []any
	if t.int(in, 0)&1 != 0 {
		res = t.runCode(in.regions[0], nil)
	} else if len(in.regions) > 1 && in.regions[1] != nil {
		res = t.runCode(in.regions[1], nil)
	}
	for i := range in.out {
		t.set(in, i, res[i])
	}
}

func runWhile(t *thread, in *instr) {
	args := t.operands(in)
	for {
		c := t.runCode(in.regions[0], args)
		if v, _ := c[0].(int64); v&1 == 0 {
			for i := range in.out {
				t.set(in, i, c[1+i])
			}
			return
		}
		args = t.runCode(in.regions[1], c[1:])
	}
}

func runGPUIndex(t *thread, in *instr) {
	d := 0
	switch gpu.DimOf(in.op.Attr("dimension")) {
	case "y":
		d = 1
	case "z":
		d = 2
	}
	var v int64
	switch in.op.Name() {
	case "gpu.thread_id":
		v = t.tid[d]
	case "gpu.block_id":
		v = t.c.bid[d]
	case "gpu.block_dim":
		v = t.b.bdim[d]
	case "gpu.grid_dim":
		v = t.b.grid[d]
	}
	t.set(in, 0, v)
}

// ------------------------------------------------------------ memory

// access returns the bytes of n elements' worth at element index idx of m,
// checking bounds (shared: the block's window; global: one allocation).
func (t *thread) access(op *ir.Operation, m *memref, idx []int64, n int64) (uint64, []byte) {
	a, err := m.addr(idx)
	if err != nil {
		t.failf(op, "%v", err)
	}
	size := n * m.esize
	switch m.space {
	case spaceShared:
		if a+uint64(size) > uint64(len(t.c.smem)) {
			t.failf(op, "shared memory access of %d bytes at offset %d is out of bounds (the block has %d bytes)", size, a, len(t.c.smem))
		}
		return a, t.c.smem[a : a+uint64(size)]
	case spaceGlobal:
		p, err := t.b.dev.mem.bytes(a, int(size))
		if err != nil {
			t.failf(op, "%v", err)
		}
		return a, p
	}
	t.failf(op, "memory space %d is not emulated", m.space)
	return 0, nil
}

func readElem(p []byte, ty ir.Type) any {
	var raw uint64
	switch len(p) {
	case 1:
		raw = uint64(p[0])
	case 2:
		raw = uint64(binary.LittleEndian.Uint16(p))
	case 4:
		raw = uint64(binary.LittleEndian.Uint32(p))
	default:
		raw = binary.LittleEndian.Uint64(p)
	}
	if ft, ok := ty.(*ir.FloatType); ok {
		if ft.Kind == ir.TF32 {
			return float64(math.Float32frombits(uint32(raw)))
		}
		return ir.FloatFromBits(raw, ft.Kind)
	}
	return wrap(int64(raw), ty)
}

func writeElem(p []byte, ty ir.Type, v any) {
	var raw uint64
	switch x := v.(type) {
	case float64:
		ft := ty.(*ir.FloatType)
		if ft.Kind == ir.TF32 {
			raw = uint64(math.Float32bits(float32(ir.RoundToFloatKind(x, ir.TF32))))
		} else {
			raw = ir.FloatToBits(ir.RoundToFloatKind(x, ft.Kind), ft.Kind)
		}
	case int64:
		raw = uint64(x)
	}
	switch len(p) {
	case 1:
		p[0] = byte(raw)
	case 2:
		binary.LittleEndian.PutUint16(p, uint16(raw))
	case 4:
		binary.LittleEndian.PutUint32(p, uint32(raw))
	default:
		binary.LittleEndian.PutUint64(p, raw)
	}
}

func (t *thread) indices(in *instr, from int) []int64 {
	idx := make([]int64, len(in.in)-from)
	for i := range idx {
		idx[i] = t.int(in, from+i)
	}
	return idx
}

func init() {
	register(func(t *thread, in *instr) {
		m := t.mem(in, 0)
		a, p := t.access(in.op, m, t.indices(in, 1), 1)
		t.readShared(in.op, m.space, a, len(p))
		t.set(in, 0, readElem(p, m.elem))
	}, "memref.load")
	register(func(t *thread, in *instr) {
		m := t.mem(in, 1)
		a, p := t.access(in.op, m, t.indices(in, 2), 1)
		t.writeShared(in.op, m.space, a, len(p))
		writeElem(p, m.elem, t.vals[in.in[0]])
	}, "memref.store")
	register(func(t *thread, in *instr) {
		m := t.mem(in, 0)
		n := in.op.Result(0).Type().(*ir.VectorType).Shape()[0]
		a, p := t.access(in.op, m, t.indices(in, 1), n)
		t.readShared(in.op, m.space, a, len(p))
		var v vec
		for i := int64(0); i < n; i++ {
			e := readElem(p[i*m.esize:(i+1)*m.esize], m.elem)
			if f, ok := e.(float64); ok {
				v.f = append(v.f, f)
			} else {
				v.i = append(v.i, e.(int64))
			}
		}
		t.set(in, 0, v)
	}, "vector.load")
	register(func(t *thread, in *instr) {
		v := t.vals[in.in[0]].(vec)
		m := t.mem(in, 1)
		n := int64(len(v.f) + len(v.i))
		a, p := t.access(in.op, m, t.indices(in, 2), n)
		t.writeShared(in.op, m.space, a, len(p))
		for i := int64(0); i < n; i++ {
			var e any
			if v.f != nil {
				e = v.f[i]
			} else {
				e = v.i[i]
			}
			writeElem(p[i*m.esize:(i+1)*m.esize], m.elem, e)
		}
	}, "vector.store")
	register(runView, "memref.view")
	register(runSubview, "memref.subview")
	register(func(t *thread, in *instr) {
		m := *t.mem(in, 0)
		t.set(in, 0, &m)
	}, "memref.cast")
}

// readShared and writeShared check generic shared-memory accesses against
// the asynchronous copies in flight (and record writes for the proxy-fence
// check).
func (t *thread) readShared(op *ir.Operation, space int, a uint64, n int) {
	if space != spaceShared {
		return
	}
	if t.b.observing() {
		t.b.emit(t, nil, &Event{Kind: SharedRead, Op: op, Mem: []Span{{a, a + uint64(n)}}})
	}
	for _, c := range t.b.inflight {
		if c.load && c.dst == t.c && a < c.hi && c.lo < a+uint64(n) {
			t.fail(&Error{Op: op, Msg: fmt.Sprintf("race: thread %d reads shared bytes [%d, %d) that a TMA load in flight is still writing (missing a wait on the load's mbarrier?)", t.linear, a, a+uint64(n)),
				Notes: []Note{c.note()}})
		}
	}
}

func (t *thread) writeShared(op *ir.Operation, space int, a uint64, n int) {
	if space != spaceShared {
		return
	}
	if t.b.observing() {
		t.b.emit(t, nil, &Event{Kind: SharedWrite, Op: op, Mem: []Span{{a, a + uint64(n)}}})
	}
	for _, c := range t.b.inflight {
		if c.dst == t.c && a < c.hi && c.lo < a+uint64(n) {
			what := "a TMA store in flight is still reading"
			hint := "missing cp.async.bulk.wait_group.read before reusing the buffer?"
			if c.load {
				what = "a TMA load in flight is still writing"
				hint = "missing a wait on the load's mbarrier?"
			}
			t.fail(&Error{Op: op, Msg: fmt.Sprintf("race: thread %d writes shared bytes [%d, %d) that %s (%s)", t.linear, a, a+uint64(n), what, hint), Notes: []Note{c.note()}})
		}
	}
	if r := t.c.wgmmaReading(a, a+uint64(n)); r != nil {
		t.fail(&Error{Op: op, Msg: fmt.Sprintf("race: thread %d writes shared bytes [%d, %d) that a wgmma in flight may still read (its group not yet retired by wgmma.wait_group)", t.linear, a, a+uint64(n)),
			Notes: []Note{note(r.op.Loc, "the wgmma")}})
	}
	if k := len(t.unfenced); k > 0 && t.unfenced[k-1].hi == a && t.unfenced[k-1].op == op {
		t.unfenced[k-1].hi = a + uint64(n)
		return
	}
	t.unfenced = append(t.unfenced, span{a, a + uint64(n), op})
}

func runView(t *thread, in *instr) {
	src := t.mem(in, 0)
	shift := t.int(in, 1)
	rt := in.op.Result(0).Type().(*ir.MemRefType)
	sizes := append([]int64(nil), rt.Shape()...)
	d := 2
	for i, s := range sizes {
		if s == ir.Dynamic {
			sizes[i] = t.int(in, d)
			d++
		}
	}
	es := elemSize(rt.Elem)
	strides := make([]int64, len(sizes))
	acc := int64(1)
	for i := len(sizes) - 1; i >= 0; i-- {
		strides[i] = acc
		acc *= sizes[i]
	}
	base := src.base + uint64((src.offset*src.esize)+shift)
	if src.space == spaceShared && base+uint64(acc*es) > uint64(len(t.c.smem)) {
		t.failf(in.op, "view of %d bytes at shared offset %d is out of bounds (the block has %d bytes)", acc*es, base, len(t.c.smem))
	}
	t.set(in, 0, &memref{space: src.space, base: base, sizes: sizes, strides: strides, elem: rt.Elem, esize: es})
}

func runSubview(t *thread, in *instr) {
	src := t.mem(in, 0)
	op := in.op
	rank := len(src.sizes)
	// Static and dynamic offsets, sizes and strides.
	vals := func(attr string, first int) ([]int64, int) {
		st := op.Attr(attr).(*ir.DenseArrayAttr).Ints
		out := make([]int64, len(st))
		for i, s := range st {
			if s == ir.Dynamic {
				out[i] = t.int(in, first)
				first++
			} else {
				out[i] = s
			}
		}
		return out, first
	}
	offs, next := vals("static_offsets", 1)
	sizes, next := vals("static_sizes", next)
	steps, _ := vals("static_strides", next)
	m := &memref{space: src.space, base: src.base, offset: src.offset, elem: src.elem, esize: src.esize}
	rt := op.Result(0).Type().(*ir.MemRefType)
	dropped := len(sizes) - rt.Rank()
	for d := 0; d < rank; d++ {
		if offs[d] < 0 || sizes[d] < 0 || offs[d]+(sizes[d]-1)*steps[d] >= src.sizes[d] && sizes[d] > 0 {
			t.failf(op, "subview out of bounds in dimension %d: offset %d, size %d, stride %d of %d", d, offs[d], sizes[d], steps[d], src.sizes[d])
		}
		m.offset += offs[d] * src.strides[d]
		if sizes[d] == 1 && dropped > 0 {
			dropped--
			continue
		}
		m.sizes = append(m.sizes, sizes[d])
		m.strides = append(m.strides, src.strides[d]*steps[d])
	}
	t.set(in, 0, m)
}
