#!/bin/sh
# A fake LLVM 22 llc built without the NVPTX target.
case "$1" in --version) printf 'LLVM (http://llvm.org/):\n  LLVM version 22.1.8\n  Registered Targets:\n    x86-64 - 64-bit X86: EM64T and AMD64\n'; exit 0;; esac
exit 1
