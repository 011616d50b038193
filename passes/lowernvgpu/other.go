package lowernvgpu

import (
	"github.com/tmac-dev/tmac/dialects/arith"
	"github.com/tmac-dev/tmac/dialects/llvm"
	"github.com/tmac-dev/tmac/dialects/memref"
	"github.com/tmac-dev/tmac/dialects/nvgpu"
	"github.com/tmac-dev/tmac/dialects/nvvm"
	"github.com/tmac-dev/tmac/ir"
)

// Lowering of the remaining nvgpu ops.
//
//   - nvgpu.rcp {rounding = approx, ftz} (the only form the verifier admits)
//     → arith.divf 1.0, x with fastmath<arcp,afn>, which llc selects as
//     rcp.approx.f32 per element: the approximate reciprocal, except that
//     subnormal inputs and results are kept rather than flushed to zero (a
//     more accurate result than rcp.approx.ftz where they differ). 1-D
//     vectors only (codegen holds 1-D vectors).
//   - nvgpu.device_async_copy → nvvm.cp.async.shared.global (4, 8 or 16
//     bytes; cache = cg with bypassL1, ca otherwise; srcElements becomes the
//     source byte count, the rest being zero-filled);
//     nvgpu.device_async_create_group → nvvm.cp.async.commit.group;
//     nvgpu.device_async_wait → nvvm.cp.async.wait.group numGroups (0 when
//     absent). The tokens carry no value; they may only be used by these
//     nvgpu ops.
//   - nvgpu.ldmatrix, nvgpu.mma.sync and nvgpu.mma.sp.sync are rejected:
//     their per-thread fragments are 2-D vectors, which tmac does not compile
//     (and tmac has no nvvm.mma.sync); on sm_90a, warpgroup MMA replaces
//     them.

const (
	fastMathARcp = 1 << 4
	fastMathAFn  = 1 << 6
)

func lowerRcp(rw *NVGPURewriter, op *ir.Operation) error {
	r := nvgpu.RcpOp{Op: op}
	vt := r.Out().Type().(*ir.VectorType)
	scalable := false
	for _, s := range vt.Scalable {
		scalable = scalable || s
	}
	if len(vt.Shape()) != 1 || scalable {
		return rw.Errorf(op, "on '%s' is not supported by tmac on sm_90a: only fixed 1-D vectors are", vt)
	}
	one := rw.Create(arith.Constant, nil, []ir.Type{vt},
		ir.NamedAttr{Name: "value", Value: ir.DenseSplatFloat(1.0, vt)}).Result(0)
	div := rw.Create(arith.Divf, []ir.Value{one, r.In()}, []ir.Type{vt},
		ir.NamedAttr{Name: "fastmath", Value: arith.FastMath(fastMathARcp | fastMathAFn)})
	rw.Replace(op, div.Result(0))
	return nil
}

// elementPtr returns an !llvm.ptr<as> to mem[indices].
func (rw *NVGPURewriter) elementPtr(op *ir.Operation, mem ir.Value, indices []ir.Value, as int64) (ir.Value, error) {
	mt := mem.Type().(*ir.MemRefType)
	var offs, ones []int64
	var dyn []ir.Value
	zero := true
	for d, i := range indices {
		ones = append(ones, 1)
		if c, ok := arith.ConstantInt(i); ok {
			// A constant index outside the memref would make an invalid
			// subview: report it here.
			if c < 0 || (d < mt.Rank() && mt.Shape()[d] != ir.Dynamic && c >= mt.Shape()[d]) {
				return nil, rw.Errorf(op, "index %d is out of bounds of dimension %d of '%s'", c, d, mt)
			}
			offs = append(offs, c)
			zero = zero && c == 0
		} else {
			offs = append(offs, ir.Dynamic)
			dyn = append(dyn, i)
			zero = false
		}
	}
	if zero {
		return rw.Cast(mem, llvm.Ptr(as)), nil
	}
	rt, ok := memref.InferSubViewResultType(mt, offs, ones, ones)
	if !ok {
		return nil, rw.Errorf(op, "cannot address an element of '%s'", mt)
	}
	sv := rw.Create(memref.Subview, append([]ir.Value{mem}, dyn...), []ir.Type{rt},
		ir.NamedAttr{Name: "operandSegmentSizes", Value: ir.DenseI32Array(1, int64(len(dyn)), 0, 0)},
		ir.NamedAttr{Name: "static_offsets", Value: ir.DenseI64Array(offs...)},
		ir.NamedAttr{Name: "static_sizes", Value: ir.DenseI64Array(ones...)},
		ir.NamedAttr{Name: "static_strides", Value: ir.DenseI64Array(ones...)})
	return rw.Cast(sv.Result(0), llvm.Ptr(as)), nil
}

