// Command launcher runs tmac's GPU test kernels on a real GPU: it reads a
// kernel's signature from its .tma source (so parameters follow codegen's
// ABI), loads the PTX that `tmac compile` produced, fills inputs with fresh
// random values, poisons outputs with NaN, launches, checks the result
// against a CPU reference and times the kernel with CUDA events.
//
// It is the minimal launcher of step 2; `tmac run` replaces it later.
//
//	launcher -src gpu-tests -ptx build/gpu/ptx -seed 7
package main

import (
	"flag"
	"fmt"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"
	"unsafe"

	_ "github.com/tmac-dev/tmac/dialects/all"
	"github.com/tmac-dev/tmac/dialects/nvgpu"
	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/kernelabi"
	"github.com/tmac-dev/tmac/runtime/cuda"
)

// buffer is a device allocation with its host copy.
type buffer struct {
	kind    elemKind
	host    []float32 // after the run: the device's result
	initial []float32 // the uploaded contents (exact values of kind)
	dev     cuda.DevicePtr
	shape   []int64
}

// tmapArg is a tensor-map kernel argument: a CUtensorMap over buf, built
// at launch. Its element type, box, swizzle, L2 promotion and OOB fill
// come from the kernel argument's !nvgpu.tensormap.descriptor type.
type tmapArg struct {
	buf *buffer
	// shape is the global tensor's shape, outermost first (nil: buf's).
	shape []int64
	// strides are the element strides of every dimension but the
	// innermost (contiguous) one, outermost first (nil: row-major).
	strides []int64
	// box, if set, must equal the descriptor's tensor shape (a check on
	// the case, outermost first).
	box []int64
}

// testCase describes one kernel run.
type testCase struct {
	name         string // row label (default: kernel)
	file, kernel string
	grid, block  cuda.Dim3
	// setup returns the kernel arguments in IR order: *buffer for memrefs,
	// *tmapArg for tensor maps, float32 for f32, int64 for index/i64,
	// int32 for i32 scalars.
	setup func(r *rand.Rand) []any
	// check compares the outputs with the reference; it returns the max
	// absolute error and ‖out−ref‖/‖ref‖.
	check func(args []any) (maxAbs, rel float64)
	tol   float64
	bytes float64 // bytes moved per launch, for GB/s
	flops float64 // floating-point operations per launch, for TFLOP/s
	smem  int     // dynamic shared memory bytes
}

func newBuf(r *rand.Rand, shape []int64, poison bool) *buffer {
	return newTyped(r, kF32, shape, poison)
}

// newTyped makes a buffer of the kind: normal random values rounded to
// the kind, or NaN when poison is set.
func newTyped(r *rand.Rand, kind elemKind, shape []int64, poison bool) *buffer {
	n := int64(1)
	for _, d := range shape {
		n *= d
	}
	b := &buffer{kind: kind, host: make([]float32, n), shape: shape}
	for i := range b.host {
		if poison {
			b.host[i] = float32(math.NaN())
		} else {
			b.host[i] = kind.round(float32(r.NormFloat64()))
		}
	}
	return b
}

func compare(out, ref []float64) (maxAbs, rel float64) {
	var num, den float64
	for i := range out {
		d := out[i] - ref[i]
		if math.IsNaN(d) {
			return math.Inf(1), math.Inf(1)
		}
		maxAbs = math.Max(maxAbs, math.Abs(d))
		num += d * d
		den += ref[i] * ref[i]
	}
	return maxAbs, math.Sqrt(num / den)
}

func to64(x []float32) []float64 {
	y := make([]float64, len(x))
	for i, v := range x {
		y[i] = float64(v)
	}
	return y
}

