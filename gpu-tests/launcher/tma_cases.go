package main

// Cases for the step-3 programs: TMA round trips, the seed kernels and the
// warpgroup MMA tests (gpu-tests/*.tma). Tensor maps are described by
// their buffer and global shape; the box and modes come from the kernel's
// !nvgpu.tensormap.descriptor argument types.

import (
	"fmt"
	"math"
	"math/rand"
	"runtime"
	"sync"

	"github.com/tmac-dev/tmac/runtime/cuda"
)

// compareNaN is compare, except that where ref is NaN out must be NaN too
// (an untouched poisoned element or a NaN out-of-bounds fill), and where
// ref is a number a NaN in out is a failure.
func compareNaN(out, ref []float64) (maxAbs, rel float64) {
	o := make([]float64, 0, len(out))
	f := make([]float64, 0, len(ref))
	for i := range out {
		rn, on := math.IsNaN(ref[i]), math.IsNaN(out[i])
		switch {
		case rn && on:
			continue
		case rn != on:
			return math.Inf(1), math.Inf(1)
		}
		o = append(o, out[i])
		f = append(f, ref[i])
	}
	if len(o) == 0 {
		return 0, 0
	}
	return compare(o, f)
}

// outputs concatenates the results and references of several outputs so
// that one comparison covers them all.
func outputs(pairs ...[]float64) (out, ref []float64) {
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, pairs[i]...)
		ref = append(ref, pairs[i+1]...)
	}
	return out, ref
}

func prod(shape []int64) int64 {
	n := int64(1)
	for _, d := range shape {
		n *= d
	}
	return n
}

func d3(x, y, z int) cuda.Dim3 { return cuda.Dim3{X: x, Y: y, Z: z} }

// swizzleOffset is the byte offset in a 1024-byte-aligned shared tile
// where TMA puts the byte at offset o of the unswizzled (row-major) box:
// the 16-byte chunk index (bits 4..) is XORed with bits 7.. of o, over
// log2(span/16) bits (32B: 1, 64B: 2, 128B: 3).
func swizzleOffset(o, span int) int {
	if span == 0 {
		return o
	}
	mask := span/16 - 1
	return o ^ (((o >> 7) & mask) << 4)
}

// matmulRef computes D[m][n] = sum_k A(m,k) B(k,n) in float64, rows in
// parallel; a and b return the operands.
func matmulRef(M, N, K int, a, b func(m, k int) float64) []float64 {
	d := make([]float64, M*N)
	var wg sync.WaitGroup
	rows := make(chan int, M)
	for m := 0; m < M; m++ {
		rows <- m
	}
	close(rows)
	for w := 0; w < runtime.NumCPU(); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			arow := make([]float64, K)
			for m := range rows {
				for k := 0; k < K; k++ {
					arow[k] = a(m, k)
				}
				for n := 0; n < N; n++ {
					s := 0.0
					for k := 0; k < K; k++ {
						s += arow[k] * b(k, n)
					}
					d[m*N+n] = s
				}
			}
		}()
	}
	wg.Wait()
	return d
}

