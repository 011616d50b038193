#!/usr/bin/env python3
"""Writes bench/gpu/accuracy/math.tma: a program measuring every float
math op on the GPU, by default and with fastmath<afn>.

Each op gets one kernel and one row of the outputs: thread i makes input i
of the op's domain, stores it in x[row, i] (and the second operand of
atan2 and powf in x2), and stores the op's default result in y[row, i]
and its fastmath<afn> result in z[row, i]. math_ulp.py compares y and z
with numpy's float64 result rounded to f32, in ulps.

The inputs are spread evenly over the bit patterns of each of an op's
segments (a sign and a magnitude range), so every binade of the range gets
the same number of inputs, from the smallest subnormal up: input k of a
segment [lo, hi] of M inputs has the bits bits(lo) + k * (bits(hi) -
bits(lo)) / (M - 1), both ends included. With two segments the low bit of
i picks the segment. The second operand takes its input from a
permutation of i (i * 2654435761 + 12345 mod N), so the two are not
correlated.

    python3 bench/gpu/accuracy/gen_math.py > bench/gpu/accuracy/math.tma
    python3 bench/gpu/accuracy/gen_math.py --n 2048   # a small one for the emulator
"""
import argparse
import struct

INF = float("inf")

# Segments: (sign, lo, hi) with 0 <= lo <= hi, the inputs sign * [lo, hi].
POS_ALL = [("+", 0.0, INF)]
ALL = [("-", 0.0, INF), ("+", 0.0, INF)]


def sym(hi):
    return [("-", 0.0, hi), ("+", 0.0, hi)]


# (op, numpy expression of the float64 reference over x (and y), segments
# of the first operand, segments of the second or None). The expressions
# are evaluated by math_ulp.py with np, erf and erfc in scope.
OPS = [
    ("log", "np.log(x)", POS_ALL, None),
    ("log2", "np.log2(x)", POS_ALL, None),
    ("log10", "np.log10(x)", POS_ALL, None),
    ("log1p", "np.log1p(x)", [("-", 0.0, 1.0), ("+", 0.0, INF)], None),
    ("exp", "np.exp(x)", [("-", 0.0, 110.0), ("+", 0.0, 90.0)], None),
    ("exp2", "np.exp2(x)", [("-", 0.0, 160.0), ("+", 0.0, 130.0)], None),
    ("expm1", "np.expm1(x)", [("-", 0.0, 110.0), ("+", 0.0, 90.0)], None),
    ("tanh", "np.tanh(x)", sym(20.0), None),
    ("sinh", "np.sinh(x)", sym(90.0), None),
    ("cosh", "np.cosh(x)", sym(90.0), None),
    ("asinh", "np.arcsinh(x)", ALL, None),
    ("acosh", "np.arccosh(x)", [("+", 1.0, INF)], None),
    ("atanh", "np.arctanh(x)", sym(1.0), None),
    ("erf", "erf(x)", sym(10.0), None),
    ("erfc", "erfc(x)", [("-", 0.0, 10.0), ("+", 0.0, 12.0)], None),
    ("rsqrt", "1 / np.sqrt(x)", POS_ALL, None),
    ("sqrt", "np.sqrt(x)", POS_ALL, None),
    ("cbrt", "np.cbrt(x)", ALL, None),
    ("sin", "np.sin(x)", sym(1e5), None),
    ("cos", "np.cos(x)", sym(1e5), None),
    ("tan", "np.tan(x)", sym(1e5), None),
    ("asin", "np.arcsin(x)", sym(1.0), None),
    ("acos", "np.arccos(x)", sym(1.0), None),
    ("atan", "np.arctan(x)", ALL, None),
    ("atan2", "np.arctan2(x, y)", sym(1e30), sym(1e30)),
    ("powf", "np.power(x, y)", [("+", 0.0, 1e4)], sym(32.0)),
]

# An input range of the trig ops where their fastmath<afn> forms are
# documented (|x| <= pi); math_ulp.py reports it separately.
PRIMARY = {"sin": 3.14159265, "cos": 3.14159265, "tan": 3.14159265}


def bits(v):
    return struct.unpack("<I", struct.pack("<f", v))[0]


def binary_rows():
    """The x2 row of each binary op."""
    return {op: r for r, op in enumerate(o for o, _, _, s in OPS if s is not None)}


def gen_input(p, idx, segs, n):
    """Lines computing %{p}v : f32, input idx (an i64 value) of segs."""
    lines = []
    c = lines.append
    if len(segs) == 1:
        (sign, lo, hi), = segs
        lob = bits(lo) | (0x80000000 if sign == "-" else 0)
        c(f"%{p}lo = arith.constant {lob} : i64")
        c(f"%{p}sp = arith.constant {bits(hi) - bits(lo)} : i64")
        kk, m = idx, n
    else:
        assert len(segs) == 2
        (s0, lo0, hi0), (s1, lo1, hi1) = segs
        c(f"%{p}one = arith.constant 1 : i64")
        c(f"%{p}seg = arith.andi {idx}, %{p}one : i64")
        c(f"%{p}s = arith.trunci %{p}seg : i64 to i1")
        c(f"%{p}kk = arith.shrui {idx}, %{p}one : i64")
        c(f"%{p}lo0 = arith.constant {bits(lo0) | (0x80000000 if s0 == '-' else 0)} : i64")
        c(f"%{p}lo1 = arith.constant {bits(lo1) | (0x80000000 if s1 == '-' else 0)} : i64")
        c(f"%{p}sp0 = arith.constant {bits(hi0) - bits(lo0)} : i64")
        c(f"%{p}sp1 = arith.constant {bits(hi1) - bits(lo1)} : i64")
        c(f"%{p}lo = arith.select %{p}s, %{p}lo1, %{p}lo0 : i64")
        c(f"%{p}sp = arith.select %{p}s, %{p}sp1, %{p}sp0 : i64")
        kk, m = f"%{p}kk", n // 2
    c(f"%{p}last = arith.constant {m - 1} : i64")
    c(f"%{p}prod = arith.muli {kk}, %{p}sp : i64")
    c(f"%{p}q = arith.divui %{p}prod, %{p}last : i64")
    c(f"%{p}b64 = arith.addi %{p}lo, %{p}q : i64")
    c(f"%{p}b = arith.trunci %{p}b64 : i64 to i32")
    c(f"%{p}v = arith.bitcast %{p}b : i32 to f32")
    return lines


