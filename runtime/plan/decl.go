package plan

import (
	"encoding/hex"
	"fmt"
	"path/filepath"

	"github.com/tmac-dev/tmac/bundle"
	"github.com/tmac-dev/tmac/dialects/arith"
	funcdialect "github.com/tmac-dev/tmac/dialects/func"
	"github.com/tmac-dev/tmac/dialects/gpu"
	"github.com/tmac-dev/tmac/dialects/memref"
	"github.com/tmac-dev/tmac/dialects/nvgpu"
	"github.com/tmac-dev/tmac/dialects/scf"
	"github.com/tmac-dev/tmac/internal/sm90"
	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/ir/eval"
	"github.com/tmac-dev/tmac/kernelabi"
	"github.com/tmac-dev/tmac/runtime/buffer"
)

// Describe translates an entry function (after the default pipeline) into
// its declarative host plan (manifest format 2; docs/design/python-entry.md
// section 2.7): every SSA value becomes an expression over the entry's
// arguments, a memref reference or a tensor-map id. Host code outside the
// plan language is a diagnostic at the op.
func Describe(mod, entry *ir.Operation) (*bundle.Entry, error) {
	p, err := Build(mod, entry)
	if err != nil {
		return nil, err
	}
	d := &describer{plan: p, fn: entry.SymbolName(), vals: map[ir.Value]*sval{}}
	e := &bundle.Entry{Name: entry.SymbolName(), Loc: LocString(entry.Loc), Args: []bundle.Arg{}}
	body := entry.Region(0).Entry()
	for i, t := range p.Args {
		a, v, err := d.arg(i, t, ArgAttr(entry, i, OutputAttr) != nil)
		if err != nil {
			return nil, entry.EmitError("'%s' @%s cannot be put in a bundle's host plan: argument %d: %v", entry.Name(), d.fn, i, err)
		}
		e.Args = append(e.Args, a)
		d.vals[body.Arg(i)] = v
	}
	if e.Steps, err = d.block(body); err != nil {
		return nil, err
	}
	if e.Steps == nil {
		e.Steps = []bundle.Step{}
	}
	return e, nil
}

// LocString is a location as plans write it: file:line:col, the file name
// without its directories ("" when unknown).
func LocString(l ir.Location) string {
	fl, ok := ir.FileLineCol(l)
	if !ok {
		return ""
	}
	return fmt.Sprintf("%s:%d:%d", filepath.Base(fl.File), fl.Line, fl.Col)
}

// smem is a memref of the plan: an argument or a scratch allocation, with
// its sizes and strides (elements) as expressions.
type smem struct {
	name      string // argN or tmpN
	typ       *ir.MemRefType
	elemBytes int
	shape     []*sexpr
	strides   []*sexpr
	// contiguous: dense row-major whatever the sizes (identity layouts,
	// checked when binding; scratch allocations).
	contiguous bool
}

func (m *smem) ptr() *sexpr { return refExpr(m.name + ".ptr") }

func (m *smem) elems() *sexpr {
	n := constExpr(1)
	for _, s := range m.shape {
		n = binExpr("*", n, s)
	}
	return n
}

// sval is the symbolic value of an SSA value.
type sval struct {
	i         *sexpr   // integer or index
	f         *float64 // float constant
	floatArg  string   // float scalar argument (argN)
	mem       *smem
	tensorMap string // tmN
}

type describer struct {
	plan  *Plan
	fn    string
	vals  map[ir.Value]*sval
	nTmp  int
	nMaps int
	depth int
}

// reject makes the diagnostic of host code a plan cannot hold.
func (d *describer) reject(op *ir.Operation, why string, args ...any) error {
	return op.EmitError("'%s' in @%s cannot be put in a bundle's host plan: %s; tmac run can still run this program from its source", op.Name(), d.fn, fmt.Sprintf(why, args...))
}

