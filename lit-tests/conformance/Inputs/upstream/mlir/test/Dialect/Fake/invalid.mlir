// RUN: mlir-opt %s -split-input-file -verify-diagnostics

func.func @for_count(%lb: index, %s0: f32) {
  // expected-error@+1 {{mismatch in number of loop-carried values and defined values}}
  %r:2 = scf.for %i = %lb to %lb step %lb iter_args(%s = %s0) -> (f32, f32) {
    scf.yield %s, %s : f32, f32
  }
  return
}

// -----

func.func @operand_types(%a: i32) {
  // expected-error@+1 {{expected 2 operand types but had 1}}
  "arith.addi"(%a, %a) : (i32) -> i32
  return
}
