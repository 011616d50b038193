package ir

import (
	"fmt"
	"strconv"
	"strings"
)

// Verify checks op and everything nested in it: op definitions (operand,
// result, attribute and region specs, traits, op-specific rules), region
// isolation, dominance and symbol uniqueness. It returns the first error.
func Verify(op *Operation) error {
	v := &verifier{numbered: map[*Block]bool{}, doms: map[*Region]*domInfo{}}
	return v.verifyOp(op)
}

type verifier struct {
	numbered map[*Block]bool // blocks whose ops' order fields are set
	doms     map[*Region]*domInfo
}

func (v *verifier) verifyOp(op *Operation) error {
	for _, a := range op.attrs {
		if dl, _, ok := strings.Cut(a.Name, "."); ok {
			if d := LookupDialect(dl); d != nil && d.VerifyOpAttr != nil {
				if err := d.VerifyOpAttr(op, a); err != nil {
					return err
				}
			}
		}
	}
	if err := verifyInvariants(op); err != nil {
		return err
	}
	if op.def.VerifyInvariants != nil {
		if err := op.def.VerifyInvariants(op); err != nil {
			return err
		}
	}
	for _, r := range op.regions {
		for _, b := range r.blocks {
			if err := v.verifyBlock(op, b); err != nil {
				return err
			}
		}
	}
	if op.def.Verify != nil {
		if err := op.def.Verify(op); err != nil {
			return err
		}
	}
	return nil
}

func (v *verifier) verifyBlock(parent *Operation, b *Block) error {
	for _, a := range b.args {
		if a.owner != b {
			return Errorf(a.loc, "block argument not owned by block")
		}
	}
	registered := !parent.def.unregistered
	needsTerminator := registered && parent.def.Traits&(NoTerminator|GraphRegions) == 0
	if b.first == nil {
		if needsTerminator {
			return parent.EmitOpError("empty block: expect at least a terminator")
		}
		return nil
	}
	for op := b.first; op != nil; op = op.next {
		if op.block != b {
			return op.EmitOpError("operation's parent block is inconsistent")
		}
		if len(op.successors) > 0 && op != b.last {
			return op.EmitError("operation with block successors must terminate its parent block")
		}
		for _, s := range op.successors {
			if s.parent != b.parent {
				return op.EmitOpError("reference to block defined in another region")
			}
		}
		if err := v.verifyOperands(op); err != nil {
			return err
		}
		if err := v.verifyOp(op); err != nil {
			return err
		}
	}
	if needsTerminator && !b.last.HasTrait(Terminator) && b.last.IsRegistered() {
		// Upstream prints the offending op in the generic form.
		return b.last.EmitError("block with no terminator, has %s", strings.TrimRight(Print(b.last, PrintOptions{Generic: true}), "\n"))
	}
	return nil
}

// verifyOperands checks isolation and dominance for each operand of op.
func (v *verifier) verifyOperands(op *Operation) error {
	for i := range op.operands {
		val := op.operands[i].value
		if val == nil {
			return op.EmitOpError("operand #%d is null", i)
		}
		if r, ok := val.(*OpResult); ok && r.owner.def == placeholderDef {
			return op.EmitOpError("operand #%d refers to an undefined value", i)
		}
		defBlock := val.ParentBlock()
		if defBlock == nil || defBlock.parent == nil {
			return op.EmitOpError("operand #%d uses a value that is not in the IR", i)
		}
		defRegion := defBlock.parent
		// Find op's ancestor in defRegion, checking isolation on the way.
		anc := op
		for anc != nil && anc.ParentRegion() != defRegion {
			parent := anc.ParentOp()
			if parent == nil {
				anc = nil
				break
			}
			if parent.HasTrait(IsolatedFromAbove) && !isInside(defRegion, parent) {
				return op.EmitOpError("using value defined outside the region").
					AttachNote(parent.Loc, "required by region isolation constraints")
			}
			anc = parent
		}
		if anc == nil {
			return dominanceError(op, i, val)
		}
		if owner := defRegion.parent; owner != nil && owner.def.Traits&GraphRegions != 0 {
			continue
		}
		if defRegion.parent != nil && defRegion.parent.def.unregistered {
			continue
		}
		if !v.dominates(val, anc) {
			return dominanceError(op, i, val)
		}
	}
	return nil
}

