package runner

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/runtime/buffer"
	"github.com/tmac-dev/tmac/runtime/interp"
	"github.com/tmac-dev/tmac/runtime/plan"
)

// refCacheKey says which runs can share @reference's results: the same
// reference function (as printed), the same entry argument types (so the
// same seeded inputs) and the same sampling.
func refCacheKey(mod, entry *ir.Operation, sample int64, seed int64, dist string) string {
	ref := plan.Reference(mod)
	if ref == nil {
		return ""
	}
	ft, _ := plan.FuncType(entry)
	var b strings.Builder
	fmt.Fprintf(&b, "sample %d seed %d dist %s\n", sample, seed, dist)
	if ft != nil {
		for _, t := range ft.Inputs {
			fmt.Fprintf(&b, "%s\n", t)
		}
	}
	b.WriteString(ir.PrintOpString(ref))
	return b.String()
}

// RefCache keeps @reference's results for runs that can share them
// (refCacheKey): tmac tune run's variants of one program get the same
// inputs, so the same results. It keeps the inputs too (makeArgs).
type RefCache struct {
	results map[string]*refResult
	args    map[string][]*runArg
}

// NewRefCache returns an empty cache.
func NewRefCache() *RefCache {
	return &RefCache{results: map[string]*refResult{}, args: map[string][]*runArg{}}
}

// refResult is @reference's output on a variant's inputs.
type refResult struct {
	args []interp.Arg
	info *interp.CallInfo
}

// checkResults runs @reference on copies of the inputs and compares every
// output (every memref argument when none is marked). It also returns the
// outputs it compared that neither the run nor @reference wrote
// (unwritten).
//
// With sample > 0, @reference runs only that many iterations of its
// outermost loop and each output is compared where they wrote.
func checkResults(w io.Writer, mod, entry *ir.Operation, args []*runArg, results []*buffer.Buffer, outputs []bool, sample int64, opts *Options) (failed bool, unwritten []int, err error) {
	anyOut := false
	for i, a := range args {
		anyOut = anyOut || (a.buf != nil && outputs[i])
	}
	start := time.Now()
	var refArgs []interp.Arg
	var info *interp.CallInfo
	key := ""
	if opts.RefCache != nil {
		key = refCacheKey(mod, entry, sample, opts.Seed, opts.Dist)
	}
	var cached *refResult
	if key != "" {
		cached = opts.RefCache.results[key]
	}
	if cached != nil {
		refArgs, info = cached.args, cached.info
	} else {
		refArgs = make([]interp.Arg, len(args))
		for i, a := range args {
			if a.buf != nil {
				refArgs[i] = a.buf.Clone()
			} else {
				refArgs[i] = a.scalar
			}
		}
		if _, info, err = interp.Compile(mod).CallWith(plan.ReferenceName, refArgs, interp.CallOptions{SampleOuter: sample, Seed: opts.Seed}); err != nil {
			return false, nil, fmt.Errorf("@reference: %v", err)
		}
		if key != "" {
			opts.RefCache.results[key] = &refResult{args: refArgs, info: info}
		}
	}
	secs := time.Since(start).Seconds()
	if cached != nil {
		fmt.Fprintf(w, "reference: @reference's results of an earlier variant with the same reference and inputs reused\n")
	}
	if s := info.Sample; s != nil {
		cover := "sampled"
		if s.All() {
			cover = "sampled, covering every iteration"
		}
		fmt.Fprintf(w, "reference: checked %d of %d iterations of the outermost loop of @reference (%s; seed %d) on the CPU in %.2f s; only the output elements they write are compared\n",
			len(s.Iterations), s.Trip, cover, opts.Seed, secs)
	} else {
		fmt.Fprintf(w, "reference: @reference on the CPU in %.2f s\n", secs)
	}
	for i, a := range args {
		if a.buf == nil || (anyOut && !outputs[i]) {
			continue
		}
		if unchanged(a.buf, results[i]) && (i >= len(info.Access) || !info.Access[i].Written) {
			unwritten = append(unwritten, i)
		}
		rb := refArgs[i].(*buffer.Buffer)
		var inputTypes []ir.Type
		for j, in := range args {
			if in.buf != nil && j != i {
				inputTypes = append(inputTypes, in.buf.Elem)
			}
		}
		var written []bool
		if info.Sample != nil {
			written = info.Written[i]
		}
		rtol, atol := plan.DefaultToleranceWritten(a.buf.Elem, inputTypes, rb, written)
		if opts.RTol >= 0 {
			rtol = opts.RTol
		}
		if opts.ATol >= 0 {
			atol = opts.ATol
		}
		var c *plan.Comparison
		if written != nil {
			c, err = plan.CompareWritten(results[i], rb, written, rtol, atol)
			if err != nil {
				fmt.Fprintf(w, "FAIL arg%d %s: %v\n", i, a.typ, err)
				failed = true
				continue
			}
		} else if c, err = plan.Compare(results[i], rb, rtol, atol); err != nil {
			return false, nil, err
		}
		status := "PASS"
		if !c.OK() {
			status, failed = "FAIL", true
		}
		if rb.IsFloat() && c.RelNorm == 0 && c.MaxAbs == 0 && allZero(rb) {
			fmt.Fprintf(w, "warning: the reference value of arg%d is all zeros; the check cannot tell a correct result from one that never computed anything\n", i)
		}
		sampled := ""
		if written != nil {
			sampled = fmt.Sprintf("; %d of %d elements compared (sampled)", c.N, c.Of)
		}
		fmt.Fprintf(w, "%s arg%d %s: max abs err %.3g, max rel err %.3g, ||out-ref||/||ref|| %.3g (rtol %g, atol %g)%s\n",
			status, i, a.typ, c.MaxAbs, c.MaxRel, c.RelNorm, rtol, atol, sampled)
		if !c.OK() {
			fmt.Fprintf(w, "  %d of %d elements differ; first:", c.Mismatches, c.N)
			for _, k := range c.First {
				fmt.Fprintf(w, " %s out=%s ref=%s;", plan.Index(a.buf.Shape, k), elemString(results[i], k), elemString(rb, k))
			}
			fmt.Fprintln(w)
		}
	}
	return failed, unwritten, nil
}

