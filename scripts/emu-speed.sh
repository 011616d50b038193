#!/usr/bin/env bash
# Measures the CPU emulator on issue 8's two speed targets, three runs
# each, and prints a table: the chapter-4 GEMM (examples/
# seed004_gemm_multistage.tma, 512x256x1024, 7 stages; target < 15 s)
# and the pipelined add at 1024x1024 (examples/add_pipelined.tma shrunk;
# target < 5 s). "emulated" is tmac run's own line (the kernels alone);
# "total" is the whole command, with the CPU reference and the check.
set -euo pipefail
cd "$(dirname "$0")/.."
make -s build
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sed 's/8192x4096/1024x1024/g; s/%rows = arith.constant 8192/%rows = arith.constant 1024/; s/%cols = arith.constant 4096/%cols = arith.constant 1024/; s/%h256 = arith.constant 256/%h256 = arith.constant 32/; s/%lgy = %h4/%lgy = %h1/' \
	examples/add_pipelined.tma > "$tmp/add_1024.tma"
median() { sort -n | sed -n 2p; }
printf '%-32s %14s %12s\n' kernel "emulated (s)" "total (s)"
for f in examples/seed004_gemm_multistage.tma "$tmp/add_1024.tma"; do
	emus=() totals=()
	for i in 1 2 3; do
		start=$(date +%s.%N)
		out=$(build/tmac run "$f" --target=emu)
		end=$(date +%s.%N)
		grep -q '^PASS' <<<"$out" || { echo "$out"; echo "emu-speed: $f did not pass" >&2; exit 1; }
		emus+=("$(sed -n 's/^emulated @[^ ]* in \([0-9.]*\) s$/\1/p' <<<"$out")")
		totals+=("$(echo "$end - $start" | bc)")
	done
	printf '%-32s %14s %12.2f\n' "$(basename "$f")" "$(printf '%s\n' "${emus[@]}" | median)" "$(printf '%s\n' "${totals[@]}" | median)"
done
