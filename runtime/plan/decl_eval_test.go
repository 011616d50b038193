package plan

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tmac-dev/tmac/bundle"
)

// evalEntry is a plan with a dynamic memref read by a tensor map, an
// integer and a float scalar, a loop and a launch whose grid divides by
// the integer argument.
const evalEntry = `{"name": "main", "loc": "e.tma:1:1",
 "args": [
  {"name": "arg0", "type": "memref<?x64xf16>", "kind": "memref", "elem": "f16", "elem_bytes": 2, "shape": [-1, 64], "strides": [64, 1], "offset": 0, "contiguous": true, "output": false},
  {"name": "arg1", "type": "i32", "kind": "scalar", "elem": "i32"},
  {"name": "arg2", "type": "f32", "kind": "scalar", "elem": "f32"}],
 "steps": [
  {"op": "tensormap", "id": "tm0", "of": "arg0", "loc": "e.tma:2:3", "data_type": 6, "data_type_name": "float16", "rank": 2,
   "global_address": "arg0.ptr", "global_dim": ["64", "arg0.dim0"], "global_strides": ["128"], "box_dim": [64, 32],
   "element_strides": [1, 1], "interleave": 0, "swizzle": 3, "l2_promotion": 0, "oob_fill": 0},
  {"op": "for", "var": "i0", "lb": "0", "ub": "2", "step": "arg1 - 3", "loc": "e.tma:3:3", "body": [
   {"op": "launch", "kernel": "k", "loc": "e.tma:4:5", "grid": ["arg0.dim0 / arg1", "1", "1"], "block": ["128", "1", "1"],
    "cluster": null, "non_portable_cluster": false, "shared_bytes": "0", "params": [
     {"name": "arg0", "role": "tensormap", "tensormap": "tm0"},
     {"name": "arg1", "role": "scalar", "type": "i32", "value": "arg1 * 1000000 + i0"},
     {"name": "arg2", "role": "scalar", "type": "f16", "value": "arg2"}]}]}]}`

func evalBindings() []Binding {
	return []Binding{
		{Mem: true, Ptr: 1 << 40, Shape: []int64{64, 64}, Strides: []int64{64, 1}, Elem: "f16"},
		{Int: 4},
		{Float: 1.5, IsFloat: true},
	}
}

func TestEvaluate(t *testing.T) {
	var e bundle.Entry
	if err := json.Unmarshal([]byte(evalEntry), &e); err != nil {
		t.Fatal(err)
	}
	dev := newFake()
	var trace []any
	if err := Evaluate(dev, &e, evalBindings(), func(s any) { trace = append(trace, s) }, nil); err != nil {
		t.Fatal(err)
	}
	if len(trace) != 3 || len(dev.launches) != 2 || len(dev.maps) != 1 {
		t.Fatalf("trace %+v, launches %d, maps %d", trace, len(dev.launches), len(dev.maps))
	}
	l := trace[2].(TraceLaunch)
	// 4*10^6 + 1 as i32, then 1.5 as f16 (0x3e00).
	if l.Grid[0] != 16 || l.Params[1].Bytes != "01093d00" || l.Params[2].Bytes != "003e" || l.Params[0].TensorMap != "tm0" {
		t.Fatalf("launch %+v", l)
	}
	if tm := trace[0].(TraceTensorMap); tm.GlobalDim[1] != 64 || tm.GlobalStrides[0] != 128 || tm.BoxDim[0] != 64 {
		t.Fatalf("tensor map %+v", tm)
	}
}

