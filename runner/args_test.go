package runner

import (
	"bytes"
	"testing"

	"github.com/tmac-dev/tmac/ir"
)

// TestMakeArgsCache: with a RefCache, a second makeArgs of the same
// arguments, seed and distribution gets the first one's values in buffers
// of its own (the runner writes into them); another seed draws anew.
func TestMakeArgsCache(t *testing.T) {
	types := []ir.Type{
		ir.MemRefTypeOf([]int64{64, 32}, ir.FloatTypeOf(ir.BF16), nil, nil),
		ir.MemRefTypeOf([]int64{64, 32}, ir.FloatTypeOf(ir.F32), nil, nil),
	}
	outputs := []bool{false, true}
	opts := &Options{Seed: 7, Dist: "normal", RefCache: NewRefCache()}
	first, err := makeArgs(types, outputs, nil, nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	// The caller may write into what it got; the cache must not see it.
	first[0].buf.Bytes[0] ^= 0xff
	second, err := makeArgs(types, outputs, nil, nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	first[0].buf.Bytes[0] ^= 0xff
	for i := range types {
		if first[i].buf == second[i].buf {
			t.Errorf("arg %d: the second call shares the first's buffer", i)
		}
		if !bytes.Equal(first[i].buf.Bytes, second[i].buf.Bytes) {
			t.Errorf("arg %d: the second call's values differ from the first's", i)
		}
	}
	third, err := makeArgs(types, outputs, nil, nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	if third[0].buf == second[0].buf {
		t.Error("two calls served from the cache share a buffer")
	}
	fresh, err := makeArgs(types, outputs, nil, nil, &Options{Seed: 7, Dist: "normal"})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(fresh[0].buf.Bytes, second[0].buf.Bytes) {
		t.Error("cached inputs differ from inputs drawn without a cache")
	}
	other, err := makeArgs(types, outputs, nil, nil, &Options{Seed: 8, Dist: "normal", RefCache: opts.RefCache})
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(other[0].buf.Bytes, second[0].buf.Bytes) {
		t.Error("another seed got the cached inputs")
	}
}
