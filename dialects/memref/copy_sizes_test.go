package memref

import "testing"

func TestCheckCopySizes(t *testing.T) {
	for _, c := range []struct {
		src, dst []int64
		empty    bool
		err      string
	}{
		{[]int64{2, 3}, []int64{2, 3}, false, ""},
		{[]int64{2, 0}, []int64{2, 0}, true, ""},
		// The outer empty dimension ends the loop nest before the inner
		// sizes are compared.
		{[]int64{0, 3}, []int64{0, 4}, true, ""},
		{[]int64{2, 3}, []int64{2, 4}, false, "the source and target sizes differ in dimension 1: 3 and 4"},
	} {
		empty, err := CheckCopySizes(c.src, c.dst)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if empty != c.empty || got != c.err {
			t.Errorf("CheckCopySizes(%v, %v) = %v, %q; want %v, %q", c.src, c.dst, empty, got, c.empty, c.err)
		}
	}
}
