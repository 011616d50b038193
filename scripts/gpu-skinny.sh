#!/usr/bin/env bash
# Where the skinny fp8 GEMM's time goes (issue 20: tmac's M = 64,
# N = K = 4096 e4m3 GEMM takes ~16 us whatever the design, seed 002's
# Triton kernel with the same tiles and stages ~12 us). One design, seed
# 002's own (64 x 64 tiles, K tiles of 256, 4 stages, one warpgroup,
# per-tensor scales, bf16 out), at several K and N, so that the time
# against K gives each implementation's fixed cost (intercept) and its
# streaming rate (slope), both measured on the same inputs as the peers:
#
#   scripts/gpu-skinny.sh build   # here: build/gpu/bench-skinny (carry build/tmac and build/gpu/bench-skinny.tgz)
#   scripts/gpu-skinny.sh run     # on the GPU machine; the table last
#
# run: scripts/bench-gpu.sh run over the cases (tmac checked and timed,
# then torch._scaled_mm and the Triton kernel on the dumped inputs), then
# variants of a bundle, each A B A B against the original with
# `tmac run --bench`:
#   nomma     64 x 4096 x 4096 without its wgmma instructions (the loads,
#             barriers and epilogue alone; the output is wrong, so
#             --no-check)
#   prefetch  64 x 4096 x 4096 with prefetch.tensormap of both tensor maps
#             at entry (checked)
#   abox16    16 x 4096 x 4096 with A's TMA box cut from 64 rows to the 16
#   abox1     1 x 4096 x 4096, A's box cut to 1 row (checked): the tuned
#             skinny kernels get slower as M falls below the tile's 64 rows
#             (t64x32k256-s6: 10.0 us at M = 64, 13.9 at 16, 14.7 at 1),
#             so is it the TMA's zero fill of the rows past M? The box is
#             cut in the manifest's tensor map and the expect_tx byte
#             count in the PTX; the tile's other rows keep what they held
#             and only reach output rows past M, which are not stored.
set -u -o pipefail
cd "$(dirname "$0")/.."
. scripts/gpu-steps.sh # add_triton_bin
dir=build/gpu/bench-skinny
tmac=${TMAC:-build/tmac}
design="--design tiles --bm 64 --bn 64 --bk 256 --dtype e4m3 --scale tensor --out bf16"
shapes="64x4096x1024 64x4096x2048 64x4096x4096 64x4096x8192 64x8192x4096 16x4096x4096 1x4096x4096"

build() {
	set -e
	make -s build
	rm -rf "$dir" && mkdir -p "$dir/src"
	: >"$dir/cases.txt"
	for s in $shapes; do
		IFS=x read -r m n k <<<"$s"
		# shellcheck disable=SC2086 # design is a list of flags
		python3 bench/gpu/gen_gemm.py --m "$m" --n "$n" --k "$k" $design -o "$dir/src/$s.tma"
		"$tmac" tune build "$dir/src/$s.tma" -o "$dir/tune/$s" --stages 4 --schedules pipelined >"$dir/src/$s.build.log"
		echo "pick gemm_e4m3tensor_$s scaled:e4m3:$s:tensor $dir/tune/$s/$s-pipelined-s4.tmab" >>"$dir/cases.txt"
	done
	variant nomma 64x4096x4096 '/^wgmma\.mma_async/d'
	variant prefetch 64x4096x4096 's/^\(\s*cvta\.param\.u64\s*\)\(%rd[0-9]*\)\(, %rd[0-9]*;\)$/&\n\tprefetch.tensormap [\2];/'
	# A's box: 64 x 256 bytes (two 128-byte boxes) of the 32768 bytes a
	# stage expects become R x 256.
	variant abox16 16x4096x4096 's/^\(\s*mov\.b32\s*%r[0-9]*\), 32768;$/\1, 20480;/' 16
	variant abox1 1x4096x4096 's/^\(\s*mov\.b32\s*%r[0-9]*\), 32768;$/\1, 16640;/' 1
	echo "$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . || echo ' + uncommitted changes')" >"$dir/COMMIT"
	tar -czf "$dir.tgz" -C "$(dirname "$dir")" "$(basename "$dir")"
	du -sh build/tmac "$dir.tgz"
}

