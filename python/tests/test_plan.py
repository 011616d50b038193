"""Host-plan evaluation without a GPU: expressions, argument checks,
steps, launch limits and parameter packing (tmac._plan)."""

import copy
import json
import os
import unittest

from tmac import _plan
from tmac._errors import ArgumentError, BundleError, PlanError
from tmac._plan import MemrefBinding

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")
CUDA0 = (2, 0)
F16, F32, I32 = (2, 16), (2, 32), (0, 32)
A0, A1, A2 = 0x7F0000000000, 0x7F0100000000, 0x7F0200000000


def fixture(name):
    with open(os.path.join(FIXTURES, name + ".entry.json"), encoding="utf-8") as f:
        return json.load(f)


def memref_arg(i, shape, elem="f32", eb=4, strides=None, contiguous=False, output=False):
    if strides is None:
        strides = [-1] * len(shape)
        if shape:
            strides[-1] = 1
    dims = "x".join("?" if d < 0 else str(d) for d in shape)
    return {"name": "arg%d" % i, "type": "memref<%sx%s>" % (dims, elem) if shape else "memref<%s>" % elem,
            "kind": "memref", "elem": elem, "elem_bytes": eb, "shape": shape, "strides": strides,
            "offset": 0, "contiguous": contiguous, "output": output}


def scalar_arg(i, elem):
    return {"name": "arg%d" % i, "type": elem, "kind": "scalar", "elem": elem}


KERNEL = {"name": "k", "args": ["memref<?xf32>", "index"], "params": [
    {"arg": 0, "role": "base", "dim": 0, "type": "float*"},
    {"arg": 1, "role": "scalar", "dim": 0, "type": "i64"}]}


def launch(grid=("1", "1", "1"), block=("128", "1", "1"), cluster=None, npc=False, shared="0",
           value="0", loc="t.tma:9:5"):
    return {"op": "launch", "kernel": "k", "loc": loc, "grid": list(grid), "block": list(block),
            "cluster": None if cluster is None else list(cluster), "non_portable_cluster": npc,
            "shared_bytes": shared, "params": [
                {"name": "arg0", "role": "base", "type": "ptr", "value": "arg0.ptr"},
                {"name": "arg1", "role": "scalar", "type": "i64", "value": value}]}


def entry(steps, args=None, kernels=None):
    if args is None:
        args = [memref_arg(0, [-1]), scalar_arg(1, "index")]
    return _plan.Entry.from_json({"name": "t", "loc": "t.tma:1:1", "args": args, "steps": steps,
                                  "kernels": kernels or [KERNEL]})


def vec(n=256, ptr=A0, dtype=F32):
    return MemrefBinding(ptr, [n], [1], dtype, CUDA0)


