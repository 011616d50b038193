#!/usr/bin/env python3
r"""Flash-attention forward on the GPU (issue 19): tmac against its peers.

Peer table (default): for each shape (B, H, S, D) of --shapes (the issue's
four by default), non-causal and causal (--causal), bf16 Q, K, V drawn
from N(0, 1) with a fixed seed, scale 1/sqrt(D):

  - torch SDPA with one backend forced by torch.nn.attention.sdpa_kernel:
    CUDNN_ATTENTION, FLASH_ATTENTION, EFFICIENT_ATTENTION (a backend that
    refuses the shape is reported as n/a, with its reason);
  - the Triton fused-attention baseline (bench/gpu/triton_attention.py,
    autotuned per shape before timing).

Every output is first checked against an f32 softmax reference computed
on the first --check-heads (batch·head) slices, as ||out-ref||/||ref||
(tolerance 1.6e-2, bf16's); a failed check is reported and not timed.
Times are CUDA events around each launch queued behind a GPU sleep
(peers.py's time_queued), after warm-up, median of --reps; TFLOP/s count
4·B·H·S²·D per forward, halved for causal. The ratios the issue targets
are printed per shape: tmac's best-known peers, Triton / FLASH and
cuDNN / FLASH.

--tmac DUMP: the dump of `tmac run examples/attention_fwd.tma --bench
--dump-dir DUMP` (inputs Q, K, V as [(B·H·S) x D] bf16, outputs O and lse);
--bh and --seq say how its rows split into heads (the example: 2 and 512).
Checks tmac's O and lse against the f32 reference on the same inputs, then
times the peers on those inputs and prints tmac's time (its manifest's
--bench figure) beside them.

--plan prints the cases and their FLOP counts without touching the GPU
(no torch needed), for a dry run and for the lit test.

    python3 bench/gpu/attention.py                      # the peer table
    python3 bench/gpu/attention.py --tmac /tmp/attn --bh 2 --seq 512
"""

import argparse
import json
import math
import os
import sys

SHAPES = [(4, 16, 4096, 128), (2, 16, 8192, 128), (8, 16, 2048, 64), (16, 16, 1024, 128)]
BACKENDS = ["CUDNN_ATTENTION", "FLASH_ATTENTION", "EFFICIENT_ATTENTION"]
TOL = 1.6e-2  # bf16, as peers.py


def flops(b, h, s, d, causal):
    """Forward FLOPs: two GEMMs of 2·S²·D per head, half of them for causal."""
    f = 4.0 * b * h * s * s * d
    return f / 2 if causal else f


def parse_shape(text):
    dims = [int(x) for x in text.split("x")]
    if len(dims) != 4 or min(dims) <= 0:
        raise argparse.ArgumentTypeError(f"'{text}' is not a shape BxHxSxD")
    return tuple(dims)


def cases(args):
    modes = {"off": [False], "on": [True], "both": [False, True]}[args.causal]
    return [(shape, c) for shape in args.shapes for c in modes]


def case_name(shape, causal):
    b, h, s, d = shape
    return f"B={b} H={h} S={s} D={d}{' causal' if causal else ''}"


def reference(q, k, v, causal, scale, heads):
    """O and lse in f32 for the first `heads` batch·head slices of
    [B, H, S, D] inputs, as plain softmax (scores materialised)."""
    import torch
    b, h, s, d = q.shape
    qf = q.reshape(b * h, s, d)[:heads].float()
    kf = k.reshape(b * h, s, d)[:heads].float()
    vf = v.reshape(b * h, s, d)[:heads].float()
    sc = torch.matmul(qf, kf.transpose(1, 2)) * scale
    if causal:
        sc.masked_fill_(torch.ones(s, s, dtype=torch.bool, device=q.device).triu(1), float("-inf"))
    lse = torch.logsumexp(sc, dim=-1)
    o = torch.matmul(torch.exp(sc - lse[..., None]), vf)
    return o, lse


