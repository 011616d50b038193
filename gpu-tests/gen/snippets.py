"""MLIR pieces that the GPU test generators (tma_2d.py, wgmma.py) share."""

# Thread 0 (%is0) initialises the mbarrier %bar[%c0] for one arrival and
# makes it visible to the async proxy (TMA); then the block synchronises.
MBARRIER_INIT = """      %is0 = arith.cmpi eq, %tid, %c0 : index
      scf.if %is0 {
        nvgpu.mbarrier.init %bar[%c0], %c1 : !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>
        nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
      }
      gpu.barrier"""
