// Package schedule is the record of what the pipelining passes decided
// for each kernel, which tmac explain prints.
package schedule

import (
	"fmt"

	"github.com/tmac-dev/tmac/dialects/nvgpu"
	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/passes/internal/passutil"
)

// Schedule is what the pipelining passes decided for each kernel, recorded
// by the passes themselves as they rewrite it (tmac explain prints it):
// the pipelined loops (tma-pipeline, warp-specialize), their tiles and
// barrier groups, the parities mbarrier-phase computed, what lower-nvgpu
// lowered for each barrier group, and where smem-plan placed every
// shared-memory buffer. A pass records only when passes.Context.Schedule is
// set; every recording method accepts a nil receiver and then does nothing,
// so the passes record unconditionally and compilation is unchanged.
//
// The records hold pointers to ops and values of the IR as the passes saw
// them (some are erased later); they serve only as identities, to join the
// records of different passes (a ring buffer with its placement, a barrier
// group with its waits and its lowered memory).
type Schedule struct {
	Kernels []*KernelSchedule
	byOp    map[*ir.Operation]*KernelSchedule
	groups  map[ir.Value]*BarrierGroup
}

// NewSchedule returns an empty record.
func NewSchedule() *Schedule {
	return &Schedule{byOp: map[*ir.Operation]*KernelSchedule{}, groups: map[ir.Value]*BarrierGroup{}}
}

// Schedule kinds.
const (
	KindPipelined   = "pipelined"
	KindCooperative = "warp-specialised cooperative"
	KindPingPong    = "warp-specialised ping-pong"
)

// KernelSchedule is the record of one kernel (a gpu.func kernel, or a
// gpu.launch when the passes run before outline-kernels).
type KernelSchedule struct {
	Op     *ir.Operation
	Loops  []*LoopSchedule
	Groups []*BarrierGroup // in creation order
	// SMem is every buffer smem-plan placed, over all its runs (the
	// default pipeline runs it before lower-nvgpu for the buffers and after
	// it for the barrier memory), in placement order per run.
	SMem []*SMemPlacement
	// SMemRuns counts the smem-plan runs on the kernel; SMemTotal is the
	// dynamic shared memory the last one gave the launches, SMemStatic the
	// barrier bytes it counted that were not placed yet (mbarrier groups
	// before lower-nvgpu), HandPlaced the bytes at offset 0 that a
	// hand-placed gpu.dynamic_shared_memory kept in the first run.
	SMemRuns                          int
	SMemTotal, SMemStatic, HandPlaced int64
}

// LoopSchedule is one pipelined loop.
type LoopSchedule struct {
	Kind string
	// Loc is the loop as written; TileLoopLoc, for a persistent kernel,
	// the tile loop around it (the rings continue across its iterations).
	Loc, TileLoopLoc ir.Location
	Persistent       bool
	// Stages is the ring depth N; StagesFrom says where it came from
	// ("tmac.stages = 4", "pass option stages=3") and RequestedStages the
	// depth asked for (more than N when the static trip count is smaller).
	Stages, RequestedStages int64
	StagesFrom              string
	// StoreStages is the number of output-tile slots (0 without output
	// tiles), StoreGroups the bulk store groups an iteration commits and
	// StoreWait the wait_group.read depth before an output slot is
	// written again; StoreParts > 1 when an iteration stores its output
	// tile in that many parts, each taking the next slot.
	StoreStages, StoreGroups, StoreWait, StoreParts int64
	// Trip is the static trip count, -1 if dynamic. The induction value of
	// iteration j is LB + j*Step when IVKnown.
	Trip, LB, Step int64
	IVKnown        bool
	// The ring discipline. Ring position g (iteration j, or tile index x
	// Trip + j in a persistent kernel) uses slot g mod Stages. Prologue
	// positions are issued before the first wait; during iteration j the
	// slot of position j-ReleaseLag is released (ReleasedBy says how), and
	// then position j+Ahead is issued (IssueAt says where) unless it is
	// below Prologue or not below Trip. With IssueOnRelease (a producer
	// warpgroup), position q+Stages is issued as soon as position q is
	// released instead.
	Prologue, Ahead, ReleaseLag             int64
	IssueOnRelease                          bool
	IssuedBy, IssueAt, ReleasedBy, WaitedBy string
	// PerTileRelease: ping-pong, a warpgroup's first K step of a tile
	// releases nothing and the tile's last slot is released after its K
	// loop.
	PerTileRelease bool
	// WGMMAWait is the wgmma wait_group depth after the iteration's last
	// mma (-1: no wgmma reads the tiles).
	WGMMAWait int64
	// AfterLoop lists what follows the loop (drains, barriers).
	AfterLoop []string
	Tiles     []*TileSchedule
	// StageBytes and StageBoxes: expect_tx bytes and TMA boxes per stage.
	StageBytes, StageBoxes int64
	PassThrough            bool
	// Warp specialisation: consumer warpgroups, register budgets, the
	// cluster size (1 without multicast).
	Consumers, ProducerRegs, ConsumerRegs, ClusterSize int64
	Notes                                              []string
}

