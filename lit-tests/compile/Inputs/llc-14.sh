#!/bin/sh
# A fake llc that is too old (tmac checks the version while llc runs, and
# reports the version problem rather than the failed compilation).
case "$1" in --version) printf 'LLVM (http://llvm.org/):\n  LLVM version 14.0.6\n  Registered Targets:\n    nvptx64 - NVIDIA PTX 64-bit\n'; exit 0;; esac
echo "llc-14: cannot compile this" >&2
exit 1
