package gpu

import (
	"strings"

	"github.com/tmac-dev/tmac/ir"
)

// An enum is one of the gpu dialect's keyword enum attributes, printed
// #gpu<mnemonic value> (and the bare value inside an op's custom form).
type enum struct {
	mnemonic string
	cpp      string // the C++ enum upstream's diagnostics name
	attrName string // and its attribute class
	values   []string
}

// The gpu enum attributes beside #gpu<dim> and #gpu.address_space.
var (
	ShuffleMode = defEnum("shuffle_mode", "ShuffleMode", "", "xor", "up", "down", "idx")
	// ReduceOp is the reduction of gpu.all_reduce and gpu.subgroup_reduce.
	ReduceOp       = defEnum("all_reduce_op", "AllReduceOperation", "", "add", "mul", "minui", "minsi", "minnumf", "maxui", "maxsi", "maxnumf", "and", "or", "xor", "minimumf", "maximumf")
	BroadcastType  = defEnum("broadcast", "BroadcastType", "", "first_active_lane", "specific_lane")
	MMAElementwise = defEnum("mma_element_wise", "MMAElementwiseOp", "MMAElementWiseAttr", "addf", "mulf", "subf", "maxf", "minf", "divf", "addi", "muli", "subi", "divs", "divu", "negatef", "negates", "extf")
	MatTranspose   = defEnum("mat_transpose_mode", "TransposeMode", "", "NON_TRANSPOSE", "TRANSPOSE", "CONJUGATE_TRANSPOSE")
	Prune2To4      = defEnum("prune_2to4_spmat_flag", "Prune2To4SpMatFlag", "", "NONE", "PRUNE_ONLY", "PRUNE_AND_CHECK")
	SpGEMMKind     = defEnum("spgemm_work_estimation_or_compute_kind", "SpGEMMWorkEstimationOrComputeKind", "", "WORK_ESTIMATION", "COMPUTE")
)

var enums = map[string]*enum{}

// defEnum defines an enum; attrName is its attribute class when not
// GPU_<cpp>Attr.
func defEnum(mnemonic, cpp, attrName string, values ...string) *enum {
	if attrName == "" {
		attrName = "GPU_" + cpp + "Attr"
	}
	e := &enum{mnemonic: mnemonic, cpp: cpp, attrName: attrName, values: values}
	enums[mnemonic] = e
	return e
}

// Attr returns #gpu<mnemonic v>; v must be one of the enum's values.
func (e *enum) Attr(v string) *ir.DialectAttr {
	return ir.DialectAttrOf("gpu", e.mnemonic, "#gpu<"+e.mnemonic+" "+v+">", &enumValue{e, v})
}

type enumValue struct {
	enum  *enum
	value string
}

// Value returns the keyword of a, or "" when a is not of this enum.
func (e *enum) Value(a ir.Attribute) string {
	if d := ir.AttrData[enumValue](a); d != nil && d.enum == e {
		return d.value
	}
	return ""
}

// enumConstraints are the descriptions of the enum constraints: an enum
// property holding another attribute fails upstream's property conversion.
var enumConstraints = map[string]bool{}

func (e *enum) constraint(desc string) ir.AttrConstraint {
	enumConstraints[desc] = true
	return ir.AttrConstraint{Desc: desc, OK: func(a ir.Attribute) bool { return e.Value(a) != "" }}
}

// parse reads the value keyword; prefix starts the messages ("custom op
// 'gpu.shuffle' " inside an op's custom form). The second message is at
// the token after the keyword, where upstream reports it.
func (e *enum) parse(p *ir.Parser, prefix string) (ir.Attribute, error) {
	tok := p.Tok()
	kw, _ := p.ParseOptionalAnyKeyword()
	for _, v := range e.values {
		if v == kw {
			return e.Attr(v), nil
		}
	}
	return nil, ir.DiagList{
		ir.Errorf(p.LocOf(tok), "%sexpected ::mlir::gpu::%s to be one of: %s", prefix, e.cpp, strings.Join(e.values, ", ")),
		ir.Errorf(p.CurrentLoc(), "%sfailed to parse %s parameter 'value' which is to be a `::mlir::gpu::%s`", prefix, e.attrName, e.cpp),
	}
}

// syntax is the enum as an op's custom form writes it: the bare keyword,
// which upstream's enum printer precedes with its own space.
func (e *enum) syntax(opName string) *ir.AttrSyntax {
	return &ir.AttrSyntax{
		Parse: func(p *ir.Parser) (ir.Attribute, error) { return e.parse(p, "custom op '"+opName+"' ") },
		Print: func(a ir.Attribute) string { return " " + e.Value(a) },
	}
}

// enumAttr is the spec of a required enum property.
func (e *enum) attr(opName, name, desc string) ir.AttrSpec {
	return ir.AttrSpec{Name: name, Constraint: e.constraint(desc), Syntax: e.syntax(opName)}
}
