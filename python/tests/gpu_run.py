"""The Python package on the GPU (issue 17), run by scripts/gpu-step11.sh
on the GPU machine, never by make test (it needs a GPU, torch and the
bundles built by scripts/gpu-step11.sh build).

    python gpu_run.py examples BUNDLES TMAC OUT [FIRST]  # every bundle (from FIRST): tmac run --dump-dir, then the same
                                                  # inputs from Python on torch tensors; equal outputs
    python gpu_run.py one BUNDLE DUMPDIR          # (one bundle, in its own process: a hang is a timeout)
    python gpu_run.py features GEMM COPY          # streams, CUDA graphs, torch.compile, bad inputs
    python gpu_run.py overhead GEMM COPY TMAC     # host time per call vs Triton and torch.mm; kernel time
                                                  # vs tmac run --bench

Every mode prints lines "RESULT name status detail" that the shell script
turns into its table, and exits non-zero when something failed.
"""

import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np
import torch

import tmac

ELEM_TORCH = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32,
              "tf32": torch.float32, "f64": torch.float64, "i8": torch.int8,
              "i16": torch.int16, "i32": torch.int32, "i64": torch.int64,
              "index": torch.int64, "i1": torch.bool,
              "f8E4M3FN": torch.float8_e4m3fn, "f8E5M2": torch.float8_e5m2}

failures = 0


def result(name, ok, detail=""):
    global failures
    status = "PASS" if ok is True else ("SKIP" if ok is None else "FAIL")
    if ok is False:
        failures += 1
    print("RESULT %s %s %s" % (name, status, detail), flush=True)


def read_npy(path, elem):
    """A .npy file of tmac run --dump-dir as a CPU tensor of elem's type
    (bf16 and f8 are stored as their raw bit patterns)."""
    a = np.load(path)
    t = torch.from_numpy(np.ascontiguousarray(a))
    want = ELEM_TORCH[elem]
    if t.dtype != want:
        t = t.view(want)
    return t


def poison(shape, elem):
    dt = ELEM_TORCH[elem]
    if dt.is_floating_point and dt.itemsize >= 2:
        return torch.full(shape, float("nan"), dtype=dt, device="cuda")
    return torch.full(shape, 0x5a, dtype=torch.uint8, device="cuda").view(dt) if dt.itemsize == 1 \
        else torch.full(shape, -0x5a5a, dtype=dt, device="cuda")


def compare(got, want):
    """(identical, relative error) of two tensors of one dtype."""
    g, w = got.cpu().contiguous(), want.cpu().contiguous()
    # identical bit patterns (NaN outputs included)
    if g.shape == w.shape and torch.equal(g.view(torch.uint8), w.view(torch.uint8)):
        return True, 0.0
    if g.dtype in (torch.float8_e4m3fn, torch.float8_e5m2, torch.bool):
        return False, float("inf")
    if not g.dtype.is_floating_point:
        return False, float("inf")
    g64, w64 = g.double(), w.double()
    if torch.isnan(g64).any() != torch.isnan(w64).any():
        return False, float("inf")
    num = torch.linalg.norm(torch.nan_to_num(g64 - w64)).item()
    den = torch.linalg.norm(torch.nan_to_num(w64)).item() or 1.0
    return False, num / den


def one(bundle, dump):
    """Run bundle from Python on the inputs tmac run dumped and compare
    every output with tmac run's."""
    with open(os.path.join(dump, "manifest.json")) as f:
        m = json.load(f)
    k = tmac.load(bundle, m["entry"])
    args, outs = [], []
    for a in m["args"]:
        if "shape" not in a:
            args.append(a["value"])
            continue
        if a.get("in"):
            t = read_npy(os.path.join(dump, a["in"]), a["elem"]).cuda()
        else:
            t = poison(tuple(a["shape"]), a["elem"])
        args.append(t)
        if a["output"] and a.get("out"):
            outs.append((a["index"], t, read_npy(os.path.join(dump, a["out"]), a["elem"])))
    k(*args)
    torch.cuda.synchronize()
    worst, identical = 0.0, True
    for i, got, want in outs:
        same, err = compare(got, want)
        identical &= same
        worst = max(worst, err)
    # The same kernel on the same inputs: bit-identical unless it uses
    # float atomics (order-dependent sums); allow rounding-level noise.
    ok = identical or worst <= 1e-6
    print(json.dumps({"outputs": len(outs), "identical": identical, "rel_err": worst}))
    return ok


