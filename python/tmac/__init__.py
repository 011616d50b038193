"""tmac: call tmac-compiled Hopper kernels from Python.

    import tmac, torch
    gemm = tmac.load("gemm.tmab")          # or tmac.compile("gemm.tma")
    c = gemm(a, b, c)                      # torch tensors (or any DLPack array) on the GPU

A bundle (``tmac compile --emit=bundle``) carries the PTX of its kernels
and the host function's plan (tensor maps, launches) as data; this
package executes that plan through the CUDA driver (ctypes on
libcuda.so.1), so neither Go nor llc is needed where it runs.
"""

import os
import shutil
import subprocess
import tempfile

from ._errors import (ArgumentError, BundleError, CompileError, CudaError,
                      PlanError, TmacError)

__all__ = ["load", "compile", "Kernel", "TmacError", "BundleError",
           "ArgumentError", "PlanError", "CudaError", "CompileError"]


def load(path, entry=None):
    """The entry function of the bundle at path (a .tmab file, or its
    bytes) as a callable Kernel. entry names the host function when the
    bundle has several. The kernels are loaded into the current CUDA
    context now if there is one, else at the first call."""
    from ._bundle import read_bundle
    from ._launch import Kernel
    return Kernel(read_bundle(path), entry)


# compile()'s keyword options and the tmac compile flags they become.
_FLAGS = {"pipeline": "--pass-pipeline", "mcpu": "--mcpu",
          "ptx_version": "--ptx-version", "opt_level": "--opt-level",
          "llc": "--llc", "libdevice": "--libdevice"}


def compile(path, entry=None, tmac=None, **options):  # noqa: A001 (the API's name)
    """Compile the tmac program at path with ``tmac compile
    --emit=bundle`` and load it (see load). The tmac binary is tmac=, else
    $TMAC, else tmac on PATH. Options become flags: pipeline=,
    mcpu=, ptx_version=, opt_level=, llc=, libdevice=. A program tmac
    rejects raises CompileError carrying tmac's diagnostics
    (file:line:col: error: ...)."""
    exe = tmac or os.environ.get("TMAC") or shutil.which("tmac")
    if not exe:
        raise CompileError("tmac.compile needs the tmac compiler: put tmac on PATH, set $TMAC, "
                           "or pass tmac=; or compile with `tmac compile --emit=bundle` "
                           "elsewhere and use tmac.load")
    cmd = [exe, "compile", os.fspath(path), "--emit=bundle"]
    for k, v in options.items():
        if k not in _FLAGS:
            raise TypeError("tmac.compile: unknown option %r (known: %s)" % (k, ", ".join(sorted(_FLAGS))))
        cmd.append("%s=%s" % (_FLAGS[k], v))
    with tempfile.TemporaryDirectory(prefix="tmac-") as d:
        out = os.path.join(d, "kernel.tmab")
        try:
            r = subprocess.run(cmd + ["-o", out], capture_output=True, text=True)
        except OSError as e:
            raise CompileError("cannot run %s: %s" % (exe, e)) from None
        if r.returncode != 0:
            raise CompileError(r.stderr.strip() or "%s exited with status %d" % (exe, r.returncode))
        with open(out, "rb") as f:
            data = f.read()
    return load(data, entry)


def __getattr__(name):
    # Kernel is imported lazily so that `import tmac` stays cheap.
    if name == "Kernel":
        from ._launch import Kernel
        return Kernel
    raise AttributeError("module 'tmac' has no attribute %r" % name)
