#!/usr/bin/env bash
# Round-trip and upstream-compatibility checks for one test file F, against
# F.custom.expected and F.generic.expected (mlir-opt 22's own output):
#   1. tmac opt F                       == custom.expected   (custom printer)
#   2. tmac opt --print-op-generic F    == generic.expected  (generic printer)
#   3. tmac opt F | tmac opt            == custom.expected   (fixed point)
#   4. tmac opt --print-op-generic F | tmac opt == custom.expected (generic parser)
#   5. tmac opt F | mlir-opt            == custom.expected   (upstream parses tmac)
#   6. mlir-opt F | tmac opt            == custom.expected   (tmac parses upstream)
#   7. mlir-opt --mlir-print-op-generic F | tmac opt == custom.expected
# Extra flags (e.g. --allow-unregistered-dialect) are passed to both tools.
set -u -o pipefail
f=$1; shift
llvm_bin=${LLVM_BIN:-/usr/lib/llvm-22/bin}
mlir_opt="$llvm_bin/mlir-opt"
custom="$f.custom.expected"
generic="$f.generic.expected"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { # name, produced file, expected file
	if ! diff -u "$3" "$2" > "$tmp/diff"; then
		echo "FAILED: $1" >&2
		head -40 "$tmp/diff" >&2
		fail=1
	fi
}
run() { # out, command...
	local out=$1; shift
	if ! "$@" > "$out" 2> "$out.err"; then
		echo "command failed: $*" >&2
		cat "$out.err" >&2
		fail=1
	fi
}
run "$tmp/1" tmac opt "$@" "$f";                                           check "custom print" "$tmp/1" "$custom"
if [ -f "$generic" ]; then
	run "$tmp/2" tmac opt "$@" --print-op-generic "$f";                    check "generic print" "$tmp/2" "$generic"
	run "$tmp/4" tmac opt "$@" "$tmp/2";                                   check "generic parse" "$tmp/4" "$custom"
fi
run "$tmp/3" tmac opt "$@" "$tmp/1";                                       check "fixed point" "$tmp/3" "$custom"
run "$tmp/5" "$mlir_opt" "$@" "$tmp/1";                                    check "mlir-opt parses tmac output" "$tmp/5" "$custom"
run "$tmp/6u" "$mlir_opt" "$@" "$f"; run "$tmp/6" tmac opt "$@" "$tmp/6u"; check "tmac parses mlir-opt output" "$tmp/6" "$custom"
run "$tmp/7u" "$mlir_opt" "$@" --mlir-print-op-generic "$f"; run "$tmp/7" tmac opt "$@" "$tmp/7u"; check "tmac parses mlir-opt generic output" "$tmp/7" "$custom"
exit $fail