def rel(out, ref):
    import torch
    o = out.float()
    if not bool(torch.isfinite(o).all()):
        return float("nan")
    return float(torch.linalg.vector_norm(o - ref) / torch.linalg.vector_norm(ref))


def head_slice(t, heads):
    b, h, s = t.shape[:3]
    return t.reshape(b * h, s, *t.shape[3:])[:heads]


def peers(q, k, v, causal, scale, args):
    """Checks then times each peer on q, k, v ([B, H, S, D]); returns rows
    (name, seconds or None, error or None, note)."""
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from peers import time_queued

    heads = min(args.check_heads, q.shape[0] * q.shape[1])
    ref_o, _ = reference(q, k, v, causal, scale, heads)
    rows = []
    for name in BACKENDS:
        def run(_i):
            return F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale)

        with sdpa_kernel(getattr(SDPBackend, name)):  # entered once, outside the timed launches
            try:
                err = rel(head_slice(run(0), heads), ref_o)
            except Exception as e:  # the backend refuses the shape ("No available kernel")
                rows.append((f"sdpa {name}", None, None, "n/a: " + str(e).strip().splitlines()[0][:90]))
                continue
            if not err <= TOL:
                rows.append((f"sdpa {name}", None, err, "FAIL, not timed"))
                continue
            t, _ = time_queued(run, 1, args.warmup, args.reps)
        rows.append((f"sdpa {name}", t, err, ""))
    if not args.no_triton:
        from triton_attention import attention
        try:
            o, _ = attention(q, k, v, causal, scale)  # autotunes
            err = rel(head_slice(o, heads), ref_o)
        except Exception as e:  # a compile or launch failure is a row, not the end of the table
            rows.append(("triton fused attention", None, None, "error: " + str(e).strip().splitlines()[0][:90]))
            err = None
        if err is not None:
            if err <= TOL:
                t, _ = time_queued(lambda _i: attention(q, k, v, causal, scale), 1, args.warmup, args.reps)
                best = _best_config()
                rows.append(("triton fused attention", t, err, best))
            else:
                rows.append(("triton fused attention", None, err, "FAIL, not timed"))
    return rows


def _best_config():
    from triton_attention import _attention_fwd
    c = getattr(_attention_fwd, "best_config", None)
    return "" if c is None else f"{c.kwargs} warps {c.num_warps} stages {c.num_stages}"


def print_rows(title, f, rows):
    print(f"\n{title}  ({f / 1e12:.2f} TFLOP per forward)")
    by = {}
    for name, t, err, note in rows:
        perf = f"{t * 1e6:9.1f} us {f / t / 1e12:7.1f} TFLOP/s" if t else f"{'n/a':>9s}    {'':>7s}        "
        e = f"  err {err:.3g}" if err is not None else ""
        print(f"  {name:30s} {perf}{e}  {note}")
        if t:
            by[name] = t
    fl = by.get("sdpa FLASH_ATTENTION")
    cu = by.get("sdpa CUDNN_ATTENTION")
    tr = by.get("triton fused attention")
    tm = by.get("tmac attention_fwd")
    if tm and fl:
        print(f"  tmac / FLASH: {fl / tm:.2f}x (target >= 1.6 at D=128, S >= 4096)")
    if tm and cu:
        print(f"  tmac / cuDNN: {cu / tm:.2f}x (target >= 0.95 at D=128, S >= 4096)")
    if tm and tr:
        print(f"  tmac / Triton: {tr / tm:.2f}x (target >= 1.2)")
    if tr and fl:
        print(f"  Triton / FLASH: {fl / tr:.2f}x; ", end="")
    if cu and fl:
        print(f"cuDNN / FLASH: {fl / cu:.2f}x", end="")
    print()
    return by


