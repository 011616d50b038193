package plan

import (
	"errors"
	"fmt"

	"github.com/tmac-dev/tmac/dialects/arith"
	funcdialect "github.com/tmac-dev/tmac/dialects/func"
	"github.com/tmac-dev/tmac/dialects/gpu"
	"github.com/tmac-dev/tmac/dialects/memref"
	"github.com/tmac-dev/tmac/dialects/nvgpu"
	"github.com/tmac-dev/tmac/dialects/scf"
	"github.com/tmac-dev/tmac/dialects/vector"
	"github.com/tmac-dev/tmac/internal/sm90"
	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/ir/eval"
	"github.com/tmac-dev/tmac/runtime/buffer"
)

// Exec runs a plan on a device.
type Exec struct {
	Plan *Plan
	Dev  Device
	// OnLaunch, if set, is called after every launch (the runtime waits
	// for it there with a watchdog).
	OnLaunch func(l *Launch) error
	vals     map[ir.Value]Value
	allocs   []uint64
}

// Run executes the entry function with the given arguments (*Mem for
// memrefs, int64 or float64 for scalars).
func (p *Plan) Run(dev Device, args []Value, onLaunch func(*Launch) error) error {
	x := &Exec{Plan: p, Dev: dev, OnLaunch: onLaunch, vals: map[ir.Value]Value{}}
	entry := p.Entry.Region(0).Entry()
	if len(args) != entry.NumArgs() {
		return fmt.Errorf("the entry function takes %d arguments, %d given", entry.NumArgs(), len(args))
	}
	for i, a := range entry.Args() {
		x.vals[a] = args[i]
	}
	_, err := x.block(entry)
	for _, a := range x.allocs {
		dev.Free(a)
	}
	if err != nil {
		return err
	}
	return dev.Synchronize()
}

// block runs the ops of b and returns the operands of its terminator
// (scf.yield) if any.
func (x *Exec) block(b *ir.Block) ([]Value, error) {
	for _, op := range b.Ops() {
		if y, ok := scf.AsYield(op); ok {
			return x.values(y.Results()), nil
		}
		if op.Name() == funcdialect.Return {
			return nil, nil
		}
		if err := x.op(op); err != nil {
			return nil, err
		}
	}
	return nil, nil
}

func (x *Exec) values(vs []ir.Value) []Value {
	var out []Value
	for _, v := range vs {
		out = append(out, x.vals[v])
	}
	return out
}

func (x *Exec) int(v ir.Value) int64 {
	i, _ := x.vals[v].(int64)
	return i
}

func (x *Exec) setResults(op *ir.Operation, vs ...Value) {
	for i, r := range op.Results() {
		if i < len(vs) {
			x.vals[r] = vs[i]
		}
	}
}

// tokens gives every async token result a value.
func (x *Exec) tokens(op *ir.Operation) {
	for _, r := range op.Results() {
		if _, ok := x.vals[r]; !ok {
			x.vals[r] = Token{}
		}
	}
}

// hostOps maps each op the host executes to its handler, except the arith
// ops it evaluates through their semantics (ir/eval) and the terminators
// (scf.yield, func.return), which end their block.
var hostOps map[string]func(*Exec, *ir.Operation) error

func init() {
	hostOps = map[string]func(*Exec, *ir.Operation) error{
		arith.Constant:            (*Exec).constant,
		arith.Select:              (*Exec).selectOp,
		scf.For:                   (*Exec).forOp,
		scf.If:                    (*Exec).ifOp,
		memref.Cast:               (*Exec).cast,
		memref.Dim:                (*Exec).dim,
		memref.Alloc:              (*Exec).alloc,
		gpu.Alloc:                 (*Exec).alloc,
		memref.Dealloc:            (*Exec).dealloc,
		gpu.Dealloc:               (*Exec).dealloc,
		gpu.Wait:                  (*Exec).wait,
		gpu.Memcpy:                (*Exec).memcpyOp,
		gpu.Memset:                (*Exec).memset,
		nvgpu.TmaCreateDescriptor: (*Exec).createDescriptor,
		gpu.LaunchFunc:            (*Exec).launchFunc,
		vector.Print:              (*Exec).print,
	}
}

// runsOnHost reports whether the host executes op: the ops of hostOps, the
// terminators, and the arith and index ops, evaluated through their
// semantics.
func runsOnHost(op *ir.Operation) bool {
	name := op.Name()
	return hostOps[name] != nil || name == scf.Yield || name == funcdialect.Return ||
		(op.Dialect() == "arith" || op.Dialect() == "index") && eval.Has(op)
}

