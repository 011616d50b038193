package tmac

import (
	"fmt"

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
	if err := p.ParsePunct("<"); err != nil {
		return nil, err
	}
	tok := p.Tok()
	dims, err := p.ParseDimensionList(false)
	if err != nil {
		return nil, err
	}
	if len(dims) != 1 {
		return nil, p.ErrorAt(tok, "expected one static length in !tmac.%s<Lxf32>", name)
	}
	elemTok := p.Tok()
	elem, err := p.ParseType()
	if err != nil {
		return nil, err
	}
	if f, ok := elem.(*ir.FloatType); !ok || f.Kind != ir.F32 {
		return nil, p.ErrorAt(elemTok, "!tmac.%s holds f32 elements, not %s", name, elem)
	}
	check := CheckRowsLen
	if name == colsName {
		check = CheckColsLen
	}
	if msg := check(dims[0]); msg != "" {
		return nil, p.ErrorAt(tok, "%s", msg)
	}
	if err := p.ParsePunct(">"); err != nil {
		return nil, err
	}
	return vectorType(name, dims[0], elem), nil
}

func init() {
	typeParsers[rowsName] = func(p *ir.Parser) (ir.Type, error) { return parseVectorType(p, rowsName) }
	typeParsers[colsName] = func(p *ir.Parser) (ir.Type, error) { return parseVectorType(p, colsName) }
}
