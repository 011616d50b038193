"""Tests of tmac._dlpack without a GPU: stand-in DLPack producers whose
__dlpack__ returns real capsules (PyCapsule_New over ctypes
DLManagedTensor / DLManagedTensorVersioned structs), a torch.Tensor
look-alike for the fast path, and numpy's CPU DLPack when numpy is
installed."""

import ctypes
import re
import sys
import types
import unittest
from unittest import mock

from tmac import _dlpack
from tmac._dlpack import (DLManagedTensor, DLManagedTensorVersioned, DLPackVersion, DLTensor,
                          describe)
from tmac._errors import ArgumentError

_capsule_new = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p)(
    ("PyCapsule_New", ctypes.pythonapi))

# Capsule names must outlive their capsules: module-level constants.
VERSIONED, LEGACY, USED = b"dltensor_versioned", b"dltensor", b"used_dltensor"

ADDR = 0x7f0000000000


class Producer:
    """A CUDA array exporting DLPack: the struct and its shape/strides
    arrays live as long as the producer; each __dlpack__ call is
    recorded."""

    def __init__(self, shape=(4, 8), strides="row", dtype=(2, 32, 1), device=(2, 0), data=ADDR,
                 byte_offset=0, version=(1, 0), flags=0, reported_device=None, capsule_name=None):
        self.shape = shape
        self.strides = strides
        self.dtype = dtype
        self.device = device
        self.data = data
        self.byte_offset = byte_offset
        self.version = version
        self.flags = flags
        self.reported_device = reported_device or device
        self.capsule_name = capsule_name
        self.calls = []
        self._keep = []

    def __dlpack_device__(self):
        return self.reported_device

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        self.calls.append(dict(stream=stream, max_version=max_version))
        return self._capsule(versioned=max_version is not None and max_version[0] >= 1)

    def _tensor(self, t):
        n = len(self.shape)
        shape = (ctypes.c_int64 * max(n, 1))(*self.shape)
        self._keep.append(shape)
        t.data = self.data
        t.device.device_type, t.device.device_id = self.device
        t.ndim = n
        t.dtype.code, t.dtype.bits, t.dtype.lanes = self.dtype
        t.shape = ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64))
        if self.strides is not None:
            s = _dlpack.compact_strides(self.shape) if self.strides == "row" else self.strides
            arr = (ctypes.c_int64 * max(n, 1))(*s)
            self._keep.append(arr)
            t.strides = ctypes.cast(arr, ctypes.POINTER(ctypes.c_int64))
        t.byte_offset = self.byte_offset

    def _capsule(self, versioned):
        if versioned and self.version[0] != 1:
            m = DLPackVersion(*self.version)  # nothing past the version
            name = VERSIONED
        elif versioned:
            m = DLManagedTensorVersioned()
            m.version.major, m.version.minor = self.version
            m.flags = self.flags
            self._tensor(m.dl_tensor)
            name = VERSIONED
        else:
            m = DLManagedTensor()
            self._tensor(m.dl_tensor)
            name = LEGACY
        self._keep.append(m)
        return _capsule_new(ctypes.addressof(m), self.capsule_name or name, None)


PRODUCER = Producer.__module__ + ".Producer"  # as messages name it


class OldProducer(Producer):
    """A producer from before DLPack 1.0: no max_version keyword."""

    def __dlpack__(self, stream=None):
        self.calls.append(dict(stream=stream))
        return self._capsule(versioned=False)


class AncientProducer(Producer):
    """A producer from before the stream keyword."""

    def __dlpack__(self):
        self.calls.append({})
        return self._capsule(versioned=False)


class LayoutTest(unittest.TestCase):
    def test_sizes_and_offsets(self):
        self.assertEqual(ctypes.sizeof(DLTensor), 48)
        offsets = {f: getattr(DLTensor, f).offset for f, _ in DLTensor._fields_}
        self.assertEqual(offsets, dict(data=0, device=8, ndim=16, dtype=20, shape=24, strides=32,
                                       byte_offset=40))
        self.assertEqual(ctypes.sizeof(DLManagedTensor), 64)
        self.assertEqual(DLManagedTensor.deleter.offset, 56)
        self.assertEqual(ctypes.sizeof(DLManagedTensorVersioned), 80)
        self.assertEqual(DLManagedTensorVersioned.flags.offset, 24)
        self.assertEqual(DLManagedTensorVersioned.dl_tensor.offset, 32)


