package emu

import (
	"math"
	"os"
	"sync"

	"github.com/tmac-dev/tmac/dialects/vector"
	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/ir/eval"
)

// The vector dialect on the emulator. A vector value of any rank is a vec
// of its lanes in row-major order, as code generation holds it in one
// LLVM vector (codegen/vector.go); each op computes what its lowering
// computes: reductions in lane order from the accumulator, outer products
// with a fused multiply-add, masked accesses touching only the lanes whose
// mask bit is set.

// n is the number of lanes of v.
func (v vec) n() int { return len(v.f) + len(v.i) }

// lane is lane k of v (float64 or int64).
func (v vec) lane(k int64) any {
	if v.f != nil {
		return v.f[k]
	}
	return v.i[k]
}

// newVec makes a vector of n lanes holding elements of type elem.
func newVec(elem ir.Type, n int64) vec {
	if ir.IsFloat(elem) {
		return vec{f: make([]float64, n)}
	}
	return vec{i: make([]int64, n)}
}

func (v vec) set(k int64, x any) {
	switch x := x.(type) {
	case float64:
		v.f[k] = x
	case int64:
		v.i[k] = x
	}
}

// pickLanes builds a vector of elem whose lane i is lane src[i] of the
// sources (src[i] = {which, lane}; lane -1 is poison, left zero).
func pickLanes(elem ir.Type, sources []vec, src [][2]int64) vec {
	out := newVec(elem, int64(len(src)))
	for i, s := range src {
		if s[1] >= 0 {
			out.set(int64(i), sources[s[0]].lane(s[1]))
		}
	}
	return out
}

// asVec is x as a vector: a scalar becomes one lane.
func asVec(x any) vec {
	switch x := x.(type) {
	case vec:
		return x
	case float64:
		return vec{f: []float64{x}}
	case int64:
		return vec{i: []int64{x}}
	}
	return vec{}
}

// vecShape is the shape of a vector type (nil for scalars and 0-D).
func vecShape(t ir.Type) []int64 {
	if v, ok := t.(*ir.VectorType); ok {
		return v.Shape()
	}
	return nil
}

// lanePlan is a shuffle computed once when the kernel is compiled: the
// result's element type and, per lane, the source and lane it copies.
type lanePlan struct {
	elem ir.Type
	src  [][2]int64
}

// shuffleOp is the implementation of an op whose result lanes are copies
// of its operands' lanes (plan over the given operands).
func shuffleOp(k *kernel, operands []ir.Value, res ir.Value, p lanePlan) runFunc {
	ins := k.slots(operands)
	return func(t *thread, in *instr) {
		srcs := make([]vec, len(ins))
		for i, id := range ins {
			srcs[i] = asVec(t.vals[id])
		}
		out := pickLanes(p.elem, srcs, p.src)
		if _, ok := res.Type().(*ir.VectorType); !ok {
			t.set(in, 0, out.lane(0))
			return
		}
		t.set(in, 0, out)
	}
}

// shuffleOf runs a one-operand lane map: lane i of res copies lane
// lanes[i] of src.
func shuffleOf(k *kernel, src, res ir.Value, lanes []int64) runFunc {
	return shuffleOp(k, []ir.Value{src}, res, lanePlan{elem: ir.ElementTypeOrSelf(res.Type()), src: ofSource0(lanes)})
}

// ofSource0 is lanes of source 0.
func ofSource0(lanes []int64) [][2]int64 {
	out := make([][2]int64, len(lanes))
	for i, l := range lanes {
		out[i] = [2]int64{0, l}
	}
	return out
}

// identityLanes is lanes [from, from+n) of source 0.
func identityLanes(from, n int64) [][2]int64 {
	out := make([][2]int64, n)
	for i := range out {
		out[i] = [2]int64{0, from + int64(i)}
	}
	return out
}

