package gpu

import (
	"math/bits"
	"slices"

	"github.com/tmac-dev/tmac/ir"
)

// Warp and block collectives: gpu.shuffle, gpu.rotate, gpu.subgroup_reduce,
// gpu.all_reduce (and its gpu.yield), gpu.subgroup_broadcast. What each
// computes on sm_90a, lane by lane and in which order a floating-point
// reduction combines the lanes, is in its Doc below; codegen and the
// emulator implement exactly that.

var (
	intOrFloatC = ir.TypeConstraint{Desc: "Integer or Float", OK: isIntOrFloat}
	// intOrFloatOr1DC is upstream's AnyIntegerOrFloatOr1DVector.
	intOrFloatOr1DC = ir.TypeConstraint{Desc: "Integer or Float or fixed-length vector of Integer or Float values of ranks 1", OK: func(t ir.Type) bool {
		if v, ok := t.(*ir.VectorType); ok {
			return len(v.Shape()) == 1 && v.Scalable == nil && isIntOrFloat(v.Elem)
		}
		return isIntOrFloat(t)
	}}
	i1C = ir.TypeConstraint{Desc: "1-bit signless integer", OK: func(t ir.Type) bool { return ir.IsIntegerOfWidth(t, 1) }, Fixed: ir.I1}

	nonNegI32C = ir.AttrConstraint{Desc: "32-bit signless integer attribute whose minimum value is 0", OK: func(a ir.Attribute) bool {
		return ir.I32AttrC.OK(a) && a.(*ir.IntegerAttr).Int() >= 0
	}}
	powerOf2I32C = ir.AttrConstraint{Desc: "32-bit signless integer attribute whose value is a power of two > 0", OK: func(a ir.Attribute) bool {
		return ir.I32AttrC.OK(a) && isPowerOf2(a.(*ir.IntegerAttr).Int())
	}}
)

// operandsType gives $value the type functional-type(operands, results)
// reads for the operands.
var operandsType = []ir.TypeRule{{Target: "value", From: "$operands"}}

func isIntOrFloat(t ir.Type) bool { return ir.IsSignlessInteger(t) || ir.IsFloat(t) }

func isPowerOf2(v int64) bool { return v > 0 && v&(v-1) == 0 }

// bareI32Syntax writes an i32 attribute as a bare integer (`cluster(size = 4)`).
var bareI32Syntax = &ir.AttrSyntax{
	Parse: func(p *ir.Parser) (ir.Attribute, error) {
		v, err := p.ParseInteger()
		if err != nil {
			return nil, err
		}
		return ir.I32Attr(v), nil
	},
	Print:    ir.AttrWithoutType,
	CanStart: func(p *ir.Parser) bool { return p.Tok().Kind == ir.TokInt || p.IsPunct("-") },
}

func bareI32(name string, c ir.AttrConstraint) ir.AttrSpec {
	return ir.AttrSpec{Name: name, Constraint: c, Syntax: bareI32Syntax}
}

func unitAttr(name string) ir.AttrSpec {
	return ir.AttrSpec{Name: name, Constraint: ir.UnitAttrC, Optional: true}
}

// propConversion reports, as upstream's property conversion does before
// anything else, an enum, unit or type property holding another kind of
// attribute (integer properties are left to their constraints).
func propConversion(op *ir.Operation) error {
	for _, a := range op.Props() {
		spec := op.Def().AttrSpec(a.Name)
		if spec == nil || spec.Constraint.OK(a.Value) {
			continue
		}
		switch d := spec.Constraint.Desc; {
		case enumConstraints[d], d == ir.UnitAttrC.Desc, d == ir.TypeAttrC.Desc:
			return ir.Errorf(op.Loc, "invalid properties %s for op %s: Invalid attribute `%s` in property conversion: %s",
				ir.FormatAttrDict(op.Props()), op.Name(), a.Name, a.Value)
		}
	}
	return nil
}

// The reduction kinds: those on integers only and those on floats only.
var (
	intReductions   = map[string]bool{"minui": true, "minsi": true, "maxui": true, "maxsi": true, "and": true, "or": true, "xor": true}
	floatReductions = map[string]bool{"minnumf": true, "maxnumf": true, "minimumf": true, "maximumf": true}
)

