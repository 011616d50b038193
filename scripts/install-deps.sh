#!/usr/bin/env bash
# Installs what tmac's build and tests need when it is missing: Go is
# expected on PATH; LLVM 22 (llc, FileCheck, lit, not) and MLIR 22's mlir-opt
# come from Debian's llvm-22, llvm-22-tools and mlir-22-tools packages.
set -eu
LLVM_BIN=${LLVM_BIN:-/usr/lib/llvm-22/bin}
missing=()
for tool in llc FileCheck lit not mlir-opt; do
	[ -x "$LLVM_BIN/$tool" ] || missing+=("$tool")
done
if ! command -v go >/dev/null 2>&1 && [ ! -x /usr/local/go/bin/go ]; then
	echo "install-deps: Go is not installed; install Go 1.26 or newer (https://go.dev/dl) and retry." >&2
	exit 1
fi
[ ${#missing[@]} -eq 0 ] && exit 0
echo "install-deps: missing ${missing[*]} in $LLVM_BIN; installing llvm-22 llvm-22-tools mlir-22-tools" >&2
if ! command -v apt-get >/dev/null 2>&1; then
	echo "install-deps: apt-get is not available; install LLVM 22 and MLIR 22 tools so that $LLVM_BIN holds llc, FileCheck, lit, not and mlir-opt (or set LLVM_BIN)." >&2
	exit 1
fi
SUDO=""
if [ "$(id -u)" != 0 ]; then
	if command -v sudo >/dev/null 2>&1; then SUDO=sudo; else
		echo "install-deps: not root and no sudo; run as root: apt-get update && apt-get install -y llvm-22 llvm-22-tools mlir-22-tools" >&2
		exit 1
	fi
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
if ! $SUDO apt-get install -y -q llvm-22 llvm-22-tools mlir-22-tools; then
	echo "install-deps: apt-get could not install llvm-22 llvm-22-tools mlir-22-tools; these packages come from Debian bookworm-security (or apt.llvm.org)." >&2
	exit 1
fi
