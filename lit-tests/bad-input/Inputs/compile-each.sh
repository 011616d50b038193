#!/bin/sh
# compile-each.sh DIR [tmac compile flags...]: runs `tmac compile` on every
# DIR/case-*.tma with -o CASE.ptx. A compilation that succeeds prints
# "COMPILED CASE"; a failed one that still left CASE.ptx prints
# "WRITTEN CASE". Diagnostics go to stderr as usual.
dir=$1
shift
for f in "$dir"/case-*.tma; do
  if tmac compile "$f" -o "$f.ptx" "$@"; then
    echo "COMPILED $f"
  elif [ -e "$f.ptx" ]; then
    echo "WRITTEN $f"
  fi
done
