#!/usr/bin/env python3
"""Split a --split-input-file test into one file per case, for commands
that take a single program (tmac compile).

usage: split-cases.py INPUT OUTDIR

Cases are separated by `// -----` lines, as tmac opt --split-input-file
splits them. Case N goes to OUTDIR/case-NNN.tma, preceded by blank lines
so that every line keeps its line number in INPUT: diagnostics for a case
file carry the same line:column as for INPUT.
"""
import os
import re
import sys


def main():
    src, outdir = sys.argv[1], sys.argv[2]
    with open(src, "rb") as f:
        text = f.read()
    os.makedirs(outdir, exist_ok=True)
    marker = re.compile(rb"^// -----.*$", re.M)
    start, line, n = 0, 1, 0
    pieces = []
    for m in marker.finditer(text):
        pieces.append((text[start:m.start()], line))
        line += text.count(b"\n", start, m.end())
        start = m.end()
    pieces.append((text[start:], line))
    for body, first in pieces:
        n += 1
        with open(os.path.join(outdir, "case-%03d.tma" % n), "wb") as f:
            f.write(b"\n" * (first - 1) + body)


if __name__ == "__main__":
    main()
