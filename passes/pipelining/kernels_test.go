package pipelining_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/passes/internal/pipecheck"
)

// What the kernels of the tests share: the tile types, the entry's tensor
// maps, the warp-specialised K loops, the references, running a program
// and reading what it reports.

// tileTypes are the types of the warp-specialised kernels: A tiles of
// arows x 64 f16 (one box, 128B swizzle) of which each consumer
// warpgroup multiplies 64 rows, B tiles of 64 x bcols f16 (64x64 boxes),
// the ew tiles of 32 x 64 f32 and ew B tiles of 32 x fbcols f32.
func tileTypes(arows, bcols, fbcols int64) string {
	return fmt.Sprintf(`!atile = memref<%dx64xf16, #gpu.address_space<workgroup>>
!ahalf = memref<64x64xf16, strided<[64, 1], offset: ?>, #gpu.address_space<workgroup>>
!ahalfd = memref<64x64xf16, #gpu.address_space<workgroup>>
!btile = memref<64x64xf16, #gpu.address_space<workgroup>>
!bfull = memref<64x%dxf16, #gpu.address_space<workgroup>>
!adesc = !nvgpu.tensormap.descriptor<tensor = !atile, swizzle = swizzle_128b, l2promo = none, oob = zero, interleave = none>
!bdesc = !nvgpu.tensormap.descriptor<tensor = !btile, swizzle = swizzle_128b, l2promo = none, oob = zero, interleave = none>
!acc = !nvgpu.warpgroup.accumulator<fragmented = vector<64x%dxf32>>
!oacc = !nvgpu.warpgroup.accumulator<fragmented = vector<64x64xf32>>
!ft = memref<32x64xf32, #gpu.address_space<workgroup>>
!fb = memref<32x%dxf32, #gpu.address_space<workgroup>>
!fdesc = !nvgpu.tensormap.descriptor<tensor = !ft, swizzle = none, l2promo = none, oob = zero, interleave = none>
`, arows, bcols, bcols, fbcols)
}

// hostMaps writes the entry's tensor maps: %amap and %bmap over %a and %b
// (gemm: f16 with A boxes of arows x 64, B boxes of 64 x 64; ew: f32
// boxes of 32 x 64).
func hostMaps(b *strings.Builder, kind string, arows int64, atype, btype string) {
	elem, abox, bbox, adesc, bdesc := "f16", "box[%harows, %h64]", "box[%h64, %h64]", "adesc", "bdesc"
	if kind == "ew" {
		elem, abox, bbox, adesc, bdesc = "f32", "box[%h32, %h64]", "box[%h32, %h64]", "fdesc", "fdesc"
	}
	fmt.Fprintf(b, `  %%h1 = arith.constant 1 : index
  %%h32 = arith.constant 32 : index
  %%h64 = arith.constant 64 : index
  %%harows = arith.constant %[1]d : index
  %%a_any = memref.cast %%a : %[2]s to memref<*x%[4]s>
  %%amap = nvgpu.tma.create.descriptor %%a_any %[5]s : memref<*x%[4]s> -> !%[7]s
  %%b_any = memref.cast %%b : %[3]s to memref<*x%[4]s>
  %%bmap = nvgpu.tma.create.descriptor %%b_any %[6]s : memref<*x%[4]s> -> !%[8]s
`, arows, atype, btype, elem, abox, bbox, adesc, bdesc)
}

// launch opens the entry's gpu.launch of grid blocks of threads (in
// clusters of cs blocks if cs > 1) and defines the constants, the block
// and thread ids and the zero the kernels use.
func launch(b *strings.Builder, threads, grid, cs int64) {
	clusters := ""
	if cs > 1 {
		clusters = "clusters(%lcx, %lcy, %lcz) in (%lscx = %hcs, %lscy = %h1, %lscz = %h1)\n             "
	}
	fmt.Fprintf(b, `  %%hnt = arith.constant %d : index
  %%hgrid = arith.constant %d : index
  %%hcs = arith.constant %d : index
  gpu.launch %sblocks(%%lbx, %%lby, %%lbz) in (%%gx = %%hgrid, %%gy = %%h1, %%gz = %%h1)
             threads(%%ltx, %%lty, %%ltz) in (%%sx = %%hnt, %%sy = %%h1, %%sz = %%h1) {
`, threads, grid, cs, clusters)
	for _, v := range []int{0, 1, 2, 3, 5, 32, 64, 128, 512} {
		fmt.Fprintf(b, "    %%c%d = arith.constant %d : index\n", v, v)
	}
	b.WriteString("    %zero = arith.constant 0.000000e+00 : f32\n    %bx = gpu.block_id x\n    %tx = gpu.thread_id x\n")
}

