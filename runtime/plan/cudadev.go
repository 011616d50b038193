package plan

import (
	"fmt"
	"time"
	"unsafe"

	"github.com/tmac-dev/tmac/internal/sm90"
	"github.com/tmac-dev/tmac/runtime/cuda"
)

// CUDA is the Device of a real GPU: the kernels of one PTX module.
type CUDA struct {
	Module    cuda.Module
	funcs     map[string]cuda.Function
	smemSet   map[string]int
	Timeout   time.Duration
	maps      []*cuda.TensorMap // kept alive until the launches finish
	LastEvent cuda.Event

	// TimeKernels makes Launch bracket every launch with CUDA events and
	// add the kernel's GPU time to KernelSeconds (for --bench: the time of
	// the kernels alone, without the host plan between them).
	TimeKernels   bool
	KernelSeconds float64
	timing        [2]cuda.Event

	// QueueKernels makes Launch record events around every launch without
	// waiting for them (QueuedRun tags the launches of one run; Queued
	// reads the times back once the queue has drained). While it is set
	// the host must not wait for the device, or the launches it queues
	// behind the GPU spin would each wait for the one before: Synchronize
	// returns at once (all work is on one stream, so the device still runs
	// it in order) and Free is deferred until FreeDeferred (cuMemFree
	// waits for the device; the memory of every queued run stays
	// allocated until then).
	QueueKernels bool
	queued       []queuedLaunch
	queueRun     int
	eventPool    []cuda.Event
	deferredFree []uint64

	allocs map[uint64]bool // live allocations, for Release

	// clustersChecked holds the non-portable cluster launches already
	// allowed and checked to fit, by kernel and configuration.
	clustersChecked map[string]bool
}

// NewCUDA loads PTX on the current context.
func NewCUDA(ptx string) (*CUDA, error) {
	m, err := cuda.LoadPTX(ptx)
	if err != nil {
		return nil, err
	}
	return &CUDA{Module: m, funcs: map[string]cuda.Function{}, smemSet: map[string]int{}, clustersChecked: map[string]bool{}, allocs: map[uint64]bool{}}, nil
}

func (c *CUDA) Alloc(n int) (uint64, error) {
	p, err := cuda.Alloc(n)
	if err == nil {
		c.allocs[uint64(p)] = true
	}
	return uint64(p), err
}
func (c *CUDA) Free(p uint64) error {
	if c.QueueKernels {
		c.deferredFree = append(c.deferredFree, p)
		return nil
	}
	delete(c.allocs, p)
	return cuda.Free(cuda.DevicePtr(p))
}

// FreeDeferred frees what Free deferred while QueueKernels was set; call
// it once the queued launches have finished.
func (c *CUDA) FreeDeferred() error {
	var first error
	for _, p := range c.deferredFree {
		if err := c.Free(p); err != nil && first == nil {
			first = err
		}
	}
	c.deferredFree = nil
	return first
}

// Release frees the allocations still live, the timing events and the
// module, for a process that goes on to run other programs (tmac tune
// run). Call it only when no launch is running: freeing waits for the
// device. c must not be used afterwards.
func (c *CUDA) Release() error {
	var first error
	keep := func(err error) {
		if first == nil {
			first = err
		}
	}
	if err := cuda.Synchronize(); err != nil {
		return err
	}
	for p := range c.allocs {
		keep(cuda.Free(cuda.DevicePtr(p)))
	}
	c.allocs = map[uint64]bool{}
	for i, e := range c.timing {
		if e != 0 {
			keep(e.Destroy())
			c.timing[i] = 0
		}
	}
	for _, e := range append(c.eventPool, c.queuedEvents()...) {
		keep(e.Destroy())
	}
	c.eventPool, c.queued = nil, nil
	c.maps = nil
	c.funcs = map[string]cuda.Function{}
	keep(c.Module.Unload())
	return first
}
func (c *CUDA) CopyToDevice(dst uint64, src []byte) error {
	return cuda.CopyToDevice(cuda.DevicePtr(dst), src)
}
func (c *CUDA) CopyToHost(dst []byte, src uint64) error {
	return cuda.CopyToHost(dst, cuda.DevicePtr(src))
}
func (c *CUDA) CopyDeviceToDevice(dst, src uint64, n int) error {
	return cuda.CopyDeviceToDevice(cuda.DevicePtr(dst), cuda.DevicePtr(src), n)
}
func (c *CUDA) Memset(dst uint64, pattern []byte, n int) error {
	if len(pattern) == 8 {
		// No 64-bit memset in the driver: fill on the host and copy.
		buf := make([]byte, 8*n)
		for i := 0; i < n; i++ {
			copy(buf[8*i:], pattern)
		}
		return cuda.CopyToDevice(cuda.DevicePtr(dst), buf)
	}
	return cuda.MemsetPattern(cuda.DevicePtr(dst), pattern, n)
}
func (c *CUDA) EncodeTensorMap(d *cuda.TiledDesc) ([]byte, error) {
	m, err := cuda.EncodeTiled(d)
	if err != nil {
		return nil, err
	}
	c.maps = append(c.maps, m)
	return m.Bytes(), nil
}
func (c *CUDA) Synchronize() error {
	if c.QueueKernels {
		return nil
	}
	return cuda.Synchronize()
}

