"""A tmac GEMM inside a torch.nn.Module, registered as a torch custom op
so that it also runs under torch.compile; checked against eager torch.

    tmac compile examples/gemm_ws_persistent.tma --emit=bundle -o gemm.tmab
    python examples/python/gemm_module.py gemm.tmab

The GEMM is examples/gemm_ws_persistent.tma: D(f32) = A(f16) B(f16) at
4096x4096x4096, B row-major K x N.
"""
import sys

import torch

import tmac
import tmac.torch

gemm = tmac.load(sys.argv[1] if len(sys.argv) > 1 else "gemm.tmab")
mm = tmac.torch.register(gemm, "tmac_examples::gemm_f16_f32")   # mm(a, b) -> d


class Projection(torch.nn.Module):
    """y = gelu(x W) with the product computed by tmac."""

    def __init__(self, k, n):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(k, n, dtype=torch.float16) / k ** 0.5, requires_grad=False)

    def forward(self, x):
        return torch.nn.functional.gelu(mm(x, self.weight))


torch.manual_seed(0)
model = Projection(4096, 4096).cuda()
x = torch.randn(4096, 4096, device="cuda", dtype=torch.float16)
with torch.no_grad():
    eager_ref = torch.nn.functional.gelu(x.float() @ model.weight.float())
    y = model(x)
    y_compiled = torch.compile(model, fullgraph=True)(x)
torch.cuda.synchronize()


def rel(a, b):
    return (torch.linalg.norm((a - b).double()) / torch.linalg.norm(b.double())).item()


print("eager module vs torch f32 reference: rel err %.2e" % rel(y, eager_ref))
print("torch.compile'd module vs reference: rel err %.2e" % rel(y_compiled, eager_ref))
assert rel(y, eager_ref) < 1e-3 and rel(y_compiled, eager_ref) < 1e-3
print("gemm_module: OK")
