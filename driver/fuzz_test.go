package driver_test

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tmac-dev/tmac/codegen"
	_ "github.com/tmac-dev/tmac/dialects/all"
	"github.com/tmac-dev/tmac/dialects/gpu"
	"github.com/tmac-dev/tmac/dialects/scf"
	"github.com/tmac-dev/tmac/driver"
	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/passes"
)

// FuzzCompile drives the compiler's front half — parse, verify, the
// default pass pipeline (which verifies after every pass) and the lowering
// to LLVM IR text — on mutated valid programs. The inputs are a program's
// text, which the fuzzer mutates as bytes, and a string of edit bytes that
// FuzzCompile decodes into structural edits of the parsed module (see
// applyEdits): integer and float attributes, shapes and element types of
// memref and vector types, dropped, duplicated and reordered ops, swapped
// and replaced operands, removed attributes, added tmac.* attributes that
// steer the passes, and keywords such as swizzle modes and predicates.
//
// The property: nothing panics or hangs, and every failure is a proper
// diagnostic. Code generation turns its own panics into an "internal
// compiler error" diagnostic and the pass manager reports IR a pass left
// invalid; both are compiler bugs, so both fail the target, as does edited
// IR that verifies but does not print to text that parses again.
func FuzzCompile(f *testing.F) {
	for i, seed := range compileSeeds(f) {
		f.Add(seed, "")
		// And one edit per program, of each kind in turn, so the corpus
		// starts with every kind of edit.
		f.Add(seed, string([]byte{byte(i % numEditKinds), 0, 3, 1, 7}))
	}
	f.Fuzz(func(t *testing.T, src, edits string) {
		checkCompile(t, src, edits)
	})
}

// TestCompileSeeds checks that the seed programs compile unedited, so a
// change that breaks them (and with that most of the fuzzing) is noticed.
func TestCompileSeeds(t *testing.T) {
	if seeds := compileSeeds(t); len(seeds) < 20 {
		t.Fatalf("only %d seed programs compile", len(seeds))
	}
}

var seedCache struct {
	sync.Once
	seeds []string
}

// compileSeeds returns the example programs and lit-test inputs (each
// `// -----` chunk on its own) that compile through the default pipeline
// to LLVM IR.
func compileSeeds(tb testing.TB) []string {
	seedCache.Do(func() {
		var files []string
		for _, pat := range []string{"../examples/*.tma", "../examples/*/*.tma", "../lit-tests/*/*.tma", "../lit-tests/*/*/*.tma"} {
			m, _ := filepath.Glob(pat)
			files = append(files, m...)
		}
		seen := map[string]bool{}
		for _, file := range files {
			b, err := os.ReadFile(file)
			if err != nil {
				continue
			}
			for _, c := range driver.Split(file, string(b), true) {
				if len(c.Text) > maxSrc || seen[c.Text] {
					continue
				}
				seen[c.Text] = true
				if problem, ok := compile(c.Text, ""); problem == "" && ok {
					seedCache.seeds = append(seedCache.seeds, c.Text)
				}
			}
		}
	})
	return seedCache.seeds
}

// compileTimeLimit is how long one input may take. The slowest seed
// compiles in well under 0.1 s; an input that takes seconds has hit
// something quadratic or worse (or hangs), a bug worth finding.
const compileTimeLimit = 5 * time.Second

// maxSrc bounds the program text the target accepts, so a run of
// insertions cannot make every input slower.
const maxSrc = 32 << 10

func checkCompile(t *testing.T, src, edits string) {
	if len(src) > maxSrc || len(edits) > maxEdits*8 {
		return
	}
	done := make(chan string, 1)
	go func() {
		problem, _ := compile(src, edits)
		done <- problem
	}()
	select {
	case problem := <-done:
		if problem != "" {
			t.Fatal(problem)
		}
	case <-time.After(compileTimeLimit):
		t.Fatalf("compilation did not finish in %v\nedits: %q\ninput:\n%s", compileTimeLimit, edits, src)
	}
}