func (x *Exec) op(op *ir.Operation) error {
	if h := hostOps[op.Name()]; h != nil {
		return h(x, op)
	}
	v, err := evalArith(op, x.values(op.Operands()))
	if err != nil {
		return errAt(op, "%v", err)
	}
	x.setResults(op, v...)
	return nil
}

func (x *Exec) constant(op *ir.Operation) error {
	switch a := (arith.ConstantOp{Op: op}).Value().(type) {
	case *ir.IntegerAttr:
		x.setResults(op, a.Int())
	case *ir.FloatAttr:
		x.setResults(op, a.Value)
	default:
		return errAt(op, "only scalar constants run on the host")
	}
	return nil
}

func (x *Exec) selectOp(op *ir.Operation) error {
	s := arith.SelectOp{Op: op}
	if x.int(s.Condition()) != 0 {
		x.setResults(op, x.vals[s.TrueValue()])
	} else {
		x.setResults(op, x.vals[s.FalseValue()])
	}
	return nil
}

func (x *Exec) forOp(op *ir.Operation) error {
	f := scf.ForOp{Op: op}
	lb, ub, step := x.int(f.LowerBound()), x.int(f.UpperBound()), x.int(f.Step())
	if step <= 0 {
		return errAt(op, "the loop step is %d; it must be positive", step)
	}
	iters := x.values(f.InitArgs())
	body := f.Region().Entry()
	for i := lb; i < ub; i += step {
		x.vals[body.Arg(0)] = i
		for j, a := range body.Args()[1:] {
			x.vals[a] = iters[j]
		}
		y, err := x.block(body)
		if err != nil {
			return err
		}
		iters = y
	}
	x.setResults(op, iters...)
	return nil
}

func (x *Exec) ifOp(op *ir.Operation) error {
	r := 0 // the then region, or else the else region (if any)
	if x.int(scf.IfOp{Op: op}.Condition()) == 0 {
		r = 1
	}
	if r >= op.NumRegions() || op.Region(r).Entry() == nil {
		return nil
	}
	y, err := x.block(op.Region(r).Entry())
	if err != nil {
		return err
	}
	x.setResults(op, y...)
	return nil
}

func (x *Exec) cast(op *ir.Operation) error {
	m, ok := x.vals[memref.CastOp{Op: op}.Source()].(*Mem)
	if !ok {
		return errAt(op, "operand is not a memref")
	}
	x.setResults(op, m)
	return nil
}

func (x *Exec) dim(op *ir.Operation) error {
	dim := memref.DimOp{Op: op}
	m, _ := x.vals[dim.Source()].(*Mem)
	d := x.int(dim.Index())
	if m == nil || d < 0 || int(d) >= len(m.Shape) {
		return errAt(op, "dimension %d is out of range", d)
	}
	x.setResults(op, m.Shape[d])
	return nil
}

// allocOp is the view of memref.alloc (host memory) and gpu.alloc (device
// memory), which declare the same dynamic sizes and memref result.
type allocOp interface {
	DynamicSizes() []ir.Value
	Memref() ir.Value
}

func (x *Exec) alloc(op *ir.Operation) error {
	var a allocOp = memref.AllocOp{Op: op}
	onHost := true
	if g, ok := gpu.AsAlloc(op); ok {
		a, onHost = g, false
	}
	mt, ok := a.Memref().Type().(*ir.MemRefType)
	if !ok {
		return errAt(op, "only ranked memrefs can be allocated")
	}
	dyn := x.values(a.DynamicSizes())
	shape := append([]int64(nil), mt.Shape()...)
	for i, j := 0, 0; i < len(shape); i++ {
		if shape[i] == ir.Dynamic {
			if j >= len(dyn) {
				return errAt(op, "missing dynamic size")
			}
			shape[i], _ = dyn[j].(int64)
			j++
		}
	}
	m, err := NewMem(mt.Elem, shape)
	if err != nil {
		return errAt(op, "%v", err)
	}
	if onHost {
		m.Host = make([]byte, m.Bytes())
		if m.Host == nil {
			m.Host = []byte{}
		}
	} else {
		p, err := x.Dev.Alloc(max(m.Bytes(), 1))
		if err != nil {
			return errAt(op, "%v", err)
		}
		m.Dev = p
		x.allocs = append(x.allocs, p)
	}
	x.setResults(op, m)
	x.tokens(op)
	return nil
}

