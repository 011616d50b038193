#!/usr/bin/env bash
# Issue 19 on the GPU, in one device call:
#   1. ptxas -v on each program's PTX (registers, spills, serialised wgmma);
#   2. the attention programs of VARIANTS below, each resized by sed to
#      the issue's shapes (or small ones, every row checked), run by
#      `tmac run --bench` against their sampled @reference, then their dump
#      checked against an f32 torch reference (O and lse) and timed beside
#      the peers on the same inputs (bench/gpu/attention.py --tmac);
#   3. the variants (examples/variants/attention_fwd_*.tma) at their own
#      sizes against their @reference;
#   4. the peer table at the issue's shapes, non-causal and causal: torch
#      SDPA with the cuDNN, FlashAttention-2 and memory-efficient backends
#      and the Triton baseline (bench/gpu/triton_attention.py), with what
#      is left of the budget.
#
#   scripts/gpu-attention.sh build   # here (llc): build/tmac, build/gpu-attention (bundles)
#   scripts/gpu-attention.sh run     # there (build/tmac, build/gpu-attention carried)
#
# The run starts no step after RUN_BUDGET seconds (default 540). ONLY (a
# regular expression, at build) keeps the programs of step 2 whose name
# matches, and EXTRA adds entries (see VARIANTS); NO_TRITON=1 leaves Triton out of step 2 (programs under S =
# 1024 never time it: its autotuning costs more than it tells there).
# PEERS_SHAPES (BxHxSxD ..., default the issue's four; none skips step 4)
# and PEERS_CAUSAL (off|on|both, default both) narrow step 4. SKIP_TMAC=1
# skips steps 2 and 3 (a second call for the peer table alone).
set -u -o pipefail
cd "$(dirname "$0")/.."
dir=build/gpu-attention
# The tmac programs: name|source|B·H|S|causal|extra sed. Every source is
# written for B·H = 2, S = 512 (1024 rows); resize rewrites it to B·H, S
# (rows = B·H·S). The check samples 64 query rows (tmac.ref_sample) except
# where the name says full.
ex=examples/attention_fwd.tma
d128=examples/variants/attention_fwd_d128_ws.tma
d128c=examples/variants/attention_fwd_d128_causal.tma
d128p=examples/variants/attention_fwd_d128_persistent.tma
d64c=examples/variants/attention_fwd_causal.tma
VARIANTS=(
	"s128full|$ex|2|128|0|"
	"d64-bh128-s2048|$ex|128|2048|0|"
	"d64c-bh128-s2048|$d64c|128|2048|1|"
	"d128-bh64-s4096|$d128|64|4096|0|"
	"d128p-bh64-s4096|$d128p|64|4096|0|"
	"d128c-bh64-s4096|$d128c|64|4096|1|"
	"d128-bh32-s8192|$d128|32|8192|0|"
	"d128p-bh32-s8192|$d128p|32|8192|0|"
	"d128c-bh32-s8192|$d128c|32|8192|1|"
	"d128-bh256-s1024|$d128|256|1024|0|"
	"d128p-bh256-s1024|$d128p|256|1024|0|"
	"d128c-bh256-s1024|$d128c|256|1024|1|"
)
# EXTRA (build) adds entries of the same form, one per line (trials of
# programs not in the repo), with an optional seventh field: a sed script
# applied to the bundle's PTX (a trial of a code-generation change);
# ONLY keeps the entries whose name matches.
if [ -n "${EXTRA:-}" ]; then
	mapfile -t extra <<<"$EXTRA"
	VARIANTS+=("${extra[@]}")
fi

# resize SRC BH S: SRC rewritten to B·H = BH, S (1024 rows first through a
# placeholder, so that a new S of 1024 is not rewritten again).
resize() {
	sed -e "s/%heads = arith.constant 2 :/%heads = arith.constant $2 :/" \
		-e "s/1024/@ROWS@/g; s/512/$3/g; s/@ROWS@/$(($2 * $3))/g" "$1"
}

