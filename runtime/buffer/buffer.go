// Package buffer holds host copies of memref data, shared by the runtime's
// host plan (which uploads and downloads them) and the reference
// interpreter (which computes on them). Elements are stored exactly as on
// the device: contiguous, row-major, little-endian, in the memref's element
// encoding (f16, bf16, fp8 and tf32 included), so uploads are plain copies.
package buffer

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand"

	"github.com/tmac-dev/tmac/ir"
)

// Buffer is a dense row-major array of one element type.
type Buffer struct {
	Elem  ir.Type
	Shape []int64
	Bytes []byte
}

// ElemSize returns the storage size of one element in bytes.
func ElemSize(t ir.Type) (int, error) {
	switch t := t.(type) {
	case *ir.IntegerType:
		if t.Width == 1 {
			return 1, nil
		}
		if t.Width%8 != 0 || t.Width > 64 {
			return 0, fmt.Errorf("element type '%s' is not supported in host buffers", t)
		}
		return t.Width / 8, nil
	case *ir.IndexType:
		return 8, nil
	case *ir.FloatType:
		switch t.Kind {
		case ir.F8E4M3FN, ir.F8E5M2:
			return 1, nil
		case ir.F16, ir.BF16:
			return 2, nil
		case ir.F32, ir.TF32:
			return 4, nil
		case ir.F64:
			return 8, nil
		}
	}
	return 0, fmt.Errorf("element type '%s' is not supported in host buffers", t)
}

// MaxBytes bounds the size of one buffer.
const MaxBytes = 1 << 36

// New allocates a zeroed buffer.
func New(elem ir.Type, shape []int64) (*Buffer, error) {
	size, err := ElemSize(elem)
	if err != nil {
		return nil, err
	}
	for _, d := range shape {
		if d < 0 {
			return nil, fmt.Errorf("buffer shape %v has a dynamic or negative dimension", shape)
		}
	}
	bytes, ok := ir.ShapeBytes(shape, 8*size)
	if !ok {
		return nil, fmt.Errorf("%s", ir.TooLarge(ir.MemRefTypeOf(shape, elem, nil, nil)))
	}
	if bytes > MaxBytes {
		return nil, fmt.Errorf("a buffer of %d elements of %d bytes (%d bytes) is larger than the %d GiB tmac allocates at most", bytes/int64(size), size, bytes, MaxBytes>>30)
	}
	return &Buffer{Elem: elem, Shape: append([]int64(nil), shape...), Bytes: make([]byte, bytes)}, nil
}

// Len returns the number of elements.
func (b *Buffer) Len() int {
	size, _ := ElemSize(b.Elem)
	return len(b.Bytes) / size
}

// IsFloat reports whether the elements are floating point.
func (b *Buffer) IsFloat() bool { return ir.IsFloat(b.Elem) }

// Float returns element i as a float64 (integers are converted).
func (b *Buffer) Float(i int) float64 {
	switch t := b.Elem.(type) {
	case *ir.FloatType:
		if t.Kind == ir.TF32 {
			// tf32 lives in memory as an f32 whose low 13 mantissa bits are zero.
			return float64(math.Float32frombits(uint32(b.bits(i))))
		}
		return ir.FloatFromBits(b.bits(i), t.Kind)
	case *ir.IntegerType:
		if t.Signedness == ir.Unsigned {
			return float64(uint64(b.Int(i)))
		}
	}
	return float64(b.Int(i))
}

// SetFloat stores v in element i, rounding to the element type.
func (b *Buffer) SetFloat(i int, v float64) {
	switch t := b.Elem.(type) {
	case *ir.FloatType:
		if t.Kind == ir.TF32 {
			b.setBits(i, uint64(math.Float32bits(float32(ir.RoundToFloatKind(v, ir.TF32)))))
			return
		}
		b.setBits(i, ir.FloatToBits(ir.RoundToFloatKind(v, t.Kind), t.Kind))
	default:
		b.SetInt(i, int64(v))
	}
}

// Int returns element i as an int64 (sign-extended for signless and
// signed integers).
func (b *Buffer) Int(i int) int64 {
	if ir.IsFloat(b.Elem) {
		return int64(b.Float(i))
	}
	size, _ := ElemSize(b.Elem)
	raw := b.bits(i)
	if it, ok := b.Elem.(*ir.IntegerType); ok && it.Width == 1 {
		return int64(raw & 1)
	}
	if it, ok := b.Elem.(*ir.IntegerType); ok && it.Signedness == ir.Unsigned {
		return int64(raw)
	}
	shift := uint(64 - 8*size)
	return int64(raw<<shift) >> shift
}

// SetInt stores v in element i, truncated to the element width.
func (b *Buffer) SetInt(i int, v int64) {
	if ir.IsFloat(b.Elem) {
		b.SetFloat(i, float64(v))
		return
	}
	b.setBits(i, uint64(v))
}

func (b *Buffer) bits(i int) uint64 {
	size, _ := ElemSize(b.Elem)
	p := b.Bytes[i*size : (i+1)*size]
	switch size {
	case 1:
		return uint64(p[0])
	case 2:
		return uint64(binary.LittleEndian.Uint16(p))
	case 4:
		return uint64(binary.LittleEndian.Uint32(p))
	}
	return binary.LittleEndian.Uint64(p)
}

