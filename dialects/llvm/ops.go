package llvm

import "github.com/tmac-dev/tmac/ir"

// positionSyntax writes a DenseI64ArrayAttr as `[0, 1]`.
var positionSyntax = &ir.AttrSyntax{
	Parse: func(p *ir.Parser) (ir.Attribute, error) {
		vals, err := p.ParseIntegerList(ir.DelimSquare)
		if err != nil {
			return nil, err
		}
		return ir.DenseI64Array(vals...), nil
	},
	Print: func(a ir.Attribute) string {
		da, ok := a.(*ir.DenseArrayAttr)
		if !ok {
			return a.String()
		}
		return "[" + ir.CommaSeparated(da.Ints, itoa) + "]"
	},
}

// ElementTypeAt returns the type found at position inside an aggregate, or
// an error message in upstream's words.
func ElementTypeAt(container ir.Type, position []int64) (ir.Type, string) {
	t := container
	for _, idx := range position {
		if s := StructOf(t); s != nil && !s.Opaque {
			if idx < 0 || idx >= int64(len(s.Body)) {
				return nil, "position out of bounds: " + itoa(idx)
			}
			t = s.Body[idx]
			continue
		}
		if a := ArrayOf(t); a != nil {
			if idx < 0 || idx >= a.N {
				return nil, "position out of bounds: " + itoa(idx)
			}
			t = a.Elem
			continue
		}
		return nil, "expected LLVM IR structure/array type, got: '" + t.String() + "'"
	}
	return t, ""
}

func positionOf(a ir.Attribute) []int64 {
	if da, ok := a.(*ir.DenseArrayAttr); ok {
		return da.Ints
	}
	return nil
}

// positionedType returns the type at the position of an extractvalue or
// insertvalue in its container (the first operand), or the op's error.
func positionedType(op *ir.Operation) (ir.Type, error) {
	t, msg := ElementTypeAt(op.Operand(0).Type(), positionOf(op.Attr("position")))
	if msg != "" {
		return nil, op.EmitOpError("%s", msg)
	}
	return t, nil
}

func valueDirective(resultGroup string) *ir.CustomDirective {
	return &ir.CustomDirective{
		Parse: func(p *ir.Parser, fs *ir.FormatState, args []string) error {
			ct := fs.Types["container"]
			if len(ct) != 1 {
				return nil
			}
			t, msg := ElementTypeAt(ct[0], positionOf(fs.St.Attr("position")))
			if msg != "" {
				return ir.Errorf(fs.St.Loc, "custom op '%s' %s", fs.St.Name, msg)
			}
			fs.Types[resultGroup] = []ir.Type{t}
			return nil
		},
		Print: func(p *ir.Printer, op *ir.Operation, args []string) {},
	}
}

var (
	aggregate = ir.TypeConstraint{Desc: "LLVM aggregate type", OK: func(t ir.Type) bool { return StructOf(t) != nil || ArrayOf(t) != nil }}
)

