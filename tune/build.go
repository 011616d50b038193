package tune

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/tmac-dev/tmac/dialects/tmac"
	"github.com/tmac-dev/tmac/driver"
	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/passes"
	"github.com/tmac-dev/tmac/runner"
	"github.com/tmac-dev/tmac/toolchain"
)

// BuildOptions says which variants Build compiles, and how.
type BuildOptions struct {
	Output      string   // the directory of the bundles and tune.json
	Stages      []int64  // tmac.stages values to try (ParseStages)
	StoreStages []int64  // tmac.store_stages values to try; nil: as written
	Schedules   []string // pipelined, ws, pingpong (ParseSchedules)
	// Loop picks the loop to tune when a program has several: its index
	// in program order, its induction variable (%k) or its function
	// (@name).
	Loop        string
	Pipeline    string // the pass pipeline
	LLC         toolchain.LLCOptions
	TmacVersion string    // recorded in tune.json and the bundles
	Out         io.Writer // progress: the loops tuned, each variant compiled or skipped
	// Generator, when set, writes more programs to tune (one per
	// combination of its parameters) into DIR/src before the files are
	// read.
	Generator *Generator
}

// Build finds the tunable loop of each file (an scf.for loading tiles
// with tmac.tma.load), compiles one bundle per combination of the
// options' stages, store stages and schedules into opts.Output, and
// writes the manifest there. A variant that fails to compile is skipped
// with its reason. The directory must be missing, empty or an earlier
// tune build, whose files are replaced. The error is a *runner.Error;
// when no variant compiled it has exit status 1 and no message.
func Build(files []string, opts BuildOptions) (*Manifest, error) {
	out := opts.Out
	if out == nil {
		out = io.Discard
	}
	usage := func(format string, args ...any) error {
		return &runner.Error{Status: runner.StatusUsage, Errs: []error{runner.Messagef(format, args...)}}
	}
	failed := func(err error) error {
		return &runner.Error{Status: runner.StatusFailed, Errs: []error{runner.Messagef("%v", err)}}
	}
	steps, err := passes.ParsePipeline(opts.Pipeline)
	if err != nil {
		return nil, usage("%v", err)
	}
	if len(files) == 0 && opts.Generator == nil {
		return nil, usage("give the programs to tune, or --generate")
	}
	// Generated programs are written to a temporary directory first (the
	// output directory is emptied only once everything parsed), then to
	// DIR/src; their sources are recorded under that final path.
	var gens []*generated
	keepGenerated := func() {}
	if g := opts.Generator; g != nil {
		if err := g.check(); err != nil {
			return nil, usage("%v", err)
		}
		tmp, err := os.MkdirTemp("", "tmac-tune-gen-")
		if err != nil {
			return nil, failed(err)
		}
		// Kept when a generated program does not parse: the diagnostics
		// name it there.
		keep := false
		defer func() {
			if !keep {
				os.RemoveAll(tmp)
			}
		}()
		keepGenerated = func() { keep = true }
		if gens, err = g.run(tmp, out); err != nil {
			return nil, failed(err)
		}
		if len(gens) == 0 && len(files) == 0 {
			return nil, failed(fmt.Errorf("--generate: the command refused every combination"))
		}
	}
	paths := append([]string{}, files...) // where each program is read
	names := append([]string{}, files...) // the file recorded for it
	params := make([]map[string]string, len(files))
	for _, g := range gens {
		paths = append(paths, g.path)
		names = append(names, filepath.Join(opts.Output, generatedDir, g.name+".tma"))
		params = append(params, g.params)
	}
	bases := map[string]string{}
	for _, in := range names {
		if in == "-" {
			return nil, usage("tune build reads files, not standard input")
		}
		base := strings.TrimSuffix(filepath.Base(in), filepath.Ext(in))
		if prev, ok := bases[base]; ok {
			return nil, usage("%s and %s have the same base name; the variants' names would clash", prev, in)
		}
		bases[base] = in
	}
	remove, err := checkDir(opts.Output)
	if err != nil {
		return nil, usage("%v", err)
	}

	// Parse every program and find its loop before compiling anything.
	var inputs []*input
	for i, in := range names {
		file, text, sm, err := runner.ReadSource(paths[i])
		if err != nil {
			return nil, err
		}
		generatedFile := i >= len(files)
		if generatedFile {
			file = in // a generated program: named by its place in DIR/src
			sm = ir.NewSourceMgr()
			sm.Add(in, text)
		}
		mod, err := driver.ParseChunk(driver.Chunk{File: file, Text: text, FirstLine: 1}, false)
		if err != nil {
			errs := []error{err}
			if generatedFile {
				// DIR/src is not written yet: keep the program where it was
				// generated so that it can be read.
				keepGenerated()
				errs = append(errs, runner.Messagef("%s is not written (the build stopped); the generated program is kept at %s", in, paths[i]))
			}
			return nil, &runner.Error{Status: runner.StatusFailed, Errs: errs, Sources: sm}
		}
		loops := findTunableLoops(mod, text)
		loop, err := selectLoop(loops, opts.Loop)
		if err != nil {
			if len(loops) > 0 {
				return nil, usage("%s: %v", in, err) // --loop missing or wrong
			}
			return nil, failed(fmt.Errorf("%s: %v", in, err))
		}
		src := &Source{File: in, Loop: loop.index, Location: locString(loop.op.Loc), InductionVar: loop.iv,
			Function: loop.fn, StoreLoop: loop.storeKind, WarpSpecialize: loop.op.HasAttr(tmac.WarpSpecializeAttr),
			Params: params[i]}
		src.Stages, _ = ir.AttrInt(loop.op.Attr(tmac.StagesAttr))
		if loop.storeLoop != nil {
			src.StoreStages, _ = ir.AttrInt(loop.storeLoop.Attr(tmac.StoreStagesAttr))
		} else if opts.StoreStages != nil {
			fmt.Fprintf(out, "note: %s stores no tiles (no tmac.tma.store); --store-stages does not apply to it\n", in)
		}
		inputs = append(inputs, &input{src: src, text: text, loop: loop})
	}

	for _, p := range remove {
		if err := os.RemoveAll(p); err != nil {
			return nil, failed(err)
		}
	}
	if err := os.MkdirAll(opts.Output, 0o755); err != nil {
		return nil, usage("-o %s: %v", opts.Output, err)
	}
	if len(gens) > 0 {
		if err := os.MkdirAll(filepath.Join(opts.Output, generatedDir), 0o755); err != nil {
			return nil, failed(err)
		}
		for _, in := range inputs[len(files):] {
			if err := os.WriteFile(in.src.File, []byte(in.text), 0o644); err != nil {
				return nil, failed(err)
			}
		}
	}
	m := &Manifest{Format: ManifestFormat, TmacVersion: opts.TmacVersion, PassPipeline: opts.Pipeline, Sources: []*Source{}, Variants: []*Variant{},
		Generator: opts.Generator}
	compiled := 0
	for _, in := range inputs {
		m.Sources = append(m.Sources, in.src)
		fmt.Fprintf(out, "%s: tuning loop %s\n", in.src.File, in.loop.describe())
		for _, v := range enumerate(in.src, &opts, in.loop.storeLoop != nil) {
			m.Variants = append(m.Variants, v)
			data, err := compileVariant(in.src.File, in.text, in.src.Loop, v, steps, &opts)
			if err != nil {
				v.Status, v.Reason = statusSkipped, skipReason(err)
				fmt.Fprintf(out, "  skipped  %s: %s\n", v.Name, v.Reason)
				continue
			}
			v.Bundle = v.Name + ".tmab"
			if err := os.WriteFile(filepath.Join(opts.Output, v.Bundle), data, 0o644); err != nil {
				return m, failed(err)
			}
			v.Status = statusCompiled
			compiled++
			fmt.Fprintf(out, "  compiled %s\n", v.Name)
		}
	}
	if err := writeJSON(filepath.Join(opts.Output, ManifestName), m); err != nil {
		return m, failed(err)
	}
	fmt.Fprintf(out, "%d of %d variants compiled; %s written; run them with: tmac tune run %s\n",
		compiled, len(m.Variants), filepath.Join(opts.Output, ManifestName), opts.Output)
	if compiled == 0 {
		return m, &runner.Error{Status: runner.StatusFailed}
	}
	return m, nil
}

