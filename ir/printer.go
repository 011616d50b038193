package ir

import (
	"sort"
	"strconv"
	"strings"
)

// PrintOptions control printing.
type PrintOptions struct {
	// Generic prints every op in the generic form (and numbers values
	// module-wide, as upstream does).
	Generic bool
	// DebugInfo prints locations as trailing loc(...).
	DebugInfo bool
}

// Printer prints IR in MLIR syntax. Custom op printers (OpDef.Print) and
// format directives use its exported methods.
type Printer struct {
	sb       strings.Builder
	opts     PrintOptions
	indent   int
	names    *nameState
	dialects []string
	locs     *locAliasState // location aliases (debug info of a top-level op)
}

// Print returns the textual form of op (normally a module) followed by a
// newline.
func Print(op *Operation, opts PrintOptions) string {
	p := &Printer{opts: opts, dialects: []string{"builtin"}}
	p.sb.Grow(estimateSize(op))
	p.names = computeNames(op, opts.Generic)
	if opts.DebugInfo && op.block == nil {
		p.locs = computeLocAliases(op)
		p.sb.WriteString(p.locs.definitions(false))
	}
	p.printOp(op)
	p.sb.WriteByte('\n')
	if p.locs != nil {
		p.sb.WriteString(p.locs.definitions(true))
	}
	if op.block == nil && strings.Contains(p.sb.String(), "affine_") {
		return withAffineAliases(p.sb.String())
	}
	return p.sb.String()
}

// estimateSize guesses the printed size of op (about 64 bytes an op), so
// the output buffer is allocated once.
func estimateSize(op *Operation) int {
	n := 0
	Walk(op, func(*Operation) WalkResult { n++; return Advance })
	return 64 * n
}

// withAffineAliases replaces the affine maps and sets of printed IR with
// #map, #map1, ... and #set, #set1, ... aliases (numbered in order of first
// appearance) defined at the top, as upstream prints them.
func withAffineAliases(out string) string {
	// An attribute of an unregistered dialect named "map" or "set" would
	// read back as the alias: keep affine maps inline then.
	if strings.Contains(out, "#map") || strings.Contains(out, "#set") {
		return out
	}
	type alias struct{ name, text string }
	var defs []alias
	names := map[string]string{}
	counts := map[string]int{}
	var sb strings.Builder
	inStr := false
	for i := 0; i < len(out); i++ {
		c := out[i]
		if inStr {
			sb.WriteByte(c)
			if c == '\\' && i+1 < len(out) {
				i++
				sb.WriteByte(out[i])
			} else if c == '"' {
				inStr = false
			}
			continue
		}
		if c == '"' {
			inStr = true
			sb.WriteByte(c)
			continue
		}
		kind := ""
		if strings.HasPrefix(out[i:], "affine_map<") {
			kind = "map"
		} else if strings.HasPrefix(out[i:], "affine_set<") {
			kind = "set"
		}
		if kind == "" || (i > 0 && (isIDStart(out[i-1]) || isDigit(out[i-1]) || out[i-1] == '.' || out[i-1] == '!' || out[i-1] == '#')) {
			sb.WriteByte(c)
			continue
		}
		end, depth := -1, 0
		for j := i + len("affine_map"); j < len(out) && end < 0; j++ {
			switch out[j] {
			case '<':
				depth++
			case '>':
				if out[j-1] == '-' || (j+1 < len(out) && out[j+1] == '=') {
					continue
				}
				if depth--; depth == 0 {
					end = j + 1
				}
			case '\n':
				j = len(out)
			}
		}
		if end < 0 {
			sb.WriteByte(c)
			continue
		}
		text := out[i:end]
		name, ok := names[text]
		if !ok {
			name = "#" + kind
			if n := counts[kind]; n > 0 {
				name += strconv.Itoa(n)
			}
			counts[kind]++
			names[text] = name
			defs = append(defs, alias{name, text})
		}
		sb.WriteString(name)
		i = end - 1
	}
	if len(defs) == 0 {
		return out
	}
	sort.SliceStable(defs, func(a, b int) bool { return defs[a].name[1:4] == "map" && defs[b].name[1:4] == "set" })
	var head strings.Builder
	for _, d := range defs {
		head.WriteString(d.name + " = " + d.text + "\n")
	}
	return head.String() + sb.String()
}

// PrintOpString prints a single op (with its regions) for messages.
func PrintOpString(op *Operation) string {
	s := Print(op, PrintOptions{})
	return strings.TrimRight(s, "\n")
}

