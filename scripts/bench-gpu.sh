#!/usr/bin/env bash
# tmac against its peers on the H200, in one run, on the same inputs
# (issue 7): GEMMs M=N=K in 1024..8192 and skinny M in 64, 128, 256 with
# N=K=4096, f16 and bf16 inputs, f32 accumulate; and the memory-bound
# examples (pipelined add, TMA memcpy).
#
#   scripts/bench-gpu.sh build   # here, where llc is: tmac and the bundles, in build/gpu/bench
#   scripts/bench-gpu.sh run     # on the GPU machine: tmac runs, then the peers; the table last
#
# build: build/tmac, and one `tmac run` bundle per GEMM shape and dtype,
# generated from $GEMM_EXAMPLE (default examples/gemm_pipelined.tma) by
# bench/gpu/retarget_gemm.py (shapes, element type, grid, K trip count and
# @reference's loops; sources in build/gpu/bench/src). A shape the example
# cannot be retargeted to (e.g. M=64 with 128-row tiles), or that tmac
# cannot compile, is skipped with the reason, and the peers still run on
# it (its tmac column then says why there is no result). Bundles of
# examples/add_pipelined.tma and examples/tma_memcpy_1d.tma as they are.
# Upstream MLIR 22's chapter-4 GEMM at the square sizes
# (scripts/mlir-baseline.sh into build/gpu/bench/mlir).
# build/gpu/bench/cases.txt lists what `run` does. Carry build/tmac and
# build/gpu/bench to the GPU machine (about 30 MB).
#
# run: for each bundle `tmac run BUNDLE --bench --warmup W --reps R
# --dump-dir build/gpu/bench/dumps/NAME` (tmac's own check against
# @reference first: sampled to BENCH_REF_SAMPLE=2 rows of @reference for
# the GEMMs, full for the memory-bound ones; then its CUDA-event timing;
# then its inputs and outputs as .npy files); then bench/gpu/peers.py on
# the dumps (and the specs of the skipped shapes): the same inputs for
# cuBLAS (torch), the two Triton GEMMs, upstream MLIR's kernel (square
# f16 shapes), torch.add / d2d copy and the
# Triton add and copy, every output (tmac's too) checked against a torch
# reference before timing. Writes build/gpu/bench/results.{json,md},
# docs/bench-gemm.svg (bench/gpu/plot.py), and copies them, with the logs
# (bench-logs.tar.gz), to $OUT when set. Exit status 1 if anything failed, 3 without a GPU.
#
# Environment: BENCH_WARMUP (10), BENCH_REPS (100), BENCH_TUNE_REPS (10),
# BENCH_REF_SAMPLE (2), BENCH_TMAC_FLAGS (extra `tmac run` flags),
# BENCH_PEERS_FLAGS (extra peers.py flags, e.g. --no-triton), BENCH_ONLY (an
# extended regex: only the cases whose name matches), BENCH_STEPS ("tmac
# peers": either step alone to split the work over two commands), EXAMPLE_TIMEOUT (300 s per tmac run),
# PEERS_TIMEOUT (1800 s), BENCH_DUMPS (where the dumps go, default
# build/gpu/bench/dumps; a folder outside the carried ones survives a
# second call on the same machine that carries build/gpu/bench again).
set -u -o pipefail
cd "$(dirname "$0")/.."
mode=${1:-}
dir=build/gpu/bench
tmac=${TMAC:-build/tmac}
example=${GEMM_EXAMPLE:-examples/gemm_pipelined.tma}
square="1024 2048 4096 8192"
skinny_m="64 128 256"
skinny_nk=4096
dtypes="f16 bf16"
mem_examples="examples/add_pipelined.tma examples/tma_memcpy_1d.tma"

build() {
	set -e
	export CGO_ENABLED=0
	go build -o build/tmac ./cmd/tmac
	rm -rf "$dir" && mkdir -p "$dir/src"
	: >"$dir/cases.txt"
	shapes=()
	for s in $square; do shapes+=("$s $s $s"); done
	for m in $skinny_m; do shapes+=("$m $skinny_nk $skinny_nk"); done
	for dt in $dtypes; do
		for s in "${shapes[@]}"; do
			read -r m n k <<<"$s"
			name=gemm_${dt}_${m}x${n}x${k}
			spec=gemm:$dt:${m}x${n}x${k}
			if ! msg=$(python3 bench/gpu/retarget_gemm.py "$example" --m "$m" --n "$n" --k "$k" --dtype "$dt" -o "$dir/src/$name.tma" 2>&1); then
				reason=$(echo "$msg" | head -1 | sed 's/^.* cannot be retargeted to [^ ]* [a-z0-9]*: //')
				echo "skip $name: $msg" >&2
				echo "spec $spec:$(basename "$example") not retargetable: $reason" >>"$dir/cases.txt"
				continue
			fi
			if ! build/tmac compile "$dir/src/$name.tma" --emit=bundle -o "$dir/$name.tmab" 2>"$dir/src/$name.err"; then
				echo "skip $name: tmac compile failed:" >&2
				head -5 "$dir/src/$name.err" >&2
				echo "spec $spec:tmac compile failed ($(head -1 "$dir/src/$name.err" | cut -c1-120))" >>"$dir/cases.txt"
				continue
			fi
			rm -f "$dir/src/$name.err"
			echo "bundle $name $spec" >>"$dir/cases.txt"
		done
	done
	for ex in $mem_examples; do
		name=mem_$(basename "$ex" .tma)
		cp "$ex" "$dir/src/$name.tma"
		if build/tmac compile "$ex" --emit=bundle -o "$dir/$name.tmab" 2>"$dir/src/$name.err"; then
			rm -f "$dir/src/$name.err"
			echo "bundle $name -" >>"$dir/cases.txt"
		else
			echo "skip $ex: tmac compile failed:" >&2
			head -5 "$dir/src/$name.err" >&2
		fi
	done
	# Upstream MLIR 22's chapter-4 kernel at the square sizes (PTX + launch
	# plans), run by peers.py on the f16 cases' inputs.
	if ! OUT=$dir/mlir SIZES=$square COMPILE_RUNS=1 scripts/mlir-baseline.sh >"$dir/src/mlir-baseline.log" 2>&1; then
		echo "mlir-baseline.sh failed (the MLIR column will be n/a):" >&2
		tail -5 "$dir/src/mlir-baseline.log" >&2
	fi
	echo "$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . || echo ' + uncommitted changes')" >"$dir/COMMIT"
	echo "GEMM example: $example" >"$dir/EXAMPLE"
	echo "cases ($dir/cases.txt):"
	sed 's/^/  /' "$dir/cases.txt"
	du -sh build/tmac "$dir"
}

