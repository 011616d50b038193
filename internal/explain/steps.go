package explain

import (
	"fmt"
	"strings"

	"github.com/tmac-dev/tmac/dialects/nvvm"
	"github.com/tmac-dev/tmac/dialects/scf"
	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/passes/schedule"
)

// rsMMA is lower-nvgpu's wgmma with A in registers (tmac.warpgroup.mma),
// which has no nvvm op.
const rsMMA = "tmac.wgmma.mma_async"

// step is one entry of an iteration's body as the passes left it: a run of
// wgmma instructions of one source op, a wgmma or mbarrier sync, a TMA
// issue, or the register math between them.
type step struct {
	what           string
	count          int
	exp2, shuffles int
	first, last    int // source lines
	file           string
}

// steps prints what one iteration of the loop l does, in program order,
// from the kernel after the passes: each wgmma (its shape, count, and
// whether A comes from registers), the wgmma fences, commits and waits,
// the mbarrier waits and arrivals, the TMA loads and the register math in
// between (how many float ops, exp2 and warp shuffles). This is where an
// attention kernel's two GEMMs per step and its softmax show.
func (e *explainer) steps(l *schedule.LoopSchedule) {
	loop := e.loopOp(l)
	if loop == nil {
		return
	}
	var seq []*step
	add := func(op *ir.Operation, what string, merge bool) *step {
		line, file := 0, ""
		if f, ok := fileLoc(op.Loc); ok {
			line, file = f.Line, f.File
		}
		if n := len(seq); n > 0 && merge && seq[n-1].what == what && (what == "register math" || seq[n-1].first == line) {
			s := seq[n-1]
			s.count++
			if line > 0 && (s.first == 0 || line < s.first) {
				s.first = line
			}
			s.last = max(s.last, line)
			return s
		}
		s := &step{what: what, count: 1, first: line, last: line, file: file}
		seq = append(seq, s)
		return s
	}
	for _, r := range loop.Regions() {
		for _, b := range r.Blocks() {
			for _, top := range b.Ops() {
				ir.Walk(top, func(op *ir.Operation) ir.WalkResult {
					name := op.Name()
					switch {
					case name == nvvm.WgmmaMmaAsync || name == rsMMA:
						a := "SS: A and B in smem"
						if name == rsMMA {
							a = "RS: A in registers, B in smem"
						}
						add(op, fmt.Sprintf("wgmma %s, %s", mmaShape(op), a), true)
					case name == nvvm.WgmmaFenceAligned:
						add(op, "wgmma fence", false)
					case name == nvvm.WgmmaCommitGroupSyncAligned:
						add(op, "wgmma commit group", false)
					case name == nvvm.WgmmaWaitGroupSyncAligned:
						add(op, "wgmma wait_group "+waitDepth(op), false)
					case strings.HasPrefix(name, "nvvm.mbarrier."):
						add(op, "mbarrier "+strings.TrimPrefix(name, "nvvm.mbarrier."), false)
					case strings.HasPrefix(name, "nvvm.cp.async.bulk.tensor"):
						add(op, "TMA load", true)
					case name == nvvm.Barrier:
						b := nvvm.BarrierOp{Op: op}
						add(op, namedBarrier("sync", b.BarrierId(), b.NumberOfThreads()), false)
					case name == nvvm.BarrierArrive:
						b := nvvm.BarrierArriveOp{Op: op}
						add(op, namedBarrier("arrive", b.BarrierId(), b.NumberOfThreads()), false)
					case strings.HasPrefix(name, "nvvm.barrier"):
						add(op, "block barrier", false)
					case name == nvvm.ShflSync:
						add(op, "register math", true).shuffles++
					case name == "math.exp2":
						add(op, "register math", true).exp2++
					case floatMath(name):
						add(op, "register math", true)
					}
					return ir.Advance
				})
			}
		}
	}
	if len(seq) == 0 {
		return
	}
	who := ""
	if l.Consumers > 0 {
		who = " in a consumer warpgroup" // the producer's copy of the loop only issues TMA
	}
	e.para(fmt.Sprintf("one iteration of %s%s after the passes, in program order (register math: float ops, of which exp2 and warp shuffles)", e.loopLabel(l), who))
	t := newTable("step", "what", "count", "source lines")
	t.numeric(0, 2)
	for i, s := range seq {
		what := s.what
		if s.what == "register math" {
			what = fmt.Sprintf("register math (%d exp2, %d shuffles)", s.exp2, s.shuffles)
		}
		lines := "?"
		switch {
		case s.first == 0:
		case s.first == s.last:
			lines = fmt.Sprint(s.first)
		default:
			lines = fmt.Sprintf("%d-%d", s.first, s.last)
		}
		t.add(fmt.Sprint(i+1), what, fmt.Sprint(s.count), lines)
	}
	e.table(t)
}

