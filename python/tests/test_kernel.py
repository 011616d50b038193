"""Tests of tmac.Kernel (tmac._launch) without a GPU: a bundle built from
the hand-written gemm_pipelined fixture, a fake driver library that
records every call, and stand-in DLPack arrays. They check what a call
hands the driver (launch configuration, parameter bytes, tensor-map
arguments), that a repeated call only launches, that bad arguments launch
nothing, and tmac.compile's errors."""

import ctypes
import io
import json
import os
import shutil
import struct
import tarfile
import tempfile
import unittest
from unittest import mock

import tmac
from tmac import _driver, _launch
from tmac._driver import Driver

from tests import test_dlpack
from tests.test_dlpack import Producer
from tests.test_driver import FakeLib, out

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
F16, F32 = (2, 16, 1), (2, 32, 1)


def fixture(name):
    with open(os.path.join(HERE, "fixtures", name), encoding="utf-8") as f:
        return json.load(f)


def bundle_bytes(entry):
    """A .tmab holding entry (a golden entry.json: the entry plus its
    kernels) with PTX declaring those kernels."""
    kernels = entry.pop("kernels")
    manifest = {"format": 2, "tmac_version": "test", "source": "gemm_pipelined.tma",
                "target": "sm_90a", "ptx_version": 80, "kernels": kernels, "entries": [entry]}
    ptx = ".version 8.0\n.target sm_90a\n.address_size 64\n" + "".join(
        ".visible .entry %s()\n{\n\tret;\n}\n" % k["name"] for k in kernels)
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.USTAR_FORMAT) as tf:
        for name, data in (("manifest.json", json.dumps(manifest).encode()), ("kernels.ptx", ptx.encode()),
                           ("kernels.ll", b"; llvm\n"), ("module.tma", b"// module\n")):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


class Recorder:
    """Driver calls that matter, decoded: launches with their
    configuration and parameter bytes, tensor-map encodes."""

    def __init__(self, layouts, fail_launch=0):
        self.launches, self.encodes, self.attributes = [], [], []
        self.layouts = layouts  # kernel function handle -> parameter sizes
        self.fail_launch = fail_launch
        self.functions = {}

    def lib(self):
        def count(p):
            out(p).value = 1
            return 0

        def retain(p, dev):
            out(p).value = 0xc0
            return 0

        def load(p, image, n, opts, vals):
            out(p).value = 0xa0
            return 0

        def function(p, mod, name):
            h = 0x100 + len(self.functions)
            self.functions[h] = name.decode()
            out(p).value = h
            return 0

        def encode(tm, dt, rank, addr, dims, strides, box, es, il, sw, l2, oob):
            self.encodes.append({"data_type": dt, "rank": rank, "global_address": addr,
                                 "global_dim": list(dims[:rank]), "global_strides": list(strides[:rank - 1]),
                                 "box_dim": list(box[:rank]), "swizzle": sw})
            ctypes.memmove(tm, struct.pack("<Q", addr) * 16, 128)
            return 0

        def attribute(f, attr, value):
            self.attributes.append((self.functions[f], attr, value))
            return 0

        def launch(cfg, f, params, extra):
            if self.fail_launch:
                return self.fail_launch
            c = getattr(cfg, "_obj", None) or getattr(cfg, "contents", None) or cfg
            f = getattr(f, "value", f)  # an int, or the c_void_p prepared ahead
            ptrs = ctypes.cast(params, ctypes.POINTER(ctypes.c_void_p))
            name = self.functions[f]
            sizes = self.layouts[name]
            self.launches.append({
                "kernel": name, "grid": [c.gridDimX, c.gridDimY, c.gridDimZ],
                "block": [c.blockDimX, c.blockDimY, c.blockDimZ], "shared": c.sharedMemBytes,
                "stream": c.hStream or 0,
                "params": [ctypes.string_at(ptrs[i], n) for i, n in enumerate(sizes)]})
            return 0
        return FakeLib(cuDeviceGetCount=count, cuDevicePrimaryCtxRetain=retain, cuModuleLoadDataEx=load,
                       cuModuleGetFunction=function, cuTensorMapEncodeTiled=encode,
                       cuFuncSetAttribute=attribute, cuLaunchKernelEx=launch)


