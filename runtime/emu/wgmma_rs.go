package emu

import (
	"github.com/tmac-dev/tmac/dialects/tmac"
	"github.com/tmac-dev/tmac/ir"
)

// tmac.wgmma.mma_async: wgmma with A in registers. Each thread brings its
// 4 A registers (pairs of f16/bf16) besides its accumulator fragment; the
// warpgroup's mma (wgmma.go) takes A from them instead of from a
// descriptor. Register r of A (element e = 2r+k of the pair) lies where
// accumulator register e of an m64n16 fragment does (PTX ISA, "Matrix
// fragments for wgmma .m64nNk16": the A layout is the accumulator's).

func init() {
	register(prepareWgmmaRS, tmac.WgmmaMmaAsync)
}

func prepareWgmmaRS(k *kernel, op *ir.Operation) runFunc {
	w := tmac.WgmmaMmaAsyncOp{Op: op}
	a, inouts, descB := k.slot(w.A()), k.slot(w.Inouts()), k.slot(w.DescriptorB())
	return func(t *thread, in *instr) {
		var frag []float64
		regs, _ := t.vals[a].([]any)
		for _, r := range regs {
			v, _ := r.(vec)
			frag = append(frag, v.f...)
		}
		wg, lane := t.warpgroupOf()
		wg.aRegs[lane] = frag
		db, _ := t.vals[descB].(int64)
		t.wgmma(in, accValues(t.vals[inouts]), 0, db, -1)
	}
}

// registerA fills av (64xk, row-major) from the threads' A registers.
func (wg *warpgroup) registerA(op *ir.Operation, av []float64, k int) *Error {
	for lane, regs := range wg.aRegs {
		if len(regs) != 8 {
			return opError(op, "thread %d's A operand has %d elements, an m64nNk16 fragment 8", lane, len(regs))
		}
		for e, v := range regs {
			row, col := fragmentCoord(lane, e)
			av[row*k+col] = v
		}
	}
	return nil
}
