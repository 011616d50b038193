#!/usr/bin/env bash
# `make run`: build tmac, compile examples/saxpy.tma to PTX for sm_90a and
# show the start of it. Running kernels on the GPU (`tmac run`) arrives in
# step 4; on a machine with a GPU this runs scripts/gpu-check.sh when it
# exists, or says so.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=/usr/local/go/bin:$PATH CGO_ENABLED=0
example=examples/saxpy.tma
out=build/saxpy.ptx
echo "== go build -o build/tmac ./cmd/tmac"
go build -o build/tmac ./cmd/tmac
echo "== build/tmac compile $example -o $out"
build/tmac compile "$example" -o "$out"
echo "== the PTX ($(wc -l <"$out") lines), from the top of the kernel:"
grep -E '^\.(version|target|address_size)' "$out"
sed -n '/\.visible \.entry/,$p' "$out" | head -32
echo "   ..."
echo "== PTX written to $out"
echo "   (also: build/tmac compile $example --emit=llvm -o -   for the LLVM IR,"
echo "          build/tmac compile $example --emit=bundle -o build/saxpy.tmab   for a bundle)"
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
	echo "== GPU found: $(nvidia-smi -L | head -1)"
	if [ -x scripts/gpu-check.sh ]; then
		scripts/gpu-check.sh
	else
		echo "== running kernels (tmac run) arrives in step 4; the PTX above is ready for the CUDA driver."
	fi
else
	echo "== no GPU on this machine: nothing to run (tmac run arrives in step 4)."
fi
