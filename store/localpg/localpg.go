// Package localpg runs the project-local PostgreSQL cluster that is the
// default database when DATABASE_URL is unset: found from the machine's
// PostgreSQL binaries, initialised once in a data directory, started with the
// server and stopped with it. PostgreSQL refuses to run as root, so a root
// process runs the cluster as the unprivileged "postgres" user.
package localpg

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// InstallHint is the one line printed when no PostgreSQL binaries exist and
// this process may not install them itself.
const InstallHint = "PostgreSQL binaries not found: install them with `sudo apt-get install -y postgresql` (or set DATABASE_URL)"

// NoInstallerHint is that line where no apt-get exists to install them, as in
// the container image (FROM scratch, issue 25): DATABASE_URL is the only way.
const NoInstallerHint = "DATABASE_URL is unset and this machine has no PostgreSQL for the embedded database: set DATABASE_URL to a postgres:// URL"

// binGlobs are where Debian-like systems keep the server binaries (not on PATH).
var binGlobs = []string{"/usr/lib/postgresql/*/bin", "/usr/local/pgsql/bin", "/usr/pgsql-*/bin"}

// FindBinaries returns the newest directory holding initdb, pg_ctl and postgres.
func FindBinaries() (string, error) {
	var dirs []string
	for _, g := range binGlobs {
		m, _ := filepath.Glob(g)
		dirs = append(dirs, m...)
	}
	if p, err := exec.LookPath("pg_ctl"); err == nil {
		dirs = append(dirs, filepath.Dir(p))
	}
	sort.Slice(dirs, func(i, j int) bool { return versionOf(dirs[i]) > versionOf(dirs[j]) })
	for _, d := range dirs {
		if isExec(filepath.Join(d, "initdb")) && isExec(filepath.Join(d, "pg_ctl")) && isExec(filepath.Join(d, "postgres")) {
			return d, nil
		}
	}
	return "", errors.New(InstallHint)
}

