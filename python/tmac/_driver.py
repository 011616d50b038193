"""The CUDA driver API through ctypes (design 4.1).

libcuda.so.1 is opened by soname on first use ($TMAC_LIBCUDA, a full
path, overrides it); never a bare libcuda.so, which on toolkit machines
can be the stub that fails every call with CUDA_ERROR_STUB_LIBRARY.

Every function is bound with argtypes and restype c_int: without
argtypes ctypes passes a Python int as a 32-bit C int, which truncates
pointers (design 4.4). Failed calls raise CudaError with the message of
Go's cuda.Error: "CALL failed: NAME (code): description".

Driver takes the library as a constructor argument so that tests can
pass a fake: an object whose attributes are callables that return
CUresult codes and fill their out-parameters (a ctypes.byref(x) argument
arrives as is; its _obj is x).
"""

import ctypes
import os
import re
import struct
import threading

from ._errors import CudaError, PlanError

_P = ctypes.POINTER
_u32, _u64, _int = ctypes.c_uint32, ctypes.c_uint64, ctypes.c_int
_vp, _size = ctypes.c_void_p, ctypes.c_size_t

# Enum values of cuda.h 13.0 (design 4.1).
JIT_ERROR_LOG_BUFFER = 5
JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6
FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED = 14
LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION = 4
STREAM_CAPTURE_STATUS_NONE = 0
ERROR_UNSUPPORTED_PTX_VERSION = 222
ERROR_NOT_INITIALIZED = 3

TENSOR_MAP_SIZE = 128  # sizeof(CUtensorMap); alignas(128) in CUDA 13.0
_JIT_LOG_BYTES = 16384


class ClusterDim(ctypes.Structure):
    _fields_ = [("x", ctypes.c_uint), ("y", ctypes.c_uint), ("z", ctypes.c_uint)]


class LaunchAttributeValue(ctypes.Union):
    # The C union has pointer members, so it is 8-byte aligned; _align
    # stands in for them.
    _fields_ = [("pad", ctypes.c_char * 64), ("clusterDim", ClusterDim),
                ("_align", _u64)]


class LaunchAttribute(ctypes.Structure):
    """CUlaunchAttribute: id, 4 bytes of padding, 64-byte value (72 bytes)."""
    _fields_ = [("id", ctypes.c_uint), ("_pad", ctypes.c_uint),
                ("value", LaunchAttributeValue)]


class LaunchConfig(ctypes.Structure):
    """CUlaunchConfig (56 bytes: hStream at 32, attrs at 40, numAttrs at 48)."""
    _fields_ = [("gridDimX", ctypes.c_uint), ("gridDimY", ctypes.c_uint),
                ("gridDimZ", ctypes.c_uint), ("blockDimX", ctypes.c_uint),
                ("blockDimY", ctypes.c_uint), ("blockDimZ", ctypes.c_uint),
                ("sharedMemBytes", ctypes.c_uint), ("hStream", _vp),
                ("attrs", _P(LaunchAttribute)), ("numAttrs", ctypes.c_uint)]


# Every driver symbol tmac calls, with its parameter types. Handles
# (CUcontext, CUmodule, CUfunction, CUstream) are pointers; CUdevice is an
# int; CUdeviceptr is 64 bits; enums are 32-bit.
PROTOTYPES = {
    "cuInit": (ctypes.c_uint,),
    "cuDriverGetVersion": (_P(_int),),
    "cuDeviceGetCount": (_P(_int),),
    "cuDeviceGet": (_P(_int), _int),
    "cuDevicePrimaryCtxRetain": (_P(_vp), _int),
    "cuCtxGetCurrent": (_P(_vp),),
    "cuCtxSetCurrent": (_vp,),
    "cuCtxSynchronize": (),
    "cuModuleLoadDataEx": (_P(_vp), _vp, ctypes.c_uint, _P(_int), _P(_vp)),
    "cuModuleGetFunction": (_P(_vp), _vp, ctypes.c_char_p),
    "cuFuncSetAttribute": (_vp, _int, _int),
    "cuTensorMapEncodeTiled": (_vp, _u32, _u32, _vp, _P(_u64), _P(_u64),
                               _P(_u32), _P(_u32), _u32, _u32, _u32, _u32),
    "cuLaunchKernelEx": (_P(LaunchConfig), _vp, _vp, _vp),
    "cuMemAllocAsync": (_P(_u64), _size, _vp),
    "cuMemFreeAsync": (_u64, _vp),
    "cuMemcpyDtoDAsync_v2": (_u64, _u64, _size, _vp),
    "cuMemsetD8Async": (_u64, ctypes.c_ubyte, _size, _vp),
    "cuMemsetD16Async": (_u64, ctypes.c_ushort, _size, _vp),
    "cuMemsetD32Async": (_u64, ctypes.c_uint, _size, _vp),
    "cuMemsetD2D32Async": (_u64, _size, ctypes.c_uint, _size, _size, _vp),
    "cuStreamIsCapturing": (_vp, _P(_int)),
    "cuStreamSynchronize": (_vp,),
    "cuGetErrorName": (_int, _P(ctypes.c_char_p)),
    "cuGetErrorString": (_int, _P(ctypes.c_char_p)),
}

