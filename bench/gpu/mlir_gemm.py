#!/usr/bin/env python3
"""Upstream MLIR baseline GEMM on the GPU machine (issue 7).

Launches the PTX that upstream MLIR 22 made from the hand-written chapter-4
multistage GEMM (scripts/mlir-baseline.sh, run where mlir-opt is, writes
build/gpu/mlir/gemm_<size>.{ptx,json}) the way upstream's own lowered host
code would:

* A (MxK) and B (KxN) random f16, D (MxN) f32 poisoned with NaN, row-major,
  allocated with torch;
* one CUtensorMap per operand from cuTensorMapEncodeTiled (libcuda through
  ctypes) with the settings upstream's host code passes to
  mgpuTensorMapEncodeTiledMemref (read from the JSON: f16, box 128x64 for A
  and 64x64 for B, 128-byte swizzle, no interleave, no L2 promotion, OOB fill
  none), the global address being the memref's aligned pointer;
* like upstream, each map is copied to device memory (cuMemAlloc + cuMemcpy)
  and the kernel gets its device pointer; the maps are built once, outside
  the timed region (upstream's host code rebuilds, reallocates and copies
  them at every call: that host cost is not counted here);
* kernel parameters in the order of the PTX .entry, each with the role the
  JSON gives it (tensor map pointers, then D's memref descriptor: allocated
  and aligned pointer, offset, sizes, strides);
* cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES) and cuLaunchKernel with
  the grid, block and dynamic shared memory of upstream's gpu.launch_func.

The result is checked against torch.matmul in float64 (relative Frobenius
error, plus a count of NaNs left in D), then timed with CUDA events (warm-up,
then REPS launches each between two events, median) and printed as a
Markdown row per size.

  python3 bench/gpu/mlir_gemm.py                  # all sizes built
  python3 bench/gpu/mlir_gemm.py --sizes 4096 --json out.json
  python3 bench/gpu/mlir_gemm.py --dry-run        # no GPU: check the artifacts, print the launch plan

Each size runs in a child process with a time limit (a kernel that never
finishes, e.g. an mbarrier wait that never completes, is killed and reported)
unless --no-isolate. For other scripts:

  from mlir_gemm import run_mlir_gemm
  r = run_mlir_gemm(4096)   # dict: time_ms, tflops, rel_err, ok (+ details, error)
"""

import argparse
import ctypes
import json
import math
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_DIR = ROOT / "build" / "gpu" / "mlir"
DEFAULT_SIZES = (1024, 2048, 4096, 8192)
REL_TOL = 1e-4  # f32 output of an f32-accumulated f16 GEMM: ~1e-6 off float64 (peers.py's TOL)
RESULT_TAG = "MLIR_GEMM_RESULT "

# CUDA driver enums used here.
CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1
CU_FUNC_ATTRIBUTE_NUM_REGS = 4
CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75
CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76
CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97
CU_JIT_ERROR_LOG_BUFFER = 5
CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6
CU_TENSOR_MAP_DATA_TYPE_FLOAT16 = 6
TENSOR_MAP_BYTES = 128


class GemmError(Exception):
    """A problem this script explains in one message (missing artifacts, no
    GPU, a driver call that failed)."""


# ---------------------------------------------------------------- artifacts

