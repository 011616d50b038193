// Package nvvm registers the nvvm dialect (the Hopper subset produced by the
// nvgpu-to-nvvm lowering): special registers, barriers, fences, mbarriers,
// TMA copies, cp.async, warp-level ops, ld/stmatrix and wgmma, its enum
// attributes and #nvvm.target.
package nvvm

import (
	"fmt"
	"strings"

	"github.com/tmac-dev/tmac/ir"
)

// enumDef describes an NVVM enum attribute.
type enumDef struct {
	mnemonic string
	cpp      string // C++ enum name used in diagnostics
	attrName string // C++ attribute class name
	values   []string
	bare     bool   // #nvvm<mnemonic value> (keyword syntax) instead of #nvvm.mnemonic<value>
	i32Desc  string // I32Enum-style diagnostics ("NVVM Prefetch Cache Level")
}

var enums = map[string]*enumDef{}

func defEnum(e *enumDef) *enumDef {
	if e.attrName == "" {
		e.attrName = e.cpp + "Attr"
	}
	enums[e.mnemonic] = e
	return e
}

// Enum attribute kinds.
var (
	MemScope       = defEnum(&enumDef{mnemonic: "mem_scope", cpp: "MemScopeKind", values: []string{"cta", "cluster", "gpu", "sys"}})
	ProxyKind      = defEnum(&enumDef{mnemonic: "proxy_kind", cpp: "ProxyKind", values: []string{"alias", "async", "async.global", "async.shared", "tensormap", "generic"}})
	SharedSpace    = defEnum(&enumDef{mnemonic: "shared_space", cpp: "SharedSpace", values: []string{"cta", "cluster"}})
	Reduction      = defEnum(&enumDef{mnemonic: "reduction", cpp: "BarrierReduction", values: []string{"popc", "and", "or"}})
	TMALoadMode    = defEnum(&enumDef{mnemonic: "tma_load_mode", cpp: "TMALoadMode", values: []string{"tile", "im2col", "im2col_w", "im2col_w_128", "tile_gather4"}})
	TMAStoreMode   = defEnum(&enumDef{mnemonic: "tma_store_mode", cpp: "TMAStoreMode", values: []string{"tile", "im2col", "tile_scatter4"}})
	CTAGroup       = defEnum(&enumDef{mnemonic: "cta_group", cpp: "CTAGroupKind", values: []string{"cta_1", "cta_2"}})
	MMALayout      = defEnum(&enumDef{mnemonic: "mma_layout", cpp: "MMALayout", values: []string{"row", "col"}})
	MMAIntOverflow = defEnum(&enumDef{mnemonic: "mma_int_overflow", cpp: "MMAIntOverflow", values: []string{"satfinite", "wrapped"}})
	WGMMAType      = defEnum(&enumDef{mnemonic: "wgmma_type", cpp: "WGMMATypes", values: []string{"f16", "tf32", "u8", "s8", "b1", "bf16", "e4m3", "e5m2", "f32", "s32"}})
	WGMMAScaleIn   = defEnum(&enumDef{mnemonic: "wgmma_scale_in", cpp: "WGMMAScaleIn", values: []string{"one", "neg"}})
	WGMMAScaleOut  = defEnum(&enumDef{mnemonic: "wgmma_scale_out", cpp: "WGMMAScaleOut", values: []string{"zero", "one"}})
	LdStEltType    = defEnum(&enumDef{mnemonic: "ld_st_matrix_elt_type", cpp: "LdStMatrixEltType", values: []string{"b16", "b8", "b8x16.b6x16_p32", "b8x16.b4x16_p64"}})

	ShflKind      = defEnum(&enumDef{mnemonic: "shfl_kind", cpp: "ShflKind", bare: true, values: []string{"bfly", "up", "down", "idx"}})
	VoteSyncKind  = defEnum(&enumDef{mnemonic: "vote_sync_kind", cpp: "VoteSyncKind", bare: true, values: []string{"any", "all", "ballot", "uni"}})
	MaxRegAction  = defEnum(&enumDef{mnemonic: "action", cpp: "SetMaxRegisterAction", bare: true, values: []string{"decrease", "increase"}})
	LoadCacheMod  = defEnum(&enumDef{mnemonic: "load_cache_modifier", cpp: "LoadCacheModifierKind", attrName: "LoadCacheModifierAttr", bare: true, values: []string{"ca", "cg", "cs", "lu", "cv"}})
	PrefetchLevel = defEnum(&enumDef{mnemonic: "prefetch_cache_level", cpp: "PrefetchCacheLevel", bare: true, i32Desc: "NVVM Prefetch Cache Level", values: []string{"L1", "L2"}})
	EvictPriority = defEnum(&enumDef{mnemonic: "cache_eviction_priority", cpp: "CacheEvictionPriority", bare: true, i32Desc: "NVVM Cache Eviction Priority", values: []string{"evict_normal", "evict_first", "evict_last", "evict_unchanged", "no_allocate"}})
)

