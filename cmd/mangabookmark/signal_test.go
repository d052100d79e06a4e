package main

import (
	"bytes"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mangabookmark/mangabookmark/internal/citest"
	"github.com/mangabookmark/mangabookmark/store/storetest"
)

// lockedBuffer is a process's output, written by its pipes' goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// A Ctrl-C or a SIGTERM ends serve as a stop, not a crash (issue 22, item
// 10): the server shuts down, logs no error, and exits 0; under `make run`,
// make reports no failed recipe. The Ctrl-C goes to the whole process group,
// as a terminal sends it.
func TestASignalStopsServeCleanly(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		citest.Skip(t, "no make on PATH")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "mangabookmark")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cases := []struct {
		name    string
		command []string
		sig     syscall.Signal
		group   bool
	}{
		{"Ctrl-C on make run", []string{"make", "-C", root, "run", "BIN=" + bin}, syscall.SIGINT, true},
		{"SIGINT to serve", []string{bin, "serve"}, syscall.SIGINT, false},
		{"SIGTERM to serve", []string{bin, "serve"}, syscall.SIGTERM, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := stopBySignal(t, c.command, c.sig, c.group)
			if err != nil && !(c.group && diedOf(err, c.sig)) {
				// make, once its recipe has ended, may honour the Ctrl-C
				// by ending itself with it; a failed recipe is what it
				// must not report.
				t.Errorf("exit: %v, want status 0", err)
			}
			if strings.Contains(out, "level=ERROR") || strings.Contains(out, "***") {
				t.Errorf("a clean stop reported an error")
			}
			if !strings.Contains(out, `msg="lanes stopped"`) {
				t.Errorf("the server did not shut down in order")
			}
			if t.Failed() {
				t.Logf("output:\n%s", out)
			}
		})
	}
}

// diedOf reports whether err is an exit by signal sig.
func diedOf(err error, sig syscall.Signal) bool {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == sig
}

// stopBySignal runs command as a server on a fresh database, waits until it
// answers /healthz, sends sig (to its process group when group) and returns
// its output and exit.
func stopBySignal(t *testing.T, command []string, sig syscall.Signal, group bool, env ...string) (string, error) {
	t.Helper()
	s := startServer(t, command, append([]string{"DATABASE_URL=" + storetest.URL(t), "DATA_DIR=" + t.TempDir()}, env...)...)
	err := s.stop(t, sig, group)
	return s.out.String(), err
}

// serverProcess is a server started by startServer.
type serverProcess struct {
	addr   string // LISTEN_ADDR, answering /healthz
	pid    int
	out    lockedBuffer
	exited chan struct{}
	err    error // the exit, once exited is closed
}

// startServer runs command, a server, on a free loopback LISTEN_ADDR in its
// own process group with env added (the last of a name wins), and returns
// once it answers /healthz. If the test ends with it still running, it is
// stopped as an owner would, by SIGTERM, so an embedded cluster stops with
// it; SIGKILL only if that fails.
func startServer(t *testing.T, command []string, env ...string) *serverProcess {
	t.Helper()
	s := &serverProcess{addr: freeAddr(t), exited: make(chan struct{})}
	cmd := exec.Command(command[0], command[1:]...)
	cmd.Env = append(os.Environ(), "LISTEN_ADDR="+s.addr, "LOG_LEVEL=info")
	cmd.Env = append(cmd.Env, env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Stdout, cmd.Stderr = &s.out, &s.out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s.pid = cmd.Process.Pid
	go func() { s.err = cmd.Wait(); close(s.exited) }()
	t.Cleanup(func() {
		select {
		case <-s.exited:
		default:
			if s.stop(t, syscall.SIGTERM, true) != nil {
				t.Logf("server output:\n%s", s.out.String())
			}
		}
	})
	for deadline := time.Now().Add(3 * time.Minute); ; time.Sleep(100 * time.Millisecond) {
		if resp, err := http.Get("http://" + s.addr + "/healthz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s
			}
		}
		select {
		case <-s.exited:
			t.Fatalf("the server stopped before it served: %v\n%s", s.err, s.out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server never answered /healthz:\n%s", s.out.String())
		}
	}
}

// stop sends sig (to the process group when group) and returns the exit;
// a server still running a minute later is killed and fails t.
func (s *serverProcess) stop(t *testing.T, sig syscall.Signal, group bool) error {
	t.Helper()
	pid := s.pid
	if group {
		pid = -pid
	}
	if err := syscall.Kill(pid, sig); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.exited:
		return s.err
	case <-time.After(60 * time.Second):
		_ = syscall.Kill(-s.pid, syscall.SIGKILL)
		<-s.exited
		t.Errorf("still running a minute after %v:\n%s", sig, s.out.String())
		return s.err
	}
}
