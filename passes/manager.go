// Package passes is the pass manager: the registry of passes, pipelines
// (parsed from text, checked for order) and the Context passes run with.
// The passes live in the packages below it, one per family, and register
// themselves by name, so `tmac opt` can run them (-name or
// --pass-pipeline='builtin.module(name{opt=v})'); passes/all links them all in.
package passes

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/passes/schedule"
)

// Pass transforms an op (the anchor: a module, or the op its nested
// pipeline names) in place.
type Pass interface {
	Run(op *ir.Operation, ctx *Context) error
}

// PassFunc adapts a function to Pass.
type PassFunc func(op *ir.Operation, ctx *Context) error

// Run calls f.
func (f PassFunc) Run(op *ir.Operation, ctx *Context) error { return f(op, ctx) }

// Context is given to passes: a place to report warnings and remarks.
type Context struct {
	// Emit receives non-fatal diagnostics (warnings, remarks).
	Emit func(*ir.Diagnostic)
	// Schedule, when set, receives the pipelining passes' record of what
	// they decided (tmac explain; passes/schedule).
	Schedule *schedule.Schedule
}

// Record returns the schedule record to fill, nil when none is kept (or
// without a context).
func (c *Context) Record() *schedule.Schedule {
	if c == nil {
		return nil
	}
	return c.Schedule
}

// Warn reports a warning.
func (c *Context) Warn(d *ir.Diagnostic) {
	if c != nil && c.Emit != nil {
		d.Severity = ir.SevWarning
		c.Emit(d)
	}
}

// Option describes a pass option.
type Option struct {
	Name    string
	Default string
	Help    string
}

// Info registers a pass.
type Info struct {
	Name    string
	Summary string
	// Description explains what the pass does (Markdown); `tmac doc` puts
	// it on the pass's page (docs/passes/NAME.md).
	Description string
	Options     []Option
	// New builds the pass with the given option values (defaults filled in).
	New func(opts Options) (Pass, error)
	// Needs lists the passes that must run before this one (needs.go).
	Needs []Need
	// Rewrites, for a pass others need, reports whether op is one it
	// rewrites away: an op of its input form that the passes needing it
	// do not accept.
	Rewrites func(op *ir.Operation) bool
}

// Options are a pass's option values by name.
type Options map[string]string

// Int returns an integer option.
func (o Options) Int(name string) (int, error) {
	v, err := strconv.Atoi(o[name])
	if err != nil {
		return 0, fmt.Errorf("option '%s' expects an integer, got '%s'", name, o[name])
	}
	return v, nil
}

// Bool returns a boolean option.
func (o Options) Bool(name string) (bool, error) {
	switch o[name] {
	case "true", "1", "":
		return o[name] != "", nil
	case "false", "0":
		return false, nil
	}
	return false, fmt.Errorf("option '%s' expects true or false, got '%s'", name, o[name])
}

var registry = map[string]*Info{}

// Register adds a pass to the registry.
func Register(info *Info) {
	if _, dup := registry[info.Name]; dup {
		panic("passes: registered twice: " + info.Name)
	}
	registry[info.Name] = info
}

// Lookup returns a registered pass, or nil.
func Lookup(name string) *Info { return registry[name] }

// All returns the registered passes sorted by name.
func All() []*Info {
	var infos []*Info
	for _, i := range registry {
		infos = append(infos, i)
	}
	sort.Slice(infos, func(a, b int) bool { return infos[a].Name < infos[b].Name })
	return infos
}

// Instantiate builds a pass from its name and option values, checking the
// option names.
func Instantiate(name string, opts map[string]string) (Pass, error) {
	info := Lookup(name)
	if info == nil {
		return nil, fmt.Errorf("'%s' does not refer to a registered pass", name)
	}
	full := Options{}
	for _, o := range info.Options {
		full[o.Name] = o.Default
	}
	for k, v := range opts {
		known := false
		for _, o := range info.Options {
			if o.Name == k {
				known = true
			}
		}
		if !known {
			var names []string
			for _, o := range info.Options {
				names = append(names, o.Name)
			}
			return nil, fmt.Errorf("no such option '%s' for pass '%s' (options: %s)", k, name, strings.Join(names, ", "))
		}
		full[k] = v
	}
	return info.New(full)
}

// Step is one entry of a pipeline: a pass, or a nested pipeline anchored on
// ops of a given name.
type Step struct {
	PassName string
	Pass     Pass
	Anchor   string // for nested pipelines: the op name
	Nested   []*Step
}

// Name prints the step for --print-ir-* banners.
func (s *Step) Name() string {
	if s.Anchor != "" {
		return s.Anchor
	}
	return s.PassName
}

// Instrumentation observes a pipeline run.
type Instrumentation struct {
	Before func(step *Step, op *ir.Operation)
	After  func(step *Step, op *ir.Operation)
}

// RunPipeline runs steps on op, verifying the IR after each pass. Before
// a pass runs, its needs that no earlier step met are checked on the IR
// (needs.go).
func RunPipeline(op *ir.Operation, steps []*Step, ctx *Context, instr *Instrumentation) error {
	return runSteps(op, steps, ctx, instr, map[string]bool{})
}

// runSteps runs steps on op; ran holds the passes run so far.
func runSteps(op *ir.Operation, steps []*Step, ctx *Context, instr *Instrumentation, ran map[string]bool) error {
	for _, s := range steps {
		if s.Anchor != "" {
			var anchors []*ir.Operation
			ir.Walk(op, func(o *ir.Operation) ir.WalkResult {
				if o != op && o.Name() == s.Anchor {
					anchors = append(anchors, o)
					return ir.Skip
				}
				return ir.Advance
			})
			if op.Name() == s.Anchor {
				anchors = []*ir.Operation{op}
			}
			for _, a := range anchors {
				if err := runSteps(a, s.Nested, ctx, instr, ran); err != nil {
					return err
				}
			}
			continue
		}
		if info := Lookup(s.PassName); info != nil {
			if err := checkNeeds(op, info, ran); err != nil {
				return err
			}
		}
		ran[s.PassName] = true
		if instr != nil && instr.Before != nil {
			instr.Before(s, op)
		}
		if err := s.Pass.Run(op, ctx); err != nil {
			return err
		}
		if instr != nil && instr.After != nil {
			instr.After(s, op)
		}
		if err := ir.VerifyModule(op); err != nil {
			d := ir.AsDiagnostics(err)[0]
			d.AttachNote(op.Loc, "IR is invalid after pass '%s'", s.PassName)
			return d
		}
	}
	return nil
}