def load_artifacts(size, art_dir=None):
    """Reads build/gpu/mlir/gemm_<size>.json and its PTX; checks that they
    describe what the launcher below knows how to call."""
    d = Path(art_dir) if art_dir else DEFAULT_DIR
    jpath = d / f"gemm_{size}.json"
    if not jpath.is_file():
        raise GemmError(f"{jpath} is missing: run scripts/mlir-baseline.sh where mlir-opt 22 is "
                        f"(it writes build/gpu/mlir) and bring build/gpu/mlir to this machine")
    info = json.loads(jpath.read_text())
    ppath = d / info.get("ptx", f"gemm_{size}.ptx")
    if not ppath.is_file():
        raise GemmError(f"{ppath} is missing (rerun scripts/mlir-baseline.sh)")
    ptx = ppath.read_text()
    for key in ("kernel", "params", "grid", "block", "dynamic_smem_bytes", "tensor_maps", "M", "N", "K"):
        if key not in info:
            raise GemmError(f"{jpath}: no '{key}' (rerun scripts/mlir-baseline.sh)")
    if info["M"] != size or info["N"] != size or info["K"] != size:
        raise GemmError(f"{jpath} describes M,N,K = {info['M']},{info['N']},{info['K']}, not {size}")
    if f".entry {info['kernel']}(" not in ptx:
        raise GemmError(f"{ppath} has no .entry {info['kernel']}")
    for p in info["params"]:
        if ".u64" not in p["ptx_type"] and ".b64" not in p["ptx_type"]:
            raise GemmError(f"parameter {p['name']} is {p['ptx_type']}; only 64-bit parameters are handled")
        param_value_check(p["role"])
    ops = sorted(t["operand"] for t in info["tensor_maps"])
    if ops != ["a", "b"]:
        raise GemmError(f"{jpath}: tensor maps for {ops}, expected one for a and one for b")
    return info, ptx


def operand_shape(info, name):
    M, N, K = info["M"], info["N"], info["K"]
    return {"a": (M, K), "b": (K, N), "d": (M, N)}[name]


def param_value_check(role):
    kind, _, field = role.partition(".")
    if kind == "tensormap" and field in ("a", "b"):
        return
    if kind in ("a", "b", "d") and field in ("allocated", "aligned", "offset", "size0", "size1",
                                             "stride0", "stride1"):
        return
    raise GemmError(f"unknown kernel parameter role {role!r}")


def param_value(role, info, ptrs, tmaps):
    """The 64-bit value of one kernel parameter: a tensor map's device
    pointer or a field of a memref descriptor (dense row-major)."""
    kind, _, field = role.partition(".")
    if kind == "tensormap":
        return tmaps[field]
    rows, cols = operand_shape(info, kind)
    return {"allocated": ptrs[kind], "aligned": ptrs[kind], "offset": 0, "size0": rows,
            "size1": cols, "stride0": cols, "stride1": 1}[field]


def tensor_map_args(t, info):
    """cuTensorMapEncodeTiled's arguments for one map, as upstream's
    mgpuTensorMapEncodeTiledMemref derives them from the memref (innermost
    dimension first), checked against the JSON."""
    rows, cols = operand_shape(info, t["operand"])
    dims = [cols, rows]
    strides = [cols * 2]
    box = list(reversed(t["box_memref_order"]))
    if t.get("global_dim", dims) != dims or t.get("global_strides_bytes", strides) != strides \
            or t.get("box_dim", box) != box:
        raise GemmError(f"tensor map {t['operand']}: JSON dims/strides/box disagree with the shapes")
    if t["data_type"] != CU_TENSOR_MAP_DATA_TYPE_FLOAT16 or t["rank"] != 2:
        raise GemmError(f"tensor map {t['operand']}: data type {t['data_type']} rank {t['rank']}, expected f16 (6) rank 2")
    return dict(data_type=t["data_type"], rank=2, dims=dims, strides=strides, box=box,
                element_strides=[1, 1], interleave=t["interleave"], swizzle=t["swizzle"],
                l2_promotion=t["l2_promotion"], oob_fill=t["oob_fill"])


def plan_text(size, art_dir=None):
    info, ptx = load_artifacts(size, art_dir)
    lines = [f"gemm {size}: kernel {info['kernel']} ({len(ptx)} B of PTX), grid {info['grid']}, "
             f"block {info['block']}, dynamic smem {info['dynamic_smem_bytes']} B, "
             f"{info.get('stages')} stages"]
    for t in info["tensor_maps"]:
        a = tensor_map_args(t, info)
        lines.append(f"  tensor map {t['operand']}: cuTensorMapEncodeTiled(type {a['data_type']}, rank 2, "
                     f"dims {a['dims']}, strides {a['strides']} B, box {a['box']}, elem strides [1, 1], "
                     f"interleave {a['interleave']}, swizzle {a['swizzle']}, l2 {a['l2_promotion']}, "
                     f"oob {a['oob_fill']}) -> cuMemAlloc(128) + cuMemcpyHtoD")
    for i, p in enumerate(info["params"]):
        lines.append(f"  param {i}: {p['ptx_type']:<20} {p['role']}")
    return "\n".join(lines)


