#!/usr/bin/env bash
# Step 6 (issue 7) on the GPU machine, split over two device calls made back
# to back on the same warm machine (one call is limited to 10 minutes):
#
#   here:  scripts/pipeline-sweep.sh build && scripts/bench-gpu.sh build
#   call A: scripts/gpu-step6.sh a   (carry build/tmac build/gpu/sweep.tgz build/gpu/bench.tgz;
#           BENCH_ONLY=REGEX splits it over several calls (each under 10
#           minutes): '^gemm_f16_', then '^gemm_f16f32_', then '^(gemm_bf16|mem_)')
#           the benchmark's tmac step: per GEMM shape the tuning of every
#           design's variants, then the best one and the memory-bound
#           bundles through `tmac run --bench --dump-dir`
#   call B: scripts/gpu-step6.sh b   (same carry)
#           the peers on tmac's dumped inputs (cuBLAS, Triton, upstream MLIR,
#           torch copies; reruns the tmac step first if its dumps are gone,
#           on a fresh machine), then the examples' step-6 variants of the
#           pipeline sweep (SWEEP_FILTER)
#
# The dumps live in /tmp/tmac-bench-dumps, outside the carried folders, so
# that call B finds them. Logs and results go to $OUT as a few files (the
# device tool returns at most 8); the table is printed last.
set -u -o pipefail
cd "$(dirname "$0")/.."
export BENCH_DUMPS=${BENCH_DUMPS:-/tmp/tmac-bench-dumps}
out=${OUT:-build/gpu/step6-out}
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader

tmac_step() {
	BENCH_STEPS=tmac BENCH_WARMUP=${BENCH_WARMUP:-10} BENCH_REPS=${BENCH_REPS:-50} EXAMPLE_TIMEOUT=120 \
		OUT= bash scripts/bench-gpu.sh run
}

for t in build/gpu/sweep.tgz; do
	[ -f "$t" ] && tar -xzf "$t" -C build/gpu
done

case ${1:-} in
a)
	timeout 560 bash -c "$(declare -f tmac_step); tmac_step" >"$out/bench-tmac.txt" 2>&1
	echo "bench tmac step exit $?"
	tar -czf "$out/bench-tmac-logs.tar.gz" -C build/gpu/bench logs 2>/dev/null
	du -sh "$BENCH_DUMPS" 2>/dev/null
	grep 'best variant' "$out/bench-tmac.txt"
	sed -n '/^tmac runs/,$p' "$out/bench-tmac.txt"
	;;
b)
	if ! ls "$BENCH_DUMPS"/*/manifest.json >/dev/null 2>&1; then
		echo "no dumps in $BENCH_DUMPS (a fresh machine): running the tmac step first"
		timeout 330 bash -c "$(declare -f tmac_step); tmac_step" >"$out/bench-tmac.txt" 2>&1
	fi
	BENCH_STEPS=peers BENCH_WARMUP=10 BENCH_REPS=${BENCH_REPS:-50} BENCH_TUNE_REPS=${BENCH_TUNE_REPS:-5} \
		PEERS_TIMEOUT=${PEERS_TIMEOUT:-360} OUT= bash scripts/bench-gpu.sh run >"$out/bench-peers.txt" 2>&1
	echo "bench peers step exit $?"
	tar -czf "$out/peers-log.tar.gz" -C build/gpu/bench logs 2>/dev/null
	for f in build/gpu/bench/results.json build/gpu/bench/results.md docs/bench-gemm.svg; do
		[ -f "$f" ] && cp "$f" "$out/"
	done
	# The examples' step-6 variants (correctness and timings) in the time left.
	SWEEP_FILTER=${SWEEP_FILTER:-'^gemm_(s3|wspp_s)'} SWEEP_RUN_FLAGS="--reps 30 --warmup 5" EXAMPLE_TIMEOUT=60 \
		timeout 150 bash scripts/pipeline-sweep.sh run >"$out/sweep.txt" 2>&1
	echo "sweep exit $?"
	sed -n '/^| bundle/,$p' "$out/sweep.txt"
	sed -n '/^| GEMM M x N x K/,/^TB\/s/p' build/gpu/bench/results.md 2>/dev/null || tail -30 "$out/bench-peers.txt"
	;;
*)
	echo "usage: scripts/gpu-step6.sh a|b" >&2
	exit 2
	;;
esac
