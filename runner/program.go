package runner

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/tmac-dev/tmac/bundle"
	"github.com/tmac-dev/tmac/codegen"
	_ "github.com/tmac-dev/tmac/dialects/all" // the ops of programs and bundles
	"github.com/tmac-dev/tmac/dialects/gpu"
	"github.com/tmac-dev/tmac/driver"
	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/passes"
	_ "github.com/tmac-dev/tmac/passes/all" // the passes pipelines name
	"github.com/tmac-dev/tmac/runtime/plan"
	"github.com/tmac-dev/tmac/toolchain"
)

// Program is a compiled program, what a bundle holds: the module after
// tmac's passes (the host functions and the kernels), the LLVM IR and PTX
// of its kernels, and the target. An entry function (plan.SelectEntry)
// runs through its declarative host plan (plan.Describe, or the bundle's
// manifest) or, when its host code has none, plan.Build's IR executor.
type Program struct {
	Module  *ir.Operation
	Source  string // file name the module was compiled from
	LLVM    string // empty when compiled for the emulator
	PTX     string // empty when compiled for the emulator
	Target  string // e.g. sm_90a
	Sources *ir.SourceMgr
	// FromBundle is the bundle the program was read from (nil: compiled
	// from source); its manifest's entries are the host plans tmac run
	// executes.
	FromBundle *bundle.Bundle
}

// ReadSource reads a program's text ("-" is standard input); the error is
// an *Error that reports the failure as every tmac command does. file is
// the name diagnostics use and sm renders them.
func ReadSource(path string) (file, text string, sm *ir.SourceMgr, err error) {
	text, err = driver.ReadInput(path)
	if err != nil {
		return "", "", nil, failed(nil, &readError{err})
	}
	file = path
	if path == "-" {
		file = "<stdin>"
	}
	sm = ir.NewSourceMgr()
	sm.Add(file, text)
	return file, text, sm, nil
}

// CompileOptions says how Compile compiles a module.
type CompileOptions struct {
	Steps []*passes.Step // the pass pipeline
	LLC   toolchain.LLCOptions
	// Emu compiles for the emulator, which runs the IR: no llc, no PTX.
	Emu bool
	// Warn receives the pipeline's warnings (nil: dropped).
	Warn func(*ir.Diagnostic)
}

// Compile runs the pass pipeline on mod and compiles its kernels to PTX,
// raising the PTX version to what the kernels need.
func Compile(mod *ir.Operation, source string, opts CompileOptions) (*Program, error) {
	warn := opts.Warn
	if warn == nil {
		warn = func(*ir.Diagnostic) {}
	}
	if err := passes.RunPipeline(mod, opts.Steps, &passes.Context{Emit: warn}, nil); err != nil {
		return nil, err
	}
	cg, err := codegen.Emit(mod)
	if err != nil {
		return nil, err
	}
	llc := opts.LLC
	if llc.PTXVersion < cg.PTXVersion {
		llc.PTXVersion = cg.PTXVersion
	}
	p := &Program{Module: mod, Source: source, Target: llc.MCPU}
	if opts.Emu {
		return p, nil
	}
	if err := cg.CheckLibdevice(llc.Libdevice); err != nil {
		return nil, err
	}
	p.LLVM = cg.Module.String()
	if p.PTX, err = toolchain.CompilePTX(p.LLVM, llc); err != nil {
		return nil, err
	}
	return p, nil
}

// ReadBundle reads a .tmab bundle written by Program.Bundle (tmac compile
// --emit=bundle): no llc is needed to run it. The error is an *Error.
func ReadBundle(path string) (*Program, error) {
	b, err := bundle.ReadFile(path)
	if err != nil {
		return nil, failed(nil, err)
	}
	name := filepath.Base(path) + ":" + bundle.ModuleFile
	sm := ir.NewSourceMgr()
	sm.Add(name, b.Module)
	mod, err := driver.ParseChunk(driver.Chunk{File: name, Text: b.Module, FirstLine: 1}, false)
	if err != nil {
		return nil, failed(sm, err)
	}
	return &Program{Module: mod, Source: b.Manifest.Source, LLVM: b.LLVM, PTX: b.PTX, Target: b.Manifest.Target, Sources: sm, FromBundle: b}, nil
}

