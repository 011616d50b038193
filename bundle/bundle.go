// Package bundle reads and writes compiled tmac bundles (.tmab): one tar
// file holding everything needed to launch a program's kernels on a machine
// without llc.
//
// A bundle holds exactly four regular files:
//
//	manifest.json  tmac version, source file, target, PTX version and, for
//	               every kernel, its name and kernel-parameter layout
//	kernels.ptx    the PTX of every kernel (what the CUDA driver loads)
//	kernels.ll     the LLVM IR it was compiled from (for reference)
//	module.tma     the IR after tmac's passes, printed (host code included)
//
// Format 2 manifests also hold the host plan of every public host
// function (entries: plan.go, expr.go), which a runtime executes without
// reading module.tma.
//
// The parameter layout is the kernel ABI (package kernelabi): a memref
// argument becomes a base pointer, then its dynamic offset, sizes and
// strides; a tensor map descriptor a 128-byte by-value parameter; anything
// else one scalar parameter.
package bundle

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strconv"
	"time"

	"github.com/tmac-dev/tmac/kernelabi"
)

// File names inside a bundle, and the bundle file extension.
const (
	ManifestFile = "manifest.json"
	PTXFile      = "kernels.ptx"
	LLVMFile     = "kernels.ll"
	ModuleFile   = "module.tma"
	Ext          = ".tmab"
)

// FormatVersion is the manifest format this package writes; Read accepts
// this version and older. Format 2 added the host plans (Entries).
const FormatVersion = 2

// Size limits Read enforces, so a corrupt or hostile bundle cannot make
// the reader allocate without bound.
const (
	MaxManifestSize = 1 << 20  // 1 MiB
	MaxFileSize     = 64 << 20 // 64 MiB for each of the other files
	MaxKernels      = 4096
	MaxParams       = 4096 // per kernel
)

// Manifest describes the contents of a bundle.
type Manifest struct {
	Format      int      `json:"format"`
	TmacVersion string   `json:"tmac_version"`
	Source      string   `json:"source"`      // source file name, as given to tmac compile
	Target      string   `json:"target"`      // e.g. sm_90a
	PTXVersion  int      `json:"ptx_version"` // e.g. 80 for PTX ISA 8.0
	Kernels     []Kernel `json:"kernels"`
	// Entries are the host plans of the public host functions (format 2).
	Entries []Entry `json:"entries"`
}

// Kernel is one entry point of kernels.ptx.
type Kernel struct {
	Name   string   `json:"name"`
	Args   []string `json:"args"`   // the IR types of the kernel's arguments
	Params []Param  `json:"params"` // the PTX parameters, in order
}

// Param is one PTX parameter of a kernel.
type Param struct {
	Arg  int    `json:"arg"`  // index of the IR argument it belongs to
	Role string `json:"role"` // a kernelabi.Role's name: scalar, base, offset, size, stride, tensormap
	Dim  int    `json:"dim"`  // dimension, for the size and stride roles
	Type string `json:"type"` // LLVM type, e.g. "float*", "i64", "[128 x i8]*"
}

// Bundle is the decoded contents of a .tmab file.
type Bundle struct {
	Manifest Manifest
	PTX      string
	LLVM     string
	Module   string
}

// Kernel returns the manifest entry of the named kernel.
func (b *Bundle) Kernel(name string) (*Kernel, bool) {
	for i := range b.Manifest.Kernels {
		if b.Manifest.Kernels[i].Name == name {
			return &b.Manifest.Kernels[i], true
		}
	}
	return nil, false
}

// Entry returns the host plan of the named entry function.
func (b *Bundle) Entry(name string) (*Entry, bool) {
	for i := range b.Manifest.Entries {
		if b.Manifest.Entries[i].Name == name {
			return &b.Manifest.Entries[i], true
		}
	}
	return nil, false
}

