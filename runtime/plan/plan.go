// Package plan executes the host part of a tmac program (the entry
// func.func after kernel outlining) on a GPU: host scalars (arith, index),
// host loops (scf.for, scf.if), memref.cast, host memref.alloc/dealloc,
// gpu.alloc/dealloc/memcpy/memset/wait, nvgpu.tma.create.descriptor and
// gpu.launch_func. The device is reached through the Device interface, so
// plan construction, parameter layout and tensor map computation are
// testable without a GPU.
package plan

import (
	funcdialect "github.com/tmac-dev/tmac/dialects/func"
	"github.com/tmac-dev/tmac/dialects/gpu"
	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/kernelabi"
	"github.com/tmac-dev/tmac/runtime/cuda"
)

// Device is what the plan needs from a GPU.
type Device interface {
	Alloc(bytes int) (uint64, error)
	Free(p uint64) error
	CopyToDevice(dst uint64, src []byte) error
	CopyToHost(dst []byte, src uint64) error
	CopyDeviceToDevice(dst, src uint64, bytes int) error
	// Memset fills n elements of elemSize bytes at dst with the pattern.
	Memset(dst uint64, pattern []byte, n int) error
	EncodeTensorMap(d *cuda.TiledDesc) ([]byte, error)
	Launch(l *Launch) error
	Synchronize() error
}

// Launch is one kernel launch.
type Launch struct {
	Kernel      string
	Grid, Block [3]int
	Cluster     [3]int // zeros: no cluster
	// NonPortableCluster is the launch's opt-in to clusters of more than
	// the portable 8 blocks ({nonPortableClusterSize = true}).
	NonPortableCluster bool
	SharedBytes        int
	// Params holds the bytes of each kernel parameter, in order.
	Params [][]byte
}

// Kernel is a gpu.func kernel the entry function launches.
type Kernel struct {
	Name   string // symbol of the gpu.func (the PTX entry name)
	Args   []ir.Type
	Params []kernelabi.Param
}

// Plan is an entry function ready to run.
type Plan struct {
	Module  *ir.Operation
	Entry   *ir.Operation
	Args    []ir.Type
	Kernels map[string]*Kernel // by gpu.func symbol
}

// Build checks that every op of the entry function's body can run on the
// host and lays out the parameters of every kernel it launches. Errors are
// diagnostics at the offending op.
func Build(mod, entry *ir.Operation) (*Plan, error) {
	p := &Plan{Module: mod, Entry: entry, Kernels: map[string]*Kernel{}}
	ft, ok := FuncType(entry)
	if !ok {
		return nil, entry.EmitOpError("has no function type")
	}
	p.Args = ft.Inputs
	if entry.NumRegions() == 0 || entry.Region(0).Entry() == nil {
		return nil, entry.EmitOpError("is a declaration; the entry function needs a body")
	}
	var err error
	ir.Walk(entry, func(op *ir.Operation) ir.WalkResult {
		if err != nil || op == entry {
			return ir.Advance
		}
		if !runsOnHost(op) {
			err = op.EmitError("'%s' cannot run on the host: tmac run executes arith, scf, memref.alloc/cast, gpu.alloc/dealloc/memcpy/memset/wait, nvgpu.tma.create.descriptor and gpu.launch_func there (did outline-kernels run?)", op.Name())
			return ir.Skip
		}
		if l, ok := gpu.AsLaunchFunc(op); ok {
			var k *Kernel
			k, err = p.kernel(l)
			if err == nil {
				p.Kernels[k.Name] = k
			}
		}
		return ir.Advance
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// FuncType returns the function type of a func.func or gpu.func.
func FuncType(fn *ir.Operation) (*ir.FunctionType, bool) {
	// func.func and gpu.func declare their function type alike.
	var f interface{ FunctionType() ir.Attribute } = funcdialect.FuncOp{Op: fn}
	if g, ok := gpu.AsFunc(fn); ok {
		f = g
	}
	ta, ok := f.FunctionType().(*ir.TypeAttr)
	if !ok {
		return nil, false
	}
	ft, ok := ta.Value.(*ir.FunctionType)
	return ft, ok
}

func (p *Plan) kernel(l gpu.LaunchFuncOp) (*Kernel, error) {
	op := l.Op
	ref, ok := l.Kernel().(*ir.SymbolRefAttr)
	if !ok {
		return nil, op.EmitOpError("has no kernel symbol")
	}
	var fn *ir.Operation
	for _, m := range p.Module.Region(0).Entry().Ops() {
		if g, ok := gpu.AsModule(m); ok && m.SymbolName() == ref.Root {
			for _, f := range g.BodyRegion().Entry().Ops() {
				if f.Name() == gpu.Func && f.SymbolName() == ref.Leaf() {
					fn = f
				}
			}
		}
	}
	if fn == nil {
		return nil, op.EmitOpError("kernel %s not found in the module", ref.Leaf())
	}
	ft, ok := FuncType(fn)
	if !ok {
		return nil, fn.EmitOpError("has no function type")
	}
	params, err := kernelabi.Params(ft.Inputs, true, nil)
	if err != nil {
		return nil, op.EmitOpError("kernel %s: %v", ref.Leaf(), err)
	}
	operands := l.KernelOperands()
	if len(operands) != len(ft.Inputs) {
		return nil, op.EmitOpError("passes %d operands to kernel %s, which takes %d", len(operands), ref.Leaf(), len(ft.Inputs))
	}
	return &Kernel{Name: fn.SymbolName(), Args: ft.Inputs, Params: params}, nil
}

// errAt makes a diagnostic at op's location.
func errAt(op *ir.Operation, format string, args ...any) error {
	return op.EmitError(format, args...)
}
