package opgen_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	_ "github.com/tmac-dev/tmac/dialects/all"
	"github.com/tmac-dev/tmac/internal/opgen"
)

// TestGeneratedFilesCurrent fails when a dialect's ops_gen.go differs from
// what the registry generates (run `make generate`), or when a generated
// file has no dialect any more.
func TestGeneratedFilesCurrent(t *testing.T) {
	files, err := opgen.All()
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range files {
		got, err := os.ReadFile(filepath.Join("..", "..", p))
		if err != nil {
			t.Errorf("%s: %v (run make generate)", p, err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is out of date: run make generate", p)
		}
	}
	stale, _ := filepath.Glob(filepath.Join("..", "..", "dialects", "*", opgen.FileName))
	for _, p := range stale {
		rel, _ := filepath.Rel(filepath.Join("..", ".."), p)
		if _, ok := files[filepath.ToSlash(rel)]; !ok {
			t.Errorf("%s belongs to no registered dialect: delete it or run make generate", rel)
		}
	}
}

// TestGeneratorBuilds fails when the generator cannot build without the
// generated files (-tags opgen leaves them out): a dialect's hand-written
// code must not use another dialect's generated constants, or `make
// generate` stops working as soon as a constant changes.
func TestGeneratorBuilds(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the generator")
	}
	cmd := exec.Command("go", "build", "-tags", "opgen", "-o", os.DevNull, "./cmd/opgen")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build -tags opgen ./internal/opgen/cmd/opgen: %v\n%s", err, out)
	}
}
