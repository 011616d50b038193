package memref

import (
	"strings"

	"github.com/tmac-dev/tmac/ir"
)

// Atomic read-modify-write ops: memref.atomic_rmw, memref.generic_atomic_rmw
// and its memref.atomic_yield.

// AtomicKinds are the kinds of memref.atomic_rmw (arith's AtomicRMWKind),
// indexed by the value of the `kind` property.
var AtomicKinds = []string{"addf", "addi", "andi", "assign", "maximumf", "maxnumf", "maxs", "maxu",
	"minimumf", "minnumf", "mins", "minu", "mulf", "muli", "ori", "xori"}

// floatAtomicKinds need a floating-point value; the others but assign an
// integer one.
var floatAtomicKinds = map[string]bool{"addf": true, "maximumf": true, "maxnumf": true, "minimumf": true, "minnumf": true, "mulf": true}

// AtomicKind returns the keyword of an atomic_rmw's kind property.
func AtomicKind(op *ir.Operation) string {
	if ia, ok := op.Attr("kind").(*ir.IntegerAttr); ok && ia.Int() >= 0 && ia.Int() < int64(len(AtomicKinds)) {
		return AtomicKinds[ia.Int()]
	}
	return ""
}

// atomicSemantics names the arith op whose semantics each kind combines
// the old value and the operand with (assign has none: it stores the
// operand). The names are spelled out: the generated constants
// (arith.Addf, ...) are absent while internal/opgen builds the registry.
var atomicSemantics = map[string]string{
	"addf": "arith.addf", "addi": "arith.addi", "andi": "arith.andi",
	"maximumf": "arith.maximumf", "maxnumf": "arith.maxnumf", "maxs": "arith.maxsi", "maxu": "arith.maxui",
	"minimumf": "arith.minimumf", "minnumf": "arith.minnumf", "mins": "arith.minsi", "minu": "arith.minui",
	"mulf": "arith.mulf", "muli": "arith.muli", "ori": "arith.ori", "xori": "arith.xori",
}

// AtomicCombine returns what a memref.atomic_rmw stores given the old
// element and its operand, as lanes of the element type: the semantics
// of the arith op of its kind's name (what the GPU computes where gpu is
// set and the definitions say it differs, as the emulator wants).
func AtomicCombine(op *ir.Operation, gpu bool) (func(old, v ir.Lane) ir.Lane, error) {
	name, ok := atomicSemantics[AtomicKind(op)]
	if !ok {
		return func(_, v ir.Lane) ir.Lane { return v }, nil // assign
	}
	sem := ir.LookupOp(name).Semantics
	compile := sem.Lane
	if gpu && sem.GPU != nil {
		compile = sem.GPU
	}
	lane, err := compile(op)
	if err != nil {
		return nil, err
	}
	return func(old, v ir.Lane) ir.Lane {
		r, _ := lane(old, v, ir.Lane{})
		return r
	}, nil
}

var atomicKindC = func() ir.AttrConstraint {
	cases := make([]string, len(AtomicKinds))
	for i := range AtomicKinds {
		cases[i] = ir.Sprintf("%d", i)
	}
	return ir.AttrConstraint{
		Desc: "allowed 64-bit signless integer cases: " + strings.Join(cases, ", "),
		OK: func(a ir.Attribute) bool {
			ia, ok := a.(*ir.IntegerAttr)
			return ok && ir.IsIntegerOfWidth(ia.Type(), 64) && ia.Big == nil && ia.Int() >= 0 && ia.Int() < int64(len(AtomicKinds))
		},
	}
}()

