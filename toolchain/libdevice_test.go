package toolchain

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestLibdeviceCalls(t *testing.T) {
	ir := `declare float @llvm.nvvm.ex2.approx.f(float %p0)
declare float @__nv_logf(float %p0)
declare double @__nv_pow(double %p0, double %p1)
define void @k() {
  call float @__nv_fake(float 1.0)
  ret void
}
`
	if got, want := LibdeviceCalls(ir), []string{"__nv_logf", "__nv_pow"}; !reflect.DeepEqual(got, want) {
		t.Errorf("LibdeviceCalls = %q, want %q", got, want)
	}
	if got := LibdeviceCalls("declare float @llvm.nvvm.lg2.approx.f(float %p0)\n"); got != nil {
		t.Errorf("no libdevice calls: got %q", got)
	}
}

// writeBitcode writes a file that starts like LLVM bitcode.
func writeBitcode(t *testing.T, p string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("BC\xc0\xde fake"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestFindLibdevice(t *testing.T) {
	dir := t.TempDir()
	lib := filepath.Join(dir, "cuda", LibdeviceFile)
	writeBitcode(t, lib)
	t.Setenv("TMAC_LIBDEVICE", "")
	for _, explicit := range []string{lib, filepath.Dir(lib)} {
		if got, err := FindLibdevice(explicit); err != nil || got != lib {
			t.Errorf("FindLibdevice(%q) = %q, %v; want %q", explicit, got, err, lib)
		}
	}
	t.Setenv("TMAC_LIBDEVICE", filepath.Dir(lib))
	if got, err := FindLibdevice(""); err != nil || got != lib {
		t.Errorf("with $TMAC_LIBDEVICE: %q, %v", got, err)
	}
	// An explicit path that does not hold libdevice is an error, not a
	// reason to search elsewhere.
	if _, err := FindLibdevice(filepath.Join(dir, "missing.bc")); err == nil || !strings.Contains(err.Error(), "--libdevice") {
		t.Errorf("missing --libdevice: %v", err)
	}
	t.Setenv("TMAC_LIBDEVICE", filepath.Join(dir, "nowhere"))
	if _, err := FindLibdevice(""); err == nil || !strings.Contains(err.Error(), "$TMAC_LIBDEVICE") {
		t.Errorf("missing $TMAC_LIBDEVICE: %v", err)
	}
	text := filepath.Join(dir, "text.bc")
	if err := os.WriteFile(text, []byte("; not bitcode\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := FindLibdevice(text); err == nil || !strings.Contains(err.Error(), "not an LLVM bitcode file") {
		t.Errorf("text file: %v", err)
	}
	// The standard places: $XDG_DATA_HOME/tmac is one of them.
	t.Setenv("TMAC_LIBDEVICE", "")
	t.Setenv("XDG_DATA_HOME", filepath.Join(dir, "data"))
	dirs := LibdeviceDirs()
	if want := filepath.Join(dir, "data", "tmac"); dirs[len(dirs)-1] != want {
		t.Errorf("LibdeviceDirs ends with %q, want %q", dirs[len(dirs)-1], want)
	}
	if _, err := searchLibdevice([]string{filepath.Join(dir, "a"), filepath.Join(dir, "b")}); err == nil ||
		!strings.Contains(err.Error(), "was not found in "+filepath.Join(dir, "a")+", "+filepath.Join(dir, "b")) ||
		!strings.Contains(err.Error(), "scripts/install-deps.sh") {
		t.Errorf("nothing found: %v", err)
	}
	if got, err := searchLibdevice([]string{filepath.Join(dir, "a"), filepath.Dir(lib)}); err != nil || got != lib {
		t.Errorf("search: %q, %v", got, err)
	}
}

// Fakes of llc, llvm-link and opt that log their arguments to log; llc
// writes the PTX in $FAKE_PTX, llvm-link fails when $FAKE_LINK_FAIL is set.
const (
	fakeLinkLLC = `#!/bin/sh
if [ "$1" = "--version" ]; then
  printf 'LLVM version 22.1.8\n  nvptx64 - NVIDIA PTX 64-bit\n'
  exit 0
fi
echo "llc $*" >> "$(dirname "$0")/log"
while [ $# -gt 0 ]; do if [ "$1" = "-o" ]; then out=$2; fi; shift; done
printf '%b' "$FAKE_PTX" > "$out"
`
	fakeLink = `#!/bin/sh
echo "llvm-link $*" >> "$(dirname "$0")/log"
if [ -n "$FAKE_LINK_FAIL" ]; then echo "llvm-link: error: $FAKE_LINK_FAIL" >&2; exit 1; fi
while [ $# -gt 0 ]; do if [ "$1" = "-o" ]; then out=$2; fi; shift; done
echo linked > "$out"
`
	fakeOpt = `#!/bin/sh
echo "opt $*" >> "$(dirname "$0")/log"
while [ $# -gt 0 ]; do if [ "$1" = "-o" ]; then out=$2; fi; shift; done
echo inlined > "$out"
`
)

func TestLinkLibdevice(t *testing.T) {
	dir := t.TempDir()
	for name, script := range map[string]string{"llc": fakeLinkLLC, "llvm-link": fakeLink, "opt": fakeOpt} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	lib := filepath.Join(dir, LibdeviceFile)
	writeBitcode(t, lib)
	t.Setenv("TMAC_NO_LLC_CACHE", "1")
	t.Setenv("TMAC_LIBDEVICE", "")
	t.Setenv("FAKE_LINK_FAIL", "")
	t.Setenv("FAKE_PTX", `.version 8.0\n.target sm_90a\n`)
	logFile := filepath.Join(dir, "log")
	readLog := func() string {
		data, _ := os.ReadFile(logFile)
		os.Remove(logFile)
		return string(data)
	}
	opts := LLCOptions{Path: filepath.Join(dir, "llc"), OptLevel: 3, Libdevice: lib}
	const calls = "declare float @__nv_logf(float %p0)\n"

	// No libdevice function: llc alone, on the text.
	if _, err := CompilePTX("; no calls\n", opts); err != nil {
		t.Fatal(err)
	}
	if log := readLog(); strings.Contains(log, "llvm-link") || !strings.Contains(log, "kernel.ll") {
		t.Errorf("without libdevice calls:\n%s", log)
	}

	// Calls: llvm-link, opt (beside llc), then llc on opt's output.
	if _, err := CompilePTX(calls, opts); err != nil {
		t.Fatal(err)
	}
	log := readLog()
	for _, want := range []string{"llvm-link --only-needed --internalize ", "kernel.ll " + lib + " -o ", "opt -mcpu=sm_90a -passes=always-inline,nvvm-reflect,globaldce ", "llc -march=nvptx64 -mcpu=sm_90a -O3 "} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
	if !strings.Contains(log[strings.Index(log, "llc -march"):], "inlined.bc") {
		t.Errorf("llc does not compile opt's output:\n%s", log)
	}

	// llvm-link fails: its message is reported.
	t.Setenv("FAKE_LINK_FAIL", "bad bitcode")
	if _, err := CompilePTX(calls, opts); err == nil || !strings.Contains(err.Error(), "linking libdevice") || !strings.Contains(err.Error(), "llvm-link: error: bad bitcode") {
		t.Errorf("llvm-link failing: %v", err)
	}
	t.Setenv("FAKE_LINK_FAIL", "")
	readLog()

	// No libdevice: the function is named, with how to install it.
	opts.Libdevice = filepath.Join(dir, "missing")
	if _, err := CompilePTX(calls, opts); err == nil || !strings.Contains(err.Error(), "call __nv_logf from libdevice") {
		t.Errorf("missing libdevice: %v", err)
	}
	if log := readLog(); strings.Contains(log, "llvm-link") {
		t.Errorf("linked without libdevice:\n%s", log)
	}
	opts.Libdevice = lib

	// A function libdevice did not define is left external in the PTX.
	t.Setenv("FAKE_PTX", `.version 8.0\n.extern .func  (.param .b32 func_retval0) __nv_fakef\n(\n\t.param .b32 __nv_fakef_param_0\n)\n;\n`)
	if _, err := CompilePTX(calls, opts); err == nil || !strings.Contains(err.Error(), "the PTX calls __nv_fakef") {
		t.Errorf("undefined libdevice function: %v", err)
	}
}
