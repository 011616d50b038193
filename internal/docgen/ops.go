package docgen

import (
	"fmt"
	"strings"

	"github.com/tmac-dev/tmac/ir"
)

// traitNames lists the traits in the order of their bits.
var traitNames = []struct {
	t    ir.Trait
	name string
	desc string
}{
	{ir.Terminator, "Terminator", "ends a block"},
	{ir.IsolatedFromAbove, "IsolatedFromAbove", "its regions cannot use values defined outside the op"},
	{ir.SymbolTable, "SymbolTable", "holds a table of symbols"},
	{ir.Symbol, "Symbol", "defines a symbol through its `sym_name` attribute"},
	{ir.NoTerminator, "NoTerminator", "its single-block regions have no terminator"},
	{ir.SingleBlock, "SingleBlock", "its regions have at most one block"},
	{ir.Pure, "Pure", "no side effects: CSE may merge it and canonicalize may remove it when unused"},
	{ir.Commutative, "Commutative", "its operands can be reordered"},
	{ir.ConstantLike, "ConstantLike", "materialises its `value` attribute"},
	{ir.ReturnLike, "ReturnLike", "returns control to the parent op"},
	{ir.AttrSizedOperandSegments, "AttrSizedOperandSegments", "the `operandSegmentSizes` property gives the number of values in each operand group"},
	{ir.AttrSizedResultSegments, "AttrSizedResultSegments", "the `resultSegmentSizes` property gives the number of values in each result group"},
	{ir.SameOperandsAndResultType, "SameOperandsAndResultType", "all operands and results have the same type"},
	{ir.RecursiveSideEffects, "RecursiveSideEffects", "has the side effects of the ops in its regions"},
	{ir.GraphRegions, "GraphRegions", "its regions are graph regions (no dominance order)"},
	{ir.NoMemoryEffect, "NoMemoryEffect", "reads and writes no memory, but is not speculatable"},
}

// dialectPages adds dialects/README.md and dialects/<dialect>.md.
func dialectPages(files map[string]string, examples map[string][]*opExample) error {
	byDialect := map[string][]*ir.OpDef{}
	for _, d := range ir.RegisteredOps() {
		byDialect[d.Dialect()] = append(byDialect[d.Dialect()], d)
	}
	var idx strings.Builder
	idx.WriteString(Header)
	idx.WriteString("# Dialects\n\n")
	idx.WriteString("The ops tmac registers, by dialect. Each page lists every op of the dialect with its\n" +
		"operands, results, attributes, regions and successors and their constraints, its traits,\n" +
		"its syntax and an example. The examples are parsed and verified by `tmac doc` whenever the\n" +
		"pages are generated, so they are valid tmac input; `tmac opt` accepts each of them as it is.\n\n" +
		"Every op also has the generic form `\"dialect.op\"(%operands) <{properties}> ({regions}) {attributes} : (operand types) -> result types`.\n\n")
	idx.WriteString("| Dialect | Ops | With example | Summary |\n|---|---:|---:|---|\n")
	total, withEx := 0, 0
	for _, name := range ir.Dialects() {
		defs := byDialect[name]
		if len(defs) == 0 {
			continue
		}
		n := 0
		for _, d := range defs {
			if len(examples[d.Name]) > 0 {
				n++
			}
		}
		total += len(defs)
		withEx += n
		fmt.Fprintf(&idx, "| [`%s`](%s.md) | %d | %d | %s |\n", name, name, len(defs), n, cell(dialectSummary(name)))
		files["dialects/"+name+".md"] = dialectPage(name, defs, examples)
	}
	fmt.Fprintf(&idx, "\n%d ops, %d with an example.\n", total, withEx)
	files["dialects/README.md"] = idx.String()
	return nil
}

func dialectSummary(name string) string {
	if d := ir.LookupDialect(name); d != nil && d.Summary != "" {
		return d.Summary
	}
	return ""
}

func dialectPage(name string, defs []*ir.OpDef, examples map[string][]*opExample) string {
	var sb strings.Builder
	sb.WriteString(Header)
	fmt.Fprintf(&sb, "# The `%s` dialect\n\n", name)
	if s := dialectSummary(name); s != "" {
		sb.WriteString(s + ".\n\n")
	}
	fmt.Fprintf(&sb, "[All dialects](README.md). Registered in `dialects/%s`; examples in `%sexamples/ops/%s.tma`.\n\n", name, srcDir, name)
	sb.WriteString("| Op | Summary |\n|---|---|\n")
	for _, d := range defs {
		fmt.Fprintf(&sb, "| [`%s`](#%s) | %s |\n", d.Name, anchor(d.Name), cell(d.Summary))
	}
	for _, d := range defs {
		sb.WriteString("\n")
		opSection(&sb, d, examples[d.Name])
	}
	return sb.String()
}

