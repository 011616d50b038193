#!/usr/bin/env python3
"""tmac against its peers on the same GPU, on the same inputs.

    python3 bench/gpu/peers.py ITEM... --json results.json --markdown table.md

Each ITEM is either a `tmac run --dump-dir` directory (its manifest.json
says what was run; the inputs tmac used are read back from its .npy files
and given to every peer, and tmac's output is checked here independently),
or a spec for a case without a tmac dump, with inputs drawn here:

    gemm:f16:MxNxK[:NOTE]   add:f32:RxC[:NOTE]   copy:f32:N[:NOTE]
    scaled:e4m3:MxNxK:tensor|row[:NOTE]

(NOTE, if any, is shown as the tmac column's status, e.g. why there is no
tmac bundle for that shape.)

Kinds are read off the dump's arguments: two 2-D inputs A (MxK), B (KxN)
and an output MxN: a GEMM; two inputs and an output of one shape: an
elementwise add; one input and one output of the same size: a copy.

Peers of a GEMM: cuBLAS through torch.matmul in the input dtype (its output
is in the input dtype, which is what torch.matmul gives), cuBLAS with a
float32 output (torch.mm(..., out_dtype=torch.float32), where this torch
has it), the tiled Triton matmul (triton_matmul.py) and the persistent TMA
Triton matmul (triton_tma_matmul.py), both writing tmac's output dtype
unless --triton-out says otherwise. Reduced-precision reductions are turned
off in cuBLAS (torch.backends.cuda.matmul.allow_{fp16,bf16}_reduced_precision_reduction),
so every implementation accumulates in float32.
Upstream MLIR 22's chapter-4 kernel (--mlir-dir, built by
scripts/mlir-baseline.sh) runs on the square f16 GEMMs' inputs, launched by
bench/gpu/mlir_gemm.py in a child process.
Peers of a scaled fp8 GEMM (four inputs: A MxK and B NxK in e4m3 or e5m2,
f32 scales sa and sb of one element each or of M and N; D = (A B^T) sa sb,
gen_gemm.py --scale): torch._scaled_mm with and without use_fast_accum
(tmac's wgmma accumulates as the fast mode does) and seed 002's Triton TMA
kernel (triton_fp8.py), all writing tmac's output dtype.
Peers of an add: torch.add, the Triton add, and device-to-device copies
moving the same number of bytes (torch copy_ and the Triton copy). Peers of
a copy: torch copy_ and the Triton copy.

Correctness first: every implementation's output is compared with a torch
reference (float64 matmul of the same inputs for GEMMs; the float32 sum or
the input itself for add and copy) as ||out-ref||/||ref|| (float64 norms)
and must be finite and within the tolerance of its output dtype (see TOL);
an implementation that fails is reported as FAIL and left out of every
ratio. The Triton kernels are tuned over their configuration lists on the
case's own inputs: every configuration is checked the same way, and timed
like the final measurement with fewer repetitions (--tune-reps); the
fastest passing one is then measured in full.

Timing: CUDA events around each launch, --warmup launches first, median of
--reps. The launches are queued behind a GPU-side sleep (torch.cuda._sleep)
long enough to cover the CPU's enqueue time, so Python launch overhead is
not timed and every event pair brackets only its kernel (the "sync" timing,
one launch at a time with a synchronisation after each, as tmac run --bench
does it, is recorded in the JSON too). When the case's operands (inputs and
output) take less than 50 MB, the L2 size, the inputs and outputs are
rotated over min(2*50MB/bytes + 1, 8) copies, the rule tmac run --bench
uses, so that no launch reads what the previous one left in L2. tmac's time
is its own `tmac run --bench` measurement read from the manifest: its
kernels queued behind a GPU-side spin kernel with CUDA events around each
launch (the same method), median; its one-launch-at-a-time median is the
"sync" figure.
"""

import argparse
import datetime
import json
import math
import os
import sys
import time
import traceback

import torch

from report import markdown, parse_npy_header

L2_BYTES = 50 << 20
MAX_COPIES = 8
SLEEP_HZ = 2.0e9  # cycles per second assumed for torch.cuda._sleep (>= the H200's clock: sleeps at least as long)

# Tolerance on ||out-ref||/||ref|| by output dtype. float32 outputs of a
# float32-accumulated GEMM are ~1e-6 off a float64 reference; a float16 or
# bfloat16 output adds its rounding (unit roundoff 2^-11 and 2^-8, about
# u/sqrt(3) in norm). A single wrong 128x128 tile of an 8192x8192 output
# already gives ~1.5e-2.
TOL = {torch.float32: 1e-4, torch.float16: 2e-3, torch.bfloat16: 1.6e-2}
TOL_ADD = 1e-7   # float32 a + b is exact rounding; allow denormal flushing only
TOL_COPY = 0.0   # bit for bit

ELEM_DTYPES = {
    "f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32, "tf32": torch.float32,
    "f64": torch.float64, "i8": torch.int8, "i16": torch.int16, "i32": torch.int32, "i64": torch.int64,
    "index": torch.int64, "f8E4M3FN": torch.float8_e4m3fn, "f8E5M2": torch.float8_e5m2,
}
DTYPE_NAMES = {torch.float16: "f16", torch.bfloat16: "bf16", torch.float32: "f32", torch.float64: "f64",
               torch.float8_e4m3fn: "e4m3", torch.float8_e5m2: "e5m2"}
FP8_SPEC = {"e4m3": torch.float8_e4m3fn, "e5m2": torch.float8_e5m2}


def log(*a):
    print(*a, file=sys.stderr, flush=True)


# ---------------------------------------------------------------- inputs

