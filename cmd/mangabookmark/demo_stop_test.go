package main

import (
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/mangabookmark/mangabookmark/internal/citest"
)

// buildBinary builds the command once for a test, as `make` does.
func buildBinary(t *testing.T) (root, bin string) {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	bin = filepath.Join(t.TempDir(), "mangabookmark")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return root, bin
}

// Ctrl-C ends `make demo` as a stop (issue 23, item 9): no failed recipe,
// the server shut down in order, and the demo's data — its cluster too,
// which as root lives outside DATA_DIR — removed, as --keep was not given.
func TestCtrlCEndsMakeDemoAndRemovesItsData(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		citest.Skip(t, "no make on PATH")
	}
	root, bin := buildBinary(t)
	dataDir := t.TempDir()
	out, err := stopBySignal(t, []string{"make", "-C", root, "demo", "BIN=" + bin}, syscall.SIGINT, true, "DATA_DIR="+dataDir)
	if err != nil && !diedOf(err, syscall.SIGINT) {
		t.Errorf("exit: %v, want status 0", err)
	}
	if strings.Contains(out, "***") || strings.Contains(out, "Error 1") {
		t.Errorf("make reported a failed recipe")
	}
	if !strings.Contains(out, `msg="lanes stopped"`) {
		t.Errorf("the server did not shut down in order")
	}
	where := ""
	for line := range strings.Lines(out) {
		if _, rest, ok := strings.Cut(line, "the demo's own cluster in "); ok {
			where, _, _ = strings.Cut(rest, ", removed when the demo ends")
		}
	}
	if where == "" {
		t.Errorf("the guide does not say where the demo's cluster is")
	}
	for _, p := range []string{where, filepath.Join(dataDir, "demo")} {
		if _, err := os.Stat(p); p != "" && !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s is left after Ctrl-C (%v)", p, err)
		}
	}
	if t.Failed() {
		t.Logf("output:\n%s", out)
	}
}

// A second demo beside a first (issue 23, item 9) is refused in one
// sentence, exits non-zero, and leaves the first one's data alone: on the
// first one's address, and on a free address but the first one's DATA_DIR.
// Before, it wiped DATA_DIR/demo, which the first one's cluster ran in.
func TestASecondDemoIsRefusedInOneSentence(t *testing.T) {
	_, bin := buildBinary(t)
	root, _ := filepath.Abs(filepath.Join("..", ".."))
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	free := freeAddr(t)

	// The first demo's DATA_DIR: its data, and its lock held.
	dataDir := t.TempDir()
	marker := filepath.Join(dataDir, "demo", "first-demo")
	if err := os.MkdirAll(filepath.Dir(marker), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(marker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	lock, err := os.OpenFile(filepath.Join(dataDir, "demo.lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if _, err := lock.WriteString("4242\n"); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, addr, want string
	}{
		{"on a busy address", busy.Addr().String(), "mangabookmark: LISTEN_ADDR: cannot listen on " + busy.Addr().String() + ": another program, perhaps another mangabookmark server or demo, listens there; stop it or set LISTEN_ADDR to a free address\n"},
		{"on the first one's DATA_DIR", free, "mangabookmark: demo: another demo (pid 4242) runs on DATA_DIR " + dataDir + "; stop it first, or give this one its own DATA_DIR and LISTEN_ADDR\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.Command(bin, "demo")
			cmd.Dir = root
			cmd.Env = append(os.Environ(), "LISTEN_ADDR="+c.addr, "DATA_DIR="+dataDir)
			var stdout, stderr lockedBuffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 1 {
				t.Errorf("exit: %v, want status 1", err)
			}
			if stderr.String() != c.want || stdout.String() != "" {
				t.Errorf("said\n%q on stderr and %q on stdout, want\n%q", stderr.String(), stdout.String(), c.want)
			}
			if _, err := os.Stat(marker); err != nil {
				t.Errorf("the first demo's data is gone: %v", err)
			}
		})
	}
}

// freeAddr is a loopback address nobody listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
