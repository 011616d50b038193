package ir

import (
	"math"
	"testing"
)

func TestShapeSizesDoNotWrap(t *testing.T) {
	cases := []struct {
		shape []int64
		bits  int
		n     int64
		fits  bool
		bytes int64
	}{
		{[]int64{4, 8}, 32, 32, true, 128},
		{[]int64{}, 16, 1, true, 2},
		{[]int64{3}, 1, 3, true, 1},
		{[]int64{99999999999, 99999999999}, 32, 0, false, 0},
		// 2^64 elements: a plain product wraps to 0.
		{[]int64{4294967296, 4294967296}, 8, 0, false, 0},
		// 2^63 elements: a plain product wraps to a negative count.
		{[]int64{2147483648, 4294967296}, 8, 0, false, 0},
		// Fits as a count, not as bits.
		{[]int64{1 << 61}, 32, 1 << 61, true, 0},
		{[]int64{0, 99999999999, 99999999999}, 32, 0, true, 0},
	}
	for _, c := range cases {
		n, ok := CheckedNumElements(c.shape)
		if ok != c.fits || ok && n != c.n {
			t.Errorf("CheckedNumElements(%v) = %d, %v; want %d, %v", c.shape, n, ok, c.n, c.fits)
		}
		b, bok := ShapeBytes(c.shape, c.bits)
		wantOK := c.fits && (c.bytes != 0 || c.n == 0)
		if bok != wantOK || bok && b != c.bytes {
			t.Errorf("ShapeBytes(%v, %d) = %d, %v; want %d, %v", c.shape, c.bits, b, bok, c.bytes, wantOK)
		}
		if !c.fits && NumElements(c.shape) != math.MaxInt64 {
			t.Errorf("NumElements(%v) = %d, want it saturated", c.shape, NumElements(c.shape))
		}
		if !HasStaticShape(c.shape) {
			t.Errorf("HasStaticShape(%v) = false", c.shape)
		}
	}
	if HasStaticShape([]int64{4, Dynamic}) || NumElements([]int64{Dynamic, 99999999999, 99999999999}) != -1 {
		t.Error("dynamic shapes")
	}
	got := TooLarge(MemRefTypeOf([]int64{99999999999, 99999999999}, F32T, nil, nil))
	want := "'memref<99999999999x99999999999xf32>' is too large: 9999999999800000000001 elements of 4 bytes do not fit in a 64-bit size"
	if got != want {
		t.Errorf("TooLarge = %q, want %q", got, want)
	}
}

func TestDescribeChar(t *testing.T) {
	for in, want := range map[string]string{
		"\x00":         "unexpected NUL byte (0x00)",
		"\xff":         "unexpected byte 0xFF (not valid UTF-8)",
		"\xef\xbb\xbf": "unexpected byte order mark (U+FEFF); tmac reads UTF-8 without one",
		";":            "unexpected character ';'",
		"\u00e9":       "unexpected character 'é' (U+00E9)",
		"\u00a0":       "unexpected character U+00A0",
		"\u202e":       "unexpected character U+202E",
		"\x1b":         "unexpected character U+001B",
	} {
		if got := DescribeChar(in); got != want {
			t.Errorf("DescribeChar(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestQuotedLineIsSafe(t *testing.T) {
	d := Errorf(FileLineColLoc{File: "a\x1b[2J.tma", Line: 1, Col: 12}, "bad \x07 thing")
	sm := NewSourceMgr()
	sm.Add("a\x1b[2J.tma", "s = \"\x1b]0;x\x07\u20ac\" %x \u202e\n")
	got := d.Render(sm)
	want := "a?[2J.tma:1:12: error: bad ? thing\ns = \"?]0;x?\u20ac\" %x ?\n           ^\n"
	if got != want {
		t.Errorf("Render = %q, want %q", got, want)
	}
}
