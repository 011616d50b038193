package emu

import (
	"fmt"
	"math"
	"math/bits"
	"sync"

	"github.com/tmac-dev/tmac/dialects/gpu"
	"github.com/tmac-dev/tmac/ir"
)

// The gpu dialect's lane queries and warp and block collectives, as
// codegen lowers them (dialects/gpu/warp.go documents each): gpu.shuffle
// and gpu.rotate through the PTX shfl.sync semantics of warp.go,
// gpu.subgroup_reduce and gpu.all_reduce as the same butterflies, in the
// same order, as the GPU, so floating-point results match bit for bit.

func init() {
	register(direct(func(t *thread, in *instr) { t.set(in, 0, int64(t.linear%32)) }), gpu.LaneId)
	register(direct(func(t *thread, in *instr) { t.set(in, 0, int64(t.linear/32)) }), gpu.SubgroupId)
	register(direct(func(t *thread, in *instr) { t.set(in, 0, int64(warpsOf(len(t.c.threads)))) }), gpu.NumSubgroups)
	register(direct(func(t *thread, in *instr) { t.set(in, 0, int64(32)) }), gpu.SubgroupSize)
	register(func(k *kernel, op *ir.Operation) runFunc {
		d := map[string]int{"x": 0, "y": 1, "z": 2}[gpu.DimOf(gpu.GlobalIdOp{Op: op}.Dimension())]
		return func(t *thread, in *instr) { t.set(in, 0, t.c.bid[d]*t.b.bdim[d]+t.tid[d]) }
	}, gpu.GlobalId)
	register(direct(func(*thread, *instr) {}), gpu.Yield) // runCode returns at it
	register(prepareShuffle, gpu.Shuffle)
	register(prepareRotate, gpu.Rotate)
	register(prepareSubgroupBroadcast, gpu.SubgroupBroadcast)
	register(prepareSubgroupReduce, gpu.SubgroupReduce)
	register(prepareAllReduce, gpu.AllReduce)
}

func warpsOf(threads int) int { return (threads + 31) / 32 }

// ptxShflKinds are the shfl.sync modes of gpu.shuffle's modes.
var ptxShflKinds = map[string]string{"xor": "bfly", "up": "up", "down": "down", "idx": "idx"}

// widthMask is the member mask of the first width lanes; a width outside
// [1, 32] is an error (the lowering's shift would be poison).
func (t *thread) widthMask(in *instr, width int64) uint32 {
	if width < 1 || width > 32 {
		t.failf(in.op, "thread %d uses width %d: the width must be between 1 and the 32 lanes of a warp", t.linear, width)
	}
	return 0xffffffff >> (32 - width)
}

// shuffleResults sets a shuffle's value and validity bit from what the
// collective gave this lane.
func (t *thread) shuffleResults(in *instr, r any) {
	pair := r.([]any)
	t.set(in, 0, pair[0])
	t.set(in, 1, pair[1])
}

func shuffleWithPred(kind string) func(t *thread, w *warpColl) [32]any {
	return func(t *thread, w *warpColl) [32]any { return shuffleLanes(t, w, kind, true) }
}

func prepareShuffle(k *kernel, op *ir.Operation) runFunc {
	s := gpu.ShuffleOp{Op: op}
	val, offset, width := k.slot(s.Value()), k.slot(s.Offset()), k.slot(s.Width())
	mode := gpu.ShuffleMode.Value(s.Mode())
	key, compute := op.Name()+" "+mode, shuffleWithPred(ptxShflKinds[mode])
	return func(t *thread, in *instr) {
		w := t.int(in, width)
		mask := t.widthMask(in, w)
		// The clamp of the lowering: the last lane of the width; 0 for up.
		clamp := w - 1
		if mode == "up" {
			clamp = 0
		}
		args := shflArgs{val: t.vals[val], offset: t.int(in, offset), clamp: clamp}
		t.shuffleResults(in, t.warpCollective(in.op, key, mask, args, compute))
	}
}

func prepareRotate(k *kernel, op *ir.Operation) runFunc {
	r := gpu.RotateOp{Op: op}
	val := k.slot(r.Value())
	offset, width := intAttr(r.Offset()), intAttr(r.Width())
	compute := shuffleWithPred("idx")
	return func(t *thread, in *instr) {
		mask := t.widthMask(in, width)
		src := (int64(t.linear%32) + offset) & (width - 1)
		args := shflArgs{val: t.vals[val], offset: src, clamp: width - 1}
		t.shuffleResults(in, t.warpCollective(in.op, "gpu.rotate", mask, args, compute))
	}
}

func intAttr(a ir.Attribute) int64 {
	if ia, ok := a.(*ir.IntegerAttr); ok {
		return ia.Int()
	}
	return 0
}

// warpLanes is the mask of the lanes of t's warp that exist (a block's
// last warp may be partial).
func (t *thread) warpLanes() uint32 {
	n := len(t.c.threads) - t.linear/32*32
	if n >= 32 {
		return 0xffffffff
	}
	return 1<<n - 1
}

