"""Arrays in: what tmac needs of a kernel argument (design 3 step 1, 4.2).

describe(x) gives the device address of the first element, shape,
strides (elements), element type and device of a CUDA array:

- torch tensors are read directly (data_ptr(), shape, stride(), dtype,
  device): DLPack costs 3.6 us per tensor, these reads about 1 us, and
  torch is never imported here (a tensor's class says it is one);
- anything else through DLPack: __dlpack_device__() first, so that a
  host array is refused before it exports anything, then
  __dlpack__(max_version=(1, 0), stream=...), read through
  ctypes.pythonapi from a versioned ("dltensor_versioned") or legacy
  ("dltensor") capsule.

tmac reads the DLPack struct and never takes ownership: the capsule is
not renamed, so its own destructor releases the tensor. It is returned
as TensorInfo.keepalive, which the caller holds until the launches that
use the address are queued (a temporary capsule's struct is freed with
it: design 4.2).

Devices: kDLCUDA (2) and kDLCUDAManaged (13) are accepted, managed
memory being addressable by kernels like device memory; pinned host
memory (kDLCUDAHost) and every other device are refused.
"""

import ctypes
import sys

from . import _dtypes
from ._errors import ArgumentError

KDL_CPU, KDL_CUDA, KDL_CUDA_HOST, KDL_CUDA_MANAGED = 1, 2, 3, 13
CUDA_DEVICES = (KDL_CUDA, KDL_CUDA_MANAGED)

# DLDeviceType names (dlpack.h v1.1) for messages.
_DEVICE_NAMES = {
    1: "kDLCPU", 2: "kDLCUDA", 3: "kDLCUDAHost", 4: "kDLOpenCL", 7: "kDLVulkan",
    8: "kDLMetal", 9: "kDLVPI", 10: "kDLROCM", 11: "kDLROCMHost", 12: "kDLExtDev",
    13: "kDLCUDAManaged", 14: "kDLOneAPI", 15: "kDLWebGPU", 16: "kDLHexagon",
    17: "kDLMAIA",
}

# DLManagedTensorVersioned.flags bit 0 (DLPACK_FLAG_BITMASK_READ_ONLY).
FLAG_READ_ONLY = 1

VERSIONED_NAME = b"dltensor_versioned"
LEGACY_NAME = b"dltensor"


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    """48 bytes: data 0, device 8, ndim 16, dtype 20, shape 24, strides
    32, byte_offset 40."""
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLManagedTensor(ctypes.Structure):
    """The legacy struct (capsule "dltensor"), 64 bytes."""
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p)]


class DLManagedTensorVersioned(ctypes.Structure):
    """The versioned struct (capsule "dltensor_versioned"), 80 bytes."""
    _fields_ = [("version", DLPackVersion), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p), ("flags", ctypes.c_uint64),
                ("dl_tensor", DLTensor)]


# Private prototypes over the interpreter's capsule API (setting argtypes
# on ctypes.pythonapi's shared function objects could clash with other
# libraries doing the same).
_capsule_get_name = ctypes.PYFUNCTYPE(ctypes.c_char_p, ctypes.py_object)(
    ("PyCapsule_GetName", ctypes.pythonapi))
_capsule_get_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", ctypes.pythonapi))


class TensorInfo:
    """One array argument: ptr (address of the first element: DLPack data
    + byte_offset, torch data_ptr()), shape and strides (tuples, strides
    in elements), dtype (DLPack (code, bits)), device ((device_type,
    device_id)), read_only (the versioned DLPack flag) and keepalive (the
    capsule or tensor to hold until the launches are queued)."""

    __slots__ = ("ptr", "shape", "strides", "dtype", "device", "keepalive", "read_only")

    def __init__(self, ptr, shape, strides, dtype, device, keepalive, read_only=False):
        self.ptr = ptr
        self.shape = shape
        self.strides = strides
        self.dtype = dtype
        self.device = device
        self.keepalive = keepalive
        self.read_only = read_only

    def __repr__(self):
        return ("TensorInfo(ptr=%#x, shape=%s, strides=%s, dtype=%s, device=%s%s)" % (
            self.ptr, list(self.shape), list(self.strides), _dtypes.name(self.dtype),
            self.device, ", read_only" if self.read_only else ""))


