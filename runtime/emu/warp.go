package emu

import (
	"fmt"
	"math/bits"

	"github.com/tmac-dev/tmac/dialects/nvvm"
	"github.com/tmac-dev/tmac/ir"
)

// Warp collectives: elect.sync, shfl.sync, vote.sync. A thread outside
// its own member mask is undefined on the GPU and an error here.

// warpColl is a warp collective in progress: the lanes of one member
// mask of one warp that have arrived.
type warpColl struct {
	key     string // op name and qualifiers ("nvvm.shfl.sync bfly"): lanes join only the same kind
	mask    uint32
	arrived uint32
	op      *ir.Operation // the first lane's (the others' may sit elsewhere)
	done    bool
	in      [32]any // each arrived lane's operands
}

func init() {
	register(func(k *kernel, op *ir.Operation) runFunc {
		membermask := k.slot(nvvm.ElectSyncOp{Op: op}.Membermask())
		key := op.Name()
		return func(t *thread, in *instr) {
			mask := uint32(0xffffffff)
			if membermask >= 0 {
				mask = uint32(t.int(in, membermask))
			}
			t.set(in, 0, t.warpCollective(in.op, key, mask, nil, electLeader))
		}
	}, nvvm.ElectSync)
	register(func(k *kernel, op *ir.Operation) runFunc {
		v := nvvm.VoteSyncOp{Op: op}
		mask, pred := k.slot(v.Mask()), k.slot(v.Pred())
		key := op.Name() + " " + nvvm.EnumValue(v.Kind())
		return func(t *thread, in *instr) {
			t.set(in, 0, t.warpCollective(in.op, key, uint32(t.int(in, mask)), t.int(in, pred), vote))
		}
	}, nvvm.VoteSync)
	register(func(k *kernel, op *ir.Operation) runFunc {
		s := nvvm.ShflSyncOp{Op: op}
		threadMask, val, offset, maskAndClamp := k.slot(s.ThreadMask()), k.slot(s.Val()), k.slot(s.Offset()), k.slot(s.MaskAndClamp())
		key := op.Name() + " " + nvvm.EnumValue(s.Kind())
		if s.ReturnValueAndIsValid() != nil {
			key += " with the validity predicate"
		}
		return func(t *thread, in *instr) {
			mask := uint32(t.int(in, threadMask))
			args := shflArgs{val: t.vals[val], offset: t.int(in, offset), clamp: t.int(in, maskAndClamp)}
			t.set(in, 0, t.warpCollective(in.op, key, mask, args, shfl))
		}
	}, nvvm.ShflSync)
}

