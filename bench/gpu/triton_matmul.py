"""Baseline 1: the standard tiled Triton matmul (pointer loads, grouped
tile order, fp32 accumulator), the shape of the Triton tutorial's GEMM.

C[M, N] = A[M, K] @ B[K, N], A and B row-major fp16 or bf16, C row-major in
the output dtype given (float32 by default in the harness, as tmac's GEMM
writes). Triton pipelines the K loop itself (num_stages) and uses wgmma on
Hopper. The configurations are the usual Hopper ones; peers.py tunes over
them on the benchmark's own inputs, checking every configuration's output
and timing it the same way as the final measurement (see tune() there).

Written for Triton 3.6; needs only triton and torch.
"""

import triton
import triton.language as tl


@triton.jit
def _grouped_tile(pid, num_pid_m, num_pid_n, GROUP_M: tl.constexpr):
    # Tiles are visited GROUP_M rows of tiles at a time, column by column,
    # so consecutive programs share tiles of A and B in L2.
    width = GROUP_M * num_pid_n
    group = pid // width
    first_m = group * GROUP_M
    rows = tl.minimum(num_pid_m - first_m, GROUP_M)
    pid_m = first_m + (pid % width) % rows
    pid_n = (pid % width) // rows
    return pid_m, pid_n


@triton.jit
def matmul_tiled_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                        stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                        GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    pid_m, pid_n = _grouped_tile(pid, num_pid_m, num_pid_n, GROUP_M)

    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    # Rows/columns past the edge read row/column 0 (masked at the store),
    # so the loads need no mask in M and N and stay vectorised.
    rm_in = tl.max_contiguous(tl.multiple_of(tl.where(rm < M, rm, 0), BLOCK_M), BLOCK_M)
    rn_in = tl.max_contiguous(tl.multiple_of(tl.where(rn < N, rn, 0), BLOCK_N), BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + rm_in[:, None] * stride_am + rk[None, :] * stride_ak
    b_ptrs = b_ptr + rk[:, None] * stride_bk + rn_in[None, :] * stride_bn

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=rk[None, :] < k_left, other=0.0)
        b = tl.load(b_ptrs, mask=rk[:, None] < k_left, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk

    c = acc.to(c_ptr.dtype.element_ty)
    c_ptrs = c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn
    tl.store(c_ptrs, c, mask=(rm[:, None] < M) & (rn[None, :] < N))


# (BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, num_stages, num_warps): the usual
# Hopper tile shapes of the Triton tutorials and torch inductor's mm
# templates, small-M tiles included for the skinny shapes.
CONFIGS = [
    (128, 256, 64, 8, 3, 8),
    (256, 128, 64, 8, 3, 8),
    (128, 256, 64, 8, 4, 8),
    (128, 128, 64, 8, 4, 8),
    (128, 128, 64, 8, 4, 4),
    (128, 128, 128, 8, 3, 8),
    (128, 64, 64, 8, 4, 4),
    (64, 128, 64, 8, 4, 4),
    (64, 256, 64, 8, 4, 4),
    (64, 128, 128, 8, 3, 4),
    (64, 64, 64, 8, 5, 4),
]


def config_name(cfg):
    bm, bn, bk, gm, s, w = cfg
    return f"BM{bm} BN{bn} BK{bk} G{gm} s{s} w{w}"


def launcher(cfg, a, b, c):
    """A function launching the kernel with configuration cfg on a, b
    (M x K, K x N) into c (M x N)."""
    bm, bn, bk, gm, stages, warps = cfg
    M, K = a.shape
    N = b.shape[1]
    grid = (triton.cdiv(M, bm) * triton.cdiv(N, bn),)

    def run():
        matmul_tiled_kernel[grid](a, b, c, M, N, K,
                                  a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
                                  BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=gm,
                                  num_stages=stages, num_warps=warps)
    return run