class ExprTest(unittest.TestCase):
    """The expression language (design 2.3)."""

    def setUp(self):
        self.entry = entry([], args=[memref_arg(0, [-1, -1]), scalar_arg(1, "index"),
                                     scalar_arg(2, "f32")])
        self.scope = _plan._Scope(self.entry.args)
        self.env = _plan._Env(self.entry, [MemrefBinding(A0, [100, 64], [64, 1], F32, CUDA0), 7, 1.5],
                              None)

    def compile(self, text):
        return _plan.compile_expr(text, self.scope, "t.tma:12:9", "where")

    def value(self, text):
        return self.compile(text)(self.env)

    def fails(self, text):
        with self.assertRaises(PlanError) as cm:
            self.value(text)
        return str(cm.exception)

    def bad(self, text):
        with self.assertRaises(BundleError) as cm:
            self.compile(text)
        return str(cm.exception)

    def test_precedence_and_associativity(self):
        cases = {"1 + 2 * 3": 7, "(1 + 2) * 3": 9, "10 - 4 - 3": 3, "100 / 10 / 5": 2,
                 "7 % 4 * 2": 6, "-3 * 2": -6, "--3": 3, "2 - -3": 5, "-(2 + 3)": -5,
                 "2*3+4*5": 26, "  7  ": 7, "0": 0, "9223372036854775807": 2**63 - 1}
        for text, want in cases.items():
            self.assertEqual(self.value(text), want, text)

    def test_references(self):
        cases = {"arg0.dim0": 100, "arg0.dim1": 64, "arg0.stride0": 64, "arg0.stride1": 1,
                 "arg0.ptr": A0, "arg1": 7, "arg0.ptr + arg0.stride0 * 4": A0 + 256,
                 "ceildiv(arg0.dim0, arg1)": 15, "(arg0.dim0 + 31) / 32": 4}
        for text, want in cases.items():
            self.assertEqual(self.value(text), want, text)

    def test_functions(self):
        cases = {"ceildiv(7, 2)": 4, "ceildiv(8, 2)": 4, "ceildiv(0, 3)": 0,
                 "min(3, 1, 2)": 1, "max(3, 1, 2)": 3, "min(-5, 4)": -5,
                 "max(min(arg0.dim0, 50), ceildiv(arg0.dim1, 3), 2)": 50,
                 "ceildiv(max(arg1, 9) * 2, min(4, 5))": 5}
        for text, want in cases.items():
            self.assertEqual(self.value(text), want, text)

    def test_division_truncates(self):
        self.assertEqual(self.value("7 / 2"), 3)
        self.assertEqual(self.value("7 % 2"), 1)
        self.assertEqual(self.value("0 / 5"), 0)
        self.assertEqual(self.value("9223372036854775807 / 2"), 2**62 - 1)
        self.assertEqual(self.value("9223372036854775807 % 10"), 7)

    def test_division_errors_name_the_node_and_loc(self):
        self.assertEqual(self.fails("1 + ceildiv(arg0.dim0, arg1 - 7)"),
                         "t.tma:12:9: division by zero in ceildiv(arg0.dim0, arg1 - 7)")
        self.assertEqual(self.fails("5 % (arg1 - 7)"), "t.tma:12:9: division by zero in 5 % (arg1 - 7)")
        self.assertEqual(self.fails("(0 - 7) / 2"), "t.tma:12:9: negative operand in (0 - 7) / 2 (-7 and 2)")
        self.assertEqual(self.fails("-arg1 % 3"), "t.tma:12:9: negative operand in -arg1 % 3 (-7 and 3)")
        self.assertIn("negative operand", self.fails("7 / -2"))
        self.assertIn("negative operand", self.fails("ceildiv(-1, 2)"))

    def test_int64_overflow(self):
        self.assertEqual(self.value("0 - 9223372036854775807 - 1"), -2**63)
        self.assertEqual(self.value("-9223372036854775807 - 1"), -2**63)
        self.assertEqual(self.fails("9223372036854775807 + arg1"),
                         "t.tma:12:9: integer overflow in 9223372036854775807 + arg1")
        self.assertIn("integer overflow", self.fails("9223372036854775807 + 1"))
        self.assertIn("integer overflow", self.fails("0 - 9223372036854775807 - 2"))
        self.assertIn("integer overflow", self.fails("4294967296 * 4294967296"))
        self.assertIn("integer overflow", self.fails("-(0 - 9223372036854775807 - 1)"))
        # An intermediate overflow is an error even if the result would fit.
        self.assertIn("integer overflow", self.fails("(9223372036854775807 + 1) - 1"))

    def test_syntax_errors(self):
        cases = {
            "1 +": "unexpected end", "": "unexpected end", "(1": "missing )",
            "1)": "unexpected ')'", "1 2": "unexpected '2'", "ceildiv(1)": "ceildiv takes 2 arguments, not 1",
            "ceildiv(1, 2, 3)": "ceildiv takes 2 arguments, not 3", "min(1)": "min takes at least 2",
            "max 1": "max needs arguments in parentheses", "foo": "unknown name 'foo'",
            "foo(1)": "unknown name 'foo'", "1 $ 2": "unexpected '$'", "12abc": "bad integer",
            "99999999999999999999": "outside int64", "arg01": "unknown name",
            "arg9": "arg9: the entry has 3 arguments", "arg0.dim2": "argument 0 has rank 2",
            "arg0.size0": "unknown field", "arg1.dim0": "argument 1 is not a memref",
            "arg0": "arg0 is not an integer scalar argument", "arg2": "arg2 is not an integer scalar",
            "i0": "i0 is not the variable of an enclosing loop", "i0.dim0": "has no fields",
            "tmp0.ptr": "tmp0.ptr refers to no live scratch allocation", "tmp0": "needs a field",
            "1 +\t2": "unknown name", "((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((("
            "1)))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))": "nested deeper",
        }
        for text, want in cases.items():
            msg = self.bad(text)
            self.assertIn(want, msg, text)
            self.assertTrue(msg.startswith("where: expression %s" % json.dumps(text)), msg)
        self.assertIn("(column 3)", self.bad("1 $ 2"))
        with self.assertRaises(BundleError):
            _plan.compile_expr(3, self.scope, "l", "w")  # Go writes expressions as strings
        with self.assertRaises(BundleError):
            self.compile("1+" * 3000 + "1")