var atomicKindSyntax = &ir.AttrSyntax{
	Parse: func(p *ir.Parser) (ir.Attribute, error) {
		tok := p.Tok()
		if tok.Kind == ir.TokBareID || tok.Kind == ir.TokString {
			s, _ := p.ParseKeywordOrString()
			for i, k := range AtomicKinds {
				if k == s {
					return ir.I64Attr(int64(i)), nil
				}
			}
		}
		return nil, p.CustomOpErrorAt(tok, "expected string or keyword containing one of the following enum values for attribute 'kind' [%s]", strings.Join(AtomicKinds, ", "))
	},
	Print: func(a ir.Attribute) string {
		if ia, ok := a.(*ir.IntegerAttr); ok && ia.Int() >= 0 && ia.Int() < int64(len(AtomicKinds)) {
			return AtomicKinds[ia.Int()]
		}
		return ir.AttrWithoutType(a)
	},
}

func verifyAtomicRMW(op *ir.Operation) error {
	mt := memrefOf(op.OperandNamed("memref"))
	value := op.OperandNamed("value").Type()
	if value != mt.Elem {
		return op.EmitOpError("failed to verify that value type matches element type of memref")
	}
	if op.Result(0).Type() != value {
		return op.EmitOpError("failed to verify that result type matches value")
	}
	if len(op.OperandGroup("indices")) != mt.Rank() {
		return op.EmitOpError("expects the number of subscripts to be equal to memref rank")
	}
	switch kind := AtomicKind(op); {
	case floatAtomicKinds[kind]:
		if !ir.IsFloat(value) {
			return op.EmitOpError("with kind '%s' expects a floating-point type", kind)
		}
	case kind != "assign":
		if !ir.IsSignlessInteger(value) {
			return op.EmitOpError("with kind '%s' expects an integer type", kind)
		}
	}
	return nil
}

func parseGenericAtomicRMW(p *ir.Parser, st *ir.OperationState) error {
	mem, idx, err := parseMemRefAccess(p)
	if err != nil {
		return err
	}
	t, err := p.ParseColonType()
	if err != nil {
		return err
	}
	mt, ok := t.(*ir.MemRefType)
	if !ok {
		return p.CustomOpErrorf("expected memref type")
	}
	if err := resolveMemRefAccess(p, st, mem, idx, t); err != nil {
		return err
	}
	if err := p.ParseRegion(st.AddRegion(), nil); err != nil {
		return err
	}
	st.ResultTypes = []ir.Type{mt.Elem}
	return p.ParseOptionalAttrDict(st)
}

func printGenericAtomicRMW(p *ir.Printer, op *ir.Operation) {
	printMemRefAccess(p, op.Operand(0), op.Operands()[1:])
	p.Write(" : ")
	p.PrintType(op.Operand(0).Type())
	p.Write(" ")
	p.PrintRegion(op.Region(0), true, true, false)
	p.PrintOptionalAttrDict(op.AllAttrs())
}

// verifyGenericAtomicRMWInvariants checks, before the region, what
// upstream's traits check: the result is the element type.
func verifyGenericAtomicRMWInvariants(op *ir.Operation) error {
	if op.Result(0).Type() != memrefOf(op.Operand(0)).Elem {
		return op.EmitOpError("failed to verify that result type matches element type of memref")
	}
	return nil
}

func verifyGenericAtomicRMW(op *ir.Operation) error {
	mt := memrefOf(op.Operand(0))
	if op.NumOperands()-1 != mt.Rank() {
		return op.EmitOpError("expects the number of subscripts to be equal to memref rank")
	}
	r := op.Region(0)
	if r.Empty() || r.Entry().NumArgs() != 1 {
		return op.EmitOpError("expected single number of entry block arguments")
	}
	if r.Entry().Arg(0).Type() != op.Result(0).Type() {
		return op.EmitOpError("expected block argument of the same type result type")
	}
	var effectful *ir.Operation
	ir.Walk(op, func(nested *ir.Operation) ir.WalkResult {
		if nested != op && !nested.HasNoMemoryEffect() && len(nested.Effects()) > 0 {
			effectful = nested
			return ir.Interrupt
		}
		return ir.Advance
	})
	if effectful != nil {
		return ir.Errorf(effectful.Loc, "body of 'memref.generic_atomic_rmw' should contain only operations with no side effects")
	}
	return nil
}

