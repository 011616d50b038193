package emu

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math/rand"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tmac-dev/tmac/dialects/gpu"
	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/kernelabi"
	"github.com/tmac-dev/tmac/runtime/cuda"
	"github.com/tmac-dev/tmac/runtime/plan"
)

// Device is a plan.Device that runs the module's kernels on the CPU.
type Device struct {
	module *ir.Operation
	seed   int64
	mem    global

	mu      sync.Mutex
	maps    []*tensorMap
	kernels map[string]*kernel
	// Workers is the number of blocks run at a time (default GOMAXPROCS).
	Workers int
	// Observe, when set, receives the run's synchronisation and
	// shared-memory events (observe.go).
	Observe func(*Event)
	// Timeout, when positive, bounds each launch: a launch still running
	// then is stopped and returns a *TimeoutError.
	Timeout time.Duration
	// LazyStores keeps every TMA store in flight (reading its shared
	// memory) until no thread of its block can run, instead of completing
	// it at a random step: a write to a buffer a store may still be
	// reading (a missing or too shallow cp.async.bulk.wait_group.read) is
	// then reported as a race wherever one is possible.
	LazyStores bool
	// Progress, when set, is called every ProgressEvery while a launch
	// runs.
	Progress      func(LaunchProgress)
	ProgressEvery time.Duration

	// stop is set when the running launch times out; each launch has its
	// own flag, since the watcher of an earlier one may still be exiting.
	stop atomic.Pointer[atomic.Bool]
	// printed is what the running launch's threads printed (printf.go).
	printed printLog
}

// LaunchProgress is how far a launch has got.
type LaunchProgress struct {
	Kernel      string
	Done, Total int // blocks
	Elapsed     time.Duration
}

// TimeoutError is a launch stopped by Device.Timeout.
type TimeoutError struct {
	Kernel               string
	Done, Running, Total int // blocks
	Timeout              time.Duration
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("kernel %s did not finish within the timeout (%g s) on the emulator: %d of %d blocks done, %d stopped while running",
		e.Kernel, e.Timeout.Seconds(), e.Done, e.Total, e.Running)
}

// errStopped stops a block when its launch times out (Device.stop).
var errStopped = &Error{Msg: "stopped: the launch timed out"}

// stopped reports whether the running launch timed out.
func (d *Device) stopped() bool {
	if d == nil {
		return false
	}
	stop := d.stop.Load()
	return stop != nil && stop.Load()
}

// watch sets stop at d.Timeout and reports the progress of the launch of
// kernel every d.ProgressEvery, until finished is closed. done counts the
// blocks done, of total.
func (d *Device) watch(kernel string, start time.Time, stop *atomic.Bool, done *atomic.Int64, total int, finished <-chan struct{}) {
	var timeout, tick <-chan time.Time
	if d.Timeout > 0 {
		t := time.NewTimer(d.Timeout)
		defer t.Stop()
		timeout = t.C
	}
	if d.Progress != nil && d.ProgressEvery > 0 {
		t := time.NewTicker(d.ProgressEvery)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-finished:
			return
		case <-timeout:
			stop.Store(true)
			timeout = nil
		case <-tick:
			d.Progress(LaunchProgress{Kernel: kernel, Done: int(done.Load()), Total: total, Elapsed: time.Since(start)})
		}
	}
}

var _ plan.Device = (*Device)(nil)

// NewDevice emulates the kernels of module (after tmac's passes); seed
// drives the scheduler's choices.
func NewDevice(module *ir.Operation, seed int64) *Device {
	return &Device{module: module, seed: seed, kernels: map[string]*kernel{}}
}

func (d *Device) Alloc(n int) (uint64, error) { return d.mem.alloc(n), nil }
func (d *Device) Free(p uint64) error         { return d.mem.free(p) }

func (d *Device) CopyToDevice(dst uint64, src []byte) error {
	p, err := d.mem.bytes(dst, len(src))
	if err != nil {
		return err
	}
	copy(p, src)
	return nil
}

