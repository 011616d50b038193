package emu

import (
	"fmt"
	"sort"

	"github.com/tmac-dev/tmac/dialects/gpu"
	"github.com/tmac-dev/tmac/dialects/nvvm"
	"github.com/tmac-dev/tmac/ir"
)

// Barrier divergence: every thread of a block must reach the same block
// barrier (gpu.barrier, nvvm.barrier0, nvvm.barrier without a thread
// count) together. On the GPU a barrier that some threads skip (under
// `scf.if %tid == 0`, in a loop whose trip count differs between threads)
// hangs, or releases the threads waiting at it early, pairing them with
// another barrier: compute-sanitizer's synccheck reports it. Here a
// generation of the block barrier is checked when it completes: its
// threads must have arrived at one op, and no thread of the block may
// have exited (a thread exits only at the end of the kernel, so it never
// reaches the barrier). Named barriers with a thread count pair arrivals
// from different ops by design and are not checked; collectives built on
// the block barrier (gpu.all_reduce) check who takes part themselves.

// blockBarrierOps are the ops whose arrivals the divergence check follows.
var blockBarrierOps = map[string]bool{gpu.Barrier: true, nvvm.Barrier0: true, nvvm.Barrier: true}

// barrierArrival is a thread's arrival at the block barrier.
type barrierArrival struct {
	op     *ir.Operation
	thread int
}

// divergence reports a generation of the block barrier that the threads
// of block c did not all reach at one op (nil: they did, or nb is a
// barrier with a thread count). k is the kernel, for the place threads
// exit.
func (c *cta) divergence(nb *namedBarrier, k *kernel) *Error {
	if len(nb.at) == 0 {
		return nil
	}
	type group struct {
		op   *ir.Operation
		tids []int
	}
	var groups []*group
	byOp := map[*ir.Operation]*group{}
	for _, a := range nb.at {
		g := byOp[a.op]
		if g == nil {
			g = &group{op: a.op}
			byOp[a.op] = g
			groups = append(groups, g)
		}
		g.tids = append(g.tids, a.thread)
	}
	for _, g := range groups {
		sort.Ints(g.tids)
	}
	// The smallest group is the odd one out.
	sort.SliceStable(groups, func(i, j int) bool {
		if len(groups[i].tids) != len(groups[j].tids) {
			return len(groups[i].tids) < len(groups[j].tids)
		}
		return groups[i].tids[0] < groups[j].tids[0]
	})
	first := groups[0]
	if len(groups) > 1 {
		var others []int
		var notes []Note
		for _, g := range groups[1:] {
			others = append(others, g.tids...)
			notes = append(notes, note(g.op.Loc, "%s %s here instead", threadList(g.tids), waitVerb(g.tids)))
		}
		sort.Ints(others)
		return &Error{Op: first.op, Notes: notes,
			Msg: fmt.Sprintf("barrier divergence: %s %s at this barrier while %s of the block %s at another one (every thread of the block must reach the same barrier)",
				threadList(first.tids), waitVerb(first.tids), threadList(others), waitVerb(others))}
	}
	var gone []int
	for _, t := range c.threads {
		if t.state == exited {
			gone = append(gone, t.linear)
		}
	}
	if len(gone) == 0 {
		return nil
	}
	end := k.body.instrs[len(k.body.instrs)-1].op
	return &Error{Op: first.op,
		Msg: fmt.Sprintf("barrier divergence: %s %s at this barrier, which %s of the block never %s: %s the end of the kernel (every thread of the block must reach the same barrier)",
			threadList(first.tids), waitVerb(first.tids), threadList(gone), reachVerb(gone), reachedVerb(gone)),
		Notes: []Note{note(end.Loc, "%s exited here", threadList(gone))}}
}

// waitVerb, reachVerb and reachedVerb agree with a thread list.
func waitVerb(ids []int) string    { return plural(ids, "waits", "wait") }
func reachVerb(ids []int) string   { return plural(ids, "reaches", "reach") }
func reachedVerb(ids []int) string { return plural(ids, "it reached", "they reached") }

func plural(ids []int, one, many string) string {
	if len(ids) == 1 {
		return one
	}
	return many
}
