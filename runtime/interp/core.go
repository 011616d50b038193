package interp

import (
	"fmt"
	"sync"
	"unsafe"

	funcdialect "github.com/tmac-dev/tmac/dialects/func"
	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/ir/eval"
	"github.com/tmac-dev/tmac/runtime/buffer"
)

// The interpreter compiles each function once into a tree of Go closures
// over a flat register file: every SSA value gets a slot in one of three
// typed arrays (int64 for integers and index, float64 for floats, *memref
// for memrefs). Integers are kept sign-extended from their bit width;
// floats are kept rounded to their element type.

type kind uint8

const (
	kInt kind = iota
	kFloat
	kMem
)

type slot struct {
	k kind
	i int32
}

// memref is a strided view of a byte buffer.
type memref struct {
	data    []byte
	elem    ir.Type
	esize   int64
	offset  int64
	sizes   []int64
	strides []int64
	arg     int // index of the argument it views, or -1
	// wmask, when the call tracks writes, has one byte per byte of data
	// (of the argument it views), set to 1 when a store writes that byte.
	wmask []byte
}

// Access flags of one memref argument.
const (
	accReadFirst = 1 << iota // read while not yet written
	accWritten
	accTouched
)

// Access tells how a function used one memref argument.
type Access struct {
	// ReadBeforeWrite reports that the argument was read before the
	// function wrote it (its initial contents matter).
	ReadBeforeWrite bool
	// Written reports that some element was written.
	Written bool
}

type frame struct {
	i   []int64
	f   []float64
	m   []*memref
	acc []uint8
	// par allows outer loops to run on several goroutines.
	par     bool
	workers int
	// sample, when set, restricts the function's outermost loop to some
	// of its iterations (see CallWith); nil in callees and loop workers.
	sample *sampleState
}

type instr func(fr *frame)

// mixedInts returns static with each ir.Dynamic entry replaced, in order,
// by the next of the dynamic index slots: the sizes, offsets and strides
// ops give as a static list plus operands.
func (fr *frame) mixedInts(static []int64, dyn []int32) []int64 {
	out := append([]int64(nil), static...)
	next := 0
	for i, s := range out {
		if s == ir.Dynamic {
			out[i], next = fr.i[dyn[next]], next+1
		}
	}
	return out
}

// runError carries an error out of the closures (recovered by Call).
type runError struct{ err error }

func opErr(op *ir.Operation, format string, args ...any) error {
	return fmt.Errorf("%s: '%s': %s", op.Loc, op.Name(), fmt.Sprintf(format, args...))
}

func fail(op *ir.Operation, format string, args ...any) {
	panic(runError{opErr(op, format, args...)})
}

// cfunc is a compiled function.
type cfunc struct {
	op           *ir.Operation
	name         string
	nI, nF, nM   int
	tmplI        []int64
	tmplF        []float64
	args         []slot
	argTypes     []ir.Type
	results      []slot
	resTypes     []ir.Type
	body         []instr
	parallelLocs []ir.Location
}

func (cf *cfunc) newFrame(acc []uint8, par bool) *frame {
	fr := &frame{i: make([]int64, cf.nI), f: make([]float64, cf.nF), m: make([]*memref, cf.nM), acc: acc, par: par}
	copy(fr.i, cf.tmplI)
	copy(fr.f, cf.tmplF)
	return fr
}

// Program is a compiled module, ready to run its functions many times.
type Program struct {
	module  *ir.Operation
	mu      sync.Mutex
	funcs   map[*ir.Operation]*cfunc
	globals map[*ir.Operation]*memref
	// Workers is the number of goroutines parallel loops use (default:
	// GOMAXPROCS); 1 runs everything serially.
	Workers int
}

// Compile prepares module for Call; functions are compiled on first use.
func Compile(module *ir.Operation) *Program {
	return &Program{module: module, funcs: map[*ir.Operation]*cfunc{}, globals: map[*ir.Operation]*memref{}}
}

func (p *Program) function(name string) (*cfunc, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	op := ir.LookupSymbol(p.module, name)
	if op == nil || op.Name() != funcdialect.Func {
		return nil, fmt.Errorf("no func.func @%s in the module", name)
	}
	return p.compileFunc(op)
}

// ParallelLoops returns the locations of the loops of function fn that may
// run on several goroutines: parallel-safe outermost loops, and the
// parallel-safe loops directly in them, which take the workers when the
// outer loop has fewer iterations than workers (a sampled reference's
// rows).
func (p *Program) ParallelLoops(fn string) ([]ir.Location, error) {
	cf, err := p.function(fn)
	if err != nil {
		return nil, err
	}
	return cf.parallelLocs, nil
}

// Call runs function fn; see the package-level Call.
func (p *Program) Call(fn string, args []Arg) ([]Arg, []Access, error) {
	res, info, err := p.CallWith(fn, args, CallOptions{})
	if err != nil {
		return nil, nil, err
	}
	return res, info.Access, nil
}

