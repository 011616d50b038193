package bundle

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

func TestExprEval(t *testing.T) {
	vals := map[string]int64{"arg0.dim0": 100, "arg0.dim1": 7, "arg0.stride0": 7, "arg1": -5, "i0": 3, "tmp0.ptr": 1 << 40, "arg0.ptr": 4096}
	lookup := func(r Ref) (int64, error) { return vals[r.String()], nil }
	cases := []struct {
		src  string
		want int64
	}{
		{"42", 42},
		{"(arg0.dim0 + 31) / 32", 4},
		{"arg0.stride0 * 4", 28},
		{"ceildiv(arg0.dim0, 32)", 4},
		{"ceildiv(96, 32)", 3},
		{"ceildiv(0, 32)", 0},
		{"min(arg0.dim0, 64, arg0.dim1)", 7},
		{"max(arg0.dim0, 64)", 100},
		{"-arg1", 5},
		{"- -3", 3},
		{"arg1 * 2 - 1", -11},
		{"10 - 3 - 2", 5},
		{"100 / 7 / 2", 7},
		{"100 % 7", 2},
		{"2 + 3 * 4", 14},
		{"(2 + 3) * 4", 20},
		{"i0*i0", 9},
		{"arg0.ptr - 8 * 4", 4064},
		{"9223372036854775807", math.MaxInt64},
		{"-9223372036854775807 - 1", math.MinInt64},
		{"-4611686018427387904 * 2", math.MinInt64},
	}
	for _, c := range cases {
		e, err := ParseExpr(c.src)
		if err != nil {
			t.Errorf("%q: %v", c.src, err)
			continue
		}
		got, err := e.Eval(lookup)
		if err != nil || got != c.want {
			t.Errorf("%q = %d, %v; want %d", c.src, got, err, c.want)
		}
		if e.String() != c.src {
			t.Errorf("String() = %q", e.String())
		}
	}
}

func TestExprErrors(t *testing.T) {
	lookup := func(r Ref) (int64, error) {
		if r.String() == "arg3" {
			return 0, nil
		}
		return -8, nil
	}
	eval := []struct{ src, want string }{
		{"ceildiv(arg0.dim0, arg3)", "division by zero in ceildiv(arg0.dim0, arg3)"},
		{"7 / arg3", "division by zero in 7 / arg3"},
		{"7 % (arg3)", "division by zero in 7 % (arg3)"},
		{"arg1 / 2", "negative operand in arg1 / 2 (-8 and 2)"},
		{"2 % arg1", "negative operand in 2 % arg1"},
		{"9223372036854775807 + 1", "integer overflow in 9223372036854775807 + 1"},
		{"-9223372036854775807 - 2", "integer overflow"},
		{"4611686018427387904 * 2", "integer overflow"},
		{"-(-9223372036854775807 - 1)", "integer overflow"},
		{"-4611686018427387904 * -2", "integer overflow"},
	}
	for _, c := range eval {
		e, err := ParseExpr(c.src)
		if err != nil {
			t.Errorf("%q: %v", c.src, err)
			continue
		}
		if _, err := e.Eval(lookup); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.src, err, c.want)
		}
	}
	parse := []struct{ src, want string }{
		{"", "unexpected end"},
		{"1 +", "unexpected end"},
		{"(1", "missing )"},
		{"1 2", `unexpected "2"`},
		{"ceildiv(1)", "ceildiv takes 2 arguments"},
		{"ceildiv(1, 2, 3)", "ceildiv takes 2 arguments"},
		{"min(1)", "min takes at least 2"},
		{"foo", `unknown name "foo"`},
		{"arg0.size0", "unknown field"},
		{"tmp0", "needs a field"},
		{"i0.dim0", "has no fields"},
		{"arg01", "unknown name"},
		{"99999999999999999999", "bad integer"},
		{"1.5", "bad integer"},
		{"1 ^ 2", `unexpected "^"`},
		{strings.Repeat("(", 100) + "1" + strings.Repeat(")", 100), "nested deeper"},
		{strings.Repeat("-", 100) + "1", "nested deeper"},
		{strings.Repeat("1+", 3000) + "1", "longer than"},
	}
	for _, c := range parse {
		if _, err := ParseExpr(c.src); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.src, err, c.want)
		}
	}
}