def read_npy(path, elem):
    """Reads a .npy file written by tmac run --dump-dir (C order, little
    endian) into a CPU tensor of the element type elem (the manifest's
    'elem'; bf16 is stored as its raw 16-bit patterns, which is exactly
    torch.bfloat16's memory)."""
    if elem not in ELEM_DTYPES:
        raise ValueError(f"{path}: element type {elem} is not supported here")
    dtype = ELEM_DTYPES[elem]
    size = os.path.getsize(path)
    buf = bytearray(size)
    with open(path, "rb") as f:
        if f.readinto(buf) != size:
            raise ValueError(f"{path}: short read")
    descr, shape, offset = parse_npy_header(buf, path)
    itemsize = int(descr[2:])
    if descr[0] == ">" or itemsize != torch.empty((), dtype=dtype).element_size():
        raise ValueError(f"{path}: dtype {descr} does not hold {elem}")
    count = math.prod(shape)
    if offset + count * itemsize != size:
        raise ValueError(f"{path}: {size} bytes for shape {shape} of {descr}")
    if count == 0:
        return torch.empty(shape, dtype=dtype)
    if dtype in FP8_SPEC.values():  # fp8 bits, read as bytes and reinterpreted
        return torch.frombuffer(buf, dtype=torch.uint8, offset=offset, count=count).view(dtype).reshape(shape)
    return torch.frombuffer(buf, dtype=dtype, offset=offset, count=count).reshape(shape)


class Case:
    def __init__(self, kind, name, dtype, inputs, tmac=None, tmac_note=None, source=None):
        self.kind = kind            # "gemm", "scaled" (fp8 with scales), "add" or "copy"
        self.name = name
        self.dtype = dtype          # input dtype
        self.inputs = inputs        # CPU tensors
        self.tmac = tmac            # {"out": tensor, "manifest": dict} or None
        self.tmac_note = tmac_note  # why there is no tmac result
        self.source = source


def load_dump(d):
    with open(os.path.join(d, "manifest.json")) as f:
        m = json.load(f)
    mem = [a for a in m["args"] if "shape" in a]
    ins = [a for a in mem if not a["output"]]
    outs = [a for a in mem if a["output"]]

    def shape(a):
        return list(a["shape"])

    kind = None
    if len(ins) == 2 and len(outs) == 1 and all(len(shape(a)) == 2 for a in mem):
        (m_, k_), (k2, n_) = shape(ins[0]), shape(ins[1])
        if k_ == k2 and shape(outs[0]) == [m_, n_] and ins[0]["elem"] == ins[1]["elem"] and ins[0]["elem"] in ("f16", "bf16"):
            kind = "gemm"
    if kind is None and len(ins) == 4 and len(outs) == 1 and ins[0]["elem"] in ("f8E4M3FN", "f8E5M2") \
            and ins[1]["elem"] in ("f8E4M3FN", "f8E5M2") and ins[2]["elem"] == ins[3]["elem"] == "f32":
        # A scaled fp8 GEMM (gen_gemm.py --scale): A MxK, B NxK, sa, sb
        # of 1 element each or of M and N, D MxN.
        (m_, k_), (n_, k2) = shape(ins[0]), shape(ins[1])
        sa, sb = math.prod(shape(ins[2])), math.prod(shape(ins[3]))
        if k_ == k2 and shape(outs[0]) == [m_, n_] and (sa, sb) in ((1, 1), (m_, n_)):
            kind = "scaled"
    if kind is None and len(ins) == 2 and len(outs) == 1 and shape(ins[0]) == shape(ins[1]) == shape(outs[0]) \
            and ins[0]["elem"] == ins[1]["elem"] == outs[0]["elem"]:
        kind = "add"
    if kind is None and len(ins) == 1 and len(outs) == 1 and math.prod(shape(ins[0])) == math.prod(shape(outs[0])) \
            and ins[0]["elem"] == outs[0]["elem"]:
        kind = "copy"
    if kind is None:
        raise ValueError(f"{d}: cannot tell what @{m['entry']} computes from its arguments "
                         f"({', '.join(a['type'] for a in m['args'])})")
    for a in ins:
        if not a.get("in"):
            raise ValueError(f"{d}: input arg{a['index']} has no input file")
    inputs = [read_npy(os.path.join(d, a["in"]), a["elem"]) for a in ins]
    out = read_npy(os.path.join(d, outs[0]["out"]), outs[0]["elem"]) if outs[0].get("out") else None
    name = os.path.basename(os.path.normpath(d))
    return Case(kind, name, ELEM_DTYPES[ins[0]["elem"]], inputs, tmac={"out": out, "manifest": m}, source=d)


def parse_spec(spec, seed):
    if spec.startswith("scaled:"):
        return parse_scaled_spec(spec, seed)
    parts = spec.split(":", 3)
    if len(parts) < 3 or parts[0] not in ("gemm", "add", "copy") or parts[1] not in ELEM_DTYPES:
        raise ValueError(f"'{spec}' is neither a dump directory nor a spec like gemm:f16:4096x4096x4096")
    kind, elem, dims = parts[0], parts[1], [int(x) for x in parts[2].split("x")]
    note = parts[3] if len(parts) > 3 else "no tmac result"
    dtype = ELEM_DTYPES[elem]
    g = torch.Generator().manual_seed(seed)
    if kind == "gemm":
        if len(dims) != 3:
            raise ValueError(f"{spec}: a GEMM spec is MxNxK")
        m_, n_, k_ = dims
        inputs = [torch.randn(m_, k_, generator=g).to(dtype), torch.randn(k_, n_, generator=g).to(dtype)]
        name = f"gemm_{elem}_{m_}x{n_}x{k_}"
    elif kind == "add":
        inputs = [torch.randn(*dims, generator=g).to(dtype), torch.randn(*dims, generator=g).to(dtype)]
        name = f"add_{elem}_{'x'.join(map(str, dims))}"
    else:
        inputs = [torch.randn(*dims, generator=g).to(dtype)]
        name = f"copy_{elem}_{'x'.join(map(str, dims))}"
    return Case(kind, name, dtype, inputs, tmac=None, tmac_note=note, source=spec)