# variant NAME SHAPE SED [ROWS]: SHAPE's bundle rewritten by
# scripts/bundle-rewrite.sh (SED on its PTX; with ROWS, its first tensor
# map's box cut to ROWS rows) as $dir/NAME.tmab; $dir/NAME.base names the
# original.
variant() {
	local base=$dir/tune/$2/$2-pipelined-s4.tmab
	bash scripts/bundle-rewrite.sh "$base" "$dir/$1.tmab" "$3" "${4:-}" | sed "s/^/$1: /"
	echo "$base" >"$dir/$1.base"
}

run() {
	if [ -f "$dir.tgz" ] && { [ ! -f "$dir/cases.txt" ] || [ "$dir.tgz" -nt "$dir/cases.txt" ]; }; then
		tar -xzf "$dir.tgz" -C "$(dirname "$dir")"
	fi
	nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
	BENCH_SET=skinny BENCH_REPS=${BENCH_REPS:-100} bash scripts/bench-gpu.sh run >"$dir/bench.log" 2>&1
	echo "bench-gpu.sh exit status $?"
	local base rows=() v check
	for v in nomma prefetch abox16 abox1; do
		base=$(cat "$dir/$v.base")
		check=--ref-sample=2
		[ "$v" = nomma ] && check=--no-check
		rows+=("| $v ($(basename "$base" -pipelined-s4.tmab)) | $(TMAC=$tmac bash scripts/ab-bench.sh "$base" "$dir/$v.tmab" "$dir/$v" "$check") |")
	done
	asm
	if [ -n "${OUT:-}" ]; then
		tar -czf "$OUT/asm-skinny.tgz" -C "$dir" asm 2>/dev/null
		cp "$dir/results.json" "$OUT/results-skinny.json" 2>/dev/null
		tar -czf "$OUT/logs-skinny.tgz" -C "$dir" logs bench.log nomma.b.1.log prefetch.b.1.log 2>/dev/null
	fi
	echo
	echo "| variant (bundle) | original | variant | original | variant |"
	echo "|---|---:|---:|---:|---:|"
	printf '%s\n' "${rows[@]}"
	echo
	[ -f "$dir/results.json" ] && python3 bench/gpu/report.py "$dir/results.json" | grep -E '^\| gemm_e4m3' | cut -d'|' -f2-3,7 | sed 's/^/|/;s/$/|/'
}

# asm: tmac's and Triton's code for the K = 4096 shape, in $dir/asm: PTX,
# ptxas's register and spill report and SASS (with the ptxas and nvdisasm
# Triton ships when they are not on the PATH), and Triton's TTGIR.
asm() {
	local a=$dir/asm
	mkdir -p "$a/x"
	add_triton_bin
	tar -xf "$dir/tune/64x4096x4096/64x4096x4096-pipelined-s4.tmab" -C "$a/x" kernels.ptx
	cp "$a/x/kernels.ptx" "$a/tmac.ptx"
	if command -v ptxas >/dev/null; then
		ptxas -arch=sm_90a -v "$a/tmac.ptx" -o "$a/tmac.cubin" >"$a/tmac.ptxas.txt" 2>&1
		command -v nvdisasm >/dev/null && nvdisasm -c "$a/tmac.cubin" >"$a/tmac.sass" 2>&1
	else
		echo "no ptxas (PATH $PATH)" >"$a/tmac.ptxas.txt"
	fi
	rm -rf "$a/x"
	PATH=$PATH timeout 120 python3 bench/gpu/triton_asm.py --m 64 --n 4096 --k 4096 --config 64,64,256,8,4,4 -o "$a/triton" >"$a/triton.log" 2>&1
	ls -la "$a" "$a/triton" >"$a/ls.txt" 2>&1
}

case ${1:-} in
build) build ;;
run) run ;;
*) echo "usage: scripts/gpu-skinny.sh build|run" >&2; exit 2 ;;
esac