var cases = []testCase{
	{
		file: "saxpy.tma", kernel: "saxpy",
		grid: cuda.Dim3{X: 1024, Y: 1, Z: 1}, block: cuda.Dim3{X: 256, Y: 1, Z: 1},
		setup: func(r *rand.Rand) []any {
			return []any{float32(r.NormFloat64()), newBuf(r, []int64{1024, 1024}, false), newBuf(r, []int64{1024, 1024}, false)}
		},
		check: func(args []any) (float64, float64) {
			a, x, y := args[0].(float32), args[1].(*buffer), args[2].(*buffer)
			ref := make([]float64, len(x.host))
			for i := range ref {
				ref[i] = float64(float32(math.FMA(float64(a), float64(x.host[i]), float64(y.initial[i]))))
			}
			return compare(to64(y.host), ref)
		},
		tol:   1e-6,
		bytes: 3 * 1024 * 1024 * 4,
	},
	{
		file: "rowsum_dyn.tma", kernel: "rowsum",
		grid: cuda.Dim3{X: (3001 + 127) / 128, Y: 1, Z: 1}, block: cuda.Dim3{X: 128, Y: 1, Z: 1},
		setup: func(r *rand.Rand) []any {
			return []any{newBuf(r, []int64{3001, 517}, false), newBuf(r, []int64{3001}, true)}
		},
		check: func(args []any) (float64, float64) {
			m, out := args[0].(*buffer), args[1].(*buffer)
			rows, cols := int(m.shape[0]), int(m.shape[1])
			ref := make([]float64, rows)
			for i := 0; i < rows; i++ {
				for j := 0; j < cols; j++ {
					ref[i] += float64(m.initial[i*cols+j])
				}
			}
			return compare(to64(out.host), ref)
		},
		tol:   1e-5,
		bytes: 3001*517*4 + 3001*4,
	},
	{
		file: "transpose_smem.tma", kernel: "transpose",
		grid: cuda.Dim3{X: 64, Y: 64, Z: 1}, block: cuda.Dim3{X: 32, Y: 8, Z: 1},
		setup: func(r *rand.Rand) []any {
			return []any{newBuf(r, []int64{2048, 2048}, false), newBuf(r, []int64{2048, 2048}, true)}
		},
		check: func(args []any) (float64, float64) {
			in, out := args[0].(*buffer), args[1].(*buffer)
			ref := make([]float64, len(in.host))
			for i := 0; i < 2048; i++ {
				for j := 0; j < 2048; j++ {
					ref[j*2048+i] = float64(in.initial[i*2048+j])
				}
			}
			return compare(to64(out.host), ref)
		},
		tol:   0,
		bytes: 2 * 2048 * 2048 * 4,
	},
}

// elementwise2 checks out = f(a, b) element by element.
func elementwise2(f func(a, b float32) float32) func(args []any) (float64, float64) {
	return func(args []any) (float64, float64) {
		a, b, out := args[0].(*buffer), args[1].(*buffer), args[2].(*buffer)
		ref := make([]float64, len(a.host))
		for i := range ref {
			ref[i] = float64(f(a.initial[i], b.initial[i]))
		}
		return compare(to64(out.host), ref)
	}
}

// gemmCheck compares C with A·B computed in float64 (rows in parallel).
func gemmCheck(args []any) (float64, float64) {
	a, b, c := args[0].(*buffer), args[1].(*buffer), args[2].(*buffer)
	n := int(a.shape[0])
	ref := make([]float64, n*n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			row := ref[i*n : (i+1)*n]
			for k := 0; k < n; k++ {
				aik := float64(a.initial[i*n+k])
				bk := b.initial[k*n : (k+1)*n]
				for j := range row {
					row[j] += aik * float64(bk[j])
				}
			}
		}(i)
	}
	wg.Wait()
	return compare(to64(c.host), ref)
}

