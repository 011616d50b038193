#!/usr/bin/env bash
# A/B timing of two bundles on the GPU machine, for trials of code changes
# (scripts/gpu-gemm-trial.sh, scripts/gpu-skinny.sh): `tmac run --bench`
# on each, interleaved A B A B so that drift hits both alike:
#
#   scripts/ab-bench.sh A.tmab B.tmab LOG_PREFIX [tmac run flags]
#
# prints "a1 | b1 | a2 | b2", each the run's queued kernel median, or
# FAIL(median) when the run failed (its check, or an error); the logs are
# LOG_PREFIX.{a,b}.{1,2}.log.
set -u -o pipefail
[ $# -ge 3 ] || { echo "usage: scripts/ab-bench.sh A.tmab B.tmab LOG_PREFIX [tmac run flags]" >&2; exit 2; }
tmac=${TMAC:-build/tmac}
a=$1 b=$2 prefix=$3
shift 3
cells=()
for r in 1 2; do
	for v in a b; do
		bundle=$a
		[ "$v" = b ] && bundle=$b
		log=$prefix.$v.$r.log
		timeout 120 "$tmac" run "$bundle" --bench --warmup 10 --reps 100 "$@" >"$log" 2>&1
		rc=$?
		med=$(grep -oE 'kernels queued \(launch latency hidden\): median [0-9.]+ us' "$log" | head -1 | grep -oE '[0-9.]+ us$')
		[ $rc -eq 0 ] || med="FAIL(${med:-})"
		cells+=("${med:--}")
	done
done
echo "${cells[0]} | ${cells[1]} | ${cells[2]} | ${cells[3]}"
