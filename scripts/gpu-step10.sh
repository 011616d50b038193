#!/usr/bin/env bash
# Issue 16 on the GPU: the new examples (log_softmax, rmsnorm, gelu) checked
# against their references and timed against torch, every float math op's
# error in ulps (bench/gpu/accuracy), the warp collectives' reduction order
# (scripts/gpu-warp.sh), every other example bundle and the GPU test
# programs' bundles.
#
#   scripts/gpu-step10.sh build   # here (llc): build/tmac, build/gpu (gpu-build.sh: every example and
#                                 #   GPU test bundle), gpu-warp.tmab, math-accuracy.tmab
#   scripts/gpu-step10.sh run     # there (GPU, no llc; build/ carried): everything with timeouts,
#                                 #   logs in build/gpu/step10, a short table last (also in summary.md)
#   scripts/gpu-step10.sh ops     # there: the emulator test programs of the new ops (EMU_TESTS below:
#                                 #   memref atomics and views, nvvm warp ops and mma.sync, printf,
#                                 #   scf.execute_region, math, vector, index, 16-block clusters) run
#                                 #   on the GPU against their @reference with the flags their lit
#                                 #   tests use
#
# The run stops starting steps after RUN_BUDGET seconds (default 460, so the
# whole run stays under 8 minutes); a step that fails, times out or is
# skipped is reported as such and the rest still run. Exit status 0 when
# every step passed.
set -u -o pipefail
cd "$(dirname "$0")/.."
NEW_EXAMPLES="log_softmax rmsnorm gelu"
# EMU_TESTS: emulator test programs run on the GPU too, "file|tmac run flags".
EMU_TESTS=(
	"lit-tests/emu/memref-atomics.tma|"
	"lit-tests/emu/memref-reshape.tma|"
	"lit-tests/nvvm/emu-mma.tma|--dist int --rtol 0 --atol 0"
	"lit-tests/nvvm/emu-warp.tma|--dist int --rtol 2e-7"
	"lit-tests/llvm/printf-emu.tma|--entry main"
	"lit-tests/emu/scf-execute-region.tma|"
	"lit-tests/run/unwritten-output.tma|"
	"lit-tests/emu/math-float.tma|"
	"lit-tests/emu/math-int.tma|"
	"lit-tests/emu/math-formats.tma|"
	"lit-tests/emu/vector-ops.tma|"
	"lit-tests/emu/index.tma|"
	"lit-tests/emu/cluster-16.tma|"
	"lit-tests/emu/scf-parallel-switch.tma|"
	"lit-tests/emu/scf-switch-forall-reference.tma|"
)
UPSTREAM_CLUSTER=build/upstream/mlir/test/Integration/GPU/CUDA/sm90/non-portable-cluster-launch.mlir

case "${1:-}" in
build)
	export CGO_ENABLED=0
	scripts/gpu-build.sh || exit 1
	scripts/gpu-warp.sh build || exit 1
	build/tmac compile bench/gpu/accuracy/math.tma --emit=bundle -o build/gpu/math-accuracy.tmab || exit 1
	for n in $NEW_EXAMPLES; do
		[ -f "build/gpu/bundles/$n.tmab" ] || { echo "no bundle for examples/$n.tma" >&2; exit 1; }
	done
	mkdir -p build/gpu/ops
	for t in "${EMU_TESTS[@]}"; do
		f=${t%%|*}
		build/tmac compile "$f" --emit=bundle -o "build/gpu/ops/$(basename "$f" .tma).tmab" || exit 1
	done
	# Upstream's 16-block cluster program, unmodified, where its git-ignored
	# copy is (scripts/conformance.py fetch); ops runs it and checks its output.
	if [ -f "$UPSTREAM_CLUSTER" ]; then
		build/tmac compile "$UPSTREAM_CLUSTER" --emit=bundle -o build/gpu/ops/non-portable-cluster-launch.tmab || exit 1
	fi
	du -sh build/gpu build/tmac
	total=$(du -scm build/gpu build/tmac | tail -1 | cut -f1)
	[ "$total" -lt 64 ] || echo "warning: build/gpu and build/tmac are ${total} MiB, over the 64 MiB that travels" >&2
	;;