// compile runs the front half of the compiler on src after the edits. It
// returns a description of a compiler bug, or "" — a diagnostic is fine —
// and whether the program (after the edits) compiled to LLVM IR.
func compile(src, edits string) (problem string, ok bool) {
	stage := "parse"
	defer func() {
		if r := recover(); r != nil {
			problem = fmt.Sprintf("panic in %s: %v\n%s\nedits: %q\ninput:\n%s", stage, r, debug.Stack(), edits, src)
		}
	}()
	bug := func(format string, args ...any) string {
		return fmt.Sprintf(format, args...) + fmt.Sprintf("\nedits: %q\ninput:\n%s", edits, src)
	}
	mod, err := driver.ParseChunk(driver.Chunk{File: "fuzz.tma", Text: src, FirstLine: 1}, false)
	if err != nil {
		return "", false
	}
	text := src
	if edits != "" {
		stage = "edits"
		subst := applyEdits(mod, []byte(edits))
		stage = "verify after edits"
		if ir.VerifyModule(mod) != nil {
			return "", false
		}
		stage = "print after edits"
		text = ir.Print(mod, ir.PrintOptions{})
		for _, edit := range subst {
			text = edit(text)
		}
		stage = "parse after edits"
		mod, err = driver.ParseChunk(driver.Chunk{File: "edited.tma", Text: text, FirstLine: 1}, false)
		if err != nil {
			if len(subst) == 0 {
				return bug("edited IR verifies but its printed form does not parse again: %v\nprinted:\n%s", err, text), false
			}
			return "", false
		}
	}
	stage = "pass pipeline"
	steps, err := passes.ParsePipeline(driver.DefaultPipeline)
	if err != nil {
		return bug("default pipeline: %v", err), false
	}
	if err := passes.RunPipeline(mod, steps, &passes.Context{}, nil); err != nil {
		for _, d := range ir.AsDiagnostics(err) {
			for _, n := range d.Notes {
				if strings.HasPrefix(n.Msg, "IR is invalid after pass") {
					return bug("%v\nprogram:\n%s", err, text), false
				}
			}
		}
		return "", false
	}
	stage = "codegen"
	cg, err := codegen.Emit(mod)
	if err != nil {
		if strings.Contains(err.Error(), "internal compiler error") {
			return bug("%v\nprogram:\n%s", err, text), false
		}
		return "", false
	}
	stage = "printing LLVM IR"
	_ = cg.Module.String()
	return "", true
}

// Edits. The edit bytes are read as a sequence of edits, each an edit
// kind byte followed by the bytes that choose its target and new value;
// running out of bytes ends the sequence.
const (
	editInt        = iota // an integer attribute (or an element of an integer array)
	editFloat             // a float attribute
	editRemoveAttr        // drop an attribute
	editDrop              // drop an op, its uses replaced with earlier values of the same type
	editDup               // duplicate an op right after itself
	editMove              // move an op one place up or down in its block
	editSwap              // swap two operands of an op
	editOperand           // replace an operand with another value of its type in scope
	editType              // change a memref or vector type everywhere (shape, element type, memory space)
	editAddAttr           // set one of the attributes tmac's passes read (tmac.stages, tmac.warp_specialize, ...)
	editWord              // change one keyword of an enumeration (swizzle mode, cmpi predicate, gpu dimension, ...)
	numEditKinds
)

// maxEdits bounds the edits per input, and maxOps the ops duplication
// may grow a module to.
const (
	maxEdits = 64
	maxOps   = 20000
)

type editor struct {
	data  []byte
	pos   int
	mod   *ir.Operation
	subst []func(string) string
}

func (e *editor) more() bool { return e.pos < len(e.data) }

func (e *editor) byte() byte {
	if e.pos >= len(e.data) {
		return 0
	}
	b := e.data[e.pos]
	e.pos++
	return b
}

// pick chooses an index below n (n > 0) with two bytes.
func (e *editor) pick(n int) int {
	v := int(e.byte())<<8 | int(e.byte())
	return v % n
}

