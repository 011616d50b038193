"""Tests of tmac._driver without a GPU: struct layouts, binding, error
decoding and every call through a fake driver library, the missing-library
message, and tensor-map validation (the cases of
runtime/cuda/tensormap_test.go)."""

import ctypes
import os
import re
import shutil
import subprocess
import tempfile
import unittest
from unittest import mock

from tmac import _driver
from tmac._driver import (Driver, LaunchAttribute, LaunchConfig, PROTOTYPES,
                          TensorMapStorage, validate_tiled)
from tmac._errors import CudaError, PlanError

ERROR_NAMES = {1: (b"CUDA_ERROR_INVALID_VALUE", b"invalid argument"),
               218: (b"CUDA_ERROR_INVALID_PTX", b"a PTX JIT compilation failed"),
               222: (b"CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
                     b"the provided PTX was compiled with an unsupported toolchain.")}


def out(ref):
    """The ctypes object behind a ctypes.byref(x) argument."""
    return ref._obj


class FakeFn:
    """A driver function: refuses calls unless bound like the real thing
    (argtypes of the right length, restype c_int) and converts every
    argument through its argtype as ctypes would, then runs impl."""

    def __init__(self, lib, name, impl):
        self.lib, self.name, self.impl = lib, name, impl
        self.argtypes = None
        self.restype = None

    def __call__(self, *args):
        if self.argtypes is None or self.restype is not ctypes.c_int:
            raise AssertionError("%s called without argtypes/restype c_int" % self.name)
        if len(args) != len(self.argtypes):
            raise AssertionError("%s: %d arguments, %d argtypes" % (self.name, len(args), len(self.argtypes)))
        for t, a in zip(self.argtypes, args):
            if a is not None:
                t.from_param(a)  # raises on what ctypes would reject
        self.lib.calls.append((self.name,) + args)
        return self.impl(*args)


def _error_text(which):
    """cuGetErrorName (which 0) or cuGetErrorString (1) over ERROR_NAMES."""
    def get(code, p):
        if code not in ERROR_NAMES:
            return 1  # CUDA_ERROR_INVALID_VALUE, as the driver answers
        out(p).value = ERROR_NAMES[code][which]
        return 0
    return get


class FakeLib:
    """libcuda stand-in: every symbol of PROTOTYPES succeeds unless impls
    overrides it; symbols in missing do not exist."""

    def __init__(self, missing=(), **impls):
        self.calls = []
        self._missing = set(missing)
        self._fns = {}
        defaults = {"cuGetErrorName": _error_text(0), "cuGetErrorString": _error_text(1)}
        for name in PROTOTYPES:
            impl = impls.pop(name, defaults.get(name, lambda *a: 0))
            self._fns[name] = FakeFn(self, name, impl)
        assert not impls, "unknown symbols %s" % list(impls)

    def __getattr__(self, name):
        if name.startswith("_") or name in self._missing or name not in self._fns:
            raise AttributeError(name)
        return self._fns[name]

    def names(self):
        return [c[0] for c in self.calls]


class LayoutTest(unittest.TestCase):
    def test_launch_config(self):
        self.assertEqual(ctypes.sizeof(LaunchConfig), 56)
        self.assertEqual(LaunchConfig.sharedMemBytes.offset, 24)
        self.assertEqual(LaunchConfig.hStream.offset, 32)
        self.assertEqual(LaunchConfig.attrs.offset, 40)
        self.assertEqual(LaunchConfig.numAttrs.offset, 48)

    def test_launch_attribute(self):
        self.assertEqual(ctypes.sizeof(LaunchAttribute), 72)
        self.assertEqual(LaunchAttribute.value.offset, 8)
        self.assertEqual(ctypes.alignment(LaunchAttribute), 8)

    def test_cluster_attribute_bytes(self):
        cfg = Driver(FakeLib()).launch_config((4, 2, 1), (128, 1, 1), 1024, 0xabc0, cluster=(2, 1, 1))
        raw = ctypes.string_at(ctypes.addressof(cfg), 56)
        self.assertEqual(raw[:28], (4).to_bytes(4, "little") + (2).to_bytes(4, "little")
                         + (1).to_bytes(4, "little") + (128).to_bytes(4, "little")
                         + (1).to_bytes(4, "little") * 2 + (1024).to_bytes(4, "little"))
        self.assertEqual(int.from_bytes(raw[32:40], "little"), 0xabc0)
        self.assertEqual(int.from_bytes(raw[40:48], "little"), ctypes.addressof(cfg._attrs))
        self.assertEqual(int.from_bytes(raw[48:52], "little"), 1)
        attr = ctypes.string_at(ctypes.addressof(cfg._attrs), 72)
        self.assertEqual(attr[:4], (4).to_bytes(4, "little"))  # CLUSTER_DIMENSION
        self.assertEqual(attr[8:20], b"".join(v.to_bytes(4, "little") for v in (2, 1, 1)))

    def test_config_without_cluster(self):
        cfg = Driver(FakeLib()).launch_config([1, 1, 1], [32, 1, 1], 0, 0)
        self.assertEqual(cfg.numAttrs, 0)
        self.assertFalse(cfg.attrs)  # NULL
        self.assertIsNone(cfg.hStream)

    def test_config_ranges(self):
        d = Driver(FakeLib())
        with self.assertRaisesRegex(PlanError, r"grid size y is 4294967296; it must be 0 to 2\^32-1"):
            d.launch_config((1, 1 << 32, 1), (1, 1, 1), 0, 0)
        with self.assertRaisesRegex(PlanError, "dynamic shared memory is -1"):
            d.launch_config((1, 1, 1), (1, 1, 1), -1, 0)
        with self.assertRaisesRegex(PlanError, "block has 2 dimensions, want 3"):
            d.launch_config((1, 1, 1), (1, 1), 0, 0)
        with self.assertRaisesRegex(PlanError, "cluster size x is -2"):
            d.launch_config((1, 1, 1), (1, 1, 1), 0, 0, cluster=(-2, 1, 1))

    def test_tensor_map_storage(self):
        for n in (1, 2, 5):
            s = TensorMapStorage(n)
            self.assertEqual(len(s.addresses), n)
            self.assertEqual(s.address, s.addresses[0])
            for i, a in enumerate(s.addresses):
                self.assertEqual(a % 128, 0)
                self.assertEqual(a, s.address + 128 * i)
                self.assertEqual(len(s.bytes(i)), 128)
            self.assertGreaterEqual(ctypes.addressof(s.buffer), s.address - 127)
            self.assertGreaterEqual(ctypes.addressof(s.buffer) + ctypes.sizeof(s.buffer),
                                    s.addresses[-1] + 128)
            with self.assertRaises(IndexError):
                s.bytes(n)
        with self.assertRaises(ValueError):
            TensorMapStorage(0)


