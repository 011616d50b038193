# Shrinks the 4096^3 GEMM examples to 512^3 for the CPU emulator: every
# size (memref shapes, strides, the reference's loop bounds) divided by 8,
# the grid and tile counts with it, K steps 64 -> 8, and the persistent
# kernels' 132 blocks -> 3 (so blocks still take several, uneven, tiles).
s/4096/512/g
s/\(%[hc]32 = arith.constant\) 32 :/\1 4 :/
s/\(%h16 = arith.constant\) 16 :/\1 2 :/
s/\(%ksteps = arith.constant\) 64 :/\1 8 :/
s/\(%ntiles = arith.constant\) 512 :/\1 8 :/
s/\(%ntiles = arith.constant\) 1024 :/\1 16 :/
s/\(%[hc]132 = arith.constant\) 132 :/\1 3 :/
