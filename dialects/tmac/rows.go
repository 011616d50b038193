package tmac

import (
	"fmt"

	"github.com/tmac-dev/tmac/dialects/nvgpu"
	"github.com/tmac-dev/tmac/ir"
)

// The rows and cols types: one f32 per row (or column) of a wgmma
// accumulator, held in registers in the layout the accumulator's fragment
// implies (docs/design/accumulator-ops.md, SPEC.md):
//
//	!tmac.rows<Mxf32>  thread t = 32w + l holds rows 64s + 16w + l/4 and
//	                   that + 8, for each 64-row slice s (2·M/64 values,
//	                   the same in the 4 lanes of a quad);
//	!tmac.cols<Nxf32>  thread t holds columns 8i + 2(l%4) and that + 1,
//	                   for each i < N/8 (N/4 values, the same in all quads).

const (
	rowsName = "rows"
	colsName = "cols"
)

// Vector is the parameter of a rows or cols type: its length (M rows or N
// columns) and element type (f32).
type Vector struct {
	Len  int64
	Elem ir.Type
}

// RowsType returns !tmac.rows<Mxelem>.
func RowsType(m int64, elem ir.Type) *ir.DialectType { return vectorType(rowsName, m, elem) }

// ColsType returns !tmac.cols<Nxelem>.
func ColsType(n int64, elem ir.Type) *ir.DialectType { return vectorType(colsName, n, elem) }

func vectorType(name string, n int64, elem ir.Type) *ir.DialectType {
	text := fmt.Sprintf("!tmac.%s<%dx%s>", name, n, elem)
	return ir.DialectTypeOf("tmac", name, text, func() any { return &Vector{Len: n, Elem: elem} })
}

// AsRows returns the parameter of a !tmac.rows type.
func AsRows(t ir.Type) (*Vector, bool) { return vectorParam(t, rowsName) }

// AsCols returns the parameter of a !tmac.cols type.
func AsCols(t ir.Type) (*Vector, bool) { return vectorParam(t, colsName) }

func vectorParam(t ir.Type, name string) (*Vector, bool) {
	d, ok := t.(*ir.DialectType)
	if !ok || d.Dialect != "tmac" || d.Name != name {
		return nil, false
	}
	return d.Data.(*Vector), true
}

// CheckRowsLen reports why M cannot be the length of a !tmac.rows ("" when
// it can): an accumulator's M, a positive multiple of 64.
func CheckRowsLen(m int64) string {
	if m <= 0 || m%64 != 0 {
		return fmt.Sprintf("a rows length must be a positive multiple of 64 (an accumulator's M), not %d", m)
	}
	return ""
}

// CheckColsLen reports why N cannot be the length of a !tmac.cols ("" when
// it can): an accumulator's N, a multiple of 8 from 8 to 256.
func CheckColsLen(n int64) string {
	if n < 8 || n > 256 || n%8 != 0 {
		return fmt.Sprintf("a cols length must be a multiple of 8 from 8 to 256 (an accumulator's N), not %d", n)
	}
	return ""
}

// parseVectorType parses the `<Lxf32>` of !tmac.rows and !tmac.cols.
func parseVectorType(p *ir.Parser, name string) (ir.Type, error) {
	check := CheckRowsLen
	if name == colsName {
		check = CheckColsLen
	}
	dims, elem, err := typeShape{
		rank:   1,
		arity:  "expected one static length in !tmac." + name + "<Lxf32>",
		elemOK: func(t ir.Type) bool { return t == ir.F32T },
		elem:   "!tmac." + name + " holds f32 elements, not %s",
		check:  func(dims []int64) string { return check(dims[0]) },
	}.parse(p)
	if err != nil {
		return nil, err
	}
	return vectorType(name, dims[0], elem), nil
}

