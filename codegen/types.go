package codegen

import (
	"errors"
	"fmt"
	"strings"

	"github.com/llir/llvm/ir/constant"
	"github.com/llir/llvm/ir/types"
	"github.com/llir/llvm/ir/value"

	"github.com/tmac-dev/tmac/dialects/llvm"
	"github.com/tmac-dev/tmac/dialects/nvgpu"
	"github.com/tmac-dev/tmac/ir"
)

// BFloat is LLVM's bfloat type, which llir/llvm v0.3.6 lacks.
var BFloat types.Type = &bfloatType{}

type bfloatType struct{ name string }

func (t *bfloatType) String() string {
	if t.name != "" {
		return "%" + t.name
	}
	return "bfloat"
}
func (t *bfloatType) LLString() string        { return "bfloat" }
func (t *bfloatType) Equal(u types.Type) bool { _, ok := u.(*bfloatType); return ok }
func (t *bfloatType) Name() string            { return t.name }
func (t *bfloatType) SetName(name string)     { t.name = name }

// BFloatConst is a bfloat constant written as LLVM's 0xR hex form.
type BFloatConst struct{ Bits uint16 }

func (c *BFloatConst) String() string   { return "bfloat " + c.Ident() }
func (c *BFloatConst) Type() types.Type { return BFloat }
func (c *BFloatConst) Ident() string    { return fmt.Sprintf("0xR%04X", c.Bits) }
func (c *BFloatConst) IsConstant()      {}

var _ constant.Constant = (*BFloatConst)(nil)

// TensorMapType is the by-value CUtensorMap parameter type.
var TensorMapType = types.NewArray(128, types.I8)

// addrSpace maps a memref memory space to an NVPTX address space: none and
// 0 are generic (kernel pointer parameters are inferred global by llc),
// others keep their number (1 global, 3 shared, 4 constant, 5 local).
func addrSpace(space ir.Attribute) (types.AddrSpace, bool) {
	n, ok := ir.MemorySpaceNumber(space)
	if !ok || n < 0 {
		return 0, false
	}
	return types.AddrSpace(n), true
}

// PtrTo returns the typed pointer elem addrspace(as)*.
func PtrTo(elem types.Type, as types.AddrSpace) *types.PointerType {
	p := types.NewPointer(elem)
	p.AddrSpace = as
	return p
}

// MaxIntBits is the widest integer type LLVM has (2^23 bits).
const MaxIntBits = 1 << 23

// MaxVectorElements bounds the vectors code generation lowers: a larger
// one could never live in a thread's registers, and lowering it element by
// element (a broadcast's shuffle mask, a constant) took minutes.
const MaxVectorElements = 4096

// vectorTooLarge reports a vector of more than MaxVectorElements.
func vectorTooLarge(t *ir.VectorType) (string, bool) {
	n := ir.NumElements(t.Shape())
	if t.Scalable != nil || n <= MaxVectorElements {
		return "", false
	}
	return fmt.Sprintf("'%s' has %d elements; tmac compiles vectors of at most %d (a thread's registers hold 255 x 32 bits)", t, n, MaxVectorElements), true
}

// LLType maps a tmac IR type to an LLVM type. Memrefs and tensor maps have
// no single LLVM type (they are lowered to several values) and are rejected.
func LLType(t ir.Type) (types.Type, error) {
	switch t := t.(type) {
	case *ir.IntegerType:
		if t.Width > MaxIntBits {
			return nil, fmt.Errorf("'%s' is wider than LLVM's widest integer type, i%d", t, MaxIntBits)
		}
		return types.NewInt(uint64(t.Width)), nil
	case *ir.IndexType:
		return types.I64, nil
	case *ir.FloatType:
		switch t.Kind {
		case ir.F16:
			return types.Half, nil
		case ir.BF16:
			return BFloat, nil
		case ir.F32, ir.TF32:
			return types.Float, nil
		case ir.F64:
			return types.Double, nil
		case ir.F8E4M3FN, ir.F8E5M2:
			// LLVM has no fp8 type: fp8 values are bytes, converted with
			// the NVVM cvt intrinsics.
			return types.I8, nil
		}
	case *ir.VectorType:
		// A vector of any rank is one LLVM vector of its elements in
		// row-major order (vector<2x4xf32> is <8 x float>, vector<f32> is
		// <1 x float>): elementwise ops need no change, and the vector ops
		// (codegen/vector*.go) become shuffles over the flat lanes.
		if t.Scalable != nil {
			return nil, fmt.Errorf("scalable vectors such as '%s' cannot be compiled: NVIDIA GPUs have no scalable vector registers", t)
		}
		if msg, bad := vectorTooLarge(t); bad {
			return nil, errors.New(msg)
		}
		elem, err := LLType(t.Elem)
		if err != nil {
			return nil, err
		}
		return types.NewVector(uint64(ir.NumElements(t.Shape())), elem), nil
	case *ir.DialectType:
		if t.Dialect == "llvm" {
			return llvmDialectType(t)
		}
		if nvgpu.IsMBarrierToken(t) {
			return types.I64, nil
		}
	}
	return nil, fmt.Errorf("type '%s' cannot be lowered to an LLVM value", t)
}

func llvmDialectType(t *ir.DialectType) (types.Type, error) {
	if as, ok := llvm.PtrAddrSpace(t); ok {
		return PtrTo(types.I8, types.AddrSpace(as)), nil
	}
	if sd := llvm.StructOf(t); sd != nil {
		var fs []types.Type
		for _, f := range sd.Body {
			ft, err := LLType(f)
			if err != nil {
				return nil, err
			}
			fs = append(fs, ft)
		}
		st := types.NewStruct(fs...)
		st.Packed = sd.Packed
		return st, nil
	}
	if ad := llvm.ArrayOf(t); ad != nil {
		et, err := LLType(ad.Elem)
		if err != nil {
			return nil, err
		}
		return types.NewArray(uint64(ad.N), et), nil
	}
	if strings.HasPrefix(t.String(), "!llvm.void") {
		return types.Void, nil
	}
	return nil, fmt.Errorf("type '%s' cannot be lowered", t)
}

// zero returns the zero value of an LLVM type.
func zero(t types.Type) value.Value {
	switch t := t.(type) {
	case *types.IntType:
		return constant.NewInt(t, 0)
	case *types.FloatType:
		return constant.NewFloat(t, 0)
	case *bfloatType:
		return &BFloatConst{}
	case *types.PointerType:
		return constant.NewNull(t)
	}
	return constant.NewZeroInitializer(t)
}
