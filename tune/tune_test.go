package tune

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tmac-dev/tmac/bundle"
	"github.com/tmac-dev/tmac/dialects/scf"
	"github.com/tmac-dev/tmac/driver"
	"github.com/tmac-dev/tmac/internal/testutil"
	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/runner"
	"github.com/tmac-dev/tmac/runtime/plan"
	"github.com/tmac-dev/tmac/toolchain"
)

// tunableLoops parses the program at path and finds its tunable loops,
// failing unless there are n.
func tunableLoops(t *testing.T, path string, n int) (*ir.Operation, []*tunableLoop) {
	t.Helper()
	mod, text := testutil.ParseFile(t, path)
	loops := findTunableLoops(mod, text)
	if len(loops) != n {
		t.Fatalf("%s: %d loops, want %d", path, len(loops), n)
	}
	return mod, loops
}

func TestParseTuneLists(t *testing.T) {
	got, err := ParseStages("--stages", " 3,2,3 ,16")
	if err != nil || len(got) != 3 || got[0] != 3 || got[1] != 2 || got[2] != 16 {
		t.Errorf("ParseStages: %v %v (want 3 2 16: duplicates dropped, order kept)", got, err)
	}
	for _, bad := range []string{"", "0", "17", "2,,3", "x", "2.5", "-1"} {
		if _, err := ParseStages("--stages", bad); err == nil || !strings.Contains(err.Error(), "is not a stage count from 1 to 16") {
			t.Errorf("ParseStages(%q): %v", bad, err)
		}
	}
	s, err := ParseSchedules("ws,pipelined,ws")
	if err != nil || strings.Join(s, " ") != "ws pipelined" {
		t.Errorf("ParseSchedules: %v %v", s, err)
	}
	if s, err := ParseSchedules("pipelined,pingpong"); err != nil || strings.Join(s, " ") != "pipelined pingpong" {
		t.Errorf("ParseSchedules(pingpong): %v %v", s, err)
	}
	if _, err := ParseSchedules("pipelined,cooperative"); err == nil || !strings.Contains(err.Error(), "'cooperative' is not a schedule (pipelined, ws, pingpong)") {
		t.Errorf("ParseSchedules(cooperative): %v", err)
	}
}

func TestEnumerateVariants(t *testing.T) {
	sp := &BuildOptions{Stages: []int64{2, 4}, StoreStages: []int64{1, 2}, Schedules: []string{schedPipelined, schedWS}}
	src := &Source{File: "dir/add.tma"}
	var names []string
	for _, v := range enumerate(src, sp, true) {
		names = append(names, v.Name)
		if v.Source != "dir/add.tma" || v.Status != "" {
			t.Errorf("%s: source %q status %q", v.Name, v.Source, v.Status)
		}
	}
	want := "add-pipelined-s2-ss1 add-pipelined-s2-ss2 add-pipelined-s4-ss1 add-pipelined-s4-ss2 add-ws-s2-ss1 add-ws-s2-ss2 add-ws-s4-ss1 add-ws-s4-ss2"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("with stores:\n%s\nwant\n%s", got, want)
	}
	// A loop that stores no tiles: the store stages do not multiply the
	// variants, and none is recorded.
	vs := enumerate(&Source{File: "gemm.tma"}, sp, false)
	names = nil
	for _, v := range vs {
		names = append(names, v.Name)
		if v.StoreStages != 0 {
			t.Errorf("%s: store stages %d", v.Name, v.StoreStages)
		}
	}
	if got := strings.Join(names, " "); got != "gemm-pipelined-s2 gemm-pipelined-s4 gemm-ws-s2 gemm-ws-s4" {
		t.Errorf("without stores: %s", got)
	}
	if v := vs[3]; v.Schedule != schedWS || v.Stages != 4 {
		t.Errorf("last variant %+v", v)
	}
}

