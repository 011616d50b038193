package codegen

import (
	"github.com/tmac-dev/tmac/dialects/gpu"
	"github.com/tmac-dev/tmac/ir"
)

// gpu ops that parse and verify but are not compiled for sm_90a: the WMMA
// fragment ops (Hopper's tensor cores are programmed with warpgroup MMA)
// and the vector-distribution op gpu.warp_execute_on_lane_0.

func init() {
	Register(func(fe *FuncEmitter, op *ir.Operation) {
		Fail(op, "'%s' is not supported on sm_90a: Hopper's tensor cores are programmed with warpgroup MMA (nvgpu.warpgroup.mma, or nvvm.wgmma.mma_async), not WMMA fragments", op.Name())
	}, gpu.SubgroupMmaLoadMatrix, gpu.SubgroupMmaStoreMatrix, gpu.SubgroupMmaCompute,
		gpu.SubgroupMmaConstantMatrix, gpu.SubgroupMmaElementwise,
		gpu.SubgroupMmaExtractThreadLocal, gpu.SubgroupMmaInsertThreadLocal)
	Register(func(fe *FuncEmitter, op *ir.Operation) {
		Fail(op, "'gpu.warp_execute_on_lane_0' cannot be compiled: tmac does not distribute vector code over the lanes of a warp (upstream rewrites it with its vector-distribution patterns first); write the per-lane code, with gpu.shuffle, gpu.subgroup_reduce or gpu.subgroup_broadcast to move values between lanes")
	}, gpu.WarpExecuteOnLane0)
}
