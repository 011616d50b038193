package ir

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/alecthomas/participle/v2/lexer"
)

// specLexer is the reference definition of the MLIR token set as a
// participle regular-expression lexer. The hand-written Scanner must agree
// with it token for token; it exists because the regexp lexer is several
// times too slow for large modules.
var specLexer = lexer.MustSimple([]lexer.SimpleRule{
	{Name: "Comment", Pattern: `//[^\n]*`},
	{Name: "Space", Pattern: `[ \t\r\n]+`},
	{Name: "Float", Pattern: `[0-9]+\.[0-9]*([eE][+-]?[0-9]+)?`},
	{Name: "Int", Pattern: `0x[0-9a-fA-F]+|[0-9]+`},
	{Name: "BareIdent", Pattern: `[a-zA-Z_][a-zA-Z0-9_$.]*`},
	{Name: "PercentIdent", Pattern: `%[a-zA-Z0-9_$.\-]+`},
	{Name: "CaretIdent", Pattern: `\^[a-zA-Z0-9_$.\-]+`},
	{Name: "HashIdent", Pattern: `#[a-zA-Z0-9_$.\-]+`},
	{Name: "BangIdent", Pattern: `![a-zA-Z0-9_$.\-]+`},
	{Name: "AtIdent", Pattern: `@("(\\.|[^"\\\n])*"|[a-zA-Z0-9_$.]+)`},
	{Name: "String", Pattern: `"(\\.|[^"\\\n])*"`},
	{Name: "Punct", Pattern: `\.\.\.|->|::|[(){}\[\]<>,:=+\-*?|]`},
})

func specTokens(t *testing.T, src string) []string {
	t.Helper()
	lx, err := specLexer.Lex("spec", strings.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	sym := lexer.SymbolsByRune(specLexer)
	var out []string
	for {
		tok, err := lx.Next()
		if err != nil {
			return append(out, "ERROR")
		}
		if tok.EOF() {
			return out
		}
		name := sym[tok.Type]
		if name == "Space" || name == "Comment" {
			continue
		}
		// "1..." is an integer followed by an ellipsis, not a float "1.".
		if name == "Float" && strings.HasSuffix(tok.Value, ".") && strings.HasPrefix(src[tok.Pos.Offset+len(tok.Value):], "..") {
			name, tok.Value = "Int", strings.TrimSuffix(tok.Value, ".")
			out = append(out, name+":"+tok.Value)
			lx, _ = specLexer.Lex("spec", strings.NewReader(src[tok.Pos.Offset+len(tok.Value):]))
			src = src[tok.Pos.Offset+len(tok.Value):]
			continue
		}
		out = append(out, name+":"+tok.Value)
	}
}

func scannerTokens(src string) []string {
	s := NewScanner(src)
	var out []string
	for {
		tok := s.Next()
		switch tok.Kind {
		case TokEOF:
			return out
		case TokError:
			return append(out, "ERROR")
		}
		out = append(out, tok.Kind.String()+":"+tok.Text)
	}
}

func TestScannerMatchesParticipleSpec(t *testing.T) {
	inputs := []string{
		`%0:2 = "foo.bar"(%a#1, %arg0) <{x = 1 : i64}> ({ ^bb0(%b: memref<128x64xf16, 3>): }) : (i32) -> (f32, !nvgpu.mbarrier.token)`,
		`func.func @"quoted sym"(%x: vector<4x[8]xf32>) -> tensor<?x4xf32> attributes {a = dense<[1.5, -2.0e-3]>, b = 0x7FC00000 : f32, c = "s\"q\0A"}`,
		`#map = affine_map<(d0) -> (d0 + 1)> // comment` + "\n" + `!t = !llvm.ptr<3> loc("f.tma":1:2)`,
		`scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x) -> (f32) { cf.br ^bb1(%y : i32) } @a::@b ... 1...`,
	}
	// Every lit test input is also checked.
	files, _ := filepath.Glob("../lit-tests/*/*.tma")
	for _, f := range files {
		if b, err := os.ReadFile(f); err == nil {
			inputs = append(inputs, string(b))
		}
	}
	for _, in := range inputs {
		want := specTokens(t, in)
		got := scannerTokens(in)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			for i := range got {
				if i >= len(want) || got[i] != want[i] {
					w := "<end>"
					if i < len(want) {
						w = want[i]
					}
					t.Errorf("token %d: scanner %q, spec %q (input %.60q)", i, got[i], w, in)
					break
				}
			}
			if len(got) < len(want) {
				t.Errorf("scanner stopped early at %d tokens of %d (input %.60q)", len(got), len(want), in)
			}
		}
	}
}

func TestParticipleLexerAdapter(t *testing.T) {
	lx, err := Lexer.(lexer.StringDefinition).LexString("a.tma", "%x = arith.addi %y")
	if err != nil {
		t.Fatal(err)
	}
	var vals []string
	for {
		tok, err := lx.Next()
		if err != nil {
			t.Fatal(err)
		}
		if tok.EOF() {
			break
		}
		vals = append(vals, tok.Value)
		if tok.Pos.Filename != "a.tma" || tok.Pos.Line != 1 {
			t.Errorf("bad position %v", tok.Pos)
		}
	}
	if strings.Join(vals, " ") != "%x = arith.addi %y" {
		t.Errorf("tokens %q", vals)
	}
}