run() {
	if [ ! -x "$tmac" ] || [ ! -f "$dir/cases.txt" ]; then
		echo "no $tmac or $dir/cases.txt: run scripts/bench-gpu.sh build here first (and carry build/tmac and $dir)" >&2
		exit 2
	fi
	local steps=${BENCH_STEPS:-tmac peers} warmup=${BENCH_WARMUP:-10} reps=${BENCH_REPS:-100}
	local dumps=${BENCH_DUMPS:-$dir/dumps}
	mkdir -p "$dir/logs" "$dumps"
	local failed=0 rows=() items=()
	while read -r kind name spec; do
		[ -n "$kind" ] || continue
		if [ "$kind" = spec ]; then
			# "spec gemm:f16:64x4096x4096:why" (name holds the whole spec)
			[[ -n "${BENCH_ONLY:-}" && ! "$name $spec" =~ ${BENCH_ONLY} ]] && continue
			items+=("$name${spec:+ $spec}")
			continue
		fi
		[[ -n "${BENCH_ONLY:-}" && ! "$name" =~ ${BENCH_ONLY} ]] && continue
		local d=$dumps/$name log=$dir/logs/$name.log
		if [[ " $steps " == *" tmac "* ]]; then
			local flags=(--bench --warmup "$warmup" --reps "$reps" --dump-dir "$d")
			[[ "$name" == gemm_* ]] && flags+=(--ref-sample "${BENCH_REF_SAMPLE:-2}")
			local t0
			t0=$(date +%s)
			# shellcheck disable=SC2086 # BENCH_TMAC_FLAGS is a list of flags
			timeout "${EXAMPLE_TIMEOUT:-300}" "$tmac" run "$dir/$name.tmab" "${flags[@]}" ${BENCH_TMAC_FLAGS:-} >"$log" 2>&1
			local rc=$? result
			case $rc in
			0) result=PASS ;;
			3) echo "no GPU" >&2; cat "$log" >&2; exit 3 ;;
			124) result=TIMEOUT ;;
			*) if grep -q '^FAIL' "$log"; then result=FAIL; else result="ERROR($rc)"; fi ;;
			esac
			[ "$result" = PASS ] || { failed=1; tail -5 "$log" | sed 's/^/    /' >&2; }
			local med thr
			med=$(grep -oE 'kernels queued \(launch latency hidden\): median [0-9.]+ us' "$log" | head -1 | grep -oE '[0-9.]+ us$')
			thr=$(grep -oE 'queued: [0-9.]+ (TFLOP/s|TB/s)' "$log" | head -1 | cut -d' ' -f2-)
			rows+=("| $name | $result | ${med:--} | ${thr:--} |")
			echo "tmac run $name: $result ${med:-} ${thr:-} ($(($(date +%s) - t0)) s)" >&2
			if [ "$result" != PASS ] && [ ! -f "$d/manifest.json" ]; then
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
	done <"$dir/cases.txt"

	local commit
	commit=$(cat "$dir/COMMIT" 2>/dev/null || echo unknown)
	if [ ${#rows[@]} -gt 0 ]; then
		echo
		echo "tmac runs ($(cat "$dir/EXAMPLE" 2>/dev/null), commit $commit):"
		echo
		echo "| bundle | tmac run | kernel time (queued, median) | throughput (tmac's count) |"
		echo "|---|---|---:|---:|"
		printf '%s\n' "${rows[@]}"
		echo
	fi
	if [[ " $steps " == *" peers "* ]] && [ ${#items[@]} -gt 0 ]; then
		# shellcheck disable=SC2086 # BENCH_PEERS_FLAGS is a list of flags
		BENCH_COMMIT=$commit timeout "${PEERS_TIMEOUT:-1800}" python3 bench/gpu/peers.py "${items[@]}" \
			--json "$dir/results.json" --markdown "$dir/results.md" \
			--warmup "$warmup" --reps "$reps" --tune-reps "${BENCH_TUNE_REPS:-10}" --mlir-dir "$dir/mlir" ${BENCH_PEERS_FLAGS:-} \
			>/dev/null 2>"$dir/logs/peers.log"
		local prc=$?
		[ $prc -eq 0 ] || { failed=1; echo "peers.py exited with $prc (log: $dir/logs/peers.log)" >&2; tail -20 "$dir/logs/peers.log" >&2; }
		if [ ! -f "$dir/results.md" ] && [ -f "$dir/results.json" ]; then
			# peers.py was stopped: the cases it finished (it writes the JSON after each)
			python3 bench/gpu/report.py "$dir/results.json" >"$dir/results.md"
		fi
		if [ -f "$dir/results.json" ]; then
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

case $mode in
build) build ;;
run) run ;;
*) echo "usage: scripts/bench-gpu.sh build|run" >&2; exit 2 ;;
esac
