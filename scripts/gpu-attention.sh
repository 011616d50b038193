#!/usr/bin/env bash
# Issue 19 on the GPU, in one device call: (1) examples/attention_fwd.tma
# (D = 64) run on the GPU against its sampled @reference at its own size
# (B·H = 2, S = 512), rewritten by sed as lit-tests/emu/attention-fwd.tma
# does to S = 128 (every row checked; also with one ring slot), and to
# larger sizes: B·H = 2, S = 4096 and the issue's (B, H, S, D) =
# (8, 16, 2048, 64); (2) each dump checked against an f32 torch reference
# (O and lse) and timed beside the peers on the same inputs
# (bench/gpu/attention.py --tmac); (3) the peer table at the issue's
# shapes, non-causal and causal: torch SDPA with the cuDNN,
# FlashAttention-2 and memory-efficient backends and the Triton baseline
# (bench/gpu/triton_attention.py), with what is left of the budget.
#
#   scripts/gpu-attention.sh build   # here (llc): build/tmac, build/gpu-attention (bundles)
#   scripts/gpu-attention.sh run     # there (build/tmac, build/gpu-attention carried)
#
# The run starts no step after RUN_BUDGET seconds (default 540); the peer
# table (part 3) gets what is left, PEERS_SHAPES (BxHxSxD ..., default the
# issue's four) and PEERS_CAUSAL (off|on|both, default both) narrow it;
# EXAMPLE (build) replaces examples/attention_fwd.tma by a program with
# the same sizes. SKIP_TMAC=1 skips parts 1 and 2 (a second call for the peer table alone).
# The small tmac sizes are compared without the Triton baseline (its
# autotuning compiles cost more than they tell there).
set -u -o pipefail
cd "$(dirname "$0")/.."
dir=build/gpu-attention
# The tmac variants: name|B·H|S|sed rewriting examples/attention_fwd.tma
# (B·H = 2, S = 512, 1024 rows) to that size; the check samples 64 query
# rows (tmac.ref_sample) except where the name says full.
VARIANTS=(
	"s512|2|512|"
	"s128full|2|128|s/512/128/g; s/1024/256/g"
	"s128stages1|2|128|s/512/128/g; s/1024/256/g; s/tmac.stages = 2/tmac.stages = 1/"
	"s4096|2|4096|s/512/4096/g; s/1024/8192/g"
	"bh128s2048|128|2048|s/%heads = arith.constant 2 :/%heads = arith.constant 128 :/; s/512/2048/g; s/1024/262144/g"
)

case "${1:-}" in
build)
	export CGO_ENABLED=0
	go build -o build/tmac ./cmd/tmac || exit 1
	rm -rf "$dir" && mkdir -p "$dir"
	for v in "${VARIANTS[@]}"; do
		IFS='|' read -r name _ _ rewrite <<<"$v"
		sed "$rewrite" "${EXAMPLE:-examples/attention_fwd.tma}" >"$dir/$name.tma" || exit 1
		build/tmac compile "$dir/$name.tma" --emit=bundle -o "$dir/$name.tmab" || exit 1
	done
	git rev-parse --short HEAD >"$dir/COMMIT" 2>/dev/null
	du -sh "$dir" build/tmac
	;;
run)
	. scripts/gpu-steps.sh
	run_setup gpu-attention.sh 540
	failed=0
	rows=()
	# 1 and 2: each variant against its @reference on the hardware, then its
	# dump against torch and the peers on the same inputs.
	[ -n "${SKIP_TMAC:-}" ] && VARIANTS=()
	for v in "${VARIANTS[@]}"; do
		IFS='|' read -r name bh seq _ <<<"$v"
		flags=(--bench --dump-dir "$out/d-$name")
		case $name in *full* | *stages1*) flags+=(--ref-sample 0) ;; esac
		step "run-$name" 180 "$tmac" run "$dir/$name.tmab" "${flags[@]}"
		if [ $rc = 0 ] && grep -q '^PASS' "$out/run-$name.log" && ! grep -q '^FAIL' "$out/run-$name.log"; then
			rows+=("| $name run | PASS | $(grep -m1 '^PASS' "$out/run-$name.log" | cut -c1-110) |")
		else
			failed=$((failed + 1))
			rows+=("| $name run | $(verdict $rc) | $(grep -m1 -E 'FAIL|error' "$out/run-$name.log" | cut -c1-110) |")
			continue
		fi
		peer_flags=()
		[ "$seq" -lt 2048 ] && peer_flags=(--no-triton)
		TAIL=20 step "compare-$name" 240 "$python" bench/gpu/attention.py --tmac "$out/d-$name" --bh "$bh" --seq "$seq" "${peer_flags[@]}"
		[ $rc = 0 ] || failed=$((failed + 1))
		rows+=("| $name vs torch, peers | $(verdict $rc) | $(grep -E 'tmac attention_fwd|tmac /' "$out/compare-$name.log" 2>/dev/null | tr -s ' ' | tr '\n' ' ' | cut -c1-300) |")
		rm -rf "$out/d-$name"
	done
	# 3. The peer table with what is left.
	left=$((budget - (SECONDS - start)))
	# shellcheck disable=SC2086
	TAIL=200 step peers "$left" "$python" bench/gpu/attention.py --shapes ${PEERS_SHAPES:-4x16x4096x128 2x16x8192x128 8x16x2048x64 16x16x1024x128} --causal "${PEERS_CAUSAL:-both}"
	[ $rc = 0 ] || failed=$((failed + 1))
	rows+=("| peer table | $(verdict $rc) | above, and $out/peers.log |")
	echo
	echo "== summary ($((SECONDS - start)) s)"
	echo "| step | result | notes |"
	echo "|---|---|---|"
	printf '%s\n' "${rows[@]}"
	if [ -n "${OUT:-}" ]; then
		cp -r "$out" "$OUT/gpu-attention-logs" 2>/dev/null
	fi
	[ "$failed" -eq 0 ]
	;;
*)
	sed -n '2,/^set -u/p' "$0" | sed '$d'
	exit 2
	;;
esac
