#!/usr/bin/env bash
# Issue 20 (step 14, GEMM and FP8 breadth) on the GPU machine, in calls
# that each fit the device tool's 10 minutes:
#
#   scripts/gpu-step14.sh build          # here: tmac, the bench sets, the trials
#   scripts/gpu-step14.sh CALL           # there, one call each (carry what build lists)
#
# CALL is one of
#   trials   scripts/gpu-gemm-trial.sh run and asm (A/B PTX trials; tmac's
#            and Triton's code for the skinny fp8 GEMM side by side)
#   fp8      BENCH_SET=fp8: seed 002's shapes, per-tensor and row-wise scales
#   llm-a    BENCH_SET=llm, M in 16 64 128 (12 shapes)
#   llm-b    BENCH_SET=llm, M in 256 1024 4096 (12 shapes)
#   breadth  BENCH_SET=breadth: squares 512..8192, edges, f16 -> f32, memory-bound
#            (more than one call's tuning: 11 of its 22 cases on 2026-11-27),
#            or in three calls: breadth-a (bf16), breadth-b (f16 -> f16),
#            breadth-c (f16 -> f32 and the memory-bound pair)
#   fp8llm   BENCH_SET=fp8llm: the LLM shapes in e4m3 -> bf16, row-wise scales
#   skinny   scripts/gpu-skinny.sh run: seed 002's design at several K
#            against its peers, and its PTX and tensor-map variants
#   vendor   bench/gpu/vendor_kernels.py: the kernels cuBLAS and
#            torch._scaled_mm launch (tile, cluster, grid) for the shapes
#            in VENDOR_SPECS (default: the squares and the skinny shapes)
# Each runs the tmac step then the peers step within RUN_BUDGET (default
# 560 s; BENCH_ONLY, a regex, picks cases of fp8, breadth, fp8llm, llm-a and llm-b) and copies results, tables and logs to $OUT; the table is last.
# Peers (torch, cuBLAS, Triton) need the machine's Python; everything is
# checked before it is timed (bench-gpu.sh, peers.py).
set -u -o pipefail
cd "$(dirname "$0")/.."
call=${1:-}
# step (scripts/gpu-steps.sh) keeps each command within what is left of
# the budget and logs it to $out/NAME.log.
. scripts/gpu-steps.sh
budget=${RUN_BUDGET:-560}
start=$SECONDS
out=build/gpu/step14
mkdir -p "$out"

bench() {
	# bench SET [ONLY]: the tmac step in at most 60% of what is left, then
	# the peers step in the rest.
	local set=$1 only=${2:-} d=build/gpu/bench-$1 tag=$1${2:+-$(echo "$2" | tr -c 'A-Za-z0-9' '_' | cut -c1-20)}
	TAIL=0 step "$tag-tmac" $(((budget - (SECONDS - start)) * 6 / 10)) \
		env BENCH_SET="$set" BENCH_ONLY="$only" BENCH_STEPS=tmac bash scripts/bench-gpu.sh run
	echo "tmac step: $(verdict "$rc")"
	grep -E '^tmac run ' "$out/$tag-tmac.log" | cut -c1-120
	local t2=$((budget - (SECONDS - start) - 20))
	TAIL=0 step "$tag-peers" "$t2" \
		env BENCH_SET="$set" BENCH_ONLY="$only" BENCH_STEPS=peers PEERS_TIMEOUT=$((t2 - 10)) bash scripts/bench-gpu.sh run
	echo "peers step: $(verdict "$rc")"
	if [ -n "${OUT:-}" ]; then
		cp "$d/results.json" "$OUT/results-$tag.json" 2>/dev/null
		cp "$out/$tag-tmac.log" "$out/$tag-peers.log" "$OUT/" 2>/dev/null
		tar -czf "$OUT/logs-$tag.tgz" -C "$d" logs 2>/dev/null
	fi
	[ -f "$d/results.json" ] && python3 bench/gpu/report.py "$d/results.json" | grep -E '^\| ' | grep -v '^| gemm_\|^| mem_\|^| scaled_\|^| case' | cut -c1-220
}

