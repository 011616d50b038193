#!/usr/bin/env python3
"""Count the cases of the bad-input corpus (lit-tests/bad-input), one file
per category, and print a Markdown table (docs/bad-input.md holds it).

A case is a `// case:` line (one per `// -----` part of a file that
tmac opt --split-input-file splits) or a `// case (generated):` line (an
input the RUN lines write). For split files the script also checks that
every part has exactly one `// case:` line, so that the count is the
number of inputs actually checked. Exits 1 if a part has none or several.
"""
import glob
import os
import re
import sys

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lit-tests", "bad-input")
rows, total, bad = [], 0, False
for path in sorted(glob.glob(os.path.join(root, "*.tma"))):
    text = open(path, encoding="utf-8", errors="surrogateescape").read()
    split = "--split-input-file" in text and re.search(r"^// -----", text, re.M) is not None
    parts = re.split(r"^// -----.*$", text, flags=re.M) if split else []
    plain = len(re.findall(r"^// case:", text, re.M))
    generated = len(re.findall(r"^// case \(generated\):", text, re.M))
    if split:
        for i, p in enumerate(parts):
            n = len(re.findall(r"^// case:", p, re.M))
            if n != 1:
                print("%s: part %d has %d '// case:' lines" % (os.path.basename(path), i + 1, n), file=sys.stderr)
                bad = True
    n = plain + generated
    if n == 0:
        continue  # not a category (the count check itself)
    total += n
    rows.append((os.path.basename(path), plain, generated, n))
print("| file | split cases | generated cases | cases |")
print("|---|---:|---:|---:|")
for name, p, g, n in rows:
    print("| %s | %d | %d | %d |" % (name, p, g, n))
print("| **total** | %d | %d | **%d** |" % (sum(r[1] for r in rows), sum(r[2] for r in rows), total))
sys.exit(1 if bad else 0)