def run_tmac(args):
    import torch
    from peers import read_npy
    with open(os.path.join(args.tmac, "manifest.json")) as f:
        m = json.load(f)
    mem = [a for a in m["args"] if "shape" in a]
    ins = [a for a in mem if not a["output"]]
    outs = [a for a in mem if a["output"]]
    if len(ins) != 3 or len(outs) != 2:
        sys.exit(f"{args.tmac}: expected inputs Q, K, V and outputs O, lse; got {len(ins)} inputs, {len(outs)} outputs")
    rows_, d = ins[0]["shape"]
    if rows_ != args.bh * args.seq:
        sys.exit(f"{args.tmac}: Q has {rows_} rows, not --bh {args.bh} x --seq {args.seq}")
    shape = (1, args.bh, args.seq, d)
    q, k, v = (read_npy(os.path.join(args.tmac, a["in"]), a["elem"]).reshape(shape).cuda() for a in ins)
    o = read_npy(os.path.join(args.tmac, outs[0]["out"]), outs[0]["elem"]).reshape(shape).cuda()
    lse = read_npy(os.path.join(args.tmac, outs[1]["out"]), outs[1]["elem"]).reshape(shape[:3]).cuda()
    scale = 1.0 / math.sqrt(d)
    heads = args.bh
    ref_o, ref_lse = reference(q, k, v, args.tmac_causal, scale, heads)
    err_o, err_lse = rel(head_slice(o, heads), ref_o), rel(head_slice(lse, heads), ref_lse)
    bench = m.get("bench") or {}
    t = bench.get("kernel_queued_median_s") or bench.get("kernel_median_s")
    ok = err_o <= TOL and err_lse <= 1e-3
    note = f"lse err {err_lse:.3g} {'PASS' if ok else 'FAIL'}" + ("" if t else "; no --bench figures in the dump")
    rows = [("tmac attention_fwd", t, err_o, note)]
    rows += peers(q, k, v, args.tmac_causal, scale, args)
    print_rows(f"tmac dump {args.tmac}: " + case_name(shape, args.tmac_causal), flops(*shape, args.tmac_causal), rows)
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shapes", type=parse_shape, nargs="+", default=SHAPES, metavar="BxHxSxD")
    ap.add_argument("--causal", choices=["off", "on", "both"], default="both")
    ap.add_argument("--plan", action="store_true", help="print the cases and FLOPs only (no GPU, no torch)")
    ap.add_argument("--tmac", metavar="DUMP", help="a tmac run --dump-dir of examples/attention_fwd.tma")
    ap.add_argument("--bh", type=int, default=2, help="the dump's batch·heads (examples/attention_fwd.tma: 2)")
    ap.add_argument("--seq", type=int, default=512, help="the dump's sequence length (examples/attention_fwd.tma: 512)")
    ap.add_argument("--tmac-causal", action="store_true", help="the dumped kernel is causal")
    ap.add_argument("--no-triton", action="store_true")
    ap.add_argument("--check-heads", type=int, default=2, help="batch·head slices checked against the f32 reference")
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    if args.plan:
        for shape, causal in cases(args):
            print(f"{case_name(shape, causal)}: {flops(*shape, causal):.6g} FLOP")
        return

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import torch
    p = torch.cuda.get_device_properties(0)
    print(f"device: {p.name}, torch {torch.__version__}, CUDA {torch.version.cuda}, cuDNN {torch.backends.cudnn.version()}")
    sys.stdout.flush()
    os.system("nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,clocks.mem,power.draw --format=csv")
    ok = True
    if args.tmac:
        ok = run_tmac(args)
    else:
        g = torch.Generator(device="cuda").manual_seed(args.seed)
        for shape, causal in cases(args):
            q, k, v = (torch.randn(shape, generator=g, device="cuda", dtype=torch.bfloat16) for _ in range(3))
            rows = peers(q, k, v, causal, 1.0 / math.sqrt(shape[3]), args)
            print_rows(case_name(shape, causal), flops(*shape, causal), rows)
            sys.stdout.flush()
            del q, k, v
            torch.cuda.empty_cache()
    if not ok:
        sys.exit(1)


if __name__ == "__main__":
    main()
