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
import numbers
import struct

from . import _driver, _dtypes
from ._errors import ArgumentError, BundleError, PlanError

INT64_MIN = -(1 << 63)
INT64_MAX = (1 << 63) - 1

# Bytes of each launch-parameter type (Go's scalarBytes; ptr is a u64).
PARAM_SIZES = {"ptr": 8, "i1": 1, "i8": 1, "i16": 2, "i32": 4, "i64": 8,
               "f16": 2, "bf16": 2, "f32": 4, "f64": 8}
FLOAT_TYPES = ("f16", "bf16", "f32", "f64", "tf32")

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
# Expressions (design 2.3; Go's bundle/expr.go, same grammar and messages)

# Go's limits on an expression (bundle.MaxExprLen, MaxExprDepth).
MAX_EXPR_LEN = 4096
MAX_EXPR_DEPTH = 64


class _Fail(Exception):
    """An expression failed; Expr adds the step's loc."""


def _checked(v, text):
    if v < INT64_MIN or v > INT64_MAX:
        raise _Fail("integer overflow in %s" % text)
    return v


def _division_operands(a, b, text):
    if b == 0:
        raise _Fail("division by zero in %s" % text)
    if a < 0 or b < 0:
        raise _Fail("negative operand in %s (%d and %d)" % (text, a, b))


def _apply(op, a, b, text):
    """Binary operator op with the language's rules (Go's bundle.Arith):
    int64 overflow, a zero divisor and a negative operand of / % ceildiv
    are errors; / and % truncate toward zero."""
    if op == "+":
        return _checked(a + b, text)
    if op == "-":
        return _checked(a - b, text)
    if op == "*":
        return _checked(a * b, text)
    _division_operands(a, b, text)
    # Both operands are non-negative here, where truncating toward zero
    # (Go's and C's division) and Python's flooring agree.
    q, r = divmod(a, b)
    if op == "/":
        return q
    if op == "%":
        return r
    return q + 1 if r else q  # ceildiv


_FUNCS = ("ceildiv", "min", "max")


class _Syntax(Exception):
    def __init__(self, msg, col):
        super().__init__(msg)
        self.col = col


def _tokenize(text):
    """Go's tokens: a word of letters, digits, '_' and '.', or one other
    character; only spaces separate them. (kind, value, column)."""
    toks = []
    i, n = 0, len(text)
    while True:
        while i < n and text[i] == " ":
            i += 1
        if i >= n:
            break
        j = i
        if text[i] in _WORD:
            while j < n and text[j] in _WORD:
                j += 1
        else:
            j += 1
        toks.append((text[i:j], i))
        i = j
    toks.append(("", n))
    return toks


_WORD = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.")


class _Scope:
    """What a step may refer to (Go's planChecker scope): the entry's
    arguments, the loop depth, and the scratch allocations (tmp id ->
    rank) and tensor maps defined before it and still live."""

    def __init__(self, args, depth=0, tmps=None, maps=None):
        self.args = args
        self.depth = depth
        self.tmps = {} if tmps is None else tmps
        self.maps = set() if maps is None else maps

    def child(self):
        """A loop body's scope: its allocations and maps live in the body
        only."""
        return _Scope(self.args, self.depth + 1, dict(self.tmps), set(self.maps))


