package interp

import (
	"fmt"

	cfdialect "github.com/tmac-dev/tmac/dialects/cf"
	funcdialect "github.com/tmac-dev/tmac/dialects/func"
	"github.com/tmac-dev/tmac/dialects/scf"
	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/ir/eval"
)

// fcomp compiles one function.
type fcomp struct {
	p      *Program
	cf     *cfunc
	slots  map[ir.Value]slot
	n      [3]int32
	constI map[int32]int64
	constF map[int32]float64
	// loopDepth counts the scf.for/while ops enclosing the op being
	// compiled. Depth-0 loops may run in parallel; so may a depth-1 scf.for
	// directly inside a parallel-safe depth-0 one (outerParallel), which
	// runs its few iterations one after the other to let it (a sampled
	// reference's two rows, each of thousands of columns).
	loopDepth int
	// outerParallel: compiling the body of a parallel-safe depth-0
	// scf.for; nestedParallel: a depth-1 loop in it may run in parallel.
	outerParallel, nestedParallel bool
}

func (p *Program) compileFunc(op *ir.Operation) (*cfunc, error) {
	if cf, ok := p.funcs[op]; ok {
		return cf, nil
	}
	name := op.SymbolName()
	fn := funcdialect.FuncOp{Op: op}
	ft, _ := fn.FunctionType().(*ir.TypeAttr)
	if ft == nil {
		return nil, opErr(op, "function @%s has no function_type", name)
	}
	fty, ok := ft.Value.(*ir.FunctionType)
	if !ok {
		return nil, opErr(op, "function @%s has no function type", name)
	}
	if op.NumRegions() == 0 || fn.Body().Empty() {
		return nil, opErr(op, "function @%s is a declaration, it has no body to interpret", name)
	}
	cf := &cfunc{op: op, name: name, argTypes: fty.Inputs, resTypes: fty.Results}
	p.funcs[op] = cf
	fc := &fcomp{p: p, cf: cf, slots: map[ir.Value]slot{}, constI: map[int32]int64{}, constF: map[int32]float64{}}
	entry := fn.Body().Entry()
	for _, a := range entry.Args() {
		s, err := fc.slotOf(a)
		if err != nil {
			delete(p.funcs, op)
			return nil, err
		}
		cf.args = append(cf.args, s)
	}
	for i, t := range fty.Results {
		k, err := kindOf(t)
		if err != nil {
			delete(p.funcs, op)
			return nil, opErr(op, "result %d: %v", i, err)
		}
		cf.results = append(cf.results, fc.newSlot(k))
	}
	body, err := fc.region(fn.Body(), func(t *ir.Operation) (instr, error) {
		ret, ok := funcdialect.AsReturn(t)
		if !ok {
			return nil, opErr(t, "unexpected terminator in a function body")
		}
		return fc.moves(ret.Operands(), cf.results)
	})
	if err != nil {
		delete(p.funcs, op)
		return nil, err
	}
	cf.body = body
	cf.nI, cf.nF, cf.nM = int(fc.n[kInt]), int(fc.n[kFloat]), int(fc.n[kMem])
	cf.tmplI = make([]int64, cf.nI)
	cf.tmplF = make([]float64, cf.nF)
	for i, v := range fc.constI {
		cf.tmplI[i] = v
	}
	for i, v := range fc.constF {
		cf.tmplF[i] = v
	}
	return cf, nil
}

func kindOf(t ir.Type) (kind, error) {
	switch t.(type) {
	case *ir.IntegerType, *ir.IndexType:
		return kInt, nil
	case *ir.FloatType:
		return kFloat, nil
	case *ir.MemRefType:
		return kMem, nil
	case *ir.VectorType:
		return 0, fmt.Errorf("vector values (%s) are not supported by the reference interpreter", t)
	}
	return 0, fmt.Errorf("values of type %s are not supported by the reference interpreter", t)
}

func (fc *fcomp) newSlot(k kind) slot {
	s := slot{k, fc.n[k]}
	fc.n[k]++
	return s
}

