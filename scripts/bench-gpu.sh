#!/usr/bin/env bash
# tmac against its peers on the H200, in one run, on the same inputs
# (issue 7): GEMMs M=N=K in 1024..8192 and skinny M in 64, 128, 256 with
# N=K=4096, f16 and bf16 inputs, f32 accumulate; and the memory-bound
# examples (pipelined add, TMA memcpy).
#
#   scripts/bench-gpu.sh build   # here, where llc is: tmac and the bundles, in build/gpu/bench
#   scripts/bench-gpu.sh run     # on the GPU machine: tmac runs, then the peers; the table last
#   scripts/bench-gpu.sh check   # here: every design of the lists below on the emulator
#
# build: build/tmac; for every GEMM shape and dtype, the candidate
# programs of the designs below written by bench/gpu/gen_gemm.py (grouped
# tile order; the output in the input dtype, and also f32 for the square
# f16 shapes) and compiled by
# `tmac tune build` with each design's stage counts and schedules, into
# build/gpu/bench/tune/NAME/DESIGN (a design that does not fit a shape is
# refused or skipped with the reason; a shape with no variant still gets
# its peers); examples/add_pipelined.tma and examples/memcpy_pipelined.tma
# through tmac tune build over stages and store stages; upstream MLIR 22's chapter-4
# GEMM at the square sizes (scripts/mlir-baseline.sh into
# build/gpu/bench/mlir). build/gpu/bench/cases.txt lists what `run` does.
# Carry build/tmac and build/gpu/bench.tgz (the folder, compressed; run
# unpacks it when it is newer) to the GPU machine.
#
# run: for each case, one `tmac tune run` over its designs' variants
# (each checked against @reference, sampled to BENCH_REF_SAMPLE=2 rows,
# then timed with BENCH_TUNE_REPS_TMAC runs) and the fastest passing one is
# the case's tmac; then for it `tmac run
# BUNDLE --bench --warmup W --reps R --dump-dir DUMPS/NAME` (the check
# again, the CUDA-event timings — one launch at a time, and queued behind a
# GPU spin as the peers are timed — and the inputs and output as .npy
# files); then bench/gpu/peers.py on the dumps (and the specs of the
# shapes without a tmac result): the same inputs for cuBLAS (torch), the
# two Triton GEMMs, upstream MLIR's kernel (square f16 shapes), torch.add /
# d2d copy and the Triton add and copy, every output (tmac's too) checked
# against a torch reference before timing. Writes
# build/gpu/bench/results.{json,md}, docs/bench-gemm.svg
# (bench/gpu/plot.py), and copies them, with the logs (bench-logs.tar.gz),
# to $OUT when set. Exit status 1 if anything failed, 3 without a GPU.
#
# Environment: BENCH_WARMUP (10), BENCH_REPS (100), BENCH_TUNE_REPS (10,
# per Triton configuration), BENCH_TUNE_REPS_TMAC (20, per tmac variant),
# TUNE_TIMEOUT (300 s per design in the case's tune run),
# BENCH_REF_SAMPLE (2), BENCH_FINAL_CHECK (1: check the tuned GEMMs' final
# runs against @reference again; default 0: tune run checked the same
# bundle on the same inputs), BENCH_TMAC_FLAGS (extra `tmac run` flags),
# BENCH_PEERS_FLAGS (extra peers.py flags, e.g. --no-triton), BENCH_ONLY (an
# extended regex: only the cases whose name matches; at build time too),
# BENCH_DESIGNS (an extended regex: build and check only the designs whose
# name matches, for a trial of a few), BENCH_CASES (a case
# list to run instead of cases.txt: its lines, or "pick NAME SPEC BUNDLE"
# to time one variant chosen beforehand without tuning), BENCH_STEPS ("tmac
# peers": either step alone to split the work over two commands), EXAMPLE_TIMEOUT (300 s per tmac run),
# PEERS_TIMEOUT (1800 s), BENCH_DUMPS (where the dumps go, default
# build/gpu/bench/dumps; a folder outside the carried ones survives a
# second call on the same machine that carries build/gpu/bench again).
#
# BENCH_SET picks the cases (build and run must be given the same; each set
# has its own folder, build/gpu/bench-SET, default build/gpu/bench):
#   default  the cases above (issue 7's table)
#   fp8      issue 20's scaled fp8 GEMMs: e4m3 -> bf16 with per-tensor and
#            row-wise scales, M in 1 16 64 128 256 1024 4096, N = K = 4096
#            (seed 002's shapes), peers torch._scaled_mm and seed 002's
#            Triton kernel (bench/gpu/triton_fp8.py)
#   fp8llm   the same for the LLM shapes (row-wise scales)
#   llm      issue 20's LLM shapes in bf16: M in 16 64 128 256 1024 4096,
#            (N, K) in (4096, 4096) (14336, 4096) (4096, 14336) (6144, 1536)
#   breadth  issue 20's square 512..8192 and edge shapes in bf16, f16 and
#            f16 -> f32, and the memory-bound pair
set -u -o pipefail
cd "$(dirname "$0")/.."
mode=${1:-}
set_name=${BENCH_SET:-default}
dir=build/gpu/bench
[ "$set_name" = default ] || dir=build/gpu/bench-$set_name
tmac=${TMAC:-build/tmac}
square="1024 2048 4096 8192"
skinny_m="64 128 256"
skinny_nk=4096
dtypes="f16 bf16"
# Shapes that are not multiples of the tiles (MxNxK; edge tiles: TMA zero
# fill and clipped stores), tuned with the designs up to 2048.
edge="1000x1000x1024"
# Memory-bound programs, tuned over stages and store stages
# (name|program|stages|store stages, none for the TMA copy, which stores
# from its load ring).
mem_cases=(
	"mem_add_pipelined|examples/add_pipelined.tma|3,4,6|1,2"
	"mem_memcpy_pipelined|examples/memcpy_pipelined.tma|3,4,6|"
)
# The kernel designs tuned per GEMM shape (name|gen_gemm.py flags|stages|
# tune schedules); a design that does not fit a shape is refused by the
# generator or skipped by tune build with the reason.
# The TMA-store epilogue writes its shared tile in swizzled boxes (gen_gemm
# --store-layout swizzled, tmac.warpgroup.mma.store's tmaLayout); the
# "rows" twins keep the row-major tile whose pair stores conflict 8-way on
# banks, for the A/B of the two layouts in one tuning run.
tma_rows_designs=(
	"pp128tmarows|--design persistent --bm 128 --bn 128 --epilogue tma --store-layout rows|3,4|pingpong"
	"coop256tmarows|--design coop --bm 128 --bn 256 --epilogue tma --store-layout rows|2,3|ws"
)
# The epilogue in parts (--store-layout parts: a box of columns at a time
# through two one-box slots) leaves the whole tile's shared memory to load
# stages: 4 stages of the cooperative 128x256 kernel fit where the whole
# tile left 2 (f16 -> f32) or 3. On the H100 (2026-11-28,
# scripts/gpu-store-parts.sh) 4096^3 f16 -> f32 took 193 us against 297,
# e4m3 row-wise 99 against 112, bf16 178 against 180; ping-pong lost
# (bf16 219 against 202 us, e4m3 4096 x 14336 x 4096 398 against 362).
# The ping-pong pairs with 4 stages against 5 confound stages with parts:
# ping-pong was slower at 5 stages with the whole tile too (e4m3 1024 x
# 4096 x 4096, 35.8 us at 4, 38.0 at 5); pp128parts tunes it at 4.
tma_parts_designs=(
	"coop256parts|--design coop --bm 128 --bn 256 --epilogue tma --store-layout parts|3,4|ws"
	"coop256c2parts|--design coop --bm 128 --bn 256 --cluster 2 --epilogue tma --store-layout parts|3,4|ws"
	"pp128parts|--design persistent --bm 128 --bn 128 --epilogue tma --store-layout parts|4|pingpong"
)
square_designs=(
	"t128smem|--design tiles --bm 128 --bn 128 --epilogue smem|4|pipelined"
	"pp128|--design persistent --bm 128 --bn 128|4|pingpong"
	"pp128tma|--design persistent --bm 128 --bn 128 --epilogue tma|3,4|pingpong"
	"coop256|--design coop --bm 128 --bn 256|3,4|ws"
	"coop256c2|--design coop --bm 128 --bn 256 --cluster 2|3,4|ws"
	"coop256tma|--design coop --bm 128 --bn 256 --epilogue tma|2,3|ws"
	"coop256c2tma|--design coop --bm 128 --bn 256 --cluster 2 --epilogue tma|2,3|ws"
	"t2x256|--design tiles2 --bm 128 --bn 256|3,4|pipelined"
	"${tma_rows_designs[@]}"
	"${tma_parts_designs[@]}"
)
# Up to 2048: smaller tiles too (1024^2 has 64 tiles of 128x128 for 132 SMs,
# 512^2 16: 64 x 64 tiles and split-K give 512^3 64-256 blocks; cuBLAS took
# 6.3 us there against tmac's 8.4 on 2026-11-27).
# tiles2 (two warpgroups on one 128-row tile, no producer warp) is the design
# of Triton's fastest 2048^3 kernel (27.3 us against tmac's 31.7, 2026-11-27).
# pp128tma (ping-pong, swizzled TMA-store epilogue): the f32 output of
# f16 -> f32 squares doubles the epilogue's bytes (1024^3 0.73x, 2048^3 0.83x
# cuBLAS on 2026-11-27 without it).
small_square_designs=(
	"t128|--design tiles --bm 128 --bn 128|3,4|pipelined"
	"t128smem|--design tiles --bm 128 --bn 128 --epilogue smem|4|pipelined"
	"t128x64|--design tiles --bm 128 --bn 64|4,6|pipelined"
	"t64x128|--design tiles --bm 64 --bn 128|4,6|pipelined"
	"coop256|--design coop --bm 128 --bn 256|4|ws"
	"pp128|--design persistent --bm 128 --bn 128|4|pingpong"
	"t2x256|--design tiles2 --bm 128 --bn 256|3,4|pipelined"
	"t2x128|--design tiles2 --bm 128 --bn 128|4,6|pipelined"
	"t64x64|--design tiles --bm 64 --bn 64|4,6|pipelined"
	"t64x64s2l|--design tiles --bm 64 --bn 64 --split 2 --split-reduce last|4|pipelined"
	"t128x64s2l|--design tiles --bm 128 --bn 64 --split 2 --split-reduce last|4|pipelined"
	"pp128tma|--design persistent --bm 128 --bn 128 --epilogue tma|3,4|pingpong"
	"coop256parts|--design coop --bm 128 --bn 256 --epilogue tma --store-layout parts|3,4|ws"
)
# Skinny M: deep rings (bytes in flight per SM bound these kernels); K
# tiles of 32 halve a slot, so twice the slots fit; split-K puts 2 or 4
# blocks on each of the few tiles, the last block of a tile adding the
# partial tiles (the atomic form, with its memset and second kernel, lost
# on 2026-11-27).
skinny_designs=(
	"t64x64|--design tiles --bm 64 --bn 64|6,9,12|pipelined"
	"t64x128|--design tiles --bm 64 --bn 128|6,9|pipelined"
	"t128x64|--design tiles --bm 128 --bn 64|6,9|pipelined"
	"t64x64k32|--design tiles --bm 64 --bn 64 --bk 32|12,16|pipelined"
	"t64x128s2l|--design tiles --bm 64 --bn 128 --split 2 --split-reduce last|4,6|pipelined"
	"t64x64s4l|--design tiles --bm 64 --bn 64 --split 4 --split-reduce last|6,9|pipelined"
)

