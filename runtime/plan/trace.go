package plan

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/tmac-dev/tmac/bundle"
	"github.com/tmac-dev/tmac/internal/sm90"
	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/runtime/cuda"
)

// Evaluation of a declarative host plan (bundle.Entry), the Go executor of
// docs/design/python-entry.md section 2.8: the bindings are checked against
// the entry's arguments, then the steps are evaluated in order, each one
// recorded in a trace (section 2.10) and performed on a Device.

// Binding is the value bound to one entry argument: for a memref the
// address of its first element, its sizes and strides (elements) and its
// element type; for a scalar its value (Int, or Float when IsFloat).
type Binding struct {
	Mem     bool
	Ptr     uint64
	Shape   []int64
	Strides []int64
	Elem    string
	Int     int64
	Float   float64
	IsFloat bool
}

type memBindingJSON struct {
	Ptr     uint64  `json:"ptr"`
	Shape   []int64 `json:"shape"`
	Strides []int64 `json:"strides"`
	Elem    string  `json:"elem"`
}

// MarshalJSON writes the bindings.json form of a binding.
func (b Binding) MarshalJSON() ([]byte, error) {
	switch {
	case b.Mem:
		return json.Marshal(memBindingJSON{b.Ptr, nonNil(b.Shape), nonNil(b.Strides), b.Elem})
	case b.IsFloat:
		return json.Marshal(map[string]float64{"value": b.Float})
	}
	return json.Marshal(map[string]int64{"value": b.Int})
}

func nonNil(s []int64) []int64 {
	if s == nil {
		return []int64{}
	}
	return s
}

// Bindings is the bindings.json file of the golden tests.
type Bindings struct {
	Entry string    `json:"entry"`
	Args  []Binding `json:"args"`
}

// Trace is the trace.json file of the golden tests: the evaluated steps,
// loops unrolled, in execution order.
type Trace struct {
	Entry string `json:"entry"`
	Steps []any  `json:"steps"`
}

// Trace steps, as trace.json writes them.
type (
	TraceAlloc struct {
		Op    string `json:"op"`
		ID    string `json:"id"`
		Bytes int64  `json:"bytes"`
		Ptr   uint64 `json:"ptr"`
	}
	TraceCopy struct {
		Op    string `json:"op"`
		Dst   uint64 `json:"dst"`
		Src   uint64 `json:"src"`
		Bytes int64  `json:"bytes"`
	}
	TraceMemset struct {
		Op        string `json:"op"`
		Dst       uint64 `json:"dst"`
		ElemBytes int    `json:"elem_bytes"`
		Count     int64  `json:"count"`
		Value     string `json:"value"`
	}
	TraceFree struct {
		Op  string `json:"op"`
		Ptr uint64 `json:"ptr"`
	}
	TraceTensorMap struct {
		Op             string   `json:"op"`
		ID             string   `json:"id"`
		DataType       int      `json:"data_type"`
		Rank           int      `json:"rank"`
		GlobalAddress  uint64   `json:"global_address"`
		GlobalDim      []uint64 `json:"global_dim"`
		GlobalStrides  []uint64 `json:"global_strides"`
		BoxDim         []uint32 `json:"box_dim"`
		ElementStrides []uint32 `json:"element_strides"`
		Interleave     int      `json:"interleave"`
		Swizzle        int      `json:"swizzle"`
		L2Promotion    int      `json:"l2_promotion"`
		OOBFill        int      `json:"oob_fill"`
	}
	TraceLaunch struct {
		Op                 string       `json:"op"`
		Kernel             string       `json:"kernel"`
		Grid               []int        `json:"grid"`
		Block              []int        `json:"block"`
		Cluster            []int        `json:"cluster"`
		NonPortableCluster bool         `json:"non_portable_cluster"`
		SharedBytes        int          `json:"shared_bytes"`
		Params             []TraceParam `json:"params"`
	}
	TraceParam struct {
		Name      string `json:"name"`
		TensorMap string `json:"tensormap,omitempty"`
		Bytes     string `json:"bytes,omitempty"`
	}
)

