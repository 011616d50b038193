#!/usr/bin/env bash
# Issue 20's whole set on one card: the results files of docs/bench from
# 2026-11-27 on (the timing fix; the three commits before it left out),
# recorded on DEVICE, oldest first (by the commit in the file's name, then
# the name: a session's calls are named c1, c2, ...), summarised by
# bench/gpu/whole_set.py and, with PLOTS=PREFIX, plotted per dtype:
#
#   scripts/whole-set.sh ["NVIDIA H200"]
#   PLOTS=docs/bench-issue20-s8 scripts/whole-set.sh
set -eu -o pipefail
cd "$(dirname "$0")/.."
device=${1:-NVIDIA H200}
files=()
while read -r _ f; do files+=("$f"); done < <(
	for f in docs/bench/results-*.json; do
		# results-YYYY-MM-DD-COMMIT[-what].json, dated from the timing fix on
		d=$(basename "$f" | cut -d- -f2-4)
		[[ "$d" < 2026-11-27 ]] && continue
		c=$(basename "$f" .json | cut -d- -f5)
		case $c in 766ee25 | 883970d | 9a5397d) continue ;; esac
		grep -q "\"device\": \"$device\"" "$f" || continue
		echo "$(git show -s --format=%ct "$c" 2>/dev/null || echo 0) $f"
	done | sort -n -s -k1,1)
[ ${#files[@]} -gt 0 ] || { echo "whole-set.sh: no results files of $device" >&2; exit 1; }
python3 bench/gpu/whole_set.py "${files[@]}" --device "$device" --exclude 4095x4097
[ -z "${PLOTS:-}" ] || python3 bench/gpu/plot_shapes.py "${files[@]}" -o "$PLOTS"
