package nvgpu

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tmac-dev/tmac/ir"
)

// Enumerations used as type parameters and attributes.

// SwizzleKind is the TMA shared-memory swizzle mode.
type SwizzleKind int

// L2PromoKind is the TMA L2 promotion mode.
type L2PromoKind int

// OOBKind is the TMA out-of-bounds fill mode.
type OOBKind int

// InterleaveKind is the TMA interleave mode.
type InterleaveKind int

// RcpRoundingMode is the rounding mode of nvgpu.rcp.
type RcpRoundingMode int

const (
	SwizzleNone SwizzleKind = iota
	Swizzle32B
	Swizzle64B
	Swizzle128B
)

const (
	L2PromoNone L2PromoKind = iota
	L2Promo64B
	L2Promo128B
	L2Promo256B
)

const (
	OOBZero OOBKind = iota
	OOBNaN
)

const (
	InterleaveNone InterleaveKind = iota
	Interleave16B
	Interleave32B
)

const (
	RcpApprox RcpRoundingMode = iota
	RcpRN
	RcpRZ
	RcpRM
	RcpRP
)

var (
	swizzleNames    = []string{"none", "swizzle_32b", "swizzle_64b", "swizzle_128b"}
	l2promoNames    = []string{"none", "l2promo_64b", "l2promo_128b", "l2promo_256b"}
	oobNames        = []string{"zero", "nan"}
	interleaveNames = []string{"none", "interleave_16b", "interleave_32b"}
	rcpNames        = []string{"approx", "rn", "rz", "rm", "rp"}
)

func (k SwizzleKind) String() string     { return swizzleNames[k] }
func (k L2PromoKind) String() string     { return l2promoNames[k] }
func (k OOBKind) String() string         { return oobNames[k] }
func (k InterleaveKind) String() string  { return interleaveNames[k] }
func (k RcpRoundingMode) String() string { return rcpNames[k] }

// Bytes returns the swizzle width in bytes (0 for none).
func (k SwizzleKind) Bytes() int64 {
	switch k {
	case Swizzle32B:
		return 32
	case Swizzle64B:
		return 64
	case Swizzle128B:
		return 128
	}
	return 0
}

// enumInfo describes an enum for parsing: its C++ name (used in messages)
// and its keywords.
type enumInfo struct {
	cxx   string
	names []string
}

var (
	swizzleEnum    = enumInfo{"::mlir::nvgpu::TensorMapSwizzleKind", swizzleNames}
	l2promoEnum    = enumInfo{"::mlir::nvgpu::TensorMapL2PromoKind", l2promoNames}
	oobEnum        = enumInfo{"::mlir::nvgpu::TensorMapOOBKind", oobNames}
	interleaveEnum = enumInfo{"::mlir::nvgpu::TensorMapInterleaveKind", interleaveNames}
	rcpEnum        = enumInfo{"::mlir::nvgpu::RcpRoundingMode", rcpNames}
)

// Type mnemonics.
const (
	tensorMapName   = "tensormap.descriptor"
	mbarGroupName   = "mbarrier.group"
	mbarTokenName   = "mbarrier.token"
	wgDescName      = "warpgroup.descriptor"
	wgAccName       = "warpgroup.accumulator"
	asyncTokenName  = "device.async.token"
	dialectName     = "nvgpu"
	typePrefix      = "!nvgpu."
	tensorMapCxx    = "NVGPU_TensorMapDescriptor"
	wgDescCxx       = "NVGPU_WarpgroupMatrixDescriptor"
	wgAccCxx        = "NVGPU_WarpgroupAccumulator"
	mbarGroupStruct = "NVGPU_MBarrierGroup"
)

// TensorMapDescriptor holds the parameters of !nvgpu.tensormap.descriptor.
type TensorMapDescriptor struct {
	Tensor     *ir.MemRefType
	Swizzle    SwizzleKind
	L2Promo    L2PromoKind
	OOB        OOBKind
	Interleave InterleaveKind
}

