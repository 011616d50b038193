#!/usr/bin/env bash
# Step 9 (issue 15) on the GPU: the refactor changed no PTX (identity-check)
# but moved the run orchestration into package runner, retired the
# launcher in favour of `tmac run` bundles, and added math.log2.
#
#   scripts/gpu-step9.sh build      # here: build/gpu (gpu-build.sh) + the log2 accuracy bundle
#   scripts/gpu-step9.sh check      # there: ptxas, GPU test programs, watchdog, overhead (gpu-check.sh),
#                                   #        math.log2 accuracy in ulps
#   scripts/gpu-step9.sh examples   # there: every example and variant bundle through tmac run --bench
#
# Each run mode prints a short table last.
set -u -o pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in
build)
	scripts/gpu-build.sh || exit 1
	build/tmac compile bench/gpu/accuracy/log2.tma --emit=bundle -o build/gpu/log2-accuracy.tmab || exit 1
	cp bench/gpu/accuracy/ulp.py build/gpu/ulp.py
	du -sh build/gpu build/tmac
	;;
check)
	nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
	timeout 560 scripts/gpu-check.sh >build/gpu/check.log 2>&1
	check=$?
	grep -E '^\| test-|ptxas:|watchdog:|summary:|overhead|FAIL' build/gpu/check.log | tail -40
	echo "== math.log2 accuracy (2^24 inputs)"
	rm -rf /tmp/log2dump
	timeout 300 build/tmac run build/gpu/log2-accuracy.tmab --dump-dir /tmp/log2dump
	run=$?
	python3 build/gpu/ulp.py /tmp/log2dump
	ulp=$?
	echo "| gpu-check.sh exit | log2 tmac run exit | log2 within 1 ulp (exit) |"
	echo "|---|---|---|"
	echo "| $check | $run | $ulp |"
	;;
examples)
	EXCLUDE=test- EXAMPLE_TIMEOUT=120 TMAC_RUN_FLAGS="--reps 10 --warmup 2" timeout 570 scripts/gpu-run-examples.sh >build/gpu/examples.log 2>&1
	rc=$?
	cat build/gpu/examples.log
	echo "gpu-run-examples.sh exit $rc"
	;;
*)
	echo "usage: scripts/gpu-step9.sh build|check|examples" >&2
	exit 2
	;;
esac
