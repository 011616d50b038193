#!/usr/bin/env python3
"""A trial, not a compiler pass: does the 64-bit division by a constant
cost the warp-specialised kernels their speed at stage counts that are not
powers of two (H200, 2026-11-28: coop 128 x 64 at 7 and 9 stages took
31.9 and 29.0 us against 21.4 at 8, bf16 256 x 4096 x 4096; their PTX
differs only in the ring arithmetic, j mod N and j / N on i64, which llc
turns into mul.hi.u64 where N is not a power of two)?

    python3 bench/gpu/ll_div32.py IN.tmab OUT.tmab [LLC]

rewrites every i64 udiv and urem by a constant that is not a power of two
in the bundle's kernels.ll as the i32 operation (trunc, op, zext), runs llc
(default llc-22, tmac's flags) for the PTX, and writes the bundle with both
replaced. Exact only where the dividends are below 2^32, which holds in
the trial's kernels (ring positions and tile indices of one block)."""
import io
import re
import subprocess
import sys
import tarfile
import tempfile

src, dst = sys.argv[1], sys.argv[2]
llc = sys.argv[3] if len(sys.argv) > 3 else "llc-22"
t = tarfile.open(src)
files = {m.name: t.extractfile(m).read() for m in t.getmembers()}
ll = files["kernels.ll"].decode()
n = 0
def rep(m):
    global n
    name, op, x, c = m.group(1), m.group(2), m.group(3), int(m.group(4))
    if c & (c - 1) == 0:
        return m.group(0)
    n += 1
    return (f"%d32t{n} = trunc i64 {x} to i32\n\t%d32n{n} = {op} i32 %d32t{n}, {c}\n\t{name} = zext i32 %d32n{n} to i64")
ll = re.sub(r"(%[\w.]+) = (udiv|urem) i64 (%[\w.]+), (\d+)", rep, ll)
with tempfile.TemporaryDirectory() as tmp:
    with open(f"{tmp}/k.ll", "w") as f:
        f.write(ll)
    subprocess.run([llc, "-march=nvptx64", "-mcpu=sm_90a", "-O3", f"{tmp}/k.ll", "-o", f"{tmp}/k.ptx"], check=True)
    with open(f"{tmp}/k.ptx", "rb") as f:
        files["kernels.ptx"] = f.read()
files["kernels.ll"] = ll.encode()
out = tarfile.open(dst, "w")
for name in ["manifest.json", "kernels.ptx", "kernels.ll", "module.tma"]:
    if name in files:
        info = tarfile.TarInfo(name); info.size = len(files[name]); info.mtime = 0
        out.addfile(info, io.BytesIO(files[name]))
out.close()
print(f"{dst}: {n} divisions narrowed")