def parse_scaled_spec(spec, seed):
    """scaled:e4m3:MxNxK:tensor|row[:NOTE]: a scaled fp8 GEMM's inputs (A
    MxK, B NxK from N(0,1) rounded to fp8, f32 scales from N(0,1));
    e4m3-e5m2 for A and B of the two types."""
    parts = spec.split(":", 4)
    ta, _, tb = parts[1].partition("-") if len(parts) > 1 else ("", "", "")
    tb = tb or ta
    if len(parts) < 4 or ta not in FP8_SPEC or tb not in FP8_SPEC or parts[3] not in ("tensor", "row"):
        raise ValueError(f"'{spec}': a scaled GEMM spec is scaled:e4m3|e5m2[-e4m3|-e5m2]:MxNxK:tensor|row[:NOTE]")
    m_, n_, k_ = (int(x) for x in parts[2].split("x"))
    dtype, row = FP8_SPEC[ta], parts[3] == "row"
    g = torch.Generator().manual_seed(seed)
    inputs = [torch.randn(m_, k_, generator=g).to(dtype), torch.randn(n_, k_, generator=g).to(FP8_SPEC[tb]),
              torch.randn(m_ if row else 1, generator=g), torch.randn(n_ if row else 1, generator=g)]
    name = f"scaled_{ta}{tb if tb != ta else ''}{parts[3]}_{m_}x{n_}x{k_}"
    return Case("scaled", name, dtype, inputs, tmac=None,
                tmac_note=parts[4] if len(parts) > 4 else "no tmac result", source=spec)


# ---------------------------------------------------------------- timing

