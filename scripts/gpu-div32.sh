#!/usr/bin/env bash
# Trial: are the kernels slow at stage counts that are not powers of two
# because of 64-bit divisions by the stage count? Each case's bundle (A)
# against the same bundle with those divisions narrowed to 32 bits
# (bench/gpu/ll_div32.py, B), timed A B A B with `tmac run --bench`
# (scripts/ab-bench.sh; checked on sampled rows).
#
#   scripts/gpu-div32.sh build   # here (carry build/tmac build/gpu/div32.tgz)
#   scripts/gpu-div32.sh run     # on the GPU machine; the table last
#
# With the compiler's own narrowing (tma-pipeline and warp-specialize
# divide ring positions on i32, passes/pipelining/ring_math.go), `build
# OLD_TMAC` compiles A with OLD_TMAC (a tmac built before it) and B with
# build/tmac: the trial, now of the compiler.
set -u -o pipefail
cd "$(dirname "$0")/.."
. scripts/gpu-steps.sh # gen_bundle, pack_bundles, unpack_bundles, ab_table
dir=build/gpu/div32
TMAC=${TMAC:-build/tmac}

# name|MxNxK|gen_gemm flags|stages|loop attribute or -
cases=(
	"coop128x64-s9|256x4096x4096|--dtype bf16 --out bf16 --design coop --bm 128 --bn 64|9|tmac.warp_specialize"
	"coop128x64-s7|256x4096x4096|--dtype bf16 --out bf16 --design coop --bm 128 --bn 64|7|tmac.warp_specialize"
	"coop128x64-s8|256x4096x4096|--dtype bf16 --out bf16 --design coop --bm 128 --bn 64|8|tmac.warp_specialize"
	"t64x64-s12|128x4096x4096|--dtype bf16 --out bf16 --design tiles --bm 64 --bn 64|12|-"
	"t128x64-s6|1024x1024x1024|--dtype bf16 --out bf16 --design tiles --bm 128 --bn 64|6|-"
	"coop256parts-s3|4096x4096x4096|--dtype bf16 --out bf16 --design coop --bm 128 --bn 256 --epilogue tma --store-layout parts|3|tmac.warp_specialize"
	"pp128-s3|4096x4096x4096|--dtype bf16 --out bf16 --design persistent --bm 128 --bn 128|3|tmac.warp_specialize = \"pingpong\""
	"fp8row-coop256w-s3|256x14336x4096|--dtype e4m3 --out bf16 --scale row --design coop --bm 128 --bn wave:128-256 --epilogue tma|3|tmac.warp_specialize"
)

case ${1:-} in
build)
	CGO_ENABLED=0 make -s build || exit
	rm -rf "$dir" && mkdir -p "$dir/src" || exit
	old=${2:-}
	for c in "${cases[@]}"; do
		IFS='|' read -r name shape flags st attr <<<"$c"
		if [ -n "$old" ]; then
			TMAC=$old gen_bundle "$dir" "$name" "$shape" "$flags" "$st" "$attr" || exit
			gen_bundle "$dir" "$name-b" "$shape" "$flags" "$st" "$attr" || exit
		else
			gen_bundle "$dir" "$name" "$shape" "$flags" "$st" "$attr" || exit
			python3 bench/gpu/ll_div32.py "$dir/$name.tmab" "$dir/$name-b.tmab" || exit
		fi
	done
	echo "${old:+A: $old; B: build/tmac}" >"$dir/WHAT"
	pack_bundles "$dir"
	;;
run)
	[ -f "$dir.tgz" ] && tar -xzf "$dir.tgz" -C "$(dirname "$dir")"
	what="A: as compiled; B: the i64 divisions by constants that are not powers of two narrowed to i32"
	[ -s "$dir/WHAT" ] && what="$(cat "$dir/WHAT") (ring arithmetic on i32 in the compiler)"
	gen_ab_run "$dir" "$what" "${cases[@]}"
	;;
*)
	echo "usage: scripts/gpu-div32.sh build|run" >&2
	exit 2
	;;
esac
