package gpu

import (
	"strings"

	"github.com/tmac-dev/tmac/ir"
)

// Number of config entry-block arguments of gpu.launch (block ids, thread
// ids, grid sizes, block sizes), plus 6 more with clusters.
const numConfigArgs = 12

// parseSizeAssignment parses `(%a, %b, %c) in (%x = %v, %y = %v, %z = %v)`
// and returns the 3 ids, the 3 size arguments and the 3 size operands.
func parseSizeAssignment(p *ir.Parser) (ids, sizes []ir.Argument, vals []ir.UnresolvedOperand, err error) {
	err = p.ParseCommaSeparatedList(ir.DelimParen, func() error {
		u, err := p.ParseOperand()
		ids = append(ids, ir.Argument{Operand: u, Type: ir.Index})
		return err
	})
	if err != nil {
		return
	}
	for len(ids) < 3 {
		ids = append(ids, ir.Argument{Type: ir.Index})
	}
	if err = p.ParseKeyword("in"); err != nil {
		return
	}
	sizes, vals, err = p.ParseAssignmentList()
	for i := range sizes {
		sizes[i].Type = ir.Index
	}
	if err == nil && len(vals) != 3 {
		err = p.Errorf("expected 3 size assignments")
	}
	return
}

func parseLaunch(p *ir.Parser, st *ir.OperationState) error {
	segs := make([]int64, 11)
	if p.IsKeyword("async") {
		if p.NumResultBindings() == 0 {
			return p.Errorf("custom op 'gpu.launch' needs to be named when marked 'async'")
		}
		p.ParseKeyword("async")
		st.ResultTypes = []ir.Type{AsyncToken}
		if p.IsPunct("[") {
			us, err := p.ParseOperandList(ir.DelimSquare)
			if err != nil {
				return err
			}
			if err := p.ResolveOperandsSameType(us, AsyncToken, st); err != nil {
				return err
			}
			segs[0] = int64(len(us))
		}
	} else if p.IsPunct("[") {
		// Upstream resolves these with a null type.
		us, err := p.ParseOperandList(ir.DelimSquare)
		if err != nil {
			return err
		}
		if len(us) > 0 {
			// Upstream resolves the first operand with a null type and
			// reports the mismatch with its prior use.
			u := us[0]
			v, err := p.ResolveOperand(u, nil)
			if err != nil {
				return err
			}
			return ir.Errorf(p.LocOf(u.Tok), "use of value '%%%s' expects different type than prior uses: '<<NULL TYPE>>' vs '%s'", u.Name, v.Type()).
				AttachNote(v.Loc(), "prior use here")
		}
	}
	var clusterIDs, clusterSizes []ir.Argument
	var clusterVals []ir.UnresolvedOperand
	if p.ParseOptionalKeyword("clusters") {
		var err error
		if clusterIDs, clusterSizes, clusterVals, err = parseSizeAssignment(p); err != nil {
			return err
		}
	}
	if err := p.ParseKeyword("blocks"); err != nil {
		return err
	}
	blockIDs, gridSizes, gridVals, err := parseSizeAssignment(p)
	if err != nil {
		return err
	}
	if err := p.ParseKeyword("threads"); err != nil {
		return err
	}
	threadIDs, blockSizes, blockVals, err := parseSizeAssignment(p)
	if err != nil {
		return err
	}
	if err := p.ResolveOperandsSameType(gridVals, ir.Index, st); err != nil {
		return err
	}
	if err := p.ResolveOperandsSameType(blockVals, ir.Index, st); err != nil {
		return err
	}
	for i := 1; i <= 6; i++ {
		segs[i] = 1
	}
	if clusterVals != nil {
		if err := p.ResolveOperandsSameType(clusterVals, ir.Index, st); err != nil {
			return err
		}
		segs[7], segs[8], segs[9] = 1, 1, 1
	}
	if p.ParseOptionalKeyword("dynamic_shared_memory_size") {
		if err := p.ParseOperandOfType(ir.I32, st); err != nil {
			return err
		}
		segs[10] = 1
	}
	for _, kw := range []string{"module", "function"} {
		if p.ParseOptionalKeyword(kw) {
			if err := p.ParsePunct("("); err != nil {
				return err
			}
			s, err := p.ParseSymbolName()
			if err != nil {
				return err
			}
			if err := p.ParsePunct(")"); err != nil {
				return err
			}
			st.AddAttr(kw, ir.SymbolRef(s))
		}
	}
	workgroup, private, err := parseAttributions(p)
	if err != nil {
		return err
	}
	var args []ir.Argument
	args = append(args, blockIDs...)
	args = append(args, threadIDs...)
	args = append(args, gridSizes...)
	args = append(args, blockSizes...)
	args = append(args, clusterIDs...)
	args = append(args, clusterSizes...)
	args = append(args, workgroup...)
	args = append(args, private...)
	for i := range args {
		args[i].Attrs = nil
	}
	r := st.AddRegion()
	if err := p.ParseRegion(r, args); err != nil {
		return err
	}
	if err := p.ParseOptionalAttrDict(st); err != nil {
		return err
	}
	st.AddAttr("operandSegmentSizes", ir.DenseI32Array(segs...))
	st.AddAttr("workgroup_attributions", ir.I64Attr(int64(len(workgroup))))
	return nil
}

