package cuda

import (
	"fmt"
	"runtime"
	"unsafe"
)

// TMA tensor maps (CUtensorMap) built with cuTensorMapEncodeTiled.
//
// The driver rejects a bad description with a bare
// CUDA_ERROR_INVALID_VALUE, so EncodeTiled checks the documented
// constraints first (ValidateTiled) and says which one is broken.

// TensorMapDataType is a CUtensorMapDataType.
type TensorMapDataType uint32

const (
	TensorMapUint8       TensorMapDataType = 0
	TensorMapUint16      TensorMapDataType = 1
	TensorMapUint32      TensorMapDataType = 2
	TensorMapInt32       TensorMapDataType = 3
	TensorMapUint64      TensorMapDataType = 4
	TensorMapInt64       TensorMapDataType = 5
	TensorMapFloat16     TensorMapDataType = 6
	TensorMapFloat32     TensorMapDataType = 7
	TensorMapFloat64     TensorMapDataType = 8
	TensorMapBFloat16    TensorMapDataType = 9
	TensorMapFloat32FTZ  TensorMapDataType = 10
	TensorMapTFloat32    TensorMapDataType = 11
	TensorMapTFloat32FTZ TensorMapDataType = 12
)

var dataTypeNames = map[TensorMapDataType]string{
	TensorMapUint8: "uint8", TensorMapUint16: "uint16", TensorMapUint32: "uint32",
	TensorMapInt32: "int32", TensorMapUint64: "uint64", TensorMapInt64: "int64",
	TensorMapFloat16: "float16", TensorMapFloat32: "float32", TensorMapFloat64: "float64",
	TensorMapBFloat16: "bfloat16", TensorMapFloat32FTZ: "float32_ftz",
	TensorMapTFloat32: "tfloat32", TensorMapTFloat32FTZ: "tfloat32_ftz",
}

func (t TensorMapDataType) String() string {
	if s, ok := dataTypeNames[t]; ok {
		return s
	}
	return fmt.Sprintf("CUtensorMapDataType(%d)", uint32(t))
}

// Size returns the element size in bytes (0 for an unknown type).
func (t TensorMapDataType) Size() int {
	switch t {
	case TensorMapUint8:
		return 1
	case TensorMapUint16, TensorMapFloat16, TensorMapBFloat16:
		return 2
	case TensorMapUint32, TensorMapInt32, TensorMapFloat32, TensorMapFloat32FTZ, TensorMapTFloat32, TensorMapTFloat32FTZ:
		return 4
	case TensorMapUint64, TensorMapInt64, TensorMapFloat64:
		return 8
	}
	return 0
}

func (t TensorMapDataType) isFloat() bool {
	switch t {
	case TensorMapFloat16, TensorMapFloat32, TensorMapFloat64, TensorMapBFloat16,
		TensorMapFloat32FTZ, TensorMapTFloat32, TensorMapTFloat32FTZ:
		return true
	}
	return false
}

// TensorMapInterleave is a CUtensorMapInterleave.
type TensorMapInterleave uint32

const (
	InterleaveNone TensorMapInterleave = 0
	Interleave16B  TensorMapInterleave = 1
	Interleave32B  TensorMapInterleave = 2
)

// TensorMapSwizzle is a CUtensorMapSwizzle.
type TensorMapSwizzle uint32

const (
	SwizzleNone TensorMapSwizzle = 0
	Swizzle32B  TensorMapSwizzle = 1
	Swizzle64B  TensorMapSwizzle = 2
	Swizzle128B TensorMapSwizzle = 3
)

// Span returns the swizzle span in bytes (0 for none).
func (s TensorMapSwizzle) Span() int {
	switch s {
	case Swizzle32B:
		return 32
	case Swizzle64B:
		return 64
	case Swizzle128B:
		return 128
	}
	return 0
}

// TensorMapL2Promotion is a CUtensorMapL2promotion.
type TensorMapL2Promotion uint32

const (
	L2PromotionNone TensorMapL2Promotion = 0
	L2Promotion64B  TensorMapL2Promotion = 1
	L2Promotion128B TensorMapL2Promotion = 2
	L2Promotion256B TensorMapL2Promotion = 3
)