func init() {
	register(prepareVectorLoad, vector.Load, vector.TransferRead)
	register(prepareVectorStore, vector.Store, vector.TransferWrite)
	register(func(k *kernel, op *ir.Operation) runFunc {
		b := vector.BroadcastOp{Op: op}
		return shuffleOf(k, b.Source(), b.Vector(), vector.BroadcastLanes(vecShape(b.Source().Type()), vecShape(b.Vector().Type())))
	}, vector.Broadcast)
	register(prepareExtract, vector.Extract)
	register(prepareInsert, vector.Insert)
	register(func(k *kernel, op *ir.Operation) runFunc {
		src := k.slot(op.Operand(0))
		return func(t *thread, in *instr) { t.set(in, 0, t.vals[src]) }
	}, vector.ShapeCast)
	register(prepareVectorBitcast, vector.Bitcast)
	register(func(k *kernel, op *ir.Operation) runFunc {
		x := vector.TransposeOp{Op: op}
		perm := vector.Ints(x.Permutation())
		return shuffleOf(k, x.Vector(), x.Result(), vector.TransposeLanes(vecShape(x.Vector().Type()), vecShape(x.Result().Type()), perm))
	}, vector.Transpose)
	register(func(k *kernel, op *ir.Operation) runFunc {
		x := vector.ExtractStridedSliceOp{Op: op}
		offsets := vector.Ints(x.Offsets())
		return shuffleOf(k, x.Vector(), x.Result(), vector.ExtractStridedSliceLanes(vecShape(x.Vector().Type()), vecShape(x.Result().Type()), offsets))
	}, vector.ExtractStridedSlice)
	register(func(k *kernel, op *ir.Operation) runFunc {
		x := vector.InsertStridedSliceOp{Op: op}
		offsets := vector.Ints(x.Offsets())
		p := lanePlan{
			elem: ir.ElementTypeOrSelf(x.Res().Type()),
			src:  vector.InsertStridedSliceLanes(vecShape(x.ValueToStore().Type()), vecShape(x.Dest().Type()), offsets),
		}
		return shuffleOp(k, []ir.Value{x.Dest(), x.ValueToStore()}, x.Res(), p)
	}, vector.InsertStridedSlice)
	register(func(k *kernel, op *ir.Operation) runFunc {
		x := vector.ShuffleOp{Op: op}
		p := lanePlan{
			elem: ir.ElementTypeOrSelf(x.Vector().Type()),
			src:  vector.ShuffleLanes(vecShape(x.V1().Type()), vector.Ints(x.Mask())),
		}
		return shuffleOp(k, []ir.Value{x.V1(), x.V2()}, x.Vector(), p)
	}, vector.Shuffle)
	register(func(k *kernel, op *ir.Operation) runFunc {
		x := vector.InterleaveOp{Op: op}
		p := lanePlan{elem: ir.ElementTypeOrSelf(x.Result().Type()), src: vector.InterleaveLanes(vecShape(x.Lhs().Type()))}
		return shuffleOp(k, []ir.Value{x.Lhs(), x.Rhs()}, x.Result(), p)
	}, vector.Interleave)
	register(prepareDeinterleave, vector.Deinterleave)
	register(func(k *kernel, op *ir.Operation) runFunc {
		x := vector.FromElementsOp{Op: op}
		p := lanePlan{elem: ir.ElementTypeOrSelf(x.Dest().Type())}
		for i := range x.Elements() {
			p.src = append(p.src, [2]int64{int64(i), 0})
		}
		return shuffleOp(k, x.Elements(), x.Dest(), p)
	}, vector.FromElements)
	register(func(k *kernel, op *ir.Operation) runFunc {
		src := k.slot(op.Operand(0))
		return func(t *thread, in *instr) {
			v := asVec(t.vals[src])
			for i := range in.out {
				t.set(in, i, v.lane(int64(i)))
			}
		}
	}, vector.ToElements)
	register(func(k *kernel, op *ir.Operation) runFunc {
		n := ir.NumElements(vecShape(op.Result(0).Type()))
		return func(t *thread, in *instr) {
			v := vec{i: make([]int64, n)}
			for i := range v.i {
				v.i[i] = int64(i)
			}
			t.set(in, 0, v)
		}
	}, vector.Step)
	register(prepareMask, vector.ConstantMask, vector.CreateMask)
	register(prepareReduction, vector.Reduction)
	register(prepareMultiReduction, vector.MultiReduction)
	register(prepareOuterProduct, vector.Outerproduct)
	register(prepareMaskedLoad, vector.Maskedload, vector.Expandload, vector.Gather)
	register(prepareMaskedStore, vector.Maskedstore, vector.Compressstore, vector.Scatter)
	register(preparePrint, vector.Print)
}

// vectorAccess describes a vector load or store: the memref and indices
// slots and the vector's shape.
func vectorAccess(k *kernel, op *ir.Operation) (base int, indices []int, vt *ir.VectorType, why string) {
	if op.Name() == vector.TransferRead || op.Name() == vector.TransferWrite {
		why = vector.SimpleTransfer(op)
	}
	b := op.OperandNamed("base")
	if mt, ok := b.Type().(*ir.MemRefType); ok {
		if _, vecElem := mt.Elem.(*ir.VectorType); vecElem && why == "" {
			why = "memrefs of vectors are not emulated"
		}
	}
	if op.NumResults() > 0 {
		vt = op.Result(0).Type().(*ir.VectorType)
	} else {
		vt = op.Operand(0).Type().(*ir.VectorType)
	}
	return k.slot(b), k.slots(op.OperandGroup("indices")), vt, why
}

