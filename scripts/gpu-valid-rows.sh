#!/usr/bin/env bash
# Loading only A's valid rows when M is below the tile's rows (issue 20):
# gen_gemm.py now loads A into a subview of its tile's leading rows
# (tmac.tma.load, tmac.LeadingRows) instead of letting TMA zero-fill the
# rest; --full-a builds the old way. Each case is built both ways from the
# same design and timed A B A B with `tmac run --bench` (checked against
# the generator's @reference on sampled rows), then ptxas's register and
# spill report for the split-K and stream-K kernels of 256 x 4096 x 4096
# (why they lose: issue 20's open question).
#
#   scripts/gpu-valid-rows.sh build   # here (carry build/tmac build/gpu/valid-rows.tgz)
#   scripts/gpu-valid-rows.sh run     # on the GPU machine; the table last
set -u -o pipefail
cd "$(dirname "$0")/.."
. scripts/gpu-steps.sh # add_triton_bin, gen_ab_build, gen_ab_rows, gen_bundle, pack_bundles, unpack_bundles, ab_table
dir=build/gpu/valid-rows
tmac=${TMAC:-build/tmac}

# name|shape MxNxK|gen_gemm flags|stages|loop attribute
cases=(
	"fp8t-m1|1x4096x4096|--dtype e4m3 --out bf16 --scale tensor --design tiles --bm 64 --bn 64 --bk 256|4|-"
	"fp8t-m16|16x4096x4096|--dtype e4m3 --out bf16 --scale tensor --design tiles --bm 64 --bn 64 --bk 256|4|-"
	"fp8r-m16|16x4096x4096|--dtype e4m3 --out bf16 --scale row --design tiles --bm 64 --bn 32 --bk 256|6|-"
	"bf16-m16|16x4096x4096|--dtype bf16 --out bf16 --design tiles --bm 64 --bn 64|9|-"
	"bf16-m16-k14336|16x4096x14336|--dtype bf16 --out bf16 --design tiles --bm 64 --bn 64 --split 2 --split-reduce last|9|-"
	"bf16-m64-bm128|64x4096x4096|--dtype bf16 --out bf16 --design tiles --bm 128 --bn 64|9|-"
)
# name|shape|flags|stages: the kernels whose registers and spills ptxas reports.
asm_cases=(
	"plain|256x4096x4096|--dtype bf16 --out bf16 --design tiles --bm 64 --bn 128|6"
	"split2|256x4096x4096|--dtype bf16 --out bf16 --design tiles --bm 64 --bn 128 --split 2 --split-reduce last|6"
	"streamk|256x4096x4096|--dtype bf16 --out bf16 --design tiles --bm 128 --bn 64 --split-reduce streamk --grid 132|6"
)

build() {
	set -e
	TMAC=$tmac gen_ab_build "$dir" --full-a "" "${cases[@]}"
	local c name shape flags st
	for c in "${cases[@]}"; do
		name=${c%%|*}
		grep -q 'memref.subview %as\[0, 0\]' "$dir/src/$name-b.tma"
		! grep -q 'memref.subview %as\[0, 0\]' "$dir/src/$name.tma"
	done
	for c in "${asm_cases[@]}"; do
		IFS='|' read -r name shape flags st <<<"$c"
		TMAC=$tmac gen_bundle "$dir" "asm-$name" "$shape" "$flags" "$st" -
	done
	pack_bundles "$dir"
}

run() {
	unpack_bundles "$dir"
	local c name shape flags st rows
	mapfile -t rows < <(TMAC=$tmac gen_ab_rows "$dir" "${cases[@]}")
	# ptxas from Triton's wheel when the PATH has none.
	local a=$dir/asm
	add_triton_bin
	mkdir -p "$a"
	for c in "${asm_cases[@]}"; do
		IFS='|' read -r name shape flags st <<<"$c"
		mkdir -p "$a/$name"
		tar -xf "$dir/asm-$name.tmab" -C "$a/$name" kernels.ptx
		if command -v ptxas >/dev/null; then
			ptxas -arch=sm_90a -v "$a/$name/kernels.ptx" -o "$a/$name/k.cubin" >"$a/$name.ptxas.txt" 2>&1
			command -v nvdisasm >/dev/null && nvdisasm -c "$a/$name/k.cubin" >"$a/$name.sass" 2>&1
		else
			echo "no ptxas" >"$a/$name.ptxas.txt"
		fi
	done
	if [ -n "${OUT:-}" ]; then
		tar -czf "$OUT/valid-rows-logs.tgz" -C "$dir" logs asm 2>/dev/null
	fi
	echo
	for c in "${asm_cases[@]}"; do
		IFS='|' read -r name shape flags st <<<"$c"
		echo "ptxas $name ($shape $flags, $st stages):"
		grep -E 'Compiling entry|registers|spill' "$a/$name.ptxas.txt" | sed 's/^ptxas info *: //' | cut -c1-150
	done
	ab_table "A = --full-a (TMA zero-fills the tile's rows past M), B = only the M valid rows loaded" "${rows[@]}"
}

case ${1:-} in
build) build ;;
run) run ;;
*) echo "usage: scripts/gpu-valid-rows.sh build|run" >&2; exit 2 ;;
esac
