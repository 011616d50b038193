// Package lowernvgpu is the lower-nvgpu pass: the nvgpu ops of kernels
// become nvvm, llvm, arith and memref ops, after static checks.
package lowernvgpu

import (
	"fmt"
	"maps"
	"slices"

	"github.com/tmac-dev/tmac/dialects/arith"
	"github.com/tmac-dev/tmac/dialects/builtin"
	"github.com/tmac-dev/tmac/dialects/gpu"
	"github.com/tmac-dev/tmac/dialects/llvm"
	"github.com/tmac-dev/tmac/dialects/nvgpu"
	"github.com/tmac-dev/tmac/dialects/tmac"
	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/passes"
)

// lower-nvgpu rewrites the nvgpu ops inside kernels (gpu.func) into nvvm,
// llvm, arith and memref ops that codegen lowers to LLVM IR. The rules live
// in one file per op family (tma.go, mbarrier.go, wgmma.go, ...), listed by
// op name in nvgpuLowerings.
//
// Conventions of the lowered IR:
//   - an !nvgpu.mbarrier.group becomes shared memory
//     (memref<N x i64, #gpu.address_space<workgroup>>, 8-byte aligned), and a
//     barrier is addressed as an !llvm.ptr<3> to its i64;
//   - a tensor map is used through an !llvm.ptr to its by-value kernel
//     parameter (builtin.unrealized_conversion_cast);
//   - memrefs handed to nvvm ops become pointers to their first element,
//     again through builtin.unrealized_conversion_cast.

func init() {
	passes.Register(&passes.Info{
		Name:    "lower-nvgpu",
		Summary: "Lower nvgpu ops in kernels (TMA, mbarrier, warpgroup MMA) to nvvm",
		Description: "Rewrites the `nvgpu` ops in kernels (`gpu.func`) into `nvvm`, `llvm`, `arith` and `memref` ops that code generation lowers to LLVM IR, with static checks first (TMA boxes and alignment, `expect_tx` byte counts, wgmma shapes and operand layouts):\n" +
			"\n" +
			"- an `!nvgpu.mbarrier.group` becomes a `memref.alloca` of N `i64` in shared memory (marked `tmac.mbarriers`, 8-byte aligned; a later `smem-plan` places it) and each barrier an `!llvm.ptr<3>` to its `i64`; init, arrive, expect_tx and waits become the `nvvm.mbarrier.*` ops, with the fences an init needs (`nvvm.fence.proxy` when TMA loads complete on the group, `nvvm.fence.mbarrier.init` with clusters);\n" +
			"- a tensor map is used through an `!llvm.ptr` to its by-value kernel parameter; `nvgpu.tma.async.load` becomes `nvvm.cp.async.bulk.tensor.shared.cluster.global` (coordinates converted to `i32`, multicast mask and predicate passed through), `nvgpu.tma.async.store` becomes `nvvm.cp.async.bulk.tensor.global.shared.cta` plus a commit of its own bulk group; descriptor prefetch and fence are lowered likewise, and `nvgpu.tma.create.descriptor`, a host op, is rejected in a kernel;\n" +
			"- warpgroup MMA: `nvgpu.warpgroup.generate.descriptor` becomes the 64-bit shared-memory matrix descriptor, `nvgpu.warpgroup.mma.init.accumulator` a zero `!llvm.struct`, `nvgpu.warpgroup.mma` a fence, one `nvvm.wgmma.mma_async` per 64-row slice and K step, a commit and a wait with the op's `waitGroup`, and `nvgpu.warpgroup.mma.store` and `tmac.warpgroup.mma.store` a wait for all groups and stores of each thread's fragment (converted to f16 / bf16 for the latter);\n" +
			"- register-level math on accumulators (`dialects/tmac/SPEC.md`): `tmac.warpgroup.acc.map` and `tmac.rows.map` clone their region once per value each thread holds (the element's row and column as index constants from the thread id), `tmac.warpgroup.acc.reduce` combines a thread's values of a row and then the quad's with `nvvm.shfl.sync`, `tmac.warpgroup.acc.load_rows` / `load_cols` and `tmac.warpgroup.rows.store` read and write the values each thread holds, bounds-checked, and `tmac.warpgroup.acc.load` reads a whole accumulator, each thread its fragment's elements (register pairs as one vector load where aligned, bounds-checked in its masked form); `!tmac.rows` and `!tmac.cols` values become `!llvm.struct`s of f32, as accumulators do;\n" +
			"- `nvgpu.rcp` and the cp.async ops (`device_async_copy` and its groups) map to their nvvm forms; `nvgpu.ldmatrix`, `nvgpu.mma.sync` and `nvgpu.mma.sp.sync` are rejected (tmac does not compile their 2-D vector fragments; warpgroup MMA replaces them on sm_90a).\n" +
			"\n" +
			"Memrefs handed to nvvm ops become pointers through `builtin.unrealized_conversion_cast`.",
		New: func(passes.Options) (passes.Pass, error) {
			return passes.PassFunc(runLowerNVGPU), nil
		},
		Needs: []passes.Need{
			{Pass: "outline-kernels", Why: "to outline gpu.launch bodies into kernels: lower-nvgpu lowers gpu.func kernels only"},
			{Pass: "warp-specialize", Why: "to rewrite the loops marked tmac.warp_specialize"},
			{Pass: "tma-pipeline", Why: "to rewrite tmac.tma.load, tmac.tma.wait and tmac.tma.store"},
			{Pass: "mbarrier-phase", Why: "to compute the parity of tmac.mbarrier.wait"},
		},
	})
}