class BindingTest(unittest.TestCase):
    def test_every_used_symbol_has_a_prototype(self):
        # Every driver symbol named in _driver.py must be bound through
        # PROTOTYPES (argtypes); a call by a name missing there fails here.
        with open(_driver.__file__) as f:
            src = f.read()
        used = set(re.findall(r'"(cu[A-Z][A-Za-z0-9_]*)', src))
        self.assertGreater(len(used), 15)
        self.assertEqual(sorted(used - set(PROTOTYPES)), [])

    def test_binding_sets_argtypes_and_restype(self):
        lib = FakeLib()
        d = Driver(lib)
        for name in PROTOTYPES:
            f = d.fn(name)
            self.assertIs(f.restype, ctypes.c_int, name)
            self.assertEqual(tuple(f.argtypes), PROTOTYPES[name], name)

    def test_pointers_are_64_bit(self):
        # Device pointers and sizes must be 64-bit (design 4.4): a 32-bit
        # argtype would truncate them silently.
        u64, size, vp = ctypes.c_uint64, ctypes.c_size_t, ctypes.c_void_p
        self.assertEqual(ctypes.sizeof(size), 8)
        want = {"cuMemcpyDtoDAsync_v2": (u64, u64, size, vp),
                "cuMemFreeAsync": (u64, vp),
                "cuMemAllocAsync": (ctypes.POINTER(u64), size, vp),
                "cuMemsetD32Async": (u64, ctypes.c_uint, size, vp)}
        for name, args in want.items():
            self.assertEqual(PROTOTYPES[name], args, name)
        self.assertIs(PROTOTYPES["cuTensorMapEncodeTiled"][3], vp)  # global address

    def test_missing_symbol(self):
        d = Driver(FakeLib(missing=["cuTensorMapEncodeTiled"]))
        with self.assertRaisesRegex(CudaError, r"^the CUDA driver lacks cuTensorMapEncodeTiled "
                                               r"\(CUDA 12 or newer is needed\)$"):
            d.encode_tiled(TensorMapStorage().address, **good())

    def test_missing_library(self):
        path = "/nonexistent/tmac-test/libcuda.so.1"
        with mock.patch.dict(os.environ, {"TMAC_LIBCUDA": path}):
            with self.assertRaises(CudaError) as cm:
                Driver().init()
        msg = str(cm.exception)
        self.assertTrue(msg.startswith("cannot load the CUDA driver (%s): " % path), msg)
        self.assertTrue(msg.endswith("; is an NVIDIA driver installed? (set TMAC_LIBCUDA to its path)"), msg)

    def test_default_library_name(self):
        with mock.patch.dict(os.environ, {"TMAC_LIBCUDA": ""}), \
                mock.patch.object(ctypes, "CDLL", side_effect=OSError("not found")) as cdll:
            with self.assertRaisesRegex(CudaError, r"^cannot load the CUDA driver \(libcuda\.so\.1\): not found"):
                _driver.load_library()
        cdll.assert_called_once_with("libcuda.so.1")

    def test_driver_singleton(self):
        self.assertIs(_driver.driver(), _driver.driver())


