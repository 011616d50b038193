#!/usr/bin/env bash
# Does prefetching the tensor maps at a kernel's start pay (issue 20: the
# small squares, 1024^3 at 10.1 us against cuBLAS's 8.9, look like fixed
# per-kernel cost)? gen_gemm.py --prefetch-maps has thread 0 run
# nvgpu.tma.prefetch.descriptor on A's and B's maps (and D's for the TMA
# epilogue) before the K loop, as CUTLASS's kernels do; tmac's passes do
# not emit it. Each case is built without (A) and with (B) it from the
# same design and timed A B A B with `tmac run --bench` (checked against
# the generator's @reference on sampled rows).
#
#   scripts/gpu-prefetch-maps.sh build   # here (carry build/tmac build/gpu/prefetch-maps.tgz)
#   scripts/gpu-prefetch-maps.sh run     # on the GPU machine; the table last
set -u -o pipefail
cd "$(dirname "$0")/.."
. scripts/gpu-steps.sh # gen_ab_build, gen_ab_run, pack_bundles
dir=build/gpu/prefetch-maps
tmac=${TMAC:-build/tmac}

# name|shape MxNxK|gen_gemm flags|stages|loop attribute (tmac.warp_specialize) or -
cases=(
	"bf16-512|512x512x512|--dtype bf16 --out bf16 --design tiles --bm 64 --bn 64|4|-"
	"bf16-1024|1024x1024x1024|--dtype bf16 --out bf16 --design tiles --bm 128 --bn 64|6|-"
	"f16f32-1024|1024x1024x1024|--dtype f16 --out f32 --design tiles --bm 128 --bn 64|6|-"
	"bf16-2048-t2x256|2048x2048x2048|--dtype bf16 --out bf16 --design tiles2 --bm 128 --bn 256|3|-"
	"fp8r-16|16x4096x4096|--dtype e4m3 --out bf16 --scale row --design tiles --bm 64 --bn 32 --bk 256|6|-"
	"bf16-128-s2l|128x4096x4096|--dtype bf16 --out bf16 --design tiles --bm 128 --bn 64 --split 2 --split-reduce last|9|-"
	"bf16-256x6144x1536|256x6144x1536|--dtype bf16 --out bf16 --design tiles --bm 64 --bn 192|6|-"
	"fp8r-256x14336-coop|256x14336x4096|--dtype e4m3 --out bf16 --scale row --design coop --bm 128 --bn 224 --epilogue tma|3|tmac.warp_specialize"
)

build() {
	set -e
	TMAC=$tmac gen_ab_build "$dir" "" --prefetch-maps "${cases[@]}"
	local c name
	for c in "${cases[@]}"; do
		name=${c%%|*}
		grep -q 'nvgpu.tma.prefetch.descriptor' "$dir/src/$name-b.tma"
		tar -xf "$dir/$name-b.tmab" -O kernels.ptx >"$dir/src/$name-b.ptx"
		grep -q 'prefetch.*tensormap' "$dir/src/$name-b.ptx"
	done
	pack_bundles "$dir"
}

run() {
	TMAC=$tmac gen_ab_run "$dir" "A = as generated, B = --prefetch-maps" "${cases[@]}"
}

case ${1:-} in
build) build ;;
run) run ;;
*) echo "usage: scripts/gpu-prefetch-maps.sh build|run" >&2; exit 2 ;;
esac
