package handlers_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mangabookmark/mangabookmark/adapters"
	"github.com/mangabookmark/mangabookmark/fetch"
	"github.com/mangabookmark/mangabookmark/handlers"
	"github.com/mangabookmark/mangabookmark/poller"
	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/word"
)

// tracer counts every statement a pool runs.
type tracer struct {
	mu  sync.Mutex
	sql []string
}

func (t *tracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.sql = append(t.sql, d.SQL)
	return ctx
}

func (t *tracer) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// Test read runs the real read path — fetch's Reader behind the
// Lanes' own poller, against a loopback stand-in Site — shows what it saw,
// and writes nothing: the poller's pool runs no statement at all, and no
// row the Poll would touch changes.
func TestTestReadShowsWhatTheAdapterSeesAndWritesNothing(t *testing.T) {
	t.Parallel()
	page, err := os.ReadFile("../adapters/testdata/asurascans/ongoing.html")
	if err != nil {
		t.Fatal(err)
	}
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "gone") {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write(page)
	}))
	t.Cleanup(site.Close)
	base, _ := url.Parse(site.URL)
	tr := &tracer{}
	var lanes *poller.Poller
	h := newHarness(t, func(d *handlers.Deps) {
		cfg := d.Store.Pool().Config().Copy()
		cfg.ConnConfig.Tracer = tr
		pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(pool.Close)
		reader := fetch.NewReader(fetch.ReaderOptions{BaseURLs: map[string]*url.URL{"asurascans": base}, BrowserSites: word.BrowserSites{}})
		lanes = poller.New(store.New(pool), reader, poller.Config{Logger: slog.New(slog.DiscardHandler)}) // no spacing
		d.Reads = lanes
	})
	h.seed([]fixture{
		{id: "nano-machine", url: "https://asurascans.com/comics/nano-machine", chapter: "1", checkedAgo: 13 * time.Hour, bookmarked: true},
		{id: "gone", url: "https://asurascans.com/comics/gone", chapter: "2", checkedAgo: time.Minute},
	})
	a, _ := adapters.ByName("asurascans")
	want, err := a.Parse(page, adapters.Ref{Site: "asurascans", SeriesID: "nano-machine", URL: "https://asurascans.com/comics/nano-machine"})
	if err != nil || !want.HasLatest {
		t.Fatalf("fixture does not parse: %v", err)
	}
	c := h.owner()
	before := h.snapshot()
	passes := h.count(`SELECT count(*) FROM poll_passes`)

	ok := h.post(c, "/admin/series/asurascans/nano-machine/test-read", nil, "HX-Request", "true")
	res := ok.testid("test-read-result")
	if ok.status != http.StatusOK || res.AttrOr("data-outcome", "") != "ok" {
		t.Fatalf("status %d, result %q", ok.status, squash(res.Text()))
	}
	if got := squash(res.Find(`[data-testid="test-read-status"]`).Text()); got != "HTTP 200" {
		t.Errorf("status shown %q", got)
	}
	facts := map[string]string{}
	res.Find("dt").Each(func(_ int, dt *goquery.Selection) { facts[dt.Text()] = dt.Next().Text() })
	if facts["latest_chapter"] != want.LatestChapter || facts["title"] != want.Title {
		t.Errorf("facts %v, want chapter %s, title %q", facts, want.LatestChapter, want.Title)
	}
	if _, focus := res.Attr("autofocus"); !focus {
		t.Errorf("focus does not move to the result")
	}

	gone := h.post(c, "/admin/series/asurascans/gone/test-read", nil, "HX-Request", "true").testid("test-read-result")
	if gone.AttrOr("data-outcome", "") != "not_found" || squash(gone.Find(`[data-testid="test-read-status"]`).Text()) != "HTTP 404" {
		t.Errorf("a missing page reads %q", squash(gone.Text()))
	}

	if after := h.snapshot(); after != before {
		t.Errorf("Test read changed the database:\n%s\n---\n%s", before, after)
	}
	if n := h.count(`SELECT count(*) FROM poll_passes`); n != passes {
		t.Errorf("Test read wrote a pass row")
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if len(tr.sql) != 0 {
		t.Errorf("the read path ran %d statements, want 0: %q", len(tr.sql), tr.sql)
	}
}

func (h *harness) count(sql string, args ...any) int64 {
	h.t.Helper()
	var n int64
	if err := h.pool.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		h.t.Fatal(err)
	}
	return n
}

// A redirect the fetch gate refuses comes after the first request: Test read
// says which request was refused (the redirect, to where) and that the first
// was made, never "before any request was made".
func TestTestReadSaysARefusedRedirectCameAfterTheFirstRequest(t *testing.T) {
	t.Parallel()
	requests := 0
	var mu sync.Mutex
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		requests++
		mu.Unlock()
		http.Redirect(w, r, "https://elsewhere.example/comics/moved", http.StatusMovedPermanently)
	}))
	t.Cleanup(site.Close)
	base, _ := url.Parse(site.URL)
	h := newHarness(t, func(d *handlers.Deps) {
		reader := fetch.NewReader(fetch.ReaderOptions{BaseURLs: map[string]*url.URL{"asurascans": base}, BrowserSites: word.BrowserSites{}})
		d.Reads = poller.New(d.Store, reader, poller.Config{Logger: slog.New(slog.DiscardHandler)})
	})
	h.seed([]fixture{{id: "moved", url: "https://asurascans.com/comics/moved", chapter: "1", checkedAgo: time.Hour}})
	res := h.post(h.owner(), "/admin/series/asurascans/moved/test-read", nil, "HX-Request", "true").testid("test-read-result")
	text := squash(res.Text())
	if res.AttrOr("data-outcome", "") != "unfetchable" {
		t.Fatalf("outcome %q: %s", res.AttrOr("data-outcome", ""), text)
	}
	if mu.Lock(); requests != 1 {
		t.Errorf("the Site got %d requests, want the first one only", requests)
	}
	mu.Unlock()
	if strings.Contains(text, "before any request") {
		t.Errorf("Test read says nothing was requested, though the first request was: %s", text)
	}
	for _, want := range []string{"redirect", "https://elsewhere.example/comics/moved", "the first request was made"} {
		if !strings.Contains(text, want) {
			t.Errorf("Test read lacks %q: %s", want, text)
		}
	}
	if got := squash(res.Find(`[data-testid="test-read-status"]`).Text()); !strings.HasPrefix(got, "HTTP 301") {
		t.Errorf("status shown %q, want the redirect's HTTP 301", got)
	}
}