func init() {
	mat := []int64{1024, 1024}
	cases = append(cases,
		testCase{
			file: "example-saxpy.tma", kernel: "saxpy_kernel_0",
			grid: cuda.Dim3{X: 1024, Y: 1, Z: 1}, block: cuda.Dim3{X: 256, Y: 1, Z: 1},
			setup: cases[0].setup, check: cases[0].check, tol: 1e-6, bytes: cases[0].bytes,
		},
		testCase{
			file: "example-scalar_add.tma", kernel: "add_kernel_0",
			grid: cuda.Dim3{X: 32, Y: 128, Z: 1}, block: cuda.Dim3{X: 32, Y: 8, Z: 1},
			setup: func(r *rand.Rand) []any {
				return []any{newBuf(r, mat, false), newBuf(r, mat, false), newBuf(r, mat, true)}
			},
			check: elementwise2(func(a, b float32) float32 { return a + b }),
			bytes: 3 * 1024 * 1024 * 4,
		},
		testCase{
			file: "example-transpose_smem.tma", kernel: "transpose_kernel_0",
			grid: cuda.Dim3{X: 32, Y: 32, Z: 1}, block: cuda.Dim3{X: 32, Y: 8, Z: 1},
			setup: func(r *rand.Rand) []any {
				return []any{newBuf(r, mat, false), newBuf(r, mat, true)}
			},
			check: func(args []any) (float64, float64) {
				in, out := args[0].(*buffer), args[1].(*buffer)
				ref := make([]float64, len(in.initial))
				for i := 0; i < 1024; i++ {
					for j := 0; j < 1024; j++ {
						ref[j*1024+i] = float64(in.initial[i*1024+j])
					}
				}
				return compare(to64(out.host), ref)
			},
			bytes: 2 * 1024 * 1024 * 4,
		},
		testCase{
			file: "example-gemm_smem.tma", kernel: "gemm_kernel_0",
			grid: cuda.Dim3{X: 8, Y: 8, Z: 1}, block: cuda.Dim3{X: 256, Y: 1, Z: 1},
			setup: func(r *rand.Rand) []any {
				return []any{newBuf(r, mat, false), newBuf(r, mat, false), newBuf(r, mat, true)}
			},
			check: gemmCheck, tol: 1e-5,
			bytes: 3 * 1024 * 1024 * 4, flops: 2 * 1024 * 1024 * 1024, smem: 65536,
		},
	)
}

func main() {
	src := flag.String("src", "gpu-tests", "directory of the .tma sources")
	ptxDir := flag.String("ptx", "build/gpu/ptx", "directory of the compiled .ptx files")
	seed := flag.Int64("seed", 20261121, "random seed for the inputs")
	filter := flag.String("run", "", "run only the cases whose name or file matches this regular expression")
	timeout := flag.Duration("timeout", 60*time.Second, "give up (exit 3) when one case takes longer")
	reps := flag.Int("reps", 20, "timed repetitions (after 3 warm-up runs)")
	device := flag.Int("device", 0, "CUDA device ordinal")
	flag.Parse()
	dev, err := cuda.Init(*device)
	if err != nil {
		fmt.Fprintln(os.Stderr, "launcher:", err)
		os.Exit(1)
	}
	fmt.Printf("device: %s\n", dev.Name())
	r := rand.New(rand.NewSource(*seed))
	re, err := regexp.Compile(*filter)
	if err != nil {
		fmt.Fprintln(os.Stderr, "launcher: -run:", err)
		os.Exit(2)
	}
	var (
		mu     sync.Mutex
		rows   [][]string
		failed bool
	)
	printRows := func() {
		fmt.Println()
		fmt.Printf("%-28s %-6s %-10s %-10s %-10s %-8s %s\n", "kernel", "result", "max|err|", "rel err", "median", "GB/s", "note")
		for _, row := range rows {
			fmt.Printf("%-28s %-6s %-10s %-10s %-10s %-8s %s\n", row[0], row[1], row[2], row[3], row[4], row[5], row[6])
		}
	}
	for _, c := range cases {
		if !re.MatchString(c.label()) && !re.MatchString(c.file) {
			continue
		}
		// A kernel that never finishes (an mbarrier phase that never
		// completes spins forever) cannot be stopped from here: report it
		// with the results so far and exit, which tears the context down.
		label := c.label()
		watchdog := time.AfterFunc(*timeout, func() {
			mu.Lock()
			rows = append(rows, []string{label, "HANG", "-", "-", "-", "-", fmt.Sprintf("no result after %v; remaining cases not run", *timeout)})
			printRows()
			os.Exit(3)
		})
		row, err := run(c, r, *src, *ptxDir, *reps)
		watchdog.Stop()
		mu.Lock()
		if err != nil {
			failed = true
			row = []string{label, "ERROR", "-", "-", "-", "-", err.Error()}
		} else if row[1] != "PASS" {
			failed = true
		}
		rows = append(rows, row)
		mu.Unlock()
	}
	printRows()
	if failed {
		os.Exit(1)
	}
}

