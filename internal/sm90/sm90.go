// Package sm90 holds the limits of Hopper (sm_90a) that tmac checks
// kernels and launches against, at compile time where the sizes are
// constants and before every launch where they are not, so a launch that
// cannot run is a diagnostic rather than a driver error code.
package sm90

import (
	"fmt"
	"math"

	"github.com/tmac-dev/tmac/ir"
)

const (
	MaxThreadsPerBlock = 1024
	MaxBlockDimXY      = 1024 // block x and y
	MaxBlockDimZ       = 64
	MaxGridDimX        = 1<<31 - 1
	MaxGridDimYZ       = 65535
	// MaxPortableClusterBlocks is the portable cluster size: every GPU of
	// compute capability 9.0 and later runs clusters this large.
	MaxPortableClusterBlocks = 8
	// MaxClusterBlocks is Hopper's largest cluster, allowed only to a
	// launch that opts in to non-portable cluster sizes (the driver's
	// CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED).
	MaxClusterBlocks = 16
	// MaxSharedBytesPerBlock is 227 KB: static plus dynamic shared memory.
	MaxSharedBytesPerBlock = 232448
	// MaxStaticSharedBytesPerBlock is the statically allocated shared
	// memory a block can have (48 KB); more must be dynamic.
	MaxStaticSharedBytesPerBlock = 48 << 10
	// MaxLocalBytesPerThread is the local (private) memory a thread can
	// have: 512 KB. A vector value or a private buffer larger than that
	// cannot exist in a kernel.
	MaxLocalBytesPerThread = 512 << 10
)

// Unknown stands for a size that is not known (not a constant at compile
// time); it is not checked. (It is not -1: a constant -1 is a size that
// cannot run, and must be reported.)
const Unknown = math.MinInt64

// NonPortableClusterAttr is the attribute with which a gpu.launch or
// gpu.launch_func opts in to clusters of more than
// MaxPortableClusterBlocks blocks: `{nonPortableClusterSize = true}`, as
// upstream MLIR's sm90 test non-portable-cluster-launch.mlir writes it
// (mlir-opt 22 keeps it as a discardable attribute).
const NonPortableClusterAttr = "nonPortableClusterSize"

// NonPortableCluster reports whether launch op opts in to non-portable
// cluster sizes; an attribute that is not a boolean is an error.
func NonPortableCluster(op *ir.Operation) (bool, error) {
	a := op.Attr(NonPortableClusterAttr)
	if a == nil {
		return false, nil
	}
	if !ir.IsBool(a) {
		return false, fmt.Errorf("%s must be true or false, not %s", NonPortableClusterAttr, a)
	}
	v, _ := ir.AttrInt(a)
	return v != 0, nil
}

// Launch is a launch configuration; a zero cluster means no cluster. A
// size that is not known is Unknown and is not checked.
// NonPortableCluster is the launch's opt-in to clusters of up to
// MaxClusterBlocks blocks.
type Launch struct {
	Grid, Block, Cluster [3]int64
	DynamicSharedBytes   int64
	NonPortableCluster   bool
}

// Check returns what makes the launch impossible on sm_90, or nil.
func (l Launch) Check() error {
	axes := "xyz"
	if err := checkAxes("grid", l.Grid, [3]int64{MaxGridDimX, MaxGridDimYZ, MaxGridDimYZ}); err != nil {
		return err
	}
	if err := checkAxes("block", l.Block, [3]int64{MaxBlockDimXY, MaxBlockDimXY, MaxBlockDimZ}); err != nil {
		return err
	}
	if threads, known := knownProduct(l.Block); known && threads > MaxThreadsPerBlock {
		return fmt.Errorf("%d threads per block (%d x %d x %d), over the limit of %d", threads, l.Block[0], l.Block[1], l.Block[2], MaxThreadsPerBlock)
	}
	if d := l.DynamicSharedBytes; d != Unknown && (d < 0 || d > MaxSharedBytesPerBlock) {
		return fmt.Errorf("%d bytes of dynamic shared memory, outside [0, %d]", d, MaxSharedBytesPerBlock)
	}
	if l.Cluster == [3]int64{} {
		return nil
	}
	for i, c := range l.Cluster {
		if c == Unknown {
			continue
		}
		if c < 1 {
			return fmt.Errorf("cluster size %c = %d must be positive", axes[i], c)
		}
		if g := l.Grid[i]; g != Unknown && g%c != 0 {
			return fmt.Errorf("grid size %c = %d is not a multiple of the cluster size %d", axes[i], g, c)
		}
	}
	blocks, known := knownProduct(l.Cluster)
	switch {
	case !known || blocks <= MaxPortableClusterBlocks:
	case blocks > MaxClusterBlocks:
		return fmt.Errorf("clusters of %d blocks (%d x %d x %d), over sm_90's limit of %d", blocks, l.Cluster[0], l.Cluster[1], l.Cluster[2], MaxClusterBlocks)
	case !l.NonPortableCluster:
		return fmt.Errorf("clusters of %d blocks (%d x %d x %d), over the portable limit of %d; up to %d need the launch to opt in with {%s = true}", blocks, l.Cluster[0], l.Cluster[1], l.Cluster[2], MaxPortableClusterBlocks, MaxClusterBlocks, NonPortableClusterAttr)
	}
	return nil
}

// knownProduct returns the product of the three sizes and whether all of
// them are known.
func knownProduct(sizes [3]int64) (int64, bool) {
	p := int64(1)
	for _, n := range sizes {
		if n == Unknown {
			return 0, false
		}
		p *= n
	}
	return p, true
}

// checkAxes checks each known size of a launch dimension (grid or block)
// against [1, its axis's limit].
func checkAxes(what string, sizes, limits [3]int64) error {
	for i, n := range sizes {
		if n != Unknown && (n < 1 || n > limits[i]) {
			return fmt.Errorf("%s size %c = %d is outside [1, %d]", what, "xyz"[i], n, limits[i])
		}
	}
	return nil
}
