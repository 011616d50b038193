package plan

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/tmac-dev/tmac/dialects/nvgpu"
	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/kernelabi"
	"github.com/tmac-dev/tmac/runtime/buffer"
	"github.com/tmac-dev/tmac/runtime/cuda"
)

// Mem is a memref value on the host side of the plan: device memory (Dev)
// or host memory (Host), with its element type, sizes and strides (in
// elements) and offset.
type Mem struct {
	Dev      uint64
	Host     []byte
	Elem     ir.Type
	ElemSize int
	Shape    []int64
	Strides  []int64
	Offset   int64
}

// OnDevice reports whether m lives in device memory.
func (m *Mem) OnDevice() bool { return m.Host == nil }

// Elems is the number of elements of m.
func (m *Mem) Elems() int64 {
	n := int64(1)
	for _, d := range m.Shape {
		n *= d
	}
	return n
}

// Bytes is the extent of m in bytes (contiguous layouts).
func (m *Mem) Bytes() int { return int(m.Elems()) * m.ElemSize }

// Contiguous reports whether m is dense row-major.
func (m *Mem) Contiguous() bool {
	s := int64(1)
	for i := len(m.Shape) - 1; i >= 0; i-- {
		if m.Shape[i] != 1 && m.Strides[i] != s {
			return false
		}
		s *= m.Shape[i]
	}
	return true
}

// NewMem describes a dense row-major memref of the given shape.
func NewMem(elem ir.Type, shape []int64) (*Mem, error) {
	es, err := buffer.ElemSize(elem)
	if err != nil {
		return nil, err
	}
	m := &Mem{Elem: elem, ElemSize: es, Shape: append([]int64(nil), shape...), Strides: make([]int64, len(shape))}
	s := int64(1)
	for i := len(shape) - 1; i >= 0; i-- {
		if shape[i] < 0 {
			return nil, fmt.Errorf("size %d of dimension %d is negative or dynamic", shape[i], i)
		}
		m.Strides[i] = s
		s *= shape[i]
	}
	return m, nil
}

// TensorMap is an encoded CUtensorMap (128 bytes).
type TensorMap struct {
	Desc  *cuda.TiledDesc
	Bytes []byte
}

// Token is an async token (all work runs on the default stream).
type Token struct{}

// Value is a host value: int64 (integers, index, i1), float64, *Mem,
// *TensorMap or Token.
type Value any

// TiledDesc computes the cuTensorMapEncodeTiled parameters of a tensor map
// with descriptor type d over memref m, with the given box (outermost
// dimension first, as in the IR), and validates them.
func TiledDesc(d *nvgpu.TensorMapDescriptor, m *Mem, box []int64) (*cuda.TiledDesc, error) {
	rank := len(m.Shape)
	dt, err := checkDescriptor(d, m.Elem, rank, box)
	if err != nil {
		return nil, err
	}
	if !m.OnDevice() {
		return nil, fmt.Errorf("the memref is in host memory; a tensor map needs device memory")
	}
	if rank > 0 && m.Strides[rank-1] != 1 {
		return nil, fmt.Errorf("the innermost dimension has stride %d; a tensor map needs it contiguous", m.Strides[rank-1])
	}
	td := &cuda.TiledDesc{
		DataType:    dt,
		Global:      cuda.DevicePtr(m.Dev + uint64(m.Offset)*uint64(m.ElemSize)),
		Dims:        make([]uint64, rank),
		Strides:     make([]uint64, 0, rank),
		Box:         make([]uint32, rank),
		Interleave:  cuda.TensorMapInterleave(d.Interleave),
		Swizzle:     cuda.TensorMapSwizzle(d.Swizzle),
		L2Promotion: cuda.TensorMapL2Promotion(d.L2Promo),
		OOBFill:     cuda.TensorMapOOBFill(d.OOB),
	}
	// The driver's dimension 0 is the innermost one.
	for i := 0; i < rank; i++ {
		td.Dims[i] = uint64(m.Shape[rank-1-i])
		if box[rank-1-i] < 0 || box[rank-1-i] > math.MaxUint32 {
			return nil, fmt.Errorf("box size %d is out of range", box[rank-1-i])
		}
		td.Box[i] = uint32(box[rank-1-i])
	}
	for i := 1; i < rank; i++ {
		td.Strides = append(td.Strides, uint64(m.Strides[rank-1-i]*int64(m.ElemSize)))
	}
	if err := cuda.ValidateTiled(td); err != nil {
		return nil, err
	}
	return td, nil
}

// checkDescriptor checks a tensor map descriptor against the element type
// and rank of its memref and the box, and returns the driver's data type.
func checkDescriptor(d *nvgpu.TensorMapDescriptor, elem ir.Type, rank int, box []int64) (cuda.TensorMapDataType, error) {
	dt, err := TensorMapDataType(d.Tensor.ElementType())
	if err != nil {
		return 0, err
	}
	if !sameType(d.Tensor.ElementType(), elem) {
		return 0, fmt.Errorf("the descriptor's elements are %s but the memref holds %s", d.Tensor.ElementType(), elem)
	}
	if len(box) != rank {
		return 0, fmt.Errorf("a box of rank %d for a memref of rank %d", len(box), rank)
	}
	if tb := d.Tensor.Shape(); len(tb) == rank {
		for i := range tb {
			if tb[i] != box[i] {
				return 0, fmt.Errorf("the box %v differs from the descriptor's tensor shape %v", box, tb)
			}
		}
	}
	return dt, nil
}

