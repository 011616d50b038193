package bundle

import (
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"github.com/tmac-dev/tmac/kernelabi"
)

// ParamTypes maps a launch parameter type to its size in bytes.
var ParamTypes = map[string]int{
	"ptr": 8, "i1": 1, "i8": 1, "i16": 2, "i32": 4, "i64": 8,
	"f16": 2, "bf16": 2, "f32": 4, "f64": 8,
}

// paramLLVMTypes are the LLVM types codegen gives scalar parameters of each
// launch parameter type (kernels[].params[].type).
var paramLLVMTypes = map[string][]string{
	"i1": {"i1"}, "i8": {"i8"}, "i16": {"i16"}, "i32": {"i32"}, "i64": {"i64"},
	"f16": {"half"}, "bf16": {"bfloat"}, "f32": {"float"}, "f64": {"double"},
}

// scalarArgTypes are the types of scalar entry arguments.
var scalarArgTypes = map[string]bool{
	"index": true, "i1": true, "i8": true, "i16": true, "i32": true, "i64": true,
	"f16": true, "bf16": true, "f32": true, "tf32": true, "f64": true,
}

// IsFloatType reports whether a scalar or parameter type is a float type.
func IsFloatType(t string) bool {
	return t == "f16" || t == "bf16" || t == "f32" || t == "tf32" || t == "f64"
}

// KernelParamName is the name kernelabi gives a parameter of a manifest
// kernel: arg3, arg3.offset, arg3.size0, arg3.stride1.
func KernelParamName(p Param) string {
	switch p.Role {
	case "offset":
		return fmt.Sprintf("arg%d.offset", p.Arg)
	case "size", "stride":
		return fmt.Sprintf("arg%d.%s%d", p.Arg, p.Role, p.Dim)
	}
	return fmt.Sprintf("arg%d", p.Arg)
}

// planChecker validates the entries of a manifest.
type planChecker struct {
	m     *Manifest
	entry *Entry
	steps int
}

// scope is what a step can refer to: the scratch allocations and tensor
// maps defined before it (and not freed), and the loop depth.
type scope struct {
	tmps  map[string]int // id -> rank
	maps  map[string]bool
	depth int
}

func (s *scope) child() *scope {
	c := &scope{tmps: map[string]int{}, maps: map[string]bool{}, depth: s.depth + 1}
	for k, v := range s.tmps {
		c.tmps[k] = v
	}
	for k := range s.maps {
		c.maps[k] = true
	}
	return c
}

func validateEntries(m *Manifest) error {
	if m.Format < 2 && len(m.Entries) > 0 {
		return fmt.Errorf("bundle: a format %d manifest has no entries; entries need format 2", m.Format)
	}
	if len(m.Entries) > MaxEntries {
		return fmt.Errorf("bundle: the manifest has %d entries, more than %d", len(m.Entries), MaxEntries)
	}
	seen := map[string]bool{}
	c := &planChecker{m: m}
	for i := range m.Entries {
		e := &m.Entries[i]
		if e.Name == "" {
			return fmt.Errorf("bundle: entry %d has no name", i)
		}
		if seen[e.Name] {
			return fmt.Errorf("bundle: entry %s is listed twice", e.Name)
		}
		seen[e.Name] = true
		c.entry = e
		if err := c.args(); err != nil {
			return fmt.Errorf("bundle: entry %s: %v", e.Name, err)
		}
		if err := c.block(e.Steps, &scope{tmps: map[string]int{}, maps: map[string]bool{}}); err != nil {
			return fmt.Errorf("bundle: entry %s: %v", e.Name, err)
		}
	}
	return nil
}