func hasClusters(op *ir.Operation) bool {
	return op.OperandNamed("clusterSizeX") != nil && op.OperandNamed("clusterSizeY") != nil && op.OperandNamed("clusterSizeZ") != nil
}

func printSizeAssignment(p *ir.Printer, kw string, ids, sizes []*ir.BlockArgument, vals []ir.Value) {
	p.Write(" " + kw + "(")
	ir.PrintCommaSeparated(p, ids, func(a *ir.BlockArgument) { p.PrintOperand(a) })
	p.Write(") in (")
	for i, a := range sizes {
		if i > 0 {
			p.Write(", ")
		}
		p.PrintOperand(a)
		p.Write(" = ")
		p.PrintOperand(vals[i])
	}
	p.Write(")")
}

func printLaunch(p *ir.Printer, op *ir.Operation) {
	if op.NumResults() > 0 {
		p.Write(" async")
		if deps := op.OperandGroup("asyncDependencies"); len(deps) > 0 {
			p.Write(" [")
			p.PrintOperands(deps)
			p.Write("]")
		}
	}
	body := op.Region(0)
	var args []*ir.BlockArgument
	if !body.Empty() {
		args = body.Entry().Args()
	}
	clusters := hasClusters(op)
	nCfg := numConfigArgs
	if clusters {
		nCfg += 6
	}
	if len(args) >= nCfg {
		if clusters {
			printSizeAssignment(p, "clusters", args[12:15], args[15:18], []ir.Value{op.OperandNamed("clusterSizeX"), op.OperandNamed("clusterSizeY"), op.OperandNamed("clusterSizeZ")})
		}
		printSizeAssignment(p, "blocks", args[0:3], args[6:9], []ir.Value{op.OperandNamed("gridSizeX"), op.OperandNamed("gridSizeY"), op.OperandNamed("gridSizeZ")})
		printSizeAssignment(p, "threads", args[3:6], args[9:12], []ir.Value{op.OperandNamed("blockSizeX"), op.OperandNamed("blockSizeY"), op.OperandNamed("blockSizeZ")})
	}
	if v := op.OperandNamed("dynamicSharedMemorySize"); v != nil {
		p.Write(" dynamic_shared_memory_size ")
		p.PrintOperand(v)
	}
	for _, kw := range []string{"module", "function"} {
		if a := op.Attr(kw); a != nil {
			p.Write(" " + kw + "(")
			p.PrintAttribute(a)
			p.Write(")")
		}
	}
	nW := numWorkgroup(op)
	if nW >= 0 && len(args) >= nCfg+nW {
		printAttributions(p, "workgroup", args[nCfg:nCfg+nW], nil)
		printAttributions(p, "private", args[nCfg+nW:], nil)
	}
	p.Write(" ")
	p.PrintRegion(body, false, true, false)
	p.PrintOptionalAttrDict(op.AllAttrs(), "operandSegmentSizes", "workgroup_attributions", "module", "function")
}

