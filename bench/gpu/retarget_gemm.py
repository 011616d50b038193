#!/usr/bin/env python3
"""Retargets a tmac GEMM example to another shape and input dtype:

    python3 bench/gpu/retarget_gemm.py EXAMPLE.tma --m M --n N --k K --dtype f16|bf16 -o OUT.tma

The example must be of the form of examples/gemm_pipelined.tma:

* one entry func.func besides @reference, whose memref arguments are
  A: memref<M0xK0xT>, B: memref<K0xN0xT>, D: memref<M0xN0xTo> in that order
  (T f16 or bf16), and a @reference taking the same arguments;
* the kernel is a gpu.launch in the entry whose grid is
  (M0 / tile_m, N0 / tile_n, 1) given by index constants of the entry;
* the first scf.for with iter_args inside the launch is the K loop, from a
  constant 0 to a constant K0 / tile_k in steps of a constant 1;
* @reference loops over M, N and K with constant upper bounds, and reads
  A[%m, %k] and B[%k, %n] with memref.load.

What changes: every use of A's, B's and D's types (signatures,
memref.cast, memref.load/store of those arguments, inside the kernel too),
the element type (f16 <-> bf16, everywhere), the grid (new constants
M / tile_m, N / tile_n), the K loop's trip count (K / tile_k), and the
reference's loop bounds. Anything that does not fit (a type used by
something other than those arguments, a size that is not a multiple of
the example's tiles, a missing pattern) is refused with exit status 3 and
a message saying why, so the benchmark can skip that shape.
"""

import argparse
import re
import sys

MEMREF2 = r"memref<(\d+)x(\d+)x(\w+)>"


class Refuse(Exception):
    pass


def functions(text):
    """(name, start, end) of each top-level func.func."""
    starts = [(m.group(1), m.start()) for m in re.finditer(r"^func\.func (?:private )?@(\w+)\(", text, re.M)]
    out = []
    for i, (name, s) in enumerate(starts):
        e = starts[i + 1][1] if i + 1 < len(starts) else len(text)
        out.append((name, s, e))
    return out


def signature_args(func_text):
    """[(name, type)] of the function's arguments."""
    m = re.match(r"func\.func (?:private )?@\w+\((.*?)\)\s*(?:attributes|\{)", func_text, re.S)
    if not m:
        raise Refuse("cannot read the function signature")
    return re.findall(r"%(\w+)\s*:\s*(memref<[^>]*>|[\w.]+)", m.group(1))


def constant(func_text, name):
    m = re.search(rf"%{re.escape(name)} = arith\.constant (-?\d+) : index\b", func_text)
    if not m:
        raise Refuse(f"%{name} is not an index constant of the function")
    return int(m.group(1))


def swap_dtype(text, src, dst):
    if src == dst:
        return text
    text = re.sub(rf"(?<![A-Za-z0-9_]){src}(?![A-Za-z0-9_])", dst, text)
    return re.sub(rf"(?<=x){src}(?![A-Za-z0-9_])", dst, text)


def retype(func_text, roles, old, new, fname):
    """Replaces the types of the A/B/D arguments (roles: name -> role) in
    every `%name[...] : TYPE` / `%name: TYPE` / `%name : TYPE` use."""
    pat = re.compile(r"%(\w+)(\[[^\]]*\])?(\s*:\s*)" + MEMREF2)

    def sub(m):
        name = m.group(1)
        typ = f"memref<{m.group(4)}x{m.group(5)}x{m.group(6)}>"
        if typ not in old.values():
            return m.group(0)
        role = roles.get(name)
        if role is None:
            raise Refuse(f"@{fname}: %{name} has the type {typ} of an operand but is not one of the arguments")
        if typ != old[role]:
            raise Refuse(f"@{fname}: %{name} is used as {typ}, not {old[role]}")
        return f"%{name}{m.group(2) or ''}{m.group(3)}\x00{role}\x00"

    # Placeholders first, so that a use left over (not one of the forms
    # above) is found even where an old type equals another operand's new one.
    out = pat.sub(sub, func_text)
    for typ in old.values():
        if typ in out:
            raise Refuse(f"@{fname}: '{typ}' is used by something other than the A, B, D arguments")
    for role, typ in new.items():
        out = out.replace(f"\x00{role}\x00", typ)
    return out