// kLoop is the marked K loop of the warp-specialised kernels, from lb to
// ub by step with the loads (tmac.tma.load lines, at %kk = 64 k) and attrs.
// gemm: this warpgroup's 64 rows (%myrow) of the A tile %as times the B
// tile %bs (!bfull) into %acc0's accumulator and, mixed, the threads'
// reads of B summed into a second result so that they stay. ew: each
// thread adds its element of both tiles (B: btype) into a sum, with a
// block barrier between its two reads if bar.
type kLoop struct {
	kind, lb, ub, step, loads, attrs, btype string
	mixed, bar                              bool
}

// text returns the loop as %res; acc and sum name its accumulator (gemm)
// or sum (ew) and the sum of the threads' reads of B (gemm, mixed).
func (l kLoop) text() (text, acc, sum string) {
	if l.kind == "ew" {
		bar := ""
		if l.bar {
			bar = "      gpu.barrier\n"
		}
		return fmt.Sprintf(`    %%res = scf.for %%k = %s to %s step %s iter_args(%%s = %%zero) -> (f32) {
      %%kk = arith.muli %%k, %%c64 : index
%s      tmac.tma.wait %%as, %%bs : !ft, %s
      %%r = arith.divui %%tx, %%c64 : index
      %%cc = arith.remui %%tx, %%c64 : index
      %%va = memref.load %%as[%%r, %%cc] : !ft
%s      %%vb = memref.load %%bs[%%r, %%cc] : %s
      %%p = arith.addf %%va, %%vb : f32
      %%s1 = arith.addf %%s, %%p : f32
      scf.yield %%s1 : f32
    } %s
`, l.lb, l.ub, l.step, l.loads, l.btype, bar, l.btype, l.attrs), "%res", ""
	}
	if l.kind == "attn" {
		// Each warpgroup: S = A_half·B (SS), P = f16(S) in registers,
		// O += P·A (RS: the whole A tile, 128 rows of 64, N-major, as B).
		return fmt.Sprintf(`    %%res = scf.for %%k = %s to %s step %s iter_args(%%acc = %%acc0) -> (!oacc) {
      %%kk = arith.muli %%k, %%c64 : index
%s      tmac.tma.wait %%as, %%bs : !atile, !bfull
      %%ah = memref.subview %%as[%%myrow, 0] [64, 64] [1, 1] : !atile to !ahalf
      %%da = nvgpu.warpgroup.generate.descriptor %%ah, %%amap : !ahalf, !adesc -> !nvgpu.warpgroup.descriptor<tensor = !ahalfd>
      %%db = nvgpu.warpgroup.generate.descriptor %%bs, %%bmap : !bfull, !bdesc -> !nvgpu.warpgroup.descriptor<tensor = !bfull>
%s      scf.yield %%nacc : !oacc
    } %s
`, l.lb, l.ub, l.step, l.loads, rsStep("!ahalfd", 64), l.attrs), "%res", ""
	}
	iter, results, mixed, yield, res := "", "(!acc)", "", " : !acc", "%res"
	acc, sum = "%res", ""
	if l.mixed {
		iter, results, yield, res = ", %es = %zero", "(!acc, f32)", ", %es1 : !acc, f32", "%res:2"
		mixed = "      %e = memref.load %bs[%c0, %c0] : !bfull\n      %ef = arith.extf %e : f16 to f32\n      %es1 = arith.addf %es, %ef : f32\n"
		acc, sum = "%res#0", "%res#1"
	}
	return fmt.Sprintf(`    %s = scf.for %%k = %s to %s step %s iter_args(%%acc = %%acc0%s) -> %s {
      %%kk = arith.muli %%k, %%c64 : index
%s      tmac.tma.wait %%as, %%bs : !atile, !bfull
      %%ah = memref.subview %%as[%%myrow, 0] [64, 64] [1, 1] : !atile to !ahalf
      %%da = nvgpu.warpgroup.generate.descriptor %%ah, %%amap : !ahalf, !adesc -> !nvgpu.warpgroup.descriptor<tensor = !ahalfd>
      %%db = nvgpu.warpgroup.generate.descriptor %%bs, %%bmap : !bfull, !bdesc -> !nvgpu.warpgroup.descriptor<tensor = !bfull>
      %%nacc = nvgpu.warpgroup.mma %%da, %%db, %%acc {transposeB} : !nvgpu.warpgroup.descriptor<tensor = !ahalfd>, !nvgpu.warpgroup.descriptor<tensor = !bfull>, !acc -> !acc
%s      scf.yield %%nacc%s
    } %s
`, res, l.lb, l.ub, l.step, iter, results, l.loads, mixed, yield, l.attrs), acc, sum
}

