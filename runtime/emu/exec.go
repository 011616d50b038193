package emu

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/tmac-dev/tmac/dialects/builtin"
	funcdialect "github.com/tmac-dev/tmac/dialects/func"
	"github.com/tmac-dev/tmac/dialects/gpu"
	memrefdialect "github.com/tmac-dev/tmac/dialects/memref"
	"github.com/tmac-dev/tmac/dialects/nvvm"
	"github.com/tmac-dev/tmac/dialects/scf"
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

// runCode runs c with its block arguments bound to args and returns all
// the operands of its terminator, if any (scf.yield's results;
// scf.condition's condition, then the values it passes on).
func (t *thread) runCode(c *code, args []any) []any {
	if t.b.dev.stopped() { // every loop iteration comes here
		t.fail(errStopped)
	}
	for i, a := range c.args {
		t.vals[a] = args[i]
	}
	for _, in := range c.instrs {
		switch in.op.Name() {
		case scf.Yield, scf.Condition, gpu.Yield, memrefdialect.AtomicYield, memrefdialect.AllocaScopeReturn:
			return t.values(in.in)
		case gpu.Return, funcdialect.Return, gpu.Terminator:
			return nil
		}
		in.run(t, in)
	}
	return nil
}

// values are the values of value numbers vs.
func (t *thread) values(vs []int) []any {
	out := make([]any, len(vs))
	for i, v := range vs {
		out[i] = t.vals[v]
	}
	return out
}

// int is the integer value of in's operand with value number v (a slot
// its implementation resolved).
func (t *thread) int(in *instr, v int) int64 {
	x, ok := t.vals[v].(int64)
	if !ok {
		t.failf(in.op, "operand %d is not an integer value (%T)", in.operandIndex(v), t.vals[v])
	}
	return x
}

// mixedInts returns static with each ir.Dynamic entry replaced, in order,
// by the value of the next of the dynamic slots: the sizes, offsets and
// strides ops give as a static list plus operands.
func (t *thread) mixedInts(in *instr, static []int64, dynamic []int) []int64 {
	out := append([]int64(nil), static...)
	next := 0
	for i, s := range out {
		if s == ir.Dynamic {
			out[i], next = t.int(in, dynamic[next]), next+1
		}
	}
	return out
}

// ints are the integer values of in's operands with value numbers vs.
func (t *thread) ints(in *instr, vs []int) []int64 {
	out := make([]int64, len(vs))
	for i, v := range vs {
		out[i] = t.int(in, v)
	}
	return out
}

// mem is the memref value of in's operand with value number v.
func (t *thread) mem(in *instr, v int) *memref {
	x, ok := t.vals[v].(*memref)
	if !ok {
		t.failf(in.op, "operand %d is not a memref (%T)", in.operandIndex(v), t.vals[v])
	}
	return x
}

// operandIndex is the position among in's operands of value number v
// (for messages).
func (in *instr) operandIndex(v int) int {
	for i, x := range in.in {
		if x == v {
			return i
		}
	}
	return -1
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
	register(direct(func(t *thread, in *instr) {}), gpu.Terminator, gpu.Return, funcdialect.Return, scf.Yield, scf.Condition)
	register(prepareFor, scf.For)
	register(prepareIf, scf.If)
	register(prepareWhile, scf.While)
	register(func(k *kernel, op *ir.Operation) runFunc {
		// unrealized casts between memrefs, descriptors and LLVM pointers
		// (codegen's own bridges): a memref becomes a pointer to its first
		// element; anything else passes through.
		c := builtin.UnrealizedConversionCastOp{Op: op}
		inputs, outputs := k.slots(c.Inputs()), c.Outputs()
		return func(t *thread, in *instr) {
			v := t.vals[inputs[0]]
			if _, isMem := outputs[0].Type().(*ir.MemRefType); !isMem {
				if m, ok := v.(*memref); ok {
					v = ptr{space: m.space, addr: m.base + uint64(m.offset*m.esize), cta: -1}
				}
			}
			t.set(in, 0, v)
		}
	}, builtin.UnrealizedConversionCast)
	register(prepareGPUIndex, gpu.ThreadId, gpu.BlockId, gpu.BlockDim, gpu.GridDim,
		gpu.ClusterId, gpu.ClusterDim, gpu.ClusterBlockId, gpu.ClusterDimBlocks)
	register(direct(func(t *thread, in *instr) {
		t.set(in, 0, &memref{space: spaceShared, sizes: []int64{int64(len(t.c.smem))}, strides: []int64{1}, elem: ir.I8, esize: 1})
	}), gpu.DynamicSharedMemory)
	register(direct(func(t *thread, in *instr) { t.barrierAt(in.op, 0, -1, false) }), gpu.Barrier, nvvm.Barrier0)
}

