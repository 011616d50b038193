package emu

import (
	"fmt"

	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/ir/eval"
)

// A kernel is compiled once into a tree of instructions over numbered
// values; every thread runs it with its own value array.

type instr struct {
	op      *ir.Operation
	run     runFunc
	in      []int // operand value numbers, in operand order
	out     []int // result value numbers
	regions []*code
}

// runFunc runs an op on a thread.
type runFunc func(t *thread, in *instr)

// code is one block of instructions; args are the block's argument numbers.
type code struct {
	args   []int
	instrs []*instr
}

type kernel struct {
	fn     *ir.Operation
	body   *code
	nvals  int
	ids    map[ir.Value]int
	params []ir.Type
	// sharedAccess: the kernel reads or writes shared memory with
	// ordinary accesses (race.go has something to check).
	sharedAccess bool
}

// compileKernel numbers the values of fn and resolves each op to its
// implementation; an op the emulator does not model is an error naming it.
func compileKernel(fn *ir.Operation) (*kernel, error) {
	k := &kernel{fn: fn, ids: map[ir.Value]int{}}
	var err error
	var region func(r *ir.Region) *code
	region = func(r *ir.Region) *code {
		blk := r.Entry()
		c := &code{}
		for _, a := range blk.Args() {
			c.args = append(c.args, k.id(a))
		}
		for _, op := range blk.Ops() {
			in := &instr{op: op}
			for _, v := range op.Operands() {
				in.in = append(in.in, k.id(v))
			}
			for _, v := range op.Results() {
				in.out = append(in.out, k.id(v))
			}
			for i := 0; i < op.NumRegions(); i++ {
				if op.Region(i).Empty() {
					in.regions = append(in.regions, nil)
					continue
				}
				if len(op.Region(i).Blocks()) > 1 {
					if err == nil {
						err = opError(op, "regions with several blocks (unstructured control flow) are not emulated")
					}
					return c
				}
				in.regions = append(in.regions, region(op.Region(i)))
			}
			var f runFunc
			prepare, ok := impls[op.Name()]
			if ok {
				f = prepare(k, op)
			} else if eval.Has(op) {
				var e error
				if f, e = elementwise(op); e != nil && err == nil {
					err = e
				}
				ok = e == nil
			}
			if !ok && err == nil {
				err = opError(op, "'%s' is not emulated (tmac run --target=emu models the ops of tmac's TMA pipelines; see runtime/emu)", op.Name())
			}
			in.run = f
			c.instrs = append(c.instrs, in)
		}
		return c
	}
	k.body = region(fn.Region(0))
	if err != nil {
		return nil, err
	}
	for _, a := range fn.Region(0).Entry().Args() {
		k.params = append(k.params, a.Type())
	}
	k.nvals = len(k.ids)
	k.sharedAccess = hasSharedAccess(fn)
	return k, nil
}

// slot is the value number of v, an operand of an op of the kernel
// (-1 for nil: an optional operand the op does not have).
func (k *kernel) slot(v ir.Value) int {
	if v == nil {
		return -1
	}
	return k.id(v)
}

// slots are the value numbers of vs.
func (k *kernel) slots(vs []ir.Value) []int {
	out := make([]int, len(vs))
	for i, v := range vs {
		out[i] = k.slot(v)
	}
	return out
}

func (k *kernel) id(v ir.Value) int {
	if i, ok := k.ids[v]; ok {
		return i
	}
	i := len(k.ids)
	k.ids[v] = i
	return i
}

// Error is a fault found while emulating: an op and what went wrong.
type Error struct {
	Op  *ir.Operation
	Msg string
	// Notes add context (the other side of a race, a blocked thread).
	Notes []Note
}

// Note is one line of context, at a location when it has one.
type Note struct {
	Loc ir.Location // nil: none
	Msg string
}

func note(loc ir.Location, format string, args ...any) Note {
	return Note{Loc: loc, Msg: fmt.Sprintf(format, args...)}
}

func (e *Error) Error() string { return e.Diagnostic().Error() }

// Diagnostic renders e as a compiler diagnostic (file:line:col: error:
// message, with the source line when known, then the notes).
func (e *Error) Diagnostic() *ir.Diagnostic {
	var d *ir.Diagnostic
	if e.Op != nil {
		d = e.Op.EmitError("'%s': %s", e.Op.Name(), e.Msg)
	} else {
		d = ir.Errorf(ir.UnknownLoc{}, "%s", e.Msg)
	}
	for _, n := range e.Notes {
		loc := n.Loc
		if loc == nil {
			loc = ir.UnknownLoc{}
		}
		d.AttachNote(loc, "%s", n.Msg)
	}
	return d
}

func opError(op *ir.Operation, format string, args ...any) *Error {
	return &Error{Op: op, Msg: fmt.Sprintf(format, args...)}
}

// An implementation prepares an op once when its kernel is compiled: it
// reads the op through its view (dialects/<d>'s generated accessors),
// resolves the operands it uses to their value numbers (kernel.slot) and
// returns what each thread runs. Every check of the values stays in what
// runs, so a fault is reported on the thread and block that meets it.
type implementation func(k *kernel, op *ir.Operation) runFunc

// impls maps op names (the dialects' generated constants) to their
// implementations, filled by init functions of the files that implement
// them.
var impls = map[string]implementation{}

func register(f implementation, names ...string) {
	for _, n := range names {
		impls[n] = f
	}
}

// direct is the implementation of an op that needs nothing from the op
// before it runs (no operands, or only what f reads from in).
func direct(f runFunc) implementation {
	return func(*kernel, *ir.Operation) runFunc { return f }
}

// Emulated reports whether the emulator runs ops named name: those it
// implements, and the elementwise ops whose definitions say what they
// compute (ir.Semantics). A kernel holding any other op is rejected.
func Emulated(name string) bool {
	if _, ok := impls[name]; ok {
		return true
	}
	def := ir.LookupOp(name)
	return def != nil && def.Semantics != nil
}
