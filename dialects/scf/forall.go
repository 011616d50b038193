package scf

import (
	"strconv"
	"strings"

	"github.com/tmac-dev/tmac/dialects/arith"
	"github.com/tmac-dev/tmac/dialects/memref"
	"github.com/tmac-dev/tmac/ir"
)

// scf.forall is a multi-dimensional parallel loop whose bounds and steps
// are each a constant (in the static lists) or an index value; it ends
// with scf.forall.in_parallel, whose ops combine results into shared_outs
// tensors.

var anyRankedTensor = ir.TypeConstraint{Desc: "ranked tensor of any type values", OK: func(t ir.Type) bool {
	_, ok := t.(*ir.TensorType)
	return ok
}}

func init() {
	ir.Register(
		&ir.OpDef{
			Name:    "scf.forall",
			Summary: "evaluate a block multiple times in parallel",
			Doc: "A loop nest over `(%i, ...) in (ubs)` (lower bounds 0, steps 1) or `= (lbs) to (ubs) step (steps)`, " +
				"each bound a constant or an index value, whose iterations are independent. Without `mapping` and " +
				"without `shared_outs`, tmac lowers, interprets and emulates it as sequential nested loops in the " +
				"thread running it (the first bound outermost), as upstream's scf-forall-to-for does. A `mapping` " +
				"to `#gpu.thread`/`#gpu.block`/`#gpu.warp`... ids asks for the iterations to be spread over the " +
				"launch's ids, which tmac does not do: such a loop is rejected in kernels (write the body with " +
				"`gpu.thread_id`/`gpu.block_id` in a `gpu.launch` instead). `shared_outs` are tensors, which tmac " +
				"does not compile: a forall with them is parsed and verified but rejected in kernels and by the " +
				"interpreters.",
			Traits: ir.AttrSizedOperandSegments | ir.SingleBlock | ir.RecursiveSideEffects,
			Operands: []ir.ArgSpec{
				{Name: "dynamicLowerBound", Kind: ir.Variadic, Type: ir.IndexOnly},
				{Name: "dynamicUpperBound", Kind: ir.Variadic, Type: ir.IndexOnly},
				{Name: "dynamicStep", Kind: ir.Variadic, Type: ir.IndexOnly},
				{Name: "outputs", Kind: ir.Variadic, Type: anyRankedTensor},
			},
			Results: []ir.ArgSpec{{Name: "results", Kind: ir.Variadic, Type: ir.AnyType}},
			Attrs: []ir.AttrSpec{
				{Name: "staticLowerBound", Constraint: ir.DenseI64ArrayC},
				{Name: "staticUpperBound", Constraint: ir.DenseI64ArrayC},
				{Name: "staticStep", Constraint: ir.DenseI64ArrayC},
				{Name: "mapping", Constraint: deviceMappingArray, Optional: true},
			},
			Regions:            []ir.RegionSpec{{Name: "region"}},
			ImplicitTerminator: "scf.forall.in_parallel",
			Parse:              parseForall,
			Print:              printForall,
			VerifyInvariants:   verifyForall,
			Verify:             verifyForallTerminator,
		},
		&ir.OpDef{
			Name:    "scf.forall.in_parallel",
			Summary: "terminates a `forall` block",
			Doc: "Ends an `scf.forall` body; its single block holds the parallel-combining ops (upstream's " +
				"`tensor.parallel_insert_slice`) that write the iteration's slices into the `shared_outs`. tmac has " +
				"no such op, so the block is empty in the programs it accepts.",
			Traits:           ir.Terminator | ir.Pure | ir.NoTerminator | ir.SingleBlock | ir.GraphRegions,
			Parents:          []string{"scf.forall"},
			Regions:          []ir.RegionSpec{{Name: "region"}},
			Parse:            parseInParallel,
			Print:            printInParallel,
			VerifyInvariants: verifyInParallel,
		},
	)
}

// deviceMappingArray is upstream's DeviceMappingArrayAttr: an array of the
// gpu dialect's mapping attributes (#gpu.thread<x>, #gpu.block<y>, ...;
// dialects/gpu/mapping.go), told apart by their printed form so that scf
// does not depend on gpu.
var deviceMappingArray = ir.AttrConstraint{Desc: "Device Mapping array attribute", OK: func(a ir.Attribute) bool {
	arr, ok := a.(*ir.ArrayAttr)
	if !ok {
		return false
	}
	for _, e := range arr.Elems {
		if _, ok := DeviceMappingKind(e); !ok {
			return false
		}
	}
	return true
}}

