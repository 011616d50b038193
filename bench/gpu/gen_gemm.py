#!/usr/bin/env python3
"""Writes a tmac GEMM program in the simple tile-loop form for one shape
and one kernel design, for the benchmark's per-shape tuning:

    python3 bench/gpu/gen_gemm.py --m M --n N --k K --dtype f16|bf16 \\
        [--out f32|f16|bf16] --design tiles|tiles2|persistent|coop [--bm 128] [--bn 128] \\
        [--bk 64|32] [--split S] [--stages 4] [--group 8] [--epilogue direct|smem|tma] [--grid 132] \\
        [--activation none|gelu|gelu_poly|gelu_tanh] -o OUT.tma

    python3 bench/gpu/gen_gemm.py ... --dtype e4m3|e5m2 [--scale none|tensor|row] ...

D(out) = A(dtype) * B(dtype), A MxK and B KxN row-major, f32 accumulate,
K tiles of --bk elements: 64 (one 128-byte swizzle span of 16-bit
elements) or 32 (A's tile then takes a 64-byte swizzle; B's rows of N
keep the 128-byte one), B's tile loaded as BN/64 boxes of BKx64 side by
side (so BN is 64, 128, 192 or 256), or one box of BKx32 in a 64-byte
swizzle (BN 32, the skinny shapes' narrow tiles). fp8 B is given N x K (K-major, as
wgmma needs it), its tile BN rows of BK bytes: BN is any multiple of 16
up to 256. --bn wave:LO-HI picks the BN in LO..HI whose tile count fills
the last wave of --sms blocks best (wave_bn). Designs:

* tiles: one block of one warpgroup per BMxBN tile of D (BM 64 or 128,
  BM*BN <= 128*128), grid of every tile; the K loop is pipelined by
  tma-pipeline (tmac.stages). Epilogue straight from the accumulator
  registers to D (direct), or through a shared-memory tile (smem, f32
  output only). The persistent designs can also store through a shared
  tile with one TMA store per tile (tma), which warp-specialize overlaps
  with the next tile's K loop.
  With --split-reduce streamk (stream-K), --grid blocks share the tiles
  x K steps evenly instead: block b's K loop runs over iterations
  [b*I/G, (b+1)*I/G), crossing tiles (tile and K step from the induction
  variable, still pipelined by tma-pipeline), and a tile's blocks add
  their parts as --split-reduce last does; a block holding a whole tile
  stores it directly.
* tiles2: one block of two warpgroups per 128xBN tile (BN up to 256),
  each multiplying its 64-row half of A's tile, grid of every tile, the K
  loop pipelined by tma-pipeline as in tiles (no producer warp): the
  design of Triton's fastest 2048^3 kernel (BM128 BN256, 8 warps).
* persistent: --grid blocks (at most one per tile) of one warpgroup walk
  the tiles (tile t, t + grid, ...); for tmac tune's pingpong and ws
  schedules (warp-specialize), since tma-pipeline does not pipeline a K
  loop inside a tile loop.
* coop: persistent, written for two warpgroups sharing a 128xBN tile
  (each multiplies its 64-row half of A's tile); for the ws schedule (a
  producer and two consumers, 384 threads). --cluster 2 (persistent
  designs) launches clusters of two blocks that take vertically adjacent
  tiles and share B's tile, loaded with tmac.multicast.

--activation gelu (or gelu_tanh) fuses a bias and GELU into the
epilogue, in registers: D = GELU(A * B + bias) with a bias vector of N
values (dtype) as the third argument, read per tile with
tmac.warpgroup.acc.load_cols and applied with tmac.warpgroup.acc.map
(exact erf form, or the tanh form) before the store; the issue-18
comparison with torch._addmm_activation (bench/gpu/gemm_bias_gelu.py).
--activation gelu_poly is the exact form computed without libdevice's
erff (branch-free: gelu_poly below); its @reference is gelu's.

Tiles are visited in a grouped order: --group rows of tiles at a time,
column by column within a group, so that blocks running at the same time
share A's and B's tiles in L2 (the order Triton's matmuls use). The
program carries tmac.flops (2*M*N*K), a sampled @reference and its
design's loop attributes (tmac.stages; no tmac.warp_specialize: tmac tune
build sets the schedule). Shapes that do not fit the design are refused
with exit status 3 and the reason.

M, N and K need not be multiples of the tiles: the edge tiles' TMA loads
read zeros beyond A and B (a K tail adds nothing; when M is below the
tile's rows, A's loads fill only the M valid rows, a tmac.tma.load into a
subview of the tile's leading rows, unless --full-a), the TMA store clips at
D's edges, the direct epilogue uses tmac.warpgroup.mma.store's masked
form and the shared one stores inside D only. TMA needs rows of A and B
(and of D for the TMA store) whose bytes are a multiple of 16: with --pad,
an operand without them (4095 x 4097 x 4096: B's rows of 4097 bf16) is
first copied into zero-padded rows by a kernel of its own; without it
such shapes are refused.

fp8 (--dtype e4m3 or e5m2): D = A * B^T with B given as N x K (fp8
wgmma reads both operands K-major only; torch._scaled_mm's column-major
B), K tiles of 128 (or 64) elements, B's tile one BN x BK box. --scale
multiplies the f32 accumulator in registers before the store, by
sa[0] * sb[0] (tensor: two 1-element f32 arguments after B) or by sa[row]
* sb[col] (row: sa of M values per row, sb of N per column, loaded in the
accumulator's row and column layouts), as torch._scaled_mm does.

--split S (split-K, tiles design, smem epilogue) gives each tile S blocks
over K/S each, adding their partial tiles with atomics into D (f32 output,
zeroed by the host first) or into an f32 workspace that a second kernel
rounds into D (f16, bf16). With --split-reduce last (tiles and coop
designs, direct epilogue) each block stores its partial tile to an f32
workspace and the last of a tile's blocks adds them in registers; in the
coop design the S parts of a tile are work units of the persistent tile
loop (M a multiple of BM).

--cluster 2 --multicast a (persistent designs) pairs tiles side by side in
a row of tiles (group height 1) so that the two blocks share A's tile
instead of B's (the default, --multicast b, pairs vertically adjacent
tiles); the grid becomes the most whole clusters that divide the tiles.
--multicast none launches the clusters but shares nothing: every block
loads its own tiles (the cost of the cluster launch, for comparison).
"""

import argparse
import sys

WG = "#gpu.address_space<workgroup>"


class Refuse(Exception):
    pass


# --dtype's element types: 16-bit (A MxK, B KxN) and fp8 (A MxK, B NxK).
MLIR_TYPE = {"f16": "f16", "bf16": "bf16", "e4m3": "f8E4M3FN", "e5m2": "f8E5M2"}


# The GELU bodies of --activation, on y = acc + bias (f32): the exact erf
# form and the tanh form; each leaves the result in %g.
GELU = {
    "gelu": ["%half = arith.constant 0.5 : f32", "%one = arith.constant 1.0 : f32",
             "%rsqrt2 = arith.constant 0.70710678118654752 : f32",
             "%sc = arith.mulf %y, %rsqrt2 : f32", "%e = math.erf %sc : f32", "%e1 = arith.addf %e, %one : f32",
             "%hy = arith.mulf %half, %y : f32", "%g = arith.mulf %hy, %e1 : f32"],
    "gelu_tanh": ["%half = arith.constant 0.5 : f32", "%one = arith.constant 1.0 : f32",
                  "%k0 = arith.constant 0.797884583 : f32", "%k1 = arith.constant 4.471500e-02 : f32",
                  "%y2 = arith.mulf %y, %y : f32", "%p = math.fma %y2, %k1, %one : f32", "%yp = arith.mulf %y, %p : f32",
                  "%u = arith.mulf %yp, %k0 : f32", "%th = math.tanh %u : f32", "%t1 = arith.addf %th, %one : f32",
                  "%hy = arith.mulf %half, %y : f32", "%g = arith.mulf %hy, %t1 : f32"],
}

# ERFC_POLY approximates log2(erfc(u / sqrt 2)) on [0, ERFC_CAP] as
# u * (c1 + c2 u + ... + c8 u^7), f32 coefficients (a least-squares fit,
# Lawson-reweighted to minimax, of the relative error of erfc).
ERFC_POLY = ["-1.1512402296066284", "-0.4584199786186218", "-0.054078616201877594", "0.008611122146248817",
             "-0.0009736586362123489", "7.100401126081124e-05", "-2.86571935248503e-06", "4.483800353227707e-08"]
ERFC_CAP = "7.0"  # erfc(7 / sqrt 2) < 1e-12: beyond it GELU(y) is y or 0 in f32


def gelu_poly():
    """The exact GELU without libdevice's erff and its branches:
    E = exp2(poly(min(|y|, cap))) ~ erfc(|y| / sqrt 2), then
    GELU(y) = 0.5 y (2 - E) for y >= 0 and 0.5 y E below. Branch-free: 7
    fma, one ex2.approx, one select per element. On the CPU over y in
    [-12, 12] (f32 arithmetic, step 1e-5), its relative error against
    0.5 y erfc(-y / sqrt 2) is at most 7e-6 where |GELU| > 1e-6 (0.004 of
    bf16's half-ulp), its erf at most 4.6e-6 from erf."""
    body = ["%half = arith.constant 0.5 : f32", "%gp_two = arith.constant 2.0 : f32",
            "%gp_zero_f = arith.constant 0.0 : f32", f"%gp_cap = arith.constant {ERFC_CAP} : f32"]
    body += [f"%gp_c{i + 1} = arith.constant {c} : f32" for i, c in enumerate(ERFC_POLY)]
    body += ["%gp_u0 = math.absf %y : f32", "%gp_u = arith.minimumf %gp_u0, %gp_cap : f32"]
    acc = f"%gp_c{len(ERFC_POLY)}"
    for i in range(len(ERFC_POLY) - 1, 0, -1):
        body.append(f"%gp_p{i} = math.fma {acc}, %gp_u, %gp_c{i} : f32")
        acc = f"%gp_p{i}"
    body += [f"%gp_q = arith.mulf {acc}, %gp_u : f32", "%gp_en = math.exp2 %gp_q : f32",
             "%gp_ep = arith.subf %gp_two, %gp_en : f32", "%gp_pos = arith.cmpf oge, %y, %gp_zero_f : f32",
             "%gp_s = arith.select %gp_pos, %gp_ep, %gp_en : f32", "%hy = arith.mulf %half, %y : f32",
             "%g = arith.mulf %hy, %gp_s : f32"]
    return body


