package codegen

import (
	lir "github.com/llir/llvm/ir"
	"github.com/llir/llvm/ir/constant"
	"github.com/llir/llvm/ir/enum"
	"github.com/llir/llvm/ir/types"
	"github.com/llir/llvm/ir/value"

	"github.com/tmac-dev/tmac/dialects/gpu"
	"github.com/tmac-dev/tmac/ir"
)

// The gpu dialect's warp and block collectives: gpu.shuffle, gpu.rotate,
// gpu.subgroup_reduce, gpu.subgroup_broadcast (shfl.sync, redux.sync,
// activemask) and gpu.all_reduce (shuffles, a static shared buffer and
// two block barriers, as upstream's gpu-to-nvvm). What each computes, and
// the order in which a floating-point reduction combines the lanes, is on
// the op's definition (dialects/gpu/warp.go); the emulator computes the
// same.

func init() {
	Register(lowerGPUShuffle, gpu.Shuffle)
	Register(lowerGPURotate, gpu.Rotate)
	Register(lowerGPUSubgroupReduce, gpu.SubgroupReduce)
	Register(lowerGPUAllReduce, gpu.AllReduce)
	Register(lowerGPUSubgroupBroadcast, gpu.SubgroupBroadcast)
	Register(func(fe *FuncEmitter, op *ir.Operation) {
		Fail(op, "'gpu.yield' outside of a gpu.all_reduce region cannot be compiled")
	}, gpu.Yield)
}

// bitsOf is the size in bits of a scalar or vector LLVM type (0 for
// others).
func bitsOf(t types.Type) int {
	switch t := t.(type) {
	case *types.IntType:
		return int(t.BitSize)
	case *types.VectorType:
		return int(t.Len) * bitsOf(t.ElemType)
	}
	return floatBitsOf(t)
}

// shfl shuffles x, a value of any scalar or vector type, with
// shfl.sync.<kind> (member mask, offset b, clamp c): through one 32-bit
// shuffle per 32 bits of x. It returns the value and the predicate (the
// same for every word).
func (fe *FuncEmitter) shfl(op *ir.Operation, kind string, x, mask, b, c value.Value) (value.Value, value.Value) {
	t := x.Type()
	n := bitsOf(t)
	if n == 0 {
		Fail(op, "'%s' on '%s' cannot be compiled: only integers, floats and vectors of them move between lanes", op.Name(), t)
	}
	bld := fe.B()
	words := (n + 31) / 32
	wide := types.NewInt(uint64(32 * words))
	var bits value.Value = x
	if _, isInt := t.(*types.IntType); !isInt {
		bits = bld.NewBitCast(x, types.NewInt(uint64(n)))
	}
	if n < 32*words {
		bits = bld.NewZExt(bits, wide)
	}
	pair := types.NewStruct(types.I32, types.I1)
	var out, valid value.Value
	for w := 0; w < words; w++ {
		word := bits
		if words > 1 {
			if w > 0 {
				word = bld.NewLShr(bits, constant.NewInt(wide, int64(32*w)))
			}
			word = bld.NewTrunc(word, types.I32)
		}
		r := fe.CallIntrinsic("llvm.nvvm.shfl.sync."+kind+".i32p", pair, mask, word, b, c)
		v := value.Value(bld.NewExtractValue(r, 0))
		if w == 0 {
			valid = bld.NewExtractValue(r, 1)
			out = v
			if words > 1 {
				out = bld.NewZExt(v, wide)
			}
			continue
		}
		out = bld.NewOr(out, bld.NewShl(bld.NewZExt(v, wide), constant.NewInt(wide, int64(32*w))))
	}
	if n < 32*words {
		out = bld.NewTrunc(out, types.NewInt(uint64(n)))
	}
	if _, isInt := t.(*types.IntType); !isInt {
		out = bld.NewBitCast(out, t)
	}
	return out, valid
}

