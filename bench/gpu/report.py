"""Pieces of the GPU benchmark harness that need neither torch nor a GPU:
the .npy header parser (for tmac run --dump-dir files) and the Markdown
report of a results JSON written by peers.py. Usable on its own:

    python3 bench/gpu/report.py results.json     # prints the tables again
"""

import ast
import json
import sys


def parse_npy_header(buf, path="<npy>"):
    """Parses the header of a .npy file (versions 1.0 to 3.0) held in buf:
    returns (descr, shape, offset of the data)."""
    if bytes(buf[:6]) != b"\x93NUMPY":
        raise ValueError(f"{path}: not a .npy file")
    if buf[6] == 1:
        hlen, pre = int.from_bytes(buf[8:10], "little"), 10
    elif buf[6] in (2, 3):
        hlen, pre = int.from_bytes(buf[8:12], "little"), 12
    else:
        raise ValueError(f"{path}: .npy version {buf[6]}")
    if len(buf) < pre + hlen:
        raise ValueError(f"{path}: truncated header")
    header = ast.literal_eval(bytes(buf[pre:pre + hlen]).decode("latin1"))
    if not isinstance(header, dict) or set(header) != {"descr", "fortran_order", "shape"}:
        raise ValueError(f"{path}: unexpected header {header!r}")
    if header["fortran_order"]:
        raise ValueError(f"{path}: Fortran order is not supported")
    descr = header["descr"]
    if not isinstance(descr, str) or len(descr) < 3 or descr[0] not in "<>|=" or not descr[2:].isdigit():
        raise ValueError(f"{path}: dtype {descr!r} is not supported")
    return descr, tuple(header["shape"]), pre + hlen


def _cell(j, scale, fmt):
    if j is None:
        return "-"
    if j["status"] == "PASS" and j["throughput"]:
        return fmt.format(j["throughput"] / scale)
    return "n/a" if j["status"] == "n/a" else j["status"]


def _ratio(c, key):
    r = c["ratios"].get(key)
    return f"{r['ratio']:.2f}" if r else "-"


def _table(lines, header, align, rows):
    """Appends a Markdown table: the header cells, each column's alignment
    ("---" or "---:") and the rows' cells."""
    lines.append("| " + " | ".join(header) + " |")
    lines.append("|" + "|".join(align) + "|")
    lines += ["| " + " | ".join(row) + " |" for row in rows]


GEMM_COLUMNS = ["cuBLAS (torch.matmul", "cuBLAS (torch.mm, f32 out)", "Triton tiled", "Triton TMA persistent", "MLIR 22"]