// typeShape describes the `<D0x...xT>` parameters of a tmac type with
// static dimensions and an element type (rows, cols, warpgroup.operand)
// and the messages of its parse errors.
type typeShape struct {
	rank   int
	arity  string                    // when there are not rank dimensions
	elemOK func(ir.Type) bool        // the element types allowed
	elem   string                    // when the element type is not (%s: the type)
	check  func(dims []int64) string // why the dimensions are wrong, or ""
}

// parse parses `<D0x...xT>`, reporting shape errors at the first dimension
// and element type errors at the element type.
func (s typeShape) parse(p *ir.Parser) ([]int64, ir.Type, error) {
	if err := p.ParsePunct("<"); err != nil {
		return nil, nil, err
	}
	tok := p.Tok()
	dims, err := p.ParseDimensionList(false)
	if err != nil {
		return nil, nil, err
	}
	if len(dims) != s.rank {
		return nil, nil, p.ErrorAt(tok, "%s", s.arity)
	}
	elemTok := p.Tok()
	elem, err := p.ParseType()
	if err != nil {
		return nil, nil, err
	}
	if !s.elemOK(elem) {
		return nil, nil, p.ErrorAt(elemTok, s.elem, elem)
	}
	if msg := s.check(dims); msg != "" {
		return nil, nil, p.ErrorAt(tok, "%s", msg)
	}
	if err := p.ParsePunct(">"); err != nil {
		return nil, nil, err
	}
	return dims, elem, nil
}

var (
	rowsC = ir.TypeConstraint{Desc: "!tmac.rows type", OK: func(t ir.Type) bool { _, ok := AsRows(t); return ok }}
	colsC = ir.TypeConstraint{Desc: "!tmac.cols type", OK: func(t ir.Type) bool { _, ok := AsCols(t); return ok }}
	// rowsMemC is what rows are stored to and loaded from: a rank-1 memref.
	rowsMemC = ir.TypeConstraint{Desc: "rank-1 memref", OK: func(t ir.Type) bool { m, ok := t.(*ir.MemRefType); return ok && m.Rank() == 1 }}
)

// The kinds of tmac.warpgroup.acc.reduce.
const (
	ReduceMax = "max"
	ReduceSum = "sum"
)

// reduceKindSyntax writes the kind as a bare keyword (max, sum); the
// attribute is a string.
var reduceKindSyntax = &ir.AttrSyntax{
	Parse: func(p *ir.Parser) (ir.Attribute, error) {
		tok := p.Tok()
		k, err := p.ParseAnyKeyword()
		if err != nil {
			return nil, err
		}
		if k != ReduceMax && k != ReduceSum {
			return nil, p.ErrorAt(tok, "expected reduction kind max or sum, got '%s'", k)
		}
		return ir.Str(k), nil
	},
	Print: func(a ir.Attribute) string { return a.(*ir.StringAttr).Value },
}