// input is one parsed source with its selected loop.
type input struct {
	src  *Source
	text string
	loop *tunableLoop
}

// compileVariant parses text, sets the variant's attributes on loop
// number loopIdx and compiles it to a bundle.
func compileVariant(file, text string, loopIdx int, v *Variant, steps []*passes.Step, opts *BuildOptions) ([]byte, error) {
	mod, err := driver.ParseChunk(driver.Chunk{File: file, Text: text, FirstLine: 1}, false)
	if err != nil {
		return nil, err
	}
	loops := findTunableLoops(mod, text)
	if loopIdx >= len(loops) {
		return nil, fmt.Errorf("internal error: loop #%d not found again", loopIdx)
	}
	applyVariant(loops[loopIdx], v.Schedule, v.Stages, v.StoreStages)
	p, err := runner.Compile(mod, file, runner.CompileOptions{Steps: steps, LLC: opts.LLC})
	if err != nil {
		return nil, err
	}
	return p.Bundle(opts.TmacVersion)
}

// skipReason is the first line of the first error of a failed variant.
func skipReason(err error) string {
	msg := err.Error()
	if ds := ir.AsDiagnostics(err); len(ds) > 0 {
		msg = ds[0].Error()
	}
	line, _, _ := strings.Cut(msg, "\n")
	return line
}