func (d *describer) arg(i int, t ir.Type, output bool) (bundle.Arg, *sval, error) {
	name := fmt.Sprintf("arg%d", i)
	a := bundle.Arg{Name: name, Type: t.String()}
	switch t := t.(type) {
	case *ir.MemRefType:
		if n, ok := ir.MemorySpaceNumber(t.MemorySpace); !ok || n != 0 && n != 1 {
			return a, nil, fmt.Errorf("'%s' is not in global memory", t)
		}
		es, err := buffer.ElemSize(t.Elem)
		if err != nil {
			return a, nil, fmt.Errorf("'%s': %v", t, err)
		}
		strides, offset, ok := t.StridesAndOffset()
		if !ok {
			return a, nil, fmt.Errorf("the layout of '%s' is not strided", t)
		}
		m := &smem{name: name, typ: t, elemBytes: es, contiguous: t.Layout == nil}
		if sl, ok := t.Layout.(*ir.StridedLayoutAttr); ok && sl.IsIdentityFor(t.Shape()) {
			m.contiguous = true
		}
		a.Kind, a.Elem, a.ElemBytes, a.Output, a.Contiguous = "memref", t.Elem.String(), es, output, m.contiguous
		a.Shape, a.Strides, a.Offset = []int64{}, []int64{}, dynOrValue(offset)
		for k, s := range t.Shape() {
			a.Shape = append(a.Shape, dynOrValue(s))
			a.Strides = append(a.Strides, dynOrValue(strides[k]))
			if s == ir.Dynamic {
				m.shape = append(m.shape, refExpr(fmt.Sprintf("%s.dim%d", name, k)))
			} else {
				m.shape = append(m.shape, constExpr(s))
			}
			if strides[k] == ir.Dynamic {
				m.strides = append(m.strides, refExpr(fmt.Sprintf("%s.stride%d", name, k)))
			} else {
				m.strides = append(m.strides, constExpr(strides[k]))
			}
		}
		return a, &sval{mem: m}, nil
	case *ir.UnrankedMemRefType:
		return a, nil, fmt.Errorf("'%s' is unranked; a plan takes ranked memrefs", t)
	case *ir.IndexType:
		a.Kind, a.Elem = "scalar", "index"
		return a, &sval{i: refExpr(name)}, nil
	case *ir.IntegerType:
		a.Kind, a.Elem = "scalar", t.String()
		if _, ok := bundle.ParamTypes[t.String()]; !ok {
			return a, nil, fmt.Errorf("integers of type '%s' are not supported", t)
		}
		return a, &sval{i: refExpr(name)}, nil
	case *ir.FloatType:
		a.Kind, a.Elem = "scalar", t.String()
		if !bundle.IsFloatType(t.String()) {
			return a, nil, fmt.Errorf("floats of type '%s' are not supported", t)
		}
		return a, &sval{floatArg: name}, nil
	}
	return a, nil, fmt.Errorf("type '%s' is not supported", t)
}

func dynOrValue(v int64) int64 {
	if v == ir.Dynamic {
		return -1
	}
	return v
}

// intOperand is the integer expression of an operand.
func (d *describer) intOperand(op *ir.Operation, v ir.Value) (*sexpr, error) {
	s := d.vals[v]
	if s == nil || s.i == nil {
		return nil, d.reject(op, "an operand is not an integer the plan knows")
	}
	return s.i, nil
}

func (d *describer) memOperand(op *ir.Operation, v ir.Value) (*smem, error) {
	s := d.vals[v]
	if s == nil || s.mem == nil {
		return nil, d.reject(op, "an operand is not a device memref the plan knows (an entry argument or a gpu.alloc)")
	}
	return s.mem, nil
}

// block translates the ops of a block up to its terminator (scf.yield or
// func.return; the caller reads a yield's operands).
func (d *describer) block(b *ir.Block) ([]bundle.Step, error) {
	var steps []bundle.Step
	for _, op := range b.Ops() {
		if op.Name() == scf.Yield || op.Name() == funcdialect.Return {
			return steps, nil
		}
		s, err := d.op(op)
		if err != nil {
			return nil, err
		}
		steps = append(steps, s...)
	}
	return steps, nil
}