// ops lists the module's ops in pre-order, the module itself left out.
func (e *editor) ops() []*ir.Operation {
	var ops []*ir.Operation
	ir.Walk(e.mod, func(op *ir.Operation) ir.WalkResult {
		if op != e.mod {
			ops = append(ops, op)
		}
		return ir.Advance
	})
	return ops
}

func (e *editor) pickOp(keep func(*ir.Operation) bool) *ir.Operation {
	var ops []*ir.Operation
	for _, op := range e.ops() {
		if keep == nil || keep(op) {
			ops = append(ops, op)
		}
	}
	if len(ops) == 0 {
		e.pick(1)
		return nil
	}
	return ops[e.pick(len(ops))]
}

// applyEdits edits mod in place as data says and returns the textual
// edits to apply to its printed form, in order (types are interned, so a
// type is changed everywhere by rewriting the text; keywords of types and
// custom assembly formats are easiest changed in the text too).
func applyEdits(mod *ir.Operation, data []byte) []func(string) string {
	e := &editor{data: data, mod: mod}
	for n := 0; n < maxEdits && e.more(); n++ {
		switch e.byte() % numEditKinds {
		case editInt:
			e.editInt()
		case editFloat:
			e.editFloat()
		case editRemoveAttr:
			op := e.pickOp(func(op *ir.Operation) bool { return len(op.AllAttrs()) > 0 })
			if op != nil {
				attrs := op.AllAttrs()
				op.RemoveAttr(attrs[e.pick(len(attrs))].Name)
			}
		case editDrop:
			e.drop()
		case editDup:
			op := e.pickOp(nil)
			if op != nil && len(e.ops()) < maxOps {
				op.Block().InsertBefore(op.Clone(nil), op.Next())
			}
		case editMove:
			op := e.pickOp(nil)
			down := e.byte()&1 != 0
			switch {
			case op == nil:
			case down && op.Next() != nil:
				op.MoveAfter(op.Next())
			case !down && op.Prev() != nil:
				op.MoveBefore(op.Prev())
			}
		case editSwap:
			op := e.pickOp(func(op *ir.Operation) bool { return op.NumOperands() >= 2 })
			if op != nil {
				i, j := e.pick(op.NumOperands()), e.pick(op.NumOperands())
				a, b := op.Operand(i), op.Operand(j)
				op.SetOperand(i, b)
				op.SetOperand(j, a)
			}
		case editOperand:
			op := e.pickOp(func(op *ir.Operation) bool { return op.NumOperands() > 0 })
			if op != nil {
				i := e.pick(op.NumOperands())
				old := op.Operand(i)
				var cands []ir.Value
				for _, v := range inScope(op) {
					if v.Type() == old.Type() && v != old {
						cands = append(cands, v)
					}
				}
				if len(cands) > 0 {
					op.SetOperand(i, cands[e.pick(len(cands))])
				}
			}
		case editType:
			e.editType()
		case editAddAttr:
			e.addAttr()
		case editWord:
			e.editWord()
		}
	}
	return e.subst
}

// interesting are values that tend to find edge cases: zero, one, powers
// of two and their neighbours, and the limits of the integer widths.
var interesting = []int64{0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 96, 127, 128, 129,
	192, 255, 256, 257, 384, 512, 1000, 1024, 2048, 4096, 8192, 32767, 32768, 65535, 65536, 1 << 20, 1<<24 + 1,
	math.MaxInt32, math.MaxInt32 + 1, math.MaxUint32, 1 << 32, 1 << 40, 1 << 53, 1 << 62, math.MaxInt64,
	math.MinInt64, math.MinInt32, -1, -2, -128, -129}

func (e *editor) newInt(v int64) int64 {
	switch b := e.byte(); b % 10 {
	case 0:
		return v + 1
	case 1:
		return v - 1
	case 2:
		return v * 2
	case 3:
		return v / 2
	case 4:
		return -v
	case 5:
		return v + int64(int8(e.byte()))
	default:
		return interesting[e.pick(len(interesting))]
	}
}

