package math

// measuredOnGPU is each float op's error measured on the GPU by
// bench/gpu/accuracy (scripts/gpu-step10.sh run; docs/gpu-tests.md, step
// 10): 2^20 f32 inputs per op spread over every binade of its domain,
// against numpy's float64 result rounded to f32, on an NVIDIA H200
// (2026-11-27, commit 432de0b). Default is the default lowering, Approx
// the one with fastmath<afn>. Written from build/gpu/step10/accuracy.json;
// gpuDoc shows it where a Lowering has no Measured text of its own.
var measuredOnGPU = map[string]struct{ Default, Approx string }{
	"math.acos": {
		Default: "at most 1.50 ulp from the correctly rounded f32 result, mean 0.371 ulp, 92.3% correctly rounded",
	},
	"math.acosh": {
		Default: "at most 1.67 ulp from the correctly rounded f32 result, mean 0.314 ulp, 77.3% correctly rounded, 0 of 1 special values wrong",
	},
	"math.asin": {
		Default: "at most 2.14 ulp from the correctly rounded f32 result, mean 0.0295 ulp, 99.0% correctly rounded",
	},
	"math.asinh": {
		Default: "at most 1.50 ulp from the correctly rounded f32 result, mean 0.146 ulp, 96.4% correctly rounded, 0 of 2 special values wrong",
	},
	"math.atan": {
		Default: "at most 1.81 ulp from the correctly rounded f32 result, mean 0.201 ulp, 95.8% correctly rounded",
	},
	"math.atan2": {
		Default: "at most 1.78 ulp from the correctly rounded f32 result, mean 0.337 ulp, 93.2% correctly rounded",
	},
	"math.atanh": {
		Default: "at most 2.64 ulp from the correctly rounded f32 result, mean 0.0989 ulp, 91.0% correctly rounded, 0 of 2 special values wrong",
	},
	"math.cbrt": {
		Default: "at most 1.09 ulp from the correctly rounded f32 result, mean 0.276 ulp, 87.2% correctly rounded, 0 of 2 special values wrong",
	},
	"math.cos": {
		Default: "at most 1.38 ulp from the correctly rounded f32 result (1.22 for x in [-π, π]), mean 0.0596 ulp, 97.5% correctly rounded",
		Approx:  "at most 4.06e+08 ulp from the correctly rounded f32 result (1.67e+04 for x in [-π, π]), mean 6.04e+03 ulp, 79.5% correctly rounded",
	},
	"math.cosh": {
		Default: "at most 2.08 ulp from the correctly rounded f32 result, mean 0.0467 ulp, 97.0% correctly rounded, 0 of 72 special values wrong",
	},
	"math.erf": {
		Default: "at most 0.94 ulp from the correctly rounded f32 result, mean 0.278 ulp, 83.3% correctly rounded",
	},
	"math.erfc": {
		Default: "at most 4.08 ulp from the correctly rounded f32 result, mean 0.129 ulp, 89.5% correctly rounded",
	},
	"math.exp": {
		Default: "at most 1.75 ulp from the correctly rounded f32 result, mean 0.0935 ulp, 92.9% correctly rounded, 0 of 79 special values wrong",
		Approx:  "at most 59.38 ulp from the correctly rounded f32 result, mean 0.333 ulp, 90.3% correctly rounded, 0 of 79 special values wrong",
	},
	"math.exp2": {
		Default: "at most 1.97 ulp from the correctly rounded f32 result, mean 0.103 ulp, 91.6% correctly rounded, 0 of 62 special values wrong",
		// ex2.approx.ftz.f32, measured later (2026-11-27, commit bc68c08, H200,
		// scripts/gpu-attention.sh's device call): the same as the default
		// over normal results; subnormal results flushed to 0.
		Approx: "at most 1.97 ulp from the correctly rounded f32 result over normal results; subnormal results (x below -126) are 0, " +
			"up to 8.35e+06 ulp off, which makes the mean over all finite results 617 ulp; 91.5% correctly rounded, 0 of 62 special values wrong",
	},
	"math.expm1": {
		Default: "at most 1.33 ulp from the correctly rounded f32 result, mean 0.0633 ulp, 98.8% correctly rounded, 0 of 79 special values wrong",
	},
	"math.log": {
		Default: "at most 0.81 ulp from the correctly rounded f32 result, mean 0.251 ulp, 96.6% correctly rounded, 0 of 2 special values wrong",
		Approx:  "at most 1.34e+04 ulp from the correctly rounded f32 result, mean 0.588 ulp, 54.5% correctly rounded, 0 of 2 special values wrong",
	},
	"math.log10": {
		Default: "at most 1.94 ulp from the correctly rounded f32 result, mean 0.434 ulp, 64.3% correctly rounded, 0 of 2 special values wrong",
		Approx:  "at most 1.16e+04 ulp from the correctly rounded f32 result, mean 0.42 ulp, 72.4% correctly rounded, 0 of 2 special values wrong",
	},
	"math.log1p": {
		Default: "at most 0.86 ulp from the correctly rounded f32 result, mean 0.103 ulp, 98.9% correctly rounded, 0 of 2 special values wrong",
	},
	"math.log2": {
		Default: "at most 0.50 ulp from the correctly rounded f32 result, mean 0.25 ulp, 100.0% correctly rounded, 0 of 2 special values wrong",
		Approx:  "at most 9.64e+03 ulp from the correctly rounded f32 result, mean 0.562 ulp, 49.8% correctly rounded, 0 of 2 special values wrong",
	},
	"math.powf": {
		Default: "at most 2.24 ulp from the correctly rounded f32 result, mean 0.101 ulp, 92.0% correctly rounded, 0 of 13400 special values wrong",
		Approx:  "at most 178.81 ulp from the correctly rounded f32 result, mean 0.586 ulp, 89.8% correctly rounded, 0 of 13400 special values wrong",
	},
	"math.rsqrt": {
		Default: "at most 1.44 ulp from the correctly rounded f32 result, mean 0.319 ulp, 78.4% correctly rounded, 0 of 1 special values wrong",
	},
	"math.sin": {
		Default: "at most 1.45 ulp from the correctly rounded f32 result (1.36 for x in [-π, π]), mean 0.0593 ulp, 97.6% correctly rounded",
		Approx:  "at most 3.36e+09 ulp from the correctly rounded f32 result (1.68e+07 for x in [-π, π]), mean 9.17e+06 ulp, 0.6% correctly rounded",
	},
	"math.sinh": {
		Default: "at most 2.24 ulp from the correctly rounded f32 result, mean 0.0443 ulp, 98.3% correctly rounded, 0 of 72 special values wrong",
	},
	"math.sqrt": {
		Default: "at most 0.50 ulp from the correctly rounded f32 result, mean 0.25 ulp, 100.0% correctly rounded, 0 of 1 special values wrong",
	},
	"math.tan": {
		Default: "at most 3.01 ulp from the correctly rounded f32 result (2.49 for x in [-π, π]), mean 0.078 ulp, 95.0% correctly rounded",
		Approx:  "at most unbounded (an infinite result) ulp from the correctly rounded f32 result (1.68e+07 for x in [-π, π]), 0.3% correctly rounded",
	},
	"math.tanh": {
		Default: "at most 1.73 ulp from the correctly rounded f32 result, mean 0.0402 ulp, 98.2% correctly rounded",
		Approx:  "at most 124.95 ulp from the correctly rounded f32 result, mean 2.92 ulp, 89.1% correctly rounded",
	},
}
