package math

import (
	"fmt"
	"strings"
)

// How the GPU computes each float op and how accurately: codegen/math.go
// lowers the ops as this table says, and each op's docs (`tmac doc`) are
// written from it. By default an op is accurate to the few ulps CUDA
// documents for NVIDIA's libdevice (the library upstream MLIR's NVVM
// lowering calls, linked in by toolchain.CompilePTX); fastmath<afn> (or
// fast) selects PTX's hardware approximations where there are some.

// Lowering is how the GPU computes a float op.
type Lowering struct {
	// F32 and F64 are the libdevice functions computing the op on f32 (and
	// on f16, bf16, tf32 and fp8, through f32) and on f64. F32 is empty
	// where Instr computes the f32 case instead.
	F32, F64 string
	// ULP32 and ULP64 bound their error in ulps of the correctly rounded
	// result, as CUDA documents it (CUDA C++ Programming Guide,
	// "Mathematical Functions"); -1 where CUDA documents none.
	ULP32, ULP64 int
	// Instr describes the instructions computing the f32 case, when not a
	// libdevice function.
	Instr string
	// Approx describes what fastmath<afn> computes on f32 and narrower
	// formats instead; empty when afn changes nothing.
	Approx string
	// Measured and MeasuredApprox are the errors measured on the GPU over
	// f32 inputs (bench/gpu/accuracy, scripts/gpu-step10.sh), by default
	// and with afn; empty until measured.
	Measured, MeasuredApprox string
}