// loopLabel names the loop as its timeline does.
func (e *explainer) loopLabel(l *schedule.LoopSchedule) string {
	if iv := e.ivName(l.Loc); iv != "" {
		return "loop " + iv
	}
	return "the loop at " + where(l.Loc)
}

// loopOp finds the scf.for of l in the kernel after the passes (the one
// that issues wgmma where warp specialisation made several).
func (e *explainer) loopOp(l *schedule.LoopSchedule) *ir.Operation {
	want, ok := fileLoc(l.Loc)
	if !ok || e.kernelOp == nil {
		return nil
	}
	var found *ir.Operation
	ir.Walk(e.kernelOp, func(op *ir.Operation) ir.WalkResult {
		if op.Name() != scf.For {
			return ir.Advance
		}
		if f, ok := fileLoc(op.Loc); !ok || f != want {
			return ir.Advance
		}
		if found == nil || hasMMA(op) && !hasMMA(found) {
			found = op
		}
		return ir.Skip
	})
	return found
}

func hasMMA(op *ir.Operation) bool {
	has := false
	ir.Walk(op, func(o *ir.Operation) ir.WalkResult {
		if o.Name() == nvvm.WgmmaMmaAsync || o.Name() == rsMMA {
			has = true
			return ir.Interrupt
		}
		return ir.Advance
	})
	return has
}

// mmaShape writes a wgmma's shape attribute as m64n64k16.
func mmaShape(op *ir.Operation) string {
	a := op.Attr("shape")
	if a == nil {
		return "?"
	}
	s := a.String()
	s = s[strings.Index(s, "<")+1:]
	s = strings.TrimSuffix(strings.TrimSuffix(s, ">"), ">")
	return strings.NewReplacer(" = ", "", ", ", "", " ", "").Replace(s)
}

func waitDepth(op *ir.Operation) string {
	for _, key := range []string{"group", "n"} {
		if a := op.Attr(key); a != nil {
			return strings.TrimSuffix(a.String(), " : i64")
		}
	}
	return "?"
}

// floatMath reports the ops counted as the math between the GEMMs: float
// arithmetic, conversions and selects (not the index arithmetic or the
// struct moves of the lowering).
func floatMath(name string) bool {
	switch name {
	case "arith.select", "arith.truncf", "arith.extf":
		return true
	}
	if strings.HasPrefix(name, "math.") {
		return true
	}
	if !strings.HasPrefix(name, "arith.") {
		return false
	}
	n := strings.TrimPrefix(name, "arith.")
	return strings.HasSuffix(n, "f") && n != "constant" || strings.HasPrefix(n, "maximum") || strings.HasPrefix(n, "minimum") || n == "cmpf"
}

// namedBarrier names a bar.sync or bar.arrive step: "block barrier" for
// barrier 0 over the whole block, else the barrier (its number when it is a
// constant; a ping-pong schedule computes it per warpgroup) and the count.
func namedBarrier(kind string, id, threads ir.Value) string {
	if id == nil && threads == nil {
		return "block barrier"
	}
	which := "a computed barrier"
	if id == nil {
		which = "barrier 0"
	} else if c, ok := ir.AttrInt(ir.ConstantValue(id)); ok {
		which = fmt.Sprintf("barrier %d", c)
	}
	count := ""
	if c, ok := ir.AttrInt(ir.ConstantValue(threads)); ok {
		count = fmt.Sprintf(", %d threads", c)
	}
	return fmt.Sprintf("named barrier %s (%s%s)", kind, which, count)
}