// binOps maps the integer ops of the plan language to their operators.
var binOps = map[string]string{
	"arith.addi": "+", "arith.subi": "-", "arith.muli": "*",
	"arith.divsi": "/", "arith.divui": "/", "arith.remsi": "%", "arith.remui": "%",
	"arith.ceildivsi": "ceildiv", "arith.ceildivui": "ceildiv",
	"arith.minsi": "min", "arith.minui": "min", "arith.maxsi": "max", "arith.maxui": "max",
	"index.add": "+", "index.sub": "-", "index.mul": "*",
	"index.divs": "/", "index.divu": "/", "index.rems": "%", "index.remu": "%",
	"index.ceildivs": "ceildiv", "index.ceildivu": "ceildiv",
	"index.mins": "min", "index.minu": "min", "index.maxs": "max", "index.maxu": "max",
}

// castOps pass their integer operand through: the width lives in the
// param's type, and a value out of its range is an error when evaluated.
var castOps = map[string]bool{
	"arith.index_cast": true, "arith.index_castui": true, "arith.extsi": true,
	"arith.extui": true, "arith.trunci": true, "index.casts": true, "index.castu": true,
}

func (d *describer) op(op *ir.Operation) ([]bundle.Step, error) {
	name := op.Name()
	switch {
	case name == arith.Constant:
		switch a := (arith.ConstantOp{Op: op}).Value().(type) {
		case *ir.IntegerAttr:
			d.set(op, &sval{i: constExpr(a.Int())})
		case *ir.FloatAttr:
			f := a.Value
			d.set(op, &sval{f: &f})
		default:
			return nil, d.reject(op, "only scalar constants")
		}
		return nil, nil
	case binOps[name] != "" || castOps[name]:
		return nil, d.intOp(op)
	case name == arith.Select:
		s := arith.SelectOp{Op: op}
		c := d.vals[s.Condition()]
		if c == nil || c.i == nil || !c.i.isConst {
			return nil, d.reject(op, "the plan has no branches (arith.select on a value known only at run time)")
		}
		if c.i.val != 0 {
			d.set(op, d.vals[s.TrueValue()])
		} else {
			d.set(op, d.vals[s.FalseValue()])
		}
		return nil, nil
	case name == scf.If:
		return d.ifOp(op)
	case name == scf.For:
		return d.forOp(op)
	case name == memref.Cast:
		m, err := d.memOperand(op, memref.CastOp{Op: op}.Source())
		if err != nil {
			return nil, err
		}
		d.set(op, &sval{mem: m})
		return nil, nil
	case name == memref.Dim:
		return nil, d.dim(op)
	case name == gpu.Alloc:
		return d.alloc(op)
	case name == gpu.Dealloc:
		return d.dealloc(op)
	case name == gpu.Wait:
		// Every step runs in order on one stream.
		return nil, nil
	case name == gpu.Memcpy:
		c := gpu.MemcpyOp{Op: op}
		return d.copy(op, c.Dst(), c.Src())
	case name == memref.Copy:
		c := memref.CopyOp{Op: op}
		return d.copy(op, c.Target(), c.Source())
	case name == gpu.Memset:
		return d.memset(op)
	case name == nvgpu.TmaCreateDescriptor:
		return d.tensorMap(op)
	case name == gpu.LaunchFunc:
		return d.launch(op)
	case name == memref.Alloc:
		return nil, d.reject(op, "a plan allocates device memory only (gpu.alloc)")
	case name == memref.Dealloc:
		return nil, d.reject(op, "the plan has no host memory (memref.dealloc)")
	case name == memref.Realloc:
		return nil, d.reject(op, "the plan cannot reallocate (memref.realloc)")
	case name == "vector.print":
		return nil, d.reject(op, "the plan cannot print (vector.print)")
	}
	if (op.Dialect() == "arith" || op.Dialect() == "index") && eval.Has(op) {
		if vs, ok := d.folded(op); ok {
			d.set(op, vs...)
			return nil, nil
		}
		for _, r := range op.Results() {
			if ir.IsFloat(r.Type()) {
				return nil, d.reject(op, "the plan has no float arithmetic on the host")
			}
		}
		return nil, d.reject(op, "the plan's integer expressions have + - * / %% ceildiv min max only")
	}
	return nil, d.reject(op, "the plan has no such step")
}

