r"""The Triton fused-attention baseline of issue 19 (forward only).

The usual Triton flash-attention forward: one program per (BLOCK_M query
rows, batch·head); the key blocks are streamed with an online softmax in
base 2 (log2(e)·scale folded into the scores), P is converted to the input
type for the P·V dot, and O / rowsum and the log-sum-exp (natural log, of
the scaled scores) are written at the end. Causal attention splits the key
loop in two: the blocks wholly below the diagonal run without a mask, the
diagonal block with one (BLOCK_N divides BLOCK_M, so no block straddles
both). Autotuned per (S, D, causal) over BLOCK_M, BLOCK_N, num_warps and
num_stages.

attention(q, k, v, causal, scale) takes [B, H, S, D] contiguous tensors
(f16 or bf16) with S a multiple of 128 and D in (64, 128), and returns
(O, lse): O like q, lse [B, H, S] f32.
"""

import torch
import triton
import triton.language as tl

LOG2E = 1.4426950408889634


def _configs():
    # The tutorial's space, trimmed so that autotuning the eight cases of a
    # run stays within a few minutes of compiles on a fresh machine.
    out = [triton.Config({"BLOCK_M": 64, "BLOCK_N": 64}, num_warps=4, num_stages=s) for s in (3, 4)]
    for bn in (64, 128):
        for warps in (4, 8):
            for stages in (2, 3):
                out.append(triton.Config({"BLOCK_M": 128, "BLOCK_N": bn}, num_warps=warps, num_stages=stages))
    return out


@triton.jit
def _key_blocks(acc, m_i, l_i, q, k_base, v_base, offs_m, lo, hi, qk_scale,
                D: tl.constexpr, BLOCK_N: tl.constexpr, MASKED: tl.constexpr):
    offs_d = tl.arange(0, D)
    for start in range(lo, hi, BLOCK_N):
        offs_n = start + tl.arange(0, BLOCK_N)
        k = tl.load(k_base + offs_n[:, None] * D + offs_d[None, :])
        s = tl.dot(q, tl.trans(k)) * qk_scale
        if MASKED:
            s = tl.where(offs_m[:, None] >= offs_n[None, :], s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.math.exp2(s - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(v_base + offs_n[:, None] * D + offs_d[None, :])
        acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None])
        m_i = m_new
    return acc, m_i, l_i


@triton.autotune(configs=_configs(), key=["S", "D", "CAUSAL"])
@triton.jit
def _attention_fwd(Q, K, V, O, LSE, qk_scale, S,
                   D: tl.constexpr, CAUSAL: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid_m = tl.program_id(0)
    bh = tl.program_id(1).to(tl.int64)
    base = bh * S * D
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, D)
    q = tl.load(Q + base + offs_m[:, None] * D + offs_d[None, :])
    acc = tl.zeros([BLOCK_M, D], dtype=tl.float32)
    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    if CAUSAL:
        diag = pid_m * BLOCK_M
        acc, m_i, l_i = _key_blocks(acc, m_i, l_i, q, K + base, V + base, offs_m, 0, diag, qk_scale,
                                    D, BLOCK_N, False)
        acc, m_i, l_i = _key_blocks(acc, m_i, l_i, q, K + base, V + base, offs_m, diag, diag + BLOCK_M, qk_scale,
                                    D, BLOCK_N, True)
    else:
        acc, m_i, l_i = _key_blocks(acc, m_i, l_i, q, K + base, V + base, offs_m, 0, S, qk_scale,
                                    D, BLOCK_N, False)
    acc = acc / l_i[:, None]
    tl.store(O + base + offs_m[:, None] * D + offs_d[None, :], acc.to(O.dtype.element_ty))
    tl.store(LSE + bh * S + offs_m, (m_i + tl.math.log2(l_i)) * 0.6931471805599453)


def attention(q, k, v, causal, scale):
    b, h, s, d = q.shape
    if s % 128 != 0 or d not in (64, 128):
        raise ValueError(f"the Triton baseline takes S a multiple of 128 and D in (64, 128), not S={s} D={d}")
    if k.shape != q.shape or v.shape != q.shape or not (q.is_contiguous() and k.is_contiguous() and v.is_contiguous()):
        raise ValueError("q, k and v must be contiguous [B, H, S, D] tensors of one shape")
    o = torch.empty_like(q)
    lse = torch.empty((b, h, s), device=q.device, dtype=torch.float32)

    def grid(meta):
        return (s // meta["BLOCK_M"], b * h)

    _attention_fwd[grid](q, k, v, o, lse, scale * LOG2E, s, D=d, CAUSAL=bool(causal))
    return o, lse