func TestFindAndSelectLoops(t *testing.T) {
	_, loops := tunableLoops(t, "../lit-tests/tune/Inputs/two-loops.tma", 2)
	for i, want := range []string{"%i", "%j"} {
		l := loops[i]
		if l.index != i || l.iv != want || l.fn != "two" || l.storeLoop != nil || l.storeKind != "" {
			t.Errorf("loop %d: index %d iv %q fn %q store %v", i, l.index, l.iv, l.fn, l.storeKind)
		}
	}
	for sel, want := range map[string]int{"0": 0, "1": 1, "%i": 0, "j": 1, "%j": 1} {
		l, err := selectLoop(loops, sel)
		if err != nil || l.index != want {
			t.Errorf("--loop %s: %v, want #%d", sel, err, want)
		}
	}
	for sel, want := range map[string]string{
		"":     "2 tunable loops; pick one with --loop",
		"2":    "--loop 2: the program has 2 tunable loop(s): #0 at ../lit-tests/tune/Inputs/two-loops.tma:22:5 (%i in @two); #1",
		"-1":   "--loop -1: the program has 2",
		"%q":   "--loop %q names no tunable loop",
		"@two": "--loop @two names 2 tunable loops; use an index",
		"@one": "--loop @one names no tunable loop",
	} {
		if _, err := selectLoop(loops, sel); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("--loop %q: %v, want %q", sel, err, want)
		}
	}
	if _, err := selectLoop(nil, ""); err == nil || !strings.Contains(err.Error(), "no tunable loop: no scf.for loads tiles with tmac.tma.load") {
		t.Errorf("no loops: %v", err)
	}
	one := loops[1:]
	if l, err := selectLoop(one, ""); err != nil || l != loops[1] {
		t.Errorf("a single loop is taken without --loop: %v", err)
	}
	if l, err := selectLoop(one, "@two"); err != nil || l != loops[1] {
		t.Errorf("@function: %v", err)
	}
}

// TestApplyVariant sets the attributes on a persistent warp-specialised
// GEMM with a TMA-store epilogue: tmac.stages and tmac.warp_specialize on
// the K loop, tmac.store_stages on the tile loop around it, and the
// pipelined schedule removes tmac.warp_specialize again.
func TestApplyVariant(t *testing.T) {
	mod, loops := tunableLoops(t, "../examples/variants/gemm_ws_persistent_tmastore.tma", 1)
	l := loops[0]
	tile := l.op.ParentOp()
	if l.iv != "%k" || l.storeKind != "tile loop" || l.storeLoop != tile || tile.Name() != scf.For {
		t.Fatalf("loop %q, store loop %q (%v)", l.iv, l.storeKind, l.storeLoop)
	}
	attrs := func(op *ir.Operation) string {
		var parts []string
		for _, a := range op.DiscardableAttrs() {
			parts = append(parts, a.Name+"="+a.Value.String())
		}
		return strings.Join(parts, " ")
	}
	if got := attrs(l.op); got != "tmac.stages=4 : i64 tmac.warp_specialize=unit" {
		t.Fatalf("as written: %s", got)
	}
	applyVariant(l, schedWS, 3, 2)
	if got := attrs(l.op); got != "tmac.stages=3 : i64 tmac.warp_specialize=unit" {
		t.Errorf("ws s3: K loop %s", got)
	}
	if got := attrs(tile); got != "tmac.store_stages=2 : i64" {
		t.Errorf("ws s3 ss2: tile loop %s", got)
	}
	applyVariant(l, schedPipelined, 5, 0)
	if got := attrs(l.op); got != "tmac.stages=5 : i64" {
		t.Errorf("pipelined s5: K loop %s", got)
	}
	if got := attrs(tile); got != "tmac.store_stages=2 : i64" {
		t.Errorf("store stages 0 must leave the attribute as it is: %s", got)
	}
	// The printed module parses again and carries the attributes.
	out := ir.Print(mod, ir.PrintOptions{})
	if !strings.Contains(out, "{tmac.stages = 5 : i64}") || !strings.Contains(out, "{tmac.store_stages = 2 : i64}") || strings.Contains(out, "tmac.warp_specialize") {
		t.Errorf("printed attributes wrong")
	}
	if _, err := driver.ParseChunk(driver.Chunk{File: "p.tma", Text: out, FirstLine: 1}, false); err != nil {
		t.Errorf("printed variant does not parse: %v", err)
	}

	// A loop that holds its own stores gets tmac.store_stages itself.
	_, loops = tunableLoops(t, "../examples/add_pipelined.tma", 1)
	l = loops[0]
	if l.storeKind != "loop" || l.storeLoop != l.op || l.iv != "%t" {
		t.Fatalf("add: %q %q", l.storeKind, l.iv)
	}
	applyVariant(l, schedWS, 2, 1)
	if got := attrs(l.op); got != "tmac.stages=2 : i64 tmac.store_stages=1 : i64 tmac.warp_specialize=unit" {
		t.Errorf("add ws s2 ss1: %s", got)
	}
}