func verifyLaunch(op *ir.Operation) error {
	n := 0
	for _, g := range []string{"clusterSizeX", "clusterSizeY", "clusterSizeZ"} {
		if op.OperandNamed(g) != nil {
			n++
		}
	}
	if n != 0 && n != 3 {
		return op.EmitOpError("cluster size must be all present")
	}
	body := op.Region(0)
	nCfg := numConfigArgs
	if n == 3 {
		nCfg += 6
	}
	nW := numWorkgroup(op)
	if nW < 0 {
		return badWorkgroupCount(op)
	}
	if body.Empty() || body.Entry().NumArgs() < nCfg+nW {
		return op.EmitOpError("unexpected number of region arguments")
	}
	args := body.Entry().Args()
	if err := verifyAttributions(op, args[nCfg:nCfg+nW], "workgroup"); err != nil {
		return err
	}
	if err := verifyAttributions(op, args[nCfg+nW:], "private"); err != nil {
		return err
	}
	for _, b := range body.Blocks() {
		t := b.Last()
		if t == nil || !t.HasTrait(ir.Terminator) || len(t.Successors()) > 0 {
			continue
		}
		if t.Name() != "gpu.terminator" {
			return t.EmitError("expected 'gpu.terminator' or a terminator with successors").
				AttachNote(op.Loc, "in 'gpu.launch' body region")
		}
	}
	return nil
}

// --- gpu.launch_func --------------------------------------------------------

func verifyLaunchFunc(op *ir.Operation) error {
	var t ir.Type
	for _, g := range []string{"gridSizeX", "gridSizeY", "gridSizeZ", "blockSizeX", "blockSizeY", "blockSizeZ"} {
		v := op.OperandNamed(g)
		if t == nil {
			t = v.Type()
		} else if v.Type() != t {
			return op.EmitOpError("failed to verify that all of {gridSizeX, gridSizeY, gridSizeZ, blockSizeX, blockSizeY, blockSizeZ} have same type")
		}
	}
	mod := op.ParentOfName("builtin.module")
	if mod == nil {
		return op.EmitOpError("expected to belong to a module")
	}
	if _, ok := mod.Attr("gpu.container_module").(*ir.UnitAttr); !ok {
		return op.EmitOpError("expected the closest surrounding module to have the 'gpu.container_module' attribute")
	}
	if hasClusters(op) {
		ct := op.OperandNamed("clusterSizeX").Type()
		if op.OperandNamed("clusterSizeY").Type() != ct || op.OperandNamed("clusterSizeZ").Type() != ct {
			return op.EmitOpError("expects types of the cluster dimensions must be the same")
		}
	}
	return nil
}

// verifyContainerModule checks the gpu.launch_func ops of functions directly
// inside a module marked gpu.container_module against their kernels.
func verifyContainerModule(mod *ir.Operation) error {
	// Indexed once: a scan per launch is quadratic in the number of kernels.
	syms := &kernelSymbols{mod: ir.NewSymbolIndex(mod), nested: map[*ir.Operation]*ir.SymbolIndex{}}
	for _, r := range mod.Regions() {
		for _, b := range r.Blocks() {
			for _, fn := range b.Ops() {
				for _, fr := range fn.Regions() {
					for _, fb := range fr.Blocks() {
						for _, op := range fb.Ops() {
							if op.Name() != "gpu.launch_func" {
								continue
							}
							if err := checkKernel(syms, op); err != nil {
								return err
							}
						}
					}
				}
			}
		}
	}
	return nil
}

// kernelSymbols indexes a container module's symbols and, on demand, those
// of its gpu.modules.
type kernelSymbols struct {
	mod    *ir.SymbolIndex
	nested map[*ir.Operation]*ir.SymbolIndex
}

// resolve returns the op that ref (@module::@kernel...) names, or nil.
func (k *kernelSymbols) resolve(ref *ir.SymbolRefAttr) *ir.Operation {
	op := k.mod.Lookup(ref.Root)
	for _, n := range ref.Nested {
		if op == nil {
			return nil
		}
		idx := k.nested[op]
		if idx == nil {
			idx = ir.NewSymbolIndex(op)
			k.nested[op] = idx
		}
		op = idx.Lookup(n)
	}
	return op
}