// Write appends raw text.
func (p *Printer) Write(s string) { p.sb.WriteString(s) }

// WriteByte appends one byte.
func (p *Printer) WriteByte(c byte) error { return p.sb.WriteByte(c) }

// Generic reports whether the generic form is being printed.
func (p *Printer) Generic() bool { return p.opts.Generic }

// PrintNewline starts a new line at the current indentation.
func (p *Printer) PrintNewline() {
	p.sb.WriteByte('\n')
	p.writeIndent()
}

func (p *Printer) writeIndent() {
	for i := 0; i < p.indent; i++ {
		p.sb.WriteString("  ")
	}
}

// PrintOperand prints %name of v.
func (p *Printer) PrintOperand(v Value) { p.sb.WriteString(p.names.valueRef(v)) }

// ValueName returns the printed name of v (with %).
func (p *Printer) ValueName(v Value) string { return p.names.valueRef(v) }

// PrintCommaSeparated prints each element of xs with print, separated by
// ", " (the printing side of Parser.ParseCommaSeparatedList).
func PrintCommaSeparated[T any](p *Printer, xs []T, print func(T)) {
	for i, x := range xs {
		if i > 0 {
			p.sb.WriteString(", ")
		}
		print(x)
	}
}

// CommaSeparated returns the elements of xs as str prints them, separated
// by ", ".
func CommaSeparated[T any](xs []T, str func(T) string) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = str(x)
	}
	return strings.Join(parts, ", ")
}

// PrintOperands prints a comma-separated list of operands.
func (p *Printer) PrintOperands(vs []Value) { PrintCommaSeparated(p, vs, p.PrintOperand) }

// PrintType prints a type.
func (p *Printer) PrintType(t Type) { p.sb.WriteString(t.String()) }

// PrintTypes prints a comma-separated list of types.
func (p *Printer) PrintTypes(ts []Type) { writeTypeList(&p.sb, ts) }

// PrintAttribute prints an attribute.
func (p *Printer) PrintAttribute(a Attribute) { p.sb.WriteString(a.String()) }

// PrintAttributeWithoutType prints an integer or float attribute without
// its `: type` suffix.
func (p *Printer) PrintAttributeWithoutType(a Attribute) { p.sb.WriteString(AttrWithoutType(a)) }

// AttrWithoutType returns the printed form of a without a trailing type.
func AttrWithoutType(a Attribute) string {
	switch a := a.(type) {
	case *IntegerAttr:
		if IsIntegerOfWidth(a.typ, 1) {
			return a.String()
		}
		return formatIntValue(a.val, a.typ)
	case *FloatAttr:
		return FormatFloat(a.Value, a.typ.(*FloatType).Kind)
	case *StringAttr:
		return a.String()
	}
	return a.String()
}

// PrintSymbolName prints @name.
func (p *Printer) PrintSymbolName(name string) { p.sb.WriteString(FormatSymbolName(name)) }

// PrintSuccessor prints ^bbN.
func (p *Printer) PrintSuccessor(b *Block) { p.sb.WriteString(p.names.blockName(b)) }

// PrintArrowTypeList prints `-> t` or `-> (a, b)`.
func (p *Printer) PrintArrowTypeList(ts []Type) {
	p.sb.WriteString("-> ")
	writeResultTypes(&p.sb, ts)
}

// PrintFunctionalType prints (operand types) -> result types of op.
func (p *Printer) PrintFunctionalType(op *Operation) {
	p.PrintFunctionalTypes(op.OperandTypes(), op.ResultTypes())
}

// PrintFunctionalTypes prints (ins) -> outs.
func (p *Printer) PrintFunctionalTypes(ins, outs []Type) {
	p.sb.WriteByte('(')
	p.PrintTypes(ins)
	p.sb.WriteString(") -> ")
	writeResultTypes(&p.sb, outs)
}

// PrintOptionalAttrDict prints ` {a = 1}` with the op's attributes (inherent
// and discardable) except the elided ones; nothing if none remain.
func (p *Printer) PrintOptionalAttrDict(attrs []NamedAttr, elided ...string) {
	p.printAttrDict(attrs, false, elided)
}

// PrintOptionalAttrDictWithKeyword prints ` attributes {...}` if non-empty.
func (p *Printer) PrintOptionalAttrDictWithKeyword(attrs []NamedAttr, elided ...string) {
	p.printAttrDict(attrs, true, elided)
}

