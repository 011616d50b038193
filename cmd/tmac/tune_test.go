package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tmac-dev/tmac/tune"
)

// runTune runs `tmac tune ARGS...` in process.
func runTune(args ...string) (stdout, stderr string, code int) {
	cmd := newRootCmd()
	var o, e bytes.Buffer
	cmd.SetOut(&o)
	cmd.SetErr(&e)
	cmd.SetArgs(append([]string{"tune"}, args...))
	err := cmd.Execute()
	var ee *exitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code = ee.code
	default:
		code = 2
		e.WriteString(err.Error())
	}
	return o.String(), e.String(), code
}

func TestTuneBuildUsage(t *testing.T) {
	tmp := t.TempDir()
	foreign := filepath.Join(tmp, "foreign")
	os.Mkdir(foreign, 0o755)
	os.WriteFile(filepath.Join(foreign, "notes.txt"), nil, 0o644)
	gemm := "../../examples/gemm_pipelined.tma"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"build", gemm}, "give the output directory with -o DIR"},
		{[]string{"build", gemm, "-o", tmp + "/a", "--stages", "0"}, "--stages: '0' is not a stage count from 1 to 16"},
		{[]string{"build", gemm, "-o", tmp + "/a", "--store-stages", "x"}, "--store-stages: 'x' is not a stage count"},
		{[]string{"build", gemm, "-o", tmp + "/a", "--schedules", "coop"}, "--schedules: 'coop' is not a schedule (pipelined, ws, pingpong)"},
		{[]string{"build", gemm, "-o", foreign}, "holds no earlier tune build"},
		{[]string{"build", gemm, gemm, "-o", tmp + "/a"}, "have the same base name"},
		{[]string{"build", gemm, "-o", tmp + "/a", "--loop", "3"}, "--loop 3: the program has 1 tunable loop(s)"},
		{[]string{"build", "../../lit-tests/tune/Inputs/two-loops.tma", "-o", tmp + "/a"}, "2 tunable loops; pick one with --loop"},
		{[]string{"run", tmp + "/missing"}, "has no tune.json; make it with tmac tune build"},
		{[]string{"run", tmp, "--reps", "0"}, "--reps must be at least 1"},
		{[]string{"run", tmp, "--filter", "("}, "--filter: error parsing regexp"},
		{[]string{}, "give a subcommand: build or run"},
	} {
		_, stderr, code := runTune(c.args...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("tune %v: exit %d, %q; want 2 and %q", c.args, code, stderr, c.want)
		}
	}
	if _, err := os.Stat(tmp + "/a"); err == nil {
		t.Errorf("a usage error created the output directory")
	}
	// A program without a tile loop is not a usage error.
	_, stderr, code := runTune("build", "../../examples/saxpy.tma", "-o", tmp+"/b")
	if code != 1 || !strings.Contains(stderr, "no tunable loop") {
		t.Errorf("saxpy: exit %d %q", code, stderr)
	}
}

// TestTuneRunNoGPU: without a GPU (device 99 exists nowhere) tune run
// exits 3 before running anything and writes no results.
func TestTuneRunNoGPU(t *testing.T) {
	dir := t.TempDir()
	m := `{"format": "tmac-tune-1", "variants": [{"name": "v", "bundle": "v.tmab", "status": "compiled"}]}`
	if err := os.WriteFile(filepath.Join(dir, tune.ManifestName), []byte(m), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := runTune("run", dir, "--device", "99")
	if code != 3 || !strings.HasPrefix(stderr, "tmac tune run: error: no usable GPU: ") {
		t.Errorf("exit %d %q", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, tune.ResultsName)); err == nil {
		t.Errorf("results written without a GPU")
	}
}
