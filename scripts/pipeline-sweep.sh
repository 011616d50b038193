#!/usr/bin/env bash
# Stage sweep of the simple tile-loop examples (tma-pipeline, step 5).
#
#   scripts/pipeline-sweep.sh build   # here, where llc is: bundles into build/gpu/sweep
#   scripts/pipeline-sweep.sh run     # on the GPU machine: runs them, prints a table
#
# build: examples/gemm_pipelined.tma (M=N=K=4096) and examples/add_pipelined.tma
# (8192x4096 f32) with their `tmac.stages` attribute set to 1..7 (sed on the
# source, written to build/gpu/sweep/src), compiled with the default pipeline
# to `tmac run` bundles; the hand-written chapter-4 GEMM at 4096
# (examples/variants/seed004_gemm_multistage_4096.tma) as the baseline; and
# small correctness variants: the add with a dynamic shape (trip counts
# 1..3, below the stage count, through predicates) and the GEMM at
# 512x256x1024.
#
# run: `tmac run BUNDLE --bench` for each (reference check first, then CUDA
# event timings: warm-up, repetitions, median), then in the same process
# group the peers measured with torch on the same GPU: device-to-device copy
# of the add's byte count (read + write) and torch.matmul f16 at 4096^3.
# Prints a Markdown table last. Exit status 1 if anything failed.
set -u -o pipefail
cd "$(dirname "$0")/.."
mode=${1:-}
dir=build/gpu/sweep
tmac=${TMAC:-build/tmac}
stages="1 2 3 4 5 6 7"

