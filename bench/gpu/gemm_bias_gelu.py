#!/usr/bin/env python3
r"""The fused GEMM + bias + GELU epilogue (issue 18): tmac against cuBLASLt.

examples/gemm_bias_gelu.tma (warp-specialised, TMA-store epilogue,
branch-free exact GELU) against the same kernel without the epilogue,
which bench/gpu/gen_gemm.py writes (the example is its output with
--activation gelu_poly and tmac.warp_specialize):

    G="--m 4096 --n 4096 --k 4096 --dtype bf16 --out bf16 --design coop --bm 128 --bn 256 --epilogue tma --stages 3"
    WS='s/{tmac.stages = 3 : i64}/{tmac.stages = 3 : i64, tmac.warp_specialize}/'
    python3 bench/gpu/gen_gemm.py $G -o /tmp/wp0.tma && sed "$WS" /tmp/wp0.tma > /tmp/ws_plain.tma
    tmac run examples/gemm_bias_gelu.tma --bench --dump-dir /tmp/gbg
    tmac run /tmp/ws_plain.tma --bench --dump-dir /tmp/wsp
    python3 bench/gpu/gemm_bias_gelu.py /tmp/gbg --plain /tmp/wsp

At 8192^3, both written by gen_gemm.py (--m 8192 --n 8192 --k 8192 in G;
--activation gelu_poly for the fused one, --activation gelu for
libdevice's erff instead), then sed "$WS" as above.

The simple pipelined form (not warp-specialised, direct stores) against
its plain GEMM, 4096^3 and, rewritten by sed, 8192^3 (grid 64x64, 128 K
steps):

    tmac run examples/variants/gemm_bias_gelu_simple.tma --bench --dump-dir /tmp/gbs
    tmac run examples/variants/gemm_pipelined_bf16out.tma --bench --dump-dir /tmp/plain
    python3 bench/gpu/gemm_bias_gelu.py /tmp/gbs --plain /tmp/plain
    S='s/4096/8192/g; s/\(%h32 = arith.constant\) 32 :/\1 64 :/; s/\(%ksteps = arith.constant\) 64 :/\1 128 :/'
    sed "$S" examples/variants/gemm_bias_gelu_simple.tma > /tmp/gbs8192.tma
    sed "$S" examples/variants/gemm_pipelined_bf16out.tma > /tmp/plain8192.tma
    tmac run /tmp/gbs8192.tma --bench --dump-dir /tmp/gbs8192
    tmac run /tmp/plain8192.tma --bench --dump-dir /tmp/plain8192
    python3 bench/gpu/gemm_bias_gelu.py /tmp/gbs8192 --plain /tmp/plain8192

Reads the inputs tmac used (A MxK, B KxN, bias N, all bf16) and tmac's
output D (bf16) back from the dump, checks D against a float64 reference
GELU(A*B + bias) (exact erf form) as ||D-ref||/||ref||, then times on the
same inputs, with CUDA events around each launch queued behind a GPU sleep
(peers.py's time_queued):

  - torch._addmm_activation(bias, A, B, use_gelu=True): cuBLASLt's GEMM
    with its fused bias + GELU epilogue (the issue's peer);
  - torch.mm(A, B): the plain cuBLAS GEMM, for scale;

and prints TFLOP/s (2*M*N*K per launch) and the ratios the issue asks
for: tmac / cuBLASLt epilogue (target >= 1.05) and, with --plain (a dump
of the same tmac GEMM without the epilogue, as above), tmac fused / tmac
plain (target >= 0.97). tmac's own times come from its manifest's --bench
figures (queued median). Card, clocks and torch version are printed.
"""

import argparse
import json
import math
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peers import read_npy, rel_err, rotation_copies, time_queued, TOL  # noqa: E402