class _Parser:
    """Recursive descent over Go's grammar, building closures env -> int.
    Every node keeps its source text (Go's node.text) for messages."""

    def __init__(self, text, scope):
        self.src = text
        self.scope = scope
        self.toks = _tokenize(text)
        self.pos = 0

    @property
    def tok(self):
        return self.toks[self.pos][0]

    @property
    def col(self):
        return self.toks[self.pos][1]

    def advance(self):
        self.pos += 1

    def text(self, start):
        return self.src[start:self.col].strip()

    def parse(self):
        fn = self.expr(0)
        if self.tok != "":
            raise _Syntax("unexpected %r" % self.tok, self.col)
        return fn

    def expr(self, depth):
        if depth > MAX_EXPR_DEPTH:
            raise _Syntax("nested deeper than %d" % MAX_EXPR_DEPTH, self.col)
        start = self.col
        fn = self.term(depth)
        while self.tok in ("+", "-"):
            op = self.tok
            self.advance()
            fn = _binary(op, fn, self.term(depth), self.text(start))
        return fn

    def term(self, depth):
        start = self.col
        fn = self.unary(depth)
        while self.tok in ("*", "/", "%"):
            op = self.tok
            self.advance()
            fn = _binary(op, fn, self.unary(depth), self.text(start))
        return fn

    def unary(self, depth):
        if depth > MAX_EXPR_DEPTH:
            raise _Syntax("nested deeper than %d" % MAX_EXPR_DEPTH, self.col)
        start = self.col
        if self.tok == "-":
            self.advance()
            inner = self.unary(depth + 1)
            text = self.text(start)
            if isinstance(inner, _Const) and inner.value != INT64_MIN:
                return _Const(-inner.value)
            return lambda env: _checked(-inner(env), text)
        return self.atom(depth)

    def atom(self, depth):
        tok, col = self.tok, self.col
        if tok == "":
            raise _Syntax("unexpected end", col)
        if tok == "(":
            self.advance()
            fn = self.expr(depth + 1)
            if self.tok != ")":
                raise _Syntax("missing )", self.col)
            self.advance()
            return fn
        if tok[0].isdigit():
            if not tok.isdigit() or not tok.isascii():
                raise _Syntax("bad integer %r" % tok, col)
            v = int(tok)
            if v > INT64_MAX:
                raise _Syntax("bad integer %r (outside int64)" % tok, col)
            self.advance()
            return _Const(v)
        if tok in _FUNCS:
            self.advance()
            if self.tok != "(":
                raise _Syntax("%s needs arguments in parentheses" % tok, self.col)
            args = []
            while True:
                self.advance()
                args.append(self.expr(depth + 1))
                if self.tok != ",":
                    break
            if self.tok != ")":
                raise _Syntax("missing )", self.col)
            self.advance()
            if tok == "ceildiv" and len(args) != 2:
                raise _Syntax("ceildiv takes 2 arguments, not %d" % len(args), col)
            if len(args) < 2:
                raise _Syntax("%s takes at least 2 arguments" % tok, col)
            return _call(tok, args, self.text(col))
        fn = _ref(tok, col, self.scope)
        self.advance()
        return fn