def examples(bundles, tmac_bin, out, first=""):
    """Every bundle in bundles (from the name first on, to continue a run
    that hit its time limit)."""
    names = sorted(f[:-5] for f in os.listdir(bundles) if f.endswith(".tmab") and f[:-5] >= first)
    for n in names:
        b = os.path.join(bundles, n + ".tmab")
        d = os.path.join(out, "dump", n)
        flags = []
        fl = os.path.join(bundles, n + ".flags")
        if os.path.exists(fl):
            flags = open(fl).read().split()
        try:
            r = subprocess.run([tmac_bin, "run", b, "--dump-dir", d, "--timeout", "60s"] + flags,
                               capture_output=True, text=True, timeout=120)
        except subprocess.TimeoutExpired:
            result("example:" + n, False, "tmac run timed out")
            continue
        if r.returncode != 0 or not os.path.exists(os.path.join(d, "manifest.json")):
            result("example:" + n, False, "tmac run failed: " + (r.stderr.strip().splitlines() or ["?"])[-1])
            continue
        try:
            p = subprocess.run([sys.executable, __file__, "one", b, d], capture_output=True, text=True, timeout=120)
        except subprocess.TimeoutExpired:
            result("example:" + n, False, "python call timed out")
            continue
        last = (p.stdout.strip().splitlines() or [""])[-1]
        if p.returncode != 0:
            err = (p.stderr.strip().splitlines() or ["?"])[-1]
            result("example:" + n, False, err[:300])
        else:
            result("example:" + n, True, last)


def gemm_inputs(k):
    (_, ta), (_, tb), (_, tc) = k.args
    shape = lambda t: tuple(int(x) for x in t[len("memref<"):].split("x")[:-1])
    a = torch.randn(shape(ta), device="cuda").to(torch.float16)
    b = torch.randn(shape(tb), device="cuda").to(torch.float16)
    c = torch.full(shape(tc), float("nan"), device="cuda")
    return a, b, c


def check_gemm(a, b, c):
    ref = a.float() @ b.float()
    err = (torch.linalg.norm((c - ref).double()) / torch.linalg.norm(ref.double())).item()
    return err < 1e-3, err


