#!/usr/bin/env bash
# Issue 18 on the GPU: row softmax, RMSNorm and LayerNorm (examples/softmax.tma,
# rmsnorm_vec.tma, layernorm.tma; f32, and bf16 from examples/variants) at
# 4096x4096, 8192x8192 and 32768x4096, each checked against its @reference
# and timed by `tmac run --bench`, against torch (torch.softmax,
# F.rms_norm, F.layer_norm) and the device-to-device copy of the same
# shape and dtype (bench/gpu/norms.py), every result as a fraction of that
# copy's bandwidth (target: 0.85). Variants are timed too, at the shapes
# that test a question (KERNELS below): layernorm with one barrier
# (examples/variants/layernorm_1pass.tma, layernorm_bf16_1pass.tma), also
# with w and b loaded after it (layernorm_1pass_latewb.tma), bf16 RMSNorm
# with 32 values a thread (rmsnorm_vec_bf16_32pt.tma), softmax with 8 and
# 32 values a thread (softmax_8pt.tma, softmax_32pt.tma).
#
#   scripts/gpu-norms.sh build   # here (llc): build/tmac and the bundles in build/gpu-norms
#   scripts/gpu-norms.sh run     # there (GPU, no llc; build/tmac and build/gpu-norms carried):
#                                #   logs in build/gpu-norms/run, the table last (also in summary.md)
#
# The run stops starting steps after RUN_BUDGET seconds (default 450, so
# the whole run stays under 8 minutes); each step has its own timeout, and
# a step that fails, times out or is skipped is reported as such while the
# rest still run. Exit status 0 when every step passed.
set -u -o pipefail
cd "$(dirname "$0")/.."
# op|dtype|bundle|shapes (the bundle built from the example or variant of
# the same name), in the order they run: the run stops starting steps
# when its budget is spent, so the questions come first, each variant
# next to its baseline at the same shape. (1) layernorm f32 at 8192x8192
# (0.79 of the copy before the example loaded w and b after its
# reductions, 0.94 since; rmsnorm 0.96): the one-barrier reduction
# (layernorm_1pass), and with w and b after it (layernorm_1pass_latewb)
# against the example; (2) layernorm bf16 (not
# measured yet at 8192x8192 and 32768x4096), with its one-barrier form;
# (3) bf16 below f32 (rmsnorm 0.71/0.76 against 0.82/0.96): 32 values a
# thread, the 64 bytes of x in flight an f32 thread has
# (rmsnorm_vec_bf16_32pt); (4) the 4096x4096 rows at 0.71-0.82: the
# one-barrier layernorm there, and softmax with 512 threads a row
# (softmax_8pt) and 128 (softmax_32pt) instead of 256; then the rest of
# the table.
KERNELS=(
	"layernorm|f32|layernorm|8192x8192"
	"layernorm_1pass|f32|layernorm_1pass|8192x8192"
	"layernorm_1pass_latewb|f32|layernorm_1pass_latewb|8192x8192"
	"layernorm|bf16|layernorm_bf16|8192x8192"
	"layernorm_1pass|bf16|layernorm_bf16_1pass|8192x8192"
	"rmsnorm|bf16|rmsnorm_vec_bf16|4096x4096"
	"rmsnorm_32pt|bf16|rmsnorm_vec_bf16_32pt|4096x4096"
	"rmsnorm|bf16|rmsnorm_vec_bf16|8192x8192"
	"rmsnorm_32pt|bf16|rmsnorm_vec_bf16_32pt|8192x8192"
	"layernorm|bf16|layernorm_bf16|4096x4096"
	"layernorm_1pass|bf16|layernorm_bf16_1pass|4096x4096"
	"layernorm_1pass|f32|layernorm_1pass|4096x4096"
	"softmax_8pt|f32|softmax_8pt|4096x4096"
	"softmax_32pt|f32|softmax_32pt|4096x4096"
	"layernorm|bf16|layernorm_bf16|32768x4096"
	"layernorm_1pass|bf16|layernorm_bf16_1pass|32768x4096"
	"layernorm|f32|layernorm|4096x4096 32768x4096"
	"layernorm_1pass|f32|layernorm_1pass|32768x4096"
	"rmsnorm|bf16|rmsnorm_vec_bf16|32768x4096"
	"rmsnorm_32pt|bf16|rmsnorm_vec_bf16_32pt|32768x4096"
	"softmax|bf16|softmax_bf16|8192x8192 4096x4096 32768x4096"
	"softmax|f32|softmax|4096x4096 8192x8192 32768x4096"
	"rmsnorm|f32|rmsnorm_vec|4096x4096 8192x8192 32768x4096"
	"softmax_8pt|f32|softmax_8pt|8192x8192 32768x4096"
	"softmax_32pt|f32|softmax_32pt|8192x8192 32768x4096"
)
dir=build/gpu-norms

# shapes OP RxN: the example's --shape flags (x, then w and b, then y).
shapes() {
	local n=${2#*x}
	case $1 in
	softmax*) echo "--shape arg0=$2 --shape arg1=$2" ;;
	rmsnorm*) echo "--shape arg0=$2 --shape arg1=$n --shape arg2=$2" ;;
	layernorm*) echo "--shape arg0=$2 --shape arg1=$n --shape arg2=$n --shape arg3=$2" ;;
	esac
}

