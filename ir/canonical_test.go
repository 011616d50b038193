package ir

import (
	"math/big"
	"testing"
)

func TestIsIdentityAffineMap(t *testing.T) {
	for _, c := range []struct {
		text string
		want bool
	}{
		{"affine_map<(d0, d1) -> (d0, d1)>", true},
		{"affine_map<(d0) -> (d0)>", true},
		{"affine_map<(i, j)[s0] -> (i, j)>", true},
		{"affine_map<() -> ()>", true},
		{"affine_map<(d0, d1) -> (d1, d0)>", false},
		{"affine_map<(d0, d1) -> (d0)>", false},
		{"affine_map<(d0, d1) -> (d0, d1 + 1)>", false},
		{"affine_map<(d0, d1)[s0] -> (d0 + s0, d1)>", false},
		{"affine_map<(d0) -> (d0 * 2)>", false},
		{"strided<[4, 1]>", false},
	} {
		if got := isIdentityAffineMap(c.text); got != c.want {
			t.Errorf("isIdentityAffineMap(%q) = %v, want %v", c.text, got, c.want)
		}
	}
}

func TestMemRefTypeDropsIdentityLayout(t *testing.T) {
	m := MemRefTypeOf([]int64{4, 8}, F32T, OpaqueAttrOf("affine_map<(d0, d1) -> (d0, d1)>"), nil)
	if m.Layout != nil || m.String() != "memref<4x8xf32>" || m != MemRefTypeOf([]int64{4, 8}, F32T, nil, nil) {
		t.Errorf("identity layout kept: %s", m)
	}
}

func TestBigIntAttr(t *testing.T) {
	i128 := IntegerTypeOf(128)
	max := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 128), big.NewInt(1))
	for _, c := range []struct {
		v    *big.Int
		t    Type
		want string
		big  bool
	}{
		{max, i128, "-1 : i128", false}, // 2^128-1 wraps to -1 (signless prints signed)
		{new(big.Int).Lsh(big.NewInt(1), 126), i128, "85070591730234615865843651857942052864 : i128", true},
		{new(big.Int).Lsh(big.NewInt(1), 63), i128, "9223372036854775808 : i128", true},
		{max, IntegerTypeWithSign(128, Unsigned), "340282366920938463463374607431768211455 : ui128", true},
		{big.NewInt(5), IntegerTypeOf(100), "5 : i100", false},
	} {
		a := BigIntAttr(c.v, c.t)
		if a.String() != c.want || (a.Big != nil) != c.big {
			t.Errorf("BigIntAttr(%s, %s) = %s (Big %v), want %s (Big %v)", c.v, c.t, a, a.Big, c.want, c.big)
		}
	}
	if BigIntAttr(big.NewInt(7), I32) != IntAttr(7, I32) {
		t.Error("a narrow value is not the interned IntAttr")
	}
}

func TestWideIntLiteral(t *testing.T) {
	i128, si128 := IntegerTypeOf(128), IntegerTypeWithSign(128, Signed)
	for _, c := range []struct {
		text string
		neg  bool
		t    Type
		ok   bool
	}{
		{"340282366920938463463374607431768211455", false, i128, true},
		{"340282366920938463463374607431768211456", false, i128, false},
		{"170141183460469231731687303715884105728", true, i128, true},
		{"170141183460469231731687303715884105729", true, i128, false},
		{"170141183460469231731687303715884105728", false, si128, false},
		{"0xFFFFFFFFFFFFFFFFFFFF", false, IntegerTypeOf(80), true},
		{"0x1FFFFFFFFFFFFFFFFFFFF", false, IntegerTypeOf(80), false},
	} {
		if _, ok := wideIntLiteral(c.text, c.neg, c.t); ok != c.ok {
			t.Errorf("wideIntLiteral(%s, neg %v, %s) ok = %v, want %v", c.text, c.neg, c.t, ok, c.ok)
		}
	}
}