class BindingsTest(unittest.TestCase):
    """check_bindings: one message per kind of mistake, naming the argument."""

    def setUp(self):
        self.gemm = _plan.Entry.from_json(fixture("gemm_pipelined.gemm_pipelined"))
        self.dyn = _plan.Entry.from_json(fixture("add_dynamic.add_dynamic"))
        self.scalars = _plan.Entry.from_json(fixture("scratch.scratch"))

    def good_gemm(self):
        return [MemrefBinding(A0, [4096, 4096], [4096, 1], F16, CUDA0),
                MemrefBinding(A1, [4096, 4096], [4096, 1], F16, CUDA0),
                MemrefBinding(A2, [4096, 4096], [4096, 1], F32, CUDA0)]

    def message(self, entry, args):
        with self.assertRaises(ArgumentError) as cm:
            _plan.check_bindings(entry, args)
        return str(cm.exception)

    def test_good(self):
        _plan.check_bindings(self.gemm, self.good_gemm())
        _plan.check_bindings(self.scalars, [vec(), 3, 1.5, -7])
        _plan.check_bindings(self.scalars, [vec(), True, 2, 2**32 - 1])  # int for float, unsigned i32

    def test_count(self):
        self.assertEqual(self.message(self.gemm, self.good_gemm()[:2]),
                         "gemm_pipelined: expected 3 arguments (arg0, arg1, arg2), got 2")

    def test_dtype(self):
        args = self.good_gemm()
        args[1] = MemrefBinding(A1, [4096, 4096], [4096, 1], F32, CUDA0)
        self.assertEqual(self.message(self.gemm, args),
                         "argument 1 (arg1): expected memref<4096x4096xf16> (float16, shape "
                         "[4096, 4096], contiguous), got a float32 array of shape [4096, 4096]")

    def test_kind_word(self):
        args = self.good_gemm()
        args[0] = MemrefBinding(A0, [4096, 4096], [4096, 1], I32, CUDA0, kind="tensor")
        self.assertIn("got an int32 tensor of shape", self.message(self.gemm, args))

    def test_rank_and_sizes(self):
        args = self.good_gemm()
        args[2] = MemrefBinding(A2, [4096], [1], F32, CUDA0)
        self.assertTrue(self.message(self.gemm, args).endswith(
            "got a float32 array of shape [4096]: rank 1, not 2"))
        args[2] = MemrefBinding(A2, [2048, 4096], [4096, 1], F32, CUDA0)
        self.assertTrue(self.message(self.gemm, args).endswith("dimension 0 has size 2048, not 4096"))

    def test_static_strides(self):
        args = self.good_gemm()
        args[0] = MemrefBinding(A0, [4096, 4096], [1, 4096], F16, CUDA0)
        self.assertEqual(self.message(self.gemm, args),
                         "argument 0 (arg0): expected memref<4096x4096xf16> (float16, shape [4096, 4096], "
                         "contiguous), got a float16 array of shape [4096, 4096] and strides [1, 4096]: "
                         "dimension 0 has stride 1, not 4096")

    def test_size_one_dimension_stride_is_free(self):
        e = entry([], args=[memref_arg(0, [1, 8], strides=[8, 1]), scalar_arg(1, "index")])
        _plan.check_bindings(e, [MemrefBinding(A0, [1, 8], [999, 1], F32, CUDA0), 0])

    def test_innermost_stride_for_tensor_maps(self):
        args = [MemrefBinding(A0, [64, 256], [512, 2], F32, CUDA0),
                MemrefBinding(A1, [64, 256], [256, 1], F32, CUDA0),
                MemrefBinding(A2, [64, 256], [256, 1], F32, CUDA0)]
        self.assertEqual(self.message(self.dyn, args),
                         "argument 0 (arg0): expected memref<?x?xf32> (float32, shape [?, ?], "
                         "strides [?, 1]), got a float32 array of shape [64, 256] and strides [512, 2]: "
                         "dimension 1 has stride 2, not 1")
        # A dynamic innermost stride is still required to be 1 when a map reads it.
        e = _plan.Entry.from_json(self.map_entry(strides=[-1, -1]))
        msg = self.message(e, [MemrefBinding(A0, [64, 256], [512, 2], F32, CUDA0)])
        self.assertIn("innermost stride 1), got", msg)
        self.assertTrue(msg.endswith("a tensor map needs the innermost dimension contiguous "
                                     "(stride 1), not stride 2"), msg)

    def map_entry(self, strides):
        return {"name": "m", "loc": "m.tma:1:1", "args": [memref_arg(0, [-1, -1], strides=strides)],
                "kernels": [], "steps": [
                    {"op": "tensormap", "id": "tm0", "of": "arg0", "loc": "m.tma:2:3", "data_type": 7,
                     "rank": 2, "global_address": "arg0.ptr", "global_dim": ["arg0.dim1", "arg0.dim0"],
                     "global_strides": ["arg0.stride0 * 4"], "box_dim": [64, 32],
                     "element_strides": [1, 1], "interleave": 0, "swizzle": 0, "l2_promotion": 0,
                     "oob_fill": 0}]}

    def test_contiguous_layout(self):
        e = entry([], args=[memref_arg(0, [-1, -1], strides=[-1, 1], contiguous=True),
                            scalar_arg(1, "index")])
        _plan.check_bindings(e, [MemrefBinding(A0, [64, 256], [256, 1], F32, CUDA0), 0])
        msg = self.message(e, [MemrefBinding(A0, [64, 256], [512, 1], F32, CUDA0), 0])
        self.assertEqual(msg, "argument 0 (arg0): expected memref<?x?xf32> (float32, shape [?, ?], "
                              "contiguous), got a float32 array of shape [64, 256] and strides [512, 1]: "
                              "the memref's layout is the identity, so the array must be dense row-major")

    def test_alignment(self):
        args = self.good_gemm()
        args[2] = MemrefBinding(A2 + 8, [4096, 4096], [4096, 1], F32, CUDA0)
        self.assertEqual(self.message(self.gemm, args),
                         "argument 2 (arg2): expected memref<4096x4096xf32> (float32, shape [4096, 4096], "
                         "contiguous), got a float32 array of shape [4096, 4096] at address 0x7f0200000008: "
                         "the address is not a multiple of 16 bytes")

    def test_device(self):
        args = self.good_gemm()
        args[0] = MemrefBinding(A0, [4096, 4096], [4096, 1], F16, (1, 0))
        self.assertTrue(self.message(self.gemm, args).endswith(
            "got a float16 array of shape [4096, 4096] on device type 1: tmac kernels need CUDA "
            "device memory"))
        args = self.good_gemm()
        args[2] = MemrefBinding(A2, [4096, 4096], [4096, 1], F32, (2, 1))
        self.assertTrue(self.message(self.gemm, args).endswith(
            "got an array on CUDA device 1: argument 0 (arg0) is on CUDA device 0; all arrays "
            "must be on one device"))

    def test_memref_vs_scalar(self):
        args = self.good_gemm()
        args[1] = 3
        self.assertTrue(self.message(self.gemm, args).startswith("argument 1 (arg1): expected memref<"))
        self.assertTrue(self.message(self.gemm, args).endswith("got the int 3"))
        self.assertEqual(self.message(self.scalars, [vec(), vec(), 1.5, 0]),
                         "argument 1 (arg1): expected an index scalar (a Python int), got a float32 "
                         "array of shape [256]")
        self.assertTrue(self.message(self.scalars, [vec(), "3", 1.5, 0]).endswith("got a str"))

    def test_scalars(self):
        self.assertEqual(self.message(self.scalars, [vec(), 1.5, 1.5, 0]),
                         "argument 1 (arg1): expected an index scalar (a Python int), got the float 1.5")
        self.assertEqual(self.message(self.scalars, [vec(), 3, True, 0]),
                         "argument 2 (arg2): expected a f32 scalar (a Python float), got the bool True")
        self.assertEqual(self.message(self.scalars, [vec(), 3, 1.0, 2**32]),
                         "argument 3 (arg3): expected an i32 scalar (a Python int), got the int 4294967296: "
                         "outside the range of i32 [-2147483648, 4294967295]")
        self.assertIn("outside the range of i32", self.message(self.scalars, [vec(), 3, 1.0, -2**31 - 1]))
        self.assertIn("outside the range of index", self.message(self.scalars, [vec(), 2**63, 1.0, 0]))

    def test_number_like_scalars(self):
        class Int(int):  # a stand-in for NumPy's integer scalars (numbers.Integral)
            pass
        import fractions
        _plan.check_bindings(self.scalars, [vec(), Int(3), fractions.Fraction(3, 2), Int(-7)])
        self.assertTrue(self.message(self.scalars, [vec(), fractions.Fraction(3, 2), 1.0, 0]).endswith(
            "got the Fraction Fraction(3, 2)"))

    def test_ptr_range(self):
        msg = self.message(self.scalars, [vec(ptr=2**63), 3, 1.0, 0])
        self.assertTrue(msg.endswith("the address is out of range"), msg)


