package ir

import "fmt"

// LookupSymbol finds the op named name directly inside the symbol table op.
func LookupSymbol(table *Operation, name string) *Operation {
	for _, r := range table.regions {
		for _, b := range r.blocks {
			for o := b.first; o != nil; o = o.next {
				if o.SymbolName() == name {
					return o
				}
			}
		}
	}
	return nil
}

// NearestSymbolTable returns the closest ancestor (or op itself) with the
// SymbolTable trait.
func NearestSymbolTable(op *Operation) *Operation {
	for o := op; o != nil; o = o.ParentOp() {
		if o.HasTrait(SymbolTable) {
			return o
		}
	}
	return nil
}

// ResolveSymbolRef resolves @a or @a::@b starting from the symbol table
// nearest to from, walking outwards for the root name as upstream does.
func ResolveSymbolRef(from *Operation, ref *SymbolRefAttr) *Operation {
	for table := NearestSymbolTable(from); table != nil; table = NearestSymbolTable(table.ParentOp()) {
		op := LookupSymbol(table, ref.Root)
		if op == nil {
			if table.ParentOp() == nil {
				return nil
			}
			continue
		}
		for _, n := range ref.Nested {
			if op = LookupSymbol(op, n); op == nil {
				return nil
			}
		}
		return op
	}
	return nil
}

// SymbolUses returns every symbol reference attribute used by ops inside op.
func SymbolUses(op *Operation) map[*Operation][]*SymbolRefAttr {
	uses := map[*Operation][]*SymbolRefAttr{}
	Walk(op, func(o *Operation) WalkResult {
		for _, a := range o.AllAttrs() {
			collectSymbolRefs(a.Value, func(s *SymbolRefAttr) { uses[o] = append(uses[o], s) })
		}
		return Advance
	})
	return uses
}

func collectSymbolRefs(a Attribute, fn func(*SymbolRefAttr)) {
	switch a := a.(type) {
	case *SymbolRefAttr:
		fn(a)
	case *ArrayAttr:
		for _, e := range a.Elems {
			collectSymbolRefs(e, fn)
		}
	case *DictAttr:
		for _, e := range a.Entries {
			collectSymbolRefs(e.Value, fn)
		}
	}
}

// SymbolIndex indexes the symbols directly inside a symbol-table op, for
// code that looks up many names: LookupSymbol scans the table, which is
// quadratic over a module of thousands of kernels. The index sees ops
// added or renamed after it was built only through Insert; the first
// definition of a name wins, as with LookupSymbol.
type SymbolIndex struct {
	op   *Operation
	syms map[string]*Operation
}

// NewSymbolIndex indexes the symbols of op.
func NewSymbolIndex(op *Operation) *SymbolIndex {
	t := &SymbolIndex{op: op, syms: map[string]*Operation{}}
	for _, r := range op.regions {
		for _, b := range r.blocks {
			for o := b.first; o != nil; o = o.next {
				t.Insert(o)
			}
		}
	}
	return t
}

// Op returns the symbol-table op.
func (t *SymbolIndex) Op() *Operation { return t.op }

// Lookup returns the symbol named name, or nil.
func (t *SymbolIndex) Lookup(name string) *Operation { return t.syms[name] }

// Insert records sym under its current name unless the name is taken.
func (t *SymbolIndex) Insert(sym *Operation) {
	if n := sym.SymbolName(); n != "" {
		if _, dup := t.syms[n]; !dup {
			t.syms[n] = sym
		}
	}
}

// Unique returns name if it is free, else name_<k> for the smallest free k.
func (t *SymbolIndex) Unique(name string) string {
	if t.Lookup(name) == nil {
		return name
	}
	for k := 1; ; k++ {
		if n := fmt.Sprintf("%s_%d", name, k); t.Lookup(n) == nil {
			return n
		}
	}
}