func (d *Device) CopyToHost(dst []byte, src uint64) error {
	p, err := d.mem.bytes(src, len(dst))
	if err != nil {
		return err
	}
	copy(dst, p)
	return nil
}

func (d *Device) CopyDeviceToDevice(dst, src uint64, n int) error {
	s, err := d.mem.bytes(src, n)
	if err != nil {
		return err
	}
	p, err := d.mem.bytes(dst, n)
	if err != nil {
		return err
	}
	copy(p, s)
	return nil
}

func (d *Device) Memset(dst uint64, pattern []byte, n int) error {
	p, err := d.mem.bytes(dst, n*len(pattern))
	if err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		copy(p[i*len(pattern):], pattern)
	}
	return nil
}

func (d *Device) Synchronize() error { return nil }

// EncodeTensorMap checks the descriptor as cuTensorMapEncodeTiled would and
// records it; the 128 bytes carry a magic word and its index.
func (d *Device) EncodeTensorMap(td *cuda.TiledDesc) ([]byte, error) {
	if err := cuda.ValidateTiled(td); err != nil {
		return nil, err
	}
	c := *td
	c.Dims = append([]uint64(nil), td.Dims...)
	c.Strides = append([]uint64(nil), td.Strides...)
	c.Box = append([]uint32(nil), td.Box...)
	for i, s := range td.ElementStrides {
		if s != 1 {
			return nil, fmt.Errorf("tensor map: element stride %d in dimension %d is not emulated (only 1)", s, i)
		}
	}
	if td.Interleave != cuda.InterleaveNone {
		return nil, fmt.Errorf("tensor map: interleaved layouts are not emulated")
	}
	d.mu.Lock()
	d.maps = append(d.maps, &tensorMap{d: c, esize: td.DataType.Size(), index: len(d.maps)})
	idx := len(d.maps)
	d.mu.Unlock()
	b := make([]byte, 128)
	binary.LittleEndian.PutUint64(b, tensorMapMagic)
	binary.LittleEndian.PutUint64(b[8:], uint64(idx))
	return b, nil
}

// Tensor maps reach kernels as pointers to their parameter bytes; the
// emulator's pointer value for map i is tensorMapSpace | i.
const tensorMapSpace = 0xE000_0000_0000_0000

func (d *Device) tensorMapAt(addr uint64) *tensorMap {
	if addr&tensorMapSpace != tensorMapSpace {
		return nil
	}
	i := int(addr &^ tensorMapSpace)
	d.mu.Lock()
	defer d.mu.Unlock()
	if i < 1 || i > len(d.maps) {
		return nil
	}
	return d.maps[i-1]
}

func (d *Device) kernel(name string) (*kernel, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if k, ok := d.kernels[name]; ok {
		return k, nil
	}
	var fn *ir.Operation
	ir.Walk(d.module, func(op *ir.Operation) ir.WalkResult {
		if op.Name() == gpu.Func && op.SymbolName() == name {
			fn = op
			return ir.Interrupt
		}
		return ir.Advance
	})
	if fn == nil {
		return nil, fmt.Errorf("no kernel @%s in the module", name)
	}
	k, err := compileKernel(fn)
	if err != nil {
		return nil, err
	}
	d.kernels[name] = k
	return k, nil
}

