package ir

import (
	"sort"
	"strings"
)

// Operation is the unit of the IR: a named op with operands, results,
// attributes, regions and successors, placed in a block.
type Operation struct {
	def        *OpDef
	operands   []OpOperand
	results    []OpResult
	props      []NamedAttr // inherent attributes (MLIR "properties"), sorted by name
	attrs      []NamedAttr // discardable attributes, sorted by name
	regions    []*Region
	successors []*Block
	// Loc is the source location; passes keep it on the ops they create.
	Loc Location

	block      *Block
	prev, next *Operation
	// order is the op's position in its block, numbered by the verifier's
	// dominance check for the blocks it looks at (a map from op to
	// position was most of the verifier's time on a block of 1M ops); it
	// is meaningful only during one verification.
	order int
}

// OperationState collects what is needed to create an operation.
type OperationState struct {
	Name        string
	Loc         Location
	Operands    []Value
	ResultTypes []Type
	// Attrs holds all attributes; NewOperation sorts them into inherent
	// (declared by the op definition) and discardable ones.
	Attrs      []NamedAttr
	Regions    []*Region
	Successors []*Block
	// Props forces attributes into the inherent set even when the op is not
	// registered (generic `<{...}>` syntax).
	Props []NamedAttr
}

// AddAttr appends an attribute.
func (st *OperationState) AddAttr(name string, v Attribute) {
	st.Attrs = append(st.Attrs, NamedAttr{name, v})
}

// Attr returns the value of a collected attribute, or nil.
func (st *OperationState) Attr(name string) Attribute {
	for _, a := range st.Props {
		if a.Name == name {
			return a.Value
		}
	}
	for _, a := range st.Attrs {
		if a.Name == name {
			return a.Value
		}
	}
	return nil
}

// AddRegion appends a new empty region and returns it.
func (st *OperationState) AddRegion() *Region {
	r := &Region{}
	st.Regions = append(st.Regions, r)
	return r
}

// NewOperation creates a detached operation from st.
func NewOperation(st *OperationState) *Operation {
	def := LookupOp(st.Name)
	if def == nil {
		def = unregisteredDef(st.Name)
	}
	loc := st.Loc
	if loc == nil {
		loc = UnknownLoc{}
	}
	op := &Operation{def: def, Loc: loc}
	op.operands = make([]OpOperand, len(st.Operands))
	for i, v := range st.Operands {
		o := &op.operands[i]
		o.owner, o.index, o.value = op, i, v
		o.link()
	}
	op.results = make([]OpResult, len(st.ResultTypes))
	for i, t := range st.ResultTypes {
		op.results[i] = OpResult{valueImpl: valueImpl{typ: t}, owner: op, index: i}
	}
	for _, a := range st.Props {
		op.props = setNamed(op.props, a.Name, a.Value)
	}
	for _, a := range st.Attrs {
		op.SetAttr(a.Name, a.Value)
	}
	for _, r := range st.Regions {
		op.AddRegion(r)
	}
	op.successors = append(op.successors, st.Successors...)
	return op
}

// Def returns the op definition (a placeholder for unregistered ops).
func (op *Operation) Def() *OpDef { return op.def }

// Name returns the full op name, e.g. "arith.addi".
func (op *Operation) Name() string { return op.def.Name }

// Dialect returns the dialect prefix of the op name.
func (op *Operation) Dialect() string { return op.def.Dialect() }

// IsRegistered reports whether the op has a registered definition.
func (op *Operation) IsRegistered() bool { return !op.def.unregistered }

// HasTrait reports whether the op definition has trait t.
func (op *Operation) HasTrait(t Trait) bool { return op.def.Traits&t != 0 }

// Block returns the containing block, or nil.
func (op *Operation) Block() *Block { return op.block }

// ParentRegion returns the containing region, or nil.
func (op *Operation) ParentRegion() *Region {
	if op.block == nil {
		return nil
	}
	return op.block.parent
}

// ParentOp returns the operation whose region contains op, or nil.
func (op *Operation) ParentOp() *Operation {
	if r := op.ParentRegion(); r != nil {
		return r.parent
	}
	return nil
}

// ParentOfName returns the closest ancestor with the given name, or nil.
func (op *Operation) ParentOfName(name string) *Operation {
	for p := op.ParentOp(); p != nil; p = p.ParentOp() {
		if p.Name() == name {
			return p
		}
	}
	return nil
}

// IsAncestorOf reports whether op contains other (or is other).
func (op *Operation) IsAncestorOf(other *Operation) bool {
	for o := other; o != nil; o = o.ParentOp() {
		if o == op {
			return true
		}
	}
	return false
}

// Next returns the next operation in the block, or nil.
func (op *Operation) Next() *Operation { return op.next }

// Prev returns the previous operation in the block, or nil.
func (op *Operation) Prev() *Operation { return op.prev }