// dominanceError reports operand i of op, val, whose definition does not
// dominate op, with a note where val is defined, as upstream words both.
func dominanceError(op *Operation, i int, val Value) *Diagnostic {
	d := op.EmitError("operand #%d does not dominate this use", i)
	def := val.DefiningOp()
	if def == nil {
		return d.AttachNote(val.Loc(), "operand defined as a block argument")
	}
	useRegion, defRegion := op.ParentRegion(), def.ParentRegion()
	where := " (op is neither in a parent nor in a child region)"
	switch {
	case op.block == def.block:
		where = " (op in the same block)"
	case useRegion == defRegion:
		where = " (op in the same region)"
	case useRegion != nil && isInside(useRegion, defRegion.parent):
		where = " (op in a parent region)"
	case defRegion != nil && isInside(defRegion, op):
		where = " (op in a child region)"
	}
	return d.AttachNote(def.Loc, "operand defined here%s", where)
}

// isInside reports whether region r lies (at any depth) inside op.
func isInside(r *Region, op *Operation) bool {
	for o := r.parent; o != nil; o = o.ParentOp() {
		if o == op {
			return true
		}
	}
	return false
}

// dominates reports whether the definition of val dominates user, an op in
// the same region as the definition.
func (v *verifier) dominates(val Value, user *Operation) bool {
	defBlock := val.ParentBlock()
	if defBlock == user.block {
		d := val.DefiningOp()
		if d == nil {
			return true // block argument
		}
		if d == user {
			return false
		}
		v.numberBlock(defBlock)
		return d.order < user.order
	}
	return v.blockDominates(defBlock, user.block)
}

// numberBlock sets the order field of b's ops, once per verification.
func (v *verifier) numberBlock(b *Block) {
	if v.numbered[b] {
		return
	}
	i := 0
	for op := b.first; op != nil; op = op.next {
		op.order = i
		i++
	}
	v.numbered[b] = true
}

// domInfo holds immediate dominators of the blocks of a region, and the
// entry and exit numbers of each block in a depth-first walk of the
// dominator tree: a dominates b exactly when b's interval lies in a's, so
// a query costs O(1) however deep the tree (a chain of 100,000 blocks
// took minutes walking up the tree for every use).
type domInfo struct {
	idom      map[*Block]*Block
	index     map[*Block]int
	pre, post map[*Block]int
}

func (v *verifier) blockDominates(a, b *Block) bool {
	r := a.parent
	di, ok := v.doms[r]
	if !ok {
		di = computeDominators(r)
		v.doms[r] = di
	}
	if _, reachable := di.idom[b]; !reachable {
		return true // unreachable blocks are dominated by everything
	}
	if _, reachable := di.idom[a]; !reachable {
		return false
	}
	return di.pre[a] <= di.pre[b] && di.post[b] <= di.post[a]
}

// computeDominators uses the iterative algorithm of Cooper, Harvey and
// Kennedy over a reverse postorder of the region's CFG.
func computeDominators(r *Region) *domInfo {
	di := &domInfo{idom: map[*Block]*Block{}, index: map[*Block]int{}}
	if len(r.blocks) == 0 {
		return di
	}
	// Postorder of the CFG from the entry, without recursion (a region
	// may have hundreds of thousands of blocks).
	var order []*Block
	seen := map[*Block]bool{r.blocks[0]: true}
	type frame struct {
		b    *Block
		next int
	}
	stack := []frame{{b: r.blocks[0]}}
	for len(stack) > 0 {
		f := &stack[len(stack)-1]
		succs := f.b.Successors()
		if f.next < len(succs) {
			s := succs[f.next]
			f.next++
			if !seen[s] && s.parent == r {
				seen[s] = true
				stack = append(stack, frame{b: s})
			}
			continue
		}
		order = append(order, f.b)
		stack = stack[:len(stack)-1]
	}
	for i, b := range order {
		di.index[b] = i
	}
	preds := map[*Block][]*Block{}
	for _, b := range order {
		for _, s := range b.Successors() {
			preds[s] = append(preds[s], b)
		}
	}
	entry := r.blocks[0]
	di.idom[entry] = entry
	intersect := func(a, b *Block) *Block {
		for a != b {
			for di.index[a] < di.index[b] {
				a = di.idom[a]
			}
			for di.index[b] < di.index[a] {
				b = di.idom[b]
			}
		}
		return a
	}
	for changed := true; changed; {
		changed = false
		for i := len(order) - 1; i >= 0; i-- {
			b := order[i]
			if b == entry {
				continue
			}
			var nd *Block
			for _, p := range preds[b] {
				if _, ok := di.idom[p]; !ok {
					continue
				}
				if nd == nil {
					nd = p
				} else {
					nd = intersect(p, nd)
				}
			}
			if nd != nil && di.idom[b] != nd {
				di.idom[b] = nd
				changed = true
			}
		}
	}
	// Number the dominator tree (entry and exit of a depth-first walk).
	children := map[*Block][]*Block{}
	for i := len(order) - 1; i >= 0; i-- {
		if b := order[i]; b != entry {
			children[di.idom[b]] = append(children[di.idom[b]], b)
		}
	}
	di.pre, di.post = map[*Block]int{}, map[*Block]int{}
	n := 0
	walk := []frame{{b: entry}}
	di.pre[entry] = n
	for len(walk) > 0 {
		f := &walk[len(walk)-1]
		if kids := children[f.b]; f.next < len(kids) {
			c := kids[f.next]
			f.next++
			n++
			di.pre[c] = n
			walk = append(walk, frame{b: c})
			continue
		}
		n++
		di.post[f.b] = n
		walk = walk[:len(walk)-1]
	}
	return di
}