class ErrorTest(unittest.TestCase):
    def test_go_format(self):
        d = Driver(FakeLib(cuCtxSynchronize=lambda: 1))
        with self.assertRaises(CudaError) as cm:
            d.ctx_synchronize()
        e = cm.exception
        self.assertEqual(str(e), "cuCtxSynchronize failed: CUDA_ERROR_INVALID_VALUE (1): invalid argument")
        self.assertEqual((e.code, e.name), (1, "CUDA_ERROR_INVALID_VALUE"))

    def test_unknown_code(self):
        d = Driver(FakeLib(cuStreamSynchronize=lambda s: 9999))
        with self.assertRaises(CudaError) as cm:
            d.stream_synchronize(0)
        self.assertEqual(str(cm.exception), "cuStreamSynchronize failed: CUDA_ERROR_UNKNOWN (9999): unknown error")
        self.assertEqual(cm.exception.code, 9999)

    def test_launch_error(self):
        d = Driver(FakeLib(cuLaunchKernelEx=lambda *a: 1))
        cfg = d.launch_config((1, 1, 1), (1, 1, 1), 0, 0)
        with self.assertRaisesRegex(CudaError, r"^cuLaunchKernelEx failed: CUDA_ERROR_INVALID_VALUE \(1\): invalid argument$"):
            d.launch(cfg, 0x1000, (ctypes.c_void_p * 1)())