def features(gemm_path, copy_path):
    k = tmac.load(gemm_path)
    a, b, c = gemm_inputs(k)

    # Plain call, then on a side stream ordered after work queued there.
    k(a, b, c)
    torch.cuda.synchronize()
    ok, err = check_gemm(a, b, c)
    result("call", ok, "rel_err %.2e" % err)

    s = torch.cuda.Stream()
    c.fill_(float("nan"))
    torch.cuda.synchronize()
    with torch.cuda.stream(s):
        a2 = torch.randn_like(a, dtype=torch.float32).to(torch.float16)  # queued on s
        k(a2, b, c)                                                       # must run after it, on s
    s.synchronize()
    ok, err = check_gemm(a2, b, c)
    result("torch-current-stream", ok, "rel_err %.2e" % err)

    c.fill_(float("nan"))
    torch.cuda.synchronize()
    s2 = torch.cuda.Stream()
    k(a, b, c, stream=s2)
    s2.synchronize()
    ok, err = check_gemm(a, b, c)
    result("stream-argument", ok, "rel_err %.2e" % err)

    # CUDA graph: capture, change the inputs in place, replay.
    g = torch.cuda.CUDAGraph()
    ws = torch.cuda.Stream()
    ws.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(ws):
        k(a, b, c)
    torch.cuda.current_stream().wait_stream(ws)
    torch.cuda.synchronize()
    try:
        with torch.cuda.graph(g):
            k(a, b, c)
        a.copy_(torch.randn_like(a, dtype=torch.float32).to(torch.float16))
        c.fill_(float("nan"))
        g.replay()
        torch.cuda.synchronize()
        ok, err = check_gemm(a, b, c)
        result("cuda-graph-replay", ok, "rel_err %.2e after changing A" % err)
    except Exception as e:  # noqa: BLE001 (reported, not hidden)
        result("cuda-graph-replay", False, "%s: %s" % (type(e).__name__, e))

    # torch.compile with the kernel as a custom op inside an nn.Module.
    import tmac.torch as tt
    try:
        mm = tt.register(k, "tmac_gpu_test::gemm")

        class M(torch.nn.Module):
            def __init__(self, w):
                super().__init__()
                self.w = torch.nn.Parameter(w, requires_grad=False)

            def forward(self, x):
                return torch.relu(mm(x, self.w)) * 0.5

        mod = M(b)
        eager = torch.relu(a.float() @ b.float()) * 0.5
        out = torch.compile(mod, fullgraph=True)(a)
        torch.cuda.synchronize()
        err = (torch.linalg.norm((out - eager).double()) / torch.linalg.norm(eager.double())).item()
        result("torch.compile", err < 1e-3, "rel_err %.2e vs eager" % err)
        try:
            torch.library.opcheck(mm, (a, b))
            result("opcheck", True)
        except Exception as e:  # noqa: BLE001
            result("opcheck", False, "%s: %s" % (type(e).__name__, str(e)[:300]))
    except Exception as e:  # noqa: BLE001
        result("torch.compile", False, "%s: %s" % (type(e).__name__, str(e)[:300]))

    # Bad inputs: each an ArgumentError naming the argument; nothing launched.
    c.fill_(float("nan"))
    torch.cuda.synchronize()
    bad = {
        "wrong-dtype": lambda: k(a.float(), b, c),
        "wrong-shape": lambda: k(a[:-64], b, c),
        "non-contiguous": lambda: k(a.t(), b, c),
        "cpu-tensor": lambda: k(a.cpu(), b, c),
        "misaligned": lambda: k(torch.empty(a.numel() + 8, dtype=a.dtype, device="cuda")[1:a.numel() + 1].view(a.shape), b, c),
        "too-few": lambda: k(a, b),
        "scalar-for-array": lambda: k(a, 3, c),
    }
    for name, f in bad.items():
        try:
            f()
            result("bad:" + name, False, "no exception")
        except tmac.ArgumentError as e:
            torch.cuda.synchronize()
            untouched = bool(torch.isnan(c).all())
            result("bad:" + name, untouched, ("nothing launched; " if untouched else "OUTPUT WRITTEN; ") + str(e)[:200])
        except Exception as e:  # noqa: BLE001
            result("bad:" + name, False, "%s: %s" % (type(e).__name__, str(e)[:200]))

    # A DLPack producer other than torch's fast path: the same tensors
    # wrapped so that only __dlpack__/__dlpack_device__ are visible.
    class Wrapped:
        def __init__(self, t):
            self.t = t

        def __dlpack__(self, **kw):
            return self.t.__dlpack__(**kw)

        def __dlpack_device__(self):
            return self.t.__dlpack_device__()

    c.fill_(float("nan"))
    k(Wrapped(a), Wrapped(b), Wrapped(c))
    torch.cuda.synchronize()
    ok, err = check_gemm(a, b, c)
    result("dlpack-producer", ok, "rel_err %.2e" % err)


def host_us(f, n=2000):
    """Median host time of one call (each call timed alone, GPU work queued
    asynchronously), after 200 warm-up calls."""
    for _ in range(200):
        f()
    torch.cuda.synchronize()
    ts = []
    for i in range(n):
        t0 = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t0)
        if i % 256 == 255:
            torch.cuda.synchronize()  # keep the launch queue from filling
    torch.cuda.synchronize()
    return statistics.median(ts) * 1e6


def kernel_ms(f, reps=50):
    for _ in range(5):
        f()
    times = []
    for _ in range(reps):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        f()
        e1.record()
        e1.synchronize()
        times.append(e0.elapsed_time(e1))
    return statistics.median(times)