func (x *Exec) dealloc(op *ir.Operation) error {
	// memref.dealloc and gpu.dealloc name their memref alike.
	var d interface{ Memref() ir.Value } = memref.DeallocOp{Op: op}
	if g, ok := gpu.AsDealloc(op); ok {
		d = g
	}
	if m, ok := x.vals[d.Memref()].(*Mem); ok && m.OnDevice() {
		for i, a := range x.allocs {
			if a == m.Dev {
				if err := x.Dev.Free(a); err != nil {
					return errAt(op, "%v", err)
				}
				x.allocs = append(x.allocs[:i], x.allocs[i+1:]...)
				break
			}
		}
	}
	x.tokens(op)
	return nil
}

func (x *Exec) wait(op *ir.Operation) error {
	x.tokens(op)
	if op.NumResults() == 0 {
		if err := x.Dev.Synchronize(); err != nil {
			return errAt(op, "%v", err)
		}
	}
	return nil
}

func (x *Exec) memcpyOp(op *ir.Operation) error {
	c := gpu.MemcpyOp{Op: op}
	dst, _ := x.vals[c.Dst()].(*Mem)
	src, _ := x.vals[c.Src()].(*Mem)
	if dst == nil || src == nil {
		return errAt(op, "operands are not memrefs")
	}
	if err := x.memcpy(dst, src); err != nil {
		return errAt(op, "%v", err)
	}
	x.tokens(op)
	return nil
}

func (x *Exec) memset(op *ir.Operation) error {
	s := gpu.MemsetOp{Op: op}
	dst, _ := x.vals[s.Dst()].(*Mem)
	if dst == nil || !dst.Contiguous() {
		return errAt(op, "gpu.memset needs a contiguous memref")
	}
	pat, err := scalarBytes(dst.Elem, x.vals[s.Value()])
	if err != nil {
		return errAt(op, "%v", err)
	}
	if dst.OnDevice() {
		err = x.Dev.Memset(dst.Dev+uint64(dst.Offset*int64(dst.ElemSize)), pat, int(dst.Elems()))
	} else {
		for i := 0; i < int(dst.Elems()); i++ {
			copy(dst.Host[(int(dst.Offset)+i)*dst.ElemSize:], pat)
		}
	}
	if err != nil {
		return errAt(op, "%v", err)
	}
	x.tokens(op)
	return nil
}

func (x *Exec) createDescriptor(op *ir.Operation) error {
	c := nvgpu.TmaCreateDescriptorOp{Op: op}
	m, _ := x.vals[c.Tensor()].(*Mem)
	if m == nil {
		return errAt(op, "the tensor operand is not a memref")
	}
	d, ok := nvgpu.AsTensorMapDescriptor(c.TensorMap().Type())
	if !ok {
		return errAt(op, "the result is not a tensor map descriptor")
	}
	var box []int64
	for _, v := range c.BoxDimensions() {
		box = append(box, x.int(v))
	}
	td, err := TiledDesc(d, m, box)
	if err != nil {
		return errAt(op, "%v", err)
	}
	b, err := x.Dev.EncodeTensorMap(td)
	if err != nil {
		return errAt(op, "%v", err)
	}
	x.setResults(op, &TensorMap{Desc: td, Bytes: b})
	return nil
}

func (x *Exec) launchFunc(op *ir.Operation) error {
	l, err := x.launch(gpu.LaunchFuncOp{Op: op})
	if err != nil {
		return errAt(op, "%v", err)
	}
	if err := x.Dev.Launch(l); err != nil {
		// A device that locates its faults in the kernel's source (the
		// emulator) gives a diagnostic of its own; the launch is a note.
		var dg interface{ Diagnostic() *ir.Diagnostic }
		if errors.As(err, &dg) {
			return dg.Diagnostic().AttachNote(op.Loc, "in the kernel launched here")
		}
		return errAt(op, "%v", err)
	}
	if x.OnLaunch != nil {
		if err := x.OnLaunch(l); err != nil {
			return err
		}
	}
	x.tokens(op)
	return nil
}

func (x *Exec) memcpy(dst, src *Mem) error {
	if dst.Bytes() != src.Bytes() || !dst.Contiguous() || !src.Contiguous() {
		return fmt.Errorf("gpu.memcpy needs two contiguous memrefs of the same size (%d and %d bytes)", dst.Bytes(), src.Bytes())
	}
	n := dst.Bytes()
	do := uint64(dst.Offset) * uint64(dst.ElemSize)
	so := uint64(src.Offset) * uint64(src.ElemSize)
	switch {
	case dst.OnDevice() && src.OnDevice():
		return x.Dev.CopyDeviceToDevice(dst.Dev+do, src.Dev+so, n)
	case dst.OnDevice():
		return x.Dev.CopyToDevice(dst.Dev+do, src.Host[so:so+uint64(n)])
	case src.OnDevice():
		return x.Dev.CopyToHost(dst.Host[do:do+uint64(n)], src.Dev+so)
	default:
		copy(dst.Host[do:do+uint64(n)], src.Host[so:so+uint64(n)])
		return nil
	}
}

