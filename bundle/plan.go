package bundle

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
)

// Host plans (manifest format 2): for every public host function of the
// program, its arguments and the steps that run it, with the numbers as
// expressions over the arguments (expr.go). docs/design/python-entry.md
// (section 2) is the specification; python/tmac/_plan.py executes the same
// JSON.

// Limits on host plans, so a hostile manifest cannot make a reader
// allocate or recurse without bound.
const (
	MaxEntries  = 256
	MaxArgs     = 1024 // per entry
	MaxSteps    = 1 << 16
	MaxForDepth = 16
	MaxRank     = 16
)

// Entry is the host plan of one host function.
type Entry struct {
	Name  string `json:"name"`
	Loc   string `json:"loc"`
	Args  []Arg  `json:"args"`
	Steps []Step `json:"steps"`
}

// Arg is one argument of an entry: a memref (Kind "memref") or a scalar
// (Kind "scalar").
type Arg struct {
	Name      string  `json:"name"`
	Type      string  `json:"type"` // the IR type
	Kind      string  `json:"kind"`
	Elem      string  `json:"elem"` // element type, or the scalar's type
	ElemBytes int     `json:"elem_bytes,omitempty"`
	Shape     []int64 `json:"shape,omitempty"`   // -1: dynamic
	Strides   []int64 `json:"strides,omitempty"` // elements; -1: dynamic
	Offset    int64   `json:"offset,omitempty"`  // -1: dynamic
	// Contiguous: the layout is the identity, so a binding must be
	// dense row-major whatever its sizes.
	Contiguous bool `json:"contiguous,omitempty"`
	Output     bool `json:"output,omitempty"` // the {tmac.output} attribute
}

// MarshalJSON writes every memref field of a memref argument, zero or not,
// and only the scalar fields of a scalar one.
func (a Arg) MarshalJSON() ([]byte, error) {
	if a.Kind != "memref" {
		return marshalRaw(struct {
			Name string `json:"name"`
			Type string `json:"type"`
			Kind string `json:"kind"`
			Elem string `json:"elem"`
		}{a.Name, a.Type, a.Kind, a.Elem})
	}
	shape, strides := a.Shape, a.Strides
	if shape == nil {
		shape = []int64{}
	}
	if strides == nil {
		strides = []int64{}
	}
	return marshalRaw(struct {
		Name       string  `json:"name"`
		Type       string  `json:"type"`
		Kind       string  `json:"kind"`
		Elem       string  `json:"elem"`
		ElemBytes  int     `json:"elem_bytes"`
		Shape      []int64 `json:"shape"`
		Strides    []int64 `json:"strides"`
		Offset     int64   `json:"offset"`
		Contiguous bool    `json:"contiguous"`
		Output     bool    `json:"output"`
	}{a.Name, a.Type, a.Kind, a.Elem, a.ElemBytes, shape, strides, a.Offset, a.Contiguous, a.Output})
}

// Step is one step of a plan: exactly one of the kind fields is set,
// matching Op.
type Step struct {
	Op        string
	Alloc     *AllocStep
	Copy      *CopyStep
	Memset    *MemsetStep
	Free      *FreeStep
	TensorMap *TensorMapStep
	Launch    *LaunchStep
	For       *ForStep
}

// Step kinds.
const (
	OpAlloc     = "alloc"
	OpCopy      = "copy"
	OpMemset    = "memset"
	OpFree      = "free"
	OpTensorMap = "tensormap"
	OpLaunch    = "launch"
	OpFor       = "for"
)

// AllocStep allocates device scratch memory (gpu.alloc), dense row-major.
type AllocStep struct {
	Op        string   `json:"op"`
	ID        string   `json:"id"` // tmpN
	Type      string   `json:"type"`
	ElemBytes int      `json:"elem_bytes"`
	Shape     []string `json:"shape"`
	Loc       string   `json:"loc"`
}

// CopyStep copies Bytes bytes between contiguous device memrefs (argN or
// tmpN); SrcBytes is the source's size, which must equal Bytes (the
// destination's) when the copy runs.
type CopyStep struct {
	Op       string `json:"op"`
	Dst      string `json:"dst"`
	Src      string `json:"src"`
	Bytes    string `json:"bytes"`
	SrcBytes string `json:"src_bytes"`
	Loc      string `json:"loc"`
}

// MemsetStep fills Count elements of ElemBytes bytes at Dst with Value
// (the element's bytes, little-endian, in hexadecimal).
type MemsetStep struct {
	Op        string `json:"op"`
	Dst       string `json:"dst"`
	ElemBytes int    `json:"elem_bytes"`
	Count     string `json:"count"`
	Value     string `json:"value"`
	Loc       string `json:"loc"`
}

// FreeStep frees a scratch allocation (gpu.dealloc).
type FreeStep struct {
	Op  string `json:"op"`
	ID  string `json:"id"`
	Loc string `json:"loc"`
}

// TensorMapStep encodes a tensor map: the cuTensorMapEncodeTiled arguments
// in driver order (innermost dimension first).
type TensorMapStep struct {
	Op             string   `json:"op"`
	ID             string   `json:"id"` // tmN
	Of             string   `json:"of"` // argN or tmpN
	Loc            string   `json:"loc"`
	DataType       int      `json:"data_type"`
	DataTypeName   string   `json:"data_type_name"`
	Rank           int      `json:"rank"`
	GlobalAddress  string   `json:"global_address"`
	GlobalDim      []string `json:"global_dim"`     // rank entries
	GlobalStrides  []string `json:"global_strides"` // rank-1 entries, bytes
	BoxDim         []int64  `json:"box_dim"`
	ElementStrides []int64  `json:"element_strides"`
	Interleave     int      `json:"interleave"`
	Swizzle        int      `json:"swizzle"`
	L2Promotion    int      `json:"l2_promotion"`
	OOBFill        int      `json:"oob_fill"`
}

