"""The declarative host plan of a bundle entry (design 2.2-2.4, 2.8,
2.10): expressions, argument checks and step evaluation into a trace.

An Entry is compiled once, when the bundle is read: every expression is
parsed into nested closures (a malformed plan is a BundleError then),
so evaluating the plan on a cache miss walks no text. Evaluation never
touches a GPU: it produces the trace (the launches, tensor-map encode
arguments, allocations, copies and memsets, in execution order) that the
executor runs and that the golden tests compare with Go's.
"""

import json
import math
import struct

from . import _dtypes
from ._errors import ArgumentError, BundleError, PlanError

INT64_MIN = -(1 << 63)
INT64_MAX = (1 << 63) - 1

# Bytes of each launch-parameter type (Go's scalarBytes; ptr is a u64).
PARAM_SIZES = {"ptr": 8, "i1": 1, "i8": 1, "i16": 2, "i32": 4, "i64": 8,
               "f16": 2, "bf16": 2, "f32": 4, "f64": 8}
FLOAT_TYPES = ("f16", "bf16", "f32", "f64", "tf32")
ROLES = ("scalar", "base", "offset", "size", "stride", "tensormap")

# Where the golden test's (and a plain evaluate's) k-th allocation lives.
FAKE_ALLOC_BASE = 0x7E0000000000

# A plan that would unroll into more steps than this is refused rather
# than exhausting memory (a loop bound from a runaway expression).
MAX_TRACE_STEPS = 1 << 20

# DLPack device type of CUDA memory (kDLCUDA) and of managed memory.
_CUDA, _CUDA_MANAGED = 2, 13

# Hopper launch limits: Go's internal/sm90.
MAX_THREADS_PER_BLOCK = 1024
MAX_GRID = (2**31 - 1, 65535, 65535)
MAX_BLOCK = (1024, 1024, 64)
MAX_PORTABLE_CLUSTER_BLOCKS = 8
MAX_CLUSTER_BLOCKS = 16
MAX_SHARED_BYTES_PER_BLOCK = 232448


class MemrefBinding:
    """A device array bound to a memref argument: ptr is the address of
    its first element, shape and strides in elements, dtype a DLPack
    (code, bits) pair, device a DLPack (device_type, device_id) pair;
    kind is the word argument errors use for it ("tensor", "array")."""

    __slots__ = ("ptr", "shape", "strides", "dtype", "device", "kind")

    def __init__(self, ptr, shape, strides, dtype, device, kind="array"):
        self.ptr = ptr
        self.shape = tuple(shape)
        self.strides = tuple(strides)
        self.dtype = tuple(dtype)
        self.device = tuple(device)
        self.kind = kind

    def __repr__(self):
        return "MemrefBinding(ptr=%#x, shape=%s, strides=%s, dtype=%s, device=%s)" % (
            self.ptr, list(self.shape), list(self.strides), self.dtype, self.device)


# ---------------------------------------------------------------------------
# Expressions (design 2.3)

class _Fail(Exception):
    """An expression failed; Expr adds the text and the step's loc."""


def _checked(v):
    if v < INT64_MIN or v > INT64_MAX:
        raise _Fail("integer overflow (%d is outside the int64 range)" % v)
    return v


def _add(a, b):
    return _checked(a + b)


def _sub(a, b):
    return _checked(a - b)


def _mul(a, b):
    return _checked(a * b)


def _division_operands(op, a, b):
    if b == 0:
        raise _Fail("division by zero")
    if a < 0 or b < 0:
        raise _Fail("negative operand of %s (%d, %d)" % (op, a, b))


def _div(a, b):
    _division_operands("/", a, b)
    # Truncation toward zero, as Go and C divide; the operands are
    # non-negative here, where truncation and flooring agree.
    return abs(a) // abs(b)


