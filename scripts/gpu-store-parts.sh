#!/usr/bin/env bash
# Does the epilogue in parts pay (issue 20)? gen_gemm's TMA-store
# epilogue writes its whole tile into one shared tile (--store-layout
# swizzled) or, with --store-layout parts, one box of columns at a time
# (tmac.warpgroup.mma.store's columns) through two slots of one box,
# stored part by part (tma-pipeline's store episodes). The parts free
# shared memory for load stages: each case is built as A, the whole tile
# at the most stages that fit, and B, the parts at more stages, and timed
# A B A B with `tmac run --bench` (checked on sampled rows).
#
#   scripts/gpu-store-parts.sh build   # here (carry build/tmac build/gpu/store-parts.tgz)
#   scripts/gpu-store-parts.sh run     # on the GPU machine; the table last
#
# STORE_PARTS_SET=2 (both steps) picks the second set: the shapes where the
# tuning lists' winners of 2026-11-28 could lose to coop256parts.
set -u -o pipefail
cd "$(dirname "$0")/.."
. scripts/gpu-steps.sh # gen_ab_build, gen_ab_rows, pack_bundles, unpack_bundles, ab_table
dir=build/gpu/store-parts
ws=tmac.warp_specialize
pp='tmac.warp_specialize = "pingpong"'

# name|shape MxNxK|gen_gemm flags|A stages|B stages|loop attribute
cases=(
	"f16f32-coop256|4096x4096x4096|--dtype f16 --out f32 --design coop --bm 128 --bn 256 --epilogue tma|2|4|$ws"
	"f16f32-coop256-s3|4096x4096x4096|--dtype f16 --out f32 --design coop --bm 128 --bn 256 --epilogue tma|2|3|$ws"
	"f16f32-pp128|4096x4096x4096|--dtype f16 --out f32 --design persistent --bm 128 --bn 128 --epilogue tma|3|4|$pp"
	"bf16-coop256|4096x4096x4096|--dtype bf16 --out bf16 --design coop --bm 128 --bn 256 --epilogue tma|3|4|$ws"
	"bf16-pp128|4096x4096x4096|--dtype bf16 --out bf16 --design persistent --bm 128 --bn 128 --epilogue tma|4|5|$pp"
	"fp8r-coop256|4096x4096x4096|--dtype e4m3 --out bf16 --scale row --design coop --bm 128 --bn 256 --epilogue tma|3|4|$ws"
	"fp8r-pp128|4096x14336x4096|--dtype e4m3 --out bf16 --scale row --design persistent --bm 128 --bn 128 --epilogue tma|4|5|$pp"
)

# The second set: the cooperative kernel at the shapes of the fp8, bf16
# and f16 -> f32 lists where it might win with a 4th stage.
cases2=(
	"fp8r-coop256-1024|1024x4096x4096|--dtype e4m3 --out bf16 --scale row --design coop --bm 128 --bn 256 --epilogue tma|3|4|$ws"
	"fp8r-coop256-1024x14336|1024x14336x4096|--dtype e4m3 --out bf16 --scale row --design coop --bm 128 --bn 256 --epilogue tma|3|4|$ws"
	"fp8r-coop256-4096x14336|4096x14336x4096|--dtype e4m3 --out bf16 --scale row --design coop --bm 128 --bn 256 --epilogue tma|3|4|$ws"
	"bf16-coop256-8192|8192x8192x8192|--dtype bf16 --out bf16 --design coop --bm 128 --bn 256 --epilogue tma|3|4|$ws"
	"f16-coop256|4096x4096x4096|--dtype f16 --out f16 --design coop --bm 128 --bn 256 --epilogue tma|3|4|$ws"
	"f16f32-coop256-2048|2048x2048x2048|--dtype f16 --out f32 --design coop --bm 128 --bn 256 --epilogue tma|2|4|$ws"
	"f16f32-coop256-8192|8192x8192x8192|--dtype f16 --out f32 --design coop --bm 128 --bn 256 --epilogue tma|2|4|$ws"
)
[ "${STORE_PARTS_SET:-1}" = 2 ] && cases=("${cases2[@]}")

# The rows' "stages" column: A's and B's.
rows() {
	local c name shape flags sa sb attr
	for c in "${cases[@]}"; do
		IFS='|' read -r name shape flags sa sb attr <<<"$c"
		echo "$name|$shape|$flags|$sa/$sb|$attr"
	done
}

build() {
	set -e
	local r c name
	mapfile -t r < <(rows)
	gen_ab_build "$dir" "" "--store-layout parts" "${r[@]}"
	for c in "${r[@]}"; do
		name=${c%%|*}
		grep -q 'columns = array' "$dir/src/$name-b.tma"
	done
	pack_bundles "$dir"
}

run() {
	local r
	mapfile -t r < <(rows)
	unpack_bundles "$dir"
	# Each row as soon as it is timed (a call cut short by its limit still
	# reports the rows it finished), then the table.
	local c out=()
	for c in "${r[@]}"; do
		out+=("$(gen_ab_rows "$dir" "$c")")
		echo "${out[-1]}"
		[ -n "${OUT:-}" ] && tar -czf "$OUT/store-parts-logs.tgz" -C "$dir" logs 2>/dev/null
	done
	ab_table "A = whole tile (swizzled), B = parts through two one-box slots, more load stages" "${out[@]}"
}

case ${1:-} in
build) build ;;
run) run ;;
*) echo "usage: scripts/gpu-store-parts.sh build|run" >&2; exit 2 ;;
esac