func (c *planChecker) args() error {
	if len(c.entry.Args) > MaxArgs {
		return fmt.Errorf("%d arguments, more than %d", len(c.entry.Args), MaxArgs)
	}
	for i, a := range c.entry.Args {
		if a.Name != fmt.Sprintf("arg%d", i) {
			return fmt.Errorf("argument %d is named %q, not arg%d", i, a.Name, i)
		}
		switch a.Kind {
		case "scalar":
			if !scalarArgTypes[a.Elem] {
				return fmt.Errorf("argument %d: scalar type %q is not supported", i, a.Elem)
			}
		case "memref":
			if a.ElemBytes != 1 && a.ElemBytes != 2 && a.ElemBytes != 4 && a.ElemBytes != 8 {
				return fmt.Errorf("argument %d: element size %d", i, a.ElemBytes)
			}
			if len(a.Shape) > MaxRank || len(a.Shape) != len(a.Strides) {
				return fmt.Errorf("argument %d: shape %v and strides %v", i, a.Shape, a.Strides)
			}
			for k := range a.Shape {
				if a.Shape[k] < -1 || a.Strides[k] < -1 {
					return fmt.Errorf("argument %d: shape %v and strides %v", i, a.Shape, a.Strides)
				}
			}
			if a.Offset < -1 {
				return fmt.Errorf("argument %d: offset %d", i, a.Offset)
			}
		default:
			return fmt.Errorf("argument %d: unknown kind %q", i, a.Kind)
		}
	}
	return nil
}

// memref returns the rank of the memref an argN or tmpN names.
func (c *planChecker) memref(name string, s *scope) (int, error) {
	if r, ok := s.tmps[name]; ok {
		return r, nil
	}
	if strings.HasPrefix(name, "arg") {
		if i, ok := number(name[3:]); ok && i < len(c.entry.Args) && c.entry.Args[i].Kind == "memref" {
			return len(c.entry.Args[i].Shape), nil
		}
	}
	return 0, fmt.Errorf("%q is not a memref argument or a live scratch allocation", name)
}

// expr parses an expression and checks its references.
func (c *planChecker) expr(src string, s *scope) error {
	e, err := ParseExpr(src)
	if err != nil {
		return err
	}
	e.Refs(func(r Ref) {
		if err != nil {
			return
		}
		err = c.ref(r, s)
	})
	return err
}

func (c *planChecker) ref(r Ref, s *scope) error {
	switch r.Kind {
	case RefLoop:
		if r.Index >= s.depth {
			return fmt.Errorf("%s is not the variable of an enclosing loop", r)
		}
		return nil
	case RefTmp:
		rank, ok := s.tmps[fmt.Sprintf("tmp%d", r.Index)]
		if !ok {
			return fmt.Errorf("%s refers to no live scratch allocation", r)
		}
		if r.Field != "ptr" && r.Dim >= rank {
			return fmt.Errorf("%s: the allocation has rank %d", r, rank)
		}
		return nil
	}
	if r.Index >= len(c.entry.Args) {
		return fmt.Errorf("%s: the entry has %d arguments", r, len(c.entry.Args))
	}
	a := c.entry.Args[r.Index]
	switch {
	case r.Field == "" && (a.Kind != "scalar" || IsFloatType(a.Elem)):
		return fmt.Errorf("%s is not an integer scalar argument", r)
	case r.Field != "" && a.Kind != "memref":
		return fmt.Errorf("%s: argument %d is not a memref", r, r.Index)
	case r.Field != "" && r.Field != "ptr" && r.Dim >= len(a.Shape):
		return fmt.Errorf("%s: argument %d has rank %d", r, r.Index, len(a.Shape))
	}
	return nil
}

func (c *planChecker) exprs(what string, srcs []string, n int, s *scope) error {
	if len(srcs) != n {
		return fmt.Errorf("%s has %d entries, not %d", what, len(srcs), n)
	}
	for _, src := range srcs {
		if err := c.expr(src, s); err != nil {
			return fmt.Errorf("%s: %v", what, err)
		}
	}
	return nil
}

func (c *planChecker) block(steps []Step, s *scope) error {
	for i := range steps {
		c.steps++
		if c.steps > MaxSteps {
			return fmt.Errorf("more than %d steps", MaxSteps)
		}
		st := &steps[i]
		if !st.isSet() {
			return fmt.Errorf("step %d: unknown op %q", i, st.Op)
		}
		if err := c.step(st, s); err != nil {
			return fmt.Errorf("step %d (%s at %s): %v", i, st.Op, st.Loc(), err)
		}
	}
	return nil
}

