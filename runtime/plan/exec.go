package plan

import (
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/tmac-dev/tmac/internal/sm90"
	"math"

	arithd "github.com/tmac-dev/tmac/dialects/arith"
	"github.com/tmac-dev/tmac/dialects/nvgpu"
	"github.com/tmac-dev/tmac/ir"
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
		switch op.Name() {
		case "scf.yield":
			return x.operands(op), nil
		case "func.return":
			return nil, nil
		}
		if err := x.op(op); err != nil {
			return nil, err
		}
	}
	return nil, nil
}

func (x *Exec) operands(op *ir.Operation) []Value {
	var vs []Value
	for _, v := range op.Operands() {
		vs = append(vs, x.vals[v])
	}
	return vs
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

func (x *Exec) op(op *ir.Operation) error {
	name := op.Name()
	switch name {
	case "arith.constant":
		switch a := op.Attr("value").(type) {
		case *ir.IntegerAttr:
			x.setResults(op, a.Int())
		case *ir.FloatAttr:
			x.setResults(op, a.Value)
		default:
			return errAt(op, "only scalar constants run on the host")
		}
		return nil
	case "scf.for":
		lb, ub, step := x.int(op.Operand(0)), x.int(op.Operand(1)), x.int(op.Operand(2))
		if step <= 0 {
			return errAt(op, "the loop step is %d; it must be positive", step)
		}
		iters := x.operands(op)[3:]
		body := op.Region(0).Entry()
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
	case "scf.if":
		r := 0
		if x.int(op.Operand(0)) == 0 {
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
	case "arith.select":
		if x.int(op.Operand(0)) != 0 {
			x.setResults(op, x.vals[op.Operand(1)])
		} else {
			x.setResults(op, x.vals[op.Operand(2)])
		}
		return nil
	case "memref.cast":
		m, ok := x.vals[op.Operand(0)].(*Mem)
		if !ok {
			return errAt(op, "operand is not a memref")
		}
		x.setResults(op, m)
		return nil
	case "memref.dim":
		m, _ := x.vals[op.Operand(0)].(*Mem)
		d := x.int(op.Operand(1))
		if m == nil || d < 0 || int(d) >= len(m.Shape) {
			return errAt(op, "dimension %d is out of range", d)
		}
		x.setResults(op, m.Shape[d])
		return nil
	case "memref.alloc", "gpu.alloc":
		mt, ok := op.Result(0).Type().(*ir.MemRefType)
		if !ok {
			return errAt(op, "only ranked memrefs can be allocated")
		}
		var dyn []Value
		if name == "gpu.alloc" {
			for _, v := range op.OperandGroup("dynamicSizes") {
				dyn = append(dyn, x.vals[v])
			}
		} else {
			for _, v := range op.Operands() {
				dyn = append(dyn, x.vals[v])
			}
		}
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
		if name == "memref.alloc" {
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
	case "memref.dealloc", "gpu.dealloc":
		var v ir.Value
		if name == "gpu.dealloc" {
			v = op.OperandNamed("memref")
		} else {
			v = op.Operand(0)
		}
		if m, ok := x.vals[v].(*Mem); ok && m.OnDevice() {
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
	case "gpu.wait":
		x.tokens(op)
		if op.NumResults() == 0 {
			if err := x.Dev.Synchronize(); err != nil {
				return errAt(op, "%v", err)
			}
		}
		return nil
	case "gpu.memcpy":
		dst, _ := x.vals[op.OperandNamed("dst")].(*Mem)
		src, _ := x.vals[op.OperandNamed("src")].(*Mem)
		if dst == nil || src == nil {
			return errAt(op, "operands are not memrefs")
		}
		if err := x.memcpy(dst, src); err != nil {
			return errAt(op, "%v", err)
		}
		x.tokens(op)
		return nil
	case "gpu.memset":
		dst, _ := x.vals[op.OperandNamed("dst")].(*Mem)
		if dst == nil || !dst.Contiguous() {
			return errAt(op, "gpu.memset needs a contiguous memref")
		}
		pat, err := scalarBytes(dst.Elem, x.vals[op.OperandNamed("value")])
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
	case "nvgpu.tma.create.descriptor":
		m, _ := x.vals[op.Operand(0)].(*Mem)
		if m == nil {
			return errAt(op, "the tensor operand is not a memref")
		}
		d, ok := nvgpu.AsTensorMapDescriptor(op.Result(0).Type())
		if !ok {
			return errAt(op, "the result is not a tensor map descriptor")
		}
		var box []int64
		for _, v := range op.Operands()[1:] {
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
	case "gpu.launch_func":
		l, err := x.launch(op)
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
	v, err := arith(op, x.operands(op))
	if err != nil {
		return errAt(op, "%v", err)
	}
	x.setResults(op, v)
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

func (x *Exec) launch(op *ir.Operation) (*Launch, error) {
	ref := op.Attr("kernel").(*ir.SymbolRefAttr)
	k := x.Plan.Kernels[ref.Leaf()]
	if k == nil {
		return nil, fmt.Errorf("kernel %s was not planned", ref.Leaf())
	}
	l := &Launch{Kernel: k.Name}
	for i, n := range []string{"gridSizeX", "gridSizeY", "gridSizeZ"} {
		l.Grid[i] = int(x.int(op.OperandNamed(n)))
	}
	for i, n := range []string{"blockSizeX", "blockSizeY", "blockSizeZ"} {
		l.Block[i] = int(x.int(op.OperandNamed(n)))
	}
	if cl := op.OperandGroup("clusterSizeX"); len(cl) == 1 {
		for i, n := range []string{"clusterSizeX", "clusterSizeY", "clusterSizeZ"} {
			l.Cluster[i] = int(x.int(op.OperandNamed(n)))
		}
	}
	if sm := op.OperandGroup("dynamicSharedMemorySize"); len(sm) == 1 {
		l.SharedBytes = int(x.int(sm[0]))
	}
	sizes := sm90.Launch{DynamicSharedBytes: int64(l.SharedBytes)}
	for i := range 3 {
		sizes.Grid[i], sizes.Block[i], sizes.Cluster[i] = int64(l.Grid[i]), int64(l.Block[i]), int64(l.Cluster[i])
	}
	if err := sizes.Check(); err != nil {
		return nil, fmt.Errorf("kernel %s cannot be launched: %v", k.Name, err)
	}
	var args []Value
	for _, v := range op.OperandGroup("kernelOperands") {
		args = append(args, x.vals[v])
	}
	ps, err := PackParams(k, args)
	if err != nil {
		return nil, err
	}
	l.Params = ps
	return l, nil
}

// width returns the bit width of an integer type (64 for index).
func width(t ir.Type) int {
	if it, ok := t.(*ir.IntegerType); ok {
		return it.Width
	}
	return 64
}

// wrap sign-extends v from w bits.
func wrap(v int64, w int) int64 {
	if w >= 64 || w <= 0 {
		return v
	}
	s := 64 - w
	return v << s >> s
}

func unsigned(v int64, w int) uint64 {
	if w >= 64 {
		return uint64(v)
	}
	return uint64(v) & (1<<w - 1)
}

// arith evaluates a host arith op.
func arith(op *ir.Operation, in []Value) (Value, error) {
	rt := op.Result(0).Type()
	name := op.Name()
	if ir.IsFloat(rt) && name != "arith.sitofp" && name != "arith.uitofp" {
		f := make([]float64, len(in))
		for i, v := range in {
			switch v := v.(type) {
			case float64:
				f[i] = v
			default:
				return nil, fmt.Errorf("a float operand is expected")
			}
		}
		r := 0.0
		switch name {
		case "arith.addf":
			r = f[0] + f[1]
		case "arith.subf":
			r = f[0] - f[1]
		case "arith.mulf":
			r = f[0] * f[1]
		case "arith.divf":
			r = f[0] / f[1]
		case "arith.negf":
			r = -f[0]
		case "arith.minimumf":
			r = math.Min(f[0], f[1])
		case "arith.maximumf":
			r = math.Max(f[0], f[1])
		case "arith.extf", "arith.truncf":
			r = f[0]
		default:
			return nil, fmt.Errorf("'%s' on floats is not supported on the host", name)
		}
		if ft, ok := rt.(*ir.FloatType); ok && ft.Kind == ir.F32 {
			r = float64(float32(r))
		}
		return r, nil
	}
	if name == "arith.cmpf" {
		a, _ := in[0].(float64)
		b, _ := in[1].(float64)
		p, _ := op.Attr("predicate").(*ir.IntegerAttr)
		if p == nil {
			return nil, fmt.Errorf("no predicate")
		}
		uno := math.IsNaN(a) || math.IsNaN(b)
		var r bool
		switch p.Int() {
		case 0:
			r = false
		case 1, 8:
			r = a == b
		case 2, 9:
			r = a > b
		case 3, 10:
			r = a >= b
		case 4, 11:
			r = a < b
		case 5, 12:
			r = a <= b
		case 6, 13:
			r = a != b
		case 7:
			r = !uno
		case 14:
			r = uno
		case 15:
			r = true
		}
		if p.Int() >= 1 && p.Int() <= 6 && uno {
			r = false
		}
		if p.Int() >= 8 && p.Int() <= 13 && uno {
			r = true
		}
		return b2i(r), nil
	}
	if name == "arith.sitofp" || name == "arith.uitofp" {
		v, _ := in[0].(int64)
		if name == "arith.uitofp" {
			return float64(unsigned(v, width(op.Operand(0).Type()))), nil
		}
		return float64(v), nil
	}
	if name == "arith.fptosi" || name == "arith.fptoui" {
		f, _ := in[0].(float64)
		return wrap(int64(f), width(rt)), nil
	}
	ints := make([]int64, len(in))
	for i, v := range in {
		n, ok := v.(int64)
		if !ok {
			return nil, fmt.Errorf("an integer operand is expected")
		}
		ints[i] = n
	}
	w := width(rt)
	ow := w
	if len(in) > 0 {
		ow = width(op.Operand(0).Type())
	}
	var a, b int64
	a = ints[0]
	if len(ints) > 1 {
		b = ints[1]
	}
	ua, ub := unsigned(a, ow), unsigned(b, ow)
	var r int64
	switch name {
	case "arith.addi":
		r = a + b
	case "arith.subi":
		r = a - b
	case "arith.muli":
		r = a * b
	case "arith.divsi", "arith.remsi", "arith.ceildivsi", "arith.floordivsi", "arith.divui", "arith.remui", "arith.ceildivui":
		if b == 0 {
			return nil, fmt.Errorf("division by zero")
		}
		switch name {
		case "arith.divsi":
			r = a / b
		case "arith.remsi":
			r = a % b
		case "arith.ceildivsi":
			r = a / b
			if (a%b != 0) && ((a < 0) == (b < 0)) {
				r++
			}
		case "arith.floordivsi":
			r = a / b
			if (a%b != 0) && ((a < 0) != (b < 0)) {
				r--
			}
		case "arith.divui":
			r = int64(ua / ub)
		case "arith.remui":
			r = int64(ua % ub)
		case "arith.ceildivui":
			r = int64((ua + ub - 1) / ub)
		}
	case "arith.minsi":
		r = min(a, b)
	case "arith.maxsi":
		r = max(a, b)
	case "arith.minui":
		r = int64(min(ua, ub))
	case "arith.maxui":
		r = int64(max(ua, ub))
	case "arith.andi":
		r = a & b
	case "arith.ori":
		r = a | b
	case "arith.xori":
		r = a ^ b
	case "arith.shli":
		r = a << uint(b)
	case "arith.shrsi":
		r = a >> uint(b)
	case "arith.shrui":
		r = int64(ua >> uint(b))
	case "arith.index_cast", "arith.extsi", "arith.trunci":
		r = a
	case "arith.index_castui", "arith.extui":
		r = int64(ua)
	case "arith.cmpi":
		p, _ := op.Attr("predicate").(*ir.IntegerAttr)
		if p == nil {
			return nil, fmt.Errorf("no predicate")
		}
		c, ok := arithd.CmpI(p.Int(), a, b, 64)
		if !ok {
			return nil, fmt.Errorf("unknown cmpi predicate %d", p.Int())
		}
		return b2i(c), nil
	default:
		return nil, fmt.Errorf("'%s' is not supported on the host", name)
	}
	if w == 1 {
		return r & 1, nil
	}
	return wrap(r, w), nil
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
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

var _ = binary.LittleEndian