func (p *Printer) printAttrDict(attrs []NamedAttr, keyword bool, elided []string) {
	var keep []NamedAttr
outer:
	for _, a := range attrs {
		for _, e := range elided {
			if a.Name == e {
				continue outer
			}
		}
		keep = append(keep, a)
	}
	if len(keep) == 0 {
		return
	}
	if keyword {
		p.sb.WriteString(" attributes")
	}
	p.sb.WriteByte(' ')
	p.sb.WriteString(FormatAttrDict(keep))
}

// PrintRegionArgument prints `%arg0: type {attrs}` (and the location with
// debug info).
func (p *Printer) PrintRegionArgument(a *BlockArgument, attrs *DictAttr) {
	p.PrintOperand(a)
	p.sb.WriteString(": ")
	p.PrintType(a.Type())
	if attrs != nil && len(attrs.Entries) > 0 {
		p.sb.WriteByte(' ')
		p.sb.WriteString(attrs.String())
	}
	p.printTrailingLoc(a.Loc())
}

func (p *Printer) printTrailingLoc(l Location) {
	if p.opts.DebugInfo && l != nil {
		if p.locs != nil {
			p.sb.WriteString(" loc(" + p.locs.body(l) + ")")
			return
		}
		p.sb.WriteString(" loc(" + l.String() + ")")
	}
}

// printOpLoc prints an op's trailing location, through its alias.
func (p *Printer) printOpLoc(l Location) {
	if p.opts.DebugInfo && l != nil && p.locs != nil {
		if a, ok := p.locs.byKey[l.String()]; ok {
			p.sb.WriteString(" loc(" + a.name + ")")
			return
		}
	}
	p.printTrailingLoc(l)
}

// PrintRegion prints { blocks }. The entry block header is printed when it
// has arguments and printEntryBlockArgs is set (or printEmptyBlock and the
// block is empty); the terminator is omitted when printTerminators is false.
func (p *Printer) PrintRegion(r *Region, printEntryBlockArgs, printTerminators, printEmptyBlock bool) {
	p.sb.WriteString("{\n")
	if len(r.blocks) > 0 {
		entry := r.blocks[0]
		header := (printEmptyBlock && entry.Empty()) || (printEntryBlockArgs && len(entry.args) > 0)
		p.printBlock(entry, header, printTerminators)
		for _, b := range r.blocks[1:] {
			p.printBlock(b, true, true)
		}
	}
	p.writeIndent()
	p.sb.WriteByte('}')
}

func (p *Printer) printBlock(b *Block, header, printTerminator bool) {
	if header {
		p.writeIndent()
		p.sb.WriteString(p.names.blockName(b))
		if len(b.args) > 0 {
			p.sb.WriteByte('(')
			PrintCommaSeparated(p, b.args, func(a *BlockArgument) {
				p.PrintOperand(a)
				p.sb.WriteString(": ")
				p.PrintType(a.Type())
				p.printTrailingLoc(a.Loc())
			})
			p.sb.WriteByte(')')
		}
		p.sb.WriteByte(':')
		preds := p.names.predecessors(b)
		switch {
		case b.parent == nil:
			p.sb.WriteString("  // block is not in a region!")
		case len(preds) == 0:
			if !b.IsEntry() {
				p.sb.WriteString("  // no predecessors")
			}
		case len(preds) == 1:
			p.sb.WriteString("  // pred: " + p.names.blockName(preds[0]))
		default:
			p.sb.WriteString("  // " + strconv.Itoa(len(preds)) + " preds: ")
			PrintCommaSeparated(p, preds, p.PrintSuccessor)
		}
		p.sb.WriteByte('\n')
	}
	p.indent++
	for op := b.first; op != nil; op = op.next {
		if !printTerminator && op == b.last && op.HasTrait(Terminator) {
			break
		}
		p.writeIndent()
		p.printOp(op)
		p.sb.WriteByte('\n')
	}
	p.indent--
}

// printOp prints results, the op and its trailing location on one line.
func (p *Printer) printOp(op *Operation) {
	if n := op.NumResults(); n > 0 {
		groups := p.names.resultGroups(op)
		for i, g := range groups {
			if i > 0 {
				p.sb.WriteString(", ")
			}
			p.sb.WriteString(p.names.groupName(op, g))
			end := n
			if i+1 < len(groups) {
				end = groups[i+1]
			}
			if end-g > 1 {
				p.sb.WriteString(":" + strconv.Itoa(end-g))
			}
		}
		p.sb.WriteString(" = ")
	}
	p.PrintOpWithoutResults(op)
	p.printOpLoc(op.Loc)
}