class _Const:
    """A constant subexpression, folded at parse time."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __call__(self, env):
        return self.value


def _binary(op, f, g, text):
    if isinstance(f, _Const) and isinstance(g, _Const):
        try:
            return _Const(_apply(op, f.value, g.value, text))
        except _Fail:
            pass  # reported when evaluated, with the step's loc, as Go does
    return lambda env: _apply(op, f(env), g(env), text)


def _call(name, args, text):
    if name == "ceildiv":
        f, g = args
        return lambda env: _apply("ceildiv", f(env), g(env), text)
    pick = min if name == "min" else max
    return lambda env: pick([a(env) for a in args])


def _number(s):
    """Go's bundle.number: a decimal of at most 6 digits, no sign, no
    leading zero; None otherwise."""
    if not s or len(s) > 6 or (len(s) > 1 and s[0] == "0") or not (s.isdigit() and s.isascii()):
        return None
    return int(s)


def _index(s, prefix):
    """N of "argN" (prefix "arg"), or None."""
    if isinstance(s, str) and s.startswith(prefix):
        return _number(s[len(prefix):])
    return None


def _parse_ref(s):
    """Go's bundle.ParseRef: (kind, index, field, dim) with kind "arg",
    "tmp" or "i" and field "", "dim", "stride" or "ptr"."""
    name, dot, field = s.partition(".")
    for kind in ("arg", "tmp", "i"):
        if name.startswith(kind):
            break
    else:
        raise ValueError("unknown name %r" % s)
    index = _number(name[len(kind):])
    if index is None:
        raise ValueError("unknown name %r" % s)
    if not dot:
        if kind == "tmp":
            raise ValueError("%r needs a field (dimN, strideN or ptr)" % s)
        return kind, index, "", 0
    if kind == "i":
        raise ValueError("loop variable %r has no fields" % s)
    if field == "ptr":
        return kind, index, "ptr", 0
    for f in ("dim", "stride"):
        if field.startswith(f):
            dim = _number(field[len(f):])
            if dim is not None:
                return kind, index, f, dim
    raise ValueError("unknown field in %r" % s)


def _ref(tok, col, scope):
    """A reference, checked against the scope (Go's planChecker.ref)."""
    try:
        kind, n, field, dim = _parse_ref(tok)
    except ValueError as e:
        raise _Syntax(str(e), col) from None
    if kind == "i":
        if n >= scope.depth:
            raise _Syntax("%s is not the variable of an enclosing loop" % tok, col)
        return lambda env: env.loops[n]
    if kind == "tmp":
        rank = scope.tmps.get("tmp%d" % n)
        if rank is None:
            raise _Syntax("%s refers to no live scratch allocation" % tok, col)
        if field != "ptr" and dim >= rank:
            raise _Syntax("%s: the allocation has rank %d" % (tok, rank), col)
        name = "tmp%d" % n
        return _mem_field(lambda env: _live(env, name), field, dim)
    if n >= len(scope.args):
        raise _Syntax("%s: the entry has %d arguments" % (tok, len(scope.args)), col)
    a = scope.args[n]
    if not field:
        if a.kind != "scalar" or a.is_float:
            raise _Syntax("%s is not an integer scalar argument" % tok, col)
        return lambda env: env.args[n]
    if a.kind != "memref":
        raise _Syntax("%s: argument %d is not a memref" % (tok, n), col)
    if field != "ptr" and dim >= a.rank:
        raise _Syntax("%s: argument %d has rank %d" % (tok, n, a.rank), col)
    return _mem_field(lambda env: env.args[n], field, dim)


def _live(env, name):
    m = env.tmps.get(name)
    if m is None:
        raise _Fail("%s is used after it is freed" % name)
    return m


def _mem_field(get, field, k):
    if field == "ptr":
        return lambda env: get(env).ptr
    if field == "dim":
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
            raise PlanError("%s: %s" % (self.loc, e)) from None

    def __repr__(self):
        return "Expr(%r)" % self.text


def compile_expr(text, scope, loc, where):
    """Parse expression text; a syntax or reference error is a
    BundleError naming where, the text and the column."""
    if not isinstance(text, str):
        raise BundleError("%s: expected an expression string, got %s" % (where, json.dumps(text)))
    if len(text) > MAX_EXPR_LEN:
        raise BundleError("%s: expression of %d bytes is longer than %d" % (
            where, len(text), MAX_EXPR_LEN))
    try:
        fn = _Parser(text, scope).parse()
    except _Syntax as e:
        raise BundleError("%s: expression %s: %s (column %d)" % (
            where, json.dumps(text), e, e.col + 1)) from None
    return Expr(text, loc, fn)

# ---------------------------------------------------------------------------
# Entries: arguments and steps, compiled from the manifest's JSON with the
# checks of Go's bundle/plan_validate.go

# Go's limits on plans (bundle.MaxEntries etc.).
MAX_ENTRIES = 256
MAX_ARGS = 1024
MAX_STEPS = 1 << 16
MAX_FOR_DEPTH = 16
MAX_RANK = 16

# Scalar argument types, and the LLVM types codegen gives scalar launch
# parameters of each type (Go's scalarArgTypes, paramLLVMTypes).
SCALAR_TYPES = ("index", "i1", "i8", "i16", "i32", "i64", "f16", "bf16", "f32", "tf32", "f64")
_PARAM_LLVM_TYPES = {"i1": "i1", "i8": "i8", "i16": "i16", "i32": "i32", "i64": "i64",
                     "f16": "half", "bf16": "bfloat", "f32": "float", "f64": "double"}
_ELEM_BYTES = (1, 2, 4, 8)


class Arg:
    """One entry argument (design 2.2): name, type (the IR type), kind
    ("memref" or "scalar"), elem, and for memrefs elem_bytes, shape and
    strides (-1: dynamic), offset, contiguous (identity layout: a binding
    must be dense row-major), output."""

    __slots__ = ("index", "name", "type", "kind", "elem", "elem_bytes", "shape",
                 "strides", "offset", "contiguous", "output", "rank", "is_float",
                 "tensormapped")

    def __init__(self, index, d, where):
        if not isinstance(d, dict):
            raise BundleError("%s: not a JSON object" % where)
        self.index = index
        self.name = _get(d, "name", str, where)
        if self.name != "arg%d" % index:
            raise BundleError("%s is named %s, not arg%d" % (where, json.dumps(self.name), index))
        self.type = _get(d, "type", str, where)
        self.kind = _get(d, "kind", str, where)
        self.elem = _get(d, "elem", str, where)
        self.is_float = self.elem in FLOAT_TYPES
        self.output = d.get("output", False) is True
        self.contiguous = d.get("contiguous", False) is True
        self.tensormapped = False  # set when a tensormap step reads it
        if self.kind == "memref":
            self.elem_bytes = _get(d, "elem_bytes", int, where)
            self.shape = tuple(_int_list(d, "shape", where))
            self.strides = tuple(_int_list(d, "strides", where))
            self.offset = d.get("offset", 0)
            self.rank = len(self.shape)
            if self.elem_bytes not in _ELEM_BYTES:
                raise BundleError("%s: element size %d" % (where, self.elem_bytes))
            if (self.rank > MAX_RANK or len(self.strides) != self.rank
                    or min(self.shape + self.strides, default=0) < -1):
                raise BundleError("%s: shape %s and strides %s" % (
                    where, list(self.shape), list(self.strides)))
            if type(self.offset) is not int or self.offset < -1:
                raise BundleError("%s: offset %s" % (where, json.dumps(self.offset)))
        elif self.kind == "scalar":
            self.elem_bytes = None
            self.shape = self.strides = ()
            self.offset = 0
            self.rank = 0
            if self.elem not in SCALAR_TYPES:
                raise BundleError("%s: scalar type %s is not supported" % (where, json.dumps(self.elem)))
        else:
            raise BundleError("%s: unknown kind %s" % (where, json.dumps(self.kind)))

    def expected(self):
        """What this argument expects, for argument errors."""
        if self.kind == "scalar":
            return "%s %s scalar (a Python %s)" % (
                _article(self.elem), self.elem,
                "float" if self.is_float else ("bool or int" if self.elem == "i1" else "int"))
        shape = ", ".join("?" if s < 0 else str(s) for s in self.shape)
        parts = [_dtypes.expected_name(self.elem), "shape [%s]" % shape]
        if self.contiguous or (min(self.shape, default=0) >= 0
                               and self.strides == _row_major(self.shape)):
            parts.append("contiguous")
        elif any(s >= 0 for s in self.strides):
            parts.append("strides [%s]" % ", ".join("?" if s < 0 else str(s) for s in self.strides))
        if self.tensormapped and not self.contiguous and self.rank and self.strides[-1] < 0:
            parts.append("innermost stride 1")
        return "%s (%s)" % (self.type, ", ".join(parts))


def _get(d, key, typ, where):
    v = d.get(key) if isinstance(d, dict) else None
    if type(v) is not typ:
        raise BundleError("%s: missing or bad %s" % (where, key))
    return v


def _int_list(d, key, where):
    v = d.get(key)
    if v is None:
        v = []  # Go omits empty lists
    if not isinstance(v, list) or any(type(x) is not int for x in v):
        raise BundleError("%s: %s must be a list of integers" % (where, key))
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
    step allocates scratch memory), steps (compiled) and raw (the JSON)."""

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
        kernel list (default: d["kernels"], as in the golden entry.json).
        A malformed entry is a BundleError."""
        if not isinstance(d, dict):
            raise BundleError("bundle: an entry is not a JSON object")
        name = d.get("name")
        if not isinstance(name, str) or not name:
            raise BundleError("bundle: an entry has no name")
        where = "bundle: entry %s" % name
        loc = d.get("loc") if isinstance(d.get("loc"), str) else name
        if kernels is None:
            kernels = d.get("kernels") or []
        kmap = {k["name"]: k for k in kernels if isinstance(k, dict) and "name" in k}
        raw_args = d.get("args") or []
        if not isinstance(raw_args, list):
            raise BundleError("%s: args is not a list" % where)
        if len(raw_args) > MAX_ARGS:
            raise BundleError("%s: %d arguments, more than %d" % (where, len(raw_args), MAX_ARGS))
        args = [Arg(i, a, "%s: argument %d" % (where, i)) for i, a in enumerate(raw_args)]
        raw_steps = d.get("steps") or []
        if not isinstance(raw_steps, list):
            raise BundleError("%s: steps is not a list" % where)
        steps = _Compile(kmap, args).block(raw_steps, _Scope(args), where)
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
    """Compiles the steps of one entry, checking every name, id and
    layout as Go's planChecker does."""

    def __init__(self, kernels, args):
        self.kernels = kernels
        self.args = args
        self.count = 0

    def block(self, raw, scope, where):
        out = []
        for i, s in enumerate(raw):
            self.count += 1
            if self.count > MAX_STEPS:
                raise BundleError("%s: more than %d steps" % (where, MAX_STEPS))
            op = s.get("op") if isinstance(s, dict) else None
            make = _STEPS.get(op)
            if make is None:
                raise BundleError("%s: step %d: unknown op %s" % (where, i, json.dumps(op)))
            loc = s.get("loc") if isinstance(s.get("loc"), str) else ""
            out.append(make(self, s, scope, loc, "%s: step %d (%s at %s)" % (where, i, op, loc)))
        return out

    def expr(self, s, key, scope, loc, where):
        return compile_expr(s.get(key), scope, loc, "%s: %s" % (where, key))

    def exprs(self, s, key, n, scope, loc, where):
        v = s.get(key)
        if v is None:
            v = []
        if not isinstance(v, list) or (n is not None and len(v) != n):
            raise BundleError("%s: %s has %s entries, not %s" % (
                where, key, len(v) if isinstance(v, list) else "no", n))
        return [compile_expr(x, scope, loc, "%s: %s" % (where, key)) for x in v]

    def memref(self, s, key, scope, where):
        """A memref operand, ("arg", index, elem_bytes) or ("tmp", id,
        None), and its rank."""
        name = s.get(key)
        if name in scope.tmps:
            return ("tmp", name, None), scope.tmps[name]
        n = _index(name, "arg")
        if n is not None and n < len(self.args) and self.args[n].kind == "memref":
            return ("arg", n, self.args[n].elem_bytes), self.args[n].rank
        raise BundleError("%s: %s is not a memref argument or a live scratch allocation" % (
            where, json.dumps(name)))


