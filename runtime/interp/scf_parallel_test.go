package interp

import "testing"

// TestParallelReductionOrder checks that scf.parallel runs its iterations
// in order, the first dimension outermost, and folds each value into the
// running result through the scf.reduce region: acc*10 + x is not
// commutative, so any other order gives other digits.
func TestParallelReductionOrder(t *testing.T) {
	src := `func.func @f(%n: index) -> (i64, i64) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c10 = arith.constant 10 : i64
  %z = arith.constant 0 : i64
  %one = arith.constant 1 : i64
  %r:2 = scf.parallel (%i, %j) = (%c1, %c0) to (%n, %c2) step (%c1, %c1) init (%z, %one) -> (i64, i64) {
    %ii = arith.index_cast %i : index to i64
    %jj = arith.index_cast %j : index to i64
    %d = arith.muli %ii, %c10 : i64
    %x = arith.addi %d, %jj : i64
    %k = scf.index_switch %j -> i64
    case 0 {
      scf.yield %c10 : i64
    }
    default {
      %two = arith.constant 2 : i64
      scf.yield %two : i64
    }
    scf.reduce(%x, %k : i64, i64) {
    ^bb0(%acc: i64, %v: i64):
      %m = arith.muli %acc, %c10 : i64
      %s = arith.addi %m, %v : i64
      scf.reduce.return %s : i64
    }, {
    ^bb0(%acc: i64, %v: i64):
      %p = arith.muli %acc, %v : i64
      scf.reduce.return %p : i64
    }
  }
  return %r#0, %r#1 : i64, i64
}`
	// Iterations (i, j): (1,0) (1,1) (2,0) (2,1) give x = 10, 11, 20, 21.
	got := run1(t, src, int64(3))
	want0 := int64(((10*10+11)*10+20)*10 + 21)
	if got[0] != want0 || got[1] != int64(10*2*10*2) {
		t.Errorf("got %v, want [%d 400]", got, want0)
	}
	// No iterations: the results are the init values.
	if got := run1(t, src, int64(1)); got[0] != int64(0) || got[1] != int64(1) {
		t.Errorf("empty loop: got %v, want [0 1]", got)
	}
}

// TestForallBounds runs a forall whose lower bounds, upper bounds and
// steps mix values and constants (steps other than 1), counting the visits
// of each k = i + j in a memref.
func TestForallBounds(t *testing.T) {
	src := `func.func @f(%lo: index) -> index {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = memref.alloc() : memref<16xindex>
  scf.forall (%i) in (16) {
    memref.store %c0, %m[%i] : memref<16xindex>
  }
  scf.forall (%i, %j) = (%lo, 1) to (8, 4) step (3, 2) {
    %k = arith.addi %i, %j : index
    %old = memref.load %m[%k] : memref<16xindex>
    %new = arith.addi %old, %c1 : index
    memref.store %new, %m[%k] : memref<16xindex>
  }
  %h = memref.load %m[%c1] : memref<16xindex>
  %k4 = arith.constant 4 : index
  %h4 = memref.load %m[%k4] : memref<16xindex>
  %c10 = arith.constant 10 : index
  %x = arith.muli %h, %c10 : index
  %y = arith.addi %x, %h4 : index
  return %y : index
}`
	// lo = 0: i in {0, 3, 6}, j in {1, 3}: k = 1, 3, 4, 6, 7, 9 once each.
	if got := run1(t, src, int64(0)); got[0] != int64(11) {
		t.Errorf("lo=0: got %v, want 11", got)
	}
	// lo = 1: i in {1, 4, 7}: k = 2, 4, 5, 7, 8, 10; m[1] = 0, m[4] = 1.
	if got := run1(t, src, int64(1)); got[0] != int64(1) {
		t.Errorf("lo=1: got %v, want 1", got)
	}
}
