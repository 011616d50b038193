package tmac

// Discardable attributes the passes read or write, besides the stage
// counts (StagesAttr, StoreStagesAttr).
const (
	// WarpSpecializeAttr marks the scf.for that warp-specialize rewrites:
	// a unit attribute, "cooperative" or "pingpong".
	WarpSpecializeAttr = "tmac.warp_specialize"
	// MulticastAttr on a tmac.tma.load in a warp-specialised loop says every
	// CTA of the cluster loads the same tile: it is multicast.
	MulticastAttr = "tmac.multicast"
	// MBarrierMemoryAttr marks the memref.alloca holding a lowered barrier
	// group: smem-plan keeps it for the whole kernel (mbarrier memory is not
	// reused for anything else without mbarrier.inval).
	MBarrierMemoryAttr = "tmac.mbarriers"
)