class KernelTest(unittest.TestCase):
    def setUp(self):
        entry = fixture("gemm_pipelined.gemm_pipelined.entry.json")
        self.kernels = {k["name"]: k for k in entry["kernels"]}
        layouts = {name: [128 if p["role"] == "tensormap" else 8 for p in k["params"]]
                   for name, k in self.kernels.items()}
        self.rec = Recorder(layouts)
        self.lib = self.rec.lib()
        patcher = mock.patch.object(_driver, "driver", lambda: Driver(self.lib))
        patcher.start()
        self.addCleanup(patcher.stop)
        self.k = tmac.load(bundle_bytes(entry))
        self.a = Producer(shape=(4096, 4096), dtype=F16, data=0x7f0000000000)
        self.b = Producer(shape=(4096, 4096), dtype=F16, data=0x7f0100000000)
        self.c = Producer(shape=(4096, 4096), dtype=F32, data=0x7f0200000000)

    def test_signature(self):
        self.assertEqual(self.k.name, "gemm_pipelined")
        self.assertEqual([n for n, _ in self.k.args], ["arg0", "arg1", "arg2"])

    def test_call_launches_what_the_plan_says(self):
        got = self.k(self.a, self.b, self.c, stream=7)
        self.assertIs(got, self.c)  # the {tmac.output} argument
        trace = fixture("gemm_pipelined.gemm_pipelined.trace.json")["steps"]
        maps = [s for s in trace if s["op"] == "tensormap"]
        self.assertEqual(len(self.rec.encodes), len(maps))
        for e, m in zip(self.rec.encodes, maps):
            for field, v in e.items():
                self.assertEqual(v, m[field], field)
        (want,) = [s for s in trace if s["op"] == "launch"]
        (l,) = self.rec.launches
        self.assertEqual(l["kernel"], want["kernel"])
        self.assertEqual(l["grid"], want["grid"])
        self.assertEqual(l["block"], want["block"])
        self.assertEqual(l["shared"], want["shared_bytes"])
        self.assertEqual(l["stream"], 7)
        ids = {s["id"]: s for s in maps}
        for got_bytes, p in zip(l["params"], want["params"]):
            if "tensormap" in p:
                # the encoded map (the fake writes its address 16 times)
                addr = ids[p["tensormap"]]["global_address"]
                self.assertEqual(got_bytes, struct.pack("<Q", addr) * 16, p["name"])
            else:
                self.assertEqual(got_bytes.hex(), p["bytes"], p["name"])
        # dynamic shared memory above 48 KB was opted into before the launch
        self.assertIn((want["kernel"], 8, want["shared_bytes"]), self.rec.attributes)

    def test_repeated_call_only_launches(self):
        self.k(self.a, self.b, self.c, stream=7)
        self.lib.calls.clear()
        self.k(self.a, self.b, self.c, stream=7)
        self.assertEqual(self.lib.names(), ["cuLaunchKernelEx"])
        # another pointer, or another stream, is prepared anew
        self.k(Producer(shape=(4096, 4096), dtype=F16, data=0x7f0300000000), self.b, self.c, stream=7)
        self.assertEqual(len(self.rec.encodes), 4)
        self.k(self.a, self.b, self.c, stream=9)
        self.assertEqual(self.rec.launches[-1]["stream"], 9)

    def test_cache_is_bounded(self):
        for i in range(_launch.CACHE_SIZE + 10):
            self.k(Producer(shape=(4096, 4096), dtype=F16, data=0x7f0000000000 + 256 * i), self.b, self.c, stream=7)
        self.assertEqual(len(self.k._cache), _launch.CACHE_SIZE)

    def test_bad_arguments_launch_nothing(self):
        cases = [
            ((self.a, self.b), r"expected 3 arguments \(arg0, arg1, arg2\), got 2"),
            ((Producer(shape=(4096, 4096), dtype=F32), self.b, self.c), r"argument 0 \(arg0\)"),
            ((self.a, Producer(shape=(4096, 2048), dtype=F16), self.c), r"argument 1 \(arg1\)"),
            ((self.a, self.b, Producer(shape=(4096, 4096), dtype=F32, device=(1, 0))), r"argument 2 \(arg2\)"),
            ((self.a, self.b, Producer(shape=(4096, 4096), dtype=F32, data=0x7f0200000004)), r"argument 2 \(arg2\)"),
            ((self.a, 3, self.c), r"argument 1 \(arg1\)"),
        ]
        for args, msg in cases:
            with self.subTest(msg=msg):
                with self.assertRaisesRegex(tmac.ArgumentError, msg):
                    self.k(*args, stream=7)
        self.assertEqual(self.rec.launches, [])
        self.assertEqual(self.rec.encodes, [])

    def test_launch_error_names_the_source(self):
        self.rec.fail_launch = 1
        with self.assertRaisesRegex(tmac.CudaError, r"^gemm_pipelined\.tma:\d+:\d+: cuLaunchKernelEx failed: "
                                    r"CUDA_ERROR_INVALID_VALUE \(1\): invalid argument"):
            self.k(self.a, self.b, self.c, stream=7)

    def test_torch_tensors_take_the_generated_path(self):
        class Tensor(test_dlpack.Tensor):
            def get_device(self):
                return self.device.index
        Tensor.__module__, Tensor.__name__ = "torch", "Tensor"
        streams = []

        def current_stream(dev):
            streams.append(dev)
            return 0x55
        with mock.patch.object(_launch, "_tensor_type", None), \
                mock.patch("tmac._dlpack._stream_reader", current_stream):
            a = Tensor(0x7f0000000000, (4096, 4096), (4096, 1))
            b = Tensor(0x7f0100000000, (4096, 4096), (4096, 1))
            c = Tensor(0x7f0200000000, (4096, 4096), (4096, 1), dtype="float32")
            self.assertIs(self.k(a, b, c), c)  # a miss: _call prepares
            self.assertIs(_launch._tensor_type, Tensor)
            self.lib.calls.clear()
            self.assertIs(self.k(a, b, c), c)  # a hit in the generated __call__
            self.assertEqual(self.lib.names(), ["cuLaunchKernelEx"])
            self.assertEqual([l["stream"] for l in self.rec.launches], [0x55, 0x55])
            self.assertEqual(len(self.k._cache), 1)  # both paths built the same key
            # the generated path leaves every other case to _call
            with self.assertRaisesRegex(tmac.ArgumentError, r"expected 3 arguments"):
                self.k(a, b)
            c2 = Tensor(0x7f0200000000, (4096, 4096), (4096, 1), dtype="float16")
            with self.assertRaisesRegex(tmac.ArgumentError, r"argument 2 \(arg2\)"):
                self.k(a, b, c2)  # same pointer, another dtype: a miss, refused
            self.k(a, b, c, stream=0x66)
            self.assertEqual(self.rec.launches[-1]["stream"], 0x66)

    def test_plan(self):
        trace = self.k.plan(self.a, self.b, self.c)
        self.assertEqual([s["op"] for s in trace.steps], ["tensormap", "tensormap", "launch"])


