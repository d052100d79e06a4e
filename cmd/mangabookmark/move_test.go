package main

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/mangabookmark/mangabookmark/internal/citest"
	"github.com/mangabookmark/mangabookmark/server"
	"github.com/mangabookmark/mangabookmark/store/localpg"
	"github.com/mangabookmark/mangabookmark/store/storetest"
)

// The README's move to another machine (issue 24, item 8), as the owner
// runs it, on the embedded cluster: `backup` while the old server runs,
// `restore` into a fresh DATA_DIR, and the new server recognises the
// userscript token made on the old one (token.key travelled) and answers
// the same Bookmarks. A second restore into the now full DATA_DIR is
// refused with one sentence and exit status 1, and changes nothing.
func TestTheREADMEsMoveToAnotherMachineKeepsTokensAndBookmarks(t *testing.T) {
	if _, err := localpg.FindBinaries(); err != nil {
		citest.Skip(t, "no PostgreSQL binaries here: %v", err)
	}
	_, bin := buildBinary(t)
	oldDir, newDir := storetest.ClusterDir(t, "mb-move-"), storetest.ClusterDir(t, "mb-move-")
	file := filepath.Join(t.TempDir(), "mb.backup")
	// No DATABASE_URL: the embedded cluster in DATA_DIR. No keys in the
	// environment: token.key is generated in DATA_DIR. No listing reads.
	env := func(dir string) []string {
		return []string{"DATA_DIR=" + dir, "DATABASE_URL=", "TOKEN_KEY=", "SESSION_KEY=", "LISTING_EVERY=0"}
	}

	old := startServer(t, []string{bin, "serve"}, env(oldDir)...)
	token := seedRunningServer(t, oldDir)
	want := bookmarksAnswer(t, old.addr, token)
	if !strings.Contains(want, "Backed Up Title") {
		t.Fatalf("the old server does not list the seeded Bookmark: %s", want)
	}
	if _, stderr, err := runBinary(bin, env(oldDir), "backup", file); err != nil {
		t.Fatalf("backup while the server runs: %v\n%s", err, stderr)
	}
	if err := old.stop(t, syscall.SIGTERM, false); err != nil {
		t.Fatalf("the old server's stop: %v\n%s", err, old.out.String())
	}

	if _, stderr, err := runBinary(bin, env(newDir), "restore", file); err != nil {
		t.Fatalf("restore into a fresh DATA_DIR: %v\n%s", err, stderr)
	}
	moved := startServer(t, []string{bin, "serve"}, env(newDir)...)
	if got := bookmarksAnswer(t, moved.addr, token); got != want {
		t.Errorf("GET /api/v1/bookmarks after the move:\n%s\nwant, as before it:\n%s", got, want)
	}

	stdout, stderr, err := runBinary(bin, env(newDir), "restore", file)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Errorf("a second restore exited %v, want status 1", err)
	}
	if stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "restore will not overwrite it") {
		t.Errorf("a second restore said %q on stdout and %q on stderr, want one refusing sentence", stdout, stderr)
	}
	if got := bookmarksAnswer(t, moved.addr, token); got != want {
		t.Errorf("the refused restore changed the Bookmarks:\n%s", got)
	}
}

// seedRunningServer seeds the server running on dataDir through its own
// database, attached to as a command beside it attaches, and returns a
// userscript token made under the token.key the server generated.
func seedRunningServer(t *testing.T, dataDir string) string {
	t.Helper()
	ctx := context.Background()
	cfg, err := server.LoadConfig(func(k string) string { return map[string]string{"DATA_DIR": dataDir}[k] })
	if err != nil {
		t.Fatal(err)
	}
	url, stop, err := server.OpenDatabase(ctx, cfg, server.NewLogger(io.Discard, 0))
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	return seedServer(t, ctx, url, dataDir)
}

// runBinary runs bin with args and env added, and returns what it printed.
func runBinary(bin string, env []string, args ...string) (stdout, stderr string, err error) {
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	var o, e lockedBuffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	return o.String(), e.String(), err
}

// bookmarksAnswer is GET /api/v1/bookmarks on addr for the token; a 200
// is required.
func bookmarksAnswer(t *testing.T, addr, token string) string {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, "http://"+addr+"/api/v1/bookmarks", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /api/v1/bookmarks with the token answered %d (%v): %s", resp.StatusCode, err, body)
	}
	return string(body)
}
