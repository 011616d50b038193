package codegen

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tmac-dev/tmac/toolchain"
)

// TestRemfExact runs arith.remf's lowering, as LLVM IR compiled for the
// host by llc, against the C library's fmod on random and special f32 and
// f64 operands, bit for bit (NaNs as NaNs, signed zeros). It needs llc and
// a C compiler (gcc or cc) and is skipped without them.
func TestRemfExact(t *testing.T) {
	llc, err := toolchain.FindLLC("")
	if err != nil {
		t.Skip("no llc:", err)
	}
	cc, err := exec.LookPath("gcc")
	if err != nil {
		if cc, err = exec.LookPath("cc"); err != nil {
			t.Skip("no C compiler")
		}
	}
	ll, err := emitFuncs(t, `
  gpu.func @rem32(%a: f32, %b: f32) -> f32 {
    %r = arith.remf %a, %b : f32
    gpu.return %r : f32
  }
  gpu.func @rem64(%a: f64, %b: f64) -> f64 {
    %r = arith.remf %a, %b : f64
    gpu.return %r : f64
  }`)
	if err != nil {
		t.Fatal(err)
	}
	// The same IR for the host: no NVPTX target lines, external functions.
	var host []string
	for _, line := range strings.Split(ll, "\n") {
		if !strings.HasPrefix(line, "target ") {
			host = append(host, strings.Replace(line, "define internal ", "define ", 1))
		}
	}
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	run := func(name string, args ...string) string {
		out, err := exec.Command(name, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("%s %v: %v\n%s", name, args, err, out)
		}
		return string(out)
	}
	obj := filepath.Join(dir, "rem.o")
	run(llc, "-O2", "-filetype=obj", "-relocation-model=pic", write("rem.ll", strings.Join(host, "\n")), "-o", obj)
	bin := filepath.Join(dir, "check")
	run(cc, "-O2", "-o", bin, write("main.c", remfCheckC), obj, "-lm")
	if out := run(bin); !strings.HasPrefix(out, "0 of ") {
		t.Errorf("remf differs from fmod:\n%s", out)
	}
}

// remfCheckC compares rem32/rem64 with fmodf/fmod on 200000 random pairs of
// each width (divisors often of a nearby exponent, or subnormal) and on
// every pair of special values, and prints "N of M differ".
const remfCheckC = `
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
float rem32(float, float);
double rem64(double, double);
static uint64_t s = 88172645463325252ull;
static uint64_t rnd(void) { s ^= s << 13; s ^= s >> 7; s ^= s << 17; return s; }
static int same32(float a, float b) { uint32_t x, y; memcpy(&x, &a, 4); memcpy(&y, &b, 4); return (isnan(a) && isnan(b)) || x == y; }
static int same64(double a, double b) { uint64_t x, y; memcpy(&x, &a, 8); memcpy(&y, &b, 8); return (isnan(a) && isnan(b)) || x == y; }
int main(void) {
	long bad = 0, n = 0;
	for (long i = 0; i < 200000; i++, n++) {
		uint32_t a = rnd(), b = rnd();
		if (i % 4 == 1) b = (b & 0x807fffff) | ((a & 0x7f800000) - ((rnd() % 8) << 23) * (a > 0x3000000));
		if (i % 8 == 2) b &= 0x807fffff;
		float x, y;
		memcpy(&x, &a, 4); memcpy(&y, &b, 4);
		if (!same32(rem32(x, y), fmodf(x, y)) && bad++ < 5) printf("fmodf(%a, %a) = %a, got %a\n", x, y, fmodf(x, y), rem32(x, y));
	}
	for (long i = 0; i < 200000; i++, n++) {
		uint64_t a = rnd(), b = rnd();
		if (i % 4 == 1) b = (b & 0x800fffffffffffffull) | ((a & 0x7ff0000000000000ull) - ((rnd() % 64) << 52) * (a > 0x0500000000000000ull));
		if (i % 8 == 2) b &= 0x800fffffffffffffull;
		double x, y;
		memcpy(&x, &a, 8); memcpy(&y, &b, 8);
		if (!same64(rem64(x, y), fmod(x, y)) && bad++ < 10) printf("fmod(%a, %a) = %a, got %a\n", x, y, fmod(x, y), rem64(x, y));
	}
	double sp[] = {0.0, -0.0, 1.0, -1.0, INFINITY, -INFINITY, NAN, 3.0, 0x1p-1074, 0x1p-149, 0x1p1023, -7.5, 2.0, 0x1.fffffffffffffp1023, 0x1.fffffep127};
	int m = sizeof sp / sizeof sp[0];
	for (int i = 0; i < m; i++)
		for (int j = 0; j < m; j++, n += 2) {
			if (!same64(rem64(sp[i], sp[j]), fmod(sp[i], sp[j])) && bad++ < 20) printf("fmod(%a, %a) = %a, got %a\n", sp[i], sp[j], fmod(sp[i], sp[j]), rem64(sp[i], sp[j]));
			float a = sp[i], b = sp[j];
			if (!same32(rem32(a, b), fmodf(a, b)) && bad++ < 20) printf("fmodf(%a, %a) = %a, got %a\n", a, b, fmodf(a, b), rem32(a, b));
		}
	printf("%ld of %ld differ\n", bad, n);
	return 0;
}
`