def _compile_alloc(c, s, scope, loc, where):
    tid = s.get("id")
    if _index(tid, "tmp") is None:
        raise BundleError("%s: bad id %s" % (where, json.dumps(tid)))
    if tid in scope.tmps:
        raise BundleError("%s: %s is allocated twice" % (where, tid))
    eb = s.get("elem_bytes")
    if eb not in _ELEM_BYTES or type(eb) is not int:
        raise BundleError("%s: element size %s" % (where, json.dumps(eb)))
    shape = c.exprs(s, "shape", None, scope, loc, where)
    if len(shape) > MAX_RANK:
        raise BundleError("%s: rank %d is more than %d" % (where, len(shape), MAX_RANK))
    scope.tmps[tid] = len(shape)
    return _Alloc(loc, tid, shape, eb)


def _compile_free(c, s, scope, loc, where):
    tid = s.get("id")
    if tid not in scope.tmps:
        raise BundleError("%s: %s is not a live scratch allocation" % (where, json.dumps(tid)))
    del scope.tmps[tid]
    return _Free(loc, tid)


def _compile_copy(c, s, scope, loc, where):
    dst, _ = c.memref(s, "dst", scope, where)
    src, _ = c.memref(s, "src", scope, where)
    src_bytes = c.expr(s, "src_bytes", scope, loc, where) if "src_bytes" in s else None
    return _Copy(loc, dst, src, c.expr(s, "bytes", scope, loc, where), src_bytes)