// warpCollective makes t arrive with its operands v at the collective of
// its warp and member mask (key: the op's name and qualifiers), and waits
// for the mask's other non-exited lanes (which may execute the same kind
// of instruction elsewhere: PTX asks for the same qualifiers and mask, not
// the same instruction); then compute gives every arrived lane its
// result. A lane whose mask's lanes are blocked in another collective that
// waits for this lane is an error at once (it can only deadlock); other
// mismatches end in a deadlock report.
func (t *thread) warpCollective(op *ir.Operation, key string, mask uint32, v any, compute func(t *thread, w *warpColl) [32]any) any {
	warp, lane := t.linear/32, t.linear%32
	if mask&(1<<lane) == 0 {
		t.failf(op, "thread %d (lane %d) executes it outside its member mask %#x", t.linear, lane, mask)
	}
	c := t.c
	var w *warpColl
	for _, x := range c.warps[warp] {
		switch {
		case x.mask == mask && x.key == key:
			w = x
		case !x.done && x.mask == mask:
			// The lanes of one mask meet in different instructions (or
			// qualifiers: a shuffle's mode).
			t.fail(&Error{Op: op, Msg: fmt.Sprintf("lane %d of warp %d executes '%s' while lanes %#x of its member mask %#x wait for it in '%s': the lanes of a mask must execute the same warp-synchronous instruction with the same qualifiers (on the GPU this hangs or is undefined)", lane, warp, key, x.arrived, mask, x.key),
				Notes: []Note{note(x.op.Loc, "lanes %#x wait here ('%s', member mask %#x)", x.arrived, x.op.Name(), x.mask)}})
		case !x.done && x.mask&(1<<lane) != 0 && x.arrived&mask != 0:
			// x waits for this lane, and this lane's collective waits for
			// lanes blocked in x: neither can complete.
			t.fail(&Error{Op: op, Msg: fmt.Sprintf("lane %d of warp %d arrives with member mask %#x while lanes %#x wait for it elsewhere with mask %#x: the lanes of a mask must execute the same warp-synchronous instruction with the same mask (on the GPU this hangs or is undefined)", lane, warp, mask, x.arrived, x.mask),
				Notes: []Note{note(x.op.Loc, "lanes %#x wait here ('%s', member mask %#x)", x.arrived, x.op.Name(), x.mask)}})
		}
	}
	if w == nil {
		w = &warpColl{key: key, mask: mask, op: op}
		c.warps[warp] = append(c.warps[warp], w)
	}
	w.arrived |= 1 << lane
	w.in[lane] = v
	// waiting: the lanes of the mask that have neither arrived nor exited.
	waiting := func() uint32 {
		var m uint32
		for l := 0; l < 32; l++ {
			i := warp*32 + l
			if w.mask&(1<<l) != 0 && w.arrived&(1<<l) == 0 && i < len(c.threads) && c.threads[i].state != exited {
				m |= 1 << l
			}
		}
		return m
	}
	t.block(op, func() bool { return w.done || waiting() == 0 }, func() string {
		return fmt.Sprintf("%s: lanes %#x of warp %d's member mask %#x have not arrived", op.Name(), waiting(), warp, w.mask)
	})
	if !w.done {
		// The first lane to see the mask complete computes for all.
		out := compute(t, w)
		for l := 0; l < 32; l++ {
			if w.arrived&(1<<l) != 0 {
				c.threads[warp*32+l].warpResult = out[l]
			}
		}
		if r := t.b.race; r != nil {
			r.warpSync(c, warp, w.arrived)
		}
		w.done = true
		list := c.warps[warp]
		for i, x := range list {
			if x == w {
				c.warps[warp] = append(list[:i], list[i+1:]...)
				break
			}
		}
	}
	return t.warpResult
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// electLeader: the arrived lane with the lowest id is elected.
func electLeader(t *thread, w *warpColl) [32]any {
	var out [32]any
	leader := bits.TrailingZeros32(w.arrived)
	for l := range out {
		out[l] = boolInt(l == leader)
	}
	return out
}

// vote: any, all, uni (i1) or ballot (i32) of the arrived lanes'
// predicates.
func vote(t *thread, w *warpColl) [32]any {
	var ballot uint32
	for l := 0; l < 32; l++ {
		if w.arrived&(1<<l) != 0 && w.in[l].(int64)&1 != 0 {
			ballot |= 1 << l
		}
	}
	var r int64
	switch k := nvvm.EnumValue(nvvm.VoteSyncOp{Op: w.op}.Kind()); k {
	case "any":
		r = boolInt(ballot != 0)
	case "all":
		r = boolInt(ballot == w.arrived)
	case "uni":
		r = boolInt(ballot == 0 || ballot == w.arrived)
	case "ballot":
		r = int64(int32(ballot))
	default:
		t.failf(w.op, "vote.sync kind %q is not emulated", k)
	}
	var out [32]any
	for l := range out {
		out[l] = r
	}
	return out
}

type shflArgs struct {
	val           any
	offset, clamp int64
}

// shfl follows the PTX shfl.sync definition: the clamp operand holds the
// clamp value (bits 0-4) and the segment mask (bits 8-12); a lane whose
// source is outside its segment keeps its own value and gets a false
// predicate. Reading a lane that did not take part, or lanes giving
// different clamp operands (different widths), is undefined on the GPU
// and an error here.
func shfl(t *thread, w *warpColl) [32]any {
	s := nvvm.ShflSyncOp{Op: w.op}
	return shuffleLanes(t, w, nvvm.EnumValue(s.Kind()), s.ReturnValueAndIsValid() != nil)
}

// shuffleLanes computes a shfl.sync of mode kind (bfly, up, down, idx)
// for the lanes of w; withPred: each lane gets its value and predicate.
func shuffleLanes(t *thread, w *warpColl, kind string, withPred bool) [32]any {
	var out [32]any
	first := bits.TrailingZeros32(w.arrived)
	for lane := 0; lane < 32; lane++ {
		if w.arrived&(1<<lane) != 0 {
			if a, b := w.in[first].(shflArgs).clamp, w.in[lane].(shflArgs).clamp; a != b {
				t.failf(w.op, "lanes %d and %d of warp %d shuffle with different widths (clamp and segment mask operands %#x and %#x): every lane of a shuffle must give the same width", first, lane, t.linear/32, a, b)
			}
		}
	}
	for lane := 0; lane < 32; lane++ {
		if w.arrived&(1<<lane) == 0 {
			continue
		}
		a := w.in[lane].(shflArgs)
		b := int(a.offset & 0x1f) // PTX reads the offset's low five bits
		cval := int(a.clamp & 0x1f)
		segmask := int(a.clamp>>8) & 0x1f
		maxLane := (lane & segmask) | (cval &^ segmask)
		minLane := lane & segmask
		var j int
		var ok bool
		switch kind {
		case "up":
			j = lane - b
			ok = j >= maxLane
		case "down":
			j = lane + b
			ok = j <= maxLane
		case "bfly":
			j = lane ^ b
			ok = j <= maxLane
		case "idx":
			j = minLane | (b & 0x1f &^ segmask)
			ok = j <= maxLane
		default:
			t.failf(w.op, "shfl.sync kind %q is not emulated", kind)
		}
		if !ok {
			j = lane
		}
		if j < 0 || j > 31 || w.arrived&(1<<j) == 0 {
			t.failf(w.op, "lane %d of warp %d reads lane %d, which does not take part in the shuffle (member mask %#x, arrived %#x): the value is undefined on the GPU", lane, t.linear/32, j, w.mask, w.arrived)
		}
		v := w.in[j].(shflArgs).val
		if withPred {
			out[lane] = []any{v, boolInt(ok)}
		} else {
			out[lane] = v
		}
	}
	return out
}
