// A program in claimed dialects: tmac compile must succeed on it.
func.func @main(%a: memref<64xf32>) {
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  gpu.launch blocks(%bx, %by, %bz) in (%x = %c1, %y = %c1, %z = %c1) threads(%tx, %ty, %tz) in (%u = %c64, %v = %c1, %w = %c1) {
    %f = memref.load %a[%tx] : memref<64xf32>
    %g = arith.addf %f, %f : f32
    memref.store %g, %a[%tx] : memref<64xf32>
    gpu.terminator
  }
  return
}