def _compile_memset(c, s, scope, loc, where):
    dst, _ = c.memref(s, "dst", scope, where)
    eb = s.get("elem_bytes")
    if eb not in _ELEM_BYTES or type(eb) is not int:
        raise BundleError("%s: element size %s" % (where, json.dumps(eb)))
    value = s.get("value")
    try:
        ok = isinstance(value, str) and len(bytes.fromhex(value)) == eb and " " not in value
    except ValueError:
        ok = False
    if not ok:
        raise BundleError("%s: value %s is not %d bytes in hexadecimal" % (
            where, json.dumps(value), eb))
    return _Memset(loc, dst, eb, c.expr(s, "count", scope, loc, where), value)


# Upper bounds of a tensor map's enum fields (Go's planChecker.tensorMap).
_TENSORMAP_ENUMS = (("data_type", 15), ("interleave", 2), ("swizzle", 6),
                    ("l2_promotion", 3), ("oob_fill", 1))


def _compile_tensormap(c, s, scope, loc, where):
    mid = s.get("id")
    if _index(mid, "tm") is None:
        raise BundleError("%s: bad id %s" % (where, json.dumps(mid)))
    of, of_rank = c.memref(s, "of", scope, where)
    rank = s.get("rank")
    if type(rank) is not int or rank < 1 or rank > 5 or rank != of_rank:
        raise BundleError("%s: rank %s for a memref of rank %d" % (where, json.dumps(rank), of_rank))
    address = c.expr(s, "global_address", scope, loc, where)
    dims = c.exprs(s, "global_dim", rank, scope, loc, where)
    strides = c.exprs(s, "global_strides", rank - 1, scope, loc, where)
    box = _int_list(s, "box_dim", where)
    estrides = _int_list(s, "element_strides", where)
    if len(box) != rank or len(estrides) != rank:
        raise BundleError("%s: box_dim %s and element_strides %s for rank %d" % (
            where, box, estrides, rank))
    fixed = {}
    for key, top in _TENSORMAP_ENUMS:
        v = s.get(key, 0)
        if type(v) is not int or v < 0 or v > top:
            raise BundleError("%s: %s %s is out of range" % (where, key, json.dumps(v)))
        fixed[key] = v
    if of[0] == "arg":
        c.args[of[1]].tensormapped = True
    scope.maps.add(mid)
    return _TensorMap(loc, mid, rank, address, dims, strides, box, estrides, fixed)