// TileSchedule is one logical tile and the ring of slots that replaces it.
type TileSchedule struct {
	Loc     ir.Location // the tile's memref.alloc
	Tile    *ir.MemRefType
	Box     *ir.MemRefType
	Boxes   int64
	Swizzle string
	// Role: "load", "store" (an output tile) or "load+store" (a tile
	// stored by TMA straight from its load slot).
	Role                    string
	Slots, SlotBytes, Align int64
	ReadBy                  string
	Multicast               bool
	// Note: how the threads write an output tile, when worth saying
	// (its accumulator stores' layout).
	Note string
	// Ring is the ring buffer's memref.alloc (joined with its placement).
	Ring *ir.Operation
}

// BarrierGroup is one nvgpu.mbarrier.create group.
type BarrierGroup struct {
	Loc  ir.Location
	Size int64
	// Set by the pass that created the group (empty for groups written in
	// the program): Role ("stage", "full", "empty"), what it guards, the
	// arrivals that complete a phase, the bytes a phase expects.
	Role, Guards, ArrivedBy, WaitedBy string
	Count, TxBytes                    int64
	Loop                              *LoopSchedule
	Waits                             []*BarrierWait
	// What lower-nvgpu lowered: the init counts, expect_tx bytes, number of
	// arrive ops, TMA loads completing on the group and their bytes, and the
	// shared memory (a memref.alloca) holding the barriers.
	InitCounts, ExpectTx []int64
	Arrives, TMALoads    int
	TMABytes             int64
	Alloc                *ir.Operation
}

// BarrierWait is a parity computation for waits on a group.
type BarrierWait struct {
	Loc ir.Location
	// By: who computed the parity ("mbarrier-phase", "warp-specialize",
	// "tma-pipeline"; "program" for a parity written in the program).
	By string
	// Constant parity, or (Ring != nil) the parity at ring position u.
	Constant bool
	Parity   int64
	Ring     *ParityRing
	// Carried: mbarrier-phase carries the parity as a loop value (a
	// ring of a size that is not a power of two).
	Carried bool
}

// ParityRing is the parity of the wait at position t of a loop (t = 0 in
// its first iteration) on a ring of N barriers: the wait uses barrier
// (t+Off) mod N and waits for phase parity (floor((t+Off)/N) + B) mod 2.
type ParityRing struct{ N, Off, B int64 }

// At is the parity at position t.
func (r ParityRing) At(t int64) int64 { return (passutil.FloorDiv(t+r.Off, r.N) + r.B) & 1 }

// SMemPlacement is one buffer smem-plan placed.
type SMemPlacement struct {
	Loc                 ir.Location
	Type                *ir.MemRefType
	Offset, Size, Align int64
	Why                 string // where the alignment comes from
	// Swizzle is the swizzle of the TMA copies or wgmma operands using the
	// buffer (128B, 64B, 32B; "" for none).
	Swizzle string
	// Start and End are the live range in the run's op numbering (compare
	// only within one Run); Whole when the buffer lives for the whole kernel.
	Start, End int
	Whole      bool
	Run        int
	Alloc      *ir.Operation
	Barriers   bool // mbarrier memory (lowered by lower-nvgpu)
}