def rotation_copies(nbytes):
    if 0 < nbytes < L2_BYTES:
        return min(2 * L2_BYTES // nbytes + 1, MAX_COPIES)
    return 1


def time_queued(fn, copies, warmup, reps):
    """Median and minimum seconds of fn(i) (i = the copy to use), CUDA
    events around each launch, launches queued behind a GPU sleep."""
    for i in range(warmup):
        fn(i % copies)
    torch.cuda.synchronize()
    probe = min(reps, 20)
    t0 = time.perf_counter()
    for i in range(probe):
        fn(i % copies)
    enqueue = (time.perf_counter() - t0) / probe
    torch.cuda.synchronize()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    if hasattr(torch.cuda, "_sleep"):
        torch.cuda._sleep(int(min(5.0, 2.0 * reps * enqueue + 2e-3) * SLEEP_HZ))
    for r in range(reps):
        starts[r].record()
        fn(r % copies)
        ends[r].record()
    torch.cuda.synchronize()
    ms = sorted(s.elapsed_time(e) for s, e in zip(starts, ends))
    return ms[len(ms) // 2] * 1e-3, ms[0] * 1e-3


def time_sync(fn, copies, warmup, reps):
    """As tmac run --bench: events around one launch, then wait for it."""
    for i in range(warmup):
        fn(i % copies)
    torch.cuda.synchronize()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    ms = []
    for r in range(reps):
        s.record()
        fn(r % copies)
        e.record()
        e.synchronize()
        ms.append(s.elapsed_time(e))
    ms.sort()
    return ms[len(ms) // 2] * 1e-3, ms[0] * 1e-3


# ---------------------------------------------------------------- checking

def rel_err(out, ref, ref_norm):
    o = out.to(torch.float64)
    if not bool(torch.isfinite(o).all()):
        return float("nan")
    if ref_norm == 0:
        return 0.0 if bool((o == 0).all()) else float("inf")
    return float(torch.linalg.vector_norm(o - ref) / ref_norm)


def poison(t):
    """Fills an output before a checked run, so an implementation that
    does not write it cannot pass on stale data."""
    if t.is_floating_point():
        t.fill_(float("nan"))
    else:
        t.fill_(-1)


def passes(rel, tol):
    return not math.isnan(rel) and rel <= tol


class Impl:
    """One implementation's result for a case."""

    def __init__(self, name, family):
        self.name, self.family = name, family
        self.status = "n/a"      # PASS, FAIL, ERROR, n/a
        self.note = ""
        self.rel = None
        self.tol = None
        self.out_dtype = None
        self.median_s = self.min_s = None
        self.sync_median_s = None
        self.work = None         # FLOPs or bytes of this implementation's run
        self.config = None
        self.tuning = None

    def throughput(self):
        if self.status != "PASS" or not self.median_s or not self.work:
            return None
        return self.work / self.median_s

    def json(self, unit):
        t = self.throughput()
        rel, note = self.rel, self.note
        if rel is not None and not math.isfinite(rel):  # keep the JSON strict
            rel, note = None, "; ".join(x for x in ("the output has NaN or Inf" if math.isnan(rel) else "the output is not zero though the reference is", note) if x)
        return {
            "name": self.name, "family": self.family, "status": self.status, "note": note,
            "rel_err": rel, "tol": self.tol, "out_dtype": self.out_dtype,
            "median_s": self.median_s, "min_s": self.min_s, "sync_median_s": self.sync_median_s,
            "work": self.work, "throughput": t, "unit": unit, "config": self.config, "tuning": self.tuning,
        }


def measure(impl, run, out_of, check, copies, args, work, poison=None):
    """Checks run(0) (after poisoning its output), then times run."""
    impl.work = work
    try:
        if poison is not None:
            poison()
        res = run(0)
        torch.cuda.synchronize()
        impl.rel = check(out_of(res, 0))
        if not passes(impl.rel, impl.tol):
            impl.status = "FAIL"
            return
        impl.median_s, impl.min_s = time_queued(run, copies, args.warmup, args.reps)
        impl.sync_median_s, _ = time_sync(run, copies, args.warmup, args.reps)
        impl.status = "PASS"
    except Exception as e:  # a peer that cannot run is reported, not fatal
        impl.status, impl.note = "ERROR", f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:300]
        log(traceback.format_exc())


def tune(impl, configs, name_of, make_run, outs, check, copies, args, work):
    """Tunes a Triton kernel over configs: each configuration's output is
    checked (outputs poisoned first) and timed as in the final measurement
    with --tune-reps repetitions; the fastest passing one is then measured
    with measure()."""
    trials = []
    best = None
    t_start = time.perf_counter()
    for cfg in configs:
        rec = {"config": name_of(cfg)}
        try:
            runs = [make_run(cfg, i) for i in range(copies)]

            def run(i, runs=runs):
                runs[i]()
            poison(outs[0])
            run(0)
            torch.cuda.synchronize()
            rec["rel_err"] = check(outs[0])
            if not passes(rec["rel_err"], impl.tol):
                rec["status"] = "FAIL"
            else:
                t, _ = time_queued(run, copies, 2, args.tune_reps)
                rec["status"], rec["median_s"] = "PASS", t
                if best is None or t < best[0]:
                    best = (t, cfg, run)
        except Exception as e:
            rec["status"] = "ERROR"
            rec["error"] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:200]
        trials.append(rec)
    impl.tuning = {"seconds": time.perf_counter() - t_start, "trials": trials}
    n_fail = sum(r["status"] == "FAIL" for r in trials)
    n_err = sum(r["status"] == "ERROR" for r in trials)
    if best is None:
        impl.status = "FAIL" if n_fail else "ERROR"
        impl.note = f"no configuration passed ({n_fail} failed the check, {n_err} did not run)"
        impl.work = work
        return
    impl.config = name_of(best[1])
    run = best[2]
    measure(impl, lambda i: run(i), lambda _res, i: outs[i], check, copies, args, work,
            poison=lambda: poison(outs[0]))
    extra = []
    if n_fail:
        extra.append(f"{n_fail} configurations failed the check")
    if n_err:
        extra.append(f"{n_err} did not compile or run")
    if extra:
        impl.note = "; ".join(extra + ([impl.note] if impl.note else []))


def tmac_impl(case, check, tol, work_default, work_key):
    """tmac's result from its dump: checked here; timed by tmac run. tol
    None: the tolerance of tmac's output dtype."""
    impl = Impl("tmac", "tmac")
    out = case.tmac["out"] if case.tmac else None
    impl.tol = tol if tol is not None else TOL.get(out.dtype if out is not None else torch.float32, TOL[torch.float32])
    if case.tmac is None:
        impl.note = case.tmac_note or "no tmac result"
        return impl
    m = case.tmac["manifest"]
    impl.out_dtype = DTYPE_NAMES.get(out.dtype, str(out.dtype)) if out is not None else None
    b = m.get("bench")
    impl.work = work_default
    if b and b.get(work_key) and abs(b[work_key] - work_default) > 1e-3 * work_default:
        impl.note = (f"tmac counted {b[work_key]:.6g} {'FLOP' if work_key == 'flops' else 'bytes'}, "
                     f"this table {work_default:.6g}")
    if out is None:
        impl.status, impl.note = "ERROR", "the dump has no output"
        return impl
    impl.rel = check(out.cuda())
    own = m.get("check", "")
    if not passes(impl.rel, impl.tol) or own == "FAIL":
        impl.status = "FAIL"
        impl.note = f"tmac run's own check: {own}" + (f"; {impl.note}" if impl.note else "")
        return impl
    if not b:
        impl.status, impl.note = "ERROR", "no --bench measurement in the dump"
        return impl
    impl.sync_median_s = b["kernel_median_s"]
    if b.get("kernel_queued_median_s"):
        # queued behind a GPU spin, as the peers are timed here
        impl.median_s, impl.min_s = b["kernel_queued_median_s"], b["kernel_queued_min_s"]
        how = "queued behind a GPU spin"
    else:
        impl.median_s, impl.min_s = b["kernel_median_s"], b["kernel_min_s"]
        how = "one launch at a time"
    impl.config = (f"{b['reps']} runs after {b['warmup']} warm-ups ({how}), {b['rotated_copies']} argument copies rotated; "
                   f"own check: {own}")
    impl.status = "PASS"
    return impl


# ---------------------------------------------------------------- cases

def triton_module(triton_mods, index, impl):
    """The Triton baseline module, or None with impl marked: n/a when
    skipped on purpose, ERROR when it could not be imported."""
    m = triton_mods if isinstance(triton_mods, str) else triton_mods[index]
    if isinstance(m, str):
        impl.status, impl.note = ("n/a" if m.startswith("skipped") else "ERROR"), m
        return None
    return m


def run_gemm(case, args, triton_mods):
    A = case.inputs[0].cuda()
    B = case.inputs[1].cuda()
    M, K = A.shape
    N = B.shape[1]
    flops = 2.0 * M * N * K
    ref = torch.matmul(A.to(torch.float64), B.to(torch.float64))
    ref_norm = torch.linalg.vector_norm(ref)

    def check(out):
        return rel_err(out, ref, ref_norm)

    # tmac's output dtype (float32 where there is no dump) sets the Triton
    # kernels' output (--triton-out tmac) and the rotation's byte count.
    tmac_out = case.tmac["out"].dtype if case.tmac and case.tmac.get("out") is not None else torch.float32
    out_elem = torch.empty((), dtype=tmac_out).element_size()
    copies = rotation_copies(A.numel() * A.element_size() + B.numel() * B.element_size() + M * N * out_elem)
    As = [A] + [A.clone() for _ in range(copies - 1)]
    Bs = [B] + [B.clone() for _ in range(copies - 1)]
    impls = [tmac_impl(case, check, None, flops, "flops")]

    # cuBLAS, output in the input dtype.
    cub = Impl(f"cuBLAS (torch.matmul, {DTYPE_NAMES[A.dtype]} out)", "cuBLAS")
    cub.tol, cub.out_dtype = TOL[A.dtype], DTYPE_NAMES[A.dtype]
    outs = [torch.empty(M, N, dtype=A.dtype, device="cuda") for _ in range(copies)]
    measure(cub, lambda i: torch.matmul(As[i], Bs[i], out=outs[i]), lambda res, i: outs[i], check, copies, args, flops,
            poison=lambda: poison(outs[0]))
    impls.append(cub)
    del outs

    # cuBLAS, float32 output (torch >= 2.8: mm with out_dtype).
    cub32 = Impl("cuBLAS (torch.mm, f32 out)", "cuBLAS")
    cub32.tol, cub32.out_dtype = TOL[torch.float32], "f32"
    outs32 = [torch.empty(M, N, dtype=torch.float32, device="cuda") for _ in range(copies)]
    variant = None
    try:
        torch.mm(As[0], Bs[0], out_dtype=torch.float32, out=outs32[0])
        variant = "out"
    except Exception:
        try:
            torch.mm(As[0], Bs[0], out_dtype=torch.float32)
            variant = "alloc"
        except Exception as e:
            cub32.note = f"this torch has no mm(..., out_dtype=): {type(e).__name__}"
    torch.cuda.synchronize()
    if variant == "out":
        measure(cub32, lambda i: torch.mm(As[i], Bs[i], out_dtype=torch.float32, out=outs32[i]), lambda res, i: outs32[i],
                check, copies, args, flops, poison=lambda: poison(outs32[0]))
    elif variant == "alloc":
        cub32.note = "output allocated per call (out= not accepted with out_dtype)"
        measure(cub32, lambda i: torch.mm(As[i], Bs[i], out_dtype=torch.float32), lambda res, i: res, check, copies, args, flops)
    impls.append(cub32)

    # Triton.
    out_dtype = {"f32": torch.float32, "in": A.dtype, "tmac": tmac_out}[args.triton_out]
    tt = Impl("Triton tiled", "Triton")
    tma = Impl("Triton TMA persistent", "Triton")
    for impl in (tt, tma):
        impl.tol, impl.out_dtype = TOL[out_dtype], DTYPE_NAMES[out_dtype]
    tm, tmam = triton_module(triton_mods, 0, tt), triton_module(triton_mods, 1, tma)
    touts = [torch.empty(M, N, dtype=out_dtype, device="cuda") for _ in range(copies)] if tm or tmam else []
    if tm:
        tune(tt, tm.CONFIGS, tm.config_name, lambda cfg, i: tm.launcher(cfg, As[i], Bs[i], touts[i]),
             touts, check, copies, args, flops)
    if tmam:
        nsm = torch.cuda.get_device_properties(0).multi_processor_count
        tune(tma, tmam.CONFIGS, tmam.config_name, lambda cfg, i: tmam.launcher(cfg, As[i], Bs[i], touts[i], nsm),
             touts, check, copies, args, flops)
    impls += [tt, tma]
    impls.append(mlir_impl(case, M, N, K, flops, args))
    info = {"M": M, "N": N, "K": K, "flops": flops, "rotated_copies": copies}
    return impls, info


def run_scaled(case, args, triton_mods):
    """A scaled fp8 GEMM, D = (A @ B^T) * sa * sb: torch._scaled_mm (cuBLAS
    for per-tensor scales, its row-wise kernel for row-wise ones), with and
    without use_fast_accum, and seed 002's Triton TMA kernel
    (triton_fp8.py), all writing tmac's output dtype (bf16 without a dump)."""
    A, B, sa, sb = (x.cuda() for x in case.inputs)
    M, K = A.shape
    N = B.shape[0]
    row = sa.numel() > 1 or sb.numel() > 1
    flops = 2.0 * M * N * K
    ref = (A.to(torch.float64) @ B.to(torch.float64).T) * sa.to(torch.float64).view(-1, 1) * sb.to(torch.float64).view(1, -1)
    ref_norm = torch.linalg.vector_norm(ref)

    def check(out):
        return rel_err(out, ref, ref_norm)

    out_dtype = case.tmac["out"].dtype if case.tmac and case.tmac.get("out") is not None else torch.bfloat16
    copies = rotation_copies(A.numel() + B.numel() + M * N * torch.empty((), dtype=out_dtype).element_size())
    As = [A] + [A.clone() for _ in range(copies - 1)]
    Bs = [B] + [B.clone() for _ in range(copies - 1)]
    impls = [tmac_impl(case, check, None, flops, "flops")]
    # _scaled_mm takes B column-major (B^T of the N x K rows) and the
    # scales as [M, 1] and [1, N] (row-wise) or one element each.
    sa_t, sb_t = (sa.view(M, 1), sb.view(1, N)) if row else (sa.view(()), sb.view(()))
    for fast in (False, True):
        impl = Impl(f"torch._scaled_mm ({'row-wise' if row else 'per-tensor'}{', fast accum' if fast else ''})", "scaled_mm")
        impl.tol, impl.out_dtype = TOL[out_dtype], DTYPE_NAMES[out_dtype]
        outs = [torch.empty(M, N, dtype=out_dtype, device="cuda") for _ in range(copies)]
        try:
            torch._scaled_mm(As[0], Bs[0].t(), scale_a=sa_t, scale_b=sb_t, out_dtype=out_dtype, use_fast_accum=fast, out=outs[0])
            torch.cuda.synchronize()
            measure(impl, lambda i, fast=fast, outs=outs: torch._scaled_mm(
                As[i], Bs[i].t(), scale_a=sa_t, scale_b=sb_t, out_dtype=out_dtype, use_fast_accum=fast, out=outs[i]),
                lambda res, i, outs=outs: outs[i], check, copies, args, flops, poison=lambda outs=outs: poison(outs[0]))
        except Exception as e:  # this torch or this card may not have the kernel
            impl.status, impl.note = "ERROR", f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:300]
        impls.append(impl)
        del outs
    tr = Impl("Triton FP8 TMA (seed 002)", "Triton")
    tr.tol, tr.out_dtype = TOL[out_dtype], DTYPE_NAMES[out_dtype]
    tm = triton_module(triton_mods, 3, tr)
    if tm:
        touts = [torch.empty(M, N, dtype=out_dtype, device="cuda") for _ in range(copies)]
        tune(tr, tm.CONFIGS, tm.config_name, lambda cfg, i: tm.launcher(cfg, As[i], Bs[i], sa, sb, touts[i]),
             touts, check, copies, args, flops)
    impls.append(tr)
    info = {"M": M, "N": N, "K": K, "flops": flops, "rotated_copies": copies, "scales": "row-wise" if row else "per-tensor",
            "b_dtype": DTYPE_NAMES[B.dtype]}
    return impls, info


