package plan_test

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/tmac-dev/tmac/bundle"
	"github.com/tmac-dev/tmac/driver"
	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/passes"
	"github.com/tmac-dev/tmac/runner"
	"github.com/tmac-dev/tmac/runtime/cuda"
	"github.com/tmac-dev/tmac/runtime/plan"
)

var update = flag.Bool("update", false, "rewrite python/tests/golden")

const goldenDir = "../../python/tests/golden"

// traceDevice is a Device that records what it is asked to do as trace
// steps (section 2.10), with the golden tests' fake allocation addresses:
// the k-th allocation at 0x7e0000000000 + k<<32. A tensor map's bytes name
// its encoding ("tm" and its sequence number), so launches can show which
// map they get.
type traceDevice struct {
	steps   []any
	nAllocs int
	nMaps   int
	kernels map[string]*plan.Kernel // to tell tensor-map params apart
}

const mapMagic = "TMAC-TEST-MAP:"

func (d *traceDevice) Alloc(n int) (uint64, error) {
	p := uint64(0x7e0000000000) + uint64(d.nAllocs)<<32
	d.nAllocs++
	d.steps = append(d.steps, plan.TraceAlloc{Op: "alloc", Bytes: int64(n), Ptr: p})
	return p, nil
}
func (d *traceDevice) Free(p uint64) error {
	d.steps = append(d.steps, plan.TraceFree{Op: "free", Ptr: p})
	return nil
}
func (d *traceDevice) CopyToDevice(uint64, []byte) error { return fmt.Errorf("host copy") }
func (d *traceDevice) CopyToHost([]byte, uint64) error   { return fmt.Errorf("host copy") }
func (d *traceDevice) CopyDeviceToDevice(dst, src uint64, n int) error {
	d.steps = append(d.steps, plan.TraceCopy{Op: "copy", Dst: dst, Src: src, Bytes: int64(n)})
	return nil
}
func (d *traceDevice) Memset(dst uint64, pat []byte, n int) error {
	d.steps = append(d.steps, plan.TraceMemset{Op: "memset", Dst: dst, ElemBytes: len(pat), Count: int64(n), Value: hex.EncodeToString(pat)})
	return nil
}
func (d *traceDevice) EncodeTensorMap(td *cuda.TiledDesc) ([]byte, error) {
	id := fmt.Sprintf("tm%d", d.nMaps)
	d.nMaps++
	tm := plan.NewTraceTensorMap(id, td)
	d.steps = append(d.steps, tm)
	b := make([]byte, 128)
	copy(b, mapMagic+id)
	return b, nil
}
func (d *traceDevice) Launch(l *plan.Launch) error {
	var params []plan.TraceParam
	k := d.kernels[l.Kernel]
	for i, b := range l.Params {
		name := fmt.Sprintf("param%d", i)
		if k != nil && i < len(k.Params) {
			name = k.Params[i].Name
		}
		if len(b) == 128 && bytes.HasPrefix(b, []byte(mapMagic)) {
			params = append(params, plan.TraceParam{Name: name, TensorMap: string(bytes.TrimRight(b[len(mapMagic):], "\x00"))})
			continue
		}
		params = append(params, plan.TraceParam{Name: name, Bytes: hex.EncodeToString(b)})
	}
	d.steps = append(d.steps, plan.NewTraceLaunch(l, params))
	return nil
}
func (d *traceDevice) Synchronize() error { return nil }

// dynSizes gives the dynamic sizes of programs' memref arguments (by
// argument, then dimension), where the default of 64 does not suit the
// program's tiles.
var dynSizes = map[string]map[int][]int64{
	"examples/variants/add_pipelined_dynamic.tma": {0: {64, 256}, 1: {64, 256}, 2: {64, 256}},
	// Rows of 512 (one warp of 16 values a thread), the shortest these take.
	"examples/variants/layernorm_1pass.tma":        {0: {64, 512}, 1: {512}, 2: {512}, 3: {64, 512}},
	"examples/variants/layernorm_bf16_1pass.tma":   {0: {64, 512}, 1: {512}, 2: {512}, 3: {64, 512}},
	"examples/variants/layernorm_1pass_latewb.tma": {0: {64, 512}, 1: {512}, 2: {512}, 3: {64, 512}},
}

