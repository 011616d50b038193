"""tmac: call tmac-compiled Hopper kernels from Python."""

from ._errors import (ArgumentError, BundleError, CompileError, CudaError,
                      PlanError, TmacError)

__all__ = ["TmacError", "BundleError", "ArgumentError", "PlanError",
           "CudaError", "CompileError"]