// widthMask is the member mask of the first width lanes, 0xffffffff >>
// (32 - width); a constant width outside [1, 32] is an error.
func (fe *FuncEmitter) widthMask(op *ir.Operation, width value.Value) value.Value {
	if w, ok := constInt(width); ok {
		if w < 1 || w > 32 {
			Fail(op, "'%s' with width %d cannot be compiled: the width must be between 1 and the 32 lanes of a warp", op.Name(), w)
		}
		return I32(int64(int32(uint32(0xffffffff) >> (32 - w))))
	}
	return fe.B().NewLShr(I32(-1), fe.B().NewSub(I32(32), width))
}

// minusOne is v - 1 on i32, folding constants.
func (fe *FuncEmitter) minusOne(v value.Value) value.Value {
	if c, ok := constInt(v); ok {
		return I32(c - 1)
	}
	return fe.B().NewSub(v, I32(1))
}

var shflKinds = map[string]string{"xor": "bfly", "up": "up", "down": "down", "idx": "idx"}

func lowerGPUShuffle(fe *FuncEmitter, op *ir.Operation) {
	s := gpu.ShuffleOp{Op: op}
	mode := gpu.ShuffleMode.Value(s.Mode())
	width := fe.Val(s.Width())
	mask := fe.widthMask(op, width)
	// The clamp: the last lane of the width; an up shuffle's lower bound, 0.
	clamp := value.Value(I32(0))
	if mode != "up" {
		clamp = fe.minusOne(width)
	}
	v, ok := fe.shfl(op, shflKinds[mode], fe.Val(s.Value()), mask, fe.Val(s.Offset()), clamp)
	fe.SetResults(op, v, ok)
}

func lowerGPURotate(fe *FuncEmitter, op *ir.Operation) {
	r := gpu.RotateOp{Op: op}
	offset, width := constIntAttr(r.Offset()), constIntAttr(r.Width())
	if width > 32 {
		Fail(op, "'gpu.rotate' with width %d cannot be compiled: the width must be at most the 32 lanes of a warp", width)
	}
	// Lane k < width reads lane (k + offset) mod width (width is a power
	// of two).
	lane := fe.gpuSreg("laneid", 0, 32)
	src := fe.B().NewAnd(fe.B().NewAdd(lane, I32(offset)), I32(width-1))
	v, ok := fe.shfl(op, "idx", fe.Val(r.Value()), fe.widthMask(op, I32(width)), src, I32(width-1))
	fe.SetResults(op, v, ok)
}

func constIntAttr(a ir.Attribute) int64 {
	if ia, ok := a.(*ir.IntegerAttr); ok {
		return ia.Int()
	}
	return 0
}

func lowerGPUSubgroupBroadcast(fe *FuncEmitter, op *ir.Operation) {
	s := gpu.SubgroupBroadcastOp{Op: op}
	switch t := elemType(s.Src().Type()); {
	case ir.IsInteger(t), ir.IsIndex(t), ir.IsFloat(t):
	default:
		Fail(op, "'gpu.subgroup_broadcast' of '%s' cannot be compiled: only integers, index, floats and vectors of them move between lanes", s.Src().Type())
	}
	active := fe.CallIntrinsic("llvm.nvvm.activemask", types.I32)
	var lane value.Value
	if s.Lane() != nil {
		lane = fe.Val(s.Lane())
	} else {
		// The lowest active lane.
		lane = fe.callOverloaded("llvm.cttz", nil, active, constant.False)
	}
	v, _ := fe.shfl(op, "idx", fe.Val(s.Src()), active, lane, I32(31))
	fe.Set(s.Result(), v)
}

// A reducer combines two values of a reduction (own value first); it
// returns the combined value.
type reducer func(x, y value.Value) value.Value

// kindReducer returns the combination of a reduction kind on values of
// IR type t (a scalar or vector).
func (fe *FuncEmitter) kindReducer(op *ir.Operation, kind string, t ir.Type) reducer {
	if k, isFloat := floatKind(t); isFloat {
		return func(x, y value.Value) value.Value {
			if k == ir.TF32 || isFP8(k) {
				// Compute in f32 and round back, as the arith lowering does.
				return fe.fromF32(fe.floatReduce(kind, fe.toF32(x, k), fe.toF32(y, k)), k)
			}
			return fe.floatReduce(kind, x, y)
		}
	}
	return func(x, y value.Value) value.Value {
		switch kind {
		case "add", "mul", "and", "or", "xor", "minsi", "minui", "maxsi", "maxui":
			return fe.combine(kind, x, y, nil)
		}
		Fail(op, "'%s' with reduction `%s` cannot be compiled", op.Name(), kind)
		return nil
	}
}

