// Package cuda binds the CUDA driver API calls tmac needs, without cgo:
// libcuda.so.1 is opened at run time with github.com/ebitengine/purego, so
// the tmac binary builds with CGO_ENABLED=0 and runs where there is no
// CUDA toolkit, only the driver. Every call is checked; errors carry the
// driver's own name and description of the failure.
package cuda

import (
	"fmt"
	"runtime"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

// Result is a CUresult.
type Result int32

// Handle types of the driver API.
type (
	Device    int32
	Context   uintptr
	Module    uintptr
	Function  uintptr
	DevicePtr uint64
	Stream    uintptr
	Event     uintptr
)

var api struct {
	cuInit                   func(flags uint32) Result
	cuDeviceGet              func(dev *Device, ordinal int32) Result
	cuDeviceGetCount         func(n *int32) Result
	cuDeviceGetName          func(name *byte, n int32, dev Device) Result
	cuDeviceGetAttribute     func(v *int32, attr int32, dev Device) Result
	cuDevicePrimaryCtxRetain func(ctx *Context, dev Device) Result
	cuCtxSetCurrent          func(ctx Context) Result
	cuCtxSynchronize         func() Result
	cuModuleLoadDataEx       func(m *Module, image unsafe.Pointer, n uint32, opts *int32, vals *unsafe.Pointer) Result
	cuModuleUnload           func(m Module) Result
	cuModuleGetFunction      func(f *Function, m Module, name *byte) Result
	cuFuncSetAttribute       func(f Function, attr int32, v int32) Result
	cuMemAlloc               func(p *DevicePtr, size uint64) Result
	cuMemFree                func(p DevicePtr) Result
	cuMemcpyHtoD             func(dst DevicePtr, src unsafe.Pointer, size uint64) Result
	cuMemcpyDtoH             func(dst unsafe.Pointer, src DevicePtr, size uint64) Result
	cuMemsetD8               func(dst DevicePtr, v uint8, n uint64) Result
	cuLaunchKernel           func(f Function, gx, gy, gz, bx, by, bz, smem uint32, s Stream, params *unsafe.Pointer, extra *unsafe.Pointer) Result
	cuEventCreate            func(e *Event, flags uint32) Result
	cuEventRecord            func(e Event, s Stream) Result
	cuEventSynchronize       func(e Event) Result
	cuEventElapsedTime       func(ms *float32, start, end Event) Result
	cuEventDestroy           func(e Event) Result
	cuGetErrorName           func(r Result, s **byte) Result
	cuGetErrorString         func(r Result, s **byte) Result
}

var (
	loadOnce sync.Once
	loadErr  error
	lib      uintptr // the driver, opened by Load
)

// Load opens libcuda.so.1 and resolves the entry points.
func Load() error {
	loadOnce.Do(func() {
		var err error
		lib, err = purego.Dlopen("libcuda.so.1", purego.RTLD_NOW|purego.RTLD_GLOBAL)
		if err != nil {
			loadErr = fmt.Errorf("cannot load the CUDA driver (libcuda.so.1): %v; is an NVIDIA driver installed?", err)
			return
		}
		loadErr = bind("", []symbol{
			{&api.cuInit, "cuInit"},
			{&api.cuDeviceGet, "cuDeviceGet"},
			{&api.cuDeviceGetCount, "cuDeviceGetCount"},
			{&api.cuDeviceGetName, "cuDeviceGetName"},
			{&api.cuDeviceGetAttribute, "cuDeviceGetAttribute"},
			{&api.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain"},
			{&api.cuCtxSetCurrent, "cuCtxSetCurrent"},
			{&api.cuCtxSynchronize, "cuCtxSynchronize"},
			{&api.cuModuleLoadDataEx, "cuModuleLoadDataEx"},
			{&api.cuModuleUnload, "cuModuleUnload"},
			{&api.cuModuleGetFunction, "cuModuleGetFunction"},
			{&api.cuFuncSetAttribute, "cuFuncSetAttribute"},
			{&api.cuMemAlloc, "cuMemAlloc_v2"},
			{&api.cuMemFree, "cuMemFree_v2"},
			{&api.cuMemcpyHtoD, "cuMemcpyHtoD_v2"},
			{&api.cuMemcpyDtoH, "cuMemcpyDtoH_v2"},
			{&api.cuMemsetD8, "cuMemsetD8_v2"},
			{&api.cuLaunchKernel, "cuLaunchKernel"},
			{&api.cuEventCreate, "cuEventCreate"},
			{&api.cuEventRecord, "cuEventRecord"},
			{&api.cuEventSynchronize, "cuEventSynchronize"},
			{&api.cuEventElapsedTime, "cuEventElapsedTime"},
			{&api.cuEventDestroy, "cuEventDestroy_v2"},
			{&api.cuGetErrorName, "cuGetErrorName"},
			{&api.cuGetErrorString, "cuGetErrorString"},
		})
	})
	return loadErr
}

// A symbol is a driver entry point and the function variable it binds.
type symbol struct {
	fn   any
	name string
}

// bind resolves syms in the driver Load opened and registers each in its
// function variable; the error of a missing one ends with why (empty, or
// " (CUDA 12 or newer is needed)").
func bind(why string, syms []symbol) error {
	for _, s := range syms {
		if _, err := purego.Dlsym(lib, s.name); err != nil {
			return fmt.Errorf("the CUDA driver lacks %s%s: %v", s.name, why, err)
		}
		purego.RegisterLibFunc(s.fn, lib, s.name)
	}
	return nil
}

// lateSymbols are entry points of CUDA 12 that only some calls need,
// bound on the first of them (after Load).
type lateSymbols struct {
	once sync.Once
	err  error
	syms []symbol
}

func (l *lateSymbols) load() error {
	l.once.Do(func() {
		if l.err = Load(); l.err == nil {
			l.err = bind(" (CUDA 12 or newer is needed)", l.syms)
		}
	})
	return l.err
}

// Error is a failed driver call.
type Error struct {
	Call   string
	Result Result
}

func (e *Error) Error() string {
	name, desc := "CUDA_ERROR_UNKNOWN", "unknown error"
	var p *byte
	if api.cuGetErrorName != nil && api.cuGetErrorName(e.Result, &p) == 0 && p != nil {
		name = goString(p)
	}
	if api.cuGetErrorString != nil && api.cuGetErrorString(e.Result, &p) == 0 && p != nil {
		desc = goString(p)
	}
	return fmt.Sprintf("%s failed: %s (%d): %s", e.Call, name, e.Result, desc)
}

func check(call string, r Result) error {
	if r != 0 {
		return &Error{call, r}
	}
	return nil
}

func goString(p *byte) string {
	var b []byte
	for q := unsafe.Pointer(p); *(*byte)(q) != 0; q = unsafe.Add(q, 1) {
		b = append(b, *(*byte)(q))
	}
	return string(b)
}

func cString(s string) *byte {
	b := append([]byte(s), 0)
	return &b[0]
}

// Init initialises the driver and makes the primary context of device
// ordinal current on the calling OS thread (locked to this goroutine).
func Init(ordinal int) (Device, error) {
	if err := Load(); err != nil {
		return 0, err
	}
	runtime.LockOSThread()
	if err := check("cuInit", api.cuInit(0)); err != nil {
		return 0, err
	}
	var n int32
	if err := check("cuDeviceGetCount", api.cuDeviceGetCount(&n)); err != nil {
		return 0, err
	}
	if ordinal < 0 || int32(ordinal) >= n {
		return 0, fmt.Errorf("device %d does not exist (this machine has %d CUDA devices)", ordinal, n)
	}
	var dev Device
	if err := check("cuDeviceGet", api.cuDeviceGet(&dev, int32(ordinal))); err != nil {
		return 0, err
	}
	var ctx Context
	if err := check("cuDevicePrimaryCtxRetain", api.cuDevicePrimaryCtxRetain(&ctx, dev)); err != nil {
		return 0, err
	}
	return dev, check("cuCtxSetCurrent", api.cuCtxSetCurrent(ctx))
}

// Name returns the device name.
func (d Device) Name() string {
	buf := make([]byte, 256)
	if api.cuDeviceGetName(&buf[0], int32(len(buf)), d) != 0 {
		return "?"
	}
	return goString(&buf[0])
}

// Attribute returns a device attribute (CU_DEVICE_ATTRIBUTE_*).
func (d Device) Attribute(attr int32) (int, error) {
	var v int32
	err := check("cuDeviceGetAttribute", api.cuDeviceGetAttribute(&v, attr, d))
	return int(v), err
}

// LoadPTX JIT-compiles PTX into a module; the JIT's error log is included
// when it fails.
func LoadPTX(ptx string) (Module, error) {
	const (
		jitErrorLog     = 5
		jitErrorLogSize = 6
	)
	logBuf := make([]byte, 16384)
	opts := []int32{jitErrorLog, jitErrorLogSize}
	// Option values are pointer-sized: the log buffer's address, then its size.
	vals := []uintptr{uintptr(unsafe.Pointer(&logBuf[0])), uintptr(len(logBuf))}
	image := cString(ptx)
	var pin runtime.Pinner
	pin.Pin(image)
	pin.Pin(&logBuf[0])
	pin.Pin(&opts[0])
	pin.Pin(&vals[0])
	defer pin.Unpin()
	var m Module
	r := api.cuModuleLoadDataEx(&m, unsafe.Pointer(image), uint32(len(opts)), &opts[0], (*unsafe.Pointer)(unsafe.Pointer(&vals[0])))
	if r != 0 {
		return 0, fmt.Errorf("%v\n%s", &Error{"cuModuleLoadDataEx", r}, goString(&logBuf[0]))
	}
	return m, nil
}

// Function looks up a kernel by name.
func (m Module) Function(name string) (Function, error) {
	var f Function
	err := check("cuModuleGetFunction("+name+")", api.cuModuleGetFunction(&f, m, cString(name)))
	return f, err
}

// Unload unloads the module; its functions become invalid.
func (m Module) Unload() error { return check("cuModuleUnload", api.cuModuleUnload(m)) }

// SetMaxDynamicSharedMemory allows a kernel more than 48 KB of dynamic
// shared memory.
func (f Function) SetMaxDynamicSharedMemory(bytes int) error {
	const maxDynamicSharedSizeBytes = 8
	return check("cuFuncSetAttribute", api.cuFuncSetAttribute(f, maxDynamicSharedSizeBytes, int32(bytes)))
}

// Alloc allocates device memory.
func Alloc(size int) (DevicePtr, error) {
	var p DevicePtr
	err := check("cuMemAlloc", api.cuMemAlloc(&p, uint64(size)))
	return p, err
}

// Free releases device memory.
func Free(p DevicePtr) error { return check("cuMemFree", api.cuMemFree(p)) }

// CopyToDevice copies a host byte slice to device memory.
func CopyToDevice(dst DevicePtr, src []byte) error {
	if len(src) == 0 {
		return nil
	}
	var pin runtime.Pinner
	pin.Pin(&src[0])
	defer pin.Unpin()
	return check("cuMemcpyHtoD", api.cuMemcpyHtoD(dst, unsafe.Pointer(&src[0]), uint64(len(src))))
}

// CopyToHost copies device memory into a host byte slice.
func CopyToHost(dst []byte, src DevicePtr) error {
	if len(dst) == 0 {
		return nil
	}
	var pin runtime.Pinner
	pin.Pin(&dst[0])
	defer pin.Unpin()
	return check("cuMemcpyDtoH", api.cuMemcpyDtoH(unsafe.Pointer(&dst[0]), src, uint64(len(dst))))
}

// Memset sets n bytes of device memory to v.
func Memset(dst DevicePtr, v byte, n int) error {
	return check("cuMemsetD8", api.cuMemsetD8(dst, v, uint64(n)))
}

// Dim3 is a grid or block size.
type Dim3 struct{ X, Y, Z int }

// Launch runs f with the given parameters, each a pointer to the value of
// one kernel parameter (its bytes are copied by the driver at launch).
func Launch(f Function, grid, block Dim3, sharedBytes int, params []unsafe.Pointer) error {
	var pin runtime.Pinner
	defer pin.Unpin()
	pp := pinParams(&pin, params)
	return check("cuLaunchKernel", api.cuLaunchKernel(f, uint32(grid.X), uint32(grid.Y), uint32(grid.Z),
		uint32(block.X), uint32(block.Y), uint32(block.Z), uint32(sharedBytes), 0, pp, nil))
}

// pinParams pins the kernel parameters and their array for a launch and
// returns the array's address (nil for none).
func pinParams(pin *runtime.Pinner, params []unsafe.Pointer) *unsafe.Pointer {
	if len(params) == 0 {
		return nil
	}
	for _, p := range params {
		pin.Pin(p)
	}
	pin.Pin(&params[0])
	return &params[0]
}

// Synchronize waits for all work on the current context.
func Synchronize() error { return check("cuCtxSynchronize", api.cuCtxSynchronize()) }

// NewEvent creates an event for timing.
func NewEvent() (Event, error) {
	var e Event
	err := check("cuEventCreate", api.cuEventCreate(&e, 0))
	return e, err
}

// Record records the event on the default stream.
func (e Event) Record() error { return check("cuEventRecord", api.cuEventRecord(e, 0)) }

// ElapsedMs returns the milliseconds between two recorded events.
func ElapsedMs(start, end Event) (float32, error) {
	if err := check("cuEventSynchronize", api.cuEventSynchronize(end)); err != nil {
		return 0, err
	}
	var ms float32
	err := check("cuEventElapsedTime", api.cuEventElapsedTime(&ms, start, end))
	return ms, err
}