// checkReduction is upstream's check that a reduction kind applies to the
// (element) type.
func checkReduction(op *ir.Operation, kind string, elem, t ir.Type) error {
	if intReductions[kind] && !ir.IsInteger(elem) || floatReductions[kind] && !ir.IsFloat(elem) {
		return ir.Errorf(op.Loc, "`%s` reduction operation is not compatible with type '%s'", kind, t)
	}
	return nil
}

const reductionOrderDoc = `**Order of a floating-point reduction.** The lanes combine as a butterfly:
at step s = 1, 2, 4, 8, 16 (times the cluster stride, up to the cluster
size) every lane combines its partial value with that of the lane whose id
differs in bit s, own value on the left: lane 0 computes ((x0 ⊕ x1) ⊕ (x2
⊕ x3)) ⊕ ((x4 ⊕ x5) ⊕ (x6 ⊕ x7)) ... for a cluster of 8. Each ⊕ rounds
to the element type (f16 and bf16 in their own precision), so every lane
of a cluster gets the same bits, and the emulator (tmac run --target=emu)
computes the same tree.`

var subgroupReduceDoc = `Reduces the value across the lanes of each cluster of the warp (all 32
lanes without ` + "`cluster`" + `; with ` + "`cluster(size = S, stride = T)`" + `, the S lanes
whose ids differ only in the bits of T·(S-1)), and gives every lane its
cluster's result. Every lane of the warp that has not exited must execute
it together (on sm_90a ` + "`uniform`" + ` changes nothing: the lowering always
exchanges values with shfl.sync and the full member mask), and no lane
may need the value of a lane that has exited or that a partial last warp
lacks (undefined on the GPU, an error in the emulator): a block of 48
threads may reduce over clusters of 16, not over the whole warp. The
cluster size must be at most 32 and the stride times the size at most 32.

**Lowering.** 32-bit integer add, and, or, xor and the signed and unsigned
min and max over the whole warp use redux.sync (exact: integer reduction
is associative); everything else is the butterfly of shfl.sync.bfly below,
with vectors and types of other widths moved through 32-bit shuffles and
combined element by element (add/mul with arith.addi/addf semantics,
minnumf/maxnumf as llvm.minnum/maxnum, minimumf/maximumf as
llvm.minimum/maximum, which propagate NaN).

` + reductionOrderDoc

var allReduceDoc = `Reduces the value over every thread of the block, with a reduction kind
or the combining region (which gets two values, left and right, and
yields one with gpu.yield), and gives every thread the result. Every
thread of the block must execute it (it contains block barriers).

**Lowering**, as upstream's gpu-to-nvvm: each warp reduces its threads'
values with the butterfly of shfl.sync.bfly below (a partial last warp of
w threads shuffles with width w and skips partners outside it), lane 0 of
each warp writes its warp's value to a 32-element static shared buffer,
bar.sync 0, the first n threads (n = the number of warps) reduce the n
values the same way (width n), thread 0 writes the result to the buffer,
bar.sync 0, and every thread reads it. Integer add, and, or, xor, min
and max on 32 bits or fewer use redux.sync over the warp's (or the
warps') lanes instead of the butterfly (exact: integer reduction is
associative).

**Order of a floating-point reduction.** Within a warp (and across the
warp results), lane k's partial value after step s = 1, 2, 4, 8, 16 is
its own partial ⊕ the partial of lane k xor s, when that lane is below the
width (own value on the left, the other on the right; a partner outside
the width is skipped); the result is lane 0's. For full warps that is
the balanced tree ((x0 ⊕ x1) ⊕ (x2 ⊕ x3)) ⊕ ...; the warp results combine
in the same tree over warp ids. The emulator computes the same order,
so its results match the GPU's bit for bit.`

const shuffleDoc = `Lane k reads ` + "`value`" + ` from lane j, where j = k xor offset (xor),
k - offset (up), k + offset (down) or offset (idx); ` + "`valid`" + ` is false, and
the lane gets its own value, when j is outside [0, width) (for up: below
0). The first ` + "`width`" + ` lanes (1 ≤ width ≤ 32) take part and must all
execute it; a lane at or beyond ` + "`width`" + ` must not.

**Lowering.** shfl.sync with member mask 0xffffffff >> (32 - width) and
clamp width - 1 (up: 0, so that lane k < offset keeps its value); PTX
takes the offset modulo 32. A value of another type than 32 bits (i1,
i8, i16, f16, bf16, i64, f64, vectors) is moved through as many 32-bit
shuffles as its bits need. upstream's gpu-to-nvvm gives up with width <
32 the clamp 32 - width, with which no lane of an up shuffle is valid;
tmac follows the op's definition instead.`

