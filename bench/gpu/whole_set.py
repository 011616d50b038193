#!/usr/bin/env python3
"""Issue 20's whole-set summary from results JSONs of peers.py:

    python3 bench/gpu/whole_set.py RESULTS.json... [--device NAME] [--exclude REGEX]

For each GEMM case (by name) the latest file that has a passing tmac result
and a passing vendor peer gives the ratio tmac / fastest vendor peer of
that same run (a run whose peers failed keeps the earlier one): cuBLAS with
either output type for plain GEMMs, torch._scaled_mm with either
accumulation for scaled fp8 ones. Files are taken in the order given
(oldest first), so a later run of a case replaces an earlier one; files
recorded on another device than --device are skipped. Prints the
geometric mean (and without the cases --exclude matches), each group's
range, the cases below 0.9 (the issue's floor) and the issue's targets
met and missed, as Markdown.
"""

import argparse
import json
import math
import re
import sys

FLOOR = 0.9
VENDOR = ("cuBLAS", "scaled_mm")
SEED002 = "Triton FP8 TMA (seed 002)"

# Issue 20's per-shape targets: (what, which cases, the ratio it needs,
# against the vendor peer or seed 002's Triton kernel).
TARGETS = [
    ("squares >= 4096 at >= 1.05x the vendor peer",
     lambda r: r["m"] == r["n"] == r["k"] >= 4096, 1.05, "ratio"),
    ("M <= 256 at >= 1.2x the vendor peer", lambda r: r["m"] <= 256, 1.2, "ratio"),
    ("fp8 at >= 1.0x torch._scaled_mm", lambda r: r["kind"] == "scaled", 1.0, "ratio"),
    ("fp8 at >= 1.2x seed 002's Triton kernel",
     lambda r: r["kind"] == "scaled" and r["seed002"] is not None, 1.2, "seed002"),
]


def group_of(c, tm):
    if c["kind"] == "scaled":
        g = f"{c['dtype']} {'row-wise' if c['info'].get('scales') == 'row-wise' else 'per-tensor'}"
    else:
        g = f"{c['dtype']} -> {tm.get('out_dtype') or c['dtype']}"
    return g + (", M <= 256" if c["info"]["M"] <= 256 else ", M > 256")


def ratio_of(c):
    """(tmac / fastest vendor peer, peer name), or None where either is
    missing or failed."""
    tm = next((i for i in c["impls"] if i["name"] == "tmac"), None)
    if not tm or tm["status"] != "PASS" or not tm.get("throughput"):
        return None
    peers = [i for i in c["impls"] if i.get("family") in VENDOR and i["status"] == "PASS" and i.get("throughput")]
    if not peers:
        return None
    best = max(peers, key=lambda i: i["throughput"])
    return tm["throughput"] / best["throughput"], best["name"], tm


def collect(paths, device):
    latest, skipped = {}, []
    for path in paths:
        with open(path) as f:
            res = json.load(f)
        meta = res.get("meta", {})
        if device and meta.get("device") != device:
            skipped.append(path)
            continue
        for c in res.get("cases", []):
            if c.get("kind") not in ("gemm", "scaled"):
                continue
            r = ratio_of(c)
            if r is None:
                continue
            ratio, peer, tm = r
            seed = next((i for i in c["impls"] if i["name"] == SEED002 and i["status"] == "PASS"
                         and i.get("throughput")), None)
            info = c["info"]
            latest[c["name"]] = {
                "m": info["M"], "n": info["N"], "k": info["K"], "kind": c["kind"],
                "seed002": tm["throughput"] / seed["throughput"] if seed else None,
                "name": c["name"], "ratio": ratio, "peer": peer, "file": path,
                "group": group_of(c, tm), "shape": f"{c['info']['M']} x {c['info']['N']} x {c['info']['K']}",
                "commit": meta.get("commit", "?"),
            }
    return latest, skipped


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results", nargs="+")
    ap.add_argument("--device", default="", help="keep only files recorded on this device (meta.device)")
    ap.add_argument("--exclude", default="", help="regex of case names for the second geometric mean")
    args = ap.parse_args()
    try:
        latest, skipped = collect(args.results, args.device)
    except (OSError, ValueError, KeyError) as e:
        sys.exit(f"whole_set.py: error: {e}")
    if not latest:
        sys.exit("whole_set.py: error: no case with both a passing tmac result and a vendor peer")
    rows = sorted(latest.values(), key=lambda r: (r["group"], r["ratio"]))
    ratios = [r["ratio"] for r in rows]
    print(f"{len(rows)} GEMM shapes from {len(args.results) - len(skipped)} files"
          + (f" ({len(skipped)} of another device skipped)" if skipped else ""))
    print(f"geometric mean {geomean(ratios):.3f}")
    if args.exclude:
        kept = [r["ratio"] for r in rows if not re.search(args.exclude, r["name"])]
        print(f"geometric mean without /{args.exclude}/ ({len(rows) - len(kept)} cases): {geomean(kept):.3f}")
    below = [r for r in rows if r["ratio"] < FLOOR]
    print(f"below {FLOOR}: {len(below)}")
    print()
    print("| group | shapes | tmac / best vendor peer | geometric mean | below 0.9 |")
    print("|---|---:|---|---:|---:|")
    groups = {}
    for r in rows:
        groups.setdefault(r["group"], []).append(r["ratio"])
    for g, rs in groups.items():
        print(f"| {g} | {len(rs)} | {min(rs):.2f}-{max(rs):.2f} | {geomean(rs):.3f} | {sum(x < FLOOR for x in rs)} |")
    if below:
        print()
        print("| below 0.9 | group | ratio | peer | file |")
        print("|---|---|---:|---|---|")
        for r in sorted(below, key=lambda r: r["ratio"]):
            print(f"| {r['shape']} | {r['group']} | {r['ratio']:.2f} | {r['peer']} | {r['file'].split('/')[-1]} |")
    print()
    print("| target | shapes | met | range |")
    print("|---|---:|---:|---|")
    print(f"| geometric mean >= 1.0x, none below {FLOOR}x | {len(rows)} | {len(rows) - len(below)} above {FLOOR}"
          f" | geometric mean {geomean(ratios):.3f} |")
    for what, pick, need, key in TARGETS:
        xs = [r[key] for r in rows if pick(r)]
        if xs:
            print(f"| {what} | {len(xs)} | {sum(x >= need for x in xs)} | {min(xs):.2f}-{max(xs):.2f} |")
        else:
            print(f"| {what} | 0 | - | - |")


if __name__ == "__main__":
    main()