// MBarrierGroup holds the parameters of !nvgpu.mbarrier.group.
type MBarrierGroup struct {
	MemorySpace ir.Attribute
	NumBarriers uint32
}

// WarpgroupDescriptor holds the parameter of !nvgpu.warpgroup.descriptor.
type WarpgroupDescriptor struct {
	Tensor *ir.MemRefType
}

// WarpgroupAccumulator holds the parameter of !nvgpu.warpgroup.accumulator.
type WarpgroupAccumulator struct {
	Fragmented *ir.VectorType
}

// TensorMapDescriptorType returns the !nvgpu.tensormap.descriptor type.
func TensorMapDescriptorType(d TensorMapDescriptor) *ir.DialectType {
	text := fmt.Sprintf("%s%s<tensor = %s, swizzle = %s, l2promo = %s, oob = %s, interleave = %s>",
		typePrefix, tensorMapName, d.Tensor, d.Swizzle, d.L2Promo, d.OOB, d.Interleave)
	return ir.DialectTypeOf(dialectName, tensorMapName, text, func() any { c := d; return &c })
}

// MBarrierGroupType returns the !nvgpu.mbarrier.group type.
func MBarrierGroupType(g MBarrierGroup) *ir.DialectType {
	text := typePrefix + mbarGroupName + "<memorySpace = " + g.MemorySpace.String()
	if g.NumBarriers != 1 {
		text += ", num_barriers = " + strconv.FormatUint(uint64(g.NumBarriers), 10)
	}
	text += ">"
	return ir.DialectTypeOf(dialectName, mbarGroupName, text, func() any { c := g; return &c })
}

// WarpgroupDescriptorType returns the !nvgpu.warpgroup.descriptor type.
func WarpgroupDescriptorType(tensor *ir.MemRefType) *ir.DialectType {
	text := typePrefix + wgDescName + "<tensor = " + tensor.String() + ">"
	return ir.DialectTypeOf(dialectName, wgDescName, text, func() any { return &WarpgroupDescriptor{Tensor: tensor} })
}

// WarpgroupAccumulatorType returns the !nvgpu.warpgroup.accumulator type.
func WarpgroupAccumulatorType(v *ir.VectorType) *ir.DialectType {
	text := typePrefix + wgAccName + "<fragmented = " + v.String() + ">"
	return ir.DialectTypeOf(dialectName, wgAccName, text, func() any { return &WarpgroupAccumulator{Fragmented: v} })
}

// MBarrierTokenType returns !nvgpu.mbarrier.token.
func MBarrierTokenType() *ir.DialectType {
	return ir.DialectTypeOf(dialectName, mbarTokenName, typePrefix+mbarTokenName, nil)
}

// DeviceAsyncTokenType returns !nvgpu.device.async.token.
func DeviceAsyncTokenType() *ir.DialectType {
	return ir.DialectTypeOf(dialectName, asyncTokenName, typePrefix+asyncTokenName, nil)
}

func nvgpuType(t ir.Type, name string) (*ir.DialectType, bool) {
	d, ok := t.(*ir.DialectType)
	if !ok || d.Dialect != dialectName || d.Name != name {
		return nil, false
	}
	return d, true
}

// typeParams returns the parameters of t if it is the nvgpu type name.
func typeParams[P any](t ir.Type, name string) (*P, bool) {
	d, ok := nvgpuType(t, name)
	if !ok {
		return nil, false
	}
	return d.Data.(*P), true
}

// AsTensorMapDescriptor returns the parameters of a tensormap descriptor type.
func AsTensorMapDescriptor(t ir.Type) (*TensorMapDescriptor, bool) {
	return typeParams[TensorMapDescriptor](t, tensorMapName)
}

// AsMBarrierGroup returns the parameters of an mbarrier group type.
func AsMBarrierGroup(t ir.Type) (*MBarrierGroup, bool) {
	return typeParams[MBarrierGroup](t, mbarGroupName)
}

