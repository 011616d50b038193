#!/usr/bin/env bash
# Which part of the stream-K kernel makes ptxas serialize its wgmma
# (warning C7514, scripts/gpu-valid-rows.sh: "wgmma.mma_async instructions
# are serialized due to non wgmma instructions reading accumulator
# registers")? gen_gemm.py's stream-K program for 256 x 4096 x 4096 (bf16,
# 128 x 64 tiles, 132 blocks) and variants of it with parts of the
# cross-tile loop's end-of-tile code removed (the outputs of v2-v5 are
# wrong; only ptxas's report is of interest):
#   v1  as generated (measured 2026-11-27 before the wgmma-acc-init pass:
#       C7514; with the pass, which replaces the reset by a runtime
#       scale-d: no C7514, 213 registers, no spills)
#   v2  the accumulator not reset to zero after a tile (no init.accumulator)
#   v3  no register reduction (the last block does not add the peers' partials)
#   v4  no epilogue at all in the loop (the reset kept)
#   v5  v4 without the reset
#
#   scripts/gpu-streamk-c7514.sh build   # here (carry build/gpu/streamk-c7514)
#   scripts/gpu-streamk-c7514.sh run     # there: ptxas -v of each, the table last
set -u -o pipefail
cd "$(dirname "$0")/.."
. scripts/gpu-steps.sh # add_triton_bin
dir=build/gpu/streamk-c7514
tmac=${TMAC:-build/tmac}
case ${1:-} in
build)
	set -e
	rm -rf "$dir" && mkdir -p "$dir"
	python3 bench/gpu/gen_gemm.py --m 256 --n 4096 --k 4096 --dtype bf16 --out bf16 --bm 128 --bn 64 \
		--split-reduce streamk --grid 132 --stages 6 -o "$dir/v1.tma"
	python3 - "$dir" <<'PY'
import sys
d = sys.argv[1]
L = open(f"{d}/v1.tma").read().split("\n")
def find(lines, s, start=0):
    return next(i for i in range(start, len(lines)) if s in lines[i])
def no_reset(lines):
    lines = list(lines)
    i = find(lines, "%skzero = nvgpu.warpgroup.mma.init.accumulator")
    lines[i] = ""
    lines[i + 1] = lines[i + 1].replace("%skzero", "%nacc")
    return lines
v2 = no_reset(L)
a = find(L, "%sksum = scf.for"); b = find(L, "%skdt = memref.subview", a)
v3 = [x.replace("%sksum", "%nacc") for x in L[:a] + L[b:]]
a = find(L, "scf.if %skwhole {"); b = find(L, "%skzero = nvgpu.warpgroup.mma.init.accumulator", a)
v4 = L[:a] + L[b:]
v5 = no_reset(v4)
for name, lines in (("v2", v2), ("v3", v3), ("v4", v4), ("v5", v5)):
    open(f"{d}/{name}.tma", "w").write("\n".join(lines))
PY
	for v in v1 v2 v3 v4 v5; do "$tmac" compile "$dir/$v.tma" -o "$dir/$v.ptx"; done
	ls "$dir"
	;;
run)
	add_triton_bin
	echo "| variant | registers | spill st/ld | C7514 |"
	echo "|---|---:|---:|---|"
	for v in v1 v2 v3 v4 v5; do
		r=$(ptxas -arch=sm_90a -v "$dir/$v.ptx" -o "$dir/$v.cubin" 2>&1)
		echo "$r" >"$dir/$v.ptxas.txt"
		echo "| $v | $(echo "$r" | grep -oE 'Used [0-9]+ registers' | grep -oE '[0-9]+') | $(echo "$r" | grep -oE '[0-9]+ bytes spill (stores|loads)' | grep -oE '^[0-9]+' | paste -sd/) | $(echo "$r" | grep -c C7514) |"
	done
	;;
*) echo "usage: scripts/gpu-streamk-c7514.sh build|run" >&2; exit 2 ;;
esac
