#!/usr/bin/env python3
"""gen-big.py KIND: write a big test input to stdout.

  functions  50 MB of valid functions (30 ops each), then @last, which uses
             an undefined value on the last line but two
  oneline    the same, with every line break replaced by a space
  string     a function with a 50 MB string attribute, then a bad one
"""
import sys

MB50 = 50 * 2**20


def functions():
    ops = "".join("  %%v%d = arith.addi %%a, %%a : i32\n" % j for j in range(30))
    head = "func.func @f{}(%a: i32) -> i32 {{\n"
    tail = "  return %a : i32\n}\n"
    parts, size, i = [], 0, 0
    while size < MB50:
        f = head.format(i) + ops + tail
        parts.append(f)
        size += len(f)
        i += 1
    parts.append("func.func @last(%a: i32) -> i32 {\n  %x = arith.addi %a, %nope : i32\n  return %a : i32\n}\n")
    return "".join(parts)


kind = sys.argv[1]
if kind == "functions":
    sys.stdout.write(functions())
elif kind == "oneline":
    sys.stdout.write(functions().replace("\n", " ") + "\n")
elif kind == "string":
    sys.stdout.write('func.func @f() attributes {s = "' + "x" * MB50 + '", t = %bad} {\n  return\n}\n')
else:
    sys.exit("unknown kind " + kind)