// TensorMapOOBFill is a CUtensorMapFloatOOBfill.
type TensorMapOOBFill uint32

const (
	// OOBFillNone fills out-of-bounds elements with zero.
	OOBFillNone TensorMapOOBFill = 0
	// OOBFillNaN fills out-of-bounds elements with NaN (floating types only).
	OOBFillNaN TensorMapOOBFill = 1
)

// TiledDesc describes a tiled tensor map. All arrays are in the driver's
// order: dimension 0 is the innermost (contiguous) one.
type TiledDesc struct {
	DataType TensorMapDataType
	// Global is the device address of the tensor's first element.
	Global DevicePtr
	// Dims are the tensor's sizes in elements (rank entries).
	Dims []uint64
	// Strides are the byte strides of dimensions 1..rank-1 (rank-1
	// entries; dimension 0 is contiguous).
	Strides []uint64
	// Box is the tile brought in by one TMA operation, in elements.
	Box []uint32
	// ElementStrides are the traversal strides (1 = every element); nil
	// means all ones.
	ElementStrides []uint32
	Interleave     TensorMapInterleave
	Swizzle        TensorMapSwizzle
	L2Promotion    TensorMapL2Promotion
	OOBFill        TensorMapOOBFill
}

// ValidateTiled checks d against the constraints that
// cuTensorMapEncodeTiled documents, with a message naming the broken one.
func ValidateTiled(d *TiledDesc) error {
	rank := len(d.Dims)
	es := d.DataType.Size()
	if es == 0 {
		return fmt.Errorf("tensor map: unsupported data type %d", uint32(d.DataType))
	}
	if rank < 1 || rank > 5 {
		return fmt.Errorf("tensor map: rank %d is not supported (1 to 5)", rank)
	}
	if d.Interleave > Interleave32B {
		return fmt.Errorf("tensor map: unknown interleave mode %d", uint32(d.Interleave))
	}
	if d.Swizzle > Swizzle128B {
		return fmt.Errorf("tensor map: unknown swizzle mode %d", uint32(d.Swizzle))
	}
	if d.L2Promotion > L2Promotion256B {
		return fmt.Errorf("tensor map: unknown L2 promotion mode %d", uint32(d.L2Promotion))
	}
	if d.OOBFill > OOBFillNaN {
		return fmt.Errorf("tensor map: unknown out-of-bounds fill mode %d", uint32(d.OOBFill))
	}
	if d.Interleave != InterleaveNone && rank < 3 {
		return fmt.Errorf("tensor map: an interleaved layout needs rank 3 to 5, not %d", rank)
	}
	addrAlign := uint64(16)
	if d.Interleave == Interleave32B {
		addrAlign = 32
	}
	if uint64(d.Global)%addrAlign != 0 {
		return fmt.Errorf("tensor map: global address %#x is not %d-byte aligned", uint64(d.Global), addrAlign)
	}
	for i, n := range d.Dims {
		if n == 0 || n > 1<<32 {
			return fmt.Errorf("tensor map: size of dimension %d is %d; it must be 1 to 2^32", i, n)
		}
	}
	if len(d.Strides) != rank-1 {
		return fmt.Errorf("tensor map: %d global strides given for rank %d (want %d: dimension 0 is contiguous)", len(d.Strides), rank, rank-1)
	}
	strideAlign := uint64(16)
	if d.Interleave == Interleave32B {
		strideAlign = 32
	}
	for i, s := range d.Strides {
		if s%strideAlign != 0 {
			return fmt.Errorf("tensor map: global stride of dimension %d is %d bytes, not a multiple of %d", i+1, s, strideAlign)
		}
		if s >= 1<<40 {
			return fmt.Errorf("tensor map: global stride of dimension %d is %d bytes; it must be below 2^40", i+1, s)
		}
	}
	if len(d.Box) != rank {
		return fmt.Errorf("tensor map: %d box sizes given for rank %d", len(d.Box), rank)
	}
	for i, b := range d.Box {
		if b == 0 || b > 256 {
			return fmt.Errorf("tensor map: box size of dimension %d is %d; it must be 1 to 256", i, b)
		}
	}
	innerBytes := int(d.Box[0]) * es
	if d.Interleave == InterleaveNone {
		if innerBytes%16 != 0 {
			return fmt.Errorf("tensor map: inner box dimension is %d bytes (%d x %d); it must be a multiple of 16", innerBytes, d.Box[0], es)
		}
		if span := d.Swizzle.Span(); span > 0 && innerBytes > span {
			return fmt.Errorf("tensor map: inner box dimension is %d bytes, more than the %d-byte swizzle span", innerBytes, span)
		}
	} else if d.Interleave == Interleave32B && d.Swizzle != Swizzle32B {
		return fmt.Errorf("tensor map: 32-byte interleave requires 32-byte swizzle")
	}
	if d.ElementStrides != nil {
		if len(d.ElementStrides) != rank {
			return fmt.Errorf("tensor map: %d element strides given for rank %d", len(d.ElementStrides), rank)
		}
		for i, s := range d.ElementStrides {
			if s == 0 || s > 8 {
				return fmt.Errorf("tensor map: element stride of dimension %d is %d; it must be 1 to 8", i, s)
			}
		}
	}
	if d.OOBFill == OOBFillNaN && !d.DataType.isFloat() {
		return fmt.Errorf("tensor map: NaN out-of-bounds fill needs a floating-point data type, not %s", d.DataType)
	}
	return nil
}

