package pipelining

import (
	"github.com/tmac-dev/tmac/dialects/arith"
	"github.com/tmac-dev/tmac/dialects/gpu"
	"github.com/tmac-dev/tmac/dialects/memref"
	"github.com/tmac-dev/tmac/dialects/nvgpu"
	"github.com/tmac-dev/tmac/dialects/tmac"
	"github.com/tmac-dev/tmac/ir"
)

// tma-pipeline, tmac.tma.store outside any tile loop: the epilogue of a
// non-persistent kernel (registers -> shared memory, then one TMA store
// of the tile to global memory), at the top level of the kernel.
//
// Each run of consecutive such stores becomes
//
//	nvvm.fence.proxy async.shared cta   // the threads' writes, visible to the async proxy
//	gpu.barrier                         // every thread's writes done
//	scf.if thread 0 {
//	  nvgpu.tma.async.store ...         // per store, box by box (lower-nvgpu commits a group each)
//	  nvvm.cp.async.bulk.wait_group 0 {read}
//	}
//	gpu.barrier                         // unless the kernel ends there
//
// The wait keeps the tile's shared memory alive until the stores have
// read it: before the kernel exits (its shared memory is then released)
// and before any later code may write those bytes; the barrier publishes
// that to the block when code follows. There is no rotation to overlap:
// a tile stored once per kernel is waited for right away.
//
// The tile must be a memref.alloc of the kernel: its alignment is raised
// to what TMA needs for the tensor map's swizzle (tmac.BoxAlignment), and
// a tile of several boxes becomes an i8 buffer viewed as the tile, so
// that each box can be viewed at its byte offset (box i at i * box bytes).

// storesOutsideLoops lowers the kernel's top-level tmac.tma.store ops.
// elected picks the thread that issues them (warp-specialize passes the
// first consumer thread for an epilogue in the consumers' branch).
func (k *tmaKernel) storesOutsideLoops(stores []*ir.Operation, elected func(tb) ir.Value) error {
	for _, st := range stores {
		if _, err := k.storeTileAlloc(tmac.TmaStoreOp{Op: st}); err != nil {
			return err
		}
	}
	for len(stores) > 0 {
		n := 1
		for n < len(stores) && stores[n-1].Next() == stores[n] {
			n++
		}
		run := stores[:n]
		stores = stores[n:]

		b := newTB(run[0].Loc)
		b.SetInsertionPoint(run[0])
		publishToTMA(b)
		b.ifThen(elected(b), func(b tb) {
			for _, op := range run {
				st := tmac.TmaStoreOp{Op: op}
				for _, box := range k.storeBoxes(b, st) {
					b.op(nvgpu.TmaAsyncStore, append([]ir.Value{box.src, st.TensorMap()}, box.coords...), nil,
						ir.NamedAttr{Name: "operandSegmentSizes", Value: ir.DenseI32Array(1, 1, int64(len(box.coords)), 0)})
				}
			}
			bulkWaitRead(b, 0)
		})
		last := run[len(run)-1]
		if next := last.Next(); next != nil && !next.HasTrait(ir.Terminator) {
			b.barrier()
		}
		for _, op := range run {
			op.Erase()
		}
	}
	return nil
}

// storeTileAlloc returns the memref.alloc of the store's tile, aligned for
// TMA, or an error at the store when the tile is not one.
func (k *tmaKernel) storeTileAlloc(st tmac.TmaStoreOp) (memref.AllocOp, error) {
	a, ok := memref.AsAlloc(st.Src().DefiningOp())
	if !ok || !k.op.IsAncestorOf(a.Op) {
		return a, st.Op.EmitError("the tile of a 'tmac.tma.store' outside a loop must be a memref.alloc of the kernel (tma-pipeline aligns it for TMA)")
	}
	d, _ := nvgpu.AsTensorMapDescriptor(st.TensorMap().Type())
	if al, ok := ir.AttrInt(a.Alignment()); !ok || al < tmac.BoxAlignment(d.Swizzle) {
		a.Op.SetAttr("alignment", ir.I64Attr(tmac.BoxAlignment(d.Swizzle)))
	}
	return a, nil
}