// kernelSignature reads the argument types of a kernel from its source.
func kernelSignature(path, kernel string) ([]ir.Type, error) {
	sig, _, err := kernelInfo(path, kernel)
	return sig, err
}

// kernelInfo reads a kernel's argument types from its source and, when the
// source launches it (an outlined example), the constant dynamic shared
// memory size of that launch (smem-plan sets it).
func kernelInfo(path, kernel string) ([]ir.Type, int, error) {
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, 0, err
	}
	mod, err := ir.Parse(path, string(text), ir.ParseOptions{})
	if err != nil {
		return nil, 0, err
	}
	var sig []ir.Type
	smem := 0
	ir.Walk(mod, func(op *ir.Operation) ir.WalkResult {
		if op.Name() == "gpu.func" && op.SymbolName() == kernel {
			sig = op.Attr("function_type").(*ir.TypeAttr).Value.(*ir.FunctionType).Inputs
		}
		if op.Name() == "gpu.launch_func" {
			if ref, ok := op.Attr("kernel").(*ir.SymbolRefAttr); ok && ref.Leaf() == kernel {
				if v := op.OperandNamed("dynamicSharedMemorySize"); v != nil {
					if n, ok := ir.AttrInt(ir.ConstantValue(v)); ok {
						smem = int(n)
					}
				}
			}
		}
		return ir.Advance
	})
	if sig == nil {
		return nil, 0, fmt.Errorf("kernel %s not found in %s", kernel, path)
	}
	return sig, smem, nil
}

// modules caches the loaded PTX modules by file.
var modules = map[string]cuda.Module{}

// buffers returns the distinct buffers of the arguments (memrefs and the
// tensors of tensor maps), in first-use order.
func buffers(args []any) []*buffer {
	var bs []*buffer
	seen := map[*buffer]bool{}
	add := func(b *buffer) {
		if !seen[b] {
			seen[b] = true
			bs = append(bs, b)
		}
	}
	for _, a := range args {
		switch a := a.(type) {
		case *buffer:
			add(a)
		case *tmapArg:
			add(a.buf)
		}
	}
	return bs
}