def describe(obj, stream=None, what=None):
    """The TensorInfo of a CUDA array (torch tensor or DLPack producer).

    stream is the CUstream the caller will launch on; a DLPack producer
    orders its pending work before it (0, the legacy default stream, is
    passed as DLPack's 1; None means the legacy default too). what names
    the argument in messages ("argument 1 (b)"). Raises ArgumentError
    for anything that is not a CUDA array tmac can read."""
    if is_torch_tensor(obj):
        return _torch_info(obj, what)
    prefix = what + ": " if what else ""
    if getattr(obj, "__dlpack__", None) is None:
        raise ArgumentError("%sexpected a CUDA array (a torch.Tensor or an object with "
                            "__dlpack__), got %s" % (prefix, _type_name(obj)))
    device_fn = getattr(obj, "__dlpack_device__", None)
    if device_fn is not None:
        dev = device_fn()
        _check_device(int(dev[0]), int(dev[1]), obj, prefix)
    cap = _export(obj, 1 if stream == 0 else stream, prefix)
    if type(cap).__name__ != "PyCapsule":
        raise ArgumentError("%s%s.__dlpack__() returned a %s, not a DLPack capsule"
                            % (prefix, _type_name(obj), _type_name(cap)))
    name = _capsule_get_name(cap)
    read_only = False
    if name == VERSIONED_NAME:
        p = _capsule_get_pointer(cap, name)
        # Nothing past the version may be read for another major version.
        ver = DLPackVersion.from_address(p)
        if ver.major != 1:
            raise ArgumentError("%s%s exports DLPack %d.%d; tmac reads DLPack 1.x"
                                % (prefix, _type_name(obj), ver.major, ver.minor))
        managed = DLManagedTensorVersioned.from_address(p)
        t = managed.dl_tensor
        read_only = bool(managed.flags & FLAG_READ_ONLY)
    elif name == LEGACY_NAME:
        t = DLManagedTensor.from_address(_capsule_get_pointer(cap, name)).dl_tensor
    elif name in (b"used_" + VERSIONED_NAME, b"used_" + LEGACY_NAME):
        raise ArgumentError("%s%s.__dlpack__() returned a capsule that was already consumed (%s)"
                            % (prefix, _type_name(obj), name.decode()))
    else:
        raise ArgumentError("%s%s.__dlpack__() returned a capsule named %r, not %r or %r"
                            % (prefix, _type_name(obj), name and name.decode(),
                               VERSIONED_NAME.decode(), LEGACY_NAME.decode()))
    _check_device(t.device.device_type, t.device.device_id, obj, prefix)
    dt = t.dtype
    if dt.lanes != 1:
        raise ArgumentError("%s%s has vector elements (DLPack dtype code %d, bits %d, lanes %d); "
                            "tmac takes lanes = 1" % (prefix, _type_name(obj), dt.code, dt.bits, dt.lanes))
    dtype = (dt.code, dt.bits)
    if not _dtypes.known(dtype):
        raise ArgumentError("%s%s has element type %s, which no tmac memref element type takes"
                            % (prefix, _type_name(obj), _dtypes.name(dtype)))
    ndim = t.ndim
    if ndim < 0:
        raise ArgumentError("%s%s has ndim %d" % (prefix, _type_name(obj), ndim))
    shape = tuple(t.shape[:ndim]) if ndim else ()
    if any(n < 0 for n in shape):
        raise ArgumentError("%s%s has a negative size: shape %s" % (prefix, _type_name(obj), list(shape)))
    if ndim and t.strides:
        strides = tuple(t.strides[:ndim])
    else:
        strides = compact_strides(shape)
    return TensorInfo((t.data or 0) + t.byte_offset, shape, strides, dtype,
                      (t.device.device_type, t.device.device_id), cap, read_only)


def compact_strides(shape):
    """Row-major strides (elements) of a compact array of this shape:
    what NULL DLPack strides mean."""
    strides = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        strides[i] = strides[i + 1] * shape[i + 1]
    return tuple(strides)


def _export(obj, stream, prefix):
    """obj.__dlpack__, asking for a versioned capsule; producers older
    than DLPack 1.0 reject max_version (TypeError), very old ones stream."""
    try:
        return obj.__dlpack__(max_version=(1, 0), stream=stream)
    except TypeError:
        pass
    try:
        return obj.__dlpack__(stream=stream)
    except TypeError:
        pass
    try:
        return obj.__dlpack__()
    except TypeError as e:
        raise ArgumentError("%s%s.__dlpack__() failed: %s" % (prefix, _type_name(obj), e)) from e


def _check_device(device_type, device_id, obj, prefix):
    if device_type not in CUDA_DEVICES:
        memory = {KDL_CPU: "host", KDL_CUDA_HOST: "pinned host"}.get(device_type, "non-CUDA")
        where = _DEVICE_NAMES.get(device_type, "type %d" % device_type)
        raise ArgumentError("%s%s is in %s memory (DLPack device %s, id %d); tmac kernels "
                            "take CUDA device memory (kDLCUDA)"
                            % (prefix, _type_name(obj), memory, where, device_id))


def _type_name(obj):
    t = type(obj)
    mod = t.__module__
    return t.__qualname__ if mod in (None, "builtins") else "%s.%s" % (mod, t.__qualname__)


# --- torch, without importing it ---

def is_torch_tensor(x):
    """Whether x is a torch.Tensor (or a subclass), known without
    importing torch: a plain tensor by its class, subclasses
    (nn.Parameter) through torch.Tensor when torch is loaded."""
    t = type(x)
    if t.__name__ == "Tensor" and t.__module__ == "torch":
        return True
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(x, getattr(torch, "Tensor", ()))


def _torch_info(x, what):
    dev = x.device
    if dev.type != "cuda":
        raise ArgumentError("%sa torch tensor on %s; tmac kernels take CUDA tensors"
                            % (what + ": " if what else "", dev))
    dtype = _dtypes.TORCH.get(str(x.dtype)[6:])
    if dtype is None:
        raise ArgumentError("%sa torch tensor of dtype %s, which no tmac memref element type takes"
                            % (what + ": " if what else "", x.dtype))
    index = dev.index
    return TensorInfo(x.data_ptr(), tuple(x.shape), tuple(x.stride()), dtype,
                      (KDL_CUDA, 0 if index is None else index), x)


_stream_reader = None


def torch_stream(device_index):
    """torch's current CUDA stream on the device, as a CUstream handle.
    Read every call (never cached: graph capture makes a side stream
    current) through torch._C._cuda_getCurrentRawStream (0.1 us), or
    torch.cuda.current_stream(...).cuda_stream (7 us) where that private
    name is missing."""
    global _stream_reader
    reader = _stream_reader
    if reader is None:
        reader = _stream_reader = _torch_stream_reader()
    return reader(device_index)


def _torch_stream_reader():
    torch = sys.modules.get("torch")
    if torch is None:
        import torch
    raw = getattr(getattr(torch, "_C", None), "_cuda_getCurrentRawStream", None)
    if raw is not None:
        return raw
    return lambda device_index: torch.cuda.current_stream(device_index).cuda_stream