var deviceMappingKinds = []string{"block", "warpgroup", "warp", "thread", "lane", "mask", "memory_space"}

// DeviceMappingKind returns the kind of a gpu mapping attribute
// (#gpu.thread<x> is "thread") and whether a is one.
func DeviceMappingKind(a ir.Attribute) (string, bool) {
	text := a.String()
	for _, k := range deviceMappingKinds {
		if strings.HasPrefix(text, "#gpu."+k+"<") {
			return k, true
		}
	}
	return "", false
}

// parseDynamicIndexParens parses `(` (ssa-value | integer) (`,` ...)* `)`:
// integers are static entries, values dynamic ones (ir.Dynamic in the
// static list).
func parseDynamicIndexParens(p *ir.Parser, st *ir.OperationState) ([]int64, int, error) {
	us, static, err := memref.ParseDynamicIndexListIn(p, ir.DelimParen)
	if err != nil {
		return nil, 0, err
	}
	return static, len(us), p.ResolveOperandsSameType(us, ir.Index, st)
}

func parseForall(p *ir.Parser, st *ir.OperationState) error {
	ivs, err := parseArgumentList(p)
	if err != nil {
		return err
	}
	var lbs, ubs, steps []int64
	var nLbs, nUbs, nSteps int
	if p.ParseOptionalKeyword("in") {
		if ubs, nUbs, err = parseDynamicIndexParens(p, st); err != nil {
			return err
		}
		lbs, steps = make([]int64, len(ivs)), make([]int64, len(ivs))
		for i := range steps {
			steps[i] = 1
		}
	} else {
		if err := p.ParsePunct("="); err != nil {
			return err
		}
		if lbs, nLbs, err = parseDynamicIndexParens(p, st); err != nil {
			return err
		}
		if err := p.ParseKeyword("to"); err != nil {
			return err
		}
		if ubs, nUbs, err = parseDynamicIndexParens(p, st); err != nil {
			return err
		}
		if err := p.ParseKeyword("step"); err != nil {
			return err
		}
		if steps, nSteps, err = parseDynamicIndexParens(p, st); err != nil {
			return err
		}
	}
	var outArgs []ir.Argument
	var outs []ir.UnresolvedOperand
	outsTok := p.Tok()
	if p.ParseOptionalKeyword("shared_outs") {
		if outArgs, outs, err = p.ParseAssignmentList(); err != nil {
			return err
		}
		if st.ResultTypes, err = p.ParseOptionalArrowTypeList(); err != nil {
			return err
		}
		if len(outs) != len(st.ResultTypes) {
			return p.CustomOpErrorAt(outsTok, "number of operands and types do not match: got %d operands and %d types", len(outs), len(st.ResultTypes))
		}
		if err := p.ResolveOperands(outs, st.ResultTypes, st); err != nil {
			return err
		}
	}
	var args []ir.Argument
	for _, iv := range ivs {
		iv.Type = ir.Index
		args = append(args, iv)
	}
	for i, a := range outArgs {
		a.Type = st.ResultTypes[i]
		args = append(args, a)
	}
	body := st.AddRegion()
	if err := p.ParseRegion(body, args); err != nil {
		return err
	}
	ensureInParallel(body, st.Loc)
	if err := p.ParseOptionalAttrDict(st); err != nil {
		return err
	}
	st.AddAttr("staticLowerBound", ir.DenseI64Array(lbs...))
	st.AddAttr("staticUpperBound", ir.DenseI64Array(ubs...))
	st.AddAttr("staticStep", ir.DenseI64Array(steps...))
	st.AddAttr("operandSegmentSizes", ir.DenseI32Array(int64(nLbs), int64(nUbs), int64(nSteps), int64(len(outs))))
	return nil
}

// ensureInParallel ends each block of r that lacks a terminator with an
// empty scf.forall.in_parallel (its region holds one empty block).
func ensureInParallel(r *ir.Region, loc ir.Location) {
	if r.Empty() {
		r.AddBlock(ir.NewBlock(nil, nil))
	}
	for _, b := range r.Blocks() {
		if last := b.Last(); last != nil && last.HasTrait(ir.Terminator) {
			continue
		}
		st := &ir.OperationState{Name: "scf.forall.in_parallel", Loc: loc}
		st.AddRegion().AddBlock(ir.NewBlock(nil, nil))
		b.Append(ir.NewOperation(st))
	}
}