// NewTraceTensorMap is the trace step of encoding td as tensor map id.
func NewTraceTensorMap(id string, td *cuda.TiledDesc) TraceTensorMap {
	t := TraceTensorMap{Op: bundle.OpTensorMap, ID: id, DataType: int(td.DataType), Rank: len(td.Dims),
		GlobalAddress: uint64(td.Global), GlobalDim: td.Dims, GlobalStrides: td.Strides, BoxDim: td.Box,
		ElementStrides: td.ElementStrides, Interleave: int(td.Interleave), Swizzle: int(td.Swizzle),
		L2Promotion: int(td.L2Promotion), OOBFill: int(td.OOBFill)}
	if t.GlobalStrides == nil {
		t.GlobalStrides = []uint64{}
	}
	if t.ElementStrides == nil {
		for range td.Dims {
			t.ElementStrides = append(t.ElementStrides, 1)
		}
	}
	return t
}

// NewTraceLaunch is the trace step of launch l with the given params.
func NewTraceLaunch(l *Launch, params []TraceParam) TraceLaunch {
	if params == nil {
		params = []TraceParam{}
	}
	t := TraceLaunch{Op: bundle.OpLaunch, Kernel: l.Kernel, Grid: l.Grid[:], Block: l.Block[:],
		NonPortableCluster: l.NonPortableCluster, SharedBytes: l.SharedBytes, Params: params}
	if l.Cluster != [3]int{} {
		t.Cluster = l.Cluster[:]
	}
	return t
}

// BindArgs describes the arguments of Plan.Run (*Mem for memrefs, int64
// or float64 for scalars) as bindings: a memref's first element is at
// Dev + Offset*ElemSize.
func BindArgs(args []Value) ([]Binding, error) {
	out := make([]Binding, len(args))
	for i, a := range args {
		switch a := a.(type) {
		case *Mem:
			if !a.OnDevice() {
				return nil, fmt.Errorf("argument %d is in host memory", i)
			}
			out[i] = Binding{Mem: true, Ptr: a.Dev + uint64(a.Offset)*uint64(a.ElemSize), Shape: a.Shape, Strides: a.Strides, Elem: a.Elem.String()}
		case int64:
			out[i] = Binding{Int: a}
		case float64:
			out[i] = Binding{Float: a, IsFloat: true}
		default:
			return nil, fmt.Errorf("argument %d: %T cannot be bound", i, a)
		}
	}
	return out, nil
}

// CheckBindings checks bindings against the entry's arguments (section 2.8
// step 1): count, kind, element type, rank, static sizes and strides,
// contiguity of identity layouts, 16-byte aligned addresses, unit
// innermost strides for memrefs a tensor map reads, scalar ranges.
func CheckBindings(e *bundle.Entry, args []Binding) error {
	if len(args) != len(e.Args) {
		return fmt.Errorf("@%s takes %d arguments, %d given", e.Name, len(e.Args), len(args))
	}
	mapped := map[string]bool{}
	walkSteps(e.Steps, func(s *bundle.Step) {
		if s.TensorMap != nil {
			mapped[s.TensorMap.Of] = true
		}
	})
	for i, a := range e.Args {
		b := args[i]
		where := fmt.Sprintf("argument %d (%s)", i, a.Name)
		if a.Kind == "scalar" {
			if b.Mem {
				return fmt.Errorf("%s: expected a scalar of type %s, got a memref", where, a.Elem)
			}
			if bundle.IsFloatType(a.Elem) {
				if !b.IsFloat {
					return fmt.Errorf("%s: expected a float (%s), got the integer %d", where, a.Elem, b.Int)
				}
				continue
			}
			if b.IsFloat {
				return fmt.Errorf("%s: expected an integer (%s), got the float %v", where, a.Elem, b.Float)
			}
			if err := CheckParamRange(a.Elem, b.Int); err != nil {
				return fmt.Errorf("%s: %v", where, err)
			}
			continue
		}
		want := describeArg(a)
		if !b.Mem {
			return fmt.Errorf("%s: expected %s, got a scalar", where, want)
		}
		if b.Elem != a.Elem || len(b.Shape) != len(a.Shape) || len(b.Strides) != len(b.Shape) {
			return fmt.Errorf("%s: expected %s, got %s elements of shape %s", where, want, b.Elem, dims(b.Shape))
		}
		for k := range a.Shape {
			if a.Shape[k] >= 0 && b.Shape[k] != a.Shape[k] || b.Shape[k] < 0 {
				return fmt.Errorf("%s: expected %s, got shape %s", where, want, dims(b.Shape))
			}
			if a.Strides[k] >= 0 && b.Strides[k] != a.Strides[k] && b.Shape[k] != 1 {
				return fmt.Errorf("%s: expected %s, got strides %s", where, want, dims(b.Strides))
			}
		}
		if a.Contiguous && !rowMajor(b.Shape, b.Strides) {
			return fmt.Errorf("%s: expected %s, got strides %s", where, want, dims(b.Strides))
		}
		if b.Ptr%16 != 0 {
			return fmt.Errorf("%s: the address %#x is not 16-byte aligned", where, b.Ptr)
		}
		if r := len(b.Strides); mapped[a.Name] && r > 0 && b.Strides[r-1] != 1 {
			return fmt.Errorf("%s: a tensor map reads it, so its innermost stride must be 1, not %d", where, b.Strides[r-1])
		}
	}
	return nil
}

