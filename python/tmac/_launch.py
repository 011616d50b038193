"""Kernel: a bundle's entry function as a Python callable.

A call classifies its arguments, looks the whole argument tuple up in a
cache of prepared launches and, on a hit, only issues the launches: the
key holds everything the argument checks, the plan evaluation and the
tensor-map encoding read (stream; per array pointer, shape, strides and
dtype; scalar values), so a hit needs none of them. A miss checks the
arguments (nothing is launched when they are wrong), evaluates the host
plan (tmac._plan), encodes the tensor maps into the prepared parameter
blocks and fills the launch configurations. The driver copies kernel
parameters when a launch is queued, so a prepared block can be reused
while earlier launches are still running.
"""

import ctypes
import threading

from . import _dlpack, _driver, _plan
from ._errors import ArgumentError, CudaError, PlanError

# Prepared launches kept per kernel (the oldest dropped first),
# so a stream of fresh allocations cannot grow the cache without bound.
CACHE_SIZE = 64

# CUDA device types in DLPack (kDLCUDA; kDLCUDAManaged memory is usable
# by kernels too).
_CUDA_DEVICES = (2, 13)


# torch.Tensor once a torch tensor has been seen (an identity test is
# the cheapest check on the hot path; subclasses go through is_torch_tensor).
_tensor_type = None


def _stream_handle(stream):
    """A CUstream handle from a stream= argument: an int, an object with
    cuda_stream (torch, CuPy) or the __cuda_stream__ protocol."""
    if isinstance(stream, int):
        return stream
    h = getattr(stream, "cuda_stream", None)
    if isinstance(h, int):
        return h
    proto = getattr(stream, "__cuda_stream__", None)
    if proto is not None:
        version, h = proto()
        return int(h)
    raise ArgumentError("stream=: expected an int CUstream handle or a stream object "
                        "(with cuda_stream or __cuda_stream__), got %s" % type(stream).__name__)


class _Module:
    """kernels.ptx loaded into one CUDA context, with the functions'
    attributes as set so far."""

    def __init__(self, drv, ptx, kernels):
        self.handle = drv.load_module(ptx)
        self.functions = {k: drv.function(self.handle, k) for k in kernels}
        self.max_shared = dict.fromkeys(kernels, 0)
        self.non_portable = set()


class _ParamBlock:
    """The kernelParams array of one launch: a void* per parameter,
    pointing at its bytes (tensor maps: at their 128-byte-aligned
    storage)."""

    def __init__(self, values):
        self.pointers = (ctypes.c_void_p * max(len(values), 1))()
        self._buffers = []
        for i, v in enumerate(values):
            if isinstance(v, (bytes, bytearray)):
                b = ctypes.create_string_buffer(bytes(v), max(len(v), 1))
                self._buffers.append(b)
                self.pointers[i] = ctypes.addressof(b)
            else:
                self.pointers[i] = v.address


class _Prepared:
    """Everything one call with a given key launches: actions, each
    (function, arguments, loc) — a driver method that raises, or the raw
    ctypes cuLaunchKernelEx with its arguments converted ahead, which
    returns the CUresult — and the buffers they point into."""

    __slots__ = ("actions", "keep")

    def __init__(self):
        self.actions = []
        self.keep = []