// build runs Build on files with tmac tune build's defaults, changed by
// set, and returns the progress and the error as tmac tune build reports
// them, with the exit status.
func build(files []string, set func(*BuildOptions)) (stdout, stderr string, code int) {
	var out bytes.Buffer
	opts := BuildOptions{Stages: []int64{2, 3, 4}, Schedules: []string{schedPipelined, schedWS}, Pipeline: driver.DefaultPipeline,
		LLC: toolchain.LLCOptions{MCPU: "sm_90a", OptLevel: 3}, Out: &out}
	set(&opts)
	_, err := Build(files, opts)
	stderr, code = report(err, "tmac tune build")
	return out.String(), stderr, code
}

// report gives what tmac reports for err and its exit status.
func report(err error, cmd string) (string, int) {
	if err == nil {
		return "", 0
	}
	var e *runner.Error
	if !errors.As(err, &e) {
		return err.Error(), -1
	}
	var w bytes.Buffer
	e.Report(&w, cmd)
	return w.String(), e.Status
}

func needLLC(t *testing.T) {
	t.Helper()
	if _, err := toolchain.FindLLC(""); err != nil {
		t.Skipf("no llc: %v", err)
	}
}

// TestTuneBuild builds the GEMM example's variants: those that fit
// compile to bundles with the right stage count and block size, 8 stages
// are skipped for shared memory, and tune.json says so.
func TestTuneBuild(t *testing.T) {
	needLLC(t)
	dir := filepath.Join(t.TempDir(), "tune")
	stdout, stderr, code := build([]string{"../examples/gemm_pipelined.tma"}, func(o *BuildOptions) {
		o.Output, o.Stages, o.StoreStages = dir, []int64{2, 8, 3}, []int64{1, 2}
	})
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "note: ../examples/gemm_pipelined.tma stores no tiles (no tmac.tma.store); --store-stages does not apply to it") ||
		!strings.Contains(stdout, "4 of 6 variants compiled") {
		t.Errorf("stdout:\n%s", stdout)
	}
	m, err := ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Sources) != 1 || m.Sources[0].InductionVar != "%k" || m.Sources[0].Stages != 4 || m.Sources[0].Location != "../examples/gemm_pipelined.tma:48:12" || m.Sources[0].StoreLoop != "" {
		t.Errorf("source %+v", m.Sources[0])
	}
	if m.PassPipeline != driver.DefaultPipeline || m.Format != ManifestFormat {
		t.Errorf("manifest header %q %q", m.Format, m.PassPipeline)
	}
	var names []string
	for _, v := range m.Variants {
		names = append(names, v.Name+":"+v.Status)
		if v.Status == statusSkipped {
			if v.Stages != 8 || v.Bundle != "" || !strings.Contains(v.Reason, "over the 227 KB limit (232448 bytes)") || !strings.HasPrefix(v.Reason, "../examples/gemm_pipelined.tma:33:3: error: 'gpu.func' op smem-plan: the kernel needs") {
				t.Errorf("skipped %s: %q", v.Name, v.Reason)
			}
			if _, err := os.Stat(filepath.Join(dir, v.Name+".tmab")); err == nil {
				t.Errorf("%s: a bundle was written for a skipped variant", v.Name)
			}
			continue
		}
		b, err := bundle.ReadFile(filepath.Join(dir, v.Bundle))
		if err != nil {
			t.Fatalf("%s: %v", v.Name, err)
		}
		threads := ".reqntid 128, 1, 1"
		if v.Schedule == schedWS {
			threads = ".reqntid 256, 1, 1" // one consumer + the producer
		}
		if !strings.Contains(b.PTX, threads) {
			t.Errorf("%s: the PTX has no %q", v.Name, threads)
		}
		if ws := strings.Contains(b.PTX, "setmaxnreg"); ws != (v.Schedule == schedWS) {
			t.Errorf("%s: setmaxnreg in the PTX: %v", v.Name, ws)
		}
		// One mbarrier per stage (two groups for ws: full and empty).
		bars := "memref<" + string(rune('0'+v.Stages)) + "xi64, #gpu.address_space<workgroup>"
		if !strings.Contains(b.Module, bars) {
			t.Errorf("%s: no barrier group %s in the module", v.Name, bars)
		}
	}
	want := "gemm_pipelined-pipelined-s2:compiled gemm_pipelined-pipelined-s8:skipped gemm_pipelined-pipelined-s3:compiled " +
		"gemm_pipelined-ws-s2:compiled gemm_pipelined-ws-s8:skipped gemm_pipelined-ws-s3:compiled"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("variants\n%s\nwant\n%s", got, want)
	}

	// A second build into the same directory replaces the first one.
	if _, stderr, code := build([]string{"../examples/gemm_pipelined.tma"}, func(o *BuildOptions) {
		o.Output, o.Stages, o.Schedules = dir, []int64{3}, []string{schedPipelined}
	}); code != 0 {
		t.Fatalf("rebuild: exit %d: %s", code, stderr)
	}
	if got := testutil.DirNames(dir); got != "gemm_pipelined-pipelined-s3.tmab tune.json" {
		t.Errorf("after the rebuild: %s", got)
	}
}

