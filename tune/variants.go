package tune

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	funcdialect "github.com/tmac-dev/tmac/dialects/func"
	"github.com/tmac-dev/tmac/dialects/gpu"
	"github.com/tmac-dev/tmac/dialects/scf"
	"github.com/tmac-dev/tmac/dialects/tmac"
	"github.com/tmac-dev/tmac/ir"
)

// ParseStages parses a list of stage counts like "2,3,4" (from 1 to 16;
// duplicates dropped, order kept); flag names the list in errors.
func ParseStages(flag, s string) ([]int64, error) {
	var out []int64
	seen := map[int64]bool{}
	for _, p := range strings.Split(s, ",") {
		p = strings.TrimSpace(p)
		n, err := strconv.ParseInt(p, 10, 64)
		if err != nil || n < 1 || n > 16 {
			return nil, fmt.Errorf("%s: '%s' is not a stage count from 1 to 16 (give a list like 2,3,4)", flag, p)
		}
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out, nil
}

// ParseSchedules parses a list of schedules like "pipelined,ws"
// (duplicates dropped, order kept).
func ParseSchedules(s string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, p := range strings.Split(s, ",") {
		p = strings.TrimSpace(p)
		if !slices.Contains(schedules, p) {
			return nil, fmt.Errorf("--schedules: '%s' is not a schedule (%s)", p, strings.Join(schedules, ", "))
		}
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out, nil
}

// tunableLoop is an scf.for the tuner can set attributes on.
type tunableLoop struct {
	op        *ir.Operation
	index     int
	iv        string // induction variable as written ("%k"), if found
	fn        string // enclosing function's symbol
	storeLoop *ir.Operation
	storeKind string // "loop", "tile loop" or ""
}

// findTunableLoops returns, in program order, the scf.for ops that are
// the nearest loop around a tmac.tma.load. text is the program's source,
// for the induction variables' names.
func findTunableLoops(mod *ir.Operation, text string) []*tunableLoop {
	var loops []*tunableLoop
	seen := map[*ir.Operation]bool{}
	var lines []string
	if text != "" {
		lines = strings.Split(text, "\n")
	}
	ir.Walk(mod, func(op *ir.Operation) ir.WalkResult {
		if op.Name() != scf.For || seen[op] {
			return ir.Advance
		}
		if !loadsTiles(op) {
			return ir.Advance
		}
		seen[op] = true
		l := &tunableLoop{op: op, index: len(loops), iv: inductionName(op, lines)}
		for p := op.ParentOp(); p != nil; p = p.ParentOp() {
			if p.Name() == funcdialect.Func || p.Name() == gpu.Func {
				l.fn = p.SymbolName()
				break
			}
		}
		switch {
		case storesTiles(op):
			l.storeLoop, l.storeKind = op, "loop"
		case op.ParentOp() != nil && op.ParentOp().Name() == scf.For && storesTiles(op.ParentOp()):
			l.storeLoop, l.storeKind = op.ParentOp(), "tile loop"
		}
		loops = append(loops, l)
		return ir.Advance
	})
	return loops
}

// loadsTiles reports whether loop is the nearest scf.for around a
// tmac.tma.load.
func loadsTiles(loop *ir.Operation) bool { return hasTileOp(loop, tmac.TmaLoad) }

// storesTiles reports whether loop is the nearest scf.for around a
// tmac.tma.store.
func storesTiles(loop *ir.Operation) bool { return hasTileOp(loop, tmac.TmaStore) }

func hasTileOp(loop *ir.Operation, name string) bool {
	found := false
	ir.Walk(loop, func(op *ir.Operation) ir.WalkResult {
		if found {
			return ir.Skip
		}
		if op != loop && op.Name() == scf.For {
			return ir.Skip
		}
		if op.Name() == name {
			found = true
		}
		return ir.Advance
	})
	return found
}

var forIVRE = regexp.MustCompile(`scf\.for\s+(%[A-Za-z0-9_$.\-]+)`)

// inductionName reads the loop's induction variable name from the source
// line of its location.
func inductionName(loop *ir.Operation, lines []string) string {
	loc, ok := loop.Loc.(ir.FileLineColLoc)
	if !ok || loc.Line < 1 || loc.Line > len(lines) {
		return ""
	}
	line := lines[loc.Line-1]
	if loc.Col >= 1 && loc.Col <= len(line) {
		line = line[loc.Col-1:]
	}
	if m := forIVRE.FindStringSubmatch(line); m != nil {
		return m[1]
	}
	return ""
}

// locString prints a file location as file:line:col, unquoted.
func locString(loc ir.Location) string {
	if l, ok := loc.(ir.FileLineColLoc); ok {
		return l.Pos()
	}
	return loc.String()
}

func (l *tunableLoop) describe() string {
	s := fmt.Sprintf("#%d at %s", l.index, locString(l.op.Loc))
	if l.iv != "" {
		s += " (" + l.iv
		if l.fn != "" {
			s += " in @" + l.fn
		}
		s += ")"
	} else if l.fn != "" {
		s += " (in @" + l.fn + ")"
	}
	return s
}

// selectLoop picks the loop to tune: the only one, or the one sel names
// (an index, %iv / iv, or @function).
func selectLoop(loops []*tunableLoop, sel string) (*tunableLoop, error) {
	list := func() string {
		var parts []string
		for _, l := range loops {
			parts = append(parts, l.describe())
		}
		return strings.Join(parts, "; ")
	}
	if len(loops) == 0 {
		return nil, fmt.Errorf("no tunable loop: no scf.for loads tiles with tmac.tma.load")
	}
	if sel == "" {
		if len(loops) > 1 {
			return nil, fmt.Errorf("%d tunable loops; pick one with --loop (index, %%iv or @function): %s", len(loops), list())
		}
		return loops[0], nil
	}
	if n, err := strconv.Atoi(sel); err == nil {
		if n < 0 || n >= len(loops) {
			return nil, fmt.Errorf("--loop %d: the program has %d tunable loop(s): %s", n, len(loops), list())
		}
		return loops[n], nil
	}
	var match []*tunableLoop
	for _, l := range loops {
		switch {
		case strings.HasPrefix(sel, "@"):
			if "@"+l.fn == sel {
				match = append(match, l)
			}
		case l.iv != "" && (l.iv == sel || l.iv == "%"+sel):
			match = append(match, l)
		}
	}
	switch len(match) {
	case 0:
		return nil, fmt.Errorf("--loop %s names no tunable loop: %s", sel, list())
	case 1:
		return match[0], nil
	}
	return nil, fmt.Errorf("--loop %s names %d tunable loops; use an index: %s", sel, len(match), list())
}

// applyVariant sets the loop's attributes for one variant.
func applyVariant(l *tunableLoop, schedule string, stages, storeStages int64) {
	l.op.SetAttr(tmac.StagesAttr, ir.I64Attr(stages))
	if storeStages > 0 && l.storeLoop != nil {
		l.storeLoop.SetAttr(tmac.StoreStagesAttr, ir.I64Attr(storeStages))
	}
	switch schedule {
	case schedWS:
		l.op.SetAttr(tmac.WarpSpecializeAttr, ir.Unit)
	case schedPingpong:
		l.op.SetAttr(tmac.WarpSpecializeAttr, ir.Str("pingpong"))
	default:
		l.op.RemoveAttr(tmac.WarpSpecializeAttr)
	}
}

// variantName is BASE-SCHEDULE-sN[-ssS].
func variantName(base, schedule string, stages, storeStages int64) string {
	n := fmt.Sprintf("%s-%s-s%d", base, schedule, stages)
	if storeStages > 0 {
		n += fmt.Sprintf("-ss%d", storeStages)
	}
	return n
}

// enumerate lists the variants of one source in a stable order:
// schedule, then stages, then store stages. The store stages are dropped
// when the loop stores no tiles.
func enumerate(src *Source, opts *BuildOptions, hasStores bool) []*Variant {
	base := strings.TrimSuffix(filepath.Base(src.File), filepath.Ext(src.File))
	store := opts.StoreStages
	if !hasStores || len(store) == 0 {
		store = []int64{0}
	}
	var out []*Variant
	for _, sched := range opts.Schedules {
		for _, n := range opts.Stages {
			for _, s := range store {
				out = append(out, &Variant{Name: variantName(base, sched, n, s), Source: src.File, Schedule: sched, Stages: n, StoreStages: s,
					Params: src.Params})
			}
		}
	}
	return out
}
