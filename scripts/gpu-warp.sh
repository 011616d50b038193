#!/usr/bin/env bash
# The gpu dialect's warp and block collectives on the GPU (issue 16): the
# emulator test lit-tests/emu/gpu-warp.tma, whose @reference computes every
# floating-point reduction in the order the lowering combines the lanes,
# run on the GPU with an exact check (--rtol 0 --atol 0). PASS on every
# output means the GPU computes the documented order bit for bit (as the
# emulator does); FAIL points at the op whose order differs.
#
#   scripts/gpu-warp.sh build   # here (llc): build/gpu/gpu-warp.tmab and build/tmac
#   scripts/gpu-warp.sh check   # there (GPU): the bundle under three input seeds
set -u -o pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in
build)
	CGO_ENABLED=0 go build -o build/tmac ./cmd/tmac || exit 1
	mkdir -p build/gpu
	build/tmac compile lit-tests/emu/gpu-warp.tma --emit=bundle -o build/gpu/gpu-warp.tmab || exit 1
	ls -l build/gpu/gpu-warp.tmab
	;;
check)
	nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
	rc=0
	for seed in 0 3 11; do
		echo "== seed $seed"
		timeout 120 build/tmac run build/gpu/gpu-warp.tmab --rtol 0 --atol 0 --seed "$seed" || rc=1
	done
	echo "gpu-warp check exit $rc"
	exit $rc
	;;
*)
	echo "usage: scripts/gpu-warp.sh build|check" >&2
	exit 2
	;;
esac