# fp8 (K tiles of 128 e4m3 elements, 128 bytes, or 256 as two boxes):
# skinny M streams B through deep rings of 64-row tiles, 32 columns wide
# for twice the blocks, or K tiles of 256 for half the barrier round trips
# (split-K through a workspace lost in the first run: 20.5-24.6 us
# against 18.0 at M = 16; split-K reduced by the last block of each tile,
# one kernel, replaces it);
# large M as the 16-bit kernels, with 2-block clusters.
fp8_skinny_designs=(
	"t64x64|--design tiles --bm 64 --bn 64|6,8|pipelined"
	"t64x64k256|--design tiles --bm 64 --bn 64 --bk 256|3,4|pipelined"
	"t64x64k256p|--design tiles --bm 64 --bn 64 --bk 256 --l2promo 256b|4|pipelined"
	"t64x32|--design tiles --bm 64 --bn 32|8,12|pipelined"
	"t64x32k256|--design tiles --bm 64 --bn 32 --bk 256|4,6|pipelined"
	"t64x64k256s2l|--design tiles --bm 64 --bn 64 --bk 256 --split 2 --split-reduce last|4|pipelined"
	"t64x64s4l|--design tiles --bm 64 --bn 64 --split 4 --split-reduce last|6|pipelined"
)
# "w" designs take the BN (--bn wave:LO-HI, gen_gemm.py's wave_bn) whose
# tiles fill the last wave of the 132 SMs best: fp8 128 and 256 x 14336 x
# 4096 have 112 and 224 tiles of 128 x 128 (the 1.7-wave pp128 won at
# 0.74-0.83x _scaled_mm, 2026-11-27), 128 x 112 tiles give 128 and 256;
# 256 x 6144 x 1536, 96 tiles of 128 x 128, gets 128 of 128 x 96. Where
# the wave choice is an earlier design's tile the build tunes it once, with
# the earlier design's stage counts.
# pp128tma: ping-pong storing D through a shared tile and one TMA store
# (won 9 of the 12 M >= 1024 shapes it was tuned on, 2026-11-27: 4096 x
# 6144 x 1536 fp8 77.2 -> 67.0 us); pp128wtma the same with the
# wave-fitted BN (not yet measured).
fp8_mid_designs=(
	"t64x128|--design tiles --bm 64 --bn 128|6|pipelined"
	"t64x128k256|--design tiles --bm 64 --bn 128 --bk 256|3|pipelined"
	"t64x64k256|--design tiles --bm 64 --bn 64 --bk 256|4|pipelined"
	"t128x64k256|--design tiles --bm 128 --bn 64 --bk 256|3,4|pipelined"
	"pp128|--design persistent --bm 128 --bn 128|4|pingpong"
	"pp128w|--design persistent --bm 128 --bn wave:64-128|4,5|pingpong"
	"t128w|--design tiles --bm 128 --bn wave:64-128|4|pipelined"
	"coop256w|--design coop --bm 128 --bn wave:128-256 --epilogue tma|3|ws"
	"pp128wtma|--design persistent --bm 128 --bn wave:64-128 --epilogue tma|4|pingpong"
)
fp8_large_designs=(
	"pp128|--design persistent --bm 128 --bn 128|4,5|pingpong"
	"pp128c2|--design persistent --bm 128 --bn 128 --cluster 2|4|pingpong"
	"coop256|--design coop --bm 128 --bn 256|4|ws"
	"coop256tma|--design coop --bm 128 --bn 256 --epilogue tma|3|ws"
	"coop256c2tma|--design coop --bm 128 --bn 256 --cluster 2 --epilogue tma|3|ws"
	"pp128w|--design persistent --bm 128 --bn wave:64-128|4,5|pingpong"
	"coop256w|--design coop --bm 128 --bn wave:128-256 --epilogue tma|3|ws"
	"pp128tma|--design persistent --bm 128 --bn 128 --epilogue tma|4|pingpong"
	"pp128wtma|--design persistent --bm 128 --bn wave:64-128 --epilogue tma|4|pingpong"
	"coop256wparts|--design coop --bm 128 --bn wave:128-256 --epilogue tma --store-layout parts|4|ws"
	"${tma_rows_designs[@]}"
	"${tma_parts_designs[@]}"
)
# Stream-K (gen_gemm.py --split-reduce streamk, 132 blocks, one per SM of
# the H100 and H200). Its candidates lost every shape on 2026-11-27
# (1.5-3.3x the unsplit kernel's time) while ptxas serialised their wgmma
# (C7514: the loop reset the accumulator registers to zero at a tile's
# end). With the wgmma-acc-init pass (scale-d = 0 at a tile's first wgmma
# instead) C7514 is gone (213 registers, no spills), but on the fp8
# row-wise LLM shapes they still lost to the ping-pong kernel (H200,
# 2026-11-27, tune medians: 256 x 14336 x 4096 t128sk 60.2 us, t128x64sk
# 56.7, pp128 37.5; 1024 x 14336 x 4096 164 / 184 against 100.5; 256 x 6144
# x 1536 31.9 / 19.6 against 14.1): their one-warpgroup tiles kernel has
# no epilogue overlap. They stay in the bf16 LLM lists below.
streamk_designs=(
	"t128sk|--design tiles --bm 128 --bn 128 --split-reduce streamk --grid 132|4|pipelined"
	"t128x64sk|--design tiles --bm 128 --bn 64 --split-reduce streamk --grid 132|6|pipelined"
)
# The LLM shapes (bf16): fewer candidates per shape than the default set
# (24 shapes), the winners of the earlier runs and split-K (the one-kernel
# s2l won 16 and 64 x 4096 x 14336 on 2026-11-27; s2l on 64-column tiles
# and s4l on 128-column ones give N = 4096 128 blocks, one wave of the
# 132 SMs; t128x64s2l the same with 128-row tiles, which read B once
# where M = 128: the best split so far, t64x64s2l, reads it twice).
# 32-column tiles (gen_gemm.py --bn 32: B in a 64-byte swizzle), cuBLAS's
# 64 x 32 16-stage tile at bf16 64 x 4096 x 4096, lost there (H200,
# 2026-11-28: t64x32 s16 17.6 us, t128x32 s8 19.3 at M = 128, against
# t64x64 split 2's 16.0 and t128x64 split 2's 18.0): not in the lists.
llm_skinny_designs=(
	"t64x64|--design tiles --bm 64 --bn 64|8,12|pipelined"
	"t64x128|--design tiles --bm 64 --bn 128|6,9|pipelined"
	"t128x64|--design tiles --bm 128 --bn 64|8,9|pipelined"
	"t64x128s2l|--design tiles --bm 64 --bn 128 --split 2 --split-reduce last|6|pipelined"
	"t64x64s2l|--design tiles --bm 64 --bn 64 --split 2 --split-reduce last|9,12|pipelined"
	"t64x128s4l|--design tiles --bm 64 --bn 128 --split 4 --split-reduce last|6|pipelined"
	"t64x64s4l|--design tiles --bm 64 --bn 64 --split 4 --split-reduce last|9|pipelined"
	"t128x64s2l|--design tiles --bm 128 --bn 64 --split 2 --split-reduce last|9|pipelined"
)
# M = 256: the skinny tiles won 2026-11-27 (t128x64, 0.62-0.88x cuBLAS,
# 256 x 14336 x 4096 the worst: 448 tiles of 128 x 64 are 3.4 waves); 128 x
# 128 and 128 x 256 tiles too (224 and 112 of them there), and split-K
# (its partial tiles added in registers; on 128-row tiles, 256 x 4096 has
# only 64 of 128 x 128 and 128 of 128 x 64).
llm_mid_designs=(
	"t128x64|--design tiles --bm 128 --bn 64|9|pipelined"
	"t64x128|--design tiles --bm 64 --bn 128|9|pipelined"
	"t128|--design tiles --bm 128 --bn 128|4|pipelined"
	"coop256|--design coop --bm 128 --bn 256|4|ws"
	"t64x128s2l|--design tiles --bm 64 --bn 128 --split 2 --split-reduce last|6|pipelined"
	"t128x64s2l|--design tiles --bm 128 --bn 64 --split 2 --split-reduce last|9|pipelined"
	"t128s2l|--design tiles --bm 128 --bn 128 --split 2 --split-reduce last|4|pipelined"
)
# M >= 1024: 128x256 tiles leave the last wave part-empty where the tiles
# are few (1024 x 6144: 192 tiles on 132 SMs, 0.64x cuBLAS on 2026-11-27):
# 128x128 persistent ping-pong and cooperative tiles too.
llm_large_designs=(
	"t128|--design tiles --bm 128 --bn 128|4|pipelined"
	"pp128|--design persistent --bm 128 --bn 128|4,5|pingpong"
	"coop128tma|--design coop --bm 128 --bn 128 --epilogue tma|4|ws"
	"coop256|--design coop --bm 128 --bn 256|4|ws"
	"coop256tma|--design coop --bm 128 --bn 256 --epilogue tma|3|ws"
)
# The wave-fitted tiles (see the fp8 lists): 16-bit BN is 64, 128, 192 or
# 256 (B's tile is N-major, 64-column boxes), so 256 x 6144 x 1536 gets
# 128 tiles of 64 x 192 and 1024 x 6144 x 1536 256 of 128 x 192.
llm_mid_designs+=("${streamk_designs[@]}"
	"t64w|--design tiles --bm 64 --bn wave:64-256|6|pipelined"
	"coop256w|--design coop --bm 128 --bn wave:128-256|4|ws")