class DescribeTest(unittest.TestCase):
    def test_versioned(self):
        p = Producer(shape=(512, 1024), dtype=(2, 16, 1), device=(2, 1))
        info = describe(p, stream=0x77)
        self.assertEqual(info.ptr, ADDR)
        self.assertEqual(info.shape, (512, 1024))
        self.assertEqual(info.strides, (1024, 1))
        self.assertEqual(info.dtype, (2, 16))
        self.assertEqual(info.device, (2, 1))
        self.assertFalse(info.read_only)
        self.assertEqual(type(info.keepalive).__name__, "PyCapsule")
        self.assertEqual(p.calls, [dict(stream=0x77, max_version=(1, 0))])
        self.assertIn("float16", repr(info))

    def test_capsule_not_renamed(self):
        # tmac does not take ownership: the capsule keeps its name, so its
        # destructor (the producer's) still releases the tensor.
        info = describe(Producer())
        self.assertEqual(_dlpack._capsule_get_name(info.keepalive), VERSIONED)

    def test_legacy(self):
        p = OldProducer(shape=(3, 5), strides=(10, 2), dtype=(0, 32, 1))
        info = describe(p, stream=0x55)
        self.assertEqual((info.shape, info.strides, info.dtype), ((3, 5), (10, 2), (0, 32)))
        self.assertEqual(p.calls, [dict(stream=0x55)])  # after the max_version TypeError
        self.assertEqual(_dlpack._capsule_get_name(info.keepalive), LEGACY)

    def test_ancient_producer(self):
        p = AncientProducer()
        self.assertEqual(describe(p).shape, (4, 8))
        self.assertEqual(p.calls, [{}])

    def test_null_strides(self):
        info = describe(Producer(shape=(2, 3, 4), strides=None))
        self.assertEqual(info.strides, (12, 4, 1))
        info = describe(OldProducer(shape=(7,), strides=None))
        self.assertEqual(info.strides, (1,))

    def test_zero_dims(self):
        info = describe(Producer(shape=(), strides=None))
        self.assertEqual((info.shape, info.strides), ((), ()))

    def test_byte_offset(self):
        info = describe(Producer(byte_offset=6144))
        self.assertEqual(info.ptr, ADDR + 6144)
        info = describe(OldProducer(byte_offset=16))
        self.assertEqual(info.ptr, ADDR + 16)

    def test_null_data(self):
        self.assertEqual(describe(Producer(shape=(0,), data=None)).ptr, 0)

    def test_read_only_flag(self):
        self.assertTrue(describe(Producer(flags=1)).read_only)
        self.assertFalse(describe(Producer(flags=2)).read_only)

    def test_managed_memory_accepted(self):
        self.assertEqual(describe(Producer(device=(13, 0))).device, (13, 0))

    def test_stream_zero_is_legacy_default(self):
        # CUstream 0 is the legacy default stream, DLPack's 1 (0 is not
        # allowed for CUDA).
        p = Producer()
        describe(p, stream=0)
        describe(p)
        self.assertEqual([c["stream"] for c in p.calls], [1, None])

    def test_cpu_rejected_before_export(self):
        p = Producer(device=(1, 0))
        with self.assertRaises(ArgumentError) as cm:
            describe(p, what="argument 0 (a)")
        self.assertEqual(str(cm.exception),
                         "argument 0 (a): " + PRODUCER + " is in host memory (DLPack device kDLCPU, id 0); "
                         "tmac kernels take CUDA device memory (kDLCUDA)")
        self.assertEqual(p.calls, [])

    def test_other_devices_rejected(self):
        with self.assertRaisesRegex(ArgumentError, r"is in pinned host memory \(DLPack device kDLCUDAHost, id 0\)"):
            describe(Producer(device=(3, 0)))
        with self.assertRaisesRegex(ArgumentError, r"is in non-CUDA memory \(DLPack device kDLROCM, id 2\)"):
            describe(Producer(device=(10, 2)))
        with self.assertRaisesRegex(ArgumentError, r"\(DLPack device type 99, id 0\)"):
            describe(Producer(device=(99, 0)))

    def test_struct_device_checked(self):
        # __dlpack_device__ said CUDA, the struct says CPU.
        with self.assertRaisesRegex(ArgumentError, "in host memory"):
            describe(Producer(device=(1, 0), reported_device=(2, 0)))

    def test_lanes_rejected(self):
        with self.assertRaises(ArgumentError) as cm:
            describe(Producer(dtype=(2, 32, 4)), what="argument 2 (c)")
        self.assertEqual(str(cm.exception), "argument 2 (c): " + PRODUCER + " has vector elements "
                         "(DLPack dtype code 2, bits 32, lanes 4); tmac takes lanes = 1")

    def test_unknown_dtype_rejected(self):
        with self.assertRaisesRegex(ArgumentError, "^" + re.escape(PRODUCER) + r" has element type "
                                                   r"dlpack\(code=5, bits=64\), which no tmac memref"):
            describe(Producer(dtype=(5, 64, 1)))
        with self.assertRaisesRegex(ArgumentError, r"dlpack\(code=2, bits=8\)"):
            describe(Producer(dtype=(2, 8, 1)))

    def test_major_version_2_rejected(self):
        with self.assertRaises(ArgumentError) as cm:
            describe(Producer(version=(2, 0)))
        self.assertEqual(str(cm.exception), PRODUCER + " exports DLPack 2.0; tmac reads DLPack 1.x")

    def test_no_dlpack(self):
        with self.assertRaises(ArgumentError) as cm:
            describe([1, 2, 3], what="argument 1 (b)")
        self.assertEqual(str(cm.exception), "argument 1 (b): expected a CUDA array (a torch.Tensor or an "
                         "object with __dlpack__), got list")
        self.assertIsInstance(cm.exception, TypeError)
        with self.assertRaisesRegex(ArgumentError, "got fractions.Fraction$"):
            import fractions
            describe(fractions.Fraction(1, 2))

    def test_bad_capsules(self):
        with self.assertRaisesRegex(ArgumentError, r"returned a capsule that was already consumed \(used_dltensor\)"):
            describe(Producer(capsule_name=USED))
        with self.assertRaisesRegex(ArgumentError, r"returned a capsule named 'nope', not 'dltensor_versioned'"):
            describe(Producer(capsule_name=b"nope"))

        class NotCapsule(Producer):
            def __dlpack__(self, **kw):
                return 42
        with self.assertRaisesRegex(ArgumentError, r"__dlpack__\(\) returned a int, not a DLPack capsule"):
            describe(NotCapsule())

    def test_producer_type_error(self):
        class Broken(Producer):
            def __dlpack__(self, **kw):
                raise TypeError("cannot export a strided view")
        with self.assertRaisesRegex(ArgumentError, r"Broken.__dlpack__\(\) failed: cannot export a strided view"):
            describe(Broken())