func opSection(sb *strings.Builder, d *ir.OpDef, examples []*opExample) {
	fmt.Fprintf(sb, "## `%s`\n\n", d.Name)
	if d.Summary != "" {
		sb.WriteString(sentence(d.Summary) + "\n\n")
	}

	sb.WriteString("**Syntax.** ")
	switch {
	case d.Parse != nil || d.Print != nil:
		fmt.Fprintf(sb, "Custom form, parsed and printed by Go code in `dialects/%s` (see the example).\n\n", d.Dialect())
	case d.Format != "":
		sb.WriteString("Declarative assembly format:\n\n")
		codeBlock(sb, "", d.Format)
		sb.WriteString("\n")
	default:
		sb.WriteString("Generic form only.\n\n")
	}

	var traits []string
	for _, t := range traitNames {
		if d.Traits&t.t != 0 {
			traits = append(traits, fmt.Sprintf("`%s` (%s)", t.name, t.desc))
		}
	}
	if len(traits) > 0 {
		sb.WriteString("**Traits.** " + strings.Join(traits, "; ") + ".\n\n")
	}

	argTable(sb, "Operands", d.Operands)
	argTable(sb, "Results", d.Results)

	if len(d.Attrs) > 0 {
		sb.WriteString("**Attributes** (inherent; stored as properties)\n\n| Name | Constraint | Presence |\n|---|---|---|\n")
		for _, a := range d.Attrs {
			presence := "required"
			if a.Optional {
				presence = "optional"
			}
			if a.Default != nil {
				presence = "optional, default " + code(a.Default.String())
			}
			fmt.Fprintf(sb, "| `%s` | %s | %s |\n", a.Name, cell(a.Constraint.Desc), cell(presence))
		}
		sb.WriteString("\n")
	}

	if len(d.Regions) > 0 {
		var rs []string
		for _, r := range d.Regions {
			s := "`" + r.Name + "`"
			if r.Variadic {
				s += " (any number of regions)"
			}
			rs = append(rs, s)
		}
		sb.WriteString("**Regions.** " + strings.Join(rs, ", ") + ".")
		if d.ImplicitTerminator != "" {
			fmt.Fprintf(sb, " The custom form may omit the terminator `%s` when it has no operands.", d.ImplicitTerminator)
		}
		if d.DefaultDialect != "" {
			fmt.Fprintf(sb, " Ops of the `%s` dialect in its regions print without the `%s.` prefix.", d.DefaultDialect, d.DefaultDialect)
		}
		sb.WriteString("\n\n")
	}
	switch {
	case d.Successors < 0:
		sb.WriteString("**Successors.** Any number.\n\n")
	case d.Successors > 0:
		fmt.Fprintf(sb, "**Successors.** %d.\n\n", d.Successors)
	}
	if len(d.Parents) > 0 {
		var ps []string
		for _, p := range d.Parents {
			ps = append(ps, "`"+p+"`")
		}
		sb.WriteString("**Parent.** Must be directly nested in " + orList(ps) + ".\n\n")
	}

	sb.WriteString("**Verification.** ")
	var checks []string
	if len(d.Operands)+len(d.Results)+len(d.Attrs)+len(d.Regions) > 0 || d.Successors != 0 {
		checks = append(checks, "the counts and constraints above")
	}
	if d.Traits != 0 {
		checks = append(checks, "the traits")
	}
	if d.VerifyProps != nil || d.VerifyInvariants != nil || d.Verify != nil {
		checks = append(checks, fmt.Sprintf("op-specific rules (Go verifier in `dialects/%s`)", d.Dialect()))
	}
	if len(checks) == 0 {
		sb.WriteString("Nothing beyond the generic checks.\n\n")
	} else {
		sb.WriteString("Checks " + strings.Join(checks, ", ") + ".\n\n")
	}
	if d.Doc != "" {
		sb.WriteString(strings.TrimSpace(d.Doc) + "\n\n")
	}
	if len(d.Effects) > 0 {
		var es []string
		for _, e := range d.Effects {
			on := "memory no operand names"
			switch {
			case e.Kind == ir.Allocate && e.Operand == "":
				on = "its result"
			case e.Operand != "":
				on = "`" + e.Operand + "`"
			}
			es = append(es, fmt.Sprintf("%s %s (%s)", e.Kind, on, e.Proxy))
		}
		sb.WriteString("**Memory effects.** " + strings.Join(es, "; ") + ".\n\n")
	}
	if s := d.Semantics; s != nil {
		sb.WriteString("**Evaluation.** Computed lane by lane from its definition when folding, in the reference interpreter, the emulator and host code")
		if s.Undefined != "" {
			sb.WriteString("; the result is undefined (an error when evaluated) on " + s.Undefined)
		}
		if s.GPU != nil {
			sb.WriteString(". The GPU computes it differently (see above); the emulator models what the GPU computes")
		}
		sb.WriteString(".\n\n")
	}
	if d.Fold != nil {
		sb.WriteString("**Folding.** Has a folder: `canonicalize` replaces it when its operands are constants (or it simplifies to an operand).\n\n")
	}

	switch len(examples) {
	case 0:
		sb.WriteString("**Example.** No example yet.\n")
	case 1:
		sb.WriteString("**Example**\n\n")
	default:
		sb.WriteString("**Examples**\n\n")
	}
	for i, ex := range examples {
		if i > 0 {
			sb.WriteString("\n")
		}
		codeBlock(sb, "mlir", ex.text)
	}
}

func argTable(sb *strings.Builder, title string, args []ir.ArgSpec) {
	if len(args) == 0 {
		return
	}
	fmt.Fprintf(sb, "**%s**\n\n| Name | Count | Type constraint |\n|---|---|---|\n", title)
	for _, a := range args {
		count := "1"
		switch a.Kind {
		case ir.Optional:
			count = "0 or 1"
		case ir.Variadic:
			count = "any"
		}
		desc := a.Type.Desc
		if desc == "" {
			desc = "any type"
		}
		name := a.Name
		if name == "" {
			name = "(unnamed)"
		} else {
			name = "`" + name + "`"
		}
		fmt.Fprintf(sb, "| %s | %s | %s |\n", name, count, cell(desc))
	}
	sb.WriteString("\n")
}

func orList(xs []string) string {
	switch len(xs) {
	case 0:
		return ""
	case 1:
		return xs[0]
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " or " + xs[len(xs)-1]
}

// sentence capitalises s and ends it with a period.
func sentence(s string) string {
	s = strings.TrimSuffix(strings.TrimSpace(s), ".")
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:] + "."
}