// bindArgs binds the fixed fake arguments of section 2.10: memref i at
// 0x7f0000000000 + i<<32, dense row-major, dynamic sizes from dynSizes or
// 64; integer scalars 3, float scalars 1.5.
func bindArgs(file string, e *bundle.Entry, types []ir.Type) ([]plan.Binding, []plan.Value, error) {
	var bs []plan.Binding
	var vals []plan.Value
	for i, a := range e.Args {
		if a.Kind == "scalar" {
			if bundle.IsFloatType(a.Elem) {
				bs, vals = append(bs, plan.Binding{Float: 1.5, IsFloat: true}), append(vals, 1.5)
			} else {
				bs, vals = append(bs, plan.Binding{Int: 3}), append(vals, int64(3))
			}
			continue
		}
		shape := make([]int64, len(a.Shape))
		for k, s := range a.Shape {
			shape[k] = s
			if s == -1 {
				shape[k] = 64
				if d := dynSizes[file][i]; k < len(d) {
					shape[k] = d[k]
				}
			}
		}
		m, err := plan.NewMem(types[i].(*ir.MemRefType).Elem, shape)
		if err != nil {
			return nil, nil, err
		}
		m.Dev = 0x7f0000000000 + uint64(i)<<32
		bs = append(bs, plan.Binding{Mem: true, Ptr: m.Dev, Shape: m.Shape, Strides: m.Strides, Elem: a.Elem})
		vals = append(vals, m)
	}
	return bs, vals, nil
}

// goldenPrograms lists the programs of the golden test: every example
// and GPU test.
func goldenPrograms(t *testing.T) []string {
	var files []string
	for _, pat := range []string{"examples/*.tma", "examples/variants/*.tma", "examples/tutorial/*.tma", "gpu-tests/*.tma"} {
		m, err := filepath.Glob(filepath.Join("../..", pat))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range m {
			rel, _ := filepath.Rel("../..", f)
			files = append(files, filepath.ToSlash(rel))
		}
	}
	sort.Strings(files)
	if len(files) < 50 {
		t.Fatalf("only %d programs found", len(files))
	}
	return files
}

// notCompiling are the programs the compiler rejects on purpose.
var notCompiling = map[string]bool{"gpu-tests/deadlock.tma": true}

// compileEmu compiles a program with the default pipeline for the
// emulator (no llc).
func compileEmu(t *testing.T, file, text string) *runner.Program {
	p, err := tryCompile(file, text)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return p
}

func tryCompile(file, text string) (*runner.Program, error) {
	steps, err := passes.ParsePipeline(driver.DefaultPipeline)
	if err != nil {
		return nil, err
	}
	mod, err := driver.ParseChunk(driver.Chunk{File: filepath.Base(file), Text: text, FirstLine: 1}, false)
	if err != nil {
		return nil, err
	}
	return runner.Compile(mod, file, runner.CompileOptions{Steps: steps, Emu: true})
}

// TestPlanGolden translates every entry of every example and GPU test
// and of the hand-made programs below, evaluates its plan on fixed fake
// arguments, checks the trace against the IR executor's on the same
// arguments, and compares entry, bindings and trace with the golden files
// the Python evaluator is tested against (-update rewrites them).
func TestPlanGolden(t *testing.T) {
	want := map[string]bool{}
	for _, file := range goldenPrograms(t) {
		text, err := os.ReadFile(filepath.Join("../..", file))
		if err != nil {
			t.Fatal(err)
		}
		if notCompiling[file] {
			if _, err := tryCompile(file, string(text)); err == nil {
				t.Errorf("%s compiles; take it off notCompiling", file)
			}
			continue
		}
		stem := strings.ReplaceAll(strings.TrimSuffix(file, ".tma"), "/", "__")
		goldenProgram(t, file, stem, string(text), want)
	}
	for _, h := range handMade {
		goldenProgram(t, "handmade/"+h.name+".tma", "handmade__"+h.name, h.text, want)
	}
	// No stale files.
	have, _ := filepath.Glob(filepath.Join(goldenDir, "*.json"))
	for _, f := range have {
		if !want[filepath.Base(f)] {
			if *update {
				os.Remove(f)
				continue
			}
			t.Errorf("%s is stale: no program produces it (go test ./runtime/plan -run TestPlanGolden -update)", f)
		}
	}
}