// describeArg describes what a memref argument accepts.
func describeArg(a bundle.Arg) string {
	s := fmt.Sprintf("%s (%s, shape %s", a.Type, a.Elem, dims(a.Shape))
	if a.Contiguous {
		s += ", contiguous"
	}
	return s + ")"
}

// dims prints sizes as [4, ?, 8] (-1: dynamic).
func dims(v []int64) string {
	var parts []string
	for _, d := range v {
		if d == -1 {
			parts = append(parts, "?")
		} else {
			parts = append(parts, strconv.FormatInt(d, 10))
		}
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func rowMajor(shape, strides []int64) bool {
	s := int64(1)
	for i := len(shape) - 1; i >= 0; i-- {
		if shape[i] != 1 && strides[i] != s {
			return false
		}
		s *= shape[i]
	}
	return true
}

func walkSteps(steps []bundle.Step, f func(*bundle.Step)) {
	for i := range steps {
		f(&steps[i])
		if steps[i].For != nil {
			walkSteps(steps[i].For.Body, f)
		}
	}
}

// evaluator runs a plan's steps.
type evaluator struct {
	entry    *bundle.Entry
	args     []Binding
	dev      Device
	trace    func(any) // records each evaluated step (nil: none)
	onLaunch func(*Launch) error
	loops    []int64
	tmps     map[string]*tmpAlloc
	live     []uint64 // allocations not yet freed, in allocation order
	nAllocs  int
	maps     map[string][]byte
	exprs    map[string]*bundle.Expr // parsed once per evaluation
}

type tmpAlloc struct {
	ptr     uint64
	shape   []int64
	strides []int64
}

// Evaluate checks the bindings and runs the entry's steps on dev,
// recording each evaluated step with trace if it is not nil; onLaunch, if
// set, is called after every launch. Allocations not freed by a free step
// are freed at the end (recorded as free steps, in allocation order).
func Evaluate(dev Device, e *bundle.Entry, args []Binding, trace func(any), onLaunch func(*Launch) error) error {
	if err := CheckBindings(e, args); err != nil {
		return err
	}
	x := &evaluator{entry: e, args: args, dev: dev, trace: trace, onLaunch: onLaunch, tmps: map[string]*tmpAlloc{}, maps: map[string][]byte{}, exprs: map[string]*bundle.Expr{}}
	err := x.block(e.Steps)
	for _, p := range x.live {
		x.record(TraceFree{Op: bundle.OpFree, Ptr: p})
		if ferr := dev.Free(p); ferr != nil && err == nil {
			err = ferr
		}
	}
	return err
}

func (x *evaluator) record(s any) {
	if x.trace != nil {
		x.trace(s)
	}
}

func (x *evaluator) block(steps []bundle.Step) error {
	for i := range steps {
		s := &steps[i]
		if err := x.step(s); err != nil {
			var se *StepError
			if errors.As(err, &se) {
				return err // a step of a loop's body
			}
			return &StepError{Loc: s.Loc(), Err: err}
		}
	}
	return nil
}

// StepError is the failure of a plan step, with the step's source location
// (file:line:col, "" if unknown).
type StepError struct {
	Loc string
	Err error
}

func (e *StepError) Error() string {
	if e.Loc == "" {
		return e.Err.Error()
	}
	return e.Loc + ": " + e.Err.Error()
}

func (e *StepError) Unwrap() error { return e.Err }

func (x *evaluator) lookup(r bundle.Ref) (int64, error) {
	switch r.Kind {
	case bundle.RefLoop:
		if r.Index >= len(x.loops) {
			return 0, fmt.Errorf("%s is not a loop variable here", r)
		}
		return x.loops[r.Index], nil
	case bundle.RefTmp:
		t := x.tmps[fmt.Sprintf("tmp%d", r.Index)]
		if t == nil {
			return 0, fmt.Errorf("%s is not allocated here", r)
		}
		return field(r, int64(t.ptr), t.shape, t.strides)
	}
	if r.Index >= len(x.args) {
		return 0, fmt.Errorf("%s: no such argument", r)
	}
	b := x.args[r.Index]
	if r.Field == "" {
		if b.Mem || b.IsFloat {
			return 0, fmt.Errorf("%s is not an integer", r)
		}
		return b.Int, nil
	}
	if !b.Mem {
		return 0, fmt.Errorf("%s: argument %d is not a memref", r, r.Index)
	}
	return field(r, int64(b.Ptr), b.Shape, b.Strides)
}

func field(r bundle.Ref, ptr int64, shape, strides []int64) (int64, error) {
	switch {
	case r.Field == "ptr":
		return ptr, nil
	case r.Dim >= len(shape):
		return 0, fmt.Errorf("%s: the memref has rank %d", r, len(shape))
	case r.Field == "dim":
		return shape[r.Dim], nil
	}
	return strides[r.Dim], nil
}

func (x *evaluator) eval(src string) (int64, error) {
	e := x.exprs[src]
	if e == nil {
		var err error
		if e, err = bundle.ParseExpr(src); err != nil {
			return 0, err
		}
		x.exprs[src] = e
	}
	return e.Eval(x.lookup)
}

func (x *evaluator) evalAll(srcs []string) ([]int64, error) {
	out := make([]int64, len(srcs))
	for i, s := range srcs {
		v, err := x.eval(s)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// size evaluates a size or count: not negative, at most 2^48.
func (x *evaluator) size(src, what string) (int64, error) {
	v, err := x.eval(src)
	if err != nil {
		return 0, err
	}
	if v < 0 || v > 1<<48 {
		return 0, fmt.Errorf("%s %d (%s) is out of range", what, v, src)
	}
	return v, nil
}

// memPtr is the address of the first element of argN or tmpN.
func (x *evaluator) memPtr(name string) (uint64, error) {
	r, err := bundle.ParseRef(name + ".ptr")
	if err != nil {
		return 0, err
	}
	p, err := x.lookup(r)
	return uint64(p), err
}

func (x *evaluator) step(s *bundle.Step) error {
	switch s.Op {
	case bundle.OpAlloc:
		a := s.Alloc
		shape := make([]int64, len(a.Shape))
		n := int64(a.ElemBytes)
		for i, src := range a.Shape {
			v, err := x.size(src, "size")
			if err != nil {
				return err
			}
			shape[i] = v
			var ok bool
			if n, ok = bundle.Arith("*", n, v); !ok || n > 1<<48 {
				return fmt.Errorf("an allocation of shape %v is too large", shape)
			}
		}
		p, err := x.dev.Alloc(int(max(n, 1)))
		if err != nil {
			return err
		}
		x.nAllocs++
		x.live = append(x.live, p)
		strides := make([]int64, len(shape))
		st := int64(1)
		for i := len(shape) - 1; i >= 0; i-- {
			strides[i] = st
			st *= shape[i]
		}
		x.tmps[a.ID] = &tmpAlloc{ptr: p, shape: shape, strides: strides}
		x.record(TraceAlloc{Op: bundle.OpAlloc, ID: a.ID, Bytes: n, Ptr: p})
	case bundle.OpFree:
		t := x.tmps[s.Free.ID]
		if t == nil {
			return fmt.Errorf("%s is not allocated", s.Free.ID)
		}
		delete(x.tmps, s.Free.ID)
		for i, p := range x.live {
			if p == t.ptr {
				x.live = append(x.live[:i], x.live[i+1:]...)
				break
			}
		}
		x.record(TraceFree{Op: bundle.OpFree, Ptr: t.ptr})
		return x.dev.Free(t.ptr)
	case bundle.OpCopy:
		c := s.Copy
		dst, err := x.memPtr(c.Dst)
		if err != nil {
			return err
		}
		src, err := x.memPtr(c.Src)
		if err != nil {
			return err
		}
		n, err := x.size(c.Bytes, "byte count")
		if err != nil {
			return err
		}
		sn, err := x.size(c.SrcBytes, "byte count")
		if err != nil {
			return err
		}
		if sn != n {
			return fmt.Errorf("a copy needs memrefs of the same size (%d and %d bytes)", n, sn)
		}
		x.record(TraceCopy{Op: bundle.OpCopy, Dst: dst, Src: src, Bytes: n})
		return x.dev.CopyDeviceToDevice(dst, src, int(n))
	case bundle.OpMemset:
		m := s.Memset
		dst, err := x.memPtr(m.Dst)
		if err != nil {
			return err
		}
		n, err := x.size(m.Count, "element count")
		if err != nil {
			return err
		}
		pat, err := hex.DecodeString(m.Value)
		if err != nil {
			return err
		}
		x.record(TraceMemset{Op: bundle.OpMemset, Dst: dst, ElemBytes: m.ElemBytes, Count: n, Value: m.Value})
		return x.dev.Memset(dst, pat, int(n))
	case bundle.OpTensorMap:
		return x.tensorMap(s.TensorMap)
	case bundle.OpLaunch:
		return x.launch(s.Launch)
	case bundle.OpFor:
		return x.forStep(s.For)
	default:
		return fmt.Errorf("unknown step %q", s.Op)
	}
	return nil
}

func (x *evaluator) forStep(f *bundle.ForStep) error {
	b, err := x.evalAll([]string{f.LB, f.UB, f.Step})
	if err != nil {
		return err
	}
	if b[2] <= 0 {
		return fmt.Errorf("the loop step is %d; it must be positive", b[2])
	}
	x.loops = append(x.loops, 0)
	defer func() { x.loops = x.loops[:len(x.loops)-1] }()
	for i := b[0]; i < b[1]; {
		x.loops[len(x.loops)-1] = i
		if err := x.block(f.Body); err != nil {
			return err
		}
		var ok bool
		if i, ok = bundle.Arith("+", i, b[2]); !ok {
			break
		}
	}
	return nil
}

func (x *evaluator) tensorMap(t *bundle.TensorMapStep) error {
	addr, err := x.eval(t.GlobalAddress)
	if err != nil {
		return err
	}
	td := &cuda.TiledDesc{DataType: cuda.TensorMapDataType(t.DataType), Global: cuda.DevicePtr(addr),
		Interleave: cuda.TensorMapInterleave(t.Interleave), Swizzle: cuda.TensorMapSwizzle(t.Swizzle),
		L2Promotion: cuda.TensorMapL2Promotion(t.L2Promotion), OOBFill: cuda.TensorMapOOBFill(t.OOBFill),
		Strides: []uint64{}}
	vals, err := x.evalAll(append(append([]string{}, t.GlobalDim...), t.GlobalStrides...))
	if err != nil {
		return err
	}
	for i, v := range vals {
		if v < 0 {
			return fmt.Errorf("tensor map %s: negative size or stride %d", t.ID, v)
		}
		if i < len(t.GlobalDim) {
			td.Dims = append(td.Dims, uint64(v))
		} else {
			td.Strides = append(td.Strides, uint64(v))
		}
	}
	for i := range t.BoxDim {
		if t.BoxDim[i] < 0 || t.BoxDim[i] > 1<<32-1 || t.ElementStrides[i] < 0 || t.ElementStrides[i] > 1<<32-1 {
			return fmt.Errorf("tensor map %s: box or element stride out of range", t.ID)
		}
		td.Box = append(td.Box, uint32(t.BoxDim[i]))
		td.ElementStrides = append(td.ElementStrides, uint32(t.ElementStrides[i]))
	}
	if err := cuda.ValidateTiled(td); err != nil {
		return err
	}
	x.record(NewTraceTensorMap(t.ID, td))
	b, err := x.dev.EncodeTensorMap(td)
	if err != nil {
		return err
	}
	x.maps[t.ID] = b
	return nil
}

func (x *evaluator) launch(ls *bundle.LaunchStep) error {
	l := &Launch{Kernel: ls.Kernel, NonPortableCluster: ls.NonPortableCluster}
	var sizes sm90.Launch
	for _, g := range []struct {
		src []string
		dst *[3]int
		chk *[3]int64
	}{{ls.Grid, &l.Grid, &sizes.Grid}, {ls.Block, &l.Block, &sizes.Block}, {ls.Cluster, &l.Cluster, &sizes.Cluster}} {
		vs, err := x.evalAll(g.src)
		if err != nil {
			return err
		}
		// sizes.Check judges every value (negative ones included), with
		// the messages the IR executor gives.
		for i, v := range vs {
			g.dst[i], g.chk[i] = int(v), v
		}
	}
	sh, err := x.eval(ls.SharedBytes)
	if err != nil {
		return err
	}
	if sh < 0 || sh > 1<<31 {
		return fmt.Errorf("kernel %s cannot be launched: %d bytes of shared memory", ls.Kernel, sh)
	}
	l.SharedBytes, sizes.DynamicSharedBytes, sizes.NonPortableCluster = int(sh), sh, l.NonPortableCluster
	if err := sizes.Check(); err != nil {
		return fmt.Errorf("kernel %s cannot be launched: %v", ls.Kernel, err)
	}
	var params []TraceParam
	for _, p := range ls.Params {
		if p.TensorMap != "" {
			b, ok := x.maps[p.TensorMap]
			if !ok {
				return fmt.Errorf("tensor map %s is not encoded", p.TensorMap)
			}
			l.Params = append(l.Params, b)
			params = append(params, TraceParam{Name: p.Name, TensorMap: p.TensorMap})
			continue
		}
		b, err := x.param(p)
		if err != nil {
			return fmt.Errorf("kernel %s param %s: %v", ls.Kernel, p.Name, err)
		}
		l.Params = append(l.Params, b)
		params = append(params, TraceParam{Name: p.Name, Bytes: hex.EncodeToString(b)})
	}
	x.record(NewTraceLaunch(l, params))
	if err := x.dev.Launch(l); err != nil {
		return err
	}
	if x.onLaunch != nil {
		return x.onLaunch(l)
	}
	return nil
}

// paramIRTypes are the IR types whose scalarBytes encode the plan's param
// types.
var paramIRTypes = map[string]ir.Type{
	"ptr": ir.IntegerTypeOf(64), "i64": ir.IntegerTypeOf(64), "i32": ir.IntegerTypeOf(32),
	"i16": ir.IntegerTypeOf(16), "i8": ir.IntegerTypeOf(8), "i1": ir.IntegerTypeOf(1),
	"f64": ir.FloatTypeOf(ir.F64), "f32": ir.FloatTypeOf(ir.F32),
	"f16": ir.FloatTypeOf(ir.F16), "bf16": ir.FloatTypeOf(ir.BF16),
}

// param packs a non-tensor-map launch param.
func (x *evaluator) param(p bundle.LaunchParam) ([]byte, error) {
	t, ok := paramIRTypes[p.Type]
	if !ok {
		return nil, fmt.Errorf("unknown type %q", p.Type)
	}
	if bundle.IsFloatType(p.Type) {
		if p.Float != nil {
			return scalarBytes(t, *p.Float)
		}
		r, err := bundle.ParseRef(p.Value)
		if err != nil || r.Field != "" || r.Kind != bundle.RefArg || r.Index >= len(x.args) || !x.args[r.Index].IsFloat {
			return nil, fmt.Errorf("%q is not a float argument", p.Value)
		}
		return scalarBytes(t, x.args[r.Index].Float)
	}
	v, err := x.eval(p.Value)
	if err != nil {
		return nil, err
	}
	if err := CheckParamRange(p.Type, v); err != nil {
		return nil, err
	}
	if p.Type == "ptr" {
		return binary.LittleEndian.AppendUint64(nil, uint64(v)), nil
	}
	return scalarBytes(t, v)
}

// RunDecl runs an entry's declarative plan with the arguments of Plan.Run
// (*Mem for memrefs, int64 or float64 for scalars) and waits for the
// device: what Plan.Run does for the IR, on the plan a bundle carries.
func RunDecl(dev Device, e *bundle.Entry, args []Value, onLaunch func(*Launch) error) error {
	b, err := BindArgs(args)
	if err != nil {
		return err
	}
	if err := Evaluate(dev, e, b, nil, onLaunch); err != nil {
		return err
	}
	return dev.Synchronize()
}
