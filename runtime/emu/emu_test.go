package emu

import (
	"testing"

	"github.com/tmac-dev/tmac/runtime/cuda"
)

// TestSwizzle checks the shared-memory layout of the TMA swizzles: the
// 16-byte chunk index (address bits 4..) is XORed with the bits from bit 7
// up, over 3, 2 or 1 bits (128, 64, 32-byte swizzle).
func TestSwizzle(t *testing.T) {
	for _, c := range []struct {
		s       cuda.TensorMapSwizzle
		in, out uint64
	}{
		{cuda.SwizzleNone, 0x90, 0x90},
		// 128B: row r of 128 bytes has its chunk c at c ^ (r mod 8).
		{cuda.Swizzle128B, 0x080, 0x090},
		{cuda.Swizzle128B, 0x3f0, 0x380}, // row 7, chunk 7 -> chunk 0
		{cuda.Swizzle128B, 0x400 + 0x105, 0x400 + 0x125},
		{cuda.Swizzle128B, 0x00c, 0x00c},
		// 64B: two bits (row bits 7-8).
		{cuda.Swizzle64B, 0x080, 0x090},
		{cuda.Swizzle64B, 0x100, 0x120},
		{cuda.Swizzle64B, 0x200, 0x200},
		// 32B: one bit (row bit 7).
		{cuda.Swizzle32B, 0x080, 0x090},
		{cuda.Swizzle32B, 0x100, 0x100},
	} {
		if got := swizzle(c.in, c.s); got != c.out {
			t.Errorf("swizzle(%#x, %d) = %#x, want %#x", c.in, c.s, got, c.out)
		}
	}
	// Within one swizzle atom the map is a permutation of the 16-byte chunks.
	for _, s := range []cuda.TensorMapSwizzle{cuda.Swizzle32B, cuda.Swizzle64B, cuda.Swizzle128B} {
		seen := map[uint64]bool{}
		for a := uint64(0); a < 1024; a += 16 {
			seen[swizzle(a, s)] = true
		}
		if len(seen) != 64 {
			t.Errorf("swizzle %d is not a permutation of a 1 KB atom: %d distinct chunks", s, len(seen))
		}
	}
}

func TestThreadList(t *testing.T) {
	for _, c := range []struct {
		ids  []int
		want string
	}{
		{[]int{3}, "thread 3"},
		{[]int{0, 1, 2, 5, 7, 8}, "threads 0-2, 5, 7-8"},
		{[]int{4, 9}, "threads 4, 9"},
		{[]int{0, 2, 4, 6}, "threads 0, 2, ..., 6"},
		{[]int{1, 3, 5, 8}, "threads 1, 3, 5, 8"},
	} {
		if got := threadList(c.ids); got != c.want {
			t.Errorf("threadList(%v) = %q, want %q", c.ids, got, c.want)
		}
	}
}

// TestMbarrierPhases: a phase completes when its arrivals and transaction
// bytes are all in; the next one expects the count again.
func TestMbarrierPhases(t *testing.T) {
	m := &mbarrier{count: 2, pending: 2}
	m.tx += 100
	m.pending--
	m.complete()
	if m.phase != 0 {
		t.Fatalf("completed with an arrival and 100 bytes pending: %v", m)
	}
	m.pending--
	m.complete()
	if m.phase != 0 {
		t.Fatalf("completed with 100 bytes pending: %v", m)
	}
	m.tx -= 100
	m.complete()
	if m.phase != 1 || m.pending != 2 || m.tx != 0 {
		t.Fatalf("after the last bytes: %v", m)
	}
}

// TestGlobalBounds: accesses inside an allocation work, past its end or
// between allocations are reported.
func TestGlobalBounds(t *testing.T) {
	var g global
	a := g.alloc(100)
	b := g.alloc(10)
	if _, err := g.bytes(a+96, 4); err != nil {
		t.Fatal(err)
	}
	if _, err := g.bytes(a+97, 4); err == nil {
		t.Error("an access past the end of an allocation was allowed")
	}
	if _, err := g.bytes(b+10, 1); err == nil {
		t.Error("an access after the last allocation was allowed")
	}
	if _, err := g.bytes(globalBase-8, 4); err == nil {
		t.Error("an access before the first allocation was allowed")
	}
	if err := g.free(a); err != nil {
		t.Fatal(err)
	}
	if _, err := g.bytes(a, 1); err == nil {
		t.Error("an access to freed memory was allowed")
	}
}