class CallTest(unittest.TestCase):
    def test_init_once(self):
        lib = FakeLib()
        d = Driver(lib)
        d.init()
        d.init()
        self.assertEqual(lib.names(), ["cuInit"])
        self.assertEqual(lib.calls[0][1], 0)

    def test_context_keeps_current_primary(self):
        def retain(p, dev):
            out(p).value = 0x5000 + dev
            return 0

        def get_current(p):
            out(p).value = 0x5001
            return 0

        def count(p):
            out(p).value = 2
            return 0

        def device_get(p, i):
            out(p).value = i
            return 0
        lib = FakeLib(cuDevicePrimaryCtxRetain=retain, cuCtxGetCurrent=get_current,
                      cuDeviceGetCount=count, cuDeviceGet=device_get)
        d = Driver(lib)
        self.assertEqual(d.context(1), 0x5001)
        self.assertNotIn("cuCtxSetCurrent", lib.names())
        # Retained once per device; later calls only read the current one.
        lib.calls.clear()
        self.assertEqual(d.context(1), 0x5001)
        self.assertEqual(lib.names(), ["cuCtxGetCurrent"])
        # Device 0's primary context is not current: it is made current.
        lib.calls.clear()
        self.assertEqual(d.context(0), 0x5000)
        self.assertEqual(lib.calls[-1], ("cuCtxSetCurrent", 0x5000))
        with self.assertRaisesRegex(CudaError, r"^device 2 does not exist \(this machine has 2 CUDA devices\)$"):
            d.context(2)

    def test_current_context(self):
        def get_current(p):
            out(p).value = 0x5001
            return 0
        self.assertEqual(Driver(FakeLib(cuCtxGetCurrent=get_current)).current_context(), 0x5001)
        self.assertEqual(Driver(FakeLib()).current_context(), 0)  # NULL
        self.assertEqual(Driver(FakeLib(cuCtxGetCurrent=lambda p: 3)).current_context(), 0)
        with self.assertRaisesRegex(CudaError, "^cuCtxGetCurrent failed: CUDA_ERROR_INVALID_VALUE"):
            Driver(FakeLib(cuCtxGetCurrent=lambda p: 1)).current_context()

    def test_context_on_thread_without_one(self):
        def retain(p, dev):
            out(p).value = 0x7000
            return 0

        def count(p):
            out(p).value = 1
            return 0
        lib = FakeLib(cuDevicePrimaryCtxRetain=retain, cuDeviceGetCount=count)  # current stays NULL
        d = Driver(lib)
        self.assertEqual(d.context(0), 0x7000)
        self.assertEqual(lib.calls[-1], ("cuCtxSetCurrent", 0x7000))

    def test_load_module(self):
        seen = {}

        def load(p, image, n, opts, vals):
            seen["image"] = ctypes.string_at(image)
            seen["opts"] = list(opts[:n])
            seen["size"] = vals[1]
            out(p).value = 0xbeef
            return 0
        d = Driver(FakeLib(cuModuleLoadDataEx=load))
        self.assertEqual(d.load_module(b".version 8.0\n.target sm_90a\n"), 0xbeef)
        self.assertEqual(seen["image"], b".version 8.0\n.target sm_90a\n")
        self.assertEqual(seen["opts"], [5, 6])
        self.assertEqual(seen["size"], 16384)

    def test_load_module_error_log(self):
        def load(p, image, n, opts, vals):
            ctypes.memmove(vals[0], b"ptxas fatal: bad thing\x00", 23)
            return 218
        d = Driver(FakeLib(cuModuleLoadDataEx=load))
        with self.assertRaises(CudaError) as cm:
            d.load_module(b"junk")
        self.assertEqual(str(cm.exception), "cuModuleLoadDataEx failed: CUDA_ERROR_INVALID_PTX (218): "
                         "a PTX JIT compilation failed\nptxas fatal: bad thing")
        self.assertEqual(cm.exception.code, 218)

    def test_load_module_ptx_version_hint(self):
        def version(p):
            out(p).value = 12020
            return 0
        d = Driver(FakeLib(cuModuleLoadDataEx=lambda *a: 222, cuDriverGetVersion=version))
        with self.assertRaises(CudaError) as cm:
            d.load_module(b"//\n.version 8.7\n.target sm_90a\n")
        msg = str(cm.exception)
        self.assertIn("CUDA_ERROR_UNSUPPORTED_PTX_VERSION (222)", msg)
        self.assertIn("the PTX is .version 8.7, which this driver (cuDriverGetVersion 12020 (CUDA 12.2)) "
                      "cannot compile", msg)
        self.assertIn("--ptx-version", msg)

    def test_function_and_attributes(self):
        def get(p, mod, name):
            out(p).value = 0xf00 if name == b"k0" else 0
            return 0 if name == b"k0" else 500
        lib = FakeLib(cuModuleGetFunction=get)
        d = Driver(lib)
        self.assertEqual(d.function(0xbeef, "k0"), 0xf00)
        with self.assertRaisesRegex(CudaError, r"^cuModuleGetFunction\(k1\) failed: "):
            d.function(0xbeef, "k1")
        d.set_max_dynamic_shared(0xf00, 131104)
        d.allow_non_portable_cluster(0xf00)
        self.assertEqual(lib.calls[-2:], [("cuFuncSetAttribute", 0xf00, 8, 131104),
                                          ("cuFuncSetAttribute", 0xf00, 14, 1)])

    def test_driver_version(self):
        def version(p):
            out(p).value = 13000
            return 0
        self.assertEqual(Driver(FakeLib(cuDriverGetVersion=version)).driver_version(), 13000)

    def test_launch(self):
        seen = []

        def launch(cfg, f, params, extra):
            seen.append((cfg.gridDimX, cfg.blockDimX, cfg.hStream, f,
                         ctypes.cast(params, ctypes.c_void_p).value, extra))
            return 0
        d = Driver(FakeLib(cuLaunchKernelEx=launch))
        cfg = d.launch_config((32, 32, 1), (128, 1, 1), 131104, 0x77)
        params = (ctypes.c_void_p * 3)()
        d.launch(cfg, 0xf00, params)
        d.launch(cfg, 0xf00, params)
        self.assertEqual(seen, [(32, 128, 0x77, 0xf00, ctypes.addressof(params), None)] * 2)

    def test_memory_calls(self):
        def alloc(p, n, s):
            out(p).value = 0x7e0000000000
            return 0
        lib = FakeLib(cuMemAllocAsync=alloc)
        d = Driver(lib)
        self.assertEqual(d.mem_alloc_async(1024, 0x77), 0x7e0000000000)
        d.memcpy_dtod_async(0x7e0000000000, 0x7f0000000000, 1024, 0x77)
        d.memset_async(0x7e0000000000, b"\x7f", 10, 0x77)
        d.memset_async(0x7e0000000000, bytes.fromhex("003c"), 10, 0x77)
        d.memset_async(0x7e0000000000, bytes.fromhex("0000803f"), 256, 0)
        d.mem_free_async(0x7e0000000000, 0x77)
        self.assertEqual(lib.calls[1:], [
            ("cuMemcpyDtoDAsync_v2", 0x7e0000000000, 0x7f0000000000, 1024, 0x77),
            ("cuMemsetD8Async", 0x7e0000000000, 0x7f, 10, 0x77),
            ("cuMemsetD16Async", 0x7e0000000000, 0x3c00, 10, 0x77),
            ("cuMemsetD32Async", 0x7e0000000000, 0x3f800000, 256, None),
            ("cuMemFreeAsync", 0x7e0000000000, 0x77)])
        # 8-byte elements: the low and the high words, each a 32-bit fill with an 8-byte pitch
        lib.calls.clear()
        d.memset_async(0x7e0000000000, bytes.fromhex("000000000000f03f"), 5, 0x77)
        self.assertEqual(lib.calls, [
            ("cuMemsetD2D32Async", 0x7e0000000000, 8, 0, 1, 5, 0x77),
            ("cuMemsetD2D32Async", 0x7e0000000004, 8, 0x3ff00000, 1, 5, 0x77)])
        with self.assertRaisesRegex(PlanError, r"memset of 3-byte elements is not supported"):
            d.memset_async(0, b"\0" * 3, 1, 0)
        with self.assertRaisesRegex(PlanError, "cannot allocate -1 bytes"):
            d.mem_alloc_async(-1, 0)

    def test_streams(self):
        status = [0]

        def capturing(s, p):
            out(p).value = status[0]
            return 0
        lib = FakeLib(cuStreamIsCapturing=capturing)
        d = Driver(lib)
        self.assertFalse(d.stream_is_capturing(0x77))
        status[0] = 1
        self.assertTrue(d.stream_is_capturing(0x77))
        d.stream_synchronize(0x77)
        d.ctx_synchronize()
        self.assertEqual(lib.names()[-2:], ["cuStreamSynchronize", "cuCtxSynchronize"])

    def test_encode_tiled(self):
        seen = {}

        def encode(dst, dt, rank, addr, dims, strides, box, es, il, sw, l2, oob):
            seen.update(dst=dst, dt=dt, rank=rank, addr=addr, dims=list(dims[:rank]),
                        strides=list(strides[:rank - 1]), box=list(box[:rank]),
                        es=list(es[:rank]), modes=(il, sw, l2, oob))
            ctypes.memmove(dst, b"\x01" * 128, 128)
            return 0
        d = Driver(FakeLib(cuTensorMapEncodeTiled=encode))
        s = TensorMapStorage(2)
        d.encode_tiled(s.addresses[1], **good())
        self.assertEqual(seen, dict(dst=s.addresses[1], dt=6, rank=2, addr=0x7f0000000000,
                                    dims=[1024, 512], strides=[2048], box=[64, 128],
                                    es=[1, 1], modes=(0, 3, 0, 0)))
        self.assertEqual(s.bytes(1), b"\x01" * 128)
        self.assertEqual(s.bytes(0), b"\x00" * 128)

    def test_encode_tiled_errors(self):
        d = Driver(FakeLib(cuTensorMapEncodeTiled=lambda *a: 1))
        s = TensorMapStorage()
        with self.assertRaises(CudaError) as cm:
            d.encode_tiled(s.address, **good())
        self.assertEqual(str(cm.exception), "cuTensorMapEncodeTiled failed: CUDA_ERROR_INVALID_VALUE (1): "
                         "invalid argument (float16, dims [1024 512], strides [2048], box [64 128], swizzle 3)")
        with self.assertRaisesRegex(PlanError, "box size of dimension 1 is 0"):
            d.encode_tiled(s.address, **good(box_dim=[64, 0]))
        with self.assertRaisesRegex(PlanError, "destination 0x[0-9a-f]+ is not 128-byte aligned"):
            d.encode_tiled(s.address + 64, **good())