// EnumData is the payload of an NVVM enum attribute.
type EnumData struct {
	Kind  string // the mnemonic, e.g. "wgmma_type"
	Value string // the keyword, e.g. "f16"
	Index int    // position in the enum's value list
}

// Attr returns the enum attribute with the given value (which must exist).
func (e *enumDef) Attr(v string) *ir.DialectAttr {
	idx := -1
	for i, x := range e.values {
		if x == v {
			idx = i
		}
	}
	if idx < 0 {
		panic("nvvm: bad enum value " + v + " for " + e.mnemonic)
	}
	text := "#nvvm." + e.mnemonic + "<" + v + ">"
	if e.bare {
		text = "#nvvm<" + e.mnemonic + " " + v + ">"
	}
	return ir.DialectAttrOf("nvvm", e.mnemonic, text, &EnumData{Kind: e.mnemonic, Value: v, Index: idx})
}

// Is reports whether a is an attribute of this enum.
func (e *enumDef) Is(a ir.Attribute) bool {
	d := enumData(a)
	return d != nil && d.Kind == e.mnemonic
}

// Constraint is the attribute constraint for this enum.
func (e *enumDef) Constraint(desc string) ir.AttrConstraint {
	return ir.AttrConstraint{Desc: desc, OK: e.Is}
}

func enumData(a ir.Attribute) *EnumData { return ir.AttrData[EnumData](a) }

// EnumValue returns the keyword of an NVVM enum attribute ("" if a is not one).
func EnumValue(a ir.Attribute) string {
	if d := enumData(a); d != nil {
		return d.Value
	}
	return ""
}

// parseValue parses the enum keyword; prefix is "custom op 'x' " when the
// value is parsed by an op's custom syntax.
func (e *enumDef) parseValue(p *ir.Parser, prefix string) (ir.Attribute, error) {
	tok := p.Tok()
	kw, ok := p.ParseOptionalAnyKeyword()
	if ok {
		for _, v := range e.values {
			if v == kw {
				return e.Attr(v), nil
			}
		}
	}
	var first string
	if e.i32Desc != "" {
		first = fmt.Sprintf("%sexpected one of [%s] for %s, got: %s", prefix, strings.Join(e.values, ", "), e.i32Desc, kw)
	} else {
		first = fmt.Sprintf("%sexpected ::mlir::NVVM::%s to be one of: %s", prefix, e.cpp, strings.Join(e.values, ", "))
	}
	d1 := ir.Errorf(p.LocOf(tok), "%s", first)
	// Upstream reports the second error at the token after the keyword
	// (the next line when the keyword ends one).
	d2 := ir.Errorf(p.LocOf(p.Tok()), "%sfailed to parse %s parameter 'value' which is to be a `::mlir::NVVM::%s`", prefix, e.attrName, e.cpp)
	return nil, ir.DiagList{d1, d2}
}

// syntax is how the enum is written inside op name's custom form: stripped
// (`<value>`, or ` value` for keyword enums), full form also accepted.
func (e *enumDef) syntax(opName string) *ir.AttrSyntax {
	prefix := "custom op '" + opName + "' "
	if e.bare {
		return &ir.AttrSyntax{
			Parse: func(p *ir.Parser) (ir.Attribute, error) {
				if p.Tok().Kind == ir.TokHash {
					return p.ParseAttribute(nil)
				}
				return e.parseValue(p, prefix)
			},
			Print: func(a ir.Attribute) string {
				if d := enumData(a); d != nil {
					return " " + d.Value
				}
				return a.String()
			},
			CanStart: func(p *ir.Parser) bool { return p.Tok().Kind == ir.TokBareID || p.Tok().Kind == ir.TokHash },
		}
	}
	return &ir.AttrSyntax{
		Parse: func(p *ir.Parser) (ir.Attribute, error) {
			if !p.IsPunct("<") {
				return p.ParseAttribute(nil)
			}
			p.ParsePunct("<")
			a, err := e.parseValue(p, prefix)
			if err != nil {
				return nil, err
			}
			return a, p.ParsePunct(">")
		},
		Print: func(a ir.Attribute) string {
			if d := enumData(a); d != nil {
				return "<" + d.Value + ">"
			}
			return a.String()
		},
		CanStart: func(p *ir.Parser) bool { return p.IsPunct("<") || p.Tok().Kind == ir.TokHash },
	}
}

