#!/usr/bin/env python3
"""Which kernels the vendor libraries launch for a shape, and how.

    python3 bench/gpu/vendor_kernels.py SPEC... [--json out.json]

SPEC is gemm:bf16|f16:MxNxK, gemm:f16f32:MxNxK (f16 inputs, f32 output
through torch.mm's out_dtype) or scaled:e4m3:MxNxK:tensor|row
(torch._scaled_mm with fast accumulation, bf16 output). Each op is run
under torch.profiler (CUPTI activity tracing, which needs no performance
counters: Nsight Compute reads none on the gVisor machines) after warm-up
runs, and every kernel it launched is listed with its grid, block,
registers, dynamic shared memory and median duration over the profiled
runs. cuBLAS's kernel names say its tile (e.g. nvjet_sm90_tst_256x128_64x4
is a 256x128 tile with 64-deep K steps and 4 stages), its cluster (1x2),
and whether K is split; the grid says how many blocks run the tile loop.
"""
import argparse
import json
import os
import statistics
import sys
import tempfile

import torch
from torch.profiler import ProfilerActivity, profile


def op_of(spec):
    parts = spec.split(":")
    kind, dtype, shape = parts[0], parts[1], parts[2]
    M, N, K = (int(x) for x in shape.split("x"))
    g = torch.Generator(device="cuda").manual_seed(1)

    def rand(*s, dt):
        return (torch.rand(*s, device="cuda", generator=g) - 0.5).to(dt)

    if kind == "gemm":
        dt = {"bf16": torch.bfloat16, "f16": torch.float16, "f16f32": torch.float16}[dtype]
        a, b = rand(M, K, dt=dt), rand(K, N, dt=dt)
        if dtype == "f16f32":
            return lambda: torch.mm(a, b, out_dtype=torch.float32)
        return lambda: torch.matmul(a, b)
    if kind == "scaled":
        f8 = {"e4m3": torch.float8_e4m3fn, "e5m2": torch.float8_e5m2}[dtype]
        a = rand(M, K, dt=torch.float32).to(f8)
        bt = rand(N, K, dt=torch.float32).to(f8)
        row = parts[3] == "row"
        if row:
            sa, sb = torch.rand(M, 1, device="cuda") + 0.5, torch.rand(1, N, device="cuda") + 0.5
        else:
            sa, sb = torch.tensor(1.5, device="cuda"), torch.tensor(0.75, device="cuda")
        return lambda: torch._scaled_mm(a, bt.t(), scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16, use_fast_accum=True)
    raise SystemExit(f"vendor_kernels.py: unknown spec {spec!r}")


def kernels_of(fn, runs):
    for _ in range(10):
        fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(runs):
            fn()
        torch.cuda.synchronize()
    fd, path = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    prof.export_chrome_trace(path)
    with open(path) as f:
        trace = json.load(f)
    os.unlink(path)
    by_name = {}
    for ev in trace.get("traceEvents", []):
        if ev.get("cat") != "kernel":
            continue
        a = ev.get("args", {})
        k = by_name.setdefault(ev["name"], {
            "name": ev["name"], "grid": a.get("grid"), "block": a.get("block"),
            "registers": a.get("registers per thread"), "smem": a.get("shared memory"),
            "cluster": a.get("cluster"), "durations_us": []})
        k["durations_us"].append(ev.get("dur", 0))
    out = []
    for k in by_name.values():
        d = k.pop("durations_us")
        k["launches"] = len(d)
        k["median_us"] = statistics.median(d) if d else None
        out.append(k)
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("specs", nargs="+")
    p.add_argument("--runs", type=int, default=20)
    p.add_argument("--json")
    args = p.parse_args()
    torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False
    torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
    results = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "cases": []}
    rows = []
    for spec in args.specs:
        try:
            ks = kernels_of(op_of(spec), args.runs)
        except Exception as e:  # an op this torch lacks: say so, go on
            print(f"{spec}: {type(e).__name__}: {e}", file=sys.stderr)
            continue
        results["cases"].append({"spec": spec, "kernels": ks})
        for k in ks:
            rows.append((spec, k))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    print(f"device: {results['device']}, torch {results['torch']}")
    print("| case | kernel | grid | block | cluster | regs | smem | launches/run | median µs |")
    print("|---|---|---|---|---|---:|---:|---:|---:|")
    for spec, k in rows:
        fmt = lambda v: "x".join(str(x) for x in v) if isinstance(v, list) else str(v)
        print(f"| {spec} | `{k['name'][:110]}` | {fmt(k['grid'])} | {fmt(k['block'])} | {fmt(k['cluster'])} | "
              f"{k['registers']} | {k['smem']} | {k['launches'] / args.runs:g} | {k['median_us']:.1f} |")


if __name__ == "__main__":
    main()