func run(c testCase, r *rand.Rand, srcDir, ptxDir string, reps int) ([]string, error) {
	sig, smem, err := kernelInfo(filepath.Join(srcDir, c.file), c.kernel)
	if err != nil {
		return nil, err
	}
	// The compiled program's own launch size wins over the case's (the
	// smem-plan pass moves shared buffers into dynamic shared memory).
	if smem > c.smem {
		c.smem = smem
	}
	mod, ok := modules[c.file]
	if !ok {
		ptx, err := os.ReadFile(filepath.Join(ptxDir, strings.TrimSuffix(c.file, ".tma")+".ptx"))
		if err != nil {
			return nil, err
		}
		if mod, err = cuda.LoadPTX(string(ptx)); err != nil {
			return nil, err
		}
		modules[c.file] = mod
	}
	fn, err := mod.Function(c.kernel)
	if err != nil {
		return nil, err
	}
	args := c.setup(r)
	bufs := buffers(args)
	// Allocate; keep each buffer's initial contents for references.
	for _, b := range bufs {
		b.initial = append([]float32(nil), b.host...)
		if b.dev, err = cuda.Alloc(b.kind.size() * len(b.host)); err != nil {
			return nil, err
		}
		defer cuda.Free(b.dev)
	}
	params, err := buildParams(sig, args)
	if err != nil {
		return nil, err
	}
	for _, b := range bufs {
		if err := cuda.CopyToDevice(b.dev, b.kind.encode(b.initial)); err != nil {
			return nil, err
		}
	}
	if c.smem > 0 { // static + dynamic above 48 KB needs it; harmless below
		if err := fn.SetMaxDynamicSharedMemory(c.smem); err != nil {
			return nil, err
		}
	}
	if err := cuda.Launch(fn, c.grid, c.block, c.smem, params); err != nil {
		return nil, err
	}
	if err := cuda.Synchronize(); err != nil {
		return nil, err
	}
	for _, b := range bufs {
		raw := make([]byte, b.kind.size()*len(b.host))
		if err := cuda.CopyToHost(raw, b.dev); err != nil {
			return nil, err
		}
		b.host = b.kind.decode(raw)
	}
	maxAbs, rel := c.check(args)
	result := "PASS"
	if !(rel <= c.tol) {
		result = "FAIL"
	}
	// Timing: warm up, then the median of reps launches (inputs are not
	// re-uploaded, which changes in-place kernels' data but not their time).
	var times []float64
	start, _ := cuda.NewEvent()
	end, _ := cuda.NewEvent()
	for i := 0; i < 3+reps; i++ {
		if err := start.Record(); err != nil {
			return nil, err
		}
		if err := cuda.Launch(fn, c.grid, c.block, c.smem, params); err != nil {
			return nil, err
		}
		if err := end.Record(); err != nil {
			return nil, err
		}
		ms, err := cuda.ElapsedMs(start, end)
		if err != nil {
			return nil, err
		}
		if i >= 3 {
			times = append(times, float64(ms))
		}
	}
	sort.Float64s(times)
	med := times[len(times)/2]
	gbs := c.bytes / (med * 1e-3) / 1e9
	note := fmt.Sprintf("tol %.0e", c.tol)
	if c.flops > 0 {
		note += fmt.Sprintf(", %.1f TFLOP/s", c.flops/(med*1e-3)/1e12)
	}
	return []string{c.label(), result, fmt.Sprintf("%.3g", maxAbs), fmt.Sprintf("%.3g", rel),
		fmt.Sprintf("%.1f us", med*1e3), fmt.Sprintf("%.0f", gbs), note}, nil
}

func (c testCase) label() string {
	if c.name != "" {
		return c.name
	}
	return c.kernel
}

// buildParams lays out kernel parameters with the kernel ABI; tensor maps
// are encoded here, from the buffers' device addresses.
func buildParams(sig []ir.Type, args []any) ([]unsafe.Pointer, error) {
	layout, err := kernelabi.Params(sig, true, nil)
	if err != nil {
		return nil, err
	}
	if len(args) != len(sig) {
		return nil, fmt.Errorf("the case gives %d arguments for a kernel of %d", len(args), len(sig))
	}
	var params []unsafe.Pointer
	for _, p := range layout {
		switch a := args[p.Arg].(type) {
		case *buffer:
			var v uint64
			switch p.Role {
			case kernelabi.RoleBase:
				v = uint64(a.dev)
			case kernelabi.RoleOffset:
				v = 0
			case kernelabi.RoleSize:
				v = uint64(a.shape[p.Dim])
			case kernelabi.RoleStride:
				s := uint64(1)
				for _, d := range a.shape[p.Dim+1:] {
					s *= uint64(d)
				}
				v = s
			default:
				return nil, fmt.Errorf("argument #%d: a buffer given for a %v parameter", p.Arg, sig[p.Arg])
			}
			x := new(uint64)
			*x = v
			params = append(params, unsafe.Pointer(x))
		case *tmapArg:
			if p.Role != kernelabi.RoleTensorMap {
				return nil, fmt.Errorf("argument #%d: a tensor map given for a %v parameter", p.Arg, sig[p.Arg])
			}
			m, err := encodeTensorMap(sig[p.Arg], a)
			if err != nil {
				return nil, fmt.Errorf("argument #%d: %v", p.Arg, err)
			}
			params = append(params, m.Ptr())
		case float32:
			x := new(float32)
			*x = a
			params = append(params, unsafe.Pointer(x))
		case int64:
			x := new(int64)
			*x = a
			params = append(params, unsafe.Pointer(x))
		case int32:
			x := new(int32)
			*x = a
			params = append(params, unsafe.Pointer(x))
		default:
			return nil, fmt.Errorf("argument #%d: unsupported host value %T", p.Arg, a)
		}
	}
	return params, nil
}

