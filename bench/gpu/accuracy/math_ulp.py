#!/usr/bin/env python3
"""Error of every float math op on the GPU in f32 ulps, from a
`tmac run --dump-dir DIR` of bench/gpu/accuracy/math.tma (gen_math.py says
which row holds which op and how the inputs are spread): arg0 holds the
inputs, arg1 the second operands of atan2 and powf, arg2 the default
lowering's results, arg3 the fastmath<afn> ones. The reference is numpy's
float64 result (math.erf and math.erfc for erf and erfc; errors far below
an f32 ulp) rounded to f32.

Per op and mode it prints: the maximum error in ulps over the inputs whose
result is a normal f32 and over all finite results (subnormal results
too, where a flushing approximation is off by many of their tiny ulps),
the mean, the share correctly rounded, the maximum absolute error, the
worst input, and the special results (infinite or NaN reference:
overflow, poles, outside the domain) the GPU got wrong; for sin, cos and
tan also the maximum over |x| <= pi. The bound column is CUDA's
documented bound for the default lowering (dialects/math/gpu.go, when the
checkout is there). The table is Markdown; DIR/accuracy.json has the
numbers.

    python3 bench/gpu/accuracy/math_ulp.py DIR [--ops log,exp]

Exit status 0 when every default lowering is within its documented bound
and gets every special value right, 1 otherwise.
"""
import argparse
import json
import math
import os
import pathlib
import re
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_math import OPS, PRIMARY, binary_rows  # noqa: E402

erf = np.vectorize(math.erf, otypes=[np.float64])
erfc = np.vectorize(math.erfc, otypes=[np.float64])


def documented_bounds():
    """CUDA's ulp bounds of the f32 default lowerings, from dialects/math/gpu.go."""
    here = pathlib.Path(__file__).resolve().parent
    tails = [here / "../../..", here / "../..", pathlib.Path.cwd()]  # bench/gpu/accuracy, build/gpu, the root
    found = [t / "dialects/math/gpu.go" for t in tails if (t / "dialects/math/gpu.go").exists()]
    if not found:
        return {}
    src = found[0]
    bounds = {}
    for m in re.finditer(r'"math\.(\w+)":\s*\{[^}]*?ULP32:\s*(-?\d+)', src.read_text()):
        bounds[m.group(1)] = int(m.group(2))
    bounds["sqrt"] = 0  # correctly rounded: sqrt.rn
    return bounds


def measure(x, got, ref64, primary=None):
    """The error statistics of got against ref64 (float64), per input x."""
    with np.errstate(over="ignore"):
        ref32 = ref64.astype(np.float32)
    special = ~np.isfinite(ref32)
    same = (got == ref32) | (np.isnan(got) & np.isnan(ref32))
    bad_special = special & ~same
    f = ~special
    ulp = np.spacing(np.abs(ref32)).astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        err = np.abs(got.astype(np.float64) - ref64) / ulp
    err[f & ~np.isfinite(got)] = np.inf
    normal = f & (np.abs(ref32) >= np.finfo(np.float32).tiny)
    r = {
        "inputs": int(x.size),
        "finite": int(f.sum()),
        "max_ulp_normal": float(err[normal].max()) if normal.any() else 0.0,
        "max_ulp": float(err[f].max()) if f.any() else 0.0,
        "mean_ulp": float(err[f].mean()) if f.any() else 0.0,
        "correctly_rounded": float((got[f] == ref32[f]).mean()) if f.any() else 1.0,
        "max_abs": float(np.abs(got[f].astype(np.float64) - ref64[f]).max()) if f.any() else 0.0,
        "special": int(special.sum()),
        "special_wrong": int(bad_special.sum()),
    }
    if f.any():
        worst = np.flatnonzero(f)[np.argmax(err[f])]
        r["worst"] = int(worst)
    if bad_special.any():
        r["first_special_wrong"] = int(np.flatnonzero(bad_special)[0])
    if primary is not None:
        p = f & primary
        r["max_ulp_primary"] = float(err[p].max()) if p.any() else 0.0
    return r


def fmt(v):
    if v == np.inf:
        return "inf"
    if v < 10:
        return f"{v:.2f}"
    return f"{v:.3g}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir", help="the tmac run --dump-dir of math.tma's bundle")
    ap.add_argument("--ops", default="", help="comma-separated ops to report (default: all)")
    args = ap.parse_args()
    d = args.dir
    xs = np.load(f"{d}/arg0.out.npy").astype(np.float32)
    x2s = np.load(f"{d}/arg1.out.npy").astype(np.float32)
    outs = {"default": np.load(f"{d}/arg2.out.npy").astype(np.float32),
            "afn": np.load(f"{d}/arg3.out.npy").astype(np.float32)}
    wanted = set(filter(None, args.ops.split(",")))
    brows = binary_rows()
    bounds = documented_bounds()
    results = {}
    ok = True
    print("| op | mode | max ulp (normal results) | max ulp (all finite) | mean ulp | correctly rounded "
          "| max abs err | worst input | specials wrong | CUDA bound | within |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for row, (op, expr, _, segs2) in enumerate(OPS):
        if wanted and op not in wanted:
            continue
        x = xs[row]
        y = x2s[brows[op]] if segs2 is not None else None
        with np.errstate(all="ignore"):
            ref64 = eval(expr, {"np": np, "erf": erf, "erfc": erfc},  # noqa: S307 (our own table)
                         {"x": x.astype(np.float64), "y": None if y is None else y.astype(np.float64)})
        primary = np.abs(x) <= PRIMARY[op] if op in PRIMARY else None
        for mode, out in outs.items():
            r = measure(x, out[row], ref64, primary)
            results[f"math.{op} {mode}"] = r
            worst = "-"
            if "worst" in r:
                w = r["worst"]
                worst = f"{x[w]:.9g}" + (f", {y[w]:.9g}" if y is not None else "")
            bound = bounds.get(op)
            within = "-"
            if mode == "default" and bound is not None and bound >= 0:
                # A documented bound of b ulp allows |err| <= b (+ the 0.5 of
                # the correctly rounded result it is measured from).
                good = r["max_ulp"] <= bound + 0.5 and r["special_wrong"] == 0
                within = "yes" if good else "NO"
                ok = ok and good
            extra = f" (x in [-pi, pi]: {fmt(r['max_ulp_primary'])})" if "max_ulp_primary" in r else ""
            print(f"| math.{op} | {mode} | {fmt(r['max_ulp_normal'])}{extra} | {fmt(r['max_ulp'])} | "
                  f"{r['mean_ulp']:.3f} | {100 * r['correctly_rounded']:.2f}% | {r['max_abs']:.3g} | {worst} | "
                  f"{r['special_wrong']} of {r['special']} | {'-' if bound is None else bound} | {within} |")
    with open(f"{d}/accuracy.json", "w") as fh:
        json.dump(results, fh, indent=1)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
