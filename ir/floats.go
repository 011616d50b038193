package ir

import (
	"math"
	"math/big"
	"strconv"
	"strings"
)

// floatFormat describes a binary floating-point format.
type floatFormat struct {
	expBits, mantBits int
	bias              int
	hasInf            bool // IEEE-style infinities and NaNs (all-ones exponent)
	fnNaNOnly         bool // "FN" formats: no infinity, NaN is all-ones exponent and mantissa
}

var floatFormats = [...]floatFormat{
	F16:      {5, 10, 15, true, false},
	BF16:     {8, 7, 127, true, false},
	F32:      {8, 23, 127, true, false},
	F64:      {11, 52, 1023, true, false},
	F8E4M3FN: {4, 3, 7, false, true},
	F8E5M2:   {5, 2, 15, true, false},
	TF32:     {8, 10, 127, true, false},
	F80:      {15, 63, 16383, true, false}, // the explicit integer bit is not counted
	F128:     {15, 112, 16383, true, false},
	// Types only (no values, see HoldsValues): the fields give the widths.
	F8E4M3FNUZ:    {4, 3, 8, false, false},
	F8E5M2FNUZ:    {5, 2, 16, false, false},
	F8E4M3B11FNUZ: {4, 3, 11, false, false},
	F8E4M3:        {4, 3, 7, true, false},
	F8E3M4:        {3, 4, 3, true, false},
	F8E8M0FNU:     {8, 0, 127, false, false}, // no sign bit: StorageBits is 9, Width 8
	F4E2M1FN:      {2, 1, 1, false, false},
	F6E2M3FN:      {2, 3, 1, false, false},
	F6E3M2FN:      {3, 2, 3, false, false},
}

// Precision returns the number of significand bits including the implicit one.
func (k FloatKind) Precision() int { return floatFormats[k].mantBits + 1 }

// StorageBits returns the number of bits of the encoding.
func (k FloatKind) StorageBits() int {
	f := floatFormats[k]
	return 1 + f.expBits + f.mantBits
}

// FloatToBits encodes v (already representable in k) as k's bit pattern.
func FloatToBits(v float64, k FloatKind) uint64 {
	if f := floatFormats[k]; math.IsNaN(v) && k != F64 && f.hasInf {
		// NaN payloads travel in the top mantissa bits of the float64.
		b := math.Float64bits(v)
		mant := (b & (1<<52 - 1)) >> uint(52-f.mantBits)
		if mant == 0 {
			mant = 1 << uint(f.mantBits-1)
		}
		return b>>63<<uint(f.expBits+f.mantBits) | (uint64(1)<<uint(f.expBits)-1)<<uint(f.mantBits) | mant
	}
	switch k {
	case F64:
		return math.Float64bits(v)
	case F32:
		return uint64(math.Float32bits(float32(v)))
	}
	f := floatFormats[k]
	var sign uint64
	if math.Signbit(v) {
		sign = 1 << uint(f.expBits+f.mantBits)
		v = -v
	}
	expAll := uint64(1)<<uint(f.expBits) - 1
	mantAll := uint64(1)<<uint(f.mantBits) - 1
	switch {
	case math.IsNaN(v):
		if f.fnNaNOnly {
			return sign | expAll<<uint(f.mantBits) | mantAll
		}
		return sign | expAll<<uint(f.mantBits) | 1<<uint(f.mantBits-1)
	case math.IsInf(v, 0):
		return sign | expAll<<uint(f.mantBits)
	case v == 0:
		return sign
	}
	frac, exp := math.Frexp(v) // v = frac * 2^exp, frac in [0.5, 1)
	e := exp - 1 + f.bias      // biased exponent of 1.xxx form
	if e <= 0 {
		// Subnormal: mantissa = v / 2^(1-bias-mantBits).
		m := uint64(math.Ldexp(v, f.bias-1+f.mantBits))
		return sign | m
	}
	m := uint64(math.Ldexp(frac*2-1, f.mantBits))
	return sign | uint64(e)<<uint(f.mantBits) | m
}