func (x *Exec) launch(op gpu.LaunchFuncOp) (*Launch, error) {
	ref := op.Kernel().(*ir.SymbolRefAttr)
	k := x.Plan.Kernels[ref.Leaf()]
	if k == nil {
		return nil, fmt.Errorf("kernel %s was not planned", ref.Leaf())
	}
	l := &Launch{Kernel: k.Name}
	for i, v := range []ir.Value{op.GridSizeX(), op.GridSizeY(), op.GridSizeZ()} {
		l.Grid[i] = int(x.int(v))
	}
	for i, v := range []ir.Value{op.BlockSizeX(), op.BlockSizeY(), op.BlockSizeZ()} {
		l.Block[i] = int(x.int(v))
	}
	if op.ClusterSizeX() != nil {
		for i, v := range []ir.Value{op.ClusterSizeX(), op.ClusterSizeY(), op.ClusterSizeZ()} {
			l.Cluster[i] = int(x.int(v))
		}
	}
	if sm := op.DynamicSharedMemorySize(); sm != nil {
		l.SharedBytes = int(x.int(sm))
	}
	var err error
	if l.NonPortableCluster, err = sm90.NonPortableCluster(op.Op); err != nil {
		return nil, fmt.Errorf("kernel %s cannot be launched: %v", k.Name, err)
	}
	sizes := sm90.Launch{DynamicSharedBytes: int64(l.SharedBytes), NonPortableCluster: l.NonPortableCluster}
	for i := range 3 {
		sizes.Grid[i], sizes.Block[i], sizes.Cluster[i] = int64(l.Grid[i]), int64(l.Block[i]), int64(l.Cluster[i])
	}
	if err := sizes.Check(); err != nil {
		return nil, fmt.Errorf("kernel %s cannot be launched: %v", k.Name, err)
	}
	ps, err := PackParams(k, x.values(op.KernelOperands()))
	if err != nil {
		return nil, err
	}
	l.Params = ps
	return l, nil
}

// evalArith evaluates a host arith op through its semantics (ir/eval):
// integers are held sign-extended from their width (i1 as 0 or 1), floats
// as float64 values of their type. It returns one value per result (ops of
// two results: arith.addui_extended, the extended multiplications).
func evalArith(op *ir.Operation, in []Value) ([]Value, error) {
	if op.NumResults() < 1 || op.NumResults() > 2 || len(in) > 3 {
		return nil, fmt.Errorf("'%s' is not supported on the host", op.Name())
	}
	var l [3]ir.Lane
	var xs []string
	for i, v := range in {
		switch v := v.(type) {
		case int64:
			l[i].I = v
		case float64:
			l[i].F = v
		default:
			return nil, fmt.Errorf("operand %d is not a scalar (%T)", i, v)
		}
		xs = append(xs, fmt.Sprint(in[i]))
	}
	var rs [2]ir.Lane
	ok := false
	if op.NumResults() == 2 {
		f, err := eval.Compile2(op)
		if err != nil {
			return nil, err
		}
		rs[0], rs[1], ok = f(l[0], l[1], l[2])
	} else {
		f, err := eval.Compile(op)
		if err != nil {
			return nil, err
		}
		rs[0], ok = f(l[0], l[1], l[2])
	}
	if !ok {
		return nil, eval.UndefinedError(op, xs...)
	}
	out := make([]Value, op.NumResults())
	for i := range out {
		if ir.IsFloat(op.Result(i).Type()) {
			out[i] = rs[i].F
		} else {
			out[i] = rs[i].I
		}
	}
	return out, nil
}

// Upload copies a host buffer into a newly allocated device memref.
func Upload(dev Device, b *buffer.Buffer) (*Mem, error) {
	m, err := NewMem(b.Elem, b.Shape)
	if err != nil {
		return nil, err
	}
	p, err := dev.Alloc(max(len(b.Bytes), 16))
	if err != nil {
		return nil, err
	}
	m.Dev = p
	return m, dev.CopyToDevice(p, b.Bytes)
}
