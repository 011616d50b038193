package cuda

import "unsafe"

// spinPTX is a one-thread kernel that busy-waits until the global timer has
// advanced by its parameter (nanoseconds). Launched before a batch of timed
// launches, it holds the stream while the host queues them, so the events
// around each launch measure the kernel and not the host's launch latency
// (the way torch and Triton time kernels behind torch.cuda._sleep).
const spinPTX = `.version 7.0
.target sm_70
.address_size 64
.visible .entry tmac_spin(.param .u64 ns)
{
	.reg .pred %p;
	.reg .b64 %rd<5>;
	ld.param.u64 %rd1, [ns];
	mov.u64 %rd2, %globaltimer;
$L_spin:
	mov.u64 %rd3, %globaltimer;
	sub.s64 %rd4, %rd3, %rd2;
	setp.lt.u64 %p, %rd4, %rd1;
	@%p bra $L_spin;
	ret;
}
`

var spinFunc Function

// Spin queues a kernel on the default stream that keeps it busy for about
// ns nanoseconds (loaded on first use, in the current context).
func Spin(ns uint64) error {
	if spinFunc == 0 {
		m, err := LoadPTX(spinPTX)
		if err != nil {
			return err
		}
		if spinFunc, err = m.Function("tmac_spin"); err != nil {
			return err
		}
	}
	v := ns
	return Launch(spinFunc, Dim3{1, 1, 1}, Dim3{1, 1, 1}, 0, []unsafe.Pointer{unsafe.Pointer(&v)})
}