// AsWarpgroupDescriptor returns the parameters of a warpgroup descriptor type.
func AsWarpgroupDescriptor(t ir.Type) (*WarpgroupDescriptor, bool) {
	return typeParams[WarpgroupDescriptor](t, wgDescName)
}

// AsWarpgroupAccumulator returns the parameters of an accumulator type.
func AsWarpgroupAccumulator(t ir.Type) (*WarpgroupAccumulator, bool) {
	return typeParams[WarpgroupAccumulator](t, wgAccName)
}

// IsMBarrierToken reports whether t is !nvgpu.mbarrier.token.
func IsMBarrierToken(t ir.Type) bool { _, ok := nvgpuType(t, mbarTokenName); return ok }

// IsDeviceAsyncToken reports whether t is !nvgpu.device.async.token.
func IsDeviceAsyncToken(t ir.Type) bool { _, ok := nvgpuType(t, asyncTokenName); return ok }

// EnumAttr returns an nvgpu enum attribute (#nvgpu<swizzle none>, ...).
func enumAttr(mnemonic string, value int, names []string) *ir.DialectAttr {
	return ir.DialectAttrOf(dialectName, mnemonic, "#nvgpu<"+mnemonic+" "+names[value]+">", value)
}

// RcpRoundingAttr returns #nvgpu<rcp_rounding_mode MODE>.
func RcpRoundingAttr(m RcpRoundingMode) *ir.DialectAttr {
	return enumAttr("rcp_rounding_mode", int(m), rcpNames)
}

// RcpRounding returns the mode of an rcp_rounding_mode attribute.
func RcpRounding(a ir.Attribute) (RcpRoundingMode, bool) {
	d, ok := a.(*ir.DialectAttr)
	if !ok || d.Dialect != dialectName || d.Name != "rcp_rounding_mode" {
		return 0, false
	}
	return RcpRoundingMode(d.Data.(int)), true
}

// StrippedTypeText returns how a type prints inside an op's custom form:
// parameterised nvgpu types lose their `!nvgpu.mnemonic` prefix.
func StrippedTypeText(t ir.Type) string {
	if d, ok := t.(*ir.DialectType); ok && d.Dialect == dialectName {
		switch d.Name {
		case tensorMapName, mbarGroupName, wgDescName, wgAccName:
			return strings.TrimPrefix(t.String(), typePrefix+d.Name)
		}
	}
	return t.String()
}

// --- parsing -------------------------------------------------------------

// tparser wraps the IR parser with the error style of the context: inside
// an op's custom form errors carry the "custom op" prefix.
type tparser struct {
	p    *ir.Parser
	inOp bool
}

func (tp *tparser) errAt(t ir.Token, format string, args ...any) *ir.Diagnostic {
	var err error
	if tp.inOp {
		err = tp.p.CustomOpErrorAt(t, format, args...)
	} else {
		err = tp.p.ErrorAt(t, format, args...)
	}
	return err.(*ir.Diagnostic)
}

func (tp *tparser) fail(t ir.Token, format string, args ...any) error {
	return tp.errAt(t, format, args...)
}

// failParam reports a parameter parse failure: the cause then upstream's
// "failed to parse X parameter" error at the same place.
func (tp *tparser) failParam(t ir.Token, cause *ir.Diagnostic, cxx, param, kind string) error {
	return ir.DiagList{cause, tp.errAt(t, "failed to parse %s parameter '%s' which is to be a `%s`", cxx, param, kind)}
}

func (tp *tparser) parseEnum(e enumInfo) (int, *ir.Diagnostic) {
	tok := tp.p.Tok()
	kw, ok := tp.p.ParseOptionalAnyKeyword()
	if ok {
		for i, n := range e.names {
			if n == kw {
				return i, nil
			}
		}
	}
	if !ok && tok.Kind != ir.TokString {
		return 0, tp.errAt(tok, "expected valid keyword or string")
	}
	return 0, tp.errAt(tok, "expected %s to be one of: %s", e.cxx, strings.Join(e.names, ", "))
}