def patch_dynamic_smem(ptx):
    """NOT the baseline; opt-in diagnostic (--fix-dynamic-smem). Upstream
    lowers gpu.dynamic_shared_memory to an internal zero-length shared global
    that LLVM's NVPTX backend demotes into the kernel as a 1-byte static
    `.shared .align 16 .b8 __dynamic_shmem__0;`, so the tiles are addressed
    from a static variable beside the __mbarrier array instead of from the
    dynamic region. This moves it to module scope as what dynamic shared
    memory is in PTX, `.extern .shared .align 1024 .b8 __dynamic_shmem__0[];`."""
    pat = re.compile(r"^[ \t]*\.shared \.align \d+ \.b8 (__dynamic_shmem__\d+);[ \t]*\n", re.M)
    m = pat.search(ptx)
    if not m:
        raise GemmError("--fix-dynamic-smem: no demoted __dynamic_shmem__ variable in the PTX")
    anchor = ".address_size 64\n"
    if anchor not in ptx:
        raise GemmError("--fix-dynamic-smem: no '.address_size 64' line in the PTX")
    ptx = pat.sub("", ptx, count=1)
    return ptx.replace(anchor, f"{anchor}\n.extern .shared .align 1024 .b8 {m.group(1)}[];\n", 1)


# ------------------------------------------------------------- CUDA driver

