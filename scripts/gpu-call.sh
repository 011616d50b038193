#!/usr/bin/env bash
# Several scripts/gpu-step14.sh calls in one device call, each with its own
# run budget, their files archived into one $OUT/calls.tgz (the device tool
# brings back at most 8 files), the tables last:
#
#   scripts/gpu-call.sh "vendor:80" "llm-a:330:^gemm_bf16_" "breadth:150:^mem_"
#
# Each argument is CALL:BUDGET[:BENCH_ONLY].
set -u -o pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
i=0
for spec in "$@"; do
	i=$((i + 1))
	IFS=: read -r call budget only <<<"$spec"
	d=$tmp/$i-$call
	mkdir -p "$d"
	OUT=$d RUN_BUDGET=$budget BENCH_ONLY=$only bash scripts/gpu-step14.sh "$call" >"$d/out.txt" 2>&1
	echo "== $spec: exit $?" >>"$tmp/summary.txt"
done
[ -n "${OUT:-}" ] && tar -czf "$OUT/calls.tgz" -C "$tmp" .
for f in "$tmp"/*/out.txt; do
	echo "=== $f"
	tail -n "${CALL_TAIL:-25}" "$f" | cut -c1-180
done
cat "$tmp/summary.txt"
