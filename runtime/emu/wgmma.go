package emu

import (
	"fmt"
	"math"

	"github.com/tmac-dev/tmac/dialects/nvvm"
	"github.com/tmac-dev/tmac/dialects/tmac"
	"github.com/tmac-dev/tmac/ir"
)

// wgmma: nvvm.wgmma.mma_async is collective over the 128 threads of a
// warpgroup (4 consecutive warps from a multiple of 4). Each thread brings
// its fragment of the m64nN accumulator; the last one to arrive computes
// D = A·B (+ D) from shared memory through the two matrix descriptors, with
// the layouts and swizzles the hardware reads, and every thread takes its
// fragment of the result. The result is asynchronous: it may feed the next
// mma, but reading it (llvm.extractvalue) before a wgmma.wait_group has
// retired its group is an error, and the shared memory the mma reads stays
// "read by a wgmma in flight" until then (a TMA load or a thread writing
// it is a race).

// wgAcc is an accumulator fragment produced by an mma of commit group
// group (counted per thread: the number of commits before it).
type wgAcc struct {
	vals  []any
	group int
	op    *ir.Operation
}

// warpgroup is the rendezvous of one warpgroup's collective wgmma ops.
type warpgroup struct {
	arrived int
	gen     int
	in      [128][]any
	out     [128][]any
	descA   int64
	descB   int64
	op      *ir.Operation
	// scaleD is the runtime scale-d of the mma the warpgroup is gathering
	// for (tmac.wgmma.mma_async.scale_d): 1 adds the accumulator, 0 starts
	// from zero; -1 when the op's attribute says.
	scaleD int
	// aRegs holds each thread's A fragment of a wgmma with A in registers
	// (tmac.wgmma.mma_async, wgmma_rs.go): 8 elements in register order.
	aRegs [128][]float64
	// reads in flight: shared ranges read by the mmas of each commit group.
	reads []wgRead
}

type wgRead struct {
	lo, hi uint64
	group  int
	op     *ir.Operation
}

func (t *thread) warpgroupOf() (*warpgroup, int) {
	w := t.linear / 128
	for len(t.c.warpgroups) <= w {
		t.c.warpgroups = append(t.c.warpgroups, &warpgroup{})
	}
	return t.c.warpgroups[w], t.linear % 128
}

func init() {
	register(direct(func(t *thread, in *instr) {}), nvvm.WgmmaFenceAligned)
	register(direct(func(t *thread, in *instr) {
		t.wgCommitted++
		if t.b.observing() {
			t.b.emit(t, nil, &Event{Kind: WGMMACommit, Op: in.op, Group: t.wgCommitted - 1})
		}
	}), nvvm.WgmmaCommitGroupSyncAligned)
	register(func(k *kernel, op *ir.Operation) runFunc {
		n, _ := ir.AttrInt(nvvm.WgmmaWaitGroupSyncAlignedOp{Op: op}.Group())
		return func(t *thread, in *instr) { t.wgmmaWait(in.op, n) }
	}, nvvm.WgmmaWaitGroupSyncAligned)
	register(prepareWgmma, nvvm.WgmmaMmaAsync)
	register(prepareWgmmaScaleD, tmac.WgmmaMmaAsyncScaleD)
}

// wgmmaWait retires all but the n most recent of t's wgmma commit groups
// (wgmma.wait_group).
func (t *thread) wgmmaWait(op *ir.Operation, n int64) {
	if done := t.wgCommitted - int(n); done > t.wgRetired {
		t.wgRetired = done
		// The retired groups' shared-memory reads are over.
		wg, _ := t.warpgroupOf()
		keep := wg.reads[:0]
		for _, r := range wg.reads {
			if r.group >= done {
				keep = append(keep, r)
			}
		}
		wg.reads = keep
	}
	if t.b.observing() {
		t.b.emit(t, nil, &Event{Kind: WGMMAWait, Op: op, Group: t.wgRetired, Keep: int(n)})
	}
}

// accValues returns the registers of an accumulator operand (a fragment
// produced by an earlier mma, pending or not, or a plain struct).
func accValues(v any) []any {
	switch x := v.(type) {
	case *wgAcc:
		return x.vals
	case []any:
		return x
	}
	return nil
}

// prepareWgmma: nvvm.wgmma.mma_async.
func prepareWgmma(k *kernel, op *ir.Operation) runFunc {
	w := nvvm.WgmmaMmaAsyncOp{Op: op}
	inouts, descA, descB := k.slot(w.Inouts()), k.slot(w.DescriptorA()), k.slot(w.DescriptorB())
	return func(t *thread, in *instr) {
		acc := accValues(t.vals[inouts])
		da, _ := t.vals[descA].(int64)
		db, _ := t.vals[descB].(int64)
		t.wgmma(in, acc, da, db, -1)
	}
}

