#!/usr/bin/env bash
# Profiles the first kernel launch of each given bundle with Nsight Compute
# (on the GPU machine): speed of light, compute pipes, warp stall reasons,
# occupancy. Full reports go to $OUT (or build/gpu/profile); a short
# summary of the key lines is printed.
#
#   scripts/gpu-profile.sh build/gpu/sweep/gemm_s3.tmab [...]
set -u -o pipefail
cd "$(dirname "$0")/.."
out=${OUT:-build/gpu/profile}
mkdir -p "$out"
ncu=$(command -v ncu || ls /usr/local/cuda*/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
if [ -z "$ncu" ]; then echo "no ncu on this machine" >&2; exit 3; fi
for b in "$@"; do
	name=$(basename "$b" .tmab)
	timeout 120 "$ncu" --target-processes all -c 1 \
		--section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats \
		--section Occupancy --section LaunchStats --section MemoryWorkloadAnalysis \
		build/tmac run "$b" --no-check >"$out/$name.ncu.txt" 2>&1
	echo "== $name (exit $?)"
	grep -E "Duration|Compute \(SM\) Throughput|Memory Throughput|L2 Cache Throughput|DRAM Throughput|Achieved Occupancy|Registers Per Thread|Executed Ipc Active|Issue Slots Busy|Warp Cycles Per Issued Instruction|Stall|Tensor|Block Limit|Dynamic Shared" "$out/$name.ncu.txt" | sed 's/  */ /g' | head -30
done
