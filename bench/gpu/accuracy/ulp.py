#!/usr/bin/env python3
"""Error of a log2 kernel's outputs in f32 ulps, from a `tmac run --dump-dir`
of bench/gpu/accuracy/log2.tma: arg0 holds the inputs, arg1 the default
lowering's results, arg2 the fastmath<afn> ones. The reference is numpy's
float64 log2 (error far below an f32 ulp) rounded to f32.

    python3 bench/gpu/accuracy/ulp.py DUMP_DIR
"""
import sys

import numpy as np


def report(name, x, got):
    ref64 = np.log2(x.astype(np.float64))
    ref32 = ref64.astype(np.float32)
    special = ~np.isfinite(ref64) | (x == 0)
    # Special values (0, inf, NaN) must match exactly, NaN for NaN.
    bad_special = special & ~((got == ref32) | (np.isnan(got) & np.isnan(ref32)))
    f = ~special
    ulp = np.spacing(np.abs(ref32[f])).astype(np.float64)
    err = np.abs(got[f].astype(np.float64) - ref64[f]) / ulp
    near1 = f & (x >= 0.5) & (x <= 2)
    abs_near1 = np.abs(got[near1].astype(np.float64) - ref64[near1]).max() if near1.any() else 0.0
    wrong = int((got[f] != ref32[f]).sum())
    print(f"{name}: {int(f.sum())} finite inputs, max {err.max():.3f} ulp, mean {err.mean():.4f} ulp, "
          f"{wrong} not correctly rounded, max abs error in [0.5, 2] {abs_near1:.3g}, "
          f"{int(special.sum())} special inputs ({int(bad_special.sum())} wrong)")
    return err.max(), int(bad_special.sum())


def main():
    d = sys.argv[1]
    x = np.load(f"{d}/arg0.out.npy").astype(np.float32)
    default = np.load(f"{d}/arg1.out.npy").astype(np.float32)
    afn = np.load(f"{d}/arg2.out.npy").astype(np.float32)
    with np.errstate(divide="ignore", invalid="ignore"):
        worst, bad = report("math.log2", x, default)
        report("math.log2 fastmath<afn>", x, afn)
    # The default lowering's documented bound: 1 ulp, special values exact.
    sys.exit(0 if worst <= 1 and bad == 0 else 1)


if __name__ == "__main__":
    main()
