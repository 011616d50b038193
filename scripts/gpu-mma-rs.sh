#!/usr/bin/env bash
# Issue 18, design item 7 on the GPU: wgmma with A in registers
# (tmac.warpgroup.acc.to_operand + tmac.warpgroup.mma, the RS form of
# wgmma.mma_async). The emulator tests' programs (lit-tests/emu/mma-rs.tma:
# bf16, M = 128, N-major V; mma-rs-f16.tma: f16, K-major V, N = 128, two
# chained mmas; mma-rs-pipelined.tma: a 2-stage tile loop) run on the GPU
# against their @reference, under several input seeds: a wrong A register
# layout or RS operand order fails the check.
#
#   scripts/gpu-mma-rs.sh build   # here (llc): build/tmac and the bundles in build/gpu-mma-rs
#   scripts/gpu-mma-rs.sh run     # there (GPU; build/tmac and build/gpu-mma-rs carried)
#
# Exit status 0 when every run printed PASS.
set -u -o pipefail
cd "$(dirname "$0")/.."
# GPU_BUNDLES and GPU_TESTS let another check reuse this one for its own
# emulator tests (scripts/gpu-rows.sh).
dir=${GPU_BUNDLES:-build/gpu-mma-rs}
TESTS=${GPU_TESTS:-"mma-rs mma-rs-f16 mma-rs-pipelined"}

case "${1:-}" in
build)
	export CGO_ENABLED=0
	go build -o build/tmac ./cmd/tmac || exit 1
	rm -rf "$dir" && mkdir -p "$dir"
	for t in $TESTS; do
		build/tmac compile "lit-tests/emu/$t.tma" --emit=bundle -o "$dir/$t.tmab" || exit 1
	done
	git rev-parse --short HEAD >"$dir/COMMIT" 2>/dev/null
	;;
run)
	tmac=${TMAC:-build/tmac}
	[ -x "$tmac" ] || { echo "no $tmac: run scripts/gpu-mma-rs.sh build first" >&2; exit 2; }
	echo "GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1); commit $(cat "$dir/COMMIT" 2>/dev/null || echo unknown)"
	failed=0
	for t in $TESTS; do
		for seed in 0 1 2; do
			out=$(timeout 60 "$tmac" run "$dir/$t.tmab" --seed=$seed 2>&1)
			if grep -q '^PASS' <<<"$out" && ! grep -q '^FAIL' <<<"$out"; then
				echo "PASS $t seed $seed: $(grep -m1 '^PASS' <<<"$out")"
			else
				echo "FAIL $t seed $seed:"
				tail -5 <<<"$out"
				failed=$((failed + 1))
			fi
		done
	done
	[ "$failed" -eq 0 ]
	;;
*)
	echo "usage: scripts/gpu-mma-rs.sh build|run" >&2
	exit 2
	;;
esac