// FloatFromBits decodes a bit pattern of format k.
func FloatFromBits(bits uint64, k FloatKind) float64 {
	if f := floatFormats[k]; k != F64 && f.hasInf {
		mant := bits & (1<<uint(f.mantBits) - 1)
		exp := bits >> uint(f.mantBits) & (1<<uint(f.expBits) - 1)
		if exp == 1<<uint(f.expBits)-1 && mant != 0 {
			// Keep the NaN payload (see FloatToBits).
			sign := bits >> uint(f.expBits+f.mantBits) & 1
			return math.Float64frombits(sign<<63 | 0x7FF<<52 | mant<<uint(52-f.mantBits))
		}
	}
	switch k {
	case F64:
		return math.Float64frombits(bits)
	case F32:
		return float64(math.Float32frombits(uint32(bits)))
	}
	f := floatFormats[k]
	mant := bits & (1<<uint(f.mantBits) - 1)
	exp := int(bits>>uint(f.mantBits)) & (1<<uint(f.expBits) - 1)
	neg := bits>>uint(f.expBits+f.mantBits)&1 == 1
	expAll := 1<<uint(f.expBits) - 1
	var v float64
	switch {
	case f.hasInf && exp == expAll:
		if mant == 0 {
			v = math.Inf(1)
		} else {
			v = math.NaN()
		}
	case f.fnNaNOnly && exp == expAll && mant == uint64(1)<<uint(f.mantBits)-1:
		v = math.NaN()
	case exp == 0:
		v = math.Ldexp(float64(mant), 1-f.bias-f.mantBits)
	default:
		v = math.Ldexp(float64(mant|1<<uint(f.mantBits)), exp-f.bias-f.mantBits)
	}
	if neg {
		v = -v
	}
	return v
}

// maxFinite returns the largest finite value of format k.
func maxFinite(k FloatKind) float64 {
	f := floatFormats[k]
	maxExp := 1<<uint(f.expBits) - 2 - f.bias
	mant := float64(uint64(1)<<uint(f.mantBits+1) - 1)
	if f.fnNaNOnly {
		// The all-ones exponent holds normal values except the NaN pattern.
		maxExp++
		mant--
	}
	return math.Ldexp(mant, maxExp-f.mantBits)
}

// RoundToFloatKind rounds v to the nearest value of format k (ties to even),
// overflowing to infinity (or NaN for formats without infinity).
func RoundToFloatKind(v float64, k FloatKind) float64 {
	switch k {
	case F64:
		return v
	case F32:
		if math.IsNaN(v) {
			return v // keep the payload
		}
		return float64(float32(v))
	}
	if math.IsNaN(v) || math.IsInf(v, 0) || v == 0 {
		if math.IsInf(v, 0) && floatFormats[k].fnNaNOnly {
			return math.NaN()
		}
		return v
	}
	f := floatFormats[k]
	a := math.Abs(v)
	_, exp := math.Frexp(a)
	e := exp - 1 // a in [2^e, 2^(e+1))
	minE := 1 - f.bias
	if e < minE {
		e = minE
	}
	quantum := math.Ldexp(1, e-f.mantBits)
	r := math.RoundToEven(a/quantum) * quantum
	if r > maxFinite(k) {
		if f.fnNaNOnly {
			return math.NaN()
		}
		r = math.Inf(1)
	}
	return math.Copysign(r, v)
}

// FormatFloat prints a float constant of format k as upstream MLIR does: in
// "%e" form with six fraction digits when that reads back exactly, else in
// the shortest full-precision decimal form, else (inf, NaN) as a hex bit
// pattern.
func FormatFloat(v float64, k FloatKind) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return formatFloatHex(v, k)
	}
	s := apDecimal(v, k, 6, false)
	if rv, err := strconv.ParseFloat(s, 64); err == nil && RoundToFloatKind(rv, k) == v && math.Signbit(rv) == math.Signbit(v) {
		return s
	}
	s = apDecimal(v, k, 0, true)
	if strings.Contains(s, ".") {
		return s
	}
	return formatFloatHex(v, k)
}

func formatFloatHex(v float64, k FloatKind) string {
	bits := FloatToBits(v, k)
	digits := (k.StorageBits() + 3) / 4
	s := strings.ToUpper(strconv.FormatUint(bits, 16))
	for len(s) < digits {
		s = "0" + s
	}
	return "0x" + s
}