# Symbols that came with CUDA 11.2 or 12; a driver without them is too
# old for sm_90a anyway, and the message says so.
_LATE = {"cuTensorMapEncodeTiled", "cuLaunchKernelEx", "cuMemAllocAsync",
         "cuMemFreeAsync"}


def load_library():
    """Open the CUDA driver: $TMAC_LIBCUDA, else libcuda.so.1."""
    path = os.environ.get("TMAC_LIBCUDA") or "libcuda.so.1"
    try:
        return ctypes.CDLL(path)
    except OSError as e:
        raise CudaError("cannot load the CUDA driver (%s): %s; is an NVIDIA "
                        "driver installed? (set TMAC_LIBCUDA to its path)"
                        % (path, e)) from None


def _check_u32(what, v):
    if not 0 <= v < 1 << 32:
        raise PlanError("%s is %d; it must be 0 to 2^32-1" % (what, v))
    return v


class Driver:
    """The bound driver API. One instance per process (driver()); pass
    lib (a loaded library or a fake) to bypass loading libcuda."""

    def __init__(self, lib=None):
        self._lib = lib
        self._fns = {}
        self._lock = threading.RLock()
        self._initialized = False
        self._primary = {}  # device index -> primary context handle
        # Replaced by the bound function on the first launch (hot path:
        # one attribute lookup, no dict).
        self._launch_ex = self._bind_launch_ex

    # --- binding and errors ---

    def fn(self, name):
        """The bound driver function name (argtypes from PROTOTYPES,
        restype c_int)."""
        f = self._fns.get(name)
        if f is not None:
            return f
        with self._lock:
            if self._lib is None:
                self._lib = load_library()
            try:
                f = getattr(self._lib, name)
            except AttributeError:
                why = " (CUDA 12 or newer is needed)" if name in _LATE else ""
                raise CudaError("the CUDA driver lacks %s%s" % (name, why)) from None
            f.argtypes = PROTOTYPES[name]
            f.restype = ctypes.c_int
            self._fns[name] = f
        return f

    def unchecked(self, name):
        """A second handle on driver function name with restype c_int but
        no argtypes, for the launch hot path: ctypes then converts
        nothing, so every argument must already be a ctypes object
        (byref, c_void_p, an array) or None — never a Python int, which
        would be passed as a 32-bit C int. Falls back to fn(name) where the
        library cannot hand out a second handle (test fakes)."""
        self.fn(name)  # loads the library, reports a missing symbol
        try:
            f = self._lib[name]
        except (TypeError, KeyError, AttributeError):
            return self.fn(name)
        f.restype = ctypes.c_int
        return f

    def _call(self, name, *args):
        r = self.fn(name)(*args)
        if r:
            raise self.error(name, r)

    def error(self, call, code):
        """CudaError for a failed call, named and described by the driver
        ("CALL failed: NAME (code): description")."""
        name, desc = "CUDA_ERROR_UNKNOWN", "unknown error"
        s = ctypes.c_char_p()
        try:
            if self.fn("cuGetErrorName")(code, ctypes.byref(s)) == 0 and s.value:
                name = s.value.decode("utf-8", "replace")
            s = ctypes.c_char_p()
            if self.fn("cuGetErrorString")(code, ctypes.byref(s)) == 0 and s.value:
                desc = s.value.decode("utf-8", "replace")
        except CudaError:
            pass
        return CudaError("%s failed: %s (%d): %s" % (call, name, code, desc), code, name)

    # --- initialization and contexts ---

    def init(self):
        """cuInit(0), once per process."""
        if self._initialized:
            return
        with self._lock:
            if not self._initialized:
                self._call("cuInit", 0)
                self._initialized = True

    def driver_version(self):
        """cuDriverGetVersion: 13000 for CUDA 13.0."""
        v = _int()
        self._call("cuDriverGetVersion", ctypes.byref(v))
        return v.value

    def device_count(self):
        self.init()
        n = _int()
        self._call("cuDeviceGetCount", ctypes.byref(n))
        return n.value

    def context(self, device_index):
        """Make the primary context of device device_index current on the
        calling thread and return its handle. A context already current
        (torch makes the primary one current) is kept when it is the
        primary one; a new thread may have none, so this runs per thread."""
        primary = self._primary.get(device_index)
        if primary is None:
            primary = self._retain_primary(device_index)
        cur = _vp()
        self._call("cuCtxGetCurrent", ctypes.byref(cur))
        if cur.value != primary:
            self._call("cuCtxSetCurrent", primary)
        return primary

    def _retain_primary(self, device_index):
        self.init()
        with self._lock:
            primary = self._primary.get(device_index)
            if primary is not None:
                return primary
            n = self.device_count()
            if not 0 <= device_index < n:
                raise CudaError("device %d does not exist (this machine has %d CUDA devices)"
                                % (device_index, n))
            dev = _int()
            self._call("cuDeviceGet", ctypes.byref(dev), device_index)
            ctx = _vp()
            self._call("cuDevicePrimaryCtxRetain", ctypes.byref(ctx), dev.value)
            self._primary[device_index] = ctx.value
            return ctx.value

    def current_context(self):
        """The calling thread's current context handle; 0 when there is
        none or the driver is not initialized yet (nobody called cuInit)."""
        cur = _vp()
        r = self.fn("cuCtxGetCurrent")(ctypes.byref(cur))
        if r == ERROR_NOT_INITIALIZED:
            return 0
        if r:
            raise self.error("cuCtxGetCurrent", r)
        return cur.value or 0

    def ctx_synchronize(self):
        self._call("cuCtxSynchronize")

    # --- modules and functions ---

    def load_module(self, ptx):
        """JIT-compile PTX (bytes or str) into a module in the current
        context; the JIT's error log is part of the error."""
        if isinstance(ptx, str):
            ptx = ptx.encode()
        image = ctypes.create_string_buffer(bytes(ptx))  # NUL-terminated
        log = ctypes.create_string_buffer(_JIT_LOG_BYTES)
        opts = (_int * 2)(JIT_ERROR_LOG_BUFFER, JIT_ERROR_LOG_BUFFER_SIZE_BYTES)
        # Option values are pointer-sized: the log's address, then its size.
        vals = (_vp * 2)(ctypes.addressof(log), _JIT_LOG_BYTES)
        mod = _vp()
        r = self.fn("cuModuleLoadDataEx")(ctypes.byref(mod), image, 2, opts, vals)
        if r:
            err = self.error("cuModuleLoadDataEx", r)
            msg = str(err)
            text = log.value.decode("utf-8", "replace").strip()
            if text:
                msg += "\n" + text
            if r == ERROR_UNSUPPORTED_PTX_VERSION:
                msg += "\n" + self._ptx_version_hint(ptx)
            raise CudaError(msg, err.code, err.name)
        return mod.value

    def _ptx_version_hint(self, ptx):
        m = re.search(rb"^\s*\.version\s+(\d+\.\d+)", bytes(ptx), re.M)
        ptx_ver = m.group(1).decode() if m else "?"
        try:
            v = self.driver_version()
            drv = "%d (CUDA %d.%d)" % (v, v // 1000, v % 1000 // 10)
        except CudaError:
            drv = "unknown"
        return ("the PTX is .version %s, which this driver (cuDriverGetVersion %s) "
                "cannot compile: update the NVIDIA driver or rebuild with a lower "
                "tmac compile --ptx-version" % (ptx_ver, drv))

    def function(self, module, name):
        """The kernel name of module."""
        f = _vp()
        r = self.fn("cuModuleGetFunction")(ctypes.byref(f), module, name.encode())
        if r:
            raise self.error("cuModuleGetFunction(%s)" % name, r)
        return f.value

    def set_max_dynamic_shared(self, func, nbytes):
        """Allow func nbytes of dynamic shared memory (above 48 KB needs it)."""
        self._call("cuFuncSetAttribute", func,
                   FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, nbytes)

    def allow_non_portable_cluster(self, func):
        """Allow func clusters of more than 8 blocks (up to 16 on sm_90)."""
        self._call("cuFuncSetAttribute", func,
                   FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1)

    # --- tensor maps ---

    def encode_tiled(self, dst_address, data_type, rank, global_address,
                     global_dim, global_strides, box_dim, element_strides,
                     interleave, swizzle, l2_promotion, oob_fill):
        """Validate the arguments (validate_tiled) and write the 128-byte
        CUtensorMap at dst_address, which must be 128-byte aligned
        (TensorMapStorage gives such addresses)."""
        validate_tiled(data_type, rank, global_address, global_dim, global_strides,
                       box_dim, element_strides, interleave, swizzle,
                       l2_promotion, oob_fill)
        if dst_address % TENSOR_MAP_SIZE:
            raise PlanError("tensor map: destination %#x is not 128-byte aligned"
                            % dst_address)
        if element_strides is None:
            element_strides = [1] * rank
        dims = (_u64 * rank)(*global_dim)
        # The driver reads rank-1 strides; a spare entry keeps the array
        # non-empty for rank 1.
        strides = (_u64 * rank)(*global_strides)
        box = (_u32 * rank)(*box_dim)
        estrides = (_u32 * rank)(*element_strides)
        r = self.fn("cuTensorMapEncodeTiled")(
            dst_address, data_type, rank, global_address, dims, strides, box,
            estrides, interleave, swizzle, l2_promotion, oob_fill)
        if r:
            err = self.error("cuTensorMapEncodeTiled", r)
            raise CudaError("%s (%s, dims %s, strides %s, box %s, swizzle %d)" % (
                err, _DATA_TYPE_NAMES[data_type], _golist(global_dim),
                _golist(global_strides), _golist(box_dim), swizzle), err.code, err.name)

    # --- launches ---

    def launch_config(self, grid, block, shared_bytes, stream, cluster=None):
        """A CUlaunchConfig for cuLaunchKernelEx; cluster (x, y, z) adds
        the cluster-dimension attribute. The returned structure holds its
        attribute array (._attrs) so it stays alive with it."""
        cfg = LaunchConfig()
        (cfg.gridDimX, cfg.gridDimY, cfg.gridDimZ) = (
            _check_u32("grid size %s" % axis, v) for axis, v in zip("xyz", _dim3("grid", grid)))
        (cfg.blockDimX, cfg.blockDimY, cfg.blockDimZ) = (
            _check_u32("block size %s" % axis, v) for axis, v in zip("xyz", _dim3("block", block)))
        cfg.sharedMemBytes = _check_u32("dynamic shared memory", shared_bytes)
        cfg.hStream = stream or None
        cfg._attrs = None
        if cluster is not None:
            attrs = (LaunchAttribute * 1)()
            attrs[0].id = LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
            c = attrs[0].value.clusterDim
            (c.x, c.y, c.z) = (_check_u32("cluster size %s" % axis, v)
                               for axis, v in zip("xyz", _dim3("cluster", cluster)))
            cfg.attrs = attrs
            cfg.numAttrs = 1
            cfg._attrs = attrs
        return cfg

    def launch(self, config, func, kernel_params):
        """cuLaunchKernelEx(config, func, kernel_params, NULL).
        kernel_params is a ctypes void* array (or its address), one entry
        per kernel parameter pointing at its bytes."""
        r = self._launch_ex(config, func, kernel_params, None)
        if r:
            raise self.error("cuLaunchKernelEx", r)

    def _bind_launch_ex(self, *args):
        self._launch_ex = self.fn("cuLaunchKernelEx")
        return self._launch_ex(*args)

    # --- memory and streams ---

    def mem_alloc_async(self, nbytes, stream):
        """Stream-ordered cuMemAllocAsync; returns the device address."""
        if nbytes < 0:
            raise PlanError("cannot allocate %d bytes" % nbytes)
        p = _u64()
        self._call("cuMemAllocAsync", ctypes.byref(p), nbytes, stream or None)
        return p.value

    def mem_free_async(self, ptr, stream):
        self._call("cuMemFreeAsync", ptr, stream or None)

    def memcpy_dtod_async(self, dst, src, nbytes, stream):
        if nbytes < 0:
            raise PlanError("cannot copy %d bytes" % nbytes)
        self._call("cuMemcpyDtoDAsync_v2", dst, src, nbytes, stream or None)

    def memset_async(self, dst, pattern, count, stream):
        """Fill count elements at dst with pattern (1, 2, 4 or 8 bytes,
        little-endian) via cuMemsetD8/D16/D32Async; 8-byte elements as two
        strided 32-bit fills (cuMemsetD2D32Async with an 8-byte pitch: the
        low words, then the high words)."""
        pattern = bytes(pattern)
        if count < 0:
            raise PlanError("memset of %d elements" % count)
        if len(pattern) == 8:
            if count:
                lo, hi = struct.unpack("<II", pattern)
                self._call("cuMemsetD2D32Async", dst, 8, lo, 1, count, stream or None)
                self._call("cuMemsetD2D32Async", dst + 4, 8, hi, 1, count, stream or None)
            return
        call = {1: "cuMemsetD8Async", 2: "cuMemsetD16Async", 4: "cuMemsetD32Async"}.get(len(pattern))
        if call is None:
            raise PlanError("memset of %d-byte elements is not supported "
                            "(elements of 1, 2, 4 or 8 bytes)" % len(pattern))
        self._call(call, dst, int.from_bytes(pattern, "little"), count, stream or None)

    def stream_is_capturing(self, stream):
        """Whether stream is being captured into a CUDA graph (an
        invalidated capture counts as capturing)."""
        status = _int()
        self._call("cuStreamIsCapturing", stream or None, ctypes.byref(status))
        return status.value != STREAM_CAPTURE_STATUS_NONE

    def stream_synchronize(self, stream):
        self._call("cuStreamSynchronize", stream or None)


def _dim3(what, v):
    v = tuple(v)
    if len(v) != 3:
        raise PlanError("%s has %d dimensions, want 3" % (what, len(v)))
    return v


def _golist(v):
    """A list as Go's %v prints it: [1024 512]."""
    return "[" + " ".join(str(x) for x in v) + "]"


_driver = None
_driver_lock = threading.Lock()


def driver():
    """The process's Driver (libcuda is opened on its first call)."""
    global _driver
    if _driver is None:
        with _driver_lock:
            if _driver is None:
                _driver = Driver()
    return _driver


class TensorMapStorage:
    """count 128-byte-aligned 128-byte slots in one over-allocated ctypes
    buffer (ctypes only guarantees 8-byte alignment). address is slot 0's
    address, addresses every slot's."""

    def __init__(self, count=1):
        if count < 1:
            raise ValueError("TensorMapStorage needs at least one slot, not %d" % count)
        self.buffer = ctypes.create_string_buffer(count * TENSOR_MAP_SIZE + TENSOR_MAP_SIZE)
        base = ctypes.addressof(self.buffer)
        first = base + (-base) % TENSOR_MAP_SIZE
        self.addresses = tuple(first + i * TENSOR_MAP_SIZE for i in range(count))
        self.address = first

    def bytes(self, i=0):
        """The 128 bytes of slot i."""
        return ctypes.string_at(self.addresses[i], TENSOR_MAP_SIZE)


# --- tensor-map validation: runtime/cuda/tensormap.go ValidateTiled ---

_DATA_TYPE_SIZES = {0: 1, 1: 2, 2: 4, 3: 4, 4: 8, 5: 8, 6: 2, 7: 4, 8: 8,
                    9: 2, 10: 4, 11: 4, 12: 4}
_DATA_TYPE_NAMES = {0: "uint8", 1: "uint16", 2: "uint32", 3: "int32", 4: "uint64",
                    5: "int64", 6: "float16", 7: "float32", 8: "float64",
                    9: "bfloat16", 10: "float32_ftz", 11: "tfloat32",
                    12: "tfloat32_ftz"}
_FLOAT_TYPES = {6, 7, 8, 9, 10, 11, 12}
_SWIZZLE_SPAN = {0: 0, 1: 32, 2: 64, 3: 128}
_INTERLEAVE_NONE, _INTERLEAVE_32B, _SWIZZLE_32B, _OOB_NAN = 0, 2, 1, 1


def data_type_name(data_type):
    """The CUtensorMapDataType's name as Go prints it ("float16")."""
    return _DATA_TYPE_NAMES.get(data_type, "CUtensorMapDataType(%d)" % data_type)


def validate_tiled(data_type, rank, global_address, global_dim, global_strides,
                   box_dim, element_strides, interleave, swizzle, l2_promotion,
                   oob_fill):
    """Check cuTensorMapEncodeTiled's documented constraints (the driver
    only says CUDA_ERROR_INVALID_VALUE) and raise PlanError naming the
    broken one, with the messages of Go's cuda.ValidateTiled. Arrays are
    in driver order (innermost first); element_strides None means ones.
    Values Go cannot hold (negative ones) get the same range messages."""
    def fail(fmt, *a):
        raise PlanError("tensor map: " + fmt % a)

    es = _DATA_TYPE_SIZES.get(data_type, 0)
    if es == 0:
        fail("unsupported data type %d", data_type)
    if rank < 1 or rank > 5:
        fail("rank %d is not supported (1 to 5)", rank)
    if not 0 <= interleave <= 2:
        fail("unknown interleave mode %d", interleave)
    if not 0 <= swizzle <= 3:
        fail("unknown swizzle mode %d", swizzle)
    if not 0 <= l2_promotion <= 3:
        fail("unknown L2 promotion mode %d", l2_promotion)
    if not 0 <= oob_fill <= 1:
        fail("unknown out-of-bounds fill mode %d", oob_fill)
    if interleave != _INTERLEAVE_NONE and rank < 3:
        fail("an interleaved layout needs rank 3 to 5, not %d", rank)
    addr_align = 32 if interleave == _INTERLEAVE_32B else 16
    if global_address < 0:
        fail("global address %d is negative", global_address)
    if global_address % addr_align:
        fail("global address %#x is not %d-byte aligned", global_address, addr_align)
    if len(global_dim) != rank:
        fail("%d global sizes given for rank %d", len(global_dim), rank)
    for i, n in enumerate(global_dim):
        if n <= 0 or n > 1 << 32:
            fail("size of dimension %d is %d; it must be 1 to 2^32", i, n)
    if len(global_strides) != rank - 1:
        fail("%d global strides given for rank %d (want %d: dimension 0 is contiguous)",
             len(global_strides), rank, rank - 1)
    stride_align = 32 if interleave == _INTERLEAVE_32B else 16
    for i, s in enumerate(global_strides):
        if s < 0:
            fail("global stride of dimension %d is %d bytes; it must not be negative", i + 1, s)
        if s % stride_align:
            fail("global stride of dimension %d is %d bytes, not a multiple of %d",
                 i + 1, s, stride_align)
        if s >= 1 << 40:
            fail("global stride of dimension %d is %d bytes; it must be below 2^40", i + 1, s)
    if len(box_dim) != rank:
        fail("%d box sizes given for rank %d", len(box_dim), rank)
    for i, b in enumerate(box_dim):
        if b <= 0 or b > 256:
            fail("box size of dimension %d is %d; it must be 1 to 256", i, b)
    inner_bytes = box_dim[0] * es
    if interleave == _INTERLEAVE_NONE:
        if inner_bytes % 16:
            fail("inner box dimension is %d bytes (%d x %d); it must be a multiple of 16",
                 inner_bytes, box_dim[0], es)
        span = _SWIZZLE_SPAN[swizzle]
        if span > 0 and inner_bytes > span:
            fail("inner box dimension is %d bytes, more than the %d-byte swizzle span",
                 inner_bytes, span)
    elif interleave == _INTERLEAVE_32B and swizzle != _SWIZZLE_32B:
        fail("32-byte interleave requires 32-byte swizzle")
    if element_strides is not None:
        if len(element_strides) != rank:
            fail("%d element strides given for rank %d", len(element_strides), rank)
        for i, s in enumerate(element_strides):
            if s <= 0 or s > 8:
                fail("element stride of dimension %d is %d; it must be 1 to 8", i, s)
    if oob_fill == _OOB_NAN and data_type not in _FLOAT_TYPES:
        fail("NaN out-of-bounds fill needs a floating-point data type, not %s",
             data_type_name(data_type))
