package gpu

import (
	"strings"

	"github.com/tmac-dev/tmac/ir"
)

// The objects of gpu.binary: #gpu.object<target, [properties = {...},]
// [kernels = ...,] [format =] "object">, as upstream's ObjectAttr writes
// them. The format is offload, assembly, bin or fatbin; fatbin, the
// default, is not printed.

var objectFormats = map[string]bool{"offload": true, "assembly": true, "bin": true, "fatbin": true}

func parseObjectAttr(p *ir.Parser) (ir.Attribute, error) {
	if err := p.ParsePunct("<"); err != nil {
		return nil, err
	}
	target, err := p.ParseAttribute(nil)
	if err != nil {
		return nil, err
	}
	if err := p.ParsePunct(","); err != nil {
		return nil, err
	}
	var sb strings.Builder
	sb.WriteString("#gpu.object<" + target.String())
	for _, param := range []string{"properties", "kernels"} {
		if !p.ParseOptionalKeyword(param) {
			continue
		}
		if err := p.ParsePunct("="); err != nil {
			return nil, err
		}
		var text string
		if param == "kernels" {
			a, err := parseGPUAttrOrBare(p, "kernel_table", parseKernelTable)
			if err != nil {
				return nil, failedParam(p, err, "GPU_ObjectAttr", "kernels", "KernelTableAttr")
			}
			text = strings.TrimPrefix(a.String(), kernelTablePrefix)
		} else {
			a, err := p.ParseAttribute(nil)
			if err != nil {
				return nil, err
			}
			text = a.String()
		}
		if err := p.ParsePunct(","); err != nil {
			return nil, err
		}
		sb.WriteString(", " + param + " = " + text)
	}
	format := "fatbin"
	tok := p.Tok()
	if kw, ok := p.ParseOptionalAnyKeyword(); ok {
		if !objectFormats[kw] {
			return nil, ir.Errorf(p.LocOf(tok), "expected keyword for GPU object format")
		}
		if !p.ParseOptionalPunct("=") {
			// Upstream reports the missing '=' and then the format.
			return nil, ir.DiagList{
				ir.Errorf(p.CurrentLoc(), "expected '='"),
				ir.Errorf(p.LocOf(tok), "expected an equal sign"),
			}
		}
		format = kw
	}
	object, err := p.ParseString()
	if err != nil {
		return nil, err
	}
	if err := p.ParsePunct(">"); err != nil {
		return nil, err
	}
	sb.WriteString(", ")
	if format != "fatbin" {
		sb.WriteString(format + " = ")
	}
	sb.WriteString(ir.QuoteString(object) + ">")
	return ir.DialectAttrOf("gpu", "object", sb.String(), target), nil
}

// objectsC is the objects attribute of gpu.binary.
var objectsC = ir.AttrConstraint{Desc: "an array of GPU object attributes with at least 1 elements", OK: func(a ir.Attribute) bool {
	arr, ok := a.(*ir.ArrayAttr)
	if !ok || len(arr.Elems) == 0 {
		return false
	}
	for _, e := range arr.Elems {
		if d, ok := e.(*ir.DialectAttr); !ok || d.Dialect != "gpu" || d.Name != "object" {
			return false
		}
	}
	return true
}}
