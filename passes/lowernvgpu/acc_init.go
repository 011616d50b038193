package lowernvgpu

import (
	"github.com/tmac-dev/tmac/dialects/arith"
	"github.com/tmac-dev/tmac/dialects/llvm"
	"github.com/tmac-dev/tmac/dialects/nvvm"
	"github.com/tmac-dev/tmac/dialects/scf"
	"github.com/tmac-dev/tmac/dialects/tmac"
	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/passes"
)

// wgmma-acc-init: a loop whose wgmma accumulator is reset to zero inside
// it (a cross-tile K loop, stream-K, that finishes a tile and starts the
// next) yields llvm.mlir.zero on some paths. Those zeros are moves into the
// accumulator registers between wgmma instructions, and ptxas then
// serialises every wgmma of the kernel (warning C7514: measured on the
// H200, the stream-K GEMM ran at 1.5-3.3x the time of the plain one). The
// pass carries a flag instead: where the loop yielded zero it yields the
// accumulator it has (the one the other paths yield) and false, elsewhere
// true, and the first wgmma of the next iteration becomes
// tmac.wgmma.mma_async.scale_d with the flag as its scale-d, which starts
// from zero in the wgmma itself when the flag is false. (Triton's
// OptimizeAccumulatorInit does the same for its fused persistent loops.)
//
// The form it rewrites, after lower-nvgpu: an scf.for iter_arg (an LLVM
// struct) used only as the accumulator of nvvm.wgmma.mma_async ops with
// scale-d one and f32 accumulators, directly or through
// llvm.extractvalue; its loop result
// unused; its yielded value, through scf.if results used only there, on
// every path either llvm.mlir.zero or one value V defined in the loop body
// before the zeros are yielded. Anything else is left as it is.

func init() {
	passes.Register(&passes.Info{
		Name:    "wgmma-acc-init",
		Summary: "Start a loop's new wgmma accumulations with scale-d = 0 instead of zeroing the accumulator registers in the loop",
		Description: "Runs after `lower-nvgpu`. For an `scf.for` whose wgmma accumulator (an iter_arg used only as the accumulator of `nvvm.wgmma.mma_async` ops, directly or through `llvm.extractvalue`) is reset in the loop — the value it yields is, on some paths through `scf.if` results, `llvm.mlir.zero` and on the others one value defined in the loop body — the pass adds an i1 iter_arg: paths that yielded zero yield that value and false instead, the others true, and the wgmma ops reading the iter_arg become `tmac.wgmma.mma_async.scale_d` with the flag as scale-d (false: D = A·B, the registers ignored). The loop result must be unused, and each `scf.if` result on the way used only there.\n" +
			"\n" +
			"Why: zeros moved into the accumulator registers between wgmma instructions make ptxas serialise every wgmma of the kernel (warning C7514); a cross-tile K loop (stream-K) that finishes one output tile and starts the next has them. Loops of another form are left unchanged.",
		New: func(passes.Options) (passes.Pass, error) {
			return passes.PassFunc(func(top *ir.Operation, _ *passes.Context) error {
				var loops []*ir.Operation
				ir.Walk(top, func(op *ir.Operation) ir.WalkResult {
					if op.Name() == scf.For {
						loops = append(loops, op)
					}
					return ir.Advance
				})
				for _, loop := range loops {
					for i := 0; i < len(scf.ForOp{Op: loop}.InitArgs()); i++ {
						if r := matchAccReset(loop, i); r != nil {
							loop = r.rewrite()
						}
					}
				}
				return nil
			}), nil
		},
	})
}

// accReset is a loop-carried wgmma accumulator reset to zero in the loop.
type accReset struct {
	loop   *ir.Operation
	idx    int             // the iter_arg (index among the init args)
	wgmmas []*ir.Operation // the wgmma ops reading it
	value  ir.Value        // what the paths that do not reset yield
	// leaves are the yields (and operand index) of the paths: zero or value.
	zeros, values []leaf
	ifs           []ifResult // the scf.if results on the paths, outer before inner
}

// ifResult is result res of an scf.if, on a path of the yielded value.
type ifResult struct {
	op  *ir.Operation
	res int
}

type leaf struct {
	yield *ir.Operation
	index int
}

// matchAccReset returns the reset of iter_arg idx of loop, or nil when it
// is not of the form the pass rewrites.
func matchAccReset(loop *ir.Operation, idx int) *accReset {
	f := scf.ForOp{Op: loop}
	body := f.Region().Entry()
	arg := body.Arg(idx + 1)
	if llvm.StructOf(arg.Type()) == nil || ir.HasUses(loop.Result(idx)) {
		return nil
	}
	r := &accReset{loop: loop, idx: idx}
	// The wgmma ops that may take a runtime scale-d: scale-d one, f32
	// accumulators, no satfinite (tmac.wgmma.mma_async.scale_d's rules).
	isScaledWgmma := func(u *ir.OpOperand) bool {
		o := u.Owner()
		if o.Name() != nvvm.WgmmaMmaAsync || u.Index() != 0 || o.Attr("satfinite") != nil {
			return false
		}
		_, _, sd := nvvm.WGMMAScales(o)
		_, _, td := nvvm.WGMMATypes(o)
		return sd == "one" && td == "f32"
	}
	for _, u := range ir.Uses(arg) {
		switch {
		case isScaledWgmma(u):
			r.wgmmas = append(r.wgmmas, u.Owner())
		case u.Owner().Name() == llvm.Extractvalue:
			for _, v := range ir.Uses(u.Owner().Result(0)) {
				if !isScaledWgmma(v) {
					return nil
				}
				r.wgmmas = append(r.wgmmas, v.Owner())
			}
		default:
			return nil
		}
	}
	if len(r.wgmmas) == 0 {
		return nil
	}
	yield := body.Terminator()
	if !r.visit(yield.Operand(idx), yield, idx) || len(r.zeros) == 0 || r.value == nil {
		return nil
	}
	// The value must be there wherever a zero was yielded: defined at the
	// top of the body before the op holding each such yield.
	d := r.value.DefiningOp()
	if d == nil || d.Block() != body {
		return nil
	}
	for _, z := range r.zeros {
		top := z.yield
		for top != nil && top.Block() != body {
			top = top.ParentOp()
		}
		if top == nil || !d.IsBeforeInBlock(top) {
			return nil
		}
	}
	return r
}