// rowIndex is the memref index of a row: idx with the row's leading
// indices added to the dimensions in front of the innermost one.
func rowIndex(idx, row []int64) []int64 {
	out := append([]int64(nil), idx...)
	first := len(idx) - 1 - len(row)
	for q, r := range row {
		out[first+q] += r
	}
	return out
}

func prepareVectorLoad(k *kernel, op *ir.Operation) runFunc {
	base, indices, vt, why := vectorAccess(k, op)
	rows, n := vector.Rows(vt.Shape())
	return func(t *thread, in *instr) {
		if why != "" {
			t.failf(in.op, "%s", why)
		}
		m := t.mem(in, base)
		idx := t.ints(in, indices)
		v := newVec(vt.Elem, int64(len(rows))*n)
		for r, row := range rows {
			a, p := t.access(in.op, m, rowIndex(idx, row), n)
			t.readShared(in.op, m.space, a, len(p))
			for q := range n {
				v.set(int64(r)*n+q, readElem(p[q*m.esize:(q+1)*m.esize], m.elem))
			}
		}
		t.set(in, 0, v)
	}
}

func prepareVectorStore(k *kernel, op *ir.Operation) runFunc {
	base, indices, vt, why := vectorAccess(k, op)
	val := k.slot(op.Operand(0))
	rows, n := vector.Rows(vt.Shape())
	return func(t *thread, in *instr) {
		if why != "" {
			t.failf(in.op, "%s", why)
		}
		v := asVec(t.vals[val])
		m := t.mem(in, base)
		idx := t.ints(in, indices)
		for r, row := range rows {
			a, p := t.access(in.op, m, rowIndex(idx, row), n)
			t.writeShared(in.op, m.space, a, len(p))
			for q := range n {
				writeElem(p[q*m.esize:(q+1)*m.esize], m.elem, v.lane(int64(r)*n+q))
			}
		}
	}
}

// position is the flat offset of an extract/insert position and the lanes
// it covers (-1 for a poison position).
func position(t *thread, in *instr, shape, static []int64, dynamic []int) (int64, int64) {
	strides := ir.IdentityStrides(shape)
	size := ir.NumElements(shape[len(static):])
	var off int64
	next := 0
	for d, s := range static {
		if s == ir.Dynamic {
			s = t.int(in, dynamic[next])
			next++
			if s < 0 || s >= shape[d] {
				t.failf(in.op, "position %d is out of bounds for dimension %d of size %d", s, d, shape[d])
			}
		}
		if s == vector.Poison {
			return -1, size
		}
		off += s * strides[d]
	}
	return off, size
}

func prepareExtract(k *kernel, op *ir.Operation) runFunc {
	x := vector.ExtractOp{Op: op}
	src, dyn := k.slot(x.Vector()), k.slots(x.DynamicPosition())
	shape, static := vecShape(x.Vector().Type()), vector.Ints(x.StaticPosition())
	res := x.Result().Type()
	elem := ir.ElementTypeOrSelf(res)
	return func(t *thread, in *instr) {
		off, size := position(t, in, shape, static, dyn)
		v := asVec(t.vals[src])
		out := newVec(elem, size)
		if off >= 0 {
			out = pickLanes(elem, []vec{v}, identityLanes(off, size))
		}
		if _, ok := res.(*ir.VectorType); ok {
			t.set(in, 0, out)
		} else {
			t.set(in, 0, out.lane(0))
		}
	}
}

func prepareInsert(k *kernel, op *ir.Operation) runFunc {
	x := vector.InsertOp{Op: op}
	src, dst, dyn := k.slot(x.ValueToStore()), k.slot(x.Dest()), k.slots(x.DynamicPosition())
	shape, static := vecShape(x.Dest().Type()), vector.Ints(x.StaticPosition())
	elem := ir.ElementTypeOrSelf(x.Dest().Type())
	n := ir.NumElements(shape)
	return func(t *thread, in *instr) {
		off, size := position(t, in, shape, static, dyn)
		d, s := asVec(t.vals[dst]), asVec(t.vals[src])
		out := newVec(elem, n)
		if off >= 0 {
			for i := range n {
				if q := i - off; q >= 0 && q < size {
					out.set(i, s.lane(q))
				} else {
					out.set(i, d.lane(i))
				}
			}
		}
		t.set(in, 0, out)
	}
}