def overhead(gemm_path, copy_path, tmac_bin):
    import triton
    import triton.language as tl

    @triton.jit
    def copy_kernel(src, dst, n, BLOCK: tl.constexpr):
        i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(dst + i, tl.load(src + i, mask=i < n), mask=i < n)

    gemm = tmac.load(gemm_path)
    a, b, c = gemm_inputs(gemm)
    cp = tmac.load(copy_path)
    (_, ts), _ = cp.args
    shape = tuple(int(x) for x in ts[len("memref<"):].split("x")[:-1])
    src = torch.randn(shape, device="cuda")
    dst = torch.empty_like(src)
    x16 = torch.randn(16, 16, device="cuda")
    tsrc, tdst = torch.randn(256, device="cuda"), torch.empty(256, device="cuda")
    rows = [
        ("tmac GEMM 4096^3 (2 tensor maps)", lambda: gemm(a, b, c)),
        ("tmac copy %s (2 tensor maps)" % "x".join(map(str, shape)), lambda: cp(src, dst)),
        ("Triton copy launch (256 floats)", lambda: copy_kernel[(1,)](tsrc, tdst, 256, BLOCK=256)),
        ("torch.mm 16x16 f32", lambda: torch.mm(x16, x16)),
        ("torch.add 256 f32", lambda: torch.add(tsrc, tsrc)),
    ]
    for name, f in rows:
        print("HOST %.2f %s" % (host_us(f, 500 if "GEMM" in name else 5000), name), flush=True)
    # Where a cached call's time goes: the prepared cuLaunchKernelEx alone
    # (ctypes + driver), and the same call timed as a loop (no per-call
    # perf_counter; the copy kernel is shorter than a launch, so the host
    # is the limit).
    (prep,) = cp._cache.values()
    ((launch, launch_args, _),) = prep.actions
    print("HOST %.2f tmac copy: the prepared cuLaunchKernelEx alone" % host_us(lambda: launch(*launch_args), 5000),
          flush=True)
    for name, f in (("src.data_ptr() shape stride() dtype get_device()",
                     lambda: (src.data_ptr(), src.shape, src.stride(), src.dtype, src.get_device())),
                    ("torch._C._cuda_getCurrentRawStream(0)", lambda: torch._C._cuda_getCurrentRawStream(0)),
                    ("an empty lambda", lambda: None)):
        print("HOST %.2f %s" % (host_us(f, 5000), name), flush=True)
    n = 20000
    for name, g in (("tmac copy", lambda: cp(src, dst)),
                    ("Triton copy launch", lambda: copy_kernel[(1,)](tsrc, tdst, 256, BLOCK=256)),
                    ("torch.add", lambda: torch.add(tsrc, tsrc))):
        for _ in range(200):
            g()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for i in range(n):
            g()
            if i % 512 == 511:
                torch.cuda.synchronize()
        torch.cuda.synchronize()
        print("LOOP %.2f %s (us per call over %d calls)" % ((time.perf_counter() - t0) / n * 1e6, name, n), flush=True)
    ms = kernel_ms(lambda: gemm(a, b, c))
    print("KERNEL python %.4f ms" % ms, flush=True)
    r = subprocess.run([tmac_bin, "run", gemm_path, "--bench", "--timeout", "120s"], capture_output=True, text=True, timeout=300)
    print("KERNEL tmac-run-bench-output " + " | ".join(l for l in r.stdout.splitlines() if "ms" in l or "TFLOP" in l))
    ok, err = check_gemm(a, b, c)
    result("overhead-gemm-correct", ok, "rel_err %.2e" % err)


def main():
    mode = sys.argv[1]
    if mode == "one":
        sys.exit(0 if one(sys.argv[2], sys.argv[3]) else 1)
    elif mode == "examples":
        examples(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5] if len(sys.argv) > 5 else "")
    elif mode == "features":
        features(sys.argv[2], sys.argv[3])
    elif mode == "overhead":
        overhead(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        sys.exit("unknown mode " + mode)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
