package server

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestEveryTestThePromisesTableNamesExists keeps CONTEXT.md's "What the
// server promises" table honest: each row names the tests that hold it, so a
// renamed or deleted test must take its name out of the row, or the row
// promises something nothing checks.
func TestEveryTestThePromisesTableNamesExists(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../CONTEXT.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	start := strings.Index(doc, "## What the server promises")
	if start < 0 {
		t.Fatal(`CONTEXT.md has no "## What the server promises" section`)
	}
	table := doc[start:]
	if end := strings.Index(table[len("## "):], "\n## "); end >= 0 {
		table = table[:end+len("## ")]
	}
	named := regexp.MustCompile("`((?:Test|Fuzz|Benchmark)[A-Za-z0-9_]+)`").FindAllStringSubmatch(table, -1)
	if len(named) < 20 {
		t.Fatalf("the promises table names %d tests; want the table's rows to name theirs", len(named))
	}
	defined := testFuncsInModule(t, "..")
	for _, m := range named {
		if !defined[m[1]] {
			t.Errorf("CONTEXT.md's promises table names %s, which no _test.go file in the module defines", m[1])
		}
	}
}

// testFuncsInModule is the name of every Test, Fuzz and Benchmark function
// declared in a _test.go file below root.
func testFuncsInModule(t *testing.T, root string) map[string]bool {
	t.Helper()
	decl := regexp.MustCompile(`(?m)^func ((?:Test|Fuzz|Benchmark)[A-Za-z0-9_]+)\(`)
	found := map[string]bool{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "var" || d.Name() == "dist") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, m := range decl.FindAllStringSubmatch(string(b), -1) {
			found[m[1]] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}