const rotateDoc = `Lane k (k < width) reads ` + "`value`" + ` from lane (k + offset) mod width;
` + "`valid`" + ` is true for the lanes below ` + "`width`" + `. offset < width ≤ 32, and the
first ` + "`width`" + ` lanes must all execute it. Lowered to shfl.sync.idx with
member mask 0xffffffff >> (32 - width).`

const broadcastDoc = `Gives every lane the value of one lane of the warp: the active lane
with the lowest id (first_active_lane), or lane ` + "`lane`" + ` (specific_lane:
0 ≤ lane < 32, the same in every lane, and an active lane). Lowered to
activemask.b32 and shfl.sync.idx over the active lanes. The emulator
takes the warp's lanes that have not exited as the active ones: lanes
that skip the broadcast must exit, or it waits for them (and reports the
lanes that wait for each other).`

func init() {
	// custom<AllReduceOperation>($op): an optional reduction keyword.
	ir.RegisterCustomDirective("GPUAllReduceOperation", &ir.CustomDirective{
		Parse: func(p *ir.Parser, fs *ir.FormatState, args []string) error {
			kw, ok := p.ParseOptionalAnyKeyword()
			if !ok {
				return nil
			}
			if !slices.Contains(ReduceOp.values, kw) {
				// Upstream reports it at the token after the keyword.
				return p.Errorf("custom op '%s' invalid op kind", fs.St.Name)
			}
			fs.St.AddAttr(varName(args[0]), ReduceOp.Attr(kw))
			return nil
		},
		Print: func(p *ir.Printer, op *ir.Operation, args []string) {
			if v := ReduceOp.Value(op.Attr(varName(args[0]))); v != "" {
				p.Write(" " + v)
			}
		},
	})
	ir.Register(
		&ir.OpDef{
			Name:    "gpu.shuffle",
			Summary: "Exchanges values between the lanes of a warp",
			Traits:  ir.Pure,
			Operands: []ir.ArgSpec{
				{Name: "value", Type: intOrFloatOr1DC},
				{Name: "offset", Type: i32C},
				{Name: "width", Type: i32C},
			},
			Results:     []ir.ArgSpec{{Name: "shuffleResult", Type: intOrFloatOr1DC}, {Name: "valid", Type: i1C}},
			Attrs:       []ir.AttrSpec{ShuffleMode.attr("gpu.shuffle", "mode", "Indexing modes supported by gpu.shuffle.")},
			Format:      "$mode $value `,` $offset `,` $width attr-dict `:` type($value)",
			TypeRules:   []ir.TypeRule{{Target: "shuffleResult", From: "value"}},
			VerifyProps: propConversion,
			Verify:      allTypesMatch("value", "shuffleResult"),
			ResultNames: nameResultGroups("shuffleResult", "valid"),
			Doc:         shuffleDoc,
		},
		&ir.OpDef{
			Name:     "gpu.rotate",
			Summary:  "Rotates values among the first lanes of a warp",
			Traits:   ir.Pure,
			Operands: []ir.ArgSpec{{Name: "value", Type: intOrFloatOr1DC}},
			Results:  []ir.ArgSpec{{Name: "rotateResult", Type: intOrFloatOr1DC}, {Name: "valid", Type: i1C}},
			Attrs: []ir.AttrSpec{
				bareI32("offset", nonNegI32C),
				bareI32("width", powerOf2I32C),
			},
			Format:    "$value `,` $offset `,` $width attr-dict `:` type($value)",
			TypeRules: []ir.TypeRule{{Target: "rotateResult", From: "value"}},
			Verify: func(op *ir.Operation) error {
				if err := allTypesMatch("value", "rotateResult")(op); err != nil {
					return err
				}
				if off, w := intValue(op.Attr("offset")), intValue(op.Attr("width")); off >= w {
					return op.EmitOpError("offset must be in the range [0, %d)", w)
				}
				return nil
			},
			ResultNames: nameResultGroups("rotateResult", "valid"),
			Doc:         rotateDoc,
		},
		&ir.OpDef{
			Name:     "gpu.subgroup_reduce",
			Summary:  "Reduces a value across the lanes of a warp (or of clusters of its lanes)",
			Traits:   ir.SameOperandsAndResultType,
			Operands: []ir.ArgSpec{{Name: "value", Type: intOrFloatOr1DC}},
			Results:  []ir.ArgSpec{{Name: "result", Type: intOrFloatOr1DC}},
			Attrs: []ir.AttrSpec{
				{Name: "op", Constraint: ReduceOp.constraint("built-in reduction operations supported by gpu.allreduce.")},
				unitAttr("uniform"),
				{Name: "cluster_size", Constraint: ir.I32AttrC, Optional: true, Syntax: bareI32Syntax},
				{Name: "cluster_stride", Constraint: ir.I32AttrC, Default: ir.I32Attr(1), Syntax: bareI32Syntax},
			},
			Format: "custom<GPUAllReduceOperation>($op) $value (`uniform` $uniform^)? " +
				"(`cluster` `(` `size` `=` $cluster_size^ (`,` `stride` `=` $cluster_stride^)? `)`)? " +
				"attr-dict `:` functional-type(operands, results)",
			TypeRules:   operandsType,
			VerifyProps: propConversion,
			Verify:      verifySubgroupReduce,
			Fold:        foldSubgroupReduce,
			Doc:         subgroupReduceDoc,
		},
		&ir.OpDef{
			Name:     "gpu.all_reduce",
			Summary:  "Reduces a value over every thread of the block",
			Traits:   ir.SameOperandsAndResultType | ir.IsolatedFromAbove,
			Operands: []ir.ArgSpec{{Name: "value", Type: intOrFloatC}},
			Results:  []ir.ArgSpec{{Name: "result", Type: intOrFloatC}},
			Attrs: []ir.AttrSpec{
				{Name: "op", Constraint: ReduceOp.constraint("built-in reduction operations supported by gpu.allreduce."), Optional: true},
				unitAttr("uniform"),
			},
			Regions:     []ir.RegionSpec{{Name: "body"}},
			Format:      "custom<GPUAllReduceOperation>($op) $value (`uniform` $uniform^)? $body attr-dict `:` functional-type(operands, results)",
			TypeRules:   operandsType,
			VerifyProps: propConversion,
			Verify:      verifyAllReduce,
			Doc:         allReduceDoc,
		},
		&ir.OpDef{
			Name:     "gpu.yield",
			Summary:  "Yields values from a gpu.all_reduce or gpu.warp_execute_on_lane_0 region",
			Traits:   ir.Pure | ir.ReturnLike | ir.Terminator,
			Operands: []ir.ArgSpec{{Name: "values", Kind: ir.Variadic, Type: ir.AnyType}},
			Format:   "attr-dict ($values^ `:` type($values))?",
		},
		&ir.OpDef{
			Name:     "gpu.subgroup_broadcast",
			Summary:  "Broadcasts the value of one lane to the warp",
			Traits:   ir.NoMemoryEffect,
			Operands: []ir.ArgSpec{{Name: "src", Type: ir.AnyType}, {Name: "lane", Kind: ir.Optional, Type: i32C}},
			Results:  []ir.ArgSpec{{Name: "result", Type: ir.AnyType}},
			Attrs:    []ir.AttrSpec{BroadcastType.attr("gpu.subgroup_broadcast", "broadcast_type", "")},
			Format:   "$src `,` $broadcast_type ($lane^)? attr-dict `:` type($result)",
			TypeRules: []ir.TypeRule{
				{Target: "src", From: "result"},
			},
			VerifyProps: propConversion,
			Verify: func(op *ir.Operation) error {
				if err := allTypesMatch("result", "src")(op); err != nil {
					return err
				}
				specific := BroadcastType.Value(op.Attr("broadcast_type")) == "specific_lane"
				lane := op.OperandNamed("lane")
				switch {
				case specific && lane == nil:
					return op.EmitOpError("lane must be specified for `specific_lane` broadcast")
				case !specific && lane != nil:
					return op.EmitOpError("lane can only be specified for `specific_lane` broadcast")
				}
				return nil
			},
			Doc: broadcastDoc,
		},
	)
}