// planManifest is a format-2 manifest with one entry using every step
// kind.
const planManifest = `{"format":2,"tmac_version":"t","source":"s.tma","target":"sm_90a","ptx_version":80,
"kernels":[{"name":"saxpy_kernel_0","args":["f32","memref<?xf32>"],"params":[
  {"arg":0,"role":"scalar","dim":0,"type":"float"},{"arg":1,"role":"base","dim":0,"type":"float*"},{"arg":1,"role":"size","dim":0,"type":"i64"}]},
 {"name":"other","args":["!nvgpu.tensormap.descriptor<tensor = memref<8x8xf32, 3>, swizzle = none, l2promo = none, oob = zero, interleave = none>"],"params":[{"arg":0,"role":"tensormap","dim":0,"type":"[128 x i8]*"}]}],
"entries":[{"name":"main","loc":"s.tma:3:1",
 "args":[{"name":"arg0","type":"memref<?x8xf32>","kind":"memref","elem":"f32","elem_bytes":4,"shape":[-1,8],"strides":[8,1],"offset":0,"contiguous":true,"output":false},
         {"name":"arg1","type":"f32","kind":"scalar","elem":"f32"},
         {"name":"arg2","type":"index","kind":"scalar","elem":"index"}],
 "steps":[
  {"op":"alloc","id":"tmp0","type":"memref<?xf32>","elem_bytes":4,"shape":["arg0.dim0 * 8"],"loc":"s.tma:4:1"},
  {"op":"copy","dst":"tmp0","src":"arg0","bytes":"arg0.dim0 * 32","src_bytes":"arg0.dim0 * 32","loc":"s.tma:5:1"},
  {"op":"memset","dst":"tmp0","elem_bytes":4,"count":"arg0.dim0 * 8","value":"0000803f","loc":"s.tma:6:1"},
  {"op":"tensormap","id":"tm0","of":"arg0","loc":"s.tma:7:1","data_type":7,"data_type_name":"float32","rank":2,
   "global_address":"arg0.ptr","global_dim":["8","arg0.dim0"],"global_strides":["32"],"box_dim":[8,8],"element_strides":[1,1],
   "interleave":0,"swizzle":0,"l2_promotion":0,"oob_fill":0},
  {"op":"for","var":"i0","lb":"0","ub":"arg2","step":"1","loc":"s.tma:8:1","body":[
   {"op":"launch","kernel":"saxpy_kernel_0","loc":"s.tma:9:1","grid":["ceildiv(arg0.dim0 * 8, 128)","1","1"],"block":["128","1","1"],
    "cluster":null,"non_portable_cluster":false,"shared_bytes":"0","params":[
     {"name":"arg0","role":"scalar","type":"f32","value":"arg1"},
     {"name":"arg1","role":"base","type":"ptr","value":"tmp0.ptr"},
     {"name":"arg1.size0","role":"size","type":"i64","value":"arg0.dim0 * 8 + i0 * 0"}]},
   {"op":"launch","kernel":"other","loc":"s.tma:10:1","grid":["1","1","1"],"block":["128","1","1"],
    "cluster":["1","1","1"],"non_portable_cluster":false,"shared_bytes":"1024","params":[
     {"name":"arg0","role":"tensormap","tensormap":"tm0"}]}]},
  {"op":"launch","kernel":"saxpy_kernel_0","loc":"s.tma:11:1","grid":["1","1","1"],"block":["1","1","1"],
   "cluster":null,"non_portable_cluster":false,"shared_bytes":"0","params":[
    {"name":"arg0","role":"scalar","type":"f32","value":1.5},
    {"name":"arg1","role":"base","type":"ptr","value":"arg0.ptr - 8"},
    {"name":"arg1.size0","role":"size","type":"i64","value":"arg0.dim0"}]},
  {"op":"free","id":"tmp0","loc":"s.tma:12:1"}]}]}`