# A libcuda stand-in in C, for the ctypes conversions the Python fake
# cannot show: each symbol has cuda.h's C signature and records the
# arguments it received (as the C side sees them) in last[].
FAKE_LIBCUDA_C = r"""
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef int CUresult;
typedef struct CUlaunchAttribute_st {
    int id;
    char pad[8 - sizeof(int)];
    union { char pad[64]; struct { unsigned x, y, z; } clusterDim; void *ptr; } value;
} CUlaunchAttribute;
typedef struct CUlaunchConfig_st {
    unsigned gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes;
    void *hStream;
    CUlaunchAttribute *attrs;
    unsigned numAttrs;
} CUlaunchConfig;

uint64_t last[16];
int next_result;
const uint64_t layout[5] = {sizeof(CUlaunchConfig), sizeof(CUlaunchAttribute),
    offsetof(CUlaunchConfig, hStream), offsetof(CUlaunchConfig, attrs),
    offsetof(CUlaunchConfig, numAttrs)};
static void *current;

static CUresult ret(void) { int r = next_result; next_result = 0; return r; }
CUresult cuInit(unsigned f) { last[0] = f; return ret(); }
CUresult cuDriverGetVersion(int *v) { *v = 12020; return ret(); }
CUresult cuDeviceGetCount(int *n) { *n = 2; return ret(); }
CUresult cuDeviceGet(int *d, int i) { *d = i + 100; return ret(); }
CUresult cuDevicePrimaryCtxRetain(void **c, int d) {
    *c = (void *)(uintptr_t)(0x7f5500000000ull + d); return ret(); }
CUresult cuCtxGetCurrent(void **c) { *c = current; return ret(); }
CUresult cuCtxSetCurrent(void *c) { current = c; return ret(); }
CUresult cuCtxSynchronize(void) { return ret(); }
CUresult cuModuleLoadDataEx(void **m, const void *image, unsigned n, int *opts, void **vals) {
    last[0] = strlen(image); last[1] = n; last[2] = opts[0]; last[3] = opts[1];
    last[4] = (uintptr_t)vals[1];
    if (next_result) strncpy((char *)vals[0], "ptxas: an error", (size_t)(uintptr_t)vals[1]);
    *m = (void *)(uintptr_t)0x7f6600000000ull; return ret(); }
CUresult cuModuleGetFunction(void **f, void *m, const char *name) {
    last[0] = (uintptr_t)m; last[1] = strlen(name);
    *f = (void *)(uintptr_t)0x7f7700000000ull; return ret(); }
CUresult cuFuncSetAttribute(void *f, int a, int v) {
    last[0] = (uintptr_t)f; last[1] = a; last[2] = v; return ret(); }
CUresult cuTensorMapEncodeTiled(void *map, unsigned dt, unsigned rank, void *addr,
        const uint64_t *dims, const uint64_t *strides, const unsigned *box,
        const unsigned *es, unsigned il, unsigned sw, unsigned l2, unsigned oob) {
    uint64_t *q = map;
    q[0] = (uintptr_t)addr; q[1] = dims[0]; q[2] = dims[rank - 1];
    q[3] = rank > 1 ? strides[rank - 2] : 0; q[4] = box[0]; q[5] = box[rank - 1];
    q[6] = es[rank - 1];
    q[7] = dt | (uint64_t)rank << 8 | (uint64_t)il << 16 | (uint64_t)sw << 24
        | (uint64_t)l2 << 32 | (uint64_t)oob << 40;
    return ret(); }
CUresult cuLaunchKernelEx(const CUlaunchConfig *c, void *f, void **params, void **extra) {
    last[0] = c->gridDimX; last[1] = c->gridDimY; last[2] = c->gridDimZ;
    last[3] = c->blockDimX; last[4] = c->sharedMemBytes; last[5] = (uintptr_t)c->hStream;
    last[6] = c->numAttrs; last[7] = c->numAttrs ? (uint64_t)c->attrs[0].id : 99;
    last[8] = c->numAttrs ? c->attrs[0].value.clusterDim.x : 0;
    last[9] = c->numAttrs ? c->attrs[0].value.clusterDim.z : 0;
    last[10] = (uintptr_t)f; last[11] = params ? *(uint64_t *)params[1] : 0;
    last[12] = (uintptr_t)extra; return ret(); }
CUresult cuMemAllocAsync(uint64_t *p, size_t n, void *s) {
    *p = 0x7e0000000000ull; last[0] = n; last[1] = (uintptr_t)s; return ret(); }
CUresult cuMemFreeAsync(uint64_t p, void *s) { last[0] = p; last[1] = (uintptr_t)s; return ret(); }
CUresult cuMemcpyDtoDAsync_v2(uint64_t d, uint64_t s, size_t n, void *st) {
    last[0] = d; last[1] = s; last[2] = n; last[3] = (uintptr_t)st; return ret(); }
CUresult cuMemsetD8Async(uint64_t d, unsigned char v, size_t n, void *s) {
    last[0] = d; last[1] = v; last[2] = n; last[3] = (uintptr_t)s; return ret(); }
CUresult cuMemsetD16Async(uint64_t d, unsigned short v, size_t n, void *s) {
    last[0] = d; last[1] = v; last[2] = n; last[3] = (uintptr_t)s; return ret(); }
CUresult cuMemsetD32Async(uint64_t d, unsigned v, size_t n, void *s) {
    last[0] = d; last[1] = v; last[2] = n; last[3] = (uintptr_t)s; return ret(); }
CUresult cuStreamIsCapturing(void *s, int *st) { last[0] = (uintptr_t)s; *st = 1; return ret(); }
CUresult cuStreamSynchronize(void *s) { last[0] = (uintptr_t)s; return ret(); }
CUresult cuGetErrorName(int r, const char **s) {
    if (r != 1) return 1; *s = "CUDA_ERROR_INVALID_VALUE"; return 0; }
CUresult cuGetErrorString(int r, const char **s) {
    if (r != 1) return 1; *s = "invalid argument"; return 0; }
"""