// NumOperands returns the operand count.
func (op *Operation) NumOperands() int { return len(op.operands) }

// Operand returns operand i.
func (op *Operation) Operand(i int) Value { return op.operands[i].value }

// OpOperand returns the use object of operand i.
func (op *Operation) OpOperand(i int) *OpOperand { return &op.operands[i] }

// Operands returns the operand values.
func (op *Operation) Operands() []Value {
	vs := make([]Value, len(op.operands))
	for i := range op.operands {
		vs[i] = op.operands[i].value
	}
	return vs
}

// OperandTypes returns the types of the operands.
func (op *Operation) OperandTypes() []Type {
	ts := make([]Type, len(op.operands))
	for i := range op.operands {
		ts[i] = op.operands[i].value.Type()
	}
	return ts
}

// SetOperand replaces operand i.
func (op *Operation) SetOperand(i int, v Value) { op.operands[i].Set(v) }

// SetOperands replaces all operands.
func (op *Operation) SetOperands(vs []Value) {
	for i := range op.operands {
		op.operands[i].unlink()
	}
	op.operands = make([]OpOperand, len(vs))
	for i, v := range vs {
		o := &op.operands[i]
		o.owner, o.index, o.value = op, i, v
		o.link()
	}
}

// NumResults returns the result count.
func (op *Operation) NumResults() int { return len(op.results) }

// Result returns result i.
func (op *Operation) Result(i int) *OpResult { return &op.results[i] }

// Results returns the results as values.
func (op *Operation) Results() []Value {
	vs := make([]Value, len(op.results))
	for i := range op.results {
		vs[i] = &op.results[i]
	}
	return vs
}

// ResultTypes returns the result types.
func (op *Operation) ResultTypes() []Type {
	ts := make([]Type, len(op.results))
	for i := range op.results {
		ts[i] = op.results[i].typ
	}
	return ts
}

// Regions returns the regions.
func (op *Operation) Regions() []*Region { return op.regions }

// NumRegions returns the region count.
func (op *Operation) NumRegions() int { return len(op.regions) }

// Region returns region i.
func (op *Operation) Region(i int) *Region { return op.regions[i] }

// AddRegion attaches r (which must be detached) as the last region.
func (op *Operation) AddRegion(r *Region) {
	r.parent = op
	op.regions = append(op.regions, r)
}

// Successors returns the successor blocks.
func (op *Operation) Successors() []*Block { return op.successors }

// SetSuccessor replaces successor i.
func (op *Operation) SetSuccessor(i int, b *Block) { op.successors[i] = b }

// Attr returns the attribute called name (inherent first), or nil.
func (op *Operation) Attr(name string) Attribute {
	if a := getNamed(op.props, name); a != nil {
		return a
	}
	return getNamed(op.attrs, name)
}

// HasAttr reports whether the attribute is present.
func (op *Operation) HasAttr(name string) bool { return op.Attr(name) != nil }

// SetAttr sets an attribute, as inherent when the op declares it (or already
// holds it as a property) and as discardable otherwise. A nil value removes it.
func (op *Operation) SetAttr(name string, v Attribute) {
	if op.def.IsInherentAttr(name) || getNamed(op.props, name) != nil {
		op.props = setNamed(op.props, name, v)
		return
	}
	op.attrs = setNamed(op.attrs, name, v)
}

// RemoveAttr removes an attribute.
func (op *Operation) RemoveAttr(name string) {
	op.props = setNamed(op.props, name, nil)
	op.attrs = setNamed(op.attrs, name, nil)
}

// Props returns the inherent attributes (sorted by name).
func (op *Operation) Props() []NamedAttr { return op.props }

// DiscardableAttrs returns the discardable attributes (sorted by name).
func (op *Operation) DiscardableAttrs() []NamedAttr { return op.attrs }

// AllAttrs returns inherent and discardable attributes, merged and sorted.
func (op *Operation) AllAttrs() []NamedAttr {
	all := append(append([]NamedAttr(nil), op.props...), op.attrs...)
	sort.SliceStable(all, func(i, j int) bool { return all[i].Name < all[j].Name })
	return all
}

func getNamed(list []NamedAttr, name string) Attribute {
	for i := range list {
		if list[i].Name == name {
			return list[i].Value
		}
	}
	return nil
}

// setNamed sets or removes (v == nil) an entry, keeping list sorted.
func setNamed(list []NamedAttr, name string, v Attribute) []NamedAttr {
	i := sort.Search(len(list), func(i int) bool { return list[i].Name >= name })
	if i < len(list) && list[i].Name == name {
		if v == nil {
			return append(list[:i], list[i+1:]...)
		}
		list[i].Value = v
		return list
	}
	if v == nil {
		return list
	}
	list = append(list, NamedAttr{})
	copy(list[i+1:], list[i:])
	list[i] = NamedAttr{name, v}
	return list
}