// prepareWgmmaScaleD: tmac.wgmma.mma_async.scale_d, scale-d from its i1
// operand.
func prepareWgmmaScaleD(k *kernel, op *ir.Operation) runFunc {
	w := tmac.WgmmaMmaAsyncScaleDOp{Op: op}
	inouts, descA, descB, scaleD := k.slot(w.Inouts()), k.slot(w.DescriptorA()), k.slot(w.DescriptorB()), k.slot(w.ScaleD())
	return func(t *thread, in *instr) {
		da, _ := t.vals[descA].(int64)
		db, _ := t.vals[descB].(int64)
		t.wgmma(in, accValues(t.vals[inouts]), da, db, int(t.int(in, scaleD)&1))
	}
}

// wgmma: the thread arrives at its warpgroup's mma with its accumulator
// fragment acc, the descriptors da and db and the runtime scale-d (-1: the
// op's attribute).
func (t *thread) wgmma(in *instr, acc []any, da, db int64, scaleD int) {
	op := in.op
	wg, lane := t.warpgroupOf()
	if wg.arrived == 0 {
		wg.descA, wg.descB, wg.op, wg.scaleD = da, db, op, scaleD
	} else if wg.op != op || wg.descA != da || wg.descB != db {
		t.failf(op, "the threads of a warpgroup issue different wgmma instructions or descriptors (thread %d: A %#x, B %#x; others: A %#x, B %#x at %s)", t.linear, da, db, wg.descA, wg.descB, wg.op.Loc)
	} else if wg.scaleD != scaleD {
		t.failf(op, "the threads of a warpgroup issue a wgmma with different scale-d (thread %d: %d; others: %d)", t.linear, scaleD, wg.scaleD)
	}
	wg.in[lane] = acc
	wg.arrived++
	gen := wg.gen
	if wg.arrived == 128 {
		reads := len(wg.reads)
		if err := t.b.mma(t.c, wg, op, t.wgCommitted); err != nil {
			t.fail(err)
		}
		if t.b.observing() {
			e := &Event{Kind: WGMMA, Op: op, Group: t.wgCommitted, Warpgroup: t.linear / 128}
			for _, r := range wg.reads[reads:] {
				e.Mem = append(e.Mem, Span{r.lo, r.hi})
			}
			t.b.emit(t, nil, e)
		}
		wg.arrived = 0
		wg.gen++
	} else {
		t.block(op, func() bool { return wg.gen != gen }, func() string {
			return fmt.Sprintf("wgmma: %d of the warpgroup's 128 threads arrived", wg.arrived)
		})
	}
	t.set(in, 0, &wgAcc{vals: wg.out[lane], group: t.wgCommitted, op: op})
}

// matrixDesc is a decoded shared-memory matrix descriptor.
type matrixDesc struct {
	start, lbo, sbo uint64
	swizzle         int // 0 none, 1 128B, 2 64B, 3 32B
}

func decodeDesc(d int64) matrixDesc {
	u := uint64(d)
	return matrixDesc{start: (u & 0x3fff) << 4, lbo: ((u >> 16) & 0x3fff) << 4, sbo: ((u >> 32) & 0x3fff) << 4, swizzle: int(u >> 62)}
}

// rowBytes is the width of a swizzle atom's row.
func (md matrixDesc) rowBytes() uint64 {
	return [...]uint64{16, 128, 64, 32}[md.swizzle]
}

// addr is the shared address of element (mn, k) of an operand whose
// elements are esize bytes: kMajor when K is the contiguous dimension.
// The layouts are the PTX ISA's canonical ones: in a swizzled layout rows
// of the atom are rowBytes wide, 8-row groups SBO apart and (MN-major)
// atoms LBO apart along MN; without swizzle, 8x16-byte core matrices with
// LBO between them along the contiguous dimension and SBO along the other.
// The swizzle then permutes the 16-byte chunks by the address bits.
func (md matrixDesc) addr(mn, k int, esize uint64, kMajor bool) uint64 {
	var off uint64
	if md.swizzle == 0 {
		if kMajor {
			kb := uint64(k) * esize
			off = uint64(mn/8)*md.sbo + (kb/16)*md.lbo + uint64(mn%8)*16 + kb%16
		} else {
			mb := uint64(mn) * esize
			off = (mb/16)*md.lbo + uint64(k/8)*md.sbo + uint64(k%8)*16 + mb%16
		}
		return md.start + off
	}
	r := md.rowBytes()
	if kMajor {
		off = uint64(mn/8)*md.sbo + uint64(mn%8)*r + uint64(k)*esize
	} else {
		mb := uint64(mn) * esize
		off = (mb/r)*md.lbo + uint64(k/8)*md.sbo + uint64(k%8)*r + mb%r
	}
	return swizzleMode(md.start+off, md.swizzle)
}