build() {
	set -e
	export CGO_ENABLED=0
	go build -o build/tmac ./cmd/tmac
	rm -rf "$dir" && mkdir -p "$dir/src"
	for n in $stages; do
		sed "s/tmac.stages = [0-9]* : i64/tmac.stages = $n : i64/" examples/gemm_pipelined.tma >"$dir/src/gemm_s$n.tma"
		sed "s/tmac.stages = [0-9]* : i64/tmac.stages = $n : i64/" examples/add_pipelined.tma >"$dir/src/add_s$n.tma"
	done
	cp examples/variants/seed004_gemm_multistage_4096.tma "$dir/src/gemm_handwritten_s7.tma"
	cp examples/variants/add_pipelined_dynamic.tma "$dir/src/add_dynamic.tma"
	# Warp specialisation (step 6): examples/gemm_ws.tma (128x256 tiles, 2
	# consumer warpgroups + producer) at 3 and 4 stages, the same program
	# without the producer (tma-pipeline, 256 threads), and the 128x128
	# GEMM with one consumer warpgroup.
	for n in 3 4; do
		sed "s/tmac.stages = [0-9]* : i64/tmac.stages = $n : i64/" examples/gemm_ws.tma >"$dir/src/gemm_ws_s$n.tma"
		sed "s/tmac.stages = [0-9]* : i64, tmac.warp_specialize/tmac.stages = $n : i64/" examples/gemm_ws.tma >"$dir/src/gemm_coop_s$n.tma"
	done
	for n in 4 6; do
		sed "s/tmac.stages = [0-9]* : i64}/tmac.stages = $n : i64, tmac.warp_specialize}/" examples/gemm_pipelined.tma >"$dir/src/gemm_ws128_s$n.tma"
	done
	for n in 3 4; do
		sed "s/tmac.stages = [0-9]* : i64, tmac.warp_specialize/tmac.stages = $n : i64, tmac.warp_specialize/" examples/gemm_ws_persistent.tma >"$dir/src/gemm_wsp_s$n.tma"
		sed "s/tmac.stages = [0-9]* : i64, tmac.warp_specialize/tmac.stages = $n : i64, tmac.warp_specialize/" examples/variants/gemm_ws_persistent_tmastore.tma >"$dir/src/gemm_wspt_s$n.tma"
		sed "s/tmac.stages = [0-9]* : i64, tmac.warp_specialize/tmac.stages = $n : i64, tmac.warp_specialize/" examples/variants/gemm_ws_cluster.tma >"$dir/src/gemm_wsc_s$n.tma"
		sed "s/tmac.stages = [0-9]* : i64, tmac.warp_specialize/tmac.stages = $n : i64, tmac.warp_specialize/" examples/variants/gemm_pingpong.tma >"$dir/src/gemm_wspp_s$n.tma"
	done
	cp examples/variants/gemm_pipelined_bf16out.tma "$dir/src/gemm_bf16out_s4.tma"
	# Correctness variants at small sizes.
	python3 - "$dir/src" <<'EOF'
import re, sys
out = sys.argv[1]
g = open("examples/gemm_pipelined.tma").read()
# 512x256x1024: A 512x1024, B 1024x256, D 512x256, grid (4, 2), 16 K steps.
g = g.replace("%a: memref<4096x4096xf16>", "%a: memref<512x1024xf16>").replace("%b: memref<4096x4096xf16>", "%b: memref<1024x256xf16>")
g = g.replace("%d: memref<4096x4096xf32>", "%d: memref<512x256xf32>")
g = g.replace("memref.cast %a : memref<4096x4096xf16>", "memref.cast %a : memref<512x1024xf16>").replace("memref.cast %b : memref<4096x4096xf16>", "memref.cast %b : memref<1024x256xf16>")
g = g.replace("memref<4096x4096xf32>", "memref<512x256xf32>").replace("memref<4096x4096xf16>", "memref<X>")
g = g.replace("%x = memref.load %a[%m, %k] : memref<X>", "%x = memref.load %a[%m, %k] : memref<512x1024xf16>")
g = g.replace("%y = memref.load %b[%k, %n] : memref<X>", "%y = memref.load %b[%k, %n] : memref<1024x256xf16>")
g = g.replace("(%lgx = %h32, %lgy = %h32, %lgz = %h1)", "(%lgx = %h4, %lgy = %h2, %lgz = %h1)")
g = g.replace("  %h32 = arith.constant 32 : index\n", "  %h2 = arith.constant 2 : index\n  %h4 = arith.constant 4 : index\n")
g = g.replace("%ksteps = arith.constant 64 : index", "%ksteps = arith.constant 16 : index")
g = g.replace("%r4096 = arith.constant 4096 : index", "%rm = arith.constant 512 : index\n  %rn = arith.constant 256 : index\n  %rk = arith.constant 1024 : index")
g = g.replace("scf.for %m = %r0 to %r4096", "scf.for %m = %r0 to %rm").replace("scf.for %n = %r0 to %r4096", "scf.for %n = %r0 to %rn").replace("scf.for %k = %r0 to %r4096", "scf.for %k = %r0 to %rk")
g = re.sub(r" attributes \{tmac.ref_sample = \d+ : i64\}", "", g)
assert "X>" not in g and "4096" not in g.split("// Run it")[1], "gemm small variant"
for n in (1, 2, 3, 7):
    open(f"{out}/gemm_small_s{n}.tma", "w").write(re.sub(r"tmac.stages = \d+ : i64", f"tmac.stages = {n} : i64", g))
EOF
	# The add with 64x64 tiles (grid (128, 4)): half the barriers per byte.
	python3 - "$dir/src" <<'EOF'
import re, sys
a = open("examples/add_pipelined.tma").read()
a = a.replace("memref<32x64xf32", "memref<64x64xf32").replace("box[%h32, %h64]", "box[%h64, %h64]")
a = a.replace("(%lgx = %h256,", "(%lgx = %h128,").replace("%row0 = arith.muli %bid, %c32", "%row0 = arith.muli %bid, %c64")
a = a.replace("scf.for %i = %tid to %c512 step %c128", "scf.for %i = %tid to %c1024 step %c128")
a = a.replace("    %c512 = arith.constant 512 : index\n", "    %c512 = arith.constant 512 : index\n    %c1024 = arith.constant 1024 : index\n")
assert "c1024 step" in a and "%c1024 = arith" in a and "box[%h64, %h64]" in a
for n in (2, 3, 4):
    open(f"{sys.argv[1]}/add_t64_s{n}.tma", "w").write(re.sub(r"tmac.stages = \d+ : i64", f"tmac.stages = {n} : i64", a))
EOF
	mkdir -p "$dir/ptx"
	for f in "$dir"/src/*.tma; do
		build/tmac compile "$f" --emit=bundle -o "$dir/$(basename "$f" .tma).tmab"
		build/tmac compile "$f" -o "$dir/ptx/$(basename "$f" .tma).ptx"
	done
	echo "$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . || echo ' + uncommitted changes')" >"$dir/COMMIT"
	du -sh "$dir"
}

run() {
	if [ ! -x "$tmac" ]; then echo "no $tmac: run scripts/pipeline-sweep.sh build here first" >&2; exit 2; fi
	mkdir -p "$dir/logs"
	rows=()
	failed=0
	# Small correctness variants first, then the sweeps, then the baseline.
	# The dynamic add runs at three shapes: 1, 3 (both below the 4 stages)
	# and 16 column tiles, with partial edge boxes.
	mapfile -t bundles < <(ls "$dir"/gemm_small_*.tmab; for s in 32x64 100x132 300x1000; do echo "$dir/add_dynamic.tmab:$s"; done
		ls "$dir"/add_s*.tmab "$dir"/add_t64_*.tmab "$dir"/gemm_s[0-9]*.tmab "$dir"/gemm_handwritten*.tmab \
			"$dir"/gemm_coop_*.tmab "$dir"/gemm_ws*.tmab "$dir"/gemm_bf16out*.tmab)
	for b in "${bundles[@]}"; do
		flags=
		if [[ "$b" == *:* ]]; then
			shape=${b##*:} b=${b%:*}
			flags="--shape arg0=$shape --shape arg1=$shape --shape arg2=$shape"
			name=$(basename "$b" .tmab)_$shape
		else
			name=$(basename "$b" .tmab)
		fi
		# SWEEP_FILTER: an extended regular expression the names must match.
		[[ -n "${SWEEP_FILTER:-}" && ! "$name" =~ ${SWEEP_FILTER} ]] && continue
		log=$dir/logs/$name.log
		t0=$(date +%s)
		# shellcheck disable=SC2086 # SWEEP_RUN_FLAGS is a list of flags
		timeout "${EXAMPLE_TIMEOUT:-120}" "$tmac" run "$b" --bench $flags ${SWEEP_RUN_FLAGS:-} >"$log" 2>&1
		rc=$?
		case $rc in
		0) result=PASS ;;
		3) echo "no GPU" >&2; cat "$log" >&2; exit 3 ;;
		124) result=TIMEOUT ;;
		*) if grep -qi 'did not finish' "$log"; then result=HANG; elif grep -qi 'mismatch\|FAIL' "$log"; then result=FAIL; else result="ERROR($rc)"; fi ;;
		esac
		[ "$result" = PASS ] || { failed=1; tail -5 "$log" | sed 's/^/    /' >&2; }
		rel=$(grep -oE '\|\|out-ref\|\|/\|\|ref\|\| [-+0-9.eE]+' "$log" | awk '{print $2}' | sort -g | tail -1)
		med=$(grep -oiE -m1 'kernels alone: median [0-9.]+ ?(ns|µs|us|ms|s)\b' "$log" | grep -oE '[0-9.]+ ?(ns|µs|us|ms|s)$')
		thr=$(grep -oE -m1 '[0-9.]+ ?TFLOP/s' "$log" | head -1)
		[ -z "$thr" ] && thr=$(grep -oE -m1 '[0-9.]+ ?TB/s' "$log" | head -1)
		qmed=$(grep -oE -m1 'kernels queued \(launch latency hidden\): median [0-9.]+ us' "$log" | grep -oE '[0-9.]+ us$')
		qthr=$(grep -oE -m1 'queued: [0-9.]+ TFLOP/s' "$log" | cut -d' ' -f2-)
		[ -z "$qthr" ] && qthr=$(grep -oE -m1 'queued: [0-9.]+ TB/s' "$log" | cut -d' ' -f2-)
		row="| $name | $result | ${rel:--} | ${med:--} | ${thr:--} | ${qmed:--} | ${qthr:--} |"
		rows+=("$row")
		echo "$row  ($(($(date +%s) - t0)) s)"
	done
	# Code quality: registers, spills and wgmma serialisation warnings
	# (C7510-class) from ptxas for every kernel of the sweep.
	if command -v ptxas >/dev/null; then
		echo "ptxas -arch=sm_90a -v:"
		for f in "$dir"/ptx/gemm_*.ptx; do
			out=$(ptxas -arch=sm_90a -v "$f" -o /dev/null 2>&1)
			regs=$(echo "$out" | grep -oE 'Used [0-9]+ registers' | head -1)
			spill=$(echo "$out" | grep -oE '[0-9]+ bytes spill stores' | head -1)
			warn=$(echo "$out" | grep -ciE 'warning')
			echo "  $(basename "$f" .ptx): ${regs:-?}, ${spill:-? spill}, $warn warning(s)"
			echo "$out" | grep -iE 'warning' | head -2 | sed 's/^/    /'
		done
	fi
	# Peers in the same run: torch on the same GPU.
	peers=$(timeout 300 python3 - <<'EOF' 2>&1
import torch
def med_ms(fn, warm=5, reps=50):
    for _ in range(warm): fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record(); fn(); e.record(); e.synchronize()
        ts.append(s.elapsed_time(e))
    ts.sort()
    return ts[len(ts) // 2]
# The add moves 3 x 8192x4096 f32 = 384 MiB: copy half of that (read + write).
n = 8192 * 4096 * 3 // 2
src = torch.randn(n, device="cuda")
dst = torch.empty_like(src)
ms = med_ms(lambda: dst.copy_(src))
print(f"| torch d2d copy (192 MiB read + 192 MiB written) | PASS | - | {ms*1e3:.1f} µs | {2*n*4/ms/1e9:.3f} TB/s | | |")
a = torch.randn(4096, 4096, device="cuda", dtype=torch.float16)
b = torch.randn(4096, 4096, device="cuda", dtype=torch.float16)
ms = med_ms(lambda: torch.matmul(a, b))
print(f"| torch.matmul f16 4096^3 (cuBLAS, f16 out) | PASS | - | {ms*1e3:.1f} µs | {2*4096**3/ms/1e9:.1f} TFLOP/s | | |")
EOF
)
	echo
	echo "pipeline stage sweep on $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1), $(date -u +%Y-%m-%d), commit $(cat "$dir/COMMIT" 2>/dev/null || echo unknown)"
	echo
	echo "| bundle | result | ||out-ref||/||ref|| | kernel time (median) | throughput | queued kernel time | queued throughput |"
	echo "|---|---|---|---|---|---|---|"
	printf '%s\n' "${rows[@]}"
	echo "$peers"
	exit $failed
}

case $mode in
build) build ;;
run) run ;;
*) echo "usage: scripts/pipeline-sweep.sh build|run" >&2; exit 2 ;;
esac