// allTypesMatch is upstream's AllTypesMatch<[a, b]> on two single values.
func allTypesMatch(a, b string) func(op *ir.Operation) error {
	return func(op *ir.Operation) error {
		x, y := valueNamed(op, a), valueNamed(op, b)
		if x != nil && y != nil && x.Type() != y.Type() {
			return op.EmitOpError("failed to verify that all of {%s, %s} have same type", a, b)
		}
		return nil
	}
}

func valueNamed(op *ir.Operation, name string) ir.Value {
	if v := op.OperandNamed(name); v != nil {
		return v
	}
	return op.ResultNamed(name)
}

func intValue(a ir.Attribute) int64 {
	if ia, ok := a.(*ir.IntegerAttr); ok {
		return ia.Int()
	}
	return 0
}

// ReduceElem is the element type a reduction combines: the value's type,
// or its vector's element type.
func ReduceElem(t ir.Type) ir.Type {
	if v, ok := t.(*ir.VectorType); ok {
		return v.Elem
	}
	return t
}

func verifySubgroupReduce(op *ir.Operation) error {
	t := op.Operand(0).Type()
	if err := checkReduction(op, ReduceOp.Value(op.Attr("op")), ReduceElem(t), t); err != nil {
		return err
	}
	// Upstream reads the sizes as unsigned 32-bit numbers.
	size := op.Attr("cluster_size")
	if size != nil {
		if s := uint32(intValue(size)); bits.OnesCount32(s) != 1 {
			return op.EmitOpError("cluster size %d is not a power of two", s)
		}
	}
	stride := uint32(1)
	if a := op.Attr("cluster_stride"); a != nil {
		stride = uint32(intValue(a))
	}
	if stride != 1 && size == nil {
		return op.EmitOpError("cluster stride can only be specified if cluster size is specified")
	}
	if bits.OnesCount32(stride) != 1 {
		return op.EmitOpError("cluster stride %d is not a power of two", stride)
	}
	return nil
}