llm_large_designs+=("${streamk_designs[@]}"
	"coop256w|--design coop --bm 128 --bn wave:128-256|4|ws"
	"coop256wtma|--design coop --bm 128 --bn wave:128-256 --epilogue tma|3|ws"
	"pp128tma|--design persistent --bm 128 --bn 128 --epilogue tma|4|pingpong"
	"coop256wparts|--design coop --bm 128 --bn wave:128-256 --epilogue tma --store-layout parts|4|ws"
	"${tma_rows_designs[@]}"
	"${tma_parts_designs[@]}")
# Split-K in the persistent cooperative kernel (gen_gemm.py --design coop
# --split S --split-reduce last) lost every M = 128 and 256 shape it was
# tuned on (H200, 2026-11-28: bf16 256 x 4096 x 4096 coop128s2l 23.4 us,
# coop256s2l 36.7, against t128x64's 22.0; fp8 row-wise 256 x 6144 x 1536
# 25.5 against ping-pong's 11.8): it is not in the lists.
# Clusters sharing A (--cluster 2 --multicast a): two blocks on tiles side
# by side in a row of tiles load A's tile once, multicast to both. The
# M = 128 and 256 shapes read A's tile once per column of tiles (256 x
# 4096 x 4096 in 128 x 64 tiles: 64 reads of A's 2 MB, 128 MB from L2
# against B's 64 MB), which the one-warpgroup tiles kernels that won
# there (0.83-0.89x cuBLAS) cannot share.
mca_designs=(
	"p128x64mca|--design persistent --bm 128 --bn 64 --cluster 2 --multicast a|8|pingpong,ws"
	"pp128mca|--design persistent --bm 128 --bn 128 --cluster 2 --multicast a|4|pingpong"
	"coop128mca|--design coop --bm 128 --bn 128 --cluster 2 --multicast a|6|ws"
	# The control: p128x64mca's kernel without the cluster (p128x64mca
	# lost to the non-persistent t128x64 at bf16 256 x 4096 x 4096, 24.3
	# against 22.2 us, though it reads a third less from L2: multicast or
	# the persistent warp-specialised kernel?).
	"p128x64|--design persistent --bm 128 --bn 64|8|pingpong,ws"
)
# Their stage counts (H200, 2026-11-28): 8 stages of 128 x 64 beat 6 by
# 10-25% in every case, and 9 (216 KB, the most that fit) lost to 8 by
# 7-30%; 7 stages of 128 x 128 lost to 6. At the 1024^3 squares (A read
# 16 times, B 8 times in 128 x 64 tiles) they lost to the tiles kernels
# (bf16 11.5 against 10.0 us): they are not in the small-square list.
# Two consumer warpgroups on a 128 x 64 tile (each its 64 x 64 half, one
# producer warp: 384 threads), 8 stages: the kernel cuBLAS runs at 1024^3
# and bf16 256 x 4096 x 4096 (nvjet_sm90_tst_128x64_64x8_1x2, 384 threads,
# 128 blocks; bench/gpu/vendor_kernels.py, H200, 2026-11-28), where tmac's
# one-warpgroup 128 x 64 kernels (t128x64, p128x64) were the best at
# 0.83-0.87x. It won bf16 256 x 4096 x 4096 by a hair (21.7 against t128x64's
# 22.0 us) and tied at 1024^3. Left out after trials on those shapes (H200,
# 2026-11-28, docs/bench/tune-2026-11-28-s9-h200/c3-*): 6, 7 and 9 stages
# (29.4, 31.9 and 29.0 us at 256 x 4096 x 4096; 24.6 and 24.9 at 7 and 9 once
# the ring arithmetic went to i32), K tiles of 32 at 12 and 16 stages (41.4,
# 31.8), clusters sharing A (23.6) and, equal to it within noise, the
# cluster launch without multicast (21.3; gen_gemm.py --multicast none).
# Sharing B (--cluster 2) is refused: B's 64 columns are one box.
coop64_designs=(
	"coop128x64|--design coop --bm 128 --bn 64|8|ws"
)
small_square_designs+=("${coop64_designs[@]}")
llm_mid_designs+=("${coop64_designs[@]}")
fp8_mid_designs+=("${coop64_designs[@]}")
llm_skinny_designs+=("${mca_designs[@]}")
llm_mid_designs+=("${mca_designs[@]}")
fp8_mid_designs+=("${mca_designs[@]}")
llm_m="16 64 128 256 1024 4096"
llm_nk="4096x4096 14336x4096 4096x14336 6144x1536"

