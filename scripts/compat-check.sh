#!/usr/bin/env bash
# Upstream-compatibility checks for a file without stored expected output:
# tmac's custom and generic output must equal mlir-opt 22's byte for byte,
# be a fixed point, and each tool must parse the other's output.
set -u -o pipefail
f=$1; shift
mlir_opt="${LLVM_BIN:-/usr/lib/llvm-22/bin}/mlir-opt"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
same() { # name a b
	if ! diff -u "$2" "$3" > "$tmp/d"; then echo "FAILED: $1" >&2; head -40 "$tmp/d" >&2; fail=1; fi
}
run() { local out=$1; shift; if ! "$@" > "$out" 2> "$out.err"; then echo "command failed: $*" >&2; cat "$out.err" >&2; fail=1; fi; }
run "$tmp/up" "$mlir_opt" "$@" "$f"
run "$tmp/upg" "$mlir_opt" "$@" --mlir-print-op-generic "$f"
run "$tmp/t" tmac opt "$@" "$f";                      same "custom output equals mlir-opt's" "$tmp/up" "$tmp/t"
run "$tmp/tg" tmac opt "$@" --print-op-generic "$f";  same "generic output equals mlir-opt's" "$tmp/upg" "$tmp/tg"
run "$tmp/tt" tmac opt "$@" "$tmp/t";                 same "fixed point" "$tmp/up" "$tmp/tt"
run "$tmp/ut" "$mlir_opt" "$@" "$tmp/t";              same "mlir-opt parses tmac output" "$tmp/up" "$tmp/ut"
run "$tmp/tu" tmac opt "$@" "$tmp/upg";               same "tmac parses mlir-opt generic output" "$tmp/up" "$tmp/tu"
exit $fail