func verifyAtomicYield(op *ir.Operation) error {
	parent := op.ParentOp()
	if parent == nil || parent.NumResults() != 1 {
		return nil
	}
	if got, want := op.Operand(0).Type(), parent.Result(0).Type(); got != want {
		return op.EmitOpError("types mismatch between yield op: '%s' and its parent: '%s'", got, want)
	}
	return nil
}

func init() {
	ir.Register(
		&ir.OpDef{
			Name:    "memref.atomic_rmw",
			Summary: "Atomically combines a value with an element of a memref and returns the old element",
			Operands: []ir.ArgSpec{
				{Name: "value", Type: ir.TypeConstraint{Desc: "signless integer or floating point", OK: func(t ir.Type) bool {
					return ir.IsSignlessInteger(t) || ir.IsFloat(t)
				}}},
				{Name: "memref", Type: memRefC},
				indexes("indices"),
			},
			Results: []ir.ArgSpec{{Name: "result", Type: ir.TypeConstraint{Desc: "signless integer or floating point", OK: func(t ir.Type) bool {
				return ir.IsSignlessInteger(t) || ir.IsFloat(t)
			}}}},
			Attrs:   []ir.AttrSpec{{Name: "kind", Constraint: atomicKindC, Syntax: atomicKindSyntax}},
			Format:  "$kind $value `,` $memref `[` $indices `]` attr-dict `:` `(` type($value) `,` type($memref) `)` `->` type($result)",
			Verify:  verifyAtomicRMW,
			Effects: []ir.Effect{{Kind: ir.Read, Operand: "memref"}, {Kind: ir.Write, Operand: "memref"}},
			Doc: `On sm_90a addf, addi, andi, assign, maxs, maxu, mins, minu, ori and
xori lower to one LLVM atomicrmw (acq_rel at system scope, as upstream's
lowering gives), which NVPTX emits as atom.{global,shared}.<op> on 32- and
64-bit values (addf also on f16 and bf16); mulf, muli, the float min/max
kinds and the other kinds on 16-bit values become a compare-and-swap loop
computing what arith's op of the same name computes; 8-bit elements are
rejected. The emulator runs each as one indivisible step, which the race
detector sees as an atomic write.`,
		},
		&ir.OpDef{
			Name:             "memref.generic_atomic_rmw",
			Summary:          "Atomically replaces an element of a memref with what its region computes from the old one",
			Traits:           ir.SingleBlock,
			Operands:         []ir.ArgSpec{{Name: "memref", Type: memRefC}, indexes("indices")},
			Results:          []ir.ArgSpec{{Name: "result", Type: ir.TypeConstraint{Desc: "any type", OK: func(ir.Type) bool { return true }}}},
			Regions:          []ir.RegionSpec{{Name: "atomic_body"}},
			Parse:            parseGenericAtomicRMW,
			Print:            printGenericAtomicRMW,
			VerifyInvariants: verifyGenericAtomicRMWInvariants,
			Verify:           verifyGenericAtomicRMW,
			Effects:          []ir.Effect{{Kind: ir.Read, Operand: "memref"}, {Kind: ir.Write, Operand: "memref"}},
			Doc: `Lowered to a compare-and-swap loop (LLVM cmpxchg, atom.cas on the
GPU) around the region, for 16-, 32- and 64-bit elements.`,
		},
		&ir.OpDef{
			Name:     "memref.atomic_yield",
			Summary:  "Yields the new value of a memref.generic_atomic_rmw",
			Traits:   ir.Pure | ir.Terminator | ir.ReturnLike,
			Parents:  []string{"memref.generic_atomic_rmw"},
			Operands: []ir.ArgSpec{{Name: "result", Type: ir.AnyType}},
			Format:   "$result attr-dict `:` type($result)",
			Verify:   verifyAtomicYield,
		},
	)
}
