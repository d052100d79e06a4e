package server

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/mangabookmark/mangabookmark/store"
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
	if err == nil || !strings.HasPrefix(err.Error(), "LISTEN_ADDR: cannot listen on "+addr+":") {
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
