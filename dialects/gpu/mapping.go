package gpu

import (
	"strconv"

	"github.com/tmac-dev/tmac/ir"
)

// The device mapping attributes of upstream's GPU dialect, which name the
// ids an scf.forall's loops are spread over: #gpu.block<x>,
// #gpu.warpgroup<y>, #gpu.warp<z>, #gpu.thread<linear_dim_0>,
// #gpu.lane<x>, #gpu.mask<bits> and #gpu.memory_space<workgroup>.

// mappingAttrClasses names each id mapping's attribute class and
// parameter, for upstream's parse errors.
var mappingAttrClasses = map[string][2]string{
	"block":     {"GPUBlockMappingAttr", "block"},
	"warpgroup": {"GPUWarpgroupMappingAttr", "warpgroup"},
	"warp":      {"GPUWarpMappingAttr", "warp"},
	"thread":    {"GPUThreadMappingAttr", "thread"},
	"lane":      {"GPULaneMappingAttr", "lane"},
}

var mappingIDs = []string{"x", "y", "z", "linear_dim_0", "linear_dim_1", "linear_dim_2", "linear_dim_3",
	"linear_dim_4", "linear_dim_5", "linear_dim_6", "linear_dim_7", "linear_dim_8", "linear_dim_9"}

// MappingAttr is the parameter of a device mapping attribute: the id
// (x, y, z, linear_dim_N) of an id mapping, the bits of #gpu.mask, or
// the address space of #gpu.memory_space.
type MappingAttr struct {
	Kind  string
	ID    string
	Mask  uint64
	Space string
}

// parseMappingAttr parses the parameters of a device mapping attribute
// after its mnemonic; ok is false when mnemonic names none.
func parseMappingAttr(p *ir.Parser, mnemonic string) (a ir.Attribute, ok bool, err error) {
	class, isID := mappingAttrClasses[mnemonic]
	if !isID && mnemonic != "mask" && mnemonic != "memory_space" {
		return nil, false, nil
	}
	if err := p.ParsePunct("<"); err != nil {
		return nil, true, err
	}
	m := &MappingAttr{Kind: mnemonic}
	var param string
	switch {
	case isID:
		tok := p.Tok()
		kw, _ := p.ParseOptionalAnyKeyword()
		if !validMappingID(kw) {
			return nil, true, ir.DiagList{
				ir.Errorf(p.LocOf(tok), "expected ::mlir::gpu::MappingId to be one of: x, y, z, linear_dim_0, linear_dim_1, linear_dim_2, linear_dim_3, linear_dim_4, linear_dim_5, linear_dim_6, linear_dim_7, linear_dim_8, linear_dim_9"),
				ir.Errorf(p.CurrentLoc(), "failed to parse %s parameter '%s' which is to be a `::mlir::gpu::MappingId`", class[0], class[1]),
			}
		}
		m.ID, param = kw, kw
	case mnemonic == "mask":
		tok := p.Tok()
		v, isInt, err := p.ParseOptionalInteger()
		if err != nil {
			return nil, true, err
		}
		if !isInt {
			return nil, true, ir.DiagList{
				ir.Errorf(p.LocOf(tok), "expected integer value"),
				ir.Errorf(p.LocOf(tok), "failed to parse GPUMappingMaskAttr parameter 'mask' which is to be a `uint64_t`"),
			}
		}
		m.Mask, param = uint64(v), strconv.FormatUint(uint64(v), 10)
	default:
		tok := p.Tok()
		kw, _ := p.ParseOptionalAnyKeyword()
		switch kw {
		case "global", "workgroup", "private":
		default:
			return nil, true, ir.DiagList{
				ir.Errorf(p.LocOf(tok), "expected ::mlir::gpu::AddressSpace to be one of: global, workgroup, private"),
				ir.Errorf(p.CurrentLoc(), "failed to parse GPUMemorySpaceMappingAttr parameter 'address_space' which is to be a `::mlir::gpu::AddressSpace`"),
			}
		}
		m.Space, param = kw, kw
	}
	if err := p.ParsePunct(">"); err != nil {
		return nil, true, err
	}
	return ir.DialectAttrOf("gpu", mnemonic, "#gpu."+mnemonic+"<"+param+">", m), true, nil
}

func validMappingID(s string) bool {
	for _, id := range mappingIDs {
		if s == id {
			return true
		}
	}
	return false
}
