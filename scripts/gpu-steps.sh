# Shared by the GPU run scripts (gpu-step10/11/12/14.sh, gpu-norms.sh, gpu-attention.sh, and
# the A/B scripts for pack_bundles and unpack_bundles), sourced
# after they set out (the log directory), budget (seconds for the whole
# run) and start ($SECONDS when it began).
#
# step NAME CAP CMD...: runs CMD with a timeout of CAP seconds or what is
# left of the budget, logs to $out/NAME.log and shows its last TAIL lines
# (default 30); sets rc (124: timed out, 125: skipped for lack of time).
step() {
	local name=$1 cap=$2
	shift 2
	local left=$((budget - (SECONDS - start)))
	[ "$cap" -gt "$left" ] && cap=$left
	if [ "$cap" -lt 5 ]; then
		rc=125
		echo "== $name: skipped (run budget of $budget s spent)"
		return
	fi
	echo "== $name (timeout $cap s)"
	timeout "$cap" "$@" >"$out/$name.log" 2>&1
	rc=$?
	tail -n "${TAIL:-30}" "$out/$name.log"
}

# verdict RC: PASS, TIMEOUT, SKIPPED or FAIL (exit RC).
verdict() {
	case $1 in
	0) echo PASS ;;
	124) echo TIMEOUT ;;
	125) echo SKIPPED ;;
	*) echo "FAIL (exit $1)" ;;
	esac
}

# checked_row LABEL LOG: after a step that ran `tmac run` against a
# reference, adds the table row LABEL: PASS and the first PASS line of LOG
# when the step succeeded with a PASS and no FAIL, else the verdict and
# the first FAIL or error line, counting it in failed (returns 1 then).
checked_row() {
	if [ "$rc" = 0 ] && grep -q '^PASS' "$2" && ! grep -q '^FAIL' "$2"; then
		rows+=("| $1 | PASS | $(grep -m1 '^PASS' "$2" | cut -c1-110) |")
		return 0
	fi
	failed=$((failed + 1))
	rows+=("| $1 | $(verdict "$rc") | $(grep -m1 -E 'FAIL|error' "$2" | cut -c1-110) |")
	return 1
}

# run_setup SCRIPT BUDGET: the start of a run of a script whose bundles
# are in $dir: budget ($RUN_BUDGET, else BUDGET seconds) and start, a fresh
# log directory $out = $dir/run, tmac and python ($TMAC, $PYTHON), a check
# that the build step ran, and the card, driver, clocks and commit.
run_setup() {
	budget=${RUN_BUDGET:-$2}
	start=$SECONDS
	out=$dir/run
	rm -rf "$out" && mkdir -p "$out"
	tmac=${TMAC:-build/tmac}
	python=${PYTHON:-python3}
	[ -x "$tmac" ] || { echo "no $tmac: run scripts/$1 build first" >&2; exit 2; }
	local gpu
	gpu=$(nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader 2>/dev/null | head -1)
	echo "GPU: ${gpu:-none found}; commit $(cat "$dir/COMMIT" 2>/dev/null || echo unknown)"
}

# add_triton_bin: appends the bin directory of Triton's wheel (its ptxas
# and nvdisasm, CUDA's own) to PATH, for the scripts that compile tmac's
# PTX on the GPU machine, which has no CUDA toolkit on the PATH.
add_triton_bin() {
	local bin
	bin=$(python3 -c 'import os, triton; print(os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin"))' 2>/dev/null)
	[ -n "$bin" ] && PATH=$PATH:$bin
	return 0
}

# pack_bundles DIR: records the commit the bundles in DIR were built from
# (DIR/COMMIT, "+ uncommitted changes" when the tree differs) and packs
# DIR into DIR.tgz for the device call's carry (scripts/gpu-valid-rows.sh,
# scripts/gpu-prefetch-maps.sh).
pack_bundles() {
	echo "$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . || echo ' + uncommitted changes')" >"$1/COMMIT"
	tar -czf "$1.tgz" -C "$(dirname "$1")" "$(basename "$1")"
	du -sh build/tmac "$1.tgz"
}