func (e *editor) editInt() {
	type slot struct {
		name string
		attr ir.Attribute
	}
	var slots []slot
	var owners []*ir.Operation
	for _, op := range e.ops() {
		for _, na := range op.AllAttrs() {
			switch a := na.Value.(type) {
			case *ir.IntegerAttr:
				slots = append(slots, slot{na.Name, a})
				owners = append(owners, op)
			case *ir.DenseArrayAttr:
				if !ir.IsFloat(a.Elem) {
					slots = append(slots, slot{na.Name, a})
					owners = append(owners, op)
				}
			case *ir.ArrayAttr:
				for _, el := range a.Elems {
					if _, ok := el.(*ir.IntegerAttr); ok {
						slots = append(slots, slot{na.Name, a})
						owners = append(owners, op)
						break
					}
				}
			}
		}
	}
	if len(slots) == 0 {
		return
	}
	i := e.pick(len(slots))
	op, s := owners[i], slots[i]
	switch a := s.attr.(type) {
	case *ir.IntegerAttr:
		op.SetAttr(s.name, ir.IntAttr(e.newInt(a.Int()), a.Type()))
	case *ir.DenseArrayAttr:
		vals := append([]int64(nil), a.Ints...)
		switch k := e.byte() % 8; {
		case k == 0 && len(vals) < 16:
			vals = append(vals, e.newInt(0))
		case k == 1 && len(vals) > 0:
			vals = vals[:len(vals)-1]
		case len(vals) > 0:
			j := e.pick(len(vals))
			vals[j] = e.newInt(vals[j])
		}
		op.SetAttr(s.name, ir.DenseIntArray(a.Elem, vals))
	case *ir.ArrayAttr:
		elems := append([]ir.Attribute(nil), a.Elems...)
		j := e.pick(len(elems))
		if ia, ok := elems[j].(*ir.IntegerAttr); ok {
			elems[j] = ir.IntAttr(e.newInt(ia.Int()), ia.Type())
			op.SetAttr(s.name, ir.Array(elems...))
		}
	}
}

var interestingFloats = []float64{0, math.Copysign(0, -1), 1, -1, 0.5, 2, 3, 1e-3, 65504, 65520, 448, 57344,
	3.4028234663852886e38, 1e39, 1.401298464324817e-45, 1e-300, math.Inf(1), math.Inf(-1), math.NaN(), math.MaxFloat64}

func (e *editor) editFloat() {
	op := e.pickOp(func(op *ir.Operation) bool {
		for _, na := range op.AllAttrs() {
			if _, ok := na.Value.(*ir.FloatAttr); ok {
				return true
			}
		}
		return false
	})
	if op == nil {
		return
	}
	for _, na := range op.AllAttrs() {
		if a, ok := na.Value.(*ir.FloatAttr); ok {
			if ft, ok := a.Type().(*ir.FloatType); ok {
				op.SetAttr(na.Name, ir.FloatAttrOf(interestingFloats[e.pick(len(interestingFloats))], ft))
			}
			return
		}
	}
}

// inScope lists the values an operand of op may use without leaving its
// isolated-from-above region: results of the ops before it in its block
// and in the blocks around it, and the arguments of those blocks.
func inScope(op *ir.Operation) []ir.Value {
	var vals []ir.Value
	for cur := op; cur != nil && cur.Block() != nil; cur = cur.ParentOp() {
		for o := cur.Prev(); o != nil; o = o.Prev() {
			vals = append(vals, o.Results()...)
		}
		vals = append(vals, cur.Block().ArgValues()...)
		if p := cur.ParentOp(); p == nil || p.HasTrait(ir.IsolatedFromAbove) {
			break
		}
	}
	return vals
}