def mlir_impl(case, M, N, K, flops, args):
    """Upstream MLIR 22's chapter-4 kernel (scripts/mlir-baseline.sh) on the
    case's own inputs, in a child process with a time limit (mlir_gemm.py):
    square f16 GEMMs with a tmac dump only, the shapes it was built for."""
    impl = Impl("MLIR 22 chapter-4", "MLIR")
    impl.tol, impl.out_dtype = TOL[torch.float32], "f32"
    if args.mlir_dir is None:
        impl.note = "not run (--mlir-dir not given)"
        return impl
    out = case.tmac["out"] if case.tmac else None
    if case.dtype != torch.float16 or not (M == N == K) or not (case.source and os.path.isdir(case.source)) \
            or out is None or out.dtype != torch.float32:
        impl.note = "upstream's kernel is f16 in, f32 out and square only (and runs on tmac's dumped inputs)"
        return impl
    if not os.path.exists(os.path.join(args.mlir_dir, f"gemm_{M}.ptx")):
        impl.note = f"not built for {M} (scripts/mlir-baseline.sh)"
        return impl
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from mlir_gemm import run_mlir_gemm
    r = run_mlir_gemm(M, args.mlir_dir, reps=args.reps, warmup=args.warmup, timeout_s=120, dump=case.source)
    impl.work, impl.rel = flops, r.get("rel_err")
    if r.get("ok"):
        impl.status = "PASS"
        impl.median_s, impl.min_s = r["time_ms"] * 1e-3, r["min_ms"] * 1e-3
        impl.sync_median_s = None
        impl.config = (f"{r['stages']} stages, grid {r['grid']}, block {r['block']}, {r['registers']} registers; "
                       f"median of {r['reps']} back-to-back launches (no rotation), tensor maps built once")
    else:
        impl.status = "FAIL" if r.get("rel_err") is not None or r.get("nan_count") else "ERROR"
        impl.note = (r.get("error") or "no result")[:300]
    return impl


