package ir

// Operand and result groups: an op definition declares named operands and
// results, some optional or variadic; these helpers map the names to the
// flat operand and result lists, using operandSegmentSizes /
// resultSegmentSizes when the op has several variable-length groups.

// OperandGroup returns the operands of the named operand group.
func (op *Operation) OperandGroup(name string) []Value {
	lo, hi, ok := op.groupRange(op.def.Operands, len(op.operands), "operandSegmentSizes", name)
	if !ok {
		return nil
	}
	vs := make([]Value, 0, hi-lo)
	for i := lo; i < hi; i++ {
		vs = append(vs, op.operands[i].value)
	}
	return vs
}

// OperandNamed returns the single operand of a group, or nil if it is empty.
func (op *Operation) OperandNamed(name string) Value {
	if i, ok := op.def.fixedOperands[name]; ok && i < len(op.operands) {
		return op.operands[i].value
	}
	vs := op.OperandGroup(name)
	if len(vs) == 0 {
		return nil
	}
	return vs[0]
}

// OperandGroupRange returns the [lo, hi) operand indices of a group.
func (op *Operation) OperandGroupRange(name string) (int, int, bool) {
	return op.groupRange(op.def.Operands, len(op.operands), "operandSegmentSizes", name)
}

// ResultGroup returns the results of the named result group.
func (op *Operation) ResultGroup(name string) []Value {
	lo, hi, ok := op.groupRange(op.def.Results, len(op.results), "resultSegmentSizes", name)
	if !ok {
		return nil
	}
	vs := make([]Value, 0, hi-lo)
	for i := lo; i < hi; i++ {
		vs = append(vs, &op.results[i])
	}
	return vs
}

// ResultNamed returns the single result of a group, or nil if it is empty.
func (op *Operation) ResultNamed(name string) Value {
	if i, ok := op.def.fixedResults[name]; ok && i < len(op.results) {
		return &op.results[i]
	}
	vs := op.ResultGroup(name)
	if len(vs) == 0 {
		return nil
	}
	return vs[0]
}

// RegionNamed returns the region the definition declares under name, or
// nil if the op has no such region.
func (op *Operation) RegionNamed(name string) *Region {
	for i, r := range op.def.Regions {
		if r.Name == name && i < len(op.regions) {
			return op.regions[i]
		}
	}
	return nil
}

// groupRange computes where the named group lies in a flat list of n values.
func (op *Operation) groupRange(specs []ArgSpec, n int, segAttr, name string) (int, int, bool) {
	sizes, ok := op.segmentSizes(specs, n, segAttr)
	if !ok {
		return 0, 0, false
	}
	lo := 0
	for i, s := range specs {
		if s.Name == name {
			return lo, lo + sizes[i], true
		}
		lo += sizes[i]
	}
	return 0, 0, false
}

// segmentSizes returns the length of each group. With a segment-size
// attribute it is read directly; otherwise at most one group is variable and
// takes what the fixed groups leave.
func (op *Operation) segmentSizes(specs []ArgSpec, n int, segAttr string) ([]int, bool) {
	sizes := make([]int, len(specs))
	if a, ok := op.Attr(segAttr).(*DenseArrayAttr); ok {
		if len(a.Ints) != len(specs) {
			return nil, false
		}
		total := 0
		for i, v := range a.Ints {
			if v < 0 || v > int64(n) {
				return nil, false // no sum of such sizes is n (nor may overflow to it)
			}
			sizes[i] = int(v)
			total += int(v)
		}
		return sizes, total == n
	}
	if segAttr == "resultSegmentSizes" && op.def.Traits&SameVariadicResultSize != 0 {
		return sameVariadicSegments(specs, n)
	}
	variable := -1
	fixed := 0
	for i, s := range specs {
		if s.Kind == Single {
			sizes[i] = 1
			fixed++
		} else {
			if variable >= 0 {
				// Several variable groups without a segment attribute:
				// optional groups before the variadic one are filled first.
				return greedySegments(specs, n)
			}
			variable = i
		}
	}
	if variable < 0 {
		return sizes, fixed == n
	}
	rest := n - fixed
	if rest < 0 {
		return nil, false
	}
	// An optional group with several values is reported by the verifier
	// ("group starting at #N requires 0 or 1 element").
	sizes[variable] = rest
	return sizes, true
}

func greedySegments(specs []ArgSpec, n int) ([]int, bool) {
	sizes := make([]int, len(specs))
	fixed := 0
	for _, s := range specs {
		if s.Kind == Single {
			fixed++
		}
	}
	extra := n - fixed
	if extra < 0 {
		return nil, false
	}
	for i, s := range specs {
		switch s.Kind {
		case Single:
			sizes[i] = 1
		case Optional:
			if extra > 0 {
				sizes[i] = 1
				extra--
			}
		case Variadic:
			sizes[i] = extra
			extra = 0
		}
	}
	return sizes, extra == 0
}

// sameVariadicSegments gives every variadic group an equal share of what
// the single groups leave.
func sameVariadicSegments(specs []ArgSpec, n int) ([]int, bool) {
	sizes := make([]int, len(specs))
	fixed, variadic := 0, 0
	for i, s := range specs {
		if s.Kind == Single {
			sizes[i] = 1
			fixed++
		} else {
			variadic++
		}
	}
	rest := n - fixed
	if rest < 0 || variadic == 0 && rest != 0 || variadic > 0 && rest%variadic != 0 {
		return nil, false
	}
	for i, s := range specs {
		if s.Kind != Single {
			sizes[i] = rest / variadic
		}
	}
	return sizes, true
}
