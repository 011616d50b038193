package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tmac-dev/tmac/codegen"
	"github.com/tmac-dev/tmac/dialects/tmac"
	"github.com/tmac-dev/tmac/driver"
	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/passes"
	"github.com/tmac-dev/tmac/toolchain"
)

// tmac tune (issue 7): autotuning of a tile loop's schedule, split in two
// because the GPU machine has no llc. `tmac tune build` (here) compiles one
// bundle per combination of stage count, store stage count and schedule;
// `tmac tune run` (on the GPU machine) runs and times each one like
// `tmac run --bench` and ranks them.
//
// The knobs are the tile loop's attributes, set on the parsed IR:
// tmac.stages (tma-pipeline's and warp-specialize's ring depth),
// tmac.store_stages (the rotating output tiles, on the loop that holds the
// tmac.tma.store ops: the tile loop itself, or the enclosing tile loop of
// a persistent kernel) and tmac.warp_specialize (schedule "ws": the
// warp-specialize pass adds a TMA producer warpgroup in front of the
// program's warpgroups, which become the consumers; schedule "pingpong":
// the same with two consumers taking a persistent program's tiles in turn;
// schedule "pipelined": the attribute is removed and tma-pipeline runs the
// loop in every thread). A program written for one warpgroup gets one
// consumer and a producer (256 threads) under "ws", two consumers under
// "pingpong"; one written for two gets two consumers (384 threads). Tile shapes are the program's own:
// give several programs (one per tile shape) to tune them together.

const (
	tuneManifestName = "tune.json"
	tuneResultsName  = "tune-results.json"
	tuneFormat       = "tmac-tune-1"
	tuneResultFormat = "tmac-tune-results-1"

	schedPipelined = "pipelined"
	schedWS        = "ws"
	schedPingpong  = "pingpong"
)

var tuneSchedules = []string{schedPipelined, schedWS, schedPingpong}

type tuneBuildFlags struct {
	output      string
	stages      string
	storeStages string
	schedules   string
	loop        string
	pipeline    string
	llc         toolchain.LLCOptions
}

// tuneManifest is DIR/tune.json.
type tuneManifest struct {
	Format       string        `json:"format"`
	TmacVersion  string        `json:"tmac_version"`
	PassPipeline string        `json:"pass_pipeline"`
	Sources      []*tuneSource `json:"sources"`
	Variants     []*tuneVar    `json:"variants"`
}

// tuneSource is one input program and the loop tuned in it.
type tuneSource struct {
	File         string `json:"file"`
	Loop         int    `json:"loop"` // index among the program's tunable loops
	Location     string `json:"location"`
	InductionVar string `json:"induction_var,omitempty"`
	Function     string `json:"function,omitempty"`
	// StoreLoop says where tmac.store_stages goes: "loop" (the tuned
	// loop stores tiles), "tile loop" (the enclosing loop does), or ""
	// (no tmac.tma.store: --store-stages does not apply).
	StoreLoop string `json:"store_loop,omitempty"`
	// As written in the program.
	Stages         int64 `json:"stages,omitempty"`
	StoreStages    int64 `json:"store_stages,omitempty"`
	WarpSpecialize bool  `json:"warp_specialize"`
}

// tuneVar is one variant: its parameters, its bundle and whether it
// compiled.
type tuneVar struct {
	Name        string `json:"name"`
	Source      string `json:"source"`
	Schedule    string `json:"schedule"`
	Stages      int64  `json:"stages"`
	StoreStages int64  `json:"store_stages,omitempty"` // 0: as written
	Bundle      string `json:"bundle,omitempty"`       // relative to DIR
	Status      string `json:"status"`                 // compiled or skipped
	Reason      string `json:"reason,omitempty"`       // why it was skipped
}

const (
	statusCompiled = "compiled"
	statusSkipped  = "skipped"
)

func newTuneCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tune",
		Short: "Autotune a tile loop's stages and schedule: build variants here, run them on the GPU",
		Long: `tune finds the best schedule of a simple-form tile loop (an scf.for
loading tiles with tmac.tma.load) in two steps, because the GPU machine
has no llc:

  tmac tune build FILE.tma... -o DIR   compiles one bundle per variant
  tmac tune run DIR                    runs and times them on the GPU

A variant sets, on the parsed program, the loop's tmac.stages, the
tmac.store_stages of the loop holding the tmac.tma.store ops (when there
are any) and the schedule: "pipelined" (no tmac.warp_specialize:
tma-pipeline, every thread runs the loop), "ws" (tmac.warp_specialize:
a TMA producer warpgroup is added in front of the program's warpgroups,
which become the consumers) or "pingpong" (tmac.warp_specialize =
"pingpong": a persistent program written for one warpgroup runs in two
consumer warpgroups that take its tiles in turn). Tile shapes are the programs' own: give one
program per tile shape to tune them together.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintln(cmd.ErrOrStderr(), "tmac tune: error: give a subcommand: build or run (tmac tune --help)")
			return &exitError{2}
		},
	}
	cmd.AddCommand(newTuneBuildCmd(), newTuneRunCmd())
	return cmd
}

func newTuneBuildCmd() *cobra.Command {
	f := &tuneBuildFlags{}
	cmd := &cobra.Command{
		Use:   "build FILE.tma... -o DIR",
		Short: "Compile one bundle per stage count, store stage count and schedule of a tile loop",
		Long: `build finds the tunable loop of each FILE: an scf.for that loads tiles with
tmac.tma.load (--loop picks one when there are several: its index in
program order, its induction variable (%k) or its function (@name)). For
every combination of --stages, --store-stages and --schedules it sets the
loop's attributes on the parsed IR (tmac.stages; tmac.store_stages on the
loop holding the tmac.tma.store ops, the loop itself or, in a persistent
kernel, the enclosing tile loop; tmac.warp_specialize added for "ws",
removed for "pipelined"), compiles the program with the default pipeline
and writes DIR/NAME.tmab, NAME being FILE's base name, the schedule and
the stage counts (gemm-pipelined-s3, add-ws-s4-ss2).

A combination that fails to compile is skipped, its reason recorded (over
the 227 KB of shared memory a block may use, warp-specialize needing a
block of whole warpgroups, a loop nested in a tile loop under the
pipelined schedule, "pingpong" without a persistent tile loop, ...). The
warp-specialize pass adds a producer warpgroup, so under "ws" a program
written for one warpgroup (128 threads) becomes 256 threads with one
consumer, under "pingpong" 384 threads with two.
Without --store-stages, or when a program stores no tiles, the store
stage count stays as written.

DIR/tune.json lists the sources and the variants (parameters, bundle,
status, reason); tmac tune run DIR runs them. DIR is created; it must be
empty or hold an earlier tune build, whose files are replaced.

