package explain

import (
	"fmt"
	"strings"

	"github.com/tmac-dev/tmac/passes/schedule"
)

// ring is one pipelined loop as the timeline sees it: the passes' record
// (whose Issues and Releases give the ring discipline) and how to write
// its positions.
type ring struct {
	l *schedule.LoopSchedule
	// wait is the parity of the wait for position g (ok false: unknown);
	// producerWait the parity the producer waits for before issuing g.
	wait, producerWait func(g int64) (int64, bool)
	// label writes the loop's induction value of position g; stepNote,
	// if set, is added to the step column (the ping-pong warpgroup).
	label, stepNote func(g int64) string
}

// row is one line of the timeline.
type row struct {
	step, k, wait, release, issue, producer, store, inflight string
}

// maxSimulated bounds the iterations simulated to find the drain.
const maxSimulated = 1 << 20

// total is the number of positions (-1: unbounded or unknown).
func (r *ring) total() int64 {
	if r.l.Persistent || r.l.Trip < 0 {
		return -1
	}
	return r.l.Trip
}

func (r *ring) releases(j int64) []int64 { return r.l.Releases(j) }

func (r *ring) issues(j int64) []int64 { return r.l.Issues(j, r.total()) }

func (r *ring) slot(g int64) string { return fmt.Sprintf("s%d", g%r.l.Stages) }

func (r *ring) at(g int64) string { return fmt.Sprintf("s%d:%s", g%r.l.Stages, r.label(g)) }

func (r *ring) list(gs []int64) string {
	if len(gs) == 0 {
		return "-"
	}
	var parts []string
	for _, g := range gs {
		parts = append(parts, r.at(g))
	}
	return strings.Join(parts, " ")
}

// span lists positions lo..hi (inclusive).
func (r *ring) span(lo, hi int64) string {
	var gs []int64
	for g := lo; g <= hi; g++ {
		gs = append(gs, g)
	}
	return r.list(gs)
}

func parityText(f func(int64) (int64, bool), g int64) string {
	if f == nil {
		return "?"
	}
	p, ok := f(g)
	if !ok {
		return "?"
	}
	return fmt.Sprint(p)
}

// rows builds the timeline: the prologue, the first `head` iterations,
// and either the drain (the last iterations, which issue nothing) or, for
// a persistent loop, the iterations around the first tile boundary.
func (r *ring) rows(head int64) []row {
	if head < 1 {
		head = 1
	}
	total := r.total()
	// Which iterations to show.
	var show []int64
	add := func(lo, hi int64) { // [lo, hi)
		for j := lo; j < hi; j++ {
			if len(show) == 0 || j > show[len(show)-1] {
				show = append(show, j)
			}
		}
	}
	switch {
	case total >= 0:
		add(0, min(head, total))
		if total <= maxSimulated {
			// The drain: the trailing iterations that issue nothing (at
			// least the last one), at most a ring's worth.
			d := total - 1
			for d > 0 && len(r.issues(d-1)) == 0 && total-d < r.l.Stages+1 {
				d--
			}
			add(max(d, 0), total)
		}
	case r.l.Persistent && r.l.Trip > 0:
		add(0, head)
		add(max(r.l.Trip-2, 0), r.l.Trip+2)
	default:
		add(0, head)
	}

	// A gap of one iteration is shown rather than elided.
	for i := 1; i < len(show); i++ {
		if show[i] == show[i-1]+2 {
			show = append(show[:i], append([]int64{show[i-1] + 1}, show[i:]...)...)
		}
	}

	var out []row
	last := int64(-1) // the last position issued so far
	pro := r.issues(-1)
	if len(pro) > 0 {
		last = pro[len(pro)-1]
	}
	if len(pro) > 0 {
		pr := row{step: "prologue", k: "", wait: "", release: "", issue: r.list(pro), inflight: r.list(pro)}
		if r.total() < 0 && !r.l.Persistent {
			pr.issue += " if < T"
		}
		if r.producerWait != nil {
			pr.producer = fmt.Sprintf("empty[s%d..s%d] parity %s: free", pro[0]%r.l.Stages, pro[len(pro)-1]%r.l.Stages, parityText(r.producerWait, 0))
		}
		out = append(out, pr)
	}
	next := 0
	for j := int64(0); next < len(show); j++ {
		rel := r.releases(j)
		iss := r.issues(j)
		if len(iss) > 0 {
			last = iss[len(iss)-1]
		}
		if j != show[next] {
			continue
		}
		if next > 0 && show[next-1] != j-1 {
			n := j - show[next-1] - 1
			out = append(out, row{step: "...", wait: fmt.Sprintf("(%d more iterations)", n)})
		}
		next++
		step := fmt.Sprintf("j=%d", j)
		if r.stepNote != nil {
			step += r.stepNote(j)
		}
		rw := row{step: step, k: r.label(j),
			wait:    fmt.Sprintf("%s parity %s", r.slot(j), parityText(r.wait, j)),
			release: r.list(rel), issue: r.list(iss)}
		if total < 0 && !r.l.Persistent && len(iss) > 0 {
			rw.issue += " if < T"
		}
		if !r.l.IssueOnRelease && r.l.Ahead == 0 && len(iss) > 0 {
			rw.issue += " (before the wait)"
		}
		if r.producerWait != nil {
			var ps []string
			for _, g := range iss {
				ps = append(ps, fmt.Sprintf("empty[%s] parity %s", r.slot(g), parityText(r.producerWait, g)))
			}
			rw.producer = strings.Join(ps, ", ")
			if rw.producer == "" {
				rw.producer = "-"
			}
		}
		switch {
		case r.l.PassThrough:
			rw.store = "TMA store from " + r.slot(j)
		case r.l.StoreStages > 0:
			rw.store = fmt.Sprintf("write o%d, TMA store", j%r.l.StoreStages)
		}
		if last > j {
			rw.inflight = r.span(j+1, last)
		} else {
			rw.inflight = "-"
		}
		out = append(out, rw)
	}
	if total < 0 && !r.l.Persistent && r.l.Ahead > 0 {
		out = append(out, row{step: "...", k: fmt.Sprintf("(to T-%d)", r.l.Ahead+1)},
			row{step: fmt.Sprintf("last %d", r.l.Ahead), k: fmt.Sprintf("T-%d..T-1", r.l.Ahead), wait: "slot j mod " + fmt.Sprint(r.l.Stages),
				release: "as above", issue: "- (j+" + fmt.Sprint(r.l.Ahead) + " >= T)", inflight: "the rest of the ring"})
	}
	return out
}