// apDecimal converts v to decimal with the conventions of LLVM's
// APFloat::toString: precision significant digits (0 means the format's
// natural precision), rounding half up on the exact decimal expansion, and
// either scientific form with six zero-padded fraction digits (truncateZero
// false) or the compact form that pads at most three zeros.
func apDecimal(v float64, k FloatKind, precision int, truncateZero bool) string {
	neg := math.Signbit(v)
	v = math.Abs(v)
	if precision == 0 {
		precision = 2 + k.Precision()*59/196
	}
	var digits []byte // most significant first
	exp := 0          // value = digits * 10^exp
	if v == 0 {
		digits = []byte{'0'}
	} else {
		// Exact decimal expansion of v.
		bf := new(big.Float).SetPrec(0).SetFloat64(v)
		mant := new(big.Float)
		e2 := bf.MantExp(mant) // v = mant * 2^e2, mant in [0.5,1)
		// Scale to an integer significand.
		m := new(big.Float).SetMantExp(mant, 64)
		mi, _ := m.Int(nil)
		e2 -= 64
		// Drop trailing binary zeros.
		for mi.Sign() != 0 && mi.Bit(0) == 0 {
			mi.Rsh(mi, 1)
			e2++
		}
		if e2 >= 0 {
			mi.Lsh(mi, uint(e2))
		} else {
			five := new(big.Int).Exp(big.NewInt(5), big.NewInt(int64(-e2)), nil)
			mi.Mul(mi, five)
			exp = e2
		}
		// APFloat drops low decimal digits before rounding (a truncating
		// division), which is why its rounding is sometimes not nearest.
		need := (196*precision + 58) / 59
		if b := mi.BitLen(); b > need {
			if k := (b - need) * 59 / 196; k > 0 {
				mi.Quo(mi, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(k)), nil))
				exp += k
			}
		}
		s := mi.String()
		// Drop trailing decimal zeros.
		for len(s) > 1 && s[len(s)-1] == '0' {
			s = s[:len(s)-1]
			exp++
		}
		digits = []byte(s)
		if len(digits) > precision {
			cut := len(digits) - precision
			roundUp := digits[precision] >= '5'
			digits = digits[:precision]
			exp += cut
			if roundUp {
				i := len(digits) - 1
				for i >= 0 && digits[i] == '9' {
					i--
					exp++
				}
				if i < 0 {
					digits = []byte{'1'}
				} else {
					digits[i]++
					digits = digits[:i+1]
				}
			}
			for len(digits) > 1 && digits[len(digits)-1] == '0' {
				digits = digits[:len(digits)-1]
				exp++
			}
		}
	}
	var sb strings.Builder
	if neg {
		sb.WriteByte('-')
	}
	n := len(digits)
	maxPadding := 3
	if !truncateZero {
		maxPadding = 0
	}
	scientific := true
	if maxPadding > 0 {
		if exp >= 0 {
			scientific = exp > maxPadding || n+exp > precision
		} else {
			msd := exp + n - 1
			if msd >= 0 {
				scientific = false
			} else {
				scientific = -msd > maxPadding
			}
		}
	}
	switch {
	case scientific:
		e := exp + n - 1
		sb.WriteByte(digits[0])
		sb.WriteByte('.')
		if n == 1 && truncateZero {
			sb.WriteByte('0')
		} else {
			sb.Write(digits[1:])
		}
		if !truncateZero {
			for i := n - 1; i < precision; i++ {
				sb.WriteByte('0')
			}
			sb.WriteByte('e')
		} else {
			sb.WriteByte('E')
		}
		if e >= 0 {
			sb.WriteByte('+')
		} else {
			sb.WriteByte('-')
			e = -e
		}
		es := strconv.Itoa(e)
		if !truncateZero && len(es) < 2 {
			es = "0" + es
		}
		sb.WriteString(es)
	case exp >= 0:
		sb.Write(digits)
		for i := 0; i < exp; i++ {
			sb.WriteByte('0')
		}
	default:
		whole := exp + n
		if whole > 0 {
			sb.Write(digits[:whole])
			sb.WriteByte('.')
			sb.Write(digits[whole:])
		} else {
			sb.WriteString("0.")
			for i := 0; i < -whole; i++ {
				sb.WriteByte('0')
			}
			sb.Write(digits)
		}
	}
	return sb.String()
}
