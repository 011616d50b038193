package plan

import "testing"

// While runs are queued behind the GPU spin, the host must not wait for
// the device: a plan's closing Synchronize and its Frees would make each
// queued run wait for the one before (and time the host's launch latency).
// No driver is loaded here, so a call that reached it would fail.
func TestQueuedRunsDoNotWaitForTheDevice(t *testing.T) {
	c := &CUDA{QueueKernels: true, allocs: map[uint64]bool{0x1000: true, 0x2000: true}}
	if err := c.Synchronize(); err != nil {
		t.Fatalf("Synchronize while queuing: %v", err)
	}
	for _, p := range []uint64{0x1000, 0x2000} {
		if err := c.Free(p); err != nil {
			t.Fatalf("Free while queuing: %v", err)
		}
	}
	if got := c.deferredFree; len(got) != 2 || got[0] != 0x1000 || got[1] != 0x2000 {
		t.Errorf("deferred frees = %#x, want [0x1000 0x2000]", got)
	}
	if len(c.allocs) != 2 {
		t.Errorf("allocations still tracked = %d, want 2 (freed only after the pass)", len(c.allocs))
	}
}
