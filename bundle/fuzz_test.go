package bundle

import (
	"archive/tar"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	_ "github.com/tmac-dev/tmac/dialects/all"
	"github.com/tmac-dev/tmac/driver"
)

// FuzzRead feeds arbitrary bytes to the bundle reader, starting from real
// bundles: the ones in testdata (written by `tmac compile --emit=bundle`)
// and ones Marshal writes here. The property: Read returns an error or a
// bundle that is valid — it writes out again and reads back the same —
// never panics, and never holds more file data than the input had (a
// length field alone must not make it allocate). A bundle Read accepts is
// then parsed as `tmac run` does with its module.tma, which must not panic
// either.
func FuzzRead(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.tmab")
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	if len(files) == 0 {
		f.Fatal("no bundles in testdata")
	}
	b := sample()
	for i := 0; i < 2; i++ {
		data, err := Marshal(b)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
		// A variant: a second kernel, a stride parameter.
		b.Manifest.Kernels = append(b.Manifest.Kernels, Kernel{Name: "other", Args: []string{}, Params: []Param{}})
		b.Manifest.Kernels[0].Params = append(b.Manifest.Kernels[0].Params, Param{Arg: 1, Role: "stride", Dim: 0, Type: "i64"})
	}
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		done := make(chan string, 1)
		go func() { done <- readProblem(data) }()
		select {
		case problem := <-done:
			if problem != "" {
				t.Fatal(problem)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("Read did not finish in 10s on %d bytes", len(data))
		}
	})
}

// readProblem reads data as a bundle and describes what went wrong, or
// returns "" (an error from Read is fine).
func readProblem(data []byte) (problem string) {
	defer func() {
		if r := recover(); r != nil {
			problem = fmt.Sprintf("panic: %v\n%s", r, debug.Stack())
		}
	}()
	b, err := Read(bytes.NewReader(data))
	if err != nil {
		if b != nil {
			return "Read returned both a bundle and an error"
		}
		return ""
	}
	if n := len(b.PTX) + len(b.LLVM) + len(b.Module); n > len(data) {
		return fmt.Sprintf("a %d-byte input gave %d bytes of files", len(data), n)
	}
	again, err := Marshal(b)
	if err != nil {
		// Write indents the manifest; a compact one near the size
		// limit may not fit once indented.
		if strings.Contains(err.Error(), ManifestFile+" is") && strings.Contains(err.Error(), "more than the limit") {
			return ""
		}
		return fmt.Sprintf("a bundle Read accepted does not write: %v", err)
	}
	b2, err := Read(bytes.NewReader(again))
	if err != nil {
		return fmt.Sprintf("a bundle Read accepted, written again, does not read: %v", err)
	}
	if !reflect.DeepEqual(b, b2) {
		return fmt.Sprintf("a bundle changed when written and read again:\n%+v\n%+v", b, b2)
	}
	// What tmac run does next with a bundle.
	_, _ = driver.ParseChunk(driver.Chunk{File: "fuzz.tmab:" + ModuleFile, Text: b.Module, FirstLine: 1}, false)
	return ""
}

// TestReadTestdata keeps the committed bundles (FuzzRead's seeds, written
// by tmac compile) readable.
func TestReadTestdata(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.tmab")
	if len(files) == 0 {
		t.Fatal("no bundles in testdata")
	}
	for _, file := range files {
		b, err := ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if len(b.Manifest.Kernels) == 0 || b.Module == "" {
			t.Errorf("%s: %+v", file, b.Manifest)
		}
		if p := readProblem(mustRead(t, file)); p != "" {
			t.Errorf("%s: %s", file, p)
		}
	}
}

func mustRead(t *testing.T, file string) []byte {
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestReadRejectsSparse: a sparse tar entry (GNU sparse 1.0, in PAX
// records) reads back as more bytes than the archive holds, so a few
// hundred bytes could claim 64 MiB of zeros for each file. Read refuses
// sparse entries.
func TestReadRejectsSparse(t *testing.T) {
	good, err := Marshal(sample())
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	tr := tar.NewReader(bytes.NewReader(good))
	for {
		hdr, err := tr.Next()
		if err != nil {
			break
		}
		var data bytes.Buffer
		data.ReadFrom(tr)
		if hdr.Name != LLVMFile {
			out.Write(ustarBlock(hdr.Name, tar.TypeReg, int64(data.Len())))
			out.Write(padBlock(data.Bytes()))
			continue
		}
		// One data fragment of 2 bytes at offset 0, in a file of 32 MiB.
		var pax string
		for _, kv := range [][2]string{{"GNU.sparse.major", "1"}, {"GNU.sparse.minor", "0"},
			{"GNU.sparse.name", LLVMFile}, {"GNU.sparse.realsize", fmt.Sprint(32 << 20)}} {
			pax += paxRecord(kv[0], kv[1])
		}
		out.Write(ustarBlock("PaxHeaders/x", tar.TypeXHeader, int64(len(pax))))
		out.Write(padBlock([]byte(pax)))
		payload := padBlock([]byte("1\n0\n2\n"))
		payload = append(payload, "ll"...)
		out.Write(ustarBlock("GNUSparseFile.0/x", tar.TypeReg, int64(len(payload))))
		out.Write(padBlock(payload))
	}
	out.Write(make([]byte, 1024))
	b, err := Read(bytes.NewReader(out.Bytes()))
	if err == nil {
		t.Fatalf("a %d-byte bundle with a sparse %s was accepted (%d bytes of LLVM IR)", out.Len(), LLVMFile, len(b.LLVM))
	}
	if !strings.Contains(err.Error(), "sparse") {
		t.Fatalf("err = %v", err)
	}
}

// ustarBlock is a USTAR header block.
func ustarBlock(name string, typ byte, size int64) []byte {
	b := make([]byte, 512)
	copy(b[0:100], name)
	copy(b[100:108], "0000644\x00")
	copy(b[108:116], "0000000\x00")
	copy(b[116:124], "0000000\x00")
	copy(b[124:136], fmt.Sprintf("%011o\x00", size))
	copy(b[136:148], "00000000000\x00")
	b[156] = typ
	copy(b[257:265], "ustar\x0000")
	copy(b[148:156], "        ")
	sum := 0
	for _, c := range b {
		sum += int(c)
	}
	copy(b[148:156], fmt.Sprintf("%06o\x00 ", sum))
	return b
}

// padBlock pads data to a multiple of 512 bytes.
func padBlock(data []byte) []byte {
	n := (len(data) + 511) / 512 * 512
	return append(append([]byte(nil), data...), make([]byte, n-len(data))...)
}

// paxRecord is one "LEN key=value\n" record; LEN counts itself.
func paxRecord(k, v string) string {
	rest := " " + k + "=" + v + "\n"
	n := len(rest) + 1
	for len(fmt.Sprint(n))+len(rest) != n {
		n++
	}
	return fmt.Sprint(n) + rest
}
