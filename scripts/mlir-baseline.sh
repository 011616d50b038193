#!/usr/bin/env bash
# Upstream MLIR baseline (issue 7): the hand-written chapter-4 multistage GEMM
# (examples/seed004_gemm_multistage.tma: MLIR's NVDSL tutorial, 128x128x64
# tiles, one warpgroup per 128x128 tile of D, 7 TMA stages) compiled by
# upstream MLIR 22 itself,
#
#   mlir-opt -gpu-lower-to-nvvm-pipeline="cubin-chip=sm_90a cubin-features=+ptx80 cubin-format=isa"
#
# for M=N=K in $SIZES (default 1024 2048 4096 8192; f16 A and B, f32 D), so
# that bench/gpu/mlir_gemm.py can launch upstream's PTX on the GPU machine.
#
#   scripts/mlir-baseline.sh            # here, where mlir-opt 22 is
#
# Per size S, into build/gpu/mlir ($OUT):
#   gemm_S.mlir          the input: the example with its shapes, grid and K
#                        trip count set to S (text substitutions, each checked;
#                        the tmac-only parts dropped: the `tmac.output` argument
#                        attribute and the @reference function)
#   gemm_S.lowered.mlir  mlir-opt's output (host code lowered to LLVM, plus a
#                        gpu.binary whose #gpu.object holds the PTX text in its
#                        `assembly` string)
#   gemm_S.ptx           that PTX, unescaped
#   gemm_S.json          kernel name, PTX .entry parameters with the role of
#                        each (read from the lowered host code's
#                        gpu.launch_func and mgpuTensorMapEncodeTiledMemref
#                        calls), grid, block, dynamic shared memory, the
#                        tensor-map settings upstream's host code passes, and
#                        the compile time measured here
# and summary.json + a Markdown table of compile times on stdout.
#
# Stages: $STAGES (default 7, the tutorial's), capped at the K step count.
# Run it after scripts/gpu-build.sh (that one starts by removing build/gpu).
set -euo pipefail
cd "$(dirname "$0")/.."
export MLIR_OPT=${MLIR_OPT:-/usr/lib/llvm-22/bin/mlir-opt}
export SIZES=${SIZES:-"1024 2048 4096 8192"}
export OUT=${OUT:-build/gpu/mlir}
export STAGES=${STAGES:-7}
export COMPILE_RUNS=${COMPILE_RUNS:-3}
if [ ! -x "$MLIR_OPT" ]; then
	echo "mlir-baseline: $MLIR_OPT not found (install mlir-22-tools: scripts/install-deps.sh)" >&2
	exit 1
fi
mkdir -p "$OUT"
exec python3 - <<'PY'
import json, os, re, subprocess, sys, time

MLIR_OPT = os.environ["MLIR_OPT"]
OUT = os.environ["OUT"]
SIZES = [int(s) for s in os.environ["SIZES"].split()]
STAGES = int(os.environ["STAGES"])
RUNS = max(1, int(os.environ["COMPILE_RUNS"]))
SRC = "examples/seed004_gemm_multistage.tma"
PIPELINE = "cubin-chip=sm_90a cubin-features=+ptx80 cubin-format=isa"
TILE_M, TILE_N, TILE_K = 128, 128, 64
A_SLOT = TILE_M * TILE_K * 2           # bytes of one A stage (128x64 f16)
B_SLOT = TILE_K * TILE_N * 2           # bytes of one B stage (two 64x64 f16)
D_TILE = TILE_M * TILE_N * 4           # the epilogue's f32 tile, from offset 0


def die(msg):
    print("mlir-baseline: " + msg, file=sys.stderr)
    sys.exit(1)


def sub(text, old, new, count=None, regex=False):
    """Replace old by new; die unless it occurs (exactly count times if given)."""
    pat = old if regex else re.escape(old)
    n = len(re.findall(pat, text))
    if n == 0 or (count is not None and n != count):
        die(f"{SRC}: expected {count or 'some'} occurrence(s) of {old!r}, found {n}; "
            "the example changed, update scripts/mlir-baseline.sh")
    return re.sub(pat, new.replace("\\", "\\\\"), text)


