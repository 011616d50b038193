package runner

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"

	"github.com/tmac-dev/tmac/runtime/buffer"
	"github.com/tmac-dev/tmac/runtime/plan"
)

// tmac run --dump-dir DIR writes, after the run, every memref argument's
// input values (argN.in.npy) and every output's GPU result (argN.out.npy)
// as NumPy .npy files, and DIR/manifest.json describing them, so that
// other implementations can be run and checked on exactly the same inputs
// (bench/gpu/peers.py).

// dumpManifestName is the manifest's file name in the dump directory.
const dumpManifestName = "manifest.json"

// dumpFormat names the manifest's layout; bump it when fields change
// meaning.
const dumpFormat = "tmac-run-dump-1"

var dumpFileRE = regexp.MustCompile(`^arg[0-9]+\.(in|out)\.npy$`)

func isDumpFile(name string) bool { return name == dumpManifestName || dumpFileRE.MatchString(name) }

// checkDumpDir validates --dump-dir before anything runs: the directory
// may be missing (it is created), empty, or an earlier dump (its files are
// replaced); anything else in it is refused rather than mixed with a dump.
func checkDumpDir(dir string) error {
	if dir == "" {
		return fmt.Errorf("--dump-dir needs a directory")
	}
	st, err := os.Stat(dir)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("--dump-dir %s: %v", dir, err)
	}
	if !st.IsDir() {
		return fmt.Errorf("--dump-dir %s: not a directory", dir)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("--dump-dir %s: %v", dir, err)
	}
	for _, e := range ents {
		if !isDumpFile(e.Name()) || e.IsDir() {
			return fmt.Errorf("--dump-dir %s: the directory holds '%s', which tmac run did not write; give a new or empty directory, or an earlier dump", dir, e.Name())
		}
	}
	return nil
}

// makeDumpDir creates the directory (before the GPU is used, so a bad
// path is a usage error) and removes the files of an earlier dump.
func makeDumpDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("--dump-dir %s: %v", dir, err)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("--dump-dir %s: %v", dir, err)
	}
	for _, e := range ents {
		if isDumpFile(e.Name()) && !e.IsDir() {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
				return fmt.Errorf("--dump-dir %s: %v", dir, err)
			}
		}
	}
	return nil
}

// BenchResult is what --bench measured.
type BenchResult struct {
	Reps          int     `json:"reps"`
	Warmup        int     `json:"warmup"`
	RotatedCopies int     `json:"rotated_copies"`
	RunMedianS    float64 `json:"run_median_s"`
	RunMinS       float64 `json:"run_min_s"`
	KernelMedianS float64 `json:"kernel_median_s"`
	KernelMinS    float64 `json:"kernel_min_s"`
	// The kernels queued behind a GPU-side spin (launch latency hidden).
	QueuedMedianS float64 `json:"kernel_queued_median_s,omitempty"`
	QueuedMinS    float64 `json:"kernel_queued_min_s,omitempty"`
	// The host did not queue every run before the GPU's spin ended, so
	// some queued times include launch latency.
	QueuedExposed bool    `json:"kernel_queued_exposed,omitempty"`
	Flops         float64 `json:"flops,omitempty"`
	Bytes         float64 `json:"bytes,omitempty"`
}

// dumpArg is one entry argument in the manifest.
type dumpArg struct {
	Index int    `json:"index"`
	Type  string `json:"type"`
	// Memrefs.
	Elem     string  `json:"elem,omitempty"`
	Shape    []int64 `json:"shape,omitempty"`
	NPYDescr string  `json:"npy_dtype,omitempty"`
	Note     string  `json:"dtype_note,omitempty"`
	Output   bool    `json:"output"`
	// In is the file of the input values; empty for an output whose input
	// was only the poison pattern (NaN or the integer sentinel).
	In       string `json:"in,omitempty"`
	Poisoned bool   `json:"poisoned,omitempty"`
	Out      string `json:"out,omitempty"`
	// Scalars: the value passed.
	Value any `json:"value,omitempty"`
}