// intOp translates an integer op of the plan language: folded when its
// operands are constants, else an expression (a cast is its operand).
func (d *describer) intOp(op *ir.Operation) error {
	if vs, ok := d.folded(op); ok {
		d.set(op, vs...)
		return nil
	}
	var in []*sexpr
	for _, v := range op.Operands() {
		e, err := d.intOperand(op, v)
		if err != nil {
			return err
		}
		in = append(in, e)
	}
	if castOps[op.Name()] {
		d.set(op, &sval{i: in[0]})
	} else {
		d.set(op, &sval{i: binExpr(binOps[op.Name()], in[0], in[1])})
	}
	return nil
}

func (d *describer) set(op *ir.Operation, vs ...*sval) {
	for i, r := range op.Results() {
		if i < len(vs) && vs[i] != nil {
			d.vals[r] = vs[i]
		}
	}
}

// folded evaluates an arith or index op whose operands are all constants
// through its semantics, as the IR executor does.
func (d *describer) folded(op *ir.Operation) ([]*sval, bool) {
	var in []Value
	for _, v := range op.Operands() {
		s := d.vals[v]
		switch {
		case s != nil && s.i != nil && s.i.isConst:
			in = append(in, s.i.val)
		case s != nil && s.f != nil:
			in = append(in, *s.f)
		default:
			return nil, false
		}
	}
	out, err := evalArith(op, in)
	if err != nil {
		return nil, false
	}
	vs := make([]*sval, len(out))
	for i, v := range out {
		switch v := v.(type) {
		case int64:
			vs[i] = &sval{i: constExpr(v)}
		case float64:
			vs[i] = &sval{f: &v}
		}
	}
	return vs, true
}

func (d *describer) ifOp(op *ir.Operation) ([]bundle.Step, error) {
	c := d.vals[scf.IfOp{Op: op}.Condition()]
	if c == nil || c.i == nil || !c.i.isConst {
		return nil, d.reject(op, "the plan has no branches (scf.if on a value known only at run time)")
	}
	r := 0
	if c.i.val == 0 {
		r = 1
	}
	if r >= op.NumRegions() || op.Region(r).Entry() == nil {
		return nil, nil
	}
	b := op.Region(r).Entry()
	steps, err := d.block(b)
	if err != nil {
		return nil, err
	}
	if y := b.Terminator(); y != nil && y.Name() == scf.Yield {
		for i, v := range y.Operands() {
			if i < op.NumResults() {
				d.vals[op.Result(i)] = d.vals[v]
			}
		}
	}
	return steps, nil
}

func (d *describer) forOp(op *ir.Operation) ([]bundle.Step, error) {
	f := scf.ForOp{Op: op}
	if len(f.InitArgs()) > 0 {
		return nil, d.reject(op, "the plan has no loops with iter_args")
	}
	var bounds [3]*sexpr
	for i, v := range []ir.Value{f.LowerBound(), f.UpperBound(), f.Step()} {
		e, err := d.intOperand(op, v)
		if err != nil {
			return nil, err
		}
		bounds[i] = e
	}
	if d.depth >= bundle.MaxForDepth {
		return nil, d.reject(op, "loops nest deeper than %d", bundle.MaxForDepth)
	}
	body := f.Region().Entry()
	v := fmt.Sprintf("i%d", d.depth)
	d.vals[body.Arg(0)] = &sval{i: refExpr(v)}
	d.depth++
	steps, err := d.block(body)
	d.depth--
	if err != nil {
		return nil, err
	}
	if steps == nil {
		steps = []bundle.Step{}
	}
	return []bundle.Step{{Op: bundle.OpFor, For: &bundle.ForStep{Op: bundle.OpFor, Var: v,
		LB: bounds[0].text, UB: bounds[1].text, Step: bounds[2].text, Body: steps, Loc: LocString(op.Loc)}}}, nil
}