func init() {
	ir.RegisterCustomDirective("LLVMExtractValueElementType", valueDirective("res"))
	ir.RegisterCustomDirective("LLVMInsertValueElementType", valueDirective("value"))
	posSpec := ir.AttrSpec{Name: "position", Constraint: ir.DenseI64ArrayC, Syntax: positionSyntax}
	ir.Register(
		valueOp("llvm.mlir.poison", "Creates a poison value of LLVM dialect type."),
		valueOp("llvm.mlir.undef", "Creates an undefined value of LLVM dialect type."),
		valueOp("llvm.mlir.zero", "Creates a zero-initialized value of LLVM dialect type."),
		&ir.OpDef{
			Name:    "llvm.unreachable",
			Summary: "LLVM dialect 'unreachable' terminator.",
			Traits:  ir.Terminator,
			Format:  "attr-dict",
		},
		&ir.OpDef{
			Name:    "llvm.mlir.constant",
			Summary: "Defines a constant of LLVM type.",
			Traits:  ir.Pure | ir.ConstantLike,
			Results: []ir.ArgSpec{{Name: "res", Type: CompatibleType}},
			Attrs:   []ir.AttrSpec{{Name: "value", Constraint: ir.AnyAttr}},
			Format:  "`(` $value `)` attr-dict `:` type($res)",
			Verify:  verifyConstant,
		},
		&ir.OpDef{
			Name:     "llvm.extractvalue",
			Summary:  "Extract a value from an LLVM struct.",
			Traits:   ir.Pure,
			Operands: []ir.ArgSpec{{Name: "container", Type: aggregate}},
			Results:  []ir.ArgSpec{{Name: "res", Type: ir.AnyType}},
			Attrs:    []ir.AttrSpec{posSpec},
			Format:   "$container `` $position attr-dict `:` type($container) custom<LLVMExtractValueElementType>(type($res), ref(type($container)), ref($position))",
			Verify: func(op *ir.Operation) error {
				ct := op.Operand(0).Type()
				t, err := positionedType(op)
				if err == nil && t != op.Result(0).Type() {
					err = op.EmitOpError("Type mismatch: extracting from '%s' should produce '%s' but this op returns '%s'", ct, t, op.Result(0).Type())
				}
				return err
			},
		},
		&ir.OpDef{
			Name:      "llvm.insertvalue",
			Summary:   "Insert a value into an LLVM struct.",
			Traits:    ir.Pure,
			Operands:  []ir.ArgSpec{{Name: "container", Type: aggregate}, {Name: "value", Type: CompatibleType}},
			Results:   []ir.ArgSpec{{Name: "res", Type: aggregate}},
			Attrs:     []ir.AttrSpec{posSpec},
			TypeRules: []ir.TypeRule{{Target: "res", From: "container"}},
			Format:    "$value `,` $container `` $position attr-dict `:` type($container) custom<LLVMInsertValueElementType>(type($value), ref(type($container)), ref($position))",
			Verify: func(op *ir.Operation) error {
				ct := op.Operand(0).Type()
				t, err := positionedType(op)
				if vt := op.Operand(1).Type(); err == nil && t != vt {
					err = op.EmitOpError("Type mismatch: cannot insert '%s' into '%s'", vt, ct)
				}
				return err
			},
		},
		castOp("llvm.ptrtoint", "Convert a pointer to an integer.", ptrLike, intLike),
		castOp("llvm.inttoptr", "Convert an integer to a pointer.", intLike, ptrLike),
		castOp("llvm.addrspacecast", "Convert a pointer to another address space.", ptrLike, ptrLike),
	)
}

// Operand and result constraints of the pointer casts (scalars or vectors
// of them, as upstream).
var (
	ptrLike = ir.TypeConstraint{Desc: "LLVM pointer type or LLVM dialect-compatible vector of LLVM pointer type", OK: func(t ir.Type) bool {
		if v, ok := t.(*ir.VectorType); ok {
			t = v.Elem
		}
		return IsPtr(t)
	}}
	intLike = ir.TypeConstraint{Desc: "signless integer or LLVM dialect-compatible vector of signless integer", OK: func(t ir.Type) bool {
		if v, ok := t.(*ir.VectorType); ok {
			t = v.Elem
		}
		return ir.IsSignlessInteger(t)
	}}
)

// valueOp defines an op that creates a value of its result type out of
// nothing (poison, undef, zero), written `: T`.
func valueOp(name, summary string) *ir.OpDef {
	return &ir.OpDef{
		Name:    name,
		Summary: summary,
		Traits:  ir.Pure | ir.ConstantLike,
		Results: []ir.ArgSpec{{Name: "res", Type: CompatibleType}},
		Format:  "attr-dict `:` type($res)",
	}
}

// castOp defines a one-operand conversion written `%x : T1 to T2`.
func castOp(name, summary string, from, to ir.TypeConstraint) *ir.OpDef {
	return &ir.OpDef{
		Name:     name,
		Summary:  summary,
		Traits:   ir.Pure,
		Operands: []ir.ArgSpec{{Name: "arg", Type: from}},
		Results:  []ir.ArgSpec{{Name: "res", Type: to}},
		Format:   "$arg attr-dict `:` type($arg) `to` type($res)",
	}
}

func verifyConstant(op *ir.Operation) error {
	v := op.Attr("value")
	rt := op.Result(0).Type()
	if s, ok := v.(*ir.StringAttr); ok {
		a := ArrayOf(rt)
		n := int64(len(s.Value))
		if a == nil || a.N != n || !ir.IsIntegerOfWidth(a.Elem, 8) {
			return op.EmitOpError("expected array type of %d i8 elements for the string constant", n)
		}
	}
	return nil
}