// params turns the launch's parameter bytes back into the kernel's
// argument values (the kernel ABI, in reverse).
func (d *Device) params(k *kernel, raw [][]byte) ([]any, error) {
	ps, err := kernelabi.Params(k.params, true, nil)
	if err != nil {
		return nil, err
	}
	if len(ps) != len(raw) {
		return nil, fmt.Errorf("%d parameter values for %d parameters", len(raw), len(ps))
	}
	args := make([]any, len(k.params))
	for i, p := range ps {
		b := raw[i]
		u64 := func() int64 {
			if len(b) < 8 {
				return 0
			}
			return int64(binary.LittleEndian.Uint64(b))
		}
		switch p.Role {
		case kernelabi.RoleBase:
			mt := k.params[p.Arg].(*ir.MemRefType)
			strides, offset, _ := mt.StridesAndOffset()
			m := &memref{space: spaceGlobal, base: uint64(u64()), offset: offset, sizes: append([]int64(nil), mt.Shape()...),
				strides: append([]int64(nil), strides...), elem: mt.Elem, esize: elemSize(mt.Elem)}
			args[p.Arg] = m
		case kernelabi.RoleOffset:
			args[p.Arg].(*memref).offset = u64()
		case kernelabi.RoleSize:
			args[p.Arg].(*memref).sizes[p.Dim] = u64()
		case kernelabi.RoleStride:
			args[p.Arg].(*memref).strides[p.Dim] = u64()
		case kernelabi.RoleTensorMap:
			if len(b) < 16 || binary.LittleEndian.Uint64(b) != tensorMapMagic {
				return nil, fmt.Errorf("parameter %s is not a tensor map encoded by this device", p.Name)
			}
			args[p.Arg] = ptr{space: spaceGeneric, addr: tensorMapSpace | binary.LittleEndian.Uint64(b[8:]), cta: -1}
		case kernelabi.RoleScalar:
			t := k.params[p.Arg]
			var raw uint64
			switch len(b) {
			case 1:
				raw = uint64(b[0])
			case 2:
				raw = uint64(binary.LittleEndian.Uint16(b))
			case 4:
				raw = uint64(binary.LittleEndian.Uint32(b))
			case 8:
				raw = binary.LittleEndian.Uint64(b)
			}
			if ft, ok := t.(*ir.FloatType); ok {
				args[p.Arg] = ir.FloatFromBits(raw, ft.Kind)
			} else {
				args[p.Arg] = wrap(int64(raw), t)
			}
		}
	}
	return args, nil
}

// Launch runs every block of the launch (the blocks of a cluster
// together, under one scheduler); the first fault stops it and is returned
// (an *Error, with the block named).
func (d *Device) Launch(l *plan.Launch) error {
	k, err := d.kernel(l.Kernel)
	if err != nil {
		return err
	}
	args, err := d.params(k, l.Params)
	if err != nil {
		return fmt.Errorf("kernel %s: %v", l.Kernel, err)
	}
	defer d.printed.flush(os.Stderr)
	g, bd := l.Grid, l.Block
	cl := [3]int{max(l.Cluster[0], 1), max(l.Cluster[1], 1), max(l.Cluster[2], 1)}
	for i := range 3 {
		if g[i]%cl[i] != 0 {
			return fmt.Errorf("kernel %s: the grid %v is not a whole number of clusters %v", l.Kernel, g, cl)
		}
	}
	nthreads := bd[0] * bd[1] * bd[2]
	if nthreads <= 0 || nthreads > 1024 {
		return fmt.Errorf("kernel %s: %d threads per block", l.Kernel, nthreads)
	}
	nclusters := (g[0] / cl[0]) * (g[1] / cl[1]) * (g[2] / cl[2])
	workers := d.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	var (
		mu    sync.Mutex
		first error
		next  int
		wg    sync.WaitGroup
		done  atomic.Int64 // blocks
	)
	stop := new(atomic.Bool)
	d.stop.Store(stop)
	csize := cl[0] * cl[1] * cl[2]
	finished := make(chan struct{})
	go d.watch(l.Kernel, time.Now(), stop, &done, nclusters*csize, finished)
	for w := 0; w < min(workers, nclusters); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				if first != nil || next >= nclusters || stop.Load() {
					mu.Unlock()
					return
				}
				i := next
				next++
				mu.Unlock()
				ng := [3]int{g[0] / cl[0], g[1] / cl[1], g[2] / cl[2]}
				cid := [3]int{i % ng[0], i / ng[0] % ng[1], i / (ng[0] * ng[1])}
				if err := d.runCluster(k, l, args, cid, cl); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				} else {
					done.Add(int64(csize))
				}
			}
		}()
	}
	wg.Wait()
	close(finished)
	if n := int(done.Load()); stop.Load() && (first == nil || first == errStopped) && n < nclusters*csize {
		return &TimeoutError{Kernel: l.Kernel, Done: n, Running: next*csize - n, Total: nclusters * csize, Timeout: d.Timeout}
	}
	return first
}