// TestTuneBuildSkipsWS: warp-specialize needs whole warpgroups; the
// 64-thread kernel's ws variants are skipped with that reason, and a
// build in which nothing compiles exits 1.
func TestTuneBuildSkipsWS(t *testing.T) {
	needLLC(t)
	dir := filepath.Join(t.TempDir(), "t")
	_, stderr, code := build([]string{"../lit-tests/tune/Inputs/two-loops.tma"}, func(o *BuildOptions) {
		o.Output, o.Loop, o.Stages, o.Schedules = dir, "%i", []int64{2}, []string{schedWS}
	})
	if code != 1 {
		t.Fatalf("exit %d, want 1 (nothing compiled): %s", code, stderr)
	}
	m, err := ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Variants) != 1 || m.Variants[0].Status != statusSkipped ||
		m.Variants[0].Reason != "../lit-tests/tune/Inputs/two-loops.tma:22:5: error: warp-specialize needs a known block of whole warpgroups along x (128*C x 1 x 1 threads)" {
		t.Errorf("variants %+v", m.Variants[0])
	}
	// The other loop (128 threads) takes the producer.
	_, stderr, code = build([]string{"../lit-tests/tune/Inputs/two-loops.tma"}, func(o *BuildOptions) {
		o.Output, o.Loop, o.Stages, o.Schedules = dir, "1", []int64{2}, []string{schedWS}
	})
	if code != 0 {
		t.Fatalf("loop 1: exit %d: %s", code, stderr)
	}
}

// TestTuneBuildPingpong: the pingpong schedule turns a persistent program
// written for one warpgroup into a producer and two consumers taking the
// tiles in turn (384 threads, order barriers), and is skipped with the
// pass's reason for a program without a tile loop (as the pipelined
// schedule is for the persistent one).
func TestTuneBuildPingpong(t *testing.T) {
	needLLC(t)
	dir := filepath.Join(t.TempDir(), "pp")
	stdout, stderr, code := build([]string{"../examples/variants/gemm_pingpong.tma", "../examples/gemm_pipelined.tma"}, func(o *BuildOptions) {
		o.Output, o.Stages, o.Schedules = dir, []int64{4}, []string{schedPingpong, schedPipelined}
	})
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	m, err := ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, v := range m.Variants {
		got = append(got, v.Name+":"+v.Status)
		switch {
		case v.Name == "gemm_pingpong-pingpong-s4":
			b, err := bundle.ReadFile(filepath.Join(dir, v.Bundle))
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{".reqntid 384, 1, 1", "setmaxnreg.inc.sync.aligned.u32 \t232", "bar.arrive"} {
				if !strings.Contains(b.PTX, want) {
					t.Errorf("%s: no %q in the PTX", v.Name, want)
				}
			}
		case v.Name == "gemm_pipelined-pingpong-s4":
			if !strings.Contains(v.Reason, "a ping-pong schedule needs a persistent tile loop around the loop") {
				t.Errorf("%s: reason %q", v.Name, v.Reason)
			}
		}
	}
	// (tma-pipeline does not pipeline a K loop inside a tile loop.)
	want := "gemm_pingpong-pingpong-s4:compiled gemm_pingpong-pipelined-s4:skipped gemm_pipelined-pingpong-s4:skipped gemm_pipelined-pipelined-s4:compiled"
	if g := strings.Join(got, " "); g != want {
		t.Errorf("variants\n%s\nwant\n%s", g, want)
	}
}