// Function returns the kernel named name.
func (c *CUDA) Function(name string) (cuda.Function, error) {
	if f, ok := c.funcs[name]; ok {
		return f, nil
	}
	f, err := c.Module.Function(name)
	if err != nil {
		return 0, err
	}
	c.funcs[name] = f
	return f, nil
}

// Launch launches l: cuLaunchKernelEx with a cluster, cuLaunchKernel
// otherwise; dynamic shared memory is allowed with cuFuncSetAttribute
// first (needed above 48 KB of static + dynamic shared memory, so set for
// any amount: the kernel's static barriers count toward that 48 KB).
func (c *CUDA) Launch(l *Launch) error {
	f, err := c.Function(l.Kernel)
	if err != nil {
		return err
	}
	if l.SharedBytes > 0 && c.smemSet[l.Kernel] < l.SharedBytes {
		if err := f.SetMaxDynamicSharedMemory(l.SharedBytes); err != nil {
			return fmt.Errorf("kernel %s: %d bytes of dynamic shared memory: %v", l.Kernel, l.SharedBytes, err)
		}
		c.smemSet[l.Kernel] = l.SharedBytes
	}
	if err := c.allowNonPortableCluster(f, l); err != nil {
		return err
	}
	params := make([]unsafe.Pointer, len(l.Params))
	for i, p := range l.Params {
		if len(p) == 0 {
			p = make([]byte, 8)
		}
		params[i] = unsafe.Pointer(&p[0])
	}
	launch := func() error {
		if l.Cluster != [3]int{} {
			err := cuda.LaunchEx(f, dim3(l.Grid), dim3(l.Block), dim3(l.Cluster), l.SharedBytes, params)
			if err != nil && nonPortable(l) {
				cl := l.Cluster
				err = fmt.Errorf("kernel %s: launch in clusters of %d blocks (%d x %d x %d), over the portable 8: %v", l.Kernel, cl[0]*cl[1]*cl[2], cl[0], cl[1], cl[2], err)
			}
			return err
		}
		return cuda.Launch(f, dim3(l.Grid), dim3(l.Block), l.SharedBytes, params)
	}
	if c.QueueKernels {
		return c.launchQueued(launch)
	}
	if !c.TimeKernels {
		return launch()
	}
	for i := range c.timing {
		if c.timing[i] == 0 {
			if c.timing[i], err = cuda.NewEvent(); err != nil {
				return err
			}
		}
	}
	if err := c.timing[0].Record(); err != nil {
		return err
	}
	if err := launch(); err != nil {
		return err
	}
	if err := c.timing[1].Record(); err != nil {
		return err
	}
	ms, err := cuda.ElapsedMs(c.timing[0], c.timing[1])
	if err != nil {
		return fmt.Errorf("kernel %s: %v", l.Kernel, err)
	}
	c.KernelSeconds += float64(ms) * 1e-3
	return nil
}

// allowNonPortableCluster opts f in to non-portable cluster sizes when l
// asks for them and, for a cluster of more than the portable 8 blocks,
// asks the driver whether one such cluster fits on the GPU at all (once
// per kernel and configuration), so that a size the GPU cannot run is
// reported as that rather than as a failed launch.
func (c *CUDA) allowNonPortableCluster(f cuda.Function, l *Launch) error {
	if !l.NonPortableCluster {
		return nil
	}
	key := fmt.Sprint(l.Kernel, l.Grid, l.Block, l.Cluster, l.SharedBytes)
	if c.clustersChecked[key] {
		return nil
	}
	if err := f.AllowNonPortableClusterSize(); err != nil {
		return fmt.Errorf("kernel %s: allowing non-portable cluster sizes: %v", l.Kernel, err)
	}
	if cl := l.Cluster; nonPortable(l) {
		blocks := cl[0] * cl[1] * cl[2]
		n, err := cuda.MaxActiveClusters(f, dim3(l.Grid), dim3(l.Block), dim3(cl), l.SharedBytes)
		if err != nil {
			return fmt.Errorf("kernel %s: clusters of %d blocks (%d x %d x %d): %v", l.Kernel, blocks, cl[0], cl[1], cl[2], err)
		}
		if n == 0 {
			return fmt.Errorf("kernel %s: this GPU cannot run clusters of %d blocks (%d x %d x %d) of %d threads and %d bytes of dynamic shared memory each (cuOccupancyMaxActiveClusters is 0); use smaller clusters or blocks", l.Kernel, blocks, cl[0], cl[1], cl[2], l.Block[0]*l.Block[1]*l.Block[2], l.SharedBytes)
		}
	}
	c.clustersChecked[key] = true
	return nil
}

