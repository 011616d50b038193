#!/usr/bin/env bash
# Issue 18, the rows ops on the GPU: tmac.warpgroup.acc.reduce (max and
# sum: per-thread combines, shfl.sync.bfly across the quad), rows.store,
# rows.map with rows values carried by scf.for, and acc.load_rows /
# load_cols added to an accumulator by acc.map. The emulator tests'
# programs (lit-tests/emu/acc-rows-*.tma) run on the GPU against their
# @reference under several input seeds: a wrong rows/cols layout, shuffle
# or bounds test fails the check. (The tests' own, tighter tolerances are
# for the emulator; here each output gets tmac run's default.)
#
#   scripts/gpu-rows.sh build   # here (llc): build/tmac and the bundles in build/gpu-rows
#   scripts/gpu-rows.sh run     # there (GPU; build/tmac and build/gpu-rows carried)
#
# Exit status 0 when every run printed PASS.
GPU_BUNDLES=build/gpu-rows GPU_TESTS="acc-rows-reduce acc-rows-reduce-nan acc-rows-loop acc-rows-load" \
	exec "$(dirname "$0")/gpu-mma-rs.sh" "$@"