// TensorMap is a 128-byte CUtensorMap, 128-byte aligned in host memory
// (the driver requires 64). Pass Ptr() as a kernel parameter: the driver
// copies the 128 bytes into the by-value parameter.
type TensorMap struct {
	mem []byte // over-allocated backing store
	off int    // offset of the aligned map in mem
}

// TensorMapSize is sizeof(CUtensorMap).
const TensorMapSize = 128

func newTensorMap() *TensorMap {
	mem := make([]byte, 2*TensorMapSize)
	off := int((TensorMapSize - uintptr(unsafe.Pointer(&mem[0]))%TensorMapSize) % TensorMapSize)
	return &TensorMap{mem: mem, off: off}
}

// Bytes returns the 128 bytes of the map.
func (m *TensorMap) Bytes() []byte { return m.mem[m.off : m.off+TensorMapSize] }

// Ptr returns the address of the aligned map.
func (m *TensorMap) Ptr() unsafe.Pointer { return unsafe.Pointer(&m.mem[m.off]) }

var (
	tmapEncode func(m unsafe.Pointer, dt uint32, rank uint32, global uintptr,
		dims, strides *uint64, box, estrides *uint32,
		interleave, swizzle, l2, oob uint32) Result
	tmapSyms = lateSymbols{syms: []symbol{{&tmapEncode, "cuTensorMapEncodeTiled"}}}
)

// EncodeTiled validates d and builds its tensor map with the driver.
func EncodeTiled(d *TiledDesc) (*TensorMap, error) {
	if err := ValidateTiled(d); err != nil {
		return nil, err
	}
	if err := tmapSyms.load(); err != nil {
		return nil, err
	}
	rank := len(d.Dims)
	dims := append([]uint64(nil), d.Dims...)
	// The driver reads rank-1 strides; keep one spare element so the
	// slice is never empty.
	strides := append(append([]uint64(nil), d.Strides...), 0)
	box := append([]uint32(nil), d.Box...)
	es := d.ElementStrides
	if es == nil {
		es = make([]uint32, rank)
		for i := range es {
			es[i] = 1
		}
	}
	es = append([]uint32(nil), es...)
	m := newTensorMap()
	var pin runtime.Pinner
	pin.Pin(&dims[0])
	pin.Pin(&strides[0])
	pin.Pin(&box[0])
	pin.Pin(&es[0])
	pin.Pin(&m.mem[0])
	defer pin.Unpin()
	r := tmapEncode(m.Ptr(), uint32(d.DataType), uint32(rank), uintptr(d.Global),
		&dims[0], &strides[0], &box[0], &es[0],
		uint32(d.Interleave), uint32(d.Swizzle), uint32(d.L2Promotion), uint32(d.OOBFill))
	if err := check("cuTensorMapEncodeTiled", r); err != nil {
		return nil, fmt.Errorf("%v (%s, dims %v, strides %v, box %v, swizzle %d)", err, d.DataType, d.Dims, d.Strides, d.Box, d.Swizzle)
	}
	return m, nil
}