# unpack_bundles DIR: on the GPU machine, unpacks DIR.tgz and prints the
# card, driver and clocks and the commit of the bundles.
unpack_bundles() {
	[ -f "$1.tgz" ] && tar -xzf "$1.tgz" -C "$(dirname "$1")"
	nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
	echo "bundles of $(cat "$1/COMMIT")"
}

# ab_table WHAT ROW...: the table of scripts/ab-bench.sh rows ("| case |
# a1 | b1 | a2 | b2 |"), WHAT saying what A and B are.
ab_table() {
	echo
	echo "Queued kernel medians (us): $1"
	shift
	echo "| case | A | B | A | B |"
	echo "|---|---:|---:|---:|---:|"
	printf '%s\n' "$@"
}

# gen_bundle DIR NAME SHAPE FLAGS STAGES ATTR [EXTRA]: writes gen_gemm.py's
# program for SHAPE (MxNxK) with FLAGS and EXTRA to DIR/src/NAME.tma, adds
# the loop attribute ATTR (e.g. tmac.warp_specialize; - for none) beside
# tmac.stages and compiles DIR/NAME.tmab with $TMAC (default build/tmac).
gen_bundle() {
	local m n k f=$1/src/$2.tma
	IFS=x read -r m n k <<<"$3"
	# shellcheck disable=SC2086 # FLAGS and EXTRA are lists of flags
	python3 bench/gpu/gen_gemm.py --m "$m" --n "$n" --k "$k" $4 --stages "$5" ${7:-} -o "$f" || return
	if [ "$6" != - ]; then sed -i "s/} {tmac.stages = $5 : i64}/} {tmac.stages = $5 : i64, $6}/" "$f" || return; fi
	"${TMAC:-build/tmac}" compile "$f" --emit bundle -o "$1/$2.tmab"
}

# gen_ab_build DIR A_EXTRA B_EXTRA CASE...: builds tmac, empties DIR, and
# for each CASE ("name|MxNxK|gen_gemm flags|stages|loop attribute or -")
# writes the bundles DIR/NAME.tmab (gen_gemm with A_EXTRA) and
# DIR/NAME-b.tmab (B_EXTRA). Stages "SA/SB" give A and B their own.
gen_ab_build() {
	local dir=$1 ea=$2 eb=$3 c name shape flags st attr
	shift 3
	CGO_ENABLED=0 make -s build || return
	rm -rf "$dir" && mkdir -p "$dir/src" || return
	for c in "$@"; do
		IFS='|' read -r name shape flags st attr <<<"$c"
		gen_bundle "$dir" "$name" "$shape" "$flags" "${st%/*}" "$attr" "$ea" || return
		gen_bundle "$dir" "$name-b" "$shape" "$flags" "${st#*/}" "$attr" "$eb" || return
	done
}

# gen_ab_rows DIR CASE...: the ab_table rows of scripts/ab-bench.sh on
# each case's DIR/NAME.tmab and DIR/NAME-b.tmab (checked on sampled rows),
# logs in DIR/logs.
gen_ab_rows() {
	local dir=$1 c name shape flags st attr
	shift
	mkdir -p "$dir/logs"
	for c in "$@"; do
		IFS='|' read -r name shape flags st attr <<<"$c"
		echo "| $name ($shape, $st stages) | $(bash scripts/ab-bench.sh "$dir/$name.tmab" "$dir/$name-b.tmab" "$dir/logs/$name" --ref-sample=2) |"
	done
}

# gen_ab_run DIR WHAT CASE...: on the GPU machine, unpacks DIR.tgz, times
# every case's A and B bundles (gen_ab_rows), copies the logs to
# $OUT/NAME-logs.tgz (NAME: DIR's base name) and prints the table last,
# WHAT saying what A and B are.
gen_ab_run() {
	local dir=$1 what=$2 rows
	shift 2
	unpack_bundles "$dir"
	mapfile -t rows < <(gen_ab_rows "$dir" "$@")
	[ -n "${OUT:-}" ] && tar -czf "$OUT/$(basename "$dir")-logs.tgz" -C "$dir" logs 2>/dev/null
	ab_table "$what" "${rows[@]}"
}