// IntAttrOf returns the integer value of attribute name, or def if absent.
func (op *Operation) IntAttrOf(name string, def int64) int64 {
	if v, ok := AttrInt(op.Attr(name)); ok {
		return v
	}
	return def
}

// StrAttrOf returns the string value of attribute name, or "".
func (op *Operation) StrAttrOf(name string) string {
	if s, ok := op.Attr(name).(*StringAttr); ok {
		return s.Value
	}
	return ""
}

// SymbolName returns the sym_name attribute, or "".
func (op *Operation) SymbolName() string { return op.StrAttrOf("sym_name") }

// Remove unlinks op from its block without destroying it.
func (op *Operation) Remove() {
	if op.block == nil {
		return
	}
	b := op.block
	if op.prev != nil {
		op.prev.next = op.next
	} else {
		b.first = op.next
	}
	if op.next != nil {
		op.next.prev = op.prev
	} else {
		b.last = op.prev
	}
	op.block, op.prev, op.next = nil, nil, nil
}

// Erase removes op from its block and drops all uses it makes, including
// those of nested ops. The results must no longer be used.
func (op *Operation) Erase() {
	op.Remove()
	op.DropAllReferences()
}

// DropAllReferences unlinks every operand of op and of the ops nested in it.
func (op *Operation) DropAllReferences() {
	for i := range op.operands {
		op.operands[i].unlink()
		op.operands[i].value = nil
	}
	for _, r := range op.regions {
		for _, b := range r.blocks {
			for o := b.first; o != nil; o = o.next {
				o.DropAllReferences()
			}
		}
	}
}

// MoveBefore moves op (attached or not) right before other.
func (op *Operation) MoveBefore(other *Operation) {
	op.Remove()
	other.block.insertBefore(op, other)
}

// MoveAfter moves op right after other.
func (op *Operation) MoveAfter(other *Operation) {
	op.Remove()
	other.block.insertBefore(op, other.next)
}

// IsBeforeInBlock reports whether op comes before other in their block
// (false when they are in different blocks, or the same op).
func (op *Operation) IsBeforeInBlock(other *Operation) bool {
	if op.block == nil || op.block != other.block {
		return false
	}
	for o := op.next; o != nil; o = o.next {
		if o == other {
			return true
		}
	}
	return false
}

// ReplaceAllUsesWith replaces each result of op with the matching value.
func (op *Operation) ReplaceAllUsesWith(vals []Value) {
	for i := range op.results {
		ReplaceAllUsesWith(&op.results[i], vals[i])
	}
}

// IsUsed reports whether any result has a use.
func (op *Operation) IsUsed() bool {
	for i := range op.results {
		if op.results[i].firstUse != nil {
			return true
		}
	}
	return false
}

// Block is a list of operations with arguments, inside a region.
type Block struct {
	args        []*BlockArgument
	first, last *Operation
	parent      *Region
}

// NewBlock returns a detached block with arguments of the given types.
func NewBlock(types []Type, locs []Location) *Block {
	b := &Block{}
	for i, t := range types {
		var l Location = UnknownLoc{}
		if i < len(locs) && locs[i] != nil {
			l = locs[i]
		}
		b.AddArgument(t, l)
	}
	return b
}

// AddArgument appends an argument.
func (b *Block) AddArgument(t Type, loc Location) *BlockArgument {
	if loc == nil {
		loc = UnknownLoc{}
	}
	a := &BlockArgument{valueImpl: valueImpl{typ: t}, owner: b, index: len(b.args), loc: loc}
	b.args = append(b.args, a)
	return a
}

// EraseArgument removes argument i, which must be unused.
func (b *Block) EraseArgument(i int) {
	b.args = append(b.args[:i], b.args[i+1:]...)
	for j := i; j < len(b.args); j++ {
		b.args[j].index = j
	}
}

// Args returns the block arguments.
func (b *Block) Args() []*BlockArgument { return b.args }

// Arg returns argument i.
func (b *Block) Arg(i int) *BlockArgument { return b.args[i] }

// NumArgs returns the argument count.
func (b *Block) NumArgs() int { return len(b.args) }

// ArgValues returns the arguments as values.
func (b *Block) ArgValues() []Value {
	vs := make([]Value, len(b.args))
	for i, a := range b.args {
		vs[i] = a
	}
	return vs
}

// ArgTypes returns the argument types.
func (b *Block) ArgTypes() []Type {
	ts := make([]Type, len(b.args))
	for i, a := range b.args {
		ts[i] = a.typ
	}
	return ts
}

// Parent returns the containing region.
func (b *Block) Parent() *Region { return b.parent }

// ParentOp returns the operation owning the containing region.
func (b *Block) ParentOp() *Operation {
	if b.parent == nil {
		return nil
	}
	return b.parent.parent
}