// prepareSubgroupBroadcast: the GPU broadcasts over activemask; here the
// warp's lanes that have not exited are the active ones, so every one of
// them must execute it.
func prepareSubgroupBroadcast(k *kernel, op *ir.Operation) runFunc {
	s := gpu.SubgroupBroadcastOp{Op: op}
	src, lane := k.slot(s.Src()), k.slot(s.Lane())
	compute := func(t *thread, w *warpColl) [32]any { return shuffleLanes(t, w, "idx", false) }
	return func(t *thread, in *instr) {
		args := shflArgs{val: t.vals[src], clamp: 31}
		if lane >= 0 {
			l := t.int(in, lane)
			if l < 0 || l > 31 {
				t.failf(in.op, "thread %d broadcasts from lane %d: the lane must be between 0 and 31", t.linear, l)
			}
			args.offset = l
			t.set(in, 0, t.warpCollective(in.op, "gpu.subgroup_broadcast specific_lane", t.warpLanes(), args, compute))
			return
		}
		args.offset = -1 // the lowest lane that arrived, filled in below
		t.set(in, 0, t.warpCollective(in.op, "gpu.subgroup_broadcast first_active_lane", t.warpLanes(), args, func(t *thread, w *warpColl) [32]any {
			first := int64(bits.TrailingZeros32(w.arrived))
			for l := 0; l < 32; l++ {
				if a, ok := w.in[l].(shflArgs); ok {
					a.offset = first
					w.in[l] = a
				}
			}
			return compute(t, w)
		}))
	}
}

// A combiner is one step of a reduction: own value first.
type combiner func(x, y any) any

func prepareSubgroupReduce(k *kernel, op *ir.Operation) runFunc {
	r := gpu.SubgroupReduceOp{Op: op}
	val := k.slot(r.Value())
	size, stride := gpu.ClusterShape(op)
	combine := kindCombiner(gpu.ReduceOp.Value(r.OpAttr()), gpu.ReduceElem(r.Value().Type()))
	return func(t *thread, in *instr) {
		if size > 32 || size*stride > 32 {
			t.failf(in.op, "clusters of %d lanes %d apart do not fit in a warp of 32 lanes", size, stride)
		}
		// The lowering shuffles with the full member mask: lanes that have
		// exited (or that a partial last warp lacks) may be in it, but a
		// lane must not read one of them.
		t.set(in, 0, t.warpCollective(in.op, "gpu.subgroup_reduce", 0xffffffff, t.vals[val], func(t *thread, w *warpColl) [32]any {
			lanes := w.in
			for s := int(stride); s < int(size*stride); s *= 2 {
				var next [32]any
				for l := range next {
					if w.arrived&(1<<l) == 0 {
						continue
					}
					if w.arrived&(1<<(l^s)) == 0 {
						t.failf(w.op, "lane %d of warp %d reads lane %d, which does not take part (it has exited, or the block ends before it): on the GPU the value is undefined", l, t.linear/32, l^s)
					}
					next[l] = combine(lanes[l], lanes[l^s])
				}
				lanes = next
			}
			return lanes
		}))
	}
}

// butterfly combines xs (the values of the first len(xs) lanes) as the
// lowering's warp reduction does: at step s = 1, 2, ..., 16 lane k takes
// its partner k xor s when the partner is below the width; lane 0's value
// is the result.
func butterfly(xs []any, combine combiner) any {
	lanes := append([]any(nil), xs...)
	next := make([]any, len(xs))
	for s := 1; s < 32; s *= 2 {
		for k := range lanes {
			next[k] = lanes[k]
			if j := k ^ s; j < len(lanes) {
				next[k] = combine(lanes[k], lanes[j])
			}
		}
		lanes, next = next, lanes
	}
	return lanes[0]
}

// blockReduce is one gpu.all_reduce of one block in progress: the value
// each thread brought, and the result once computed.
type blockReduce struct {
	vals     []any
	arrived  []bool
	result   any
	computed bool
}

// prepareAllReduce: every thread deposits its value and meets the others
// at a block barrier (the lowering's first bar.sync 0); the first thread
// through computes the result in the lowering's order; a second barrier,
// as on the GPU, keeps the next reduction from starting before every
// thread has its result.
func prepareAllReduce(k *kernel, op *ir.Operation) runFunc {
	r := gpu.AllReduceOp{Op: op}
	val := k.slot(r.Value())
	var states sync.Map // *cta → *blockReduce (blocks run in parallel)
	kind := gpu.ReduceOp.Value(r.OpAttr())
	return func(t *thread, in *instr) {
		c := t.c
		s, _ := states.LoadOrStore(c, &blockReduce{vals: make([]any, len(c.threads)), arrived: make([]bool, len(c.threads))})
		br := s.(*blockReduce)
		br.vals[t.linear], br.arrived[t.linear] = t.vals[val], true
		t.barrierAt(in.op, 0, -1, false)
		if !br.computed {
			combine := kindCombiner(kind, r.Value().Type())
			if kind == "" {
				combine = func(x, y any) any { return t.runCode(in.regions[0], []any{x, y})[0] }
			}
			br.result = t.reduceBlock(in, br, combine)
			br.computed = true
		}
		t.set(in, 0, br.result)
		t.barrierAt(in.op, 0, -1, false)
		// Every thread has its result: the first through starts afresh.
		states.CompareAndDelete(c, br)
	}
}