class Kernel:
    """A bundle's host entry, callable on device arrays.

    ``k(*args, stream=None)`` binds each memref argument to a CUDA array
    (torch tensor or any DLPack producer, zero-copy) and each scalar to a
    Python number, runs the host plan on the stream and returns the
    entry's output arguments ({tmac.output}): the array itself when there
    is one, a tuple when there are several, None when there are none.
    Launches are asynchronous, as torch's are.
    """

    def __init__(self, bundle, entry=None):
        self._bundle = bundle
        self._entry = bundle.entry(entry)
        self.name = self._entry.name
        self.args = [(a.name, a.type) for a in self._entry.args]
        self._outputs = [i for i, a in enumerate(self._entry.args) if a.output]
        self._memref = [a.kind == "memref" for a in self._entry.args]
        self._nargs = len(self._entry.args)
        self._nmemref = sum(self._memref)
        self._raw_stream = None  # torch's current-stream reader, once torch is seen
        self._cacheable = not self._entry.allocates
        # Prepared launches by key; a plain dict (insertion-ordered), the
        # oldest entry dropped first when full: a hit costs one lookup.
        self._cache = {}
        self._lock = threading.Lock()
        self._modules = {}  # CUDA context -> _Module
        self._drv = None
        self.__class__ = _fast_call(self)
        # Load the module now when a context is current, so that the first
        # call (perhaps inside CUDA graph capture) loads nothing.
        try:
            drv = _driver.driver()
            ctx = drv.current_context()
        except CudaError:
            ctx = 0
        if ctx:
            self._drv = drv
            self._module(ctx)

    def __repr__(self):
        sig = ", ".join("%s: %s" % a for a in self.args)
        return "<tmac.Kernel %s(%s) from %s>" % (self.name, sig, self._bundle.path)

    def _call(self, *args, stream=None):
        """A call in general: any arrays, stream= given, cache misses. The
        generated __call__ (_fast_call) handles cached calls on torch
        tensors and comes here for everything else; both build the same
        key."""
        if len(args) != self._nargs:
            raise ArgumentError(self._count_message(len(args)))
        # The key: per argument what the checks and the plan read, then
        # the stream. torch tensors are read directly (DLPack costs 3.6 us
        # per tensor) into a flat key; any other array: _general_key.
        key = []
        dev = -1
        tt = _tensor_type
        for a, m in zip(args, self._memref):
            if not m:
                key += (type(a), a)
            elif type(a) is tt:
                key += (a.data_ptr(), a.shape, a.stride(), a.dtype)
                if dev < 0:
                    dev = a.get_device()
            else:
                key = None
                break
        infos = None
        if key is None:
            key, infos, dev = self._general_key(args, stream)
        if stream is not None:
            s = _stream_handle(stream)
        elif infos is None or len(infos) < self._nmemref:
            # at least one torch tensor: torch's current stream, read on
            # every call (graph capture makes a side stream current)
            s = (self._raw_stream or self._torch_stream_reader())(dev if dev > 0 else 0)
        else:
            s = 0
        key.append(s)
        key = tuple(key)
        prep = self._cache.get(key)
        if prep is None:
            prep = self._prepare(key, args, infos, dev, s)
        loc = None
        try:
            for f, a, loc in prep.actions:
                r = f(*a)
                if r:
                    raise self._drv.error("cuLaunchKernelEx", r)
        except CudaError as e:
            raise _at(loc, e) from None
        if len(self._outputs) == 1:
            return args[self._outputs[0]]
        if self._outputs:
            return tuple(args[i] for i in self._outputs)
        return None

    def _general_key(self, args, stream):
        """The key of a call with arrays other than plain torch tensors
        (DLPack producers, tensor subclasses), the DLPack descriptions by
        argument index (their capsules are held until the launches are
        queued) and the device."""
        global _tensor_type
        key = []
        infos = {}
        dev = -1
        for i, (a, m) in enumerate(zip(args, self._memref)):
            if not m:
                key += (type(a), a)
            elif _dlpack.is_torch_tensor(a):
                if _tensor_type is None and type(a).__name__ == "Tensor":
                    _tensor_type = type(a)
                key += (a.data_ptr(), a.shape, a.stride(), a.dtype)
                if dev < 0:
                    dev = a.get_device()
            else:
                info = _dlpack.describe(a, None if stream is None else _stream_handle(stream), self._what(i))
                infos[i] = info
                key += (info.ptr, info.shape, info.strides, info.dtype)
                if dev < 0 and info.device[0] in _CUDA_DEVICES:
                    dev = info.device[1]
        if infos:
            key.insert(0, "dlpack")  # never equal to a key of torch tensors
        else:
            infos = None
        return key, infos, dev

    def __call__(self, *args, stream=None):
        """k(*args, stream=None): run the entry on args (see the class
        docstring); returns the output arguments."""
        return self._call(*args, stream=stream)

    def _torch_stream_reader(self):
        _dlpack.torch_stream(0)  # resolves the reader
        self._raw_stream = _dlpack._stream_reader
        return self._raw_stream

    def plan(self, *args):
        """The evaluated host plan for these arguments (checked first), as
        the list of steps tmac would execute; nothing is launched."""
        return _plan.evaluate(self._entry, self._bindings(args, None, None))

    # --- cache misses ---

    def _count_message(self, n):
        names = ", ".join(a.name for a in self._entry.args)
        return "%s: expected %d arguments (%s), got %d" % (self.name, self._nargs, names, n)

    def _what(self, i):
        return "argument %d (%s)" % (i, self._entry.args[i].name)

    def _bindings(self, args, infos, stream):
        if len(args) != self._nargs:
            raise ArgumentError(self._count_message(len(args)))
        out = []
        for i, a in enumerate(args):
            if not self._memref[i]:
                out.append(a)
                continue
            if isinstance(a, _plan.MemrefBinding):  # plan() on described arrays
                out.append(a)
                continue
            info = infos.get(i) if infos else None
            if info is None:
                info = _dlpack.describe(a, stream, self._what(i))
            out.append(_plan.MemrefBinding(info.ptr, info.shape, info.strides, info.dtype, info.device))
        return out

    def _module(self, ctx):
        m = self._modules.get(ctx)
        if m is None:
            m = _Module(self._drv, self._bundle.ptx, [k["name"] for k in self._bundle.kernels])
            self._modules[ctx] = m
        return m

    def _prepare(self, key, args, infos, dev, stream):
        bindings = self._bindings(args, infos, stream)
        _plan.check_bindings(self._entry, bindings)
        if self._drv is None:
            self._drv = _driver.driver()
        drv = self._drv
        with self._lock:
            ctx = drv.context(max(dev, 0))
            mod = self._module(ctx)
            # Scratch memory is this call's (entries that allocate are not
            # cached); the trace frees what the plan does not.

            def alloc(nbytes):
                return drv.mem_alloc_async(nbytes, stream)

            trace = _plan.evaluate(self._entry, bindings, alloc=None if self._cacheable else alloc, check=False)
            prep = _Prepared()
            maps = {}
            for step in trace.steps:
                try:
                    self._prepare_step(drv, mod, step, stream, maps, prep)
                except CudaError as e:
                    raise _at(step.get("loc"), e) from None
            if self._cacheable:
                self._cache[key] = prep
                if len(self._cache) > CACHE_SIZE:
                    del self._cache[next(iter(self._cache))]
            return prep

    def _prepare_step(self, drv, mod, step, stream, maps, prep):
        op = step["op"]
        if op == "tensormap":
            storage = _driver.TensorMapStorage()
            drv.encode_tiled(storage.address, step["data_type"], step["rank"], step["global_address"],
                             step["global_dim"], step["global_strides"], step["box_dim"],
                             step["element_strides"], step["interleave"], step["swizzle"],
                             step["l2_promotion"], step["oob_fill"])
            maps[step["id"]] = storage
            prep.keep.append(storage)
        elif op == "launch":
            name = step["kernel"]
            fn = mod.functions[name]
            shared = step["shared_bytes"]
            if shared > mod.max_shared[name]:
                drv.set_max_dynamic_shared(fn, shared)
                mod.max_shared[name] = shared
            if step["non_portable_cluster"] and name not in mod.non_portable:
                drv.allow_non_portable_cluster(fn)
                mod.non_portable.add(name)
            params = _ParamBlock([maps[p["tensormap"]] if "tensormap" in p else p["bytes"]
                                  for p in step["params"]])
            cfg = drv.launch_config(step["grid"], step["block"], shared, stream, step["cluster"])
            prep.keep.append((params, cfg))
            args = (ctypes.byref(cfg), ctypes.c_void_p(fn), params.pointers, None)
            prep.actions.append((drv.unchecked("cuLaunchKernelEx"), args, step.get("loc")))
        elif op == "alloc":
            pass  # allocated while evaluating (the alloc callback)
        elif op == "free":
            prep.actions.append((drv.mem_free_async, (step["ptr"], stream), step.get("loc")))
        elif op == "copy":
            prep.actions.append((drv.memcpy_dtod_async, (step["dst"], step["src"], step["bytes"], stream),
                                 step.get("loc")))
        elif op == "memset":
            prep.actions.append((drv.memset_async, (step["dst"], bytes.fromhex(step["value"]), step["count"], stream),
                                 step.get("loc")))
        else:
            raise PlanError("%s: unknown plan step %r" % (step.get("loc", "?"), op))


