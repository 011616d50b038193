// Package codegen emits LLVM IR for the device side of a module: every
// gpu.func of every gpu.module becomes an LLVM function (kernels use the
// ptx_kernel calling convention), built with github.com/llir/llvm. Ops are
// lowered by functions registered per op name (one file per dialect);
// memrefs are lowered to Go-side descriptors (base pointer, offset, sizes,
// strides as LLVM values, constants when static), so static layouts cost no
// instructions.
package codegen

import (
	"fmt"
	"maps"
	"slices"

	lir "github.com/llir/llvm/ir"
	"github.com/llir/llvm/ir/constant"
	"github.com/llir/llvm/ir/enum"
	"github.com/llir/llvm/ir/types"
	"github.com/llir/llvm/ir/value"

	funcdialect "github.com/tmac-dev/tmac/dialects/func"
	"github.com/tmac-dev/tmac/dialects/gpu"
	"github.com/tmac-dev/tmac/dialects/llvm"
	"github.com/tmac-dev/tmac/dialects/memref"
	"github.com/tmac-dev/tmac/internal/sm90"
	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/kernelabi"
)

// LowerFunc emits the LLVM IR of one op at fe's insertion block.
type LowerFunc func(fe *FuncEmitter, op *ir.Operation)

var lowerings = map[string]LowerFunc{}

// Register makes codegen lower ops of the given names with fn.
func Register(fn LowerFunc, names ...string) {
	for _, n := range names {
		if _, dup := lowerings[n]; dup {
			panic("codegen: lowering registered twice: " + n)
		}
		lowerings[n] = fn
	}
}

// Supported reports whether an op name has a lowering.
func Supported(name string) bool { _, ok := lowerings[name]; return ok }

// SupportedOps returns the names of all lowered ops, sorted.
func SupportedOps() []string { return slices.Sorted(maps.Keys(lowerings)) }

// failure carries a diagnostic out of the lowering functions; it is
// recovered by EmitModule, so lowering code can stay free of error plumbing.
type failure struct{ d *ir.Diagnostic }

// Fail aborts code generation with an error at op's location.
func Fail(op *ir.Operation, format string, args ...any) {
	panic(failure{op.EmitError(format, args...)})
}

// ModuleEmitter builds one LLVM module.
type ModuleEmitter struct {
	M          *lir.Module
	intrinsics map[string]*lir.Func
	globals    map[string]*lir.Global
	funcs      map[string]*lir.Func
	dynSmem    *lir.Global
	nextGlobal int

	minPTX       int
	minPTXReason string
	libdevice    *LibdeviceUse
}

// Output is the result of code generation.
type Output struct {
	Module *lir.Module
	// PTXVersion is the lowest PTX ISA version (e.g. 86 for 8.6) the
	// module's instructions need, 0 when llc's default (8.0) suffices;
	// PTXReason names the op that needs it.
	PTXVersion int
	PTXReason  string
	// Libdevice is the first call to a libdevice function, nil if none:
	// compiling the module then needs libdevice (CheckLibdevice).
	Libdevice *LibdeviceUse
}

// EmitModule lowers the device code of top to one LLVM module (see Emit).
func EmitModule(top *ir.Operation) (*lir.Module, error) {
	out, err := Emit(top)
	if err != nil {
		return nil, err
	}
	return out.Module, nil
}

