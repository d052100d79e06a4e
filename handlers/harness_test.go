package handlers_test

import (
	"cmp"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mangabookmark/mangabookmark/handlers"
	"github.com/mangabookmark/mangabookmark/notify"
	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/store/storetest"
	"github.com/mangabookmark/mangabookmark/word"
)

const ownerID = "owner-1"

const testTokenKey = "fedcba9876543210fedcba9876543210-token-key"

// t0 is the fixed clock of every router test.
var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// harness is the real router on a real database behind a loopback server.
type harness struct {
	t     testing.TB
	pool  *pgxpool.Pool
	store *store.Store
	deps  handlers.Deps
	srv   *httptest.Server
	logs  *lockedBuilder
}

// lockedBuilder collects log output written from many goroutines.
type lockedBuilder struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuilder) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuilder) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func newHarness(t testing.TB, adjust ...func(*handlers.Deps)) *harness {
	t.Helper()
	return newHarnessOn(t, storetest.Pool(t, nil), adjust...)
}

// newHarnessOn is newHarness on a pool the test built (with a tracer).
func newHarnessOn(t testing.TB, pool *pgxpool.Pool, adjust ...func(*handlers.Deps)) *harness {
	t.Helper()
	h := &harness{t: t, pool: pool, store: store.New(pool), logs: &lockedBuilder{}}
	// The server exists before the handler so that PublicBaseURL (the OAuth
	// redirect address, cookie security) is known when NewServer runs.
	var handler http.Handler
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { handler.ServeHTTP(w, r) }))
	t.Cleanup(h.srv.Close)
	h.deps = handlers.Deps{
		Store:         h.store,
		Logger:        slog.New(slog.NewTextHandler(h.logs, nil)),
		PublicBaseURL: h.srv.URL,
		Now:           func() time.Time { return t0 },
		OwnerID:       ownerID,
		SessionKey:    []byte("0123456789abcdef0123456789abcdef-test-key"),
		TokenKey:      []byte(testTokenKey),
		BrowserSites:  word.BrowserSites{word.Comix: true, word.Kagane: true},
		// A sidecar is configured (it may still be down); a test of a server
		// without one says so.
		Sidecar: true,
	}
	// The verdict and the Lanes page read the real derivation, with the push off.
	n, err := notify.New(notify.Options{Store: h.store, BrowserSites: word.BrowserSites{word.Comix: true, word.Kagane: true}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	h.deps.Notices = n
	for _, a := range adjust {
		a(&h.deps)
	}
	handler = handlers.NewServer(h.deps)
	return h
}

// client signs in through a one-time link as discordID and returns a
// cookie-carrying client that does not follow redirects.
func (h *harness) client(discordID string) *http.Client {
	h.t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	link, err := handlers.NewLoginLink(context.Background(), h.store, h.srv.URL, discordID, t0)
	if err != nil {
		h.t.Fatal(err)
	}
	resp, err := c.Post(link, "application/x-www-form-urlencoded", nil)
	if err != nil {
		h.t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		h.t.Fatalf("sign-in link answered %d", resp.StatusCode)
	}
	return c
}

// listenWakes starts listening on the Lanes' wake channel, the way a Lane's
// leader does, and returns the Sites woken so far.
func (h *harness) listenWakes() func() []string {
	h.t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, h.pool.Config().ConnConfig.ConnString())
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { conn.Close(context.Background()) })
	if _, err := conn.Exec(ctx, "LISTEN "+store.LaneWakeChannel); err != nil {
		h.t.Fatal(err)
	}
	var woken []string
	return func() []string {
		// The first wake may take a while on a busy machine; the rest of a
		// batch are already queued behind it.
		wait := 5 * time.Second
		for {
			c, cancel := context.WithTimeout(ctx, wait)
			wait = 200 * time.Millisecond
			n, err := conn.WaitForNotification(c)
			cancel()
			if err != nil {
				return woken
			}
			woken = append(woken, n.Payload)
		}
	}
}

func (h *harness) owner() *http.Client { return h.client(ownerID) }

// anonymous is a client with no session that does not follow redirects.
func anonymous() *http.Client {
	return &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

type answer struct {
	status int
	header http.Header
	body   string
	doc    *goquery.Document
}

func (a answer) find(sel string) *goquery.Selection { return a.doc.Find(sel) }

func (a answer) testid(id string) *goquery.Selection {
	return a.doc.Find(`[data-testid="` + id + `"]`)
}

func (h *harness) do(c *http.Client, method, path string, form url.Values, headers ...string) answer {
	h.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, h.srv.URL+path, body)
	if err != nil {
		h.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(string(b)))
	if err != nil {
		h.t.Fatal(err)
	}
	return answer{status: resp.StatusCode, header: resp.Header, body: string(b), doc: doc}
}

func (h *harness) get(c *http.Client, path string, headers ...string) answer {
	h.t.Helper()
	return h.do(c, http.MethodGet, path, nil, headers...)
}

func (h *harness) post(c *http.Client, path string, form url.Values, headers ...string) answer {
	h.t.Helper()
	if form == nil {
		form = url.Values{}
	}
	return h.do(c, http.MethodPost, path, form, headers...)
}

