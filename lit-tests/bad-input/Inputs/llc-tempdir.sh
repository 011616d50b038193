#!/bin/sh
# A wrapper around llc for the temporary-file checks: it appends to
# $LLC_LOG the permissions of the directory holding the LLVM IR tmac gives
# it, and whether that directory lies in $TMPDIR; then it runs the real llc,
# or fails when $LLC_FAIL is set.
case "$1" in --version) exec "$LLVM_BIN/llc" --version;; esac
for a in "$@"; do
  case "$a" in
    *.ll)
      d=$(dirname "$a")
      echo "dir mode $(stat -c %a "$d")" >> "$LLC_LOG"
      case "$d" in "$TMPDIR"/*) echo "dir in TMPDIR" >> "$LLC_LOG";; esac
      ;;
  esac
done
if [ -n "$LLC_FAIL" ]; then
  echo "llc: error: told to fail" >&2
  exit 1
fi
exec "$LLVM_BIN/llc" "$@"
