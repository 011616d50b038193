// Package gpu registers the gpu dialect: kernel launches, GPU modules and
// functions, index ops, async tokens, memory management and the
// #gpu<dim x> / #gpu.address_space<...> attributes.
package gpu

import (
	"strings"

	"github.com/tmac-dev/tmac/ir"
)

// AsyncToken is the !gpu.async.token type.
var AsyncToken = ir.DialectTypeOf("gpu", "async.token", "!gpu.async.token", nil)

// Dimension values of #gpu<dim ...>.
var dimNames = []string{"x", "y", "z"}

// DimAttr returns #gpu<dim d> for d in x, y, z.
func DimAttr(d string) *ir.DialectAttr {
	return ir.DialectAttrOf("gpu", "dim", "#gpu<dim "+d+">", d)
}

// DimOf returns the dimension letter of a #gpu<dim> attribute, or "".
func DimOf(a ir.Attribute) string {
	if d, ok := a.(*ir.DialectAttr); ok && d.Dialect == "gpu" && d.Name == "dim" {
		s, _ := d.Data.(string)
		return s
	}
	return ""
}

// AddressSpace is the Data of #gpu.address_space<...>.
type AddressSpace string

// MemorySpaceNumber implements ir.MemorySpaceNumberer.
func (a AddressSpace) MemorySpaceNumber() int64 {
	switch a {
	case "global":
		return 1
	case "workgroup":
		return 3
	case "private":
		return 5
	}
	return 0
}

// AddressSpaceAttr returns #gpu.address_space<s>.
func AddressSpaceAttr(s string) *ir.DialectAttr {
	return ir.DialectAttrOf("gpu", "address_space", "#gpu.address_space<"+s+">", AddressSpace(s))
}

// addressSpaceOf returns the gpu address space of a memory space attribute,
// or "" when it is not a #gpu.address_space.
func addressSpaceOf(a ir.Attribute) string {
	if d, ok := a.(*ir.DialectAttr); ok && d.Dialect == "gpu" && d.Name == "address_space" {
		return string(d.Data.(AddressSpace))
	}
	return ""
}

func init() {
	ir.RegisterDialect(&ir.Dialect{
		Name:         "gpu",
		Summary:      "GPU kernels, launches and device-side ops",
		ParseType:    parseType,
		ParseAttr:    parseAttr,
		VerifyOpAttr: verifyOpAttr,
	})
}

// parseDim parses a dimension keyword (x, y or z); errPrefix starts the
// messages ("custom op 'gpu.thread_id' " inside an op's custom form).
func parseDim(p *ir.Parser, errPrefix string) (ir.Attribute, error) {
	tok := p.Tok()
	kw, _ := p.ParseOptionalAnyKeyword()
	for _, d := range dimNames {
		if kw == d {
			return DimAttr(d), nil
		}
	}
	return nil, ir.DiagList{
		ir.Errorf(p.LocOf(tok), "%sexpected ::mlir::gpu::Dimension to be one of: x, y, z", errPrefix),
		ir.Errorf(p.CurrentLoc(), "%sfailed to parse GPU_DimensionAttr parameter 'value' which is to be a `::mlir::gpu::Dimension`", errPrefix),
	}
}

func parseType(p *ir.Parser, mnemonic string) (ir.Type, error) {
	switch mnemonic {
	case "async.token":
		return AsyncToken, nil
	case "mma_matrix":
		return parseMMAMatrix(p, mnemonic)
	}
	if t := sparseHandles[mnemonic]; t != nil {
		return t, nil
	}
	return nil, p.Errorf("unknown gpu type: %s", mnemonic)
}

func parseAttr(p *ir.Parser, mnemonic string) (ir.Attribute, error) {
	switch mnemonic {
	case "dim":
		return parseDim(p, "")
	case "address_space":
		if err := p.ParsePunct("<"); err != nil {
			return nil, err
		}
		tok := p.Tok()
		kw, _ := p.ParseOptionalAnyKeyword()
		switch kw {
		case "global", "workgroup", "private":
		default:
			return nil, ir.DiagList{
				ir.Errorf(p.LocOf(tok), "expected ::mlir::gpu::AddressSpace to be one of: global, workgroup, private"),
				ir.Errorf(p.CurrentLoc(), "failed to parse GPU_AddressSpaceAttr parameter 'value' which is to be a `::mlir::gpu::AddressSpace`"),
			}
		}
		if err := p.ParsePunct(">"); err != nil {
			return nil, err
		}
		return AddressSpaceAttr(kw), nil
	case "select_object":
		if !p.IsPunct("<") {
			return selectObjectDefault, nil
		}
		if err := p.ParsePunct("<"); err != nil {
			return nil, err
		}
		a, err := p.ParseAttribute(nil)
		if err != nil {
			return nil, err
		}
		if err := p.ParsePunct(">"); err != nil {
			return nil, err
		}
		return ir.DialectAttrOf("gpu", "select_object", "#gpu.select_object<"+a.String()+">", a), nil
	case "object":
		return parseObjectAttr(p)
	case "kernel_table", "kernel_metadata":
		parse := parseKernelTable
		if mnemonic == "kernel_metadata" {
			parse = parseKernelMetadata
		}
		a, err := parse(p)
		if err != nil {
			return nil, err // not a typed nil in the interface
		}
		return a, nil
	}
	if e := enums[mnemonic]; e != nil {
		return e.parse(p, "")
	}
	if a, ok, err := parseMappingAttr(p, mnemonic); ok {
		return a, err
	}
	return nil, p.Errorf("unknown gpu attribute: %s", mnemonic)
}

// selectObjectDefault is #gpu.select_object without a parameter, the default
// offloading handler of gpu.binary.
var selectObjectDefault = ir.DialectAttrOf("gpu", "select_object", "#gpu.select_object", nil)

// isTargetAttr reports whether a is a GPU target attribute (#nvvm.target,
// #rocdl.target, ...), registered or kept opaque.
func isTargetAttr(a ir.Attribute) bool {
	switch a := a.(type) {
	case *ir.DialectAttr:
		return a.Name == "target" || a.Name == "target_env"
	case *ir.OpaqueAttr:
		s := a.String()
		for _, pre := range []string{"#nvvm.target", "#rocdl.target", "#xevm.target", "#spirv.target_env"} {
			if s == pre || strings.HasPrefix(s, pre+"<") {
				return true
			}
		}
	}
	return false
}

func verifyOpAttr(op *ir.Operation, attr ir.NamedAttr) error {
	switch attr.Name {
	case "gpu.container_module":
		if _, unit := attr.Value.(*ir.UnitAttr); !unit {
			return nil
		}
		if op.Name() != "builtin.module" {
			return op.EmitError("expected 'gpu.container_module' attribute to be attached to 'builtin.module'")
		}
		return verifyContainerModule(op)
	case "gpu.known_block_size", "gpu.known_grid_size", "gpu.known_cluster_size":
		da, ok := attr.Value.(*ir.DenseArrayAttr)
		if !ok || da.Elem != ir.I32 {
			return op.EmitOpError("%s must be a dense i32 array", attr.Name)
		}
		if da.Len() != 3 {
			return op.EmitOpError("%s must contain exactly 3 elements", attr.Name)
		}
	}
	return nil
}