func swizzleMode(a uint64, mode int) uint64 {
	switch mode {
	case 1:
		return a ^ ((a >> 3) & 0x70)
	case 2:
		return a ^ ((a >> 3) & 0x30)
	case 3:
		return a ^ ((a >> 3) & 0x10)
	}
	return a
}

// wgType is the element type of a wgmma type keyword.
func wgType(name string) (ir.Type, bool) {
	switch name {
	case "f16":
		return ir.F16T, true
	case "bf16":
		return ir.BF16T, true
	case "tf32":
		return ir.FloatTypeOf(ir.TF32), true
	case "e4m3":
		return ir.FloatTypeOf(ir.F8E4M3FN), true
	case "e5m2":
		return ir.FloatTypeOf(ir.F8E5M2), true
	case "s8":
		return ir.I8, true
	case "u8":
		return ir.IntegerTypeWithSign(8, ir.Unsigned), true
	case "f32":
		return ir.F32T, true
	case "s32":
		return ir.I32, true
	}
	return nil, false
}

// mma computes one warpgroup's wgmma (group: the commit group the
// issuing threads are in).
func (b *blockRun) mma(c *cta, wg *warpgroup, op *ir.Operation, group int) *Error {
	m64, n64, k64 := nvvm.WGMMAShape(op)
	m, n, k := int(m64), int(n64), int(k64)
	if m != 64 || n <= 0 || k <= 0 {
		return opError(op, "unexpected wgmma shape m%d n%d k%d", m, n, k)
	}
	typeA, typeB, typeD := nvvm.WGMMATypes(op)
	ta, okA := wgType(typeA)
	tb, okB := wgType(typeB)
	td, okD := wgType(typeD)
	if !okA || !okB || !okD {
		return opError(op, "wgmma types %s, %s, %s are not emulated", typeA, typeB, typeD)
	}
	ea, eb := uint64(elemSize(ta)), uint64(elemSize(tb))
	if _, tf := ta.(*ir.FloatType); tf && ta.(*ir.FloatType).Kind == ir.TF32 {
		ea, eb = 4, 4
	}
	// A is MxK: "row" is K-major. B is KxN: "col" is K-major, "row" N-major.
	layoutA, layoutB := nvvm.WGMMALayouts(op)
	aK := layoutA != "col"
	bK := layoutB == "col"
	A, B := decodeDesc(wg.descA), decodeDesc(wg.descB)
	read := func(md matrixDesc, mn, kk int, es uint64, kMajor bool, ty ir.Type, what string) (float64, *Error) {
		a := md.addr(mn, kk, es, kMajor)
		if a+es > uint64(len(c.smem)) {
			return 0, opError(op, "the %s descriptor (start %d, LBO %d, SBO %d, swizzle mode %d) reads shared offset %d, out of bounds (the block has %d bytes)", what, md.start, md.lbo, md.sbo, md.swizzle, a, len(c.smem))
		}
		v := readElem(c.smem[a:a+es], ty)
		switch x := v.(type) {
		case float64:
			if ft, ok := ty.(*ir.FloatType); ok && ft.Kind == ir.TF32 {
				return ir.RoundToFloatKind(x, ir.TF32), nil
			}
			return x, nil
		case int64:
			if it, ok := ty.(*ir.IntegerType); ok && it.Signedness == ir.Unsigned {
				return float64(zext(x, ty)), nil
			}
			return float64(x), nil
		}
		return 0, nil
	}
	av := make([]float64, m*k)
	bv := make([]float64, k*n)
	// The bytes each operand spans (A and B separately: they usually lie
	// far apart).
	span := [2][2]uint64{{^uint64(0), 0}, {^uint64(0), 0}}
	extend := func(i int, md matrixDesc, mn, kk int, es uint64, km bool) {
		a := md.addr(mn, kk, es, km)
		span[i][0], span[i][1] = min(span[i][0], a), max(span[i][1], a+es)
	}
	registerA := op.Name() == tmac.WgmmaMmaAsync
	if registerA {
		if err := wg.registerA(op, av, k); err != nil {
			return err
		}
	}
	for i := 0; i < m && !registerA; i++ {
		for kk := 0; kk < k; kk++ {
			v, err := read(A, i, kk, ea, aK, ta, "A")
			if err != nil {
				return err
			}
			av[i*k+kk] = v
			extend(0, A, i, kk, ea, aK)
		}
	}
	for kk := 0; kk < k; kk++ {
		for j := 0; j < n; j++ {
			v, err := read(B, j, kk, eb, bK, tb, "B")
			if err != nil {
				return err
			}
			bv[kk*n+j] = v
			extend(1, B, j, kk, eb, bK)
		}
	}
	scaleA, scaleB, scaleD := nvvm.WGMMAScales(op)
	if scaleA == "neg" {
		for i := range av {
			av[i] = -av[i]
		}
	}
	if scaleB == "neg" {
		for i := range bv {
			bv[i] = -bv[i]
		}
	}
	for _, sp := range span {
		lo, hi := sp[0], sp[1]
		if lo >= hi {
			continue // A in registers
		}
		// TMA loads still writing what this mma reads are a race.
		for _, x := range b.inflight {
			if x.load && x.dst == c && x.lo < hi && lo < x.hi {
				return &Error{Op: op, Msg: "race: a wgmma reads shared memory that a TMA load in flight is still writing (missing a wait on the load's mbarrier?)", Notes: []Note{x.note()}}
			}
		}
		// Generic writes not fenced for the async proxy are not seen by wgmma.
		for _, o := range c.threads {
			for _, w := range o.unfenced {
				if w.lo < hi && lo < w.hi {
					return &Error{Op: op, Msg: "a wgmma reads shared memory written by the threads with no fence.proxy.async since",
						Notes: []Note{note(w.op.Loc, "thread %d wrote bytes [%d, %d) here", o.linear, w.lo, w.hi)}}
				}
			}
		}
		wg.reads = append(wg.reads, wgRead{lo: lo, hi: hi, group: group, op: op})
	}

	// D (64xN): each thread's registers in the fragment order.
	d := make([]float64, m*n)
	accumulate := scaleD != "zero" && wg.scaleD != 0
	for lane := 0; lane < 128; lane++ {
		regs := wg.in[lane]
		if len(regs) != n/2 {
			return opError(op, "thread %d's accumulator has %d registers, an m64n%d fragment %d", lane, len(regs), n, n/2)
		}
		for r, v := range regs {
			row, col := fragmentCoord(lane, r)
			f, _ := v.(float64)
			if iv, ok := v.(int64); ok {
				f = float64(iv)
			}
			if accumulate {
				d[row*n+col] = f
			}
		}
	}
	mmaAccumulate(d, av, bv, m, n, k)
	for lane := 0; lane < 128; lane++ {
		out := make([]any, n/2)
		for r := range out {
			row, col := fragmentCoord(lane, r)
			if ir.IsFloat(td) {
				out[r] = round(d[row*n+col], td)
			} else {
				out[r] = wrap(int64(d[row*n+col]), td)
			}
		}
		wg.out[lane] = out
	}
	return nil
}