// liveMaps keeps the encoded maps reachable until the process ends (the
// parameter array points into them).
var liveMaps []*cuda.TensorMap

// encodeTensorMap builds the CUtensorMap for a tensor-map argument of type
// t: box, element type, swizzle, L2 promotion, OOB fill and interleave come
// from the !nvgpu.tensormap.descriptor type; the global tensor from a.
func encodeTensorMap(t ir.Type, a *tmapArg) (*cuda.TensorMap, error) {
	td, err := tiledDesc(t, a)
	if err != nil {
		return nil, err
	}
	m, err := cuda.EncodeTiled(td)
	if err != nil {
		return nil, err
	}
	liveMaps = append(liveMaps, m)
	return m, nil
}

// tiledDesc describes the tensor map of a over a.buf's device address.
func tiledDesc(t ir.Type, a *tmapArg) (*cuda.TiledDesc, error) {
	d, ok := nvgpu.AsTensorMapDescriptor(t)
	if !ok {
		return nil, fmt.Errorf("'%s' is not a tensor map descriptor", t)
	}
	kind, err := kindOf(d.Tensor.ElementType().String())
	if err != nil {
		return nil, err
	}
	if kind != a.buf.kind {
		return nil, fmt.Errorf("the descriptor's elements are %s but the buffer holds %s", kind, a.buf.kind)
	}
	box := d.Tensor.Shape()
	if a.box != nil && fmt.Sprint(a.box) != fmt.Sprint(box) {
		return nil, fmt.Errorf("the case's box %v differs from the descriptor's %v", a.box, box)
	}
	shape := a.shape
	if shape == nil {
		shape = a.buf.shape
	}
	if len(shape) != len(box) {
		return nil, fmt.Errorf("a rank-%d tensor with a rank-%d box", len(shape), len(box))
	}
	strides := a.strides
	if strides == nil {
		strides = make([]int64, len(shape)-1)
		s := int64(1)
		for i := len(shape) - 1; i > 0; i-- {
			s *= shape[i]
			strides[i-1] = s
		}
	}
	if len(strides) != len(shape)-1 {
		return nil, fmt.Errorf("%d strides for a rank-%d tensor", len(strides), len(shape))
	}
	// The extent the map may touch must lie in the buffer.
	last := int64(shape[len(shape)-1] - 1)
	for i, s := range strides {
		last += (shape[i] - 1) * s
	}
	if last >= int64(len(a.buf.host)) {
		return nil, fmt.Errorf("the tensor (shape %v, strides %v) reaches element %d of a %d-element buffer", shape, strides, last, len(a.buf.host))
	}
	es := int64(kind.size())
	rank := len(shape)
	td := &cuda.TiledDesc{
		DataType:    kind.tmapType(),
		Global:      a.buf.dev,
		Dims:        make([]uint64, rank),
		Strides:     make([]uint64, rank-1),
		Box:         make([]uint32, rank),
		Interleave:  cuda.TensorMapInterleave(d.Interleave),
		Swizzle:     cuda.TensorMapSwizzle(d.Swizzle),
		L2Promotion: cuda.TensorMapL2Promotion(d.L2Promo),
		OOBFill:     cuda.TensorMapOOBFill(d.OOB),
	}
	// The driver's dimension 0 is the innermost one.
	for i := 0; i < rank; i++ {
		td.Dims[i] = uint64(shape[rank-1-i])
		td.Box[i] = uint32(box[rank-1-i])
	}
	for i := 0; i < rank-1; i++ {
		td.Strides[i] = uint64(strides[rank-2-i] * es)
	}
	return td, nil
}

// checkTensorMapArg validates a case's tensor map without a GPU (the
// buffer gets a fake, aligned device address).
func checkTensorMapArg(t ir.Type, a *tmapArg) error {
	saved := a.buf.dev
	a.buf.dev = 0x7f0000000000
	defer func() { a.buf.dev = saved }()
	td, err := tiledDesc(t, a)
	if err != nil {
		return err
	}
	return cuda.ValidateTiled(td)
}