class Device:
    def __init__(self, type, index):
        self.type, self.index = type, index

    def __str__(self):
        return self.type if self.index is None else "%s:%d" % (self.type, self.index)


class DType:
    def __init__(self, name):
        self.name = name

    def __str__(self):
        return "torch." + self.name


class Tensor:
    """Looks like a torch.Tensor to tmac (class torch.Tensor); the fast
    path must not use DLPack."""

    def __init__(self, ptr, shape, strides, dtype="float16", device=("cuda", 0)):
        self._ptr, self.shape, self._strides = ptr, shape, strides
        self.dtype = DType(dtype)
        self.device = Device(*device)

    def data_ptr(self):
        return self._ptr

    def stride(self):
        return self._strides

    def __dlpack__(self, **kw):
        raise AssertionError("the torch fast path used DLPack")

    def __dlpack_device__(self):
        raise AssertionError("the torch fast path used DLPack")


Tensor.__module__ = "torch"


class TorchTest(unittest.TestCase):
    def test_detection(self):
        self.assertTrue(_dlpack.is_torch_tensor(Tensor(0, (1,), (1,))))
        self.assertFalse(_dlpack.is_torch_tensor(Producer()))

    def test_subclass_detected_through_loaded_torch(self):
        class Parameter(Tensor):
            pass
        Parameter.__module__ = "torch.nn.parameter"
        p = Parameter(ADDR, (2,), (1,))
        fake_torch = types.ModuleType("torch")
        fake_torch.Tensor = Tensor
        with mock.patch.dict(sys.modules, {"torch": fake_torch}):
            self.assertTrue(_dlpack.is_torch_tensor(p))
            self.assertEqual(describe(p).ptr, ADDR)

    def test_fast_path(self):
        t = Tensor(ADDR + 16, (512, 1008), (1024, 1), "bfloat16", ("cuda", 1))
        info = describe(t, stream=0x77)
        self.assertEqual((info.ptr, info.shape, info.strides, info.dtype, info.device),
                         (ADDR + 16, (512, 1008), (1024, 1), (4, 16), (2, 1)))
        self.assertIs(info.keepalive, t)
        self.assertEqual(type(info.shape), tuple)

    def test_dtypes(self):
        for name, want in [("float32", (2, 32)), ("float8_e4m3fn", (10, 8)), ("bool", (6, 8)),
                           ("int64", (0, 64))]:
            self.assertEqual(describe(Tensor(ADDR, (1,), (1,), name)).dtype, want)
        with self.assertRaises(ArgumentError) as cm:
            describe(Tensor(ADDR, (1,), (1,), "complex64"), what="argument 0 (x)")
        self.assertEqual(str(cm.exception), "argument 0 (x): a torch tensor of dtype torch.complex64, "
                         "which no tmac memref element type takes")

    def test_cpu_tensor_rejected(self):
        with self.assertRaises(ArgumentError) as cm:
            describe(Tensor(ADDR, (1,), (1,), device=("cpu", None)), what="argument 1 (b)")
        self.assertEqual(str(cm.exception), "argument 1 (b): a torch tensor on cpu; tmac kernels take CUDA tensors")
        with self.assertRaisesRegex(ArgumentError, "a torch tensor on meta; "):
            describe(Tensor(ADDR, (1,), (1,), device=("meta", None)))

    def test_torch_stream_raw(self):
        fake = types.ModuleType("torch")
        fake._C = types.SimpleNamespace(_cuda_getCurrentRawStream=lambda i: 0x1000 + i)
        fake.cuda = types.SimpleNamespace(current_stream=lambda i: self.fail("slow path used"))
        with mock.patch.dict(sys.modules, {"torch": fake}), mock.patch.object(_dlpack, "_stream_reader", None):
            self.assertEqual(_dlpack.torch_stream(1), 0x1001)
            self.assertEqual(_dlpack.torch_stream(0), 0x1000)

    def test_torch_stream_fallback(self):
        fake = types.ModuleType("torch")
        fake._C = types.SimpleNamespace()
        streams = {0: 0x2000}
        fake.cuda = types.SimpleNamespace(
            current_stream=lambda i: types.SimpleNamespace(cuda_stream=streams[i]))
        with mock.patch.dict(sys.modules, {"torch": fake}), mock.patch.object(_dlpack, "_stream_reader", None):
            self.assertEqual(_dlpack.torch_stream(0), 0x2000)
            streams[0] = 0x3000  # read every call, never cached
            self.assertEqual(_dlpack.torch_stream(0), 0x3000)


class NumpyTest(unittest.TestCase):
    def test_numpy_cpu_rejected(self):
        try:
            import numpy
        except ImportError:
            self.skipTest("numpy is not installed")
        a = numpy.zeros((2, 3), dtype=numpy.float32)
        if not hasattr(a, "__dlpack__"):
            self.skipTest("numpy %s has no DLPack" % numpy.__version__)
        with self.assertRaisesRegex(ArgumentError, r"^argument 0 \(a\): numpy.ndarray is in host memory "
                                                   r"\(DLPack device kDLCPU, id 0\)"):
            describe(a, what="argument 0 (a)")


if __name__ == "__main__":
    unittest.main()
