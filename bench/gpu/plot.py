#!/usr/bin/env python3
"""TFLOP/s against GEMM size, one line per implementation and input dtype,
from the results JSON of peers.py, written as an SVG by hand (no
matplotlib, no other dependency):

    python3 bench/gpu/plot.py results.json -o docs/bench-gemm.svg

Left panel: square GEMMs (M=N=K, x axis M). Right panel: the others (the
skinny ones, x axis M, N and K named in the title when they are the same
for all). Points of implementations that failed their check, did not run
or have no result are left out (the line breaks there); the caption says
which.
"""

import argparse
import json
import math
import sys
from xml.sax.saxutils import escape

# Implementation name prefix -> (legend label, colour).
SERIES = [
    ("tmac", "tmac", "#d62728"),
    ("cuBLAS (torch.matmul", "cuBLAS (in-dtype out)", "#1f77b4"),
    ("cuBLAS (torch.mm, f32 out)", "cuBLAS (f32 out)", "#17becf"),
    ("Triton tiled", "Triton tiled", "#2ca02c"),
    ("Triton TMA persistent", "Triton TMA persistent", "#9467bd"),
    ("MLIR 22 chapter-4", "MLIR 22 chapter-4", "#8c564b"),
]
# Line styles per case: input dtype, and "->f32" for the f16 cases whose
# tmac output is f32 (the MLIR-comparable ones).
DASH = {"f16": "", "bf16": "6,4", "f16->f32": "2,3"}
MARK = {"f16": "circle", "bf16": "square", "f16->f32": "circle"}

W, H = 980, 470
PANEL_W, PANEL_H = 360, 300
TOP, LEFT1, LEFT2 = 70, 80, 530


def series_of(name):
    for prefix, label, colour in SERIES:
        if name == prefix or name.startswith(prefix + " ") or (prefix != "tmac" and name.startswith(prefix)):
            return label, colour
    return None


def nice_ticks(vmax, n=5):
    if vmax <= 0:
        return [0, 1]
    raw = vmax / n
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    top = step * math.ceil(vmax / step)
    k = int(round(top / step))
    return [i * step for i in range(k + 1)]


def fmt_tick(v):
    return f"{v:g}"


def collect(results):
    """{panel: {(label, dtype): {x: tflops}}}, x values per panel, notes."""
    panels = {"square": {}, "skinny": {}}
    xs = {"square": set(), "skinny": set()}
    nk = set()
    missing = []
    for c in results.get("cases", []):
        if c.get("kind") != "gemm":
            continue
        info = c["info"]
        m, n, k = info["M"], info["N"], info["K"]
        panel = "square" if m == n == k else "skinny"
        if panel == "skinny":
            nk.add((n, k))
        xs[panel].add(m)
        tm = next((i for i in c["impls"] if i["name"] == "tmac"), {})
        style = c["dtype"]
        if tm.get("out_dtype") and tm["out_dtype"] != c["dtype"]:
            style = f"{c['dtype']}->{tm['out_dtype']}"
        for i in c["impls"]:
            s = series_of(i["name"])
            if s is None:
                continue
            key = (s[0], style)
            if i["status"] == "PASS" and i.get("throughput"):
                panels[panel].setdefault(key, {})[m] = i["throughput"] / 1e12
            else:
                panels[panel].setdefault(key, {})
                missing.append(f"{s[0]} {c['dtype']} {m}x{n}x{k}: {i['status']}")
    return panels, xs, nk, missing