// Load compiles the .tma file at path in-process (opts.Pipeline, opts.LLC;
// no llc for the emulator) or reads a .tmab bundle. Warnings of the
// compilation are written to opts.Diag as they come.
func Load(path string, opts Options) (*Program, error) {
	if strings.HasSuffix(path, bundle.Ext) {
		return ReadBundle(path)
	}
	file, text, sm, err := ReadSource(path)
	if err != nil {
		return nil, err
	}
	steps, err := passes.ParsePipeline(opts.Pipeline)
	if err != nil {
		return nil, failed(sm, err)
	}
	mod, err := driver.ParseChunk(driver.Chunk{File: file, Text: text, FirstLine: 1}, false)
	if err != nil {
		return nil, failed(sm, err)
	}
	diag := opts.Diag
	if diag == nil {
		diag = io.Discard
	}
	p, err := Compile(mod, file, CompileOptions{Steps: steps, LLC: opts.LLC, Emu: opts.Target == "emu",
		Warn: func(d *ir.Diagnostic) { fmt.Fprint(diag, d.Render(sm)) }})
	if err != nil {
		return nil, failed(sm, err)
	}
	p.Sources = sm
	return p, nil
}

// Bundle packs the program into a .tmab bundle: every kernel with its
// parameter layout, the PTX, the LLVM IR and the module printed.
// tmacVersion is recorded in the manifest.
func (p *Program) Bundle(tmacVersion string) ([]byte, error) {
	kernels, err := BundleKernels(p.Module)
	if err != nil {
		return nil, err
	}
	if len(kernels) == 0 {
		return nil, fmt.Errorf("the program has no kernels to put in a bundle")
	}
	entries, err := p.Entries()
	if err != nil {
		return nil, err
	}
	ver, ok := bundle.PTXVersion(p.PTX)
	if !ok {
		return nil, fmt.Errorf("llc produced PTX without a .version directive")
	}
	target := p.Target
	if target == "" {
		target = "sm_90a"
	}
	return bundle.Marshal(&bundle.Bundle{
		Manifest: bundle.Manifest{
			TmacVersion: tmacVersion,
			Source:      filepath.Base(p.Source),
			Target:      target,
			PTXVersion:  ver,
			Kernels:     kernels,
			Entries:     entries,
		},
		PTX:    p.PTX,
		LLVM:   p.LLVM,
		Module: ir.Print(p.Module, ir.PrintOptions{}),
	})
}

// Entries translates every public host function (plan.EntryCandidates)
// into its declarative host plan; host code outside the plan language is a
// diagnostic at the op.
func (p *Program) Entries() ([]bundle.Entry, error) {
	entries := []bundle.Entry{}
	for _, fn := range plan.EntryCandidates(p.Module) {
		e, err := plan.Describe(p.Module, fn)
		if err != nil {
			return nil, err
		}
		entries = append(entries, *e)
	}
	return entries, nil
}

// BundleKernels describes every kernel (gpu.func with the kernel
// attribute, in gpu.module order, which is the PTX order) with the
// parameter layout codegen gave it.
func BundleKernels(mod *ir.Operation) ([]bundle.Kernel, error) {
	var kernels []bundle.Kernel
	var firstErr error
	ir.Walk(mod, func(op *ir.Operation) ir.WalkResult {
		m, ok := gpu.AsModule(op)
		if !ok {
			return ir.Advance
		}
		for _, f := range m.BodyRegion().Entry().Ops() {
			fn, ok := gpu.AsFunc(f)
			if !ok || !f.HasAttr("gpu.kernel") {
				continue
			}
			ta, _ := fn.FunctionType().(*ir.TypeAttr)
			ft, _ := ta.Value.(*ir.FunctionType)
			params, err := codegen.Params(ft.Inputs, true)
			if err != nil && firstErr == nil {
				firstErr = err
			}
			k := bundle.Kernel{Name: f.SymbolName(), Args: []string{}, Params: []bundle.Param{}}
			for _, t := range ft.Inputs {
				k.Args = append(k.Args, t.String())
			}
			for _, p := range params {
				k.Params = append(k.Params, bundle.Param{Arg: p.Arg, Role: p.Role.String(), Dim: p.Dim, Type: p.Type.String()})
			}
			kernels = append(kernels, k)
		}
		return ir.Skip
	})
	return kernels, firstErr
}