// PrintOpWithoutResults prints op, custom or generic, without its result
// names and location (upstream's printCustomOrGenericOp: vector.mask
// prints the op it masks inline this way).
func (p *Printer) PrintOpWithoutResults(op *Operation) {
	def := op.def
	if p.opts.Generic || def.unregistered || (def.Print == nil && def.format == nil) {
		p.printGenericOp(op)
		return
	}
	p.sb.WriteString(p.opName(op))
	p.dialects = append(p.dialects, def.DefaultDialect)
	if def.Print != nil {
		def.Print(p, op)
	} else {
		def.format.print(p, op)
	}
	p.dialects = p.dialects[:len(p.dialects)-1]
}

// opName returns the op name, without the dialect prefix when the closest
// enclosing op makes its dialect the default (builtin at the top level,
// func inside func.func) and the rest of the name has no further dot.
func (p *Printer) opName(op *Operation) string {
	name := op.Name()
	d, rest := splitName(name)
	if n := len(p.dialects); n > 0 && p.dialects[n-1] != "" && p.dialects[n-1] == d && !strings.Contains(rest, ".") {
		return rest
	}
	return name
}

func (p *Printer) printGenericOp(op *Operation) {
	p.sb.WriteString(QuoteString(op.Name()))
	p.sb.WriteByte('(')
	p.PrintOperands(op.Operands())
	p.sb.WriteByte(')')
	if len(op.successors) > 0 {
		p.sb.WriteByte('[')
		PrintCommaSeparated(p, op.successors, p.PrintSuccessor)
		p.sb.WriteByte(']')
	}
	if len(op.props) > 0 {
		p.sb.WriteString(" <")
		p.sb.WriteString(FormatAttrDict(op.props))
		p.sb.WriteByte('>')
	}
	if len(op.regions) > 0 {
		p.sb.WriteString(" (")
		PrintCommaSeparated(p, op.regions, func(r *Region) { p.PrintRegion(r, true, true, true) })
		p.sb.WriteByte(')')
	}
	p.PrintOptionalAttrDict(op.attrs)
	p.sb.WriteString(" : ")
	p.PrintFunctionalType(op)
}

// nameState assigns printed names to values and blocks, following upstream's
// numbering so output matches mlir-opt.
type nameState struct {
	values     map[Value]string // full name with %, for op result group leaders and block args
	groups     map[*Operation][]int
	blocks     map[*Block]string
	blockOrder map[*Block]int
	preds      map[*Block][]*Block
}

type nameContext struct {
	region                       *Region
	nextValue, nextArg, conflict int
	used                         *usedNames
}

// usedNames is a scoped set of names already taken.
type usedNames struct {
	parent *usedNames
	set    map[string]bool
}

func (u *usedNames) has(n string) bool {
	for s := u; s != nil; s = s.parent {
		if s.set[n] {
			return true
		}
	}
	return false
}

func computeNames(top *Operation, generic bool) *nameState {
	ns := &nameState{values: map[Value]string{}, groups: map[*Operation][]int{}, blocks: map[*Block]string{}, blockOrder: map[*Block]int{}, preds: map[*Block][]*Block{}}
	nextValue, nextArg, conflict := 0, 0, 0
	var stack []nameContext
	root := &usedNames{set: map[string]bool{}}
	for _, r := range top.regions {
		stack = append(stack, nameContext{r, 0, 0, 0, root})
	}
	// The top op's own results (when printing a single op) get numbers first.
	ns.numberOp(top, generic, &nextValue, &conflict, root)
	for len(stack) > 0 {
		ctx := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if !generic {
			nextValue, nextArg, conflict = ctx.nextValue, ctx.nextArg, ctx.conflict
		}
		used := &usedNames{parent: ctx.used, set: map[string]bool{}}
		r := ctx.region
		// Region argument names suggested by the parent op.
		if !generic && r.parent != nil && r.parent.def.BlockArgNames != nil {
			r.parent.def.BlockArgNames(r.parent, r, func(v Value, name string) {
				if _, done := ns.values[v]; !done {
					ns.values[v] = "%" + uniqueName(name, used, &conflict)
				}
			})
		}
		for i, b := range r.blocks {
			ns.blocks[b] = "^bb" + strconv.Itoa(i)
			ns.blockOrder[b] = i
			for _, s := range b.Successors() {
				ns.preds[s] = append(ns.preds[s], b)
			}
			entry := i == 0
			for _, a := range b.args {
				if _, done := ns.values[a]; done {
					continue
				}
				if entry {
					ns.values[a] = "%" + uniqueName("arg"+strconv.Itoa(nextArg), used, &conflict)
					nextArg++
				} else {
					ns.values[a] = "%" + strconv.Itoa(nextValue)
					nextValue++
				}
			}
			for op := b.first; op != nil; op = op.next {
				ns.numberOp(op, generic, &nextValue, &conflict, used)
			}
		}
		for _, b := range r.blocks {
			for op := b.first; op != nil; op = op.next {
				for _, sub := range op.regions {
					stack = append(stack, nameContext{sub, nextValue, nextArg, conflict, used})
				}
			}
		}
	}
	for b, ps := range ns.preds {
		sort.SliceStable(ps, func(i, j int) bool { return ns.blockOrder[ps[i]] < ns.blockOrder[ps[j]] })
		ns.preds[b] = ps
	}
	return ns
}

