package emu

import (
	"github.com/tmac-dev/tmac/dialects/nvvm"
	"github.com/tmac-dev/tmac/ir"
)

// nvvm.mma.sync of f16 fragments, shapes m16n8k16 and m16n8k8, with f32
// or f16 accumulators: a collective of the whole warp, the fragments laid
// out over the lanes as the PTX ISA's mma.m16n8k16 and mma.m16n8k8
// fragment figures say (lane l: group g = l/4, thread t = l%4). Each
// element of D is C plus the sum of the products in double precision
// (f16 products are exact), rounded once to the accumulator type; the GPU
// adds them in f32 in an order PTX leaves open, which can differ by a few
// ulp (integer-valued data gives the same bits). The other types and
// shapes are reported at the op.

// mmaLane is one lane's fragments: A, B and C elements in register order.
type mmaLane struct{ a, b, c []float64 }

func init() {
	register(prepareMMA, nvvm.MmaSync)
}

func prepareMMA(k *kernel, op *ir.Operation) runFunc {
	m := nvvm.MmaSyncOp{Op: op}
	shape := nvvm.ShapeOf(m.Shape())
	aType := nvvm.EnumValue(m.MultiplicandAPtxType())
	supported := aType == "f16" && shape.M == 16 && shape.N == 8 && (shape.K == 16 || shape.K == 8)
	a, b, c := k.slots(m.OperandA()), k.slots(m.OperandB()), k.slots(m.OperandC())
	f32Result := nvvm.InferMMAType(m.Res().Type(), true) == "f32"
	kdim := int(shape.K)
	key := op.Name()
	return func(t *thread, in *instr) {
		if !supported {
			t.failf(in.op, "'%s' of %s m%dn%dk%d is not emulated (the emulator runs f16 m16n8k16 and m16n8k8)", in.op.Name(), aType, shape.M, shape.N, shape.K)
		}
		lane := mmaLane{a: t.floatLanes(a), b: t.floatLanes(b), c: t.floatLanes(c)}
		t.set(in, 0, t.warpCollective(in.op, key, 0xffffffff, lane, func(t *thread, w *warpColl) [32]any {
			return mmaF16(w, kdim, f32Result)
		}))
	}
}

// floatLanes are the float elements of the values in slots, in order
// (a vector<2xf16> register gives two).
func (t *thread) floatLanes(slots []int) []float64 {
	var out []float64
	for _, s := range slots {
		out = append(out, asVec(t.vals[s]).f...)
	}
	return out
}

// mmaF16 computes D = A·B + C for the 32 lanes of w: A is 16 x kdim, B
// kdim x 8, C and D 16 x 8.
func mmaF16(w *warpColl, kdim int, f32Result bool) [32]any {
	var A [16][16]float64
	var B [16][8]float64
	var C [16][8]float64
	for l := 0; l < 32; l++ {
		g, tq := l/4, l%4
		x := w.in[l].(mmaLane)
		for i, v := range x.a {
			A[g+8*((i>>1)&1)][tq*2+(i&1)+8*(i>>2)] = v
		}
		for i, v := range x.b {
			B[tq*2+(i&1)+8*(i>>1)][g] = v
		}
		for i, v := range x.c {
			C[g+8*(i>>1)][tq*2+(i&1)] = v
		}
	}
	var out [32]any
	for l := 0; l < 32; l++ {
		g, tq := l/4, l%4
		d := make([]float64, 4)
		for i := range d {
			r, c := g+8*(i>>1), tq*2+(i&1)
			sum := C[r][c]
			for kk := 0; kk < kdim; kk++ {
				sum += A[r][kk] * B[kk][c]
			}
			if f32Result {
				d[i] = float64(float32(sum))
			} else {
				d[i] = round(sum, ir.F16T)
			}
		}
		if f32Result {
			out[l] = []any{d[0], d[1], d[2], d[3]}
		} else {
			out[l] = []any{vec{f: d[:2]}, vec{f: d[2:]}}
		}
	}
	return out
}
