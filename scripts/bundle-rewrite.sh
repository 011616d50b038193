#!/usr/bin/env bash
# A copy of a bundle with its PTX rewritten, for A/B trials of code changes
# on the GPU machine (scripts/gpu-gemm-trial.sh, scripts/gpu-skinny.sh):
#
#   scripts/bundle-rewrite.sh IN.tmab OUT.tmab SED [ROWS]
#
# applies the sed script SED to IN's kernels.ptx and, with ROWS, cuts the
# box of the first tensor map of its first entry's plan to ROWS rows (the
# second box dimension; the PTX's expect_tx byte counts are SED's to
# change). Fails if SED changes nothing; prints the number of PTX lines
# removed or added.
set -eu -o pipefail
[ $# -ge 3 ] || { echo "usage: scripts/bundle-rewrite.sh IN.tmab OUT.tmab SED [ROWS]" >&2; exit 2; }
in=$1 out=$2 script=$3 rows=${4:-}
x=$(mktemp -d)
trap 'rm -rf "$x"' EXIT
tar -xf "$in" -C "$x"
cp "$x/kernels.ptx" "$x/orig.ptx"
sed -i "$script" "$x/kernels.ptx"
if cmp -s "$x/orig.ptx" "$x/kernels.ptx"; then
	echo "bundle-rewrite: the sed script changes nothing in $in" >&2
	exit 1
fi
if [ -n "$rows" ]; then
	python3 - "$x/manifest.json" "$rows" <<'PY'
import json, sys
path, rows = sys.argv[1], int(sys.argv[2])
m = json.load(open(path))
tm = next(s for s in m["entries"][0]["steps"] if s["op"] == "tensormap")
if rows > tm["box_dim"][1]:
    sys.exit(f"bundle-rewrite: {rows} rows is more than the box's {tm['box_dim'][1]}")
tm["box_dim"][1] = rows
json.dump(m, open(path, "w"), indent=1)
PY
fi
echo "PTX lines removed or added: $({ diff "$x/orig.ptx" "$x/kernels.ptx" || true; } | grep -c '^[<>]' || true)"
out=$(realpath -m "$out")
(cd "$x" && tar cf "$out" manifest.json kernels.ptx kernels.ll module.tma)