// KernelFor returns the record of kernel op, creating it.
func (s *Schedule) KernelFor(op *ir.Operation) *KernelSchedule {
	if s == nil {
		return nil
	}
	k := s.byOp[op]
	if k == nil {
		k = &KernelSchedule{Op: op}
		s.byOp[op] = k
		s.Kernels = append(s.Kernels, k)
	}
	return k
}

// Kernel returns the record of kernel op, or nil.
func (s *Schedule) Kernel(op *ir.Operation) *KernelSchedule {
	if s == nil {
		return nil
	}
	return s.byOp[op]
}

// AddLoop records a pipelined loop of kernel op.
func (s *Schedule) AddLoop(op *ir.Operation, l *LoopSchedule) {
	if k := s.KernelFor(op); k != nil {
		k.Loops = append(k.Loops, l)
	}
}

// Group returns the record of barrier group g (the result of an
// nvgpu.mbarrier.create) in kernel op, creating it.
func (s *Schedule) Group(op *ir.Operation, g ir.Value) *BarrierGroup {
	if s == nil || g == nil {
		return nil
	}
	if r := s.groups[g]; r != nil {
		return r
	}
	k := s.KernelFor(op)
	r := &BarrierGroup{Size: nvgpu.MBarrierCount(g.Type())}
	if d := g.DefiningOp(); d != nil {
		r.Loc = d.Loc
	}
	s.groups[g] = r
	k.Groups = append(k.Groups, r)
	return r
}

// ExistingGroup returns the record of g if some pass made one.
func (s *Schedule) ExistingGroup(g ir.Value) *BarrierGroup {
	if s == nil {
		return nil
	}
	return s.groups[g]
}

// AddWait records the parity of a wait on group g.
func (s *Schedule) AddWait(kernel *ir.Operation, g ir.Value, w *BarrierWait) {
	if r := s.Group(kernel, g); r != nil {
		r.Waits = append(r.Waits, w)
	}
}

// Releases returns the ring positions whose slots iteration j (a ring
// position) releases, by the loop's release discipline.
func (l *LoopSchedule) Releases(j int64) []int64 {
	var out []int64
	if q := j - l.ReleaseLag; q >= 0 && !(l.PerTileRelease && l.Trip > 0 && j%l.Trip < l.ReleaseLag) {
		out = append(out, q)
	}
	if l.PerTileRelease && l.ReleaseLag > 0 && l.Trip > 0 && j%l.Trip == l.Trip-1 {
		out = append(out, j)
	}
	return out
}

// Issues returns the ring positions whose TMA loads are issued during
// iteration j, or before the loop for j = -1, when the loop has total
// positions (-1: unbounded, as a persistent loop's ring).
func (l *LoopSchedule) Issues(j, total int64) []int64 {
	in := func(q int64) bool { return q >= 0 && (total < 0 || q < total) }
	var out []int64
	if j < 0 {
		for q := int64(0); q < l.Prologue && in(q); q++ {
			out = append(out, q)
		}
		return out
	}
	if l.IssueOnRelease {
		for _, q := range l.Releases(j) {
			if g := q + l.Stages; g >= l.Prologue && in(g) {
				out = append(out, g)
			}
		}
		return out
	}
	if g := j + l.Ahead; g >= l.Prologue && in(g) {
		out = append(out, g)
	}
	return out
}

// WithTrip returns the loop's record with the trip count bound to trip
// when it is dynamic (Trip < 0): Releases then knows where a persistent
// loop's tiles end.
func (l *LoopSchedule) WithTrip(trip int64) *LoopSchedule {
	if l.Trip >= 0 || trip < 0 {
		return l
	}
	c := *l
	c.Trip = trip
	return &c
}

// SwizzleName writes a swizzle mode as 128B, 64B, 32B or none.
func SwizzleName(s nvgpu.SwizzleKind) string {
	if b := s.Bytes(); b > 0 {
		return fmt.Sprintf("%dB", b)
	}
	return "none"
}