def _at(loc, err):
    """err with the plan step's source location in front."""
    if not loc:
        return err
    return CudaError("%s: %s" % (loc, err), err.code, err.name)


def _fast_call(k):
    """A Kernel subclass for k whose __call__ is generated for k's
    signature: for torch tensors and no stream=, the key is built in one
    expression (no loop, locals only), looked up, and the prepared
    actions run; anything else goes to Kernel._call. The two build equal
    keys (for each argument in order: memref -> data_ptr, shape,
    stride, dtype; scalar -> type, value; then the stream)."""
    n = k._nargs
    mem = [i for i in range(n) if k._memref[i]]
    if not mem:
        return Kernel  # no tensors, no hot path to specialise
    parts = []
    for i in range(n):
        if k._memref[i]:
            parts.append("a{0}.data_ptr(), a{0}.shape, a{0}.stride(), a{0}.dtype".format(i))
        else:
            parts.append("type(a{0}), a{0}".format(i))
    names = ", ".join("a%d" % i for i in range(n))
    if len(k._outputs) == 1:
        ret = "a%d" % k._outputs[0]
    elif k._outputs:
        ret = "(%s)" % ", ".join("a%d" % i for i in k._outputs)
    else:
        ret = "None"
    src = """
def __call__(self, *args, stream=None):
    if stream is None and len(args) == {n} and self._raw_stream is not None:
        {names}, = args
        tt = _tensor_type
        if {types}:
            dev = a{first}.get_device()
            prep = self._cache.get(({parts}, self._raw_stream(dev if dev > 0 else 0)))
            if prep is not None:
                loc = None
                try:
                    for f, fa, loc in prep.actions:
                        r = f(*fa)
                        if r:
                            raise self._drv.error("cuLaunchKernelEx", r)
                except CudaError as e:
                    raise _at(loc, e) from None
                return {ret}
    return self._call(*args, stream=stream)
""".format(n=n, names=names, types=" and ".join("type(a%d) is tt" % i for i in mem),
           first=mem[0], parts=", ".join(parts), ret=ret)
    scope = {}
    exec(compile(src, "<tmac fast call of %s>" % k.name, "exec"), globals(), scope)
    call = scope["__call__"]
    call.__doc__ = Kernel.__call__.__doc__
    return type("Kernel", (Kernel,), {"__call__": call, "__slots__": (), "__module__": __name__})