@unittest.skipUnless(shutil.which("cc"), "no C compiler to build the fake libcuda")
class RealCTypesTest(unittest.TestCase):
    """The driver against a compiled C stand-in, loaded through
    TMAC_LIBCUDA: real ctypes argument conversion, 64-bit values intact,
    and the structs as a C compiler lays them out."""

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="tmac-fakecuda-")
        src = os.path.join(cls.dir, "fake.c")
        cls.path = os.path.join(cls.dir, "libcuda.so.1")
        with open(src, "w") as f:
            f.write(FAKE_LIBCUDA_C)
        subprocess.run(["cc", "-shared", "-fPIC", "-O1", "-o", cls.path, src], check=True,
                       capture_output=True)
        with mock.patch.dict(os.environ, {"TMAC_LIBCUDA": cls.path}):
            cls.drv = Driver()
            cls.drv.init()  # loads the library named by TMAC_LIBCUDA
        cls.lib = cls.drv._lib
        cls.last = (ctypes.c_uint64 * 16).in_dll(cls.lib, "last")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def fail_next(self, code):
        ctypes.c_int.in_dll(self.lib, "next_result").value = code

    def test_layout_matches_c(self):
        layout = list((ctypes.c_uint64 * 5).in_dll(self.lib, "layout"))
        self.assertEqual(layout, [ctypes.sizeof(LaunchConfig), ctypes.sizeof(LaunchAttribute),
                                  LaunchConfig.hStream.offset, LaunchConfig.attrs.offset,
                                  LaunchConfig.numAttrs.offset])

    def test_context_and_module(self):
        d = self.drv
        self.assertEqual(d.context(1), 0x7f5500000065)  # primary of CUdevice 101
        self.assertEqual(d.current_context(), 0x7f5500000065)
        self.assertEqual(d.driver_version(), 12020)
        self.assertEqual(d.load_module(b".version 8.0\n"), 0x7f6600000000)
        self.assertEqual(list(self.last[:5]), [13, 2, 5, 6, 16384])
        d.load_module(".version 8.0\n.target sm_90a\n")
        self.assertEqual(self.last[0], 28)
        self.fail_next(1)
        with self.assertRaisesRegex(CudaError, r"^cuModuleLoadDataEx failed: CUDA_ERROR_INVALID_VALUE "
                                               r"\(1\): invalid argument\nptxas: an error$"):
            d.load_module(b"x")
        self.assertEqual(d.function(0x7f6600000000, "kernel_0"), 0x7f7700000000)
        self.assertEqual(list(self.last[:2]), [0x7f6600000000, 8])
        d.set_max_dynamic_shared(0x7f7700000000, 232448)
        self.assertEqual(list(self.last[:3]), [0x7f7700000000, 8, 232448])

    def test_launch(self):
        d = self.drv
        cfg = d.launch_config((4000000000, 2, 3), (128, 1, 1), 131104, 0x7fab00001230, cluster=(2, 1, 4))
        value = ctypes.c_uint64(0x7f0000000010)
        params = (ctypes.c_void_p * 2)(0, ctypes.addressof(value))
        d.launch(cfg, 0x7f7700000000, params)
        self.assertEqual(list(self.last[:13]), [4000000000, 2, 3, 128, 131104, 0x7fab00001230, 1, 4, 2, 4,
                                                0x7f7700000000, 0x7f0000000010, 0])
        d.launch(d.launch_config((1, 1, 1), (32, 1, 1), 0, 0), 0x7f7700000000, params)
        self.assertEqual(list(self.last[4:8]), [0, 0, 0, 99])
        self.fail_next(1)
        with self.assertRaisesRegex(CudaError, "^cuLaunchKernelEx failed: CUDA_ERROR_INVALID_VALUE"):
            d.launch(cfg, 0x7f7700000000, params)
        # The hot path's handle without argtypes, given ctypes objects only
        # (as tmac._launch prepares them): the same 64-bit values arrive.
        raw = d.unchecked("cuLaunchKernelEx")
        self.assertIsNone(raw.argtypes)
        self.assertEqual(raw(ctypes.byref(cfg), ctypes.c_void_p(0x7f7700000000), params, None), 0)
        self.assertEqual(list(self.last[:13]), [4000000000, 2, 3, 128, 131104, 0x7fab00001230, 1, 4, 2, 4,
                                                0x7f7700000000, 0x7f0000000010, 0])

    def test_tensor_map(self):
        s = TensorMapStorage()
        self.drv.encode_tiled(s.address, **good(global_address=0x7fff00000000 + 4096))
        q = list((ctypes.c_uint64 * 8).from_buffer_copy(s.bytes()))
        self.assertEqual(q, [0x7fff00001000, 1024, 512, 2048, 64, 128, 1,
                             6 | 2 << 8 | 0 << 16 | 3 << 24])
        self.drv.encode_tiled(s.address, **good(rank=1, global_dim=[1 << 32], global_strides=[],
                                                box_dim=[8], swizzle=0, oob_fill=1))
        q = list((ctypes.c_uint64 * 8).from_buffer_copy(s.bytes()))
        self.assertEqual(q[1:3] + q[7:8], [1 << 32, 1 << 32, 6 | 1 << 8 | 1 << 40])

    def test_memory(self):
        d = self.drv
        big = (1 << 40) + 3
        self.assertEqual(d.mem_alloc_async(big, 0x7fab00001230), 0x7e0000000000)
        self.assertEqual(list(self.last[:2]), [big, 0x7fab00001230])
        d.memcpy_dtod_async(0x7e0000000000, 0x7f0000000000, big, 0x7fab00001230)
        self.assertEqual(list(self.last[:4]), [0x7e0000000000, 0x7f0000000000, big, 0x7fab00001230])
        d.memset_async(0x7e0000000010, b"\xff", 7, 0)
        self.assertEqual(list(self.last[:4]), [0x7e0000000010, 0xff, 7, 0])
        d.memset_async(0x7e0000000010, b"\x00\x3c", 7, 0)
        self.assertEqual(self.last[1], 0x3c00)
        d.memset_async(0x7e0000000010, b"\x00\x00\x80\xbf", 7, 0)
        self.assertEqual(self.last[1], 0xbf800000)
        d.mem_free_async(0x7e0000000000, 0x7fab00001230)
        self.assertEqual(list(self.last[:2]), [0x7e0000000000, 0x7fab00001230])
        self.assertTrue(d.stream_is_capturing(0x7fab00001230))
        d.stream_synchronize(0x7fab00001230)
        self.assertEqual(self.last[0], 0x7fab00001230)
        d.ctx_synchronize()


