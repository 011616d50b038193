#!/usr/bin/env bash
# Installs what tmac's build and tests need when it is missing: Go is
# expected on PATH; LLVM 22 (llc, llvm-link, opt, FileCheck, lit, not) and
# MLIR 22's mlir-opt come from Debian's llvm-22, llvm-22-tools and
# mlir-22-tools packages; NVIDIA's libdevice (libdevice.10.bc, the math
# library kernels calling accurate math functions are linked with) is
# extracted from Debian's non-free nvidia-cuda-toolkit package, without
# installing the toolkit or changing the system's apt sources.
set -eu
LLVM_BIN=${LLVM_BIN:-/usr/lib/llvm-22/bin}
if ! command -v go >/dev/null 2>&1 && [ ! -x /usr/local/go/bin/go ]; then
	echo "install-deps: Go is not installed; install Go 1.26 or newer (https://go.dev/dl) and retry." >&2
	exit 1
fi
SUDO=""
if [ "$(id -u)" != 0 ] && command -v sudo >/dev/null 2>&1; then SUDO=sudo; fi
export DEBIAN_FRONTEND=noninteractive

install_llvm() {
	local missing=()
	for tool in llc llvm-link opt FileCheck lit not mlir-opt; do
		[ -x "$LLVM_BIN/$tool" ] || missing+=("$tool")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	echo "install-deps: missing ${missing[*]} in $LLVM_BIN; installing llvm-22 llvm-22-tools mlir-22-tools" >&2
	if ! command -v apt-get >/dev/null 2>&1; then
		echo "install-deps: apt-get is not available; install LLVM 22 and MLIR 22 tools so that $LLVM_BIN holds llc, llvm-link, opt, FileCheck, lit, not and mlir-opt (or set LLVM_BIN)." >&2
		exit 1
	fi
	if [ "$(id -u)" != 0 ] && [ -z "$SUDO" ]; then
		echo "install-deps: not root and no sudo; run as root: apt-get update && apt-get install -y llvm-22 llvm-22-tools mlir-22-tools" >&2
		exit 1
	fi
	$SUDO apt-get update -q
	if ! $SUDO apt-get install -y -q llvm-22 llvm-22-tools mlir-22-tools; then
		echo "install-deps: apt-get could not install llvm-22 llvm-22-tools mlir-22-tools; these packages come from Debian bookworm-security (or apt.llvm.org)." >&2
		exit 1
	fi
}

# Where tmac looks for libdevice (toolchain.FindLibdevice; keep the two in
# step): $TMAC_LIBDEVICE (the file or its directory), the CUDA toolkit,
# Debian's nvidia-cuda-toolkit, then the two places this script uses.
have_libdevice() {
	local d
	if [ -n "${TMAC_LIBDEVICE:-}" ]; then
		[ -f "$TMAC_LIBDEVICE" ] || [ -f "$TMAC_LIBDEVICE/libdevice.10.bc" ]
		return
	fi
	for d in ${CUDA_HOME:+"$CUDA_HOME/nvvm/libdevice"} /usr/local/cuda/nvvm/libdevice /usr/lib/nvidia-cuda-toolkit/libdevice \
		/usr/local/share/tmac "${XDG_DATA_HOME:-$HOME/.local/share}/tmac"; do
		[ -f "$d/libdevice.10.bc" ] && return 0
	done
	return 1
}