// unchanged reports whether the run left the argument given as in with
// the bytes it was given (result is what it holds after the run): nothing
// wrote it, or what was written is what was there.
func unchanged(in, result *buffer.Buffer) bool {
	return result != nil && bytes.Equal(in.Bytes, result.Bytes)
}

// outputsFromReference runs @reference on copies of the arguments and marks
// as outputs the memref arguments it writes; those it writes before reading
// are poisoned.
// With sample > 0 the reference runs sampled, as in checkResults.
func outputsFromReference(mod *ir.Operation, args []*runArg, outputs []bool, sample, seed int64) error {
	refArgs := make([]interp.Arg, len(args))
	for i, a := range args {
		if a.buf != nil {
			refArgs[i] = a.buf.Clone()
		} else {
			refArgs[i] = a.scalar
		}
	}
	_, info, err := interp.Compile(mod).CallWith(plan.ReferenceName, refArgs, interp.CallOptions{SampleOuter: sample, Seed: seed})
	if err != nil {
		return fmt.Errorf("@reference: %v", err)
	}
	access := info.Access
	for i, a := range args {
		if a.buf == nil || i >= len(access) || !access[i].Written {
			continue
		}
		outputs[i] = true
		if !access[i].ReadBeforeWrite {
			a.buf.Poison()
		}
	}
	return nil
}

func allZero(b *buffer.Buffer) bool {
	for i := 0; i < b.Len(); i++ {
		if b.Float(i) != 0 {
			return false
		}
	}
	return true
}

func elemString(b *buffer.Buffer, i int) string {
	if b.IsFloat() {
		return strconv.FormatFloat(b.Float(i), 'g', 6, 64)
	}
	return strconv.FormatInt(b.Int(i), 10)
}
