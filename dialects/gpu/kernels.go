package gpu

import (
	"slices"
	"strings"

	"github.com/tmac-dev/tmac/ir"
)

// The kernel table of a gpu.object, as upstream's KernelTableAttr and
// KernelMetadataAttr write it:
//
//	#gpu.kernel_table<[#gpu.kernel_metadata<"name", type[, arg_attrs = [...]][, metadata = {...}]>, ...]>
//
// The table keeps its kernels sorted by name and rejects repeated names.
// Inside an object upstream prints the table without its prefix
// (kernels = <[...]>); both spellings are read, and so are elements
// without the #gpu.kernel_metadata prefix. tmac only carries the table:
// its own binaries are built by tmac compile.

// kernelMetadata is the Data of a #gpu.kernel_metadata attribute.
type kernelMetadata struct{ name string }

const kernelTablePrefix = "#gpu.kernel_table"

// parseKernelTable parses the parameters of a kernel table, from its '<'.
func parseKernelTable(p *ir.Parser) (*ir.DialectAttr, error) {
	open := p.Tok()
	if err := p.ParsePunct("<"); err != nil {
		return nil, err
	}
	if err := p.ParsePunct("["); err != nil {
		return nil, err
	}
	var kernels []*ir.DialectAttr
	for {
		k, err := parseGPUAttrOrBare(p, "kernel_metadata", parseKernelMetadata)
		if err != nil {
			return nil, failedParam(p, err, "GPU_KernelTableAttr", "kernel_table", "::llvm::ArrayRef<KernelMetadataAttr>")
		}
		kernels = append(kernels, k)
		if !p.ParseOptionalPunct(",") {
			break
		}
	}
	if err := p.ParsePunct("]"); err != nil {
		return nil, err
	}
	if err := p.ParsePunct(">"); err != nil {
		return nil, err
	}
	name := func(a *ir.DialectAttr) string { return a.Data.(*kernelMetadata).name }
	slices.SortStableFunc(kernels, func(a, b *ir.DialectAttr) int { return strings.Compare(name(a), name(b)) })
	texts := make([]string, len(kernels))
	for i, k := range kernels {
		if i > 0 && name(k) == name(kernels[i-1]) {
			return nil, ir.Errorf(p.LocOf(open), "expected all kernels to be uniquely named")
		}
		texts[i] = k.String()
	}
	return ir.DialectAttrOf("gpu", "kernel_table", kernelTablePrefix+"<["+strings.Join(texts, ", ")+"]>", nil), nil
}

// parseGPUAttrOrBare parses a #gpu.<name> attribute or, where no '#'
// starts one, its bare parameters with bare: how upstream reads the
// kernel table of an object and the kernels of a table.
func parseGPUAttrOrBare(p *ir.Parser, name string, bare func(*ir.Parser) (*ir.DialectAttr, error)) (*ir.DialectAttr, error) {
	if p.Tok().Kind != ir.TokHash {
		return bare(p)
	}
	tok := p.Tok()
	a, err := p.ParseAttribute(nil)
	if err != nil {
		return nil, err
	}
	if d, ok := a.(*ir.DialectAttr); ok && d.Dialect == "gpu" && d.Name == name {
		return d, nil
	}
	return nil, ir.Errorf(p.LocOf(tok), "invalid kind of attribute specified")
}

// parseKernelMetadata parses <"name", type[, arg_attrs = [...]][, metadata
// = {...}]>; the optional parameters come in either order and print in
// upstream's (arg_attrs, then metadata).
func parseKernelMetadata(p *ir.Parser) (*ir.DialectAttr, error) {
	if err := p.ParsePunct("<"); err != nil {
		return nil, err
	}
	name, err := p.ParseString()
	if err != nil {
		return nil, err
	}
	if err := p.ParsePunct(","); err != nil {
		return nil, err
	}
	fnType, err := p.ParseType()
	if err != nil {
		return nil, failedParam(p, err, "GPU_KernelMetadataAttr", "function_type", "Type")
	}
	var argAttrs, metadata ir.Attribute
	for p.ParseOptionalPunct(",") {
		tok := p.Tok()
		kw, _ := p.ParseOptionalAnyKeyword()
		if kw != "arg_attrs" && kw != "metadata" || kw == "arg_attrs" && argAttrs != nil || kw == "metadata" && metadata != nil {
			return nil, ir.Errorf(p.LocOf(tok), "duplicate or unknown struct parameter name: %s", kw)
		}
		if err := p.ParsePunct("="); err != nil {
			return nil, err
		}
		valueTok := p.Tok()
		a, err := p.ParseAttribute(nil)
		if err != nil {
			return nil, err
		}
		if kw == "metadata" {
			if _, ok := a.(*ir.DictAttr); !ok {
				return nil, ir.Errorf(p.LocOf(valueTok), "invalid kind of attribute specified")
			}
			metadata = a
			continue
		}
		arr, ok := a.(*ir.ArrayAttr)
		if !ok {
			return nil, ir.Errorf(p.LocOf(valueTok), "invalid kind of attribute specified")
		}
		for _, e := range arr.Elems {
			if _, ok := e.(*ir.DictAttr); !ok {
				return nil, ir.Errorf(p.LocOf(valueTok), "all attributes in the array must be a dictionary attribute")
			}
		}
		argAttrs = a
	}
	if err := p.ParsePunct(">"); err != nil {
		return nil, err
	}
	var sb strings.Builder
	sb.WriteString("#gpu.kernel_metadata<" + ir.QuoteString(name) + ", " + fnType.String())
	if argAttrs != nil {
		sb.WriteString(", arg_attrs = " + argAttrs.String())
	}
	if metadata != nil {
		sb.WriteString(", metadata = " + metadata.String())
	}
	sb.WriteString(">")
	return ir.DialectAttrOf("gpu", "kernel_metadata", sb.String(), &kernelMetadata{name}), nil
}

// failedParam adds to err upstream's note on which attribute parameter
// failed to parse, at the current token, as its generated parsers do.
func failedParam(p *ir.Parser, err error, attr, param, kind string) error {
	return append(ir.AsDiagnostics(err), ir.Errorf(p.CurrentLoc(), "failed to parse %s parameter '%s' which is to be a `%s`", attr, param, kind))
}