// ShapeData is #nvvm.shape<m = M, n = N, k = K> (K is 0 for
// #nvvm.ld_st_matrix_shape<m = M, n = N>).
type ShapeData struct{ M, N, K int64 }

func shapeBody(d *ShapeData, withK bool) string {
	if withK {
		return fmt.Sprintf("<m = %d, n = %d, k = %d>", d.M, d.N, d.K)
	}
	return fmt.Sprintf("<m = %d, n = %d>", d.M, d.N)
}

// Shape returns #nvvm.shape<m, n, k>.
func Shape(m, n, k int64) *ir.DialectAttr {
	d := &ShapeData{m, n, k}
	return ir.DialectAttrOf("nvvm", "shape", "#nvvm.shape"+shapeBody(d, true), d)
}

// LdStMatrixShape returns #nvvm.ld_st_matrix_shape<m, n>.
func LdStMatrixShape(m, n int64) *ir.DialectAttr {
	d := &ShapeData{M: m, N: n}
	return ir.DialectAttrOf("nvvm", "ld_st_matrix_shape", "#nvvm.ld_st_matrix_shape"+shapeBody(d, false), d)
}

// ShapeOf returns the parameters of a shape attribute, or nil.
func ShapeOf(a ir.Attribute) *ShapeData { return ir.AttrData[ShapeData](a) }

func parseShapeBody(p *ir.Parser, keys []string) (map[string]int64, error) {
	if err := p.ParsePunct("<"); err != nil {
		return nil, err
	}
	vals := map[string]int64{}
	for len(vals) < len(keys) {
		if len(vals) > 0 {
			if err := p.ParsePunct(","); err != nil {
				return nil, err
			}
		}
		tok := p.Tok()
		k, err := p.ParseAnyKeyword()
		if err != nil {
			return nil, err
		}
		known := false
		for _, x := range keys {
			if x == k {
				known = true
			}
		}
		if _, dup := vals[k]; dup || !known {
			return nil, ir.Errorf(p.LocOf(tok), "duplicate or unknown struct parameter name: %s", k)
		}
		if err := p.ParsePunct("="); err != nil {
			return nil, err
		}
		v, err := p.ParseInteger()
		if err != nil {
			return nil, err
		}
		vals[k] = v
	}
	return vals, p.ParsePunct(">")
}

func shapeSyntax() *ir.AttrSyntax {
	return &ir.AttrSyntax{
		Parse: func(p *ir.Parser) (ir.Attribute, error) {
			if !p.IsPunct("<") {
				return p.ParseAttribute(nil)
			}
			v, err := parseShapeBody(p, []string{"m", "n", "k"})
			if err != nil {
				return nil, err
			}
			return Shape(v["m"], v["n"], v["k"]), nil
		},
		Print: func(a ir.Attribute) string {
			if d := ShapeOf(a); d != nil {
				return shapeBody(d, true)
			}
			return a.String()
		},
	}
}

// TargetData holds the parameters of #nvvm.target.
type TargetData struct {
	O            int64
	Triple       string
	Chip         string
	Features     string
	Flags        ir.Attribute // dictionary, or nil
	Link         ir.Attribute // array of strings, or nil
	VerifyTarget bool
}

// Target defaults.
const (
	DefaultTriple = "nvptx64-nvidia-cuda"
	DefaultChip   = "sm_50"
	DefaultO      = 2
)

// Target returns the #nvvm.target attribute with the given parameters.
func Target(d TargetData) *ir.DialectAttr {
	var parts []string
	if d.O != DefaultO {
		parts = append(parts, fmt.Sprintf("O = %d", d.O))
	}
	if d.Triple != DefaultTriple {
		parts = append(parts, "triple = "+ir.QuoteString(d.Triple))
	}
	if d.Chip != DefaultChip {
		parts = append(parts, "chip = "+ir.QuoteString(d.Chip))
	}
	if d.Features != "" {
		parts = append(parts, "features = "+ir.QuoteString(d.Features))
	}
	if d.Flags != nil {
		parts = append(parts, "flags = "+d.Flags.String())
	}
	if d.Link != nil {
		parts = append(parts, "link = "+d.Link.String())
	}
	if !d.VerifyTarget {
		parts = append(parts, "verifyTarget = false")
	}
	text := "#nvvm.target"
	if len(parts) > 0 {
		text += "<" + strings.Join(parts, ", ") + ">"
	}
	dd := d
	return ir.DialectAttrOf("nvvm", "target", text, &dd)
}

// TargetOf returns the parameters of an #nvvm.target attribute, or nil.
func TargetOf(a ir.Attribute) *TargetData { return ir.AttrData[TargetData](a) }