run)
	budget=${RUN_BUDGET:-460}
	start=$SECONDS
	out=build/gpu/step10
	rm -rf "$out" && mkdir -p "$out"
	tmac=${TMAC:-build/tmac}
	python=${PYTHON:-python3}
	[ -x "$tmac" ] || { echo "no $tmac: run scripts/gpu-step10.sh build first" >&2; exit 2; }
	gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)
	echo "GPU: ${gpu:-none found}; commit $(cat build/gpu/COMMIT 2>/dev/null || echo unknown)"
	rows=()
	failed=0
	. scripts/gpu-steps.sh
	# us REGEX LOG: the microseconds on the first bench line matching REGEX.
	us() { grep -m1 -E "$1" "$2" 2>/dev/null | grep -oE 'median [0-9.]+ us' | grep -oE '[0-9.]+'; }

	report() { # the math table and the summary
		echo
		echo "== math ops: max ulp over normal results (all columns: $out/math-accuracy.log)"
		grep '^| math\.' "$out/math-accuracy.log" 2>/dev/null | awk -F'|' '
			{ gsub(/ /, "", $2); gsub(/ /, "", $3); v[$2, $3] = $4; if (!($2 in seen)) { seen[$2] = 1; order[++n] = $2 } }
			END {
				print "| op | default | fastmath<afn> |"
				print "|---|---|---|"
				for (i = 1; i <= n; i++) printf "| %s |%s|%s|\n", order[i], v[order[i], "default"], v[order[i], "afn"]
			}'
		echo
		echo "== summary ($((SECONDS - start)) s)"
		echo "| step | result | notes |"
		echo "|---|---|---|"
		printf '%s\n' "${rows[@]}"
	}

	# 1. The new examples: tmac run against @reference with --bench.
	declare -A kernel queued
	for n in $NEW_EXAMPLES; do
		step "example-$n" 90 "$tmac" run "build/gpu/bundles/$n.tmab" --bench --reps 50 --warmup 5
		v=$(verdict $rc)
		[ "$v" = PASS ] || failed=$((failed + 1))
		kernel[$n]=$(us 'kernels alone' "$out/example-$n.log")
		queued[$n]=$(us 'kernels queued' "$out/example-$n.log")
		rows+=("| example $n | $v | tmac run --bench: kernels alone ${kernel[$n]:--} us, queued ${queued[$n]:--} us |")
	done

	# 2. torch at the same sizes: CUDA events around each call, 10 warm-ups,
	# the median of 50 (gelu: both forms, as the example's two kernels).
	cat >"$out/torch_bench.py" <<'EOF'
import torch
import torch.nn.functional as F