class EvaluateTest(unittest.TestCase):
    """Steps into the trace, and the errors evaluation reports."""

    def run_steps(self, steps, args=None, **kw):
        return _plan.evaluate(entry(steps), args or [vec(), 3], **kw)

    def plan_error(self, steps, args=None):
        with self.assertRaises(PlanError) as cm:
            self.run_steps(steps, args)
        return str(cm.exception)

    def test_launch_trace(self):
        t = self.run_steps([launch(grid=("ceildiv(arg0.dim0, 128)", "1", "1"), value="arg1 * 2")])
        self.assertEqual(t.entry, "t")
        self.assertEqual(len(t.steps), 1)
        s = t.steps[0]
        self.assertEqual(s["loc"], "t.tma:9:5")
        self.assertEqual(s["grid"], [2, 1, 1])
        self.assertEqual(s["params"], [{"name": "arg0", "bytes": A0.to_bytes(8, "little")},
                                       {"name": "arg1", "bytes": (6).to_bytes(8, "little")}])
        d = t.to_dict()
        self.assertNotIn("loc", d["steps"][0])
        self.assertEqual(d["steps"][0]["params"][1], {"name": "arg1", "bytes": "0600000000000000"})
        self.assertEqual(json.loads(t.to_json()), d)

    def test_launch_limits(self):
        cases = [
            (dict(block=("2048", "1", "1")), "block size x = 2048 is outside [1, 1024]"),
            (dict(block=("1024", "2", "1")), "2048 threads per block (1024 x 2 x 1), over the limit of 1024"),
            (dict(block=("1", "1", "65")), "block size z = 65 is outside [1, 64]"),
            (dict(grid=("1", "65536", "1")), "grid size y = 65536 is outside [1, 65535]"),
            (dict(grid=("0", "1", "1")), "grid size x = 0 is outside [1, 2147483647]"),
            (dict(shared="232449"), "232449 bytes of dynamic shared memory, outside [0, 232448]"),
            (dict(shared="0 - 1"), "-1 bytes of dynamic shared memory, outside [0, 232448]"),
            (dict(grid=("3", "1", "1"), cluster=("2", "1", "1")),
             "grid size x = 3 is not a multiple of the cluster size 2"),
            (dict(grid=("4", "1", "1"), cluster=("0", "1", "1")), "cluster size x = 0 must be positive"),
            (dict(grid=("16", "1", "1"), cluster=("16", "1", "1")),
             "clusters of 16 blocks (16 x 1 x 1), over the portable limit of 8; up to 16 need the "
             "launch to opt in with {nonPortableClusterSize = true}"),
            (dict(grid=("32", "1", "1"), cluster=("32", "1", "1"), npc=True),
             "clusters of 32 blocks (32 x 1 x 1), over sm_90's limit of 16"),
        ]
        for kw, want in cases:
            self.assertEqual(self.plan_error([launch(**kw)]),
                             "t.tma:9:5: kernel k cannot be launched: " + want, kw)
        t = self.run_steps([launch(grid=("16", "1", "1"), cluster=("16", "1", "1"), npc=True,
                                   shared="232448")])
        self.assertEqual(t.steps[0]["cluster"], [16, 1, 1])
        self.assertTrue(t.steps[0]["non_portable_cluster"])

    def test_param_out_of_range(self):
        self.assertIn("t.tma:9:5: kernel k param arg0: address -16 is outside [0, 2^64)",
                      self.plan_error([dict(launch(), params=[
                          {"name": "arg0", "role": "base", "type": "ptr", "value": "arg0.ptr - arg0.ptr - 16"},
                          {"name": "arg1", "role": "scalar", "type": "i64", "value": "0"}])]))

    def test_for_loop_nesting(self):
        steps = [{"op": "for", "var": "i0", "lb": "1", "ub": "arg1", "step": "1", "loc": "t.tma:3:3",
                  "body": [{"op": "for", "var": "i1", "lb": "0", "ub": "i0", "step": "2", "loc": "t.tma:4:5",
                            "body": [launch(value="i0 * 10 + i1")]}]}]
        t = self.run_steps(steps, [vec(), 4])
        got = [int.from_bytes(s["params"][1]["bytes"], "little") for s in t.steps]
        self.assertEqual(got, [10, 20, 30, 32])
        self.assertEqual(self.run_steps(steps, [vec(), 0]).steps, [])

    def test_loop_step_must_be_positive(self):
        steps = [{"op": "for", "var": "i0", "lb": "0", "ub": "4", "step": "arg1 - 3", "loc": "t.tma:3:3",
                  "body": [launch()]}]
        self.assertEqual(self.plan_error(steps), "t.tma:3:3: the loop step is 0; it must be positive")

    def test_trace_length_is_bounded(self):
        old = _plan.MAX_TRACE_STEPS
        _plan.MAX_TRACE_STEPS = 10
        try:
            steps = [{"op": "for", "var": "i0", "lb": "0", "ub": "arg1", "step": "1", "loc": "t.tma:3:3",
                      "body": [launch()]}]
            self.assertEqual(len(self.run_steps(steps, [vec(), 10]).steps), 10)
            self.assertIn("unrolls into more than 10 steps", self.plan_error(steps, [vec(), 11]))
        finally:
            _plan.MAX_TRACE_STEPS = old

    def scratch_steps(self):
        return [
            {"op": "alloc", "id": "tmp0", "type": "memref<?x4xf32>", "elem_bytes": 4,
             "shape": ["arg0.dim0 / 4", "4"], "loc": "t.tma:2:1"},
            {"op": "alloc", "id": "tmp1", "type": "memref<8xi16>", "elem_bytes": 2, "shape": ["8"],
             "loc": "t.tma:3:1"},
            {"op": "copy", "dst": "tmp0", "src": "arg0", "bytes": "arg0.dim0 * 4", "loc": "t.tma:4:1"},
            {"op": "memset", "dst": "tmp1", "elem_bytes": 2, "count": "tmp1.dim0", "value": "ff7f",
             "loc": "t.tma:5:1"},
            {"op": "free", "id": "tmp1", "loc": "t.tma:6:1"},
            dict(launch(value="tmp0.stride0 + tmp0.dim0"), params=[
                {"name": "arg0", "role": "base", "type": "ptr", "value": "tmp0.ptr"},
                {"name": "arg1", "role": "scalar", "type": "i64", "value": "tmp0.stride0 + tmp0.dim0"}]),
        ]

    def test_allocations(self):
        t = self.run_steps(self.scratch_steps())
        d = t.to_dict()["steps"]
        base = _plan.FAKE_ALLOC_BASE
        self.assertEqual(d[0], {"op": "alloc", "id": "tmp0", "bytes": 1024, "ptr": base})
        self.assertEqual(d[1], {"op": "alloc", "id": "tmp1", "bytes": 16, "ptr": base + (1 << 32)})
        self.assertEqual(d[2], {"op": "copy", "dst": base, "src": A0, "bytes": 1024})
        self.assertEqual(d[3], {"op": "memset", "dst": base + (1 << 32), "elem_bytes": 2, "count": 8,
                                "value": "ff7f"})
        self.assertEqual(d[4], {"op": "free", "ptr": base + (1 << 32)})
        self.assertEqual(d[5]["params"][0]["bytes"], base.to_bytes(8, "little").hex())
        self.assertEqual(d[5]["params"][1]["bytes"], (68).to_bytes(8, "little").hex())
        # What the plan does not free is freed after its last step.
        self.assertEqual(d[6:], [{"op": "free", "ptr": base}])
        self.assertEqual(t.steps[6]["loc"], "t.tma:1:1")
        self.assertTrue(entry(self.scratch_steps()).allocates)
        # Go's src_bytes: the source's size as the plan computes it must
        # equal the copy's byte count.
        steps = self.scratch_steps()
        steps[2] = dict(steps[2], src_bytes="arg0.dim0 * 4")
        self.assertEqual(self.run_steps(steps).to_dict()["steps"][2]["bytes"], 1024)
        steps[2] = dict(steps[2], src_bytes="arg0.dim0 * 2")
        self.assertIn("t.tma:4:1: a copy needs memrefs of the same size (1024 and 512 bytes)",
                      self.plan_error(steps))
        self.assertFalse(entry([launch()]).allocates)

    def test_alloc_callback(self):
        sizes = []

        def alloc(n):
            sizes.append(n)
            return 0x1000 * len(sizes)
        t = self.run_steps(self.scratch_steps(), alloc=alloc)
        self.assertEqual(sizes, [1024, 16])
        self.assertEqual([t.steps[0]["ptr"], t.steps[1]["ptr"]], [0x1000, 0x2000])

    def test_copy_and_memset_sizes(self):
        steps = self.scratch_steps()
        steps[2]["bytes"] = "arg0.dim0 * 2"
        self.assertEqual(self.plan_error(steps),
                         "t.tma:4:1: a copy of 512 bytes from arg0 to tmp0 needs two contiguous memrefs "
                         "of that size (1024 and 1024 bytes)")
        steps = self.scratch_steps()
        steps[3]["count"] = "tmp1.dim0 + 1"
        self.assertEqual(self.plan_error(steps[:3] + [dict(steps[3], count="0 - 1")]),
                         "t.tma:5:1: element count -1 (0 - 1) is out of range")
        self.assertEqual(self.plan_error(steps),
                         "t.tma:5:1: a memset of 9 2-byte elements needs a contiguous memref of at "
                         "least that size; tmp1 is 16 bytes")
        e = entry(self.scratch_steps())
        with self.assertRaises(PlanError) as cm:
            _plan.evaluate(e, [MemrefBinding(A0, [256], [2], F32, CUDA0), 3], check=False)
        self.assertIn("non-contiguous", str(cm.exception))

    def test_negative_alloc(self):
        steps = self.scratch_steps()[:1]
        steps[0]["shape"] = ["arg1 - 4", "4"]
        self.assertEqual(self.plan_error(steps), "t.tma:2:1: size -1 (arg1 - 4) is out of range")
        steps[0]["shape"] = ["arg1 * 1099511627776", "64"]
        self.assertEqual(self.plan_error(steps), "t.tma:2:1: an allocation of shape [3298534883328, 64] "
                                                 "is too large")

    def test_free_in_a_loop_twice(self):
        steps = [self.scratch_steps()[0],
                 {"op": "for", "var": "i0", "lb": "0", "ub": "2", "step": "1", "loc": "t.tma:3:3",
                  "body": [{"op": "free", "id": "tmp0", "loc": "t.tma:4:4"}]}]
        self.assertEqual(self.plan_error(steps), "t.tma:4:4: tmp0 is freed twice")

    def test_tensor_map_validation(self):
        e = _plan.Entry.from_json(BindingsTest.map_entry(None, [-1, 1]))
        t = _plan.evaluate(e, [MemrefBinding(A0, [64, 256], [256, 1], F32, CUDA0)])
        self.assertEqual(t.to_dict()["steps"][0]["global_strides"], [1024])
        with self.assertRaises(PlanError) as cm:
            _plan.evaluate(e, [MemrefBinding(A0, [64, 256], [258, 1], F32, CUDA0)])
        self.assertEqual(str(cm.exception), "m.tma:2:3: tensor map: global stride of dimension 1 is "
                                            "1032 bytes, not a multiple of 16")

    def test_check_is_optional(self):
        e = entry([launch()])
        with self.assertRaises(ArgumentError):
            _plan.evaluate(e, [vec(ptr=A0 + 4), 3])
        self.assertEqual(len(_plan.evaluate(e, [vec(ptr=A0 + 4), 3], check=False).steps), 1)