# The kernel's GELU body where it differs from the reference's (GELU[name]).
KERNEL_GELU = {"gelu_poly": gelu_poly()}
REFERENCE_GELU = {"gelu_poly": "gelu"}


# The fp8 input types (B given N x K) and the widest N tile (wgmma's N).
FP8 = ("e4m3", "e5m2")
MAX_BN = 256


def bn_step(fp8):
    """The granule of BN: fp8's B tile is K-major (BN rows of BK bytes, any
    multiple of wgmma's N granule); 16-bit B is N-major, loaded as boxes of
    64 columns (one 128-byte swizzle span)."""
    return 16 if fp8 else 64


def wave_bn(spec, m, n, bm, fp8, sms, split=1):
    """Picks BN for --bn wave:LO-HI: the BN in LO..HI (multiples of
    bn_step) whose tile count fills the last of the waves of `sms` blocks
    best (fill = tiles / (waves * sms), tiles = ceil(M/BM) * ceil(N/BN) *
    split), taking the largest BN within 0.03 of the best fill, since
    wider tiles read fewer bytes per flop. 128 x 14336 at BM 128 on 132
    SMs: BN 128 gives 112 tiles (fill 0.85), BN 112 gives 128 (0.97).
    Returns BN and its fill."""
    try:
        lo, hi = (int(x) for x in spec[len("wave:"):].split("-"))
    except ValueError:
        raise ValueError("expected wave:LO-HI, e.g. wave:64-128") from None
    step = bn_step(fp8)
    cands = [b for b in range(step, MAX_BN + 1, step) if lo <= b <= hi]
    if not cands:
        raise ValueError(f"no BN in {lo}..{hi} is a multiple of {step}")

    def fill(b):
        tiles = -(-m // bm) * -(-n // b) * split
        return tiles / (-(-tiles // sms) * sms)

    best = max(fill(b) for b in cands)
    bn = max(b for b in cands if fill(b) >= best - 0.03)
    return bn, fill(bn)


def gen(m, n, k, dtype, out, design, bm, bn, stages, group, epilogue, grid, cluster=1, activation="none", bk=None,
        split=1, scale="none", l2promo="none", allow_pad=False, split_reduce="atomic", dtype_b=None, full_a=False,
        prefetch_maps=False, store_layout="swizzled", multicast="b"):
    if activation != "none" and activation not in GELU and activation not in KERNEL_GELU:
        raise Refuse(f"activation {activation}: none, gelu, gelu_poly or gelu_tanh")
    if dtype not in MLIR_TYPE:
        raise Refuse(f"input dtype {dtype}: f16, bf16, e4m3 or e5m2")
    fp8 = dtype in FP8
    two_wg = design in ("coop", "tiles2")  # two consumer warpgroups, each on a 64-row half
    if dtype_b is not None and (not fp8 or dtype_b not in FP8):
        raise Refuse(f"--dtype-b {dtype_b}: e4m3 or e5m2, with an fp8 --dtype (fp8 wgmma mixes the two)")
    if bk is None:
        bk = 128 if fp8 else 64
    if l2promo not in ("none", "64b", "128b", "256b"):
        raise Refuse(f"l2promo {l2promo}: none, 64b, 128b or 256b")
    promo = "none" if l2promo == "none" else f"l2promo_{l2promo}"
    if scale not in ("none", "tensor", "row"):
        raise Refuse(f"scale {scale}: none, tensor or row")
    if scale != "none" and activation != "none":
        raise Refuse("scales and an activation together are not generated")
    if out not in ("f32", "f16", "bf16"):
        raise Refuse(f"output dtype {out}: f32, f16 or bf16")
    if two_wg:
        if bm != 128:
            raise Refuse(f"{design} tiles are 128 rows (two warpgroups of 64)")
    elif bm not in (64, 128):
        raise Refuse("BM must be 64 or 128")
    # 16-bit B of 32 columns: one box of a 64-byte swizzle span.
    narrow_b = not fp8 and bn == 32
    if not narrow_b and (bn % bn_step(fp8) or not bn_step(fp8) <= bn <= MAX_BN):
        raise Refuse(f"BN {bn}: " + ("a multiple of 16 up to 256 (fp8: B's tile is K-major, BN rows of it)" if fp8 else
                                     "32, 64, 128, 192 or 256 (16-bit: B's tile is BN/64 boxes of 64 columns, "
                                     "or one of 32 in a 64-byte swizzle)"))
    if narrow_b and (cluster > 1 or epilogue == "smem" or split > 1 and split_reduce != "last"):
        raise Refuse("BN 32 (16-bit) is for the direct and TMA epilogues without clusters or atomic split-K")
    if not two_wg and bm * bn > 128 * 128:
        raise Refuse(f"{bm}x{bn}: one warpgroup holds at most a 128x128 f32 accumulator")
    if bk not in ((64, 128, 256) if fp8 else (32, 64, 128)):
        raise Refuse(f"BK {bk}: " + ("64, 128 or 256 (fp8)" if fp8 else "32, 64 or 128"))
    if split < 1:
        raise Refuse(f"split {split}: at least 1")
    if split_reduce not in ("atomic", "last", "streamk"):
        raise Refuse(f"split reduce {split_reduce}: atomic, last or streamk")
    streamk = split_reduce == "streamk"
    fixup = split > 1 and split_reduce == "last"
    if streamk and (design != "tiles" or epilogue != "direct" or activation != "none" or split != 1):
        raise Refuse("stream-K (--split-reduce streamk) is for the tiles design, the direct epilogue, no activation "
                     "and no --split (--grid gives the number of blocks)")
    if split > 1 and not fixup and (design != "tiles" or epilogue != "smem" or activation != "none"):
        raise Refuse("split-K is for the tiles design, the smem epilogue and no activation "
                     "(the partial tiles are added into D with atomics)")
    if fixup and (design not in ("tiles", "coop") or epilogue != "direct" or activation != "none"):
        raise Refuse("split-K reduced by the last block (--split-reduce last) is for the tiles and coop designs, "
                     "the direct epilogue and no activation")
    if fixup and design == "coop" and (m % bm or cluster > 1):
        # The coop kernel's partial tiles are two 64-row halves, one per
        # warpgroup; the rows-inside-D views and multicast pairs of units
        # are not generated.
        raise Refuse("coop split-K needs M a multiple of BM and no cluster")
    if split > 1 and -(-k // bk) % split:
        raise Refuse(f"{-(-k // bk)} K steps do not split into {split} equal parts")
    if cluster not in (1, 2):
        raise Refuse("clusters of 1 or 2 blocks")
    if multicast not in ("a", "b", "none"):
        raise Refuse(f"multicast {multicast}: a, b or none")
    if cluster == 2:
        # The two blocks of a cluster take consecutive tiles t, t+1, which
        # the grouped order puts one above the other (same column of B)
        # when the group height is even: B's tile is multicast to both.
        # With --multicast a the group height is 1, so t and t+1 are side
        # by side in a row of tiles and share A's tile instead (for few
        # rows of tiles, where A's tile is read once per column of tiles).
        if design not in ("persistent", "coop"):
            raise Refuse("clusters are for the persistent designs")
        if multicast == "a":
            group = 1
            if -(-n // bn) % 2 or grid % 2:
                raise Refuse("a 2-block cluster sharing A needs an even number of tile columns and grid")
            if m < bm or (bm // cluster) % (64 if two_wg else 8):
                raise Refuse(f"A's tile is multicast as {cluster} boxes of rows: M >= BM and BM/{cluster} rows "
                             "each warpgroup's half can take")
        elif multicast == "none":
            # The cluster launch alone (every load the block's own): what
            # the multicast designs pay for co-scheduling pairs of blocks.
            if grid % 2:
                raise Refuse("2-block clusters need an even grid")
        elif -(-m // bm) % 2 or group % 2 or grid % 2:
            raise Refuse("a 2-block cluster needs an even number of tile rows, group height and grid")
    # Edge tiles: TMA loads fill what lies outside A and B with zeros (a
    # K tail adds nothing), the TMA store clips the tile at D's edges, the
    # direct and shared-memory epilogues store the elements inside D only.
    # TMA needs rows of A, B (and D for the TMA store) whose bytes are a
    # multiple of 16.
    edge = bool(m % bm or n % bn or k % bk)
    esize = {"f32": 4, "f16": 2, "bf16": 2}
    ein = 1 if fp8 else 2  # bytes per input element
    # An operand whose rows TMA cannot address (global strides must be
    # multiples of 16 bytes) is first copied into a buffer with rows padded
    # with zeros (a kernel of its own, one element a thread), which the
    # tensor map reads whole: A's zero columns meet B's rows beyond K, which
    # TMA fills with zeros; B's extra columns (16-bit) only reach columns of
    # D beyond N, which are not stored; fp8 B's extra K columns are zeros.
    a_cols, b_cols = k, (k if fp8 else n)  # elements per row of A and B
    pad_a, pad_b = (a_cols * ein) % 16 != 0, (b_cols * ein) % 16 != 0
    if (pad_a or pad_b) and not allow_pad:
        what = f"K = {k} must be a multiple of 16" if fp8 else f"K = {k} and N = {n} must be multiples of 8"
        raise Refuse(f"TMA needs rows of a multiple of 16 bytes: {what} (--pad copies such operands into padded rows first)")
    if epilogue == "tma" and (n * esize[out]) % 16:
        raise Refuse(f"the TMA store needs rows of D of a multiple of 16 bytes: N = {n} in {out}")
    if epilogue == "smem" and ((out != "f32" and split == 1) or design != "tiles"):
        raise Refuse("the shared-memory epilogue is for f32 output and the tiles design")
    if epilogue == "tma" and design not in ("persistent", "coop"):
        raise Refuse("the TMA-store epilogue is for the persistent designs (its store overlaps the next tile)")
    if epilogue == "tma" and bn * {"f32": 4, "f16": 2, "bf16": 2}[out] % 16:
        raise Refuse("a TMA store box row must be a multiple of 16 bytes")
    tm, tn, ks = -(-m // bm), -(-n // bn), -(-k // bk)
    # A's rows (and fp8 B's) are BK elements: a 128- or 64-byte swizzle span.
    # Wider K tiles (256 bytes) are loaded as two boxes of 128 bytes side by
    # side, the chunked layout wgmma's descriptors walk.
    aswizzle = "swizzle_128b" if bk * ein >= 128 else "swizzle_64b"
    kbox = min(bk, 128 // ein)
    if bk > kbox and two_wg:
        raise Refuse(f"K tiles of {bk * ein} bytes are for the one-warpgroup designs (not {design})")
    tiles = tm * tn
    # With fewer rows than the tile (M < BM), A's loads fill only the M
    # valid rows of its tile (tmac.tma.load into a subview of its leading
    # rows) instead of having TMA write zeros to the rest: the rows past M
    # keep stale data, which reaches only rows of D that are never stored.
    arows = bm if full_a else min(m, bm)
    group = max(1, min(group, tm))
    threads = 256 if two_wg else 128
    ha = bm // 2 if two_wg else bm  # rows of A per warpgroup
    T, O = MLIR_TYPE[dtype], out
    TB = MLIR_TYPE[dtype_b or dtype]  # B's element type (fp8 may mix e4m3 and e5m2)
    # fp8 wgmma reads B K-major only: B is given as N x K (B^T row-major,
    # torch._scaled_mm's column-major B).
    A, D = f"memref<{m}x{k}x{T}>", f"memref<{m}x{n}x{O}>"
    B = f"memref<{n}x{k}x{TB}>" if fp8 else f"memref<{k}x{n}x{TB}>"
    persistent = design in ("persistent", "coop")
    # The persistent coop design's work units with split-K: part p of tile
    # t is unit p*tiles + t (a block's units are a grid apart, the parts of
    # a tile too, so they run at the same time on different SMs).
    units = tiles * split
    nblocks = min(grid, units) if persistent else units
    if persistent and cluster > 1 and units % nblocks:
        # Multicast needs every block of a cluster to run the tile loop
        # the same number of times: the most blocks, whole clusters, that
        # divide the tiles.
        nblocks = max((g for g in range(cluster, nblocks + 1, cluster) if units % g == 0), default=nblocks)
    if streamk:
        # Stream-K: the tiles x K steps iterations split evenly over the
        # blocks; block b takes [b*I/G, (b+1)*I/G), a tile's K steps may be
        # shared by several blocks (at most skc), whose partial tiles the
        # last of them adds.
        # (At most one block per iteration, as the persistent designs take
        # at most one per tile.)
        iters = tiles * ks
        if grid < 1:
            raise Refuse(f"stream-K over {grid} blocks: at least 1")
        grid = nblocks = min(grid, iters)
        skc = (ks - 1) // (iters // grid) + 2
    if cluster > 1 and nblocks % cluster:
        raise Refuse(f"{nblocks} blocks are not whole clusters of {cluster}")

    L = []
    w = L.append
    what = f"A({T}) * B({TB})" + ("^T" if fp8 else "")
    if scale != "none":
        what = f"{what} * sa * sb ({'per-tensor' if scale == 'tensor' else 'row-wise: sa per row, sb per column'} f32 scales)"
    w(f"// Generated by bench/gpu/gen_gemm.py: D({O}) = {what}, M={m} N={n} K={k},")
    w(f"// design {design}, {bm}x{bn}x{bk} tiles{' (edge tiles: TMA zero fill, stores inside D only)' if edge else ''}, {'persistent over ' + str(nblocks) + ' blocks' if persistent else ('stream-K over ' + str(nblocks) + ' blocks' if streamk else str(tiles) + ' blocks')},")
    w(f"// grouped tile order ({group} rows of tiles at a time), {stages} stages, {epilogue} epilogue"
      + (f", clusters of {cluster} sharing {multicast.upper()}'s tile (multicast)" if cluster > 1 and multicast != "none" else "")
      + (f", clusters of {cluster} (no multicast)" if cluster > 1 and multicast == "none" else "")
      + (f"; D = {activation}(A * B + bias), in registers" if activation != "none" else "")
      + (f"; split-K: {split} blocks per tile, each over K/{split}, added with atomics into "
         + ("D (zeroed first)" if out == "f32" else "an f32 workspace (zeroed first) that a second kernel rounds into D") if split > 1 and not fixup else "")
      + (f"; split-K: {split} blocks per tile, each over K/{split}, each storing its partial tile to an f32 "
         "workspace, the last of a tile's blocks to finish (a counter per tile) adding them into D" if fixup else "")
      + (f"; stream-K: the {iters} tile x K-step iterations split evenly over the blocks, a tile's blocks "
         "storing their partial tiles to an f32 workspace and the last to finish adding them into D" if streamk else "")
      + ".")
    w(f"!atile = memref<{bm}x{bk}x{T}, {WG}>")
    if arows < bm:
        w(f"!arows = memref<{arows}x{bk}x{T}, strided<[{bk}, 1]>, {WG}>")
    mca, mcb = cluster > 1 and multicast == "a", cluster > 1 and multicast == "b"
    if mca:
        # A's tile multicast as cluster boxes of BM/cluster rows, one issued
        # by each block of the pair.
        arows_box = bm // cluster
    else:
        arows_box = arows
    abox = bk > kbox or arows < bm or mca
    if abox:
        w(f"!abox = memref<{arows_box}x{kbox}x{T}, {WG}>")
    if two_wg:
        w(f"!ahalf = memref<{ha}x{bk}x{T}, strided<[{bk}, 1], offset: ?>, {WG}>")
        w(f"!ahalfd = memref<{ha}x{bk}x{T}, {WG}>")
    if fp8:
        # B's tile is stored as BN rows of BK (K-major), one box; wgmma's
        # descriptor gives its logical shape, BK x BN.
        w(f"!bfull = memref<{bn}x{bk}x{TB}, {WG}>")
        w(f"!bop = memref<{bk}x{bn}x{TB}, {WG}>")
        # With clusters, B's tile is multicast box by box: two boxes of
        # BN/2 rows, one issued by each block of the pair.
        brows = bn // cluster if mcb else bn
        if bk > kbox or mcb:
            w(f"!bbox = memref<{brows}x{kbox}x{TB}, {WG}>")
    else:
        w(f"!btile = memref<{bk}x{min(bn, 64)}x{TB}, {WG}>")
        w(f"!bfull = memref<{bk}x{bn}x{TB}, {WG}>")
    w(f"!adesc = !nvgpu.tensormap.descriptor<tensor = !{'abox' if abox else 'atile'}, swizzle = {aswizzle}, l2promo = {promo}, oob = zero, interleave = none>")
    bsw = aswizzle if fp8 else ("swizzle_64b" if narrow_b else "swizzle_128b")
    bt = ("bbox" if bk > kbox or mcb else "bfull") if fp8 else "btile"
    w(f"!bdesc = !nvgpu.tensormap.descriptor<tensor = !{bt}, swizzle = {bsw}, l2promo = {promo}, oob = zero, interleave = none>")
    w(f"!acc = !nvgpu.warpgroup.accumulator<fragmented = vector<{ha}x{bn}xf32>>")
    if epilogue == "smem":
        # Rows padded by 4 f32 (a row of BN + 4 words starts 4 banks
        # further): a warp's pair stores of 8 rows x 8 words then cover
        # every bank twice, the ideal, where rows of a multiple of 32
        # words put them all in 8 banks (8-way conflicts).
        w(f"!dpad = memref<{bm}x{bn + 4}xf32, {WG}>")
        w(f"!dtile = memref<{bm}x{bn}xf32, strided<[{bn + 4}, 1]>, {WG}>")
    if epilogue == "tma":
        # Boxes of the widest swizzle span whose columns divide BN: the
        # accumulator's pair stores then spread over all banks.
        span = next(s for s in (128, 64, 32) if bn % (s // esize[out]) == 0)
        dw = bn if store_layout != "parts" else span // esize[out]  # the shared tile's columns
        w(f"!dtile = memref<{bm}x{dw}x{O}, {WG}>")
        w(f"!dhalf = memref<{ha}x{dw}x{O}, strided<[{dw}, 1], offset: ?>, {WG}>")
        if store_layout in ("swizzled", "parts"):
            w(f"!dbox = memref<{bm}x{span // esize[out]}x{O}, {WG}>")
            w(f"!ddesc = !nvgpu.tensormap.descriptor<tensor = !dbox, swizzle = swizzle_{span}b, l2promo = none, oob = zero, interleave = none>")
        else:
            w(f"!ddesc = !nvgpu.tensormap.descriptor<tensor = !dtile, swizzle = none, l2promo = none, oob = zero, interleave = none>")
    w(f"!dsub = memref<{ha}x{bn}x{O}, strided<[{n}, 1], offset: ?>>")
    w("")
    V = f"memref<{n}x{T}>"
    bias = f", %bias: {V}" if activation != "none" else ""
    SA, SB = ("memref<1xf32>", "memref<1xf32>") if scale == "tensor" else (f"memref<{m}xf32>", f"memref<{n}xf32>")
    if scale != "none":
        bias = f", %sa: {SA}, %sb: {SB}"
    w(f"func.func @gemm(%a: {A}, %b: {B}{bias}, %d: {D} {{tmac.output}}) attributes "
      f"{{tmac.flops = {2 * m * n * k} : i64, tmac.ref_sample = 8 : i64}} {{")
    w("  %h1 = arith.constant 1 : index")
    w("  %h64 = arith.constant 64 : index")
    if bk != 64:
        w(f"  %hbk = arith.constant {bk} : index")
    hbk = "%h64" if bk == 64 else "%hbk"
    w(f"  %hbm = arith.constant {bm} : index")
    w(f"  %hblocks = arith.constant {nblocks} : index")
    w(f"  %hthreads = arith.constant {threads} : index")
    ws, W = "%d", D  # where split-K's partial tiles are added
    if fixup or streamk:
        # The f32 partial tiles (one per block of split-K, up to skc per
        # tile of stream-K), and a counter per tile of the blocks done with
        # it (zeroed here; the last block zeroes it again).
        ws, W = "%ws", f"memref<{tiles * (skc if streamk else split) * bm}x{bn}xf32>"
        w(f"  %ws = gpu.alloc() : {W}")
        w(f"  %cnt = gpu.alloc() : memref<{tiles}xi32>")
        w("  %czero = arith.constant 0 : i32")
        w(f"  gpu.memset %cnt, %czero : memref<{tiles}xi32>, i32")
    elif split > 1:
        # The blocks of a tile add their partial products into D, or into
        # an f32 workspace that a second kernel rounds into D.
        if O != "f32":
            ws, W = "%ws", f"memref<{m}x{n}xf32>"
            w(f"  %ws = gpu.alloc() : {W}")
        w("  %dzero = arith.constant 0.000000e+00 : f32")
        w(f"  gpu.memset {ws}, %dzero : {W}, f32")
    a_src, a_type, b_src, b_type = "%a", A, "%b", B
    for name, padded, rows, cols in (("a", pad_a, m, a_cols), ("b", pad_b, k if not fp8 else n, b_cols)):
        if not padded:
            continue
        pc = -(-cols * ein // 16) * 16 // ein  # the row length rounded up to 16 bytes
        E = T if name == "a" else TB
        P = f"memref<{rows}x{pc}x{E}>"
        src = A if name == "a" else B
        w(f"  // {name.upper()}'s rows ({cols} x {ein} bytes) copied into rows of {pc}, zero-padded, for TMA.")
        w(f"  %{name}pad = gpu.alloc() : {P}")
        w(f"  %{name}blocks = arith.constant {-(-rows * pc // 256)} : index")
        if name == "a" or not pad_a:
            w("  %pad256 = arith.constant 256 : index")
        w(f"  gpu.launch blocks(%{name}bx, %{name}by, %{name}bz) in (%{name}gx = %{name}blocks, %{name}gy = %h1, %{name}gz = %h1)")
        w(f"             threads(%{name}tx, %{name}ty, %{name}tz) in (%{name}sx = %pad256, %{name}sy = %h1, %{name}sz = %h1) {{")
        w("    %p256 = arith.constant 256 : index")
        w(f"    %pcols = arith.constant {cols} : index")
        w(f"    %ppitch = arith.constant {pc} : index")
        w(f"    %pall = arith.constant {rows * pc} : index")
        w(f"    %pb = arith.muli %{name}bx, %p256 : index")
        w(f"    %pi = arith.addi %pb, %{name}tx : index")
        w("    %pin = arith.cmpi ult, %pi, %pall : index")
        w("    scf.if %pin {")
        w("      %pr = arith.divui %pi, %ppitch : index")
        w("      %pcol = arith.remui %pi, %ppitch : index")
        w("      %pinside = arith.cmpi ult, %pcol, %pcols : index")
        w(f"      %pv = scf.if %pinside -> ({E}) {{")
        w(f"        %pld = memref.load %{name}[%pr, %pcol] : {src}")
        w(f"        scf.yield %pld : {E}")
        w("      } else {")
        w(f"        %pzero = arith.constant 0.000000e+00 : {E}")
        w(f"        scf.yield %pzero : {E}")
        w("      }")
        w(f"      memref.store %pv, %{name}pad[%pr, %pcol] : {P}")
        w("    }")
        w("    gpu.terminator")
        w("  }")
        if name == "a":
            a_src, a_type = "%apad", P
        else:
            b_src, b_type = "%bpad", P
    w(f"  %a_any = memref.cast {a_src} : {a_type} to memref<*x{T}>")
    hkbox = hbk
    if bk > kbox:
        w(f"  %hkbox = arith.constant {kbox} : index")
        hkbox = "%hkbox"
    hrows = "%hbm"
    if arows_box < bm:
        w(f"  %harows = arith.constant {arows_box} : index")
        hrows = "%harows"
    w(f"  %amap = nvgpu.tma.create.descriptor %a_any box[{hrows}, {hkbox}] : memref<*x{T}> -> !adesc")
    w(f"  %b_any = memref.cast {b_src} : {b_type} to memref<*x{TB}>")
    if fp8:
        w(f"  %hbn = arith.constant {bn} : index")
    if fp8 and mcb:
        w(f"  %hbrows = arith.constant {bn // cluster} : index")
    if narrow_b:
        w("  %hbcols = arith.constant 32 : index")
    bbox = (f"%hbrows, {hkbox}" if mcb else f"%hbn, {hkbox}") if fp8 else f"{hbk}, {'%hbcols' if narrow_b else '%h64'}"
    w(f"  %bmap = nvgpu.tma.create.descriptor %b_any box[{bbox}] : memref<*x{TB}> -> !bdesc")
    if epilogue == "tma":
        if not fp8:
            w(f"  %hbn = arith.constant {bn} : index")
        w(f"  %d_any = memref.cast %d : {D} to memref<*x{O}>")
        dbox = "%hbn"
        if store_layout in ("swizzled", "parts"):
            dbox = "%hdw"
            w(f"  %hdw = arith.constant {span // esize[out]} : index")
        w(f"  %dmap = nvgpu.tma.create.descriptor %d_any box[%hbm, {dbox}] : memref<*x{O}> -> !ddesc")
    if cluster > 1:
        w(f"  %hcluster = arith.constant {cluster} : index")
        w("  gpu.launch clusters(%lcx, %lcy, %lcz) in (%lscx = %hcluster, %lscy = %h1, %lscz = %h1)")
        w("             blocks(%lbx, %lby, %lbz) in (%lgx = %hblocks, %lgy = %h1, %lgz = %h1)")
    else:
        w("  gpu.launch blocks(%lbx, %lby, %lbz) in (%lgx = %hblocks, %lgy = %h1, %lgz = %h1)")
    w("             threads(%ltx, %lty, %ltz) in (%lsx = %hthreads, %lsy = %h1, %lsz = %h1) {")
    w("    %c0 = arith.constant 0 : index")
    w("    %c1 = arith.constant 1 : index")
    w("    %c64 = arith.constant 64 : index")
    if bk != 64:
        w(f"    %cbk = arith.constant {bk} : index")
    cbk = "%c64" if bk == 64 else "%cbk"
    w(f"    %cbm = arith.constant {bm} : index")
    w(f"    %cbn = arith.constant {bn} : index")
    w(f"    %cwidth = arith.constant {group * tn} : index")
    w(f"    %cgroup = arith.constant {group} : index")
    w(f"    %ctm = arith.constant {tm} : index")
    if edge:
        w(f"    %cm = arith.constant {m} : index")
        w(f"    %cn = arith.constant {n} : index")
    w(f"    %ksteps = arith.constant {ks} : index")
    w("    %bid = gpu.block_id  x")
    if two_wg:
        w("    %tid = gpu.thread_id  x")
        w("    %c128 = arith.constant 128 : index")
        w("    %wg = arith.divui %tid, %c128 : index")
        w(f"    %chalf = arith.constant {ha} : index")
        w("    %myrow = arith.muli %wg, %chalf : index")
    w("    %as = memref.alloc() : !atile")
    adst, adt_load = "%as", "!atile"
    if arows < bm:
        w(f"    %asrows = memref.subview %as[0, 0] [{arows}, {bk}] [1, 1] : !atile to !arows")
        adst, adt_load = "%asrows", "!arows"
    if streamk:
        w(f"    %skseen = memref.alloc() : memref<1xi32, {WG}>")
    w("    %bs = memref.alloc() : !bfull")
    if epilogue == "smem":
        w("    %dpad = memref.alloc() : !dpad")
        w(f"    %ds = memref.subview %dpad[0, 0] [{bm}, {bn}] [1, 1] : !dpad to !dtile")
    if epilogue == "tma":
        w("    %ds = memref.alloc() : !dtile")
    if prefetch_maps:
        # Thread 0 brings the tensor maps (kernel parameters) into the TMA
        # unit's descriptor cache before the first load needs them.
        w("    %pftid = gpu.thread_id  x")
        w("    %pf0 = arith.cmpi eq, %pftid, %c0 : index")
        w("    nvgpu.tma.prefetch.descriptor %amap, predicate = %pf0 : !adesc")
        w("    nvgpu.tma.prefetch.descriptor %bmap, predicate = %pf0 : !bdesc")
        if epilogue == "tma":
            w("    nvgpu.tma.prefetch.descriptor %dmap, predicate = %pf0 : !ddesc")
    w("    %acc0 = nvgpu.warpgroup.mma.init.accumulator -> !acc")
    ind = "    "
    tile = "%bid"
    klo, khi = "%c0", "%ksteps"
    if split > 1 and not persistent:
        # Block b: part b mod S of tile b / S, K steps [part*ks/S, (part+1)*ks/S).
        w(f"    %csplit = arith.constant {split} : index")
        w(f"    %kper = arith.constant {ks // split} : index")
        w("    %tb = arith.divui %bid, %csplit : index")
        w("    %part = arith.remui %bid, %csplit : index")
        w("    %klo = arith.muli %part, %kper : index")
        w("    %khi = arith.addi %klo, %kper : index")
        tile, klo, khi = "%tb", "%klo", "%khi"
    if fixup and persistent:
        w(f"    %fseen = memref.alloc() : memref<1xi32, {WG}>")
    if streamk:
        w(f"    %citers = arith.constant {iters} : index")
        w(f"    %cgrid = arith.constant {grid} : index")
        w("    %skb1 = arith.addi %bid, %c1 : index")
        w("    %skl = arith.muli %bid, %citers : index")
        w("    %sklo = arith.divui %skl, %cgrid : index")
        w("    %skh = arith.muli %skb1, %citers : index")
        w("    %skhi = arith.divui %skh, %cgrid : index")
        w("    %res = scf.for %it = %sklo to %skhi step %c1 iter_args(%acc = %acc0) -> (!acc) {")
        w("      %tile = arith.divui %it, %ksteps : index")
        w("      %k = arith.remui %it, %ksteps : index")
        ind, tile = "      ", "%tile"
    if persistent:
        w(f"    %ctiles = arith.constant {tiles} : index")
        w(f"    %cgrid = arith.constant {nblocks} : index")
        if split > 1:
            # Unit u: part u / tiles of tile u mod tiles.
            w(f"    %cunits = arith.constant {units} : index")
            w(f"    %csplit = arith.constant {split} : index")
            w(f"    %kper = arith.constant {ks // split} : index")
            w("    scf.for %u = %bid to %cunits step %cgrid {")
            w("      %tb = arith.remui %u, %ctiles : index")
            w("      %part = arith.divui %u, %ctiles : index")
            w("      %klo = arith.muli %part, %kper : index")
            ind, tile, klo = "      ", "%tb", "%klo"
        else:
            w("    scf.for %t = %bid to %ctiles step %cgrid {")
            ind, tile = "      ", "%t"
    # Grouped order: group g holds rows [g*G, g*G + rows) of tiles, visited
    # column by column.
    w(f"{ind}%grp = arith.divui {tile}, %cwidth : index")
    w(f"{ind}%first = arith.muli %grp, %cgroup : index")
    w(f"{ind}%left = arith.subi %ctm, %first : index")
    w(f"{ind}%rows = arith.minui %left, %cgroup : index")
    w(f"{ind}%inw = arith.remui {tile}, %cwidth : index")
    w(f"{ind}%inr = arith.remui %inw, %rows : index")
    w(f"{ind}%tr = arith.addi %first, %inr : index")
    w(f"{ind}%tc = arith.divui %inw, %rows : index")
    w(f"{ind}%row0 = arith.muli %tr, %cbm : index")
    w(f"{ind}%col0 = arith.muli %tc, %cbn : index")
    if persistent and split > 1:
        # warp-specialize counts ring positions as tile index x trip count
        # + j: the K loop runs over [0, K/S), shifted to the part's steps.
        w(f"{ind}%res = scf.for %kj = %c0 to %kper step %c1 iter_args(%acc = %acc0) -> (!acc) {{")
        w(f"{ind}  %k = arith.addi %kj, {klo} : index")
    elif not streamk:
        w(f"{ind}%res = scf.for %k = {klo} to {khi} step %c1 iter_args(%acc = %acc0) -> (!acc) {{")
    else:
        ind = "    "  # the body below is indented as a tile loop's
    w(f"{ind}  %kk = arith.muli %k, {cbk} : index")
    mc = " {tmac.multicast}"
    w(f"{ind}  tmac.tma.load %amap[%kk, %row0] to {adst}{mc if mca else ''} : !adesc -> {adt_load}")
    bcoord = "%kk, %col0" if fp8 else "%col0, %kk"
    w(f"{ind}  tmac.tma.load %bmap[{bcoord}] to %bs{mc if mcb else ''} : !bdesc -> !bfull")
    w(f"{ind}  tmac.tma.wait %as, %bs : !atile, !bfull")
    if two_wg:
        w(f"{ind}  %ah = memref.subview %as[%myrow, 0] [{ha}, {bk}] [1, 1] : !atile to !ahalf")
        w(f"{ind}  %da = nvgpu.warpgroup.generate.descriptor %ah, %amap : !ahalf, !adesc -> !nvgpu.warpgroup.descriptor<tensor = !ahalfd>")
        adt = "!nvgpu.warpgroup.descriptor<tensor = !ahalfd>"
    else:
        w(f"{ind}  %da = nvgpu.warpgroup.generate.descriptor %as, %amap : !atile, !adesc -> !nvgpu.warpgroup.descriptor<tensor = !atile>")
        adt = "!nvgpu.warpgroup.descriptor<tensor = !atile>"
    bop = "!bop" if fp8 else "!bfull"
    w(f"{ind}  %db = nvgpu.warpgroup.generate.descriptor %bs, %bmap : !bfull, !bdesc -> !nvgpu.warpgroup.descriptor<tensor = {bop}>")
    tb = "" if fp8 else " {transposeB}"
    w(f"{ind}  %nacc = nvgpu.warpgroup.mma %da, %db, %acc{tb} : {adt}, !nvgpu.warpgroup.descriptor<tensor = {bop}>, !acc -> !acc")
    res = "%res"
    if streamk:
        # At the end of the block's part of a tile: the whole tile is stored
        # as the tiles design does it; a part goes through the workspace.
        streamk_segment(w, grid, iters, ks)
        ind, res = "          ", "%nacc"
    else:
        w(f"{ind}  scf.yield %nacc : !acc")
        w(f"{ind}}} {{tmac.stages = {stages} : i64}}")
    if activation != "none":
        # bias[col0 + c] in the accumulator's column layout, then
        # GELU(acc + bias) per element, in registers.
        w(f"{ind}%bcols = tmac.warpgroup.acc.load_cols %bias[%col0] : {V} -> !tmac.cols<{bn}xf32>")
        w(f"{ind}%act = tmac.warpgroup.acc.map %res cols(%bcols) : !acc cols !tmac.cols<{bn}xf32> -> !acc {{")
        w(f"{ind}^bb0(%x: f32, %bv: f32, %row: index, %col: index):")
        w(f"{ind}  %y = arith.addf %x, %bv : f32")
        for line in KERNEL_GELU.get(activation) or GELU[activation]:
            w(f"{ind}  {line}")
        w(f"{ind}  tmac.yield %g : f32")
        w(f"{ind}}}")
        res = "%act"
    def scale_acc(ind, res, p=""):
        """Applies the scales to accumulator res in registers (names
        prefixed with p); returns the scaled accumulator."""
        if scale == "tensor":
            # One factor sa[0] * sb[0] for every element, in registers.
            w(f"{ind}%{p}sa0 = memref.load %sa[%c0] : {SA}")
            w(f"{ind}%{p}sb0 = memref.load %sb[%c0] : {SB}")
            w(f"{ind}%{p}sab = arith.mulf %{p}sa0, %{p}sb0 : f32")
            w(f"{ind}%{p}scaled = tmac.warpgroup.acc.map {res} : !acc -> !acc {{")
            w(f"{ind}^bb0(%{p}x: f32, %{p}row: index, %{p}col: index):")
            w(f"{ind}  %{p}y = arith.mulf %{p}x, %{p}sab : f32")
            w(f"{ind}  tmac.yield %{p}y : f32")
            w(f"{ind}}}")
            return f"%{p}scaled"
        if scale == "row":
            # sa per row of D (its 0.0 beyond M), sb per column, in the
            # accumulator's row and column layouts.
            if two_wg:
                w(f"{ind}%{p}srow0 = arith.addi %row0, %myrow : index")
            w(f"{ind}%{p}srows = tmac.warpgroup.acc.load_rows %sa[{f'%{p}srow0' if two_wg else '%row0'}] : {SA} -> !tmac.rows<{ha}xf32>")
            w(f"{ind}%{p}scols = tmac.warpgroup.acc.load_cols %sb[%col0] : {SB} -> !tmac.cols<{bn}xf32>")
            w(f"{ind}%{p}scaled = tmac.warpgroup.acc.map {res} rows(%{p}srows) cols(%{p}scols) : !acc rows !tmac.rows<{ha}xf32> cols !tmac.cols<{bn}xf32> -> !acc {{")
            w(f"{ind}^bb0(%{p}x: f32, %{p}ra: f32, %{p}cb: f32, %{p}row: index, %{p}col: index):")
            w(f"{ind}  %{p}xa = arith.mulf %{p}x, %{p}ra : f32")
            w(f"{ind}  %{p}y = arith.mulf %{p}xa, %{p}cb : f32")
            w(f"{ind}  tmac.yield %{p}y : f32")
            w(f"{ind}}}")
            return f"%{p}scaled"
        return res

    def store_direct(ind, res, p=""):
        """The direct epilogue: accumulator res stored into D from
        registers (masked at D's edges; names prefixed with p)."""
        r = f"%{p}grow" if two_wg else "%row0"
        if two_wg:
            w(f"{ind}%{p}grow = arith.addi %row0, %myrow : index")
        if edge:
            # The masked form: only the elements inside D.
            w(f"{ind}tmac.warpgroup.mma.store {res}, %d[{r}, %col0] : !acc to {D}")
        else:
            w(f"{ind}%{p}dt = memref.subview %d[{r}, %col0] [{ha}, {bn}] [1, 1] : {D} to !dsub")
            store = "nvgpu.warpgroup.mma.store" if O == "f32" else "tmac.warpgroup.mma.store"
            w(f"{ind}{store} {res}, %{p}dt : !acc to !dsub")

    def finish_reduced(ind, acc, p):
        """The end of a last-block reduction: the summed tile scaled and
        stored as the direct epilogue does it."""
        store_direct(ind, scale_acc(ind, acc, p), p)

    if not fixup:
        res = scale_acc(ind, res)
    if fixup:
        fixup_epilogue(w, ind, res, tiles, split, bm, bn, m % bm != 0, finish_reduced,
                       half=(ha, "%myrow") if two_wg else None, seen_alloc=not persistent)
    elif epilogue == "smem":
        # Accumulator -> shared tile -> D, a row of BN columns at a time.
        # tmac's store writes register pairs (8-byte stores; upstream's
        # nvgpu.warpgroup.mma.store writes single elements, 2-way
        # conflicted on the padded rows).
        w(f"{ind}tmac.warpgroup.mma.store {res}, %ds : !acc to !dtile")
        w(f"{ind}gpu.barrier")
        w(f"{ind}%tid = gpu.thread_id  x")
        w(f"{ind}%c128 = arith.constant 128 : index")
        w(f"{ind}scf.for %j = %tid to %cbn step %c128 {{")
        w(f"{ind}  %col = arith.addi %col0, %j : index")
        w(f"{ind}  scf.for %i = %c0 to %cbm step %c1 {{")
        w(f"{ind}    %v = memref.load %ds[%i, %j] : !dtile")
        w(f"{ind}    %row = arith.addi %row0, %i : index")
        st = f"%old = memref.atomic_rmw addf %v, {ws}[%row, %col] : (f32, {W}) -> f32" if split > 1 \
            else f"memref.store %v, %d[%row, %col] : {D}"
        if edge:
            # Only the elements inside D.
            inside_d(w, f"{ind}    ", "%row", "%col", "")
            w(f"{ind}      {st}")
            w(f"{ind}    }}")
        else:
            w(f"{ind}    {st}")
        w(f"{ind}  }}")
        w(f"{ind}}}")
    elif epilogue == "tma":
        # Each warpgroup's rows into the shared output tile, then one TMA
        # store of the tile; warp-specialize rotates the tile
        # (tmac.store_stages) so the store overlaps the next tile's K loop.
        r = "%myrow" if two_wg else "%c0"
        if store_layout == "parts":
            # A box of columns at a time through a tile of one box
            # (tmac.warpgroup.mma.store's columns): tma-pipeline rotates
            # the parts over the tile loop's store slots, each part's
            # writes overlapping the previous part's TMA store, in a
            # fraction of the shared memory of a whole tile.
            for i in range(bn // dw):
                col = "%col0"
                if i:
                    w(f"{ind}%dpc{i} = arith.constant {i * dw} : index")
                    w(f"{ind}%dcol{i} = arith.addi %col0, %dpc{i} : index")
                    col = f"%dcol{i}"
                w(f"{ind}%dh{i} = memref.subview %ds[{r}, 0] [{ha}, {dw}] [1, 1] : !dtile to !dhalf")
                w(f"{ind}tmac.warpgroup.mma.store {res}, %dh{i} {{columns = array<i64: {i * dw}, {dw}>, tmaLayout = !ddesc}} : !acc to !dhalf")
                w(f"{ind}tmac.tma.store %ds to %dmap[{col}, %row0] : !dtile -> !ddesc")
        else:
            w(f"{ind}%dh = memref.subview %ds[{r}, 0] [{ha}, {bn}] [1, 1] : !dtile to !dhalf")
        if store_layout == "parts":
            pass
        elif store_layout == "swizzled":
            w(f"{ind}tmac.warpgroup.mma.store {res}, %dh {{tmaLayout = !ddesc}} : !acc to !dhalf")
        elif O == "f32":
            w(f"{ind}nvgpu.warpgroup.mma.store {res}, %dh : !acc to !dhalf")
        else:
            w(f"{ind}tmac.warpgroup.mma.store {res}, %dh : !acc to !dhalf")
        if store_layout != "parts":
            w(f"{ind}tmac.tma.store %ds to %dmap[%col0, %row0] : !dtile -> !ddesc")
    else:
        store_direct(ind, res)
    if streamk:
        w("        } else {")
        streamk_fixup(w, "          ", tiles, skc, bm, bn, m % bm != 0, finish_reduced)
        w("        }")
        w("        %skzero = nvgpu.warpgroup.mma.init.accumulator -> !acc")
        w("        scf.yield %skzero : !acc")
        w("      } else {")
        w("        scf.yield %nacc : !acc")
        w("      }")
        w("      scf.yield %skout : !acc")
        w(f"    }} {{tmac.stages = {stages} : i64}}")
    if persistent:
        # A whole tile: one slot (its store overlaps the next tile's K
        # loop); parts: two slots of one part each.
        sst = 2 if store_layout == "parts" else 1
        w("    }" + (f" {{tmac.store_stages = {sst} : i64}}" if epilogue == "tma" else ""))
    w("    gpu.terminator")
    w("  }")
    if fixup or streamk:
        w(f"  gpu.dealloc %ws : {W}")
        w(f"  gpu.dealloc %cnt : memref<{tiles}xi32>")
    elif ws != "%d":
        # The workspace rounded into D, one element a thread.
        w(f"  %hconv = arith.constant {-(-m * n // 256)} : index")
        w("  %h256 = arith.constant 256 : index")
        w("  gpu.launch blocks(%qbx, %qby, %qbz) in (%qgx = %hconv, %qgy = %h1, %qgz = %h1)")
        w("             threads(%qtx, %qty, %qtz) in (%qsx = %h256, %qsy = %h1, %qsz = %h1) {")
        w("    %q256 = arith.constant 256 : index")
        w(f"    %qn = arith.constant {n} : index")
        w("    %qb = arith.muli %qbx, %q256 : index")
        w("    %qi = arith.addi %qb, %qtx : index")
        w(f"    %qall = arith.constant {m * n} : index")
        w("    %qin = arith.cmpi ult, %qi, %qall : index")
        w("    scf.if %qin {")
        w("      %qr = arith.divui %qi, %qn : index")
        w("      %qc = arith.remui %qi, %qn : index")
        w(f"      %qv = memref.load %ws[%qr, %qc] : {W}")
        w(f"      %qo = arith.truncf %qv : f32 to {O}")
        w(f"      memref.store %qo, %d[%qr, %qc] : {D}")
        w("    }")
        w("    gpu.terminator")
        w("  }")
        w(f"  gpu.dealloc %ws : {W}")
    for name, padded, rows, cols in (("a", pad_a, m, a_cols), ("b", pad_b, k if not fp8 else n, b_cols)):
        if padded:
            pc = -(-cols * ein // 16) * 16 // ein
            w(f"  gpu.dealloc %{name}pad : memref<{rows}x{pc}x{T if name == 'a' else TB}>")
    w("  return")
    w("}")
    w("")
    w("// The reference: the same product in plain scalar IR, run on the CPU by `tmac run`.")
    w(f"func.func @reference(%a: {A}, %b: {B}{bias}, %d: {D}) {{")
    w("  %r0 = arith.constant 0 : index")
    w("  %r1 = arith.constant 1 : index")
    w(f"  %rm = arith.constant {m} : index")
    w(f"  %rn = arith.constant {n} : index")
    w(f"  %rk = arith.constant {k} : index")
    w("  %zero = arith.constant 0.000000e+00 : f32")
    w("  scf.for %i = %r0 to %rm step %r1 {")
    w("    scf.for %j = %r0 to %rn step %r1 {")
    w("      %s = scf.for %l = %r0 to %rk step %r1 iter_args(%acc = %zero) -> (f32) {")
    w(f"        %x = memref.load %a[%i, %l] : {A}")
    w(f"        %y = memref.load %b[{'%j, %l' if fp8 else '%l, %j'}] : {B}")
    w(f"        %xf = arith.extf %x : {T} to f32")
    w(f"        %yf = arith.extf %y : {TB} to f32")
    w("        %p = arith.mulf %xf, %yf : f32")
    w("        %acc1 = arith.addf %acc, %p : f32")
    w("        scf.yield %acc1 : f32")
    w("      }")
    if activation != "none":
        w(f"      %b16 = memref.load %bias[%j] : {V}")
        w(f"      %bv = arith.extf %b16 : {T} to f32")
        w("      %y = arith.addf %s, %bv : f32")
        for line in GELU[REFERENCE_GELU.get(activation, activation)]:
            w(f"      {line}")
    s_out = "%g" if activation != "none" else "%s"
    if scale != "none":
        ia, ib = ("%r0", "%r0") if scale == "tensor" else ("%i", "%j")
        w(f"      %rsa = memref.load %sa[{ia}] : {SA}")
        w(f"      %rsb = memref.load %sb[{ib}] : {SB}")
        w("      %rsx = arith.mulf %s, %rsa : f32")
        w("      %rsy = arith.mulf %rsx, %rsb : f32")
        s_out = "%rsy"
    if O == "f32":
        w(f"      memref.store {s_out}, %d[%i, %j] : {D}")
    else:
        w(f"      %s16 = arith.truncf {s_out} : f32 to {O}")
        w(f"      memref.store %s16, %d[%i, %j] : {D}")
    w("    }")
    w("  }")
    w("  return")
    w("}")
    return "\n".join(L) + "\n"


def inside_d(w, ind, row, col, prefix):
    """Opens `scf.if` on row < M and col < N (%cm, %cn): an edge tile's
    element inside D. The caller writes the body and closes it."""
    w(f"{ind}%{prefix}rin = arith.cmpi ult, {row}, %cm : index")
    w(f"{ind}%{prefix}cin = arith.cmpi ult, {col}, %cn : index")
    w(f"{ind}%{prefix}in = arith.andi %{prefix}rin, %{prefix}cin : i1")
    w(f"{ind}scf.if %{prefix}in {{")


def valid_rows(w, ind, p):
    """Emits %{p}vrows, the rows of the tile at %row0 inside D,
    min(bm, M - %row0)."""
    w(f"{ind}%{p}left = arith.subi %cm, %row0 : index")
    w(f"{ind}%{p}vrows = arith.minui %{p}left, %cbm : index")
    return f"%{p}vrows"


def partial_tile(w, ind, p, row, rows, bm, bn, vrows, half=None):
    """Emits %{p}view, the bm x bn partial tile at row `row` of the f32
    workspace %ws (rows rows), and returns its type and the indices of the
    masked form ("" for the whole tile). With vrows (M not a multiple of
    bm: the tile's rows inside D, valid_rows) the view holds only those, so
    that the rows past M are neither stored nor read back (an M = 16 tile
    of 64 rows moves a quarter of the bytes). With half = (rows, offset)
    (two warpgroups on a tile) the view is the warpgroup's rows of it."""
    P = f"memref<{rows}x{bn}xf32>"
    if half is not None:
        assert vrows is None, "two-warpgroup partial tiles are whole"
        bm, off = half
        w(f"{ind}%{p}hrow = arith.addi {row}, {off} : index")
        row = f"%{p}hrow"
    if vrows is None:
        S = f"memref<{bm}x{bn}xf32, strided<[{bn}, 1], offset: ?>>"
        w(f"{ind}%{p}view = memref.subview %ws[{row}, 0] [{bm}, {bn}] [1, 1] : {P} to {S}")
        return S, ""
    S = f"memref<?x{bn}xf32, strided<[{bn}, 1], offset: ?>>"
    w(f"{ind}%{p}view = memref.subview %ws[{row}, 0] [{vrows}, {bn}] [1, 1] : {P} to {S}")
    return S, "[%c0, %c0]"


def add_partials(w, ind, p, acc, slot0, count, mine, rows, bm, bn, vrows, half=None):
    """The last block of a tile adds the other blocks' partial tiles to
    its own, acc, in registers: partial q (q < count, q != mine) is the
    bm x bn tile at row (slot0 + q) * bm of the f32 workspace %ws (rows
    rows; its vrows rows inside D only, when given, partial_tile), read with
    tmac.warpgroup.acc.load (each thread its fragment's elements, as pair
    loads) and added with tmac.warpgroup.acc.map. The sum is %{p}sum."""
    w(f"{ind}%{p}sum = scf.for %{p}q = %c0 to {count} step %c1 iter_args(%{p}a = {acc}) -> (!acc) {{")
    w(f"{ind}  %{p}mine = arith.cmpi eq, %{p}q, {mine} : index")
    w(f"{ind}  %{p}next = scf.if %{p}mine -> (!acc) {{")
    w(f"{ind}    scf.yield %{p}a : !acc")
    w(f"{ind}  }} else {{")
    w(f"{ind}    %{p}qslot = arith.addi {slot0}, %{p}q : index")
    w(f"{ind}    %{p}qrow = arith.muli %{p}qslot, %cbm : index")
    S, idx = partial_tile(w, ind + "    ", p + "q", f"%{p}qrow", rows, bm, bn, vrows, half)
    w(f"{ind}    %{p}pv = tmac.warpgroup.acc.load %{p}qview{idx} : {S} -> !acc")
    w(f"{ind}    %{p}add = tmac.warpgroup.acc.map %{p}a, %{p}pv : !acc, !acc -> !acc {{")
    w(f"{ind}    ^bb0(%{p}u: f32, %{p}v: f32, %{p}ur: index, %{p}uc: index):")
    w(f"{ind}      %{p}uv = arith.addf %{p}u, %{p}v : f32")
    w(f"{ind}      tmac.yield %{p}uv : f32")
    w(f"{ind}    }}")
    w(f"{ind}    scf.yield %{p}add : !acc")
    w(f"{ind}  }}")
    w(f"{ind}  scf.yield %{p}next : !acc")
    w(f"{ind}}}")


def fixup_epilogue(w, ind, res, tiles, split, bm, bn, cut, finish, half=None, seen_alloc=True):
    """Split-K's end without a second kernel: each block stores its partial
    tile to its slot of the f32 workspace %ws (slot = tile * split + part,
    %tb and %part), publishes it
    (membar.gl, then an atomic increment of its tile's counter) and the
    last of the tile's blocks (the one that saw split - 1) adds the others'
    partials to its own accumulator in registers (add_partials), finishes
    the tile with finish(ind, acc, prefix) (scales, rounding, the store
    into D) and zeroes the counter for the next launch. No block waits for
    another, so the blocks of a tile need not run at the same time. With
    cut (M not a multiple of bm) the partial tiles hold only the rows
    inside D (valid_rows, computed once for the store and the loads).
    With half = (rows, offset), each of two warpgroups stores and adds its
    rows of the partial tiles (partial_tile); seen_alloc False: %fseen,
    the shared word for the counter's old value, is allocated by the
    caller (before a persistent kernel's tile loop)."""
    rows = tiles * split * bm
    w(f"{ind}%wts = arith.muli %tb, %csplit : index")
    w(f"{ind}%wslot = arith.addi %wts, %part : index")
    w(f"{ind}%wrow = arith.muli %wslot, %cbm : index")
    vrows = valid_rows(w, ind, "w") if cut else None
    S, idx = partial_tile(w, ind, "w", "%wrow", rows, bm, bn, vrows, half)
    w(f"{ind}tmac.warpgroup.mma.store {res}, %wview{idx} : !acc to {S}")
    w(f"{ind}nvvm.memory.barrier <gpu>")
    w(f"{ind}gpu.barrier")
    w(f"{ind}%ftid = gpu.thread_id  x")
    w(f"{ind}%fis0 = arith.cmpi eq, %ftid, %c0 : index")
    w(f"{ind}%fone = arith.constant 1 : i32")
    if seen_alloc:
        w(f"{ind}%fseen = memref.alloc() : memref<1xi32, {WG}>")
    w(f"{ind}scf.if %fis0 {{")
    w(f"{ind}  %fold = memref.atomic_rmw addi %fone, %cnt[%tb] : (i32, memref<{tiles}xi32>) -> i32")
    w(f"{ind}  memref.store %fold, %fseen[%c0] : memref<1xi32, {WG}>")
    w(f"{ind}}}")
    w(f"{ind}gpu.barrier")
    w(f"{ind}%fdone = memref.load %fseen[%c0] : memref<1xi32, {WG}>")
    w(f"{ind}%flastn = arith.constant {split - 1} : i32")
    w(f"{ind}%flast = arith.cmpi eq, %fdone, %flastn : i32")
    w(f"{ind}scf.if %flast {{")
    w(f"{ind}  nvvm.memory.barrier <gpu>")
    w(f"{ind}  %fbase = arith.muli %tb, %csplit : index")
    add_partials(w, ind + "  ", "f", res, "%fbase", "%csplit", "%part", rows, bm, bn, vrows, half)
    finish(ind + "  ", "%fsum", "f")
    w(f"{ind}  scf.if %fis0 {{")
    w(f"{ind}    %fz = arith.constant 0 : i32")
    w(f"{ind}    memref.store %fz, %cnt[%tb] : memref<{tiles}xi32>")
    w(f"{ind}  }}")
    w(f"{ind}}}")


def block_of(w, ind, x, name):
    """Emits %NAME, the stream-K block that owns iteration x: the largest b
    with floor(b*I/G) <= x, that is ((x + 1)*G - 1) / I."""
    w(f"{ind}%{name}1 = arith.addi {x}, %c1 : index")
    w(f"{ind}%{name}g = arith.muli %{name}1, %cgrid : index")
    w(f"{ind}%{name}g1 = arith.subi %{name}g, %c1 : index")
    w(f"{ind}%{name} = arith.divui %{name}g1, %citers : index")


def streamk_segment(w, grid, iters, ks):
    """Stream-K, in the K loop after the iteration's mma: opens `scf.if` on
    the end of the block's part of a tile (the tile's last K step, or the
    block's last iteration) yielding the next accumulator, and within it
    `scf.if` on the block owning the whole tile. The caller writes the
    whole tile's epilogue and closes both (streamk_fixup for the other
    case)."""
    ind = "      "
    w(f"{ind}%skt0 = arith.muli %tile, %ksteps : index")
    w(f"{ind}%skkl = arith.subi %ksteps, %c1 : index")
    w(f"{ind}%sktend = arith.cmpi eq, %k, %skkl : index")
    w(f"{ind}%skhl = arith.subi %skhi, %c1 : index")
    w(f"{ind}%skbend = arith.cmpi eq, %it, %skhl : index")
    w(f"{ind}%skend = arith.ori %sktend, %skbend : i1")
    w(f"{ind}%skout = scf.if %skend -> (!acc) {{")
    # The tile's contributors: the blocks owning its first and last K steps
    # and those between.
    block_of(w, ind + "  ", "%skt0", "skfirst")
    w(f"{ind}  %sktl = arith.addi %skt0, %skkl : index")
    block_of(w, ind + "  ", "%sktl", "sklastb")
    w(f"{ind}  %skwhole = arith.cmpi eq, %skfirst, %sklastb : index")
    w(f"{ind}  scf.if %skwhole {{")


def streamk_fixup(w, ind, tiles, skc, bm, bn, cut, finish):
    """Stream-K's part of a tile shared by several blocks (%skfirst to
    %sklastb): the block stores its partial tile to its slot of the f32
    workspace %ws (the tile's slots are skc from tile*skc), publishes it
    (membar.gl, then an atomic increment of the tile's counter), and the
    last of the tile's blocks adds the others' partials to its own
    accumulator in registers (add_partials), finishes the tile with
    finish(ind, acc, prefix) (scales, rounding, the store into D) and
    zeroes the counter for the next launch. No block waits for another.
    With cut, the partial tiles hold only the rows inside D, as in
    fixup_epilogue."""
    rows = tiles * skc * bm
    w(f"{ind}%skcc = arith.constant {skc} : index")
    w(f"{ind}%skj = arith.subi %bid, %skfirst : index")
    w(f"{ind}%skslot0 = arith.muli %tile, %skcc : index")
    w(f"{ind}%skslot = arith.addi %skslot0, %skj : index")
    w(f"{ind}%skwrow = arith.muli %skslot, %cbm : index")
    vrows = valid_rows(w, ind, "skw") if cut else None
    S, idx = partial_tile(w, ind, "skw", "%skwrow", rows, bm, bn, vrows)
    w(f"{ind}tmac.warpgroup.mma.store %nacc, %skwview{idx} : !acc to {S}")
    w(f"{ind}nvvm.memory.barrier <gpu>")
    w(f"{ind}gpu.barrier")
    w(f"{ind}%sktid = gpu.thread_id  x")
    w(f"{ind}%skis0 = arith.cmpi eq, %sktid, %c0 : index")
    w(f"{ind}%skone = arith.constant 1 : i32")
    w(f"{ind}scf.if %skis0 {{")
    w(f"{ind}  %skold = memref.atomic_rmw addi %skone, %cnt[%tile] : (i32, memref<{tiles}xi32>) -> i32")
    w(f"{ind}  memref.store %skold, %skseen[%c0] : memref<1xi32, {WG}>")
    w(f"{ind}}}")
    w(f"{ind}gpu.barrier")
    w(f"{ind}%skdone = memref.load %skseen[%c0] : memref<1xi32, {WG}>")
    w(f"{ind}%skn0 = arith.subi %sklastb, %skfirst : index")
    w(f"{ind}%skn = arith.addi %skn0, %c1 : index")
    w(f"{ind}%skn32 = arith.index_cast %skn0 : index to i32")
    w(f"{ind}%sklast = arith.cmpi eq, %skdone, %skn32 : i32")
    w(f"{ind}scf.if %sklast {{")
    w(f"{ind}  nvvm.memory.barrier <gpu>")
    add_partials(w, ind + "  ", "sk", "%nacc", "%skslot0", "%skn", "%skj", rows, bm, bn, vrows)
    finish(ind + "  ", "%sksum", "sk")
    w(f"{ind}  scf.if %skis0 {{")
    w(f"{ind}    %skz = arith.constant 0 : i32")
    w(f"{ind}    memref.store %skz, %cnt[%tile] : memref<{tiles}xi32>")
    w(f"{ind}  }}")
    w(f"{ind}}}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--m", type=int, required=True)
    ap.add_argument("--n", type=int, required=True)
    ap.add_argument("--k", type=int, required=True)
    ap.add_argument("--dtype", default="f16")
    ap.add_argument("--out", default="f32")
    ap.add_argument("--design", choices=("tiles", "tiles2", "persistent", "coop"), default="tiles")
    ap.add_argument("--bm", type=int, default=128)
    ap.add_argument("--bn", default="128",
                    help="N tile: fp8 a multiple of 16 up to 256, 16-bit 32 (a 64-byte swizzle), 64, 128, 192 or 256; or wave:LO-HI, the BN "
                         "in LO..HI whose tiles fill the last wave of --sms best (wave_bn)")
    ap.add_argument("--sms", type=int, default=132, help="SMs that --bn wave:LO-HI fills (132: H100 SXM and H200)")
    ap.add_argument("--bk", type=int, default=None,
                    help="K tile: 16-bit inputs 64 (default, 128-byte swizzle) or 32 (A's tile 64-byte swizzled); "
                         "fp8 128 (default) or 64")
    ap.add_argument("--split", type=int, default=1,
                    help="split-K: blocks (coop: work units) per tile (tiles design, smem epilogue; or "
                         "--split-reduce last, tiles and coop designs, direct epilogue)")
    ap.add_argument("--stages", type=int, default=4)
    ap.add_argument("--group", type=int, default=8)
    ap.add_argument("--epilogue", choices=("direct", "smem", "tma"), default="direct")
    ap.add_argument("--grid", type=int, default=132,
                    help="blocks of a persistent design (at most one per tile), or of stream-K")
    ap.add_argument("--cluster", type=int, default=1, help="blocks per cluster (2: B's tile multicast to a pair of tiles)")
    ap.add_argument("--multicast", choices=("a", "b", "none"), default="b",
                    help="the operand a cluster shares: b (vertically adjacent tiles, grouped order) or a (tiles side "
                         "by side in a row; the group height becomes 1), or none (the cluster launch alone)")
    ap.add_argument("--activation", choices=("none", "gelu", "gelu_poly", "gelu_tanh"), default="none",
                    help="fuse a bias (third argument) and GELU into the epilogue")
    ap.add_argument("--scale", choices=("none", "tensor", "row"), default="none",
                    help="f32 scales after the arguments A and B (torch._scaled_mm's): tensor (sa[1], sb[1]) "
                         "or row (sa[M] per row, sb[N] per column), applied in registers")
    ap.add_argument("--l2promo", choices=("none", "64b", "128b", "256b"), default="none",
                    help="L2 promotion of A's and B's TMA loads (the tensor maps' CU_TENSOR_MAP_L2_PROMOTION)")
    ap.add_argument("--dtype-b", default=None, help="B's element type when it differs from A's (fp8: e4m3 or e5m2)")
    ap.add_argument("--split-reduce", choices=("atomic", "last", "streamk"), default="atomic",
                    help="how split-K adds the partial tiles: atomic (atomics into D or an f32 workspace rounded by a "
                         "second kernel; smem epilogue) or last (each block stores its partial tile, the last block of "
                         "the tile adds them into D; direct epilogue); streamk: no --split, --grid blocks share the "
                         "tiles x K steps evenly, a tile's blocks adding their parts as last does")
    ap.add_argument("--pad", action="store_true",
                    help="copy an operand whose rows are not a multiple of 16 bytes into padded rows first "
                         "(else such shapes are refused)")
    ap.add_argument("--full-a", action="store_true",
                    help="load A's whole tile even when M is below its rows (TMA zero-fills the rest; by default "
                         "only the M valid rows are loaded)")
    ap.add_argument("--prefetch-maps", action="store_true",
                    help="thread 0 prefetches the tensor maps (nvgpu.tma.prefetch.descriptor) at the kernel's start "
                         "(not for the ping-pong schedule, which allows no side effects before its loop); measured "
                         "by scripts/gpu-prefetch-maps.sh")
    ap.add_argument("--store-layout", choices=("swizzled", "rows", "parts"), default="swizzled",
                    help="the TMA-store epilogue's shared tile: swizzled (boxes of one swizzle span, written with "
                         "tmac.warpgroup.mma.store's tmaLayout: no bank conflicts), rows (one row-major box; the "
                         "warps' stores conflict 8-way when a row is a multiple of 128 bytes) or parts (a tile of "
                         "one swizzled box, written and stored box by box through two slots: the whole tile's "
                         "shared memory goes to load stages)")
    ap.add_argument("-o", "--output", required=True)
    a = ap.parse_args()
    try:
        note = ""
        if a.bn.startswith("wave:"):
            spec = a.bn
            a.bn, fill = wave_bn(spec, a.m, a.n, a.bm, a.dtype in FP8, a.sms, a.split)
            note = f"// BN {a.bn} from --bn {spec} on {a.sms} SMs (last wave {fill:.0%} full)\n"
        elif a.bn.isdigit():
            a.bn = int(a.bn)
        else:
            raise ValueError("expected a number or wave:LO-HI")
        text = note + gen(a.m, a.n, a.k, a.dtype, a.out, a.design, a.bm, a.bn, a.stages, a.group, a.epilogue, a.grid, a.cluster,
                   a.activation, a.bk, a.split, a.scale, a.l2promo, a.pad, a.split_reduce, a.dtype_b, a.full_a,
                          a.prefetch_maps, a.store_layout, a.multicast)
    except Refuse as e:
        print(f"gen_gemm: {a.m}x{a.n}x{a.k} {a.dtype}->{a.out} {a.design} {a.bm}x{a.bn}: {e}", file=sys.stderr)
        return 3
    except ValueError as e:
        print(f"gen_gemm: --bn {a.bn}: {e}", file=sys.stderr)
        return 3
    with open(a.output, "w") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