const planPTX = testPTX

func TestPlanRoundTrip(t *testing.T) {
	data := rawTar(t, files(planManifest, planPTX)...)
	b, err := Read(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	e := b.Manifest.Entries[0]
	if len(e.Steps) != 7 || e.Steps[4].For == nil || len(e.Steps[4].For.Body) != 2 {
		t.Fatalf("steps: %+v", e.Steps)
	}
	if p := e.Steps[5].Launch.Params[0]; p.Float == nil || *p.Float != 1.5 {
		t.Fatalf("float param: %+v", p)
	}
	if p := e.Steps[4].For.Body[0].Launch.Params[0]; p.Float != nil || p.Value != "arg1" {
		t.Fatalf("float arg param: %+v", p)
	}
	again, err := Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	b2, err := Read(bytes.NewReader(again))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(b, b2) {
		t.Fatalf("changed on a round trip:\n%+v\n%+v", b.Manifest.Entries, b2.Manifest.Entries)
	}
	// The written JSON keeps the fields Python reads, zero or not.
	var raw struct {
		Entries []struct {
			Args  []map[string]any `json:"args"`
			Steps []map[string]any `json:"steps"`
		} `json:"entries"`
	}
	man := again[512 : 512+bytes.IndexByte(again[512:], 0)]
	if err := json.Unmarshal(man, &raw); err != nil {
		t.Fatal(err)
	}
	if _, ok := raw.Entries[0].Args[0]["output"]; !ok {
		t.Errorf("memref arg lacks output: %v", raw.Entries[0].Args[0])
	}
	if _, ok := raw.Entries[0].Args[1]["shape"]; ok {
		t.Errorf("scalar arg has a shape: %v", raw.Entries[0].Args[1])
	}
	if v, ok := raw.Entries[0].Steps[3]["swizzle"]; !ok || v != 0.0 {
		t.Errorf("tensormap swizzle: %v", raw.Entries[0].Steps[3])
	}
	if v, ok := raw.Entries[0].Steps[5]["cluster"]; !ok || v != nil {
		t.Errorf("launch cluster: %v", raw.Entries[0].Steps[5])
	}
}

func TestPlanRejects(t *testing.T) {
	cases := []struct{ old, new, want string }{
		{`"format":2`, `"format":1`, "a format 1 manifest has no entries"},
		{`"name":"main"`, `"name":""`, "entry 0 has no name"},
		{`"name":"arg1","type":"f32"`, `"name":"argX","type":"f32"`, `argument 1 is named "argX"`},
		{`"kind":"scalar","elem":"f32"`, `"kind":"scalar","elem":"vector<4xf32>"`, "scalar type"},
		{`"kind":"memref"`, `"kind":"tensor"`, `unknown kind "tensor"`},
		{`"shape":[-1,8]`, `"shape":[-1]`, "shape [-1] and strides [8 1]"},
		{`"shape":[-1,8]`, `"shape":[-2,8]`, "shape [-2 8]"},
		{`{"op":"alloc"`, `{"op":"malloc"`, `unknown step op "malloc"`},
		{`"id":"tmp0","type"`, `"id":"scratch","type"`, `bad id "scratch"`},
		{`"shape":["arg0.dim0 * 8"]`, `"shape":["arg0.dim2 * 8"]`, "arg0.dim2: argument 0 has rank 2"},
		{`"shape":["arg0.dim0 * 8"]`, `"shape":["arg1 * 8"]`, "arg1 is not an integer scalar argument"},
		{`"shape":["arg0.dim0 * 8"]`, `"shape":["arg2.dim0"]`, "argument 2 is not a memref"},
		{`"shape":["arg0.dim0 * 8"]`, `"shape":["arg7"]`, "the entry has 3 arguments"},
		{`"shape":["arg0.dim0 * 8"]`, `"shape":["i0"]`, "i0 is not the variable of an enclosing loop"},
		{`"shape":["arg0.dim0 * 8"]`, `"shape":["(1"]`, "missing )"},
		{`"src":"arg0"`, `"src":"arg2"`, `"arg2" is not a memref argument`},
		{`"src":"arg0"`, `"src":"tmp1"`, `"tmp1" is not a memref argument or a live scratch allocation`},
		{`"value":"0000803f"`, `"value":"00803f"`, "is not 4 bytes in hexadecimal"},
		{`"src_bytes":"arg0.dim0 * 32"`, `"src_bytes":"arg0.dim9"`, "arg0.dim9: argument 0 has rank 2"},
		{`"of":"arg0"`, `"of":"tmp0"`, "rank 2 for a memref of rank 1"},
		{`"global_strides":["32"]`, `"global_strides":[]`, "global_strides has 0 entries, not 1"},
		{`"box_dim":[8,8]`, `"box_dim":[8]`, "box_dim [8]"},
		{`"swizzle":0`, `"swizzle":9`, "swizzle 9 is out of range"},
		{`"var":"i0"`, `"var":"i1"`, `the loop variable is "i1", not i0`},
		{`"kernel":"other"`, `"kernel":"nope"`, `kernel "nope" is not in the manifest`},
		{`"grid":["1","1","1"],"block":["128"`, `"grid":["1","1"],"block":["128"`, "grid has 2 entries, not 3"},
		{`"tensormap":"tm0"`, `"tensormap":"tm1"`, `tensor map "tm1" is not defined before the launch`},
		{`{"name":"arg1","role":"base","type":"ptr","value":"tmp0.ptr"},`, ``, "2 params for kernel saxpy_kernel_0, which takes 3"},
		{`{"name":"arg1.size0","role":"size"`, `{"name":"arg1.size1","role":"size"`, "param 2 is arg1.size1 (size) but kernel saxpy_kernel_0's is arg1.size0 (size)"},
		{`"role":"size","type":"i64","value":"arg0.dim0 * 8`, `"role":"size","type":"i32","value":"arg0.dim0 * 8`, "type i32, not i64"},
		{`"role":"scalar","type":"f32","value":"arg1"`, `"role":"scalar","type":"f64","value":"arg1"`, "type f64 for a parameter of LLVM type float"},
		{`"role":"scalar","type":"f32","value":"arg1"`, `"role":"scalar","type":"f32","value":"arg2"`, `value "arg2" is neither a number nor a float scalar argument`},
		{`"role":"base","type":"ptr","value":"tmp0.ptr"`, `"role":"base","type":"ptr","value":1.5`, "a float value for an integer param"},
		{`{"op":"free","id":"tmp0","loc":"s.tma:12:1"}`, `{"op":"free","id":"tmp0","loc":"s.tma:12:1"},{"op":"free","id":"tmp0","loc":"s.tma:13:1"}`, `step 7 (free at s.tma:13:1): "tmp0" is not a live scratch allocation`},
	}
	for _, c := range cases {
		t.Run(c.want, func(t *testing.T) {
			if !strings.Contains(planManifest, c.old) {
				t.Fatalf("the manifest has no %q", c.old)
			}
			m := strings.Replace(planManifest, c.old, c.new, 1)
			_, err := Read(bytes.NewReader(rawTar(t, files(m, planPTX)...)))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want %q", err, c.want)
			}
		})
	}
}

func TestPlanLimits(t *testing.T) {
	var steps []string
	for i := 0; i <= MaxForDepth; i++ {
		steps = append(steps, `{"op":"for","var":"i`+strconv.Itoa(i)+`","lb":"0","ub":"1","step":"1","loc":"x","body":[`)
	}
	nested := strings.Join(steps, "") + strings.Repeat("]}", len(steps))
	m := strings.Replace(planManifest, `{"op":"free","id":"tmp0","loc":"s.tma:12:1"}`, nested, 1)
	_, err := Read(bytes.NewReader(rawTar(t, files(m, planPTX)...)))
	if err == nil || !strings.Contains(err.Error(), "loops nested deeper than 16") {
		t.Fatalf("error %v", err)
	}
}