func TestReadTuneManifestRejects(t *testing.T) {
	dir := t.TempDir()
	for body, want := range map[string]string{
		`{"format": "x"}`: "format 'x', expected 'tmac-tune-1'",
		`{"format": "tmac-tune-1", "variants": [{"name": "v", "bundle": "../v.tmab", "status": "compiled"}]}`: "bundle '../v.tmab' is not a file name",
		`{"format": `: "unexpected end of JSON input",
	} {
		os.WriteFile(filepath.Join(dir, ManifestName), []byte(body), 0o644)
		if _, err := ReadManifest(dir); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", body, err, want)
		}
	}
}

// TestTuneRunNoGPU: without a GPU (device 99 exists nowhere) tune run
// exits 3 before running anything, and one variant run through tmac run's
// code path reports the same.
func TestTuneRunNoGPU(t *testing.T) {
	needLLC(t)
	dir := filepath.Join(t.TempDir(), "t")
	if _, stderr, code := build([]string{"../lit-tests/tune/Inputs/two-loops.tma"}, func(o *BuildOptions) {
		o.Output, o.Loop, o.Stages, o.Schedules = dir, "0", []int64{2}, []string{schedPipelined}
	}); code != 0 {
		t.Fatal(stderr)
	}
	opts := RunOptions{Reps: 1, Timeout: time.Second, Device: 99, Dist: "normal", RTol: -1, ATol: -1}
	_, err := Run(dir, opts)
	stderr, code := report(err, "tmac tune run")
	if code != 3 || !strings.HasPrefix(stderr, "tmac tune run: error: no usable GPU: ") {
		t.Errorf("exit %d %q", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, ResultsName)); err == nil {
		t.Errorf("results written without a GPU")
	}
	var log bytes.Buffer
	o := runOne(&opts, filepath.Join(dir, "two-loops-pipelined-s2.tmab"), "x", runner.NewRefCache(), &log)
	if o.code != 3 || !strings.Contains(log.String(), "tmac run: error: no usable GPU") {
		t.Errorf("runOne: code %d, log %q", o.code, log.String())
	}
	r := &Result{}
	classify(r, o, log.String())
	if r.Status != resError || !strings.HasPrefix(r.Reason, "no usable GPU: tmac run: error: no usable GPU") {
		t.Errorf("classified %+v", r)
	}
}