// fragmentCoord is where register r of lane t (0..127) of an m64nN
// accumulator lies, per the PTX ISA's wgmma .m64nNk* accumulator figure:
// warp w = t/32 owns rows 16w..16w+15; lane l holds, for each 8-column
// group i = r/4, (16w + l/4, 8i + 2(l%4)) and the next column in registers
// 4i, 4i+1, and the same 8 rows lower in 4i+2, 4i+3.
func fragmentCoord(t, r int) (row, col int) {
	w, l := t/32, t%32
	return 16*w + l/4 + 8*((r%4)/2), 8*(r/4) + 2*(l%4) + r%2
}

// mmaAccumulate adds A (m×k) times B (k×n), row-major, to D (m×n).
func mmaAccumulate(d, av, bv []float64, m, n, k int) {
	// A zero in A adds nothing unless B's row holds an Inf or a NaN (0·Inf
	// and 0·NaN are NaN on the hardware too), so only those rows skip it.
	finiteRow := make([]bool, k)
	for kk := range finiteRow {
		finiteRow[kk] = true
		for _, b := range bv[kk*n : (kk+1)*n] {
			if math.IsInf(b, 0) || math.IsNaN(b) {
				finiteRow[kk] = false
				break
			}
		}
	}
	for i := 0; i < m; i++ {
		for kk := 0; kk < k; kk++ {
			a := av[i*k+kk]
			if a == 0 && finiteRow[kk] {
				continue
			}
			row := d[i*n : (i+1)*n]
			bk := bv[kk*n : (kk+1)*n]
			for j := range row {
				row[j] += a * bk[j]
			}
		}
	}
}