// LaunchStep launches a kernel. Grid counts blocks; Cluster is nil
// without a cluster.
type LaunchStep struct {
	Op                 string        `json:"op"`
	Kernel             string        `json:"kernel"`
	Loc                string        `json:"loc"`
	Grid               []string      `json:"grid"`
	Block              []string      `json:"block"`
	Cluster            []string      `json:"cluster"`
	NonPortableCluster bool          `json:"non_portable_cluster"`
	SharedBytes        string        `json:"shared_bytes"`
	Params             []LaunchParam `json:"params"`
}

// LaunchParam is the value of one kernel parameter, in the kernel's ABI
// order. Name and Role are the kernel's (kernelabi); TensorMap names a map
// for the tensormap role; otherwise Type is the parameter's type (ptr, i1,
// i8, i16, i32, i64, f16, bf16, f32, f64) and Value an expression over the
// entry's arguments, or for a float type "argN" (a float scalar argument)
// when Float is nil, or the literal Float.
type LaunchParam struct {
	Name      string
	Role      string
	TensorMap string
	Type      string
	Value     string
	Float     *float64
}

type launchParamJSON struct {
	Name      string          `json:"name"`
	Role      string          `json:"role"`
	TensorMap string          `json:"tensormap,omitempty"`
	Type      string          `json:"type,omitempty"`
	Value     json.RawMessage `json:"value,omitempty"`
}

// MarshalJSON writes a float literal as a JSON number, any other value as
// a string.
func (p LaunchParam) MarshalJSON() ([]byte, error) {
	j := launchParamJSON{Name: p.Name, Role: p.Role, TensorMap: p.TensorMap, Type: p.Type}
	var err error
	switch {
	case p.Float != nil:
		j.Value, err = marshalRaw(*p.Float)
	case p.TensorMap == "":
		j.Value, err = marshalRaw(p.Value)
	}
	if err != nil {
		return nil, err
	}
	return marshalRaw(j)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (p *LaunchParam) UnmarshalJSON(data []byte) error {
	var j launchParamJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return err
	}
	*p = LaunchParam{Name: j.Name, Role: j.Role, TensorMap: j.TensorMap, Type: j.Type}
	if len(j.Value) == 0 || string(j.Value) == "null" {
		return nil
	}
	if j.Value[0] == '"' {
		return json.Unmarshal(j.Value, &p.Value)
	}
	var f float64
	if err := json.Unmarshal(j.Value, &f); err != nil {
		return fmt.Errorf("param %s: value is neither a string nor a number", j.Name)
	}
	p.Float = &f
	return nil
}

// ForStep runs Body for Var from LB while below UB, by Step (positive).
type ForStep struct {
	Op   string `json:"op"`
	Var  string `json:"var"` // iN, N the nesting depth
	LB   string `json:"lb"`
	UB   string `json:"ub"`
	Step string `json:"step"`
	Body []Step `json:"body"`
	Loc  string `json:"loc"`
}

// stepFields names the kind field of Step for each op.
var stepFields = map[string]string{
	OpAlloc: "Alloc", OpCopy: "Copy", OpMemset: "Memset", OpFree: "Free",
	OpTensorMap: "TensorMap", OpLaunch: "Launch", OpFor: "For",
}

// field returns the kind field matching Op (invalid for an unknown op),
// allocating its struct first when alloc is set.
func (s *Step) field(alloc bool) reflect.Value {
	name, ok := stepFields[s.Op]
	if !ok {
		return reflect.Value{}
	}
	f := reflect.ValueOf(s).Elem().FieldByName(name)
	if alloc && f.IsNil() {
		f.Set(reflect.New(f.Type().Elem()))
	}
	return f
}

// kind returns the kind field matching Op, or nil for an unknown op.
func (s *Step) kind() any {
	if f := s.field(false); f.IsValid() {
		return f.Interface()
	}
	return nil
}

// Loc returns the step's source location.
func (s *Step) Loc() string {
	if !s.isSet() {
		return ""
	}
	return s.field(false).Elem().FieldByName("Loc").String()
}

// isSet reports whether the kind field matching Op is set.
func (s *Step) isSet() bool {
	f := s.field(false)
	return f.IsValid() && !f.IsNil()
}

// MarshalJSON writes the kind's object.
func (s Step) MarshalJSON() ([]byte, error) {
	if !s.isSet() {
		return nil, fmt.Errorf("step of op %q without its fields", s.Op)
	}
	return marshalRaw(s.kind())
}

// UnmarshalJSON reads a step object of any kind.
func (s *Step) UnmarshalJSON(data []byte) error {
	var head struct {
		Op string `json:"op"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return err
	}
	*s = Step{Op: head.Op}
	f := s.field(true)
	if !f.IsValid() {
		return fmt.Errorf("unknown step op %q", head.Op)
	}
	return json.Unmarshal(data, f.Interface())
}

// marshalRaw is json.Marshal without HTML escaping, so memref<...> types
// stay readable wherever the manifest is printed.
func marshalRaw(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}
