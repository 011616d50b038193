#!/usr/bin/env bash
# `make run`: compile the example and, when a GPU is present, run it.
# Today tmac implements the front end (parse, verify, passes, print); PTX
# generation (`tmac compile`) and GPU execution (`tmac run`) arrive in the
# next steps, so this shows the verified and canonicalized example and says
# what it would do next.
set -euo pipefail
cd "$(dirname "$0")/.."
example=examples/tma_copy.tma
echo "== tmac opt $example --canonicalize --cse"
build/tmac opt "$example" --canonicalize --cse
echo
if build/tmac compile "$example" -o build/tma_copy.ptx 2>/dev/null; then
	echo "== compiled to build/tma_copy.ptx"
else
	echo "== tmac compile is not implemented yet (device code generation is the next step); showing the verified IR above."
fi
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
	echo "== GPU found: $(nvidia-smi -L | head -1)"
	build/tmac run "$example" || echo "== tmac run is not implemented yet."
else
	echo "== no GPU on this machine: nothing to run."
fi
