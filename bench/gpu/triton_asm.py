#!/usr/bin/env python3
"""Writes the code Triton generates for a peer kernel at one shape and
configuration, to compare with tmac's (issue 20: seed 002's Triton FP8
kernel beats tmac's skinny fp8 GEMMs by ~4 us with the same tiles and
stages):

    python3 bench/gpu/triton_asm.py --m 64 --n 4096 --k 4096 --config 64,64,256,8,4,4 -o OUT_DIR

runs triton_fp8.py's kernel once (e4m3 inputs, per-tensor scales, bf16
output) with the configuration (BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M,
num_stages, num_warps) and writes OUT_DIR/triton_fp8.{ptx,ttgir,cubin}
(and .sass when nvdisasm is on the PATH). Needs a GPU, torch and Triton.
"""

import argparse
import os
import shutil
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--m", type=int, required=True)
    ap.add_argument("--n", type=int, required=True)
    ap.add_argument("--k", type=int, required=True)
    ap.add_argument("--config", default="64,64,256,8,4,4", help="BLOCK_M,BLOCK_N,BLOCK_K,GROUP_M,num_stages,num_warps")
    ap.add_argument("-o", "--output", required=True)
    a = ap.parse_args()
    import torch
    import triton
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import triton_fp8
    cfg = tuple(int(x) for x in a.config.split(","))
    if len(cfg) != 6:
        ap.error("--config takes six integers")
    bm, bn, bk, gm, stages, warps = cfg
    A = torch.randn(a.m, a.k, device="cuda").to(torch.float8_e4m3fn)
    B = torch.randn(a.n, a.k, device="cuda").to(torch.float8_e4m3fn)
    sa = torch.ones(1, device="cuda")
    sb = torch.ones(1, device="cuda")
    C = torch.empty(a.m, a.n, device="cuda", dtype=torch.bfloat16)
    TD = triton_fp8.TensorDescriptor
    grid = (triton.cdiv(a.m, bm) * triton.cdiv(a.n, bn),)
    k = triton_fp8.fp8_gemm_tma_kernel[grid](TD.from_tensor(A, [bm, bk]), TD.from_tensor(B, [bn, bk]),
                                             TD.from_tensor(C, [bm, bn]), sa, sb, a.m, a.n, a.k,
                                             BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=gm, ROWWISE=False,
                                             num_stages=stages, num_warps=warps)
    torch.cuda.synchronize()
    os.makedirs(a.output, exist_ok=True)
    for key in ("ptx", "ttgir", "cubin"):
        if key in k.asm:
            mode = "wb" if isinstance(k.asm[key], bytes) else "w"
            with open(os.path.join(a.output, f"triton_fp8.{key}"), mode) as f:
                f.write(k.asm[key])
    nvdisasm = shutil.which("nvdisasm")
    if nvdisasm and "cubin" in k.asm:
        sass = subprocess.run([nvdisasm, "-c", os.path.join(a.output, "triton_fp8.cubin")], capture_output=True, text=True)
        with open(os.path.join(a.output, "triton_fp8.sass"), "w") as f:
            f.write(sass.stdout or sass.stderr)
    print(f"wrote {a.output}/triton_fp8.* (grid {grid[0]}, shared memory {k.metadata.shared} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