// reduceBlock reduces the deposited values as the lowering does: each
// warp by the butterfly over its threads, then the warps' values by the
// butterfly over the warps.
func (t *thread) reduceBlock(in *instr, br *blockReduce, combine combiner) any {
	for i, ok := range br.arrived {
		if !ok {
			t.failf(in.op, "thread %d has exited: every thread of the block must execute gpu.all_reduce (on the GPU its shuffles would read the exited lane)", i)
		}
	}
	n := len(br.vals)
	partial := make([]any, warpsOf(n))
	for w := range partial {
		partial[w] = butterfly(br.vals[32*w:min(n, 32*w+32)], combine)
	}
	return butterfly(partial, combine)
}

// kindCombiner combines two values (scalars or vectors of elem) by a
// reduction kind, as codegen's combination computes it.
func kindCombiner(kind string, t ir.Type) combiner {
	elem := t
	if v, ok := t.(*ir.VectorType); ok {
		elem = v.Elem
	}
	if kind == "" {
		return nil
	}
	if ft, ok := elem.(*ir.FloatType); ok {
		f := floatCombiner(kind)
		return lanewise(func(x, y any) any { return round(f(x.(float64), y.(float64)), ft) })
	}
	w := ir.BitWidth(elem)
	f := intCombiner(kind, w)
	return lanewise(func(x, y any) any { return wrap(f(x.(int64), y.(int64)), elem) })
}

// lanewise applies a scalar combination to scalars or, element by
// element, to vectors.
func lanewise(f combiner) combiner {
	return func(x, y any) any {
		xv, ok := x.(vec)
		if !ok {
			return f(x, y)
		}
		yv := y.(vec)
		var r vec
		for i := range xv.f {
			r.f = append(r.f, f(xv.f[i], yv.f[i]).(float64))
		}
		for i := range xv.i {
			r.i = append(r.i, f(xv.i[i], yv.i[i]).(int64))
		}
		return r
	}
}

// floatCombiner: IEEE sum and product (rounded by the caller), minnumf
// and maxnumf as minimumNumber and maximumNumber (a NaN operand ignored),
// minimumf and maximumf propagating NaN; -0 < +0 in all four, as PTX's
// min and max order zeros.
func floatCombiner(kind string) func(x, y float64) float64 {
	less := func(x, y float64) bool { return x < y || x == 0 && y == 0 && math.Signbit(x) && !math.Signbit(y) }
	pick := func(x, y float64, min, nanWins bool) float64 {
		switch {
		case math.IsNaN(x) || math.IsNaN(y):
			if nanWins || math.IsNaN(x) && math.IsNaN(y) {
				return math.NaN()
			}
			if math.IsNaN(x) {
				return y
			}
			return x
		case less(x, y) == min:
			return x
		}
		return y
	}
	switch kind {
	case "add":
		return func(x, y float64) float64 { return x + y }
	case "mul":
		return func(x, y float64) float64 { return x * y }
	case "minnumf":
		return func(x, y float64) float64 { return pick(x, y, true, false) }
	case "maxnumf":
		return func(x, y float64) float64 { return pick(x, y, false, false) }
	case "minimumf":
		return func(x, y float64) float64 { return pick(x, y, true, true) }
	}
	return func(x, y float64) float64 { return pick(x, y, false, true) }
}

// intCombiner combines integers of width w held as lanes hold them
// (sign-extended; i1 as 0 or 1).
func intCombiner(kind string, w int) func(x, y int64) int64 {
	signed := func(v int64) int64 {
		if w == 1 {
			return -v
		}
		return v
	}
	unsigned := func(v int64) uint64 { return uint64(v) & (1<<w - 1) }
	if w == 64 {
		unsigned = func(v int64) uint64 { return uint64(v) }
	}
	switch kind {
	case "add":
		return func(x, y int64) int64 { return x + y }
	case "mul":
		return func(x, y int64) int64 { return x * y }
	case "and":
		return func(x, y int64) int64 { return x & y }
	case "or":
		return func(x, y int64) int64 { return x | y }
	case "xor":
		return func(x, y int64) int64 { return x ^ y }
	case "minsi":
		return func(x, y int64) int64 { return pickInt(signed(x) <= signed(y), x, y) }
	case "maxsi":
		return func(x, y int64) int64 { return pickInt(signed(x) >= signed(y), x, y) }
	case "minui":
		return func(x, y int64) int64 { return pickInt(unsigned(x) <= unsigned(y), x, y) }
	case "maxui":
		return func(x, y int64) int64 { return pickInt(unsigned(x) >= unsigned(y), x, y) }
	}
	panic(fmt.Sprintf("emu: reduction %q on integers", kind))
}

func pickInt(first bool, x, y int64) int64 {
	if first {
		return x
	}
	return y
}
