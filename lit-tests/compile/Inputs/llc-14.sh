#!/bin/sh
# A fake llc that is too old.
case "$1" in --version) printf 'LLVM (http://llvm.org/):\n  LLVM version 14.0.6\n  Registered Targets:\n    nvptx64 - NVIDIA PTX 64-bit\n'; exit 0;; esac
echo "should not be run" >&2
exit 1
