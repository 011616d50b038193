# After Inputs/shrink-4096.sed, the rest of examples/gemm_bias_gelu.tma's
# persistent schedule at 512^3 (gen_gemm.py's values at that size, but 3
# blocks, so blocks still take several, uneven, tiles): 8 tiles of 128x256
# (4 rows of 2), grouped 4 rows at a time, and the flop count.
s/\(%hblocks = arith.constant\) 132 :/\1 3 :/
s/\(%cgrid = arith.constant\) 132 :/\1 3 :/
s/\(%ctiles = arith.constant\) 512 :/\1 8 :/
s/\(%ctm = arith.constant\) 32 :/\1 4 :/
s/\(%cwidth = arith.constant\) 128 :/\1 8 :/
s/\(%cgroup = arith.constant\) 8 :/\1 4 :/
s/tmac\.flops = 137438953472 :/tmac.flops = 268435456 :/
