package runner

import (
	"errors"
	"strings"
	"testing"

	"github.com/tmac-dev/tmac/bundle"
	"github.com/tmac-dev/tmac/driver"
	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/runtime/cuda"
	"github.com/tmac-dev/tmac/runtime/plan"
)

// launchDevice counts launches and fails the ones of kernel "bad".
type launchDevice struct{ launches []*plan.Launch }

func (d *launchDevice) Alloc(int) (uint64, error)                    { return 1 << 40, nil }
func (d *launchDevice) Free(uint64) error                            { return nil }
func (d *launchDevice) CopyToDevice(uint64, []byte) error            { return nil }
func (d *launchDevice) CopyToHost([]byte, uint64) error              { return nil }
func (d *launchDevice) CopyDeviceToDevice(uint64, uint64, int) error { return nil }
func (d *launchDevice) Memset(uint64, []byte, int) error             { return nil }
func (d *launchDevice) EncodeTensorMap(*cuda.TiledDesc) ([]byte, error) {
	return make([]byte, 128), nil
}
func (d *launchDevice) Launch(l *plan.Launch) error { d.launches = append(d.launches, l); return nil }
func (d *launchDevice) Synchronize() error          { return nil }

const hostModule = `module attributes {gpu.container_module} {
  func.func @main(%x: memref<?xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %n = memref.dim %x, %c0 : memref<?xf32>
    HOST
    gpu.launch_func @kernels::@k blocks in (%n, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<?xf32>)
    return
  }
  gpu.module @kernels {
    gpu.func @k(%x: memref<?xf32>) kernel {
      gpu.return
    }
  }
}
`

// TestHostRunner checks which executor runs the host code: the plan for a
// source that translates and for a format-2 bundle, the IR executor for
// host code outside the plan language and for a format-1 bundle; both
// launch alike, and a plan step's failure is a diagnostic at its op.
func TestHostRunner(t *testing.T) {
	parse := func(host string) (*Program, *ir.Operation, *plan.Plan) {
		text := strings.Replace(hostModule, "HOST", host, 1)
		mod, err := driver.ParseChunk(driver.Chunk{File: "h.tma", Text: text, FirstLine: 1}, false)
		if err != nil {
			t.Fatal(err)
		}
		entry, err := plan.SelectEntry(mod, "")
		if err != nil {
			t.Fatal(err)
		}
		p, err := plan.Build(mod, entry)
		if err != nil {
			t.Fatal(err)
		}
		return &Program{Module: mod}, entry, p
	}
	mem := func(n int64) []plan.Value {
		m, _ := plan.NewMem(ir.FloatTypeOf(ir.F32), []int64{n})
		m.Dev = 1 << 32
		return []plan.Value{m}
	}
	cases := []struct {
		name, host string
		decl       bool
	}{
		{"plan", "gpu.wait", true},
		{"host memory", "%h = memref.alloc() : memref<4xf32>", false},
	}
	for _, c := range cases {
		prog, entry, p := parse(c.host)
		run, decl := hostRunner(prog, entry, p)
		if decl != c.decl {
			t.Errorf("%s: declarative = %v", c.name, decl)
		}
		dev := &launchDevice{}
		if err := run(dev, mem(5), nil); err != nil || len(dev.launches) != 1 || dev.launches[0].Grid != [3]int{5, 1, 1} {
			t.Errorf("%s: err %v, launches %+v", c.name, err, dev.launches)
		}
		// A grid too large fails at the launch op.
		err := run(&launchDevice{}, mem(1<<40), nil)
		var d *ir.Diagnostic
		if !errors.As(err, &d) || !strings.Contains(err.Error(), "h.tma:7:5") || !strings.Contains(err.Error(), "cannot be launched") {
			t.Errorf("%s: error %v", c.name, err)
		}
	}
	// Bundles: format 2 runs the manifest's plan, format 1 the IR.
	prog, entry, p := parse("gpu.wait")
	e, err := plan.Describe(prog.Module, entry)
	if err != nil {
		t.Fatal(err)
	}
	prog.FromBundle = &bundle.Bundle{Manifest: bundle.Manifest{Format: 2, Entries: []bundle.Entry{*e}}}
	if _, decl := hostRunner(prog, entry, p); !decl {
		t.Error("a format-2 bundle does not run its plan")
	}
	prog.FromBundle = &bundle.Bundle{Manifest: bundle.Manifest{Format: 1}}
	if _, decl := hostRunner(prog, entry, p); decl {
		t.Error("a format-1 bundle runs a plan")
	}
}
