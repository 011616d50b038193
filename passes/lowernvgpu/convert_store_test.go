package lowernvgpu

import (
	"strings"
	"testing"

	"github.com/tmac-dev/tmac/dialects/arith"
	"github.com/tmac-dev/tmac/dialects/gpu"
	"github.com/tmac-dev/tmac/dialects/llvm"
	"github.com/tmac-dev/tmac/dialects/memref"
	"github.com/tmac-dev/tmac/dialects/scf"
	"github.com/tmac-dev/tmac/dialects/tmac"
	"github.com/tmac-dev/tmac/dialects/vector"
	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/ir/eval"
)

// Registers (r, r+1), r even, of every thread are two adjacent elements of
// one row starting at an even column: what the pair stores rely on.
func TestWgmmaAccumulatorPairs(t *testing.T) {
	for tid := int64(0); tid < 128; tid++ {
		for r := int64(0); r < 128; r += 2 {
			r0, c0, dr0, dc0 := wgmmaAccumulatorCoord(tid, r)
			r1, c1, dr1, dc1 := wgmmaAccumulatorCoord(tid, r+1)
			if r0+dr0 != r1+dr1 || c1+dc1 != c0+dc0+1 {
				t.Fatalf("thread %d: registers %d and %d at (%d, %d) and (%d, %d): not adjacent in a row",
					tid, r, r+1, r0+dr0, c0+dc0, r1+dr1, c1+dc1)
			}
			if (c0+dc0)%2 != 0 {
				t.Fatalf("thread %d register %d: pair starts at odd column %d", tid, r, c0+dc0)
			}
		}
	}
}

func TestConvertStorePlan(t *testing.T) {
	bf16, f32 := ir.FloatTypeOf(ir.BF16), ir.FloatTypeOf(ir.F32)
	strided := func(s0, s1, off int64) ir.Attribute { return ir.StridedLayout([]int64{s0, s1}, off) }
	for _, c := range []struct {
		layout ir.Attribute
		elem   ir.Type
		want   convertStorePairs
	}{
		{nil, bf16, pairsIfBaseAligned},                                // identity, row stride 128
		{strided(4096, 1, ir.Dynamic), bf16, pairsIfBaseAligned},       // a subview of a 4096-wide matrix
		{strided(4096, 1, 3), bf16, pairsIfBaseAligned},                // odd offset: caught by the address test
		{strided(ir.Dynamic, 1, ir.Dynamic), bf16, pairsIfAligned},     // dynamic stride
		{strided(129, 1, 0), bf16, pairsNever},                         // odd row stride
		{strided(129, 1, 0), f32, pairsNever},                          // (whatever the element)
		{strided(1, 128, 0), bf16, pairsNever},                         // column-major: not pairs of a row
		{strided(ir.Dynamic, ir.Dynamic, ir.Dynamic), f32, pairsNever}, // unknown inner stride
	} {
		mt := ir.MemRefTypeOf([]int64{128, 128}, c.elem, c.layout, nil)
		if got := convertStorePlan(mt); got != c.want {
			t.Errorf("%s: plan %d, want %d", mt, got, c.want)
		}
	}
}

// storeSim evaluates, for one thread, the index arithmetic lower-nvgpu
// emits for an accumulator store, and records which accumulator register
// each stored element comes from.
type storeSim struct {
	tid  int64
	ints map[ir.Value]int64
	// regs maps extracted registers to (slice, register); pairs maps
	// two-element vectors (broadcast, select, truncf) to their registers.
	regs  map[ir.Value][2]int64
	pairs map[ir.Value][][2]int64
	// At (row, col): the register stored there, and the store's width.
	at map[[2]int64][2]int64
}