def good(**over):
    """A valid 2-D f16 map (tensormap_test.go's good()): a 512x1024
    row-major matrix, 128x64 box, 128-byte swizzle."""
    a = dict(data_type=6, rank=2, global_address=0x7f0000000000, global_dim=[1024, 512],
             global_strides=[1024 * 2], box_dim=[64, 128], element_strides=None,
             interleave=0, swizzle=3, l2_promotion=0, oob_fill=0)
    a.update(over)
    return a


class ValidateTiledTest(unittest.TestCase):
    ACCEPTS = {
        "as is": {},
        "rank 1": dict(rank=1, global_dim=[500], global_strides=[], box_dim=[256], swizzle=0),
        "rank 5": dict(rank=5, global_dim=[8, 2, 2, 2, 2], global_strides=[16, 32, 64, 128],
                       box_dim=[8, 1, 2, 1, 2]),
        "32B swizzle": dict(box_dim=[16, 128], swizzle=1),
        "64B swizzle": dict(box_dim=[32, 128], swizzle=2),
        "narrow 128B": dict(box_dim=[8, 128]),
        "box 256": dict(box_dim=[64, 256]),
        "no swizzle wide": dict(box_dim=[256, 128], swizzle=0),
        "element strides": dict(element_strides=[1, 8]),
        "NaN fill on float": dict(oob_fill=1),
        "fp8 as uint8": dict(data_type=0, box_dim=[128, 128]),
        "stride just below": dict(global_strides=[(1 << 40) - 16]),
        "L2 256B": dict(l2_promotion=3),
        "interleave rank 3": dict(interleave=2, swizzle=1, rank=3, global_dim=[16, 4, 4],
                                  global_strides=[32, 128], box_dim=[16, 4, 4]),
    }

    # (case, changes to good(), the exact message): every message of
    # ValidateTiled, the Go test's cases first.
    REJECTS = [
        ("rank 0", dict(rank=0, global_dim=[], global_strides=[], box_dim=[]),
         "rank 0 is not supported (1 to 5)"),
        ("rank 6", dict(rank=6, global_dim=[8, 2, 2, 2, 2, 2], global_strides=[16, 32, 64, 128, 256],
                        box_dim=[8, 1, 1, 1, 1, 1]), "rank 6 is not supported (1 to 5)"),
        ("unaligned address", dict(global_address=0x7f0000000008),
         "global address 0x7f0000000008 is not 16-byte aligned"),
        ("stride not multiple of 16", dict(global_strides=[1000]),
         "global stride of dimension 1 is 1000 bytes, not a multiple of 16"),
        ("stride too large", dict(global_strides=[1 << 40]),
         "global stride of dimension 1 is 1099511627776 bytes; it must be below 2^40"),
        ("stride count", dict(global_strides=[2048, 4096]),
         "2 global strides given for rank 2 (want 1: dimension 0 is contiguous)"),
        ("zero dim", dict(global_dim=[1024, 0]), "size of dimension 1 is 0; it must be 1 to 2^32"),
        ("box 0", dict(box_dim=[64, 0]), "box size of dimension 1 is 0; it must be 1 to 256"),
        ("box 257", dict(box_dim=[64, 257]), "box size of dimension 1 is 257; it must be 1 to 256"),
        ("box count", dict(box_dim=[64]), "1 box sizes given for rank 2"),
        ("inner box not multiple of 16 bytes", dict(box_dim=[12, 128]),
         "inner box dimension is 24 bytes (12 x 2); it must be a multiple of 16"),
        ("inner box wider than swizzle", dict(box_dim=[128, 128]),
         "inner box dimension is 256 bytes, more than the 128-byte swizzle span"),
        ("inner box wider than 32B swizzle", dict(box_dim=[32, 128], swizzle=1),
         "inner box dimension is 64 bytes, more than the 32-byte swizzle span"),
        ("element stride 0", dict(element_strides=[0, 1]),
         "element stride of dimension 0 is 0; it must be 1 to 8"),
        ("element stride 9", dict(element_strides=[1, 9]),
         "element stride of dimension 1 is 9; it must be 1 to 8"),
        ("element stride count", dict(element_strides=[1]), "1 element strides given for rank 2"),
        ("NaN fill on integers", dict(data_type=1, oob_fill=1),
         "NaN out-of-bounds fill needs a floating-point data type, not uint16"),
        ("interleave rank 2", dict(interleave=1), "an interleaved layout needs rank 3 to 5, not 2"),
        ("bad swizzle", dict(swizzle=4), "unknown swizzle mode 4"),
        ("bad type", dict(data_type=99), "unsupported data type 99"),
        ("bad oob", dict(oob_fill=2), "unknown out-of-bounds fill mode 2"),
        # The messages the Go test does not reach.
        ("bad interleave", dict(interleave=3), "unknown interleave mode 3"),
        ("bad L2", dict(l2_promotion=4), "unknown L2 promotion mode 4"),
        ("32B interleave address", dict(interleave=2, swizzle=1, rank=3, global_dim=[16, 4, 4],
                                        global_strides=[32, 128], box_dim=[16, 4, 4],
                                        global_address=0x7f0000000010),
         "global address 0x7f0000000010 is not 32-byte aligned"),
        ("32B interleave stride", dict(interleave=2, swizzle=1, rank=3, global_dim=[16, 4, 4],
                                       global_strides=[48, 128], box_dim=[16, 4, 4]),
         "global stride of dimension 1 is 48 bytes, not a multiple of 32"),
        ("32B interleave swizzle", dict(interleave=2, swizzle=0, rank=3, global_dim=[16, 4, 4],
                                        global_strides=[32, 128], box_dim=[16, 4, 4]),
         "32-byte interleave requires 32-byte swizzle"),
        ("dim above 2^32", dict(global_dim=[(1 << 32) + 1, 512]),
         "size of dimension 0 is 4294967297; it must be 1 to 2^32"),
        # Python-only: values Go's unsigned types cannot hold, and an
        # explicit rank that disagrees with the sizes.
        ("negative dim", dict(global_dim=[1024, -1]), "size of dimension 1 is -1; it must be 1 to 2^32"),
        ("negative stride", dict(global_strides=[-2048]),
         "global stride of dimension 1 is -2048 bytes; it must not be negative"),
        ("negative address", dict(global_address=-16), "global address -16 is negative"),
        ("dims count", dict(global_dim=[1024]), "1 global sizes given for rank 2"),
    ]

    def test_accepts(self):
        for name, over in self.ACCEPTS.items():
            with self.subTest(name):
                validate_tiled(**good(**over))

    def test_rejects(self):
        for name, over, want in self.REJECTS:
            with self.subTest(name):
                with self.assertRaises(PlanError) as cm:
                    validate_tiled(**good(**over))
                self.assertEqual(str(cm.exception), "tensor map: " + want)

    def test_data_type_names(self):
        self.assertEqual(_driver.data_type_name(9), "bfloat16")
        self.assertEqual(_driver.data_type_name(42), "CUtensorMapDataType(42)")


if __name__ == "__main__":
    unittest.main()
