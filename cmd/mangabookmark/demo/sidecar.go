package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// demoClock is the demo's wall clock: real time plus a fast-forward the
// script moves on ("thirteen hours pass"), so a condition that needs
// ownerWindow behind it holds within minutes. Every part of the demo's
// server reads this clock (the Lanes, the notices, the pages); nothing else
// about time is faked.
type demoClock struct{ ahead atomic.Int64 }

func (c *demoClock) Now() time.Time { return time.Now().Add(time.Duration(c.ahead.Load())) }

// Skip moves the clock d ahead.
func (c *demoClock) Skip(d time.Duration) { c.ahead.Add(int64(d)) }

// chromiumPath is Debian's chromium package.
const chromiumPath = "/usr/bin/chromium"

// demoSidecar is a headless Chromium on one fixed loopback DevTools port, so
// it can be stopped and started again at the address BROWSER_WS_URL names.
type demoSidecar struct {
	port    int
	profile string

	mu  sync.Mutex
	cmd *exec.Cmd
}

// newDemoSidecar returns a sidecar when Chromium is installed, else nil.
func newDemoSidecar(dataDir string) (*demoSidecar, error) {
	if _, err := os.Stat(chromiumPath); err != nil {
		return nil, nil
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("demo: a port for the sidecar: %w", err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	_ = ln.Close()
	return &demoSidecar{port: port, profile: filepath.Join(dataDir, "chromium")}, nil
}

// WSURL is the sidecar's DevTools address (the browser route asks it for the
// current browser endpoint, so a restarted Chromium is found again).
func (s *demoSidecar) WSURL() string { return "ws://127.0.0.1:" + strconv.Itoa(s.port) }

// Start runs Chromium and waits until its DevTools port answers.
func (s *demoSidecar) Start(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		return nil
	}
	if err := os.MkdirAll(s.profile, 0o700); err != nil {
		return fmt.Errorf("demo: sidecar profile: %w", err)
	}
	cmd := exec.Command(chromiumPath,
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--remote-debugging-address=127.0.0.1", "--remote-debugging-port="+strconv.Itoa(s.port),
		"--user-data-dir="+s.profile, "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-dev-shm-usage", "about:blank")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // its helpers stop with it
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("demo: start the sidecar: %w", err)
	}
	s.cmd = cmd
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if s.answers() {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return fmt.Errorf("demo: the sidecar's DevTools did not answer on 127.0.0.1:%d within 20 s; another program may have taken the port, so start the demo again", s.port)
}

// answers reports whether a DevTools endpoint answers on the sidecar's
// port: the port was free when picked, but another program may have taken
// it since, and a bare connection would take that program for Chromium
// (issue 23, item 9). The timeout stops a stranger holding the dial.
func (s *demoSidecar) answers() bool {
	c := &http.Client{Timeout: 500 * time.Millisecond}
	resp, err := c.Get("http://127.0.0.1:" + strconv.Itoa(s.port) + "/json/version")
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	var v struct {
		WS string `json:"webSocketDebuggerUrl"`
	}
	return resp.StatusCode == http.StatusOK && json.NewDecoder(io.LimitReader(resp.Body, 1<<16)).Decode(&v) == nil && v.WS != ""
}

// Stop kills Chromium and its helper processes.
func (s *demoSidecar) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	_ = s.cmd.Wait()
	s.cmd = nil
}