func (fc *fcomp) slotOf(v ir.Value) (slot, error) {
	if s, ok := fc.slots[v]; ok {
		return s, nil
	}
	k, err := kindOf(v.Type())
	if err != nil {
		return slot{}, err
	}
	s := fc.newSlot(k)
	fc.slots[v] = s
	return s, nil
}

// slotsOf returns the slots of vs.
func (fc *fcomp) slotsOf(vs []ir.Value) ([]slot, error) {
	var ss []slot
	for _, v := range vs {
		s, err := fc.slotOf(v)
		if err != nil {
			return nil, err
		}
		ss = append(ss, s)
	}
	return ss, nil
}

// copySlot copies slot s of frame src into slot d, of the same kind, of
// frame dst.
func copySlot(dst *frame, d slot, src *frame, s slot) {
	switch s.k {
	case kInt:
		dst.i[d.i] = src.i[s.i]
	case kFloat:
		dst.f[d.i] = src.f[s.i]
	default:
		dst.m[d.i] = src.m[s.i]
	}
}

// sl returns the slot of v, panicking with a compile error (recovered in
// compileOp) when its type is unsupported.
func (fc *fcomp) sl(op *ir.Operation, v ir.Value) int32 {
	s, err := fc.slotOf(v)
	if err != nil {
		panic(runError{opErr(op, "%v", err)})
	}
	return s.i
}

// region compiles a region; exit builds the instruction of a terminator
// that leaves the region (yield, return, condition).
func (fc *fcomp) region(r *ir.Region, exit func(*ir.Operation) (instr, error)) ([]instr, error) {
	blocks := r.Blocks()
	if len(blocks) == 1 {
		var out []instr
		for op := blocks[0].First(); op != nil; op = op.Next() {
			var in instr
			var err error
			if op.Next() == nil && op.HasTrait(ir.Terminator) {
				if len(op.Successors()) > 0 {
					return nil, opErr(op, "branch to a block of a single-block region")
				}
				in, err = exit(op)
			} else {
				in, err = fc.compileOp(op)
			}
			if err != nil {
				return nil, err
			}
			if in != nil {
				out = append(out, in)
			}
		}
		return out, nil
	}
	// A CFG: blocks connected by cf.br / cf.cond_br.
	index := map[*ir.Block]int{}
	for i, b := range blocks {
		index[b] = i
	}
	type cblock struct {
		ops  []instr
		term func(fr *frame) int
	}
	cbs := make([]cblock, len(blocks))
	for i, b := range blocks {
		for _, a := range b.Args() {
			if _, err := fc.slotOf(a); err != nil {
				return nil, opErr(b.ParentOp(), "block argument: %v", err)
			}
		}
		for op := b.First(); op != nil; op = op.Next() {
			if op.Next() != nil || !op.HasTrait(ir.Terminator) {
				in, err := fc.compileOp(op)
				if err != nil {
					return nil, err
				}
				if in != nil {
					cbs[i].ops = append(cbs[i].ops, in)
				}
				continue
			}
			t, err := fc.branch(op, index, exit)
			if err != nil {
				return nil, err
			}
			cbs[i].term = t
		}
		if cbs[i].term == nil {
			return nil, opErr(b.ParentOp(), "block %d has no terminator", i)
		}
	}
	return []instr{func(fr *frame) {
		b := 0
		for b >= 0 {
			cb := &cbs[b]
			for _, in := range cb.ops {
				in(fr)
			}
			b = cb.term(fr)
		}
	}}, nil
}

func (fc *fcomp) blockArgSlots(op *ir.Operation, b *ir.Block) []slot {
	var ss []slot
	for _, a := range b.Args() {
		ss = append(ss, slot{fc.slots[a].k, fc.sl(op, a)})
	}
	return ss
}

