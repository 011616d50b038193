package toolchain

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestUnknownIntrinsics(t *testing.T) {
	// Both forms llc 22 writes: without and with a return value.
	ptx := `.version 8.0
.target sm_90a
.extern .func  (.param .b32 func_retval0) llvm.nvvm.fake.thing
(
	.param .b32 llvm.nvvm.fake.thing_param_0
)
;
.extern .func llvm.nvvm.fake.void
(
	.param .b32 llvm.nvvm.fake.void_param_0
)
;
.extern .func llvm.nvvm.fake.void
;
.extern .func vprintf
(
	.param .b64 vprintf_param_0
)
;
`
	got := UnknownIntrinsics(ptx)
	want := []string{"llvm.nvvm.fake.thing", "llvm.nvvm.fake.void"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("UnknownIntrinsics = %q, want %q", got, want)
	}
	if got := UnknownIntrinsics(".visible .entry k()\n{\n\tret;\n}\n"); len(got) != 0 {
		t.Errorf("clean PTX: %q", got)
	}
}

func TestLLCErrorQuotesLine(t *testing.T) {
	e := &LLCError{Stderr: "llc: error: /tmp/x/kernel.ll:2:7: error: bad thing\n", IR: "line one\n  %x = bogus\nline three"}
	msg := e.Error()
	if !strings.Contains(msg, "offending LLVM IR line 2: %x = bogus") || !strings.Contains(msg, "a tmac bug") {
		t.Errorf("message: %s", msg)
	}
}

// A fake llc that counts its --version calls and writes a trivial PTX.
const fakeLLC = `#!/bin/sh
if [ "$1" = "--version" ]; then
  echo x >> "$(dirname "$0")/versions"
  printf 'LLVM version 22.1.8\n  nvptx64 - NVIDIA PTX 64-bit\n'
  exit 0
fi
while [ $# -gt 0 ]; do if [ "$1" = "-o" ]; then out=$2; fi; shift; done
printf '.version 8.0\n.target sm_90a\n' > "$out"
`

func TestCheckIsCached(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache"))
	t.Setenv("TMAC_NO_LLC_CACHE", "")
	llc := filepath.Join(dir, "llc")
	if err := os.WriteFile(llc, []byte(fakeLLC), 0o755); err != nil {
		t.Fatal(err)
	}
	versions := func() int {
		data, _ := os.ReadFile(filepath.Join(dir, "versions"))
		return strings.Count(string(data), "x")
	}
	for i := 0; i < 3; i++ {
		ptx, err := CompilePTX("; empty\n", LLCOptions{Path: llc, OptLevel: 3})
		if err != nil || !strings.Contains(ptx, ".target sm_90a") {
			t.Fatalf("CompilePTX: %q, %v", ptx, err)
		}
	}
	if n := versions(); n != 1 {
		t.Errorf("llc --version ran %d times for three compilations, want 1", n)
	}
	// A changed llc is checked again.
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(llc, later, later); err != nil {
		t.Fatal(err)
	}
	if _, err := CompilePTX("; empty\n", LLCOptions{Path: llc, OptLevel: 3}); err != nil {
		t.Fatal(err)
	}
	if n := versions(); n != 2 {
		t.Errorf("after touching llc: --version ran %d times, want 2", n)
	}
	// Without the cache every compilation checks.
	t.Setenv("TMAC_NO_LLC_CACHE", "1")
	if _, err := CompilePTX("; empty\n", LLCOptions{Path: llc, OptLevel: 3}); err != nil {
		t.Fatal(err)
	}
	if n := versions(); n != 3 {
		t.Errorf("with TMAC_NO_LLC_CACHE: --version ran %d times, want 3", n)
	}
}