func (d *describer) dim(op *ir.Operation) error {
	dim := memref.DimOp{Op: op}
	m, err := d.memOperand(op, dim.Source())
	if err != nil {
		return err
	}
	k := d.vals[dim.Index()]
	if k == nil || k.i == nil || !k.i.isConst {
		return d.reject(op, "memref.dim needs a constant dimension")
	}
	if k.i.val < 0 || int(k.i.val) >= len(m.shape) {
		return op.EmitError("dimension %d is out of range", k.i.val)
	}
	d.set(op, &sval{i: m.shape[k.i.val]})
	return nil
}

func (d *describer) alloc(op *ir.Operation) ([]bundle.Step, error) {
	a, _ := gpu.AsAlloc(op)
	if a.HostShared() != nil {
		return nil, d.reject(op, "a plan allocates device memory only (gpu.alloc host_shared)")
	}
	mt, ok := a.Memref().Type().(*ir.MemRefType)
	if !ok || mt.Layout != nil {
		return nil, d.reject(op, "a plan allocates ranked memrefs of the identity layout only")
	}
	es, err := buffer.ElemSize(mt.Elem)
	if err != nil {
		return nil, op.EmitError("%v", err)
	}
	m := &smem{name: fmt.Sprintf("tmp%d", d.nTmp), typ: mt, elemBytes: es, contiguous: true}
	d.nTmp++
	dyn := a.DynamicSizes()
	j := 0
	step := &bundle.AllocStep{Op: bundle.OpAlloc, ID: m.name, Type: mt.String(), ElemBytes: es, Shape: []string{}, Loc: LocString(op.Loc)}
	for _, s := range mt.Shape() {
		e := constExpr(s)
		if s == ir.Dynamic {
			if j >= len(dyn) {
				return nil, op.EmitError("missing dynamic size")
			}
			if e, err = d.intOperand(op, dyn[j]); err != nil {
				return nil, err
			}
			j++
		}
		m.shape = append(m.shape, e)
		step.Shape = append(step.Shape, e.text)
	}
	m.strides = make([]*sexpr, len(m.shape))
	s := constExpr(1)
	for k := len(m.shape) - 1; k >= 0; k-- {
		m.strides[k] = s
		s = binExpr("*", s, m.shape[k])
	}
	d.set(op, &sval{mem: m})
	return []bundle.Step{{Op: bundle.OpAlloc, Alloc: step}}, nil
}

func (d *describer) dealloc(op *ir.Operation) ([]bundle.Step, error) {
	g, _ := gpu.AsDealloc(op)
	m, err := d.memOperand(op, g.Memref())
	if err != nil {
		return nil, err
	}
	if m.name[:3] != "tmp" {
		// The IR executor frees only its own allocations too.
		return nil, nil
	}
	return []bundle.Step{{Op: bundle.OpFree, Free: &bundle.FreeStep{Op: bundle.OpFree, ID: m.name, Loc: LocString(op.Loc)}}}, nil
}

func (d *describer) copy(op *ir.Operation, dstV, srcV ir.Value) ([]bundle.Step, error) {
	dst, err := d.memOperand(op, dstV)
	if err != nil {
		return nil, err
	}
	src, err := d.memOperand(op, srcV)
	if err != nil {
		return nil, err
	}
	if !dst.contiguous || !src.contiguous {
		return nil, d.reject(op, "a plan copies between contiguous memrefs (identity layouts) only")
	}
	db, sb := binExpr("*", dst.elems(), constExpr(int64(dst.elemBytes))), binExpr("*", src.elems(), constExpr(int64(src.elemBytes)))
	if db.isConst && sb.isConst && db.val != sb.val {
		return nil, op.EmitError("copies %d bytes into %d bytes", sb.val, db.val)
	}
	return []bundle.Step{{Op: bundle.OpCopy, Copy: &bundle.CopyStep{Op: bundle.OpCopy, Dst: dst.name, Src: src.name,
		Bytes: db.text, SrcBytes: sb.text, Loc: LocString(op.Loc)}}}, nil
}

