// Package irgen generates large, realistic tile-program modules (a mix of
// func, arith, scf, memref, vector and gpu ops) for parser benchmarks and
// resource-growth measurements.
package irgen

import (
	"fmt"
	"strings"
)

// Generate returns a module of about lines lines. The same lines value
// always gives the same text.
func Generate(lines int) string {
	var sb strings.Builder
	sb.WriteString("module {\n")
	n := 0
	for f := 0; n < lines; f++ {
		n += writeFunc(&sb, f)
	}
	sb.WriteString("}\n")
	return sb.String()
}

// writeFunc writes one kernel-like function and returns its line count.
func writeFunc(sb *strings.Builder, f int) int {
	lines := 0
	w := func(format string, args ...any) {
		fmt.Fprintf(sb, format, args...)
		sb.WriteByte('\n')
		lines++
	}
	w("  func.func @kernel_%d(%%a: memref<1024x1024xf32>, %%b: memref<1024x1024xf32>, %%s: memref<128x64xf16, 3>, %%n: index, %%x: f32) -> f32 {", f)
	w("    %%c0 = arith.constant 0 : index")
	w("    %%c1 = arith.constant 1 : index")
	w("    %%c64 = arith.constant 64 : index")
	w("    %%cst = arith.constant 0.000000e+00 : f32")
	w("    %%tid = gpu.thread_id  x")
	w("    %%bid = gpu.block_id  y")
	w("    %%row = arith.muli %%bid, %%c64 : index")
	w("    %%col = arith.addi %%row, %%tid : index")
	w("    %%r = scf.for %%i = %%c0 to %%n step %%c1 iter_args(%%acc = %%cst) -> (f32) {")
	for k := 0; k < 8; k++ {
		w("      %%i%d = arith.addi %%i, %%c%d : index", k, []int{0, 1, 64}[k%3])
		w("      %%v%d = memref.load %%a[%%col, %%i%d] : memref<1024x1024xf32>", k, k)
		w("      %%w%d = memref.load %%b[%%i%d, %%col] : memref<1024x1024xf32>", k, k)
		w("      %%p%d = arith.mulf %%v%d, %%w%d : f32", k, k, k)
		w("      %%h%d = memref.load %%s[%%tid, %%c0] : memref<128x64xf16, 3>", k)
		w("      %%e%d = arith.extf %%h%d : f16 to f32", k, k)
		w("      %%q%d = arith.addf %%p%d, %%e%d : f32", k, k, k)
		w("      %%t%d = arith.cmpf olt, %%q%d, %%x : f32", k, k)
		w("      %%m%d = arith.select %%t%d, %%q%d, %%x : f32", k, k, k)
		w("      memref.store %%m%d, %%a[%%col, %%i%d] : memref<1024x1024xf32>", k, k)
	}
	w("      %%sum = arith.addf %%acc, %%m7 : f32")
	w("      scf.yield %%sum : f32")
	w("    }")
	w("    %%cond = arith.cmpi slt, %%tid, %%c64 : index")
	w("    %%out = scf.if %%cond -> (f32) {")
	w("      %%neg = arith.negf %%r : f32")
	w("      scf.yield %%neg : f32")
	w("    } else {")
	w("      scf.yield %%r : f32")
	w("    }")
	w("    gpu.barrier")
	w("    return %%out : f32")
	w("  }")
	return lines
}
