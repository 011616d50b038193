// RUN: mlir-opt %s -split-input-file | FileCheck %s

// Two items, both accepted and printed as mlir-opt prints them.
func.func @add(%a: i32) -> i32 {
  %0 = arith.addi %a, %a : i32
  return %0 : i32
}

func.func @wide(%t: tensor<?xf80>) -> tensor<?xf80> {
  return %t : tensor<?xf80>
}

// -----

// Rejected by tmac on purpose (it holds no f80 values).
func.func @f80_constant() -> f80 {
  %0 = arith.constant 1.0 : f80
  return %0 : f80
}

// -----

// A dialect tmac does not claim.
func.func @matmul(%a: memref<4x4xf32>) {
  linalg.matmul ins(%a, %a : memref<4x4xf32>, memref<4x4xf32>) outs(%a : memref<4x4xf32>)
  return
}

// -----

// Stale: mlir-opt 22 has no vector.splat.
func.func @splat(%f: f32) -> vector<4xf32> {
  %0 = vector.splat %f : vector<4xf32>
  return %0 : vector<4xf32>
}