func prepareFor(k *kernel, op *ir.Operation) runFunc {
	f := scf.ForOp{Op: op}
	lower, upper, step := k.slot(f.LowerBound()), k.slot(f.UpperBound()), k.slot(f.Step())
	inits := k.slots(f.InitArgs())
	ty := f.LowerBound().Type()
	return func(t *thread, in *instr) {
		lb, ub, st := t.int(in, lower), t.int(in, upper), t.int(in, step)
		if st <= 0 {
			t.failf(in.op, "loop step %d is not positive", st)
		}
		// args: the induction variable, then the iteration values.
		args := make([]any, 1+len(inits))
		for i, v := range inits {
			args[1+i] = t.vals[v]
		}
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
}

// prepareIf: in.regions are the compiled then and else regions (the
// else region nil when empty).
func prepareIf(k *kernel, op *ir.Operation) runFunc {
	cond := k.slot(scf.IfOp{Op: op}.Condition())
	return func(t *thread, in *instr) {
		var res []any
		if t.int(in, cond)&1 != 0 {
			res = t.runCode(in.regions[0], nil)
		} else if len(in.regions) > 1 && in.regions[1] != nil {
			res = t.runCode(in.regions[1], nil)
		}
		for i := range in.out {
			t.set(in, i, res[i])
		}
	}
}

// prepareWhile: in.regions are the compiled before and after regions.
func prepareWhile(k *kernel, op *ir.Operation) runFunc {
	inits := k.slots(scf.WhileOp{Op: op}.Inits())
	return func(t *thread, in *instr) {
		args := t.values(inits)
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
}

// prepareGPUIndex: gpu.thread_id, block_id, block_dim, grid_dim and the
// cluster ops (cluster_id, cluster_dim: clusters in the grid;
// cluster_block_id, cluster_dim_blocks: blocks in the cluster) read one
// dimension of the thread's, block's, cluster's or launch's indices and
// sizes.
func prepareGPUIndex(k *kernel, op *ir.Operation) runFunc {
	dim := func(a ir.Attribute) int {
		switch gpu.DimOf(a) {
		case "y":
			return 1
		case "z":
			return 2
		}
		return 0
	}
	switch op.Name() {
	case gpu.ThreadId:
		d := dim(gpu.ThreadIdOp{Op: op}.Dimension())
		return func(t *thread, in *instr) { t.set(in, 0, t.tid[d]) }
	case gpu.BlockId:
		d := dim(gpu.BlockIdOp{Op: op}.Dimension())
		return func(t *thread, in *instr) { t.set(in, 0, t.c.bid[d]) }
	case gpu.BlockDim:
		d := dim(gpu.BlockDimOp{Op: op}.Dimension())
		return func(t *thread, in *instr) { t.set(in, 0, t.b.bdim[d]) }
	case gpu.ClusterId:
		d := dim(gpu.ClusterIdOp{Op: op}.Dimension())
		return func(t *thread, in *instr) { t.set(in, 0, t.b.cid[d]) }
	case gpu.ClusterDim:
		d := dim(gpu.ClusterDimOp{Op: op}.Dimension())
		return func(t *thread, in *instr) { t.set(in, 0, t.b.clusters(d)) }
	case gpu.ClusterBlockId:
		d := dim(gpu.ClusterBlockIdOp{Op: op}.Dimension())
		return func(t *thread, in *instr) { t.set(in, 0, t.clusterBlock(d)) }
	case gpu.ClusterDimBlocks:
		d := dim(gpu.ClusterDimBlocksOp{Op: op}.Dimension())
		return func(t *thread, in *instr) { t.set(in, 0, t.b.cdim[d]) }
	}
	d := dim(gpu.GridDimOp{Op: op}.Dimension())
	return func(t *thread, in *instr) { t.set(in, 0, t.b.grid[d]) }
}

// clusterBlock returns the position of t's block in its cluster along
// dimension d.
func (t *thread) clusterBlock(d int) int64 { return t.c.bid[d] - t.b.cid[d]*t.b.cdim[d] }

// clusters returns the number of clusters in the grid along dimension d.
func (b *blockRun) clusters(d int) int64 { return b.grid[d] / b.cdim[d] }

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

func init() {
	register(func(k *kernel, op *ir.Operation) runFunc {
		l := memrefdialect.LoadOp{Op: op}
		src, indices := k.slot(l.Memref()), k.slots(l.Indices())
		return func(t *thread, in *instr) {
			m := t.mem(in, src)
			a, p := t.access(in.op, m, t.ints(in, indices), 1)
			t.readShared(in.op, m.space, a, len(p))
			t.set(in, 0, readElem(p, m.elem))
		}
	}, memrefdialect.Load)
	register(func(k *kernel, op *ir.Operation) runFunc {
		s := memrefdialect.StoreOp{Op: op}
		val, dst, indices := k.slot(s.Value()), k.slot(s.Memref()), k.slots(s.Indices())
		return func(t *thread, in *instr) {
			m := t.mem(in, dst)
			a, p := t.access(in.op, m, t.ints(in, indices), 1)
			t.writeShared(in.op, m.space, a, len(p))
			writeElem(p, m.elem, t.vals[val])
		}
	}, memrefdialect.Store)
	register(prepareView, memrefdialect.View)
	register(prepareSubview, memrefdialect.Subview)
	register(func(k *kernel, op *ir.Operation) runFunc {
		src := k.slot(memrefdialect.CastOp{Op: op}.Source())
		return func(t *thread, in *instr) {
			m := *t.mem(in, src)
			t.set(in, 0, &m)
		}
	}, memrefdialect.Cast)
}

// readShared and writeShared check generic shared-memory accesses against
// the asynchronous copies in flight and the other threads' accesses
// (race.go), and record writes for the proxy-fence check.
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
	if r := t.b.race; r != nil {
		r.read(t, t.c, op, a, a+uint64(n), "reads")
	}
}

func (t *thread) writeShared(op *ir.Operation, space int, a uint64, n int) {
	t.sharedWrite(op, space, a, n, false)
}

func (t *thread) sharedWrite(op *ir.Operation, space int, a uint64, n int, atomic bool) {
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
	if r := t.b.race; r != nil {
		r.write(t, t.c, op, a, a+uint64(n), "writes", atomic, false)
	}
	if k := len(t.unfenced); k > 0 && t.unfenced[k-1].hi == a && t.unfenced[k-1].op == op {
		t.unfenced[k-1].hi = a + uint64(n)
		return
	}
	t.unfenced = append(t.unfenced, span{a, a + uint64(n), op})
}

func prepareView(k *kernel, op *ir.Operation) runFunc {
	v := memrefdialect.ViewOp{Op: op}
	source, byteShift, dynSizes, res := k.slot(v.Source()), k.slot(v.ByteShift()), k.slots(v.Sizes()), v.Result()
	return func(t *thread, in *instr) {
		src := t.mem(in, source)
		shift := t.int(in, byteShift)
		rt := res.Type().(*ir.MemRefType)
		sizes := t.mixedInts(in, rt.Shape(), dynSizes)
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
}

func prepareSubview(k *kernel, op *ir.Operation) runFunc {
	s := memrefdialect.SubviewOp{Op: op}
	source, res := k.slot(s.Source()), s.Result()
	// Each of offsets, sizes and strides: the static values, and the
	// operands that give the dynamic ones in order.
	type part struct {
		static  ir.Attribute
		dynamic []int
	}
	offsetArgs := part{s.StaticOffsets(), k.slots(s.Offsets())}
	sizeArgs := part{s.StaticSizes(), k.slots(s.Sizes())}
	strideArgs := part{s.StaticStrides(), k.slots(s.Strides())}
	return func(t *thread, in *instr) {
		src := t.mem(in, source)
		rank := len(src.sizes)
		vals := func(p part) []int64 {
			return t.mixedInts(in, p.static.(*ir.DenseArrayAttr).Ints, p.dynamic)
		}
		offs, sizes, steps := vals(offsetArgs), vals(sizeArgs), vals(strideArgs)
		m := &memref{space: src.space, base: src.base, offset: src.offset, elem: src.elem, esize: src.esize}
		rt := res.Type().(*ir.MemRefType)
		dropped := len(sizes) - rt.Rank()
		for d := 0; d < rank; d++ {
			if offs[d] < 0 || sizes[d] < 0 || offs[d]+(sizes[d]-1)*steps[d] >= src.sizes[d] && sizes[d] > 0 {
				t.failf(in.op, "subview out of bounds in dimension %d: offset %d, size %d, stride %d of %d", d, offs[d], sizes[d], steps[d], src.sizes[d])
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
}
