package main

import (
	"encoding/binary"
	"fmt"
	"math"
	"sort"

	"github.com/tmac-dev/tmac/runtime/cuda"
)

// elemKind is the element type of a device buffer. Host data is generated
// as float32 and converted (rounded) to the kind; the buffer keeps the
// converted values as float32 (each is exactly representable), so
// references computed from them in float64 see exactly what the GPU sees.
type elemKind int

const (
	kF32  elemKind = iota
	kTF32          // stored as f32 with the low 13 mantissa bits zero
	kF16
	kBF16
	kE4M3 // f8E4M3FN
)

var kindNames = []string{"f32", "tf32", "f16", "bf16", "f8E4M3FN"}

func (k elemKind) String() string { return kindNames[k] }

// size is the number of bytes per element in device memory.
func (k elemKind) size() int {
	switch k {
	case kF16, kBF16:
		return 2
	case kE4M3:
		return 1
	}
	return 4
}

// kindOf maps an MLIR element type name to a kind.
func kindOf(mlir string) (elemKind, error) {
	for k, n := range kindNames {
		if n == mlir {
			return elemKind(k), nil
		}
	}
	return 0, fmt.Errorf("element type %s is not supported by the launcher", mlir)
}

// tmapType is the CUtensorMapDataType for a kind: fp8 travels as bytes,
// tf32 as f32 (the values are already tf32).
func (k elemKind) tmapType() cuda.TensorMapDataType {
	switch k {
	case kF16:
		return cuda.TensorMapFloat16
	case kBF16:
		return cuda.TensorMapBFloat16
	case kE4M3:
		return cuda.TensorMapUint8
	}
	return cuda.TensorMapFloat32
}

// round returns x converted to the kind, as a float32.
func (k elemKind) round(x float32) float32 {
	switch k {
	case kTF32:
		return roundTF32(x)
	case kF16:
		return f16ToF32(f32ToF16(x))
	case kBF16:
		return bf16ToF32(f32ToBF16(x))
	case kE4M3:
		return e4m3ToF32(f32ToE4M3(x))
	}
	return x
}

// encode writes values (already representable) in the kind's format.
func (k elemKind) encode(x []float32) []byte {
	b := make([]byte, k.size()*len(x))
	for i, v := range x {
		switch k {
		case kF32, kTF32:
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
		case kF16:
			binary.LittleEndian.PutUint16(b[2*i:], f32ToF16(v))
		case kBF16:
			binary.LittleEndian.PutUint16(b[2*i:], f32ToBF16(v))
		case kE4M3:
			b[i] = f32ToE4M3(v)
		}
	}
	return b
}

// decode reads n values of the kind.
func (k elemKind) decode(b []byte) []float32 {
	x := make([]float32, len(b)/k.size())
	for i := range x {
		switch k {
		case kF32, kTF32:
			x[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		case kF16:
			x[i] = f16ToF32(binary.LittleEndian.Uint16(b[2*i:]))
		case kBF16:
			x[i] = bf16ToF32(binary.LittleEndian.Uint16(b[2*i:]))
		case kE4M3:
			x[i] = e4m3ToF32(b[i])
		}
	}
	return x
}

// roundTF32 rounds to 10 mantissa bits, to nearest even.
func roundTF32(x float32) float32 {
	u := math.Float32bits(x)
	if u&0x7f800000 == 0x7f800000 {
		return x
	}
	u += 0xfff + (u>>13)&1
	return math.Float32frombits(u &^ 0x1fff)
}

// f32ToF16 converts to IEEE binary16, rounding to nearest even.
func f32ToF16(x float32) uint16 {
	u := math.Float32bits(x)
	sign := uint16(u>>16) & 0x8000
	exp := int(u>>23) & 0xff
	man := u & 0x7fffff
	switch {
	case exp == 0xff: // inf, NaN
		if man != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	case exp-127 > 15: // overflow
		return sign | 0x7c00
	}
	e := exp - 127 + 15
	if e <= 0 { // subnormal or zero in f16
		if e < -10 {
			return sign
		}
		m := man | 0x800000
		shift := uint(14 - e) // 13 + (1 - e)
		h := m >> shift
		rem := m & (1<<shift - 1)
		half := uint32(1) << (shift - 1)
		if rem > half || (rem == half && h&1 == 1) {
			h++
		}
		return sign | uint16(h)
	}
	h := uint32(e)<<10 | man>>13
	rem := man & 0x1fff
	if rem > 0x1000 || (rem == 0x1000 && h&1 == 1) {
		h++ // may carry into the exponent, up to infinity: correct
	}
	return sign | uint16(h)
}

func f16ToF32(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := int(h>>10) & 0x1f
	man := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | man<<13)
	case exp == 0:
		v := float32(man) / (1 << 24)
		if sign != 0 {
			return -v
		}
		return v
	}
	return math.Float32frombits(sign | uint32(exp-15+127)<<23 | man<<13)
}

func f32ToBF16(x float32) uint16 {
	u := math.Float32bits(x)
	if u&0x7fffffff > 0x7f800000 {
		return uint16(u>>16) | 0x40
	}
	u += 0x7fff + (u>>16)&1
	return uint16(u >> 16)
}

func bf16ToF32(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// e4m3ToF32 decodes f8E4M3FN: bias 7, no infinities, S.1111.111 is NaN.
func e4m3ToF32(b uint8) float32 {
	sign := float32(1)
	if b&0x80 != 0 {
		sign = -1
	}
	exp := int(b>>3) & 0xf
	man := int(b & 7)
	if exp == 0xf && man == 7 {
		return float32(math.NaN())
	}
	if exp == 0 {
		return sign * float32(man) / 8 / 64 // 2^-6 * man/8
	}
	return sign * float32(math.Ldexp(1+float64(man)/8, exp-7))
}

// e4m3Pos holds the non-negative finite e4m3 values by code (0..126),
// increasing.
var e4m3Pos = func() []float32 {
	v := make([]float32, 127)
	for i := range v {
		v[i] = e4m3ToF32(uint8(i))
	}
	return v
}()

// f32ToE4M3 rounds to nearest even, saturating to ±448; NaN stays NaN.
func f32ToE4M3(x float32) uint8 {
	if x != x {
		return 0x7f
	}
	var sign uint8
	if math.Signbit(float64(x)) {
		sign, x = 0x80, -x
	}
	if x >= 448 {
		return sign | 126
	}
	i := sort.Search(len(e4m3Pos), func(i int) bool { return e4m3Pos[i] >= x })
	if e4m3Pos[i] == x || i == 0 {
		return sign | uint8(i)
	}
	lo, hi := e4m3Pos[i-1], e4m3Pos[i]
	switch {
	case x-lo < hi-x:
		i--
	case x-lo == hi-x && (i-1)&1 == 0:
		i--
	}
	return sign | uint8(i)
}
