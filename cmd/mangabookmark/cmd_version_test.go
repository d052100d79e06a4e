package main

import (
	"context"
	"io"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestVersionPrintsTheVersionTheCommitAndTheBuildDate(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"mangabookmark", "version"}, {"mangabookmark", "--version"}} {
		var out strings.Builder
		if err := run(context.Background(), args, func(string) string { return "" }, nil, &out, io.Discard); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		// A test binary records no release: it says so in words a reader
		// understands rather than printing empty fields.
		want := "mangabookmark dev\ncommit  unknown\nbuilt   unknown\ngo      " + runtime.Version() + "\n"
		if out.String() != want {
			t.Fatalf("%v printed\n%s\nwant\n%s", args, out.String(), want)
		}
	}
}

func TestVersionIsInTheHelp(t *testing.T) {
	t.Parallel()
	var out strings.Builder
	if err := run(context.Background(), []string{"mangabookmark", "help"}, func(string) string { return "" }, nil, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "  version  print the version") {
		t.Fatalf("help does not name version:\n%s", out.String())
	}
}

// The release build's command line (make dist) sets the three variables by
// their full names; a rename would silently leave a release saying "dev".
func TestAReleaseBuildSaysWhatTheLinkerWasGiven(t *testing.T) {
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "mangabookmark")
	const pkg = "github.com/mangabookmark/mangabookmark/internal/version"
	ldflags := "-X " + pkg + ".version=v1.2.3 -X " + pkg + ".commit=abc1234 -X " + pkg + ".date=2026-12-02T00:00:00Z"
	if out, err := exec.Command("go", "build", "-ldflags", ldflags, "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "version").CombinedOutput()
	if err != nil {
		t.Fatalf("%s version: %v\n%s", bin, err, out)
	}
	want := "mangabookmark v1.2.3\ncommit  abc1234\nbuilt   2026-12-02T00:00:00Z\n"
	if !strings.HasPrefix(string(out), want) {
		t.Fatalf("printed\n%s\nwant it to start with\n%s", out, want)
	}
}
