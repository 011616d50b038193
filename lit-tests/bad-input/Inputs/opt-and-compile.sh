#!/bin/sh
# opt-and-compile.sh FILE: runs `tmac opt FILE -o FILE.out` and
# `tmac compile FILE -o FILE.ptx`, both expected to fail, and prints opt's
# diagnostics. Prints COMPILED if either succeeded, WRITTEN if either left
# its output file, and MISMATCH followed by compile's diagnostics if they
# differ from opt's.
f=$1
tmac opt "$f" -o "$f.out" 2>"$f.opt.err" && echo "COMPILED by tmac opt: $f"
tmac compile "$f" -o "$f.ptx" 2>"$f.compile.err" && echo "COMPILED by tmac compile: $f"
[ -e "$f.out" ] && echo "WRITTEN $f.out"
[ -e "$f.ptx" ] && echo "WRITTEN $f.ptx"
cat "$f.opt.err"
if ! cmp -s "$f.opt.err" "$f.compile.err"; then
  echo "MISMATCH: tmac compile said"
  cat "$f.compile.err"
fi
exit 0