func init() {
	typeParsers[rowsName] = func(p *ir.Parser) (ir.Type, error) { return parseVectorType(p, rowsName) }
	typeParsers[colsName] = func(p *ir.Parser) (ir.Type, error) { return parseVectorType(p, colsName) }
	ir.Register(
		&ir.OpDef{
			Name:     "tmac.warpgroup.acc.reduce",
			Summary:  "reduces each row of an f32 wgmma accumulator (max or sum) into a rows value, in registers",
			Traits:   ir.NoMemoryEffect,
			Operands: []ir.ArgSpec{{Name: "acc", Type: wgAccC}},
			Results:  []ir.ArgSpec{{Name: "result", Type: rowsC}},
			Attrs: []ir.AttrSpec{{Name: "kind", Syntax: reduceKindSyntax, Constraint: ir.AttrConstraint{
				Desc: "reduction kind max or sum",
				OK: func(a ir.Attribute) bool {
					s, ok := a.(*ir.StringAttr)
					return ok && (s.Value == ReduceMax || s.Value == ReduceSum)
				},
			}}},
			Format: "$kind $acc attr-dict `:` type($acc) `->` type($result)",
			Verify: verifyAccReduce,
			Doc: "The accumulator is 2-D, MxN, of f32; the result is `!tmac.rows<Mxf32>`. `max` is `arith.maximumf` (a NaN in a row " +
				"makes its maximum NaN), `sum` is `arith.addf`. Each thread combines its values of a row in column order, then the " +
				"4 threads of a quad combine theirs with `shfl.sync.bfly` xor 1 and xor 2, so the 4 hold the same bits. " +
				"The op waits for every wgmma group first (wait_group 0) and is warpgroup-collective: all 128 threads of the " +
				"warpgroup execute it convergently, as `nvgpu.warpgroup.mma`.",
		},
		&ir.OpDef{
			Name:     "tmac.rows.map",
			Summary:  "computes a rows value row by row from rows values of its length, in registers",
			Traits:   ir.SingleBlock | ir.RecursiveSideEffects,
			Operands: []ir.ArgSpec{{Name: "inputs", Kind: ir.Variadic, Type: rowsC}},
			Results:  []ir.ArgSpec{{Name: "result", Type: rowsC}},
			Regions:  []ir.RegionSpec{{Name: "body"}},
			Format:   "($inputs^)? attr-dict `:` (type($inputs)^)? `->` type($result) $body",
			Verify:   verifyRowsMap,
			Doc: "Every operand has the result's type (there may be none: a rows value computed from the row index alone, " +
				"such as a -inf initial maximum). The region has one block whose arguments are one f32 per operand (the " +
				"operands' values of one row) and then the row's index (index, within the accumulator's M rows). It holds only " +
				"ops without memory effects or regions (arith, math, index) and ends with `tmac.yield` of one f32, the result's " +
				"value for that row; values defined outside the op may be used. Each thread computes the rows it holds " +
				"(the 4 threads of a quad compute the same rows).",
		},
		loadDef("tmac.warpgroup.acc.load_rows", "rows", rowsC, "%src[%offset + r]", "row r"),
		loadDef("tmac.warpgroup.acc.load_cols", "cols", colsC, "%src[%offset + c]", "column c"),
		&ir.OpDef{
			Name:     "tmac.warpgroup.rows.store",
			Summary:  "stores a rows value to a rank-1 memref of f32, f16 or bf16 at an offset, skipping rows outside it",
			Operands: []ir.ArgSpec{{Name: "value", Type: rowsC}, {Name: "dst", Type: rowsMemC}, {Name: "offset", Type: ir.IndexOnly}},
			Format:   "$value `,` $dst `[` $offset `]` attr-dict `:` type($value) `to` type($dst)",
			Effects:  []ir.Effect{{Kind: ir.Write, Operand: "dst"}},
			Verify:   verifyRowsStore,
			Doc: "Row r of the value goes to `%dst[%offset + r]` when that index is inside the memref's dimension, and nowhere " +
				"else (edge tiles). The destination is a rank-1 memref of f32, f16 or bf16 (rounded to nearest even) in global or " +
				"shared memory. Lane `l % 4 == 0` of each quad stores the rows its quad holds, so each row is written once.",
		},
	)
}

// verifyAccReduce checks that the result has one row per accumulator row.
func verifyAccReduce(op *ir.Operation) error {
	acc, _ := nvgpu.AsWarpgroupAccumulator(op.Operand(0).Type())
	v := acc.Fragmented
	if v.Elem != ir.F32T || len(v.Shape()) != 2 {
		return op.EmitOpError("needs a 2-D accumulator of f32, not %s", v)
	}
	if r, _ := AsRows(op.Result(0).Type()); r.Len != v.Shape()[0] {
		return op.EmitOpError("result %s must have the accumulator's %d rows", op.Result(0).Type(), v.Shape()[0])
	}
	return nil
}