// Emit lowers the gpu.func ops of every gpu.module inside top (and
// memref.global ops in those modules) to one LLVM module.
func Emit(top *ir.Operation) (out *Output, err error) {
	me := &ModuleEmitter{
		M:          lir.NewModule(),
		intrinsics: map[string]*lir.Func{},
		globals:    map[string]*lir.Global{},
		funcs:      map[string]*lir.Func{},
	}
	me.M.TargetTriple = "nvptx64-nvidia-cuda"
	me.M.DataLayout = "e-p3:32:32-p4:32:32-p5:32:32-p6:32:32-p7:32:32-i64:64-i128:128-v16:16-v32:32-n16:32:64"
	defer func() {
		if r := recover(); r != nil {
			f, ok := r.(failure)
			if !ok {
				// A bug in a lowering: report it as an internal error at the
				// module rather than crash.
				err = top.EmitError("internal compiler error in code generation: %v", r)
				return
			}
			err = f.d
		}
	}()
	var gpuModules []*ir.Operation
	ir.Walk(top, func(op *ir.Operation) ir.WalkResult {
		if op.Name() == gpu.Module {
			gpuModules = append(gpuModules, op)
			return ir.Skip
		}
		return ir.Advance
	})
	for _, gm := range gpuModules {
		checkSizes(gm)
	}
	// Declare every function first so calls can refer to later ones.
	var bodies []*ir.Operation
	for _, gm := range gpuModules {
		for _, op := range (gpu.ModuleOp{Op: gm}).BodyRegion().Entry().Ops() {
			switch op.Name() {
			case gpu.Func, funcdialect.Func:
				me.declareFunc(op)
				bodies = append(bodies, op)
			case llvm.Func:
				if me.declareLLVMFunc(op) {
					bodies = append(bodies, op)
				}
			case memref.Global:
				me.global(memref.GlobalOp{Op: op})
			case llvm.MlirGlobal:
				me.llvmGlobal(op)
			case "gpu.module_end": // the terminator of older MLIR (unregistered here): skipped
			default:
				if !op.HasTrait(ir.Terminator) {
					Fail(op, "'%s' cannot be compiled inside a gpu.module", op.Name())
				}
			}
		}
	}
	for _, op := range bodies {
		me.defineFunc(op)
	}
	return &Output{Module: me.M, PTXVersion: me.minPTX, PTXReason: me.minPTXReason, Libdevice: me.libdevice}, nil
}

// checkSizes rejects, at the op that defines it, any statically shaped
// memref or vector of a gpu.module whose size does not fit in 64 bits:
// its strides, sizes and allocation would wrap around. Block arguments
// are reported at the op owning their region ("argument #N" of a
// function). A vector, which lives in one thread's registers or local
// memory, and a private buffer are also limited to the local memory a
// thread can have (see stackAlloc for private buffers).
func checkSizes(gm *ir.Operation) {
	tooLarge := func(t ir.Type) (string, bool) {
		b, err := ir.StaticSize(t)
		if err != nil {
			return err.Error(), true
		}
		if v, vec := t.(*ir.VectorType); vec {
			if msg, bad := vectorTooLarge(v); bad {
				return msg, true
			}
			if b > sm90.MaxLocalBytesPerThread {
				return fmt.Sprintf("'%s' needs %d bytes in each thread, more than the %d KB of local memory a thread can have", t, b, sm90.MaxLocalBytesPerThread>>10), true
			}
		}
		return "", false
	}
	ir.Walk(gm, func(op *ir.Operation) ir.WalkResult {
		for _, r := range op.Results() {
			if msg, bad := tooLarge(r.Type()); bad {
				Fail(op, "%s", msg)
			}
		}

		if g, ok := memref.AsGlobal(op); ok {
			if ta, ok := g.Type().(*ir.TypeAttr); ok {
				if msg, bad := tooLarge(ta.Value); bad {
					Fail(op, "%s", msg)
				}
			}
		}
		for ri := 0; ri < op.NumRegions(); ri++ {
			for _, b := range op.Region(ri).Blocks() {
				for i, a := range b.Args() {
					if msg, bad := tooLarge(a.Type()); bad {
						Fail(op, "argument #%d: %s", i, msg)
					}
				}
			}
		}
		return ir.Advance
	})
}

// RequirePTX records that op needs PTX ISA version v (e.g. 86) or newer.
func (me *ModuleEmitter) RequirePTX(v int, op *ir.Operation) {
	if v > me.minPTX {
		me.minPTX = v
		me.minPTXReason = op.Name()
		if p, ok := ir.FileLineCol(op.Loc); ok {
			me.minPTXReason += " at " + p.Pos()
		}
	}
}