// NVGPURewriter carries state while lowering one kernel.
type NVGPURewriter struct {
	B *ir.Builder
	// Replaced maps values of nvgpu types to their lowered values (for
	// example a barrier group to its shared-memory memref).
	Replaced map[ir.Value]ir.Value
	// Kernel is the gpu.func being lowered.
	Kernel *ir.Operation
	// State holds per-kernel data of the rule families, keyed by a name
	// of the family's choosing.
	State map[string]any
}

// nvgpuLowerings holds the rewrite of each op lower-nvgpu handles, by
// family (the file that lowers it). A rewrite inserts the replacement ops
// at rw.B (positioned before op), replaces op's results and erases op; it
// returns an error diagnostic for what cannot be lowered.
var nvgpuLowerings = map[string]func(rw *NVGPURewriter, op *ir.Operation) error{
	// mbarrier.go
	nvgpu.MbarrierCreate:           lowerMBarrierCreate,
	nvgpu.MbarrierGet:              lowerMBarrierGet,
	nvgpu.MbarrierInit:             lowerMBarrierInit,
	nvgpu.MbarrierArrive:           lowerMBarrierArrive,
	nvgpu.MbarrierArriveNocomplete: lowerMBarrierArrive,
	nvgpu.MbarrierArriveExpectTx:   lowerMBarrierExpectTx,
	nvgpu.MbarrierTestWait:         lowerMBarrierTestWait,
	nvgpu.MbarrierTryWaitParity:    lowerMBarrierTryWait,
	// tma.go
	nvgpu.TmaAsyncLoad:          lowerTMALoad,
	nvgpu.TmaAsyncStore:         lowerTMAStore,
	nvgpu.TmaPrefetchDescriptor: lowerTMAPrefetch,
	nvgpu.TmaFenceDescriptor:    lowerTMAFence,
	nvgpu.TmaCreateDescriptor:   rejectTMACreate,
	// wgmma.go
	nvgpu.WarpgroupGenerateDescriptor: lowerWarpgroupGenerateDescriptor,
	nvgpu.WarpgroupMmaInitAccumulator: lowerWarpgroupInitAccumulator,
	nvgpu.WarpgroupMma:                lowerWarpgroupMma,
	nvgpu.WarpgroupMmaStore:           lowerWarpgroupMmaStore,
	// convert_store.go
	tmac.WarpgroupMmaStore: lowerConvertStore,
	// acc_load.go
	tmac.WarpgroupAccLoad: lowerAccLoad,
	// accmap.go
	tmac.WarpgroupAccMap: lowerAccMap,
	// rows.go
	tmac.WarpgroupAccReduce:   lowerAccReduce,
	tmac.WarpgroupRowsStore:   lowerRowsStore,
	tmac.RowsMap:              lowerRowsMap,
	tmac.WarpgroupAccLoadRows: lowerLoadVector,
	tmac.WarpgroupAccLoadCols: lowerLoadVector,
	// other.go
	nvgpu.Rcp:                    lowerRcp,
	nvgpu.DeviceAsyncCopy:        lowerDeviceAsyncCopy,
	nvgpu.DeviceAsyncCreateGroup: lowerDeviceAsyncCreateGroup,
	nvgpu.DeviceAsyncWait:        lowerDeviceAsyncWait,
	nvgpu.Ldmatrix:               rejectWarpMMA,
	nvgpu.MmaSync:                rejectWarpMMA,
	nvgpu.MmaSpSync:              rejectWarpMMA,
}

