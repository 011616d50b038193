#!/bin/sh
# Runs the real llc, appending its arguments (one line per call) to
# $LLC_LOG first.
echo "$@" >> "$LLC_LOG"
exec "$LLVM_BIN/llc" "$@"
