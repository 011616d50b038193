#!/usr/bin/env bash
# Issue 18 on the GPU, in one device call: (1) the emulator test programs of
# the new accumulator ops run on the GPU against their @reference (acc.map,
# rows ops, load_cols/rows, masked and e4m3 mma.store, tma.store after a
# loop, wgmma with A in registers); (2) the fused bias + GELU GEMM (the
# simple form, examples/variants/gemm_bias_gelu_simple.tma, as gbg; the
# warp-specialised cooperative TMA-store design from gen_gemm.py with
# libdevice's erf (ws_gelu) and with the branch-free gelu_poly (ws_poly:
# examples/gemm_bias_gelu.tma), and gen_gemm's persistent 128x128 design
# under the ping-pong schedule with gelu_poly (pp_poly)) against the same GEMM
# without the epilogue and cuBLASLt's fused epilogue
# (bench/gpu/gemm_bias_gelu.py), 4096^3 then 8192^3; (3) the
# softmax/RMSNorm/LayerNorm bandwidth table (scripts/gpu-norms.sh run) with
# what is left of the budget.
#
#   scripts/gpu-step12.sh build   # here (llc): build/tmac, build/gpu12 (bundles), build/gpu-norms
#   scripts/gpu-step12.sh run     # there (build/tmac, build/gpu12, build/gpu-norms carried)
#
# The run starts no step after RUN_BUDGET seconds (default 480); the GEMMs
# (part 2) get at most GEMM_BUDGET seconds of it (default 240).
set -u -o pipefail
cd "$(dirname "$0")/.."
dir=build/gpu12
OPS="acc-map acc-map-rows acc-map-cols acc-rows-reduce acc-rows-reduce-nan acc-rows-loop acc-rows-load
mma-store-masked mma-store-e4m3-saturate tma-store-epilogue tma-store-epilogue-boxes mma-rs mma-rs-f16
mma-rs-pipelined memref-dim acc-cols-load-pairs"
S8192='s/4096/8192/g; s/\(%h32 = arith.constant\) 32 :/\1 64 :/; s/\(%ksteps = arith.constant\) 64 :/\1 128 :/'
WS='s/{tmac.stages = 3 : i64}/{tmac.stages = 3 : i64, tmac.warp_specialize}/'
PP='s/{tmac.stages = 4 : i64}/{tmac.stages = 4 : i64, tmac.warp_specialize = "pingpong"}/'

case "${1:-}" in
build)
	export CGO_ENABLED=0
	go build -o build/tmac ./cmd/tmac || exit 1
	rm -rf "$dir" && mkdir -p "$dir/ops" "$dir/gemm" "$dir/src"
	for t in $OPS; do
		build/tmac compile "lit-tests/emu/$t.tma" --emit=bundle -o "$dir/ops/$t.tmab" || exit 1
	done
	build/tmac compile examples/variants/gemm_bias_gelu_simple.tma --emit=bundle -o "$dir/gemm/gbg4096.tmab" || exit 1
	build/tmac compile examples/variants/gemm_pipelined_bf16out.tma --emit=bundle -o "$dir/gemm/plain4096.tmab" || exit 1
	for n in 4096 8192; do
		G="--m $n --n $n --k $n --dtype bf16 --out bf16 --design coop --bm 128 --bn 256 --epilogue tma --stages 3"
		python3 bench/gpu/gen_gemm.py $G --activation gelu -o "$dir/src/ws0.tma" && sed "$WS" "$dir/src/ws0.tma" >"$dir/src/ws_gelu$n.tma" || exit 1
		python3 bench/gpu/gen_gemm.py $G -o "$dir/src/wp0.tma" && sed "$WS" "$dir/src/wp0.tma" >"$dir/src/ws_plain$n.tma" || exit 1
		python3 bench/gpu/gen_gemm.py $G --activation gelu_poly -o "$dir/src/wq0.tma" && sed "$WS" "$dir/src/wq0.tma" >"$dir/src/ws_poly$n.tma" || exit 1
		P="--m $n --n $n --k $n --dtype bf16 --out bf16 --design persistent --bm 128 --bn 128 --stages 4"
		python3 bench/gpu/gen_gemm.py $P --activation gelu_poly -o "$dir/src/pq0.tma" && sed "$PP" "$dir/src/pq0.tma" >"$dir/src/pp_poly$n.tma" || exit 1
		python3 bench/gpu/gen_gemm.py $P -o "$dir/src/pp0.tma" && sed "$PP" "$dir/src/pp0.tma" >"$dir/src/pp_plain$n.tma" || exit 1
		for k in ws_gelu ws_plain ws_poly pp_poly pp_plain; do
			build/tmac compile "$dir/src/$k$n.tma" --emit=bundle -o "$dir/gemm/$k$n.tmab" || exit 1
		done
	done
	sed "$S8192" examples/variants/gemm_bias_gelu_simple.tma >"$dir/src/gbg8192.tma"
	sed "$S8192" examples/variants/gemm_pipelined_bf16out.tma >"$dir/src/plain8192.tma"
	build/tmac compile "$dir/src/gbg8192.tma" --emit=bundle -o "$dir/gemm/gbg8192.tmab" || exit 1
	build/tmac compile "$dir/src/plain8192.tma" --emit=bundle -o "$dir/gemm/plain8192.tmab" || exit 1
	git rev-parse --short HEAD >"$dir/COMMIT" 2>/dev/null
	scripts/gpu-norms.sh build || exit 1
	du -sh "$dir" build/gpu-norms build/tmac
	;;
