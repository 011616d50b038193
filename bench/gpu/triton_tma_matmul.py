"""Baseline 2: a persistent Triton matmul that loads and stores tiles with
TMA, the shape of the Triton tutorial's persistent TMA GEMM.

C[M, N] = A[M, K] @ B[K, N], A and B row-major fp16 or bf16, C row-major in
the output dtype given. The tensor maps are host-side descriptors
(triton.tools.tensor_descriptor.TensorDescriptor, built per configuration
with its block shapes, so no autotuner pre-hook is needed); the kernel
reads them with desc.load / desc.store. min(#SMs, #tiles) programs each walk
the tiles tile_id = pid, pid + #SMs, ... in grouped order; the K loop is
software-pipelined by Triton (num_stages); FLATTEN lets Triton pipeline
across the tile loop too (the next tile's loads overlap this tile's
epilogue). The epilogue optionally stores the tile as two halves
(smaller shared-memory staging buffer). The epilogue's tile index is kept
in a second counter rather than reusing the loop's, as the Triton tutorial
does for its pipeliner.

Written for Triton 3.6 (tl.range(..., flatten=), TensorDescriptor).
"""

import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor

from triton_matmul import _grouped_tile


@triton.jit
def matmul_tma_persistent_kernel(a_desc, b_desc, c_desc, M, N, K,
                                 BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                                 GROUP_M: tl.constexpr, SPLIT_EPILOGUE: tl.constexpr,
                                 FLATTEN: tl.constexpr, NUM_SMS: tl.constexpr):
    start = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    k_tiles = tl.cdiv(K, BLOCK_K)
    num_tiles = num_pid_m * num_pid_n
    tile_c = start - NUM_SMS
    for tile in tl.range(start, num_tiles, NUM_SMS, flatten=FLATTEN):
        pid_m, pid_n = _grouped_tile(tile, num_pid_m, num_pid_n, GROUP_M)
        off_m = pid_m * BLOCK_M
        off_n = pid_n * BLOCK_N
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for ki in range(k_tiles):
            off_k = ki * BLOCK_K
            a = a_desc.load([off_m, off_k])
            b = b_desc.load([off_k, off_n])
            acc = tl.dot(a, b, acc)
        tile_c += NUM_SMS
        pid_mc, pid_nc = _grouped_tile(tile_c, num_pid_m, num_pid_n, GROUP_M)
        off_cm = pid_mc * BLOCK_M
        off_cn = pid_nc * BLOCK_N
        if SPLIT_EPILOGUE:
            halves = tl.permute(tl.reshape(acc, (BLOCK_M, 2, BLOCK_N // 2)), (0, 2, 1))
            c0, c1 = tl.split(halves)
            c_desc.store([off_cm, off_cn], c0.to(c_desc.dtype))
            c_desc.store([off_cm, off_cn + BLOCK_N // 2], c1.to(c_desc.dtype))
        else:
            c_desc.store([off_cm, off_cn], acc.to(c_desc.dtype))


# (BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, num_stages, num_warps, SPLIT_EPILOGUE),
# each with FLATTEN off and on: the persistent tutorial's Hopper space
# (BM 128, BN 128/256, BK 64/128, 3-4 stages, 4/8 warps, split epilogue or
# not), trimmed of register-spilling combinations (BN 256 with 4 warps),
# plus 64-row tiles for the skinny shapes.
_BASE = [
    (128, 128, 64, 8, 3, 4, False),
    (128, 128, 64, 8, 4, 4, False),
    (128, 128, 64, 8, 4, 8, False),
    (128, 128, 128, 8, 3, 8, False),
    (128, 256, 64, 8, 3, 8, True),
    (128, 256, 64, 8, 4, 8, True),
    (128, 256, 64, 8, 3, 8, False),
    (64, 128, 64, 8, 4, 4, False),
    (64, 256, 64, 8, 4, 4, True),
]
CONFIGS = [c + (f,) for f in (False, True) for c in _BASE]


def config_name(cfg):
    bm, bn, bk, gm, s, w, split, flat = cfg
    return f"BM{bm} BN{bn} BK{bk} G{gm} s{s} w{w}{' split-epilogue' if split else ''}{' flatten' if flat else ''}"


def launcher(cfg, a, b, c, num_sms):
    """A function launching the kernel with configuration cfg on a, b
    (M x K, K x N) into c (M x N), on at most num_sms programs."""
    bm, bn, bk, gm, stages, warps, split, flat = cfg
    M, K = a.shape
    N = b.shape[1]
    a_desc = TensorDescriptor.from_tensor(a, [bm, bk])
    b_desc = TensorDescriptor.from_tensor(b, [bk, bn])
    c_desc = TensorDescriptor.from_tensor(c, [bm, bn // 2 if split else bn])
    grid = (min(num_sms, triton.cdiv(M, bm) * triton.cdiv(N, bn)),)

    def run():
        matmul_tma_persistent_kernel[grid](a_desc, b_desc, c_desc, M, N, K,
                                           BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=gm,
                                           SPLIT_EPILOGUE=split, FLATTEN=flat, NUM_SMS=num_sms,
                                           num_stages=stages, num_warps=warps)
    return run