type structParam struct {
	name     string
	required bool
	parse    func() error
}

// parseStruct parses `<k = v, ...>` with parameters in any order. When all
// parameters are required the parser reads exactly that many, as upstream's
// generated struct parsers do.
func (tp *tparser) parseStruct(params []structParam) error {
	p := tp.p
	if err := p.ParsePunct("<"); err != nil {
		return err
	}
	allRequired := true
	for _, sp := range params {
		if !sp.required {
			allRequired = false
		}
	}
	seen := make([]bool, len(params))
	parseOne := func() error {
		tok := p.Tok()
		kw, ok := p.ParseOptionalAnyKeyword()
		if !ok {
			return tp.fail(tok, "expected a parameter name in struct")
		}
		idx := -1
		for i, sp := range params {
			if sp.name == kw && !seen[i] {
				idx = i
			}
		}
		if idx < 0 {
			return tp.fail(tok, "duplicate or unknown struct parameter name: %s", kw)
		}
		seen[idx] = true
		if err := p.ParsePunct("="); err != nil {
			return err
		}
		return params[idx].parse()
	}
	if allRequired {
		for i := range params {
			if err := parseOne(); err != nil {
				return err
			}
			if i < len(params)-1 {
				if err := p.ParsePunct(","); err != nil {
					return err
				}
			}
		}
		return p.ParsePunct(">")
	}
	for !p.IsPunct(">") {
		if err := parseOne(); err != nil {
			return err
		}
		if !p.ParseOptionalPunct(",") {
			break
		}
	}
	endTok := p.Tok()
	if err := p.ParsePunct(">"); err != nil {
		return err
	}
	for i, sp := range params {
		if sp.required && !seen[i] {
			return tp.fail(endTok, "struct is missing required parameter: %s", sp.name)
		}
	}
	return nil
}

func (tp *tparser) parseMemRefParam(cxx string, out **ir.MemRefType) func() error {
	return func() error {
		tok := tp.p.Tok()
		t, err := tp.p.ParseType()
		if err != nil {
			return err
		}
		m, ok := t.(*ir.MemRefType)
		if !ok {
			cause := tp.errAt(tok, "invalid kind of type specified: expected builtin.memref, but found '%s'", t)
			return tp.failParam(tok, cause, cxx, "tensor", "MemRefType")
		}
		*out = m
		return nil
	}
}

func (tp *tparser) enumParam(e enumInfo, param string, out *int) func() error {
	return func() error {
		tok := tp.p.Tok()
		v, d := tp.parseEnum(e)
		if d != nil {
			return tp.failParam(tok, d, tensorMapCxx, param, e.cxx)
		}
		*out = v
		return nil
	}
}