func (h *harness) exec(sql string, args ...any) {
	h.t.Helper()
	if _, err := h.pool.Exec(context.Background(), sql, args...); err != nil {
		h.t.Fatalf("%v\n%s", err, sql)
	}
}

// snapshot is every row the admin controls could change, as text, so a
// test can prove a refused control changed nothing.
func (h *harness) snapshot() string {
	h.t.Helper()
	var s string
	err := h.pool.QueryRow(context.Background(), `SELECT
		coalesce((SELECT string_agg(t::text, E'\n' ORDER BY t.site, t.series_id) FROM series t), '') || E'\n--\n' ||
		coalesce((SELECT string_agg(t::text, E'\n' ORDER BY t.site) FROM poll_lanes t), '') || E'\n--\n' ||
		coalesce((SELECT string_agg(t::text, E'\n' ORDER BY t.site, t.series_id) FROM poll_failures t), '') || E'\n--\n' ||
		coalesce((SELECT string_agg(t::text, E'\n' ORDER BY t.reader_id, t.site, t.series_id) FROM bookmarks t), '')`).Scan(&s)
	if err != nil {
		h.t.Fatal(err)
	}
	return s
}

// fixture is one Series and the facts the admin surface reads.
type fixture struct {
	site          string
	id            string
	title         string
	url           string
	chapter       string // "" = NULL
	raisedBy      string
	checkedAgo    time.Duration // 0 = never
	finished      bool
	siteCompleted bool
	failure       string // outcome word; "" = no failure row
	failingFor    time.Duration
	bookmarked    bool
	cover         string
}

const addr = "https://asuracomic.net/series/x"

// dataset puts Series in every filter, plus the edge cases the filter definitions name (CONTEXT.md).
var dataset = []fixture{
	{id: "healthy", title: "Healthy Work", url: addr, chapter: "12", checkedAgo: time.Minute, bookmarked: true, cover: "https://example.test/c.jpg"},
	{id: "never", url: addr, bookmarked: true},
	{id: "stale", url: addr, chapter: "3", checkedAgo: 13 * time.Hour, bookmarked: true},
	{id: "no-address", url: "", checkedAgo: time.Minute, chapter: "1", bookmarked: true},
	{id: "gate-refused", url: "http://wrong.example/x", chapter: "4", checkedAgo: time.Minute, failure: "unfetchable", failingFor: 14 * time.Hour},
	{id: "never-yielded", url: addr, checkedAgo: time.Minute, failure: "no_chapter", failingFor: 90 * 24 * time.Hour, bookmarked: true},
	{id: "failing-3mo", title: "Broken Since Spring", url: addr, chapter: "40", checkedAgo: time.Minute, failure: "not_found", failingFor: 92 * 24 * time.Hour, bookmarked: true},
	{id: "failing-1h", url: addr, chapter: "40", checkedAgo: time.Minute, failure: "errors", failingFor: 90 * time.Minute, bookmarked: true},
	{id: "failing-finished", url: addr, chapter: "40", checkedAgo: time.Minute, failure: "errors", failingFor: 13 * time.Hour, finished: true, bookmarked: true},
	{id: "unverified", url: addr, chapter: "41", raisedBy: "r1", checkedAgo: time.Minute, failure: "no_chapter", failingFor: 13 * time.Hour, bookmarked: true},
	{id: "completed", title: "Completed Work", url: addr, chapter: "100", checkedAgo: time.Minute, siteCompleted: true, bookmarked: true},
	{id: "completed-failing", title: "Completed And Failing", url: addr, chapter: "100", checkedAgo: time.Minute, siteCompleted: true, failure: "errors", failingFor: 20 * time.Hour},
	{id: "completed-finished", url: addr, chapter: "100", checkedAgo: time.Minute, siteCompleted: true, finished: true},
	{site: "novelfull", id: "novel-stale", url: "https://novelfull.com/x.html", chapter: "7", checkedAgo: 30 * time.Hour, bookmarked: true},
}

func (h *harness) seed(fs []fixture) {
	h.t.Helper()
	storetest.Ensure(h.t, h.pool, storetest.Reader{ID: "r1", Name: "Reader One"})
	for _, f := range fs {
		site := cmp.Or(word.Site(f.site), word.Asurascans)
		row := storetest.Series{Site: site, ID: f.id, URL: f.url, Title: f.title, Cover: f.cover, Kind: site.Kind(),
			LatestChapter: f.chapter, RaisedBy: f.raisedBy}
		if f.checkedAgo > 0 {
			row.CheckedAt = t0.Add(-f.checkedAgo)
		}
		if f.finished {
			row.FinishedAt = t0.Add(-48 * time.Hour)
		}
		if f.siteCompleted {
			row.CompletedAt = t0.Add(-3 * time.Hour)
		}
		storetest.Insert(h.t, h.pool, row)
		if f.failure != "" {
			storetest.Insert(h.t, h.pool, storetest.Failure{Site: site, Series: f.id, Outcome: word.Outcome(f.failure), FailingSince: t0.Add(-f.failingFor)})
		}
		if f.bookmarked {
			storetest.Insert(h.t, h.pool, storetest.Bookmark{Reader: "r1", Site: site, Series: f.id, Progress: "2", UpdatedAt: t0.Add(-time.Hour)})
		}
	}
}
