package codegen

import (
	"strings"

	"github.com/llir/llvm/ir/types"
	"github.com/llir/llvm/ir/value"

	"github.com/tmac-dev/tmac/dialects/vector"
	"github.com/tmac-dev/tmac/ir"
)

// vector.print in a kernel is one vprintf call per thread that runs it,
// printing what upstream's runtime prints (vector.PrintText describes the
// text): a format string built here from the value's type and the
// punctuation, the elements passed as vprintf's promoted arguments.

func init() {
	Register(lowerVectorPrint, vector.Print)
}

func lowerVectorPrint(fe *FuncEmitter, op *ir.Operation) {
	x := vector.PrintOp{Op: op}
	if s, ok := x.StringLiteral().(*ir.StringAttr); ok {
		fe.vprintf(fe.printfFormatPtr(strings.ReplaceAll(s.Value, "%", "%%")), nil)
		return
	}
	var args []value.Value
	var v value.Value
	var conv func(value.Value) value.Value
	verb := ""
	if src := x.Source(); src != nil {
		v = fe.Val(src)
		conv, verb = fe.printArg(op, ir.ElementTypeOrSelf(src.Type()))
	}
	format := vector.PrintText(op, func(i int) string {
		if isVectorType(v.Type()) {
			args = append(args, conv(fe.B().NewExtractElement(v, I32(int64(i)))))
		} else {
			args = append(args, conv(v))
		}
		return verb
	})
	fe.vprintf(fe.printfFormatPtr(format), args)
}

// printArg returns how an element of type t is passed to vprintf and its
// conversion: floats as double (%g), signless and signed integers
// sign-extended to 64 bits (%lld), i1, unsigned integers and index
// zero-extended (%llu), as upstream's printI64/printU64/printF* do.
func (fe *FuncEmitter) printArg(op *ir.Operation, t ir.Type) (func(value.Value) value.Value, string) {
	b := fe.B()
	switch t := t.(type) {
	case *ir.FloatType:
		if k := t.Kind; k == ir.F8E4M3FN || k == ir.F8E5M2 {
			return func(x value.Value) value.Value { return b.NewFPExt(fe.fp8ToHalf(x, k), types.Double) }, "%g"
		}
		if t.Kind == ir.F64 {
			return func(x value.Value) value.Value { return x }, "%g"
		}
		return func(x value.Value) value.Value { return b.NewFPExt(x, types.Double) }, "%g"
	case *ir.IndexType:
		return func(x value.Value) value.Value { return x }, "%llu"
	case *ir.IntegerType:
		if t.Width > 64 {
			Fail(op, "'vector.print' of '%s' cannot be compiled (integers wider than 64 bits)", t)
		}
		unsigned := t.Width == 1 || t.Signedness == ir.Unsigned
		return func(x value.Value) value.Value {
			if t.Width == 64 {
				return x
			}
			if unsigned {
				return b.NewZExt(x, types.I64)
			}
			return b.NewSExt(x, types.I64)
		}, map[bool]string{true: "%llu", false: "%lld"}[unsigned]
	}
	Fail(op, "'vector.print' of '%s' cannot be compiled", t)
	return nil, ""
}