// Intrinsic returns the declaration of an LLVM intrinsic, adding it once.
func (me *ModuleEmitter) Intrinsic(name string, ret types.Type, params ...types.Type) *lir.Func {
	if f, ok := me.intrinsics[name]; ok {
		return f
	}
	var ps []*lir.Param
	for i, t := range params {
		ps = append(ps, lir.NewParam(fmt.Sprintf("p%d", i), t))
	}
	f := me.M.NewFunc(name, ret, ps...)
	me.intrinsics[name] = f
	return f
}

// NewSharedGlobal adds an internal addrspace(3) global of the given type
// and alignment (static shared memory) and returns it.
func (me *ModuleEmitter) NewSharedGlobal(prefix string, t types.Type, align int) *lir.Global {
	me.nextGlobal++
	g := me.M.NewGlobalDef(fmt.Sprintf("%s_%d", prefix, me.nextGlobal), zeroUndef(t))
	g.Linkage = enum.LinkageInternal
	g.AddrSpace = 3
	g.Typ.AddrSpace = 3
	g.Align = lir.Align(align)
	return g
}

// DynamicSharedMemory returns the external addrspace(3) array that stands
// for the kernel's dynamic shared memory (1024-byte aligned, as 128-byte
// swizzled TMA destinations require).
func (me *ModuleEmitter) DynamicSharedMemory() *lir.Global {
	if me.dynSmem == nil {
		t := types.NewArray(0, types.I8)
		g := me.M.NewGlobal("__tmac_dynamic_smem", t)
		g.Linkage = enum.LinkageExternal
		g.AddrSpace = 3
		g.Typ.AddrSpace = 3
		g.Align = 1024
		me.dynSmem = g
	}
	return me.dynSmem
}

// zeroUndef is the initializer of shared memory globals: undef, since
// shared memory cannot be statically initialised.
func zeroUndef(t types.Type) constant.Constant { return constant.NewUndef(t) }

// FuncEmitter lowers the body of one function.
type FuncEmitter struct {
	Mod    *ModuleEmitter
	Fn     *lir.Func
	Op     *ir.Operation // the gpu.func or func.func being lowered
	cur    *lir.Block
	vals   map[ir.Value]value.Value
	mems   map[ir.Value]*MemRef
	blocks map[*ir.Block]*lir.Block
	phis   map[*ir.Block][]*lir.InstPhi
	nblock int
}

// B returns the block instructions are appended to.
func (fe *FuncEmitter) B() *lir.Block { return fe.cur }

// SetBlock moves the insertion point to the end of b.
func (fe *FuncEmitter) SetBlock(b *lir.Block) { fe.cur = b }

// NewBlock adds a new basic block to the function (not yet current).
func (fe *FuncEmitter) NewBlock(hint string) *lir.Block {
	fe.nblock++
	return fe.Fn.NewBlock(fmt.Sprintf("%s%d", hint, fe.nblock))
}

// Set records the LLVM value of an IR value.
func (fe *FuncEmitter) Set(v ir.Value, x value.Value) { fe.vals[v] = x }

// SetResults records the values of op's results.
func (fe *FuncEmitter) SetResults(op *ir.Operation, xs ...value.Value) {
	for i, x := range xs {
		fe.vals[op.Result(i)] = x
	}
}

// Val returns the LLVM value of an IR value.
func (fe *FuncEmitter) Val(v ir.Value) value.Value {
	x, ok := fe.vals[v]
	if !ok {
		owner := fe.Op
		if d := v.DefiningOp(); d != nil {
			owner = d
		}
		if _, isMem := v.Type().(*ir.MemRefType); isMem {
			Fail(owner, "memref value used where a scalar is expected")
		}
		Fail(owner, "value of type '%s' has no lowering here", v.Type())
	}
	return x
}

