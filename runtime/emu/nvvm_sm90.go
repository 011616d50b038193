package emu

import (
	"math"
	"math/bits"

	"github.com/tmac-dev/tmac/dialects/nvvm"
	"github.com/tmac-dev/tmac/ir"
)

// The warp reductions and matches, bar.warp.sync (warp collectives
// through warp.go: they wait for their member mask and order the lanes'
// memory accesses as a shuffle does), rcp.approx.ftz.f, the integer dot
// products and grid dependency control. st.bulk (sm_100) is not emulated.

func init() {
	register(func(k *kernel, op *ir.Operation) runFunc {
		r := nvvm.ReduxSyncOp{Op: op}
		val, mask := k.slot(r.Val()), k.slot(r.MaskAndClamp())
		kind := nvvm.EnumValue(r.Kind())
		return func(t *thread, in *instr) {
			if kind == "fmin" || kind == "fmax" {
				t.failf(in.op, "'%s' of kind '%s' is not emulated: f32 warp reductions need sm_100a", in.op.Name(), kind)
			}
			t.set(in, 0, t.warpCollective(in.op, in.op.Name()+" "+kind, uint32(t.int(in, mask)), t.int(in, val), redux))
		}
	}, nvvm.ReduxSync)
	register(func(k *kernel, op *ir.Operation) runFunc {
		m := nvvm.MatchSyncOp{Op: op}
		mask, val := k.slot(m.ThreadMask()), k.slot(m.Val())
		key := op.Name() + " " + nvvm.EnumValue(m.Kind()) + " " + m.Val().Type().String()
		return func(t *thread, in *instr) {
			t.set(in, 0, t.warpCollective(in.op, key, uint32(t.int(in, mask)), t.int(in, val), match))
		}
	}, nvvm.MatchSync)
	register(func(k *kernel, op *ir.Operation) runFunc {
		mask := k.slot(nvvm.BarWarpSyncOp{Op: op}.Mask())
		return func(t *thread, in *instr) {
			t.warpCollective(in.op, in.op.Name(), uint32(t.int(in, mask)), nil, func(*thread, *warpColl) [32]any { return [32]any{} })
		}
	}, nvvm.BarWarpSync)
	register(func(k *kernel, op *ir.Operation) runFunc {
		arg := k.slot(nvvm.RcpApproxFtzFOp{Op: op}.Arg())
		return func(t *thread, in *instr) {
			x, ok := t.vals[arg].(float64)
			if !ok {
				t.failf(in.op, "operand 0 is not a float value (%T)", t.vals[arg])
			}
			t.set(in, 0, rcpApproxFtz(x))
		}
	}, nvvm.RcpApproxFtzF)
	register(prepareDotAccumulate, nvvm.DotAccumulate4way, nvvm.DotAccumulate2way)
	// Without programmatic dependent launch every grid starts after the
	// previous one has finished: there is nothing to wait for and no
	// dependent grid to release early.
	register(direct(func(*thread, *instr) {}), nvvm.Griddepcontrol)
}

// redux: the 32-bit reduction of the arrived lanes' values (add wraps;
// min/max compare signed, umin/umax unsigned); every lane gets it.
func redux(t *thread, w *warpColl) [32]any {
	kind := nvvm.EnumValue(nvvm.ReduxSyncOp{Op: w.op}.Kind())
	var acc uint32
	first := true
	for l := 0; l < 32; l++ {
		if w.arrived&(1<<l) == 0 {
			continue
		}
		x := uint32(w.in[l].(int64))
		if first {
			acc, first = x, false
			continue
		}
		switch kind {
		case "add":
			acc += x
		case "and":
			acc &= x
		case "or":
			acc |= x
		case "xor":
			acc ^= x
		case "max":
			acc = uint32(max(int32(acc), int32(x)))
		case "min":
			acc = uint32(min(int32(acc), int32(x)))
		case "umax":
			acc = max(acc, x)
		case "umin":
			acc = min(acc, x)
		default:
			t.failf(w.op, "redux.sync kind %q is not emulated", kind)
		}
	}
	var out [32]any
	for l := range out {
		out[l] = int64(int32(acc))
	}
	return out
}

// match: for `any`, each lane gets the mask of the arrived lanes holding
// its value; for `all`, every lane gets the member mask and true if all
// arrived lanes hold the same value, else 0 and false.
func match(t *thread, w *warpColl) [32]any {
	var out [32]any
	if nvvm.EnumValue(nvvm.MatchSyncOp{Op: w.op}.Kind()) == "all" {
		first := w.in[bits.TrailingZeros32(w.arrived)].(int64)
		same := true
		for l := 0; l < 32; l++ {
			if w.arrived&(1<<l) != 0 && w.in[l].(int64) != first {
				same = false
			}
		}
		r := []any{int64(0), int64(0)}
		if same {
			r = []any{int64(int32(w.mask)), int64(1)}
		}
		for l := range out {
			out[l] = r
		}
		return out
	}
	for l := 0; l < 32; l++ {
		if w.arrived&(1<<l) == 0 {
			continue
		}
		var m uint32
		for j := 0; j < 32; j++ {
			if w.arrived&(1<<j) != 0 && w.in[j].(int64) == w.in[l].(int64) {
				m |= 1 << j
			}
		}
		out[l] = int64(int32(m))
	}
	return out
}

// rcpApproxFtz is the reciprocal of x rounded to f32 with subnormal inputs
// and results flushed to zero of their sign. PTX documents rcp.approx.f32
// as within 1 ulp of this; the emulator takes the correctly rounded value.
func rcpApproxFtz(x float64) float64 {
	ftz := func(v float32) float32 {
		if v != 0 && math.Abs(float64(v)) < 0x1p-126 {
			return float32(math.Copysign(0, float64(v)))
		}
		return v
	}
	return float64(ftz(1 / ftz(float32(x))))
}

// prepareDotAccumulate: c plus the products of the lanes of a and b
// (4way: the four bytes; 2way: a's two halves with b's bytes 0-1, or 2-3
// with b_hi), each lane signed or unsigned as a_type and b_type say,
// wrapped to 32 bits as dp4a and dp2a do.
func prepareDotAccumulate(k *kernel, op *ir.Operation) runFunc {
	a, b, c := k.slot(op.Operand(0)), k.slot(op.Operand(1)), k.slot(op.Operand(2))
	aSigned := nvvm.EnumOf(op, "a_type") == "signed"
	bSigned := nvvm.EnumOf(op, "b_type") == "signed"
	aBits := 8
	bFirst := 0
	if op.Name() == nvvm.DotAccumulate2way {
		aBits = 16
		if nvvm.IsTrue(op, "b_hi") {
			bFirst = 2
		}
	}
	lane := func(v int64, w int, signed bool) int64 {
		if signed {
			return v
		}
		return int64(uint64(v) & (1<<w - 1))
	}
	return func(t *thread, in *instr) {
		av, aok := t.vals[a].(vec)
		bv, bok := t.vals[b].(vec)
		if !aok || !bok {
			t.failf(in.op, "the operands are not integer vectors (%T, %T)", t.vals[a], t.vals[b])
		}
		sum := t.int(in, c)
		for i, x := range av.i {
			sum += lane(x, aBits, aSigned) * lane(bv.i[bFirst+i], 8, bSigned)
		}
		t.set(in, 0, int64(int32(sum)))
	}
}