func (d *describer) memset(op *ir.Operation) ([]bundle.Step, error) {
	s := gpu.MemsetOp{Op: op}
	dst, err := d.memOperand(op, s.Dst())
	if err != nil {
		return nil, err
	}
	if !dst.contiguous {
		return nil, d.reject(op, "a plan sets contiguous memrefs (identity layouts) only")
	}
	v := d.vals[s.Value()]
	var val Value
	switch {
	case v != nil && v.i != nil && v.i.isConst:
		val = v.i.val
	case v != nil && v.f != nil:
		val = *v.f
	default:
		return nil, d.reject(op, "a plan sets memory to a constant only")
	}
	pat, err := scalarBytes(dst.typ.Elem, val)
	if err != nil {
		return nil, op.EmitError("%v", err)
	}
	return []bundle.Step{{Op: bundle.OpMemset, Memset: &bundle.MemsetStep{Op: bundle.OpMemset, Dst: dst.name,
		ElemBytes: len(pat), Count: dst.elems().text, Value: hex.EncodeToString(pat), Loc: LocString(op.Loc)}}}, nil
}

func (d *describer) tensorMap(op *ir.Operation) ([]bundle.Step, error) {
	c := nvgpu.TmaCreateDescriptorOp{Op: op}
	m, err := d.memOperand(op, c.Tensor())
	if err != nil {
		return nil, err
	}
	desc, ok := nvgpu.AsTensorMapDescriptor(c.TensorMap().Type())
	if !ok {
		return nil, op.EmitError("the result is not a tensor map descriptor")
	}
	var box []int64
	for _, v := range c.BoxDimensions() {
		b := d.vals[v]
		if b == nil || b.i == nil || !b.i.isConst {
			return nil, d.reject(op, "the box sizes of a tensor map must be constants")
		}
		box = append(box, b.i.val)
	}
	rank := len(m.shape)
	if err := d.checkTensorMap(desc, m, box); err != nil {
		return nil, op.EmitError("%v", err)
	}
	dt, _ := TensorMapDataType(desc.Tensor.ElementType())
	id := fmt.Sprintf("tm%d", d.nMaps)
	d.nMaps++
	step := &bundle.TensorMapStep{Op: bundle.OpTensorMap, ID: id, Of: m.name, Loc: LocString(op.Loc),
		DataType: int(dt), DataTypeName: dt.String(), Rank: rank, GlobalAddress: m.ptr().text,
		GlobalDim: []string{}, GlobalStrides: []string{}, BoxDim: []int64{}, ElementStrides: []int64{},
		Interleave: int(desc.Interleave), Swizzle: int(desc.Swizzle), L2Promotion: int(desc.L2Promo), OOBFill: int(desc.OOB)}
	for i := 0; i < rank; i++ {
		step.GlobalDim = append(step.GlobalDim, m.shape[rank-1-i].text)
		step.BoxDim = append(step.BoxDim, box[rank-1-i])
		step.ElementStrides = append(step.ElementStrides, 1)
	}
	for i := 1; i < rank; i++ {
		step.GlobalStrides = append(step.GlobalStrides, binExpr("*", m.strides[rank-1-i], constExpr(int64(m.elemBytes))).text)
	}
	d.set(op, &sval{tensorMap: id})
	return []bundle.Step{{Op: bundle.OpTensorMap, TensorMap: step}}, nil
}