// storeBox is one TMA box of a stored tile: its shared-memory view and
// global coordinates.
type storeBox struct {
	src    ir.Value
	coords []ir.Value
}

// storeBoxes returns the boxes of the store's tile: the tile itself when it
// is one box, else views of its bytes (the tile's alloc becomes an i8
// buffer viewed as the tile), box i at byte offset i * box bytes and its
// coordinate advanced by i * the box's extent (tmac.BoxesOf).
func (k *tmaKernel) storeBoxes(b tb, st tmac.TmaStoreOp) []storeBox {
	tile := st.Src().Type().(*ir.MemRefType)
	d, _ := nvgpu.AsTensorMapDescriptor(st.TensorMap().Type())
	coords := st.Coordinates()
	bx, _ := tmac.BoxesOf(tile, st.TensorMap().Type())
	if bx.N == 1 {
		return []storeBox{{st.Src(), coords}}
	}
	buf := k.byteBuffer(st.Src().DefiningOp())
	box := ir.MemRefTypeOf(d.Tensor.Shape(), d.Tensor.Elem, nil, tile.MemorySpace)
	var boxes []storeBox
	for i := int64(0); i < bx.N; i++ {
		cs := append([]ir.Value{}, coords...)
		cs[bx.Coord] = b.bin(arith.Addi, coords[bx.Coord], b.idx(i*bx.Extent))
		v := b.op(memref.View, []ir.Value{buf, b.idx(i * tmac.TileBytes(box))}, []ir.Type{box}).Result(0)
		boxes = append(boxes, storeBox{v, cs})
	}
	return boxes
}

// byteBuffer replaces the tile allocation def (once: def is the view
// when already replaced) by an i8 buffer of the same bytes and alignment
// and a memref.view of it as the tile, and returns the buffer.
func (k *tmaKernel) byteBuffer(def *ir.Operation) ir.Value {
	if v, ok := memref.AsView(def); ok {
		return v.Source()
	}
	a := memref.AllocOp{Op: def}
	tile := a.Memref().Type().(*ir.MemRefType)
	b := newTB(a.Op.Loc)
	b.SetInsertionPoint(a.Op)
	bufType := ir.MemRefTypeOf([]int64{tmac.TileBytes(tile)}, ir.I8, nil, tile.MemorySpace)
	buf := b.op(memref.Alloc, nil, []ir.Type{bufType},
		ir.NamedAttr{Name: "alignment", Value: a.Alignment()},
		ir.NamedAttr{Name: "operandSegmentSizes", Value: ir.DenseI32Array(0, 0)}).Result(0)
	view := b.op(memref.View, []ir.Value{buf, b.idx(0)}, []ir.Type{tile}).Result(0)
	for _, u := range ir.Uses(a.Memref()) {
		if u.Owner().Name() == memref.Dealloc {
			u.Owner().Erase()
		}
	}
	ir.ReplaceAllUsesWith(a.Memref(), view)
	a.Op.Erase()
	return buf
}

// elected returns, at b, whether the executing thread is thread 0 of the
// block (along y and z too unless the block is known to be 1-D).
func (k *tmaKernel) elected(b tb) ir.Value {
	tid := func(d string) ir.Value {
		id := b.op(gpu.ThreadId, nil, []ir.Type{ir.Index}, ir.NamedAttr{Name: "dimension", Value: gpu.DimAttr(d)}).Result(0)
		return b.cmp(arith.CmpIEq, id, b.idx(0))
	}
	is0 := tid("x")
	if !k.yzOne {
		for _, d := range []string{"y", "z"} {
			is0 = b.op(arith.Andi, []ir.Value{is0, tid(d)}, []ir.Type{ir.I1}).Result(0)
		}
	}
	return is0
}
