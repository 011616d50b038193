// Package emu runs tmac kernels on the CPU: `tmac run --target=emu`.
//
// It executes the kernel IR as it stands just before LLVM emission (the
// gpu.func kernels of the module after tmac's passes), so it checks what
// will really run, behind the same host plan as the GPU (Device
// implements plan.Device). Every thread of a block is a cooperatively
// scheduled goroutine; only one thread of a block runs at a time, and a
// seeded random scheduler decides, at every point where a thread blocks,
// which thread runs next and when the asynchronous copies in flight
// complete, so a missing wait reads data that has not landed and the same
// seed replays the same interleaving. Blocks run in parallel.
//
// Modelled exactly: mbarriers (arrival counts, transaction bytes, phases,
// parity waits), TMA tile loads and stores through the tensor maps the
// host plan encoded (boxes, element strides of 1, out-of-bounds fill with
// zeros or NaN, the 32/64/128-byte swizzles laid out in shared memory as
// the hardware lays them out), bulk async groups (commit_group,
// wait_group.read), wgmma (collective over the warpgroup: A and B read from
// shared memory through the matrix descriptors, K- or MN-major, swizzled as
// the hardware reads them, f16/bf16/tf32/fp8/int8 inputs, the accumulator
// in the PTX fragment layout, asynchronous until wgmma.wait_group), block
// and named barriers, the memory spaces, and thread block clusters: the
// blocks of a cluster are scheduled together, TMA loads multicast to every
// block in the mask, nvvm.mapa pointers reach a peer's mbarriers (remote
// arrivals, expect_tx), and barrier.cluster.arrive/wait spans the cluster.
// In a cluster the seed picks one block that runs ahead whenever it can,
// so a block that exits while its peers still use its shared memory shows
// up (uniform random scheduling almost never produces that interleaving).
//
// Diagnosed, with the op and source location: deadlock (every live thread
// blocked; each blocked group with its op, barrier, the parity it waits
// for, the barrier's phase and pending counts), a generic read of shared
// memory a TMA load in flight is writing, a generic write of shared memory
// a TMA store in flight is reading, a TMA store of shared memory written
// by the threads with no fence.proxy.async since, an mbarrier arrived on
// more often than its count or whose transaction count goes negative
// (expect_tx smaller than the bytes loaded), an accumulator read before
// wgmma.wait_group retired its group, shared memory overwritten (by a TMA
// load or a thread) while a wgmma in flight may still read it,
// out-of-bounds shared and global accesses, an access to the shared memory
// of a cluster block that has exited, a thread exiting without waiting
// for its TMA stores, a block exiting before a wait saw its TMA loads
// complete (its shared memory is released at exit), a lane outside its warp collective's
// member mask, a shuffle reading a lane that does not take part, lanes
// meeting in different warp collectives that wait for each other, lanes of
// a shuffle giving different widths. A wrong matrix descriptor or
// swizzle reads the wrong elements, as on the GPU, and fails the check.
//
// Thread-to-thread races (race.go): two threads' accesses of the same
// shared bytes, one a write, that no barrier, mbarrier phase, warp
// collective or cluster barrier orders, followed with vector clocks and
// reported at the second access with the first in a note (a TMA store's
// issue reads its tile, a TMA load's issue overwrites its box, as the
// issuing thread); barrier divergence (diverge.go): a generation of the
// block barrier whose threads arrived at different ops, or that threads
// never reached because they exited.
//
// Warp collectives (elect.sync, shfl.sync, vote.sync, redux.sync,
// match.sync, bar.warp.sync) wait for the non-exited lanes of their
// member mask and compute as PTX defines them (elect: the lowest lane;
// shfl: clamp and segment mask, the validity predicate).
//
// gpu.printf and llvm.call of a declared @printf print to standard error when
// the launch ends, in thread order, whatever the schedule (printf.go).
//
// Token and parity polls (mbarrier.test.wait, try_wait returning i1): a
// failed poll sits out until the barrier changes phase, so spin loops
// cost nothing and a phase that never completes is reported as a
// deadlock; arrive.nocomplete completing a phase and a barrier used after
// mbarrier.inval are errors.
//
// Device.Observe lets a caller follow a run event by event (observe.go):
// mbarrier arrivals, phases and waits, TMA copies, commit groups, wgmma,
// named and cluster barriers and shared-memory accesses, with the op, the
// thread and the data; the pipelining passes' tests check their protocol
// over it (passes/internal/pipecheck).
//
// Not modelled (a kernel using them is rejected with the op named):
// ldmatrix/stmatrix, Ampere cp.async, and any op outside the set tmac's
// pipelines produce. Not
// modelled at all: timing, caches, register budgets (setmaxnreg is
// accepted and does nothing), memory-ordering scopes (a release at CTA
// scope reaches a peer block as a cluster-scope one would), memory
// consistency beyond the rules above.
package emu