def _compile_launch(c, s, scope, loc, where):
    name = s.get("kernel")
    k = c.kernels.get(name)
    if k is None:
        raise BundleError("%s: kernel %s is not in the manifest" % (where, json.dumps(name)))
    grid = c.exprs(s, "grid", 3, scope, loc, where)
    block = c.exprs(s, "block", 3, scope, loc, where)
    cluster = None
    if s.get("cluster") is not None:
        cluster = c.exprs(s, "cluster", 3, scope, loc, where)
    npc = s.get("non_portable_cluster", False)
    if type(npc) is not bool:
        raise BundleError("%s: non_portable_cluster must be true or false" % where)
    shared = c.expr(s, "shared_bytes", scope, loc, where)
    raw = s.get("params") or []
    layout = k.get("params") or []
    if not isinstance(raw, list) or len(raw) != len(layout):
        raise BundleError("%s: %s params for kernel %s, which takes %d" % (
            where, len(raw) if isinstance(raw, list) else "no", name, len(layout)))
    params = []
    for j, (p, kp) in enumerate(zip(raw, layout)):
        params.append(_compile_param(c, p, kp, j, name, scope, loc, where))
    return _Launch(loc, name, grid, block, cluster, npc, shared, params)


def _kernel_param_name(kp):
    """The name kernelabi gives a manifest kernel parameter (Go's
    bundle.KernelParamName): arg3, arg3.offset, arg3.size0, arg3.stride1."""
    role, arg = kp.get("role"), kp.get("arg", 0)
    if role == "offset":
        return "arg%d.offset" % arg
    if role in ("size", "stride"):
        return "arg%d.%s%d" % (arg, role, kp.get("dim", 0))
    return "arg%d" % arg