class Driver:
    """The few libcuda entry points this needs, through ctypes."""

    def __init__(self):
        try:
            lib = ctypes.CDLL("libcuda.so.1")
        except OSError as e:
            raise GemmError(f"cannot load the CUDA driver libcuda.so.1 (no NVIDIA GPU/driver on this machine?): {e}")
        c = ctypes
        P = c.POINTER
        sig = {
            "cuInit": [c.c_uint],
            "cuDeviceGet": [P(c.c_int), c.c_int],
            "cuDeviceGetAttribute": [P(c.c_int), c.c_int, c.c_int],
            "cuDevicePrimaryCtxRetain": [P(c.c_void_p), c.c_int],
            "cuCtxSetCurrent": [c.c_void_p],
            "cuCtxSynchronize": [],
            "cuModuleLoadDataEx": [P(c.c_void_p), c.c_void_p, c.c_uint, P(c.c_int), P(c.c_void_p)],
            "cuModuleGetFunction": [P(c.c_void_p), c.c_void_p, c.c_char_p],
            "cuModuleUnload": [c.c_void_p],
            "cuFuncSetAttribute": [c.c_void_p, c.c_int, c.c_int],
            "cuFuncGetAttribute": [P(c.c_int), c.c_int, c.c_void_p],
            "cuMemAlloc_v2": [P(c.c_uint64), c.c_size_t],
            "cuMemFree_v2": [c.c_uint64],
            "cuMemcpyHtoD_v2": [c.c_uint64, c.c_void_p, c.c_size_t],
            "cuTensorMapEncodeTiled": [c.c_void_p, c.c_int, c.c_uint32, c.c_void_p, P(c.c_uint64),
                                       P(c.c_uint64), P(c.c_uint32), P(c.c_uint32),
                                       c.c_int, c.c_int, c.c_int, c.c_int],
            "cuLaunchKernel": [c.c_void_p, c.c_uint, c.c_uint, c.c_uint, c.c_uint, c.c_uint, c.c_uint,
                               c.c_uint, c.c_void_p, P(c.c_void_p), P(c.c_void_p)],
            "cuGetErrorName": [c.c_int, P(c.c_char_p)],
        }
        for name, args in sig.items():
            try:
                fn = getattr(lib, name)
            except AttributeError:
                raise GemmError(f"libcuda.so.1 lacks {name} (a CUDA 12+ driver is needed)")
            fn.argtypes = args
            fn.restype = c.c_int
            setattr(self, name, fn)

    def check(self, what, r):
        if r != 0:
            name = ctypes.c_char_p()
            self.cuGetErrorName(r, ctypes.byref(name))
            raise GemmError(f"{what} failed: {name.value.decode() if name.value else '?'} ({r})")

    def attach(self, ordinal):
        """Makes the device's primary context (the one torch uses) current."""
        self.check("cuInit", self.cuInit(0))
        dev = ctypes.c_int()
        self.check("cuDeviceGet", self.cuDeviceGet(ctypes.byref(dev), ordinal))
        ctx = ctypes.c_void_p()
        self.check("cuDevicePrimaryCtxRetain", self.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev))
        self.check("cuCtxSetCurrent", self.cuCtxSetCurrent(ctx))
        return dev.value

    def device_attr(self, dev, attr):
        v = ctypes.c_int()
        self.check("cuDeviceGetAttribute", self.cuDeviceGetAttribute(ctypes.byref(v), attr, dev))
        return v.value

    def load_ptx(self, ptx):
        log = ctypes.create_string_buffer(16384)
        opts = (ctypes.c_int * 2)(CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES)
        vals = (ctypes.c_void_p * 2)(ctypes.cast(log, ctypes.c_void_p), ctypes.c_void_p(len(log)))
        image = ctypes.create_string_buffer(ptx.encode())
        mod = ctypes.c_void_p()
        r = self.cuModuleLoadDataEx(ctypes.byref(mod), ctypes.cast(image, ctypes.c_void_p), 2, opts, vals)
        if r != 0:
            try:
                self.check("cuModuleLoadDataEx (PTX JIT)", r)
            except GemmError as e:
                raise GemmError(f"{e}\n{log.value.decode(errors='replace')}")
        return mod

    def function(self, mod, name):
        f = ctypes.c_void_p()
        self.check(f"cuModuleGetFunction({name})", self.cuModuleGetFunction(ctypes.byref(f), mod, name.encode()))
        return f

    def func_attr(self, f, attr):
        v = ctypes.c_int()
        self.check("cuFuncGetAttribute", self.cuFuncGetAttribute(ctypes.byref(v), attr, f))
        return v.value

    def tensor_map_on_device(self, a, global_address):
        """Encodes a CUtensorMap on the host (128-byte aligned buffer), then,
        as upstream's runtime does, allocates 128 bytes of device memory and
        copies it there; returns the device pointer."""
        raw = (ctypes.c_uint8 * (2 * TENSOR_MAP_BYTES))()
        base = ctypes.addressof(raw)
        aligned = (base + TENSOR_MAP_BYTES - 1) // TENSOR_MAP_BYTES * TENSOR_MAP_BYTES
        dims = (ctypes.c_uint64 * 2)(*a["dims"])
        strides = (ctypes.c_uint64 * 2)(*(a["strides"] + [0]))
        box = (ctypes.c_uint32 * 2)(*a["box"])
        es = (ctypes.c_uint32 * 2)(*a["element_strides"])
        r = self.cuTensorMapEncodeTiled(ctypes.c_void_p(aligned), a["data_type"], a["rank"],
                                        ctypes.c_void_p(global_address), dims, strides, box, es,
                                        a["interleave"], a["swizzle"], a["l2_promotion"], a["oob_fill"])
        self.check(f"cuTensorMapEncodeTiled(dims {a['dims']}, strides {a['strides']}, box {a['box']}, "
                   f"swizzle {a['swizzle']})", r)
        dptr = ctypes.c_uint64()
        self.check("cuMemAlloc", self.cuMemAlloc_v2(ctypes.byref(dptr), TENSOR_MAP_BYTES))
        self.check("cuMemcpyHtoD", self.cuMemcpyHtoD_v2(dptr, ctypes.c_void_p(aligned), TENSOR_MAP_BYTES))
        return dptr.value

    def launch(self, f, grid, block, smem, stream, values):
        vals = [ctypes.c_uint64(v) for v in values]
        params = (ctypes.c_void_p * len(vals))(*[ctypes.addressof(v) for v in vals])
        self.check("cuLaunchKernel", self.cuLaunchKernel(f, grid[0], grid[1], grid[2], block[0], block[1],
                                                         block[2], smem, ctypes.c_void_p(stream), params, None))


