package ir

// WalkResult steers a walk.
type WalkResult uint8

const (
	// Advance continues the walk.
	Advance WalkResult = iota
	// Skip does not visit the regions of the current op (pre-order only).
	Skip
	// Interrupt stops the walk.
	Interrupt
)

// Walk visits op and all nested ops in pre-order. It returns Interrupt if
// the callback interrupted the walk.
func Walk(op *Operation, fn func(*Operation) WalkResult) WalkResult {
	switch fn(op) {
	case Interrupt:
		return Interrupt
	case Skip:
		return Advance
	}
	for _, r := range op.regions {
		for _, b := range r.blocks {
			for o := b.first; o != nil; {
				next := o.next // fn may erase o
				if Walk(o, fn) == Interrupt {
					return Interrupt
				}
				o = next
			}
		}
	}
	return Advance
}

// WalkPost visits nested ops before their parents (post-order), so the
// callback may erase the op it is given.
func WalkPost(op *Operation, fn func(*Operation)) {
	for _, r := range op.regions {
		for _, b := range r.blocks {
			for o := b.first; o != nil; {
				next := o.next
				WalkPost(o, fn)
				o = next
			}
		}
	}
	fn(op)
}

// Nested returns the ops nested in op (not op itself) with the given name,
// in pre-order.
func Nested(op *Operation, name string) []*Operation {
	var ops []*Operation
	Walk(op, func(o *Operation) WalkResult {
		if o != op && o.Name() == name {
			ops = append(ops, o)
		}
		return Advance
	})
	return ops
}
