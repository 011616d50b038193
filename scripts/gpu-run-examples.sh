#!/usr/bin/env bash
# Runs every example bundle on the GPU machine and prints a table.
#
# Here (where llc is): scripts/gpu-build.sh writes build/tmac (CGO_ENABLED=0)
# and one bundle per example into build/gpu/bundles (examples/*.tma as
# NAME.tmab, examples/variants/*.tma as variant-NAME.tmab). There (no llc
# needed): this script runs `build/tmac run BUNDLE --bench` for each, keeps
# each full output in build/gpu/run-logs/NAME.log, and prints a Markdown
# table: example, result, ||out-ref||/||ref||, kernel time (median), TFLOP/s or TB/s
# (the last three as `tmac run` reports them; "-" where it did not).
#
#   scripts/gpu-run-examples.sh [FILTER]      # FILTER: substring of the name
#   TMAC_RUN_FLAGS='--seed 7' scripts/gpu-run-examples.sh
#   EXCLUDE=test- scripts/gpu-run-examples.sh  # skip names containing test-
#
# Exit status: 0 when every example passed, 1 otherwise, 3 without a GPU.
set -u -o pipefail
cd "$(dirname "$0")/.."
tmac=${TMAC:-build/tmac}
dir=${BUNDLES:-build/gpu/bundles}
logs=build/gpu/run-logs
filter=${1:-}
per_example_timeout=${EXAMPLE_TIMEOUT:-600}
if [ ! -x "$tmac" ]; then echo "no $tmac: run scripts/gpu-build.sh first" >&2; exit 2; fi
shopt -s nullglob
bundles=("$dir"/*.tmab)
if [ ${#bundles[@]} -eq 0 ]; then echo "no bundles in $dir: run scripts/gpu-build.sh first" >&2; exit 2; fi
mkdir -p "$logs"

# first_match REGEX FILE: the first (case-insensitive) match of REGEX in FILE.
first_match() { grep -oiE -m1 "$1" "$2" | head -1; }

commit=$(cat build/gpu/COMMIT 2>/dev/null || git rev-parse --short HEAD 2>/dev/null || echo unknown)
echo "tmac run --bench on $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 || echo 'unknown GPU'), $(date -u +%Y-%m-%d), commit $commit"
echo
echo "| example | result | ||out-ref||/||ref|| | kernel time (median) | TFLOP/s or TB/s |"
echo "|---|---|---|---|---|"
failed=0 total=0
for b in "${bundles[@]}"; do
	name=$(basename "$b" .tmab)
	[ -n "$filter" ] && [[ "$name" != *"$filter"* ]] && continue
	[ -n "${EXCLUDE:-}" ] && [[ "$name" == *"$EXCLUDE"* ]] && continue
	total=$((total + 1))
	log=$logs/$name.log
	# shellcheck disable=SC2086 # TMAC_RUN_FLAGS is a list of flags
	flags=$(cat "$dir/$name.flags" 2>/dev/null || true)
	# shellcheck disable=SC2086 # flags is a list of flags
	timeout "$per_example_timeout" "$tmac" run "$b" --bench $flags ${TMAC_RUN_FLAGS:-} >"$log" 2>&1
	rc=$?
	case $rc in
	0) result=PASS ;;
	3) result="NO GPU"; echo "| $name | $result | - | - | - |"; cat "$log" >&2; exit 3 ;;
	124) result="TIMEOUT (${per_example_timeout} s)" ;;
	*) if grep -qi 'did not finish' "$log"; then result="HANG"; elif grep -qi 'mismatch\|FAIL' "$log"; then result=FAIL; else result="ERROR (exit $rc)"; fi ;;
	esac
	[ "$result" = PASS ] || failed=$((failed + 1))
	# The error column is ||out-ref||/||ref|| (the worst output), the time
	# that of the kernels alone.
	rel=$(grep -oE '\|\|out-ref\|\|/\|\|ref\|\| [-+0-9.eE]+|\|\|out-ref\|\|/\|\|ref\|\| (\+?Inf|NaN)' "$log" | awk '{print $2}' | sort -g | tail -1)
	med=$(first_match 'kernels alone: median [0-9.]+ ?(ns|µs|us|ms|s)\b' "$log" | grep -oE '[0-9.]+ ?(ns|µs|us|ms|s)$')
	thr=$(first_match '[0-9.]+ ?TFLOP/s' "$log")
	[ -z "$thr" ] && thr=$(first_match '[0-9.]+ ?TB/s' "$log")
	echo "| $name | $result | ${rel:--} | ${med:--} | ${thr:--} |"
	if [ "$result" != PASS ]; then sed 's/^/    /' "$log" | tail -8 >&2; fi
done
echo
echo "$((total - failed))/$total passed (full outputs in $logs)"
[ $failed -eq 0 ]