run)
	. scripts/gpu-steps.sh
	run_setup gpu-step12.sh 480
	TAIL=3
	failed=0
	rows=()
	# 1. The ops on the hardware (seed 0; the RS and reduce tests also seed 1;
	# SKIP_OPS=1 skips them).
	[ -n "${SKIP_OPS:-}" ] && OPS=""
	for t in $OPS; do
		seeds=0
		case $t in mma-rs* | acc-rows-reduce*) seeds="0 1" ;; esac
		for s in $seeds; do
			flags=()
			[ "$t" = memref-dim ] && flags=(--shape arg0=37x5)
			step "op-$t-$s" 60 "$tmac" run "$dir/ops/$t.tmab" --seed "$s" "${flags[@]}"
			checked_row "$t seed $s" "$out/op-$t-$s.log"
		done
	done
	# 2. The fused epilogues against their plain GEMM (run once per group,
	# first) and cuBLASLt, in order of interest (the libdevice-erf ws_gelu,
	# the before, last in its group), within GEMM_BUDGET seconds (default
	# 240) of what is left.
	outer_budget=$budget outer_start=$start
	left=$((budget - (SECONDS - start)))
	budget=${GEMM_BUDGET:-240}
	[ "$budget" -gt "$left" ] && budget=$left
	start=$SECONDS
	# GEMM_KINDS chooses the groups (default all three); WS_BEFORE=0 drops
	# the libdevice-erf kernel measured before.
	for kind in ${GEMM_KINDS:-ws pp simple}; do
		for n in 4096 8192; do
			case $kind in
			ws) group="ws_plain$n ws_poly$n" && [ "${WS_BEFORE:-1}" = 1 ] && group="$group ws_gelu$n" ;;
			pp) group="pp_plain$n pp_poly$n" ;;
			simple) group="plain$n gbg$n" ;;
			esac
			set -- $group
			p=$1
			shift
			step "gemm-$p" 120 "$tmac" run "$dir/gemm/$p.tmab" --bench --dump-dir "$out/d-$p"
			r2=$rc
			for f in "$@"; do
				step "gemm-$f" 120 "$tmac" run "$dir/gemm/$f.tmab" --bench --dump-dir "$out/d-$f"
				r1=$rc
				rc=125
				if [ $r1 = 0 ] && [ $r2 = 0 ]; then
					TAIL=14 step "compare-$f" 150 "$python" bench/gpu/gemm_bias_gelu.py "$out/d-$f" --plain "$out/d-$p"
				fi
				rows+=("| $f vs $p | $(verdict $r1)/$(verdict $r2)/$(verdict $rc) | $(grep -E 'ratio|>=|TFLOP' "$out/compare-$f.log" 2>/dev/null | tr '\n' ' ' | cut -c1-300) |")
				rm -rf "$out/d-$f"
			done
			rm -rf "$out/d-$p"
		done
	done
	budget=$outer_budget start=$outer_start
	# 3. The norms with what is left.
	left=$((budget - (SECONDS - start)))
	if [ $left -gt 60 ]; then
		RUN_BUDGET=$left PYTHON=$python scripts/gpu-norms.sh run
		rows+=("| norms | exit $? | table above |")
	fi
	echo
	echo "== summary ($((SECONDS - start)) s)"
	echo "| step | result | notes |"
	echo "|---|---|---|"
	printf '%s\n' "${rows[@]}"
	[ "$failed" -eq 0 ]
	;;
*)
	sed -n '2,16p' "$0"
	exit 2
	;;
esac