def _compile_param(c, p, kp, j, kernel, scope, loc, where):
    if not isinstance(p, dict):
        raise BundleError("%s: param %d is not a JSON object" % (where, j))
    name, role = p.get("name"), p.get("role")
    want_name, want_role = _kernel_param_name(kp), kp.get("role")
    if name != want_name or role != want_role:
        raise BundleError("%s: param %d is %s (%s) but kernel %s's is %s (%s)" % (
            where, j, name, role, kernel, want_name, want_role))
    where = "%s: param %d (%s)" % (where, j, name)
    typ, value = p.get("type"), p.get("value")
    if role == "tensormap":
        mid = p.get("tensormap")
        if mid not in scope.maps:
            raise BundleError("%s: tensor map %s is not defined before the launch" % (
                where, json.dumps(mid)))
        if typ or value is not None:
            raise BundleError("%s: a tensormap param has no type or value" % where)
        return (name, None, mid)
    if p.get("tensormap"):
        raise BundleError("%s: only a tensormap param names a tensor map" % where)
    llvm = kp.get("type", "")
    if role == "base":
        ok = typ == "ptr" and llvm.endswith("*")
    elif role in ("offset", "size", "stride"):
        ok = typ == "i64"
    else:
        ok = typ in _PARAM_LLVM_TYPES and _PARAM_LLVM_TYPES[typ] == llvm
    if not ok:
        raise BundleError("%s: type %s for a %s parameter of LLVM type %s" % (
            where, json.dumps(typ), role, llvm))
    if typ in FLOAT_TYPES:
        if type(value) in (int, float):
            return (name, typ, _Const(float(value)))
        n = _index(value, "arg")
        if n is None or n >= len(c.args) or not (c.args[n].kind == "scalar" and c.args[n].is_float):
            raise BundleError("%s: value %s is neither a number nor a float scalar argument" % (
                where, json.dumps(value)))
        return (name, typ, _FloatArg(n))
    if not isinstance(value, str):
        raise BundleError("%s: value %s of an integer param is not an expression" % (
            where, json.dumps(value)))
    return (name, typ, compile_expr(value, scope, loc, where))


class _FloatArg:
    """A float parameter's value taken from a float scalar argument."""

    __slots__ = ("n",)

    def __init__(self, n):
        self.n = n

    def __call__(self, env):
        return float(env.args[self.n])


def _compile_for(c, s, scope, loc, where):
    if scope.depth >= MAX_FOR_DEPTH:
        raise BundleError("%s: loops nested deeper than %d" % (where, MAX_FOR_DEPTH))
    var = s.get("var")
    if var != "i%d" % scope.depth:
        raise BundleError("%s: the loop variable is %s, not i%d" % (
            where, json.dumps(var), scope.depth))
    lb = c.expr(s, "lb", scope, loc, where)
    ub = c.expr(s, "ub", scope, loc, where)
    step = c.expr(s, "step", scope, loc, where)
    body = s.get("body") or []
    if not isinstance(body, list):
        raise BundleError("%s: body is not a list" % where)
    return _For(loc, scope.depth, lb, ub, step, c.block(body, scope.child(), where))


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
        self.live = {}  # pointers allocated and not freed, in allocation order
        self.loops = {}
        self.alloc = alloc
        self.steps = []
        self.maps = set()

    def emit(self, step):
        if len(self.steps) >= MAX_TRACE_STEPS:
            raise PlanError("%s: the plan unrolls into more than %d steps" % (
                step["loc"], MAX_TRACE_STEPS))
        self.steps.append(step)

    def view(self, ref, loc):
        """(ptr, shape, strides, elem_bytes) of a memref operand."""
        kind, key, eb = ref
        if kind == "arg":
            b = self.args[key]
            return b.ptr, b.shape, b.strides, eb
        m = self.tmps.get(key)
        if m is None:
            raise PlanError("%s: %s is used after it is freed" % (loc, key))
        return m.ptr, m.shape, m.strides, m.elem_bytes


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


# Go's bound on sizes, byte and element counts of allocations, copies
# and memsets (runtime/plan's evaluator.size).
MAX_SIZE = 1 << 48


def _size(expr, env, what):
    v = expr(env)
    if v < 0 or v > MAX_SIZE:
        raise PlanError("%s: %s %d (%s) is out of range" % (expr.loc, what, v, expr.text))
    return v


class _Alloc:
    def __init__(self, loc, tid, shape, elem_bytes):
        self.loc, self.tid, self.shape, self.elem_bytes = loc, tid, shape, elem_bytes

    def run(self, env):
        shape = [_size(e, env, "size") for e in self.shape]
        nbytes = self.elem_bytes
        for d in shape:
            nbytes *= d
        if nbytes > MAX_SIZE:
            raise PlanError("%s: an allocation of shape %s is too large" % (self.loc, shape))
        # A zero-byte allocation still gets an address of its own.
        ptr = env.alloc(max(nbytes, 1))
        env.tmps[self.tid] = _Mem(ptr, shape, self.elem_bytes)
        env.live[ptr] = True
        env.emit({"op": "alloc", "id": self.tid, "bytes": nbytes, "ptr": ptr, "loc": self.loc})