// Vals returns the LLVM values of several IR values.
func (fe *FuncEmitter) Vals(vs []ir.Value) []value.Value {
	out := make([]value.Value, len(vs))
	for i, v := range vs {
		out[i] = fe.Val(v)
	}
	return out
}

// Type converts an IR type, failing at op on types without an LLVM form.
func (fe *FuncEmitter) Type(op *ir.Operation, t ir.Type) types.Type {
	lt, err := LLType(t)
	if err != nil {
		Fail(op, "%v", err)
	}
	return lt
}

// Call emits a call and returns its value.
func (fe *FuncEmitter) Call(f value.Value, args ...value.Value) *lir.InstCall {
	return fe.cur.NewCall(f, args...)
}

// CallIntrinsic declares (once) and calls an intrinsic.
func (fe *FuncEmitter) CallIntrinsic(name string, ret types.Type, args ...value.Value) *lir.InstCall {
	params := make([]types.Type, len(args))
	for i, a := range args {
		params[i] = a.Type()
	}
	return fe.cur.NewCall(fe.Mod.Intrinsic(name, ret, params...), args...)
}

// InlineAsm emits a call to inline PTX. sideEffects marks it volatile so it
// is neither removed nor moved (synchronisation, async copies).
func (fe *FuncEmitter) InlineAsm(ret types.Type, asm, constraints string, sideEffects bool, args ...value.Value) *lir.InstCall {
	params := make([]types.Type, len(args))
	for i, a := range args {
		params[i] = a.Type()
	}
	ia := lir.NewInlineAsm(types.NewPointer(types.NewFunc(ret, params...)), asm, constraints)
	ia.SideEffect = sideEffects
	return fe.cur.NewCall(ia, args...)
}

// I64 returns the constant n of type i64.
func I64(n int64) *constant.Int { return constant.NewInt(types.I64, n) }

// I32 returns the constant n of type i32.
func I32(n int64) *constant.Int { return constant.NewInt(types.I32, n) }

// constInt returns the value of an integer constant.
func constInt(v value.Value) (int64, bool) {
	if c, ok := v.(*constant.Int); ok && c.X.IsInt64() {
		return c.X.Int64(), true
	}
	return 0, false
}

// Add emits a + b on i64, folding constants.
func (fe *FuncEmitter) Add(a, b value.Value) value.Value {
	x, aok := constInt(a)
	y, bok := constInt(b)
	switch {
	case aok && bok:
		return I64(x + y)
	case aok && x == 0:
		return b
	case bok && y == 0:
		return a
	}
	return fe.cur.NewAdd(a, b)
}

// Mul emits a * b on i64, folding constants.
func (fe *FuncEmitter) Mul(a, b value.Value) value.Value {
	x, aok := constInt(a)
	y, bok := constInt(b)
	switch {
	case aok && bok:
		return I64(x * y)
	case aok && x == 1:
		return b
	case bok && y == 1:
		return a
	case (aok && x == 0) || (bok && y == 0):
		return I64(0)
	}
	return fe.cur.NewMul(a, b)
}

// funcOp is the view of gpu.func and func.func, which are lowered alike.
type funcOp interface {
	FunctionType() ir.Attribute
	Body() *ir.Region
}

func asFuncOp(op *ir.Operation) funcOp {
	if f, ok := gpu.AsFunc(op); ok {
		return f
	}
	if op.Name() == llvm.Func {
		return llvmFuncView{op}
	}
	return funcdialect.FuncOp{Op: op}
}

// isKernel reports whether op is a gpu.func marked gpu.kernel.
func isKernel(op *ir.Operation) bool {
	return op.Name() == gpu.Func && op.HasAttr("gpu.kernel")
}

