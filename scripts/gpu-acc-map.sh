#!/usr/bin/env bash
# Issue 18, tmac.warpgroup.acc.map on the GPU: the emulator tests' programs
# (lit-tests/emu/acc-map.tma: two accumulators, a row/column mask and a
# row - col term, erf GELU, a map of a map; acc-map-rows.tma: a rows
# operand from acc.reduce; acc-map-cols.tma: two cols operands from
# acc.load_cols, one partly outside its memref) run on the GPU against
# their @reference under several input seeds: an element, row or column
# value in the wrong register fails the check. (The tests' own, tighter
# tolerances are for the emulator; here each output gets tmac run's
# default.) The fused-epilogue GEMM example's GPU run and its comparison
# with cuBLASLt are in bench/gpu/gemm_bias_gelu.py's docstring.
#
#   scripts/gpu-acc-map.sh build   # here (llc): build/tmac and the bundles in build/gpu-acc-map
#   scripts/gpu-acc-map.sh run     # there (GPU; build/tmac and build/gpu-acc-map carried)
#
# Exit status 0 when every run printed PASS.
GPU_BUNDLES=build/gpu-acc-map GPU_TESTS="acc-map acc-map-rows acc-map-cols" \
	exec "$(dirname "$0")/gpu-mma-rs.sh" "$@"