func goldenProgram(t *testing.T, file, stem, text string, want map[string]bool) {
	p := compileEmu(t, file, text)
	kernels, err := runner.BundleKernels(p.Module)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	cands := plan.EntryCandidates(p.Module)
	if len(cands) == 0 {
		t.Fatalf("%s: no entry", file)
	}
	for _, fn := range cands {
		e, err := plan.Describe(p.Module, fn)
		if err != nil {
			t.Errorf("%s: %v", file, err)
			continue
		}
		ft, _ := plan.FuncType(fn)
		bs, vals, err := bindArgs(file, e, ft.Inputs)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		var trace []any
		dev := &traceDevice{}
		if err := plan.Evaluate(dev, e, bs, func(s any) { trace = append(trace, s) }, nil); err != nil {
			t.Errorf("%s @%s: the plan fails: %v", file, e.Name, err)
			continue
		}
		// (a) The IR executor on the same arguments.
		pl, err := plan.Build(p.Module, fn)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		irDev := &traceDevice{kernels: pl.Kernels}
		if err := pl.Run(irDev, vals, nil); err != nil {
			t.Errorf("%s @%s: the IR executor fails: %v", file, e.Name, err)
			continue
		}
		got, wantIR := normalize(t, trace), normalize(t, irDev.steps)
		if !reflect.DeepEqual(got, wantIR) {
			t.Errorf("%s @%s: the plan's trace differs from the IR executor's:\nplan: %s\nIR:   %s", file, e.Name, jsonText(t, got), jsonText(t, wantIR))
			continue
		}
		// (b) The golden files.
		if trace == nil {
			trace = []any{}
		}
		entryJSON := struct {
			*bundle.Entry
			Kernels []bundle.Kernel `json:"kernels"`
		}{e, kernels}
		base := stem + "." + e.Name
		for _, f := range []struct {
			ext string
			v   any
		}{
			{"entry", entryJSON},
			{"bindings", plan.Bindings{Entry: e.Name, Args: bs}},
			{"trace", plan.Trace{Entry: e.Name, Steps: trace}},
		} {
			name := base + "." + f.ext + ".json"
			want[name] = true
			checkGolden(t, filepath.Join(goldenDir, name), jsonText(t, f.v))
		}
	}
}

// normalize turns a trace into plain JSON values, with the allocation ids
// dropped and tensor maps numbered in trace order (the IR executor's
// device does not know the plan's ids; a map encoded in a loop gets one
// id in the plan, a new one per encoding from the device).
func normalize(t *testing.T, steps []any) []any {
	var out []any
	if err := json.Unmarshal(jsonText(t, steps), &out); err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{}
	n := 0
	for _, s := range out {
		m := s.(map[string]any)
		switch m["op"] {
		case "alloc":
			delete(m, "id")
		case "tensormap":
			id := fmt.Sprintf("#%d", n)
			n++
			ids[m["id"].(string)] = id
			m["id"] = id
		case "launch":
			for _, p := range m["params"].([]any) {
				pm := p.(map[string]any)
				if id, ok := pm["tensormap"].(string); ok {
					pm["tensormap"] = ids[id]
				}
			}
		}
	}
	return out
}

