"""Memory-bound Triton baselines: elementwise add (c = a + b) and copy
(dst = src) over flat contiguous tensors, BLOCK elements per program, the
shape of the Triton tutorial's vector add. peers.py tunes BLOCK and
num_warps over CONFIGS on the benchmark's own inputs.

Written for Triton 3.6.
"""

import triton
import triton.language as tl


@triton.jit
def add_kernel(a_ptr, b_ptr, c_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs, mask=mask)
    tl.store(c_ptr + offs, a + b, mask=mask)


@triton.jit
def copy_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=mask), mask=mask)


# (BLOCK, num_warps)
CONFIGS = [(b, w) for b in (1024, 2048, 4096, 8192, 16384) for w in (4, 8)]


def config_name(cfg):
    return f"BLOCK{cfg[0]} w{cfg[1]}"


def add_launcher(cfg, a, b, c):
    block, warps = cfg
    n = a.numel()
    grid = (triton.cdiv(n, block),)

    def run():
        add_kernel[grid](a, b, c, n, BLOCK=block, num_warps=warps)
    return run


def copy_launcher(cfg, src, dst):
    block, warps = cfg
    n = src.numel()
    grid = (triton.cdiv(n, block),)

    def run():
        copy_kernel[grid](src, dst, n, BLOCK=block, num_warps=warps)
    return run