func TestEvaluateErrors(t *testing.T) {
	cases := []struct {
		name string
		edit func(e *bundle.Entry, b []Binding) []Binding
		want string
	}{
		{"count", func(e *bundle.Entry, b []Binding) []Binding { return b[:2] }, "@main takes 3 arguments, 2 given"},
		{"scalar for memref", func(e *bundle.Entry, b []Binding) []Binding { b[0] = Binding{Int: 1}; return b },
			"argument 0 (arg0): expected memref<?x64xf16> (f16, shape [?, 64], contiguous), got a scalar"},
		{"element type", func(e *bundle.Entry, b []Binding) []Binding { b[0].Elem = "f32"; return b },
			"argument 0 (arg0): expected memref<?x64xf16> (f16, shape [?, 64], contiguous), got f32 elements of shape [64, 64]"},
		{"static size", func(e *bundle.Entry, b []Binding) []Binding { b[0].Shape = []int64{64, 32}; return b },
			"got shape [64, 32]"},
		{"not contiguous", func(e *bundle.Entry, b []Binding) []Binding {
			e.Args[0].Strides = []int64{-1, 1}
			b[0].Strides = []int64{128, 1}
			return b
		}, "got strides [128, 1]"},
		{"alignment", func(e *bundle.Entry, b []Binding) []Binding { b[0].Ptr += 8; return b }, "the address 0x10000000008 is not 16-byte aligned"},
		{"tensor map stride", func(e *bundle.Entry, b []Binding) []Binding {
			e.Args[0].Strides, e.Args[0].Contiguous = []int64{-1, -1}, false
			b[0].Strides = []int64{128, 2}
			return b
		}, "a tensor map reads it, so its innermost stride must be 1, not 2"},
		{"i32 range", func(e *bundle.Entry, b []Binding) []Binding { b[1].Int = 1 << 33; return b }, "argument 1 (arg1): 8589934592 does not fit i32"},
		{"float for int", func(e *bundle.Entry, b []Binding) []Binding { b[1] = Binding{Float: 2, IsFloat: true}; return b },
			"argument 1 (arg1): expected an integer (i32), got the float 2"},
		{"int for float", func(e *bundle.Entry, b []Binding) []Binding { b[2] = Binding{Int: 2}; return b },
			"argument 2 (arg2): expected a float (f32), got the integer 2"},
		{"loop step", func(e *bundle.Entry, b []Binding) []Binding { b[1].Int = 0; return b },
			"e.tma:3:3: the loop step is -3; it must be positive"},
		{"grid", func(e *bundle.Entry, b []Binding) []Binding {
			e.Steps[1].For.Step = "1"
			b[1].Int = 0
			return b
		}, "e.tma:4:5: division by zero in arg0.dim0 / arg1"},
		{"param range", func(e *bundle.Entry, b []Binding) []Binding {
			e.Steps[1].For.Body[0].Launch.Params[1].Value = "arg1 * 2000000000"
			return b
		}, "e.tma:4:5: kernel k param arg1: 8000000000 does not fit i32"},
		{"tensor map", func(e *bundle.Entry, b []Binding) []Binding { e.Steps[0].TensorMap.GlobalStrides[0] = "100"; return b },
			"e.tma:2:3: tensor map: global stride of dimension 1 is 100 bytes, not a multiple of 16"},
		{"launch limits", func(e *bundle.Entry, b []Binding) []Binding {
			e.Steps[1].For.Body[0].Launch.Block[0] = "2048"
			return b
		},
			"e.tma:4:5: kernel k cannot be launched: block size x = 2048 is outside [1, 1024]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var e bundle.Entry
			if err := json.Unmarshal([]byte(evalEntry), &e); err != nil {
				t.Fatal(err)
			}
			b := c.edit(&e, evalBindings())
			dev := newFake()
			err := Evaluate(dev, &e, b, nil, nil)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want %q", err, c.want)
			}
		})
	}
}

// TestEvaluateCopySizes: a copy between memrefs whose dynamic sizes differ
// at run time fails, as the IR executor's gpu.memcpy does.
func TestEvaluateCopySizes(t *testing.T) {
	const entry = `{"name": "main", "loc": "c.tma:1:1",
 "args": [
  {"name": "arg0", "type": "memref<?xf32>", "kind": "memref", "elem": "f32", "elem_bytes": 4, "shape": [-1], "strides": [1], "offset": 0, "contiguous": true, "output": false},
  {"name": "arg1", "type": "memref<?xf32>", "kind": "memref", "elem": "f32", "elem_bytes": 4, "shape": [-1], "strides": [1], "offset": 0, "contiguous": true, "output": false}],
 "steps": [{"op": "copy", "dst": "arg1", "src": "arg0", "bytes": "arg1.dim0 * 4", "src_bytes": "arg0.dim0 * 4", "loc": "c.tma:2:3"}]}`
	var e bundle.Entry
	if err := json.Unmarshal([]byte(entry), &e); err != nil {
		t.Fatal(err)
	}
	mem := func(ptr uint64, n int64) Binding {
		return Binding{Mem: true, Ptr: ptr, Shape: []int64{n}, Strides: []int64{1}, Elem: "f32"}
	}
	dev := newFake()
	src, _ := dev.Alloc(64)
	dst, _ := dev.Alloc(64)
	var trace []any
	if err := Evaluate(dev, &e, []Binding{mem(src, 8), mem(dst, 8)}, func(s any) { trace = append(trace, s) }, nil); err != nil {
		t.Fatal(err)
	}
	if c := trace[0].(TraceCopy); c.Bytes != 32 || c.Dst != dst || c.Src != src {
		t.Fatalf("copy %+v", c)
	}
	err := Evaluate(dev, &e, []Binding{mem(src, 8), mem(dst, 16)}, nil, nil)
	if err == nil || err.Error() != "c.tma:2:3: a copy needs memrefs of the same size (64 and 32 bytes)" {
		t.Fatalf("error %v", err)
	}
}
