package gpu

import (
	"strings"

	"github.com/tmac-dev/tmac/ir"
)

// varName turns a directive argument ("$x", "type($x)", "ref($x)") into x.
func varName(arg string) string {
	arg = strings.TrimPrefix(arg, "type(")
	arg = strings.TrimPrefix(arg, "ref(")
	arg = strings.TrimSuffix(arg, ")")
	return strings.TrimPrefix(arg, "$")
}

// kindType is a custom directive for type($x) that checks the kind of the
// parsed type, as upstream's typed parsers do ("invalid kind of type").
func kindType(kind string, ok func(ir.Type) bool) *ir.CustomDirective {
	return &ir.CustomDirective{
		Parse: func(p *ir.Parser, fs *ir.FormatState, args []string) error {
			tok := p.Tok()
			t, err := p.ParseType()
			if err != nil {
				return err
			}
			if !ok(t) {
				return p.ErrorAt(tok, "custom op '%s' invalid kind of type specified: expected %s, but found '%s'", fs.St.Name, kind, t)
			}
			fs.Types[varName(args[0])] = []ir.Type{t}
			return nil
		},
		Print: func(p *ir.Printer, op *ir.Operation, args []string) {
			name := varName(args[0])
			vs := op.OperandGroup(name)
			if len(vs) == 0 {
				vs = op.ResultGroup(name)
			}
			if len(vs) > 0 {
				p.PrintType(vs[0].Type())
			}
		},
	}
}

func registerDirectives() {
	ir.RegisterCustomDirective("GPUIndexType", kindType("builtin.index", ir.IsIndex))
	ir.RegisterCustomDirective("GPUMemRefType", kindType("builtin.memref", func(t ir.Type) bool {
		_, ok := t.(*ir.MemRefType)
		return ok
	}))
	ir.RegisterCustomDirective("GPUUnrankedMemRefType", kindType("builtin.unranked_memref", func(t ir.Type) bool {
		_, ok := t.(*ir.UnrankedMemRefType)
		return ok
	}))
	// custom<AsyncDependencies>(type($asyncToken), $asyncDependencies):
	// (`async`)? (`[` deps `]`)?
	ir.RegisterCustomDirective("GPUAsyncDependencies", &ir.CustomDirective{
		Parse: func(p *ir.Parser, fs *ir.FormatState, args []string) error {
			tokName, depsName := varName(args[0]), varName(args[1])
			if p.IsKeyword("async") {
				if p.NumResultBindings() == 0 {
					return p.Errorf("custom op '%s' needs to be named when marked 'async'", fs.St.Name)
				}
				p.ParseKeyword("async")
				fs.Types[tokName] = []ir.Type{AsyncToken}
			}
			if p.IsPunct("[") {
				us, err := p.ParseOperandList(ir.DelimSquare)
				if err != nil {
					return err
				}
				fs.Operands[depsName] = us
			}
			return nil
		},
		Print: func(p *ir.Printer, op *ir.Operation, args []string) {
			async := len(op.ResultGroup(varName(args[0]))) > 0
			if async {
				p.Write("async")
			}
			deps := op.OperandGroup(varName(args[1]))
			if len(deps) > 0 {
				if async {
					p.Write(" ")
				}
				p.Write("[")
				p.PrintOperands(deps)
				p.Write("]")
			}
		},
	})
	// custom<LaunchDimType>: (`:` type)? for all grid/block/cluster sizes.
	ir.RegisterCustomDirective("GPULaunchDimType", &ir.CustomDirective{
		Parse: func(p *ir.Parser, fs *ir.FormatState, args []string) error {
			var t ir.Type = ir.Index
			if p.ParseOptionalPunct(":") {
				var err error
				if t, err = p.ParseType(); err != nil {
					return err
				}
			}
			for _, n := range []string{"gridSizeX", "gridSizeY", "gridSizeZ", "blockSizeX", "blockSizeY", "blockSizeZ"} {
				fs.Types[n] = []ir.Type{t}
			}
			for _, n := range []string{"clusterSizeX", "clusterSizeY", "clusterSizeZ"} {
				if len(fs.Operands[n]) > 0 {
					fs.Types[n] = []ir.Type{t}
				}
			}
			return nil
		},
		Print: func(p *ir.Printer, op *ir.Operation, args []string) {
			if v := op.OperandNamed("gridSizeX"); v != nil && !ir.IsIndex(v.Type()) {
				p.Write(": ")
				p.PrintType(v.Type())
			}
		},
	})
	// custom<LaunchFuncOperands>: (`args` `(` %v `:` type, ... `)`)?
	ir.RegisterCustomDirective("GPULaunchFuncOperands", &ir.CustomDirective{
		Parse: func(p *ir.Parser, fs *ir.FormatState, args []string) error {
			name := varName(args[0])
			if !p.ParseOptionalKeyword("args") {
				return nil
			}
			var us []ir.UnresolvedOperand
			var ts []ir.Type
			err := p.ParseCommaSeparatedListIn(ir.DelimParen, " in argument list", func() error {
				u, err := p.ParseOperand()
				if err != nil {
					return err
				}
				t, err := p.ParseColonType()
				if err != nil {
					return err
				}
				us = append(us, u)
				ts = append(ts, t)
				return nil
			})
			fs.Operands[name] = us
			fs.Types[name] = ts
			return err
		},
		Print: func(p *ir.Printer, op *ir.Operation, args []string) {
			vs := op.OperandGroup(varName(args[0]))
			if len(vs) == 0 {
				return
			}
			p.Write("args(")
			ir.PrintCommaSeparated(p, vs, func(v ir.Value) { printTypedOperand(p, v) })
			p.Write(")")
		},
	})
}