def svg(results):
    panels, xs, nk, missing = collect(results)
    meta = results.get("meta", {})
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" '
           f'font-family="DejaVu Sans, Helvetica, Arial, sans-serif" font-size="12">',
           f'<rect width="{W}" height="{H}" fill="white"/>']
    title = f"GEMM throughput on {meta.get('device', '?')} ({meta.get('date', '?')}, commit {meta.get('commit', '?')})"
    out.append(f'<text x="{W / 2}" y="24" text-anchor="middle" font-size="15">{escape(title)}</text>')
    out.append(f'<text x="{W / 2}" y="44" text-anchor="middle" fill="#555">f32 accumulate; solid: f16 in and out, dashed: bf16 in and out, '
               f'dotted: f16 in, f32 out; median of {meta.get("reps", "?")} runs</text>')
    ymax = max([v for p in panels.values() for d in p.values() for v in d.values()] + [1])
    ticks = nice_ticks(ymax)
    ytop = ticks[-1]
    skinny_title = "skinny: x = M"
    if len(nk) == 1:
        n, k = next(iter(nk))
        skinny_title = f"skinny: N={n}, K={k}, x = M" if n != k else f"skinny: N=K={n}, x = M"
    for panel, left, ptitle in (("square", LEFT1, "square: M=N=K, x = M"), ("skinny", LEFT2, skinny_title)):
        xv = sorted(xs[panel])
        out.append(f'<text x="{left + PANEL_W / 2}" y="{TOP - 8}" text-anchor="middle" font-size="13">{escape(ptitle)}</text>')
        out.append(f'<rect x="{left}" y="{TOP}" width="{PANEL_W}" height="{PANEL_H}" fill="none" stroke="#333"/>')
        for t in ticks:
            y = TOP + PANEL_H - PANEL_H * t / ytop
            out.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + PANEL_W}" y2="{y:.1f}" stroke="#ddd"/>')
            out.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{fmt_tick(t)}</text>')
        out.append(f'<text x="{left - 48}" y="{TOP + PANEL_H / 2}" text-anchor="middle" '
                   f'transform="rotate(-90 {left - 48} {TOP + PANEL_H / 2})">TFLOP/s</text>')
        if not xv:
            out.append(f'<text x="{left + PANEL_W / 2}" y="{TOP + PANEL_H / 2}" text-anchor="middle" fill="#888">no data</text>')
            continue
        # Sizes are evenly spaced (they grow by powers of two).
        def xpos(x, xv=xv, left=left):
            if len(xv) == 1:
                return left + PANEL_W / 2
            return left + 30 + (PANEL_W - 60) * xv.index(x) / (len(xv) - 1)
        for x in xv:
            px = xpos(x)
            out.append(f'<line x1="{px:.1f}" y1="{TOP + PANEL_H}" x2="{px:.1f}" y2="{TOP + PANEL_H + 5}" stroke="#333"/>')
            out.append(f'<text x="{px:.1f}" y="{TOP + PANEL_H + 19}" text-anchor="middle">{x}</text>')
        for (label, dtype), pts in sorted(panels[panel].items()):
            colour = next(c for _, l, c in SERIES if l == label)
            dash = DASH.get(dtype, "2,3")
            # Consecutive points are joined; a missing size breaks the line.
            run = []
            for x in xv + [None]:
                if x is not None and x in pts:
                    run.append((xpos(x), TOP + PANEL_H - PANEL_H * pts[x] / ytop))
                    continue
                if len(run) > 1:
                    d = " ".join(f"{px:.1f},{py:.1f}" for px, py in run)
                    out.append(f'<polyline points="{d}" fill="none" stroke="{colour}" stroke-width="2"'
                               + (f' stroke-dasharray="{dash}"' if dash else "") + "/>")
                for px, py in run:
                    if MARK.get(dtype) == "square":
                        out.append(f'<rect x="{px - 3.5:.1f}" y="{py - 3.5:.1f}" width="7" height="7" fill="{colour}"/>')
                    else:
                        out.append(f'<circle cx="{px:.1f}" cy="{py:.1f}" r="3.5" fill="{colour}"/>')
                run = []
    # Legend.
    ly = TOP + PANEL_H + 40
    lx = LEFT1
    for _, label, colour in SERIES:
        out.append(f'<line x1="{lx}" y1="{ly}" x2="{lx + 24}" y2="{ly}" stroke="{colour}" stroke-width="2"/>')
        out.append(f'<circle cx="{lx + 12}" cy="{ly}" r="3.5" fill="{colour}"/>')
        out.append(f'<text x="{lx + 30}" y="{ly + 4}">{escape(label)}</text>')
        lx += 30 + 8 * len(label) + 24
    if missing:
        note = "not plotted: " + "; ".join(missing[:6]) + (f"; and {len(missing) - 6} more" if len(missing) > 6 else "")
        out.append(f'<text x="{LEFT1}" y="{ly + 26}" fill="#a00" font-size="11">{escape(note)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results")
    ap.add_argument("-o", "--output", default="docs/bench-gemm.svg")
    args = ap.parse_args()
    with open(args.results) as f:
        results = json.load(f)
    text = svg(results)
    with open(args.output, "w") as f:
        f.write(text)
    print(f"wrote {args.output}", file=sys.stderr)


if __name__ == "__main__":
    main()
