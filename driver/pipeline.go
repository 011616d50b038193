package driver

import _ "github.com/tmac-dev/tmac/passes/all" // the passes DefaultPipeline names

// DefaultPipeline is the pass pipeline `tmac compile` (and `tmac run` and
// `tmac tune` on .tma input) runs before code generation.
const DefaultPipeline = "builtin.module(outline-kernels,warp-specialize,tma-pipeline,mbarrier-phase,smem-plan,lower-nvgpu,smem-plan,canonicalize,cse)"