def run_copy_peers(src_numel, dtype, args, label, src=None):
    """torch copy_ of src (or of src_numel seeded random elements); gives
    the state the Triton copy is tuned on."""
    if src is None:
        src = torch.randn(src_numel, device="cuda", generator=torch.Generator(device="cuda").manual_seed(args.seed)).to(dtype)
    nbytes = 2 * src.numel() * src.element_size()
    copies = rotation_copies(nbytes)
    srcs = [src] + [src.clone() for _ in range(copies - 1)]
    dsts = [torch.empty_like(src) for _ in range(copies)]

    src64 = src.to(torch.float64)
    src_norm = torch.linalg.vector_norm(src64)

    def check(out):
        return 0.0 if torch.equal(out, src) else max(rel_err(out, src64, src_norm), 1e-300)

    tc = Impl(f"torch d2d copy{label}", "torch")
    tc.tol, tc.out_dtype = TOL_COPY, DTYPE_NAMES.get(dtype)
    measure(tc, lambda i: dsts[i].copy_(srcs[i]), lambda res, i: dsts[i], check, copies, args, nbytes,
            poison=lambda: poison(dsts[0]))
    return [tc], (srcs, dsts, check, copies, nbytes)


def run_memory(case, args, triton_mods):
    xs = [t.cuda() for t in case.inputs]
    dtype = xs[0].dtype
    impls = []
    if case.kind == "add":
        a, b = xs
        ref = a + b
        nbytes = 3 * a.numel() * a.element_size()
        tol = TOL_ADD
    else:
        a = xs[0]
        ref = a
        nbytes = 2 * a.numel() * a.element_size()
        tol = TOL_COPY
    ref64 = ref.to(torch.float64)
    ref_norm = torch.linalg.vector_norm(ref64)

    def check(out):
        out = out.reshape(ref.shape)
        if tol == 0.0:
            return 0.0 if torch.equal(out, ref) else max(rel_err(out, ref64, ref_norm), 1e-300)
        return rel_err(out, ref64, ref_norm)

    impls.append(tmac_impl(case, check, tol, nbytes, "bytes"))
    copies = rotation_copies(nbytes)
    if case.kind == "add":
        As = [a] + [a.clone() for _ in range(copies - 1)]
        Bs = [b] + [b.clone() for _ in range(copies - 1)]
        Cs = [torch.empty_like(a) for _ in range(copies)]
        ta = Impl("torch.add", "torch")
        ta.tol, ta.out_dtype = tol, DTYPE_NAMES.get(dtype)
        measure(ta, lambda i: torch.add(As[i], Bs[i], out=Cs[i]), lambda res, i: Cs[i], check, copies, args, nbytes,
                poison=lambda: poison(Cs[0]))
        impls.append(ta)
        # Copies of the same byte count: half the bytes read, half written.
        cp, cpstate = run_copy_peers(3 * a.numel() // 2, dtype, args, " (same bytes)")
        impls += cp
    else:
        # The peers copy the case's own input.
        cp, cpstate = run_copy_peers(a.numel(), dtype, args, "", src=a.reshape(-1))
        impls += cp
    tr_op = Impl("Triton add" if case.kind == "add" else "Triton copy", "Triton")
    tr_cp = Impl("Triton copy (same bytes)", "Triton") if case.kind == "add" else None
    for impl in filter(None, (tr_op, tr_cp)):
        impl.tol, impl.out_dtype = (tol if impl is tr_op else TOL_COPY), DTYPE_NAMES.get(dtype)
    tmem = triton_module(triton_mods, 2, tr_op)
    if tr_cp is not None and not tmem:
        tr_cp.status, tr_cp.note = tr_op.status, tr_op.note
    if tmem:
        if case.kind == "add":
            tune(tr_op, tmem.CONFIGS, tmem.config_name, lambda cfg, i: tmem.add_launcher(cfg, As[i], Bs[i], Cs[i]),
                 Cs, check, copies, args, nbytes)
        else:
            srcs, dsts, _, _, _ = cpstate
            tune(tr_op, tmem.CONFIGS, tmem.config_name, lambda cfg, i: tmem.copy_launcher(cfg, srcs[i], dsts[i]),
                 dsts, check, copies, args, nbytes)
        if tr_cp is not None:
            csrcs, cdsts, ccheck, ccopies, cbytes = cpstate
            tune(tr_cp, tmem.CONFIGS, tmem.config_name, lambda cfg, i: tmem.copy_launcher(cfg, csrcs[i], cdsts[i]),
                 cdsts, ccheck, ccopies, args, cbytes)
    impls += list(filter(None, (tr_op, tr_cp)))
    info = {"shape": list(case.inputs[0].shape), "bytes": nbytes, "rotated_copies": copies}
    return impls, info


# ---------------------------------------------------------------- ratios

def best_of(impls, family):
    c = [i for i in impls if i.family == family and i.throughput()]
    return max(c, key=lambda i: i.throughput()) if c else None


def ratios(case_kind, impls):
    t = impls[0]
    out = {}
    if not t.throughput():
        return out
    if case_kind == "scaled":
        for key, fam in (("tmac/_scaled_mm", "scaled_mm"), ("tmac/Triton", "Triton")):
            b = best_of(impls, fam)
            if b:
                out[key] = {"ratio": t.throughput() / b.throughput(), "against": b.name}
        # Against _scaled_mm without fast accumulation alone (its default).
        exact = [i for i in impls if i.family == "scaled_mm" and "fast" not in i.name and i.throughput()]
        if exact:
            out["tmac/_scaled_mm default"] = {"ratio": t.throughput() / exact[0].throughput(), "against": exact[0].name}
    elif case_kind == "gemm":
        for key, fam in (("tmac/cuBLAS", "cuBLAS"), ("tmac/Triton", "Triton"), ("tmac/MLIR", "MLIR")):
            b = best_of(impls, fam)
            if b:
                out[key] = {"ratio": t.throughput() / b.throughput(), "against": b.name}
        # cuBLAS writing the same output dtype as tmac (f32 out costs more
        # epilogue bytes than f16 out).
        same = [i for i in impls if i.family == "cuBLAS" and i.throughput() and i.out_dtype == t.out_dtype]
        if same:
            b = max(same, key=lambda i: i.throughput())
            out["tmac/cuBLAS same out"] = {"ratio": t.throughput() / b.throughput(), "against": b.name}
    else:
        op = [i for i in impls if i.family == "torch" and "copy" not in i.name]
        cp = [i for i in impls if i.family == "torch" and "copy" in i.name]
        trop = [i for i in impls if i.family == "Triton" and "same bytes" not in i.name]
        for key, lst in (("tmac/torch op", op), ("tmac/d2d copy", cp), ("tmac/Triton", trop)):
            lst = [i for i in lst if i.throughput()]
            if lst:
                b = max(lst, key=lambda i: i.throughput())
                out[key] = {"ratio": t.throughput() / b.throughput(), "against": b.name}
    return out


# ---------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("items", nargs="+", help="tmac dump directories or specs (gemm:f16:MxNxK, add:f32:RxC, copy:f32:N)")
    ap.add_argument("--json", required=True, help="results file to write")
    ap.add_argument("--markdown", help="Markdown table to write (also printed)")
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--tune-reps", type=int, default=10, help="timed runs per Triton configuration while tuning")
    ap.add_argument("--seed", type=int, default=0, help="seed of the inputs drawn for specs")
    ap.add_argument("--triton-out", choices=("tmac", "f32", "in"), default="tmac",
                    help="output dtype of the Triton GEMMs: tmac's (float32 without a dump), float32 or the input dtype")
    ap.add_argument("--no-triton", action="store_true", help="skip the Triton baselines")
    ap.add_argument("--mlir-dir", help="artifacts of scripts/mlir-baseline.sh: run upstream MLIR's kernel on the square f16 GEMMs")
    ap.add_argument("--commit", default=os.environ.get("BENCH_COMMIT", "unknown"), help="commit the tmac bundles were built at")
    ap.add_argument("--tmac-binary", default=os.environ.get("BENCH_TMAC_REV", ""),
                    help="commit of the tmac binary that timed them (`tmac version`'s 'built from')")
    args = ap.parse_args()
    if args.reps < 1 or args.warmup < 0 or args.tune_reps < 1:
        ap.error("--reps and --tune-reps must be >= 1, --warmup >= 0")
    if not torch.cuda.is_available():
        log("peers.py: no CUDA device")
        return 3
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
    torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False

    triton_version = "not used"
    if args.no_triton:
        triton_mods = "skipped (--no-triton)"
    else:
        try:
            import triton
            triton_version = triton.__version__
            sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
            mods = []
            for name in ("triton_matmul", "triton_tma_matmul", "triton_memory", "triton_fp8"):
                try:
                    mods.append(__import__(name))
                except Exception as e:  # one baseline failing to import does not stop the others
                    mods.append(f"{name}.py not importable: {type(e).__name__}: {e}")
                    log(traceback.format_exc())
            triton_mods = tuple(mods)
        except Exception as e:
            triton_mods = f"Triton not importable: {type(e).__name__}: {e}"
            triton_version = "unavailable"

    props = torch.cuda.get_device_properties(0)
    rotation = ("inputs and outputs rotated over min(2*50MB/bytes + 1, 8) copies when the operands take less than "
                "50 MB (tmac run --bench's rule); no L2 flush")
    method = (f"Peers: median of {args.reps} runs after {args.warmup} warm-ups, CUDA events around each launch, "
              f"launches queued behind a GPU sleep so CPU launch overhead is not timed; {rotation}. "
              "tmac: its own `tmac run --bench` kernel time, measured the same way (launches queued behind a GPU spin "
              "kernel, events around each, median). "
              "Every output is checked against a torch reference (float64 matmul of the same inputs for GEMMs) "
              "before timing; Triton kernels are tuned on the same inputs over their configuration lists, "
              "every configuration checked.")
    results = {"meta": {
        "device": torch.cuda.get_device_name(0), "sms": props.multi_processor_count,
        "torch": torch.__version__, "cuda": torch.version.cuda, "triton": triton_version,
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"), "commit": args.commit,
        "tmac_binary": args.tmac_binary or "unknown",
        "warmup": args.warmup, "reps": args.reps, "tune_reps": args.tune_reps, "triton_out": args.triton_out,
        "method": method, "tolerances": {DTYPE_NAMES[k]: v for k, v in TOL.items()} | {"add": TOL_ADD, "copy": TOL_COPY},
    }, "cases": []}

    for item in args.items:
        t0 = time.perf_counter()
        try:
            if os.path.isdir(item):
                case = load_dump(item)
            else:
                case = parse_spec(item, args.seed)
        except Exception as e:
            log(f"peers.py: {item}: {e}")
            results["cases"].append({"name": item, "kind": "error", "error": str(e), "impls": []})
            continue
        log(f"peers.py: {case.name} ({case.kind}, {DTYPE_NAMES.get(case.dtype, case.dtype)}) ...")
        try:
            if case.kind == "gemm":
                impls, info = run_gemm(case, args, triton_mods)
                unit = "FLOP/s"
            elif case.kind == "scaled":
                impls, info = run_scaled(case, args, triton_mods)
                unit = "FLOP/s"
            else:
                impls, info = run_memory(case, args, triton_mods)
                unit = "B/s"
        except Exception as e:
            log(traceback.format_exc())
            results["cases"].append({"name": case.name, "kind": "error", "error": f"{type(e).__name__}: {e}", "impls": []})
            continue
        finally:
            torch.cuda.empty_cache()
        entry = {"name": case.name, "kind": case.kind, "dtype": DTYPE_NAMES.get(case.dtype, str(case.dtype)),
                 "source": case.source, "info": info, "impls": [i.json(unit) for i in impls],
                 "ratios": ratios(case.kind, impls)}
        results["cases"].append(entry)
        for i in impls:
            t = i.throughput()
            log(f"  {i.name:40s} {i.status:6s} rel {i.rel if i.rel is not None else '-'}"
                f"{'' if t is None else f'  {t / 1e12:.3f} T{unit}'}  {i.note}")
        log(f"  ({time.perf_counter() - t0:.1f} s)")
        with open(args.json, "w") as f:  # after every case, so a timeout keeps what was done
            json.dump(results, f, indent=1, allow_nan=False)

    md = markdown(results)
    errors = [c for c in results["cases"] if c["kind"] == "error"]
    with open(args.json, "w") as f:
        json.dump(results, f, indent=1, allow_nan=False)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(md)
    print(md)
    bad = errors or any(i["status"] in ("FAIL", "ERROR") for c in results["cases"] for i in c["impls"])
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