// bitsOf packs the lanes of v (elements of type elem) into bytes as LLVM
// lays out a vector: lane i at bits [i*w, (i+1)*w), little-endian.
func bitsOf(v vec, elem ir.Type) []byte {
	w := int64(elemBits(elem))
	out := make([]byte, (int64(v.n())*w+7)/8)
	for i := range int64(v.n()) {
		if w == 1 {
			out[i/8] |= byte(v.lane(i).(int64)&1) << (i % 8)
			continue
		}
		writeElem(out[i*w/8:(i+1)*w/8], elem, v.lane(i))
	}
	return out
}

// fromBits unpacks n lanes of type elem (see bitsOf).
func fromBits(p []byte, elem ir.Type, n int64) vec {
	w := int64(elemBits(elem))
	v := newVec(elem, n)
	for i := range n {
		if w == 1 {
			v.set(i, int64(p[i/8]>>(i%8))&1)
			continue
		}
		v.set(i, readElem(p[i*w/8:(i+1)*w/8], elem))
	}
	return v
}

// elemBits is the storage width of a vector element.
func elemBits(t ir.Type) int {
	if w := ir.BitWidth(t); w == 1 || w%8 == 0 {
		return w
	}
	return int(elemSize(t)) * 8
}

func prepareVectorBitcast(k *kernel, op *ir.Operation) runFunc {
	x := vector.BitcastOp{Op: op}
	src := k.slot(x.Source())
	se, re := ir.ElementTypeOrSelf(x.Source().Type()), ir.ElementTypeOrSelf(x.Result().Type())
	n := ir.NumElements(vecShape(x.Result().Type()))
	return func(t *thread, in *instr) {
		t.set(in, 0, fromBits(bitsOf(asVec(t.vals[src]), se), re, n))
	}
}

func prepareDeinterleave(k *kernel, op *ir.Operation) runFunc {
	x := vector.DeinterleaveOp{Op: op}
	src := k.slot(x.Source())
	s := vecShape(x.Source().Type())
	elem := ir.ElementTypeOrSelf(x.Source().Type())
	var plans [2][][2]int64
	for half := range plans {
		plans[half] = ofSource0(vector.DeinterleaveLanes(s, half))
	}
	return func(t *thread, in *instr) {
		v := asVec(t.vals[src])
		for half, p := range plans {
			t.set(in, half, pickLanes(elem, []vec{v}, p))
		}
	}
}

// prepareMask: constant_mask and create_mask set the lanes whose indices
// are all below the sizes (create_mask's operands, compared signed).
func prepareMask(k *kernel, op *ir.Operation) runFunc {
	shape := vecShape(op.Result(0).Type())
	static := vector.Ints(op.Attr("mask_dim_sizes"))
	dyn := k.slots(op.Operands())
	n := ir.NumElements(shape)
	return func(t *thread, in *instr) {
		sizes := static
		if len(dyn) > 0 {
			sizes = t.ints(in, dyn)
		}
		v := vec{i: make([]int64, n)}
		for i := range n {
			set := true
			if len(shape) == 0 {
				set = sizes[0] >= 1
			}
			for d, q := range ir.Delinearize(shape, i) {
				set = set && q < sizes[d]
			}
			if set {
				v.i[i] = 1
			}
		}
		t.set(in, 0, v)
	}
}

// combine computes a kind b for elements of type elem, as the lowering's
// LLVM instruction or intrinsic does.
func combine(kind string, a, b any, elem ir.Type) any {
	if ft, ok := elem.(*ir.FloatType); ok {
		x, y := a.(float64), b.(float64)
		switch kind {
		case "add":
			return eval.Round(x+y, ft.Kind)
		case "mul":
			return eval.Round(x*y, ft.Kind)
		case "minnumf", "maxnumf":
			if math.IsNaN(x) {
				return y
			}
			if math.IsNaN(y) {
				return x
			}
			if kind == "minnumf" {
				return math.Min(x, y)
			}
			return math.Max(x, y)
		case "minimumf":
			return eval.Minimum(x, y)
		case "maximumf":
			return eval.Maximum(x, y)
		}
		return math.NaN()
	}
	x, y := a.(int64), b.(int64)
	ux, uy := zext(x, elem), zext(y, elem)
	var r int64
	switch kind {
	case "add":
		r = x + y
	case "mul":
		r = x * y
	case "and":
		r = x & y
	case "or":
		r = x | y
	case "xor":
		r = x ^ y
	case "minsi":
		r = min(x, y)
	case "maxsi":
		r = max(x, y)
	case "minui":
		r = int64(min(ux, uy))
	case "maxui":
		r = int64(max(ux, uy))
	}
	return wrap(r, elem)
}