func jsonText(t *testing.T, v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func checkGolden(t *testing.T, path string, data []byte) {
	if *update {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	old, err := os.ReadFile(path)
	if err != nil {
		t.Errorf("%s is missing (go test ./runtime/plan -run TestPlanGolden -update): %v", path, err)
		return
	}
	if !bytes.Equal(old, data) {
		t.Errorf("%s is stale (go test ./runtime/plan -run TestPlanGolden -update)", path)
	}
}

// handMade are programs whose host code uses the steps no example needs:
// scratch allocations, copies, memsets, frees, loops, dynamic sizes,
// integer and float scalar arguments, a cluster.
var handMade = []struct{ name, text string }{
	{"scratch", `module attributes {gpu.container_module} {
  func.func @scratch(%a: memref<?x16xf32>, %n: index, %s: f32, %out: memref<?x16xf32> {tmac.output}) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c32 = arith.constant 32 : index
    %f1 = arith.constant 1.0 : f32
    %rows = memref.dim %a, %c0 : memref<?x16xf32>
    %t = gpu.alloc (%rows) : memref<?x16xf32>
    gpu.memcpy %t, %a : memref<?x16xf32>, memref<?x16xf32>
    gpu.memset %t, %f1 : memref<?x16xf32>, f32
    %u = gpu.alloc () : memref<8xi32>
    %c7 = arith.constant 7 : i32
    gpu.memset %u, %c7 : memref<8xi32>, i32
    %g = arith.ceildivui %rows, %c32 : index
    scf.for %i = %c0 to %n step %c1 {
      %k = arith.muli %i, %c2 : index
      gpu.launch_func @m::@k blocks in (%g, %c1, %c1) threads in (%c32, %c1, %c1) args(%t : memref<?x16xf32>, %k : index, %s : f32, %f1 : f32, %out : memref<?x16xf32>)
    }
    memref.copy %t, %out : memref<?x16xf32> to memref<?x16xf32>
    gpu.dealloc %t : memref<?x16xf32>
    return
  }
  gpu.module @m {
    gpu.func @k(%t: memref<?x16xf32>, %k: index, %s: f32, %one: f32, %out: memref<?x16xf32>) kernel {
      gpu.return
    }
  }
}
`},
	{"cluster_loop", `module attributes {gpu.container_module} {
  func.func @cluster_loop(%a: memref<128x64xf16>, %m: i32) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %cast = memref.cast %a : memref<128x64xf16> to memref<*xf16>
    scf.for %i = %c0 to %c3 step %c1 {
      %tm = nvgpu.tma.create.descriptor %cast box[%c64, %c64] : memref<*xf16> -> <tensor = memref<64x64xf16, #gpu.address_space<workgroup>>, swizzle = swizzle_128b, l2promo = none, oob = zero, interleave = none>
      %w = arith.index_cast %i : index to i32
      %v = arith.addi %w, %m : i32
      gpu.launch_func @m::@k clusters in (%c2, %c1, %c1) blocks in (%c2, %c1, %c1) threads in (%c128, %c1, %c1) args(%tm : !nvgpu.tensormap.descriptor<tensor = memref<64x64xf16, #gpu.address_space<workgroup>>, swizzle = swizzle_128b, l2promo = none, oob = zero, interleave = none>, %v : i32)
    }
    return
  }
  gpu.module @m {
    gpu.func @k(%tm: !nvgpu.tensormap.descriptor<tensor = memref<64x64xf16, #gpu.address_space<workgroup>>, swizzle = swizzle_128b, l2promo = none, oob = zero, interleave = none>, %v: i32) kernel {
      gpu.return
    }
  }
}
`},
}

// nopDevice does nothing: the benchmarks below time the host side only.
type nopDevice struct{ traceDevice }

func (nopDevice) Launch(*plan.Launch) error                       { return nil }
func (nopDevice) EncodeTensorMap(*cuda.TiledDesc) ([]byte, error) { return make([]byte, 128), nil }

// BenchmarkHostLaunch times the host side of one launch of
// gpu-tests/overhead.tma's loop (500 launches per run) through the IR
// executor and through the declarative plan, on a device that does
// nothing (gpu-tests/overhead measures the same on a GPU).
func BenchmarkHostLaunch(b *testing.B) {
	text, err := os.ReadFile("../../gpu-tests/overhead.tma")
	if err != nil {
		b.Fatal(err)
	}
	p, err := tryCompile("gpu-tests/overhead.tma", string(text))
	if err != nil {
		b.Fatal(err)
	}
	fn := plan.EntryCandidates(p.Module)[0]
	ir, err := plan.Build(p.Module, fn)
	if err != nil {
		b.Fatal(err)
	}
	e, err := plan.Describe(p.Module, fn)
	if err != nil {
		b.Fatal(err)
	}
	ft, _ := plan.FuncType(fn)
	_, vals, err := bindArgs("", e, ft.Inputs)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		run  func() error
	}{
		{"ir", func() error { return ir.Run(&nopDevice{}, vals, nil) }},
		{"plan", func() error { return plan.RunDecl(&nopDevice{}, e, vals, nil) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			for i := 0; i < b.N; i += 500 {
				if err := c.run(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