def gen_permuted(p, idx, n):
    """Lines computing %{p}j : i64, a permutation of idx over [0, n)."""
    return [
        f"%{p}mul = arith.constant 2654435761 : i64",
        f"%{p}add = arith.constant 12345 : i64",
        f"%{p}mask = arith.constant {n - 1} : i64",
        f"%{p}h = arith.muli {idx}, %{p}mul : i64",
        f"%{p}h1 = arith.addi %{p}h, %{p}add : i64",
        f"%{p}j = arith.andi %{p}h1, %{p}mask : i64",
    ]


def op_body(op, row, segs, segs2, n, types, p=""):
    """Lines computing op's inputs and results for index %i and storing them."""
    xt, x2t = types
    brow = binary_rows().get(op)
    lines = [f"%{p}k = arith.index_cast %i : index to i64", f"%{p}row = arith.constant {row} : index"]
    lines += gen_input(p + "a", f"%{p}k", segs, n)
    lines.append(f"memref.store %{p}av, %x[%{p}row, %i] : {xt}")
    args = f"%{p}av"
    if segs2 is not None:
        lines += gen_permuted(p + "p", f"%{p}k", n)
        lines += gen_input(p + "b", f"%{p}pj", segs2, n)
        lines.append(f"%{p}brow = arith.constant {brow} : index")
        lines.append(f"memref.store %{p}bv, %x2[%{p}brow, %i] : {x2t}")
        args += f", %{p}bv"
    lines.append(f"%{p}r = math.{op} {args} : f32")
    lines.append(f"%{p}ra = math.{op} {args} fastmath<afn> : f32")
    lines.append(f"memref.store %{p}r, %y[%{p}row, %i] : {xt}")
    lines.append(f"memref.store %{p}ra, %z[%{p}row, %i] : {xt}")
    return lines


def program(n):
    assert n >= 512 and n & (n - 1) == 0, "n must be a power of two >= 512"
    rows, brows = len(OPS), len(binary_rows())
    xt = f"memref<{rows}x{n}xf32>"
    x2t = f"memref<{brows}x{n}xf32>"
    out = []
    w = out.append
    w("// Accuracy of every float math op on the GPU, by default and with")
    w("// fastmath<afn>: generated by bench/gpu/accuracy/gen_math.py (see there")
    w(f"// for how the inputs are spread), {n} inputs per op, one kernel and one")
    w("// row per op: x (and x2 for atan2 and powf) the inputs, y the default")
    w("// results, z the afn ones. Rows: " + ", ".join(f"{r} {op}" for r, (op, _, _, _) in enumerate(OPS)) + ".")
    w("//")
    w("//   tmac compile bench/gpu/accuracy/math.tma --emit=bundle -o build/gpu/math-accuracy.tmab")
    w("//   (GPU) tmac run build/gpu/math-accuracy.tmab --no-check --dump-dir DIR")
    w("//         python3 bench/gpu/accuracy/math_ulp.py DIR")
    w("//")
    w("// @reference computes the same with the interpreter's exact math")
    w("// (rounded once), for the emulator's check of the program itself.")
    w(f"func.func @main(%x: {xt} {{tmac.output}}, %x2: {x2t} {{tmac.output}},")
    w(f"    %y: {xt} {{tmac.output}}, %z: {xt} {{tmac.output}}) {{")
    w("  %c1 = arith.constant 1 : index")
    w("  %c256 = arith.constant 256 : index")
    w(f"  %nblocks = arith.constant {n // 256} : index")
    for row, (op, _, segs, segs2) in enumerate(OPS):
        w(f"  // math.{op}")
        w("  gpu.launch blocks(%bx, %by, %bz) in (%gx = %nblocks, %gy = %c1, %gz = %c1)")
        w("             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {")
        w("    %k256 = arith.constant 256 : index")
        w("    %b = arith.muli %bx, %k256 : index")
        w("    %i = arith.addi %b, %tx : index")
        for line in op_body(op, row, segs, segs2, n, (xt, x2t)):
            w("    " + line)
        w("    gpu.terminator")
        w("  }")
    w("  return")
    w("}")
    w("")
    w(f"func.func @reference(%x: {xt}, %x2: {x2t}, %y: {xt}, %z: {xt}) {{")
    w("  %c0 = arith.constant 0 : index")
    w("  %c1 = arith.constant 1 : index")
    w(f"  %n = arith.constant {n} : index")
    w("  scf.for %i = %c0 to %n step %c1 {")
    for row, (op, _, segs, segs2) in enumerate(OPS):
        for line in op_body(op, row, segs, segs2, n, (xt, x2t), p=op + "_"):
            w("    " + line.replace(" fastmath<afn>", ""))
    w("  }")
    w("  return")
    w("}")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1 << 20, help="inputs per op (a power of two, at least 512)")
    print(program(ap.parse_args().n), end="")


if __name__ == "__main__":
    main()