func dim3(v [3]int) cuda.Dim3 { return cuda.Dim3{X: v[0], Y: v[1], Z: v[2]} }

// nonPortable reports whether l runs in clusters of more than the
// portable 8 blocks.
func nonPortable(l *Launch) bool {
	return l.Cluster[0]*l.Cluster[1]*l.Cluster[2] > sm90.MaxPortableClusterBlocks
}

// queuedLaunch is one launch of a queued timing pass: its run and the
// events recorded before and after it.
type queuedLaunch struct {
	run        int
	start, end cuda.Event
}

// QueuedRun starts run r of a queued timing pass (r = 0 starts the pass).
func (c *CUDA) QueuedRun(r int) {
	if r == 0 {
		c.eventPool = append(c.eventPool, c.queuedEvents()...)
		c.queued = c.queued[:0]
	}
	c.queueRun = r
}

func (c *CUDA) queuedEvents() []cuda.Event {
	var es []cuda.Event
	for _, q := range c.queued {
		es = append(es, q.start, q.end)
	}
	return es
}

// ReserveEvents creates events until n are pooled for queued launches,
// so that a queued pass does not create them while it queues.
func (c *CUDA) ReserveEvents(n int) error {
	c.eventPool = append(c.eventPool, c.queuedEvents()...)
	c.queued = c.queued[:0]
	for len(c.eventPool) < n {
		e, err := cuda.NewEvent()
		if err != nil {
			return err
		}
		c.eventPool = append(c.eventPool, e)
	}
	return nil
}

func (c *CUDA) event() (cuda.Event, error) {
	if n := len(c.eventPool); n > 0 {
		e := c.eventPool[n-1]
		c.eventPool = c.eventPool[:n-1]
		return e, nil
	}
	return cuda.NewEvent()
}

func (c *CUDA) launchQueued(launch func() error) error {
	start, err := c.event()
	if err != nil {
		return err
	}
	end, err := c.event()
	if err != nil {
		return err
	}
	if err := start.Record(); err != nil {
		return err
	}
	if err := launch(); err != nil {
		return err
	}
	if err := end.Record(); err != nil {
		return err
	}
	c.queued = append(c.queued, queuedLaunch{c.queueRun, start, end})
	return nil
}

// Queued returns the GPU seconds of each run of the last queued pass (the
// sum of its launches), waiting for the events; runs is their number.
func (c *CUDA) Queued(runs int) ([]float64, error) {
	out := make([]float64, runs)
	for _, q := range c.queued {
		ms, err := cuda.ElapsedMs(q.start, q.end)
		if err != nil {
			return nil, err
		}
		if q.run >= 0 && q.run < runs {
			out[q.run] += float64(ms) * 1e-3
		}
	}
	return out, nil
}

// DeadlockError is a launch that did not finish within the watchdog's
// timeout.
type DeadlockError struct {
	Kernel  string
	Timeout time.Duration
}

func (e *DeadlockError) Error() string {
	return fmt.Sprintf("kernel %s did not finish in %g s; a common cause is an mbarrier waited on with the wrong phase or an expect_tx count that does not match the bytes loaded", e.Kernel, e.Timeout.Seconds())
}

// Wait waits for the work queued so far, polling an event, and returns a
// *DeadlockError if it does not finish within the timeout (zero: wait
// forever).
func (c *CUDA) Wait(kernel string) error {
	e, err := cuda.NewEvent()
	if err != nil {
		return err
	}
	defer e.Destroy()
	if err := e.Record(); err != nil {
		return err
	}
	start := time.Now()
	sleep := 20 * time.Microsecond
	for {
		done, err := e.Done()
		if err != nil {
			return fmt.Errorf("kernel %s: %v", kernel, err)
		}
		if done {
			return nil
		}
		if c.Timeout > 0 && time.Since(start) > c.Timeout {
			return &DeadlockError{Kernel: kernel, Timeout: c.Timeout}
		}
		time.Sleep(sleep)
		if sleep < time.Millisecond {
			sleep *= 2
		}
	}
}
