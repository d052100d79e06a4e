package server

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mangabookmark/mangabookmark/internal/citest"
	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/store/localpg"
	"github.com/mangabookmark/mangabookmark/store/storetest"
)

// A server that cannot listen stops before anything else: the error names
// LISTEN_ADDR and the address, and the start-up record the notices command
// reads still describes the server that last served (issue 22, item 10).
func TestABusyListenAddressStopsTheStartBeforeTheStartUpRecord(t *testing.T) {
	t.Parallel()
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	addr := busy.Addr().String()
	dbURL := storetest.URL(t)
	ctx := context.Background()
	st, err := store.Open(ctx, dbURL, store.Pools{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	before := store.ServerWebhook{Configured: false, Hash: "", RecordedAt: time.Now().Add(-time.Hour).Truncate(time.Millisecond), BrowserSites: []string{"comix"}}
	if err := st.RecordServerWebhook(ctx, before); err != nil {
		t.Fatal(err)
	}

	env := map[string]string{
		"DATABASE_URL":        dbURL,
		"DATA_DIR":            t.TempDir(),
		"LISTEN_ADDR":         addr,
		"DISCORD_WEBHOOK_URL": "https://discord.example/api/webhooks/1/x",
		"BROWSER_SITES":       "kagane",
	}
	var stdout, stderr syncBuffer
	done := make(chan error, 1)
	go func() { done <- Run(ctx, func(k string) string { return env[k] }, &stdout, &stderr) }()
	select {
	case err = <-done:
	case <-time.After(60 * time.Second):
		t.Fatalf("the server started on a busy address:\n%s", stderr.String())
	}
	if err == nil || !strings.HasPrefix(err.Error(), "LISTEN_ADDR: cannot listen on "+addr+":") || !strings.HasSuffix(err.Error(), "set LISTEN_ADDR to a free address") {
		t.Fatalf("error %v: want one naming LISTEN_ADDR and %s", err, addr)
	}
	after, ok, err := st.ReadServerWebhook(ctx)
	if err != nil || !ok {
		t.Fatalf("start-up record: ok=%v err=%v", ok, err)
	}
	if after.Configured != before.Configured || !after.RecordedAt.Equal(before.RecordedAt) || strings.Join(after.BrowserSites, ",") != "comix" {
		t.Fatalf("the start-up record was rewritten by a server that never served: %+v, was %+v", after, before)
	}
	if strings.Contains(stdout.String(), "running on") {
		t.Fatalf("a server that never served said it runs:\n%s", stdout.String())
	}
}

// Two servers on one embedded cluster: the second refuses to start with a
// sentence that says why and what to do, and the first keeps its database
// (issue 22, item 9). Before, the second attached, and the first one's stop
// took PostgreSQL from under it. The lock's record of the first server,
// left in the lock file after it stops, does not block the next start.
func TestASecondServeOnOneEmbeddedClusterRefusesToStart(t *testing.T) {
	if _, err := localpg.FindBinaries(); err != nil {
		citest.Skip(t, "no PostgreSQL binaries here: %v", err)
	}
	dataDir := storetest.ClusterDir(t, "serve-")
	first := startServe(t, dataDir)
	waitHealthy(t, first.base, first.done)

	second := startServe(t, dataDir)
	var err error
wait:
	for deadline := time.Now().Add(90 * time.Second); ; {
		select {
		case err = <-second.done:
			break wait
		case <-time.After(100 * time.Millisecond):
		}
		if resp, herr := http.Get(second.base + "/healthz"); herr == nil {
			resp.Body.Close()
			t.Fatal("a second server started on the first one's cluster")
		}
		if time.Now().After(deadline) {
			t.Fatal("the second server neither started nor refused")
		}
	}
	want := fmt.Sprintf("another mangabookmark serve (pid %d) is using the embedded database in DATA_DIR (%s); stop it first, or point DATABASE_URL at a shared PostgreSQL", os.Getpid(), dataDir)
	if err == nil || err.Error() != want {
		t.Fatalf("second serve: %v\nwant: %s\nits log:\n%s", err, want, second.stderr.String())
	}
	if resp, err := http.Get(first.base + "/healthz"); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("the first server lost its database: %v %v", resp, err)
	}
	first.stop(t)

	third := startServe(t, dataDir)
	waitHealthy(t, third.base, third.done)
	third.stop(t)
}

// aServe is one `serve` running in the test on the embedded cluster; done
// gets Run's answer once.
type aServe struct {
	base           string
	cancel         func()
	done           chan error
	stdout, stderr *syncBuffer
}

func startServe(t *testing.T, dataDir string) *aServe {
	t.Helper()
	addr := freeAddr(t)
	env := map[string]string{"DATA_DIR": dataDir, "LISTEN_ADDR": addr}
	ctx, cancel := context.WithCancel(context.Background())
	s := &aServe{base: "http://" + addr, cancel: cancel, done: make(chan error, 1), stdout: &syncBuffer{}, stderr: &syncBuffer{}}
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		s.done <- Run(ctx, func(k string) string { return env[k] }, s.stdout, s.stderr)
	}()
	t.Cleanup(func() {
		cancel()
		<-ended // the cluster is stopped before the directory goes
	})
	return s
}

// stop stops the server and waits for it, cluster included.
func (s *aServe) stop(t *testing.T) {
	t.Helper()
	s.cancel()
	if err := <-s.done; err != nil {
		t.Fatalf("serve: %v\n%s", err, s.stderr.String())
	}
}
