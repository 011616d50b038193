#!/usr/bin/env bash
# `make bench-compile`: how fast tmac compiles the 128x128x64 GEMM kernel
# (examples/gemm_smem.tma), against llc alone and upstream MLIR.
#
#   scripts/bench-compile.sh [FILE]      N=21 runs each by default (N=...)
#
# Rows (medians of N runs, wall-clock):
#   front end      parse -> verify -> passes -> LLVM IR text, in-process
#                  (go test -bench BenchmarkCompileGEMM, bench/compile_test.go)
#   --emit=llvm    the same through the tmac binary (process start included)
#   tmac compile   the whole command, PTX out (llc included), with and
#                  without the cached llc version check (TMAC_NO_LLC_CACHE)
#   llc alone      llc -march=nvptx64 -mcpu=sm_90a -O3 on the same .ll
#   mlir-opt-22    upstream -gpu-lower-to-nvvm-pipeline on the same input
# Targets: front end < 20 ms; tmac compile total <= 1.5x llc alone.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=/usr/local/go/bin:$PATH CGO_ENABLED=0
LLVM_BIN=${LLVM_BIN:-/usr/lib/llvm-22/bin}
N=${N:-21}
in=${1:-examples/gemm_smem.tma}
llc=$LLVM_BIN/llc
mlir_opt=$(command -v mlir-opt-22 || echo "$LLVM_BIN/mlir-opt")
go build -o build/tmac ./cmd/tmac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

median() { sort -n | awk '{v[NR]=$1} END {if (NR==0) exit 1; m=(NR%2)?v[(NR+1)/2]:(v[NR/2]+v[NR/2+1])/2; printf "%.2f", m}'; }
# runs CMD... N times (after one warm-up run), prints the median in ms;
# fails if the command does.
time_ms() {
	"$@" >/dev/null 2>"$tmp/err" || return 1
	local i s e
	for ((i = 0; i < N; i++)); do
		s=$(date +%s%N)
		"$@" >/dev/null 2>&1
		e=$(date +%s%N)
		echo $(((e - s) / 1000))
	done | awk '{print $1/1000}' | median
}

# Front end in-process: one ns/op line per -count.
fe=$(go test ./bench -run '^$' -bench BenchmarkCompileGEMM -benchtime 20x -count "$N" |
	awk '/^BenchmarkCompileGEMM/ {print $3/1e6}' | median)
build/tmac compile "$in" --emit=llvm -o "$tmp/k.ll"
emit_llvm=$(time_ms build/tmac compile "$in" --emit=llvm -o "$tmp/k2.ll")
total=$(time_ms build/tmac compile "$in" -o "$tmp/k.ptx")
total_nc=$(time_ms env TMAC_NO_LLC_CACHE=1 build/tmac compile "$in" -o "$tmp/k.ptx")
llc_alone=$(time_ms "$llc" -march=nvptx64 -mcpu=sm_90a -O3 "$tmp/k.ll" -o "$tmp/llc.ptx")
if upstream=$(time_ms "$mlir_opt" "$in" '-gpu-lower-to-nvvm-pipeline=cubin-chip=sm_90a cubin-features=+ptx80 cubin-format=isa' -o "$tmp/up.mlir"); then
	up_ratio=$(awk -v a="$upstream" -v b="$total" 'BEGIN {printf "%.2fx tmac compile", a/b}')
else
	upstream="rejected"
	up_ratio="($(head -1 "$tmp/err"))"
fi
ratio=$(awk -v a="$total" -v b="$llc_alone" 'BEGIN {printf "%.2f", a/b}')
fe_ok=$(awk -v a="$fe" 'BEGIN {print (a < 20) ? "ok (< 20 ms)" : "SLOW (target < 20 ms)"}')
ratio_ok=$(awk -v a="$ratio" 'BEGIN {print (a <= 1.5) ? "ok (<= 1.5)" : "SLOW (target <= 1.5)"}')

echo "input: $in ($(wc -l <"$in") lines), $N runs each, median wall-clock"
echo "machine: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
printf '| %-52s | %12s | %s\n' "what" "ms" "note"
printf '|%s|%s|%s\n' "------------------------------------------------------" "--------------" "------"
printf '| %-52s | %12s | %s\n' "tmac front end, in-process (parse -> LLVM IR text)" "$fe" "$fe_ok"
printf '| %-52s | %12s | %s\n' "tmac compile --emit=llvm (process)" "$emit_llvm" ""
printf '| %-52s | %12s | %s\n' "tmac compile (total, PTX, llc included)" "$total" ""
printf '| %-52s | %12s | %s\n' "  same, llc version check not cached" "$total_nc" "(an extra llc --version, run concurrently)"
printf '| %-52s | %12s | %s\n' "llc -O3 alone on the same .ll" "$llc_alone" ""
printf '| %-52s | %12s | %s\n' "ratio tmac compile / llc alone" "$ratio" "$ratio_ok"
printf '| %-52s | %12s | %s\n' "mlir-opt-22 -gpu-lower-to-nvvm-pipeline (sm_90a, isa)" "$upstream" "$up_ratio"
