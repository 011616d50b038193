// Package testutil holds the helpers that the tests of several packages
// share: parsing a module (with every dialect registered) and reading test
// files and directories.
package testutil

import (
	"os"
	"strings"
	"testing"

	_ "github.com/tmac-dev/tmac/dialects/all"
	"github.com/tmac-dev/tmac/ir"
)

// Parse parses and verifies a module, failing the test on an error.
func Parse(t testing.TB, src string) *ir.Operation {
	t.Helper()
	return ParseNamed(t, "t.mlir", src)
}

// ParseNamed is Parse with the file name the locations carry.
func ParseNamed(t testing.TB, file, src string) *ir.Operation {
	t.Helper()
	m, err := ir.Parse(file, src, ir.ParseOptions{})
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	if err := ir.VerifyModule(m); err != nil {
		t.Fatalf("verify: %v", err)
	}
	return m
}

// ParseFile reads the module at path (a repository program) and parses
// and verifies it as tmac does; it returns the module and its text.
func ParseFile(t testing.TB, path string) (*ir.Operation, string) {
	t.Helper()
	text := ReadFile(t, path)
	return ParseNamed(t, path, text), text
}

// ReadFile returns the contents of the file at path.
func ReadFile(t testing.TB, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// DirNames returns the names of the entries of dir, sorted, separated by
// spaces ("" when dir cannot be read).
func DirNames(dir string) string {
	ents, _ := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return strings.Join(names, " ")
}
