package lowernvgpu_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/tmac-dev/tmac/codegen"
	_ "github.com/tmac-dev/tmac/dialects/all"
	"github.com/tmac-dev/tmac/driver"
	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/passes"
	"github.com/tmac-dev/tmac/runtime/emu"
)

// TestLoweredOpsAreSupported: every op lower-nvgpu can emit has a lowering
// to LLVM IR (codegen) and runs on the emulator (runtime/emu), but for the
// gaps listed below. The ops lower-nvgpu can emit are those its source
// creates (an op-name constant of the dialects it lowers to as the first
// argument of a call, as in rw.Create(nvvm.MbarrierInit, ...), or as an
// ir.OperationState's Name) and those it creates when it runs on every
// example, variant and lit test input it accepts.
func TestLoweredOpsAreSupported(t *testing.T) {
	// Ops that do not run on the emulator, and why.
	notEmulated := map[string]string{
		"memref.alloca":               "the barrier memory lower-nvgpu allocates: the emulator runs kernels after the default pipeline's second smem-plan, which places it in dynamic shared memory",
		"nvvm.cp.async.shared.global": "Ampere cp.async (nvgpu.device_async_copy) is not emulated",
		"nvvm.cp.async.commit.group":  "Ampere cp.async (nvgpu.device_async_create_group) is not emulated",
		"nvvm.cp.async.wait.group":    "Ampere cp.async (nvgpu.device_async_wait) is not emulated",
	}
	named := createdInSource(t)
	created, inputs := createdOps(t)
	if inputs < 100 || len(created) < 20 {
		t.Fatalf("lower-nvgpu ran on %d inputs and created %d kinds of ops: the corpus is not being read", inputs, len(created))
	}
	t.Logf("lower-nvgpu's source creates %d kinds of ops; it created %d kinds on %d inputs", len(named), len(created), inputs)
	all := map[string]string{} // op -> where it comes from
	for op, where := range named {
		all[op] = "created at " + where
	}
	for op, where := range created {
		if _, ok := all[op]; !ok {
			all[op] = "created on " + where
		}
	}
	for _, op := range sortedKeys(all) {
		if !codegen.Supported(op) {
			t.Errorf("%s (%s) has no lowering to LLVM IR", op, all[op])
		}
		_, gap := notEmulated[op]
		switch {
		case !emu.Emulated(op) && !gap:
			t.Errorf("%s (%s) does not run on the emulator", op, all[op])
		case emu.Emulated(op) && gap:
			t.Errorf("%s runs on the emulator now: drop it from the list of gaps", op)
		}
	}
	for op := range notEmulated {
		if _, ok := all[op]; !ok {
			t.Errorf("%s is listed as not emulated but lower-nvgpu does not emit it", op)
		}
	}
}

// createdInSource returns the ops of the dialects lower-nvgpu lowers to
// (not nvgpu and tmac, which it rewrites away) that its source creates:
// their op-name constants passed as a call's first argument or as an
// ir.OperationState's Name, each with a place that does.
func createdInSource(t *testing.T) map[string]string {
	fset := token.NewFileSet()
	consts := map[string]map[string]string{} // dialect import path -> constant -> op name
	out := map[string]string{}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		imports := map[string]string{} // local name -> dialect import path
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			dir, ok := strings.CutPrefix(path, "github.com/tmac-dev/tmac/dialects/")
			if !ok || dir == "nvgpu" || dir == "tmac" {
				continue
			}
			name := filepath.Base(dir)
			if imp.Name != nil {
				name = imp.Name.Name
			}
			imports[name] = path
			if consts[path] == nil {
				consts[path] = opConstants(t, filepath.Join("..", "..", "dialects", dir))
			}
		}
		opName := func(e ast.Expr) {
			sel, ok := e.(*ast.SelectorExpr)
			if !ok {
				return
			}
			if x, ok := sel.X.(*ast.Ident); ok && imports[x.Name] != "" {
				if op, ok := consts[imports[x.Name]][sel.Sel.Name]; ok {
					out[op] = fset.Position(sel.Pos()).String()
				}
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				if len(n.Args) > 0 {
					opName(n.Args[0])
				}
			case *ast.KeyValueExpr:
				if k, ok := n.Key.(*ast.Ident); ok && k.Name == "Name" {
					opName(n.Value)
				}
			}
			return true
		})
	}
	if len(out) < 20 {
		t.Fatalf("found %d ops created in lower-nvgpu's source: the scan is broken", len(out))
	}
	return out
}

// opConstants reads the string constants of a dialect package that name
// registered ops.
func opConstants(t *testing.T, dir string) map[string]string {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, dir, func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, pkg := range pkgs {
		for _, f := range pkg.Files {
			for _, decl := range f.Decls {
				gd, ok := decl.(*ast.GenDecl)
				if !ok || gd.Tok != token.CONST {
					continue
				}
				for _, spec := range gd.Specs {
					vs := spec.(*ast.ValueSpec)
					for i, name := range vs.Names {
						if i >= len(vs.Values) {
							continue
						}
						if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
							if s, err := strconv.Unquote(lit.Value); err == nil && ir.LookupOp(s) != nil {
								out[name.Name] = s
							}
						}
					}
				}
			}
		}
	}
	return out
}

// createdOps runs lower-nvgpu on every example, variant and lit test input
// (each split chunk) it accepts, after the default pipeline's passes
// before it or alone, and returns the ops it created, each with an input
// it created it on, and the number of inputs.
func createdOps(t *testing.T) (map[string]string, int) {
	var files []string
	for _, root := range []string{"../../examples", "../../lit-tests"} {
		err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && (strings.HasSuffix(path, ".tma") || strings.HasSuffix(path, ".mlir")) {
				files = append(files, path)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	all, err := passes.ParsePipeline(driver.DefaultPipeline)
	if err != nil {
		t.Fatal(err)
	}
	var upTo []*passes.Step // the default pipeline through lower-nvgpu
	for _, s := range all {
		upTo = append(upTo, s)
		if s.PassName == "lower-nvgpu" {
			break
		}
	}
	alone, err := passes.ParsePipeline("builtin.module(lower-nvgpu)")
	if err != nil {
		t.Fatal(err)
	}
	created := map[string]string{}
	inputs := 0
	for _, file := range files {
		text, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, chunk := range driver.Split(file, string(text), true) {
			for _, steps := range [][]*passes.Step{upTo, alone} {
				mod, err := ir.Parse(file, chunk.Text, ir.ParseOptions{})
				if err != nil || ir.VerifyModule(mod) != nil {
					break
				}
				before := map[*ir.Operation]bool{}
				var made []string
				instr := &passes.Instrumentation{
					Before: func(s *passes.Step, op *ir.Operation) {
						if s.PassName == "lower-nvgpu" {
							ir.Walk(op, func(o *ir.Operation) ir.WalkResult { before[o] = true; return ir.Advance })
						}
					},
					After: func(s *passes.Step, op *ir.Operation) {
						if s.PassName == "lower-nvgpu" {
							ir.Walk(op, func(o *ir.Operation) ir.WalkResult {
								if !before[o] {
									made = append(made, o.Name())
								}
								return ir.Advance
							})
						}
					},
				}
				if passes.RunPipeline(mod, steps, nil, instr) != nil {
					continue
				}
				inputs++
				for _, name := range made {
					if _, ok := created[name]; !ok {
						created[name] = file
					}
				}
				break
			}
		}
	}
	return created, inputs
}

func sortedKeys(m map[string]string) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
