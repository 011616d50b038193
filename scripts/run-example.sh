#!/usr/bin/env bash
# `make run`: build tmac, compile examples/saxpy.tma to PTX for sm_90a and
# show the start of it. On a machine with a GPU it also builds and runs the
# GPU check (scripts/gpu-build.sh, scripts/gpu-check.sh): every example and
# test kernel, checked against CPU references, and runs the example with
# `build/tmac run examples/saxpy.tma --bench`. Without a GPU it runs the
# pipelined add (examples/add_pipelined.tma: TMA loads, mbarriers, TMA
# stores) on the CPU emulator (tmac run --target=emu) and checks it.
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
	# tmac run launches the example; the GPU check then runs every GPU
	# test program with tmac run against its @reference.
	echo "== build/tmac run $example --bench"
	build/tmac run "$example" --bench
	scripts/gpu-build.sh
	scripts/gpu-check.sh
else
	echo "== no GPU on this machine: running the pipelined add on the CPU emulator instead"
	echo "== build/tmac run examples/add_pipelined.tma --target=emu"
	build/tmac run examples/add_pipelined.tma --target=emu
fi
