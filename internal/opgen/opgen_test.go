package opgen_test

import (
	"bytes"
	"os"
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
