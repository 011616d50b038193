// Package outline is the outline-kernels pass: gpu.launch bodies become
// gpu.func kernels in gpu.modules.
package outline

import (
	"fmt"
	"math"
	"strings"

	"github.com/tmac-dev/tmac/dialects/builtin"
	"github.com/tmac-dev/tmac/dialects/gpu"
	"github.com/tmac-dev/tmac/dialects/nvgpu"
	"github.com/tmac-dev/tmac/internal/sm90"
	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/passes"
)

// outline-kernels turns every gpu.launch into a gpu.func kernel in a
// gpu.module and a gpu.launch_func that calls it:
//
//   - one gpu.module per enclosing function, named <func>_kernels, inserted
//     right after the function; kernels are named <func>_kernel_<n>, n
//     counting the launches of that function in order. The launch's
//     module(@m) / function(@k) attributes, when present, name them instead.
//   - values defined outside the launch and used inside become kernel
//     parameters in order of first use (memrefs, scalars, vectors, tensor
//     map descriptors); values of ConstantLike ops are cloned into the
//     kernel instead.
//   - the launch's id and size region arguments become gpu.block_id,
//     gpu.thread_id, gpu.grid_dim, gpu.block_dim, gpu.cluster_block_id and
//     gpu.cluster_dim_blocks ops; a size whose launch operand is a constant
//     becomes that constant, and fully static sizes are recorded as
//     known_block_size / known_grid_size / known_cluster_size.
//   - workgroup and private attributions move to the kernel.
//   - symbols the body refers to (functions, memref.global) are cloned into
//     the gpu.module.
//
// The cluster arguments of `clusters(%cx, ...) in (%sx = %n, ...)` are the
// block's position in its cluster and the cluster's size in blocks (the
// size operand is blocks per cluster, as known_cluster_size is), so they map
// to gpu.cluster_block_id / gpu.cluster_dim_blocks. (Upstream's outlining
// uses gpu.cluster_id / gpu.cluster_dim, which count clusters in the grid
// and so disagree with the size operand.) The launch's discardable
// attributes, nonPortableClusterSize among them, move to the launch_func.
func init() {
	passes.Register(&passes.Info{
		Name:    "outline-kernels",
		Summary: "Outline gpu.launch bodies into gpu.func kernels in gpu.modules, called by gpu.launch_func",
		Description: "Turns every `gpu.launch` into a `gpu.func` kernel in a `gpu.module` and a `gpu.launch_func` that launches it, and marks the module `gpu.container_module`:\n" +
			"\n" +
			"- one `gpu.module` per enclosing function, named `<func>_kernels` and placed right after it; kernels are named `<func>_kernel_<n>`, counting that function's launches in order (the launch's `module` / `function` attributes, when present, name them instead);\n" +
			"- values defined outside the launch and used inside become kernel parameters, in order of first use; values of constant ops are cloned into the kernel instead;\n" +
			"- the launch's region arguments become `gpu.block_id`, `gpu.thread_id`, `gpu.grid_dim`, `gpu.block_dim`, `gpu.cluster_block_id` and `gpu.cluster_dim_blocks` ops; sizes given by constants become those constants, and fully static sizes are recorded as `known_block_size`, `known_grid_size` and `known_cluster_size`;\n" +
			"- workgroup and private attributions move to the kernel, and symbols the body refers to (functions, `memref.global`) are cloned into the `gpu.module`.\n" +
			"\n" +
			"The cluster arguments map to `gpu.cluster_block_id` / `gpu.cluster_dim_blocks` (the block's position in its cluster, the cluster's size in blocks), matching the launch's cluster size operand. The launch limits of sm_90 (block size, grid, cluster, shared memory) are checked here when the sizes are constants; a cluster of more than the portable 8 blocks (up to 16) needs the launch's `{nonPortableClusterSize = true}`, which the `gpu.launch_func` keeps.",
		New: func(passes.Options) (passes.Pass, error) {
			return passes.PassFunc(func(op *ir.Operation, _ *passes.Context) error { return outlineKernels(op) }), nil
		},
		Rewrites: func(op *ir.Operation) bool { return op.Name() == gpu.Launch },
	})
}