# install_libdevice downloads nvidia-cuda-toolkit (about 84 MB) with a
# private apt source list and state directory that add Debian's non-free
# component, and keeps libdevice.10.bc (474 KB) and the package's
# copyright file (NVIDIA's license) from it: in /usr/local/share/tmac when
# it can write there, else in ${XDG_DATA_HOME:-~/.local/share}/tmac.
install_libdevice() {
	have_libdevice && return 0
	local help="install the CUDA toolkit, or put libdevice.10.bc in /usr/local/share/tmac or point \$TMAC_LIBDEVICE at it"
	if [ -n "${TMAC_LIBDEVICE:-}" ]; then
		echo "install-deps: \$TMAC_LIBDEVICE is set to $TMAC_LIBDEVICE, which holds no libdevice.10.bc" >&2
		exit 1
	fi
	local codename=""
	[ -r /etc/os-release ] && codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
	if ! command -v apt-get >/dev/null 2>&1 || ! command -v dpkg-deb >/dev/null 2>&1 || [ -z "$codename" ] ||
		[ ! -r /usr/share/keyrings/debian-archive-keyring.gpg ]; then
		echo "install-deps: NVIDIA's libdevice (libdevice.10.bc) is missing and this is not a Debian system to fetch it from; $help." >&2
		exit 1
	fi
	local dest=/usr/local/share/tmac
	if ! { mkdir -p "$dest" 2>/dev/null && [ -w "$dest" ]; } && ! { [ -n "$SUDO" ] && $SUDO mkdir -p "$dest"; }; then
		dest=${XDG_DATA_HOME:-$HOME/.local/share}/tmac
		mkdir -p "$dest"
		SUDO=""
	elif [ -w "$dest" ]; then
		SUDO=""
	fi
	echo "install-deps: fetching NVIDIA's libdevice from Debian's non-free nvidia-cuda-toolkit package into $dest" >&2
	tmp=$(mktemp -d) # global: the EXIT trap runs after the function returns
	trap 'rm -rf "$tmp"' EXIT
	mkdir -p "$tmp/parts" "$tmp/lists/partial" "$tmp/cache/archives/partial" "$tmp/x"
	local key=/usr/share/keyrings/debian-archive-keyring.gpg
	cat >"$tmp/sources.list" <<EOF
deb [signed-by=$key] http://deb.debian.org/debian $codename $codename-updates non-free
deb [signed-by=$key] http://deb.debian.org/debian-security $codename-security non-free
EOF
	local apt=(apt-get -q -o "Dir::Etc::sourcelist=$tmp/sources.list" -o "Dir::Etc::sourceparts=$tmp/parts"
		-o "Dir::State::Lists=$tmp/lists" -o "Dir::Cache=$tmp/cache" -o Debug::NoLocking=1)
	[ "$(id -u)" = 0 ] && apt+=(-o APT::Sandbox::User=root)
	if ! "${apt[@]}" update >"$tmp/log" 2>&1 || ! (cd "$tmp" && "${apt[@]}" download nvidia-cuda-toolkit >>"$tmp/log" 2>&1); then
		cat "$tmp/log" >&2
		echo "install-deps: could not download nvidia-cuda-toolkit from Debian's non-free archive; $help." >&2
		exit 1
	fi
	local lib=./usr/lib/nvidia-cuda-toolkit/libdevice/libdevice.10.bc copyright=./usr/share/doc/nvidia-cuda-toolkit/copyright
	if ! dpkg-deb --fsys-tarfile "$tmp"/nvidia-cuda-toolkit_*.deb | tar -x -C "$tmp/x" "$lib" "$copyright"; then
		echo "install-deps: the nvidia-cuda-toolkit package holds no $lib; $help." >&2
		exit 1
	fi
	$SUDO install -m 644 "$tmp/x/$lib" "$dest/libdevice.10.bc"
	$SUDO install -m 644 "$tmp/x/$copyright" "$dest/libdevice.copyright"
	echo "install-deps: installed $dest/libdevice.10.bc (NVIDIA's license: $dest/libdevice.copyright)" >&2
}

# install_numpy installs numpy for the lit tests of tmac's Python tools
# (bench/gpu/accuracy; `REQUIRES: numpy`). Optional: without it those tests
# are reported unsupported, so a failure here only warns.
install_numpy() {
	python3 -c 'import numpy' >/dev/null 2>&1 && return 0
	command -v apt-get >/dev/null 2>&1 || return 0
	[ "$(id -u)" = 0 ] || [ -n "$SUDO" ] || return 0
	if ! $SUDO apt-get install -y -q python3-numpy >/dev/null 2>&1; then
		$SUDO apt-get update -q >/dev/null 2>&1 || true
		$SUDO apt-get install -y -q python3-numpy >/dev/null 2>&1 ||
			echo "install-deps: could not install python3-numpy; the lit tests that need numpy will be unsupported" >&2
	fi
}

# install_python_venv makes sure $TMAC_PYTHON (default /usr/bin/python3) can
# create a virtual environment and build the tmac Python package offline
# (python/; `pip install --no-build-isolation --no-index`): Debian's
# python3-venv, python3-pip, python3-setuptools and python3-wheel.
install_python_venv() {
	local py=${TMAC_PYTHON:-/usr/bin/python3}
	if [ -x "$py" ] && "$py" -c 'import venv, ensurepip, setuptools, wheel' >/dev/null 2>&1; then
		return 0
	fi
	local help="install Python 3.10 or newer with venv, pip, setuptools and wheel, or point TMAC_PYTHON at one"
	if ! command -v apt-get >/dev/null 2>&1 || { [ "$(id -u)" != 0 ] && [ -z "$SUDO" ]; }; then
		echo "install-deps: $py cannot build the tmac Python package; $help." >&2
		exit 1
	fi
	echo "install-deps: installing python3 python3-venv python3-pip python3-setuptools python3-wheel" >&2
	if ! $SUDO apt-get install -y -q python3 python3-venv python3-pip python3-setuptools python3-wheel >/dev/null 2>&1; then
		$SUDO apt-get update -q >/dev/null 2>&1 || true
		if ! $SUDO apt-get install -y -q python3 python3-venv python3-pip python3-setuptools python3-wheel; then
			echo "install-deps: apt-get could not install the Python packages; $help." >&2
			exit 1
		fi
	fi
}

install_llvm
install_libdevice
install_numpy
install_python_venv