// visit classifies v, operand index of the yield holder, following scf.if
// results into their regions' yields.
func (r *accReset) visit(v ir.Value, holder *ir.Operation, index int) bool {
	d := v.DefiningOp()
	switch {
	case d != nil && d.Name() == llvm.MlirZero:
		r.zeros = append(r.zeros, leaf{holder, index})
		return true
	case d != nil && d.Name() == scf.If && r.loop.IsAncestorOf(d):
		res, ok := v.(*ir.OpResult)
		if !ok || len(ir.Uses(v)) != 1 {
			return false
		}
		r.ifs = append(r.ifs, ifResult{d, res.Index()})
		for _, reg := range d.Regions() {
			if reg.Empty() {
				return false
			}
			y := reg.Entry().Terminator()
			if !r.visit(y.Operand(res.Index()), y, res.Index()) {
				return false
			}
		}
		return true
	default:
		if r.value != nil && r.value != v {
			return false
		}
		r.value = v
		r.values = append(r.values, leaf{holder, index})
		return true
	}
}

// rewrite carries the flag and returns the new loop.
func (r *accReset) rewrite() *ir.Operation {
	b := ir.NewBuilder(r.loop.Loc)
	flagAt := func(at *ir.Operation, v bool) ir.Value {
		b.SetInsertionPoint(at)
		return b.Create(&ir.OperationState{Name: arith.Constant, ResultTypes: []ir.Type{ir.I1},
			Attrs: []ir.NamedAttr{{Name: "value", Value: ir.Bool(v)}}}).Result(0)
	}
	// The flag each yield passes on: false where a zero was, true where the
	// value was; the zeros become the value.
	flags := map[*ir.Operation]ir.Value{}
	for _, z := range r.zeros {
		zero := z.yield.Operand(z.index).DefiningOp()
		z.yield.SetOperand(z.index, r.value)
		if !zero.IsUsed() {
			zero.Erase()
		}
		flags[z.yield] = flagAt(z.yield, false)
	}
	for _, v := range r.values {
		flags[v.yield] = flagAt(v.yield, true)
	}
	// Each scf.if on the way gains an i1 result, inner ones first; its
	// yields pass on their flag.
	for i := len(r.ifs) - 1; i >= 0; i-- {
		nw := withFlagResult(b, r.ifs[i].op)
		for _, reg := range nw.Regions() {
			y := reg.Entry().Terminator()
			y.SetOperands(append(y.Operands(), flags[y]))
		}
		// The yield holding this if's result (its only use) passes the
		// if's flag on.
		flags[ir.Uses(nw.Result(r.ifs[i].res))[0].Owner()] = nw.Result(nw.NumResults() - 1)
	}
	// The loop: one more iter_arg, false when it starts from zero.
	init := scf.ForOp{Op: r.loop}.InitArgs()[r.idx]
	start := true
	if d := init.DefiningOp(); d != nil && d.Name() == llvm.MlirZero {
		start = false
	}
	nl := withFlagResult(b, r.loop, flagAt(r.loop, start))
	body := scf.ForOp{Op: nl}.Region().Entry()
	flag := body.AddArgument(ir.I1, nl.Loc)
	y := body.Terminator()
	y.SetOperands(append(y.Operands(), flags[y]))
	// The wgmma ops reading the accumulator take the flag as scale-d.
	for _, w := range r.wgmmas {
		b.SetInsertionPoint(w)
		var attrs []ir.NamedAttr
		for _, a := range w.AllAttrs() {
			if a.Name != "scaleD" {
				attrs = append(attrs, a)
			}
		}
		nw := b.Create(&ir.OperationState{Name: tmac.WgmmaMmaAsyncScaleD, Loc: w.Loc,
			Operands: []ir.Value{w.Operand(0), w.Operand(1), w.Operand(2), flag}, ResultTypes: w.ResultTypes(), Attrs: attrs})
		ir.ReplaceAllUsesWith(w.Result(0), nw.Result(0))
		w.Erase()
	}
	return nl
}

// withFlagResult replaces op (an scf.if or scf.for) by the same op with
// one more result, an i1, and the extra operands, its regions moved into
// it; the uses of op's results move to the new op's. The caller adds the
// flag to the regions' yields (and the scf.for's block argument).
func withFlagResult(b *ir.Builder, op *ir.Operation, extra ...ir.Value) *ir.Operation {
	b.SetInsertionPoint(op)
	regions := make([]*ir.Region, op.NumRegions())
	for i := range regions {
		regions[i] = ir.NewRegion()
	}
	nw := b.Create(&ir.OperationState{Name: op.Name(), Loc: op.Loc, Operands: append(op.Operands(), extra...),
		ResultTypes: append(op.ResultTypes(), ir.I1), Attrs: op.AllAttrs(), Regions: regions})
	for i, reg := range op.Regions() {
		regions[i].TakeBody(reg)
	}
	for i := 0; i < op.NumResults(); i++ {
		ir.ReplaceAllUsesWith(op.Result(i), nw.Result(i))
	}
	op.Erase()
	return nw
}