def _rem(a, b):
    _division_operands("%", a, b)
    return a - b * (abs(a) // abs(b))


def _ceildiv(a, b):
    _division_operands("ceildiv", a, b)
    q, r = divmod(a, b)
    return q + (1 if r else 0)


_BINARY = {"+": _add, "-": _sub, "*": _mul, "/": _div, "%": _rem}
_FUNCS = {"ceildiv": (2, 2), "min": (2, None), "max": (2, None)}


def _tokenize(text):
    """(kind, value, column) tokens: int, name, op; column is 0-based."""
    toks = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in " \t":
            i += 1
        elif c.isdigit():
            j = i
            while j < n and text[j].isdigit():
                j += 1
            toks.append(("int", int(text[i:j]), i))
            i = j
        elif c.isalpha() and c.isascii():
            j = i
            while j < n and (text[j].isalnum() and text[j].isascii() or text[j] in "_."):
                j += 1
            toks.append(("name", text[i:j], i))
            i = j
        elif c in "+-*/%(),":
            toks.append(("op", c, i))
            i += 1
        else:
            raise _Syntax("unexpected character %r" % c, i)
    toks.append(("end", None, n))
    return toks


class _Syntax(Exception):
    def __init__(self, msg, col):
        super().__init__(msg)
        self.col = col


class _Scope:
    """What names an expression may use at one point of the plan: the
    entry's arguments, the loop variables in scope, the scratch
    allocations (tmp id -> rank) made so far."""

    def __init__(self, args, loops=(), tmps=None):
        self.args = args
        self.loops = tuple(loops)
        self.tmps = {} if tmps is None else tmps


class _Parser:
    def __init__(self, text, scope):
        self.text = text
        self.scope = scope
        self.toks = _tokenize(text)
        self.pos = 0

    def peek(self):
        return self.toks[self.pos]

    def next(self):
        t = self.toks[self.pos]
        self.pos += 1
        return t

    def expect(self, value):
        t = self.next()
        if t[0] != "op" or t[1] != value:
            raise _Syntax("expected %r, found %s" % (value, _describe(t)), t[2])

    def parse(self):
        fn = self.expr()
        t = self.peek()
        if t[0] != "end":
            raise _Syntax("unexpected %s" % _describe(t), t[2])
        return fn

    def expr(self):
        fn = self.term()
        while self.peek()[0] == "op" and self.peek()[1] in "+-":
            fn = _binary(_BINARY[self.next()[1]], fn, self.term())
        return fn

    def term(self):
        fn = self.unary()
        while self.peek()[0] == "op" and self.peek()[1] in "*/%":
            fn = _binary(_BINARY[self.next()[1]], fn, self.unary())
        return fn

    def unary(self):
        t = self.peek()
        if t[0] == "op" and t[1] == "-":
            self.next()
            inner = self.unary()
            if isinstance(inner, _Const):
                return _Const(_checked_const(-inner.value, t[2]))
            return lambda env: _checked(-inner(env))
        return self.atom()

    def atom(self):
        t = self.next()
        kind, value, col = t
        if kind == "int":
            if value > INT64_MAX:
                # -9223372036854775808 is written (0 - 9223372036854775807 - 1).
                raise _Syntax("integer %d is outside the int64 range" % value, col)
            return _Const(value)
        if kind == "op" and value == "(":
            fn = self.expr()
            self.expect(")")
            return fn
        if kind == "name" and value in _FUNCS and self.peek()[1] == "(":
            self.next()
            args = [self.expr()]
            while self.peek()[0] == "op" and self.peek()[1] == ",":
                self.next()
                args.append(self.expr())
            self.expect(")")
            lo, hi = _FUNCS[value]
            if len(args) < lo or (hi is not None and len(args) > hi):
                want = "exactly %d" % lo if hi == lo else "at least %d" % lo
                raise _Syntax("%s takes %s arguments, not %d" % (value, want, len(args)), col)
            return _call(value, args)
        if kind == "name":
            return _ref(value, col, self.scope)
        raise _Syntax("expected a number, a reference, a function or '(', found %s"
                      % _describe(t), col)


def _describe(tok):
    if tok[0] == "end":
        return "the end"
    return repr(str(tok[1]))


class _Const:
    """A constant subexpression, folded at parse time."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __call__(self, env):
        return self.value


def _checked_const(v, col):
    try:
        return _checked(v)
    except _Fail as e:
        raise _Syntax(str(e), col) from None


def _binary(op, f, g):
    if isinstance(f, _Const) and isinstance(g, _Const):
        try:
            return _Const(op(f.value, g.value))
        except _Fail:
            pass  # reported when evaluated, with the step's loc
    if isinstance(g, _Const):
        c = g.value
        return lambda env: op(f(env), c)
    return lambda env: op(f(env), g(env))


def _call(name, args):
    if name == "ceildiv":
        f, g = args
        return lambda env: _ceildiv(f(env), g(env))
    pick = min if name == "min" else max
    return lambda env: pick([a(env) for a in args])


def _index(s, prefix):
    """N of "argN" (prefix "arg"), or None."""
    if s.startswith(prefix) and len(s) > len(prefix) and s[len(prefix):].isdigit():
        return int(s[len(prefix):])
    return None


def _field(s):
    """("dim", K), ("stride", K) or ("ptr", None) for a field name."""
    if s == "ptr":
        return ("ptr", None)
    for f in ("dim", "stride"):
        k = _index(s, f)
        if k is not None:
            return (f, k)
    return None


def _ref(name, col, scope):
    """A reference: argN, argN.field, tmpN.field or iN, checked against
    the scope."""
    base, dot, field = name.partition(".")
    f = _field(field) if dot else None
    if dot and f is None:
        raise _Syntax("unknown field %r (expected dimK, strideK or ptr)" % field, col)
    n = _index(base, "arg")
    if n is not None:
        if n >= len(scope.args):
            raise _Syntax("%s does not exist: the entry has %d arguments" % (base, len(scope.args)), col)
        a = scope.args[n]
        if not dot:
            if a.kind != "scalar" or a.is_float:
                raise _Syntax("%s is a %s argument, not an integer scalar" % (base, a.type), col)
            return lambda env: env.args[n]
        if a.kind != "memref":
            raise _Syntax("%s is a scalar; it has no field %s" % (base, field), col)
        if f[1] is not None and f[1] >= a.rank:
            raise _Syntax("%s has rank %d; it has no %s" % (base, a.rank, field), col)
        return _mem_field(lambda env: env.args[n], f)
    if _index(base, "tmp") is not None:
        if not dot:
            raise _Syntax("%s is a memref; use %s.ptr, .dimK or .strideK" % (base, base), col)
        if base not in scope.tmps:
            raise _Syntax("%s is used before it is allocated" % base, col)
        if f[1] is not None and f[1] >= scope.tmps[base]:
            raise _Syntax("%s has rank %d; it has no %s" % (base, scope.tmps[base], field), col)
        return _mem_field(lambda env: _tmp(env, base), f)
    if _index(base, "i") is not None and not dot:
        if base not in scope.loops:
            raise _Syntax("loop variable %s is not in scope" % base, col)
        return lambda env: env.loops[base]
    raise _Syntax("unknown name %r" % name, col)


def _tmp(env, name):
    m = env.tmps.get(name)
    if m is None:
        raise _Fail("%s is used before it is allocated" % name)
    return m


def _mem_field(get, f):
    kind, k = f
    if kind == "ptr":
        return lambda env: get(env).ptr
    if kind == "dim":
        return lambda env: get(env).shape[k]
    return lambda env: get(env).strides[k]


class Expr:
    """A compiled plan expression; expr(env) is its int64 value."""

    __slots__ = ("text", "loc", "fn")

    def __init__(self, text, loc, fn):
        self.text = text
        self.loc = loc
        self.fn = fn

    def __call__(self, env):
        try:
            return self.fn(env)
        except _Fail as e:
            raise PlanError("%s in %s at %s" % (e, self.text, self.loc)) from None

    def __repr__(self):
        return "Expr(%r)" % self.text


def compile_expr(text, scope, loc, where):
    """Parse expression text (a JSON string, or a JSON integer for a
    literal); a syntax or reference error is a BundleError naming where,
    the text and the column."""
    if type(text) is int:
        if text < INT64_MIN or text > INT64_MAX:
            raise BundleError("%s: %d is outside the int64 range" % (where, text))
        return Expr(str(text), loc, _Const(text))
    if not isinstance(text, str):
        raise BundleError("%s: expected an expression string, got %s" % (where, json.dumps(text)))
    try:
        fn = _Parser(text, scope).parse()
    except _Syntax as e:
        raise BundleError("%s: bad expression %r: %s (column %d)" % (where, text, e, e.col + 1)) from None
    return Expr(text, loc, fn)


# ---------------------------------------------------------------------------
# Entries: arguments and steps, compiled from the manifest's JSON

class Arg:
    """One entry argument (design 2.2)."""

    __slots__ = ("index", "name", "type", "kind", "elem", "elem_bytes", "shape",
                 "strides", "offset", "output", "rank", "is_float", "tensormapped")

    def __init__(self, index, d, where):
        self.index = index
        self.name = _get(d, "name", str, where)
        self.type = _get(d, "type", str, where)
        self.kind = _get(d, "kind", str, where)
        self.elem = _get(d, "elem", str, where)
        self.is_float = self.elem in FLOAT_TYPES
        self.output = bool(d.get("output", False))
        self.tensormapped = False
        if self.kind == "memref":
            self.elem_bytes = _get(d, "elem_bytes", int, where)
            self.shape = tuple(_int_list(d, "shape", where))
            self.strides = tuple(_int_list(d, "strides", where))
            self.offset = d.get("offset", 0)
            self.rank = len(self.shape)
            if len(self.strides) != self.rank:
                raise BundleError("%s: %d strides for rank %d" % (where, len(self.strides), self.rank))
        elif self.kind == "scalar":
            self.elem_bytes = None
            self.shape = self.strides = ()
            self.offset = 0
            self.rank = 0
            if not self.is_float and self.elem != "index" and _int_bits(self.elem) is None:
                raise BundleError("%s: unsupported scalar type %s" % (where, self.elem))
        else:
            raise BundleError("%s: unknown kind %s" % (where, json.dumps(self.kind)))

    def expected(self):
        """What this argument expects, for argument errors."""
        if self.kind == "scalar":
            return "%s %s scalar (a Python %s)" % (
                "an" if self.elem[0] in "aeiou" else "a", self.elem,
                "float" if self.is_float else ("bool or int" if self.elem == "i1" else "int"))
        shape = ", ".join("?" if s < 0 else str(s) for s in self.shape)
        parts = [_dtypes.expected_name(self.elem), "shape [%s]" % shape]
        if all(s >= 0 for s in self.strides) and self.strides == _row_major(self.shape):
            parts.append("contiguous")
        elif any(s >= 0 for s in self.strides):
            parts.append("strides [%s]" % ", ".join("?" if s < 0 else str(s) for s in self.strides))
        if self.tensormapped and self.rank and self.strides[-1] < 0:
            parts.append("innermost stride 1")
        return "%s (%s)" % (self.type, ", ".join(parts))


def _get(d, key, typ, where):
    v = d.get(key) if isinstance(d, dict) else None
    if type(v) is not typ:
        raise BundleError("%s: missing or bad %r" % (where, key))
    return v


def _int_list(d, key, where):
    v = d.get(key)
    if not isinstance(v, list) or any(type(x) is not int for x in v):
        raise BundleError("%s: %r must be a list of integers" % (where, key))
    return v


def _int_bits(elem):
    """N of an integer type "iN" (1, 8, 16, 32, 64), else None."""
    n = _index(elem, "i")
    return n if n in (1, 8, 16, 32, 64) else None


def _row_major(shape):
    strides, s = [], 1
    for d in reversed(shape):
        strides.append(s)
        s *= d
    return tuple(reversed(strides))


class Entry:
    """A compiled entry of manifest format 2: name, loc, args (list of
    Arg), kernels (name -> manifest kernel), allocates (whether any
    step allocates scratch memory) and the compiled steps."""

    def __init__(self, name, loc, args, steps, kernels, raw):
        self.name = name
        self.loc = loc
        self.args = args
        self.steps = steps
        self.kernels = kernels
        self.raw = raw
        self.allocates = any(_walk(steps, _Alloc))

    @classmethod
    def from_json(cls, d, kernels=None):
        """Compile an entry object (design 2.1); kernels is the manifest's
        kernel list (default: d["kernels"], as in the golden entry.json)."""
        if not isinstance(d, dict):
            raise BundleError("bundle: an entry is not a JSON object")
        name = d.get("name")
        where = "bundle: entry %s" % (name if isinstance(name, str) else "?")
        name = _get(d, "name", str, where)
        loc = d.get("loc") or name
        if kernels is None:
            kernels = d.get("kernels") or []
        kmap = {k["name"]: k for k in kernels if isinstance(k, dict) and "name" in k}
        raw_args = d.get("args")
        if not isinstance(raw_args, list):
            raise BundleError("%s: missing or bad 'args'" % where)
        args = [Arg(i, a, "%s, argument %d" % (where, i)) for i, a in enumerate(raw_args)]
        raw_steps = d.get("steps")
        if not isinstance(raw_steps, list):
            raise BundleError("%s: missing or bad 'steps'" % where)
        ctx = _Compile(where, kmap, args)
        steps = ctx.steps(raw_steps, _Scope(args))
        return cls(name, loc, args, steps, kmap, d)

    def __repr__(self):
        return "<tmac entry %s(%s)>" % (self.name, ", ".join(a.type for a in self.args))


def _walk(steps, cls):
    for s in steps:
        if isinstance(s, cls):
            yield s
        if isinstance(s, _For):
            yield from _walk(s.body, cls)


class _Compile:
    """Compiles a step list, checking every name it uses."""

    def __init__(self, where, kernels, args):
        self.where = where
        self.kernels = kernels
        self.args = args
        self.maps = set()

    def steps(self, raw, scope):
        out = []
        for i, s in enumerate(raw):
            if not isinstance(s, dict):
                raise BundleError("%s, step %d: not a JSON object" % (self.where, i))
            loc = s.get("loc") if isinstance(s.get("loc"), str) else "?"
            where = "%s, step %d (%s)" % (self.where, i, loc)
            op = s.get("op")
            make = _STEPS.get(op)
            if make is None:
                raise BundleError("%s: unknown op %s" % (where, json.dumps(op)))
            out.append(make(self, s, scope, loc, where))
        return out

    def expr(self, s, key, scope, loc, where):
        if key not in s:
            raise BundleError("%s: missing %r" % (where, key))
        return compile_expr(s[key], scope, loc, "%s, %s" % (where, key))

    def exprs(self, s, key, n, scope, loc, where):
        v = s.get(key)
        if not isinstance(v, list) or (n is not None and len(v) != n):
            want = "a list" if n is None else "a list of %d" % n
            raise BundleError("%s: %r must be %s" % (where, key, want))
        return [compile_expr(x, scope, loc, "%s, %s[%d]" % (where, key, j)) for j, x in enumerate(v)]

    def memref(self, s, key, scope, where):
        """A memref operand: ("arg", index, elem_bytes) or ("tmp", id, elem_bytes)."""
        name = s.get(key)
        n = _index(name, "arg") if isinstance(name, str) else None
        if n is not None and n < len(self.args) and self.args[n].kind == "memref":
            return ("arg", n, self.args[n].elem_bytes)
        if isinstance(name, str) and name in scope.tmps:
            return ("tmp", name, None)
        raise BundleError("%s: %r is %s, not a memref argument or a scratch allocation made "
                          "before" % (where, key, json.dumps(name)))


def _compile_alloc(c, s, scope, loc, where):
    tid = s.get("id")
    if not isinstance(tid, str) or _index(tid, "tmp") is None:
        raise BundleError("%s: alloc id %s is not tmpN" % (where, json.dumps(tid)))
    shape = c.exprs(s, "shape", None, scope, loc, where)
    elem_bytes = _get(s, "elem_bytes", int, where)
    scope.tmps[tid] = len(shape)
    return _Alloc(loc, tid, shape, elem_bytes)


def _compile_copy(c, s, scope, loc, where):
    return _Copy(loc, c.memref(s, "dst", scope, where), c.memref(s, "src", scope, where),
                 c.expr(s, "bytes", scope, loc, where))


def _compile_memset(c, s, scope, loc, where):
    eb = _get(s, "elem_bytes", int, where)
    value = s.get("value")
    try:
        ok = isinstance(value, str) and len(bytes.fromhex(value)) == eb and eb in (1, 2, 4, 8)
    except ValueError:
        ok = False
    if not ok:
        raise BundleError("%s: memset value %s is not %s little-endian hex bytes" % (
            where, json.dumps(value), eb))
    return _Memset(loc, c.memref(s, "dst", scope, where), eb,
                   c.expr(s, "count", scope, loc, where), value.lower())


def _compile_free(c, s, scope, loc, where):
    tid = s.get("id")
    if tid not in scope.tmps:
        raise BundleError("%s: free of %s, which is not allocated" % (where, json.dumps(tid)))
    del scope.tmps[tid]
    return _Free(loc, tid)


def _compile_tensormap(c, s, scope, loc, where):
    mid = s.get("id")
    if not isinstance(mid, str) or not mid:
        raise BundleError("%s: tensormap without an id" % where)
    of = c.memref(s, "of", scope, where)
    if of[0] == "arg":
        c.args[of[1]].tensormapped = True
    rank = _get(s, "rank", int, where)
    fixed = {}
    for key in ("data_type", "interleave", "swizzle", "l2_promotion", "oob_fill"):
        fixed[key] = _get(s, key, int, where)
    box = _int_list(s, "box_dim", where)
    estrides = _int_list(s, "element_strides", where)
    if len(box) != rank or len(estrides) != rank:
        raise BundleError("%s: box_dim and element_strides need %d entries" % (where, rank))
    c.maps.add(mid)
    return _TensorMap(loc, mid, rank, c.expr(s, "global_address", scope, loc, where),
                      c.exprs(s, "global_dim", rank, scope, loc, where),
                      c.exprs(s, "global_strides", max(rank - 1, 0), scope, loc, where),
                      box, estrides, fixed)


def _compile_launch(c, s, scope, loc, where):
    name = s.get("kernel")
    k = c.kernels.get(name)
    if k is None:
        raise BundleError("%s: launch of %s, which is not a kernel of the bundle" % (
            where, json.dumps(name)))
    grid = c.exprs(s, "grid", 3, scope, loc, where)
    block = c.exprs(s, "block", 3, scope, loc, where)
    cluster = None
    if s.get("cluster") is not None:
        cluster = c.exprs(s, "cluster", 3, scope, loc, where)
    npc = s.get("non_portable_cluster", False)
    if type(npc) is not bool:
        raise BundleError("%s: non_portable_cluster must be true or false" % where)
    shared = c.expr(s, "shared_bytes", scope, loc, where)
    raw = s.get("params")
    layout = k.get("params") or []
    if not isinstance(raw, list) or len(raw) != len(layout):
        raise BundleError("%s: kernel %s has %d parameters but the launch passes %s" % (
            where, name, len(layout), len(raw) if isinstance(raw, list) else "none"))
    params = []
    for j, p in enumerate(raw):
        pw = "%s, parameter %d" % (where, j)
        params.append(_compile_param(c, p, layout[j], scope, loc, pw))
    return _Launch(loc, name, grid, block, cluster, npc, shared, params)


def _compile_param(c, p, layout, scope, loc, where):
    if not isinstance(p, dict) or not isinstance(p.get("name"), str):
        raise BundleError("%s: a parameter needs a name" % where)
    role = p.get("role", layout.get("role"))
    if role != layout.get("role"):
        raise BundleError("%s (%s): role %s, but the kernel's layout says %s" % (
            where, p["name"], role, layout.get("role")))
    if role == "tensormap":
        mid = p.get("tensormap")
        if mid not in c.maps:
            raise BundleError("%s (%s): tensor map %s is not made by an earlier step" % (
                where, p["name"], json.dumps(mid)))
        return (p["name"], None, mid)
    typ = p.get("type")
    if typ not in PARAM_SIZES:
        raise BundleError("%s (%s): unknown parameter type %s" % (where, p["name"], json.dumps(typ)))
    value = p.get("value")
    if typ in FLOAT_TYPES:
        if type(value) in (int, float):
            return (p["name"], typ, _Const(float(value)))
        n = _index(value, "arg") if isinstance(value, str) else None
        if n is None or n >= len(c.args) or not (c.args[n].kind == "scalar" and c.args[n].is_float):
            raise BundleError("%s (%s): a %s value must be a number or a float scalar argument, "
                              "not %s" % (where, p["name"], typ, json.dumps(value)))
        return (p["name"], typ, _FloatArg(n))
    return (p["name"], typ, compile_expr(value, scope, loc, "%s (%s)" % (where, p["name"])))


class _FloatArg:
    __slots__ = ("n",)

    def __init__(self, n):
        self.n = n

    def __call__(self, env):
        return float(env.args[self.n])


def _compile_for(c, s, scope, loc, where):
    var = s.get("var")
    if not isinstance(var, str) or _index(var, "i") is None:
        raise BundleError("%s: loop variable %s is not iN" % (where, json.dumps(var)))
    if var in scope.loops:
        raise BundleError("%s: loop variable %s is already in scope" % (where, var))
    lb = c.expr(s, "lb", scope, loc, where)
    ub = c.expr(s, "ub", scope, loc, where)
    step = c.expr(s, "step", scope, loc, where)
    body = s.get("body")
    if not isinstance(body, list):
        raise BundleError("%s: the loop has no body" % where)
    # The body sees the loop variable; its allocations stay visible after
    # the loop, as they do in the flat trace.
    inner = _Scope(scope.args, scope.loops + (var,), scope.tmps)
    return _For(loc, var, lb, ub, step, c.steps(body, inner))


_STEPS = {"alloc": _compile_alloc, "copy": _compile_copy, "memset": _compile_memset,
          "free": _compile_free, "tensormap": _compile_tensormap, "launch": _compile_launch,
          "for": _compile_for}


# ---------------------------------------------------------------------------
# Steps and their evaluation

class _Mem:
    """A scratch allocation: row-major, in device memory."""

    __slots__ = ("ptr", "shape", "strides", "elem_bytes")

    def __init__(self, ptr, shape, elem_bytes):
        self.ptr = ptr
        self.shape = tuple(shape)
        self.strides = _row_major(shape)
        self.elem_bytes = elem_bytes


class _Env:
    """The values expressions read, and the trace being built."""

    def __init__(self, entry, args, alloc):
        self.entry = entry
        self.args = args
        self.tmps = {}
        self.loops = {}
        self.alloc = alloc
        self.steps = []
        self.maps = set()

    def emit(self, step):
        if len(self.steps) >= MAX_TRACE_STEPS:
            raise PlanError("%s: the plan unrolls into more than %d steps" % (
                step["loc"], MAX_TRACE_STEPS))
        self.steps.append(step)

    def view(self, ref):
        """(ptr, shape, strides, elem_bytes) of a memref operand."""
        kind, key, eb = ref
        if kind == "arg":
            b = self.args[key]
            return b.ptr, b.shape, b.strides, eb
        m = _tmp_or_fail(self, key)
        return m.ptr, m.shape, m.strides, m.elem_bytes


def _tmp_or_fail(env, name):
    m = env.tmps.get(name)
    if m is None:
        raise PlanError("%s is used after it is freed" % name)
    return m


def _name(ref):
    return ref[1] if ref[0] == "tmp" else "arg%d" % ref[1]


def _contiguous_bytes(shape, strides, eb):
    """The byte size of a dense row-major view, or None if it is not one."""
    n = 1
    for d, s in zip(reversed(shape), reversed(strides)):
        if d != 1 and s != n:
            return None
        n *= d
    return n * eb


class _Alloc:
    def __init__(self, loc, tid, shape, elem_bytes):
        self.loc, self.tid, self.shape, self.elem_bytes = loc, tid, shape, elem_bytes

    def run(self, env):
        shape = [e(env) for e in self.shape]
        for k, d in enumerate(shape):
            if d < 0:
                raise PlanError("%s: allocation %s has size %d in dimension %d" % (
                    self.loc, self.tid, d, k))
        nbytes = self.elem_bytes
        for d in shape:
            nbytes *= d
        if nbytes > INT64_MAX:
            raise PlanError("%s: allocation %s of %d bytes is too large" % (self.loc, self.tid, nbytes))
        ptr = env.alloc(nbytes)
        env.tmps[self.tid] = _Mem(ptr, shape, self.elem_bytes)
        env.emit({"op": "alloc", "id": self.tid, "bytes": nbytes, "ptr": ptr, "loc": self.loc})


class _Free:
    def __init__(self, loc, tid):
        self.loc, self.tid = loc, tid

    def run(self, env):
        m = env.tmps.pop(self.tid, None)
        if m is None:
            raise PlanError("%s: %s is freed twice" % (self.loc, self.tid))
        env.emit({"op": "free", "ptr": m.ptr, "loc": self.loc})


class _Copy:
    def __init__(self, loc, dst, src, nbytes):
        self.loc, self.dst, self.src, self.nbytes = loc, dst, src, nbytes

    def run(self, env):
        n = self.nbytes(env)
        dp, dshape, dstrides, deb = env.view(self.dst)
        sp, sshape, sstrides, seb = env.view(self.src)
        dn = _contiguous_bytes(dshape, dstrides, deb)
        sn = _contiguous_bytes(sshape, sstrides, seb)
        if dn is None or sn is None or dn != n or sn != n:
            raise PlanError("%s: a copy of %d bytes from %s to %s needs two contiguous memrefs "
                            "of that size (%s and %s bytes)" % (
                                self.loc, n, _name(self.src), _name(self.dst),
                                "non-contiguous" if sn is None else sn,
                                "non-contiguous" if dn is None else dn))
        env.emit({"op": "copy", "dst": dp, "src": sp, "bytes": n, "loc": self.loc})


class _Memset:
    def __init__(self, loc, dst, elem_bytes, count, value):
        self.loc, self.dst, self.elem_bytes, self.count, self.value = loc, dst, elem_bytes, count, value

    def run(self, env):
        n = self.count(env)
        ptr, shape, strides, eb = env.view(self.dst)
        size = _contiguous_bytes(shape, strides, eb)
        if size is None or n < 0 or n * self.elem_bytes > size:
            raise PlanError("%s: a memset of %d %d-byte elements needs a contiguous memref of at "
                            "least that size; %s is %s" % (
                                self.loc, n, self.elem_bytes, _name(self.dst),
                                "not contiguous" if size is None else "%d bytes" % size))
        env.emit({"op": "memset", "dst": ptr, "elem_bytes": self.elem_bytes, "count": n,
                  "value": self.value, "loc": self.loc})


class _TensorMap:
    def __init__(self, loc, mid, rank, address, dims, strides, box, estrides, fixed):
        self.loc, self.mid, self.rank = loc, mid, rank
        self.address, self.dims, self.strides = address, dims, strides
        self.box, self.estrides, self.fixed = box, estrides, fixed

    def run(self, env):
        f = self.fixed
        step = {"op": "tensormap", "id": self.mid, "data_type": f["data_type"], "rank": self.rank,
                "global_address": self.address(env),
                "global_dim": [e(env) for e in self.dims],
                "global_strides": [e(env) for e in self.strides],
                "box_dim": list(self.box), "element_strides": list(self.estrides),
                "interleave": f["interleave"], "swizzle": f["swizzle"],
                "l2_promotion": f["l2_promotion"], "oob_fill": f["oob_fill"], "loc": self.loc}
        try:
            validate_tiled(step)
        except (PlanError, ValueError) as e:
            raise PlanError("%s: %s" % (self.loc, e)) from None
        env.maps.add(self.mid)
        env.emit(step)


def validate_tiled(step):
    """The hook that checks a tensor map's encode arguments against the
    documented cuTensorMapEncodeTiled constraints before anything is
    encoded: the driver module's port of Go's cuda.ValidateTiled, with
    its messages. Without it (the driver module not built yet), only the
    integer ranges the ctypes call needs are checked."""
    try:
        from . import _driver
        check = _driver.validate_tiled
    except (ImportError, AttributeError):
        check = None
    if check is not None:
        check(step["data_type"], step["rank"], step["global_address"], step["global_dim"],
              step["global_strides"], step["box_dim"], step["element_strides"],
              step["interleave"], step["swizzle"], step["l2_promotion"], step["oob_fill"])
        return
    for k, v in enumerate(step["global_dim"] + step["global_strides"]):
        if v < 0:
            raise PlanError("tensor map: size or stride %d is negative" % v)
    if step["global_address"] < 0:
        raise PlanError("tensor map: global address %d is negative" % step["global_address"])


class _Launch:
    def __init__(self, loc, kernel, grid, block, cluster, npc, shared, params):
        self.loc, self.kernel = loc, kernel
        self.grid, self.block, self.cluster = grid, block, cluster
        self.npc, self.shared, self.params = npc, shared, params

    def run(self, env):
        grid = [e(env) for e in self.grid]
        block = [e(env) for e in self.block]
        cluster = None if self.cluster is None else [e(env) for e in self.cluster]
        shared = self.shared(env)
        msg = check_launch(grid, block, cluster, shared, self.npc)
        if msg:
            raise PlanError("%s: kernel %s cannot be launched: %s" % (self.loc, self.kernel, msg))
        params = []
        for name, typ, value in self.params:
            if typ is None:
                if value not in env.maps:
                    raise PlanError("%s: tensor map %s is used before it is made" % (self.loc, value))
                params.append({"name": name, "tensormap": value})
                continue
            try:
                b = pack_param(typ, value(env))
            except ValueError as e:
                raise PlanError("%s: kernel %s parameter %s: %s" % (
                    self.loc, self.kernel, name, e)) from None
            params.append({"name": name, "bytes": b})
        env.emit({"op": "launch", "kernel": self.kernel, "grid": grid, "block": block,
                  "cluster": cluster, "non_portable_cluster": self.npc,
                  "shared_bytes": shared, "params": params, "loc": self.loc})


class _For:
    def __init__(self, loc, var, lb, ub, step, body):
        self.loc, self.var, self.lb, self.ub, self.step, self.body = loc, var, lb, ub, step, body

    def run(self, env):
        lb, ub, step = self.lb(env), self.ub(env), self.step(env)
        if step <= 0:
            raise PlanError("%s: the loop step is %d; it must be positive" % (self.loc, step))
        i = lb
        while i < ub:
            env.loops[self.var] = i
            for s in self.body:
                s.run(env)
            i += step
        env.loops.pop(self.var, None)


def check_launch(grid, block, cluster, shared, non_portable):
    """What makes a launch impossible on sm_90 (Go's sm90.Launch.Check,
    same messages), or None."""
    axes = "xyz"
    for what, sizes, limits in (("grid", grid, MAX_GRID), ("block", block, MAX_BLOCK)):
        for i, n in enumerate(sizes):
            if n < 1 or n > limits[i]:
                return "%s size %s = %d is outside [1, %d]" % (what, axes[i], n, limits[i])
    threads = block[0] * block[1] * block[2]
    if threads > MAX_THREADS_PER_BLOCK:
        return "%d threads per block (%d x %d x %d), over the limit of %d" % (
            threads, block[0], block[1], block[2], MAX_THREADS_PER_BLOCK)
    if shared < 0 or shared > MAX_SHARED_BYTES_PER_BLOCK:
        return "%d bytes of dynamic shared memory, outside [0, %d]" % (
            shared, MAX_SHARED_BYTES_PER_BLOCK)
    if cluster is None or cluster == [0, 0, 0]:
        return None
    for i, c in enumerate(cluster):
        if c < 1:
            return "cluster size %s = %d must be positive" % (axes[i], c)
        if grid[i] % c != 0:
            return "grid size %s = %d is not a multiple of the cluster size %d" % (axes[i], grid[i], c)
    blocks = cluster[0] * cluster[1] * cluster[2]
    if blocks <= MAX_PORTABLE_CLUSTER_BLOCKS:
        return None
    if blocks > MAX_CLUSTER_BLOCKS:
        return "clusters of %d blocks (%d x %d x %d), over sm_90's limit of %d" % (
            blocks, cluster[0], cluster[1], cluster[2], MAX_CLUSTER_BLOCKS)
    if not non_portable:
        return ("clusters of %d blocks (%d x %d x %d), over the portable limit of %d; up to %d "
                "need the launch to opt in with {nonPortableClusterSize = true}" % (
                    blocks, cluster[0], cluster[1], cluster[2], MAX_PORTABLE_CLUSTER_BLOCKS,
                    MAX_CLUSTER_BLOCKS))
    return None


# ---------------------------------------------------------------------------
# Parameter packing (Go's PackParams / scalarBytes)

def int_range(bits):
    """The values an iN (signless) accepts: both its signed and its
    unsigned readings, [-2^(N-1), 2^N); i1 is 0 or 1."""
    if bits == 1:
        return 0, 1
    return -(1 << (bits - 1)), (1 << bits) - 1


# (mantissa bits, exponent bias, largest finite value) of the float
# formats rounded by hand, as Go's ir.RoundToFloatKind does.
_FORMATS = {"f16": (10, 15, 65504.0), "bf16": (7, 127, 3.3895313892515355e38),
            "f32": (23, 127, 3.4028234663852886e38)}


def round_float(v, kind):
    """v rounded to nearest even in format kind (f16, bf16, f32),
    overflowing to infinity: Go's ir.RoundToFloatKind."""
    if math.isnan(v) or math.isinf(v) or v == 0:
        return v
    mant, bias, top = _FORMATS[kind]
    a = abs(v)
    e = math.frexp(a)[1] - 1
    e = max(e, 1 - bias)
    quantum = math.ldexp(1.0, e - mant)
    r = round(a / quantum) * quantum  # round() ties to even
    if r > top:
        r = math.inf
    return math.copysign(r, v)


def pack_param(typ, v):
    """The little-endian bytes of a kernel parameter of type typ (one of
    PARAM_SIZES); a value outside the type's range is a ValueError,
    never a wrap."""
    if typ in ("f16", "bf16", "f32", "f64"):
        v = float(v)
        if typ == "f64":
            return struct.pack("<d", v)
        r = round_float(v, typ)
        if typ == "f16":
            return struct.pack("<e", r)
        b = struct.pack("<f", r)
        return b if typ == "f32" else b[2:]  # bf16: the high half of an exact f32
    if typ == "ptr":
        if v < 0 or v >= 1 << 64:
            raise ValueError("address %d is outside [0, 2^64)" % v)
        return v.to_bytes(8, "little")
    bits = int(typ[1:])
    lo, hi = int_range(bits)
    if v < lo or v > hi:
        raise ValueError("%d is outside the range of %s [%d, %d]" % (v, typ, lo, hi))
    n = max(bits // 8, 1)
    return (v & ((1 << (8 * n)) - 1)).to_bytes(n, "little")


# ---------------------------------------------------------------------------
# Argument checks (design 2.8, step 1)

def check_bindings(entry, args):
    """Check args (MemrefBinding for memrefs, Python numbers for scalars)
    against entry's arguments; raise ArgumentError naming the first bad
    argument and what it expected. Nothing may be launched when this
    fails."""
    n = len(entry.args)
    if len(args) != n:
        raise ArgumentError("%s: expected %d argument%s (%s), got %d" % (
            entry.name, n, "" if n == 1 else "s", ", ".join(a.name for a in entry.args), len(args)))
    device = None
    for a, v in zip(entry.args, args):
        if a.kind == "scalar":
            _check_scalar(a, v)
            continue
        _check_memref(a, v)
        if device is None:
            device = (a, v.device)
        elif v.device[1] != device[1][1]:
            _bad(a, "an array on CUDA device %d" % v.device[1],
                 "argument %d (%s) is on CUDA device %d; all arrays must be on one device" % (
                     device[0].index, device[0].name, device[1][1]))


def _bad(a, got, why=None):
    msg = "argument %d (%s): expected %s, got %s" % (a.index, a.name, a.expected(), got)
    if why:
        msg += ": " + why
    raise ArgumentError(msg)


def _got_scalar(v):
    if isinstance(v, bool):
        return "the bool %r" % v
    if isinstance(v, (int, float)):
        return "the %s %r" % (type(v).__name__, v)
    if isinstance(v, MemrefBinding):
        return _got_memref(v)
    return "a %s" % type(v).__name__


def _got_memref(b, strides=False):
    s = "a %s %s of shape %s" % (_dtypes.name(b.dtype), b.kind, list(b.shape))
    if strides:
        s += " and strides %s" % list(b.strides)
    return s


def _check_scalar(a, v):
    if a.is_float:
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            _bad(a, _got_scalar(v))
        return
    if isinstance(v, float) or not isinstance(v, int):
        _bad(a, _got_scalar(v))
    if a.elem == "index":
        lo, hi = INT64_MIN, INT64_MAX
    else:
        lo, hi = int_range(_int_bits(a.elem))
    if v < lo or v > hi:
        _bad(a, _got_scalar(v), "outside the range of %s [%d, %d]" % (a.elem, lo, hi))


def _check_memref(a, b):
    if not isinstance(b, MemrefBinding):
        _bad(a, _got_scalar(b))
    if b.device[0] not in (_CUDA, _CUDA_MANAGED):
        _bad(a, "%s on device type %d" % (_got_memref(b), b.device[0]),
             "tmac kernels need CUDA device memory")
    if b.dtype not in _dtypes.accepted(a.elem):
        _bad(a, _got_memref(b))
    if len(b.shape) != a.rank or len(b.strides) != a.rank:
        _bad(a, _got_memref(b), "rank %d, not %d" % (len(b.shape), a.rank))
    for k, (want, got) in enumerate(zip(a.shape, b.shape)):
        if got < 0 or got > INT64_MAX:
            _bad(a, _got_memref(b), "size %d of dimension %d is out of range" % (got, k))
        if want >= 0 and got != want:
            _bad(a, _got_memref(b), "dimension %d has size %d, not %d" % (k, got, want))
    for k, (want, got) in enumerate(zip(a.strides, b.strides)):
        if got < INT64_MIN or got > INT64_MAX:
            _bad(a, _got_memref(b, True), "stride %d of dimension %d is out of range" % (got, k))
        # A stride of a dimension of size 1 never multiplies a non-zero index.
        if want >= 0 and got != want and b.shape[k] != 1:
            _bad(a, _got_memref(b, True), "dimension %d has stride %d, not %d" % (k, got, want))
    if a.tensormapped and a.rank and b.strides[-1] != 1 and b.shape[-1] != 1:
        _bad(a, _got_memref(b, True), "a tensor map needs the innermost dimension contiguous "
             "(stride 1), not stride %d" % b.strides[-1])
    if b.ptr < 0 or b.ptr > INT64_MAX:
        _bad(a, "%s at address %#x" % (_got_memref(b), b.ptr), "the address is out of range")
    if b.ptr % 16:
        _bad(a, "%s at address %#x" % (_got_memref(b), b.ptr),
             "the address is not a multiple of 16 bytes")


# ---------------------------------------------------------------------------
# Evaluation (design 2.8, step 2)

class Trace:
    """An evaluated plan: entry (the name) and steps, a list of dicts in
    execution order (design 2.10) with each step's "loc" added and
    launch parameter bytes as Python bytes."""

    __slots__ = ("entry", "steps")

    def __init__(self, entry, steps):
        self.entry = entry
        self.steps = steps

    def to_dict(self):
        """The trace as design 2.10 writes it: no locs, bytes as
        lowercase hex."""
        out = []
        for s in self.steps:
            d = {k: v for k, v in s.items() if k != "loc"}
            if s["op"] == "launch":
                d["params"] = [p if "tensormap" in p else {"name": p["name"], "bytes": p["bytes"].hex()}
                               for p in s["params"]]
            out.append(d)
        return {"entry": self.entry, "steps": out}

    def to_json(self):
        """The trace as 2.10 JSON text (indented)."""
        return json.dumps(self.to_dict(), indent=2) + "\n"

    def __repr__(self):
        return "<tmac trace of %s: %d steps>" % (self.entry, len(self.steps))


def fake_alloc():
    """An allocator handing out the golden tests' addresses: the k-th
    allocation at FAKE_ALLOC_BASE + k<<32."""
    count = [0]

    def alloc(nbytes):
        p = FAKE_ALLOC_BASE + (count[0] << 32)
        count[0] += 1
        return p
    return alloc


def evaluate(entry, args, alloc=None, check=True):
    """Evaluate entry's plan on bound arguments into a Trace. alloc(nbytes)
    gives each scratch allocation's device address (default: fake_alloc's
    addresses, nothing allocated). With check (the default) the
    arguments are checked first (check_bindings)."""
    if check:
        check_bindings(entry, args)
    env = _Env(entry, list(args), alloc or fake_alloc())
    for s in entry.steps:
        s.run(env)
    return Trace(entry.name, env.steps)
