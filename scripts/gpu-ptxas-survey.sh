#!/usr/bin/env bash
# ptxas's view of every kernel the bench sets tune (issue 20): registers,
# spills and warning C7514 ("wgmma.mma_async instructions are serialized
# due to non wgmma instructions reading accumulator registers"), which
# costs a pipelined GEMM its overlap of consecutive wgmma groups and was
# first seen on the stream-K kernel (scripts/gpu-valid-rows.sh). Runs on
# the GPU machine, whose Python has Triton's ptxas; llc's PTX is compiled
# for sm_90a as the driver would.
#
#   scripts/gpu-ptxas-survey.sh [SET.tgz...]   # default: build/gpu/bench-*.tgz
#
# writes build/gpu/ptxas-survey/survey.tsv (set, case, variant, registers,
# spill stores, spill loads, C7514 0/1) and prints, last, the counts per
# design and the variants with spills or C7514.
set -u -o pipefail
cd "$(dirname "$0")/.."
. scripts/gpu-steps.sh # add_triton_bin
out=build/gpu/ptxas-survey
rm -rf "$out" && mkdir -p "$out/x"
add_triton_bin
command -v ptxas >/dev/null || { echo "no ptxas on the PATH (nor in Triton's wheel)" >&2; exit 2; }
ptxas --version | tail -1
sets=("$@")
[ ${#sets[@]} -gt 0 ] || sets=(build/gpu/bench-*.tgz)
for s in "${sets[@]}"; do
	tar -xzf "$s" -C "$out/x" --wildcards '*.tmab' 2>/dev/null
done
# one_bundle BUNDLE: a survey line (set case variant regs spill_st spill_ld c7514).
one_bundle() {
	local b=$1 d r set case variant
	d=$(mktemp -d)
	tar -xf "$b" -C "$d" kernels.ptx 2>/dev/null
	r=$(ptxas -arch=sm_90a -v "$d/kernels.ptx" -o "$d/k.cubin" 2>&1)
	rm -rf "$d"
	set=$(echo "$b" | sed -E 's|.*/x/([^/]+)/.*|\1|')
	case=$(basename "$(dirname "$(dirname "$b")")")
	variant=$(basename "$b" .tmab)
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$set" "$case" "$variant" \
		"$(echo "$r" | grep -oE 'Used [0-9]+ registers' | grep -oE '[0-9]+' | sort -n | tail -1)" \
		"$(echo "$r" | grep -oE '[0-9]+ bytes spill stores' | grep -oE '^[0-9]+' | sort -n | tail -1)" \
		"$(echo "$r" | grep -oE '[0-9]+ bytes spill loads' | grep -oE '^[0-9]+' | sort -n | tail -1)" \
		"$(echo "$r" | grep -c C7514)"
}
export -f one_bundle
find "$out/x" -name '*.tmab' | sort | xargs -P "$(nproc)" -I{} bash -c 'one_bundle {}' >"$out/survey.tsv"
echo "$(wc -l <"$out/survey.tsv") kernels"
python3 - "$out/survey.tsv" <<'PY'
import collections, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
by = collections.defaultdict(lambda: [0, 0, 0, 0])  # design: kernels, C7514, spilling, max regs
bad = []
for st, case, var, regs, sst, sld, c in rows:
    design = var.rsplit("-", 2)[0]
    e = by[(st, design)]
    e[0] += 1
    e[1] += c != "0"
    e[2] += (sst or "0") != "0" or (sld or "0") != "0"
    e[3] = max(e[3], int(regs or 0))
    if c != "0" or (sst or "0") != "0":
        bad.append(f"| {st} | {case} | {var} | {regs} | {sst}/{sld} | {'yes' if c != '0' else ''} |")
print("| set | design | kernels | C7514 | spilling | max registers |")
print("|---|---|---:|---:|---:|---:|")
for (st, d), e in sorted(by.items()):
    print(f"| {st} | {d} | {e[0]} | {e[1]} | {e[2]} | {e[3]} |")
print()
print("| set | case | variant | registers | spill st/ld bytes | C7514 |")
print("|---|---|---|---:|---:|---|")
print("\n".join(bad[:80]))
if len(bad) > 80:
    print(f"... {len(bad) - 80} more in survey.tsv")
PY