// checkTensorMap runs TiledDesc's checks that the static types allow:
// all of them when the sizes and strides are constants (the address is a
// stand-in), else those on the types and the innermost stride.
func (d *describer) checkTensorMap(desc *nvgpu.TensorMapDescriptor, m *smem, box []int64) error {
	rank := len(m.shape)
	probe := &Mem{Dev: 1 << 40, Elem: m.typ.Elem, ElemSize: m.elemBytes, Shape: make([]int64, rank), Strides: make([]int64, rank)}
	for k := range m.shape {
		if !m.shape[k].isConst || !m.strides[k].isConst {
			return checkTensorMapTypes(desc, m, box)
		}
		probe.Shape[k], probe.Strides[k] = m.shape[k].val, m.strides[k].val
	}
	_, err := TiledDesc(desc, probe, box)
	return err
}

func checkTensorMapTypes(desc *nvgpu.TensorMapDescriptor, m *smem, box []int64) error {
	rank := len(m.shape)
	if _, err := checkDescriptor(desc, m.typ.Elem, rank, box); err != nil {
		return err
	}
	if rank > 0 && m.strides[rank-1].isConst && m.strides[rank-1].val != 1 {
		return fmt.Errorf("the innermost dimension has stride %d; a tensor map needs it contiguous", m.strides[rank-1].val)
	}
	return nil
}

func (d *describer) launch(op *ir.Operation) ([]bundle.Step, error) {
	l := gpu.LaunchFuncOp{Op: op}
	ref := l.Kernel().(*ir.SymbolRefAttr)
	k := d.plan.Kernels[ref.Leaf()]
	if k == nil {
		return nil, op.EmitError("kernel %s was not planned", ref.Leaf())
	}
	step := &bundle.LaunchStep{Op: bundle.OpLaunch, Kernel: k.Name, Loc: LocString(op.Loc), Params: []bundle.LaunchParam{}}
	sizes := sm90.Launch{}
	allConst := true
	exprs := func(dst *[]string, vals []ir.Value, out *[3]int64) error {
		for i, v := range vals {
			e, err := d.intOperand(op, v)
			if err != nil {
				return err
			}
			*dst = append(*dst, e.text)
			if e.isConst {
				out[i] = e.val
			} else {
				allConst = false
			}
		}
		return nil
	}
	if err := exprs(&step.Grid, []ir.Value{l.GridSizeX(), l.GridSizeY(), l.GridSizeZ()}, &sizes.Grid); err != nil {
		return nil, err
	}
	if err := exprs(&step.Block, []ir.Value{l.BlockSizeX(), l.BlockSizeY(), l.BlockSizeZ()}, &sizes.Block); err != nil {
		return nil, err
	}
	if l.ClusterSizeX() != nil {
		step.Cluster = []string{}
		if err := exprs(&step.Cluster, []ir.Value{l.ClusterSizeX(), l.ClusterSizeY(), l.ClusterSizeZ()}, &sizes.Cluster); err != nil {
			return nil, err
		}
	}
	step.SharedBytes = "0"
	if sm := l.DynamicSharedMemorySize(); sm != nil {
		e, err := d.intOperand(op, sm)
		if err != nil {
			return nil, err
		}
		step.SharedBytes = e.text
		sizes.DynamicSharedBytes = e.val
		allConst = allConst && e.isConst
	}
	var err error
	if step.NonPortableCluster, err = sm90.NonPortableCluster(op); err != nil {
		return nil, op.EmitError("kernel %s cannot be launched: %v", k.Name, err)
	}
	sizes.NonPortableCluster = step.NonPortableCluster
	if allConst {
		if err := sizes.Check(); err != nil {
			return nil, op.EmitError("kernel %s cannot be launched: %v", k.Name, err)
		}
	}
	operands := l.KernelOperands()
	for _, p := range k.Params {
		lp, err := d.param(op, k, p, operands[p.Arg])
		if err != nil {
			return nil, err
		}
		step.Params = append(step.Params, lp)
	}
	return []bundle.Step{{Op: bundle.OpLaunch, Launch: step}}, nil
}

