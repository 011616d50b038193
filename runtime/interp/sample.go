package interp

import (
	"fmt"
	"math/rand"
	"runtime"

	funcdialect "github.com/tmac-dev/tmac/dialects/func"
	"github.com/tmac-dev/tmac/dialects/scf"
	"github.com/tmac-dev/tmac/ir"
)

// A sampled call runs only some iterations of the function's outermost
// loop. This is sound for checking when the iterations are independent
// (ParallelSafe: no iter_args, each stored memref addressed at an injective
// function of the induction variable): an iteration then computes the same
// values whether or not the others run, so every element the sampled call
// writes equals what the full call writes there. The caller must compare
// only those elements; CallInfo.Written says which they are.

// CallOptions modify a call (Program.CallWith).
type CallOptions struct {
	// SampleOuter, when nonzero, runs only that many iterations (at least
	// 2) of the function's outermost loop (see SampleLoop), chosen by
	// SampleIterations from Seed. It implies TrackWrites.
	SampleOuter int64
	// Seed chooses the sampled iterations.
	Seed int64
	// TrackWrites records which elements of each memref argument the call
	// stores to (CallInfo.Written).
	TrackWrites bool
}

// CallInfo tells what a call did besides its results.
type CallInfo struct {
	// Access tells, per argument, how a memref argument was used.
	Access []Access
	// Written has, per memref argument when writes are tracked, one entry
	// per element (row-major) that is true when the call stored to it; nil
	// for other arguments or when writes are not tracked.
	Written [][]bool
	// Sample describes the sampled loop; nil unless SampleOuter was set.
	Sample *SampleInfo
}

// SampleInfo describes the iterations of a sampled loop.
type SampleInfo struct {
	Loop *ir.Operation // the sampled scf.for
	// Trip is the number of iterations of the full loop.
	Trip int64
	// Iterations are the ordinals (0 = first iteration) of the iterations
	// that ran, ascending.
	Iterations []int64
}

// All reports whether every iteration ran (the sample covered the loop).
func (s *SampleInfo) All() bool { return int64(len(s.Iterations)) == s.Trip }

type sampleState struct {
	loop  *ir.Operation
	count int64
	seed  int64
	done  bool
	trip  int64
	ran   []int64
}

// run executes the sampled iterations of the loop [lo, hi) step step: in
// parallel when the loop is parallel-safe, unless they are fewer than the
// workers and the body has a loop that can use them (inner).
func (s *sampleState) run(fr *frame, op *ir.Operation, lo, hi, step int64, iv int32, body []instr, parallel, inner bool) {
	var n int64
	if hi > lo {
		n = int64((uint64(hi-lo)-1)/uint64(step)) + 1
	}
	ks := SampleIterations(n, s.count, s.seed)
	s.done, s.trip, s.ran = true, n, ks
	if parallel && fr.par && len(ks) > 1 && !(inner && len(ks) < fr.workers) {
		parallelFor(fr, op, lo, hi, step, iv, body, ks)
		return
	}
	for _, k := range ks {
		fr.i[iv] = lo + k*step
		runList(fr, body)
	}
}

// SampleIterations chooses count of the n iterations 0..n-1 of a loop,
// deterministically from seed: all of them when count >= n; otherwise the
// first and the last, and one in each of count-2 equal strata of the
// iterations in between, so the sample spreads over the whole range. The
// result is ascending. count 1 gives the first iteration alone.
func SampleIterations(n, count, seed int64) []int64 {
	if n <= 0 || count <= 0 {
		return []int64{}
	}
	if count >= n {
		ks := make([]int64, n)
		for k := range ks {
			ks[k] = int64(k)
		}
		return ks
	}
	if count == 1 {
		return []int64{0}
	}
	r := rand.New(rand.NewSource(seed))
	ks := make([]int64, 0, count)
	ks = append(ks, 0)
	// Iterations 1..n-2 (n-2 of them) in m = count-2 strata; m < n-2, so
	// every stratum holds at least one iteration.
	inner, m := n-2, count-2
	for j := int64(0); j < m; j++ {
		a := 1 + j*inner/m
		b := 1 + (j+1)*inner/m
		ks = append(ks, a+r.Int63n(b-a))
	}
	return append(ks, n-1)
}