# The cases of the set: "in out M N K scale [B's dtype]" lines (scale: -
# for none; B's dtype when it differs from A's).
cases_of_set() {
	local dt s m nk e sc
	case $set_name in
	default)
		# Every shape with the output in the input dtype (as torch.matmul),
		# and the square f16 shapes with an f32 output too (as upstream
		# MLIR's chapter-4 kernel, which the peers run on those cases).
		for dt in $dtypes; do
			for s in $square; do echo "$dt $dt $s $s $s -"; done
			for m in $skinny_m; do echo "$dt $dt $m $skinny_nk $skinny_nk -"; done
			for e in $edge; do echo "$dt $dt ${e//x/ } -"; done
		done
		for s in $square; do echo "f16 f32 $s $s $s -"; done ;;
	fp8)
		for sc in tensor row; do
			for m in 1 16 64 128 256 1024 4096; do echo "e4m3 bf16 $m 4096 4096 $sc"; done
		done
		# e4m3 A with e5m2 B (gradient-style operands), per-tensor scales.
		for m in 64 4096; do echo "e4m3 bf16 $m 4096 4096 tensor e5m2"; done ;;
	fp8llm)
		for nk in $llm_nk; do
			for m in $llm_m; do echo "e4m3 bf16 $m ${nk//x/ } row"; done
		done ;;
	llm)
		for nk in $llm_nk; do
			for m in $llm_m; do echo "bf16 bf16 $m ${nk//x/ } -"; done
		done ;;
	breadth)
		for dt in bf16 f16; do
			for s in 512 1024 2048 4096 8192; do echo "$dt $dt $s $s $s -"; done
			for e in 1000x1000x1024 4095x4097x4096; do echo "$dt $dt ${e//x/ } -"; done
		done
		for s in 512 1024 2048 4096 8192; do echo "f16 f32 $s $s $s -"; done ;;
	*)
		echo "unknown BENCH_SET $set_name (default, fp8, fp8llm, llm, breadth)" >&2
		return 2 ;;
	esac
}