// runCluster runs the blocks of cluster cid (cl blocks per cluster; one
// block without clusters).
func (d *Device) runCluster(k *kernel, l *plan.Launch, args []any, cid, cl [3]int) error {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d/%s/%v", d.seed, l.Kernel, cid)
	b := &blockRun{
		dev: d, k: k, params: args,
		grid:  [3]int64{int64(l.Grid[0]), int64(l.Grid[1]), int64(l.Grid[2])},
		bdim:  [3]int64{int64(l.Block[0]), int64(l.Block[1]), int64(l.Block[2])},
		cdim:  [3]int64{int64(cl[0]), int64(cl[1]), int64(cl[2])},
		cid:   [3]int64{int64(cid[0]), int64(cid[1]), int64(cid[2])},
		rng:   rand.New(rand.NewSource(int64(h.Sum64()))),
		yield: make(chan struct{}),

		kernel:       l.Kernel,
		clusterIndex: cid[0] + l.Grid[0]/cl[0]*(cid[1]+l.Grid[1]/cl[1]*cid[2]),
	}
	n := l.Block[0] * l.Block[1] * l.Block[2]
	for r := 0; r < cl[0]*cl[1]*cl[2]; r++ {
		c := &cta{
			rank: r,
			bid:  [3]int64{int64(cid[0]*cl[0] + r%cl[0]), int64(cid[1]*cl[1] + r/cl[0]%cl[1]), int64(cid[2]*cl[2] + r/(cl[0]*cl[1]))},
			smem: make([]byte, l.SharedBytes), bars: map[uint64]*mbarrier{}, named: map[int64]*namedBarrier{}, warps: map[int][]*warpColl{}, invalidated: map[uint64]*ir.Operation{},
		}
		b.ctas = append(b.ctas, c)
		for i := 0; i < n; i++ {
			t := &thread{
				b: b, c: c, linear: i, vals: make([]any, k.nvals), resume: make(chan struct{}), clusterGen: -1,
				tid: [3]int64{int64(i % l.Block[0]), int64(i / l.Block[0] % l.Block[1]), int64(i / (l.Block[0] * l.Block[1]))},
			}
			c.threads = append(c.threads, t)
			b.threads = append(b.threads, t)
		}
	}
	if k.sharedAccess {
		b.race = newRaceDetector(b)
		defer b.race.done()
	}
	if err := b.run(); err != nil {
		if err == errStopped {
			return err
		}
		c := b.ctas[0]
		if len(b.ctas) > 1 {
			err.Msg = fmt.Sprintf("kernel %s, cluster of blocks from (%d, %d, %d): %s", l.Kernel, c.bid[0], c.bid[1], c.bid[2], err.Msg)
		} else {
			err.Msg = fmt.Sprintf("kernel %s, block (%d, %d, %d): %s", l.Kernel, c.bid[0], c.bid[1], c.bid[2], err.Msg)
		}
		return err
	}
	return nil
}

// Kernels lists the gpu.func kernels of a module (for diagnostics).
func Kernels(module *ir.Operation) []string {
	var out []string
	ir.Walk(module, func(op *ir.Operation) ir.WalkResult {
		if _, ok := op.Attr("gpu.kernel").(*ir.UnitAttr); ok && op.Name() == gpu.Func {
			out = append(out, op.SymbolName())
		}
		return ir.Advance
	})
	return out
}