// parseTypeBody parses the parameters of an nvgpu type (from `<` on, if it
// has any) and returns the type.
func (tp *tparser) parseTypeBody(mnemonic string, mnemonicTok ir.Token) (ir.Type, error) {
	p := tp.p
	switch mnemonic {
	case tensorMapName:
		var d TensorMapDescriptor
		var sw, l2, oob, il int
		err := tp.parseStruct([]structParam{
			{"tensor", true, tp.parseMemRefParam(tensorMapCxx, &d.Tensor)},
			{"swizzle", true, tp.enumParam(swizzleEnum, "swizzle", &sw)},
			{"l2promo", true, tp.enumParam(l2promoEnum, "l2promo", &l2)},
			{"oob", true, tp.enumParam(oobEnum, "oob", &oob)},
			{"interleave", true, tp.enumParam(interleaveEnum, "interleave", &il)},
		})
		if err != nil {
			return nil, err
		}
		d.Swizzle, d.L2Promo, d.OOB, d.Interleave = SwizzleKind(sw), L2PromoKind(l2), OOBKind(oob), InterleaveKind(il)
		return TensorMapDescriptorType(d), nil
	case mbarGroupName:
		g := MBarrierGroup{NumBarriers: 1}
		err := tp.parseStruct([]structParam{
			{"memorySpace", true, func() error {
				a, err := p.ParseAttribute(nil)
				g.MemorySpace = a
				return err
			}},
			{"num_barriers", false, func() error {
				tok := p.Tok()
				v, ok, err := p.ParseOptionalInteger()
				if err != nil {
					return err
				}
				if !ok {
					cause := tp.errAt(tok, "expected integer value")
					return tp.failParam(tok, cause, mbarGroupStruct, "num_barriers", "unsigned")
				}
				g.NumBarriers = uint32(v)
				return nil
			}},
		})
		if err != nil {
			return nil, err
		}
		return MBarrierGroupType(g), nil
	case wgDescName:
		var m *ir.MemRefType
		if err := tp.parseStruct([]structParam{{"tensor", true, tp.parseMemRefParam(wgDescCxx, &m)}}); err != nil {
			return nil, err
		}
		return WarpgroupDescriptorType(m), nil
	case wgAccName:
		var v *ir.VectorType
		err := tp.parseStruct([]structParam{{"fragmented", true, func() error {
			tok := p.Tok()
			t, err := p.ParseType()
			if err != nil {
				return err
			}
			vt, ok := t.(*ir.VectorType)
			if !ok {
				cause := tp.errAt(tok, "invalid kind of type specified: expected builtin.vector, but found '%s'", t)
				return tp.failParam(tok, cause, wgAccCxx, "fragmented", "VectorType")
			}
			v = vt
			return nil
		}}})
		if err != nil {
			return nil, err
		}
		return WarpgroupAccumulatorType(v), nil
	case mbarTokenName, asyncTokenName:
		// An empty `<>` is accepted and dropped.
		if p.IsPunct("<") {
			p.ParsePunct("<")
			if err := p.ParsePunct(">"); err != nil {
				return nil, err
			}
		}
		if mnemonic == mbarTokenName {
			return MBarrierTokenType(), nil
		}
		return DeviceAsyncTokenType(), nil
	}
	return nil, tp.fail(mnemonicTok, "unknown  type `%s` in dialect `nvgpu`", mnemonic)
}

func parseDialectType(p *ir.Parser, mnemonic string) (ir.Type, error) {
	tp := &tparser{p: p}
	return tp.parseTypeBody(mnemonic, p.Tok())
}

var enumAttrs = map[string]enumInfo{
	"swizzle":           swizzleEnum,
	"l2promo":           l2promoEnum,
	"oob":               oobEnum,
	"interleave":        interleaveEnum,
	"rcp_rounding_mode": rcpEnum,
}

var enumAttrCxx = map[string]string{
	"swizzle":           "TensorMapSwizzleAttr",
	"l2promo":           "TensorMapL2PromoAttr",
	"oob":               "TensorMapOOBAttr",
	"interleave":        "TensorMapInterleaveAttr",
	"rcp_rounding_mode": "RcpRoundingModeAttr",
}

func parseDialectAttr(p *ir.Parser, mnemonic string) (ir.Attribute, error) {
	e, ok := enumAttrs[mnemonic]
	if !ok {
		return nil, p.Errorf("unknown attribute `%s` in dialect `nvgpu`", mnemonic)
	}
	tp := &tparser{p: p}
	tok := p.Tok()
	v, d := tp.parseEnum(e)
	if d != nil {
		return nil, tp.failParam(tok, d, enumAttrCxx[mnemonic], "value", e.cxx)
	}
	return enumAttr(mnemonic, v, e.names), nil
}

func init() {
	ir.RegisterDialect(&ir.Dialect{
		Name:      dialectName,
		Summary:   "NVIDIA GPU ops above nvvm: TMA copies and descriptors, mbarriers, warpgroup MMA (wgmma), warp-level MMA and cp.async",
		ParseType: parseDialectType,
		ParseAttr: parseDialectAttr,
	})
}
