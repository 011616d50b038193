#!/usr/bin/env bash
# Builds everything the GPU check needs, here (where llc is), into build/gpu:
# the launcher (CGO_ENABLED=0), the PTX of every GPU test, every example
# that compiles today, and every code generation lit test input.
set -euo pipefail
cd "$(dirname "$0")/.."
export CGO_ENABLED=0
go build -o build/tmac ./cmd/tmac
rm -rf build/gpu && mkdir -p build/gpu/ptx build/gpu/src
go build -o build/gpu/launcher ./gpu-tests/launcher
cp gpu-tests/*.tma build/gpu/src/
for f in gpu-tests/*.tma; do
	build/tmac compile "$f" --pass-pipeline='builtin.module(canonicalize,cse)' -o "build/gpu/ptx/$(basename "$f" .tma).ptx"
done
for f in examples/*.tma; do
	n=example-$(basename "$f" .tma)
	if build/tmac compile "$f" -o "build/gpu/ptx/$n.ptx" 2>/dev/null; then
		# The launcher reads the outlined kernel's signature from here.
		build/tmac compile "$f" --emit=mlir -o "build/gpu/src/$n.tma"
	else
		echo "skip example $f (does not compile yet)"
	fi
done
for f in lit-tests/codegen/*.tma; do
	case "$f" in *errors*) continue;; esac
	build/tmac compile "$f" --pass-pipeline='builtin.module()' -o "build/gpu/ptx/lit-$(basename "$f" .tma).ptx" 2>/dev/null || true
done
ls build/gpu/ptx | wc -l | xargs echo "PTX files:"