def retarget(text, M, N, K, dtype):
    funcs = functions(text)
    entries = [f for f in funcs if f[0] != "reference"]
    refs = [f for f in funcs if f[0] == "reference"]
    if len(entries) != 1 or len(refs) != 1:
        raise Refuse("expected one entry func.func and a @reference")
    ename, es, ee = entries[0]
    _, rs, re_ = refs[0]
    entry, ref = text[es:ee], text[rs:re_]

    eargs = [(n, t) for n, t in signature_args(entry) if t.startswith("memref<")]
    rargs = [(n, t) for n, t in signature_args(ref) if t.startswith("memref<")]
    if len(eargs) != 3 or len(rargs) != 3:
        raise Refuse("the entry and @reference must take exactly three memrefs (A, B, D)")
    shapes = [re.fullmatch(MEMREF2, t) for _, t in eargs]
    if not all(shapes):
        raise Refuse("A, B and D must be 2-D memrefs with static sizes")
    (m0, k0, ta), (k1, n0, tb), (m1, n1, to) = [(int(s.group(1)), int(s.group(2)), s.group(3)) for s in shapes]
    if k0 != k1 or m0 != m1 or n0 != n1 or ta != tb or ta not in ("f16", "bf16"):
        raise Refuse(f"the arguments are not A {m0}x{k0}, B {k1}x{n0}, D {m1}x{n1} with f16/bf16 A and B")
    if [t for _, t in rargs] != [t for _, t in eargs]:
        raise Refuse("@reference takes other arguments than the entry")
    old = {"A": f"memref<{m0}x{k0}x{ta}>", "B": f"memref<{k0}x{n0}x{ta}>", "D": f"memref<{m0}x{n0}x{to}>"}
    new = {"A": f"memref<{M}x{K}x{ta}>", "B": f"memref<{K}x{N}x{ta}>", "D": f"memref<{M}x{N}x{to}>"}

    # Grid and K loop of the entry.
    g = re.search(r"^([ \t]*)gpu\.launch blocks\([^)]*\) in \((%\w+) = %(\w+), (%\w+) = %(\w+), (%\w+) = %(\w+)\)", entry, re.M)
    if not g:
        raise Refuse("no gpu.launch with a constant grid in the entry")
    gx, gy, gz = constant(entry, g.group(3)), constant(entry, g.group(5)), constant(entry, g.group(7))
    if gz != 1 or gx <= 0 or gy <= 0 or m0 % gx or n0 % gy:
        raise Refuse(f"the grid ({gx}, {gy}, {gz}) is not (M/tile, N/tile, 1) for M={m0}, N={n0}")
    tm, tn = m0 // gx, n0 // gy
    if M % tm or N % tn:
        raise Refuse(f"M={M}, N={N} are not multiples of the example's {tm}x{tn} tiles of D")
    launch_at = g.start()
    kl = re.compile(r"^([ \t]*)(.*?)scf\.for (%\w+) = %(\w+) to %(\w+) step %(\w+) iter_args", re.M).search(entry, launch_at)
    if not kl:
        raise Refuse("no scf.for with iter_args (the K loop) in the kernel")
    lb, ub, st = constant(entry, kl.group(4)), constant(entry, kl.group(5)), constant(entry, kl.group(6))
    if lb != 0 or st != 1 or ub <= 0 or k0 % ub:
        raise Refuse(f"the K loop runs {lb} to {ub} step {st}, not 0 to K/tile_k step 1")
    tk = k0 // ub
    uses = len(re.findall(rf"%{re.escape(kl.group(5))}\b", entry))
    if uses != 2:
        raise Refuse(f"the K trip count %{kl.group(5)} is used {uses - 2} more times besides the K loop "
                     "(a hand-written prologue or refill predicate?); it cannot be changed safely")
    if K % tk:
        raise Refuse(f"K={K} is not a multiple of the example's K step {tk}")

    def edit_k(s):
        # The new trip count is defined just before the loop (the line
        # keeps its own text, with the new upper bound).
        m = kl
        line_end = s.index("\n", m.start())
        line = s[m.start():line_end]
        newline = line.replace(f" to %{m.group(5)} step", " to %bench_ksteps step", 1)
        return s[:m.start()] + f"{m.group(1)}%bench_ksteps = arith.constant {K // tk} : index\n" + newline + s[line_end:]

    def edit_grid(s):
        line_end = s.index("\n", g.start())
        line = s[g.start():line_end]
        line = line.replace(f"{g.group(2)} = %{g.group(3)},", f"{g.group(2)} = %bench_gx,", 1)
        line = line.replace(f"{g.group(4)} = %{g.group(5)},", f"{g.group(4)} = %bench_gy,", 1)
        ind = g.group(1)
        return (s[:g.start()] + f"{ind}%bench_gx = arith.constant {M // tm} : index\n"
                f"{ind}%bench_gy = arith.constant {N // tn} : index\n" + line + s[line_end:])

    entry = edit_k(entry)   # the K loop comes after the launch line: edit it first
    entry = edit_grid(entry)
    entry = retype(entry, {n: r for (n, _), r in zip(eargs, "ABD")}, old, new, ename)

    # @reference: the loops over M, N and K.
    an, bn = rargs[0][0], rargs[1][0]
    la = re.search(rf"memref\.load %{an}\[%(\w+), %(\w+)\]", ref)
    lbm = re.search(rf"memref\.load %{bn}\[%(\w+), %(\w+)\]", ref)
    if not la or not lbm or la.group(2) != lbm.group(1):
        raise Refuse("@reference does not read A[%m, %k] and B[%k, %n]")
    ivs = {la.group(1): (m0, M, "m"), lbm.group(2): (n0, N, "n"), la.group(2): (k0, K, "k")}
    loops = list(re.finditer(r"^([ \t]*)(.*?)scf\.for %(\w+) = %(\w+) to %(\w+) step %(\w+)", ref, re.M))
    found = set()
    for m in reversed(loops):  # from the end, so earlier offsets stay valid
        iv = m.group(3)
        if iv not in ivs:
            continue
        was, now, tag = ivs[iv]
        if constant(ref, m.group(4)) != 0 or constant(ref, m.group(6)) != 1 or constant(ref, m.group(5)) != was:
            raise Refuse(f"@reference's loop over %{iv} is not 0 to {was} step 1")
        line_end = ref.index("\n", m.start())
        line = ref[m.start():line_end].replace(f" to %{m.group(5)} step", f" to %bench_ref_{tag} step", 1)
        ref = ref[:m.start()] + f"{m.group(1)}%bench_ref_{tag} = arith.constant {now} : index\n" + line + ref[line_end:]
        found.add(iv)
    if found != set(ivs):
        raise Refuse("@reference has no loop over each of M, N and K")
    ref = retype(ref, {n: r for (n, _), r in zip(rargs, "ABD")}, old, new, "reference")

    out = text[:es] + entry + text[ee:rs] + ref + text[re_:] if es < rs else text[:rs] + ref + text[re_:es] + entry + text[ee:]
    out = swap_dtype(out, ta, dtype)
    return out, (tm, tn, tk)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("example")
    ap.add_argument("--m", type=int, required=True)
    ap.add_argument("--n", type=int, required=True)
    ap.add_argument("--k", type=int, required=True)
    ap.add_argument("--dtype", choices=("f16", "bf16"), required=True)
    ap.add_argument("-o", "--output", required=True)
    args = ap.parse_args()
    if min(args.m, args.n, args.k) <= 0:
        ap.error("sizes must be positive")
    with open(args.example) as f:
        text = f.read()
    try:
        out, (tm, tn, tk) = retarget(text, args.m, args.n, args.k, args.dtype)
    except Refuse as e:
        print(f"{args.example} cannot be retargeted to {args.m}x{args.n}x{args.k} {args.dtype}: {e}", file=sys.stderr)
        return 3
    head = (f"// Generated by bench/gpu/retarget_gemm.py from {args.example}: M={args.m}, N={args.n}, K={args.k}, "
            f"{args.dtype} inputs ({tm}x{tn} tiles of D, K step {tk}).\n")
    with open(args.output, "w") as f:
        f.write(head + out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
