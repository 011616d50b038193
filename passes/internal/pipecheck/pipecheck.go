// Package pipecheck runs tile programs through tmac's default pipeline
// and the CPU emulator, behind the real host plan as `tmac run
// --target=emu` runs them, and checks the pipelining passes' protocol over
// the run with the emulator's observer (emu.Device.Observe):
//
//   - every shared-memory read is ordered after the fill it reads, and
//     every fill after the reads and the fill it replaces (order.go: the
//     happens-before of the run, so a slot refilled before its readers
//     released it is reported even when this interleaving got lucky);
//   - with a Ring, what the test expects of the pipelined loop, checked
//     against the schedule record the passes wrote (what `tmac explain`
//     prints): each ring position lands exactly its tiles' boxes, with
//     their coordinates, in its slot of each ring and on the phase of its
//     barrier that its waits see; every wait sees the phase of its ring
//     position with the parity the record's rule gives; every release is
//     of a slot the record's release rule names (ring.go).
//
// The emulator's own diagnostics (deadlocks, races with copies in flight,
// transaction counts, ...) come back as errors too. The tests compare the
// buffers after the run with their reference.
package pipecheck

import (
	"fmt"
	"strings"
	"sync"

	"github.com/tmac-dev/tmac/driver"
	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/passes"
	"github.com/tmac-dev/tmac/passes/schedule"
	"github.com/tmac-dev/tmac/runtime/buffer"
	"github.com/tmac-dev/tmac/runtime/emu"
	"github.com/tmac-dev/tmac/runtime/plan"
)

// Program is a tile program to compile and emulate.
type Program struct {
	Name   string // for messages
	Source string // a module whose one public func.func launches the kernel
	// Args are the entry function's arguments: *buffer.Buffer for memrefs
	// (copied to the device before every run), int64 for integers and
	// index.
	Args []any
	// Mutate, if set, edits every kernel after the pass MutateAfter
	// (default mbarrier-phase: the IR smem-plan and lower-nvgpu get): the
	// tests break the passes' output with it and check that the run
	// reports it.
	Mutate      func(kernel *ir.Operation)
	MutateAfter string
	// Ring, if set, is what the pipelined loop must do.
	Ring *Ring
}

// Compiled is a program after the default pipeline.
type Compiled struct {
	Prog     *Program
	Module   *ir.Operation
	Schedule *schedule.Schedule
	plan     *plan.Plan
	layout   *layout
}

// Compile runs the default pipeline on the program, recording the
// schedule.
func Compile(p *Program) (*Compiled, error) {
	mod, err := ir.Parse("test.tma", p.Source, ir.ParseOptions{})
	if err != nil {
		return nil, fmt.Errorf("%s: %v", p.Name, err)
	}
	if err := ir.VerifyModule(mod); err != nil {
		return nil, fmt.Errorf("%s: %v", p.Name, err)
	}
	steps, err := passes.ParsePipeline(driver.DefaultPipeline)
	if err != nil {
		return nil, err
	}
	var instr *passes.Instrumentation
	if p.Mutate != nil {
		after := p.MutateAfter
		if after == "" {
			after = "mbarrier-phase"
		}
		instr = &passes.Instrumentation{After: func(s *passes.Step, op *ir.Operation) {
			if s.PassName == after {
				for _, k := range ir.Nested(op, "gpu.func") {
					p.Mutate(k)
				}
			}
		}}
	}
	sched := schedule.NewSchedule()
	if err := passes.RunPipeline(mod, steps, &passes.Context{Schedule: sched}, instr); err != nil {
		return nil, fmt.Errorf("%s: %v", p.Name, err)
	}
	entry, err := plan.SelectEntry(mod, "")
	if err != nil {
		return nil, fmt.Errorf("%s: %v", p.Name, err)
	}
	pl, err := plan.Build(mod, entry)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", p.Name, err)
	}
	c := &Compiled{Prog: p, Module: mod, Schedule: sched, plan: pl}
	if p.Ring != nil {
		if c.layout, err = newLayout(sched); err != nil {
			return nil, fmt.Errorf("%s: %v", p.Name, err)
		}
	}
	return c, nil
}

// Run emulates the program with the scheduler's seed and returns the
// buffer arguments as the run left them (nil for scalars), or the first
// problems the emulator or the checks found.
func (c *Compiled) Run(seed int64) ([]*buffer.Buffer, error) {
	dev := emu.NewDevice(c.Module, seed)
	chk := &Checker{name: fmt.Sprintf("%s (seed %d)", c.Prog.Name, seed), runs: map[runKey]*run{}}
	if c.Prog.Ring != nil {
		chk.ring = newRingCheck(c.Prog.Ring, c.layout, c.Module)
	}
	dev.Observe = chk.Observe
	args := make([]plan.Value, len(c.Prog.Args))
	mems := make([]*plan.Mem, len(c.Prog.Args))
	for i, a := range c.Prog.Args {
		switch v := a.(type) {
		case *buffer.Buffer:
			m, err := plan.Upload(dev, v)
			if err != nil {
				return nil, err
			}
			args[i], mems[i] = m, m
		default:
			args[i] = v
		}
	}
	if err := c.plan.Run(dev, args, nil); err != nil {
		return nil, fmt.Errorf("%s: %v%s", chk.name, err, chk.also())
	}
	if err := chk.finish(); err != nil {
		return nil, err
	}
	out := make([]*buffer.Buffer, len(args))
	for i, m := range mems {
		if m == nil {
			continue
		}
		b := c.Prog.Args[i].(*buffer.Buffer)
		out[i] = &buffer.Buffer{Elem: b.Elem, Shape: b.Shape, Bytes: make([]byte, len(b.Bytes))}
		if err := dev.CopyToHost(out[i].Bytes, m.Dev); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// maxReports bounds the problems a run collects.
const maxReports = 8

// Checker follows the events of one emulated program (every cluster of
// every launch) and collects the problems it finds.
type Checker struct {
	name    string
	mu      sync.Mutex
	runs    map[runKey]*run
	reports []string
	dropped int
	ring    *ringCheck
}

// runKey names a cluster's run: blocks of different clusters never
// interact.
type runKey struct {
	kernel  string
	cluster int
}

// Observe is the emulator's observer (emu.Device.Observe).
func (c *Checker) Observe(e *emu.Event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	key := runKey{e.Kernel, e.Cluster}
	r := c.runs[key]
	if r == nil {
		r = newRun(c, c.name)
		c.runs[key] = r
	}
	r.event(e)
	if c.ring != nil {
		c.ring.event(r, e)
	}
}

func (c *Checker) report(msg string) {
	if len(c.reports) >= maxReports {
		c.dropped++
		return
	}
	c.reports = append(c.reports, msg)
}

// also lists the problems found before the run failed.
func (c *Checker) also() string {
	if len(c.reports) == 0 {
		return ""
	}
	return "\nthe checks found before that:\n" + strings.Join(c.reports, "\n")
}

// finish runs the checks of the end of the run and returns what was found.
func (c *Checker) finish() error {
	for _, r := range c.runs {
		r.finish()
	}
	if c.ring != nil {
		c.ring.finish(c)
	}
	if len(c.reports) == 0 {
		return nil
	}
	msg := strings.Join(c.reports, "\n")
	if c.dropped > 0 {
		msg += fmt.Sprintf("\n(and %d more)", c.dropped)
	}
	return fmt.Errorf("%s", msg)
}