// Launch region arguments, in order: block ids, thread ids, grid sizes,
// block sizes, then (with clusters) cluster ids and cluster sizes.
var launchArgOps = [6]string{gpu.BlockId, gpu.ThreadId, gpu.GridDim, gpu.BlockDim, gpu.ClusterBlockId, gpu.ClusterDimBlocks}

// launchView is what the views of gpu.launch and gpu.launch_func share:
// the sizes they launch with.
type launchView interface {
	GridSizeX() ir.Value
	GridSizeY() ir.Value
	GridSizeZ() ir.Value
	BlockSizeX() ir.Value
	BlockSizeY() ir.Value
	BlockSizeZ() ir.Value
	ClusterSizeX() ir.Value
	ClusterSizeY() ir.Value
	ClusterSizeZ() ir.Value
	DynamicSharedMemorySize() ir.Value
}

// sizeOperands returns a launch's grid, block and cluster size operands,
// x, y and z (the cluster's nil without clusters).
func sizeOperands(l launchView) (grid, block, cluster [3]ir.Value) {
	return [3]ir.Value{l.GridSizeX(), l.GridSizeY(), l.GridSizeZ()},
		[3]ir.Value{l.BlockSizeX(), l.BlockSizeY(), l.BlockSizeZ()},
		[3]ir.Value{l.ClusterSizeX(), l.ClusterSizeY(), l.ClusterSizeZ()}
}

var dims = [3]string{"x", "y", "z"}

// launchPlan is what outlining one launch needs, computed before any IR is
// changed so that a rejected launch leaves the module untouched.
type launchPlan struct {
	launch   *ir.Operation
	fn       *ir.Operation // enclosing function-like symbol
	table    *ir.Operation // the builtin.module holding fn
	index    int           // launch number within fn
	captured []ir.Value    // kernel parameters, in order of first use
	consts   []*ir.Operation
}

func outlineKernels(top *ir.Operation) error {
	if err := checkHostSizes(top); err != nil {
		return err
	}
	if err := checkGivenLaunches(top); err != nil {
		return err
	}
	var plans []*launchPlan
	counts := map[*ir.Operation]int{}
	var err error
	ir.Walk(top, func(op *ir.Operation) ir.WalkResult {
		if op.Name() != gpu.Launch {
			return ir.Advance
		}
		var p *launchPlan
		if p, err = planLaunch(op); err != nil {
			return ir.Interrupt
		}
		p.index = counts[p.fn]
		counts[p.fn]++
		plans = append(plans, p)
		return ir.Skip
	})
	if err != nil {
		return err
	}
	o := &outliner{byFunc: map[*ir.Operation]*ir.Operation{}, index: map[*ir.Operation]*ir.SymbolIndex{}}
	for _, p := range plans {
		if err := o.outline(p); err != nil {
			return err
		}
	}
	return nil
}

