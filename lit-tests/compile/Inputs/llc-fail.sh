#!/bin/sh
# A fake llc: answers --version like LLVM 22 with NVPTX, then fails.
case "$1" in --version) printf 'LLVM (http://llvm.org/):\n  LLVM version 22.1.8\n  Registered Targets:\n    nvptx64 - NVIDIA PTX 64-bit\n'; exit 0;; esac
echo "llc: error: fake-llc: out of cheese" >&2
exit 1