func (e *editor) drop() {
	op := e.pickOp(nil)
	if op == nil {
		return
	}
	repl := make([]ir.Value, op.NumResults())
	scope := inScope(op)
	for i, r := range op.Results() {
		if !ir.HasUses(r) {
			continue
		}
		var cands []ir.Value
		for _, v := range scope {
			if v.Type() == r.Type() {
				cands = append(cands, v)
			}
		}
		if len(cands) == 0 {
			return
		}
		repl[i] = cands[e.pick(len(cands))]
	}
	for i, r := range op.Results() {
		if repl[i] != nil {
			ir.ReplaceAllUsesWith(r, repl[i])
		}
	}
	op.Erase()
}

var elemTypes = []ir.Type{ir.FloatTypeOf(ir.F16), ir.FloatTypeOf(ir.BF16), ir.FloatTypeOf(ir.F32), ir.FloatTypeOf(ir.F64),
	ir.FloatTypeOf(ir.F8E4M3FN), ir.FloatTypeOf(ir.F8E5M2), ir.FloatTypeOf(ir.TF32),
	ir.IntegerTypeOf(1), ir.IntegerTypeOf(8), ir.IntegerTypeOf(16), ir.IntegerTypeOf(32), ir.IntegerTypeOf(64), ir.Index}

// editType changes one memref or vector type of the module everywhere it
// appears (in descriptor types too): one dimension, the rank, the element
// type or the memory space.
func (e *editor) editType() {
	seen := map[string]ir.Type{}
	for _, op := range append(e.ops(), e.mod) {
		for _, t := range op.ResultTypes() {
			seen[t.String()] = t
		}
		for _, r := range op.Regions() {
			for _, b := range r.Blocks() {
				for _, t := range b.ArgTypes() {
					seen[t.String()] = t
				}
			}
		}
	}
	var names []string
	for s, t := range seen {
		switch t.(type) {
		case *ir.MemRefType, *ir.VectorType:
			names = append(names, s)
		}
	}
	if len(names) == 0 {
		e.pick(1)
		return
	}
	sort.Strings(names)
	old := seen[names[e.pick(len(names))]]
	var shape []int64
	var elem ir.Type
	switch t := old.(type) {
	case *ir.MemRefType:
		shape, elem = t.Shape(), t.Elem
	case *ir.VectorType:
		shape, elem = t.Shape(), t.Elem
	}
	shape = append([]int64(nil), shape...)
	var space ir.Attribute
	if mt, ok := old.(*ir.MemRefType); ok {
		space = mt.MemorySpace
	}
	switch k := e.byte() % 8; {
	case k < 4 && len(shape) > 0:
		i := e.pick(len(shape))
		if e.byte()%8 == 0 {
			if _, ok := old.(*ir.MemRefType); ok {
				shape[i] = ir.Dynamic
				break
			}
		}
		shape[i] = e.newInt(shape[i])
		if shape[i] < 0 || shape[i] > 1<<40 {
			shape[i] = interesting[e.pick(20)]
		}
	case k == 4 && len(shape) < 6:
		i := e.pick(len(shape) + 1)
		shape = append(shape[:i], append([]int64{interesting[e.pick(20)]}, shape[i:]...)...)
	case k == 5 && len(shape) > 1:
		i := e.pick(len(shape))
		shape = append(shape[:i], shape[i+1:]...)
	case k == 6:
		elem = elemTypes[e.pick(len(elemTypes))]
	default:
		if _, ok := old.(*ir.MemRefType); ok {
			switch e.byte() % 3 {
			case 0:
				space = nil
			case 1:
				space = ir.I64Attr(3)
			default:
				space = ir.I64Attr(1)
			}
		}
	}
	var t ir.Type
	switch o := old.(type) {
	case *ir.MemRefType:
		if o.Layout != nil && len(shape) != len(o.Shape()) {
			return // a strided layout of the old rank would not parse
		}
		t = ir.MemRefTypeOf(shape, elem, o.Layout, space)
	case *ir.VectorType:
		if len(shape) == 0 {
			return
		}
		t = ir.VectorTypeOf(shape, elem)
	}
	if t != old {
		from, to := old.String(), t.String()
		e.subst = append(e.subst, func(s string) string { return strings.ReplaceAll(s, from, to) })
	}
}