def median_us(f, reps=50, warmup=10):
    for _ in range(warmup):
        f()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        f()
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e) * 1000)
    times.sort()
    return times[len(times) // 2]


torch.manual_seed(0)
x = torch.randn(4096, 4096, device="cuda")
w = torch.randn(4096, device="cuda")
v = torch.randn(16777216, device="cuda")
eps = 1e-5
print(f"torch log_softmax {median_us(lambda: torch.log_softmax(x, dim=-1)):.3f}")
print(f"torch rmsnorm {median_us(lambda: x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w):.3f}")
print(f"torch gelu {median_us(lambda: (F.gelu(v), F.gelu(v, approximate='tanh'))):.3f}")
print(f"torch gelu-erf {median_us(lambda: F.gelu(v)):.3f}")
print(f"torch gelu-tanh {median_us(lambda: F.gelu(v, approximate='tanh')):.3f}")
print(f"torch {torch.__version__}")
EOF
	step torch 150 "$python" "$out/torch_bench.py"
	torch_rc=$rc
	for n in $NEW_EXAMPLES; do
		t=$(grep -m1 "^torch $n " "$out/torch.log" 2>/dev/null | awk '{print $3}')
		ratio=-
		if [ -n "$t" ] && [ -n "${kernel[$n]}" ]; then
			ratio=$(awk -v a="$t" -v b="${kernel[$n]}" 'BEGIN { printf "%.2f", a / b }')
		fi
		rows+=("| torch $n | $(verdict $torch_rc) | torch ${t:--} us; torch time / tmac kernels-alone time ${ratio} |")
	done

	# 3. Every float math op in ulps, by default and with fastmath<afn>.
	rm -rf /tmp/tmac-math-accuracy
	step math-accuracy-run 120 "$tmac" run build/gpu/math-accuracy.tmab --no-check --dump-dir /tmp/tmac-math-accuracy
	v=$(verdict $rc)
	[ "$v" = PASS ] || failed=$((failed + 1))
	rows+=("| math accuracy bundle | $v | tmac run --no-check --dump-dir |")
	step math-accuracy 180 "$python" bench/gpu/accuracy/math_ulp.py /tmp/tmac-math-accuracy
	v=$(verdict $rc)
	[ "$v" = PASS ] || failed=$((failed + 1))
	cp /tmp/tmac-math-accuracy/accuracy.json "$out/" 2>/dev/null
	rows+=("| math ops within CUDA's bounds | $v | table in $out/math-accuracy.log, numbers in $out/accuracy.json |")

	# 4. The warp collectives' documented reduction order, bit for bit.
	step gpu-warp 90 scripts/gpu-warp.sh check
	v=$(verdict $rc)
	[ "$v" = PASS ] || failed=$((failed + 1))
	rows+=("| gpu-warp.sh check | $v | $(grep -c 'PASS arg' "$out/gpu-warp.log" 2>/dev/null) outputs PASS |")

	# 5. Every other example and variant bundle, then the GPU test
	# programs' bundles (test-*), each with its .flags.
	link_bundles() { # DIR PATTERN: links build/gpu/bundles' PATTERN bundles but the new examples into DIR
		mkdir -p "$1"
		for b in build/gpu/bundles/$2.tmab; do
			[ -e "$b" ] || continue
			n=$(basename "$b" .tmab)
			case " $NEW_EXAMPLES " in *" $n "*) continue ;; esac
			[ "$2" = "*" ] && [[ $n == test-* ]] && continue
			ln -s "$PWD/$b" "$1/$n.tmab"
			[ -f "build/gpu/bundles/$n.flags" ] && ln -s "$PWD/build/gpu/bundles/$n.flags" "$1/$n.flags"
		done
	}
	link_bundles "$out/examples" "*"
	link_bundles "$out/tests" "test-*"
	for set in examples tests; do
		step "$set" 300 env BUNDLES="$out/$set" EXAMPLE_TIMEOUT=60 TMAC_RUN_FLAGS="--reps 10 --warmup 2" scripts/gpu-run-examples.sh
		v=$(verdict $rc)
		[ "$v" = PASS ] || failed=$((failed + 1))
		rows+=("| other $set (gpu-run-examples.sh) | $v | $(grep -m1 -oE '[0-9]+/[0-9]+ passed' "$out/$set.log" 2>/dev/null || echo '-') |")
	done

	report >"$out/summary.md"
	cat "$out/summary.md"
	[ "$failed" -eq 0 ]
	;;
ops)
	tmac=${TMAC:-build/tmac}
	out=build/gpu/step10-ops
	rm -rf "$out" && mkdir -p "$out"
	echo "GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1); commit $(cat build/gpu/COMMIT 2>/dev/null || echo unknown)"
	rows=()
	failed=0
	for t in "${EMU_TESTS[@]}"; do
		f=${t%%|*}
		n=$(basename "$f" .tma)
		# shellcheck disable=SC2086 # the flags are words
		timeout 60 "$tmac" run "build/gpu/ops/$n.tmab" ${t#*|} >"$out/$n.log" 2>&1
		rc=$?
		v=PASS
		[ $rc -eq 0 ] || { v="FAIL (exit $rc)"; failed=$((failed + 1)); }
		[ $rc -eq 124 ] && v=TIMEOUT
		rows+=("| $n | $v | $(grep -c '^PASS' "$out/$n.log") outputs PASS, $(grep -c '^FAIL' "$out/$n.log") FAIL |")
	done
	# Upstream's program prints this line from each of its two launches
	# (its FileCheck lines).
	b=build/gpu/ops/non-portable-cluster-launch.tmab
	if [ -f "$b" ]; then
		timeout 60 "$tmac" run "$b" --entry main --no-check >"$out/non-portable-cluster-launch.log" 2>&1
		rc=$?
		n=$(grep -c 'clusterIdx: (3, 3, 0) in Cluster Dimension: (4, 4, 1) blockIdx: (15, 15, 0)' "$out/non-portable-cluster-launch.log")
		v=PASS
		[ $rc -eq 0 ] && [ "$n" -eq 2 ] || { v="FAIL (exit $rc)"; failed=$((failed + 1)); }
		[ $rc -eq 124 ] && v=TIMEOUT
		rows+=("| upstream non-portable-cluster-launch | $v | $n of 2 expected lines printed |")
	fi
	echo "| program | result | outputs |"
	echo "|---|---|---|"
	printf '%s\n' "${rows[@]}"
	[ "$failed" -eq 0 ]
	;;
*)
	echo "usage: scripts/gpu-step10.sh build|run|ops" >&2
	exit 2
	;;
esac