// rsStep is the attention step of the attn kinds, after the descriptors
// %da (of A's rows, type !nvgpu.warpgroup.descriptor<tensor = da>) and
// %db (of B's tile): S = A·B, P = f16(S) (rows x 128) in registers and
// %nacc = %acc + P·A_k, the RS mma reading A's whole tile %as as its
// N-major B (K = 128 by N = 64).
func rsStep(da string, rows int) string {
	return fmt.Sprintf(`      %%dv = nvgpu.warpgroup.generate.descriptor %%as, %%amap : !atile, !adesc -> !nvgpu.warpgroup.descriptor<tensor = !atile>
      %%z = nvgpu.warpgroup.mma.init.accumulator -> !acc
      %%s = nvgpu.warpgroup.mma %%da, %%db, %%z {transposeB} : !nvgpu.warpgroup.descriptor<tensor = %[1]s>, !nvgpu.warpgroup.descriptor<tensor = !bfull>, !acc -> !acc
      %%p = tmac.warpgroup.acc.to_operand %%s : !acc -> !tmac.warpgroup.operand<%[2]dx128xf16>
      %%nacc = tmac.warpgroup.mma %%p, %%dv, %%acc {transposeB} : !tmac.warpgroup.operand<%[2]dx128xf16>, !nvgpu.warpgroup.descriptor<tensor = !atile>, !oacc -> !oacc
`, da, rows)
}

// storeTile stores this warpgroup's 64 x cols accumulator acc (!acc, or
// !oacc when cols is 64) at row %grow, column col of %d (rows x dcols
// f32).
func storeTile(acc, col string, rows, cols, dcols int64) string {
	ty := "!acc"
	if cols == 64 {
		ty = "!oacc"
	}
	return fmt.Sprintf(`    %%dsub = memref.subview %%d[%%grow, %[2]s] [64, %[4]d] [1, 1] : memref<%[3]dx%[5]dxf32> to memref<64x%[4]dxf32, strided<[%[5]d, 1], offset: ?>>
    nvgpu.warpgroup.mma.store %[1]s, %%dsub : %[6]s to memref<64x%[4]dxf32, strided<[%[5]d, 1], offset: ?>>
`, acc, col, rows, cols, dcols, ty)
}

// kCols is the width of the K dimension every iteration's tile fits in.
func kCols(ivs []int64) int {
	w := 64
	for _, iv := range ivs {
		w = max(w, int(iv+1)*64)
	}
	return w
}

// gemmRef sets the rows x cols block of d at (row0, dcol0) to the product
// of A's rows from row0 and B's columns from bcol0 over the K steps at
// the induction values ivs (64 columns of A, rows of B each).
func gemmRef(d, a, b pipecheck.Matrix, row0, rows, dcol0, bcol0, cols int, ivs []int64) {
	for m := row0; m < row0+rows; m++ {
		acc := make([]float64, cols)
		arow := a.Row(m)
		for _, iv := range ivs {
			for kk := int(iv) * 64; kk < int(iv+1)*64; kk++ {
				x := arow[kk]
				for n, y := range b.Row(kk)[bcol0 : bcol0+cols] {
					acc[n] += x * y
				}
			}
		}
		for n, v := range acc {
			d.Set(m, dcol0+n, v)
		}
	}
}