// Write validates b and writes it as a tar stream. The output is
// deterministic: fixed order, modes, owners and timestamps.
func Write(w io.Writer, b *Bundle) error {
	m := b.Manifest
	if m.Format == 0 {
		m.Format = FormatVersion
	}
	if err := validate(&m, b.PTX); err != nil {
		return err
	}
	var mb bytes.Buffer
	enc := json.NewEncoder(&mb)
	enc.SetEscapeHTML(false) // keep memref<...> readable
	enc.SetIndent("", "  ")
	if err := enc.Encode(&m); err != nil {
		return err
	}
	man := mb.Bytes()
	files := []struct {
		name string
		data []byte
		max  int64
	}{
		{ManifestFile, man, MaxManifestSize},
		{PTXFile, []byte(b.PTX), MaxFileSize},
		{LLVMFile, []byte(b.LLVM), MaxFileSize},
		{ModuleFile, []byte(b.Module), MaxFileSize},
	}
	tw := tar.NewWriter(w)
	for _, f := range files {
		if int64(len(f.data)) > f.max {
			return fmt.Errorf("bundle: %s is %d bytes, more than the limit of %d", f.name, len(f.data), f.max)
		}
		hdr := &tar.Header{
			Typeflag: tar.TypeReg,
			Name:     f.name,
			Mode:     0o644,
			Size:     int64(len(f.data)),
			ModTime:  time.Unix(0, 0),
			Format:   tar.FormatUSTAR,
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if _, err := tw.Write(f.data); err != nil {
			return err
		}
	}
	return tw.Close()
}

// Marshal returns the bytes Write would write.
func Marshal(b *Bundle) ([]byte, error) {
	var buf bytes.Buffer
	if err := Write(&buf, b); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Read decodes and validates a bundle: only the four known regular files,
// each exactly once, within its size limit and not sparse (so the files
// never hold more bytes than the archive); a manifest that parses, of a
// known format, with well-formed parameter layouts; and every kernel it
// names defined as an entry in the PTX.
func Read(r io.Reader) (*Bundle, error) {
	in := &countingReader{r: r}
	tr := tar.NewReader(in)
	got := map[string][]byte{}
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("bundle: not a valid tmac bundle (tar): %v", err)
		}
		limit := int64(MaxFileSize)
		switch hdr.Name {
		case ManifestFile:
			limit = MaxManifestSize
		case PTXFile, LLVMFile, ModuleFile:
		default:
			return nil, fmt.Errorf("bundle: unexpected entry %q", hdr.Name)
		}
		if hdr.Typeflag != tar.TypeReg {
			return nil, fmt.Errorf("bundle: %s is not a regular file", hdr.Name)
		}
		if _, dup := got[hdr.Name]; dup {
			return nil, fmt.Errorf("bundle: %s appears more than once", hdr.Name)
		}
		if hdr.Size < 0 || hdr.Size > limit {
			return nil, fmt.Errorf("bundle: %s is %d bytes, more than the limit of %d", hdr.Name, hdr.Size, limit)
		}
		data, err := io.ReadAll(&denseReader{r: io.LimitReader(tr, limit+1), in: in, start: in.n})
		if err == errSparse {
			return nil, fmt.Errorf("bundle: %s is a sparse file", hdr.Name)
		}
		if err != nil {
			return nil, fmt.Errorf("bundle: reading %s: %v", hdr.Name, err)
		}
		if int64(len(data)) != hdr.Size {
			return nil, fmt.Errorf("bundle: %s is truncated", hdr.Name)
		}
		got[hdr.Name] = data
	}
	var missing []string
	for _, n := range []string{ManifestFile, PTXFile, LLVMFile, ModuleFile} {
		if _, ok := got[n]; !ok {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("bundle: missing %v", missing)
	}
	b := &Bundle{PTX: string(got[PTXFile]), LLVM: string(got[LLVMFile]), Module: string(got[ModuleFile])}
	if err := json.Unmarshal(got[ManifestFile], &b.Manifest); err != nil {
		return nil, fmt.Errorf("bundle: %s does not parse: %v", ManifestFile, err)
	}
	if err := validate(&b.Manifest, b.PTX); err != nil {
		return nil, err
	}
	return b, nil
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// denseReader reads an entry's data and fails with errSparse as soon as
// it has given more bytes than the archive supplied since start: the
// entry is sparse, its holes reading as zeros the archive does not hold,
// so a few bytes could claim the size limit of every file. tmac never
// writes sparse entries.
type denseReader struct {
	r     io.Reader
	in    *countingReader
	start int64
	got   int64
}

var errSparse = errors.New("sparse entry")

func (d *denseReader) Read(p []byte) (int, error) {
	n, err := d.r.Read(p)
	d.got += int64(n)
	if d.got > d.in.n-d.start {
		return n, errSparse
	}
	return n, err
}

// ReadFile reads and validates the bundle at path.
func ReadFile(path string) (*Bundle, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := Read(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return b, nil
}

var (
	versionRE = regexp.MustCompile(`(?m)^\s*\.version\s+(\d+)\.(\d+)\s*$`)
	targetRE  = regexp.MustCompile(`(?m)^\s*\.target\s+([A-Za-z0-9_]+)`)
	entryRE   = regexp.MustCompile(`\.entry\s+([A-Za-z_$%][A-Za-z0-9_$]*)\s*\(`)
)

// PTXVersion reads the `.version X.Y` directive of PTX text: X*10+Y.
func PTXVersion(ptx string) (int, bool) {
	m := versionRE.FindStringSubmatch(ptx)
	if m == nil {
		return 0, false
	}
	major, _ := strconv.Atoi(m[1])
	minor, _ := strconv.Atoi(m[2])
	return major*10 + minor, true
}

// PTXTarget reads the first target of the `.target` directive of PTX text.
func PTXTarget(ptx string) (string, bool) {
	m := targetRE.FindStringSubmatch(ptx)
	if m == nil {
		return "", false
	}
	return m[1], true
}

// PTXEntries lists the kernel entry points defined in PTX text, sorted.
func PTXEntries(ptx string) []string {
	var names []string
	for _, m := range entryRE.FindAllStringSubmatch(ptx, -1) {
		names = append(names, m[1])
	}
	sort.Strings(names)
	return names
}

var errNoKernels = errors.New("bundle: the manifest lists no kernels")

func validate(m *Manifest, ptx string) error {
	if m.Format < 1 || m.Format > FormatVersion {
		return fmt.Errorf("bundle: manifest format %d is not supported (this tmac reads formats 1 to %d)", m.Format, FormatVersion)
	}
	if m.Target == "" {
		return errors.New("bundle: the manifest names no target")
	}
	if t, ok := PTXTarget(ptx); !ok {
		return fmt.Errorf("bundle: %s has no .target directive", PTXFile)
	} else if t != m.Target {
		return fmt.Errorf("bundle: the manifest says target %s but %s is for %s", m.Target, PTXFile, t)
	}
	if v, ok := PTXVersion(ptx); !ok {
		return fmt.Errorf("bundle: %s has no .version directive", PTXFile)
	} else if v != m.PTXVersion {
		return fmt.Errorf("bundle: the manifest says PTX %d.%d but %s is PTX %d.%d", m.PTXVersion/10, m.PTXVersion%10, PTXFile, v/10, v%10)
	}
	if len(m.Kernels) == 0 {
		return errNoKernels
	}
	if len(m.Kernels) > MaxKernels {
		return fmt.Errorf("bundle: the manifest lists %d kernels, more than %d", len(m.Kernels), MaxKernels)
	}
	entries := map[string]bool{}
	for _, e := range PTXEntries(ptx) {
		entries[e] = true
	}
	seen := map[string]bool{}
	for _, k := range m.Kernels {
		if k.Name == "" {
			return errors.New("bundle: a kernel in the manifest has no name")
		}
		if seen[k.Name] {
			return fmt.Errorf("bundle: kernel %s is listed twice", k.Name)
		}
		seen[k.Name] = true
		if !entries[k.Name] {
			return fmt.Errorf("bundle: kernel %s is not defined in %s", k.Name, PTXFile)
		}
		if len(k.Params) > MaxParams {
			return fmt.Errorf("bundle: kernel %s has %d parameters, more than %d", k.Name, len(k.Params), MaxParams)
		}
		last := -1
		for i, p := range k.Params {
			where := fmt.Sprintf("bundle: kernel %s, parameter %d", k.Name, i)
			role, ok := kernelabi.ParseRole(p.Role)
			if !ok {
				return fmt.Errorf("%s: unknown role %q", where, p.Role)
			}
			if p.Arg < 0 || p.Arg < last || (k.Args != nil && p.Arg >= len(k.Args)) {
				return fmt.Errorf("%s: argument index %d is out of order or range", where, p.Arg)
			}
			if p.Dim < 0 || (p.Dim != 0 && role != kernelabi.RoleSize && role != kernelabi.RoleStride) {
				return fmt.Errorf("%s: bad dimension %d for role %s", where, p.Dim, p.Role)
			}
			if p.Type == "" {
				return fmt.Errorf("%s: no LLVM type", where)
			}
			last = p.Arg
		}
	}
	return validateEntries(m)
}