func validID(id, prefix string) bool {
	n, ok := strings.CutPrefix(id, prefix)
	if !ok {
		return false
	}
	_, ok = number(n)
	return ok
}

func (c *planChecker) step(st *Step, s *scope) error {
	switch st.Op {
	case OpAlloc:
		a := st.Alloc
		if !validID(a.ID, "tmp") {
			return fmt.Errorf("bad id %q", a.ID)
		}
		if _, dup := s.tmps[a.ID]; dup {
			return fmt.Errorf("%s is allocated twice", a.ID)
		}
		if a.ElemBytes != 1 && a.ElemBytes != 2 && a.ElemBytes != 4 && a.ElemBytes != 8 {
			return fmt.Errorf("element size %d", a.ElemBytes)
		}
		if len(a.Shape) > MaxRank {
			return fmt.Errorf("rank %d is more than %d", len(a.Shape), MaxRank)
		}
		if err := c.exprs("shape", a.Shape, len(a.Shape), s); err != nil {
			return err
		}
		s.tmps[a.ID] = len(a.Shape)
	case OpFree:
		if _, ok := s.tmps[st.Free.ID]; !ok {
			return fmt.Errorf("%q is not a live scratch allocation", st.Free.ID)
		}
		delete(s.tmps, st.Free.ID)
	case OpCopy:
		cp := st.Copy
		for _, m := range []string{cp.Dst, cp.Src} {
			if _, err := c.memref(m, s); err != nil {
				return err
			}
		}
		if err := c.expr(cp.Bytes, s); err != nil {
			return err
		}
		return c.expr(cp.SrcBytes, s)
	case OpMemset:
		ms := st.Memset
		if _, err := c.memref(ms.Dst, s); err != nil {
			return err
		}
		if ms.ElemBytes != 1 && ms.ElemBytes != 2 && ms.ElemBytes != 4 && ms.ElemBytes != 8 {
			return fmt.Errorf("element size %d", ms.ElemBytes)
		}
		if b, err := hex.DecodeString(ms.Value); err != nil || len(b) != ms.ElemBytes {
			return fmt.Errorf("value %q is not %d bytes in hexadecimal", ms.Value, ms.ElemBytes)
		}
		return c.expr(ms.Count, s)
	case OpTensorMap:
		return c.tensorMap(st.TensorMap, s)
	case OpLaunch:
		return c.launch(st.Launch, s)
	case OpFor:
		f := st.For
		if s.depth >= MaxForDepth {
			return fmt.Errorf("loops nested deeper than %d", MaxForDepth)
		}
		if f.Var != "i"+strconv.Itoa(s.depth) {
			return fmt.Errorf("the loop variable is %q, not i%d", f.Var, s.depth)
		}
		for _, e := range []string{f.LB, f.UB, f.Step} {
			if err := c.expr(e, s); err != nil {
				return err
			}
		}
		// The body's allocations and maps live in the body only.
		return c.block(f.Body, s.child())
	}
	return nil
}

func (c *planChecker) tensorMap(t *TensorMapStep, s *scope) error {
	if !validID(t.ID, "tm") {
		return fmt.Errorf("bad id %q", t.ID)
	}
	rank, err := c.memref(t.Of, s)
	if err != nil {
		return err
	}
	if t.Rank < 1 || t.Rank > 5 || t.Rank != rank {
		return fmt.Errorf("rank %d for a memref of rank %d", t.Rank, rank)
	}
	if err := c.expr(t.GlobalAddress, s); err != nil {
		return fmt.Errorf("global_address: %v", err)
	}
	if err := c.exprs("global_dim", t.GlobalDim, t.Rank, s); err != nil {
		return err
	}
	if err := c.exprs("global_strides", t.GlobalStrides, t.Rank-1, s); err != nil {
		return err
	}
	if len(t.BoxDim) != t.Rank || len(t.ElementStrides) != t.Rank {
		return fmt.Errorf("box_dim %v and element_strides %v for rank %d", t.BoxDim, t.ElementStrides, t.Rank)
	}
	for _, f := range []struct {
		name   string
		v, max int
	}{{"data_type", t.DataType, 15}, {"interleave", t.Interleave, 2}, {"swizzle", t.Swizzle, 6}, {"l2_promotion", t.L2Promotion, 3}, {"oob_fill", t.OOBFill, 1}} {
		if f.v < 0 || f.v > f.max {
			return fmt.Errorf("%s %d is out of range", f.name, f.v)
		}
	}
	s.maps[t.ID] = true
	return nil
}

