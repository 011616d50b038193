package docgen

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/tmac-dev/tmac/driver"
	"github.com/tmac-dev/tmac/ir"
)

// The example inputs: examples/ops/<dialect>.tma and
// examples/passes/<pass>.tma.
//
//go:embed examples
var examples embed.FS

// srcDir is where the examples are in the repository; diagnostics about an
// example name the file by this path.
const srcDir = "internal/docgen/"

// opExample is one example of examples/ops/<dialect>.tma: a chunk between
// `// -----` lines that starts with `// example: op.name ...`, naming the
// ops it shows.
type opExample struct {
	ops  []string
	text string // the chunk as written, without the `// example:` line
}

const exampleMarker = "// example:"

// loadOpExamples reads, parses and verifies the op examples, by op name.
func loadOpExamples() (map[string][]*opExample, error) {
	byOp := map[string][]*opExample{}
	names, err := fs.Glob(examples, "examples/ops/*.tma")
	if err != nil {
		return nil, err
	}
	for _, name := range names {
		data, err := examples.ReadFile(name)
		if err != nil {
			return nil, err
		}
		file := srcDir + name
		dialect := strings.TrimSuffix(path.Base(name), ".tma")
		sm := ir.NewSourceMgr()
		sm.Add(file, string(data))
		for i, c := range driver.Split(file, string(data), true) {
			if i == 0 {
				// The file's header: comments only.
				if err := commentsOnly(c); err != nil {
					return nil, err
				}
				continue
			}
			ex, err := parseOpExample(c, dialect, sm)
			if err != nil {
				return nil, err
			}
			for _, op := range ex.ops {
				byOp[op] = append(byOp[op], ex)
			}
		}
	}
	return byOp, nil
}

func commentsOnly(c driver.Chunk) error {
	for i, l := range strings.Split(c.Text, "\n") {
		if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "//") {
			return fmt.Errorf("%s:%d: IR before the first `// -----` line (an example starts with `// -----` and `%s op.name`)", c.File, c.FirstLine+i, exampleMarker)
		}
	}
	return nil
}

// parseOpExample checks one chunk: its `// example:` line names registered
// ops of the file's dialect, it parses and verifies, it holds every op it
// names, and what tmac prints for it parses and verifies again.
func parseOpExample(c driver.Chunk, dialect string, sm *ir.SourceMgr) (*opExample, error) {
	lines := strings.Split(c.Text, "\n")
	ex := &opExample{}
	markerLine := -1
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" {
			continue
		}
		if strings.HasPrefix(t, exampleMarker) {
			markerLine = i
			ex.ops = strings.Fields(strings.TrimPrefix(t, exampleMarker))
		}
		break
	}
	where := fmt.Sprintf("%s:%d", c.File, c.FirstLine)
	if markerLine < 0 || len(ex.ops) == 0 {
		return nil, fmt.Errorf("%s: an example must start with `%s op.name ...`", where, exampleMarker)
	}
	where = fmt.Sprintf("%s:%d", c.File, c.FirstLine+markerLine)
	for _, op := range ex.ops {
		def := ir.LookupOp(op)
		if def == nil {
			return nil, fmt.Errorf("%s: '%s' is not a registered op", where, op)
		}
		if def.Dialect() != dialect {
			return nil, fmt.Errorf("%s: '%s' belongs in the examples of the %s dialect", where, op, def.Dialect())
		}
	}
	mod, err := driver.ParseChunk(c, false)
	if err != nil {
		return nil, fmt.Errorf("the example of %s does not verify:\n%s", strings.Join(ex.ops, ", "), renderDiags(err, sm))
	}
	seen := map[string]bool{}
	ir.Walk(mod, func(o *ir.Operation) ir.WalkResult {
		seen[o.Name()] = true
		return ir.Advance
	})
	for _, op := range ex.ops {
		if !seen[op] {
			return nil, fmt.Errorf("%s: the example names '%s' but does not use it", where, op)
		}
	}
	printed := ir.Print(mod, ir.PrintOptions{})
	if _, err := driver.ParseChunk(driver.Chunk{File: "<printed example>", Text: printed, FirstLine: 1}, false); err != nil {
		return nil, fmt.Errorf("%s: tmac's printed form of the example does not parse back: %v\n%s", where, err, printed)
	}
	body := append(append([]string{}, lines[:markerLine]...), lines[markerLine+1:]...)
	ex.text = strings.Trim(strings.Join(body, "\n"), "\n") + "\n"
	return ex, nil
}

func renderDiags(err error, sm *ir.SourceMgr) string {
	var sb strings.Builder
	for _, d := range ir.AsDiagnostics(err) {
		sb.WriteString(d.Render(sm))
	}
	return strings.TrimRight(sb.String(), "\n")
}