// floatReduce combines two floats: IEEE addition and multiplication;
// minnumf and maxnumf as IEEE 754-2019 minimumNumber and maximumNumber
// (a NaN operand is ignored, -0 < +0: PTX min/max.f32), minimumf and
// maximumf propagating NaN (min/max.NaN).
func (fe *FuncEmitter) floatReduce(kind string, x, y value.Value) value.Value {
	b := fe.B()
	switch kind {
	case "add":
		return b.NewFAdd(x, y)
	case "mul":
		return b.NewFMul(x, y)
	case "minnumf":
		return fe.callOverloaded("llvm.minimumnum", nil, x, y)
	case "maxnumf":
		return fe.callOverloaded("llvm.maximumnum", nil, x, y)
	case "minimumf":
		return fe.callOverloaded("llvm.minimum", nil, x, y)
	}
	return fe.callOverloaded("llvm.maximum", nil, x, y)
}

// reduxOps are the 32-bit integer reductions of redux.sync (sm_80+), by
// reduction kind, and whether narrower operands widen signed.
var reduxOps = map[string]reduxOp{
	"add": {"add", false}, "and": {"and", false}, "or": {"or", false}, "xor": {"xor", false},
	"minsi": {"min", true}, "maxsi": {"max", true}, "minui": {"umin", false}, "maxui": {"umax", false},
}

type reduxOp struct {
	name   string
	signed bool
}

// reduxFor returns the redux.sync of a reduction kind on values of type
// t (a scalar or vector): for the integer kinds on integers of 32 bits or
// fewer, where it is exact (integer reduction is associative).
func reduxFor(kind string, t ir.Type) (reduxOp, bool) {
	r, ok := reduxOps[kind]
	e := gpu.ReduceElem(t)
	return r, ok && ir.IsSignlessInteger(e) && ir.BitWidth(e) <= 32
}

// redux reduces x (element by element) over the lanes of mask with
// redux.sync, narrower integers widened to 32 bits and back.
func (fe *FuncEmitter) redux(r reduxOp, x, mask value.Value) value.Value {
	return fe.mapScalar(x, elemLLType(x.Type()), func(v value.Value) value.Value {
		b := fe.B()
		narrow := bitsOf(v.Type()) < 32
		w := v
		switch {
		case narrow && r.signed:
			w = b.NewSExt(v, types.I32)
		case narrow:
			w = b.NewZExt(v, types.I32)
		}
		s := value.Value(fe.CallIntrinsic("llvm.nvvm.redux.sync."+r.name, types.I32, w, mask))
		if narrow {
			s = b.NewTrunc(s, v.Type())
		}
		return s
	})
}

func lowerGPUSubgroupReduce(fe *FuncEmitter, op *ir.Operation) {
	r := gpu.SubgroupReduceOp{Op: op}
	kind := gpu.ReduceOp.Value(r.OpAttr())
	size, stride := gpu.ClusterShape(op)
	if size > 32 || size*stride > 32 {
		Fail(op, "'gpu.subgroup_reduce' over clusters of %d lanes %d apart cannot be compiled: a warp of sm_90a has 32 lanes", size, stride)
	}
	x := fe.Val(r.Value())
	t := r.Value().Type()
	if size == 1 {
		fe.Set(r.Result(), x)
		return
	}
	if redux, ok := reduxFor(kind, t); ok && size == 32 {
		fe.Set(r.Result(), fe.redux(redux, x, I32(-1)))
		return
	}
	combine := fe.kindReducer(op, kind, t)
	for s := stride; s < size*stride; s *= 2 {
		other, _ := fe.shfl(op, "bfly", x, I32(-1), I32(s), I32(31))
		x = combine(x, other)
	}
	fe.Set(r.Result(), x)
}

// elemLLType is the element type of a scalar or vector LLVM type.
func elemLLType(t types.Type) types.Type {
	if v, ok := t.(*types.VectorType); ok {
		return v.ElemType
	}
	return t
}

