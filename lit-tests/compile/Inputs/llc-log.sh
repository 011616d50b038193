#!/bin/sh
# Runs the real llc, appending its arguments (one line per compilation) to
# $LLC_LOG first. The --version check runs concurrently with the
# compilation, so it is not logged (its order would vary).
if [ "$1" != "--version" ]; then echo "$@" >> "$LLC_LOG"; fi
exec "$LLVM_BIN/llc" "$@"