class EntryErrorsTest(unittest.TestCase):
    """A malformed plan is a BundleError when the entry is compiled."""

    def bad(self, steps=None, args=None, kernels=None):
        with self.assertRaises(BundleError) as cm:
            entry(steps or [], args=args, kernels=kernels)
        return str(cm.exception)

    def test_steps(self):
        p = launch()
        cases = [
            ([{"op": "sync", "loc": "x"}], "step 0: unknown op \"sync\""),
            ([dict(p, kernel="nope")], "kernel \"nope\" is not in the manifest"),
            ([dict(p, grid=["1", "1"])], "grid has 2 entries, not 3"),
            ([dict(p, params=p["params"][:1])], "1 params for kernel k, which takes 2"),
            ([dict(p, params=[dict(p["params"][0], name="arg9"), p["params"][1]])],
             "param 0 is arg9 (base) but kernel k's is arg0 (base)"),
            ([dict(p, params=[p["params"][0], dict(p["params"][1], type="i32")])],
             "type \"i32\" for a scalar parameter of LLVM type i64"),
            ([dict(p, params=[p["params"][0], dict(p["params"][1], value=3)])],
             "is not an expression"),
            ([dict(p, shared_bytes="arg0")], "shared_bytes: expression \"arg0\""),
            ([{"op": "free", "id": "tmp0", "loc": "x"}], "\"tmp0\" is not a live scratch allocation"),
            ([{"op": "alloc", "id": "t0", "elem_bytes": 4, "shape": [], "loc": "x"}], "bad id \"t0\""),
            ([{"op": "alloc", "id": "tmp0", "elem_bytes": 3, "shape": [], "loc": "x"}], "element size 3"),
            ([{"op": "memset", "dst": "arg0", "elem_bytes": 4, "count": "1", "value": "00", "loc": "x"}],
             "value \"00\" is not 4 bytes in hexadecimal"),
            ([{"op": "copy", "dst": "arg1", "src": "arg0", "bytes": "4", "loc": "x"}],
             "\"arg1\" is not a memref argument or a live scratch allocation"),
            ([{"op": "for", "var": "i1", "lb": "0", "ub": "1", "step": "1", "body": [], "loc": "x"}],
             "the loop variable is \"i1\", not i0"),
            ([{"op": "for", "var": "i0", "lb": "0", "ub": "1", "step": "1", "loc": "x", "body": [
                {"op": "alloc", "id": "tmp0", "elem_bytes": 4, "shape": ["1"], "loc": "y"}]},
              {"op": "free", "id": "tmp0", "loc": "z"}], "\"tmp0\" is not a live scratch allocation"),
        ]
        for steps, want in cases:
            msg = self.bad(steps)
            self.assertIn(want, msg)
            self.assertTrue(msg.startswith("bundle: entry t: "), msg)
        self.assertIn("step 0 (launch at t.tma:9:5): kernel", self.bad([dict(p, kernel="nope")]))

    def test_tensormap_steps(self):
        good = BindingsTest.map_entry(None, [-1, 1])
        _plan.Entry.from_json(good)
        for change, want in [({"id": "map0"}, "bad id \"map0\""), ({"rank": 3}, "rank 3 for a memref of rank 2"),
                             ({"swizzle": 7}, "swizzle 7 is out of range"),
                             ({"box_dim": [64]}, "box_dim [64] and element_strides [1, 1] for rank 2"),
                             ({"global_strides": []}, "global_strides has 0 entries, not 1"),
                             ({"of": "tmp0"}, "\"tmp0\" is not a memref argument")]:
            d = copy.deepcopy(good)
            d["steps"][0].update(change)
            with self.assertRaises(BundleError) as cm:
                _plan.Entry.from_json(d)
            self.assertIn(want, str(cm.exception))

    def test_tensor_map_param_before_definition(self):
        k = {"name": "k", "args": ["!nvgpu.tensormap.descriptor<...>"],
             "params": [{"arg": 0, "role": "tensormap", "dim": 0, "type": "[128 x i8]*"}]}
        step = {"op": "launch", "kernel": "k", "loc": "x", "grid": ["1", "1", "1"],
                "block": ["1", "1", "1"], "cluster": None, "non_portable_cluster": False,
                "shared_bytes": "0", "params": [{"name": "arg0", "role": "tensormap", "tensormap": "tm0"}]}
        msg = self.bad([step], kernels=[k])
        self.assertIn("tensor map \"tm0\" is not defined before the launch", msg)

    def test_args(self):
        self.assertIn("is named \"a\", not arg0", self.bad(args=[dict(memref_arg(0, [4]), name="a")]))
        self.assertIn("scalar type \"f128\" is not supported", self.bad(args=[scalar_arg(0, "f128")]))
        self.assertIn("unknown kind \"tensor\"", self.bad(args=[dict(memref_arg(0, [4]), kind="tensor")]))
        self.assertIn("shape [-2] and strides [1]", self.bad(args=[memref_arg(0, [-2])]))
        self.assertIn("element size 3", self.bad(args=[memref_arg(0, [4], eb=3)]))

    def test_float_params(self):
        k = {"name": "k", "args": ["f16"], "params": [{"arg": 0, "role": "scalar", "dim": 0, "type": "half"}]}

        def step(value):
            return {"op": "launch", "kernel": "k", "loc": "x", "grid": ["1", "1", "1"],
                    "block": ["1", "1", "1"], "cluster": None, "non_portable_cluster": False,
                    "shared_bytes": "0",
                    "params": [{"name": "arg0", "role": "scalar", "type": "f16", "value": value}]}
        args = [memref_arg(0, [4]), scalar_arg(1, "index"), scalar_arg(2, "f32")]
        e = entry([step("arg2")], args=args, kernels=[k])
        t = _plan.evaluate(e, [vec(4), 0, 65520.0])
        self.assertEqual(t.steps[0]["params"][0]["bytes"], bytes.fromhex("007c"))  # rounds to +inf
        for bad in ("arg1", "arg0", "1.5", "i0"):
            with self.assertRaises(BundleError) as cm:
                entry([step(bad)], args=args, kernels=[k])
            self.assertIn("is neither a number nor a float scalar argument", str(cm.exception))