// addAttr sets an attribute the passes act on, on an scf.for or a
// gpu.launch (or, rarely, any op).
func (e *editor) addAttr() {
	kind := e.byte()
	op := e.pickOp(func(op *ir.Operation) bool {
		return kind&0x80 != 0 || op.Name() == scf.For || op.Name() == gpu.Launch
	})
	if op == nil {
		return
	}
	switch kind % 6 {
	case 0:
		op.SetAttr("tmac.stages", ir.I64Attr(e.newInt(2)))
	case 1:
		op.SetAttr("tmac.store_stages", ir.I64Attr(e.newInt(2)))
	case 2:
		op.SetAttr("tmac.consumer_warpgroups", ir.I64Attr(e.newInt(2)))
	case 3:
		vals := []ir.Attribute{ir.Unit, ir.Str("pingpong"), ir.Str("cooperative"), ir.Str("persistent"), ir.I64Attr(1)}
		op.SetAttr("tmac.warp_specialize", vals[e.pick(len(vals))])
	case 4:
		op.SetAttr("tmac.multicast", ir.Unit)
	default:
		op.SetAttr("tmac.stages", ir.I64Attr(e.newInt(3)))
		op.SetAttr("tmac.warp_specialize", ir.Unit)
	}
}

// wordClasses are the alternatives of keywords in the printed IR: group 1
// of each pattern is kept, group 2 is the keyword replaced by one of words.
var wordClasses = []struct {
	re    *regexp.Regexp
	words []string
}{
	{regexp.MustCompile(`(swizzle = )(none|swizzle_32b|swizzle_64b|swizzle_128b)`), []string{"none", "swizzle_32b", "swizzle_64b", "swizzle_128b"}},
	{regexp.MustCompile(`(l2promo = )(none|l2promo_64b|l2promo_128b|l2promo_256b)`), []string{"none", "l2promo_64b", "l2promo_128b", "l2promo_256b"}},
	{regexp.MustCompile(`(oob = )(zero|nan)`), []string{"zero", "nan"}},
	{regexp.MustCompile(`(interleave = )(none|interleave_16b|interleave_32b)`), []string{"none", "interleave_16b", "interleave_32b"}},
	{regexp.MustCompile(`(#gpu\.address_space<)(global|workgroup|private)`), []string{"global", "workgroup", "private"}},
	{regexp.MustCompile(`(gpu\.(?:thread_id|block_id|block_dim|grid_dim|cluster_id|cluster_dim|cluster_block_id|cluster_dim_blocks)\s+)(x|y|z)\b`), []string{"x", "y", "z"}},
	{regexp.MustCompile(`(arith\.cmpi )(eq|ne|slt|sle|sgt|sge|ult|ule|ugt|uge)\b`), []string{"eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"}},
	{regexp.MustCompile(`(arith\.cmpf )(false|oeq|ogt|oge|olt|ole|one|ord|ueq|ugt|uge|ult|ule|une|uno|true)\b`), []string{"oeq", "olt", "ord", "une", "uno", "true"}},
	{regexp.MustCompile(`([x< (])(f16|bf16|f32|f8E4M3FN|f8E5M2|tf32)\b`), []string{"f16", "bf16", "f32", "f8E4M3FN", "f8E5M2", "tf32"}},
}

// editWord replaces the n-th keyword of one class in the printed text.
func (e *editor) editWord() {
	c := wordClasses[e.pick(len(wordClasses))]
	n := e.pick(64)
	word := c.words[e.pick(len(c.words))]
	e.subst = append(e.subst, func(s string) string {
		m := c.re.FindAllStringSubmatchIndex(s, -1)
		if len(m) == 0 {
			return s
		}
		at := m[n%len(m)]
		return s[:at[4]] + word + s[at[5]:]
	})
}