func TestClassifyRankAndTable(t *testing.T) {
	bench := func(med float64) *runner.BenchResult {
		return &runner.BenchResult{KernelMedianS: med, KernelMinS: med * 0.9, RunMedianS: med * 1.1, Flops: 2 * 4096 * 4096 * 4096}
	}
	mk := func(name string, o variantOutcome, log string) *Result {
		r := &Result{Name: name, Schedule: schedPipelined, Stages: 3}
		classify(r, o, log)
		return r
	}
	results := []*Result{
		mk("slow", variantOutcome{run: &runner.Outcome{Verdict: "PASS", Bench: bench(250e-6)}}, ""),
		mk("wrong", variantOutcome{run: &runner.Outcome{Verdict: "FAIL", Bench: bench(100e-6)}, code: 1}, "FAIL arg2"),
		mk("hang", variantOutcome{run: &runner.Outcome{Verdict: "PASS", LaunchErr: &plan.DeadlockError{Kernel: "k", Timeout: time.Second}}, code: 1}, ""),
		mk("fast", variantOutcome{run: &runner.Outcome{Verdict: "PASS", Bench: bench(216.6e-6)}}, ""),
		mk("broken", variantOutcome{run: &runner.Outcome{}, code: 1}, "device 0: H200\ntmac run: error: kernel k: CUDA_ERROR_ILLEGAL_ADDRESS\nmore"),
		mk("unchecked", variantOutcome{run: &runner.Outcome{Verdict: "none (no @reference)", Bench: &runner.BenchResult{KernelMedianS: 1e-3, KernelMinS: 1e-3, Bytes: 4.3e9}}}, ""),
		{Name: "nofit", Status: resSkipped, Reason: "did not compile: over the 227 KB limit"},
	}
	want := map[string]string{"slow": resPass, "wrong": resFail, "hang": resHang, "fast": resPass, "broken": resError, "unchecked": resPass}
	for _, r := range results[:6] {
		if r.Status != want[r.Name] {
			t.Errorf("%s: %s, want %s (%s)", r.Name, r.Status, want[r.Name], r.Reason)
		}
	}
	if r := results[4]; r.Reason != "tmac run: error: kernel k: CUDA_ERROR_ILLEGAL_ADDRESS" {
		t.Errorf("error reason %q", r.Reason)
	}
	if r := results[2]; !strings.Contains(r.Reason, "kernel k did not finish in 1 s") || r.KernelMedianS != 0 {
		t.Errorf("hang %+v", r)
	}
	if r := results[1]; r.KernelMedianS != 0 || r.TFLOPS != 0 {
		t.Errorf("a failing variant keeps its time: %+v", r)
	}
	if r := results[3]; r.TFLOPS < 634 || r.TFLOPS > 635 || r.TBPerS != 0 {
		t.Errorf("fast: %.2f TFLOP/s", r.TFLOPS)
	}
	exposed := mk("exposed", variantOutcome{run: &runner.Outcome{Verdict: "PASS", Bench: &runner.BenchResult{KernelMedianS: 30e-6,
		QueuedMedianS: 20e-6, QueuedMinS: 9e-6, QueuedExposed: true, Flops: 1e9}}}, "")
	if !exposed.QueuedExposed || exposed.KernelMedianS != 20e-6 || !strings.Contains(exposed.summary(), "includes launch latency") {
		t.Errorf("exposed queued pass: %+v, %q", exposed, exposed.summary())
	}
	if r := results[5]; r.TBPerS != 4.3 || r.TFLOPS != 0 {
		t.Errorf("bytes only: %g TB/s", r.TBPerS)
	}
	ranked := rank(results)
	var order []string
	for _, r := range ranked {
		order = append(order, r.Name)
	}
	if got := strings.Join(order, " "); got != "fast slow unchecked wrong hang broken nofit" {
		t.Errorf("ranking %s", got)
	}
	var tbl bytes.Buffer
	printTable(&tbl, ranked)
	lines := strings.Split(tbl.String(), "\n")
	if lines[2] != "| best | fast | pipelined | 3 | - | PASS | 216.6 us | 194.9 us | 634.5 TFLOP/s | 1.00x |" ||
		lines[3] != "|  | slow | pipelined | 3 | - | PASS | 250.0 us | 225.0 us | 549.8 TFLOP/s | 1.15x |" ||
		lines[4] != "|  | unchecked | pipelined | 3 | - | none (no @reference) | 1.000 ms | 1.000 ms | 4.300 TB/s | 4.62x |" ||
		lines[5] != "best: fast" || lines[6] != "left out:" || !strings.HasPrefix(lines[7], "  FAIL     wrong: the reference check failed") {
		t.Errorf("table:\n%s", tbl.String())
	}
	var none bytes.Buffer
	printTable(&none, rank(results[1:3]))
	if !strings.Contains(none.String(), "(no variant passed)") {
		t.Errorf("no pass:\n%s", none.String())
	}

	// The results file round-trips.
	path := filepath.Join(t.TempDir(), ResultsName)
	if err := writeJSON(path, &Results{Format: ResultsFormat, Best: "fast", Results: ranked}); err != nil {
		t.Fatal(err)
	}
	var back Results
	if err := json.Unmarshal([]byte(testutil.ReadFile(t, path)), &back); err != nil {
		t.Fatal(err)
	}
	if back.Best != "fast" || len(back.Results) != 7 || back.Results[0].KernelMedianS != 216.6e-6 || back.Results[6].Status != resSkipped {
		t.Errorf("round trip %+v", back)
	}
}

