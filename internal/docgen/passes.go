package docgen

import (
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/tmac-dev/tmac/driver"
	"github.com/tmac-dev/tmac/ir"
	"github.com/tmac-dev/tmac/passes"
)

// passExample is examples/passes/<pass>.tma: leading `//` comment lines
// (the text shown above the example; a line `// options: k=v ...` gives the
// pass options instead), then the input module.
type passExample struct {
	about   string
	options string
	before  string
	after   string
}

const optionsMarker = "// options:"

// passPages adds passes/README.md and passes/<pass>.md.
func passPages(files map[string]string) error {
	exs, err := loadPassExamples()
	if err != nil {
		return err
	}
	var idx strings.Builder
	idx.WriteString(Header)
	idx.WriteString("# Passes\n\n")
	idx.WriteString("The passes tmac registers. Run one with `tmac opt FILE --NAME` (options as\n" +
		"`--NAME=\"key=value ...\"`) or in a textual pipeline, `tmac opt FILE --pass-pipeline='builtin.module(NAME{key=value})'`.\n" +
		"`tmac compile` runs [the default pipeline](#the-default-pipeline). Each page's example is\n" +
		"produced by running the pass when the pages are generated.\n\n")
	idx.WriteString("| Pass | Summary |\n|---|---|\n")
	for _, info := range passes.All() {
		fmt.Fprintf(&idx, "| [`%s`](%s.md) | %s |\n", info.Name, info.Name, cell(info.Summary))
		files["passes/"+info.Name+".md"] = passPage(info, exs[info.Name])
	}
	idx.WriteString("\n## Order\n\n" +
		"A pass lists the passes it needs before it (each page's *Prerequisites*). A pipeline that runs a\n" +
		"needed pass only after the pass needing it is rejected when it is built (`--pass-pipeline`, the\n" +
		"pass flags of `tmac opt`). A pipeline that leaves a needed pass out fails only on input that still\n" +
		"holds ops the needed pass rewrites, at the first such op, just before the pass needing it runs: a\n" +
		"pass may run alone on IR already past its prerequisites (`lower-nvgpu` on hand-written `nvgpu`\n" +
		"with explicit parities). Needs marked *order only* never look at the IR.\n")
	idx.WriteString("\n## The default pipeline\n\n" +
		"What `tmac compile` (and `tmac run`, `tmac tune`, `tmac explain` on `.tma` input) runs before code generation:\n" +
		"`" + driver.DefaultPipeline + "`.\n\n" +
		"| # | Pass | Why there |\n|---|---|---|\n")
	for i, st := range driver.DefaultSteps {
		fmt.Fprintf(&idx, "| %d | [`%s`](%s.md) | %s |\n", i+1, st.Pass, st.Pass, cell(st.Reason))
	}
	files["passes/README.md"] = idx.String()
	return nil
}

// prerequisites writes a pass's needs and the passes that need it.
func prerequisites(sb *strings.Builder, info *passes.Info) {
	sb.WriteString("## Prerequisites\n\n")
	if len(info.Needs) == 0 {
		sb.WriteString("None.\n")
	} else {
		fmt.Fprintf(sb, "Passes that must run before `%s` (see [Order](README.md#order)):\n\n", info.Name)
		sb.WriteString("| Pass | Why | Checked |\n|---|---|---|\n")
		for _, n := range info.Needs {
			when := "when the input holds ops it rewrites"
			if n.OrderOnly {
				when = "order only"
			}
			fmt.Fprintf(sb, "| [`%s`](%s.md) | %s | %s |\n", n.Pass, n.Pass, cell(n.Why), when)
		}
	}
	var by []string
	for _, other := range passes.All() {
		for _, n := range other.Needs {
			if n.Pass == info.Name {
				by = append(by, fmt.Sprintf("[`%s`](%s.md)", other.Name, other.Name))
			}
		}
	}
	if len(by) > 0 {
		fmt.Fprintf(sb, "\nNeeded before: %s.\n", strings.Join(by, ", "))
	}
	sb.WriteString("\n")
}

