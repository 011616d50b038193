#!/usr/bin/env bash
# Compile time and memory of tmac against input size (issue 9): modules of
# 10k, 100k and 1M lines of two shapes (scripts/gen-growth.py: copies of
# the pipelined-add kernel, which every pass works on, and one function of
# a single 1M-op block), through `tmac opt` (parse, verify, print) and
# `tmac compile --emit=llvm` (the whole pass pipeline and LLVM IR; llc is
# left out: it is LLVM's). Prints CPU seconds (user + system, the best of
# GROWTH_REPS runs, default 2: wall time is at the mercy of other load) and
# peak resident memory, and the cost per 1000 lines.
#
#   scripts/growth-curve.sh [SIZES...]   # default: 10000 100000 1000000
set -eu -o pipefail
cd "$(dirname "$0")/.."
reps=${GROWTH_REPS:-2}
sizes=${*:-10000 100000 1000000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
make -s build >/dev/null

# measure CMD...: "cpu_seconds peak_kb", the best of $reps runs.
measure() {
	local best_cpu="" best_kb=""
	for _ in $(seq "$reps"); do
		/usr/bin/time -f "%U %S %M" -o "$tmp/time" "$@" >/dev/null 2>"$tmp/err" || {
			echo "failed: $*" >&2
			cat "$tmp/err" >&2
			exit 1
		}
		read -r u s kb <"$tmp/time"
		cpu=$(echo "$u + $s" | bc)
		if [ -z "$best_cpu" ] || [ "$(echo "$cpu < $best_cpu" | bc)" = 1 ]; then
			best_cpu=$cpu
			best_kb=$kb
		fi
	done
	echo "$best_cpu $best_kb"
}

echo "| input | lines | tmac opt: CPU s | peak MB | s per 1k lines | compile --emit=llvm: CPU s | peak MB | s per 1k lines |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
for shape in kernels chain; do
	for n in $sizes; do
		f=$tmp/$shape-$n.tma
		python3 scripts/gen-growth.py "$shape" "$n" >"$f"
		lines=$(wc -l <"$f")
		read -r ocpu okb < <(measure build/tmac opt "$f" -o /dev/null)
		read -r ccpu ckb < <(measure build/tmac compile "$f" --emit=llvm -o "$tmp/out.ll")
		awk -v s="$shape" -v l="$lines" -v oc="$ocpu" -v ok="$okb" -v cc="$ccpu" -v ck="$ckb" 'BEGIN {
			printf "| %s | %d | %.2f | %.0f | %.3f | %.2f | %.0f | %.3f |\n", s, l, oc, ok / 1024, oc * 1000 / l, cc, ck / 1024, cc * 1000 / l }'
		rm -f "$f" "$tmp/out.ll"
	done
done