func checkKernel(syms *kernelSymbols, op *ir.Operation) error {
	ref, ok := op.Attr("kernel").(*ir.SymbolRefAttr)
	if !ok {
		return nil
	}
	container := syms.mod.Lookup(ref.Root)
	if container == nil {
		return op.EmitOpError("kernel container '%s' is undefined", ref.Root)
	}
	if container.Name() == "gpu.binary" {
		return nil
	}
	if container.Name() != "gpu.module" {
		return op.EmitOpError("kernel module '%s' is undefined", ref.Root)
	}
	var kernel *ir.Operation
	if len(ref.Nested) > 0 {
		kernel = syms.resolve(ref)
	}
	if kernel == nil {
		return op.EmitOpError("kernel function '%s' is undefined", ref.String())
	}
	ft, ok := kernel.Attr("function_type").(*ir.TypeAttr)
	if !ok {
		return op.EmitOpError("referenced kernel '%s' is not a function", ref.String()).
			AttachNote(kernel.Loc, "see the kernel definition here")
	}
	if _, ok := kernel.Attr("gpu.kernel").(*ir.UnitAttr); !ok {
		return op.EmitOpError("kernel function is missing the 'gpu.kernel' attribute")
	}
	if kernel.Name() != "gpu.func" {
		return nil
	}
	fty, _ := ft.Value.(*ir.FunctionType)
	if fty == nil {
		return nil
	}
	operands := op.OperandGroup("kernelOperands")
	if len(operands) != len(fty.Inputs) {
		return op.EmitOpError("got %d kernel operands but expected %d", len(operands), len(fty.Inputs))
	}
	for i, v := range operands {
		if v.Type() != fty.Inputs[i] {
			return op.EmitOpError("type of function argument %d does not match", i)
		}
	}
	return nil
}

// --- memory ops -------------------------------------------------------------

// layoutSymbolCount returns the number of symbols of an affine-map layout.
func layoutSymbolCount(layout ir.Attribute) int {
	if layout == nil {
		return 0
	}
	s := layout.String()
	i := strings.Index(s, "affine_map<(")
	if i < 0 {
		return 0
	}
	s = s[i+len("affine_map<("):]
	j := strings.IndexByte(s, ')')
	if j < 0 {
		return 0
	}
	s = strings.TrimSpace(s[j+1:])
	if !strings.HasPrefix(s, "[") {
		return 0
	}
	k := strings.IndexByte(s, ']')
	if k < 0 {
		return 0
	}
	inner := strings.TrimSpace(s[1:k])
	if inner == "" {
		return 0
	}
	return strings.Count(inner, ",") + 1
}

func verifyAlloc(op *ir.Operation) error {
	m, ok := op.Result(0).Type().(*ir.MemRefType)
	if !ok {
		return nil
	}
	dyn := 0
	for _, d := range m.Shape() {
		if d == ir.Dynamic {
			dyn++
		}
	}
	if n := len(op.OperandGroup("dynamicSizes")); n != dyn {
		return op.EmitOpError("incorrect number of dynamic sizes, has %d, expected %d", n, dyn)
	}
	if len(op.OperandGroup("symbolOperands")) != layoutSymbolCount(m.Layout) {
		return op.EmitOpError("symbol operand count does not equal memref symbol count")
	}
	return nil
}

func verifyMemcpy(op *ir.Operation) error {
	dst, _ := op.OperandNamed("dst").Type().(*ir.MemRefType)
	src, _ := op.OperandNamed("src").Type().(*ir.MemRefType)
	if dst == nil || src == nil {
		return nil
	}
	if dst.Elem != src.Elem {
		return op.EmitOpError("arguments have incompatible element type")
	}
	ds, ss := dst.Shape(), src.Shape()
	if len(ds) != len(ss) {
		return op.EmitOpError("arguments have incompatible shape")
	}
	for i := range ds {
		if ds[i] != ir.Dynamic && ss[i] != ir.Dynamic && ds[i] != ss[i] {
			return op.EmitOpError("arguments have incompatible shape")
		}
	}
	return nil
}

func verifyDynamicSharedMemory(op *ir.Operation) error {
	m, ok := op.Result(0).Type().(*ir.MemRefType)
	if !ok {
		return nil
	}
	if addressSpaceOf(m.MemorySpace) != "workgroup" {
		return op.EmitOpError("address space must be address_space<workgroup>")
	}
	if m.Shape()[0] != ir.Dynamic {
		return op.EmitOpError("result memref type must be memref<?xi8, #gpu.address_space<workgroup>>")
	}
	return nil
}