// Lowerings are the float ops computed by libdevice or approximations.
var Lowerings = map[string]*Lowering{
	"math.acos":  {F32: "__nv_acosf", F64: "__nv_acos", ULP32: 2, ULP64: 2},
	"math.acosh": {F32: "__nv_acoshf", F64: "__nv_acosh", ULP32: 4, ULP64: 3},
	"math.asin":  {F32: "__nv_asinf", F64: "__nv_asin", ULP32: 2, ULP64: 2},
	"math.asinh": {F32: "__nv_asinhf", F64: "__nv_asinh", ULP32: 3, ULP64: 3},
	"math.atan":  {F32: "__nv_atanf", F64: "__nv_atan", ULP32: 2, ULP64: 2},
	"math.atan2": {F32: "__nv_atan2f", F64: "__nv_atan2", ULP32: 3, ULP64: 2},
	"math.atanh": {F32: "__nv_atanhf", F64: "__nv_atanh", ULP32: 3, ULP64: 2},
	"math.cbrt":  {F32: "__nv_cbrtf", F64: "__nv_cbrt", ULP32: 1, ULP64: 1},
	"math.cos": {F32: "__nv_cosf", F64: "__nv_cos", ULP32: 2, ULP64: 2,
		Approx: "PTX's cos.approx.f32, whose absolute error CUDA documents as 2^-21.41 for |x| ≤ π (__cosf), and larger outside"},
	"math.cosh": {F32: "__nv_coshf", F64: "__nv_cosh", ULP32: 2, ULP64: 1},
	"math.erf":  {F32: "__nv_erff", F64: "__nv_erf", ULP32: 2, ULP64: 2},
	"math.erfc": {F32: "__nv_erfcf", F64: "__nv_erfc", ULP32: 4, ULP64: 5},
	"math.exp": {F32: "__nv_expf", F64: "__nv_exp", ULP32: 2, ULP64: 1,
		Approx: "2^(x·log2 e) with the product rounded to f32 and PTX's ex2.approx.f32 (CUDA's __expf): rounding the product adds a relative " +
			"error of about |x|·2^-24, so the error grows with |x|",
		MeasuredApprox: "on an H200, against exp rounded to f32: at most 2 ulp for |x| < 1, 7 ulp for |x| < 10, 28 ulp for |x| < 40 and 62 ulp " +
			"near the overflow bound (|x| ≈ 88), mean about 1 ulp; the emulator computes the f32 rounding of the product as the GPU does"},
	"math.exp2": {F64: "__nv_exp2", ULP32: 2, ULP64: 1,
		Instr: "PTX's ex2.approx.f32, which is what libdevice's exp2f computes (2 ulp as CUDA documents it); no libdevice is needed for it",
		Approx: "PTX's ex2.approx.ftz.f32: the same approximation with subnormal results (x < -126) flushed to +0; one MUFU.EX2 in the SASS, " +
			"where ex2.approx.f32 adds a range test and two multiplies (on an H200, the D = 128 attention kernel went from 572 to 634 TFLOP/s)"},
	"math.expm1": {F32: "__nv_expm1f", F64: "__nv_expm1", ULP32: 1, ULP64: 1},
	"math.log": {F32: "__nv_logf", F64: "__nv_log", ULP32: 1, ULP64: 1,
		Approx: "PTX's lg2.approx.f32 times ln 2 in f32 (CUDA's __logf: absolute error 2^-21.41 for x in [0.5, 2], 3 ulp elsewhere, " +
			"so an unbounded relative error where log x nears 0)"},
	"math.log10": {F32: "__nv_log10f", F64: "__nv_log10", ULP32: 2, ULP64: 1,
		Approx: "PTX's lg2.approx.f32 times log10 2 in f32 (CUDA's __log10f: absolute error 2^-24 for x in [0.5, 2], 3 ulp elsewhere)"},
	"math.log1p": {F32: "__nv_log1pf", F64: "__nv_log1p", ULP32: 1, ULP64: 1},
	"math.log2": {F64: "__nv_log2", ULP32: 1, ULP64: 1,
		Instr: "tmac's own f64 computation: x = m·2^e with m in [√½, √2), e + ln(m)·log2 e with ln(m) = 2·atanh(s) summed to s^13 " +
			"(s = (m-1)/(m+1), |s| < 0.172, truncation below 2^-30 relative), rounded to f32; correctly rounded but for rare near-ties " +
			"(at most 1 ulp), and no libdevice is needed for it",
		Measured: "on an H100 over 2^24 f32 inputs spread over every binade (docs/gpu-tests.md, step 9): correctly rounded on all of them (max 0.5 ulp)",
		Approx:   "PTX's lg2.approx.f32",
		MeasuredApprox: "on the same inputs a mean error of 1.2 ulp and an absolute error of at most 2.1e-7 on [0.5, 2] (so an unbounded " +
			"relative error where log2 x nears 0), which the emulator does not model"},
	"math.powf": {F32: "__nv_powf", F64: "__nv_pow", ULP32: 4, ULP64: 2,
		Approx: "2^(y·log2 x) with PTX's lg2.approx.f32 and ex2.approx.f32 (CUDA's __powf): the error grows with |y·log2 x|, " +
			"and a negative base gives NaN even for an integral power"},
	"math.rsqrt": {F64: "__nv_rsqrt", ULP32: 2, ULP64: 1,
		Instr: "PTX's rsqrt.approx.f32, which is what libdevice's rsqrtf computes (2 ulp as CUDA documents it); no libdevice is needed for it"},
	"math.sin": {F32: "__nv_sinf", F64: "__nv_sin", ULP32: 2, ULP64: 2,
		Approx: "PTX's sin.approx.f32, whose absolute error CUDA documents as 2^-21.41 for |x| ≤ π (__sinf), and larger outside"},
	"math.sinh": {F32: "__nv_sinhf", F64: "__nv_sinh", ULP32: 3, ULP64: 2},
	"math.tan": {F32: "__nv_tanf", F64: "__nv_tan", ULP32: 4, ULP64: 2,
		Approx: "PTX's sin.approx.f32 divided by cos.approx.f32 with div.approx.f32 (CUDA's __tanf): large errors near the poles"},
	"math.tanh": {F32: "__nv_tanhf", F64: "__nv_tanh", ULP32: 2, ULP64: 1,
		Approx: "PTX's tanh.approx.f32, whose maximum relative error the PTX ISA documents as 2^-10.987 (about 1000 ulp)"},
	"math.fpowi": {F32: "__nv_powif", F64: "__nv_powi", ULP32: -1, ULP64: -1},
}

// exactDocs are the float ops the GPU computes exactly (correctly rounded),
// with the instructions that do it.
var exactDocs = map[string]string{
	"math.absf":      "PTX's abs (the sign bit cleared; fp8 in integer arithmetic)",
	"math.ceil":      "PTX's cvt.rpi (f16, bf16, f32, f64; tf32 and fp8 through f32, exactly)",
	"math.copysign":  "PTX's copysign (or the sign bit moved in integer arithmetic)",
	"math.floor":     "PTX's cvt.rmi (f16, bf16, f32, f64; tf32 and fp8 through f32, exactly)",
	"math.round":     "LLVM's llvm.round: truncation of x + copysign(0.5 - 1/2 ulp, x), with the inputs at or above 2^23 (2^52 for f64) kept",
	"math.roundeven": "PTX's cvt.rni (f16, bf16, f32, f64; tf32 and fp8 through f32, exactly)",
	"math.sqrt":      "LLVM's llvm.sqrt: PTX's sqrt.rn (f32, f64; f16 and bf16 in f32, rounded once more, which stays correctly rounded; tf32 and fp8 through f32)",
	"math.trunc":     "PTX's cvt.rzi (f16, bf16, f32, f64; tf32 and fp8 through f32, exactly)",
}

