#!/usr/bin/env python3
"""TFLOP/s against GEMM shape, one SVG per input/output dtype (and scale
mode for the scaled fp8 GEMMs), one line per implementation, from results
JSONs of peers.py; written by hand (no matplotlib):

    python3 bench/gpu/plot_shapes.py RESULTS.json... -o docs/bench/issue20

writes PREFIX-<group>.svg for each group found (bf16-bf16, e4m3-tensor,
e4m3-row, ...). Shapes are the x axis in the order of the files and their
cases (categorical: the issue's shape lists mix square, skinny and LLM
shapes). When several files hold the same case (by name), each
implementation's result is the last file's that has it: a later run that
re-measured tmac and cuBLAS on a case keeps the earlier run's Triton
result, and the caption says so. Points that failed, did not run or have
no result are left out (the line breaks there).
"""

import argparse
import json
import sys
from xml.sax.saxutils import escape

from plot import nice_ticks, fmt_tick

# Implementation name prefix -> (legend label, colour).
SERIES = [
    ("tmac", "tmac", "#d62728"),
    ("cuBLAS (torch.matmul", "cuBLAS (torch.matmul)", "#1f77b4"),
    ("Triton tiled", "Triton tiled", "#2ca02c"),
    ("Triton TMA persistent", "Triton TMA persistent", "#9467bd"),
    ("torch._scaled_mm (per-tensor)", "torch._scaled_mm", "#1f77b4"),
    ("torch._scaled_mm (row-wise)", "torch._scaled_mm", "#1f77b4"),
    ("torch._scaled_mm (per-tensor, fast accum)", "torch._scaled_mm fast accum", "#17becf"),
    ("torch._scaled_mm (row-wise, fast accum)", "torch._scaled_mm fast accum", "#17becf"),
    ("Triton FP8 TMA (seed 002)", "Triton FP8 TMA (seed 002)", "#2ca02c"),
]

W, TOP, LEFT, PANEL_H = 1000, 70, 80, 320


def series_of(name):
    for prefix, label, colour in SERIES:
        if name == prefix or (prefix != "tmac" and name.startswith(prefix)):
            return label, colour
    return None


def group_of(c):
    tm = next((i for i in c["impls"] if i["name"] == "tmac"), {})
    if c["kind"] == "scaled":
        return f"{c['dtype']}-{'row' if c['info'].get('scales') == 'row-wise' else 'tensor'}"
    return f"{c['dtype']}-{tm.get('out_dtype') or c['dtype']}"


def merge(files):
    """[(group, shape label, {label: (tflops or None, status, source)})]
    in order, and the metadata of the files."""
    cases, order, metas = {}, [], []
    for path in files:
        with open(path) as f:
            res = json.load(f)
        metas.append(res.get("meta", {}))
        for c in res.get("cases", []):
            if c.get("kind") not in ("gemm", "scaled"):
                continue
            if c["name"] not in cases:
                order.append(c["name"])
                cases[c["name"]] = (group_of(c), f"{c['info']['M']}x{c['info']['N']}x{c['info']['K']}", {})
            impls = cases[c["name"]][2]
            for i in c["impls"]:
                s = series_of(i["name"])
                if s is None:
                    continue
                t = i["throughput"] / 1e12 if i["status"] == "PASS" and i.get("throughput") else None
                if t is not None or s[0] not in impls:
                    impls[s[0]] = (t, i["status"], path)
    return [cases[n] for n in order], metas