def markdown(results):
    """The report: a GEMM table (TFLOP/s), a memory-bound table (TB/s) and
    every implementation's details."""
    lines = []
    meta = results["meta"]
    cases = [c for c in results["cases"] if c["kind"] != "error"]
    lines.append(f"GEMM and memory-bound peers on {meta['device']} ({meta['sms']} SMs), {meta['date']}, "
                 f"commit {meta['commit']}"
                 + (f" (tmac binary {meta['tmac_binary']})" if meta.get("tmac_binary", "unknown") != "unknown" else "")
                 + f"; torch {meta['torch']} (CUDA {meta['cuda']}), Triton {meta['triton']}.")
    lines.append("")
    lines.append(meta["method"])
    lines.append("")
    gemm = [c for c in cases if c["kind"] == "gemm"]
    if gemm:
        rows = []
        for c in gemm:
            by = {i["name"]: i for i in c["impls"]}
            tm = by.get("tmac")
            row = [f"{c['info']['M']} x {c['info']['N']} x {c['info']['K']}", c["dtype"], (tm or {}).get("out_dtype") or "-",
                   _cell(tm, 1e12, "{:.1f}")]
            for n in GEMM_COLUMNS:
                row.append(_cell(next((by[k] for k in by if k.startswith(n)), None), 1e12, "{:.1f}"))
            row += [_ratio(c, k) for k in ("tmac/cuBLAS", "tmac/cuBLAS same out", "tmac/Triton", "tmac/MLIR")]
            rows.append(row)
        _table(lines, ["GEMM M x N x K", "in", "out", "tmac", "cuBLAS (matmul, in-dtype out)", "cuBLAS (f32 out)", "Triton tiled",
                       "Triton TMA persistent", "MLIR 22 chapter-4", "tmac/cuBLAS", "tmac/cuBLAS same out", "tmac/Triton",
                       "tmac/MLIR"], ["---"] * 3 + ["---:"] * 10, rows)
        lines.append("")
        lines.append("TFLOP/s (2·M·N·K per run over the median time). FAIL / ERROR: the implementation failed its check "
                     "or did not run, and is left out of the ratios; n/a: no result (see the details). tmac/cuBLAS, "
                     "tmac/Triton and tmac/MLIR compare with the fastest passing implementation of that family in the row "
                     "(Triton writes tmac's output dtype); tmac/cuBLAS same out with cuBLAS writing tmac's output dtype.")
        lines.append("")
    scaled = [c for c in cases if c["kind"] == "scaled"]
    if scaled:
        rows = []
        for c in scaled:
            by = {i["name"]: i for i in c["impls"]}
            tm = by.get("tmac")
            sm = [next((by[k] for k in by if k.startswith("torch._scaled_mm") and ("fast" in k) == fast), None)
                  for fast in (False, True)]
            ins = c["dtype"] if c["info"].get("b_dtype", c["dtype"]) == c["dtype"] else f"{c['dtype']} x {c['info']['b_dtype']}"
            row = [f"{c['info']['M']} x {c['info']['N']} x {c['info']['K']}", ins, c["info"].get("scales", "-"),
                   (tm or {}).get("out_dtype") or "-", _cell(tm, 1e12, "{:.1f}"), _cell(sm[0], 1e12, "{:.1f}"),
                   _cell(sm[1], 1e12, "{:.1f}"), _cell(by.get("Triton FP8 TMA (seed 002)"), 1e12, "{:.1f}")]
            row += [_ratio(c, k) for k in ("tmac/_scaled_mm", "tmac/_scaled_mm default", "tmac/Triton")]
            rows.append(row)
        _table(lines, ["scaled fp8 GEMM M x N x K", "in", "scales", "out", "tmac", "_scaled_mm", "_scaled_mm fast accum",
                       "Triton seed 002", "tmac/_scaled_mm (best)", "tmac/_scaled_mm default", "tmac/Triton"],
               ["---"] * 4 + ["---:"] * 7, rows)
        lines.append("")
        lines.append("TFLOP/s (2·M·N·K over the median time). D = (A·Bᵀ)·sa·sb, f32 accumulation; tmac's wgmma "
                     "accumulates as _scaled_mm's fast-accumulation mode does (no promotion of partial sums).")
        lines.append("")
    mem = [c for c in cases if c["kind"] not in ("gemm", "scaled")]
    if mem:
        rows = []
        for c in mem:
            by = {i["name"]: i for i in c["impls"]}
            cp = next((by[k] for k in by if k.startswith("torch d2d copy")), None)
            trop = by.get("Triton add") or by.get("Triton copy")
            row = [f"{c['kind']} {c['dtype']}", "x".join(map(str, c["info"]["shape"])),
                   _cell(by.get("tmac"), 1e12, "{:.3f}"), _cell(by.get("torch.add"), 1e12, "{:.3f}"),
                   _cell(cp, 1e12, "{:.3f}"), _cell(trop, 1e12, "{:.3f}"),
                   _cell(by.get("Triton copy (same bytes)"), 1e12, "{:.3f}")]
            row += [_ratio(c, k) for k in ("tmac/torch op", "tmac/d2d copy", "tmac/Triton")]
            rows.append(row)
        _table(lines, ["memory-bound", "shape", "tmac", "torch op", "torch d2d copy", "Triton op", "Triton copy (same bytes)",
                       "tmac/torch op", "tmac/d2d copy", "tmac/Triton"], ["---"] * 2 + ["---:"] * 8, rows)
        lines.append("")
        lines.append("TB/s: the bytes of every operand once (inputs read, output written) over the median time; for an "
                     "add the copies move the same number of bytes (half read, half written).")
        lines.append("")
    rows = []
    for c in cases:
        unit = "TFLOP/s" if c["kind"] in ("gemm", "scaled") else "TB/s"
        for i in c["impls"]:
            rel = "-" if i["rel_err"] is None else f"{i['rel_err']:.3g} ({i['tol']:.2g})"
            med = "-" if i["median_s"] is None else f"{i['median_s'] * 1e6:.1f} µs"
            sm = "-" if i["sync_median_s"] is None else f"{i['sync_median_s'] * 1e6:.1f} µs"
            thr = "-" if i["throughput"] is None else f"{i['throughput'] / 1e12:.3f} {unit}"
            note = "; ".join(x for x in (i["config"], i["note"]) if x).replace("|", "/")
            rows.append([c["name"], i["name"], i["status"], rel, i["out_dtype"] or "-", med, sm, thr, note])
    _table(lines, ["case", "implementation", "result", "‖out−ref‖/‖ref‖ (tol)", "out", "median", "sync median", "throughput",
                   "configuration / note"], ["---"] * 3 + ["---:", "---", "---:", "---:", "---:", "---"], rows)
    errors = [c for c in results["cases"] if c["kind"] == "error"]
    if errors:
        lines.append("")
        lines.append("Cases that could not be run:")
        lines += [f"- {c['name']}: {c['error']}" for c in errors]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: report.py results.json")
    with open(sys.argv[1]) as f:
        print(markdown(json.load(f)), end="")
