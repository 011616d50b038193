package runner

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tmac-dev/tmac/internal/testutil"
	"github.com/tmac-dev/tmac/runtime/buffer"
)

const dumpModule = `func.func @mm(%a: memref<4x8xf16>, %b: memref<8x2xbf16>, %s: i32, %d: memref<4x2xf32> {tmac.output}) {
  return
}
`

// TestWriteDump writes a dump of a fake run and reads it back: the
// manifest names every argument, the inputs are the host values, the
// output is the "GPU" result, and the poisoned output has no input file.
func TestWriteDump(t *testing.T) {
	opts := &Options{Seed: 3, RTol: -1, ATol: -1, Dist: "normal"}
	_, _, outputs, args := testArgs(t, dumpModule, map[int]string{2: "7"}, opts)
	out, _ := buffer.New(args[3].buf.Elem, args[3].buf.Shape)
	for i := 0; i < out.Len(); i++ {
		out.SetFloat(i, float64(i)+0.5)
	}
	results := []*buffer.Buffer{args[0].buf.Clone(), args[1].buf.Clone(), nil, out}
	dir := filepath.Join(t.TempDir(), "dump")
	if err := checkDumpDir(dir); err != nil {
		t.Fatal(err)
	}
	if err := makeDumpDir(dir); err != nil {
		t.Fatal(err)
	}
	// A stale file of an earlier dump is removed by makeDumpDir.
	if err := os.WriteFile(filepath.Join(dir, "arg9.out.npy"), []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := checkDumpDir(dir); err != nil {
		t.Fatalf("an earlier dump is refused: %v", err)
	}
	if err := makeDumpDir(dir); err != nil {
		t.Fatal(err)
	}
	br := &BenchResult{Reps: 10, Warmup: 2, RotatedCopies: 1, KernelMedianS: 1.5e-6, Flops: 128}
	err := writeDump(dir, &dumpRun{source: "t.tma", entry: "mm", device: "fake", args: args, results: results,
		outputs: outputs, check: "PASS", bench: br, opts: opts})
	if err != nil {
		t.Fatal(err)
	}
	if got := testutil.DirNames(dir); got != "arg0.in.npy arg1.in.npy arg3.out.npy manifest.json" {
		t.Fatalf("files %q", got)
	}
	js, err := os.ReadFile(filepath.Join(dir, dumpManifestName))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(js, []byte(`"type": "memref<4x8xf16>"`)) {
		t.Errorf("types are not written as they are:\n%s", js)
	}
	var m map[string]any
	if err := json.Unmarshal(js, &m); err != nil {
		t.Fatal(err)
	}
	if m["format"] != dumpFormat || m["entry"] != "mm" || m["check"] != "PASS" || m["seed"] != 3.0 {
		t.Errorf("manifest %s", js)
	}
	bench := m["bench"].(map[string]any)
	if bench["kernel_median_s"] != 1.5e-6 || bench["flops"] != 128.0 {
		t.Errorf("bench %v", bench)
	}
	as := m["args"].([]any)
	want := []string{
		`{"elem":"f16","in":"arg0.in.npy","index":0,"npy_dtype":"\u003cf2","output":false,"shape":[4,8],"type":"memref\u003c4x8xf16\u003e"}`,
		`{"dtype_note":"bfloat16 bits (view as torch.bfloat16, or shift left 16 into float32)","elem":"bf16","in":"arg1.in.npy","index":1,"npy_dtype":"\u003cu2","output":false,"shape":[8,2],"type":"memref\u003c8x2xbf16\u003e"}`,
		`{"index":2,"output":false,"type":"i32","value":7}`,
		`{"elem":"f32","index":3,"npy_dtype":"\u003cf4","out":"arg3.out.npy","output":true,"poisoned":true,"shape":[4,2],"type":"memref\u003c4x2xf32\u003e"}`,
	}
	for i, a := range as {
		got, _ := json.Marshal(a)
		if string(got) != want[i] {
			t.Errorf("arg %d:\n%s\nwant\n%s", i, got, want[i])
		}
	}
	// The files hold the host inputs and the GPU output, byte for byte,
	// after a 64-byte-aligned header.
	for _, c := range []struct {
		file string
		b    *buffer.Buffer
	}{{"arg0.in.npy", args[0].buf}, {"arg1.in.npy", args[1].buf}, {"arg3.out.npy", out}} {
		data, err := os.ReadFile(filepath.Join(dir, c.file))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(data, []byte("\x93NUMPY\x01\x00")) || !bytes.Equal(data[len(data)-len(c.b.Bytes):], c.b.Bytes) || (len(data)-len(c.b.Bytes))%64 != 0 {
			t.Errorf("%s: %d bytes, not a header and the buffer's %d bytes", c.file, len(data), len(c.b.Bytes))
		}
	}
}

func TestCheckDumpDir(t *testing.T) {
	tmp := t.TempDir()
	file := filepath.Join(tmp, "f")
	os.WriteFile(file, nil, 0o644)
	foreign := filepath.Join(tmp, "d")
	os.Mkdir(foreign, 0o755)
	os.WriteFile(filepath.Join(foreign, "notes.txt"), nil, 0o644)
	for _, c := range []struct{ dir, want string }{
		{"", "--dump-dir needs a directory"},
		{file, "not a directory"},
		{foreign, "holds 'notes.txt', which tmac run did not write"},
	} {
		if err := checkDumpDir(c.dir); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.dir, err, c.want)
		}
	}
	if err := checkDumpDir(filepath.Join(tmp, "new")); err != nil {
		t.Errorf("a new directory: %v", err)
	}
}