Exit status: 0 when at least one variant compiled, 1 when none did or a
program is invalid, 2 usage error.`,
		Example: `  tmac tune build examples/gemm_pipelined.tma -o build/tune/gemm
  tmac tune build examples/gemm_pipelined.tma examples/gemm_ws.tma -o build/tune/gemm --stages 2,3,4,5
  tmac tune build examples/add_pipelined.tma -o build/tune/add --store-stages 1,2 --schedules pipelined`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runTuneBuild(cmd, f, args)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&f.output, "output", "o", "", "directory for the bundles and tune.json (required)")
	fl.StringVar(&f.stages, "stages", "2,3,4", "stage counts (tmac.stages) to try, comma-separated")
	fl.StringVar(&f.storeStages, "store-stages", "", "store stage counts (tmac.store_stages) to try (default: as written)")
	fl.StringVar(&f.schedules, "schedules", "pipelined,ws", "schedules to try: pipelined, ws, pingpong")
	fl.StringVar(&f.loop, "loop", "", "the loop to tune when a program has several: index, %iv or @function")
	fl.StringVar(&f.pipeline, "pass-pipeline", defaultPipeline, "pass pipeline")
	fl.StringVar(&f.llc.Path, "llc", "", "llc to use")
	fl.StringVar(&f.llc.MCPU, "mcpu", "sm_90a", "target GPU")
	fl.IntVarP(&f.llc.OptLevel, "opt-level", "O", 3, "llc optimisation level (0-3)")
	return cmd
}

// tuneSpace is the grid of variants.
type tuneSpace struct {
	stages      []int64
	storeStages []int64 // nil: as written
	schedules   []string
}

// parseStageList parses "2,3,4" (values 1..16, no duplicates).
func parseStageList(flag, s string) ([]int64, error) {
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

func parseSchedules(s string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, p := range strings.Split(s, ",") {
		p = strings.TrimSpace(p)
		if !slices.Contains(tuneSchedules, p) {
			return nil, fmt.Errorf("--schedules: '%s' is not a schedule (%s)", p, strings.Join(tuneSchedules, ", "))
		}
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out, nil
}

func (f *tuneBuildFlags) space(storeGiven bool) (*tuneSpace, error) {
	sp := &tuneSpace{}
	var err error
	if sp.stages, err = parseStageList("--stages", f.stages); err != nil {
		return nil, err
	}
	if storeGiven {
		if sp.storeStages, err = parseStageList("--store-stages", f.storeStages); err != nil {
			return nil, err
		}
	}
	if sp.schedules, err = parseSchedules(f.schedules); err != nil {
		return nil, err
	}
	return sp, nil
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
		if op.Name() != "scf.for" || seen[op] {
			return ir.Advance
		}
		if !loadsTiles(op) {
			return ir.Advance
		}
		seen[op] = true
		l := &tunableLoop{op: op, index: len(loops), iv: inductionName(op, lines)}
		for p := op.ParentOp(); p != nil; p = p.ParentOp() {
			if p.Name() == "func.func" || p.Name() == "gpu.func" {
				l.fn = p.SymbolName()
				break
			}
		}
		switch {
		case storesTiles(op):
			l.storeLoop, l.storeKind = op, "loop"
		case op.ParentOp() != nil && op.ParentOp().Name() == "scf.for" && storesTiles(op.ParentOp()):
			l.storeLoop, l.storeKind = op.ParentOp(), "tile loop"
		}
		loops = append(loops, l)
		return ir.Advance
	})
	return loops
}

// loadsTiles reports whether loop is the nearest scf.for around a
// tmac.tma.load.
func loadsTiles(loop *ir.Operation) bool { return hasTileOp(loop, "tmac.tma.load") }

// storesTiles reports whether loop is the nearest scf.for around a
// tmac.tma.store.
func storesTiles(loop *ir.Operation) bool { return hasTileOp(loop, "tmac.tma.store") }

func hasTileOp(loop *ir.Operation, name string) bool {
	found := false
	ir.Walk(loop, func(op *ir.Operation) ir.WalkResult {
		if found {
			return ir.Skip
		}
		if op != loop && op.Name() == "scf.for" {
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
		return fmt.Sprintf("%s:%d:%d", l.File, l.Line, l.Col)
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
// schedule, then stages, then store stages. storeStages are dropped when
// the loop stores no tiles.
func enumerate(src *tuneSource, sp *tuneSpace, hasStores bool) []*tuneVar {
	base := strings.TrimSuffix(filepath.Base(src.File), filepath.Ext(src.File))
	store := sp.storeStages
	if !hasStores || len(store) == 0 {
		store = []int64{0}
	}
	var out []*tuneVar
	for _, sched := range sp.schedules {
		for _, n := range sp.stages {
			for _, s := range store {
				out = append(out, &tuneVar{Name: variantName(base, sched, n, s), Source: src.File, Schedule: sched, Stages: n, StoreStages: s})
			}
		}
	}
	return out
}

// compileVariant parses text, sets the variant's attributes on loop
// number loopIdx and compiles it to a bundle.
func compileVariant(file, text string, loopIdx int, v *tuneVar, steps []*passes.Step, llc toolchain.LLCOptions) ([]byte, error) {
	mod, err := driver.ParseChunk(driver.Chunk{File: file, Text: text, FirstLine: 1}, false)
	if err != nil {
		return nil, err
	}
	loops := findTunableLoops(mod, text)
	if loopIdx >= len(loops) {
		return nil, fmt.Errorf("internal error: loop #%d not found again", loopIdx)
	}
	applyVariant(loops[loopIdx], v.Schedule, v.Stages, v.StoreStages)
	if err := passes.RunPipeline(mod, steps, &passes.Context{Emit: func(*ir.Diagnostic) {}}, nil); err != nil {
		return nil, err
	}
	cg, err := codegen.Emit(mod)
	if err != nil {
		return nil, err
	}
	opts := llc
	if opts.PTXVersion < cg.PTXVersion {
		opts.PTXVersion = cg.PTXVersion
	}
	llvmIR := cg.Module.String()
	ptx, err := toolchain.CompilePTX(llvmIR, opts)
	if err != nil {
		return nil, err
	}
	return makeBundle(mod, file, llvmIR, ptx, opts)
}

// skipReason is the first line of the first error of a failed variant.
func skipReason(err error) string {
	if ds := ir.AsDiagnostics(err); len(ds) > 0 {
		return firstLine(ds[0].Error())
	}
	return firstLine(err.Error())
}

// checkTuneDir accepts a missing or empty directory, or an earlier tune
// build (it has tune.json), and returns the files to remove from it.
func checkTuneDir(dir string) ([]string, error) {
	st, err := os.Stat(dir)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("-o %s: not a directory", dir)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	if len(ents) == 0 {
		return nil, nil
	}
	old, err := readTuneManifest(dir)
	if err != nil {
		return nil, fmt.Errorf("-o %s: the directory is not empty and holds no earlier tune build (%s); give a new or empty directory", dir, tuneManifestName)
	}
	mine := map[string]bool{tuneManifestName: true, tuneResultsName: true, "logs": true}
	for _, v := range old.Variants {
		if v.Bundle != "" {
			mine[v.Bundle] = true
		}
	}
	var remove []string
	for _, e := range ents {
		if !mine[e.Name()] {
			return nil, fmt.Errorf("-o %s: the directory holds '%s', which tmac tune build did not write; give a new or empty directory, or an earlier tune build", dir, e.Name())
		}
		remove = append(remove, filepath.Join(dir, e.Name()))
	}
	return remove, nil
}

func readTuneManifest(dir string) (*tuneManifest, error) {
	data, err := os.ReadFile(filepath.Join(dir, tuneManifestName))
	if err != nil {
		return nil, err
	}
	var m tuneManifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%s: %v", filepath.Join(dir, tuneManifestName), err)
	}
	if m.Format != tuneFormat {
		return nil, fmt.Errorf("%s: format '%s', expected '%s'", filepath.Join(dir, tuneManifestName), m.Format, tuneFormat)
	}
	for _, v := range m.Variants {
		if v.Bundle != "" && (filepath.IsAbs(v.Bundle) || strings.Contains(v.Bundle, "..") || strings.ContainsAny(v.Bundle, `/\`)) {
			return nil, fmt.Errorf("%s: variant %s: bundle '%s' is not a file name in the directory", filepath.Join(dir, tuneManifestName), v.Name, v.Bundle)
		}
	}
	return &m, nil
}

func writeJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

// tuneInput is one parsed source with its selected loop.
type tuneInput struct {
	src  *tuneSource
	text string
	loop *tunableLoop
}

func runTuneBuild(cmd *cobra.Command, f *tuneBuildFlags, files []string) error {
	stderr, stdout := cmd.ErrOrStderr(), cmd.OutOrStdout()
	usage := func(format string, args ...any) error {
		fmt.Fprintf(stderr, "tmac tune build: error: "+format+"\n", args...)
		return &exitError{2}
	}
	if f.output == "" {
		return usage("give the output directory with -o DIR")
	}
	if f.llc.OptLevel < 0 || f.llc.OptLevel > 3 {
		return usage("-O must be 0 to 3")
	}
	sp, err := f.space(cmd.Flags().Changed("store-stages"))
	if err != nil {
		return usage("%v", err)
	}
	steps, err := passes.ParsePipeline(f.pipeline)
	if err != nil {
		return usage("%v", err)
	}
	bases := map[string]string{}
	for _, in := range files {
		if in == "-" {
			return usage("tune build reads files, not standard input")
		}
		base := strings.TrimSuffix(filepath.Base(in), filepath.Ext(in))
		if prev, ok := bases[base]; ok {
			return usage("%s and %s have the same base name; the variants' names would clash", prev, in)
		}
		bases[base] = in
	}
	remove, err := checkTuneDir(f.output)
	if err != nil {
		return usage("%v", err)
	}

	// Parse every program and find its loop before compiling anything.
	var inputs []*tuneInput
	for _, in := range files {
		file, text, sm, err := readSource(stderr, in)
		if err != nil {
			return err
		}
		mod, err := driver.ParseChunk(driver.Chunk{File: file, Text: text, FirstLine: 1}, false)
		if err != nil {
			return renderFailure(stderr, sm, err)
		}
		loops := findTunableLoops(mod, text)
		loop, err := selectLoop(loops, f.loop)
		if err != nil {
			if len(loops) > 0 {
				return usage("%s: %v", in, err) // --loop missing or wrong
			}
			fmt.Fprintf(stderr, "tmac tune build: error: %s: %v\n", in, err)
			return &exitError{1}
		}
		src := &tuneSource{File: in, Loop: loop.index, Location: locString(loop.op.Loc), InductionVar: loop.iv,
			Function: loop.fn, StoreLoop: loop.storeKind, WarpSpecialize: loop.op.HasAttr(tmac.WarpSpecializeAttr)}
		src.Stages, _ = ir.AttrInt(loop.op.Attr(tmac.StagesAttr))
		if loop.storeLoop != nil {
			src.StoreStages, _ = ir.AttrInt(loop.storeLoop.Attr(tmac.StoreStagesAttr))
		} else if sp.storeStages != nil {
			fmt.Fprintf(stdout, "note: %s stores no tiles (no tmac.tma.store); --store-stages does not apply to it\n", in)
		}
		inputs = append(inputs, &tuneInput{src: src, text: text, loop: loop})
	}

	for _, p := range remove {
		if err := os.RemoveAll(p); err != nil {
			fmt.Fprintln(stderr, "tmac tune build: error:", err)
			return &exitError{1}
		}
	}
	if err := os.MkdirAll(f.output, 0o755); err != nil {
		return usage("-o %s: %v", f.output, err)
	}
	m := &tuneManifest{Format: tuneFormat, TmacVersion: Version, PassPipeline: f.pipeline, Sources: []*tuneSource{}, Variants: []*tuneVar{}}
	compiled := 0
	for _, in := range inputs {
		m.Sources = append(m.Sources, in.src)
		fmt.Fprintf(stdout, "%s: tuning loop %s\n", in.src.File, in.loop.describe())
		for _, v := range enumerate(in.src, sp, in.loop.storeLoop != nil) {
			m.Variants = append(m.Variants, v)
			data, err := compileVariant(in.src.File, in.text, in.src.Loop, v, steps, f.llc)
			if err != nil {
				v.Status, v.Reason = statusSkipped, skipReason(err)
				fmt.Fprintf(stdout, "  skipped  %s: %s\n", v.Name, v.Reason)
				continue
			}
			v.Bundle = v.Name + ".tmab"
			if err := os.WriteFile(filepath.Join(f.output, v.Bundle), data, 0o644); err != nil {
				fmt.Fprintln(stderr, "tmac tune build: error:", err)
				return &exitError{1}
			}
			v.Status = statusCompiled
			compiled++
			fmt.Fprintf(stdout, "  compiled %s\n", v.Name)
		}
	}
	if err := writeJSON(filepath.Join(f.output, tuneManifestName), m); err != nil {
		fmt.Fprintln(stderr, "tmac tune build: error:", err)
		return &exitError{1}
	}
	fmt.Fprintf(stdout, "%d of %d variants compiled; %s written; run them with: tmac tune run %s\n",
		compiled, len(m.Variants), filepath.Join(f.output, tuneManifestName), f.output)
	if compiled == 0 {
		return &exitError{1}
	}
	return nil
}
