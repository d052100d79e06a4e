package handlers_test

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mangabookmark/mangabookmark/handlers"
)

// wantAPIUnavailable is the token API's answer while the database is away:
// 503 with the word unavailable and a Retry-After in seconds, which the
// userscript queues on (never 500 internal, which says the fault is ours).
func wantAPIUnavailable(t *testing.T, what string, a apiAnswer) {
	t.Helper()
	if a.status != http.StatusServiceUnavailable || a.word() != "unavailable" {
		t.Fatalf("%s: %d %s; want 503 unavailable", what, a.status, a.raw)
	}
	if s, err := strconv.Atoi(a.header.Get("Retry-After")); err != nil || s <= 0 {
		t.Fatalf("%s: Retry-After %q; want seconds", what, a.header.Get("Retry-After"))
	}
	if msg, _ := a.json["message"].(string); !strings.HasSuffix(msg, ".") || !strings.Contains(msg, "Retry-After") {
		t.Fatalf("%s: message %q", what, msg)
	}
}

const asuraChapter10 = "https://asurascans.com/comics/nano-machine-7f873ca6/chapter/10"

func TestAStoppedDatabaseAnswersTheAPI503Unavailable(t *testing.T) {
	t.Parallel()
	h, proxy := outageHarness(t)
	h.seedAsura()
	tok := h.apiToken("r1", "")
	write := `{"url":"` + asuraChapter10 + `","chapter":10}`
	before := h.snapshot()

	proxy.setDown(true)
	wantAPIUnavailable(t, "GET /me", h.api("GET", "/api/v1/me", tok, ""))
	wantAPIUnavailable(t, "GET /bookmarks", h.api("GET", "/api/v1/bookmarks", tok, ""))
	wantAPIUnavailable(t, "GET /lookup", h.api("GET", "/api/v1/lookup?url="+url.QueryEscape(asuraSeries), tok, ""))
	wantAPIUnavailable(t, "POST /progress", h.api("POST", "/api/v1/progress", tok, write))
	wantAPIUnavailable(t, "POST /progress with a key", h.api("POST", "/api/v1/progress", tok, write, "Idempotency-Key", "k-1"))
	wantAPIUnavailable(t, "POST /sightings", h.api("POST", "/api/v1/sightings", tok, `{"url":"`+asuraSeries+`","chapters":[20]}`))
	if logs := h.logs.String(); !strings.Contains(logs, "database unavailable") || strings.Contains(logs, "level=ERROR msg=api:") {
		t.Errorf("want a warning that the database was unavailable, no API error line:\n%s", logs)
	}

	proxy.setDown(false)
	if h.snapshot() != before {
		t.Fatal("something changed while the database was away")
	}
	// The userscript's retry, with the same key, is applied once it is back.
	if a := h.api("POST", "/api/v1/progress", tok, write, "Idempotency-Key", "k-1"); a.status != 200 || a.json["applied"] != true {
		t.Fatalf("the retry after the database came back: %d %s", a.status, a.raw)
	}
	if got := h.progressOf("r1", "asurascans", "nano-machine"); got != "10" {
		t.Fatalf("progress %q after the retry", got)
	}
}

// A frozen database is one slower than the request's deadline: the API's own
// statements run out of time after its Bearer lookup succeeded.
func TestAFrozenDatabaseAnswersTheAPI503UnavailableAndAKeyedRetryRuns(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(d *handlers.Deps) { d.RequestTimeout = 300 * time.Millisecond })
	h.seedAsura()
	tok := h.apiToken("r1", "")
	write := `{"url":"` + asuraChapter10 + `","chapter":10}`

	ctx := context.Background()
	tx, err := h.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `LOCK TABLE bookmarks IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	wantAPIUnavailable(t, "GET /bookmarks", h.api("GET", "/api/v1/bookmarks", tok, ""))
	wantAPIUnavailable(t, "GET /lookup", h.api("GET", "/api/v1/lookup?url="+url.QueryEscape(asuraSeries), tok, ""))
	// The key is claimed before the frozen write, and must be given back
	// although the request's deadline is over: else the retry is 409.
	wantAPIUnavailable(t, "POST /progress with a key", h.api("POST", "/api/v1/progress", tok, write, "Idempotency-Key", "k-frozen"))
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if got := h.progressOf("r1", "asurascans", "nano-machine"); got != "2" {
		t.Fatalf("progress %q after the refused write; want it unchanged", got)
	}
	a := h.api("POST", "/api/v1/progress", tok, write, "Idempotency-Key", "k-frozen")
	if a.status != 200 || a.json["applied"] != true || a.header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("the retry after the freeze: %d %s", a.status, a.raw)
	}
	if got := h.progressOf("r1", "asurascans", "nano-machine"); got != "10" {
		t.Fatalf("progress %q after the retry", got)
	}
}
