#!/usr/bin/env bash
# Proves a refactor changed no output: builds tmac at OLD (default bce5777,
# the commit before step 9) and from the working tree, compiles every
# example, variant, GPU test program and tune-generated variant with both,
# and compares the PTX, the LLVM IR, the IR after the passes and
# `tmac explain` (text and Markdown) byte for byte.
#
#   scripts/identity-check.sh [OLD]
#
# Prints one line per difference (kind and file) and a summary table last;
# exits 1 if anything differs or either side failed where the other did
# not. Work files go to build/identity/ (git-ignored).
set -u -o pipefail
cd "$(dirname "$0")/.."
export PATH=/usr/local/go/bin:$PATH CGO_ENABLED=0
old=${1:-bce5777}
work=build/identity
mkdir -p build
# One run at a time: concurrent runs would share the work directory.
exec 9>build/identity.lock
flock 9
rm -rf "$work"
mkdir -p "$work/old" "$work/new"

# Build both compilers. The old one from a temporary worktree outside the
# repository (a Go tree under build/ would be seen by go vet ./...).
src=$(mktemp -d)/src-old
git worktree add --detach "$src" "$old" >/dev/null 2>&1 || { echo "cannot check out $old" >&2; exit 2; }
trap 'git worktree remove --force "$src" 2>/dev/null; rm -rf "$(dirname "$src")"' EXIT
(cd "$src" && go build -o "$OLDPWD/$work/old/tmac" ./cmd/tmac) || { echo "old build failed" >&2; exit 2; }
go build -o "$work/new/tmac" ./cmd/tmac || { echo "new build failed" >&2; exit 2; }

# The programs: every .tma the repository runs or benchmarks (the test
# programs of lit-tests are checked by lit itself).
progs=$(ls examples/*.tma examples/variants/*.tma examples/tutorial/*.tma gpu-tests/*.tma 2>/dev/null)

# Tune variants: stage counts and schedules over the GEMM and copy designs.
for side in old new; do
	for f in examples/gemm_ws.tma examples/gemm_pipelined.tma examples/gemm_ws_persistent.tma \
		examples/variants/gemm_pingpong.tma examples/add_pipelined.tma examples/memcpy_pipelined.tma; do
		[ -f "$f" ] || continue
		n=$(basename "$f" .tma)
		"$work/$side/tmac" tune build "$f" -o "$work/$side/tune/$n" --stages 2,3,4 \
			--schedules pipelined,ws,pingpong >"$work/$side/tune-$n.log" 2>&1
		echo "exit $?" >>"$work/$side/tune-$n.log"
	done
done

same=0 differ=0 failed=0
report() { # kind, name, old file, new file
	if cmp -s "$3" "$4"; then
		same=$((same + 1))
	else
		differ=$((differ + 1))
		echo "DIFF $1 $2"
		diff "$3" "$4" | head -8 | sed 's/^/    /'
	fi
}
for side in old new; do
	for f in $progs; do
		n=${f//\//_}
		o="$work/$side/out/$n"
		mkdir -p "$o"
		for emit in ptx llvm mlir; do
			"$work/$side/tmac" compile "$f" --emit=$emit -o "$o/$emit" 2>"$o/$emit.err"
			echo "exit $?" >>"$o/$emit.err"
		done
		"$work/$side/tmac" explain "$f" >"$o/explain" 2>&1
		echo "exit $?" >>"$o/explain"
		"$work/$side/tmac" explain --format=md "$f" >"$o/explain.md" 2>&1
		echo "exit $?" >>"$o/explain.md"
	done
done
for f in $progs; do
	n=${f//\//_}
	for k in ptx llvm mlir explain explain.md ptx.err llvm.err mlir.err; do
		a="$work/old/out/$n/$k" b="$work/new/out/$n/$k"
		[ -e "$a" ] || [ -e "$b" ] || continue
		touch "$a" "$b"
		report "$k" "$f" "$a" "$b"
	done
done
# Tune outputs: every generated file (sources, PTX, bundles' PTX, manifests).
(cd "$work/old" && find tune -type f | sort) >"$work/tune-old.list"
(cd "$work/new" && find tune -type f | sort) >"$work/tune-new.list"
report "tune-file-list" "" "$work/tune-old.list" "$work/tune-new.list"
while read -r p; do
	case "$p" in
	*.tmab) # tar: compare the members, not the archive headers
		for m in kernels.ptx manifest.json module.tma; do
			tar -xOf "$work/old/$p" "$m" >"$work/m-old" 2>/dev/null
			tar -xOf "$work/new/$p" "$m" >"$work/m-new" 2>/dev/null
			report "tune:$m" "$p" "$work/m-old" "$work/m-new"
		done ;;
	*) [ -f "$work/new/$p" ] && report tune "$p" "$work/old/$p" "$work/new/$p" ;;
	esac
done <"$work/tune-old.list"
for side in old new; do sed "s|$work/$side/|DIR/|g" "$work/$side"/tune-*.log >"$work/$side/tune.logs"; done
report tune-logs "" "$work/old/tune.logs" "$work/new/tune.logs"

echo
echo "| programs | tune files | identical | different |"
echo "|---|---|---|---|"
echo "| $(echo "$progs" | wc -w) | $(wc -l <"$work/tune-new.list") | $same | $differ |"
[ "$differ" -eq 0 ]
