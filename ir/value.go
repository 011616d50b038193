package ir

// Value is an SSA value: an operation result or a block argument.
type Value interface {
	Type() Type
	SetType(Type)
	// DefiningOp returns the operation that defines the value, or nil for a
	// block argument.
	DefiningOp() *Operation
	// ParentBlock returns the block the value is defined in.
	ParentBlock() *Block
	// Loc returns the location of the definition.
	Loc() Location
	impl() *valueImpl
}

// valueImpl holds the type and the head of the use list.
type valueImpl struct {
	typ      Type
	firstUse *OpOperand
}

func (v *valueImpl) Type() Type       { return v.typ }
func (v *valueImpl) SetType(t Type)   { v.typ = t }
func (v *valueImpl) impl() *valueImpl { return v }

// OpResult is a result of an operation.
type OpResult struct {
	valueImpl
	owner *Operation
	index int
}

func (r *OpResult) DefiningOp() *Operation { return r.owner }
func (r *OpResult) Owner() *Operation      { return r.owner }
func (r *OpResult) Index() int             { return r.index }
func (r *OpResult) ParentBlock() *Block    { return r.owner.block }
func (r *OpResult) Loc() Location          { return r.owner.Loc }

// BlockArgument is an argument of a block.
type BlockArgument struct {
	valueImpl
	owner *Block
	index int
	loc   Location
}

func (a *BlockArgument) DefiningOp() *Operation { return nil }
func (a *BlockArgument) Owner() *Block          { return a.owner }
func (a *BlockArgument) Index() int             { return a.index }
func (a *BlockArgument) ParentBlock() *Block    { return a.owner }
func (a *BlockArgument) Loc() Location          { return a.loc }
func (a *BlockArgument) SetLoc(l Location)      { a.loc = l }

// OpOperand is one use of a value by an operation. Operands of a value are
// linked into the value's use list.
type OpOperand struct {
	value      Value
	owner      *Operation
	index      int
	prev, next *OpOperand
}

// Get returns the used value.
func (o *OpOperand) Get() Value { return o.value }

// Owner returns the operation that uses the value.
func (o *OpOperand) Owner() *Operation { return o.owner }

// Index returns the operand number within its owner.
func (o *OpOperand) Index() int { return o.index }

// Set changes the used value, updating both use lists.
func (o *OpOperand) Set(v Value) {
	o.unlink()
	o.value = v
	o.link()
}

func (o *OpOperand) link() {
	if o.value == nil {
		return
	}
	vi := o.value.impl()
	o.prev = nil
	o.next = vi.firstUse
	if vi.firstUse != nil {
		vi.firstUse.prev = o
	}
	vi.firstUse = o
}

func (o *OpOperand) unlink() {
	if o.value == nil {
		return
	}
	vi := o.value.impl()
	if o.prev != nil {
		o.prev.next = o.next
	} else {
		vi.firstUse = o.next
	}
	if o.next != nil {
		o.next.prev = o.prev
	}
	o.prev, o.next = nil, nil
}

// Uses returns the uses of v (a snapshot, safe to modify while iterating).
func Uses(v Value) []*OpOperand {
	var us []*OpOperand
	for u := v.impl().firstUse; u != nil; u = u.next {
		us = append(us, u)
	}
	return us
}

// HasUses reports whether v is used.
func HasUses(v Value) bool { return v.impl().firstUse != nil }

// HasOneUse reports whether v has exactly one use.
func HasOneUse(v Value) bool {
	u := v.impl().firstUse
	return u != nil && u.next == nil
}

// Users returns the operations using v, once per use.
func Users(v Value) []*Operation {
	var ops []*Operation
	for u := v.impl().firstUse; u != nil; u = u.next {
		ops = append(ops, u.owner)
	}
	return ops
}

// ReplaceAllUsesWith makes every use of from use to instead.
func ReplaceAllUsesWith(from, to Value) {
	if from == to {
		return
	}
	for u := from.impl().firstUse; u != nil; {
		next := u.next
		u.Set(to)
		u = next
	}
}

// ReplaceUsesIf replaces the uses of from for which keep returns true.
func ReplaceUsesIf(from, to Value, pred func(*OpOperand) bool) {
	for _, u := range Uses(from) {
		if pred(u) {
			u.Set(to)
		}
	}
}