// SampleLoop returns the loop a sampled call of fn (a func.func) runs in
// part: the one scf.for at the top level of its body. It is an error
// (a diagnostic) when fn's body has several blocks, has no or several
// top-level loops, when that loop's iterations are not provably
// independent (ParallelSafe), or when ops after the loop read memory
// (they could read elements the skipped iterations would have written).
func SampleLoop(fn *ir.Operation) (*ir.Operation, error) {
	name := "@" + fn.SymbolName()
	if fn.NumRegions() == 0 || fn.Region(0).Entry() == nil {
		return nil, fn.EmitError("%s has no body to sample", name)
	}
	body := funcdialect.FuncOp{Op: fn}.Body()
	if n := len(body.Blocks()); n != 1 {
		return nil, fn.EmitError("%s has %d blocks; a sampled reference must be a single block around one outermost scf.for", name, n)
	}
	var loops []*ir.Operation
	for o := body.Entry().First(); o != nil; o = o.Next() {
		if o.Name() == scf.For {
			loops = append(loops, o)
		}
	}
	switch len(loops) {
	case 0:
		return nil, fn.EmitError("%s has no scf.for at the top level of its body, so there is no outermost loop to sample", name)
	case 1:
	default:
		return nil, loops[1].EmitError("%s has %d scf.for loops at the top level of its body; sampling needs exactly one outermost loop", name, len(loops))
	}
	loop := loops[0]
	if (scf.ForOp{Op: loop}).UnsignedCmp() != nil {
		return nil, loop.EmitError("the outermost loop of %s compares unsigned; it cannot be sampled", name)
	}
	if !ParallelSafe(loop) {
		return nil, loop.EmitError("the iterations of the outermost loop of %s are not provably independent (it must have no iter_args or results, call no function, and store to each memref at one index that is an injective function of the induction variable), so they cannot be sampled", name)
	}
	var bad *ir.Operation
	for o := loop.Next(); o != nil && bad == nil; o = o.Next() {
		ir.Walk(o, func(c *ir.Operation) ir.WalkResult {
			switch {
			case bad != nil:
			case c.AccessesMemory(ir.Read) || c.Name() == funcdialect.Call || c.Dialect() == "vector":
				bad = c
			}
			return ir.Advance
		})
	}
	if bad != nil {
		return nil, bad.EmitError("'%s' after the outermost loop of %s may read what the skipped iterations write, so the loop cannot be sampled", bad.Name(), name)
	}
	return loop, nil
}

// CallWith runs function fn like Call, with options.
func (p *Program) CallWith(fn string, args []Arg, o CallOptions) ([]Arg, *CallInfo, error) {
	cf, err := p.function(fn)
	if err != nil {
		return nil, nil, err
	}
	if len(args) != len(cf.args) {
		return nil, nil, fmt.Errorf("@%s takes %d arguments, got %d", fn, len(cf.args), len(args))
	}
	var st *sampleState
	if o.SampleOuter != 0 {
		if o.SampleOuter < 2 {
			return nil, nil, fmt.Errorf("a sampled call runs at least 2 iterations (the first and the last), not %d", o.SampleOuter)
		}
		loop, err := SampleLoop(cf.op)
		if err != nil {
			return nil, nil, err
		}
		st = &sampleState{loop: loop, count: o.SampleOuter, seed: o.Seed}
	}
	track := o.TrackWrites || st != nil
	acc := make([]uint8, len(args))
	workers := p.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	fr := cf.newFrame(acc, workers > 1 && !argsAlias(args))
	fr.workers = workers
	fr.sample = st
	for i, a := range args {
		if err := setArg(fr, cf.args[i], cf.argTypes[i], a, i); err != nil {
			return nil, nil, fmt.Errorf("@%s argument %d: %w", fn, i, err)
		}
		if s := cf.args[i]; track && s.k == kMem {
			m := fr.m[s.i]
			m.wmask = make([]byte, len(m.data))
		}
	}
	if err := run(fr, cf.body, workers); err != nil {
		return nil, nil, err
	}
	res := make([]Arg, len(cf.results))
	for i, s := range cf.results {
		res[i] = getResult(fr, s, cf.resTypes[i])
	}
	info := &CallInfo{Access: make([]Access, len(args))}
	for i, a := range acc {
		info.Access[i] = Access{ReadBeforeWrite: a&accReadFirst != 0, Written: a&accWritten != 0}
	}
	if track {
		info.Written = make([][]bool, len(args))
		for i, s := range cf.args {
			if s.k != kMem {
				continue
			}
			m := fr.m[s.i]
			w := make([]bool, int64(len(m.wmask))/m.esize)
			for e := range w {
				all := true
				for _, b := range m.wmask[int64(e)*m.esize : int64(e+1)*m.esize] {
					all = all && b != 0
				}
				w[e] = all
			}
			info.Written[i] = w
		}
	}
	if st != nil {
		if !st.done {
			return nil, nil, opErr(st.loop, "the sampled loop did not run")
		}
		info.Sample = &SampleInfo{Loop: st.loop, Trip: st.trip, Iterations: st.ran}
	}
	return res, info, nil
}