func (s *storeSim) run(t *testing.T, ops []*ir.Operation, mask []bool) {
	t.Helper()
	for _, op := range ops {
		switch op.Name() {
		case arith.Constant:
			c := arith.ConstantOp{Op: op}
			if v, ok := ir.AttrInt(c.Value()); ok {
				s.ints[c.Result()] = v
			}
		case gpu.ThreadId:
			s.ints[gpu.ThreadIdOp{Op: op}.Result()] = s.tid
		case arith.Addi, arith.Muli, arith.Divui, arith.Remui:
			var x []int64
			for _, v := range op.Operands() {
				x = append(x, s.ints[v])
			}
			r, ok := eval.Ints(op, x)
			if !ok {
				t.Fatalf("cannot evaluate %s", op.Name())
			}
			s.ints[op.Result(0)] = r
		case llvm.Extractvalue:
			e := llvm.ExtractvalueOp{Op: op}
			pos := e.Position().(*ir.DenseArrayAttr).Ints[0]
			if src, ok := llvm.AsExtractvalue(e.Container().DefiningOp()); ok {
				slice := src.Position().(*ir.DenseArrayAttr).Ints[0]
				s.regs[e.Res()] = [2]int64{slice, pos}
			}
		case arith.Truncf:
			tr := arith.TruncfOp{Op: op}
			if p, ok := s.pairs[tr.In()]; ok {
				s.pairs[tr.Out()] = p
			} else {
				s.regs[tr.Out()] = s.regs[tr.In()]
			}
		case vector.Broadcast:
			b := vector.BroadcastOp{Op: op}
			r := s.regs[b.Source()]
			s.pairs[b.Vector()] = [][2]int64{r, r}
		case arith.Select:
			sel := arith.SelectOp{Op: op}
			a, b := s.pairs[sel.TrueValue()], s.pairs[sel.FalseValue()]
			var p [][2]int64
			for i := range a {
				if mask[i] {
					p = append(p, a[i])
				} else {
					p = append(p, b[i])
				}
			}
			s.pairs[sel.Result()] = p
		case memref.Store:
			st := memref.StoreOp{Op: op}
			idx := st.Indices()
			s.put(t, s.ints[idx[0]], s.ints[idx[1]], s.regs[st.Value()], 1)
		case vector.Store:
			st := vector.StoreOp{Op: op}
			idx := st.Indices()
			row, col := s.ints[idx[0]], s.ints[idx[1]]
			for i, r := range s.pairs[st.ValueToStore()] {
				s.put(t, row, col+int64(i), r, 2)
			}
		}
	}
}

func (s *storeSim) put(t *testing.T, row, col int64, reg [2]int64, width int64) {
	t.Helper()
	k := [2]int64{row, col}
	if _, dup := s.at[k]; dup {
		t.Fatalf("(%d, %d) stored twice", row, col)
	}
	s.at[k] = [2]int64{reg[0]*1000 + reg[1], width}
}

