module {
  func.func @kernel_0(%a: memref<1024x1024xf32>, %b: memref<1024x1024xf32>, %s: memref<128x64xf16, 3>, %n: index, %x: f32) -> f32 {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    %cst = arith.constant 0.000000e+00 : f32
    %tid = gpu.thread_id  x
    %bid = gpu.block_id  y
    %row = arith.muli %bid, %c64 : index
    %col = arith.addi %row, %tid : index
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %cst) -> (f32) {
      %i0 = arith.addi %i, %c0 : index
      %v0 = memref.load %a[%col, %i0] : memref<1024x1024xf32>
      %w0 = memref.load %b[%i0, %col] : memref<1024x1024xf32>
      %p0 = arith.mulf %v0, %w0 : f32
      %h0 = memref.load %s[%tid, %c0] : memref<128x64xf16, 3>
      %e0 = arith.extf %h0 : f16 to f32
      %q0 = arith.addf %p0, %e0 : f32
      %t0 = arith.cmpf olt, %q0, %x : f32
      %m0 = arith.select %t0, %q0, %x : f32
      memref.store %m0, %a[%col, %i0] : memref<1024x1024xf32>
      %i1 = arith.addi %i, %c1 : index
      %v1 = memref.load %a[%col, %i1] : memref<1024x1024xf32>
      %w1 = memref.load %b[%i1, %col] : memref<1024x1024xf32>
      %p1 = arith.mulf %v1, %w1 : f32
      %h1 = memref.load %s[%tid, %c0] : memref<128x64xf16, 3>
      %e1 = arith.extf %h1 : f16 to f32
      %q1 = arith.addf %p1, %e1 : f32
      %t1 = arith.cmpf olt, %q1, %x : f32
      %m1 = arith.select %t1, %q1, %x : f32
      memref.store %m1, %a[%col, %i1] : memref<1024x1024xf32>
      %i2 = arith.addi %i, %c64 : index
      %v2 = memref.load %a[%col, %i2] : memref<1024x1024xf32>
      %w2 = memref.load %b[%i2, %col] : memref<1024x1024xf32>
      %p2 = arith.mulf %v2, %w2 : f32
      %h2 = memref.load %s[%tid, %c0] : memref<128x64xf16, 3>
      %e2 = arith.extf %h2 : f16 to f32
      %q2 = arith.addf %p2, %e2 : f32
      %t2 = arith.cmpf olt, %q2, %x : f32
      %m2 = arith.select %t2, %q2, %x : f32
      memref.store %m2, %a[%col, %i2] : memref<1024x1024xf32>
      %i3 = arith.addi %i, %c0 : index
      %v3 = memref.load %a[%col, %i3] : memref<1024x1024xf32>
      %w3 = memref.load %b[%i3, %col] : memref<1024x1024xf32>
      %p3 = arith.mulf %v3, %w3 : f32
      %h3 = memref.load %s[%tid, %c0] : memref<128x64xf16, 3>
      %e3 = arith.extf %h3 : f16 to f32
      %q3 = arith.addf %p3, %e3 : f32
      %t3 = arith.cmpf olt, %q3, %x : f32
      %m3 = arith.select %t3, %q3, %x : f32
      memref.store %m3, %a[%col, %i3] : memref<1024x1024xf32>
      %i4 = arith.addi %i, %c1 : index
      %v4 = memref.load %a[%col, %i4] : memref<1024x1024xf32>
      %w4 = memref.load %b[%i4, %col] : memref<1024x1024xf32>
      %p4 = arith.mulf %v4, %w4 : f32
      %h4 = memref.load %s[%tid, %c0] : memref<128x64xf16, 3>
      %e4 = arith.extf %h4 : f16 to f32
      %q4 = arith.addf %p4, %e4 : f32
      %t4 = arith.cmpf olt, %q4, %x : f32
      %m4 = arith.select %t4, %q4, %x : f32
      memref.store %m4, %a[%col, %i4] : memref<1024x1024xf32>
      %i5 = arith.addi %i, %c64 : index
      %v5 = memref.load %a[%col, %i5] : memref<1024x1024xf32>
      %w5 = memref.load %b[%i5, %col] : memref<1024x1024xf32>
      %p5 = arith.mulf %v5, %w5 : f32
      %h5 = memref.load %s[%tid, %c0] : memref<128x64xf16, 3>
      %e5 = arith.extf %h5 : f16 to f32
      %q5 = arith.addf %p5, %e5 : f32
      %t5 = arith.cmpf olt, %q5, %x : f32
      %m5 = arith.select %t5, %q5, %x : f32
      memref.store %m5, %a[%col, %i5] : memref<1024x1024xf32>
      %i6 = arith.addi %i, %c0 : index
      %v6 = memref.load %a[%col, %i6] : memref<1024x1024xf32>
      %w6 = memref.load %b[%i6, %col] : memref<1024x1024xf32>
      %p6 = arith.mulf %v6, %w6 : f32
      %h6 = memref.load %s[%tid, %c0] : memref<128x64xf16, 3>
      %e6 = arith.extf %h6 : f16 to f32
      %q6 = arith.addf %p6, %e6 : f32
      %t6 = arith.cmpf olt, %q6, %x : f32
      %m6 = arith.select %t6, %q6, %x : f32
      memref.store %m6, %a[%col, %i6] : memref<1024x1024xf32>
      %i7 = arith.addi %i, %c1 : index
      %v7 = memref.load %a[%col, %i7] : memref<1024x1024xf32>
      %w7 = memref.load %b[%i7, %col] : memref<1024x1024xf32>
      %p7 = arith.mulf %v7, %w7 : f32
      %h7 = memref.load %s[%tid, %c0] : memref<128x64xf16, 3>
      %e7 = arith.extf %h7 : f16 to f32
      %q7 = arith.addf %p7, %e7 : f32
      %t7 = arith.cmpf olt, %q7, %x : f32
      %m7 = arith.select %t7, %q7, %x : f32
      memref.store %m7, %a[%col, %i7] : memref<1024x1024xf32>
      %sum = arith.addf %acc, %m7 : f32
      scf.yield %sum : f32
    }
    %cond = arith.cmpi slt, %tid, %c64 : index
    %out = scf.if %cond -> (f32) {
      %neg = arith.negf %r : f32
      scf.yield %neg : f32
    } else {
      scf.yield %r : f32
    }
    gpu.barrier
    return %out : f32
  }
  func.func @kernel_1(%a: memref<1024x1024xf32>, %b: memref<1024x1024xf32>, %s: memref<128x64xf16, 3>, %n: index, %x: f32) -> f32 {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    %cst = arith.constant 0.000000e+00 : f32
    %tid = gpu.thread_id  x
    %bid = gpu.block_id  y
    %row = arith.muli %bid, %c64 : index
    %col = arith.addi %row, %tid : index
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %cst) -> (f32) {
      %i0 = arith.addi %i, %c0 : index
      %v0 = memref.load %a[%col, %i0] : memref<1024x1024xf32>
      %w0 = memref.load %b[%i0, %col] : memref<1024x1024xf32>
      %p0 = arith.mulf %v0, %w0 : f32
      %h0 = memref.load %s[%tid, %c0] : memref<128x64xf16, 3>
      %e0 = arith.extf %h0 : f16 to f32
      %q0 = arith.addf %p0, %e0 : f32
      %t0 = arith.cmpf olt, %q0, %x : f32
      %m0 = arith.select %t0, %q0, %x : f32
      memref.store %m0, %a[%col, %i0] : memref<1024x1024xf32>
      %i1 = arith.addi %i, %c1 : index
      %v1 = memref.load %a[%col, %i1] : memref<1024x1024xf32>
      %w1 = memref.load %b[%i1, %col] : memref<1024x1024xf32>
      %p1 = arith.mulf %v1, %w1 : f32
      %h1 = memref.load %s[%tid, %c0] : memref<128x64xf16, 3>
      %e1 = arith.extf %h1 : f16 to f32
      %q1 = arith.addf %p1, %e1 : f32
      %t1 = arith.cmpf olt, %q1, %x : f32
      %m1 = arith.select %t1, %q1, %x : f32
      memref.store %m1, %a[%col, %i1] : memref<1024x1024xf32>
      %i2 = arith.addi %i, %c64 : index
      %v2 = memref.load %a[%col, %i2] : memref<1024x1024xf32>
      %w2 = memref.load %b[%i2, %col] : memref<1024x1024xf32>
      %p2 = arith.mulf %v2, %w2 : f32
      %h2 = memref.load %s[%tid, %c0] : memref<128x64xf16, 3>
      %e2 = arith.extf %h2 : f16 to f32
      %q2 = arith.addf %p2, %e2 : f32
      %t2 = arith.cmpf olt, %q2, %x : f32
      %m2 = arith.select %t2, %q2, %x : f32
      memref.store %m2, %a[%col, %i2] : memref<1024x1024xf32>
      %i3 = arith.addi %i, %c0 : index
      %v3 = memref.load %a[%col, %i3] : memref<1024x1024xf32>
      %w3 = memref.load %b[%i3, %col] : memref<1024x1024xf32>
      %p3 = arith.mulf %v3, %w3 : f32
      %h3 = memref.load %s[%tid, %c0] : memref<128x64xf16, 3>
      %e3 = arith.extf %h3 : f16 to f32
      %q3 = arith.addf %p3, %e3 : f32
      %t3 = arith.cmpf olt, %q3, %x : f32
      %m3 = arith.select %t3, %q3, %x : f32
      memref.store %m3, %a[%col, %i3] : memref<1024x1024xf32>
      %i4 = arith.addi %i, %c1 : index
      %v4 = memref.load %a[%col, %i4] : memref<1024x1024xf32>
      %w4 = memref.load %b[%i4, %col] : memref<1024x1024xf32>
      %p4 = arith.mulf %v4, %w4 : f32
      %h4 = memref.load %s[%tid, %c0] : memref<128x64xf16, 3>
      %e4 = arith.extf %h4 : f16 to f32
      %q4 = arith.addf %p4, %e4 : f32
      %t4 = arith.cmpf olt, %q4, %x : f32
      %m4 = arith.select %t4, %q4, %x : f32
      memref.store %m4, %a[%col, %i4] : memref<1024x1024xf32>
      %i5 = arith.addi %i, %c64 : index
      %v5 = memref.load %a[%col, %i5] : memref<1024x1024xf32>
      %w5 = memref.load %b[%i5, %col] : memref<1024x1024xf32>
      %p5 = arith.mulf %v5, %w5 : f32
      %h5 = memref.load %s[%tid, %c0] : memref<128x64xf16, 3>
      %e5 = arith.extf %h5 : f16 to f32
      %q5 = arith.addf %p5, %e5 : f32
      %t5 = arith.cmpf olt, %q5, %x : f32
      %m5 = arith.select %t5, %q5, %x : f32
      memref.store %m5, %a[%col, %i5] : memref<1024x1024xf32>
      %i6 = arith.addi %i, %c0 : index
      %v6 = memref.load %a[%col, %i6] : memref<1024x1024xf32>
      %w6 = memref.load %b[%i6, %col] : memref<1024x1024xf32>
      %p6 = arith.mulf %v6, %w6 : f32
      %h6 = memref.load %s[%tid, %c0] : memref<128x64xf16, 3>
      %e6 = arith.extf %h6 : f16 to f32
      %q6 = arith.addf %p6, %e6 : f32
      %t6 = arith.cmpf olt, %q6, %x : f32
      %m6 = arith.select %t6, %q6, %x : f32
      memref.store %m6, %a[%col, %i6] : memref<1024x1024xf32>
      %i7 = arith.addi %i, %c1 : index
      %v7 = memref.load %a[%col, %i7] : memref<1024x1024xf32>
      %w7 = memref.load %b[%i7, %col] : memref<1024x1024xf32>
      %p7 = arith.mulf %v7, %w7 : f32
      %h7 = memref.load %s[%tid, %c0] : memref<128x64xf16, 3>
      %e7 = arith.extf %h7 : f16 to f32
      %q7 = arith.addf %p7, %e7 : f32
      %t7 = arith.cmpf olt, %q7, %x : f32
      %m7 = arith.select %t7, %q7, %x : f32
      memref.store %m7, %a[%col, %i7] : memref<1024x1024xf32>
      %sum = arith.addf %acc, %m7 : f32
      scf.yield %sum : f32
    }
    %cond = arith.cmpi slt, %tid, %c64 : index
    %out = scf.if %cond -> (f32) {
      %neg = arith.negf %r : f32
      scf.yield %neg : f32
    } else {
      scf.yield %r : f32
    }
    gpu.barrier
    return %out : f32
  }
}
