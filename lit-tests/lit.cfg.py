# lit configuration for tmac. Run through `make lit` (which builds tmac and
# points lit at it) or `lit lit-tests` with build/tmac present.
import os
import lit.formats

config.name = "tmac"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".tma"]
config.excludes = ["Inputs"]
config.test_source_root = os.path.dirname(__file__)
repo = os.path.dirname(config.test_source_root)
config.test_exec_root = os.path.join(repo, "build", "lit")

llvm_bin = os.environ.get("LLVM_BIN", "/usr/lib/llvm-22/bin")
build = os.path.join(repo, "build")
config.environment["PATH"] = os.pathsep.join([build, llvm_bin, os.environ.get("PATH", "")])
config.environment["LLVM_BIN"] = llvm_bin

config.substitutions.append(("%mlir-opt", os.path.join(llvm_bin, "mlir-opt")))
config.substitutions.append(("%compat", os.path.join(repo, "scripts", "compat-check.sh")))
config.substitutions.append(("%roundtrip", os.path.join(repo, "scripts", "roundtrip-check.sh")))

# The Python running lit, for tests of tmac's Python tools; `REQUIRES: numpy`
# marks those that need NumPy (bench/gpu/accuracy).
import importlib.util
import sys

config.substitutions.append(("%python", sys.executable))
if importlib.util.find_spec("numpy") is not None:
    config.available_features.add("numpy")