// ForallBounds returns the lower bounds, upper bounds and steps of an
// scf.forall, each entry a constant (value nil) or a value.
func ForallBounds(op *ir.Operation) (lbs, ubs, steps []ForallBound) {
	list := func(attr, group string) []ForallBound {
		a, _ := op.Attr(attr).(*ir.DenseArrayAttr)
		vals := op.OperandGroup(group)
		var out []ForallBound
		j := 0
		if a == nil {
			return nil
		}
		for _, s := range a.Ints {
			if s == ir.Dynamic && j < len(vals) {
				out = append(out, ForallBound{Value: vals[j]})
				j++
			} else {
				out = append(out, ForallBound{Const: s})
			}
		}
		return out
	}
	return list("staticLowerBound", "dynamicLowerBound"), list("staticUpperBound", "dynamicUpperBound"), list("staticStep", "dynamicStep")
}

// ForallBound is one bound or step of an scf.forall: Value, or Const
// when Value is nil.
type ForallBound struct {
	Value ir.Value
	Const int64
}

// constant returns the bound's value when it is a constant or an
// arith.constant defines it (upstream's getConstantIntValue).
func (b ForallBound) constant() (int64, bool) {
	if b.Value == nil {
		return b.Const, true
	}
	return arith.ConstantInt(b.Value)
}

// isNormalized is upstream's ForallOp::isNormalized: every lower bound is
// known to be 0 and every step 1 (constants or values arith.constant
// defines), which selects the `in` form when printing.
func isNormalized(op *ir.Operation) bool {
	lbs, _, steps := ForallBounds(op)
	all := func(bs []ForallBound, want int64) bool {
		for _, b := range bs {
			if c, ok := b.constant(); !ok || c != want {
				return false
			}
		}
		return true
	}
	return all(lbs, 0) && all(steps, 1)
}

func printForall(p *ir.Printer, op *ir.Operation) {
	body := op.Region(0)
	var bodyArgs []*ir.BlockArgument
	if !body.Empty() {
		bodyArgs = body.Entry().Args()
	}
	rank := 0
	if a, ok := op.Attr("staticLowerBound").(*ir.DenseArrayAttr); ok {
		rank = len(a.Ints)
	}
	list := func(attr, group string) {
		var static []int64
		if a, ok := op.Attr(attr).(*ir.DenseArrayAttr); ok {
			static = a.Ints
		}
		vals := op.OperandGroup(group)
		p.Write("(")
		j := 0
		for i, s := range static {
			if i > 0 {
				p.Write(", ")
			}
			if s == ir.Dynamic && j < len(vals) {
				p.PrintOperand(vals[j])
				j++
			} else {
				p.Write(strconv.FormatInt(s, 10))
			}
		}
		p.Write(")")
	}
	p.Write(" (")
	ir.PrintCommaSeparated(p, bodyArgs[:min(rank, len(bodyArgs))], func(a *ir.BlockArgument) { p.PrintOperand(a) })
	if isNormalized(op) {
		p.Write(") in ")
		list("staticUpperBound", "dynamicUpperBound")
	} else {
		p.Write(") = ")
		list("staticLowerBound", "dynamicLowerBound")
		p.Write(" to ")
		list("staticUpperBound", "dynamicUpperBound")
		p.Write(" step ")
		list("staticStep", "dynamicStep")
	}
	outs := op.OperandGroup("outputs")
	if len(outs) > 0 {
		p.Write(" shared_outs(")
		for i, v := range outs {
			if i > 0 {
				p.Write(", ")
			}
			if rank+i < len(bodyArgs) {
				p.PrintOperand(bodyArgs[rank+i])
			}
			p.Write(" = ")
			p.PrintOperand(v)
		}
		p.Write(")")
	}
	p.Write(" ")
	if len(outs) > 0 {
		p.Write("-> (")
		p.PrintTypes(op.ResultTypes())
		p.Write(") ")
	}
	p.PrintRegion(body, false, op.NumResults() > 0, false)
	p.PrintOptionalAttrDict(op.AllAttrs(), "operandSegmentSizes", "staticLowerBound", "staticUpperBound", "staticStep")
}