// verifyRowsMap checks the operands against the result and the region's
// signature and contents.
func verifyRowsMap(op *ir.Operation) error {
	res := op.Result(0).Type()
	for i, a := range op.Operands() {
		if a.Type() != res {
			return op.EmitOpError("operand #%d has type %s, not the result's %s", i, a.Type(), res)
		}
	}
	b := op.Region(0).Entry()
	if b == nil {
		return op.EmitOpError("needs a region with one block")
	}
	n := op.NumOperands()
	ok := b.NumArgs() == n+1 && b.Arg(n).Type() == ir.Index
	for i := 0; ok && i < n; i++ {
		ok = b.Arg(i).Type() == ir.F32T
	}
	if !ok {
		return op.EmitOpError("region arguments must be %d f32 (one per operand), then the row (index)", n)
	}
	return verifyElementRegion(op, b)
}

// verifyElementRegion checks the block of a region computing one element
// (tmac.warpgroup.acc.map, tmac.rows.map): ops without memory effects or
// regions, ending with tmac.yield.
func verifyElementRegion(op *ir.Operation, b *ir.Block) error {
	for _, nested := range b.Ops() {
		if !nested.HasNoMemoryEffect() || nested.NumRegions() != 0 {
			return ir.Errorf(nested.Loc, "'%s' is not allowed in a '%s' region: only ops without memory effects or regions", nested.Name(), op.Name())
		}
	}
	if t := b.Terminator(); t == nil || t.Name() != "tmac.yield" {
		return op.EmitOpError("region must end with tmac.yield")
	}
	return nil
}

// loadDef defines tmac.warpgroup.acc.load_rows or load_cols: a rows or
// cols value read from a rank-1 memref at an offset.
func loadDef(name, what string, result ir.TypeConstraint, elem, pos string) *ir.OpDef {
	return &ir.OpDef{
		Name:     name,
		Summary:  "loads a " + what + " value from a rank-1 memref of f32, f16 or bf16 at an offset, 0.0 outside it",
		Operands: []ir.ArgSpec{{Name: "src", Type: rowsMemC}, {Name: "offset", Type: ir.IndexOnly}},
		Results:  []ir.ArgSpec{{Name: "result", Type: result}},
		Format:   "$src `[` $offset `]` attr-dict `:` type($src) `->` type($result)",
		Effects:  []ir.Effect{{Kind: ir.Read, Operand: "src"}},
		Verify: func(op *ir.Operation) error {
			return verifyRowsMemory(op, op.Operand(0).Type().(*ir.MemRefType), "source")
		},
		Doc: "The value's " + pos + " is `" + elem + "` converted to f32 (`arith.extf`), or 0.0 where that index is outside " +
			"the memref's dimension (edge tiles; compared unsigned, so a negative index is outside too). The source is a " +
			"rank-1 memref of f32, f16 or bf16 in global or shared memory. Each thread loads the " + what + " it holds, " +
			"in the layout of the wgmma accumulator fragment (the threads holding the same " + what + " load the same elements).",
	}
}

// verifyRowsStore checks the destination: f32, f16 or bf16 in global or
// shared memory.
func verifyRowsStore(op *ir.Operation) error {
	return verifyRowsMemory(op, op.Operand(1).Type().(*ir.MemRefType), "destination")
}

// verifyRowsMemory checks a memref rows or cols values are stored to or
// loaded from: f32, f16 or bf16 in global or shared memory.
func verifyRowsMemory(op *ir.Operation, m *ir.MemRefType, what string) error {
	if !IsRowsMemElem(m.Elem) {
		return op.EmitOpError("%s element type %s must be f32, f16 or bf16", what, m.Elem)
	}
	if !nvgpu.IsSharedMemory(m.MemorySpace) && !nvgpu.IsGlobalMemory(m.MemorySpace) {
		return op.EmitOpError("%s %s must be in global or shared memory", what, m)
	}
	return nil
}

// IsRowsMemElem reports whether rows and cols values can be stored as or
// loaded from elements of type t: f32, f16 or bf16.
func IsRowsMemElem(t ir.Type) bool {
	f, ok := t.(*ir.FloatType)
	return ok && (f.Kind == ir.F32 || f.Kind == ir.F16 || f.Kind == ir.BF16)
}