// TestTuneRunFake runs tune run over a tune build with a fake GPU and
// fake variant runs: the passing variants are ranked, a failing one is
// left out, a hang stops the run (the GPU is still busy), skipped and
// filtered variants are listed, and tune-results.json and the logs are
// written.
func TestTuneRunFake(t *testing.T) {
	dir := t.TempDir()
	bench := func(med float64) *runner.BenchResult {
		return &runner.BenchResult{KernelMedianS: med, KernelMinS: med, Flops: 1e9}
	}
	m := &Manifest{Format: ManifestFormat, Variants: []*Variant{
		{Name: "g-pipelined-s2", Source: "g.tma", Schedule: schedPipelined, Stages: 2, Bundle: "g-pipelined-s2.tmab", Status: statusCompiled},
		{Name: "g-pipelined-s3", Source: "g.tma", Schedule: schedPipelined, Stages: 3, Bundle: "g-pipelined-s3.tmab", Status: statusCompiled},
		{Name: "g-pipelined-s8", Source: "g.tma", Schedule: schedPipelined, Stages: 8, Status: statusSkipped, Reason: "over the 227 KB limit"},
		{Name: "g-ws-s2", Source: "g.tma", Schedule: schedWS, Stages: 2, Bundle: "g-ws-s2.tmab", Status: statusCompiled},
		{Name: "g-ws-s3", Source: "g.tma", Schedule: schedWS, Stages: 3, Bundle: "g-ws-s3.tmab", Status: statusCompiled},
		{Name: "g-ws-s4", Source: "g.tma", Schedule: schedWS, Stages: 4, Bundle: "g-ws-s4.tmab", Status: statusCompiled},
	}}
	if err := writeJSON(filepath.Join(dir, ManifestName), m); err != nil {
		t.Fatal(err)
	}
	outcomes := map[string]variantOutcome{
		"g-pipelined-s2.tmab": {run: &runner.Outcome{Verdict: "PASS", Bench: bench(2e-3)}},
		"g-pipelined-s3.tmab": {run: &runner.Outcome{Verdict: "PASS", Bench: bench(1e-3)}},
		"g-ws-s2.tmab":        {run: &runner.Outcome{Verdict: "FAIL", Bench: bench(0.5e-3)}, code: 1},
		"g-ws-s3.tmab":        {run: &runner.Outcome{Verdict: "PASS", LaunchErr: &plan.DeadlockError{Kernel: "k", Timeout: time.Second}}, code: 1},
	}
	var ran []string
	defer func(g func(int) (string, error), r func(*RunOptions, string, string, *runner.RefCache, io.Writer) variantOutcome) {
		deviceName, runVariant = g, r
	}(deviceName, runVariant)
	deviceName = func(int) (string, error) { return "Fake H200", nil }
	runVariant = func(opts *RunOptions, path, source string, cache *runner.RefCache, log io.Writer) variantOutcome {
		ran = append(ran, filepath.Base(path))
		if source != "g.tma" || cache == nil || opts.Reps != 7 {
			t.Errorf("run of %s: source %q, reps %d", path, source, opts.Reps)
		}
		io.WriteString(log, "log of "+filepath.Base(path)+"\n")
		return outcomes[filepath.Base(path)]
	}
	// tmac tune run's defaults, with --reps 7.
	run := func(filter string) (stdout, stderr string, code int) {
		var out bytes.Buffer
		_, err := Run(dir, RunOptions{Reps: 7, Warmup: 5, Timeout: 10 * time.Second, Dist: "normal", RTol: -1, ATol: -1, Filter: filter, Out: &out})
		stderr, code = report(err, "tmac tune run")
		return out.String(), stderr, code
	}
	stdout, stderr, code := run("s[23]")
	if code != 0 {
		t.Fatalf("exit %d: %s%s", code, stdout, stderr)
	}
	if got := strings.Join(ran, " "); got != "g-pipelined-s2.tmab g-pipelined-s3.tmab g-ws-s2.tmab g-ws-s3.tmab" {
		t.Errorf("ran %s", got)
	}
	for _, want := range []string{
		"device 0: Fake H200; 4 variants, 5 warm-up + 7 timed runs each\n",
		"[1/4] g-pipelined-s2: PASS (check PASS), kernel median 2.000 ms, 0.5 TFLOP/s\n",
		"[3/4] g-ws-s2: FAIL: the reference check failed\n",
		"[4/4] g-ws-s3: HANG: kernel k did not finish in 1 s",
		"| best | g-pipelined-s3 | pipelined | 3 | - | PASS | 1.000 ms | 1.000 ms | 1.0 TFLOP/s | 1.00x |\n|  | g-pipelined-s2 |",
		"best: g-pipelined-s3\n",
		"  SKIPPED  g-pipelined-s8: did not compile: over the 227 KB limit\n",
		"  FILTERED g-ws-s4: not selected by --filter\n",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	var res Results
	if err := json.Unmarshal([]byte(testutil.ReadFile(t, filepath.Join(dir, ResultsName))), &res); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range res.Results {
		got = append(got, r.Name+":"+r.Status)
	}
	if strings.Join(got, " ") != "g-pipelined-s3:pass g-pipelined-s2:pass g-pipelined-s8:skipped g-ws-s2:fail g-ws-s3:hang g-ws-s4:filtered" ||
		res.Best != "g-pipelined-s3" || res.Device != "Fake H200" || res.Reps != 7 || res.Format != ResultsFormat {
		t.Errorf("results %s, best %q, device %q", strings.Join(got, " "), res.Best, res.Device)
	}
	if log := testutil.ReadFile(t, filepath.Join(dir, "logs", "g-ws-s2.log")); log != "log of g-ws-s2.tmab\n" || res.Results[3].Log != "logs/g-ws-s2.log" {
		t.Errorf("log %q (%s)", log, res.Results[3].Log)
	}

	// Without the filter, the variant after the hang is not run; with
	// nothing passing the exit status is 1.
	ran = nil
	delete(outcomes, "g-pipelined-s2.tmab")
	outcomes["g-pipelined-s2.tmab"] = variantOutcome{run: &runner.Outcome{}, code: 1}
	outcomes["g-pipelined-s3.tmab"] = variantOutcome{run: &runner.Outcome{}, code: 1}
	stdout, _, code = run("")
	if code != 1 || len(ran) != 4 || !strings.Contains(stdout, "(no variant passed)") ||
		!strings.Contains(stdout, "  NOT-RUN  g-ws-s4: not run: g-ws-s3 hung the GPU before it\n") {
		t.Errorf("exit %d, ran %v:\n%s", code, ran, stdout)
	}
	if res := testutil.ReadFile(t, filepath.Join(dir, ResultsName)); strings.Contains(res, `"best"`) {
		t.Errorf("a best without a pass:\n%s", res)
	}

	// A cache given in the options is the one every variant gets (tmac
	// tune run DIR... shares it across directories); Hung says a variant
	// hung.
	shared := runner.NewRefCache()
	var caches []*runner.RefCache
	runVariant = func(opts *RunOptions, path, source string, cache *runner.RefCache, log io.Writer) variantOutcome {
		caches = append(caches, cache)
		return outcomes[filepath.Base(path)]
	}
	res2, _ := Run(dir, RunOptions{Reps: 7, Warmup: 5, Timeout: 10 * time.Second, Dist: "normal", RTol: -1, ATol: -1, RefCache: shared})
	if len(caches) != 4 {
		t.Fatalf("%d runs", len(caches))
	}
	for _, c := range caches {
		if c != shared {
			t.Error("a variant did not get the shared reference cache")
		}
	}
	if res2 == nil || !res2.Hung() {
		t.Error("Hung() is false after a hang")
	}
	if (&Results{Results: []*Result{{Status: resPass}, {Status: resFail}}}).Hung() {
		t.Error("Hung() is true without a hang")
	}
}
