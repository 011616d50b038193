package tune

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// Generator makes tune build's candidate programs from one parameterised
// program: a shell command template run once per combination of its
// parameters' values, so that the tile shape (BM, BN, BK), the cluster
// size or the split factor, which are the program's own and not
// attributes of its loop, are tuned together with the loop's stages and
// schedule.
type Generator struct {
	// Command is run with sh -c after {NAME} is replaced by the value of
	// each parameter and {out} by the path of the program to write. It
	// exits 0 when it wrote the program, ExitRefused when it refuses the
	// combination (a tile that does not fit the shape: the first line of
	// its standard error is the reason), anything else on failure.
	Command string  `json:"command"`
	Params  []Param `json:"params"`
	// Refused lists the combinations the command refused.
	Refused []Refusal `json:"refused,omitempty"`
}

// Param is a parameter of the command and the values to try.
type Param struct {
	Name   string   `json:"name"`
	Values []string `json:"values"`
}

// Refusal is a combination the command refused, and its reason.
type Refusal struct {
	Params map[string]string `json:"params"`
	Reason string            `json:"reason"`
}

// ExitRefused is the exit status with which a generator command refuses a
// combination (bench/gpu/gen_gemm.py's for a design that does not fit).
const ExitRefused = 3

// maxCombinations bounds the candidates one tune build generates.
const maxCombinations = 512

var (
	paramName  = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
	paramValue = regexp.MustCompile(`^[A-Za-z0-9._+-]+$`)
	paramUse   = regexp.MustCompile(`\{([a-z][a-z0-9_]*)\}`) // {NAME} in a command
)

// ParseParam parses a --param flag, NAME=V1,V2,... (duplicate values
// dropped, order kept). Names are lower case (a letter, then letters,
// digits, _); values are made of letters, digits and . _ + - (they become
// part of file names).
func ParseParam(s string) (Param, error) {
	name, list, ok := strings.Cut(s, "=")
	name = strings.TrimSpace(name)
	if !ok || !paramName.MatchString(name) || name == "out" {
		return Param{}, fmt.Errorf("--param '%s': give NAME=V1,V2,... with NAME a lower-case identifier other than 'out'", s)
	}
	p := Param{Name: name}
	seen := map[string]bool{}
	for _, v := range strings.Split(list, ",") {
		v = strings.TrimSpace(v)
		if !paramValue.MatchString(v) {
			return Param{}, fmt.Errorf("--param %s: value '%s' must be non-empty letters, digits, '.', '_', '+' or '-'", name, v)
		}
		if !seen[v] {
			seen[v] = true
			p.Values = append(p.Values, v)
		}
	}
	return p, nil
}

// check reports what is wrong with the generator before anything runs:
// every parameter named once and used in the command, the command writing
// {out}, not too many combinations.
func (g *Generator) check() error {
	if !strings.Contains(g.Command, "{out}") {
		return fmt.Errorf("--generate: the command must write the program to {out}")
	}
	if len(g.Params) == 0 {
		return fmt.Errorf("--generate needs at least one --param (NAME=V1,V2,...)")
	}
	n := 1
	seen := map[string]bool{}
	for _, p := range g.Params {
		if seen[p.Name] {
			return fmt.Errorf("--param %s is given twice", p.Name)
		}
		seen[p.Name] = true
		if !strings.Contains(g.Command, "{"+p.Name+"}") {
			return fmt.Errorf("--param %s: the command does not use {%s}", p.Name, p.Name)
		}
		n *= len(p.Values)
		if n > maxCombinations {
			return fmt.Errorf("--param: more than %d combinations of values", maxCombinations)
		}
	}
	for _, m := range paramUse.FindAllStringSubmatch(g.Command, -1) {
		if m[1] != "out" && !seen[m[1]] {
			return fmt.Errorf("--generate: the command uses {%s}, which no --param gives", m[1])
		}
	}
	return nil
}

// generated is one program the generator wrote.
type generated struct {
	name   string            // the combination as a file base name: bm128-bn256
	path   string            // where it was written
	params map[string]string // the combination
}

// combinations returns every combination of the parameters' values, the
// first parameter varying slowest.
func (g *Generator) combinations() [][]string {
	out := [][]string{{}}
	for _, p := range g.Params {
		var next [][]string
		for _, c := range out {
			for _, v := range p.Values {
				next = append(next, append(append([]string{}, c...), v))
			}
		}
		out = next
	}
	return out
}

// run runs the command for every combination, writing the programs into
// dir; a refused combination is recorded in g.Refused and reported on out.
func (g *Generator) run(dir string, out io.Writer) ([]*generated, error) {
	var progs []*generated
	for _, combo := range g.combinations() {
		params := map[string]string{}
		var parts []string
		cmd := g.Command
		for i, p := range g.Params {
			params[p.Name] = combo[i]
			parts = append(parts, p.Name+combo[i])
			cmd = strings.ReplaceAll(cmd, "{"+p.Name+"}", combo[i])
		}
		name := strings.Join(parts, "-")
		path := filepath.Join(dir, name+".tma")
		cmd = strings.ReplaceAll(cmd, "{out}", shellQuote(path))
		var stderr bytes.Buffer
		c := exec.Command("sh", "-c", cmd)
		c.Stderr = &stderr
		c.Stdout = io.Discard
		err := c.Run()
		var exit *exec.ExitError
		switch {
		case err == nil:
			if _, serr := os.Stat(path); serr != nil {
				return nil, fmt.Errorf("--generate: %s: the command exited 0 but wrote no program to {out}", name)
			}
			progs = append(progs, &generated{name: name, path: path, params: params})
			fmt.Fprintf(out, "generated %s\n", name)
		case errors.As(err, &exit) && exit.ExitCode() == ExitRefused:
			reason := firstLine(stderr.String())
			if reason == "" {
				reason = fmt.Sprintf("refused (exit status %d)", ExitRefused)
			}
			g.Refused = append(g.Refused, Refusal{Params: params, Reason: reason})
			fmt.Fprintf(out, "  refused  %s: %s\n", name, reason)
		default:
			return nil, fmt.Errorf("--generate: %s: %v: %s", name, err, firstLine(stderr.String()))
		}
	}
	return progs, nil
}

// shellQuote quotes s for sh.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}