// FindClient returns the newest PostgreSQL client program name (pg_dump,
// pg_restore) from the same places as the server binaries, then PATH: a
// dump must be made by a pg_dump at least as new as the server, so the
// newest wins.
func FindClient(name string) (string, error) {
	var dirs []string
	for _, g := range binGlobs {
		m, _ := filepath.Glob(g)
		dirs = append(dirs, m...)
	}
	sort.Slice(dirs, func(i, j int) bool { return versionOf(dirs[i]) > versionOf(dirs[j]) })
	for _, d := range dirs {
		if p := filepath.Join(d, name); isExec(p) {
			return p, nil
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("%s not found: install the PostgreSQL client with `sudo apt-get install -y postgresql-client`", name)
}

func versionOf(dir string) int {
	for _, part := range strings.Split(dir, string(filepath.Separator)) {
		if n, err := strconv.Atoi(strings.TrimPrefix(part, "pgsql-")); err == nil {
			return n
		}
	}
	return 0
}

func isExec(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

// EnsureBinaries finds the binaries and, when none exist and this process is
// root on a machine with apt-get, installs Debian's postgresql package.
func EnsureBinaries(ctx context.Context, log *slog.Logger) (string, error) {
	if d, err := FindBinaries(); err == nil {
		return d, nil
	}
	apt, err := exec.LookPath("apt-get")
	if err != nil {
		return "", errors.New(NoInstallerHint)
	}
	if os.Geteuid() != 0 {
		return "", errors.New(InstallHint)
	}
	log.Info("installing PostgreSQL from the distribution's packages", "package", "postgresql")
	env := append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
	for _, args := range [][]string{{"update", "-qq"}, {"install", "-y", "-qq", "--no-install-recommends", "postgresql"}} {
		cmd := exec.CommandContext(ctx, apt, args...)
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("localpg: apt-get %s: %w: %s", args[0], err, lastLine(out))
		}
	}
	return FindBinaries()
}

// Options configure a cluster.
type Options struct {
	Dir    string // data directory; created when missing
	BinDir string // from FindBinaries/EnsureBinaries
	Logger *slog.Logger
	// RootDir is where a root process keeps the cluster when the postgres
	// user cannot enter Dir's parent (a clone under /root): RootDir/pg-<hash
	// of Dir>. Default /var/lib/mangabookmark.
	RootDir string
	// Server names the server starting the cluster ("serve", "demo"); empty
	// for a command beside a server (notices, link), which attaches to a
	// running cluster. A server must own the cluster it runs on: attached,
	// it would lose the cluster when the owner stopped (issue 22, item 9).
	// So while another server holds the lock, Start refuses with a
	// *HeldError; while a command holds it, Start waits for it to end.
	Server string
}

// HeldError is a server's start refused because another server runs the
// cluster in Dir: PID is that process, Server its name.
type HeldError struct {
	PID    int
	Server string
	Dir    string
}

func (e *HeldError) Error() string {
	return fmt.Sprintf("localpg: another %s (pid %d) runs the cluster in %s", e.Server, e.PID, e.Dir)
}

// Cluster is a running local PostgreSQL.
type Cluster struct {
	dir, bin string
	port     int
	cred     *syscall.Credential
	owned    bool // false when we attached to a cluster another process started
	lock     *os.File
	log      *slog.Logger
}

// Start initialises the data directory if needed and starts the server with
// its only socket inside the data directory (no TCP port). The process that
// starts the cluster holds DIR.lock until Stop. If a server is already
// running on the directory and another process of ours holds the lock, Start
// attaches to it and Stop leaves it running, unless the caller is a server
// itself (Options.Server); if nobody holds the lock, the server was left by a
// process that died, and Start restarts it as its own.
func Start(ctx context.Context, o Options) (*Cluster, error) {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	dir, err := filepath.Abs(o.Dir)
	if err != nil {
		return nil, fmt.Errorf("localpg: data directory %q: %w", o.Dir, err)
	}
	c := &Cluster{dir: dir, bin: o.BinDir, log: log, owned: true}
	if os.Geteuid() == 0 {
		if c.cred, err = unprivileged(); err != nil {
			return nil, err
		}
		if alt, p := relocated(dir, o.RootDir); alt != "" {
			log.Info("the postgres user cannot enter the data directory; the cluster lives outside it", "data_dir", dir, "closed", p, "dir", alt)
			dir = alt
			c.dir = alt
			if p := untraversable(filepath.Dir(dir)); p != "" {
				return nil, fmt.Errorf("localpg: neither the data directory nor %s can be entered by the postgres user (%s is closed); set DATA_DIR to a directory it can reach", dir, p)
			}
		}
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return nil, fmt.Errorf("localpg: create %s: %w", filepath.Dir(dir), err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("localpg: create %s: %w", dir, err)
	}
	if c.cred != nil {
		if err := os.Chown(dir, int(c.cred.Uid), int(c.cred.Gid)); err != nil {
			return nil, fmt.Errorf("localpg: chown %s: %w", dir, err)
		}
	}
	if c.lock, err = c.ownOrAttach(ctx, o.Server); err != nil {
		return nil, err
	}
	if c.lock == nil {
		return c, nil // attached
	}
	if err := c.start(ctx); err != nil {
		c.lock.Close()
		return nil, err
	}
	return c, nil
}

// Where is the directory the cluster of o.Dir lives in, as Start places it:
// o.Dir itself, or, for a root process whose postgres user cannot enter
// o.Dir, a directory under RootDir. What is said of the cluster's place,
// and what removes it, reads this (issue 23, item 9: the demo named var/demo
// while as root its cluster lived under /var/lib/mangabookmark).
func Where(o Options) (string, error) {
	dir, err := filepath.Abs(o.Dir)
	if err != nil {
		return "", fmt.Errorf("localpg: data directory %q: %w", o.Dir, err)
	}
	if os.Geteuid() == 0 {
		if alt, _ := relocated(dir, o.RootDir); alt != "" {
			return alt, nil
		}
	}
	return dir, nil
}

// relocated is where a root process keeps the cluster of dir when the
// postgres user cannot enter dir's parent (closed is the directory that
// shuts it out), or "" when dir itself will do. `make run` as root in a
// clone under /root must still work: the cluster moves to a directory the
// postgres user can reach, named after the data directory so restarts find
// it again.
func relocated(dir, rootDir string) (alt, closed string) {
	closed = untraversable(filepath.Dir(dir))
	if closed == "" {
		return "", ""
	}
	return movedTo(dir, rootDir), closed
}

// movedTo is the directory under rootDir the cluster of dir moves to.
func movedTo(dir, rootDir string) string {
	h := sha256.Sum256([]byte(dir))
	return filepath.Join(cmp.Or(rootDir, "/var/lib/mangabookmark"), "pg-"+hex.EncodeToString(h[:6]))
}

// Remove deletes the cluster of o and its lock file wherever Start may have
// placed them: o.Dir and, for a root process, the directory it moves to
// when o.Dir is closed, whether or not it is closed now. The cluster must
// be stopped.
func Remove(o Options) error {
	dir, err := filepath.Abs(o.Dir)
	if err != nil {
		return fmt.Errorf("localpg: data directory %q: %w", o.Dir, err)
	}
	dirs := []string{dir}
	if os.Geteuid() == 0 {
		dirs = append(dirs, movedTo(dir, o.RootDir))
	}
	for _, d := range dirs {
		if err := os.RemoveAll(d); err != nil {
			return fmt.Errorf("localpg: remove %s: %w", d, err)
		}
		if err := os.Remove(d + ".lock"); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("localpg: remove %s.lock: %w", d, err)
		}
	}
	return nil
}

// start runs, holding the lock, what Start does for the process that owns
// the cluster.
func (c *Cluster) start(ctx context.Context) error {
	dir, log := c.dir, c.log
	if port, ok := c.runningPort(ctx); ok {
		// Nobody holds the lock: a server of ours died and left the cluster
		// running. Stop it, so this one starts it with its own options and
		// stops it when it ends.
		log.Warn("stopping the local PostgreSQL cluster a previous run left running", "dir", dir, "socket_port", port)
		if err := c.stop(ctx); err != nil {
			return err
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "PG_VERSION")); errors.Is(err, os.ErrNotExist) {
		log.Info("initialising the local PostgreSQL cluster", "dir", dir)
		if out, err := c.run(ctx, "initdb", "-D", dir, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8", "--no-instructions"); err != nil {
			return fmt.Errorf("localpg: initdb: %w: %s", err, lastLine(out))
		}
	}
	// No TCP: the cluster trusts whoever connects, so only its Unix socket,
	// inside the 0700 data directory, lets anyone in — the user that runs
	// it (and root). On a loopback port any local user would be superuser.
	if len(filepath.Join(dir, socketName)) > maxSocketPath {
		return fmt.Errorf("localpg: the data directory %s is too long for PostgreSQL's socket path (at most %d characters); set DATA_DIR to a shorter path", dir, maxSocketPath-len(socketName)-1)
	}
	c.port = socketPort
	// pg_ctl hands -o to a shell: quote the directory.
	opts := fmt.Sprintf("-c listen_addresses='' -p %d -k '%s'", c.port, strings.ReplaceAll(dir, "'", `'\''`))
	if out, err := c.run(ctx, "pg_ctl", "start", "-D", dir, "-w", "-t", "60", "-s", "-l", filepath.Join(dir, "server.log"), "-o", opts); err != nil {
		return fmt.Errorf("localpg: start: %w: %s (see %s)", err, lastLine(out), filepath.Join(dir, "server.log"))
	}
	// The socket's name carries the port number, but no TCP port is open:
	// the line names the socket, never a port someone could try to reach.
	log.Info("local PostgreSQL cluster started (no TCP port)", "dir", dir, "socket", filepath.Join(dir, socketName))
	return nil
}

// The socket is DIR/.s.PGSQL.5432; a Unix socket path holds at most 107 bytes.
const (
	socketPort    = 5432
	socketName    = ".s.PGSQL.5432"
	maxSocketPath = 107
)

// ownOrAttach takes DIR.lock, writes this process into it and returns it.
// While another process of ours holds it, a command (server "") waits for
// that process's cluster to run and attaches to it (returning a nil lock);
// a server refuses when the holder is a server and otherwise waits for the
// lock (Options.Server).
func (c *Cluster) ownOrAttach(ctx context.Context, server string) (*os.File, error) {
	path := c.dir + ".lock"
	deadline := time.Now().Add(60 * time.Second)
	for {
		lock, err := lockFile(path)
		if err != nil {
			return nil, fmt.Errorf("localpg: %w", err)
		}
		if lock != nil {
			if err := writeHolder(lock, server); err != nil {
				lock.Close()
				return nil, fmt.Errorf("localpg: %s: %w", path, err)
			}
			return lock, nil
		}
		pid, holder := readHolder(path)
		if server != "" && holder != "" {
			return nil, &HeldError{PID: pid, Server: holder, Dir: c.dir}
		}
		if server == "" {
			if port, ok := c.runningPort(ctx); ok {
				c.port, c.owned = port, false
				c.log.Info("attached to the local PostgreSQL cluster already running", "dir", c.dir, "port", port)
				return nil, nil
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			if server != "" {
				return nil, fmt.Errorf("localpg: another process%s has held %s for a minute; stop it first", pidOf(pid), path)
			}
			return nil, fmt.Errorf("localpg: another process holds %s but its cluster is not running", path)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// writeHolder records in the lock file who holds it: "PID SERVER", "-" for
// a command. A record left by a process that died is harmless: the next
// holder's lock is free (the flock ended with that process) and it writes
// its own.
func writeHolder(lock *os.File, server string) error {
	if err := lock.Truncate(0); err != nil {
		return err
	}
	_, err := lock.WriteAt([]byte(fmt.Sprintf("%d %s\n", os.Getpid(), cmp.Or(server, "-"))), 0)
	return err
}

// pidOf is " (pid N)", or "" when the holder's record gave none (one
// written by an older version, or not yet written).
func pidOf(pid int) string {
	if pid <= 0 {
		return ""
	}
	return fmt.Sprintf(" (pid %d)", pid)
}

// readHolder reads the lock file's holder: its pid, and its server name,
// "" for a command or a record not written yet.
func readHolder(path string) (pid int, server string) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, ""
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return 0, ""
	}
	pid, _ = strconv.Atoi(f[0])
	if f[1] == "-" {
		return pid, ""
	}
	return pid, f[1]
}

// lockFile takes an exclusive flock on path without waiting: nil, nil when
// another process holds it. The lock ends when the file is closed or the
// process dies.
func lockFile(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, nil
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return f, nil
}

// URL is the connection string for database db on the cluster (its socket).
func (c *Cluster) URL(db string) string {
	q := url.Values{"host": {c.dir}, "port": {strconv.Itoa(c.port)}, "sslmode": {"disable"}}
	return (&url.URL{Scheme: "postgres", User: url.User("postgres"), Path: "/" + db, RawQuery: q.Encode()}).String()
}

// Port is the port that names the cluster's socket.
func (c *Cluster) Port() int { return c.port }

// Stop stops a cluster this process started (fast shutdown, waiting for it).
func (c *Cluster) Stop(ctx context.Context) error {
	if !c.owned {
		return nil
	}
	if err := c.stop(ctx); err != nil {
		return err
	}
	if c.lock != nil {
		c.lock.Close()
		c.lock = nil
	}
	return nil
}

func (c *Cluster) stop(ctx context.Context) error {
	if out, err := c.run(ctx, "pg_ctl", "stop", "-D", c.dir, "-m", "fast", "-w", "-s"); err != nil {
		return fmt.Errorf("localpg: stop: %w: %s", err, lastLine(out))
	}
	c.log.Info("local PostgreSQL cluster stopped", "dir", c.dir)
	return nil
}

// runningPort reports the port of a server already running on the directory.
func (c *Cluster) runningPort(ctx context.Context) (int, bool) {
	if _, err := c.run(ctx, "pg_ctl", "status", "-D", c.dir); err != nil {
		return 0, false
	}
	b, err := os.ReadFile(filepath.Join(c.dir, "postmaster.pid"))
	if err != nil {
		return 0, false
	}
	lines := strings.Split(string(b), "\n")
	if len(lines) < 4 {
		return 0, false
	}
	port, err := strconv.Atoi(strings.TrimSpace(lines[3]))
	return port, err == nil
}

func (c *Cluster) run(ctx context.Context, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, filepath.Join(c.bin, name), args...)
	cmd.Dir = c.dir
	cmd.Env = []string{"PATH=/usr/bin:/bin", "LC_ALL=C.UTF-8", "TZ=UTC"}
	// The server must outlive a Ctrl-C sent to our process group: we stop it ourselves.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: c.cred}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	return out.Bytes(), err
}

// unprivileged is the credential the cluster runs under when we are root.
func unprivileged() (*syscall.Credential, error) {
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, errors.New("localpg: running as root needs the \"postgres\" system user (created by the postgresql package) to own the cluster")
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// untraversable returns the first directory on the path to dir (inclusive)
// that others cannot enter, or "" when the postgres user can reach dir.
func untraversable(dir string) string {
	for d := dir; ; d = filepath.Dir(d) {
		if fi, err := os.Stat(d); err == nil && fi.Mode().Perm()&0o001 == 0 {
			return d
		}
		if d == filepath.Dir(d) {
			return ""
		}
	}
}

func lastLine(b []byte) string {
	s := strings.TrimSpace(string(b))
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return s
}

// Existing are the servers a machine may already run (tried in order by the
// test harness before it starts a cluster of its own).
var Existing = []string{
	"postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable",
	"postgres://postgres@:5432/postgres?host=/var/run/postgresql&sslmode=disable",
}

// Probe returns the first of urls whose server answers, or "".
func Probe(ctx context.Context, urls []string, ping func(ctx context.Context, url string) error) string {
	for _, u := range urls {
		c, cancel := context.WithTimeout(ctx, 2*time.Second)
		err := ping(c, u)
		cancel()
		if err == nil {
			return u
		}
	}
	return ""
}