func (ns *nameState) numberOp(op *Operation, generic bool, nextValue, conflict *int, used *usedNames) {
	n := len(op.results)
	if n == 0 {
		return
	}
	groups := []int{0}
	if !generic && op.def.ResultNames != nil {
		op.def.ResultNames(op, func(v Value, name string) {
			r, ok := v.(*OpResult)
			if !ok || r.owner != op {
				return
			}
			if _, done := ns.values[v]; done {
				return
			}
			if name == "" {
				ns.values[v] = "%" + strconv.Itoa(*nextValue)
				*nextValue++
			} else {
				ns.values[v] = "%" + uniqueName(name, used, conflict)
			}
			if r.index != 0 {
				groups = append(groups, r.index)
			}
		})
	}
	if _, done := ns.values[&op.results[0]]; !done {
		ns.values[&op.results[0]] = "%" + strconv.Itoa(*nextValue)
		*nextValue++
	}
	if len(groups) > 1 {
		sort.Ints(groups)
		ns.groups[op] = groups
	}
}

// uniqueName sanitizes name and adds a _N suffix if it is taken.
func uniqueName(name string, used *usedNames, conflict *int) string {
	name = sanitizeName(name)
	if used.has(name) {
		for {
			probe := name + "_" + strconv.Itoa(*conflict)
			*conflict++
			if !used.has(probe) {
				name = probe
				break
			}
		}
	}
	used.set[name] = true
	return name
}

// sanitizeName makes name a valid SSA suffix: characters outside
// [a-zA-Z0-9$._-] become '_', and a leading digit gets a '_' prefix.
func sanitizeName(name string) string {
	var sb strings.Builder
	if name == "" || isDigit(name[0]) {
		sb.WriteByte('_')
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if isIDStart(c) || isDigit(c) || c == '$' || c == '.' || c == '-' {
			sb.WriteByte(c)
		} else {
			sb.WriteByte('_')
		}
	}
	return sb.String()
}

func (ns *nameState) resultGroups(op *Operation) []int {
	if g, ok := ns.groups[op]; ok {
		return g
	}
	return []int{0}
}

func (ns *nameState) groupName(op *Operation, start int) string {
	if s, ok := ns.values[&op.results[start]]; ok {
		return s
	}
	return "<<UNKNOWN SSA VALUE>>"
}

// valueRef returns how a use of v prints: %name, %N or %N#i.
func (ns *nameState) valueRef(v Value) string {
	if v == nil {
		return "<<NULL VALUE>>"
	}
	if s, ok := ns.values[v]; ok {
		// The first value of a named group of several (%sizes:2) is %sizes#0.
		if r, isRes := v.(*OpResult); isRes && len(r.owner.results) > 1 {
			if ns.groupSize(r.owner, r.index) > 1 {
				return s + "#0"
			}
		}
		return s
	}
	r, ok := v.(*OpResult)
	if !ok {
		return "<<UNKNOWN SSA VALUE>>"
	}
	op := r.owner
	groups := ns.resultGroups(op)
	start := 0
	for _, g := range groups {
		if g <= r.index {
			start = g
		}
	}
	base, ok := ns.values[&op.results[start]]
	if !ok {
		return "<<UNKNOWN SSA VALUE>>"
	}
	return base + "#" + strconv.Itoa(r.index-start)
}

func (ns *nameState) groupSize(op *Operation, start int) int {
	groups := ns.resultGroups(op)
	for i, g := range groups {
		if g == start {
			if i+1 < len(groups) {
				return groups[i+1] - g
			}
			return len(op.results) - g
		}
	}
	return 1
}

func (ns *nameState) blockName(b *Block) string {
	if s, ok := ns.blocks[b]; ok {
		return s
	}
	return "^INVALIDBLOCK"
}

func (ns *nameState) predecessors(b *Block) []*Block { return ns.preds[b] }
