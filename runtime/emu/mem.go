package emu

import (
	"fmt"
	"sort"
	"sync"

	"github.com/tmac-dev/tmac/ir"
)

// Address spaces of pointers and memrefs (LLVM NVPTX numbering).
const (
	spaceGeneric = 0
	spaceGlobal  = 1
	spaceShared  = 3
	spaceCluster = 7 // shared::cluster
)

// globalBase is the first device address handed out (nonzero, so a null
// pointer is never a valid allocation).
const globalBase = 0x10_0000_0000

// global is the device's memory: allocations at increasing addresses.
type global struct {
	mu     sync.RWMutex
	allocs []*allocation // sorted by base
	next   uint64
}

type allocation struct {
	base uint64
	data []byte
}

func (g *global) alloc(n int) uint64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.next == 0 {
		g.next = globalBase
	}
	a := &allocation{base: g.next, data: make([]byte, n)}
	g.allocs = append(g.allocs, a)
	// 256-byte aligned, with a gap so an access past the end of one
	// allocation does not land in the next.
	g.next += (uint64(n)+255)/256*256 + 4096
	return a.base
}

func (g *global) free(p uint64) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	for i, a := range g.allocs {
		if a.base == p {
			g.allocs = append(g.allocs[:i], g.allocs[i+1:]...)
			return nil
		}
	}
	return fmt.Errorf("free of %#x, which is not an allocation", p)
}

// bytes returns the n bytes at addr, or an error naming the access if
// they are not all inside one allocation.
func (g *global) bytes(addr uint64, n int) ([]byte, error) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	i := sort.Search(len(g.allocs), func(i int) bool { return g.allocs[i].base > addr }) - 1
	if i >= 0 {
		a := g.allocs[i]
		if off := addr - a.base; off+uint64(n) <= uint64(len(a.data)) {
			return a.data[off : off+uint64(n)], nil
		}
		return nil, fmt.Errorf("global memory access of %d bytes at %#x is out of bounds (allocation of %d bytes at %#x)", n, addr, len(a.data), a.base)
	}
	return nil, fmt.Errorf("global memory access of %d bytes at %#x is outside every allocation", n, addr)
}

// memref is a strided view: of global memory (space 1, base an address)
// or of a block's shared memory (space 3, base a byte offset in it).
type memref struct {
	space   int
	base    uint64
	offset  int64 // elements
	sizes   []int64
	strides []int64 // elements
	elem    ir.Type
	esize   int64
}

// addr is the byte address (global) or offset (shared) of an element.
func (m *memref) addr(idx []int64) (uint64, error) {
	off := m.offset
	for d, i := range idx {
		if i < 0 || (m.sizes[d] >= 0 && i >= m.sizes[d]) {
			return 0, fmt.Errorf("index %d out of bounds for dimension %d of size %d", i, d, m.sizes[d])
		}
		off += i * m.strides[d]
	}
	return m.base + uint64(off*m.esize), nil
}

// ptr is an LLVM pointer value; a shared::cluster pointer made by
// nvvm.mapa names the block (its rank in the cluster, cta >= 0).
type ptr struct {
	space int
	addr  uint64
	cta   int // -1: none (this block's)
}

// elemSize is the size in bytes of a memref element type.
func elemSize(t ir.Type) int64 {
	if ir.IsIndex(t) {
		return 8
	}
	return int64((ir.BitWidth(t) + 7) / 8)
}
