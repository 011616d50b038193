#!/usr/bin/env python3
"""Fits and checks gen_gemm.py's gelu_poly (the exact erf GELU without
libdevice's erff), on the CPU with f32 arithmetic emulated in Python:

    python3 bench/gpu/gelu_poly.py check [--step 1e-5]   # ERFC_POLY over y in [-12, 12]
    python3 bench/gpu/gelu_poly.py fit [--degree 8]      # refits the coefficients

The kernel computes E = 2^q(u), u = min(|y|, ERFC_CAP), q(u) = u * (c1 +
c2 u + ... ), then GELU(y) = 0.5 y (2 - E) for y >= 0, 0.5 y E below.
check prints the largest |erf error| (erf(y/sqrt2) ~ sign(y) (1 - E)), the
largest |GELU error| and the largest relative GELU error where |GELU| >
1e-6, against Python's double-precision math.erf/erfc; each fma is one
rounding to f32, exp2 is correctly rounded (the GPU's ex2.approx.f32 adds
at most 2 ulp). Exit status 1 when the relative error is not below
--limit (default 1e-5, 0.005 of bf16's half-ulp).

fit minimises the maximum relative error of E against erfc(u/sqrt2) on
[0, ERFC_CAP] (least squares on 3000 Chebyshev points, Lawson-reweighted
towards minimax) and prints the f32 coefficients for ERFC_POLY.
"""

import argparse
import math
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_gemm import ERFC_CAP, ERFC_POLY  # noqa: E402


def f32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


def gelu_poly(y, coef, cap):
    """GELU(y) as the kernel computes it, and its erf(y/sqrt2)."""
    u = min(abs(y), cap)
    p = coef[-1]
    for c in reversed(coef[:-1]):
        p = f32(p * u + c)  # fma: the product of two f32 is exact in double
    e = f32(2.0 ** f32(p * u))
    s = f32(2.0 - e) if y >= 0 else e
    return f32(f32(0.5 * y) * s), (1 - e if y >= 0 else e - 1)


def check(step, limit):
    coef = [f32(float(c)) for c in ERFC_POLY]
    cap = f32(float(ERFC_CAP))
    erf_err = abs_err = rel_err = 0.0
    worst = None
    i = 0
    while True:
        y = f32(-12 + i * step)
        i += 1
        if y > 12:
            break
        g, e = gelu_poly(y, coef, cap)
        x = y / math.sqrt(2)
        erf_err = max(erf_err, abs(e - math.erf(x)))
        exact = 0.5 * y * math.erfc(-x)
        abs_err = max(abs_err, abs(g - exact))
        if abs(exact) > 1e-6 and abs(g - exact) / abs(exact) > rel_err:
            rel_err, worst = abs(g - exact) / abs(exact), y
    print(f"y in [-12, 12] step {step:g}: max |erf error| {erf_err:.3g}, max |GELU error| {abs_err:.3g}, "
          f"max relative GELU error where |GELU| > 1e-6 {rel_err:.3g} at y = {worst:g} "
          f"({rel_err / 2**-9:.2g} of bf16's half-ulp)")
    return rel_err < limit


def fit(degree, cap):
    n = 3000
    us = [cap * (1 - math.cos(math.pi * (i + 0.5) / n)) / 2 for i in range(n)]
    target = [math.log2(math.erfc(u / math.sqrt(2))) for u in us]
    basis = [[(u / cap) ** j for j in range(1, degree + 1)] for u in us]
    weights = [1.0] * n
    for _ in range(80):
        a = [[sum(w * b[r] * b[c] for w, b in zip(weights, basis)) for c in range(degree)] + [sum(w * b[r] * t for w, b, t in zip(weights, basis, target))]
             for r in range(degree)]
        for i in range(degree):  # Gaussian elimination, partial pivoting
            p = max(range(i, degree), key=lambda r: abs(a[r][i]))
            a[i], a[p] = a[p], a[i]
            for r in range(i + 1, degree):
                f = a[r][i] / a[i][i]
                a[r] = [x - f * y for x, y in zip(a[r], a[i])]
        x = [0.0] * degree
        for i in reversed(range(degree)):
            x[i] = (a[i][degree] - sum(a[i][c] * x[c] for c in range(i + 1, degree))) / a[i][i]
        errs = [abs(sum(c * b for c, b in zip(x, bs)) - t) for bs, t in zip(basis, target)]
        total = sum(w * e for w, e in zip(weights, errs))
        weights = [w * e / total for w, e in zip(weights, errs)]
    print(f"degree {degree} on [0, {cap:g}]: max relative error of E {max(errs) * math.log(2):.3g}")
    print([repr(f32(c / cap ** (j + 1))) for j, c in enumerate(x)])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("what", choices=("check", "fit"))
    ap.add_argument("--step", type=float, default=1e-5)
    ap.add_argument("--limit", type=float, default=1e-5)
    ap.add_argument("--degree", type=int, default=len(ERFC_POLY))
    a = ap.parse_args()
    if a.what == "fit":
        fit(a.degree, float(ERFC_CAP))
        return 0
    return 0 if check(a.step, a.limit) else 1


if __name__ == "__main__":
    sys.exit(main())