func (fc *fcomp) branch(op *ir.Operation, index map[*ir.Block]int, exit func(*ir.Operation) (instr, error)) (t func(fr *frame) int, err error) {
	defer fc.catch(&err)
	switch op.Name() {
	case cfdialect.Br:
		dst := op.Successors()[0]
		mv, err := fc.moves(cfdialect.BrOp{Op: op}.DestOperands(), fc.blockArgSlots(op, dst))
		if err != nil {
			return nil, err
		}
		n := index[dst]
		if mv == nil {
			return func(*frame) int { return n }, nil
		}
		return func(fr *frame) int { mv(fr); return n }, nil
	case cfdialect.CondBr:
		br := cfdialect.CondBrOp{Op: op}
		c := fc.sl(op, br.Condition())
		tb, fb := op.Successors()[0], op.Successors()[1]
		tm, err := fc.moves(br.TrueDestOperands(), fc.blockArgSlots(op, tb))
		if err != nil {
			return nil, err
		}
		fm, err := fc.moves(br.FalseDestOperands(), fc.blockArgSlots(op, fb))
		if err != nil {
			return nil, err
		}
		tn, fn := index[tb], index[fb]
		return func(fr *frame) int {
			if fr.i[c] != 0 {
				if tm != nil {
					tm(fr)
				}
				return tn
			}
			if fm != nil {
				fm(fr)
			}
			return fn
		}, nil
	}
	if len(op.Successors()) > 0 {
		return nil, opErr(op, "this branch op is not supported by the reference interpreter")
	}
	in, err := exit(op)
	if err != nil {
		return nil, err
	}
	return func(fr *frame) int {
		if in != nil {
			in(fr)
		}
		return -1
	}, nil
}

func (fc *fcomp) catch(err *error) {
	if r := recover(); r != nil {
		if re, ok := r.(runError); ok {
			*err = re.err
			return
		}
		panic(r)
	}
}

// moves copies srcs into dsts with parallel-assignment semantics.
func (fc *fcomp) moves(srcs []ir.Value, dsts []slot) (instr, error) {
	if len(srcs) != len(dsts) {
		return nil, fmt.Errorf("internal: %d values for %d slots", len(srcs), len(dsts))
	}
	from, err := fc.slotsOf(srcs)
	if err != nil {
		return nil, err
	}
	// Drop self-moves; detect overlap (a source that is also a target).
	var fs, ds []slot
	for i := range from {
		if from[i] != dsts[i] {
			fs = append(fs, from[i])
			ds = append(ds, dsts[i])
		}
	}
	if len(fs) == 0 {
		return nil, nil
	}
	if len(fs) == 1 {
		f, d := fs[0], ds[0]
		switch f.k {
		case kInt:
			return func(fr *frame) { fr.i[d.i] = fr.i[f.i] }, nil
		case kFloat:
			return func(fr *frame) { fr.f[d.i] = fr.f[f.i] }, nil
		}
		return func(fr *frame) { fr.m[d.i] = fr.m[f.i] }, nil
	}
	overlap := false
	dset := map[slot]bool{}
	for _, d := range ds {
		dset[d] = true
	}
	for _, f := range fs {
		if dset[f] {
			overlap = true
		}
	}
	if !overlap {
		return func(fr *frame) {
			for j := range fs {
				copySlot(fr, ds[j], fr, fs[j])
			}
		}, nil
	}
	// Gather the sources into slots 0.. of a scratch frame, then scatter.
	return func(fr *frame) {
		tmp := &frame{i: make([]int64, len(fs)), f: make([]float64, len(fs)), m: make([]*memref, len(fs))}
		for j, f := range fs {
			copySlot(tmp, slot{f.k, int32(j)}, fr, f)
		}
		for j, d := range ds {
			copySlot(fr, d, tmp, slot{d.k, int32(j)})
		}
	}, nil
}

func runList(fr *frame, l []instr) {
	for _, in := range l {
		in(fr)
	}
}

