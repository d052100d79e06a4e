package localpg_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mangabookmark/mangabookmark/internal/citest"
	"github.com/mangabookmark/mangabookmark/store/localpg"
)

func TestTheLocalClusterInitialisesOnceAndKeepsItsDataAcrossRestarts(t *testing.T) {
	bin, err := localpg.FindBinaries()
	if err != nil {
		citest.Skip(t, "no PostgreSQL binaries here: %v", err)
	}
	parent, err := os.MkdirTemp("", "localpg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(parent) })
	// The cluster runs as the postgres user when we are root: it must be able to enter the parent.
	if err := os.Chmod(parent, 0o755); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(parent, "var", "pg")
	ctx := context.Background()

	exec := func(c *localpg.Cluster, sql string) {
		t.Helper()
		conn, err := pgx.Connect(ctx, c.URL("postgres"))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	c, err := localpg.Start(ctx, localpg.Options{Dir: dir, BinDir: bin})
	if err != nil {
		t.Fatal(err)
	}
	exec(c, `CREATE TABLE kept (v int); INSERT INTO kept VALUES (42)`)

	// The cluster trusts whoever connects: it must listen on no TCP address
	// (postmaster.pid's sixth line), only on its socket inside the 0700 data
	// directory, or any local user would be its superuser.
	pid, err := os.ReadFile(filepath.Join(dir, "postmaster.pid"))
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(string(pid), "\n"); len(lines) < 6 || strings.TrimSpace(lines[5]) != "" || strings.TrimSpace(lines[4]) != dir {
		t.Fatalf("the cluster must listen only on its socket in %s; postmaster.pid says:\n%s", dir, pid)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("the data directory (which holds the socket) must be 0700: %v %v", fi.Mode(), err)
	}

	// A second process on the same directory attaches and leaves the server running.
	attached, err := localpg.Start(ctx, localpg.Options{Dir: dir, BinDir: bin})
	if err != nil {
		t.Fatal(err)
	}
	if attached.Port() != c.Port() {
		t.Fatalf("attached to port %d, server on %d", attached.Port(), c.Port())
	}
	if err := attached.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	exec(c, `SELECT 1`) // still up

	if err := c.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	c, err = localpg.Start(ctx, localpg.Options{Dir: dir, BinDir: bin})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop(ctx)
	conn, err := pgx.Connect(ctx, c.URL("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var v int
	if err := conn.QueryRow(ctx, `SELECT v FROM kept`).Scan(&v); err != nil || v != 42 {
		t.Fatalf("data lost across restart: %d %v", v, err)
	}
}

func TestARootDataDirectoryThePostgresUserCannotEnterMovesTheClusterOutside(t *testing.T) {
	if os.Geteuid() != 0 {
		citest.Skip(t, "only root hands the cluster to the postgres user")
	}
	bin, err := localpg.FindBinaries()
	if err != nil {
		citest.Skip(t, "no PostgreSQL binaries here: %v", err)
	}
	closed := t.TempDir() // 0700, owned by root: a clone under /root
	rootDir, err := os.MkdirTemp("", "localpg-root-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(rootDir) })
	if err := os.Chmod(rootDir, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	opts := localpg.Options{Dir: filepath.Join(closed, "var", "pg"), BinDir: bin, RootDir: rootDir}
	c, err := localpg.Start(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, c.URL("postgres"))
	if err != nil {
		c.Stop(ctx)
		t.Fatal(err)
	}
	_, err = conn.Exec(ctx, `CREATE TABLE kept (v int)`)
	conn.Close(ctx)
	if err != nil {
		c.Stop(ctx)
		t.Fatal(err)
	}
	if !strings.Contains(c.URL("postgres"), url.QueryEscape(rootDir)) {
		t.Errorf("the cluster is not under %s: %s", rootDir, c.URL("postgres"))
	}
	if err := c.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	// The next start finds the same cluster again.
	c, err = localpg.Start(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop(ctx)
	conn, err = pgx.Connect(ctx, c.URL("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `SELECT v FROM kept`); err != nil {
		t.Fatalf("the moved cluster lost its data across a restart: %v", err)
	}
	// Where names the place Start chose, and Remove empties it (the
	// demo's banner and its end: issue 23, item 9).
	where, err := localpg.Where(opts)
	if err != nil || !strings.HasPrefix(where, rootDir+"/pg-") || !strings.Contains(c.URL("postgres"), url.QueryEscape(where)) {
		t.Errorf("Where says %q (%v); the cluster runs at %s", where, err, c.URL("postgres"))
	}
	conn.Close(ctx)
	if err := c.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := localpg.Remove(opts); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{where, where + ".lock"} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s is left after Remove (%v)", p, err)
		}
	}
}

// TestHelperStartsAClusterAndDies is not a test of its own: the orphan test
// runs it in a child process, which starts a cluster and exits without
// stopping it, as a server killed with SIGKILL would.
func TestHelperStartsAClusterAndDies(t *testing.T) {
	dir := os.Getenv("LOCALPG_HELPER_DIR")
	if dir == "" {
		t.Skip("run by TestAClusterADeadServerLeftRunningIsRestartedAndStoppedByTheNext")
	}
	if _, err := localpg.Start(context.Background(), localpg.Options{Dir: dir, BinDir: os.Getenv("LOCALPG_HELPER_BIN"), Server: "serve"}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	os.Exit(0)
}

func TestAClusterADeadServerLeftRunningIsRestartedAndStoppedByTheNext(t *testing.T) {
	bin, err := localpg.FindBinaries()
	if err != nil {
		citest.Skip(t, "no PostgreSQL binaries here: %v", err)
	}
	parent, err := os.MkdirTemp("", "localpg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(parent) })
	if err := os.Chmod(parent, 0o755); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(parent, "pg")
	helper := osexec.Command(os.Args[0], "-test.run=^TestHelperStartsAClusterAndDies$")
	helper.Env = append(os.Environ(), "LOCALPG_HELPER_DIR="+dir, "LOCALPG_HELPER_BIN="+bin)
	if out, err := helper.CombinedOutput(); err != nil {
		t.Fatalf("helper: %v\n%s", err, out)
	}
	pidFile := filepath.Join(dir, "postmaster.pid")
	if _, err := os.Stat(pidFile); err != nil {
		t.Fatalf("the dead server's cluster is not running: %v", err)
	}

	// The dead server's record is still in the lock file; its lock is
	// not, so the next server starts.
	ctx := context.Background()
	c, err := localpg.Start(ctx, localpg.Options{Dir: dir, BinDir: bin, Server: "serve"})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, c.URL("postgres"))
	if err != nil {
		c.Stop(ctx)
		t.Fatal(err)
	}
	conn.Close(ctx)
	if err := c.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(pidFile); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the cluster outlived the server that took it over (postmaster.pid: %v)", err)
	}
}

// A server owns the cluster it runs on (issue 22, item 9): a second server
// on the directory is refused with the first one's pid, a command beside it
// still attaches, and a server that finds a command holding the cluster
// waits for the command to end and then starts the cluster as its own.
func TestASecondServerIsRefusedAndACommandIsWaitedFor(t *testing.T) {
	bin, err := localpg.FindBinaries()
	if err != nil {
		citest.Skip(t, "no PostgreSQL binaries here: %v", err)
	}
	parent, err := os.MkdirTemp("", "localpg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(parent) })
	if err := os.Chmod(parent, 0o755); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(parent, "pg")
	ctx := context.Background()
	open := func(server string) (*localpg.Cluster, error) {
		return localpg.Start(ctx, localpg.Options{Dir: dir, BinDir: bin, Server: server})
	}

	first, err := open("serve")
	if err != nil {
		t.Fatal(err)
	}
	_, err = open("demo")
	var held *localpg.HeldError
	if !errors.As(err, &held) || held.PID != os.Getpid() || held.Server != "serve" {
		first.Stop(ctx)
		t.Fatalf("a second server on the cluster: %v, want a HeldError naming serve and pid %d", err, os.Getpid())
	}
	beside, err := open("")
	if err != nil {
		first.Stop(ctx)
		t.Fatalf("a command beside the server: %v", err)
	}
	beside.Stop(ctx)
	if err := first.Stop(ctx); err != nil {
		t.Fatal(err)
	}

	command, err := open("")
	if err != nil {
		t.Fatal(err)
	}
	const holds = 2 * time.Second
	began := time.Now()
	go func() {
		time.Sleep(holds)
		command.Stop(ctx)
	}()
	server, err := open("serve")
	if err != nil {
		t.Fatalf("a server after a command: %v", err)
	}
	defer server.Stop(ctx)
	if waited := time.Since(began); waited < holds {
		t.Fatalf("the server started after %s, while the command still held the cluster", waited)
	}
	conn, err := pgx.Connect(ctx, server.URL("postgres"))
	if err != nil {
		t.Fatalf("the server's cluster is not running: %v", err)
	}
	conn.Close(ctx)
}