func sameType(a, b ir.Type) bool { return a.String() == b.String() }

// TensorMapDataType maps an element type to the driver's data type.
func TensorMapDataType(t ir.Type) (cuda.TensorMapDataType, error) {
	switch t := t.(type) {
	case *ir.FloatType:
		switch t.Kind {
		case ir.F16:
			return cuda.TensorMapFloat16, nil
		case ir.BF16:
			return cuda.TensorMapBFloat16, nil
		case ir.F32:
			return cuda.TensorMapFloat32, nil
		case ir.TF32:
			return cuda.TensorMapTFloat32, nil
		case ir.F64:
			return cuda.TensorMapFloat64, nil
		case ir.F8E4M3FN, ir.F8E5M2:
			return cuda.TensorMapUint8, nil
		}
	case *ir.IntegerType:
		switch t.Width {
		case 8:
			return cuda.TensorMapUint8, nil
		case 16:
			return cuda.TensorMapUint16, nil
		case 32:
			return cuda.TensorMapInt32, nil
		case 64:
			return cuda.TensorMapInt64, nil
		}
	}
	return 0, fmt.Errorf("a tensor map cannot hold '%s' elements", t)
}

// PackParams lays out the kernel parameters of a launch: for each
// kernelabi.Param the bytes of its value (memref base pointers, dynamic
// offsets, sizes and strides as i64, scalars in their own width, tensor
// maps as their 128 bytes).
func PackParams(k *Kernel, args []Value) ([][]byte, error) {
	if len(args) != len(k.Args) {
		return nil, fmt.Errorf("kernel %s takes %d arguments, %d given", k.Name, len(k.Args), len(args))
	}
	out := make([][]byte, 0, len(k.Params))
	u64 := func(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }
	for _, p := range k.Params {
		a := args[p.Arg]
		switch p.Role {
		case kernelabi.RoleBase, kernelabi.RoleOffset, kernelabi.RoleSize, kernelabi.RoleStride:
			m, ok := a.(*Mem)
			if !ok {
				return nil, fmt.Errorf("kernel %s argument #%d: a memref is expected", k.Name, p.Arg)
			}
			switch p.Role {
			case kernelabi.RoleBase:
				if !m.OnDevice() {
					return nil, fmt.Errorf("kernel %s argument #%d: the memref is in host memory", k.Name, p.Arg)
				}
				// The offset is passed separately when dynamic; a static
				// offset is applied by the kernel from the type. Both index
				// from the base pointer.
				out = append(out, u64(m.Dev))
			case kernelabi.RoleOffset:
				out = append(out, u64(uint64(m.Offset)))
			case kernelabi.RoleSize:
				out = append(out, u64(uint64(m.Shape[p.Dim])))
			case kernelabi.RoleStride:
				out = append(out, u64(uint64(m.Strides[p.Dim])))
			}
		case kernelabi.RoleTensorMap:
			tm, ok := a.(*TensorMap)
			if !ok {
				return nil, fmt.Errorf("kernel %s argument #%d: a tensor map is expected", k.Name, p.Arg)
			}
			out = append(out, append([]byte(nil), tm.Bytes...))
		case kernelabi.RoleScalar:
			b, err := scalarBytes(k.Args[p.Arg], a)
			if err != nil {
				return nil, fmt.Errorf("kernel %s argument #%d: %v", k.Name, p.Arg, err)
			}
			out = append(out, b)
		}
	}
	return out, nil
}

// scalarBytes encodes a scalar argument as the kernel parameter of type t.
func scalarBytes(t ir.Type, v Value) ([]byte, error) {
	switch t := t.(type) {
	case *ir.IndexType:
		i, ok := v.(int64)
		if !ok {
			return nil, fmt.Errorf("an integer is expected")
		}
		return binary.LittleEndian.AppendUint64(nil, uint64(i)), nil
	case *ir.IntegerType:
		i, ok := v.(int64)
		if !ok {
			return nil, fmt.Errorf("an integer is expected")
		}
		n := (t.Width + 7) / 8
		if t.Width == 1 {
			n = 1
		}
		b := binary.LittleEndian.AppendUint64(nil, uint64(i))
		return b[:n], nil
	case *ir.FloatType:
		f, ok := v.(float64)
		if !ok {
			return nil, fmt.Errorf("a float is expected")
		}
		switch t.Kind {
		case ir.F32, ir.TF32:
			return binary.LittleEndian.AppendUint32(nil, math.Float32bits(float32(f))), nil
		case ir.F64:
			return binary.LittleEndian.AppendUint64(nil, math.Float64bits(f)), nil
		default:
			b, err := buffer.New(t, []int64{1})
			if err != nil {
				return nil, err
			}
			b.SetFloat(0, f)
			return b.Bytes, nil
		}
	}
	return nil, fmt.Errorf("scalar type '%s' cannot be passed to a kernel by the host plan", t)
}
