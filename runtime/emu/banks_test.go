package emu

import (
	"testing"

	"github.com/tmac-dev/tmac/ir"
)

// warp feeds bc one warp request of op: lane l (of lanes) accesses size
// bytes at addr(l).
func warp(bc *BankCounter, op *ir.Operation, kind EventKind, lanes int, size uint64, addr func(l int) uint64) {
	for l := 0; l < lanes; l++ {
		a := addr(l)
		bc.Observe(&Event{Kind: kind, Op: op, Kernel: "k", Thread: l, ThreadRank: 0, Mem: []Span{{a, a + size}}})
	}
}

func TestBankCounter(t *testing.T) {
	for _, c := range []struct {
		name              string
		lanes             int
		size              uint64
		addr              func(l int) uint64
		wavefronts, ideal int64
	}{
		{"consecutive words", 32, 4, func(l int) uint64 { return 4 * uint64(l) }, 1, 1},
		{"one word for all (broadcast)", 32, 4, func(int) uint64 { return 64 }, 1, 1},
		{"stride of 128 bytes: one bank", 32, 4, func(l int) uint64 { return 128 * uint64(l) }, 32, 1},
		{"stride of 8 bytes: 2-way", 32, 4, func(l int) uint64 { return 8 * uint64(l) }, 2, 1},
		{"8-byte pairs, consecutive", 32, 8, func(l int) uint64 { return 8 * uint64(l) }, 2, 2},
		{"16-byte vectors, consecutive", 32, 16, func(l int) uint64 { return 16 * uint64(l) }, 4, 4},
		// The wgmma fragment's pair stores into a row-major bf16 tile of
		// 256-byte rows: 8 rows x 4 lanes x 4 bytes, all in banks 0-3.
		{"bf16 pairs, rows of 256 bytes", 32, 4, func(l int) uint64 { return 256*uint64(l/4) + 4*uint64(l%4) }, 8, 1},
		// The same with the 128-byte swizzle: chunk (l/4) of each row.
		{"bf16 pairs, 128B-swizzled rows", 32, 4, func(l int) uint64 { return 128*uint64(l/4) + 16*uint64(l/4) + 4*uint64(l%4) }, 1, 1},
		{"half a warp, stride 128 bytes", 16, 4, func(l int) uint64 { return 128 * uint64(l) }, 16, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			bc := NewBankCounter()
			op := ir.NewOperation(&ir.OperationState{Name: "memref.store"})
			warp(bc, op, SharedWrite, c.lanes, c.size, c.addr)
			s := bc.Stats()
			if len(s) != 1 || s[0].Requests != 1 || s[0].Wavefronts != c.wavefronts || s[0].Ideal != c.ideal || !s[0].Write {
				t.Fatalf("got %+v, want 1 write request of %d wavefronts (ideal %d)", s, c.wavefronts, c.ideal)
			}
		})
	}
}

// Executions are matched per lane: the n-th execution of an op by each
// lane of a warp forms its n-th request, whichever order the lanes run in;
// other warps and ops, and events other than ordinary shared accesses,
// stay apart.
func TestBankCounterRequests(t *testing.T) {
	bc := NewBankCounter()
	st := ir.NewOperation(&ir.OperationState{Name: "vector.store"})
	ld := ir.NewOperation(&ir.OperationState{Name: "memref.load"})
	// Lane l runs two executions of st before lane l+1 starts: the first at
	// a conflict-free address, the second 8-way conflicted.
	for l := uint64(0); l < 32; l++ {
		bc.Observe(&Event{Kind: SharedWrite, Op: st, Kernel: "k", Thread: int(l), Mem: []Span{{4 * l, 4*l + 4}}})
		a := 256*(l/4) + 4*(l%4)
		bc.Observe(&Event{Kind: SharedWrite, Op: st, Kernel: "k", Thread: int(l), Mem: []Span{{a, a + 4}}})
		bc.Observe(&Event{Kind: TMAStore, Op: st, Kernel: "k", Thread: int(l), Mem: []Span{{0, 4096}}})
	}
	// Warp 1 reads with ld: 2-way.
	warpRead := func(l int) uint64 { return 8 * uint64(l) }
	for l := 32; l < 64; l++ {
		a := warpRead(l - 32)
		bc.Observe(&Event{Kind: SharedRead, Op: ld, Kernel: "k", Thread: l, Mem: []Span{{a, a + 4}}})
	}
	s := bc.Stats()
	if len(s) != 2 {
		t.Fatalf("got %d ops, want 2: %+v", len(s), s)
	}
	// The store has the most excess (1 + 8 against 2), the load next.
	if s[0].Op != st || s[0].Requests != 2 || s[0].Wavefronts != 9 || s[0].Ideal != 2 {
		t.Errorf("store: %+v, want 2 requests, 9 wavefronts, ideal 2", s[0])
	}
	if s[1].Op != ld || s[1].Write || s[1].Requests != 1 || s[1].Wavefronts != 2 || s[1].Ideal != 1 {
		t.Errorf("load: %+v, want 1 read request, 2 wavefronts, ideal 1", s[1])
	}
}