def load(d):
    with open(os.path.join(d, "manifest.json")) as f:
        m = json.load(f)
    mem = [a for a in m["args"] if "shape" in a]
    ins = [read_npy(os.path.join(d, a["in"]), a["elem"]) for a in mem if not a["output"]]
    outs = [read_npy(os.path.join(d, a["out"]), a["elem"]) for a in mem if a["output"]]
    return m, ins, outs


def tmac_time(m):
    b = m.get("bench") or {}
    t = b.get("kernel_queued_median_s") or b.get("kernel_median_s")
    if not t:
        sys.exit(f"{m.get('entry')}: the dump has no --bench figures (run tmac run with --bench)")
    return t


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dump", help="tmac run --dump-dir of examples/gemm_bias_gelu.tma")
    ap.add_argument("--plain", help="tmac run --dump-dir of the same GEMM without the epilogue")
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--reps", type=int, default=50)
    args = ap.parse_args()

    m, ins, outs = load(args.dump)
    if len(ins) != 3 or len(outs) != 1:
        sys.exit(f"{args.dump}: expected inputs A, B, bias and one output, got {len(ins)} inputs and {len(outs)} outputs")
    a, b, bias = (t.cuda() for t in ins)
    d = outs[0].cuda()
    (mm, kk), (_, nn) = a.shape, b.shape
    flops = 2.0 * mm * nn * kk

    torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False
    ref = torch.nn.functional.gelu(a.double() @ b.double() + bias.double())
    ref_norm = float(torch.linalg.vector_norm(ref))
    tol = TOL[torch.bfloat16]

    copies = rotation_copies(a.numel() * 2 + b.numel() * 2 + d.numel() * 2)
    xs = [(a.clone(), b.clone(), bias.clone()) for _ in range(copies)]
    outs_lt = [torch.empty_like(d) for _ in range(copies)]

    def lt(i):
        x, y, z = xs[i]
        torch._addmm_activation(z, x, y, use_gelu=True, out=outs_lt[i])

    def plain(i):
        x, y, _ = xs[i]
        torch.mm(x, y, out=outs_lt[i])

    lt(0)
    torch.cuda.synchronize()
    lt_err = rel_err(torch._addmm_activation(bias, a, b, use_gelu=True), ref, ref_norm)
    tmac_err = rel_err(d, ref, ref_norm)
    t_lt, _ = time_queued(lt, copies, args.warmup, args.reps)
    t_mm, _ = time_queued(plain, copies, args.warmup, args.reps)
    t_tmac = tmac_time(m)

    p = torch.cuda.get_device_properties(0)
    print(f"device: {p.name}, torch {torch.__version__}, CUDA {torch.version.cuda}")
    os.system("nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,clocks.mem,power.draw --format=csv")
    print(f"shape: M={mm} N={nn} K={kk} bf16, f32 accumulate, bias + GELU (erf), bf16 out; {copies} argument copies rotated")
    rows = [("tmac gemm_bias_gelu", t_tmac, tmac_err), ("torch._addmm_activation (cuBLASLt GELU)", t_lt, lt_err),
            ("torch.mm (no epilogue)", t_mm, None)]
    if args.plain:
        pm, _, _ = load(args.plain)
        rows.append(("tmac gemm without epilogue", tmac_time(pm), None))
    for name, t, err in rows:
        check = "" if err is None else f"  ||out-ref||/||ref|| {err:.3g} {'PASS' if err <= tol else 'FAIL'}"
        print(f"{name:42s} {t * 1e6:9.1f} us  {flops / t / 1e12:7.1f} TFLOP/s{check}")
    print(f"tmac / cuBLASLt epilogue: {t_lt / t_tmac:.3f}x (target >= 1.05)")
    if args.plain:
        print(f"tmac fused / tmac plain: {tmac_time(pm) / t_tmac:.3f}x (target >= 0.97)")
    if not (tmac_err <= tol) or math.isnan(tmac_err):
        sys.exit(1)


if __name__ == "__main__":
    main()