// param is the value of kernel parameter p, whose argument is v.
func (d *describer) param(op *ir.Operation, k *Kernel, p kernelabi.Param, v ir.Value) (bundle.LaunchParam, error) {
	lp := bundle.LaunchParam{Name: p.Name, Role: p.Role.String()}
	s := d.vals[v]
	if s == nil {
		return lp, d.reject(op, "kernel argument %d has no value the plan knows", p.Arg)
	}
	switch p.Role {
	case kernelabi.RoleTensorMap:
		if s.tensorMap == "" {
			return lp, d.reject(op, "kernel argument %d is not a tensor map the plan made", p.Arg)
		}
		lp.TensorMap = s.tensorMap
		return lp, nil
	case kernelabi.RoleBase, kernelabi.RoleOffset, kernelabi.RoleSize, kernelabi.RoleStride:
		if s.mem == nil {
			return lp, d.reject(op, "kernel argument %d is not a device memref the plan knows", p.Arg)
		}
		m := s.mem
		lp.Type = "i64"
		switch p.Role {
		case kernelabi.RoleBase:
			lp.Type = "ptr"
			// The kernel adds a static offset of its type itself.
			e := m.ptr()
			if kt, ok := k.Args[p.Arg].(*ir.MemRefType); ok {
				if _, off, ok := kt.StridesAndOffset(); ok && off != ir.Dynamic && off != 0 {
					e = binExpr("-", e, constExpr(off*int64(m.elemBytes)))
				}
			}
			lp.Value = e.text
		case kernelabi.RoleOffset:
			lp.Value = "0"
		case kernelabi.RoleSize, kernelabi.RoleStride:
			dims := m.shape
			if p.Role == kernelabi.RoleStride {
				dims = m.strides
			}
			if p.Dim >= len(dims) {
				return lp, op.EmitError("kernel argument %d: dimension %d of a memref of rank %d", p.Arg, p.Dim, len(dims))
			}
			lp.Value = dims[p.Dim].text
		}
		return lp, nil
	}
	t, err := paramType(k.Args[p.Arg])
	if err != nil {
		return lp, d.reject(op, "kernel argument %d: %v", p.Arg, err)
	}
	lp.Type = t
	if bundle.IsFloatType(t) {
		switch {
		case s.f != nil:
			f := *s.f
			lp.Float = &f
		case s.floatArg != "":
			lp.Value = s.floatArg
		default:
			return lp, d.reject(op, "kernel argument %d is not a float the plan knows", p.Arg)
		}
		return lp, nil
	}
	if s.i == nil {
		return lp, d.reject(op, "kernel argument %d is not an integer the plan knows", p.Arg)
	}
	if s.i.isConst {
		if err := CheckParamRange(t, s.i.val); err != nil {
			return lp, op.EmitError("kernel argument %d: %v", p.Arg, err)
		}
	}
	lp.Value = s.i.text
	return lp, nil
}

// paramType is the plan's type of a scalar kernel parameter.
func paramType(t ir.Type) (string, error) {
	switch t := t.(type) {
	case *ir.IndexType:
		return "i64", nil
	case *ir.IntegerType:
		if _, ok := bundle.ParamTypes[t.String()]; ok {
			return t.String(), nil
		}
	case *ir.FloatType:
		switch t.Kind {
		case ir.F32, ir.TF32:
			return "f32", nil
		case ir.F64:
			return "f64", nil
		case ir.F16:
			return "f16", nil
		case ir.BF16:
			return "bf16", nil
		}
	}
	return "", fmt.Errorf("a parameter of type '%s' cannot be passed by a plan", t)
}

// CheckParamRange checks that an integer fits a param of type t (iN:
// signed or unsigned N bits; i1: 0 or 1).
func CheckParamRange(t string, v int64) error {
	var bitsN uint
	switch t {
	case "i1":
		if v == 0 || v == 1 {
			return nil
		}
		return fmt.Errorf("%d does not fit i1 (0 or 1)", v)
	case "i8":
		bitsN = 8
	case "i16":
		bitsN = 16
	case "i32":
		bitsN = 32
	default:
		return nil
	}
	if v < -(1<<(bitsN-1)) || v >= 1<<bitsN {
		return fmt.Errorf("%d does not fit %s", v, t)
	}
	return nil
}