// compileOp compiles one non-terminator op.
func (fc *fcomp) compileOp(op *ir.Operation) (in instr, err error) {
	defer fc.catch(&err)
	name := op.Name()
	switch op.Dialect() {
	case "arith":
		return fc.arith(op)
	case "math":
		return fc.math(op)
	case "index":
		return fc.elementwise(op)
	case "memref":
		return fc.memref(op)
	}
	if in, ok, err := fc.scfStructured(op); ok {
		return in, err
	}
	switch name {
	case scf.For:
		return fc.scfFor(scf.ForOp{Op: op})
	case scf.If:
		return fc.scfIf(scf.IfOp{Op: op})
	case scf.While:
		return fc.scfWhile(scf.WhileOp{Op: op})
	case scf.ExecuteRegion:
		body, err := fc.region(scf.ExecuteRegionOp{Op: op}.Region(), fc.yieldTo(fc.resultSlots(op)))
		if err != nil {
			return nil, err
		}
		return func(fr *frame) { runList(fr, body) }, nil
	case funcdialect.Call:
		return fc.call(funcdialect.CallOp{Op: op})
	case cfdialect.Assert:
		a := cfdialect.AssertOp{Op: op}
		c := fc.sl(op, a.Arg())
		msg := ""
		if s, ok := a.Msg().(*ir.StringAttr); ok {
			msg = s.Value
		}
		return func(fr *frame) {
			if fr.i[c] == 0 {
				fail(op, "assertion failed: %s", msg)
			}
		}, nil
	}
	if op.Dialect() == "vector" {
		return nil, opErr(op, "vector operations are not supported by the reference interpreter")
	}
	return nil, opErr(op, "operation not supported by the reference interpreter")
}

func (fc *fcomp) call(c funcdialect.CallOp) (instr, error) {
	op := c.Op
	ref, _ := c.Callee().(*ir.SymbolRefAttr)
	if ref == nil {
		return nil, opErr(op, "no callee")
	}
	target := ir.LookupSymbol(fc.p.module, ref.Leaf())
	if target == nil || target.Name() != funcdialect.Func {
		return nil, opErr(op, "callee @%s is not a func.func of the module", ref.Leaf())
	}
	callee, err := fc.p.compileFunc(target)
	if err != nil {
		return nil, err
	}
	args, err := fc.slotsOf(c.Operands())
	if err != nil {
		return nil, opErr(op, "%v", err)
	}
	res, err := fc.slotsOf(c.Results())
	if err != nil {
		return nil, opErr(op, "%v", err)
	}
	return func(fr *frame) {
		cfr := callee.newFrame(fr.acc, fr.par)
		cfr.workers = fr.workers
		for j, a := range args {
			copySlot(cfr, callee.args[j], fr, a)
		}
		runList(cfr, callee.body)
		for j, r := range res {
			copySlot(fr, r, cfr, callee.results[j])
		}
	}, nil
}

func (fc *fcomp) yieldTo(dsts []slot) func(*ir.Operation) (instr, error) {
	return func(t *ir.Operation) (instr, error) {
		y, ok := scf.AsYield(t)
		if !ok {
			return nil, opErr(t, "unexpected terminator")
		}
		return fc.moves(y.Results(), dsts)
	}
}

func (fc *fcomp) resultSlots(op *ir.Operation) []slot {
	var ss []slot
	for _, r := range op.Results() {
		i := fc.sl(op, r)
		ss = append(ss, slot{fc.slots[r].k, i})
	}
	return ss
}

func (fc *fcomp) scfIf(s scf.IfOp) (instr, error) {
	op := s.Op
	c := fc.sl(op, s.Condition())
	res := fc.resultSlots(op)
	then, err := fc.region(s.ThenRegion(), fc.yieldTo(res))
	if err != nil {
		return nil, err
	}
	var els []instr
	if op.NumRegions() > 1 && !s.ElseRegion().Empty() {
		if els, err = fc.region(s.ElseRegion(), fc.yieldTo(res)); err != nil {
			return nil, err
		}
	}
	return func(fr *frame) {
		if fr.i[c] != 0 {
			runList(fr, then)
		} else {
			runList(fr, els)
		}
	}, nil
}