case "${1:-}" in
build)
	export CGO_ENABLED=0
	go build -o build/tmac ./cmd/tmac || exit 1
	rm -rf "$dir" && mkdir -p "$dir"
	for v in "${VARIANTS[@]}"; do
		IFS='|' read -r name src bh seq _ rewrite ptxsed <<<"$v"
		[[ $name =~ ${ONLY:-.} ]] || continue
		resize "$src" "$bh" "$seq" | sed "$rewrite" >"$dir/$name.tma" || exit 1
		build/tmac compile "$dir/$name.tma" --emit=bundle -o "$dir/$name.tmab" || exit 1
		build/tmac compile "$dir/$name.tma" --emit=ptx -o "$dir/$name.ptx" || exit 1
		if [ -n "$ptxsed" ]; then
			# A trial of a PTX change: rewrite the bundle's kernels.ptx.
			rm -rf "$dir/x" && mkdir "$dir/x" && tar xf "$dir/$name.tmab" -C "$dir/x" || exit 1
			sed -i "$ptxsed" "$dir/x/kernels.ptx" "$dir/$name.ptx" || exit 1
			(cd "$dir/x" && tar cf "../$name.tmab" manifest.json kernels.ptx kernels.ll module.tma) || exit 1
			rm -rf "$dir/x"
		fi
		echo "$v" >>"$dir/VARIANTS"
	done
	# The variants as written (their own sizes), checked on the hardware.
	for f in examples/variants/attention_fwd_*.tma; do
		build/tmac compile "$f" --emit=bundle -o "$dir/var-$(basename "$f" .tma).tmab" || exit 1
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
	# The entries built (EXTRA's included).
	mapfile -t VARIANTS <"$dir/VARIANTS"
	[ -n "${SKIP_TMAC:-}" ] && VARIANTS=()
	# ptxas's view of each kernel: registers, spills, serialised wgmma.
	if command -v ptxas >/dev/null; then
		for p in "$dir"/*.ptx; do
			[ -e "$p" ] || continue
			echo "-- $(basename "$p" .ptx): $(ptxas -arch=sm_90a -v "$p" -o /dev/null 2>&1 | grep -E -o 'Used [0-9]+ registers|[0-9]+ bytes spill (stores|loads)|wgmma[^.]*serialized[^.]*' | sort -u | tr '\n' ';')"
		done | tee "$out/ptxas.log"
		# The SASS: instructions in all, and the MUFU.EX2 and FSETP among them.
		if command -v cuobjdump >/dev/null; then
			for p in "$dir"/*.ptx; do
				ptxas -arch=sm_90a "$p" -o "$out/k.cubin" 2>/dev/null || continue
				cuobjdump -sass "$out/k.cubin" | grep -E '^\s+/\*[0-9a-f]{4}\*/' >"$out/k.sass"
				echo "-- $(basename "$p" .ptx) SASS: $(wc -l <"$out/k.sass") instructions, $(grep -c MUFU.EX2 "$out/k.sass") MUFU.EX2, $(grep -c FSETP "$out/k.sass") FSETP, $(grep -c 'FMUL' "$out/k.sass") FMUL"
			done | tee "$out/sass.log"
			rm -f "$out/k.cubin" "$out/k.sass"
		fi
	fi
	for v in "${VARIANTS[@]}"; do
		IFS='|' read -r name _ bh seq causal _ <<<"$v"
		[ -e "$dir/$name.tmab" ] || continue
		flags=(--bench --dump-dir "$out/d-$name")
		case $name in *full* | *stages1*) flags+=(--ref-sample 0) ;; esac
		step "run-$name" 180 "$tmac" run "$dir/$name.tmab" "${flags[@]}"
		checked_row "$name run" "$out/run-$name.log" || continue
		peer_flags=()
		[ "$seq" -lt 1024 ] || [ -n "${NO_TRITON:-}" ] && peer_flags=(--no-triton)
		[ "$causal" = 1 ] && peer_flags+=(--tmac-causal)
		TAIL=20 step "compare-$name" 240 "$python" bench/gpu/attention.py --tmac "$out/d-$name" --bh "$bh" --seq "$seq" "${peer_flags[@]}"
		[ $rc = 0 ] || failed=$((failed + 1))
		rows+=("| $name vs torch, peers | $(verdict $rc) | $(grep -E 'tmac attention_fwd|tmac /' "$out/compare-$name.log" 2>/dev/null | tr -s ' ' | tr '\n' ' ' | cut -c1-300) |")
		rm -rf "$out/d-$name"
	done
	# The variants at their own sizes against their @reference.
	for b in "$dir"/var-*.tmab; do
		[ -e "$b" ] && [ -z "${SKIP_TMAC:-}" ] || continue
		name=$(basename "$b" .tmab)
		step "$name" 120 "$tmac" run "$b" --bench
		checked_row "$name" "$out/$name.log"
	done
	# 3. The peer table with what is left.
	left=$((budget - (SECONDS - start)))
	if [ "${PEERS_SHAPES:-}" != none ]; then
		# shellcheck disable=SC2086
		TAIL=200 step peers "$left" "$python" bench/gpu/attention.py --shapes ${PEERS_SHAPES:-4x16x4096x128 2x16x8192x128 8x16x2048x64 16x16x1024x128} --causal "${PEERS_CAUSAL:-both}"
		[ $rc = 0 ] || failed=$((failed + 1))
		rows+=("| peer table | $(verdict $rc) | above, and $out/peers.log |")
	fi
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
