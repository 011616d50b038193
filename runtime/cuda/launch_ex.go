package cuda

import (
	"fmt"
	"runtime"
	"unsafe"
)

// Driver calls used by tmac run's host plan beyond driver.go's:
// cuLaunchKernelEx and cuOccupancyMaxActiveClusters (thread block
// clusters), cuEventQuery (the watchdog), device-to-device copies and
// 16/32-bit memsets.

var exAPI struct {
	cuLaunchKernelEx             func(cfg *launchConfig, f Function, params *unsafe.Pointer, extra *unsafe.Pointer) Result
	cuOccupancyMaxActiveClusters func(n *int32, f Function, cfg *launchConfig) Result
	cuEventQuery                 func(e Event) Result
	cuMemcpyDtoD                 func(dst, src DevicePtr, n uint64) Result
	cuMemsetD16                  func(dst DevicePtr, v uint16, n uint64) Result
	cuMemsetD32                  func(dst DevicePtr, v uint32, n uint64) Result
}

var exSyms = lateSymbols{syms: []symbol{
	{&exAPI.cuLaunchKernelEx, "cuLaunchKernelEx"},
	{&exAPI.cuOccupancyMaxActiveClusters, "cuOccupancyMaxActiveClusters"},
	{&exAPI.cuEventQuery, "cuEventQuery"},
	{&exAPI.cuMemcpyDtoD, "cuMemcpyDtoD_v2"},
	{&exAPI.cuMemsetD16, "cuMemsetD16_v2"},
	{&exAPI.cuMemsetD32, "cuMemsetD32_v2"},
}}

// launchAttribute is a CUlaunchAttribute: a 4-byte id, 4 bytes of padding
// and a 64-byte value union.
type launchAttribute struct {
	ID    uint32
	_     uint32
	Value [64]byte
}

// launchConfig is a CUlaunchConfig.
type launchConfig struct {
	GridX, GridY, GridZ    uint32
	BlockX, BlockY, BlockZ uint32
	SharedMemBytes         uint32
	_                      uint32
	Stream                 Stream
	Attrs                  *launchAttribute
	NumAttrs               uint32
	_                      uint32
}

const launchAttributeClusterDimension = 4

// clusterConfig returns the pinned launch configuration of a launch with
// thread block clusters (CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION).
func clusterConfig(pin *runtime.Pinner, grid, block, cluster Dim3, sharedBytes int) *launchConfig {
	attr := &launchAttribute{ID: launchAttributeClusterDimension}
	*(*[3]uint32)(unsafe.Pointer(&attr.Value[0])) = [3]uint32{uint32(cluster.X), uint32(cluster.Y), uint32(cluster.Z)}
	pin.Pin(attr)
	cfg := &launchConfig{
		GridX: uint32(grid.X), GridY: uint32(grid.Y), GridZ: uint32(grid.Z),
		BlockX: uint32(block.X), BlockY: uint32(block.Y), BlockZ: uint32(block.Z),
		SharedMemBytes: uint32(sharedBytes), Attrs: attr, NumAttrs: 1,
	}
	pin.Pin(cfg)
	return cfg
}

// LaunchEx runs f like Launch, with a thread block cluster of the given
// size (cuLaunchKernelEx with CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION).
func LaunchEx(f Function, grid, block, cluster Dim3, sharedBytes int, params []unsafe.Pointer) error {
	if err := exSyms.load(); err != nil {
		return err
	}
	var pin runtime.Pinner
	defer pin.Unpin()
	cfg := clusterConfig(&pin, grid, block, cluster, sharedBytes)
	return check("cuLaunchKernelEx", exAPI.cuLaunchKernelEx(cfg, f, pinParams(&pin, params), nil))
}

// MaxActiveClusters returns how many clusters of the given launch of f
// the device can run at once (cuOccupancyMaxActiveClusters); 0 means it
// cannot run one cluster of that size at all.
func MaxActiveClusters(f Function, grid, block, cluster Dim3, sharedBytes int) (int, error) {
	if err := exSyms.load(); err != nil {
		return 0, err
	}
	var pin runtime.Pinner
	defer pin.Unpin()
	cfg := clusterConfig(&pin, grid, block, cluster, sharedBytes)
	var n int32
	err := check("cuOccupancyMaxActiveClusters", exAPI.cuOccupancyMaxActiveClusters(&n, f, cfg))
	return int(n), err
}

// AllowNonPortableClusterSize lets f be launched with clusters of more
// than the portable 8 blocks (up to 16 on sm_90): cuFuncSetAttribute with
// CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, which is 14 in
// cuda.h's CUfunction_attribute. (Upstream's mgpuLaunchClusterKernel in
// MLIR 22 does not make this call, so its 16-block sm90 test needs it
// from elsewhere.)
func (f Function) AllowNonPortableClusterSize() error {
	const nonPortableClusterSizeAllowed = 14
	return check("cuFuncSetAttribute", api.cuFuncSetAttribute(f, nonPortableClusterSizeAllowed, 1))
}

// Done reports whether all work recorded before e has finished
// (cuEventQuery: CUDA_ERROR_NOT_READY means not yet).
func (e Event) Done() (bool, error) {
	if err := exSyms.load(); err != nil {
		return false, err
	}
	const notReady = 600
	r := exAPI.cuEventQuery(e)
	if r == notReady {
		return false, nil
	}
	return true, check("cuEventQuery", r)
}

// Destroy releases the event.
func (e Event) Destroy() error { return check("cuEventDestroy", api.cuEventDestroy(e)) }

// CopyDeviceToDevice copies n bytes between device buffers.
func CopyDeviceToDevice(dst, src DevicePtr, n int) error {
	if err := exSyms.load(); err != nil {
		return err
	}
	return check("cuMemcpyDtoD", exAPI.cuMemcpyDtoD(dst, src, uint64(n)))
}

// MemsetPattern fills n elements of len(pattern) bytes (1, 2 or 4) at dst.
func MemsetPattern(dst DevicePtr, pattern []byte, n int) error {
	if err := exSyms.load(); err != nil {
		return err
	}
	switch len(pattern) {
	case 1:
		return Memset(dst, pattern[0], n)
	case 2:
		return check("cuMemsetD16", exAPI.cuMemsetD16(dst, uint16(pattern[0])|uint16(pattern[1])<<8, uint64(n)))
	case 4:
		v := uint32(pattern[0]) | uint32(pattern[1])<<8 | uint32(pattern[2])<<16 | uint32(pattern[3])<<24
		return check("cuMemsetD32", exAPI.cuMemsetD32(dst, v, uint64(n)))
	}
	return fmt.Errorf("memset of %d-byte elements is not supported", len(pattern))
}