class CompileTest(unittest.TestCase):
    def test_without_tmac(self):
        with mock.patch.dict(os.environ, {"TMAC": ""}), mock.patch.object(shutil, "which", lambda _: None):
            with self.assertRaisesRegex(tmac.CompileError, "needs the tmac compiler"):
                tmac.compile("x.tma")

    def test_unknown_option(self):
        with self.assertRaisesRegex(TypeError, "unknown option 'speed'"):
            tmac.compile("x.tma", tmac="/bin/true", speed=3)

    def test_diagnostics(self):
        exe = os.path.join(ROOT, "build", "tmac")
        if not os.path.exists(exe):
            self.skipTest("build/tmac is not built (make build)")
        with tempfile.TemporaryDirectory() as d:
            src = os.path.join(d, "bad.tma")
            with open(src, "w") as f:
                f.write("func.func @f(%a: memref<4xf32>) {\n  %x = arith.addf %a, %a : f32\n  return\n}\n")
            with self.assertRaisesRegex(tmac.CompileError, r"bad\.tma:2:\d+: error: "):
                tmac.compile(src, tmac=exe)

    def test_compile_and_load(self):
        # tmac compile --emit=bundle for real (llc included), then the
        # bundle's plan evaluated for stand-in arrays.
        exe = os.path.join(ROOT, "build", "tmac")
        if not os.path.exists(exe):
            self.skipTest("build/tmac is not built (make build)")
        k = tmac.compile(os.path.join(ROOT, "examples", "tutorial", "copy.tma"), tmac=exe, opt_level=2)
        self.assertEqual(k.args, [("arg0", "memref<128x2048xf32>"), ("arg1", "memref<128x2048xf32>")])
        trace = k.plan(Producer(shape=(128, 2048), data=0x7f0000000000),
                       Producer(shape=(128, 2048), data=0x7f0100000000))
        self.assertEqual([s["op"] for s in trace.steps], ["tensormap", "tensormap", "launch"])
        self.assertEqual(trace.steps[0]["global_address"], 0x7f0000000000)
        self.assertRegex(trace.steps[2]["loc"], r"^copy\.tma:\d+:\d+$")


if __name__ == "__main__":
    unittest.main()