case "${1:-}" in
build)
	export CGO_ENABLED=0
	go build -o build/tmac ./cmd/tmac || exit 1
	rm -rf "$dir" && mkdir -p "$dir"
	for k in "${KERNELS[@]}"; do
		IFS='|' read -r _ _ b _ <<<"$k"
		[ -f "$dir/$b.tmab" ] && continue
		src=examples/$b.tma
		[ -f "$src" ] || src=examples/variants/$b.tma
		build/tmac compile "$src" --emit=bundle -o "$dir/$b.tmab" || exit 1
	done
	git rev-parse --short HEAD >"$dir/COMMIT" 2>/dev/null
	du -sh "$dir" build/tmac
	;;
run)
	. scripts/gpu-steps.sh
	run_setup gpu-norms.sh 450
	rows=()
	failed=0
	TAIL=4

	# 1. torch and the copies (first, so the copy bandwidth is there
	# whatever else runs out of time).
	step torch 180 "$python" bench/gpu/norms.py measure --reps "${NORMS_REPS:-50}" --warmup 10 ${NORMS_SHAPES:+--shapes "$NORMS_SHAPES"}
	v=$(verdict $rc)
	[ "$v" = PASS ] || failed=$((failed + 1))
	rows+=("| torch peers and copies (norms.py measure) | $v | $(grep -c '^norms: ' "$out/torch.log" 2>/dev/null) results |")

	# 1b. Registers and spills of each kernel (ptxas -v on the bundle's
	# PTX, sm_90a), where a ptxas is found (PATH, CUDA_HOME, or the one
	# triton ships): occupancy is the first suspect for layernorm's gap at
	# 8192 columns (512 threads a block; over 64 registers a thread leave
	# one block an SM).
	ptxas=$(command -v ptxas || ls "${CUDA_HOME:-/usr/local/cuda}/bin/ptxas" 2>/dev/null ||
		"$python" -c 'import os, triton; print(os.path.join(os.path.dirname(triton.__file__), "backends/nvidia/bin/ptxas"))' 2>/dev/null)
	if [ -n "$ptxas" ] && [ -x "$ptxas" ]; then
		for t in "$dir"/*.tmab; do
			b=$(basename "$t" .tmab)
			tar -xOf "$t" kernels.ptx >"$out/$b.ptx" 2>/dev/null &&
				regs=$("$ptxas" -arch=sm_90a -v "$out/$b.ptx" -o /dev/null 2>&1 | grep -oE 'Used [0-9]+ registers|[0-9]+ bytes spill (stores|loads)' | paste -sd, -)
			echo "registers: $b: ${regs:-ptxas failed}" | tee -a "$out/registers.txt"
		done
	else
		echo "registers: no ptxas found" | tee "$out/registers.txt"
	fi

	# 2. tmac: each bundle at each shape, checked and timed; the queued
	# median (launch latency hidden, as torch is timed) goes to the table.
	: >"$out/tmac.txt"
	for k in "${KERNELS[@]}"; do
		IFS='|' read -r op dt b sizes <<<"$k"
		for s in $sizes; do
			name=tmac-$b-$s
			# shellcheck disable=SC2046 # the flags are words
			step "$name" 60 "$tmac" run "$dir/$b.tmab" --bench --reps 50 --warmup 5 $(shapes "$op" "$s")
			v=$(verdict $rc)
			log=$out/$name.log
			[ "$v" = PASS ] && grep -q '^FAIL' "$log" && v=FAIL
			[ "$v" = PASS ] || failed=$((failed + 1))
			us=$(grep -m1 'kernels queued' "$log" 2>/dev/null | grep -oE 'median [0-9.]+ us' | grep -oE '[0-9.]+')
			bytes=$(grep -m1 -oE '[0-9]+ bytes;' "$log" 2>/dev/null | grep -oE '[0-9]+')
			[ "$v" = PASS ] && [ -n "$us" ] && [ -n "$bytes" ] &&
				echo "norms: tmac $op $dt $s us=$us bytes=$bytes" >>"$out/tmac.txt"
			rows+=("| tmac $b $s | $v | $(grep -m1 -oE '^(PASS|FAIL) arg[0-9]+[^(]*' "$log" 2>/dev/null) |")
		done
	done

	{
		echo "== steps ($((SECONDS - start)) s)"
		echo "| step | result | notes |"
		echo "|---|---|---|"
		printf '%s\n' "${rows[@]}"
		echo
		echo "== bandwidth (tmac: kernels queued median; torch: events around each call, queued; fraction: of the copy's TB/s at the same shape and dtype)"
		"$python" bench/gpu/norms.py report "$out/torch.log" "$out/tmac.txt"
		echo
		echo "== registers a thread (ptxas -v, sm_90a)"
		cat "$out/registers.txt"
	} >"$out/summary.md"
	cat "$out/summary.md"
	[ "$failed" -eq 0 ]
	;;
*)
	echo "usage: scripts/gpu-norms.sh build|run" >&2
	exit 2
	;;
esac