// reduce combines the lanes of v in order, starting from acc (nil: from
// the first lane), as llvm.vector.reduce.fadd/fmul do without reassoc (the
// other kinds do not depend on the order).
func reduce(kind string, v vec, acc any, elem ir.Type) any {
	r := acc
	for i := range int64(v.n()) {
		if r == nil {
			r = v.lane(i)
			continue
		}
		r = combine(kind, r, v.lane(i), elem)
	}
	return r
}

func prepareReduction(k *kernel, op *ir.Operation) runFunc {
	x := vector.ReductionOp{Op: op}
	src, acc := k.slot(x.Vector()), k.slot(x.Acc())
	kind, elem := vector.KindOf(op), x.Dest().Type()
	return func(t *thread, in *instr) {
		var a any
		if acc >= 0 {
			a = t.vals[acc]
		}
		t.set(in, 0, reduce(kind, asVec(t.vals[src]), a, elem))
	}
}

func prepareMultiReduction(k *kernel, op *ir.Operation) runFunc {
	x := vector.MultiReductionOp{Op: op}
	src, acc := k.slot(x.Source()), k.slot(x.Acc())
	kind, elem := vector.KindOf(op), ir.ElementTypeOrSelf(x.Dest().Type())
	shape := vecShape(x.Source().Type())
	dims := vector.Ints(x.ReductionDims())
	var kept []int64
	for d, s := range shape {
		if !containsDim(dims, d) {
			kept = append(kept, s)
		}
	}
	groups := make([][][2]int64, ir.NumElements(kept))
	for i := range ir.NumElements(shape) {
		var idx []int64
		for d, q := range ir.Delinearize(shape, i) {
			if !containsDim(dims, d) {
				idx = append(idx, q)
			}
		}
		g := ir.Linearize(kept, idx)
		groups[g] = append(groups[g], [2]int64{0, i})
	}
	return func(t *thread, in *instr) {
		v := asVec(t.vals[src])
		if len(kept) == 0 {
			t.set(in, 0, reduce(kind, v, t.vals[acc], elem))
			return
		}
		a := asVec(t.vals[acc])
		out := newVec(elem, int64(len(groups)))
		for g, lanes := range groups {
			out.set(int64(g), reduce(kind, pickLanes(elem, []vec{v}, lanes), a.lane(int64(g)), elem))
		}
		t.set(in, 0, out)
	}
}

func containsDim(dims []int64, d int) bool {
	for _, r := range dims {
		if r == int64(d) {
			return true
		}
	}
	return false
}

// prepareOuterProduct: lane (i, j) is lhs[i]·rhs[j] (rhs a scalar: lane i
// is lhs[i]·rhs), combined with the accumulator; a float add is one fused
// multiply-add, as the lowering's llvm.fma.
func prepareOuterProduct(k *kernel, op *ir.Operation) runFunc {
	x := vector.OuterproductOp{Op: op}
	lhs, rhs, acc := k.slot(x.Lhs()), k.slot(x.Rhs()), k.slot(x.Acc())
	kind, elem := vector.KindOf(op), ir.ElementTypeOrSelf(x.Result().Type())
	n := int64(1)
	if s := vecShape(x.Rhs().Type()); len(s) > 0 {
		n = s[0]
	}
	return func(t *thread, in *instr) {
		a, b := asVec(t.vals[lhs]), asVec(t.vals[rhs])
		m := int64(a.n())
		out := newVec(elem, m*n)
		var c vec
		if acc >= 0 {
			c = asVec(t.vals[acc])
		}
		for i := range m * n {
			ai, bj := a.lane(i/n), b.lane(i%n)
			switch {
			case acc >= 0 && kind == "add" && ir.IsFloat(elem):
				out.set(i, eval.Round(math.FMA(ai.(float64), bj.(float64), c.f[i]), elem.(*ir.FloatType).Kind))
			case acc >= 0:
				out.set(i, combine(kind, c.lane(i), combine("mul", ai, bj, elem), elem))
			default:
				out.set(i, combine("mul", ai, bj, elem))
			}
		}
		t.set(in, 0, out)
	}
}