// allReducePrefix names the shared buffers of gpu.all_reduce.
const allReducePrefix = "__tmac_all_reduce"

// lowerGPUAllReduce reduces over the block as upstream's gpu-to-nvvm does
// (and as gpu.all_reduce's definition documents): a butterfly in each
// warp, the warps' values through a shared buffer, a butterfly over them
// in the first warp, the result through the buffer again.
func lowerGPUAllReduce(fe *FuncEmitter, op *ir.Operation) {
	r := gpu.AllReduceOp{Op: op}
	t := r.Value().Type()
	var combine reducer
	kind := gpu.ReduceOp.Value(r.OpAttr())
	if kind != "" {
		combine = fe.kindReducer(op, kind, t)
	} else {
		combine = fe.regionReducer(op, r.Body())
	}
	// reduce reduces x over the first width lanes of the warp (lane 0
	// gets the result): by redux.sync where it is exact, else the
	// butterfly.
	reduce := func(x, width value.Value, full bool) value.Value {
		if rx, ok := reduxFor(kind, t); ok {
			mask := value.Value(I32(-1))
			if !full {
				mask = fe.widthMask(op, width)
			}
			return fe.redux(rx, x, mask)
		}
		return fe.warpReduce(op, x, width, full, combine)
	}
	lt := fe.Type(op, t)
	buf := fe.Mod.NewSharedGlobal(allReducePrefix, types.NewArray(32, lt), 8)

	// The linear thread index and the block size, from the known block
	// size where there is one.
	var lin, size value.Value = I64(0), I64(1)
	for d := 2; d >= 0; d-- {
		dim := "xyz"[d : d+1]
		known := fe.gpuKnownSize("block", d)
		n := fe.gpuDim("ntid."+dim, known, 0)
		lin = fe.Add(fe.Mul(lin, n), fe.gpuID("tid."+dim, known))
		size = fe.Mul(size, n)
	}
	lin32, size32 := fe.trunc32(lin), fe.trunc32(size)
	lane := fe.and32(lin32, 31)
	warp := fe.lshr32(lin32, 5)
	// The threads of this warp: min(32, size - 32*warp).
	width := fe.min32(I32(32), fe.sub32(size32, fe.shl32(warp, 5)))
	full := false
	if n, ok := constInt(size); ok && n%32 == 0 {
		full = true
	}
	v := reduce(fe.Val(r.Value()), width, full)

	// Lane 0 of each warp stores its warp's value.
	fe.ifThen(fe.B().NewICmp(enum.IPredEQ, lane, I32(0)), func() {
		fe.B().NewStore(v, fe.bufSlot(buf, lt, warp))
	})
	fe.gpuBarrier()
	// The first (number of warps) threads reduce the warps' values; thread
	// 0 stores the result (upstream has every one of them store its own
	// lane's value, which differs for a number of warps that is not a
	// power of two).
	warps := fe.lshr32(fe.add32(size32, 31), 5)
	fe.ifThen(fe.B().NewICmp(enum.IPredULT, lin32, warps), func() {
		w := fe.B().NewLoad(lt, fe.bufSlot(buf, lt, lin32))
		total := reduce(w, warps, false)
		fe.ifThen(fe.B().NewICmp(enum.IPredEQ, lin32, I32(0)), func() {
			fe.B().NewStore(total, fe.bufSlot(buf, lt, I32(0)))
		})
	})
	fe.gpuBarrier()
	fe.Set(r.Result(), fe.B().NewLoad(lt, fe.bufSlot(buf, lt, I32(0))))
}

// warpReduce combines x across the first width lanes of the warp by the
// xor butterfly, skipping partners at or beyond width (when full, every
// warp is known to be whole and no partner is skipped); lane 0 ends with
// the reduction of all of them.
func (fe *FuncEmitter) warpReduce(op *ir.Operation, x, width value.Value, full bool, combine reducer) value.Value {
	steps := int64(32)
	if w, ok := constInt(width); ok {
		// Partners at or beyond a known width are never valid.
		steps = w
		full = full || w == 32
	}
	mask, clamp := value.Value(I32(-1)), value.Value(I32(31))
	if !full {
		mask, clamp = fe.widthMask(op, width), fe.minusOne(width)
	}
	for s := int64(1); s < steps; s *= 2 {
		other, valid := fe.shfl(op, "bfly", x, mask, I32(s), clamp)
		if full {
			x = combine(x, other)
			continue
		}
		before := fe.cur
		var combined value.Value
		var after *lir.Block
		fe.ifThen(valid, func() {
			combined = combine(x, other)
			after = fe.cur
		})
		x = newPhi(fe.cur, x.Type(), lir.NewIncoming(combined, after), lir.NewIncoming(x, before))
	}
	return x
}

