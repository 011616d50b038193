"""Baseline 3: the FP8 GEMM of seed 002 ("Deep dive on the Hopper TMA unit
for FP8 GEMMs"), written here in current Triton: one program per output
tile (grouped order), A (M x K) and B (N x K, K-major) in e4m3 or e5m2 read
through host-side TMA descriptors, tl.dot with B transposed in registers
(fp8 wgmma reads both operands K-major), f32 accumulation, the scales
applied to the accumulator before the store, the tile stored through a TMA
descriptor in the output dtype (bf16 or f16).

    D = (A @ B^T) * sa * sb

sa and sb are f32: one element each (per-tensor) or sa per row of D (M
values) and sb per column (N values), as torch._scaled_mm takes them.

The configurations are the design's own (the blog's tuned kernel: 64 x 64
tiles, K blocks of 256, 4 stages, 4 warps) and its neighbours, plus
128-row tiles for the large-M shapes. Written for Triton 3.6
(TensorDescriptor, desc.load / desc.store).
"""

import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor

from triton_matmul import _grouped_tile, config_name  # noqa: F401 (config_name: this module's too)


@triton.jit
def fp8_gemm_tma_kernel(a_desc, b_desc, c_desc, sa_ptr, sb_ptr, M, N, K,
                        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                        GROUP_M: tl.constexpr, ROWWISE: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    pid_m, pid_n = _grouped_tile(pid, num_pid_m, num_pid_n, GROUP_M)
    off_m = pid_m * BLOCK_M
    off_n = pid_n * BLOCK_N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for ki in range(tl.cdiv(K, BLOCK_K)):
        a = a_desc.load([off_m, ki * BLOCK_K])
        b = b_desc.load([off_n, ki * BLOCK_K])
        acc = tl.dot(a, b.T, acc)
    if ROWWISE:
        rm = off_m + tl.arange(0, BLOCK_M)
        rn = off_n + tl.arange(0, BLOCK_N)
        sa = tl.load(sa_ptr + rm, mask=rm < M, other=0.0)
        sb = tl.load(sb_ptr + rn, mask=rn < N, other=0.0)
        acc = acc * sa[:, None] * sb[None, :]
    else:
        acc = acc * (tl.load(sa_ptr) * tl.load(sb_ptr))
    c_desc.store([off_m, off_n], acc.to(c_desc.dtype))


# (BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, num_stages, num_warps)
CONFIGS = [
    (64, 64, 256, 8, 4, 4),    # seed 002's tuned kernel
    (64, 64, 128, 8, 6, 4),
    (64, 128, 128, 8, 4, 4),
    (64, 128, 256, 8, 3, 4),
    (128, 64, 128, 8, 4, 4),
    (128, 128, 128, 8, 4, 8),
    (128, 256, 128, 8, 3, 8),
]


def launcher(cfg, a, b, sa, sb, c):
    """A function launching the kernel with configuration cfg on a (M x K)
    and b (N x K) with scales sa, sb into c (M x N)."""
    bm, bn, bk, gm, stages, warps = cfg
    M, K = a.shape
    N = b.shape[0]
    rowwise = sa.numel() > 1 or sb.numel() > 1
    a_desc = TensorDescriptor.from_tensor(a, [bm, bk])
    b_desc = TensorDescriptor.from_tensor(b, [bn, bk])
    c_desc = TensorDescriptor.from_tensor(c, [bm, bn])
    grid = (triton.cdiv(M, bm) * triton.cdiv(N, bn),)

    def run():
        fp8_gemm_tma_kernel[grid](a_desc, b_desc, c_desc, sa, sb, M, N, K,
                                  BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=gm, ROWWISE=rowwise,
                                  num_stages=stages, num_warps=warps)
    return run