// verifyInvariants checks op against its definition.
func verifyInvariants(op *Operation) error {
	d := op.def
	if d.unregistered {
		return nil
	}
	if len(d.Parents) > 0 {
		if err := verifyParents(op, d.Parents); err != nil {
			return err
		}
	}
	if d.VerifyProps != nil {
		if err := d.VerifyProps(op); err != nil {
			return err
		}
	}
	if err := verifyArgs(op, d.Operands, op.OperandTypes(), "operand", "operandSegmentSizes"); err != nil {
		return err
	}
	if err := verifyArgs(op, d.Results, op.ResultTypes(), "result", "resultSegmentSizes"); err != nil {
		return err
	}
	for _, spec := range d.Attrs {
		a := op.Attr(spec.Name)
		if a == nil {
			if !spec.Optional && spec.Default == nil {
				return op.EmitOpError("requires attribute '%s'", spec.Name)
			}
			continue
		}
		if spec.Constraint.OK != nil && !spec.Constraint.OK(a) {
			return op.EmitOpError("attribute '%s' failed to satisfy constraint: %s", spec.Name, spec.Constraint.Desc)
		}
	}
	if err := verifyRegionCount(op); err != nil {
		return err
	}
	if d.Successors >= 0 && len(op.successors) != d.Successors {
		if d.Successors == 1 {
			return op.EmitOpError("requires 1 successor but found %d", len(op.successors))
		}
		return op.EmitOpError("requires %d successors but found %d", d.Successors, len(op.successors))
	}
	if d.Traits&SingleBlock != 0 {
		for _, r := range op.regions {
			if len(r.blocks) > 1 {
				return op.EmitOpError("expects region #%d to have 0 or 1 blocks", regionIndex(op, r))
			}
			if len(r.blocks) == 1 && r.blocks[0].first == nil && d.Traits&NoTerminator == 0 {
				return op.EmitOpError("expects a non-empty block")
			}
		}
	}
	if d.Traits&SameOperandsAndResultType != 0 {
		var first Type
		for _, t := range append(op.OperandTypes(), op.ResultTypes()...) {
			if first == nil {
				first = t
			} else if t != first {
				return op.EmitOpError("requires the same type for all operands and results")
			}
		}
	}
	if d.Traits&Terminator != 0 && op.block != nil && op.block.last != op {
		return op.EmitOpError("must be the last operation in the parent block")
	}
	return nil
}

// verifyParents checks upstream's HasParent / ParentOneOf traits.
func verifyParents(op *Operation, parents []string) error {
	parent := op.ParentOp()
	for _, p := range parents {
		if parent != nil && parent.Name() == p {
			return nil
		}
	}
	if len(parents) == 1 {
		return op.EmitOpError("expects parent op '%s'", parents[0])
	}
	return op.EmitOpError("expects parent op to be one of '%s'", strings.Join(parents, ", "))
}

func regionIndex(op *Operation, r *Region) int {
	for i, x := range op.regions {
		if x == r {
			return i
		}
	}
	return -1
}

func verifyRegionCount(op *Operation) error {
	want := len(op.def.Regions)
	variadic := want > 0 && op.def.Regions[want-1].Variadic
	if variadic {
		if len(op.regions) < want-1 {
			return op.EmitOpError("expected %d or more regions", want-1)
		}
		return nil
	}
	if len(op.regions) != want {
		if want >= 2 {
			return op.EmitOpError("expected %d regions", want)
		}
		return op.EmitOpError("requires %s", countWords(want, "region"))
	}
	return nil
}