type dumpManifest struct {
	Format string       `json:"format"`
	Source string       `json:"source"`
	Entry  string       `json:"entry"`
	Device string       `json:"device,omitempty"`
	Seed   int64        `json:"seed"`
	Dist   string       `json:"dist"`
	Check  string       `json:"check"`
	Sample int64        `json:"ref_sample"`
	Args   []dumpArg    `json:"args"`
	Bench  *BenchResult `json:"bench"`
}

// dumpRun is what writeDump needs from the run.
type dumpRun struct {
	source, entry, device string
	args                  []*runArg
	results               []*buffer.Buffer
	outputs               []bool
	check                 string
	sample                int64
	bench                 *BenchResult
	opts                  *Options
}

// writeDump writes the .npy files and the manifest into dir (made by
// makeDumpDir). Outputs are the arguments marked as outputs, or every
// memref argument when none is, as in the reference check.
func writeDump(dir string, d *dumpRun) error {
	anyOut := false
	for i, a := range d.args {
		anyOut = anyOut || (a.buf != nil && d.outputs[i])
	}
	m := &dumpManifest{
		Format: dumpFormat, Source: d.source, Entry: d.entry, Device: d.device,
		Seed: d.opts.Seed, Dist: d.opts.Dist, Check: d.check, Sample: d.sample, Bench: d.bench,
	}
	for i, a := range d.args {
		da := dumpArg{Index: i, Type: a.typ.String()}
		if a.buf == nil {
			switch v := a.scalar.(type) {
			case float64:
				if math.IsNaN(v) || math.IsInf(v, 0) {
					da.Value = fmt.Sprint(v)
				} else {
					da.Value = v
				}
			default:
				da.Value = v
			}
			m.Args = append(m.Args, da)
			continue
		}
		nt, err := plan.NPYTypeOf(a.buf.Elem)
		if err != nil {
			return fmt.Errorf("--dump-dir: argument #%d: %v", i, err)
		}
		da.Elem, da.Shape, da.NPYDescr, da.Note = a.buf.Elem.String(), a.buf.Shape, nt.Descr, nt.Note
		da.Output = !anyOut || d.outputs[i]
		if a.output && isPoison(a.buf) {
			da.Poisoned = true
		} else {
			da.In = fmt.Sprintf("arg%d.in.npy", i)
			if err := writeNPYFile(filepath.Join(dir, da.In), a.buf); err != nil {
				return err
			}
		}
		if da.Output && d.results[i] != nil {
			da.Out = fmt.Sprintf("arg%d.out.npy", i)
			if err := writeNPYFile(filepath.Join(dir, da.Out), d.results[i]); err != nil {
				return err
			}
		}
		m.Args = append(m.Args, da)
	}
	var js bytes.Buffer
	enc := json.NewEncoder(&js)
	enc.SetEscapeHTML(false) // memref<...> stays readable
	enc.SetIndent("", "  ")
	if err := enc.Encode(m); err != nil {
		return fmt.Errorf("--dump-dir: %v", err)
	}
	return os.WriteFile(filepath.Join(dir, dumpManifestName), js.Bytes(), 0o644)
}

// isPoison reports whether b holds exactly the poison pattern.
func isPoison(b *buffer.Buffer) bool {
	p := &buffer.Buffer{Elem: b.Elem, Shape: b.Shape, Bytes: make([]byte, len(b.Bytes))}
	p.Poison()
	return string(p.Bytes) == string(b.Bytes)
}

func writeNPYFile(path string, b *buffer.Buffer) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("--dump-dir: %v", err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	if _, err := plan.WriteNPY(w, b); err != nil {
		f.Close()
		return fmt.Errorf("--dump-dir: %s: %v", path, err)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("--dump-dir: %s: %v", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("--dump-dir: %s: %v", path, err)
	}
	return nil
}
