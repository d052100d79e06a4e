package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mangabookmark/mangabookmark/handlers"
	"github.com/mangabookmark/mangabookmark/server"
	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/store/storetest"
)

// TestLinkPrintsAFreshSingleUseOwnerLink runs the command against the
// database a running server reads, then spends the printed link on that
// server: it signs the owner in once, and only once.
func TestLinkPrintsAFreshSingleUseOwnerLink(t *testing.T) {
	t.Parallel()
	url := storetest.URL(t)
	st, err := store.Open(context.Background(), url, store.Pools{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var handler http.Handler
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { handler.ServeHTTP(w, r) }))
	defer srv.Close()
	handler = handlers.NewServer(handlers.Deps{Store: st, Logger: slog.New(slog.DiscardHandler), PublicBaseURL: srv.URL,
		OwnerID: "local-owner", SessionKey: []byte("0123456789abcdef0123456789abcdef-test-key")})

	env := map[string]string{"DATABASE_URL": url, "PUBLIC_BASE_URL": srv.URL, "DATA_DIR": t.TempDir()}
	var out bytes.Buffer
	if err := run(context.Background(), []string{"mangabookmark", "link"}, func(k string) string { return env[k] }, strings.NewReader(""), &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	var link string
	for _, f := range strings.Fields(out.String()) {
		if strings.HasPrefix(f, srv.URL+"/login/") {
			link = f
		}
	}
	if link == "" || !strings.Contains(out.String(), "single use, valid 15m0s") {
		t.Fatalf("no link printed: %q", out.String())
	}
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for i, want := range []int{http.StatusSeeOther, http.StatusForbidden} {
		resp, err := c.Post(link, "application/x-www-form-urlencoded", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Fatalf("use %d of the link answered %d, want %d", i+1, resp.StatusCode, want)
		}
	}
	resp, err := c.Get(srv.URL + "/admin")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("the owner signed in by the printed link sees /admin answer %d", resp.StatusCode)
	}
}

// TestLinkIsOnTheAddressTheServerRecorded: the server started on another
// LISTEN_ADDR than the command's environment names (issue 23, item 3). The
// link is on the server's address, as serve recorded it at start, never on
// the 8080 the command would derive; before any server recorded one, the
// command says whose address it used.
func TestLinkIsOnTheAddressTheServerRecorded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := storetest.URL(t)
	st, err := store.Open(ctx, url, store.Pools{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	env := map[string]string{"DATABASE_URL": url, "DATA_DIR": t.TempDir()} // LISTEN_ADDR unset: 127.0.0.1:8080
	link := func() string {
		t.Helper()
		var out bytes.Buffer
		if err := run(ctx, []string{"mangabookmark", "link"}, func(k string) string { return env[k] }, strings.NewReader(""), &out, io.Discard); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	if out := link(); !strings.Contains(out, "No server has recorded its address") || !strings.Contains(out, "http://127.0.0.1:8080/login/") {
		t.Errorf("before any server started, the link command printed %q", out)
	}
	// What serve does at start, with LISTEN_ADDR=127.0.0.1:9191.
	cfg, err := server.LoadConfig(func(k string) string {
		return map[string]string{"LISTEN_ADDR": "127.0.0.1:9191", "DATABASE_URL": url}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := server.OwnerNotices(ctx, cfg, server.Options{}, st, slog.New(slog.DiscardHandler), &handlers.Deps{}); err != nil {
		t.Fatal(err)
	}
	out := link()
	if !strings.Contains(out, "\n  http://127.0.0.1:9191/login/") || strings.Contains(out, ":8080") || strings.Contains(out, "No server") {
		t.Errorf("the server recorded http://127.0.0.1:9191, the link command printed %q", out)
	}
}