class _Free:
    def __init__(self, loc, tid):
        self.loc, self.tid = loc, tid

    def run(self, env):
        m = env.tmps.pop(self.tid, None)
        if m is None:
            raise PlanError("%s: %s is freed twice" % (self.loc, self.tid))
        env.live.pop(m.ptr, None)
        env.emit({"op": "free", "ptr": m.ptr, "loc": self.loc})


class _Copy:
    def __init__(self, loc, dst, src, nbytes, src_bytes):
        self.loc, self.dst, self.src, self.nbytes = loc, dst, src, nbytes
        self.src_bytes = src_bytes  # the source's size as the plan computes it (Go's check)

    def run(self, env):
        n = _size(self.nbytes, env, "byte count")
        if self.src_bytes is not None:
            sb = _size(self.src_bytes, env, "byte count")
            if sb != n:
                raise PlanError("%s: a copy needs memrefs of the same size (%d and %d bytes)" % (self.loc, n, sb))
        dp, dshape, dstrides, deb = env.view(self.dst, self.loc)
        sp, sshape, sstrides, seb = env.view(self.src, self.loc)
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
        n = _size(self.count, env, "element count")
        ptr, shape, strides, eb = env.view(self.dst, self.loc)
        size = _contiguous_bytes(shape, strides, eb)
        if size is None or n * self.elem_bytes > size:
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
            # Go's cuda.ValidateTiled, message for message: the driver
            # itself would only say CUDA_ERROR_INVALID_VALUE.
            _driver.validate_tiled(
                step["data_type"], self.rank, step["global_address"], step["global_dim"],
                step["global_strides"], step["box_dim"], step["element_strides"],
                f["interleave"], f["swizzle"], f["l2_promotion"], f["oob_fill"])
        except PlanError as e:
            raise PlanError("%s: %s" % (self.loc, e)) from None
        env.maps.add(self.mid)
        env.emit(step)


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
                raise PlanError("%s: kernel %s param %s: %s" % (
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
        if bits == 1:
            raise ValueError("%d does not fit i1 (0 or 1)" % v)
        raise ValueError("%d does not fit %s" % (v, typ))
    n = PARAM_SIZES[typ]
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
    if isinstance(v, numbers.Real):
        return "the %s %r" % (type(v).__name__, v)
    if isinstance(v, MemrefBinding):
        return _got_memref(v)
    return "a %s" % type(v).__name__


def _got_memref(b, strides=False):
    dtype = _dtypes.name(b.dtype)
    s = "%s %s %s of shape %s" % (_article(dtype), dtype, b.kind, list(b.shape))
    if strides:
        s += " and strides %s" % list(b.strides)
    return s


def _article(word):
    return "an" if word[0] in "aeiou" else "a"


def _check_scalar(a, v):
    # numbers.Integral and numbers.Real admit NumPy's scalars too.
    if a.is_float:
        if isinstance(v, bool) or not isinstance(v, numbers.Real):
            _bad(a, _got_scalar(v))
        return
    if not isinstance(v, numbers.Integral):
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
    if a.contiguous and _contiguous_bytes(b.shape, b.strides, 1) is None:
        _bad(a, _got_memref(b, True), "the memref's layout is the identity, so the array "
             "must be dense row-major")
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
    # Scalars as Python numbers, so that expressions never meet NumPy's
    # fixed-width (wrapping) integers.
    args = [v if a.kind == "memref" else (float(v) if a.is_float else int(v))
            for a, v in zip(entry.args, args)]
    env = _Env(entry, args, alloc or fake_alloc())
    for s in entry.steps:
        s.run(env)
    # Scratch memory the plan does not free is freed after its last step
    # (design 2.4), in allocation order, as Go's trace records it.
    for ptr in env.live:
        env.steps.append({"op": "free", "ptr": ptr, "loc": entry.loc})
    return Trace(entry.name, env.steps)