func (me *ModuleEmitter) declareFunc(op *ir.Operation) {
	name := op.SymbolName()
	if _, dup := me.funcs[name]; dup {
		Fail(op, "function '%s' is defined in more than one gpu.module", name)
	}
	ft, _ := asFuncOp(op).FunctionType().(*ir.TypeAttr)
	fnType, _ := ft.Value.(*ir.FunctionType)
	kernel := isKernel(op)
	checkSymbolName(op, name, kernel)
	params, err := Params(fnType.Inputs, kernel)
	if err != nil {
		Fail(op, "%v", err)
	}
	var lparams []*lir.Param
	for _, p := range params {
		lp := lir.NewParam(p.Name, p.Type)
		if p.Role == kernelabi.RoleTensorMap {
			lp.Attrs = append(lp.Attrs, lir.Byval{Typ: TensorMapType}, lir.Align(64), lir.AttrString("nvvm.grid_constant"))
		}
		lparams = append(lparams, lp)
	}
	var ret types.Type = types.Void
	switch len(fnType.Results) {
	case 0:
	case 1:
		t, err := LLType(fnType.Results[0])
		if err != nil {
			Fail(op, "%v", err)
		}
		ret = t
	default:
		Fail(op, "functions with several results cannot be compiled")
	}
	if kernel && ret != types.Void {
		Fail(op, "a kernel cannot return values")
	}
	f := me.M.NewFunc(name, ret, lparams...)
	if kernel {
		f.CallingConv = enum.CallingConvPTXKernel
		addKernelAttrs(f, op)
	} else {
		f.Linkage = enum.LinkageInternal
	}
	me.funcs[name] = f
}

// checkSymbolName rejects a function or global name llc cannot emit. A
// kernel keeps its name in the PTX (the .entry the driver looks up), so it
// must be a PTX identifier: a letter followed by letters, digits, _ and $,
// or _ or $ followed by at least one of those. Other symbols are internal
// and llc rewrites their other characters, but not a leading digit (which
// LLVM IR reads as a number).
func checkSymbolName(op *ir.Operation, name string, kernel bool) {
	what := "symbol"
	if kernel {
		what = "kernel"
	}
	if name == "" || name[0] >= '0' && name[0] <= '9' {
		Fail(op, "%s name %s cannot be compiled: it must not be empty or start with a digit", what, ir.QuoteString(name))
	}
	if !kernel {
		return
	}
	ok := len(name) > 1 || isLetter(name[0])
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !isLetter(c) && !(c >= '0' && c <= '9') && c != '_' && c != '$' {
			ok = false
		}
	}
	if !ok {
		Fail(op, "kernel name %s is not a PTX identifier (a letter, then letters, digits, _ and $; or _ or $ and at least one more of those): name the function (or the launch's kernel) with those characters", ir.QuoteString(name))
	}
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// addKernelAttrs turns static launch bounds into NVVM function attributes.
func addKernelAttrs(f *lir.Func, op *ir.Operation) {
	dims := func(name string) (string, bool) {
		a, ok := op.Attr(name).(*ir.DenseArrayAttr)
		if !ok || len(a.Ints) != 3 {
			return "", false
		}
		return fmt.Sprintf("%d,%d,%d", a.Ints[0], a.Ints[1], a.Ints[2]), true
	}
	if s, ok := dims("known_block_size"); ok {
		f.FuncAttrs = append(f.FuncAttrs, lir.AttrPair{Key: "nvvm.reqntid", Value: s})
	} else if s, ok := dims("gpu.known_block_size"); ok {
		f.FuncAttrs = append(f.FuncAttrs, lir.AttrPair{Key: "nvvm.reqntid", Value: s})
	}
	if s, ok := dims("nvvm.maxntid"); ok {
		f.FuncAttrs = append(f.FuncAttrs, lir.AttrPair{Key: "nvvm.maxntid", Value: s})
	}
	// A non-portable cluster size is given at launch only: the driver's
	// opt-in to it (cuFuncSetAttribute with
	// CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, made by tmac
	// run) is documented for launch-time cluster sizes, not for one
	// compiled into the kernel (.reqnctapercluster).
	if s, ok := dims("known_cluster_size"); ok {
		c := op.Attr("known_cluster_size").(*ir.DenseArrayAttr).Ints
		if c[0]*c[1]*c[2] <= sm90.MaxPortableClusterBlocks {
			f.FuncAttrs = append(f.FuncAttrs, lir.AttrPair{Key: "nvvm.cluster_dim", Value: s})
		}
	}
}