// First returns the first operation, or nil.
func (b *Block) First() *Operation { return b.first }

// Last returns the last operation, or nil.
func (b *Block) Last() *Operation { return b.last }

// Empty reports whether the block has no operations.
func (b *Block) Empty() bool { return b.first == nil }

// Ops returns the operations (a snapshot, safe to modify while iterating).
func (b *Block) Ops() []*Operation {
	var ops []*Operation
	for o := b.first; o != nil; o = o.next {
		ops = append(ops, o)
	}
	return ops
}

// Terminator returns the last op if it is a terminator, or nil.
func (b *Block) Terminator() *Operation {
	if b.last != nil && b.last.HasTrait(Terminator) {
		return b.last
	}
	return nil
}

// Append adds op at the end of the block.
func (b *Block) Append(op *Operation) { b.insertBefore(op, nil) }

// InsertBefore inserts op before before (nil means at the end).
func (b *Block) InsertBefore(op, before *Operation) { b.insertBefore(op, before) }

func (b *Block) insertBefore(op, before *Operation) {
	prev := b.last
	if before != nil {
		prev = before.prev
	}
	op.block, op.prev, op.next = b, prev, before
	if prev != nil {
		prev.next = op
	} else {
		b.first = op
	}
	if before != nil {
		before.prev = op
	} else {
		b.last = op
	}
}

// IsEntry reports whether b is the first block of its region.
func (b *Block) IsEntry() bool {
	return b.parent != nil && len(b.parent.blocks) > 0 && b.parent.blocks[0] == b
}

// Successors returns the successors of the block's terminator.
func (b *Block) Successors() []*Block {
	if b.last == nil {
		return nil
	}
	return b.last.successors
}

// Region is a list of blocks owned by an operation.
type Region struct {
	blocks []*Block
	parent *Operation
}

// NewRegion returns a detached empty region.
func NewRegion() *Region { return &Region{} }

// Blocks returns the blocks.
func (r *Region) Blocks() []*Block { return r.blocks }

// Empty reports whether the region has no blocks.
func (r *Region) Empty() bool { return len(r.blocks) == 0 }

// Entry returns the first block, or nil.
func (r *Region) Entry() *Block {
	if len(r.blocks) == 0 {
		return nil
	}
	return r.blocks[0]
}

// ParentOp returns the owning operation.
func (r *Region) ParentOp() *Operation { return r.parent }

// AddBlock appends b and returns it.
func (r *Region) AddBlock(b *Block) *Block {
	b.parent = r
	r.blocks = append(r.blocks, b)
	return b
}

// EnsureTerminator gives r a block if it has none and ends each block
// that lacks a terminator with an op named name, as custom parsers of ops
// with an implicit terminator do.
func (r *Region) EnsureTerminator(name string, loc Location) {
	if r.Empty() {
		r.AddBlock(NewBlock(nil, nil))
	}
	for _, b := range r.blocks {
		if last := b.Last(); last != nil && last.HasTrait(Terminator) {
			continue
		}
		b.Append(NewOperation(&OperationState{Name: name, Loc: loc}))
	}
}

// InsertBlock inserts b at position i.
func (r *Region) InsertBlock(i int, b *Block) {
	b.parent = r
	r.blocks = append(r.blocks, nil)
	copy(r.blocks[i+1:], r.blocks[i:])
	r.blocks[i] = b
}

// RemoveBlock detaches b from r.
func (r *Region) RemoveBlock(b *Block) {
	for i, x := range r.blocks {
		if x == b {
			r.blocks = append(r.blocks[:i], r.blocks[i+1:]...)
			b.parent = nil
			return
		}
	}
}

// TakeBody moves all blocks of other into r (which must be empty).
func (r *Region) TakeBody(other *Region) {
	for _, b := range other.blocks {
		b.parent = r
	}
	r.blocks = append(r.blocks, other.blocks...)
	other.blocks = nil
}

// IsAncestorOf reports whether r contains the op (at any depth).
func (r *Region) IsAncestorOf(op *Operation) bool {
	for o := op; o != nil; o = o.ParentOp() {
		if o.ParentRegion() == r {
			return true
		}
	}
	return false
}

// splitName returns the dialect and the op mnemonic of a full op name.
func splitName(name string) (dialect, rest string) {
	if i := strings.IndexByte(name, '.'); i >= 0 {
		return name[:i], name[i+1:]
	}
	return "", name
}

// As returns op as the view type V (a generated accessor type such as
// nvgpu.TmaAsyncLoadOp: a struct holding the op) if op is named name.
func As[V ~struct{ Op *Operation }](op *Operation, name string) (V, bool) {
	if op == nil || op.Name() != name {
		return V{}, false
	}
	return V{Op: op}, true
}
