package smemplan

import (
	"strings"
	"testing"

	"github.com/tmac-dev/tmac/dialects/gpu"
	"github.com/tmac-dev/tmac/dialects/memref"
	"github.com/tmac-dev/tmac/dialects/nvvm"
	"github.com/tmac-dev/tmac/dialects/tmac"
	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/passes/internal/passtest"
)

// A tile read by tmac.warpgroup.mma (A in registers, B through its
// descriptor) stays live until the wait_group that retires the mma's
// group, as for nvgpu.warpgroup.mma: the mma is known by its effects (an
// async-proxy read through a descriptor), not by its name. Before, the
// tile's live range followed the mma's result instead and ended at the
// mma when the accumulator was not used after the loop.
func TestSMemLiveRangeRegisterMma(t *testing.T) {
	const types = `
!tile = memref<64x64xbf16, #gpu.address_space<workgroup>>
!desc = !nvgpu.tensormap.descriptor<tensor = !tile, swizzle = swizzle_128b, l2promo = none, oob = zero, interleave = none>
!acc = !nvgpu.warpgroup.accumulator<fragmented = vector<64x64xf32>>
!wd = !nvgpu.warpgroup.descriptor<tensor = !tile>
`
	const inLoop = types + `gpu.module @m {
  gpu.func @k(%map: !desc, %n: index) kernel {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %b = memref.alloc() : !tile
    %z = nvgpu.warpgroup.mma.init.accumulator -> !acc
    %p = tmac.warpgroup.acc.to_operand %z : !acc -> !tmac.warpgroup.operand<64x64xbf16>
    %d = nvgpu.warpgroup.generate.descriptor %b, %map : !tile, !desc -> !wd
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (!acc) {
      %o = tmac.warpgroup.mma %p, %d, %acc {ATTRS} : !tmac.warpgroup.operand<64x64xbf16>, !wd, !acc -> !acc
      scf.yield YIELD : !acc
    }
    %f = arith.constant 1.0 : f32
    nvvm.wgmma.wait.group.sync.aligned 0
    %g = arith.addf %f, %f : f32
    gpu.return
  }
}`
	const straight = types + `gpu.module @m {
  gpu.func @k(%map: !desc) kernel {
    %b = memref.alloc() : !tile
    %z = nvgpu.warpgroup.mma.init.accumulator -> !acc
    %p = tmac.warpgroup.acc.to_operand %z : !acc -> !tmac.warpgroup.operand<64x64xbf16>
    %d = nvgpu.warpgroup.generate.descriptor %b, %map : !tile, !desc -> !wd
    %o = tmac.warpgroup.mma %p, %d, %z {ATTRS} : !tmac.warpgroup.operand<64x64xbf16>, !wd, !acc -> !acc
    %f = arith.constant 1.0 : f32
    nvvm.wgmma.wait.group.sync.aligned 0
    gpu.return
  }
}`
	for _, c := range []struct {
		src, attrs, yield string
		end               string // the op the tile's live range ends at
	}{
		// In a loop: until the wait_group 0 after it, whether or not the
		// mma's result leaves the loop, whatever the waitGroup (the
		// analysis does not look into the loop's iterations).
		{inLoop, "transposeB", "%o", nvvm.WgmmaWaitGroupSyncAligned},
		{inLoop, "transposeB", "%acc", nvvm.WgmmaWaitGroupSyncAligned},
		{inLoop, "transposeB, waitGroup = 0 : i64", "%acc", nvvm.WgmmaWaitGroupSyncAligned},
		// Straight-line code: until the wait, or the mma itself with
		// waitGroup 0 (its group is complete when it returns).
		{straight, "transposeB", "", nvvm.WgmmaWaitGroupSyncAligned},
		{straight, "transposeB, waitGroup = 0 : i64", "", tmac.WarpgroupMma},
	} {
		m := passtest.Parse(t, strings.NewReplacer("ATTRS", c.attrs, "YIELD", c.yield).Replace(c.src))
		k := ir.Nested(m, gpu.Func)[0]
		body := gpu.FuncOp{Op: k}.Body()
		ord := numberOps(body)
		b := &smemBuffer{alloc: ir.Nested(k, memref.Alloc)[0]}
		b.typ = b.alloc.Result(0).Type().(*ir.MemRefType)
		liveRange(b, body, ord, false)
		if want := ord.idx[ir.Nested(k, c.end)[0]]; b.iv.End != want {
			t.Errorf("{%s} yield %q: the tile is live to op %d, want %d (the %s)", c.attrs, c.yield, b.iv.End, want, c.end)
		}
	}
}