# ------------------------------------------------------------------ running

def empty_result(size, error):
    return dict(size=size, time_ms=None, tflops=None, rel_err=None, ok=False, error=error)


def dump_inputs(dump, M, N, K):
    """A and B from a `tmac run --dump-dir` directory (its manifest's two
    inputs), so that the baseline runs on the inputs tmac ran on."""
    import torch
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from report import parse_npy_header
    with open(os.path.join(dump, "manifest.json")) as f:
        m = json.load(f)
    ins = [a for a in m["args"] if "shape" in a and not a["output"]]
    if len(ins) != 2 or [list(a["shape"]) for a in ins] != [[M, K], [K, N]] or any(a["elem"] != "f16" for a in ins):
        raise GemmError(f"{dump}: its inputs are not f16 {M}x{K} and {K}x{N}")
    out = []
    for a in ins:
        buf = Path(dump, a["in"]).read_bytes()
        _, shape, off = parse_npy_header(buf, a["in"])
        out.append(torch.frombuffer(bytearray(buf[off:]), dtype=torch.float16).reshape(shape).cuda())
    return out


def _run_in_process(size, art_dir=None, reps=50, warmup=10, fix_dynamic_smem=False, dump=None):
    info, ptx = load_artifacts(size, art_dir)
    if fix_dynamic_smem:
        ptx = patch_dynamic_smem(ptx)
    try:
        import torch
    except ImportError as e:
        raise GemmError(f"torch is needed for the inputs and the reference ({e})")
    drv = Driver()
    if not torch.cuda.is_available():
        raise GemmError("torch sees no CUDA device on this machine")
    torch.cuda.init()
    ordinal = torch.cuda.current_device()
    torch.empty(1, device="cuda")          # make torch create the primary context first
    dev = drv.attach(ordinal)
    cc = (drv.device_attr(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR),
          drv.device_attr(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR))
    if cc != (9, 0):
        raise GemmError(f"the PTX targets sm_90a; this GPU is sm_{cc[0]}{cc[1]}")
    M, N, K = info["M"], info["N"], info["K"]
    mod = drv.load_ptx(ptx)
    tmap_ptrs = []
    try:
        f = drv.function(mod, info["kernel"])
        dyn = info["dynamic_smem_bytes"]
        static = drv.func_attr(f, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)
        optin = drv.device_attr(dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)
        if static + dyn > optin:
            raise GemmError(f"{static} B static + {dyn} B dynamic shared memory > the {optin} B a block may have")
        drv.check(f"cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES, {dyn})",
                  drv.cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, dyn))
        regs = drv.func_attr(f, CU_FUNC_ATTRIBUTE_NUM_REGS)

        if dump:
            A, B = dump_inputs(dump, M, N, K)
        else:
            gen = torch.Generator(device="cuda")
            gen.manual_seed(size)
            A = torch.randn((M, K), device="cuda", dtype=torch.float16, generator=gen)
            B = torch.randn((K, N), device="cuda", dtype=torch.float16, generator=gen)
        D = torch.full((M, N), float("nan"), device="cuda", dtype=torch.float32)
        tensors = {"a": A, "b": B, "d": D}
        ptrs = {k: t.data_ptr() for k, t in tensors.items()}
        tmaps = {}
        for t in info["tensor_maps"]:
            p = drv.tensor_map_on_device(tensor_map_args(t, info), ptrs[t["operand"]])
            tmap_ptrs.append(p)
            tmaps[t["operand"]] = p
        values = [param_value(p["role"], info, ptrs, tmaps) for p in info["params"]]
        stream = torch.cuda.current_stream().cuda_stream
        torch.cuda.synchronize()

        def launch():
            drv.launch(f, info["grid"], info["block"], dyn, stream, values)

        # Check.
        launch()
        drv.check("the kernel (cuCtxSynchronize)", drv.cuCtxSynchronize())
        prev_tf32 = torch.backends.cuda.matmul.allow_tf32
        torch.backends.cuda.matmul.allow_tf32 = False
        try:
            ref = torch.matmul(A.double(), B.double())
        finally:
            torch.backends.cuda.matmul.allow_tf32 = prev_tf32
        nan_count = int(torch.isnan(D).sum().item())
        diff = (D.double() - ref.double())
        rel_err = float(diff.norm() / ref.double().norm())
        max_abs = float(diff.abs().max())
        del diff, ref
        ok = nan_count == 0 and math.isfinite(rel_err) and rel_err <= REL_TOL
        err_text = f"wrong result: rel err {rel_err:.3g}, {nan_count} NaN left in D (tolerance {REL_TOL})"
        if not math.isfinite(rel_err):
            rel_err = None                 # keep the JSON standard (no NaN/Infinity)
        if not math.isfinite(max_abs):
            max_abs = None

        # Time.
        for _ in range(warmup):
            launch()
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
        for s, e in zip(starts, ends):
            s.record()
            launch()
            e.record()
        torch.cuda.synchronize()
        drv.check("the timed kernels (cuCtxSynchronize)", drv.cuCtxSynchronize())
        times = [s.elapsed_time(e) for s, e in zip(starts, ends)]
        t = statistics.median(times)
        return dict(size=size, time_ms=t, tflops=2.0 * M * N * K / (t * 1e-3) / 1e12, rel_err=rel_err,
                    ok=ok, error=None if ok else err_text,
                    max_abs_err=max_abs, nan_count=nan_count, reps=reps, warmup=warmup,
                    min_ms=min(times), max_ms=max(times), kernel=info["kernel"], stages=info.get("stages"),
                    grid=info["grid"], block=info["block"], dynamic_smem_bytes=dyn,
                    static_smem_bytes=static, registers=regs, device=torch.cuda.get_device_name(ordinal),
                    mlir_opt_version=info.get("mlir_opt_version"), ptx_patched=fix_dynamic_smem)
    finally:
        for p in tmap_ptrs:
            drv.cuMemFree_v2(p)
        drv.cuModuleUnload(mod)