// planLaunch finds the enclosing function and the captured values of a
// launch, rejecting what cannot be passed to a kernel.
func planLaunch(launch *ir.Operation) (*launchPlan, error) {
	p := &launchPlan{launch: launch}
	for o := launch.ParentOp(); o != nil; o = o.ParentOp() {
		if o.Name() == gpu.Module || o.Name() == gpu.Func {
			return nil, launch.EmitError("a gpu.launch inside device code ('%s') cannot be outlined: launching kernels from kernels is not supported", o.Name())
		}
		if o.HasTrait(ir.SymbolTable) {
			if p.fn == nil {
				return nil, launch.EmitError("a gpu.launch must be inside a function to be outlined")
			}
			if o.Name() != builtin.Module {
				return nil, launch.EmitError("the function holding a gpu.launch must be directly inside a builtin.module to be outlined, not '%s'", o.Name())
			}
			p.table = o
			break
		}
		if p.fn == nil && o.SymbolName() != "" {
			p.fn = o
		}
	}
	if p.table == nil {
		return nil, launch.EmitError("a gpu.launch must be inside a function in a builtin.module to be outlined")
	}
	if p.fn.ParentOp() != p.table {
		return nil, p.fn.EmitError("'%s' holds a gpu.launch and must be directly inside the module to be outlined", p.fn.Name())
	}
	if err := checkLaunchSizes(launch, gpu.LaunchOp{Op: launch}); err != nil {
		return nil, err
	}
	body := gpu.LaunchOp{Op: launch}.Body()
	seen := map[ir.Value]bool{}
	seenConst := map[*ir.Operation]bool{}
	var err error
	ir.Walk(launch, func(op *ir.Operation) ir.WalkResult {
		if op == launch {
			return ir.Advance
		}
		if op.Name() == gpu.Launch {
			err = op.EmitError("a gpu.launch nested in another gpu.launch cannot be outlined").
				AttachNote(launch.Loc, "enclosing gpu.launch here")
			return ir.Interrupt
		}
		for _, v := range op.Operands() {
			if v == nil || seen[v] || !definedOutside(v, body) {
				continue
			}
			if d := v.DefiningOp(); d != nil && d.HasTrait(ir.ConstantLike) && d.NumOperands() == 0 && d.NumRegions() == 0 {
				if !seenConst[d] {
					seenConst[d] = true
					p.consts = append(p.consts, d)
				}
				continue
			}
			if why := uncapturable(v.Type()); why != "" {
				err = op.EmitError("cannot pass a value of type '%s' from outside the gpu.launch to the kernel: %s", v.Type(), why).
					AttachNote(v.Loc(), "value defined here, outside the launch").
					AttachNote(launch.Loc, "in the gpu.launch outlined here")
				return ir.Interrupt
			}
			seen[v] = true
			p.captured = append(p.captured, v)
		}
		return ir.Advance
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// checkLaunchSizes checks the constant sizes of launch op (a gpu.launch or
// gpu.launch_func, viewed as launch) and its opt-in to non-portable
// cluster sizes against what sm_90 can run.
func checkLaunchSizes(op *ir.Operation, launch launchView) error {
	l := launchSizes(launch)
	var err error
	if l.NonPortableCluster, err = sm90.NonPortableCluster(op); err == nil {
		err = l.Check()
	}
	if err != nil {
		return op.EmitError("this launch cannot run on sm_90: %v", err)
	}
	return nil
}

// launchSizes reads the constant sizes of a gpu.launch (sm90.Unknown where
// a size is computed at run time; the plan checks those before launching).
func launchSizes(launch launchView) sm90.Launch {
	size := func(v ir.Value) int64 {
		if v == nil {
			return 0
		}
		if c, ok := ir.AttrInt(ir.ConstantValue(v)); ok {
			return c
		}
		return sm90.Unknown
	}
	l := sm90.Launch{DynamicSharedBytes: size(launch.DynamicSharedMemorySize())}
	grid, block, cluster := sizeOperands(launch)
	for i := range 3 {
		l.Grid[i] = size(grid[i])
		l.Block[i] = size(block[i])
		l.Cluster[i] = size(cluster[i])
	}
	return l
}

// definedOutside reports whether v is defined outside region r.
func definedOutside(v ir.Value, r *ir.Region) bool {
	switch v := v.(type) {
	case *ir.OpResult:
		return !r.IsAncestorOf(v.Owner())
	case *ir.BlockArgument:
		vr := v.Owner().Parent()
		if vr == nil {
			return true
		}
		return vr != r && (vr.ParentOp() == nil || !r.IsAncestorOf(vr.ParentOp()))
	}
	return true
}

// uncapturable says why a value of type t cannot become a kernel parameter,
// or returns "" when it can.
func uncapturable(t ir.Type) string {
	switch t := t.(type) {
	case *ir.IntegerType, *ir.IndexType, *ir.FloatType, *ir.VectorType:
		return ""
	case *ir.MemRefType:
		n, ok := ir.MemorySpaceNumber(t.MemorySpace)
		switch {
		case !ok:
			return fmt.Sprintf("memory space '%s' is not supported for kernel arguments", t.MemorySpace)
		case n == 3:
			return "workgroup (shared) memory belongs to one block; allocate it inside the launch body or as a workgroup attribution"
		case n == 5:
			return "private memory belongs to one thread; allocate it inside the launch body or as a private attribution"
		}
		if _, _, ok := t.StridesAndOffset(); !ok {
			return "only memrefs with a strided layout can be passed to a kernel"
		}
		return ""
	case *ir.UnrankedMemRefType:
		return "unranked memrefs cannot be passed to a kernel; pass a ranked memref instead"
	}
	if _, ok := nvgpu.AsTensorMapDescriptor(t); ok {
		return ""
	}
	if t == gpu.AsyncToken {
		return "async tokens only order host-side work and cannot be used in a kernel"
	}
	if _, ok := nvgpu.AsMBarrierGroup(t); ok {
		return "mbarriers live in workgroup (shared) memory; create them inside the launch body"
	}
	return "only memrefs, integers, indices, floats, vectors and tensor map descriptors can be passed to a kernel"
}

type outliner struct {
	// byFunc holds the default gpu.module made for each function, which
	// its later launches reuse.
	byFunc map[*ir.Operation]*ir.Operation
	// index holds the symbols of the module and of each gpu.module, kept
	// up to date as kernels are added: a scan per lookup is quadratic on
	// modules of thousands of launches.
	index map[*ir.Operation]*ir.SymbolIndex
}

// symbols returns the index of table's symbols.
func (o *outliner) symbols(table *ir.Operation) *ir.SymbolIndex {
	idx := o.index[table]
	if idx == nil {
		idx = ir.NewSymbolIndex(table)
		o.index[table] = idx
	}
	return idx
}

func (o *outliner) outline(p *launchPlan) error {
	launch := p.launch
	gm, err := o.kernelModule(p)
	if err != nil {
		return err
	}
	kname, err := kernelName(p, o.symbols(gm))
	if err != nil {
		return err
	}

	lv := gpu.LaunchOp{Op: launch}
	body := lv.Body()
	oldEntry := body.Entry()
	grid, block, cluster := sizeOperands(lv)
	nCfg := 12
	clusters := cluster[0] != nil
	if clusters {
		nCfg = 18
	}
	oldArgs := oldEntry.Args()
	nW := int(launch.IntAttrOf("workgroup_attributions", 0))
	attributions := oldArgs[nCfg:]

	// The kernel's entry block: parameters, then the attributions.
	var inputs []ir.Type
	for _, v := range p.captured {
		inputs = append(inputs, v.Type())
	}
	entry := ir.NewBlock(nil, nil)
	params := make([]ir.Value, len(p.captured))
	for i, v := range p.captured {
		params[i] = entry.AddArgument(v.Type(), v.Loc())
	}
	for _, a := range attributions {
		ir.ReplaceAllUsesWith(a, entry.AddArgument(a.Type(), a.Loc()))
	}

	// Move the body into the kernel region, the entry's ops into the new
	// entry block.
	region := ir.NewRegion()
	region.TakeBody(body)
	for op := oldEntry.First(); op != nil; {
		next := op.Next()
		op.Remove()
		entry.Append(op)
		op = next
	}
	region.InsertBlock(0, entry)
	region.RemoveBlock(oldEntry)

	b := ir.NewBuilder(launch.Loc)
	b.SetInsertionPointToStart(entry)
	clones := map[*ir.Operation]*ir.Operation{}
	cloneConst := func(d *ir.Operation) *ir.Operation {
		if c, ok := clones[d]; ok {
			return c
		}
		c := b.Insert(d.Clone(nil))
		clones[d] = c
		return c
	}

	// Launch region arguments: ids and dynamic sizes become gpu index ops
	// (first, in argument order), static sizes their constants.
	known := map[int][]int64{}
	repl := map[int]*ir.Operation{} // argument index -> constant to clone
	// The launch operands giving the sizes of argument groups 2, 3 and 5.
	sizeOf := map[int][3]ir.Value{2: grid, 3: block, 5: cluster}
	for g := 0; g < nCfg/3; g++ {
		sizes3, sized := sizeOf[g]
		static := sized
		var sizes []int64
		for d := 0; d < 3; d++ {
			arg := oldArgs[3*g+d]
			var cst *ir.Operation
			if sized {
				v := sizes3[d]
				if c := v.DefiningOp(); c != nil && c.HasTrait(ir.ConstantLike) && c.NumOperands() == 0 && c.NumRegions() == 0 {
					cst = c
				}
				n, ok := ir.AttrInt(ir.ConstantValue(v))
				if !ok || n < 1 || n > math.MaxInt32 {
					static = false
				}
				sizes = append(sizes, n)
			}
			if !ir.HasUses(arg) {
				continue
			}
			if cst != nil {
				repl[3*g+d] = cst
				continue
			}
			idx := b.CreateOp(launchArgOps[g], nil, []ir.Type{ir.Index},
				ir.NamedAttr{Name: "dimension", Value: gpu.DimAttr(dims[d])})
			ir.ReplaceAllUsesWith(arg, idx.Result(0))
		}
		if static {
			known[g] = sizes
		}
	}
	for i := 0; i < nCfg; i++ {
		if c, ok := repl[i]; ok {
			ir.ReplaceAllUsesWith(oldArgs[i], cloneConst(c).Result(0))
		}
	}
	// Constants used in the body.
	for _, c := range p.consts {
		nc := cloneConst(c)
		for i := range c.Results() {
			ir.ReplaceUsesIf(c.Result(i), nc.Result(i), func(u *ir.OpOperand) bool { return region.IsAncestorOf(u.Owner()) })
		}
	}
	// Captured values.
	for i, v := range p.captured {
		ir.ReplaceUsesIf(v, params[i], func(u *ir.OpOperand) bool { return region.IsAncestorOf(u.Owner()) })
	}

	// The kernel.
	st := &ir.OperationState{Name: gpu.Func, Loc: launch.Loc, Regions: []*ir.Region{region}}
	st.AddAttr("sym_name", ir.Str(kname))
	st.AddAttr("function_type", ir.TypeAttrOf(ir.FunctionTypeOf(inputs, nil)))
	st.AddAttr("gpu.kernel", ir.Unit)
	st.AddAttr("workgroup_attributions", ir.I64Attr(int64(nW)))
	for g, name := range [6]string{2: "known_grid_size", 3: "known_block_size", 5: "known_cluster_size"} {
		if s, ok := known[g]; ok && name != "" {
			st.AddAttr(name, ir.DenseI32Array(s...))
		}
	}
	kernel := ir.NewOperation(st)
	gpu.ModuleOp{Op: gm}.BodyRegion().Entry().Append(kernel)
	o.symbols(gm).Insert(kernel)

	// gpu.terminator -> gpu.return (only the kernel's own terminators: no
	// launch is nested, so every gpu.terminator here ended the launch body).
	for _, blk := range region.Blocks() {
		if t := blk.Last(); t != nil && t.Name() == gpu.Terminator {
			rb := ir.NewBuilder(t.Loc)
			rb.SetInsertionPoint(t)
			r := rb.CreateOp(gpu.Return, nil, nil)
			for _, a := range t.DiscardableAttrs() {
				r.SetAttr(a.Name, a.Value)
			}
			t.Erase()
		}
	}

	if err := copySymbols(o.symbols(p.table), o.symbols(gm), kernel); err != nil {
		return err
	}

	// The launch.
	var operands []ir.Value
	segs := make([]int64, 13)
	deps := lv.AsyncDependencies()
	operands = append(operands, deps...)
	segs[0] = int64(len(deps))
	for i, v := range append(grid[:], block[:]...) {
		operands = append(operands, v)
		segs[1+i] = 1
	}
	if clusters {
		for i, v := range cluster {
			operands = append(operands, v)
			segs[7+i] = 1
		}
	}
	if v := lv.DynamicSharedMemorySize(); v != nil {
		operands = append(operands, v)
		segs[10] = 1
	}
	operands = append(operands, p.captured...)
	segs[11] = int64(len(p.captured))
	lb := ir.NewBuilder(launch.Loc)
	lb.SetInsertionPoint(launch)
	call := lb.CreateOp(gpu.LaunchFunc, operands, launch.ResultTypes(),
		ir.NamedAttr{Name: "kernel", Value: ir.SymbolRef(gm.SymbolName(), kname)},
		ir.NamedAttr{Name: "operandSegmentSizes", Value: ir.DenseI32Array(segs...)})
	for _, a := range launch.DiscardableAttrs() {
		if a.Name != "workgroup_attributions" {
			call.SetAttr(a.Name, a.Value)
		}
	}
	launch.ReplaceAllUsesWith(call.Results())
	launch.Erase()
	p.table.SetAttr("gpu.container_module", ir.Unit)
	return nil
}

// kernelModule returns the gpu.module that receives the launch's kernel,
// creating it after the enclosing function when needed.
func (o *outliner) kernelModule(p *launchPlan) (*ir.Operation, error) {
	explicit := ""
	if ref, ok := (gpu.LaunchOp{Op: p.launch}).Module().(*ir.SymbolRefAttr); ok {
		explicit = ref.Root
	}
	name := explicit
	if name == "" {
		if gm := o.byFunc[p.fn]; gm != nil {
			return gm, nil
		}
		name = p.fn.SymbolName() + "_kernels"
	}
	table := o.symbols(p.table)
	existing := table.Lookup(name)
	switch {
	case existing != nil && explicit != "" && existing.Name() == gpu.Module:
		return existing, nil
	case existing != nil && explicit != "":
		return nil, p.launch.EmitError("cannot outline into module @%s: the symbol is already defined by '%s'", name, existing.Name()).
			AttachNote(existing.Loc, "@%s defined here", name)
	case existing != nil:
		name = table.Unique(name)
	}
	st := &ir.OperationState{Name: gpu.Module, Loc: p.launch.Loc}
	st.AddAttr("sym_name", ir.Str(name))
	st.AddRegion().AddBlock(ir.NewBlock(nil, nil))
	gm := ir.NewOperation(st)
	gm.MoveAfter(p.fn)
	table.Insert(gm)
	if explicit == "" {
		o.byFunc[p.fn] = gm
	}
	return gm, nil
}

// kernelName returns the name of the launch's kernel in module gm.
func kernelName(p *launchPlan, gm *ir.SymbolIndex) (string, error) {
	if ref, ok := (gpu.LaunchOp{Op: p.launch}).Function().(*ir.SymbolRefAttr); ok {
		if prev := gm.Lookup(ref.Root); prev != nil {
			return "", p.launch.EmitError("cannot outline kernel @%s: module @%s already defines it", ref.Root, gm.Op().SymbolName()).
				AttachNote(prev.Loc, "@%s defined here", ref.Root)
		}
		return ref.Root, nil
	}
	return gm.Unique(fmt.Sprintf("%s_kernel_%d", p.fn.SymbolName(), p.index)), nil
}

// copySymbols clones into gm the symbols of table that op (transitively)
// refers to, so the kernel module is self-contained: device functions and
// memref.global ops. Symbols that gm already defines are kept.
func copySymbols(table, gm *ir.SymbolIndex, op *ir.Operation) error {
	work := []*ir.Operation{op}
	for len(work) > 0 {
		cur := work[0]
		work = work[1:]
		var err error
		ir.Walk(cur, func(o *ir.Operation) ir.WalkResult {
			for _, a := range o.AllAttrs() {
				if a.Name == "sym_name" {
					continue
				}
				forEachSymbolRef(a.Value, func(ref *ir.SymbolRefAttr) {
					if err != nil || gm.Lookup(ref.Root) != nil {
						return
					}
					sym := table.Lookup(ref.Root)
					if sym == nil || sym.Name() == gpu.Module || sym.Name() == gpu.Binary {
						return
					}
					if len(ir.Nested(sym, gpu.Launch)) > 0 || len(ir.Nested(sym, gpu.LaunchFunc)) > 0 {
						err = o.EmitError("the kernel refers to @%s, which launches kernels and cannot be called from device code", ref.Root).
							AttachNote(sym.Loc, "@%s defined here", ref.Root)
						return
					}
					c := sym.Clone(nil)
					gpu.ModuleOp{Op: gm.Op()}.BodyRegion().Entry().Append(c)
					gm.Insert(c)
					work = append(work, c)
				})
			}
			if err != nil {
				return ir.Interrupt
			}
			return ir.Advance
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// forEachSymbolRef calls fn on every symbol reference inside attribute a.
func forEachSymbolRef(a ir.Attribute, fn func(*ir.SymbolRefAttr)) {
	switch a := a.(type) {
	case *ir.SymbolRefAttr:
		fn(a)
	case *ir.ArrayAttr:
		for _, e := range a.Elems {
			forEachSymbolRef(e, fn)
		}
	case *ir.DictAttr:
		for _, e := range a.Entries {
			forEachSymbolRef(e.Value, fn)
		}
	}
}

// checkHostSizes rejects a statically shaped memref or vector outside
// gpu.modules (host code, and the launch bodies still in it) whose size
// does not fit in 64 bits: tmac run could not allocate it, and a kernel it
// is passed to would compute its strides and sizes wrapped around. The
// error is at the op defining the value, or at the block argument (a
// function argument).
func checkHostSizes(top *ir.Operation) error {
	tooLarge := func(t ir.Type) (string, bool) {
		if _, err := ir.StaticSize(t); err != nil {
			return err.Error(), true
		}
		return "", false
	}
	var err error
	ir.Walk(top, func(op *ir.Operation) ir.WalkResult {
		if op.Name() == gpu.Module {
			return ir.Skip
		}
		for _, r := range op.Results() {
			if msg, bad := tooLarge(r.Type()); bad {
				err = op.EmitError("%s", msg)
				return ir.Interrupt
			}
		}
		for ri := 0; ri < op.NumRegions(); ri++ {
			for _, b := range op.Region(ri).Blocks() {
				for i, a := range b.Args() {
					if msg, bad := tooLarge(a.Type()); bad {
						if _, ok := ir.FileLineCol(a.Loc()); ok {
							err = ir.Errorf(a.Loc(), "%s", msg)
						} else {
							err = op.EmitError("argument #%d: %s", i, msg)
						}
						return ir.Interrupt
					}
				}
			}
		}
		return ir.Advance
	})
	return err
}

// checkGivenLaunches checks the launches already in the program (written
// as gpu.launch_func, not outlined here) and the sizes gpu.func kernels
// declare (known_block_size, known_grid_size, known_cluster_size) against
// what sm_90 can run, as outlining checks gpu.launch: constant sizes now,
// the others before each launch.
func checkGivenLaunches(top *ir.Operation) error {
	var err error
	ir.Walk(top, func(op *ir.Operation) ir.WalkResult {
		switch op.Name() {
		case gpu.LaunchFunc:
			if err = checkLaunchSizes(op, gpu.LaunchFuncOp{Op: op}); err != nil {
				return ir.Interrupt
			}
		case gpu.Func:
			dims := func(attr ir.Attribute) ([3]int64, bool) {
				a, ok := attr.(*ir.DenseArrayAttr)
				if !ok || len(a.Ints) != 3 {
					return [3]int64{}, false
				}
				return [3]int64{a.Ints[0], a.Ints[1], a.Ints[2]}, true
			}
			fn := gpu.FuncOp{Op: op}
			// A kernel's cluster size is checked against the hardware's
			// limit; whether a launch may use a non-portable one is the
			// launch's to say (checked there).
			u := int64(sm90.Unknown)
			l := sm90.Launch{Grid: [3]int64{u, u, u}, Block: [3]int64{u, u, u}, DynamicSharedBytes: u, NonPortableCluster: true}
			var given []string
			if d, ok := dims(fn.KnownBlockSize()); ok {
				l.Block, given = d, append(given, "known_block_size")
			}
			if d, ok := dims(fn.KnownGridSize()); ok {
				l.Grid, given = d, append(given, "known_grid_size")
			}
			if d, ok := dims(fn.KnownClusterSize()); ok {
				l.Cluster, given = d, append(given, "known_cluster_size")
			}
			if len(given) == 0 {
				return ir.Skip
			}
			if e := l.Check(); e != nil {
				err = op.EmitOpError("cannot run on sm_90 with its %s: %v", strings.Join(given, " and "), e)
				return ir.Interrupt
			}
			return ir.Skip
		}
		return ir.Advance
	})
	return err
}