func passPage(info *passes.Info, ex *passExample) string {
	var sb strings.Builder
	sb.WriteString(Header)
	fmt.Fprintf(&sb, "# `%s`\n\n", info.Name)
	sb.WriteString("[All passes](README.md)\n\n")
	sb.WriteString(sentence(info.Summary) + "\n\n")
	if info.Description != "" {
		sb.WriteString(strings.TrimSpace(info.Description) + "\n\n")
	}
	sb.WriteString("## Options\n\n")
	if len(info.Options) == 0 {
		sb.WriteString("None.\n\n")
	} else {
		sb.WriteString("| Option | Default | Description |\n|---|---|---|\n")
		for _, o := range info.Options {
			fmt.Fprintf(&sb, "| `%s` | `%s` | %s |\n", o.Name, o.Default, cell(o.Help))
		}
		sb.WriteString("\n")
	}
	prerequisites(&sb, info)
	sb.WriteString("## Usage\n\n")
	usage := fmt.Sprintf("tmac opt input.tma --%s\n", info.Name)
	if len(info.Options) > 0 {
		var kv []string
		for _, o := range info.Options {
			kv = append(kv, o.Name+"="+o.Default)
		}
		opts := strings.Join(kv, " ")
		usage += fmt.Sprintf("tmac opt input.tma --%s=\"%s\"\n", info.Name, opts)
		usage += fmt.Sprintf("tmac opt input.tma --pass-pipeline='builtin.module(%s{%s})'\n", info.Name, opts)
	} else {
		usage += fmt.Sprintf("tmac opt input.tma --pass-pipeline='builtin.module(%s)'\n", info.Name)
	}
	codeBlock(&sb, "sh", usage)
	flag := "--" + info.Name
	if ex != nil && ex.options != "" {
		flag += `="` + ex.options + `"`
	}
	sb.WriteString("\n## Example\n\n")
	if ex == nil {
		fmt.Fprintf(&sb, "No example yet (add `%sexamples/passes/%s.tma`).\n", srcDir, info.Name)
		return sb.String()
	}
	if ex.about != "" {
		sb.WriteString(ex.about + "\n\n")
	}
	fmt.Fprintf(&sb, "Input (`%sexamples/passes/%s.tma`, as `tmac opt` prints it):\n\n", srcDir, info.Name)
	codeBlock(&sb, "mlir", ex.before)
	fmt.Fprintf(&sb, "\nAfter `tmac opt %s`:\n\n", flag)
	codeBlock(&sb, "mlir", ex.after)
	return sb.String()
}

// loadPassExamples reads every pass example and runs its pass on it.
func loadPassExamples() (map[string]*passExample, error) {
	names, err := fs.Glob(examples, "examples/passes/*.tma")
	if err != nil {
		return nil, err
	}
	exs := map[string]*passExample{}
	for _, name := range names {
		pass := strings.TrimSuffix(path.Base(name), ".tma")
		data, err := examples.ReadFile(name)
		if err != nil {
			return nil, err
		}
		file := srcDir + name
		if passes.Lookup(pass) == nil {
			return nil, fmt.Errorf("%s: no pass is named '%s'", file, pass)
		}
		ex, err := runPassExample(file, pass, string(data))
		if err != nil {
			return nil, err
		}
		exs[pass] = ex
	}
	return exs, nil
}

func runPassExample(file, pass, text string) (*passExample, error) {
	ex := &passExample{}
	var about []string
	for _, l := range strings.Split(text, "\n") {
		t := strings.TrimSpace(l)
		if t != "" && !strings.HasPrefix(t, "//") {
			break
		}
		switch {
		case strings.HasPrefix(t, optionsMarker):
			ex.options = strings.TrimSpace(strings.TrimPrefix(t, optionsMarker))
		case strings.HasPrefix(t, "// RUN:"):
		default:
			about = append(about, strings.TrimSpace(strings.TrimPrefix(t, "//")))
		}
	}
	ex.about = strings.TrimSpace(strings.Join(about, "\n"))
	sm := ir.NewSourceMgr()
	sm.Add(file, text)
	mod, err := driver.ParseChunk(driver.Chunk{File: file, Text: text, FirstLine: 1}, false)
	if err != nil {
		return nil, fmt.Errorf("the example of pass %s does not verify:\n%s", pass, renderDiags(err, sm))
	}
	ex.before = ir.Print(mod, ir.PrintOptions{})
	opts, err := passes.ParseOptionString(ex.options)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", file, err)
	}
	p, err := passes.Instantiate(pass, opts)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", file, err)
	}
	var diags []*ir.Diagnostic
	ctx := &passes.Context{Emit: func(d *ir.Diagnostic) { diags = append(diags, d) }}
	err = passes.RunPipeline(mod, []*passes.Step{{PassName: pass, Pass: p}}, ctx, nil)
	if err != nil {
		diags = append(diags, ir.AsDiagnostics(err)...)
	}
	if len(diags) > 0 {
		return nil, fmt.Errorf("pass %s reports diagnostics on its example:\n%s", pass, renderDiags(ir.DiagList(diags), sm))
	}
	ex.after = ir.Print(mod, ir.PrintOptions{})
	return ex, nil
}