func (fc *fcomp) scfWhile(w scf.WhileOp) (instr, error) {
	op := w.Op
	before, after := w.Before().Entry(), w.After().Entry()
	bargs := fc.blockArgSlots(op, before)
	aargs := fc.blockArgSlots(op, after)
	res := fc.resultSlots(op)
	init, err := fc.moves(w.Inits(), bargs)
	if err != nil {
		return nil, err
	}
	cond := fc.newSlot(kInt).i
	fc.loopDepth++
	defer func() { fc.loopDepth-- }()
	bbody, err := fc.region(w.Before(), func(t *ir.Operation) (instr, error) {
		term, ok := scf.AsCondition(t)
		if !ok {
			return nil, opErr(t, "unexpected terminator")
		}
		c := fc.sl(t, term.Condition())
		mv, err := fc.moves(term.Args(), aargs)
		if err != nil {
			return nil, err
		}
		return func(fr *frame) {
			fr.i[cond] = fr.i[c]
			if mv != nil {
				mv(fr)
			}
		}, nil
	})
	if err != nil {
		return nil, err
	}
	abody, err := fc.region(w.After(), fc.yieldTo(bargs))
	if err != nil {
		return nil, err
	}
	var vals []ir.Value
	for _, a := range after.Args() {
		vals = append(vals, a)
	}
	out, err := fc.moves(vals, res)
	if err != nil {
		return nil, err
	}
	return func(fr *frame) {
		if init != nil {
			init(fr)
		}
		for {
			runList(fr, bbody)
			if fr.i[cond] == 0 {
				break
			}
			runList(fr, abody)
		}
		if out != nil {
			out(fr)
		}
	}, nil
}

func (fc *fcomp) scfFor(f scf.ForOp) (instr, error) {
	op := f.Op
	body := f.Region().Entry()
	lb, ub, st := fc.sl(op, f.LowerBound()), fc.sl(op, f.UpperBound()), fc.sl(op, f.Step())
	iv := fc.sl(op, body.Arg(0))
	w := intWidth(body.Arg(0).Type())
	unsigned := f.UnsignedCmp() != nil
	iters := fc.blockArgSlots(op, body)[1:]
	res := fc.resultSlots(op)
	init, err := fc.moves(f.InitArgs(), iters)
	if err != nil {
		return nil, err
	}
	var ivals []ir.Value
	for _, a := range body.Args()[1:] {
		ivals = append(ivals, a)
	}
	out, err := fc.moves(ivals, res)
	if err != nil {
		return nil, err
	}
	parallel := false
	if len(iters) == 0 && !unsigned && (fc.loopDepth == 0 || (fc.loopDepth == 1 && fc.outerParallel)) {
		parallel = ParallelSafe(op)
	}
	if parallel && fc.loopDepth == 1 {
		fc.nestedParallel = true
	}
	savedOuter, savedNested := fc.outerParallel, fc.nestedParallel
	fc.outerParallel, fc.nestedParallel = parallel && fc.loopDepth == 0, false
	fc.loopDepth++
	bl, err := fc.region(f.Region(), fc.yieldTo(iters))
	fc.loopDepth--
	// The body has a loop that can use the workers when this one has too
	// few iterations for them.
	inner := fc.nestedParallel
	fc.outerParallel, fc.nestedParallel = savedOuter, savedNested
	if err != nil {
		return nil, err
	}
	if parallel {
		fc.cf.parallelLocs = append(fc.cf.parallelLocs, op.Loc)
	}
	return func(fr *frame) {
		lo, hi, step := fr.i[lb], fr.i[ub], fr.i[st]
		if step <= 0 && !(unsigned && step != 0) {
			fail(op, "step %d is not positive", step)
		}
		if init != nil {
			init(fr)
		}
		if s := fr.sample; s != nil && s.loop == op {
			s.run(fr, op, lo, hi, step, iv, bl, parallel, inner)
			return // a sampled loop has no results (SampleLoop)
		}
		if unsigned {
			for v := lo; eval.Unsigned(v, w) < eval.Unsigned(hi, w); v = eval.Signed(v+step, w) {
				fr.i[iv] = v
				runList(fr, bl)
				if eval.Unsigned(v, w)+eval.Unsigned(step, w) < eval.Unsigned(v, w) || (w < 64 && eval.Unsigned(v, w)+eval.Unsigned(step, w) >= 1<<uint(w)) {
					break
				}
			}
		} else if parallel && fr.par && hi > lo && (hi-lo) > step && !(inner && (hi-lo+step-1)/step < int64(fr.workers)) {
			parallelFor(fr, op, lo, hi, step, iv, bl, nil)
		} else {
			for v := lo; v < hi; v += step {
				fr.i[iv] = v
				runList(fr, bl)
				if v+step < v || eval.Signed(v+step, w) != v+step {
					break
				}
			}
		}
		if out != nil {
			out(fr)
		}
	}, nil
}
