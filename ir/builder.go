package ir

// Builder creates operations at an insertion point.
type Builder struct {
	block  *Block
	before *Operation // nil: at the end of block
	// Loc is the location given to created ops.
	Loc Location
}

// NewBuilder returns a builder with no insertion point.
func NewBuilder(loc Location) *Builder { return &Builder{Loc: loc} }

// SetInsertionPointToEnd inserts at the end of b.
func (bl *Builder) SetInsertionPointToEnd(b *Block) { bl.block, bl.before = b, nil }

// SetInsertionPointToStart inserts at the start of b.
func (bl *Builder) SetInsertionPointToStart(b *Block) { bl.block, bl.before = b, b.first }

// SetInsertionPoint inserts before op.
func (bl *Builder) SetInsertionPoint(op *Operation) { bl.block, bl.before = op.block, op }

// SetInsertionPointAfter inserts after op.
func (bl *Builder) SetInsertionPointAfter(op *Operation) { bl.block, bl.before = op.block, op.next }

// InsertionBlock returns the current block, or nil.
func (bl *Builder) InsertionBlock() *Block { return bl.block }

// Insert places a detached op at the insertion point and returns it.
func (bl *Builder) Insert(op *Operation) *Operation {
	if bl.block != nil {
		bl.block.insertBefore(op, bl.before)
	}
	return op
}

// Create builds an op from st (using the builder's location when st has
// none) and inserts it.
func (bl *Builder) Create(st *OperationState) *Operation {
	if st.Loc == nil {
		st.Loc = bl.Loc
	}
	if def := LookupOp(st.Name); def != nil {
		applyDefaults(def, st)
	}
	return bl.Insert(NewOperation(st))
}

// CreateOp is shorthand for Create with operands, result types and attributes.
func (bl *Builder) CreateOp(name string, operands []Value, results []Type, attrs ...NamedAttr) *Operation {
	return bl.Create(&OperationState{Name: name, Operands: operands, ResultTypes: results, Attrs: attrs})
}

// IRMapping maps values and blocks of an original IR to their clones.
type IRMapping struct {
	values map[Value]Value
	blocks map[*Block]*Block
}

// NewIRMapping returns an empty mapping.
func NewIRMapping() *IRMapping {
	return &IRMapping{values: map[Value]Value{}, blocks: map[*Block]*Block{}}
}

// Map records that from maps to to.
func (m *IRMapping) Map(from, to Value) { m.values[from] = to }

// MapBlock records a block mapping.
func (m *IRMapping) MapBlock(from, to *Block) { m.blocks[from] = to }

// Lookup returns the mapping of v, or v itself.
func (m *IRMapping) Lookup(v Value) Value {
	if x, ok := m.values[v]; ok {
		return x
	}
	return v
}

// LookupBlock returns the mapping of b, or b itself.
func (m *IRMapping) LookupBlock(b *Block) *Block {
	if x, ok := m.blocks[b]; ok {
		return x
	}
	return b
}

// Clone deep-copies op (with its regions), remapping operands through m
// and recording the new results and nested values in m.
func (op *Operation) Clone(m *IRMapping) *Operation {
	if m == nil {
		m = NewIRMapping()
	}
	st := &OperationState{Name: op.Name(), Loc: op.Loc, ResultTypes: op.ResultTypes()}
	for i := range op.operands {
		st.Operands = append(st.Operands, m.Lookup(op.operands[i].value))
	}
	st.Props = append(st.Props, op.props...)
	st.Attrs = append(st.Attrs, op.attrs...)
	for _, s := range op.successors {
		st.Successors = append(st.Successors, m.LookupBlock(s))
	}
	c := NewOperation(st)
	for i := range op.results {
		m.Map(&op.results[i], &c.results[i])
	}
	for _, r := range op.regions {
		nr := &Region{}
		c.AddRegion(nr)
		r.CloneInto(nr, m)
	}
	return c
}

// CloneInto appends clones of r's blocks to dst.
func (r *Region) CloneInto(dst *Region, m *IRMapping) {
	// Create all blocks first so successors can be remapped.
	var newBlocks []*Block
	for _, b := range r.blocks {
		nb := &Block{}
		for _, a := range b.args {
			m.Map(a, nb.AddArgument(a.typ, a.loc))
		}
		m.MapBlock(b, nb)
		dst.AddBlock(nb)
		newBlocks = append(newBlocks, nb)
	}
	for i, b := range r.blocks {
		for o := b.first; o != nil; o = o.next {
			newBlocks[i].Append(o.Clone(m))
		}
	}
	// Successors referring to blocks cloned after their users.
	for _, nb := range newBlocks {
		for o := nb.first; o != nil; o = o.next {
			for i, s := range o.successors {
				o.successors[i] = m.LookupBlock(s)
			}
		}
	}
}
