#!/usr/bin/env bash
# Runs on the GPU machine (after scripts/gpu-build.sh here, with build/gpu
# carried along): ptxas on every PTX file, the GPU test programs through
# tmac run (checked against their @reference, timed with --bench), and the
# same operations through PyTorch for comparison. Prints a short table last.
set -uo pipefail
cd "$(dirname "$0")/.."
PTXAS=$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "== ptxas -arch=sm_90a"
ok=0; bad=0
for f in build/gpu/ptx/*.ptx; do
	if "$PTXAS" -arch=sm_90a "$f" -o /tmp/out.cubin 2>/tmp/ptxas.err; then
		ok=$((ok+1))
	else
		bad=$((bad+1)); echo "ptxas FAILED: $f"; head -5 /tmp/ptxas.err
	fi
done
echo "ptxas: $ok accepted, $bad rejected"
echo "== GPU test programs (gpu-tests/*.tma) through tmac run"
EXAMPLE_TIMEOUT=300 scripts/gpu-run-examples.sh test-
tests=$?
echo "== PyTorch on the same shapes"
timeout 300 python3 - <<'PY'
import torch
torch.backends.cuda.matmul.allow_tf32 = False
def bench(fn, reps=20):
    for _ in range(3): fn()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    ts = []
    for _ in range(reps):
        s.record(); fn(); e.record(); e.synchronize(); ts.append(s.elapsed_time(e))
    ts.sort(); return ts[len(ts)//2]
x = torch.randn(1024, 1024, device="cuda"); y = torch.randn(1024, 1024, device="cuda")
t = bench(lambda: y.add_(x, alpha=0.5)); print(f"torch saxpy      {t*1e3:8.1f} us {3*1024*1024*4/(t*1e-3)/1e9:6.0f} GB/s")
m = torch.randn(3001, 517, device="cuda")
t = bench(lambda: m.sum(1)); print(f"torch rowsum     {t*1e3:8.1f} us {(3001*517*4+3001*4)/(t*1e-3)/1e9:6.0f} GB/s")
a = torch.randn(2048, 2048, device="cuda")
t = bench(lambda: a.t().contiguous()); print(f"torch transpose  {t*1e3:8.1f} us {2*2048*2048*4/(t*1e-3)/1e9:6.0f} GB/s")
A = torch.randn(512, 1024, device="cuda", dtype=torch.float16); B = torch.randn(1024, 256, device="cuda", dtype=torch.float16)
t = bench(lambda: torch.matmul(A, B)); print(f"torch f16 GEMM 512x256x1024 (cuBLAS) {t*1e3:8.1f} us {2*512*256*1024/(t*1e-3)/1e12:6.1f} TFLOP/s")
A = torch.randn(1024, 1024, device="cuda"); B = torch.randn(1024, 1024, device="cuda")
t = bench(lambda: torch.matmul(A, B)); print(f"torch f32 GEMM 1024^3 (cuBLAS, TF32 off) {t*1e3:8.1f} us {2*1024**3/(t*1e-3)/1e12:6.1f} TFLOP/s")
big = torch.empty(256*1024*1024, dtype=torch.uint8, device="cuda"); dst = torch.empty_like(big)
t = bench(lambda: dst.copy_(big)); print(f"torch d2d copy   {t*1e3:8.1f} us {2*big.numel()/(t*1e-3)/1e9:6.0f} GB/s (ceiling)")
PY
echo "== watchdog: a kernel that never finishes"
timeout 60 build/tmac run build/gpu/deadlock.tmab --timeout 2s > /tmp/deadlock.out 2>&1
dl=$?
cat /tmp/deadlock.out
if [ $dl -ne 0 ] && grep -q "did not finish in 2 s" /tmp/deadlock.out; then watchdog=ok; else watchdog=FAILED; fi
echo "watchdog: $watchdog (exit $dl)"
echo "== outputs found from @reference (scalar_add without {tmac.output})"
timeout 120 build/tmac run build/gpu/scalar_add_unmarked.tmab
unmarked=$?
echo "== launch overhead"
timeout 120 build/gpu/overhead -bundle build/gpu/overhead.tmab
overhead=$?
echo "== summary: ptxas $ok ok / $bad failed; GPU tests exit $tests; watchdog $watchdog; unmarked outputs exit $unmarked; overhead exit $overhead"
[ "$bad" = 0 ] && [ "$tests" = 0 ] && [ "$watchdog" = ok ] && [ "$unmarked" = 0 ] && [ "$overhead" = 0 ]