// gpuDoc is the documentation of how the GPU computes the float op name.
func gpuDoc(name string) string {
	if instr, ok := exactDocs[name]; ok {
		return "**On the GPU.** Exact (correctly rounded): " + instr + ". Constant operands fold."
	}
	l := Lowerings[name]
	if l == nil {
		return ""
	}
	var b strings.Builder
	b.WriteString("**On the GPU.** By default ")
	bound := func(ulp int) string {
		if ulp < 0 {
			return "CUDA documents no bound for it"
		}
		return fmt.Sprintf("within %d ulp of the correctly rounded result as CUDA documents it", ulp)
	}
	if name == "math.fpowi" {
		b.WriteString("NVIDIA's libdevice computes it (`__nv_powif` for f32, and f16, bf16, tf32 and fp8 through f32; " +
			"`__nv_powi` for f64) by square-and-multiply over the bits of |n|, each product rounded, then 1/r for a negative n: " +
			"the error grows with |n| (about |n|/2 ulp at worst), as llvm.powi allows. A power wider than i32 is clamped to i32, " +
			"keeping its parity (x^n is then 0, infinite or ±1 for both). The emulator computes the same products; the interpreter " +
			"computes the exact power rounded once.")
		return b.String()
	}
	if l.Instr != "" {
		fmt.Fprintf(&b, "f32 is computed by %s. f16, bf16, tf32 and fp8 go through f32 (rounded once more).", l.Instr)
	} else {
		fmt.Fprintf(&b, "NVIDIA's libdevice computes it: `%s` for f32 (%s; f16, bf16, tf32 and fp8 go through f32, rounded once more).", l.F32, bound(l.ULP32))
	}
	if l.F64 != "" {
		fmt.Fprintf(&b, " f64: libdevice's `%s`, %s.", l.F64, bound(l.ULP64))
	}
	const onGPU = "on an H200 over 2^20 f32 inputs spread over its domain (bench/gpu/accuracy, docs/gpu-tests.md step 10): "
	m := measuredOnGPU[name]
	// measured is what the table says, else the GPU's numbers, else unknown.
	measured := func(given, onDevice, unknown string) string {
		switch {
		case given != "":
			return given
		case onDevice != "":
			return onGPU + onDevice
		}
		return unknown
	}
	fmt.Fprintf(&b, " Measured: %s.", measured(l.Measured, m.Default, "not yet (bench/gpu/accuracy measures every op; scripts/gpu-step10.sh)"))
	if l.Approx != "" {
		fmt.Fprintf(&b, " With `fastmath<afn>` (or `fast`), on f32 and narrower formats: %s.", l.Approx)
		fmt.Fprintf(&b, " Measured: %s. f64 is unaffected by afn.", measured(l.MeasuredApprox, m.Approx, "not yet"))
	} else {
		b.WriteString(" `fastmath<afn>` changes nothing: there is no faster hardware approximation.")
	}
	switch name {
	case "math.exp":
	case "math.exp2":
		b.WriteString(" The emulator and the interpreter compute the exact result, rounded once; the emulator flushes subnormal results to 0 under afn, as the GPU does.")
	default:
		b.WriteString(" The emulator and the interpreter compute the exact result, rounded once.")
	}
	b.WriteString(" Compiling a libdevice call needs NVIDIA's libdevice.10.bc (scripts/install-deps.sh installs it). Constant operands do not " +
		"fold: the folded value could differ from the GPU's.")
	return b.String()
}

const sincosDoc = "**On the GPU.** The sine and cosine are computed separately, as `math.sin` and `math.cos` are: libdevice's " +
	"`__nv_sinf` and `__nv_cosf` (f32, and narrower formats through f32; 2 ulp as CUDA documents them) or `__nv_sin` and `__nv_cos` " +
	"(f64); with `fastmath<afn>` PTX's sin.approx.f32 and cos.approx.f32. The emulator computes the exact results."

const classDoc = "**On the GPU.** Exact: comparisons of the operand (or its absolute value) with infinity and the format's " +
	"smallest normal number; fp8 and tf32 are compared in f32, exactly. Fastmath flags do not change the result. Constant operands fold."

const fmaDoc = "**On the GPU.** Exact: PTX's fma.rn (f16, bf16, f32, f64). tf32 and fp8 are rejected: an f32 fma rounded again " +
	"is not correctly rounded."

const clampfDoc = "Computes maximumf(minimumf(x, max), min) as upstream documents it, with arith's maximumf and minimumf: a NaN " +
	"operand gives NaN, -0 is below +0, and min wins when it is above max. **On the GPU.** Exact: PTX's min.NaN and max.NaN " +
	"(f16, bf16, f32; f64 through compare and select; tf32 and fp8 through f32). Constant operands fold."
