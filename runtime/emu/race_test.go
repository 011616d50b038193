package emu

import (
	"strings"
	"testing"

	"github.com/tmac-dev/tmac/ir"
)

// raceRun is a block of n threads with a race detector, driven directly:
// no kernel runs, the test plays the threads' accesses and
// synchronisations in the order it wants.
func raceRun(n int) (*raceDetector, []*thread) {
	b := &blockRun{k: &kernel{}}
	c := &cta{smem: make([]byte, 64)}
	b.ctas = []*cta{c}
	for i := 0; i < n; i++ {
		t := &thread{b: b, c: c, linear: i}
		c.threads = append(c.threads, t)
		b.threads = append(b.threads, t)
	}
	b.race = newRaceDetector(b)
	return b.race, b.threads
}

// try runs f as thread t would and returns the error it stopped the
// block with ("" if none).
func try(t *thread, f func()) (msg string) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(abortSignal); !ok {
				panic(r)
			}
			msg = t.b.err.Msg
			t.b.err = nil
		}
	}()
	f()
	return ""
}

func op(name string) *ir.Operation {
	return ir.NewOperation(&ir.OperationState{Name: name})
}

func TestRaceOrdering(t *testing.T) {
	load, store := op("test.load"), op("test.store")
	for _, c := range []struct {
		name string
		// play drives threads ts; the last access is the one checked.
		play func(r *raceDetector, ts []*thread) string
		want string // "" or a part of the report
	}{
		{"write then read, unordered", func(r *raceDetector, ts []*thread) string {
			try(ts[0], func() { r.write(ts[0], ts[0].c, store, 0, 4, "writes", false, false) })
			return try(ts[1], func() { r.read(ts[1], ts[1].c, load, 2, 6, "reads") })
		}, "thread 1 reads shared bytes [2, 4) that thread 0 wrote"},
		{"write, barrier, read", func(r *raceDetector, ts []*thread) string {
			try(ts[0], func() { r.write(ts[0], ts[0].c, store, 0, 4, "writes", false, false) })
			for _, x := range ts {
				r.barrierArrive(x, 0, 0, true)
			}
			for _, x := range ts {
				r.barrierPass(x, 0, 0)
			}
			return try(ts[1], func() { r.read(ts[1], ts[1].c, load, 0, 4, "reads") })
		}, ""},
		{"bar.arrive releases but does not acquire", func(r *raceDetector, ts []*thread) string {
			try(ts[1], func() { r.write(ts[1], ts[1].c, store, 0, 4, "writes", false, false) })
			r.barrierArrive(ts[0], 1, 0, false) // thread 0 only arrives
			r.barrierArrive(ts[1], 1, 0, true)
			r.barrierPass(ts[1], 1, 0)
			return try(ts[0], func() { r.read(ts[0], ts[0].c, load, 0, 4, "reads") })
		}, "thread 0 reads shared bytes [0, 4) that thread 1 wrote"},
		{"the same thread", func(r *raceDetector, ts []*thread) string {
			try(ts[0], func() { r.read(ts[0], ts[0].c, load, 0, 4, "reads") })
			return try(ts[0], func() { r.write(ts[0], ts[0].c, store, 0, 4, "writes", false, false) })
		}, ""},
		{"disjoint bytes", func(r *raceDetector, ts []*thread) string {
			try(ts[0], func() { r.write(ts[0], ts[0].c, store, 0, 2, "writes", false, false) })
			return try(ts[1], func() { r.write(ts[1], ts[1].c, store, 2, 4, "writes", false, false) })
		}, ""},
		{"concurrent reads, then a write", func(r *raceDetector, ts []*thread) string {
			try(ts[0], func() { r.read(ts[0], ts[0].c, load, 0, 1, "reads") })
			try(ts[1], func() { r.read(ts[1], ts[1].c, load, 0, 1, "reads") })
			return try(ts[0], func() { r.write(ts[0], ts[0].c, store, 0, 1, "writes", false, false) })
		}, "thread 0 writes shared bytes [0, 1) that thread 1 read"},
		{"atomics do not race with each other", func(r *raceDetector, ts []*thread) string {
			try(ts[0], func() { r.write(ts[0], ts[0].c, store, 0, 4, "writes", true, false) })
			return try(ts[1], func() { r.write(ts[1], ts[1].c, store, 0, 4, "writes", true, false) })
		}, ""},
		{"an atomic and an ordinary read race", func(r *raceDetector, ts []*thread) string {
			try(ts[0], func() { r.write(ts[0], ts[0].c, store, 0, 4, "writes", true, false) })
			return try(ts[1], func() { r.read(ts[1], ts[1].c, load, 0, 4, "reads") })
		}, "thread 1 reads shared bytes [0, 4) that thread 0 wrote"},
		{"a refill forgets the bytes", func(r *raceDetector, ts []*thread) string {
			try(ts[0], func() { r.write(ts[0], ts[0].c, store, 0, 4, "writes", false, false) })
			for _, x := range ts {
				r.barrierArrive(x, 0, 0, true)
			}
			for _, x := range ts {
				r.barrierPass(x, 0, 0)
			}
			try(ts[0], func() { r.write(ts[0], ts[0].c, store, 0, 4, "issues a TMA load overwriting", false, true) })
			return try(ts[1], func() { r.read(ts[1], ts[1].c, load, 0, 4, "reads") })
		}, ""},
	} {
		r, ts := raceRun(4)
		got := c.play(r, ts)
		if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}

// Reads beyond readSlots concurrent ones are forgotten, but a read
// ordered after a remembered one takes its slot, so ordered reads never
// fill the slots.
func TestRaceReadSlots(t *testing.T) {
	load, store := op("test.load"), op("test.store")
	r, ts := raceRun(6)
	for _, x := range ts[:5] {
		try(x, func() { r.read(x, x.c, load, 0, 1, "reads") })
	}
	if got := try(ts[5], func() { r.write(ts[5], ts[5].c, store, 0, 1, "writes", false, false) }); !strings.Contains(got, "that thread 0 read") {
		t.Errorf("write after concurrent reads: got %q, want the first reader reported", got)
	}
	r, ts = raceRun(6)
	for round := 0; round < 2; round++ {
		for _, x := range ts[:5] {
			try(x, func() { r.read(x, x.c, load, 0, 1, "reads") })
		}
		for _, x := range ts {
			r.barrierArrive(x, 0, round, true)
		}
		for _, x := range ts {
			r.barrierPass(x, 0, round)
		}
	}
	if got := try(ts[5], func() { r.write(ts[5], ts[5].c, store, 0, 1, "writes", false, false) }); got != "" {
		t.Errorf("write after ordered reads: got %q", got)
	}
	if len(r.gens) != 0 {
		t.Errorf("%d barrier generations kept after every thread passed them", len(r.gens))
	}
}

// An mbarrier wait acquires the phase it saw complete: arrivals of a
// later phase are not ordered before it.
func TestRaceMbarrierPhases(t *testing.T) {
	load, store := op("test.load"), op("test.store")
	r, ts := raceRun(2)
	m := &mbarrier{count: 1, pending: 1}
	try(ts[0], func() { r.write(ts[0], ts[0].c, store, 0, 4, "writes", false, false) })
	r.mbarrierArrive(ts[0], m)
	m.pending = 0
	m.complete() // phase 0
	try(ts[0], func() { r.write(ts[0], ts[0].c, store, 4, 8, "writes", false, false) })
	r.mbarrierWait(ts[1], m, 0)
	if got := try(ts[1], func() { r.read(ts[1], ts[1].c, load, 0, 4, "reads") }); got != "" {
		t.Errorf("read after the wait: got %q", got)
	}
	if got := try(ts[1], func() { r.read(ts[1], ts[1].c, load, 4, 8, "reads") }); !strings.Contains(got, "thread 1 reads shared bytes [4, 8) that thread 0 wrote") {
		t.Errorf("read of a write after the arrival: got %q", got)
	}
}