class PackTest(unittest.TestCase):
    """Go's PackParams/scalarBytes: widths, ranges (errors, never wraps),
    float rounding to nearest even."""

    def pack(self, typ, v):
        return _plan.pack_param(typ, v).hex()

    def test_integers(self):
        self.assertEqual(self.pack("i64", -1), "ffffffffffffffff")
        self.assertEqual(self.pack("i32", 600), "58020000")
        self.assertEqual(self.pack("i32", 2**32 - 1), "ffffffff")
        self.assertEqual(self.pack("i16", -2), "feff")
        self.assertEqual(self.pack("i8", 128), "80")
        self.assertEqual(self.pack("i1", 1), "01")
        self.assertEqual(self.pack("ptr", 2**64 - 16), "f0ffffffffffffff")
        with self.assertRaises(ValueError) as cm:
            _plan.pack_param("i8", 300)
        self.assertEqual(str(cm.exception), "300 does not fit i8")  # Go's CheckParamRange
        with self.assertRaises(ValueError) as cm:
            _plan.pack_param("i1", 2)
        self.assertEqual(str(cm.exception), "2 does not fit i1 (0 or 1)")
        for typ, v in [("i8", 256), ("i8", -129), ("i16", 65536), ("i32", -2**31 - 1), ("i1", 2),
                       ("i1", -1), ("ptr", -1), ("i64", 2**64)]:
            with self.assertRaises(ValueError, msg=(typ, v)):
                _plan.pack_param(typ, v)

    def test_floats(self):
        self.assertEqual(self.pack("f32", 1.1), "cdcc8c3f")
        self.assertEqual(self.pack("f32", 1e39), "0000807f")
        self.assertEqual(self.pack("f32", -1e39), "000080ff")
        self.assertEqual(self.pack("f64", 0.1), "9a9999999999b93f")
        self.assertEqual(self.pack("f16", 1.5), "003e")
        self.assertEqual(self.pack("f16", 65504.0), "ff7b")
        self.assertEqual(self.pack("f16", 65519.0), "ff7b")
        self.assertEqual(self.pack("f16", 65520.0), "007c")
        self.assertEqual(self.pack("f16", 2.0**-24), "0100")   # smallest subnormal
        self.assertEqual(self.pack("f16", 2.0**-25), "0000")   # tie to even: 0
        self.assertEqual(self.pack("f16", 1 + 2.0**-11), "003c")  # tie to even: 1.0
        self.assertEqual(self.pack("f16", 1 + 3 * 2.0**-11), "023c")  # tie to even: up
        self.assertEqual(self.pack("bf16", 1.1), "8d3f")
        self.assertEqual(self.pack("bf16", 1 + 2.0**-8), "803f")  # tie to even: 1.0
        self.assertEqual(self.pack("bf16", 1 + 3 * 2.0**-8), "823f")
        self.assertEqual(self.pack("bf16", -2.0), "00c0")
        self.assertEqual(self.pack("bf16", 1e39), "807f")
        self.assertEqual(self.pack("f16", float("inf")), "007c")
        self.assertEqual(self.pack("bf16", -0.0), "0080")
        self.assertEqual(_plan.pack_param("f16", float("nan"))[1] & 0x7C, 0x7C)


if __name__ == "__main__":
    unittest.main()