def svg(group, rows, metas):
    n = len(rows)
    pw = max(400, min(W - LEFT - 40, 34 * n))
    h = TOP + PANEL_H + 150
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{h}" viewBox="0 0 {W} {h}" '
           f'font-family="DejaVu Sans, Helvetica, Arial, sans-serif" font-size="12">',
           f'<rect width="{W}" height="{h}" fill="white"/>']
    devs = sorted({m.get("device", "?") for m in metas})
    dates = sorted({m.get("date", "?") for m in metas})
    commits = sorted({m.get("commit", "?") + (f" (tmac binary {m['tmac_binary']})" if m.get("tmac_binary", "unknown") != "unknown" else "")
                      for m in metas})
    title = f"GEMM {group}: TFLOP/s per shape (M x N x K) on {', '.join(devs)}, {', '.join(dates)}, commit {', '.join(commits)}"
    out.append(f'<text x="{W / 2}" y="24" text-anchor="middle" font-size="14">{escape(title)}</text>')
    out.append(f'<text x="{W / 2}" y="44" text-anchor="middle" fill="#555">f32 accumulation; median of each run; '
               f'peers on the same inputs as tmac</text>')
    vals = [v[0] for _, _, impls in rows for v in impls.values() if v[0] is not None]
    ticks = nice_ticks(max(vals + [1]))
    ytop = ticks[-1]
    out.append(f'<rect x="{LEFT}" y="{TOP}" width="{pw}" height="{PANEL_H}" fill="none" stroke="#333"/>')
    for t in ticks:
        y = TOP + PANEL_H - PANEL_H * t / ytop
        out.append(f'<line x1="{LEFT}" y1="{y:.1f}" x2="{LEFT + pw}" y2="{y:.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">{fmt_tick(t)}</text>')
    out.append(f'<text x="{LEFT - 50}" y="{TOP + PANEL_H / 2}" text-anchor="middle" '
               f'transform="rotate(-90 {LEFT - 50} {TOP + PANEL_H / 2})">TFLOP/s</text>')

    def xpos(i):
        return LEFT + pw / 2 if n == 1 else LEFT + 15 + (pw - 30) * i / (n - 1)
    for i, (_, shape, _) in enumerate(rows):
        x = xpos(i)
        out.append(f'<line x1="{x:.1f}" y1="{TOP + PANEL_H}" x2="{x:.1f}" y2="{TOP + PANEL_H + 5}" stroke="#333"/>')
        out.append(f'<text x="{x:.1f}" y="{TOP + PANEL_H + 12}" text-anchor="end" font-size="10" '
                   f'transform="rotate(-60 {x:.1f} {TOP + PANEL_H + 12})">{escape(shape)}</text>')
    labels = []
    for _, label, colour in SERIES:
        if label in labels or not any(label in impls for _, _, impls in rows):
            continue
        labels.append(label)
        run = []
        for i, (_, _, impls) in enumerate(rows + [(None, None, {})]):
            v = impls.get(label, (None,))[0]
            if v is not None:
                run.append((xpos(i), TOP + PANEL_H - PANEL_H * v / ytop))
                continue
            if len(run) > 1:
                pts = " ".join(f"{px:.1f},{py:.1f}" for px, py in run)
                dash = ' stroke-dasharray="6,4"' if "fast" in label else ""
                out.append(f'<polyline points="{pts}" fill="none" stroke="{colour}" stroke-width="2"{dash}/>')
            for px, py in run:
                out.append(f'<circle cx="{px:.1f}" cy="{py:.1f}" r="3" fill="{colour}"/>')
            run = []
    ly, lx = TOP + PANEL_H + 95, LEFT
    for label in labels:
        colour = next(c for _, lb, c in SERIES if lb == label)
        out.append(f'<line x1="{lx}" y1="{ly}" x2="{lx + 24}" y2="{ly}" stroke="{colour}" stroke-width="2"/>')
        out.append(f'<text x="{lx + 30}" y="{ly + 4}">{escape(label)}</text>')
        lx += 30 + 7 * len(label) + 20
    missing = [f"{label} {shape}: {v[1]}" for _, shape, impls in rows for label, v in impls.items() if v[0] is None]
    mixed = [shape for _, shape, impls in rows if len({v[2] for v in impls.values()}) > 1]
    notes = []
    if missing:
        notes.append("not plotted: " + "; ".join(missing[:5]) + (f"; and {len(missing) - 5} more" if len(missing) > 5 else ""))
    if mixed:
        notes.append(f"{len(mixed)} shapes combine two runs (see the tables)")
    for j, note in enumerate(notes):
        out.append(f'<text x="{LEFT}" y="{ly + 24 + 16 * j}" fill="#a00" font-size="11">{escape(note)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results", nargs="+")
    ap.add_argument("-o", "--prefix", required=True, help="output prefix: PREFIX-<group>.svg")
    args = ap.parse_args()
    try:
        rows, metas = merge(args.results)
    except (OSError, ValueError, KeyError) as e:
        print(f"plot_shapes.py: error: {e}", file=sys.stderr)
        return 2
    groups = []
    for g, _, _ in rows:
        if g not in groups:
            groups.append(g)
    for g in groups:
        path = f"{args.prefix}-{g}.svg"
        with open(path, "w") as f:
            f.write(svg(g, [r for r in rows if r[0] == g], metas))
        print(f"wrote {path}", file=sys.stderr)
    return 0 if groups else 1


if __name__ == "__main__":
    sys.exit(main())