func (b *Buffer) setBits(i int, v uint64) {
	size, _ := ElemSize(b.Elem)
	p := b.Bytes[i*size : (i+1)*size]
	switch size {
	case 1:
		p[0] = byte(v)
	case 2:
		binary.LittleEndian.PutUint16(p, uint16(v))
	case 4:
		binary.LittleEndian.PutUint32(p, uint32(v))
	default:
		binary.LittleEndian.PutUint64(p, v)
	}
}

// Dist selects the distribution of random inputs.
type Dist string

const (
	Normal  Dist = "normal"
	Uniform Dist = "uniform"
	Ints    Dist = "int"
)

// FillRandom fills b with random values: floats from N(0,1) or U(-1,1),
// rounded to the element type; integers uniform in [-8, 8) (or [0, 16) for
// unsigned, {0,1} for i1) so products and sums stay exact.
func (b *Buffer) FillRandom(r *rand.Rand, d Dist) {
	n := b.Len()
	enc := normalEncoder(b.Elem)
	for i := 0; i < n; i++ {
		if b.IsFloat() && d != Ints {
			var v float64
			if d == Uniform {
				v = 2*r.Float64() - 1
			} else {
				v = r.NormFloat64()
			}
			if enc != nil {
				if bits, ok := enc.encode(v); ok {
					enc.put(b.Bytes, i, bits)
					continue
				}
			}
			b.SetFloat(i, v)
			continue
		}
		if it, ok := b.Elem.(*ir.IntegerType); ok && it.Width == 1 {
			b.SetInt(i, r.Int63n(2))
			continue
		}
		if it, ok := b.Elem.(*ir.IntegerType); ok && it.Signedness == ir.Unsigned {
			b.SetInt(i, r.Int63n(16))
			continue
		}
		b.SetFloatOrInt(i, float64(r.Int63n(16)-8))
	}
}

// SetFloatOrInt stores an integral value in either kind of buffer.
func (b *Buffer) SetFloatOrInt(i int, v float64) {
	if b.IsFloat() {
		b.SetFloat(i, v)
	} else {
		b.SetInt(i, int64(v))
	}
}

// Sentinel is the value integer outputs are poisoned with.
const Sentinel = -0x5A5A5A5A5A5A5A5B

// Poison fills b with NaN (floats; for fp8 e4m3, its NaN pattern) or a
// sentinel (integers), so elements a kernel never writes are caught.
func (b *Buffer) Poison() {
	if b.Len() == 0 {
		return
	}
	// Element 0, then its bytes copied over the rest, doubling.
	if b.IsFloat() {
		b.SetFloat(0, math.NaN())
	} else {
		b.SetInt(0, Sentinel)
	}
	size, _ := ElemSize(b.Elem)
	for done := size; done < len(b.Bytes); done *= 2 {
		copy(b.Bytes[done:], b.Bytes[:done])
	}
}

// floatEncoder rounds a float64 to a 16- or 32-bit float format, to
// nearest even, by bit arithmetic: the random inputs of a large GEMM are
// hundreds of millions of values, which SetFloat's general rounding
// (ir.RoundToFloatKind, ir.FloatToBits) takes seconds to convert.
type floatEncoder struct {
	f32            bool
	bias, mantBits int // the format's exponent bias and stored mantissa bits
	size           int // bytes
}

// normalEncoder returns the encoder of t's format, or nil for formats
// without one (SetFloat then rounds every value).
func normalEncoder(t ir.Type) *floatEncoder {
	f, ok := t.(*ir.FloatType)
	if !ok {
		return nil
	}
	switch f.Kind {
	case ir.F32:
		return &floatEncoder{f32: true, size: 4}
	case ir.BF16:
		return &floatEncoder{bias: 127, mantBits: 7, size: 2}
	case ir.F16:
		return &floatEncoder{bias: 15, mantBits: 10, size: 2}
	}
	return nil
}

// encode returns v rounded to the format, as bits, with ok false where it
// leaves v to SetFloat: NaN, infinities, and (16-bit formats) values whose
// result may be zero, subnormal, in the top binade or infinite. The bits
// are those SetFloat stores (TestFloatEncoder).
func (e *floatEncoder) encode(v float64) (uint64, bool) {
	if e.f32 {
		if math.IsNaN(v) {
			return 0, false
		}
		return uint64(math.Float32bits(float32(v))), true // Go converts to nearest even
	}
	b := math.Float64bits(v)
	exp := int(b>>52&0x7ff) - 1023
	// Normal results strictly inside the format's range: exp from the
	// smallest normal's to one below the largest binade's.
	if exp < 1-e.bias || exp >= e.bias {
		return 0, false
	}
	drop := uint(52 - e.mantBits)
	mant := b & (1<<52 - 1)
	r := uint64(exp+e.bias)<<uint(e.mantBits) | mant>>drop
	rest, half := mant&(1<<drop-1), uint64(1)<<(drop-1)
	if rest > half || rest == half && r&1 == 1 {
		r++ // a carry out of the mantissa moves to the next binade, as it should
	}
	return b>>63<<15 | r, true
}

// put stores bits as element i of a little-endian buffer.
func (e *floatEncoder) put(p []byte, i int, bits uint64) {
	if e.size == 4 {
		binary.LittleEndian.PutUint32(p[4*i:], uint32(bits))
		return
	}
	binary.LittleEndian.PutUint16(p[2*i:], uint16(bits))
}

// Clone returns a deep copy.
func (b *Buffer) Clone() *Buffer {
	return &Buffer{Elem: b.Elem, Shape: append([]int64(nil), b.Shape...), Bytes: append([]byte(nil), b.Bytes...)}
}