func init() {
	// Seed 000: 1D TMA memcpy. 500 elements: the second box is partial and
	// the output's 12-element tail past the tensor must stay poisoned.
	cases = append(cases,
		testCase{
			name: "memcpy_1d (500)", file: "tma_1d.tma", kernel: "memcpy_1d",
			grid: d3(2, 1, 1), block: d3(32, 1, 1),
			setup: func(r *rand.Rand) []any {
				in, out := newBuf(r, []int64{500}, false), newBuf(r, []int64{512}, true)
				return []any{&tmapArg{buf: in}, &tmapArg{buf: out, shape: []int64{500}}}
			},
			check: func(args []any) (float64, float64) {
				in, out := args[0].(*tmapArg).buf, args[1].(*tmapArg).buf
				ref := make([]float64, 512)
				for i := range ref {
					ref[i] = math.NaN()
					if i < 500 {
						ref[i] = float64(in.initial[i])
					}
				}
				return compareNaN(to64(out.host), ref)
			},
			bytes: 2 * 500 * 4,
		},
		testCase{
			name: "memcpy_1d (4M)", file: "tma_1d.tma", kernel: "memcpy_1d",
			grid: d3(1<<22/256, 1, 1), block: d3(32, 1, 1),
			setup: func(r *rand.Rand) []any {
				return []any{&tmapArg{buf: newBuf(r, []int64{1 << 22}, false)}, &tmapArg{buf: newBuf(r, []int64{1 << 22}, true)}}
			},
			check: func(args []any) (float64, float64) {
				return compareNaN(to64(args[1].(*tmapArg).buf.host), to64(args[0].(*tmapArg).buf.initial))
			},
			bytes: 2 * (1 << 22) * 4,
		},
		// 1D round trip plus a raw copy of each box (1000 elements: the
		// last box has 232 zero-filled elements).
		testCase{
			file: "tma_1d.tma", kernel: "roundtrip_1d",
			grid: d3(4, 1, 1), block: d3(128, 1, 1),
			setup: func(r *rand.Rand) []any {
				return []any{&tmapArg{buf: newBuf(r, []int64{1000}, false)}, &tmapArg{buf: newBuf(r, []int64{1000}, true)}, newBuf(r, []int64{1024}, true)}
			},
			check: func(args []any) (float64, float64) {
				in, out, raw := args[0].(*tmapArg).buf, args[1].(*tmapArg).buf, args[2].(*buffer)
				rawRef := make([]float64, 1024)
				for i := range in.initial {
					rawRef[i] = float64(in.initial[i])
				}
				return compareNaN(outputs(to64(out.host), to64(in.initial), to64(raw.host), rawRef))
			},
			bytes: 3 * 1000 * 4,
		},
	)

	// 2D round trips, one per swizzle mode; %raw shows the swizzle.
	for _, sw := range []struct {
		name       string
		cols, span int
	}{{"none", 32, 0}, {"sw32", 8, 32}, {"sw64", 16, 64}, {"sw128", 32, 128}} {
		sw := sw
		const H, W, R = 256, 256, 32
		cases = append(cases, testCase{
			file: "tma_2d_swizzle.tma", kernel: "copy2d_" + sw.name,
			grid: d3(W/sw.cols, H/R, 1), block: d3(128, 1, 1),
			setup: func(r *rand.Rand) []any {
				return []any{&tmapArg{buf: newBuf(r, []int64{H, W}, false)}, &tmapArg{buf: newBuf(r, []int64{H, W}, true)}, newBuf(r, []int64{H * W}, true)}
			},
			check: func(args []any) (float64, float64) {
				in, out, raw := args[0].(*tmapArg).buf, args[1].(*tmapArg).buf, args[2].(*buffer)
				C := sw.cols
				rawRef := make([]float64, H*W)
				gx := W / C
				for by := 0; by < H/R; by++ {
					for bx := 0; bx < gx; bx++ {
						base := (by*gx + bx) * R * C
						for rr := 0; rr < R; rr++ {
							for cc := 0; cc < C; cc++ {
								o := swizzleOffset((rr*C+cc)*4, sw.span) / 4
								rawRef[base+o] = float64(in.initial[(by*R+rr)*W+bx*C+cc])
							}
						}
					}
				}
				return compareNaN(outputs(to64(out.host), to64(in.initial), to64(raw.host), rawRef))
			},
			bytes: 3 * H * W * 4,
		})
	}

	// 3D and 5D round trips plus ordinary-store copies.
	for _, nd := range []struct {
		kernel string
		shape  []int64
		grid   cuda.Dim3
	}{
		{"copy3d", []int64{16, 64, 64}, d3(2, 4, 4)},
		{"copy5d", []int64{4, 6, 8, 16, 64}, d3(4, 2, 4)},
	} {
		nd := nd
		cases = append(cases, testCase{
			file: "tma_nd.tma", kernel: nd.kernel, grid: nd.grid, block: d3(128, 1, 1),
			setup: func(r *rand.Rand) []any {
				return []any{&tmapArg{buf: newBuf(r, nd.shape, false)}, &tmapArg{buf: newBuf(r, nd.shape, true)}, newBuf(r, nd.shape, true)}
			},
			check: func(args []any) (float64, float64) {
				in, out, cp := args[0].(*tmapArg).buf, args[1].(*tmapArg).buf, args[2].(*buffer)
				ref := to64(in.initial)
				return compareNaN(outputs(to64(out.host), ref, to64(cp.host), ref))
			},
			bytes: 3 * float64(prod(nd.shape)) * 4,
		})
	}

	// Partial boxes at the edge: zero and NaN fill.
	for _, oob := range []struct {
		kernel string
		fill   float64
	}{{"oob_zero", 0}, {"oob_nan", math.NaN()}} {
		oob := oob
		cases = append(cases, testCase{
			file: "tma_oob.tma", kernel: oob.kernel, grid: d3(3, 2, 1), block: d3(128, 1, 1),
			setup: func(r *rand.Rand) []any {
				return []any{&tmapArg{buf: newBuf(r, []int64{100, 72}, false)}, &tmapArg{buf: newBuf(r, []int64{100, 72}, true)}, newBuf(r, []int64{128, 96}, true)}
			},
			check: func(args []any) (float64, float64) {
				in, out, full := args[0].(*tmapArg).buf, args[1].(*tmapArg).buf, args[2].(*buffer)
				fullRef := make([]float64, 128*96)
				for i := 0; i < 128; i++ {
					for j := 0; j < 96; j++ {
						v := oob.fill
						if i < 100 && j < 72 {
							v = float64(in.initial[i*72+j])
						}
						fullRef[i*96+j] = v
					}
				}
				return compareNaN(outputs(to64(out.host), to64(in.initial), to64(full.host), fullRef))
			},
			bytes: (2*100*72 + 128*96) * 4,
		})
	}

	// Seed 000: pipelined elementwise add with 1, 2, 3 buffers; the
	// seed's test shapes, and a larger one for bandwidth.
	for nb := 1; nb <= 3; nb++ {
		for _, sh := range [][2]int64{{1000, 2000}, {4000, 120}, {4096, 4096}} {
			nb, sh := nb, sh
			cases = append(cases, testCase{
				name: fmt.Sprintf("add_tma_%dbuf %dx%d", nb, sh[0], sh[1]),
				file: "seed000_add_pipelined.tma", kernel: fmt.Sprintf("add_tma_%dbuf", nb),
				grid: d3(int((sh[0]+31)/32), 1, 1), block: d3(128, 1, 1),
				smem: (2*nb + 1) * 8192,
				setup: func(r *rand.Rand) []any {
					shape := []int64{sh[0], sh[1]}
					return []any{&tmapArg{buf: newBuf(r, shape, false)}, &tmapArg{buf: newBuf(r, shape, false)}, &tmapArg{buf: newBuf(r, shape, true)}, sh[1]}
				},
				check: func(args []any) (float64, float64) {
					a, b, c := args[0].(*tmapArg).buf, args[1].(*tmapArg).buf, args[2].(*tmapArg).buf
					ref := make([]float64, len(a.initial))
					for i := range ref {
						ref[i] = float64(a.initial[i] + b.initial[i])
					}
					return compareNaN(to64(c.host), ref)
				},
				bytes: 3 * float64(sh[0]*sh[1]) * 4,
			})
		}
	}

	// Seed 001: +1 on 8x8 tiles with 32-byte swizzle, in place.
	cases = append(cases, testCase{
		file: "seed001_tile_plus1.tma", kernel: "tile_plus1",
		grid: d3(32, 32, 1), block: d3(64, 1, 1),
		setup: func(r *rand.Rand) []any {
			return []any{&tmapArg{buf: newBuf(r, []int64{256, 256}, false)}}
		},
		check: func(args []any) (float64, float64) {
			m := args[0].(*tmapArg).buf
			ref := make([]float64, len(m.initial))
			for i, v := range m.initial {
				ref[i] = float64(v + 1)
			}
			return compareNaN(to64(m.host), ref)
		},
		bytes: 2 * 256 * 256 * 4,
	})

	// Seed 004: chapter 4's multistage GEMM, f32 += f16 * f16.
	cases = append(cases, testCase{
		file: "seed004_gemm_multistage.tma", kernel: "gemm_multistage",
		grid: d3(4, 2, 1), block: d3(128, 1, 1), smem: 229376,
		setup: func(r *rand.Rand) []any {
			a := newTyped(r, kF16, []int64{512, 1024}, false)
			b := newTyped(r, kF16, []int64{1024, 256}, false)
			return []any{&tmapArg{buf: a}, &tmapArg{buf: b}, newBuf(r, []int64{512, 256}, true)}
		},
		check: func(args []any) (float64, float64) {
			a, b, d := args[0].(*tmapArg).buf, args[1].(*tmapArg).buf, args[2].(*buffer)
			ref := matmulRef(512, 256, 1024,
				func(m, k int) float64 { return float64(a.initial[m*1024+k]) },
				func(k, n int) float64 { return float64(b.initial[k*256+n]) })
			return compareNaN(to64(d.host), ref)
		},
		tol:   1e-3,
		bytes: 512*1024*2 + 1024*256*2 + 512*256*4, flops: 2 * 512 * 256 * 1024,
	})

	// Single-tile wgmma: D(64xN) = A(64xK) * B(KxN). Without _tB, B is
	// stored NxK (K-major); with _tB (transposeB, f16/bf16 only) KxN.
	for _, ty := range []struct {
		name string
		kind elemKind
		k    int
		tol  float64
	}{{"f16", kF16, 64, 1e-3}, {"bf16", kBF16, 64, 1e-3}, {"tf32", kTF32, 32, 1e-3}, {"e4m3", kE4M3, 128, 1e-2}} {
		for _, n := range []int{64, 128, 256} {
			for _, tB := range []bool{false, true} {
				if tB && ty.kind.size() != 2 {
					continue // PTX: transposed operands only for f16/bf16
				}
				ty, n, tB := ty, n, tB
				kernel := fmt.Sprintf("wgmma_%s_n%d", ty.name, n)
				bshape := []int64{int64(n), int64(ty.k)}
				if tB {
					kernel += "_tB"
					bshape = []int64{int64(ty.k), int64(n)}
				}
				cases = append(cases, testCase{
					file: "wgmma_" + ty.name + ".tma", kernel: kernel,
					grid: d3(1, 1, 1), block: d3(128, 1, 1), smem: 8192 + 128*n,
					setup: func(r *rand.Rand) []any {
						a := newTyped(r, ty.kind, []int64{64, int64(ty.k)}, false)
						b := newTyped(r, ty.kind, bshape, false)
						return []any{&tmapArg{buf: a}, &tmapArg{buf: b}, newBuf(r, []int64{64, int64(n)}, true)}
					},
					check: func(args []any) (float64, float64) {
						a, b, d := args[0].(*tmapArg).buf, args[1].(*tmapArg).buf, args[2].(*buffer)
						K := ty.k
						ref := matmulRef(64, n, K,
							func(m, k int) float64 { return float64(a.initial[m*K+k]) },
							func(k, j int) float64 {
								if tB {
									return float64(b.initial[k*n+j])
								}
								return float64(b.initial[j*K+k])
							})
						return compareNaN(to64(d.host), ref)
					},
					tol:   ty.tol,
					flops: 2 * 64 * float64(n) * float64(ty.k),
				})
			}
		}
	}

	// examples/tma_copy.tma: the host builds the tensor map; outlined, the
	// kernel takes it by value with the destination memref.
	cases = append(cases, testCase{
		file: "example-tma_copy.tma", kernel: "main_kernel_0",
		grid: d3(16, 16, 1), block: d3(128, 1, 1),
		setup: func(r *rand.Rand) []any {
			return []any{&tmapArg{buf: newTyped(r, kF16, []int64{1024, 1024}, false)}, newTyped(r, kF16, []int64{1024, 1024}, true)}
		},
		check: func(args []any) (float64, float64) {
			return compareNaN(to64(args[1].(*buffer).host), to64(args[0].(*tmapArg).buf.initial))
		},
		bytes: 2 * 1024 * 1024 * 2,
	})

	// Seed 002: fp8 (e4m3) GEMM, D = A * B^T with A MxK and B NxK.
	cases = append(cases, testCase{
		file: "seed002_fp8_gemm.tma", kernel: "fp8_gemm",
		grid: d3(4, 4, 1), block: d3(128, 1, 1), smem: 131072,
		setup: func(r *rand.Rand) []any {
			a := newTyped(r, kE4M3, []int64{512, 1024}, false)
			b := newTyped(r, kE4M3, []int64{512, 1024}, false)
			return []any{&tmapArg{buf: a}, &tmapArg{buf: b}, newBuf(r, []int64{512, 512}, true)}
		},
		check: func(args []any) (float64, float64) {
			a, b, d := args[0].(*tmapArg).buf, args[1].(*tmapArg).buf, args[2].(*buffer)
			ref := matmulRef(512, 512, 1024,
				func(m, k int) float64 { return float64(a.initial[m*1024+k]) },
				func(k, n int) float64 { return float64(b.initial[n*1024+k]) })
			return compareNaN(to64(d.host), ref)
		},
		tol:   1e-2,
		bytes: 2*512*1024 + 512*512*4, flops: 2 * 512 * 512 * 1024,
	})
}