func (c *planChecker) launch(l *LaunchStep, s *scope) error {
	var k *Kernel
	for i := range c.m.Kernels {
		if c.m.Kernels[i].Name == l.Kernel {
			k = &c.m.Kernels[i]
		}
	}
	if k == nil {
		return fmt.Errorf("kernel %q is not in the manifest", l.Kernel)
	}
	if err := c.exprs("grid", l.Grid, 3, s); err != nil {
		return err
	}
	if err := c.exprs("block", l.Block, 3, s); err != nil {
		return err
	}
	if l.Cluster != nil {
		if err := c.exprs("cluster", l.Cluster, 3, s); err != nil {
			return err
		}
	}
	if err := c.expr(l.SharedBytes, s); err != nil {
		return fmt.Errorf("shared_bytes: %v", err)
	}
	if len(l.Params) != len(k.Params) {
		return fmt.Errorf("%d params for kernel %s, which takes %d", len(l.Params), k.Name, len(k.Params))
	}
	for i, p := range l.Params {
		kp := k.Params[i]
		if p.Name != KernelParamName(kp) || p.Role != kp.Role {
			return fmt.Errorf("param %d is %s (%s) but kernel %s's is %s (%s)", i, p.Name, p.Role, k.Name, KernelParamName(kp), kp.Role)
		}
		if err := c.param(p, kp, s); err != nil {
			return fmt.Errorf("param %d (%s): %v", i, p.Name, err)
		}
	}
	return nil
}

func (c *planChecker) param(p LaunchParam, kp Param, s *scope) error {
	role, _ := kernelabi.ParseRole(kp.Role)
	if role == kernelabi.RoleTensorMap {
		if !s.maps[p.TensorMap] {
			return fmt.Errorf("tensor map %q is not defined before the launch", p.TensorMap)
		}
		if p.Type != "" || p.Value != "" || p.Float != nil {
			return fmt.Errorf("a tensormap param has no type or value")
		}
		return nil
	}
	if p.TensorMap != "" {
		return fmt.Errorf("only a tensormap param names a tensor map")
	}
	switch role {
	case kernelabi.RoleBase:
		if p.Type != "ptr" || !strings.HasSuffix(kp.Type, "*") {
			return fmt.Errorf("type %s for a base pointer of LLVM type %s", p.Type, kp.Type)
		}
	case kernelabi.RoleOffset, kernelabi.RoleSize, kernelabi.RoleStride:
		if p.Type != "i64" {
			return fmt.Errorf("type %s, not i64", p.Type)
		}
	default:
		ok := false
		for _, t := range paramLLVMTypes[p.Type] {
			ok = ok || t == kp.Type
		}
		if !ok {
			return fmt.Errorf("type %s for a parameter of LLVM type %s", p.Type, kp.Type)
		}
	}
	if IsFloatType(p.Type) {
		if p.Float != nil {
			return nil
		}
		r, err := ParseRef(p.Value)
		if err != nil || r.Kind != RefArg || r.Field != "" || r.Index >= len(c.entry.Args) ||
			c.entry.Args[r.Index].Kind != "scalar" || !IsFloatType(c.entry.Args[r.Index].Elem) {
			return fmt.Errorf("value %q is neither a number nor a float scalar argument", p.Value)
		}
		return nil
	}
	if p.Float != nil {
		return fmt.Errorf("a float value for an integer param")
	}
	return c.expr(p.Value, s)
}