def run_mlir_gemm(size, art_dir=None, reps=50, warmup=10, isolate=True, timeout_s=60,
                  fix_dynamic_smem=False, dump=None):
    """Runs upstream MLIR's GEMM at M=N=K=size on the GPU; returns a dict with
    time_ms (median of reps), tflops, rel_err (vs torch.matmul in float32) and
    ok, plus details, and error (None, or why it failed: missing artifacts,
    no GPU, a driver error, a wrong result, a timeout). Never raises for
    those. dump: a `tmac run --dump-dir` directory whose A and B to use
    instead of drawing them. isolate=True runs it in a child process killed after timeout_s
    seconds (a hung kernel cannot hang the caller). fix_dynamic_smem: see
    patch_dynamic_smem (a diagnostic, not the upstream baseline)."""
    if not isolate:
        try:
            return _run_in_process(size, art_dir, reps, warmup, fix_dynamic_smem, dump)
        except GemmError as e:
            return empty_result(size, str(e))
    try:
        load_artifacts(size, art_dir)      # say clearly what is missing, without a child
    except GemmError as e:
        return empty_result(size, str(e))
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", str(size), "--reps", str(reps),
           "--warmup", str(warmup)]
    if art_dir:
        cmd += ["--dir", str(art_dir)]
    if fix_dynamic_smem:
        cmd += ["--fix-dynamic-smem"]
    if dump:
        cmd += ["--dump", str(dump)]
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired as e:
        err = e.stderr.decode(errors="replace") if isinstance(e.stderr, bytes) else (e.stderr or "")
        return empty_result(size, f"no result after {timeout_s} s (a kernel that never finishes? "
                                  f"the child was killed){': ' + err.strip()[-500:] if err.strip() else ''}")
    for line in p.stdout.splitlines():
        if line.startswith(RESULT_TAG):
            return json.loads(line[len(RESULT_TAG):])
    tail = (p.stderr or "").strip()[-2000:]
    return empty_result(size, f"the child exited with status {p.returncode} and no result: {tail}")


