"""Calling a tmac kernel from PyTorch: the README's "From PyTorch" example.

    tmac compile examples/tutorial/copy.tma --emit=bundle -o copy.tmab   # where tmac and llc are
    python examples/python/quickstart.py copy.tmab                       # where the GPU is
"""
import sys

import torch

import tmac

copy = tmac.load(sys.argv[1] if len(sys.argv) > 1 else "copy.tmab")
print(copy)                                   # the entry and its arguments

src = torch.randn(128, 2048, device="cuda")
dst = torch.empty_like(src)
out = copy(src, dst)                          # runs on torch's current stream, returns dst
torch.cuda.synchronize()
assert out is dst and torch.equal(dst, src)

try:
    copy(src.half(), dst)                     # wrong dtype: nothing is launched
except tmac.ArgumentError as e:
    print("rejected:", e)

s = torch.cuda.Stream()
with torch.cuda.stream(s):                    # or copy(src, dst, stream=s)
    copy(src * 2, dst)
s.synchronize()
assert torch.equal(dst, src * 2)
print("quickstart: OK")