func verifyAllReduce(op *ir.Operation) error {
	body := op.Region(0)
	kind := op.Attr("op")
	if body.Empty() == (kind == nil) {
		return ir.Errorf(op.Loc, "expected either an op attribute or a non-empty body")
	}
	t := op.Operand(0).Type()
	if kind != nil {
		return checkReduction(op, ReduceOp.Value(kind), t, t)
	}
	if body.Entry().NumArgs() != 2 {
		return ir.Errorf(op.Loc, "expected two region arguments")
	}
	for _, a := range body.Entry().Args() {
		if a.Type() != t {
			return ir.Errorf(op.Loc, "incorrect region argument type")
		}
	}
	yields := 0
	for _, b := range body.Blocks() {
		y := b.Last()
		if y == nil || y.Name() != "gpu.yield" {
			continue
		}
		if y.NumOperands() != 1 {
			return ir.Errorf(op.Loc, "expected one gpu.yield operand")
		}
		if y.Operand(0).Type() != t {
			return ir.Errorf(op.Loc, "incorrect gpu.yield type")
		}
		yields++
	}
	if yields == 0 {
		return ir.Errorf(op.Loc, "expected gpu.yield op in region")
	}
	return nil
}

// foldSubgroupReduce: a reduction over clusters of one lane is the value.
func foldSubgroupReduce(op *ir.Operation, _ []ir.Attribute) []any {
	if s := op.Attr("cluster_size"); s != nil && intValue(s) == 1 {
		return []any{op.Operand(0)}
	}
	return nil
}

// ClusterShape returns a subgroup_reduce's cluster size and stride in
// lanes (32 and 1 without a cluster).
func ClusterShape(op *ir.Operation) (size, stride int64) {
	size, stride = 32, 1
	if a := op.Attr("cluster_size"); a != nil {
		size = int64(uint32(intValue(a)))
	}
	if a := op.Attr("cluster_stride"); a != nil {
		stride = int64(uint32(intValue(a)))
	}
	return size, stride
}