def gpu_problem():
    """None if a CUDA GPU looks usable here, else why not (no torch, no
    driver, no device)."""
    try:
        ctypes.CDLL("libcuda.so.1")
    except OSError as e:
        return f"no CUDA driver on this machine ({e})"
    try:
        import torch
    except ImportError as e:
        return f"torch is not installed ({e})"
    if not torch.cuda.is_available():
        return "torch sees no CUDA device"
    return None


def fmt(v, spec):
    return "-" if v is None else format(v, spec)


def markdown(results, patched=False):
    label = "upstream MLIR 22 + dyn-smem PTX patch" if patched else "upstream MLIR 22"
    out = [f"| M=N=K | {label} (ms) | TFLOP/s | rel err | check |", "|---:|---:|---:|---:|---|"]
    for r in results:
        check = "PASS" if r["ok"] else "FAIL: " + (r.get("error") or "?").splitlines()[0][:200]
        out.append(f"| {r['size']} | {fmt(r['time_ms'], '.3f')} | {fmt(r['tflops'], '.1f')} | "
                   f"{fmt(r['rel_err'], '.2e')} | {check} |")
    return "\n".join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default=",".join(map(str, DEFAULT_SIZES)), help="comma-separated M=N=K values")
    ap.add_argument("--dir", default=None, help=f"artifacts of scripts/mlir-baseline.sh (default {DEFAULT_DIR})")
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--timeout", type=float, default=60, help="seconds per size (child process)")
    ap.add_argument("--no-isolate", action="store_true", help="run in this process (no time limit)")
    ap.add_argument("--json", metavar="PATH", help="write the results as JSON ('-': stdout, table to stderr)")
    ap.add_argument("--dry-run", action="store_true", help="check the artifacts and print the launch plan; no GPU")
    ap.add_argument("--fix-dynamic-smem", action="store_true",
                    help="diagnostic, not the baseline: patch upstream's demoted dynamic shared memory variable")
    ap.add_argument("--dump", metavar="DIR", help="take A and B from this `tmac run --dump-dir` directory")
    ap.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    if args.child is not None:
        try:
            r = _run_in_process(args.child, args.dir, args.reps, args.warmup, args.fix_dynamic_smem, args.dump)
        except GemmError as e:
            r = empty_result(args.child, str(e))
        print(RESULT_TAG + json.dumps(r), flush=True)
        return 0

    try:
        sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    except ValueError:
        ap.error(f"--sizes: not a list of integers: {args.sizes!r}")
    if args.dry_run:
        bad = 0
        for s in sizes:
            try:
                print(plan_text(s, args.dir))
            except GemmError as e:
                print(f"gemm {s}: {e}", file=sys.stderr)
                bad += 1
        why = gpu_problem()
        print(f"GPU here: {'yes' if why is None else 'no (' + why + ')'}")
        return 1 if bad else 0

    why = gpu_problem()
    if why is not None:
        print(f"mlir_gemm: cannot run: {why}. Run this on the GPU machine "
              f"(--dry-run checks the artifacts without a GPU).", file=sys.stderr)
        results = [empty_result(s, why) for s in sizes]
    else:
        results = []
        for s in sizes:
            r = run_mlir_gemm(s, args.dir, args.reps, args.warmup, isolate=not args.no_isolate,
                              timeout_s=args.timeout, fix_dynamic_smem=args.fix_dynamic_smem, dump=args.dump)
            results.append(r)
            if r.get("error"):
                print(f"gemm {s}: {r['error']}", file=sys.stderr)
    table = markdown(results, args.fix_dynamic_smem)
    doc = dict(kind="mlir_gemm", baseline="upstream MLIR 22 -gpu-lower-to-nvvm-pipeline, chapter-4 multistage GEMM",
               ptx_patched=args.fix_dynamic_smem, rel_tol=REL_TOL, results=results)
    if args.json == "-":
        print(table, file=sys.stderr)
        print(json.dumps(doc, indent=1, allow_nan=False))
    else:
        print(table)
        if args.json:
            Path(args.json).write_text(json.dumps(doc, indent=1, allow_nan=False) + "\n")
    return 0 if results and all(r["ok"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