// nvgpuKernelChecks run on each kernel, in this order, before any of its
// ops is rewritten (static checks and analyses that need the nvgpu ops
// intact).
var nvgpuKernelChecks = []func(rw *NVGPURewriter) error{
	findTMABarrierGroups,   // mbarrier.go: the groups TMA loads complete on
	checkExpectTx,          // tma.go: expect_tx bytes against the loads
	prepareWarpgroupValues, // wgmma.go: accumulator and descriptor values retyped in place
}

// NVGPULoweredOps returns the nvgpu ops lower-nvgpu handles, sorted.
func NVGPULoweredOps() []string { return slices.Sorted(maps.Keys(nvgpuLowerings)) }

func runLowerNVGPU(top *ir.Operation, ctx *passes.Context) error {
	sched := ctx.Record()
	for _, k := range ir.Nested(top, gpu.Func) {
		rw := &NVGPURewriter{B: ir.NewBuilder(k.Loc), Replaced: map[ir.Value]ir.Value{}, Kernel: k, State: map[string]any{}}
		for _, check := range nvgpuKernelChecks {
			if err := check(rw); err != nil {
				return err
			}
		}
		var ops []*ir.Operation
		ir.Walk(k, func(op *ir.Operation) ir.WalkResult {
			if op.Dialect() == "nvgpu" || nvgpuLowerings[op.Name()] != nil {
				ops = append(ops, op)
			}
			return ir.Advance
		})
		for _, op := range ops {
			fn, ok := nvgpuLowerings[op.Name()]
			if !ok {
				return op.EmitOpError("cannot be lowered for sm_90a by tmac")
			}
			rw.B.SetInsertionPoint(op)
			rw.B.Loc = op.Loc
			created := observeBarrierOp(sched, k, op)
			if err := fn(rw, op); err != nil {
				return err
			}
			if created != nil {
				if m, ok := rw.Replaced[created]; ok {
					sched.ExistingGroup(created).Alloc = m.DefiningOp()
				}
			}
		}
	}
	return nil
}

// Lookup returns the lowered value of v (v itself if it was not replaced).
func (rw *NVGPURewriter) Lookup(v ir.Value) ir.Value {
	if r, ok := rw.Replaced[v]; ok {
		return r
	}
	return v
}

// Create builds an op at the insertion point.
func (rw *NVGPURewriter) Create(name string, operands []ir.Value, results []ir.Type, attrs ...ir.NamedAttr) *ir.Operation {
	return rw.B.CreateOp(name, operands, results, attrs...)
}

// Cast inserts builtin.unrealized_conversion_cast v to t.
func (rw *NVGPURewriter) Cast(v ir.Value, t ir.Type) ir.Value {
	return rw.Create(builtin.UnrealizedConversionCast, []ir.Value{v}, []ir.Type{t}).Result(0)
}

// Pointer returns an !llvm.ptr<space> to the first element of a memref (or
// the address of a tensor map parameter).
func (rw *NVGPURewriter) Pointer(v ir.Value, space int64) ir.Value {
	return rw.Cast(rw.Lookup(v), llvm.Ptr(space))
}

// IndexConst materialises an index constant.
func (rw *NVGPURewriter) IndexConst(n int64) ir.Value {
	return rw.Create(arith.Constant, nil, []ir.Type{ir.Index}, ir.NamedAttr{Name: "value", Value: ir.IndexAttr(n)}).Result(0)
}

// IntConst materialises an integer constant of type t.
func (rw *NVGPURewriter) IntConst(n int64, t ir.Type) ir.Value {
	return rw.Create(arith.Constant, nil, []ir.Type{t}, ir.NamedAttr{Name: "value", Value: ir.IntAttr(n, t)}).Result(0)
}

// Replace replaces op's results with vals and erases op.
func (rw *NVGPURewriter) Replace(op *ir.Operation, vals ...ir.Value) {
	for i, v := range vals {
		ir.ReplaceAllUsesWith(op.Result(i), v)
	}
	op.Erase()
}

// Errorf returns an error at op.
func (rw *NVGPURewriter) Errorf(op *ir.Operation, format string, args ...any) error {
	return op.EmitOpError("%s", fmt.Sprintf(format, args...))
}