func countWords(n int, what string) string {
	switch n {
	case 0:
		return "zero " + what + "s"
	case 1:
		return "one " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

// verifyArgs checks counts and type constraints of operands or results.
func verifyArgs(op *Operation, specs []ArgSpec, types []Type, what, segAttr string) error {
	// Upstream stores segment sizes as a property that defaults to all
	// zeros: an attr-sized op without the attribute has 0 values.
	// The count traits (AtLeastNOperands, NResults...) come first upstream,
	// before the segment sizes are looked at.
	fixed, variable := 0, false
	for _, s := range specs {
		if s.Kind == Single {
			fixed++
		} else {
			variable = true
		}
	}
	if variable && len(types) < fixed {
		return op.EmitOpError("expected %d or more %ss, but found %d", fixed, what, len(types))
	}
	attrSized := (what == "operand" && op.HasTrait(AttrSizedOperandSegments)) || (what == "result" && op.HasTrait(AttrSizedResultSegments))
	if attrSized && op.Attr(segAttr) == nil && len(types) > 0 {
		return op.EmitOpError("%s count (%d) does not match with the total size (0) specified in attribute '%s'", what, len(types), segAttr)
	}
	sizes, ok := op.segmentSizes(specs, len(types), segAttr)
	if !ok {
		if a, has := op.Attr(segAttr).(*DenseArrayAttr); has {
			if len(a.Ints) != len(specs) {
				return op.EmitOpError("'%s' attribute for specifying %s segments must have %d elements, but got %d", segAttr, what, len(specs), len(a.Ints))
			}
			for _, v := range a.Ints {
				if v < 0 {
					return op.EmitOpError("'%s' attribute cannot have negative elements", segAttr)
				}
			}
			return op.EmitOpError("%s count (%d) does not match with the total size (%d) specified in attribute '%s'", what, len(types), sumInts(a.Ints), segAttr)
		}
		if variable {
			return op.EmitOpError("expected %d or more %ss, but found %d", fixed, what, len(types))
		}
		switch {
		case fixed == 0:
			return op.EmitOpError("requires zero %ss", what)
		case fixed == 1 && what == "operand":
			return op.EmitOpError("requires a single operand")
		case fixed == 1:
			return op.EmitOpError("requires one result")
		}
		return op.EmitOpError("expected %d %ss, but found %d", fixed, what, len(types))
	}
	idx := 0
	for i, s := range specs {
		if s.Kind == Optional && sizes[i] > 1 {
			return op.EmitOpError("%s group starting at #%d requires 0 or 1 element, but found %d", what, idx, sizes[i])
		}
		for j := 0; j < sizes[i]; j++ {
			t := types[idx]
			if s.Type.OK != nil && !s.Type.OK(t) {
				desc := s.Type.Desc
				if s.Kind == Variadic {
					desc = "variadic of " + desc
				}
				return op.EmitOpError("%s #%d must be %s, but got '%s'", what, idx, desc, t)
			}
			idx++
		}
	}
	return nil
}

func sumInts(v []int64) int64 {
	var s int64
	for _, x := range v {
		s += x
	}
	return s
}

// VerifySymbolTables checks that symbols are unique in every symbol table.
func VerifySymbolTables(top *Operation) error {
	var err error
	Walk(top, func(op *Operation) WalkResult {
		if !op.HasTrait(SymbolTable) {
			return Advance
		}
		seen := map[string]*Operation{}
		for _, r := range op.regions {
			for _, b := range r.blocks {
				for o := b.first; o != nil; o = o.next {
					name := o.SymbolName()
					if name == "" {
						continue
					}
					if prev, dup := seen[name]; dup {
						err = o.EmitError("redefinition of symbol named '%s'", name).
							AttachNote(prev.Loc, "see existing symbol definition here")
						return Interrupt
					}
					seen[name] = o
				}
			}
		}
		return Advance
	})
	return err
}

// VerifyModule runs Verify and the symbol-table checks.
func VerifyModule(top *Operation) error {
	if err := Verify(top); err != nil {
		return err
	}
	return VerifySymbolTables(top)
}

// Sprintf is fmt.Sprintf, re-exported for dialect verifiers' convenience.
var Sprintf = fmt.Sprintf
