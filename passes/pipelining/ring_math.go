package pipelining

import (
	"github.com/tmac-dev/tmac/dialects/arith"
	"github.com/tmac-dev/tmac/ir"
)

// Ring arithmetic on 32 bits.
//
// A ring position g has slot g mod N and round g / N. On index (i64) a
// division by a constant N that is not a power of two becomes mul.hi.u64,
// which the GPU computes in several dependent instructions, and the
// pipelines compute slots and rounds every K step, on the path from one
// wgmma group to the next and from a slot's release to its refill. On the
// H200 (2026-11-28, scripts/gpu-div32.sh, docs/bench/ab-2026-11-28-h200-
// ring-div32.md) dividing on i32 took 16-22% off the cooperative 128 x 64
// kernel at 7 and 9 stages, 4-6% off 3-stage kernels at 4096^3 and 3% off
// the 12-stage 64 x 64 tiles kernel (8 stages, a power of two: no change;
// 7 and 9 stay 14% slower than 8). So where the pass knows the position fits, it divides on
// i32 (mul.hi.u32: one instruction): positions are split into the tile's
// base (divided once per tile, on index, before the K loop) and j + d
// within the tile, j below the loop's static trip count. Powers of two,
// and loops without a static trip count, keep the index arithmetic (an
// and and a shift for powers of two; exact for any position otherwise).

// smallLimit bounds the values divModSmall divides: they must be below it.
const smallLimit = 1 << 31

// isPow2 reports whether n is a power of two.
func isPow2(n int64) bool { return n > 0 && n&(n-1) == 0 }

// divModSmall returns x / n and x mod n for an index x known to be in
// [0, 2^31), computed on i32.
func (b tb) divModSmall(x ir.Value, n int64) (q, r ir.Value) {
	x32 := b.op(arith.IndexCastui, []ir.Value{x}, []ir.Type{ir.I32}).Result(0)
	c := b.i32(n)
	toIndex := func(v ir.Value) ir.Value {
		return b.op(arith.IndexCastui, []ir.Value{v}, []ir.Type{ir.Index}).Result(0)
	}
	return toIndex(b.bin(arith.Divui, x32, c)), toIndex(b.bin(arith.Remui, x32, c))
}

// narrowRing returns the slot and the round (index values) of ring position
// base + j + d in a ring of n slots, computed on i32, where j is the
// normalised loop's index (below the static trip count; or a position
// known to be below it, with d = 0) and base (nil for
// none) the tile's first position; ok is false where the index arithmetic
// stays: n a power of two, no static trip count, or positions within a
// tile that could pass 2^31.
func (p *pipelinedLoop) narrowRing(b tb, base, j ir.Value, d, n int64) (slot, round ir.Value, ok bool) {
	if isPow2(n) || p.tripC < 0 || d < 0 || p.tripC+d+n >= smallLimit {
		return nil, nil, false
	}
	x := j
	if d != 0 {
		x = b.bin(arith.Addi, x, b.idx(d))
	}
	var bq ir.Value
	if base != nil {
		var br ir.Value
		bq, br = p.baseDivMod(base, n)
		x = b.bin(arith.Addi, br, x) // below n + trip + d
	}
	q, r := b.divModSmall(x, n)
	if bq != nil {
		q = b.bin(arith.Addi, bq, q)
	}
	return r, q, true
}

// baseDivMod returns base / n and base mod n on index, built once per base
// right after its definition (once per tile, outside the K loop).
func (p *pipelinedLoop) baseDivMod(base ir.Value, n int64) (q, r ir.Value) {
	key := ringKey{base, n}
	if v, ok := p.baseRing[key]; ok {
		return v[0], v[1]
	}
	b := newTB(base.Loc())
	if def := base.DefiningOp(); def != nil {
		b.SetInsertionPointAfter(def)
	} else {
		b.SetInsertionPointToStart(base.ParentBlock())
	}
	q, r = b.bin(arith.Divui, base, b.idx(n)), b.bin(arith.Remui, base, b.idx(n))
	if p.baseRing == nil {
		p.baseRing = map[ringKey][2]ir.Value{}
	}
	p.baseRing[key] = [2]ir.Value{q, r}
	return q, r
}

// ringKey names a base's division by a ring size.
type ringKey struct {
	base ir.Value
	n    int64
}

// roundOf returns ring position g's round, g / N: the one normalise
// computed on i32, or the index division of g.
func (p *pipelinedLoop) roundOf(b tb, g ir.Value) ir.Value {
	if p.round != nil {
		return p.round
	}
	return b.bin(arith.Divui, g, b.idx(p.n))
}

// prevSlot returns the slot before slot in a ring of n: (slot + n-1) mod n
// without dividing where n is not a power of two.
func (b tb) prevSlot(slot, g ir.Value, n int64) ir.Value {
	if isPow2(n) {
		return b.bin(arith.Remui, b.bin(arith.Addi, g, b.idx(n-1)), b.idx(n))
	}
	wrap := b.cmp(arith.CmpIEq, slot, b.idx(0))
	return b.op(arith.Select, []ir.Value{wrap, b.idx(n - 1), b.bin(arith.Subi, slot, b.idx(1))}, []ir.Type{ir.Index}).Result(0)
}
