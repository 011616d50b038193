#!/usr/bin/env python3
"""Row softmax, RMSNorm and LayerNorm: torch's peers of the tmac examples
(examples/softmax.tma, rmsnorm_vec.tma, layernorm.tma and their bf16
variants) and the device-to-device copy they are measured against.

    python3 bench/gpu/norms.py measure [--reps 50] [--warmup 10] [--shapes 4096x4096,...]
    python3 bench/gpu/norms.py report RESULTS...

measure times, on every shape (default 4096x4096, 8192x8192, 32768x4096)
and dtype (f32; bf16 in and out), torch.softmax(x, -1),
F.rms_norm(x, (N,), w, 1e-5), F.layer_norm(x, (N,), w, b, 1e-5) and
y.copy_(x), a device-to-device copy of x, on seeded normal inputs. Timing
is bench/gpu/peers.py's time_queued (CUDA events around each call, the
calls queued behind a GPU-side sleep so the host's launch latency is not
timed, warm-ups first, the median) with its rule for rotating copies of
the operands when they fit in L2, the rule tmac run --bench uses. Each
result is a line

    norms: IMPL OP DTYPE RxN us=MEDIAN bytes=BYTES

with BYTES the bytes the operation must move at least: x read and y
written, plus w and b (what tmac run --bench counts: every memref
argument once). scripts/gpu-norms.sh writes tmac's results in the same
form (IMPL tmac, OP the example) from its --bench output.

report reads such lines from the given files and prints a markdown table,
a row per operation, dtype and shape: tmac's and torch's times and their
bandwidth (BYTES / time) as a fraction of the copy's (2 R N element bytes
/ copy time) at the same shape and dtype in the same run. The target of
issue 18 is 0.85.
"""

import argparse
import re
import sys

SHAPES = "4096x4096,8192x8192,32768x4096"
DTYPES = ("f32", "bf16")
OPS = ("softmax", "rmsnorm", "layernorm")
EPS = 1e-5
TARGET = 0.85
LINE = re.compile(r"^norms: (\S+) (\S+) (\S+) (\d+)x(\d+) us=([0-9.]+) bytes=(\d+)")


def measure(args):
    import torch
    import torch.nn.functional as F

    from peers import rotation_copies, time_queued

    dtypes = {"f32": torch.float32, "bf16": torch.bfloat16}
    gen = torch.Generator(device="cuda").manual_seed(0)
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}", flush=True)

    def rms_norm(x, n, w):
        if hasattr(F, "rms_norm"):
            return F.rms_norm(x, (n,), w, EPS)
        # torch before 2.4: the formula, in f32 as F.rms_norm computes it.
        xf = x.float()
        return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + EPS) * w.float()).to(x.dtype)

    def emit(impl, op, dt, r, n, seconds, nbytes):
        print(f"norms: {impl} {op} {dt} {r}x{n} us={seconds * 1e6:.3f} bytes={nbytes}", flush=True)

    for shape in args.shapes.split(","):
        r, n = (int(v) for v in shape.split("x"))
        for dt in DTYPES:
            dtype = dtypes[dt]
            esize = torch.tensor([], dtype=dtype).element_size()
            xbytes = r * n * esize
            x = torch.randn(r, n, device="cuda", generator=gen).to(dtype)
            w = torch.randn(n, device="cuda", generator=gen).to(dtype)
            b = torch.randn(n, device="cuda", generator=gen).to(dtype)
            copies = rotation_copies(2 * xbytes)
            xs = [x] + [x.clone() for _ in range(copies - 1)]
            ys = [torch.empty_like(x) for _ in range(copies)]
            med, _ = time_queued(lambda i: ys[i].copy_(xs[i]), copies, args.warmup, args.reps)
            emit("copy", "copy", dt, r, n, med, 2 * xbytes)
            cases = {
                "softmax": (lambda i: torch.softmax(xs[i], -1), 2 * xbytes),
                "rmsnorm": (lambda i: rms_norm(xs[i], n, w), 2 * xbytes + n * esize),
                "layernorm": (lambda i: F.layer_norm(xs[i], (n,), w, b, EPS), 2 * xbytes + 2 * n * esize),
            }
            for op in OPS:
                fn, nbytes = cases[op]
                # The copy's rotation (w and b are a row each): the outputs
                # torch allocates are freed and reused, the inputs are what
                # L2 could serve.
                med, _ = time_queued(fn, copies, args.warmup, args.reps)
                emit("torch", op, dt, r, n, med, nbytes)
            del x, w, b, xs, ys
            torch.cuda.empty_cache()


def report(args):
    res = {}
    for path in args.results:
        try:
            text = open(path).read()
        except OSError as e:
            print(f"warning: {e}", file=sys.stderr)
            continue
        for line in text.splitlines():
            m = LINE.match(line)
            if m:
                impl, op, dt, r, n, us, nbytes = m.groups()
                res[(impl, op, dt, int(r), int(n))] = (float(us), int(nbytes))
    keys = sorted({k[2:] for k in res}, key=lambda k: (DTYPES.index(k[0]) if k[0] in DTYPES else 9, k[1] * k[2], k[1]))
    print("| op | dtype | shape | tmac us | tmac / copy | torch us | torch / copy | copy us (TB/s) |")
    print("|---|---|---|---|---|---|---|---|")
    # The ops of the table, then any other (tmac's variants, no torch peer).
    ops = list(OPS) + sorted({k[1] for k in res if k[1] not in OPS and k[1] != "copy"})
    for dt, r, n in keys:
        copy = res.get(("copy", "copy", dt, r, n))
        copy_bw = copy[1] / (copy[0] * 1e-6) if copy else None
        copy_col = f"{copy[0]:.1f} ({copy_bw / 1e12:.2f})" if copy else "-"
        for op in ops:
            if op not in OPS and not any(k[1:] == (op, dt, r, n) for k in res):
                continue
            cols = []
            for impl in ("tmac", "torch"):
                v = res.get((impl, op, dt, r, n))
                if v is None:
                    cols += ["-", "-"]
                    continue
                bw = v[1] / (v[0] * 1e-6)
                cols += [f"{v[0]:.1f}", f"{bw / copy_bw:.2f}" if copy_bw else "-"]
            print(f"| {op} | {dt} | {r}x{n} | {' | '.join(cols)} | {copy_col} |")
    print(f"(x / copy: the bytes of x, y, w and b over the time, as a fraction of the copy's 2 R N element bytes over its time; target {TARGET})")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("measure")
    m.add_argument("--shapes", default=SHAPES)
    m.add_argument("--reps", type=int, default=50)
    m.add_argument("--warmup", type=int, default=10)
    r = sub.add_parser("report")
    r.add_argument("results", nargs="+")
    args = p.parse_args()
    if args.cmd == "measure":
        measure(args)
    else:
        report(args)


if __name__ == "__main__":
    main()