// The stores lower-nvgpu emits put every accumulator register where the
// wgmma D fragment layout has it, in both branches (pairs and single
// elements), and the pair stores are 2-element aligned.
func TestConvertStoreIndexMapping(t *testing.T) {
	const src = `
!tmA = !nvgpu.tensormap.descriptor<tensor = memref<128x64xf16, 3>, swizzle = swizzle_128b, l2promo = none, oob = zero, interleave = none>
!tmB = !nvgpu.tensormap.descriptor<tensor = memref<24x64xf16, 3>, swizzle = swizzle_128b, l2promo = none, oob = zero, interleave = none>
!acc = !nvgpu.warpgroup.accumulator<fragmented = vector<128x24xf32>>
module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @k(%ta: !tmA, %tb: !tmB, %out: memref<128x24xDST>) kernel attributes {known_block_size = array<i32: 256, 1, 1>} {
      %sa = memref.alloca() {alignment = 1024 : i64} : memref<128x64xf16, 3>
      %sb = memref.alloca() {alignment = 1024 : i64} : memref<24x64xf16, 3>
      %init = nvgpu.warpgroup.mma.init.accumulator -> !acc
      %da = nvgpu.warpgroup.generate.descriptor %sa, %ta : memref<128x64xf16, 3>, !tmA -> !nvgpu.warpgroup.descriptor<tensor = memref<128x64xf16, 3>>
      %db = nvgpu.warpgroup.generate.descriptor %sb, %tb : memref<24x64xf16, 3>, !tmB -> !nvgpu.warpgroup.descriptor<tensor = memref<64x24xf16, 3>>
      %r = nvgpu.warpgroup.mma %da, %db, %init : !nvgpu.warpgroup.descriptor<tensor = memref<128x64xf16, 3>>, !nvgpu.warpgroup.descriptor<tensor = memref<64x24xf16, 3>>, !acc -> !acc
      tmac.warpgroup.mma.store %r, %out : !acc to memref<128x24xDST>
      gpu.return
    }
  }
}`
	for _, dst := range []string{"bf16", "f16", "f32"} {
		m, err := lowerNVGPUModule(t, strings.ReplaceAll(src, "DST", dst))
		if err != nil {
			t.Fatalf("%s: %v", dst, err)
		}
		var ifOp *ir.Operation
		var before []*ir.Operation
		var mask []bool
		ir.Walk(m, func(op *ir.Operation) ir.WalkResult {
			switch {
			case op.Name() == tmac.WarpgroupMmaStore:
				t.Fatalf("%s: the store was not lowered", dst)
			case op.Name() == scf.If:
				ifOp = op
				return ir.Skip
			}
			if ifOp == nil && op.Block() != nil && op.Block().ParentOp() != nil && op.Block().ParentOp().Name() == gpu.Func {
				before = append(before, op)
			}
			return ir.Advance
		})
		if ifOp == nil {
			t.Fatalf("%s: no run-time alignment test (scf.if)", dst)
		}
		for branch := 0; branch < 2; branch++ {
			branches := [2]*ir.Region{scf.IfOp{Op: ifOp}.ThenRegion(), scf.IfOp{Op: ifOp}.ElseRegion()}
			body := branches[branch].Entry().Ops()
			for _, op := range body {
				if c, ok := arith.AsConstant(op); ok && c.Result().Type().String() == "vector<2xi1>" {
					a := c.Value().(*ir.DenseAttr)
					mask = nil
					for i := 0; i < 2; i++ {
						v := a.Ints[0]
						if !a.Splat {
							v = a.Ints[i]
						}
						mask = append(mask, v != 0)
					}
				}
			}
			if branch == 0 && mask == nil {
				t.Fatalf("%s: no select mask in the pair branch", dst)
			}
			seen := map[[2]int64]bool{}
			for tid := int64(0); tid < 256; tid++ {
				s := &storeSim{tid: tid, ints: map[ir.Value]int64{}, regs: map[ir.Value][2]int64{}, pairs: map[ir.Value][][2]int64{}, at: map[[2]int64][2]int64{}}
				s.run(t, before, mask)
				s.run(t, body, mask)
				if len(s.at) != 128*24/128 {
					t.Fatalf("%s branch %d thread %d: %d elements stored, want %d", dst, branch, tid, len(s.at), 128*24/128)
				}
				for k, v := range s.at {
					slice, reg := v[0]/1000, v[0]%1000
					r0, c0, dr, dc := wgmmaAccumulatorCoord(tid%128, reg)
					if want := [2]int64{64*slice + r0 + dr, c0 + dc}; k != want {
						t.Fatalf("%s branch %d thread %d: slice %d register %d stored at %v, want %v", dst, branch, tid, slice, reg, k, want)
					}
					if wantW := int64(2 - branch); v[1] != wantW {
						t.Fatalf("%s branch %d: a store of width %d", dst, branch, v[1])
					}
					if v[1] == 2 && reg%2 == 0 && k[1]%2 != 0 {
						t.Fatalf("%s: pair store at odd column %d", dst, k[1])
					}
					if tid < 128 {
						seen[k] = true
					}
				}
			}
			if len(seen) != 128*24 {
				t.Errorf("%s branch %d: a warpgroup stored %d of %d elements", dst, branch, len(seen), 128*24)
			}
		}
	}
}