def generate(size, stages):
    M = N = K = size
    ksteps = K // TILE_K
    src = open(SRC).read()
    # The tmac-only parts: the leading comment, the CPU reference function and
    # the `tmac.output` argument attribute (upstream knows no tmac dialect).
    cut = src.find("// The reference:")
    if cut < 0:
        die(f"{SRC}: no '// The reference:' section")
    body = src[:cut].rstrip() + "\n"
    lines = body.split("\n")
    while lines and lines[0].startswith("//"):
        lines.pop(0)
    body = "\n".join(lines)
    body = sub(body, " {tmac.output}", "", 1)
    # Shapes.
    body = sub(body, "memref<512x1024xf16>", f"memref<{M}x{K}xf16>")
    body = sub(body, "memref<1024x256xf16>", f"memref<{K}x{N}xf16>")
    body = sub(body, "memref<512x256xf32>", f"memref<{M}x{N}xf32>")
    # Grid: (M/128, N/128); the example's %h4/%h2 are its 512/128, 256/128.
    body = sub(body, "  %h2 = arith.constant 2 : index\n  %h4 = arith.constant 4 : index\n",
               f"  %hgridx = arith.constant {M // TILE_M} : index\n"
               f"  %hgridy = arith.constant {N // TILE_N} : index\n", 1)
    body = sub(body, "(%lgx = %h4, %lgy = %h2,", "(%lgx = %hgridx, %lgy = %hgridy,", 1)
    # K trip count (the example's %c16 = 1024/64).
    body = sub(body, r"%c16\b", "%ksteps", regex=True)
    body = sub(body, "%ksteps = arith.constant 16 : index", f"%ksteps = arith.constant {ksteps} : index", 1)
    # Stages: %c7 (ring size), %c6 (loads in flight ahead), the barrier group,
    # the B region's base and the dynamic shared memory size.
    body = sub(body, r"%c7\b", "%cstages", regex=True)
    body = sub(body, r"%c6\b", "%cahead", regex=True)
    body = sub(body, "%cstages = arith.constant 7 : index", f"%cstages = arith.constant {stages} : index", 1)
    body = sub(body, "%cahead = arith.constant 6 : index", f"%cahead = arith.constant {stages - 1} : index", 1)
    body = sub(body, "num_barriers = 7>", f"num_barriers = {stages}>", 1)
    bbase = stages * A_SLOT
    smem = max(stages * (A_SLOT + B_SLOT), D_TILE)
    body = sub(body, "%bbase = arith.constant 114688 : index", f"%bbase = arith.constant {bbase} : index", 1)
    body = sub(body, "%smem_bytes = arith.constant 229376 : i32", f"%smem_bytes = arith.constant {smem} : i32", 1)
    for stale in (r"%h2\b", r"%h4\b", r"%c16\b", r"%c6\b", r"%c7\b"):
        if re.search(stale, body):
            die(f"generated input for {size} still mentions {stale!r}")
    head = (f"// Generated by scripts/mlir-baseline.sh from {SRC}: the chapter-4\n"
            f"// multistage GEMM, M=N=K={size}, 128x128x64 tiles, {stages} stages,\n"
            f"// grid ({M // TILE_M}, {N // TILE_N}), {ksteps} K steps, {smem} B dynamic shared memory.\n")
    return head + body, dict(M=M, N=N, K=K, ksteps=ksteps, stages=stages, smem=smem,
                            grid=[M // TILE_M, N // TILE_N, 1], block=[128, 1, 1])


def unescape_mlir_string(s):
    """MLIR prints string attributes with \\\\ for a backslash and \\XX (hex)
    for other non-printable characters and quotes."""
    out = bytearray()
    i = 0
    while i < len(s):
        c = s[i]
        if c != "\\":
            out += c.encode()
            i += 1
            continue
        nxt = s[i + 1:i + 3]
        if nxt[:1] in ("\\", '"'):
            out += nxt[:1].encode()
            i += 2
        elif re.fullmatch(r"[0-9A-Fa-f]{2}", nxt):
            out.append(int(nxt, 16))
            i += 3
        else:
            die(f"unknown escape \\{nxt!r} in the gpu.binary assembly string")
    return out.decode()


def extract_ptx(lowered):
    m = re.search(r'gpu\.binary @(\w+)\s*\[#gpu\.object<(.*?)assembly = "((?:[^"\\]|\\.)*)"', lowered, re.S)
    if not m:
        die("no gpu.binary with an `assembly` string in mlir-opt's output (cubin-format=isa?)")
    props = {}
    for k, v in re.findall(r"(\w+) = (\d+) : i\d+", m.group(2)):
        props[k] = int(v)
    return m.group(1), unescape_mlir_string(m.group(3)), props


def ptx_entry(ptx):
    m = re.search(r"\.visible \.entry (\w+)\(\s*(.*?)\)", ptx, re.S)
    if not m:
        die("no .visible .entry in the PTX")
    params = []
    for line in m.group(2).split(","):
        line = line.strip()
        pm = re.fullmatch(r"\.param (.*?)\s*(\w+)", line)
        if not pm:
            die(f"cannot read PTX parameter {line!r}")
        params.append(dict(name=pm.group(2), ptx_type=pm.group(1)))
    shared = []
    for align, name, n in re.findall(r"\.shared \.align (\d+) \.b8 (\w+)(?:\[(\d+)\])?;", ptx):
        shared.append(dict(name=name, align=int(align), bytes=int(n) if n else 1))
    return m.group(1), params, shared


MEMREF_FIELDS = ["allocated", "aligned", "offset", "size0", "size1", "stride0", "stride1"]
HOST_ARGS = ["a", "b", "d"]   # @gemm_multistage(%a, %b, %d), each a rank-2 memref


def host_launch(lowered, kernel):
    """Reads the lowered host function: what each gpu.launch_func argument is,
    the launch configuration, and the tensor-map encode calls."""
    consts, inserts, stores, geps, calls = {}, {}, {}, {}, {}
    for v, val in re.findall(r"(%\d+) = llvm\.mlir\.constant\((-?\d+) : \w+\) : \w+", lowered):
        consts[v] = int(val)
    for v, src, idx in re.findall(r"(%\d+) = llvm\.insertvalue (%\w+), %\w+\[([\d, ]+)\]", lowered):
        inserts[v] = (src, idx.replace(" ", ""))
    # insertvalue chains: value -> the struct it extends
    chain = dict(re.findall(r"(%\d+) = llvm\.insertvalue %\w+, (%\w+)\[", lowered))
    for val, ptr in re.findall(r"llvm\.store (%\w+), (%\w+) :", lowered):
        stores[ptr] = val
    for v, base, idx in re.findall(r"(%\d+) = llvm\.getelementptr (%\w+)\[(\d+)\]", lowered):
        geps[(base, int(idx))] = v
    for v, args in re.findall(r"(%\d+) = llvm\.call @mgpuTensorMapEncodeTiledMemref\(([^)]*)\)", lowered):
        calls[v] = [a.strip() for a in args.split(",")]
    hm = re.search(r"llvm\.func @gemm_multistage\(([^)]*)\)", lowered)
    if not hm:
        die("no lowered host function @gemm_multistage")
    nhost = len(hm.group(1).split(","))
    if nhost != len(HOST_ARGS) * len(MEMREF_FIELDS):
        die(f"host function has {nhost} parameters, expected {len(HOST_ARGS) * len(MEMREF_FIELDS)}")

    def host_arg(v):
        m = re.fullmatch(r"%arg(\d+)", v)
        if not m:
            return None
        i = int(m.group(1))
        return f"{HOST_ARGS[i // 7]}.{MEMREF_FIELDS[i % 7]}"

    def memref_of_struct(v):
        # Walk the insertvalue chain; the aligned pointer ([1]) is what
        # mgpuTensorMapEncodeTiledMemref reads as the global address.
        while v in inserts:
            src, idx = inserts[v]
            if idx == "1":
                return host_arg(src)
            v = chain[v]
        return None

    lm = re.search(r"gpu\.launch_func\s+@(\w+)::@(\w+) blocks in \(([^)]*)\) threads in \(([^)]*)\)"
                   r" : \w+ dynamic_shared_memory_size (%\w+) args\((.*)\)", lowered)
    if not lm:
        die("no gpu.launch_func with dynamic_shared_memory_size in the lowered host code")
    if lm.group(2) != kernel:
        die(f"launch_func calls {lm.group(2)}, the binary holds {kernel}")

    def const(v):
        if v not in consts:
            die(f"launch value {v} is not a constant")
        return consts[v]

    grid = [const(v.strip()) for v in lm.group(3).split(",")]
    block = [const(v.strip()) for v in lm.group(4).split(",")]
    smem = const(lm.group(5))
    roles, tmaps = [], []
    for arg in lm.group(6).split(","):
        v, ty = [x.strip() for x in arg.split(":")]
        if v in calls:
            c = calls[v]
            operand = memref_of_struct(stores.get(c[1], ""))
            if operand is None or not operand.endswith(".aligned"):
                die(f"cannot tell which memref tensor map {v} describes")
            box0 = stores.get(c[7])
            box1 = stores.get(geps.get((c[7], 1), ""))
            if box0 is None or box1 is None:
                die(f"cannot read the box of tensor map {v}")
            name = operand.split(".")[0]
            tmaps.append(dict(operand=name, rank=const(c[0]), data_type=const(c[2]),
                              interleave=const(c[3]), swizzle=const(c[4]),
                              l2_promotion=const(c[5]), oob_fill=const(c[6]),
                              box_memref_order=[const(box0), const(box1)]))
            roles.append(f"tensormap.{name}")
        else:
            r = host_arg(v)
            if r is None:
                die(f"launch argument {v} is neither a host argument nor a tensor map")
            roles.append(r)
    return dict(grid=grid, block=block, smem=smem, roles=roles, tmaps=tmaps)


def main():
    ver = subprocess.run([MLIR_OPT, "--version"], capture_output=True, text=True).stdout
    ver = " ".join(ver.split())
    summary = []
    for size in SIZES:
        if size % TILE_M or size % TILE_K:
            die(f"size {size} is not a multiple of 128")
        stages = min(STAGES, size // TILE_K)
        if stages < 2:
            die("the chapter-4 kernel as written needs at least 2 stages")
        text, cfg = generate(size, stages)
        base = os.path.join(OUT, f"gemm_{size}")
        open(base + ".mlir", "w").write(text)
        times = []
        for _ in range(RUNS):
            t0 = time.perf_counter()
            p = subprocess.run([MLIR_OPT, base + ".mlir", f"-gpu-lower-to-nvvm-pipeline={PIPELINE}",
                                "-o", base + ".lowered.mlir"], capture_output=True, text=True)
            times.append(time.perf_counter() - t0)
            if p.returncode != 0:
                die(f"mlir-opt rejected {base}.mlir:\n{p.stderr}")
        lowered = open(base + ".lowered.mlir").read()
        kernel_mod, ptx, props = extract_ptx(lowered)
        if ".target sm_90a" not in ptx or "wgmma.mma_async" not in ptx:
            die(f"{size}: the PTX is not sm_90a wgmma code")
        if ".extern .func" in ptx:
            die(f"{size}: the PTX calls an undefined function (an intrinsic llc did not know)")
        open(base + ".ptx", "w").write(ptx)
        kernel, params, shared = ptx_entry(ptx)
        launch = host_launch(lowered, kernel)
        if len(launch["roles"]) != len(params):
            die(f"{size}: launch_func passes {len(launch['roles'])} arguments, the .entry has {len(params)}")
        for p_, r in zip(params, launch["roles"]):
            p_["role"] = r
        for key, want in (("grid", cfg["grid"]), ("block", cfg["block"]), ("smem", cfg["smem"])):
            if launch[key] != want:
                die(f"{size}: lowered host code launches with {key} {launch[key]}, generated {want}")
        for t in launch["tmaps"]:
            shape = {"a": [cfg["M"], cfg["K"]], "b": [cfg["K"], cfg["N"]]}[t["operand"]]
            t["memref_shape"] = shape
            # What mgpuTensorMapEncodeTiledMemref hands cuTensorMapEncodeTiled
            # (innermost dimension first) for a dense row-major memref.
            t["global_dim"] = [shape[1], shape[0]]
            t["global_strides_bytes"] = [shape[1] * 2]
            t["box_dim"] = t["box_memref_order"][::-1]
            t["element_strides"] = [1, 1]
        info = dict(
            size=size, M=cfg["M"], N=cfg["N"], K=cfg["K"], stages=stages, k_steps=cfg["ksteps"],
            tile=[TILE_M, TILE_N, TILE_K], kernel=kernel, ptx=os.path.basename(base + ".ptx"),
            params=params, grid=launch["grid"], block=launch["block"],
            dynamic_smem_bytes=launch["smem"], static_shared=shared,
            tensor_maps=launch["tmaps"],
            tensor_map_passing="device pointer (upstream: cuMemAlloc + cuMemcpy of the 128-byte CUtensorMap)",
            dtypes=dict(a="f16", b="f16", d="f32"), layout="A MxK row-major, B KxN row-major, D MxN row-major",
            mlir_opt=MLIR_OPT, mlir_opt_version=ver, pipeline=f"-gpu-lower-to-nvvm-pipeline={PIPELINE}",
            compile_s=min(times), compile_s_runs=times,
            llvm_ir_to_isa_ms=props.get("LLVMIRToISATimeInMs"), ptx_bytes=len(ptx))
        with open(base + ".json", "w") as f:
            json.dump(info, f, indent=1)
            f.write("\n")
        summary.append(info)
        print(f"gemm {size}: {kernel}, {len(params)} params, grid {info['grid']}, "
              f"{info['dynamic_smem_bytes']} B dynamic smem, {stages} stages, "
              f"compile {min(times) * 1000:.0f} ms", file=sys.stderr)
    with open(os.path.join(OUT, "summary.json"), "w") as f:
        json.dump([dict(size=s["size"], json=f"gemm_{s['size']}.json", compile_s=s["compile_s"],
                        llvm_ir_to_isa_ms=s["llvm_ir_to_isa_ms"]) for s in summary], f, indent=1)
        f.write("\n")
    print(f"Upstream {ver.split(' Optimized')[0]} `mlir-opt -gpu-lower-to-nvvm-pipeline` "
          f"(best of {RUNS}):\n")
    print("| M=N=K | stages | compile (ms) | LLVM IR to PTX (ms) | PTX lines |")
    print("|---:|---:|---:|---:|---:|")
    for s in summary:
        lines = open(os.path.join(OUT, s["ptx"])).read().count("\n")
        print(f"| {s['size']} | {s['stages']} | {s['compile_s'] * 1000:.0f} | "
              f"{s['llvm_ir_to_isa_ms']} | {lines} |")


main()
PY