// maskedPlan is what a masked access reads once: base, start indices,
// mask and the lane count.
type maskedPlan struct {
	base, mask, other, indexVec int
	indices                     []int
	n                           int64
	elem                        ir.Type
}

func newMaskedPlan(k *kernel, op *ir.Operation, vecT ir.Type, other ir.Value) maskedPlan {
	idx := op.OperandGroup("indices")
	iv := -1
	if op.Name() == vector.Gather || op.Name() == vector.Scatter {
		idx = op.OperandGroup("offsets")
		iv = k.slot(op.OperandNamed("indices"))
	}
	return maskedPlan{base: k.slot(op.OperandNamed("base")), mask: k.slot(op.OperandNamed("mask")),
		other: k.slot(other), indexVec: iv, indices: k.slots(idx),
		n: ir.NumElements(vecShape(vecT)), elem: ir.ElementTypeOrSelf(vecT)}
}

// laneAccess returns the bytes of the element `step` elements after the
// one at the start indices (bounds checked as the element it is).
func (t *thread) laneAccess(in *instr, m *memref, start []int64, step int64) (uint64, []byte) {
	a, err := m.addr(start)
	if err != nil {
		t.failf(in.op, "%v", err)
	}
	one := &memref{space: m.space, base: a + uint64(step*m.esize), elem: m.elem, esize: m.esize}
	return t.access(in.op, one, nil, 1)
}

// lanes calls f for each lane whose mask bit is set, with the
// element offset the lane accesses from the start indices: the lane
// itself (maskedload/store), the count of set lanes before it
// (expandload/compressstore), or the lane's index (gather/scatter).
func (p maskedPlan) lanes(t *thread, in *instr, f func(lane, step int64)) {
	mask := asVec(t.vals[p.mask])
	var iv vec
	if p.indexVec >= 0 {
		iv = asVec(t.vals[p.indexVec])
	}
	set := int64(0)
	for i := range p.n {
		if mask.i[i]&1 == 0 {
			continue
		}
		step := i
		switch in.op.Name() {
		case vector.Expandload, vector.Compressstore:
			step = set
		case vector.Gather, vector.Scatter:
			step = iv.i[i]
		}
		set++
		f(i, step)
	}
}

func prepareMaskedLoad(k *kernel, op *ir.Operation) runFunc {
	p := newMaskedPlan(k, op, op.Result(0).Type(), op.OperandNamed("pass_thru"))
	return func(t *thread, in *instr) {
		m := t.mem(in, p.base)
		start := t.ints(in, p.indices)
		pass := asVec(t.vals[p.other])
		out := newVec(p.elem, p.n)
		for i := range p.n {
			out.set(i, pass.lane(i))
		}
		p.lanes(t, in, func(lane, step int64) {
			a, b := t.laneAccess(in, m, start, step)
			t.readShared(in.op, m.space, a, len(b))
			out.set(lane, readElem(b, m.elem))
		})
		t.set(in, 0, out)
	}
}

func prepareMaskedStore(k *kernel, op *ir.Operation) runFunc {
	p := newMaskedPlan(k, op, op.OperandNamed("valueToStore").Type(), op.OperandNamed("valueToStore"))
	return func(t *thread, in *instr) {
		m := t.mem(in, p.base)
		start := t.ints(in, p.indices)
		v := asVec(t.vals[p.other])
		p.lanes(t, in, func(lane, step int64) {
			a, b := t.laneAccess(in, m, start, step)
			t.writeShared(in.op, m.space, a, len(b))
			writeElem(b, m.elem, v.lane(lane))
		})
	}
}

// printMu keeps the lines of threads printing at once whole.
var printMu sync.Mutex

// preparePrint prints to standard output what the kernel's vprintf
// prints (vector.PrintText): floats as C's %g, integers signed or
// unsigned as their type.
func preparePrint(k *kernel, op *ir.Operation) runFunc {
	src := -1
	var elem ir.Type
	if op.NumOperands() > 0 {
		src = k.slot(op.Operand(0))
		elem = ir.ElementTypeOrSelf(op.Operand(0).Type())
	}
	return func(t *thread, in *instr) {
		var v vec
		if src >= 0 {
			v = asVec(t.vals[src])
		}
		text := vector.PrintText(in.op, func(i int) string { return vector.FormatElement(v.lane(int64(i)), elem) })
		printMu.Lock()
		os.Stdout.WriteString(text)
		printMu.Unlock()
	}
}
