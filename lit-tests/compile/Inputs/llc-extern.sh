#!/bin/sh
# A fake llc whose PTX calls an intrinsic it did not know (what an old llc
# does): `.extern .func` declarations of llvm.nvvm functions, with and
# without a return value, as llc 22 writes them.
case "$1" in --version) printf 'LLVM (http://llvm.org/):\n  LLVM version 22.1.8\n  Registered Targets:\n    nvptx64 - NVIDIA PTX 64-bit\n'; exit 0;; esac
out=
while [ $# -gt 0 ]; do
  if [ "$1" = "-o" ]; then out=$2; shift; fi
  shift
done
cat > "$out" <<'PTX'
.version 8.0
.target sm_90a
.address_size 64
.extern .func  (.param .b32 func_retval0) llvm.nvvm.fancy.new.op
(
	.param .b32 llvm.nvvm.fancy.new.op_param_0
)
;
.extern .func llvm.nvvm.fancy.void
(
	.param .b32 llvm.nvvm.fancy.void_param_0
)
;
.visible .entry scale_kernel_0()
{
	ret;
}
PTX