func lowerDeviceAsyncCopy(rw *NVGPURewriter, op *ir.Operation) error {
	cp := nvgpu.DeviceAsyncCopyOp{Op: op}
	dst, src := cp.Dst(), cp.Src()
	st := src.Type().(*ir.MemRefType)
	if !nvgpu.IsGlobalMemory(st.MemorySpace) {
		return rw.Errorf(op, "copies from '%s': cp.async reads global memory only", st)
	}
	bits := int64(ir.BitWidth(st.Elem))
	dstElements, _ := ir.AttrInt(cp.DstElements())
	bytes := dstElements * bits / 8
	dp, err := rw.elementPtr(op, dst, cp.DstIndices(), 3)
	if err != nil {
		return err
	}
	sp, err := rw.elementPtr(op, src, cp.SrcIndices(), 1)
	if err != nil {
		return err
	}
	operands := []ir.Value{dp, sp}
	if n := cp.SrcElements(); n != nil {
		// Bytes read from the source; the rest of the copy is zero-filled.
		var srcBytes ir.Value
		if c, ok := arith.ConstantInt(n); ok {
			srcBytes = rw.IntConst(c*bits/8, ir.I32)
		} else {
			e := rw.toI32(n)
			if bits%8 == 0 {
				srcBytes = rw.Create(arith.Muli, []ir.Value{e, rw.IntConst(bits/8, ir.I32)}, []ir.Type{ir.I32}).Result(0)
			} else {
				b := rw.Create(arith.Muli, []ir.Value{e, rw.IntConst(bits, ir.I32)}, []ir.Type{ir.I32}).Result(0)
				srcBytes = rw.Create(arith.Shrui, []ir.Value{b, rw.IntConst(3, ir.I32)}, []ir.Type{ir.I32}).Result(0)
			}
		}
		operands = append(operands, srcBytes)
	}
	cache := "ca"
	if cp.BypassL1() != nil {
		cache = "cg"
	}
	rw.Create(nvvm.CpAsyncSharedGlobal, operands, nil,
		ir.NamedAttr{Name: "modifier", Value: nvvm.LoadCacheMod.Attr(cache)},
		ir.NamedAttr{Name: "size", Value: ir.IntAttr(bytes, ir.I32)})
	return rw.replaceNVGPUValue(op, cp.AsyncToken(), nil, "an !nvgpu.device.async.token")
}

func lowerDeviceAsyncCreateGroup(rw *NVGPURewriter, op *ir.Operation) error {
	rw.Create(nvvm.CpAsyncCommitGroup, nil, nil)
	return rw.replaceNVGPUValue(op, nvgpu.DeviceAsyncCreateGroupOp{Op: op}.AsyncToken(), nil, "an !nvgpu.device.async.token")
}

func lowerDeviceAsyncWait(rw *NVGPURewriter, op *ir.Operation) error {
	n, _ := ir.AttrInt(nvgpu.DeviceAsyncWaitOp{Op: op}.NumGroups())
	rw.Create(nvvm.CpAsyncWaitGroup, nil, nil,
		ir.NamedAttr{Name: "n", Value: ir.IntAttr(n, ir.I32)})
	op.Erase()
	return nil
}

func rejectWarpMMA(rw *NVGPURewriter, op *ir.Operation) error {
	return rw.Errorf(op, "is not supported by tmac on sm_90a: its register fragments are 2-D vectors, which tmac does not compile; use warpgroup MMA (nvgpu.warpgroup.mma) or nvvm ops")
}