func parseTarget(p *ir.Parser) (ir.Attribute, error) {
	d := TargetData{O: DefaultO, Triple: DefaultTriple, Chip: DefaultChip, VerifyTarget: true}
	if !p.ParseOptionalPunct("<") {
		return Target(d), nil
	}
	seen := map[string]bool{}
	first := true
	for !p.ParseOptionalPunct(">") {
		if !first {
			if err := p.ParsePunct(","); err != nil {
				return nil, err
			}
		}
		first = false
		tok := p.Tok()
		k, err := p.ParseAnyKeyword()
		if err != nil {
			return nil, err
		}
		if seen[k] {
			return nil, ir.Errorf(p.LocOf(tok), "duplicate or unknown struct parameter name: %s", k)
		}
		seen[k] = true
		if err := p.ParsePunct("="); err != nil {
			return nil, err
		}
		vtok := p.Tok()
		switch k {
		case "O":
			v, err := p.ParseInteger()
			if err != nil {
				return nil, err
			}
			if v < 0 || v > 3 {
				return nil, ir.Errorf(p.LocOf(vtok), "The optimization level must be a number between 0 and 3.")
			}
			d.O = v
		case "triple", "chip", "features":
			s, err := p.ParseString()
			if err != nil {
				return nil, err
			}
			switch k {
			case "triple":
				if s == "" {
					return nil, ir.Errorf(p.LocOf(vtok), "The target triple cannot be empty.")
				}
				d.Triple = s
			case "chip":
				if s == "" {
					return nil, ir.Errorf(p.LocOf(vtok), "The target chip cannot be empty.")
				}
				d.Chip = s
			default:
				d.Features = s
			}
		case "flags":
			a, err := p.ParseAttribute(nil)
			if err != nil {
				return nil, err
			}
			d.Flags = a
		case "link":
			a, err := p.ParseAttribute(nil)
			if err != nil {
				return nil, err
			}
			d.Link = a
		case "verifyTarget":
			switch {
			case p.ParseOptionalKeyword("true"):
				d.VerifyTarget = true
			case p.ParseOptionalKeyword("false"):
				d.VerifyTarget = false
			default:
				return nil, p.Errorf("expected 'true' or 'false'")
			}
		default:
			return nil, ir.Errorf(p.LocOf(tok), "duplicate or unknown struct parameter name: %s", k)
		}
	}
	return Target(d), nil
}

// SMVersion parses a chip name "sm_90a" into (90, arch-specific).
func SMVersion(chip string) (version int, archSpecific bool, ok bool) {
	if !strings.HasPrefix(chip, "sm_") {
		return 0, false, false
	}
	s := chip[3:]
	if strings.HasSuffix(s, "a") {
		archSpecific = true
		s = s[:len(s)-1]
	} else if strings.HasSuffix(s, "f") {
		s = s[:len(s)-1]
	}
	if s == "" {
		return 0, false, false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false, false
		}
		version = version*10 + int(c-'0')
	}
	return version, archSpecific, true
}

func parseAttr(p *ir.Parser, mnemonic string) (ir.Attribute, error) {
	if e, ok := enums[mnemonic]; ok {
		if e.bare {
			return e.parseValue(p, "")
		}
		if err := p.ParsePunct("<"); err != nil {
			return nil, err
		}
		a, err := e.parseValue(p, "")
		if err != nil {
			return nil, err
		}
		return a, p.ParsePunct(">")
	}
	switch mnemonic {
	case "shape":
		v, err := parseShapeBody(p, []string{"m", "n", "k"})
		if err != nil {
			return nil, err
		}
		return Shape(v["m"], v["n"], v["k"]), nil
	case "ld_st_matrix_shape":
		v, err := parseShapeBody(p, []string{"m", "n"})
		if err != nil {
			return nil, err
		}
		return LdStMatrixShape(v["m"], v["n"]), nil
	case "target":
		return parseTarget(p)
	}
	return nil, p.Errorf("unknown attribute `%s` in dialect `nvvm`", mnemonic)
}

func init() {
	ir.RegisterDialect(&ir.Dialect{
		Name:            "nvvm",
		Summary:         "NVIDIA NVVM IR ops (Hopper subset)",
		ParseAttr:       parseAttr,
		AllowUnknownOps: true,
		VerifyOpAttr:    verifyOpAttr,
	})
}

// verifyOpAttr checks the discardable nvvm.* attributes the dialect knows.
func verifyOpAttr(op *ir.Operation, a ir.NamedAttr) error {
	if a.Name == "nvvm.kernel" && op.Name() != "llvm.func" {
		return op.EmitError("'nvvm.kernel' attribute attached to unexpected op")
	}
	return nil
}
