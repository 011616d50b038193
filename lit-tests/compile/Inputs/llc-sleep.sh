#!/bin/sh
# A stand-in for llc that writes the directory of the LLVM IR tmac gives it
# to $LLC_LOG and then sleeps, for the interrupt test (llc-interrupt.tma).
case "$1" in --version) exec "$LLVM_BIN/llc" --version;; esac
for a in "$@"; do
  case "$a" in *.ll) dirname "$a" > "$LLC_LOG.tmp" && mv "$LLC_LOG.tmp" "$LLC_LOG";; esac
done
exec sleep 30