// ifThen emits `if cond { then() }` and leaves the insertion point after it.
func (fe *FuncEmitter) ifThen(cond value.Value, then func()) {
	thenB := fe.NewBlock("if.then")
	end := fe.NewBlock("if.end")
	fe.cur.NewCondBr(cond, thenB, end)
	fe.cur = thenB
	then()
	fe.cur.NewBr(end)
	fe.cur = end
}

// regionReducer combines two values with gpu.all_reduce's region: its
// one block, emitted again for every combination with the two values as
// its arguments.
func (fe *FuncEmitter) regionReducer(op *ir.Operation, body *ir.Region) reducer {
	if len(body.Blocks()) != 1 {
		Fail(op, "'gpu.all_reduce' with a region of %d blocks cannot be compiled: write the combination in one block (with scf.if for choices)", len(body.Blocks()))
	}
	entry := body.Entry()
	return func(x, y value.Value) value.Value {
		fe.Set(entry.Arg(0), x)
		fe.Set(entry.Arg(1), y)
		return fe.Val(fe.emitNested(entry)[0])
	}
}

// bufSlot is the address of element i (i32) of a shared [32 x t] buffer.
func (fe *FuncEmitter) bufSlot(buf *lir.Global, t types.Type, i value.Value) value.Value {
	return fe.B().NewGetElementPtr(types.NewArray(32, t), buf, I32(0), i)
}

// i32 arithmetic on thread indices, folding constants.

func (fe *FuncEmitter) trunc32(v value.Value) value.Value {
	if c, ok := constInt(v); ok {
		return I32(c)
	}
	return fe.B().NewTrunc(v, types.I32)
}

func (fe *FuncEmitter) i32Op(x, y value.Value, f func(a, b int64) int64, emit func(a, b value.Value) value.Value) value.Value {
	a, aok := constInt(x)
	c, cok := constInt(y)
	if aok && cok {
		return I32(f(a, c))
	}
	return emit(x, y)
}

func (fe *FuncEmitter) and32(x value.Value, m int64) value.Value {
	return fe.i32Op(x, I32(m), func(a, b int64) int64 { return a & b }, func(a, b value.Value) value.Value { return fe.B().NewAnd(a, b) })
}

func (fe *FuncEmitter) lshr32(x value.Value, s int64) value.Value {
	return fe.i32Op(x, I32(s), func(a, b int64) int64 { return int64(uint32(a) >> b) }, func(a, b value.Value) value.Value { return fe.B().NewLShr(a, b) })
}

func (fe *FuncEmitter) shl32(x value.Value, s int64) value.Value {
	return fe.i32Op(x, I32(s), func(a, b int64) int64 { return int64(int32(a << b)) }, func(a, b value.Value) value.Value { return fe.B().NewShl(a, b) })
}

func (fe *FuncEmitter) add32(x value.Value, n int64) value.Value {
	return fe.i32Op(x, I32(n), func(a, b int64) int64 { return int64(int32(a + b)) }, func(a, b value.Value) value.Value { return fe.B().NewAdd(a, b) })
}

func (fe *FuncEmitter) sub32(x, y value.Value) value.Value {
	return fe.i32Op(x, y, func(a, b int64) int64 { return int64(int32(a - b)) }, func(a, b value.Value) value.Value { return fe.B().NewSub(a, b) })
}

func (fe *FuncEmitter) min32(x, y value.Value) value.Value {
	return fe.i32Op(x, y, func(a, b int64) int64 { return min(a, b) }, func(a, b value.Value) value.Value {
		return fe.callOverloaded("llvm.smin", nil, a, b)
	})
}