// verifyForall is upstream's ForallOp::verify.
func verifyForall(op *ir.Operation) error {
	if err := checkSizedRegion(op, 0, "region"); err != nil {
		return err
	}
	rank := 0
	if a, ok := op.Attr("staticLowerBound").(*ir.DenseArrayAttr); ok {
		rank = len(a.Ints)
	}
	outs := op.OperandGroup("outputs")
	if op.NumResults() != len(outs) {
		return op.EmitOpError("produces %d results, but has only %d outputs", op.NumResults(), len(outs))
	}
	body := op.Region(0).Entry()
	if body.NumArgs() != rank+len(outs) {
		return op.EmitOpError("region expects %d arguments", rank)
	}
	for i := 0; i < rank; i++ {
		if !ir.IsIndex(body.Arg(i).Type()) {
			return op.EmitOpError("expects %d-th block argument to be an index", i)
		}
	}
	for i, v := range outs {
		if body.Arg(rank+i).Type() != v.Type() {
			return op.EmitOpError("type mismatch between %d-th output and corresponding block argument", i)
		}
	}
	if m, ok := op.Attr("mapping").(*ir.ArrayAttr); ok && len(m.Elems) > 0 {
		ids, masks := 0, 0
		for _, e := range m.Elems {
			if k, _ := DeviceMappingKind(e); k == "mask" {
				masks++
			} else {
				ids++
			}
		}
		if ids != rank {
			return op.EmitOpError("mapping attribute size must match op rank")
		}
		if masks > 1 {
			return op.EmitOpError("\"mapping\" supports at most one device masking attribute")
		}
	}
	for _, l := range []struct{ name, attr, group string }{
		{"lower bound", "staticLowerBound", "dynamicLowerBound"},
		{"upper bound", "staticUpperBound", "dynamicUpperBound"},
		{"step", "staticStep", "dynamicStep"},
	} {
		var static []int64
		if a, ok := op.Attr(l.attr).(*ir.DenseArrayAttr); ok {
			static = a.Ints
		}
		if len(static) != rank {
			return op.EmitError("expected %d %s values, got %d", rank, l.name, len(static))
		}
		dynamic := 0
		for _, s := range static {
			if s == ir.Dynamic {
				dynamic++
			}
		}
		if n := len(op.OperandGroup(l.group)); n != dynamic {
			return op.EmitError("expected %d dynamic %s values", dynamic, l.name)
		}
	}
	return nil
}

// verifyForallTerminator is SingleBlockImplicitTerminator<InParallelOp>.
func verifyForallTerminator(op *ir.Operation) error {
	last := op.Region(0).Entry().Last()
	const note = "in custom textual format, the absence of terminator implies 'scf.forall.in_parallel'"
	if last == nil || !last.HasTrait(ir.Terminator) {
		return op.EmitOpError("expects regions to end with 'scf.forall.in_parallel'").AttachNote(op.Loc, note)
	}
	if last.Name() != "scf.forall.in_parallel" {
		return op.EmitOpError("expects regions to end with 'scf.forall.in_parallel', found '%s'", last.Name()).AttachNote(op.Loc, note)
	}
	return nil
}

func parseInParallel(p *ir.Parser, st *ir.OperationState) error {
	r := st.AddRegion()
	if err := p.ParseRegion(r, nil); err != nil {
		return err
	}
	if r.Empty() {
		r.AddBlock(ir.NewBlock(nil, nil))
	}
	return p.ParseOptionalAttrDict(st)
}

func printInParallel(p *ir.Printer, op *ir.Operation) {
	p.Write(" ")
	p.PrintRegion(op.Region(0), false, false, false)
	p.PrintOptionalAttrDict(op.AllAttrs())
}

// verifyInParallel is upstream's InParallelOp::verify: tmac has no
// parallel-combining op, so any op in the block is refused.
func verifyInParallel(op *ir.Operation) error {
	if len(op.Region(0).Blocks()) != 1 {
		return op.EmitOpError("region #0 ('region') failed to verify constraint: region with 1 blocks")
	}
	if op.Region(0).Entry().First() != nil {
		return op.EmitOpError("expected only ParallelCombiningOpInterface ops")
	}
	return nil
}
