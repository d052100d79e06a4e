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
