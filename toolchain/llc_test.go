package toolchain

import (
	"reflect"
	"strings"
	"testing"
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
