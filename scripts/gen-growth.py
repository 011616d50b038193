#!/usr/bin/env python3
"""Writes a module of about N lines for tmac's growth curve (issue 9):

  kernels: copies of examples/add_pipelined.tma's function under new
           names (every pass has work: outlining, the TMA pipeline, phases,
           shared-memory planning, lowering), until N lines;
  chain:   one function whose body is a single block of N arith ops, each
           using the previous result and a few earlier ones (one long
           dominance chain, many uses: CSE, canonicalize and SSA naming on
           one huge block).

usage: gen-growth.py kernels|chain N > OUT.tma
"""
import os
import re
import sys


def kernels(n):
    src = open(os.path.join(os.path.dirname(__file__), "..", "examples", "add_pipelined.tma")).read()
    lines = [l for l in src.splitlines() if not l.startswith("//")]
    aliases = [l for l in lines if l.startswith("!")]
    body = "\n".join(l for l in lines if not l.startswith("!") and l.strip())
    # Only the kernel function (the @reference stays out: it is host code
    # for `tmac run`).
    m = re.search(r"func\.func @add_pipelined\(.*?\n}\n", body + "\n", re.S)
    fn = m.group(0)
    per = fn.count("\n")
    out = aliases[:]
    count = len(out)
    i = 0
    while count + per <= n or i == 0:
        out.append(fn.replace("@add_pipelined(", f"@add_{i}(").rstrip("\n"))
        count += per
        i += 1
    return out


def chain(n):
    out = ["func.func @chain(%a: i32, %b: i32) -> i32 {"]
    prev = ["%a", "%b"]
    ops = ["arith.addi", "arith.muli", "arith.xori", "arith.subi"]
    for i in range(max(n - 3, 1)):
        x = prev[-1]
        y = prev[-(i % 7 + 2)] if len(prev) > i % 7 + 2 else "%b"
        out.append(f"  %v{i} = {ops[i % 4]} {x}, {y} : i32")
        prev.append(f"%v{i}")
    out.append(f"  return {prev[-1]} : i32")
    out.append("}")
    return out


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("kernels", "chain"):
        sys.exit(__doc__)
    n = int(sys.argv[2])
    print("\n".join(kernels(n) if sys.argv[1] == "kernels" else chain(n)))


main()