// mixedRef sets row r of aux (threads wide) to what every thread's reads
// of B's element (64 iv, col) at each K step sum to.
func mixedRef(aux, b pipecheck.Matrix, r, col, threads int, ivs []int64) {
	s := 0.0
	for _, iv := range ivs {
		s += b.At(int(iv)*64, col)
	}
	for tx := 0; tx < threads; tx++ {
		aux.Set(r, tx, s)
	}
}

// gemmLoads are the boxes of a K step at induction value iv: the A tile
// at row row0 and the two boxes of the B tile from column col0.
func gemmLoads(iv, row0, col0 int64) []pipecheck.Load {
	return []pipecheck.Load{
		{Tile: 0, Map: 0, Coords: []int64{iv * 64, row0}, Issuer: -1},
		{Tile: 1, Map: 1, Coords: []int64{col0, iv * 64}, Issuer: -1},
		{Tile: 1, Box: 1, Map: 1, Coords: []int64{col0 + 64, iv * 64}, Issuer: -1},
	}
}

// outputs are a program's outputs: the argument index and reference of
// each.
type outputs map[int]pipecheck.Matrix

// emulate compiles the program, runs it under the seeds and compares its
// outputs with the references; the first problem is returned.
func emulate(p *pipecheck.Program, outs outputs, seeds ...int64) error {
	comp, err := pipecheck.Compile(p)
	if err != nil {
		return err
	}
	for _, seed := range seeds {
		bufs, err := comp.Run(seed)
		if err != nil {
			return err
		}
		for i, want := range outs {
			if err := pipecheck.Same(bufs[i], want); err != nil {
				return fmt.Errorf("%s (seed %d): argument %d: %v", p.Name, seed, i, err)
			}
		}
	}
	return nil
}

// find returns the ops named name under k (that keep holds for, if set).
func find(k *ir.Operation, name string, keep func(*ir.Operation) bool) []*ir.Operation {
	var out []*ir.Operation
	ir.Walk(k, func(o *ir.Operation) ir.WalkResult {
		if o.Name() == name && (keep == nil || keep(o)) {
			out = append(out, o)
		}
		return ir.Advance
	})
	return out
}

// eraseAll erases ops.
func eraseAll(ops []*ir.Operation) {
	for _, o := range ops {
		o.Erase()
	}
}

// setConst makes operand i of op the constant v of type ty (made just
// before op).
func setConst(op *ir.Operation, i int, v int64, ty ir.Type) {
	b := ir.NewBuilder(op.Loc)
	b.SetInsertionPoint(op)
	op.SetOperand(i, b.CreateOp("arith.constant", nil, []ir.Type{ty}, ir.NamedAttr{Name: "value", Value: ir.IntAttr(v, ty)}).Result(0))
}

// mutation is a row of the Catches tests: a break of the passes' output,
// made after the pass after (default mbarrier-phase) on each of the
// cases, and what the report of some run of each must say (alternatives
// separated by |).
type mutation[C fmt.Stringer] struct {
	name   string
	cases  []C
	after  string
	mutate func(k *ir.Operation)
	want   string
}

// catches checks that run reports every mutation on each of its cases.
func catches[C fmt.Stringer](t *testing.T, ms []mutation[C], run func(c C, after string, mutate func(k *ir.Operation)) error) {
	for _, m := range ms {
		t.Run(m.name, func(t *testing.T) {
			for _, c := range m.cases {
				caught(t, c.String(), run(c, m.after, m.mutate), m.want)
			}
		})
	}
}

// expect panics unless the pass output has the shape a mutation relies
// on (the mutations run inside the compiler's pipeline).
func expect(ok bool, format string, args ...any) {
	if !ok {
		panic("the pass output is not what the mutation expects: " + fmt.Sprintf(format, args...))
	}
}

// caught fails the test unless err, what the runs of case name gave,
// reports one of want's phrases.
func caught(t *testing.T, name string, err error, want string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: no run reported the broken output", name)
	}
	t.Log(firstLine(err))
	if !reports(err, want) {
		t.Fatalf("got %v, want %q", err, want)
	}
}

// reports tells whether err's message holds one of the |-separated
// phrases of want.
func reports(err error, want string) bool {
	for _, w := range strings.Split(want, "|") {
		if strings.Contains(err.Error(), w) {
			return true
		}
	}
	return false
}

// firstLine is the first line of err's message.
func firstLine(err error) string {
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