# same_program TMA DIR...: the name of the first DIR whose source
# ($cdir/src/NAME.tma) is TMA's program, comment lines aside; status 1 if none.
same_program() {
	local f=$1 d
	shift
	for d in "$@"; do
		if cmp -s <(grep -v '^ *//' "$f") <(grep -v '^ *//' "$(dirname "$d")/src/$(basename "$d").tma"); then
			basename "$d"
			return 0
		fi
	done
	return 1
}

build() {
	set -e
	export CGO_ENABLED=0
	make -s build
	rm -rf "$dir" && mkdir -p "$dir/src"
	: >"$dir/cases.txt"
	local cases
	cases=$(cases_of_set)
	while read -r dt out m n k sc dtb; do
		name=gemm_${dt}_${m}x${n}x${k}
		if [ "$sc" != - ]; then name=gemm_${dt}${dtb}${sc}_${m}x${n}x${k}; fi
		if [ "$out" != "$dt" ] && [ "$sc" = - ]; then name=gemm_${dt}${out}_${m}x${n}x${k}; fi
		# BENCH_ONLY at build time builds only its cases (a smaller bundle).
		[[ -n "${BENCH_ONLY:-}" && ! "$name" =~ ${BENCH_ONLY} ]] && continue
		spec=gemm:$dt:${m}x${n}x${k}
		scflags=
		if [ "$sc" != - ]; then
			spec=scaled:$dt${dtb:+-$dtb}:${m}x${n}x${k}:$sc
			scflags="--scale $sc${dtb:+ --dtype-b $dtb}"
		fi
		cdir=$dir/tune/$name
		mkdir -p "$cdir/src"
		designs=("${square_designs[@]}")
		[ "$m" -le 2048 ] && designs=("${small_square_designs[@]}")
		[ "$m" -lt 1024 ] && [ "$n" -ge 4096 ] && designs=("${skinny_designs[@]}")
		if [ "$set_name" = llm ]; then
			designs=("${llm_large_designs[@]}")
			[ "$m" -le 256 ] && designs=("${llm_mid_designs[@]}")
			[ "$m" -le 128 ] && designs=("${llm_skinny_designs[@]}")
		fi
		if [ "$sc" != - ]; then
			designs=("${fp8_large_designs[@]}")
			[ "$m" -le 256 ] && designs=("${fp8_mid_designs[@]}")
			[ "$m" -le 64 ] && designs=("${fp8_skinny_designs[@]}")
		fi
		dirs=()
		for d in "${designs[@]}"; do
			IFS='|' read -r dn gflags st sch <<<"$d"
			# BENCH_DESIGNS (a regex) builds only the designs it matches.
			[[ -n "${BENCH_DESIGNS:-}" && ! "$dn" =~ ${BENCH_DESIGNS} ]] && continue
			# shellcheck disable=SC2086 # gflags is a list of flags
			python3 bench/gpu/gen_gemm.py --m "$m" --n "$n" --k "$k" --dtype "$dt" --out "$out" --pad $gflags $scflags \
				-o "$cdir/src/$dn.tma" 2>>"$cdir/src/refused.txt" || continue
			# A --bn wave:LO-HI design may pick an earlier design's tile:
			# the same program (comments aside) is tuned once.
			if same=$(same_program "$cdir/src/$dn.tma" "${dirs[@]}"); then
				echo "$dn: the program of $same" >>"$cdir/src/refused.txt"
				continue
			fi
			if build/tmac tune build "$cdir/src/$dn.tma" -o "$cdir/$dn" --stages "$st" --schedules "$sch" >"$cdir/src/$dn.build.log" 2>&1; then
				dirs+=("$cdir/$dn")
			fi
		done
		if [ ${#dirs[@]} -eq 0 ]; then
			echo "skip $name: no variant compiled (see $cdir/src)" >&2
			echo "spec $spec:no tmac variant compiled" >>"$dir/cases.txt"
		else
			echo "tune $name $spec $(IFS=,; echo "${dirs[*]}")" >>"$dir/cases.txt"
		fi
	done <<<"$cases"
	# The memory-bound pair in the default and breadth sets.
	[ "$set_name" = default ] || [ "$set_name" = breadth ] || { finish_build; return; }
	[ -z "${BENCH_ONLY:-}" ] || [[ "mem_" =~ ${BENCH_ONLY} ]] || { finish_build; return; }
	for c in "${mem_cases[@]}"; do
		IFS='|' read -r name src st sst <<<"$c"
		sflags=()
		[ -n "$sst" ] && sflags=(--store-stages "$sst")
		if build/tmac tune build "$src" -o "$dir/tune/$name" --stages "$st" "${sflags[@]}" --schedules pipelined \
			>"$dir/src/$name.build.log" 2>&1; then
			echo "tune $name - $dir/tune/$name" >>"$dir/cases.txt"
		else
			echo "skip $name: tmac tune build failed:" >&2
			tail -5 "$dir/src/$name.build.log" >&2
		fi
	done
	# The TMA memcpy over more launch shapes and L2 promotion, generated
	# from the example (tmac tune build --generate): grid (512, Y) with
	# 16/Y tiles per block (longer loops, fewer pipeline fills), and
	# l2promo none or 256B.
	# shellcheck disable=SC2016 # $s, $y, $n are the generator's shell variables
	if build/tmac tune build -o "$dir/tune/mem_memcpy_grid" --stages 3,4,6 --schedules pipelined \
		--generate 's={split}; y=${s%x*}; n=${s#*x}; sed -e "s/%h2 = arith.constant 2 : index/%h2 = arith.constant $y : index/" -e "s/%ntiles = arith.constant 8 : index/%ntiles = arith.constant $n : index/" -e "s/l2promo = none/l2promo = l2promo_{l2}/" -e "s/l2promo_none/none/" examples/memcpy_pipelined.tma > {out}' \
		--param split=1x16,2x8,4x4 --param l2=none,256b >"$dir/src/mem_memcpy_grid.build.log" 2>&1; then
		echo "tune mem_memcpy_grid - $dir/tune/mem_memcpy_grid" >>"$dir/cases.txt"
	else
		echo "skip mem_memcpy_grid: tmac tune build failed:" >&2
		tail -5 "$dir/src/mem_memcpy_grid.build.log" >&2
	fi
	[ "$set_name" = default ] || { finish_build; return; }
	# Upstream MLIR 22's chapter-4 kernel at the square sizes (PTX + launch
	# plans), run by peers.py on the f16 cases' inputs.
	if ! OUT=$dir/mlir SIZES=$square COMPILE_RUNS=1 scripts/mlir-baseline.sh >"$dir/src/mlir-baseline.log" 2>&1; then
		echo "mlir-baseline.sh failed (the MLIR column will be n/a):" >&2
		tail -5 "$dir/src/mlir-baseline.log" >&2
	fi
	finish_build
}

finish_build() {
	echo "$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . || echo ' + uncommitted changes')" >"$dir/COMMIT"
	echo "cases ($dir/cases.txt):"
	sed 's/^/  /' "$dir/cases.txt"
	# The bundles compress tenfold: carry build/gpu/bench.tgz (run unpacks it).
	tar -czf "$dir.tgz" -C "$(dirname "$dir")" "$(basename "$dir")"
	du -sh build/tmac "$dir" "$dir.tgz"
}

run() {
	if [ -f "$dir.tgz" ] && { [ ! -f "$dir/cases.txt" ] || [ "$dir.tgz" -nt "$dir/cases.txt" ]; }; then
		tar -xzf "$dir.tgz" -C "$(dirname "$dir")"
	fi
	if [ ! -x "$tmac" ] || [ ! -f "$dir/cases.txt" ]; then
		echo "no $tmac or $dir/cases.txt: run scripts/bench-gpu.sh build here first (and carry build/tmac and $dir)" >&2
		exit 2
	fi
	local steps=${BENCH_STEPS:-tmac peers} warmup=${BENCH_WARMUP:-10} reps=${BENCH_REPS:-100}
	local dumps=${BENCH_DUMPS:-$dir/dumps}
	mkdir -p "$dir/logs" "$dumps"
	local failed=0 rows=() items=()
	while read -r kind name spec rest; do
		[ -n "$kind" ] || continue
		if [ "$kind" = spec ]; then
			# "spec gemm:f16:64x4096x4096:why" (name holds the whole spec)
			local line="$name${spec:+ $spec}${rest:+ $rest}"
			[[ -n "${BENCH_ONLY:-}" && ! "$line" =~ ${BENCH_ONLY} ]] && continue
			items+=("$line")
			continue
		fi
		[[ -n "${BENCH_ONLY:-}" && ! "$name" =~ ${BENCH_ONLY} ]] && continue
		local d=$dumps/$name log=$dir/logs/$name.log bundle=$dir/$name.tmab variant=
		if [ "$kind" = tune ] && [[ " $steps " == *" tmac "* ]]; then
			# Tune: every design's variants through tmac tune run (checked,
			# timed), then the fastest passing one is the shape's tmac.
			# All designs in one tmac tune run: @reference is computed once.
			local td ntd
			ntd=$(echo "${rest//,/ }" | wc -w)
			# shellcheck disable=SC2086 # rest is a list of directories
			timeout "$((${TUNE_TIMEOUT:-300} * ntd))" "$tmac" tune run ${rest//,/ } --reps "${BENCH_TUNE_REPS_TMAC:-20}" --warmup 3 \
				--ref-sample "${BENCH_REF_SAMPLE:-2}" >"$dir/logs/$name.tune.log" 2>&1
			for td in ${rest//,/ }; do
				cp "$td/tune-results.json" "$dir/logs/$name-$(basename "$td").tune-results.json" 2>/dev/null
			done
			read -r bundle variant < <(python3 - ${rest//,/ } <<'PY'
import json, os, sys
best = None
for d in sys.argv[1:]:
    try:
        res = json.load(open(os.path.join(d, "tune-results.json")))["results"]
    except (OSError, ValueError, KeyError):
        continue
    for r in res:
        if r.get("status") == "pass" and r.get("kernel_median_s") and (best is None or r["kernel_median_s"] < best[0]):
            best = (r["kernel_median_s"], os.path.join(d, r["bundle"]), r["name"])
print(f"{best[1]} {best[2]}" if best else "- -")
PY
)
			echo "$name: best variant $variant" >&2
			echo "$bundle" >"$dir/logs/$name.best"
		elif [ "$kind" = tune ] && [ -f "$dir/logs/$name.best" ]; then
			bundle=$(cat "$dir/logs/$name.best")
		elif [ "$kind" = pick ]; then
			# "pick NAME SPEC BUNDLE": one variant chosen beforehand, no tuning.
			bundle=$rest variant="$(basename "$rest" .tmab) (picked)"
		fi
		if [[ " $steps " == *" tmac "* ]]; then
			local flags=(--bench --warmup "$warmup" --reps "$reps" --dump-dir "$d") checked=
			[[ "$name" == gemm_* ]] && flags+=(--ref-sample "${BENCH_REF_SAMPLE:-2}")
			# A tuned bundle passed tune run's check on these same inputs (same
			# seed): not again (the CPU reference takes seconds at the LLM
			# shapes), unless BENCH_FINAL_CHECK=1; peers.py checks the dumped
			# output against torch either way.
			if [ "$kind" = tune ] && [ "${BENCH_FINAL_CHECK:-0}" != 1 ] && [[ "$name" == gemm_* ]]; then
				flags=(--bench --warmup "$warmup" --reps "$reps" --dump-dir "$d" --no-check)
				checked=" (checked by tune run)"
			fi
			local t0
			t0=$(date +%s)
			if [ "$bundle" = - ]; then
				echo "no variant of $name passed its check (logs/$name-*.tune.log)" >"$log"
				false
			else
				# shellcheck disable=SC2086 # BENCH_TMAC_FLAGS is a list of flags
				timeout "${EXAMPLE_TIMEOUT:-300}" "$tmac" run "$bundle" "${flags[@]}" ${BENCH_TMAC_FLAGS:-} >"$log" 2>&1
			fi
			local rc=$? result
			case $rc in
			0) result="PASS$checked" ;;
			3) echo "no GPU" >&2; cat "$log" >&2; exit 3 ;;
			124) result=TIMEOUT ;;
			*) if grep -q '^FAIL' "$log"; then result=FAIL; else result="ERROR($rc)"; fi ;;
			esac
			# tmac run warns when the host fell behind the GPU spin.
			grep -q 'the queued times include launch latency' "$log" && result="$result, queued times include launch latency"
			[[ "$result" == PASS* ]] || { failed=1; tail -5 "$log" | sed 's/^/    /' >&2; }
			local med thr
			med=$(grep -oE 'kernels queued \(launch latency hidden\): median [0-9.]+ us' "$log" | head -1 | grep -oE '[0-9.]+ us$')
			thr=$(grep -oE 'queued: [0-9.]+ TFLOP/s' "$log" | head -1 | cut -d' ' -f2-)
			[ -z "$thr" ] && thr=$(grep -oE 'queued: [0-9.]+ TB/s' "$log" | head -1 | cut -d' ' -f2-)
			rows+=("| $name | ${variant:--} | $result | ${med:--} | ${thr:--} |")
			echo "tmac run $name: $result ${med:-} ${thr:-} ($(($(date +%s) - t0)) s)" >&2
			if [[ "$result" != PASS* ]] && [ ! -f "$d/manifest.json" ]; then
				rm -rf "$d"
			fi
		fi
		if [ -f "$d/manifest.json" ]; then
			items+=("$d")
		elif [ "$spec" != - ]; then
			items+=("$spec:tmac run did not finish (see logs/$name.log)")
		else
			echo "no dump of $name: its peers are not run" >&2
			failed=1
		fi
	done <"${BENCH_CASES:-$dir/cases.txt}"

	local commit
	commit=$(cat "$dir/COMMIT" 2>/dev/null || echo unknown)
	if [ ${#rows[@]} -gt 0 ]; then
		echo
		echo "tmac runs (best variant per GEMM shape; commit $commit):"
		echo
		echo "| case | variant | tmac run | kernel time (queued, median) | throughput (tmac's count) |"
		echo "|---|---|---|---:|---:|"
		printf '%s\n' "${rows[@]}"
		echo
	fi
	if [[ " $steps " == *" peers "* ]] && [ ${#items[@]} -gt 0 ]; then
		# shellcheck disable=SC2086 # BENCH_PEERS_FLAGS is a list of flags
		BENCH_COMMIT=$commit BENCH_TMAC_REV=$("$tmac" version | sed -n 's/^built from //p') timeout "${PEERS_TIMEOUT:-1800}" python3 bench/gpu/peers.py "${items[@]}" \
			--json "$dir/results.json" --markdown "$dir/results.md" \
			--warmup "$warmup" --reps "$reps" --tune-reps "${BENCH_TUNE_REPS:-10}" --mlir-dir "$dir/mlir" ${BENCH_PEERS_FLAGS:-} \
			>/dev/null 2>"$dir/logs/peers.log"
		local prc=$?
		[ $prc -eq 0 ] || { failed=1; echo "peers.py exited with $prc (log: $dir/logs/peers.log)" >&2; tail -20 "$dir/logs/peers.log" >&2; }
		if [ ! -f "$dir/results.md" ] && [ -f "$dir/results.json" ]; then
			# peers.py was stopped: the cases it finished (it writes the JSON after each)
			python3 bench/gpu/report.py "$dir/results.json" >"$dir/results.md"
		fi
		if [ -f "$dir/results.json" ] && [ "$set_name" = default ]; then
			python3 bench/gpu/plot.py "$dir/results.json" -o docs/bench-gemm.svg || failed=1
		fi
	fi
	if [ -n "${OUT:-}" ]; then
		# One archive of the logs: what comes back from $OUT is a few files.
		tar -czf "$OUT/bench-logs.tar.gz" -C "$dir" logs 2>/dev/null
		for f in "$dir/results.json" "$dir/results.md" docs/bench-gemm.svg; do
			[ -f "$f" ] && cp "$f" "$OUT/"
		done
	fi
	# The peers' table last (also in results.md).
	if [[ " $steps " == *" peers "* ]] && [ -f "$dir/results.md" ]; then
		echo
		cat "$dir/results.md"
	fi
	exit $failed
}

# check: every design of every list, generated at a small shape whose
# tiles are not whole (M = 256, and M = 13 for the skinny lists, N = 200,
# K = 1024; fp8 lists in e4m3 with
# row-wise scales and bf16 output, the others bf16 -> bf16, f16 -> f32 for
# the square designs too) and run with its first stage count and schedule
# on the emulator against the generator's @reference. Needs no GPU; exit
# status 1 if a design fails (a refusal by the generator is reported, not
# counted: a design may not fit every shape).
check() {
	export CGO_ENABLED=0
	[ -x "$tmac" ] || go build -o "$tmac" ./cmd/tmac || exit 2
	local work=build/gpu/check failed=0 n=0 list d dn gflags st sch dt extra f
	rm -rf "$work" && mkdir -p "$work"
	# The skinny lists also at M = 13, below their tiles' rows: A's loads
	# then fill only the valid rows of its tile.
	for list in square_designs small_square_designs skinny_designs llm_skinny_designs llm_mid_designs llm_large_designs \
		fp8_skinny_designs fp8_mid_designs fp8_large_designs skinny_designs@13 llm_skinny_designs@13 fp8_skinny_designs@13; do
		local m=256
		[[ "$list" == *@* ]] && m=${list#*@} && list=${list%@*}
		local -n designs=$list
		for d in "${designs[@]}"; do
			IFS='|' read -r dn gflags st sch <<<"$d"
			# BENCH_DESIGNS (a regex) checks only the designs it matches.
			[[ -n "${BENCH_DESIGNS:-}" && ! "$dn" =~ ${BENCH_DESIGNS} ]] && continue
			dt="--dtype bf16 --out bf16"
			[[ "$list" == fp8_* ]] && dt="--dtype e4m3 --out bf16 --scale row"
			[ "$list" = square_designs ] && [[ "$dn" == *tma* || "$dn" == pp128 ]] && dt="--dtype f16 --out f32"
			[[ "$gflags" == *"--epilogue smem"* ]] && dt="--dtype bf16 --out f32"
			f=$work/$list-$dn-m$m.tma
			# shellcheck disable=SC2086 # gflags and dt are lists of flags
			if ! python3 bench/gpu/gen_gemm.py --m "$m" --n 200 --k 1024 $dt --pad $gflags --grid 4 --stages "${st%%,*}" \
				-o "$f" 2>"$f.refused"; then
				echo "refused $list $dn: $(cut -c1-150 "$f.refused")"
				continue
			fi
			extra=
			case ${sch%%,*} in
			ws) extra="tmac.warp_specialize" ;;
			pingpong) extra='tmac.warp_specialize = "pingpong"' ;;
			esac
			[ -n "$extra" ] && sed -i "s/} {tmac.stages = ${st%%,*} : i64}/} {tmac.stages = ${st%%,*} : i64, $extra}/" "$f"
			n=$((n + 1))
			if timeout 600 "$tmac" run "$f" --target=emu --ref-sample 0 --emu-seed "$n" >"$f.log" 2>&1 && grep -q '^PASS' "$f.log"; then
				echo "PASS $list $dn M=$m (${st%%,*} stages, ${sch%%,*})"
			else
				echo "FAIL $list $dn M=$m (${st%%,*} stages, ${sch%%,*}): $(grep -m1 -E '^FAIL|error' "$f.log" | cut -c1-150)"
				failed=$((failed + 1))
			fi
		done
	done
	echo "$n designs run on the emulator, $failed failed"
	[ "$failed" = 0 ]
}

case $mode in
build) build ;;
run) run ;;
check) check ;;
*) echo "usage: scripts/bench-gpu.sh build|run|check" >&2; exit 2 ;;
esac