func run(fr *frame, body []instr, workers int) (err error) {
	defer func() {
		if r := recover(); r != nil {
			if re, ok := r.(runError); ok {
				err = re.err
				return
			}
			panic(r)
		}
	}()
	for _, in := range body {
		in(fr)
	}
	return nil
}

// argsAlias reports whether two memref arguments share storage.
func argsAlias(args []Arg) bool {
	type rng struct{ lo, hi uintptr }
	var rs []rng
	for _, a := range args {
		b, ok := a.(*buffer.Buffer)
		if !ok || len(b.Bytes) == 0 {
			continue
		}
		lo := uintptr(unsafe.Pointer(&b.Bytes[0]))
		r := rng{lo, lo + uintptr(len(b.Bytes))}
		for _, o := range rs {
			if r.lo < o.hi && o.lo < r.hi {
				return true
			}
		}
		rs = append(rs, r)
	}
	return false
}

func setArg(fr *frame, s slot, t ir.Type, a Arg, idx int) error {
	switch s.k {
	case kInt:
		v, ok := a.(int64)
		if !ok {
			if iv, ok2 := a.(int); ok2 {
				v, ok = int64(iv), true
			}
		}
		if !ok {
			return fmt.Errorf("expected an int64 for type %s, got %T", t, a)
		}
		fr.i[s.i] = eval.Wrap(v, intWidth(t))
	case kFloat:
		v, ok := a.(float64)
		if !ok {
			return fmt.Errorf("expected a float64 for type %s, got %T", t, a)
		}
		fr.f[s.i] = ir.RoundToFloatKind(v, t.(*ir.FloatType).Kind)
	case kMem:
		b, ok := a.(*buffer.Buffer)
		if !ok || b == nil {
			return fmt.Errorf("expected a *buffer.Buffer for type %s, got %T", t, a)
		}
		mt := t.(*ir.MemRefType)
		if b.Elem != mt.Elem {
			return fmt.Errorf("buffer of %s for a memref of %s", b.Elem, mt.Elem)
		}
		if len(b.Shape) != mt.Rank() {
			return fmt.Errorf("buffer of rank %d for %s", len(b.Shape), mt)
		}
		for i, d := range mt.Shape() {
			if d != ir.Dynamic && d != b.Shape[i] {
				return fmt.Errorf("buffer of shape %v for %s", b.Shape, mt)
			}
		}
		strides := ir.IdentityStrides(b.Shape)
		if ts, off, ok := mt.StridesAndOffset(); !ok || (off != 0 && off != ir.Dynamic) || !stridesMatch(ts, strides) {
			return fmt.Errorf("memref type %s does not have the dense row-major layout of a buffer", mt)
		}
		es, _ := buffer.ElemSize(b.Elem)
		fr.m[s.i] = &memref{data: b.Bytes, elem: b.Elem, esize: int64(es), sizes: append([]int64(nil), b.Shape...), strides: strides, arg: idx}
	}
	return nil
}

func stridesMatch(ts, actual []int64) bool {
	for i := range ts {
		if ts[i] != ir.Dynamic && ts[i] != actual[i] && actual[i] != 0 {
			return false
		}
	}
	return true
}

func getResult(fr *frame, s slot, t ir.Type) Arg {
	switch s.k {
	case kInt:
		v := fr.i[s.i]
		if intWidth(t) == 1 {
			return v & 1
		}
		return v
	case kFloat:
		return fr.f[s.i]
	}
	m := fr.m[s.i]
	b := &buffer.Buffer{Elem: m.elem, Shape: append([]int64(nil), m.sizes...)}
	n := int64(1)
	for _, d := range m.sizes {
		n *= d
	}
	b.Bytes = make([]byte, n*m.esize)
	idx := make([]int64, len(m.sizes))
	for e := int64(0); e < n; e++ {
		off := m.offset
		for d := range idx {
			off += idx[d] * m.strides[d]
		}
		copy(b.Bytes[e*m.esize:(e+1)*m.esize], m.data[off*m.esize:])
		for d := len(idx) - 1; d >= 0; d-- {
			idx[d]++
			if idx[d] < m.sizes[d] {
				break
			}
			idx[d] = 0
		}
	}
	return b
}

func intWidth(t ir.Type) int {
	if it, ok := t.(*ir.IntegerType); ok {
		return it.Width
	}
	return 64
}

func call(module *ir.Operation, fn string, args []Arg) ([]Arg, error) {
	res, _, err := Compile(module).Call(fn, args)
	return res, err
}

// CallWithAccess is Call that also reports, per argument, how the function
// used it: whether it read a memref argument before writing it and whether
// it wrote it (the runtime poisons the outputs that are written without
// being read first). Non-memref arguments get a zero Access.
func CallWithAccess(module *ir.Operation, fn string, args []Arg) ([]Arg, []Access, error) {
	return Compile(module).Call(fn, args)
}
