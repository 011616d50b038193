package emu

import (
	"cmp"
	"slices"
	"sort"
	"sync"

	"github.com/tmac-dev/tmac/ir"
)

// Shared-memory bank conflicts of the ordinary loads and stores of a run
// (`tmac run --target=emu --bank-conflicts`): BankCounter observes the
// SharedRead and SharedWrite events, gathers the accesses of one warp's
// execution of an op (the n-th execution of the op by each lane of the
// warp), and counts the wavefronts the warp's request takes on the 32
// banks of 4 bytes: the largest number of distinct 4-byte words any one
// bank is asked for (lanes reading or writing the same word share it).
// The ideal is the request's distinct words over 32, rounded up. That is
// the model of the CUDA programming guide for accesses of up to 16 bytes
// a lane; it counts what the IR asks for, before llc (which keeps one
// vector.store of two bf16 one st.shared.b32, but may merge or split
// others). TMA copies and wgmma operand reads are not generic accesses
// and are not counted.

// BankOpStats sums the warp requests of one op: Requests warp-level
// executions, Wavefronts what they took, Ideal what they would take
// without conflicts.
type BankOpStats struct {
	Op                          *ir.Operation
	Write                       bool
	Requests, Wavefronts, Ideal int64
}

// BankCounter is an observer (Device.Observe) counting bank conflicts per
// op; Stats reads the counts after the run. Safe for the concurrent
// clusters of a launch.
type BankCounter struct {
	mu    sync.Mutex
	count map[laneOp]int64         // executions of an op by one thread
	open  map[warpRequest]*request // warp requests still gathering lanes
	stats map[*ir.Operation]*BankOpStats
	order []*ir.Operation // ops in the order first seen
}

type laneOp struct {
	kernel            string
	cluster, rank, th int
	op                *ir.Operation
}

type warpRequest struct {
	kernel              string
	cluster, rank, warp int
	op                  *ir.Operation
	n                   int64
}

type request struct {
	lanes int
	words map[uint64]bool
	write bool
}

// NewBankCounter returns an empty counter.
func NewBankCounter() *BankCounter {
	return &BankCounter{count: map[laneOp]int64{}, open: map[warpRequest]*request{}, stats: map[*ir.Operation]*BankOpStats{}}
}

// Observe takes the emulator's events; only ordinary shared accesses
// count.
func (bc *BankCounter) Observe(e *Event) {
	if e.Kind != SharedRead && e.Kind != SharedWrite || e.Thread < 0 {
		return
	}
	bc.mu.Lock()
	defer bc.mu.Unlock()
	lk := laneOp{e.Kernel, e.Cluster, e.ThreadRank, e.Thread, e.Op}
	n := bc.count[lk]
	bc.count[lk] = n + 1
	wk := warpRequest{e.Kernel, e.Cluster, e.ThreadRank, e.Thread / 32, e.Op, n}
	r := bc.open[wk]
	if r == nil {
		r = &request{words: map[uint64]bool{}, write: e.Kind == SharedWrite}
		bc.open[wk] = r
	}
	r.lanes++
	for _, s := range e.Mem {
		for w := s.Lo / 4; w*4 < s.Hi; w++ {
			r.words[w] = true
		}
	}
	if r.lanes == 32 {
		bc.close(e.Op, r)
		delete(bc.open, wk)
	}
}

// close adds a gathered warp request to its op's counts.
func (bc *BankCounter) close(op *ir.Operation, r *request) {
	s := bc.stats[op]
	if s == nil {
		s = &BankOpStats{Op: op, Write: r.write}
		bc.stats[op] = s
		bc.order = append(bc.order, op)
	}
	s.Requests++
	s.Wavefronts += Wavefronts(r.words)
	s.Ideal += (int64(len(r.words)) + 31) / 32
}

// Wavefronts is the number of wavefronts a warp request for the given
// 4-byte words (shared byte offset / 4) takes: the most distinct words
// asked of one bank.
func Wavefronts(words map[uint64]bool) int64 {
	var perBank [32]int64
	most := int64(0)
	for w := range words {
		b := w % 32
		perBank[b]++
		most = max(most, perBank[b])
	}
	return most
}

// Stats returns the counts per op, the requests of partial warps (lanes
// that took another path) included, those with the most wavefronts over
// the ideal first (ties in the order the ops were first executed).
func (bc *BankCounter) Stats() []BankOpStats {
	bc.mu.Lock()
	defer bc.mu.Unlock()
	// Partial warps, in a fixed order (the map's is random).
	keys := make([]warpRequest, 0, len(bc.open))
	for k := range bc.open {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b warpRequest) int {
		return cmp.Or(cmp.Compare(a.kernel, b.kernel), cmp.Compare(a.cluster, b.cluster), cmp.Compare(a.rank, b.rank),
			cmp.Compare(a.warp, b.warp), cmp.Compare(a.n, b.n), cmp.Compare(a.op.Loc.String(), b.op.Loc.String()))
	})
	for _, k := range keys {
		bc.close(k.op, bc.open[k])
		delete(bc.open, k)
	}
	out := make([]BankOpStats, 0, len(bc.order))
	for _, op := range bc.order {
		out = append(out, *bc.stats[op])
	}
	sort.SliceStable(out, func(i, j int) bool {
		return out[i].Wavefronts-out[i].Ideal > out[j].Wavefronts-out[j].Ideal
	})
	return out
}
