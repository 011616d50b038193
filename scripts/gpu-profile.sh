#!/usr/bin/env bash
# Profiles the first kernel launch of each given bundle with Nsight Compute
# (on the GPU machine): speed of light, compute pipes, warp stall reasons,
# occupancy; and the kernel's code: ptxas -v (registers, spills, warnings)
# and counts of SASS instructions that matter (HGMMA, local memory, barrier
# waits) from cuobjdump. Clocks are left as they are (--clock-control
# none). PROFILE_TORCH="bf16:4096" also profiles torch.matmul (cuBLAS) on
# that shape for comparison. Full reports go to $OUT (or
# build/gpu/profile); a short summary is printed.
#
#   scripts/gpu-profile.sh build/gpu/sweep/gemm_s3.tmab [...]
set -u -o pipefail
cd "$(dirname "$0")/.."
out=${OUT:-build/gpu/profile}
mkdir -p "$out"
ncu=$(command -v ncu || ls /usr/local/cuda*/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
if [ -z "$ncu" ]; then echo "no ncu on this machine" >&2; exit 3; fi
sections=(--section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats
	--section Occupancy --section LaunchStats --section MemoryWorkloadAnalysis --section SchedulerStats)
summary() {
	grep -E "Duration|Compute \(SM\) Throughput|Memory Throughput|L2 Cache Throughput|DRAM Throughput|Achieved Occupancy|Registers Per Thread|Executed Ipc Active|Issue Slots Busy|Warp Cycles Per Issued Instruction|Stall|Tensor|Block Limit|Dynamic Shared|SM Frequency|No Eligible" "$1" | sed 's/  */ /g' | head -30
}
for b in "$@"; do
	name=$(basename "$b" .tmab)
	timeout 180 "$ncu" --clock-control none --target-processes all -c 1 "${sections[@]}" \
		build/tmac run "$b" --no-check >"$out/$name.ncu.txt" 2>&1
	echo "== $name (exit $?)"
	summary "$out/$name.ncu.txt"
	# The code: the bundle's PTX through ptxas and cuobjdump.
	tmp=$(mktemp -d)
	if tar -xf "$b" -C "$tmp" kernels.ptx 2>/dev/null && ptxas -arch=sm_90a -v "$tmp/kernels.ptx" -o "$tmp/k.cubin" >"$tmp/ptxas.txt" 2>&1; then
		grep -E "registers|spill|arning" "$tmp/ptxas.txt" | sed 's/^/  ptxas: /' | head -6
		cuobjdump -sass "$tmp/k.cubin" >"$out/$name.sass" 2>&1
		for ins in HGMMA WARPGROUP.ARRIVE WARPGROUP.DEPBAR LDL STL SYNCS BAR UTMALDG UTMASTG STG.E; do
			printf '  sass %-18s %s\n' "$ins" "$(grep -c "$ins" "$out/$name.sass")"
		done
	else
		echo "  (no ptxas/cuobjdump result)"
	fi
	rm -rf "$tmp"
done
if [ -n "${PROFILE_TORCH:-}" ]; then
	IFS=: read -r dt size <<<"$PROFILE_TORCH"
	cat >/tmp/torch_mm.py <<EOF
import torch
a = torch.randn($size, $size, device="cuda").to(torch.$( [ "$dt" = bf16 ] && echo bfloat16 || echo float16 ))
b = torch.randn($size, $size, device="cuda").to(a.dtype)
for _ in range(3):
    c = torch.matmul(a, b)
torch.cuda.synchronize()
EOF
	timeout 180 "$ncu" --clock-control none --target-processes all -k 'regex:gemm|sm90|cutlass|nvjet' -s 2 -c 1 "${sections[@]}" \
		python3 /tmp/torch_mm.py >"$out/torch_${dt}_${size}.ncu.txt" 2>&1
	echo "== torch.matmul $dt ${size}^3 (exit $?)"
	grep -E "^  [a-z_0-9]+.*\(" "$out/torch_${dt}_${size}.ncu.txt" | head -2
	summary "$out/torch_${dt}_${size}.ncu.txt"
fi
