"""Exceptions raised by the tmac package.

Every error tmac raises derives from TmacError. Messages carry the
source location of the host-plan step or IR op they concern
(``file:line:col: ...``) where one is known.
"""


class TmacError(Exception):
    """Base class of every error tmac raises."""


class BundleError(TmacError):
    """A .tmab bundle is unreadable, malformed or has no host plan."""


class ArgumentError(TmacError, TypeError):
    """A kernel argument does not match the entry function's signature.

    Raised before anything is launched."""


class PlanError(TmacError):
    """Evaluating the host plan failed (overflow, division by zero, a
    launch or tensor map out of the hardware's limits)."""


class CudaError(TmacError):
    """A CUDA driver call failed.

    ``code`` is the CUresult, ``name`` its CUDA_ERROR_* name."""

    def __init__(self, message, code=None, name=None):
        super().__init__(message)
        self.code = code
        self.name = name


class CompileError(TmacError):
    """``tmac compile`` rejected a program; the message is tmac's
    diagnostics (``file:line:col: error: ...``)."""
