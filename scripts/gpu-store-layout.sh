#!/usr/bin/env bash
# Does the swizzled epilogue tile pay (issue 20)? gen_gemm's TMA-store
# epilogue writes its shared tile with tmac.warpgroup.mma.store's
# tmaLayout, as 128-byte-swizzled boxes (--store-layout swizzled, the
# default); the row-major tile before it (--store-layout rows) takes each
# warp's pair stores into 4 of the 32 banks, 8 wavefronts a request where 1
# does (tmac run --target=emu --bank-conflicts counts them). Each case is
# built with rows (A) and swizzled (B) from the same design, and the
# attention example from its last row-major version (a25f23d) and now; all
# timed A B A B with `tmac run --bench` (checked on sampled rows).
#
#   scripts/gpu-store-layout.sh build   # here (carry build/tmac build/gpu/store-layout.tgz)
#   scripts/gpu-store-layout.sh run     # on the GPU machine; the table last
set -u -o pipefail
cd "$(dirname "$0")/.."
. scripts/gpu-steps.sh # gen_ab_build, gen_ab_run, pack_bundles
dir=build/gpu/store-layout
tmac=${TMAC:-build/tmac}
ws=tmac.warp_specialize
pp='tmac.warp_specialize = "pingpong"'

# name|shape MxNxK|gen_gemm flags|stages|loop attribute
cases=(
	"fp8r-pp128|4096x6144x1536|--dtype e4m3 --out bf16 --scale row --design persistent --bm 128 --bn 128 --epilogue tma|4|$pp"
	"fp8r-pp128-1024|1024x6144x1536|--dtype e4m3 --out bf16 --scale row --design persistent --bm 128 --bn 128 --epilogue tma|4|$pp"
	"fp8r-coop256|4096x4096x4096|--dtype e4m3 --out bf16 --scale row --design coop --bm 128 --bn 256 --epilogue tma|3|$ws"
	"fp8r-coop224|256x14336x4096|--dtype e4m3 --out bf16 --scale row --design coop --bm 128 --bn 224 --epilogue tma|3|$ws"
	"bf16-pp128|4096x6144x1536|--dtype bf16 --out bf16 --design persistent --bm 128 --bn 128 --epilogue tma|4|$pp"
	"bf16-coop256|4096x4096x4096|--dtype bf16 --out bf16 --design coop --bm 128 --bn 256 --epilogue tma|3|$ws"
	"f16f32-pp128|4096x4096x4096|--dtype f16 --out f32 --design persistent --bm 128 --bn 128 --epilogue tma|3|$pp"
	"f16f32-coop256|8192x8192x8192|--dtype f16 --out f32 --design coop --bm 128 --bn 256 --epilogue tma|2|$ws"
)

build() {
	set -e
	TMAC=$tmac gen_ab_build "$dir" "--store-layout rows" "" "${cases[@]}"
	local c name
	for c in "${cases[@]}"; do
		name=${c%%|*}
		! grep -q tmaLayout "$dir/src/$name.tma"
		grep -q tmaLayout "$dir/src/$name-b.tma"
	done
	# The attention example: its last row-major version and the current one.
	git show a25f23d:examples/attention_fwd.tma >"$dir/src/attention.tma"
	! grep -q tmaLayout "$dir/src/attention.tma"
	"$tmac" compile "$dir/src/attention.tma" --emit bundle -o "$dir/attention.tmab"
	"$tmac" compile examples/attention_fwd.tma --emit bundle -o "$dir/attention-b.tmab"
	pack_bundles "$dir"
}

run() {
	TMAC=$tmac gen_ab_run "$dir" "A = row-major epilogue tile, B = swizzled boxes (tmaLayout)" "${cases[@]}" "attention|examples/attention_fwd.tma|-|4|-"
}

case ${1:-} in
build) build ;;
run) run ;;
*) echo "usage: scripts/gpu-store-layout.sh build|run" >&2; exit 2 ;;
esac
