// Package chromiumtest starts a headless Chromium for tests: the browser
// sidecar stand-in of the adapters' browser route and the real browser of
// the handlers' end-to-end test.
package chromiumtest

import (
	"bufio"
	"os"
	"os/exec"
	"regexp"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mangabookmark/mangabookmark/internal/citest"
)

// Path is Debian's chromium package.
const Path = "/usr/bin/chromium"

var devtoolsLine = regexp.MustCompile(`DevTools listening on (ws://\S+)`)

// Browser is one running Chromium.
type Browser struct {
	// WSURL is its DevTools websocket address.
	WSURL string
	cmd   *exec.Cmd
	once  sync.Once
}

// Start runs a headless Chromium on a loopback debugging port, with args
// added to the usual flags, and stops it when the test ends. Without the
// binary the test is skipped, unless CI=true, where that is a failure.
func Start(t testing.TB, args ...string) *Browser {
	t.Helper()
	if _, err := os.Stat(Path); err != nil {
		citest.Skip(t, "no %s: %v", Path, err)
	}
	// Not t.TempDir: Chromium's helpers may still write there for a moment
	// after the kill, which fails TempDir's own cleanup.
	profile, err := os.MkdirTemp("", "mangabookmark-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	flags := append([]string{
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--remote-debugging-port=0", "--remote-debugging-address=127.0.0.1",
		"--user-data-dir=" + profile, "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-dev-shm-usage",
	}, args...)
	cmd := exec.Command(Path, append(flags, "about:blank")...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // its own group, so its helpers stop with it
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	b := &Browser{cmd: cmd}
	t.Cleanup(func() {
		b.Kill()
		_ = cmd.Wait()
		for range 50 {
			if os.RemoveAll(profile) == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := devtoolsLine.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
	}()
	select {
	case b.WSURL = <-found:
		return b
	case <-time.After(20 * time.Second):
		t.Fatal("chromium did not print its DevTools address")
	}
	return nil
}

// Kill stops the browser and its helper processes at once (the process
// group this package started); later calls do nothing.
func (b *Browser) Kill() {
	b.once.Do(func() { _ = syscall.Kill(-b.cmd.Process.Pid, syscall.SIGKILL) })
}