case $call in
build)
	set -e
	for s in fp8 llm breadth fp8llm; do
		BENCH_SET=$s bash scripts/bench-gpu.sh build >"build/gpu/build-$s.log" 2>&1
		tail -1 "build/gpu/build-$s.log"
	done
	bash scripts/gpu-gemm-trial.sh build
	bash scripts/gpu-skinny.sh build | tail -1
	echo "carry: build/tmac build/gpu/bench-fp8.tgz build/gpu/bench-llm.tgz build/gpu/bench-breadth.tgz build/gpu/bench-fp8llm.tgz build/gpu/bench-skinny.tgz build/gpu/trial"
	du -ch build/tmac build/gpu/bench-{fp8,llm,breadth,fp8llm,skinny}.tgz build/gpu/trial | tail -1
	;;
trials)
	nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
	# asm writes a dozen files: one archive of them goes back ($OUT takes 8).
	TAIL=0 step trial-asm "$budget" env OUT=build/gpu/trial/asm bash scripts/gpu-gemm-trial.sh asm
	[ -n "${OUT:-}" ] && tar -czf "$OUT/trial-asm.tgz" -C build/gpu/trial asm
	TAIL=12 step trial-run "$budget" bash scripts/gpu-gemm-trial.sh run
	;;
fp8 | breadth | fp8llm)
	nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
	bench "$call" "${BENCH_ONLY:-}"
	;;
breadth-a | breadth-b | breadth-c)
	nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
	case $call in
	breadth-a) bench breadth '^gemm_bf16_' ;;
	breadth-b) bench breadth '^gemm_f16_' ;;
	breadth-c) bench breadth '^gemm_f16f32_|^mem_' ;;
	esac
	;;
skinny)
	OUT='' bash scripts/gpu-skinny.sh run
	[ -n "${OUT:-}" ] && tar -czf "$OUT/skinny.tgz" -C build/gpu/bench-skinny results.json logs bench.log 2>/dev/null
	;;
llm-a)
	nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
	bench llm "${BENCH_ONLY:-^gemm_bf16_(16|64|128)x}"
	;;
llm-b)
	nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
	bench llm "${BENCH_ONLY:-^gemm_bf16_(256|1024|4096)x}"
	;;
vendor)
	nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
	specs=${VENDOR_SPECS:-}
	if [ -z "$specs" ]; then
		for s in 1024 2048 4096 8192; do specs+=" gemm:bf16:${s}x${s}x$s gemm:f16:${s}x${s}x$s gemm:f16f32:${s}x${s}x$s"; done
		for m in 16 64 128 256 1024; do
			for nk in 4096x4096 14336x4096 4096x14336 6144x1536; do
				specs+=" gemm:bf16:${m}x$nk scaled:e4m3:${m}x$nk:row"
			done
			specs+=" scaled:e4m3:${m}x4096x4096:tensor"
		done
		specs+=" scaled:e4m3:4096x4096x4096:tensor scaled:e4m3:4096x4096x4096:row gemm:bf16:1000x1000x1024"
	fi
	# shellcheck disable=SC2086 # the specs are words
	TAIL=0 step vendor "$budget" python3 bench/gpu/vendor_kernels.py $specs --json "$out/vendor-kernels.json"
	[ -n "${OUT:-}" ] && cp "$out/vendor-kernels.json" "$out/vendor.log" "$OUT/" 2>/dev/null
	grep '^| ' "$out/vendor.log" | cut -c1-260
	;;
*)
	echo "usage: scripts/gpu-step14.sh build|trials|fp8|llm-a|llm-b|breadth|breadth-a|breadth-b|breadth-c|fp8llm|skinny|vendor" >&2
	exit 2
	;;
esac
