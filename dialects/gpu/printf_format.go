package gpu

import "strings"

// PrintfFormatProblem says why CUDA's device printf (vprintf, which
// gpu.printf and llvm.call @printf lower to) cannot print format, or ""
// if it can. Measured on an H200 (2026-11-27): with the hh length
// modifier, "%ld %hhd" of 6 and -1 printed "6 37" and vprintf returned 1,
// having stopped reading at the hh conversion, so tmac rejects it
// (codegen and the emulator alike) rather than print a wrong value.
func PrintfFormatProblem(format string) string {
	if i := strings.IndexByte(format, 0); i >= 0 {
		format = format[:i]
	}
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		j := i + 1
		for j < len(format) && strings.IndexByte("-+ #0123456789.", format[j]) >= 0 {
			j++
		}
		if strings.HasPrefix(format[j:], "hh") {
			return "CUDA's printf does not support the hh length modifier (it prints a wrong value and stops reading arguments): print the value promoted to i32 with %d, %u or %x"
		}
		if j < len(format) && format[j] == '%' {
			i = j
		}
	}
	return ""
}