func (me *ModuleEmitter) defineFunc(op *ir.Operation) {
	f := me.funcs[op.SymbolName()]
	fn := asFuncOp(op)
	body := fn.Body()
	if body.Empty() {
		return // a declaration
	}
	fe := &FuncEmitter{
		Mod: me, Fn: f, Op: op,
		vals:   map[ir.Value]value.Value{},
		mems:   map[ir.Value]*MemRef{},
		blocks: map[*ir.Block]*lir.Block{},
		phis:   map[*ir.Block][]*lir.InstPhi{},
	}
	entry := f.NewBlock("entry")
	fe.cur = entry
	ft := fn.FunctionType().(*ir.TypeAttr).Value.(*ir.FunctionType)
	params, _ := Params(ft.Inputs, isKernel(op))
	fe.bindParams(body.Entry(), params)
	// Workgroup attributions of gpu.func become static shared memory.
	if n := op.IntAttrOf("workgroup_attributions", 0); n > 0 {
		args := body.Entry().Args()
		for i := len(ft.Inputs); i < len(ft.Inputs)+int(n) && i < len(args); i++ {
			fe.SetMem(args[i], fe.staticAlloc(op, args[i].Type().(*ir.MemRefType), 3, 16))
		}
	}
	fe.EmitRegionBody(body, entry)
}

// EmitRegionBody lowers a function-like region (one or more blocks, with
// cf terminators between them) starting in start.
func (fe *FuncEmitter) EmitRegionBody(r *ir.Region, start *lir.Block) {
	blocks := r.Blocks()
	fe.blocks[blocks[0]] = start
	for _, b := range blocks[1:] {
		lb := fe.NewBlock("bb")
		fe.blocks[b] = lb
		for _, a := range b.Args() {
			phi := newPhi(lb, fe.Type(fe.Op, a.Type()))
			fe.phis[b] = append(fe.phis[b], phi)
			fe.Set(a, phi)
		}
	}
	for _, b := range blocks {
		fe.cur = fe.blocks[b]
		fe.EmitOps(b)
	}
}

// EmitOps lowers the ops of b in order, terminators included.
func (fe *FuncEmitter) EmitOps(b *ir.Block) {
	for op := b.First(); op != nil; op = op.Next() {
		fe.EmitOp(op)
	}
}

// EmitOp lowers one op through its registered lowering.
func (fe *FuncEmitter) EmitOp(op *ir.Operation) {
	fn, ok := lowerings[op.Name()]
	if !ok {
		Fail(op, "'%s' cannot be compiled for the GPU (no lowering to LLVM IR)", op.Name())
	}
	fn(fe, op)
}

// Branch emits a branch to the successor block of an IR terminator,
// passing args to the target's block-argument phis.
func (fe *FuncEmitter) Branch(target *ir.Block, args []ir.Value) {
	fe.AddIncoming(target, fe.Vals(args), fe.cur)
	fe.cur.NewBr(fe.blocks[target])
}

// AddIncoming records args as the incoming values of target's phis from pred.
func (fe *FuncEmitter) AddIncoming(target *ir.Block, args []value.Value, pred *lir.Block) {
	for i, phi := range fe.phis[target] {
		phi.Incs = append(phi.Incs, lir.NewIncoming(args[i], pred))
	}
}

// Successor returns the LLVM block of an IR block.
func (fe *FuncEmitter) Successor(b *ir.Block) *lir.Block { return fe.blocks[b] }
