#!/usr/bin/env bash
# A/B trials of PTX changes on tuned GEMM bundles (issue 20): each trial
# is a bundle and a sed script applied to its kernels.ptx; the original and
# the rewritten bundle run twice each, interleaved (A B A B), with
# `tmac run --bench` (the check against @reference, then CUDA-event
# timings queued behind a GPU spin), and the table of medians comes last.
#
#   scripts/gpu-gemm-trial.sh build   # here: build/gpu/trial (carry build/tmac and build/gpu/trial)
#   scripts/gpu-gemm-trial.sh run     # on the GPU machine
#   scripts/gpu-gemm-trial.sh asm     # on the GPU machine: the code side by side
#
# asm writes to $OUT (or build/gpu/trial/asm): the SASS of each trial's
# original bundle (ptxas + cuobjdump) and what Triton generates for seed
# 002's FP8 kernel at M = 64 and 16, N = K = 4096, in the configuration
# that beat tmac there (bench/gpu/triton_asm.py): PTX, TTGIR, SASS.
#
# TRIALS below: name|bundle|sed script. The bundles come from the tuned
# sets of scripts/bench-gpu.sh (build them first).
set -u -o pipefail
cd "$(dirname "$0")/.."
dir=build/gpu/trial
tmac=${TMAC:-build/tmac}
# try_wait.parity without its suspend-time hint (tmac passes 10^7 ns, as
# upstream's nvgpu ops take it; Triton passes none).
nohint='s/\(mbarrier\.try_wait\.parity\.shared\.b64 [^,]*, \[[^]]*\], [^,;]*\), [^;]*;/\1;/'
# prefetch.tensormap of every tensor map at kernel entry (CUTLASS does it;
# seed 002 names it among CUTLASS's advantages), after each cvta.param.
prefetch='s/^\(\s*cvta\.param\.u64\s*\)\(%rd[0-9]*\)\(, %rd[0-9]*;\)$/&\n\tprefetch.tensormap [\2];/'
TRIALS=(
	"fp8t64_nohint|build/gpu/bench-fp8/tune/gemm_e4m3tensor_64x4096x4096/t64x32k256/t64x32k256-pipelined-s6.tmab|$nohint"
	"fp8t16_nohint|build/gpu/bench-fp8/tune/gemm_e4m3tensor_16x4096x4096/t64x64/t64x64-pipelined-s6.tmab|$nohint"
	"fp8t1024_nohint|build/gpu/bench-fp8/tune/gemm_e4m3tensor_1024x4096x4096/coop256tma/coop256tma-ws-s3.tmab|$nohint"
	"fp8t4096_nohint|build/gpu/bench-fp8/tune/gemm_e4m3tensor_4096x4096x4096/coop256tma/coop256tma-ws-s3.tmab|$nohint"
	"bf16_64_nohint|build/gpu/bench-llm/tune/gemm_bf16_64x4096x4096/t64x64/t64x64-pipelined-s12.tmab|$nohint"
	"fp8t64_prefetch|build/gpu/bench-fp8/tune/gemm_e4m3tensor_64x4096x4096/t64x32k256/t64x32k256-pipelined-s6.tmab|$prefetch"
	"fp8t16_prefetch|build/gpu/bench-fp8/tune/gemm_e4m3tensor_16x4096x4096/t64x64/t64x64-pipelined-s6.tmab|$prefetch"
	"bf16_64_prefetch|build/gpu/bench-llm/tune/gemm_bf16_64x4096x4096/t64x64/t64x64-pipelined-s12.tmab|$prefetch"
)

build() {
	set -e
	rm -rf "$dir" && mkdir -p "$dir"
	for t in "${TRIALS[@]}"; do
		IFS='|' read -r name bundle script <<<"$t"
		cp "$bundle" "$dir/$name.a.tmab"
		bash scripts/bundle-rewrite.sh "$bundle" "$dir/$name.b.tmab" "$script" | sed "s/^/$name: /"
		echo "$name" >>"$dir/trials.txt"
	done
}

run() {
	local rows=() name
	while read -r name; do
		rows+=("| $name | $(TMAC=$tmac bash scripts/ab-bench.sh "$dir/$name.a.tmab" "$dir/$name.b.tmab" "$dir/$name" --ref-sample 2) |")
	done <"$dir/trials.txt"
	echo "| trial | original | rewritten | original | rewritten |"
	echo "|---|---:|---:|---:|---:|"
	printf '%s\n' "${rows[@]}"
}

asm() {
	local out=${OUT:-$dir/asm} name
	mkdir -p "$out"
	while read -r name; do
		mkdir -p "$out/x" && tar -xf "$dir/$name.a.tmab" -C "$out/x" kernels.ptx
		cp "$out/x/kernels.ptx" "$out/$name.ptx"
		if command -v ptxas >/dev/null && command -v cuobjdump >/dev/null; then
			ptxas -arch=sm_90a -v "$out/x/kernels.ptx" -o "$out/x/k.cubin" 2>"$out/$name.ptxas.txt" &&
				cuobjdump -sass "$out/x/k.cubin" >"$out/$name.sass"
		fi
		rm -rf "$out/x"
	done <"$dir/trials.txt"
	for m in 64 16; do
		timeout 120 python3 bench/gpu/triton_asm.py --m $m --n 4096 --k 4096 --config 64,64,256,8,4,4 -o "$out/triton-m$m" ||
			echo "triton_asm.py failed for M = $m" >&2
	done
	ls -la "$out"
}

case ${1:-} in
build) build ;;
run) run ;;
asm) asm ;;
*) echo "usage: scripts/gpu-gemm-trial.sh build|run|asm" >&2; exit 2 ;;
esac
