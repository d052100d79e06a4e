package handlers_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mangabookmark/mangabookmark/handlers"
	"github.com/mangabookmark/mangabookmark/static"
	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/store/storetest"
	"github.com/mangabookmark/mangabookmark/word"
)

func TestAnExpiredSessionUnderHTMXIsSentToSignInNotSwappedIntoTheList(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	a := h.get(anonymous(), "/admin/series?filter=failing", "HX-Request", "true")
	if a.status != http.StatusUnauthorized || a.header.Get("HX-Redirect") != "/login?next="+url.QueryEscape("/admin/series?filter=failing") {
		t.Errorf("htmx without a session: %d, HX-Redirect %q", a.status, a.header.Get("HX-Redirect"))
	}
	if a.testid("series-row").Length() > 0 || a.testid("filter-form").Length() > 0 {
		t.Errorf("an anonymous htmx request was answered with the list")
	}
	// A control's address answers no GET, so signing in returns to a page.
	p := h.post(anonymous(), "/admin/series/asurascans/x/finish", url.Values{})
	if p.status != http.StatusSeeOther || p.header.Get("Location") != "/login?next=%2F" {
		t.Errorf("an anonymous control: %d to %q", p.status, p.header.Get("Location"))
	}
}

func TestEveryPageIsUncachedAndCarriesTheCSP(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seed(dataset)
	c := h.owner()
	for _, p := range []string{"/admin", "/admin/series", "/admin/series?filter=failing", "/admin/series/asurascans/unverified", "/admin/lanes", "/login", "/nowhere"} {
		a := h.get(c, p)
		if a.header.Get("Cache-Control") != "no-store" {
			t.Errorf("%s: Cache-Control %q", p, a.header.Get("Cache-Control"))
		}
		csp := a.header.Get("Content-Security-Policy")
		for _, d := range []string{"default-src 'self'", "script-src 'self'", "style-src 'self'", "object-src 'none'", "base-uri 'none'", "frame-ancestors 'none'", "form-action 'self'"} {
			if !strings.Contains(csp, d) {
				t.Errorf("%s: CSP %q lacks %q", p, csp, d)
			}
		}
		if !strings.Contains(csp, "img-src 'self';") {
			t.Errorf("%s: CSP %q lets images come from elsewhere than our origin", p, csp)
		}
		if strings.Contains(csp, "unsafe-") || strings.Contains(csp, "data:") {
			t.Errorf("%s: CSP %q allows unsafe sources", p, csp)
		}
		for k, v := range map[string]string{"X-Content-Type-Options": "nosniff", "X-Frame-Options": "DENY", "Referrer-Policy": "same-origin"} {
			if got := a.header.Get(k); got != v {
				t.Errorf("%s: %s %q, want %q", p, k, got, v)
			}
		}
	}
}

func TestALaneRefusalWithoutJavaScriptKeepsTheNotices(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.passes("asurascans", "", 3, 0, 0, 14, 10, 5, 1) // a stall: one open notice
	c := h.owner()
	notices := func(a answer) string {
		return strings.Join(strings.Fields(a.find(`section[aria-labelledby="notices-h"]`).Text()), " ")
	}
	page := h.get(c, "/admin/lanes")
	refused := h.post(c, "/admin/lanes/comix/pause", url.Values{"for": {"forever"}})
	if refused.status != http.StatusBadRequest {
		t.Fatalf("status %d", refused.status)
	}
	if got, want := notices(refused), notices(page); got != want || want == "" {
		t.Errorf("notices after a refusal:\n got %q\nwant %q", got, want)
	}
	if refused.find(`[data-testid="lane-row"][data-site="comix"] [data-testid="message"]`).Length() != 1 {
		t.Errorf("the refusal is not on its Lane's row")
	}
}

func TestAFailedHTMXControlShowsItsSentenceInThePageMessageSlot(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seed(dataset)
	c := h.owner()
	if h.get(c, "/admin/series/asurascans/unverified").find("main > #page-message").Length() != 1 {
		t.Errorf("the page has no message slot")
	}
	for _, tc := range []struct{ method, path string }{
		{"POST", "/admin/series/asurascans/nope/latest"},
		{"POST", "/admin/lanes/nosuchsite/poll"},
		{"GET", "/admin/series?filter=broken"},
	} {
		a := h.do(c, tc.method, tc.path, url.Values{"num": {"3"}}, "HX-Request", "true")
		if a.status < 400 || a.header.Get("HX-Retarget") != "#page-message" || a.header.Get("HX-Reswap") != "innerHTML" {
			t.Errorf("%s %s: %d, retarget %q", tc.method, tc.path, a.status, a.header.Get("HX-Retarget"))
		}
		if strings.Contains(a.body, "<html") || strings.TrimSpace(a.testid("message").Text()) == "" {
			t.Errorf("%s %s: not one sentence: %.200s", tc.method, tc.path, a.body)
		}
	}
}

func TestAFigureAboveTheCapPrints1000PlusAndStillLinksToItsList(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	var series []storetest.Series
	for i := 1; i <= store.FigureCap+1; i++ {
		id := "n" + strconv.Itoa(i)
		series = append(series, storetest.Series{Site: word.Asurascans, ID: id, URL: "https://asuracomic.net/series/" + id, Kind: word.Manga})
	}
	storetest.Insert(t, h.pool, series...)
	c := h.owner()
	landing := h.get(c, "/admin")
	for _, id := range []string{"stat-all", "stat-never-checked", "stat-orphan"} {
		s := landing.testid(id)
		if s.Text() != strconv.Itoa(store.FigureCap)+"+" || s.AttrOr("href", "") == "" {
			t.Errorf("%s reads %q (href %q)", id, s.Text(), s.AttrOr("href", ""))
		}
	}
	if s := landing.testid("stat-failing"); s.Text() != "0" || s.Is("a") {
		t.Errorf("a zero figure must be an unlinked digit: %q", s.Text())
	}
	// The list's caption is the landing figure's own statement: it says the
	// same, the same way.
	list := h.get(c, landing.testid("stat-orphan").AttrOr("href", ""))
	if n := list.testid("list-count").Text(); n != strconv.Itoa(store.FigureCap)+"+" {
		t.Errorf("the orphan list counts %s", n)
	}
}

// epochReads counts the session lookups the server makes.
type epochReads struct{ n atomic.Int64 }

func (e *epochReads) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	if strings.Contains(d.SQL, "SELECT session_epoch") {
		e.n.Add(1)
	}
	return ctx
}

func (e *epochReads) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func TestARequestReadsTheSessionOnce(t *testing.T) {
	t.Parallel()
	reads := &epochReads{}
	pool := storetest.Pool(t, func(c *pgxpool.Config) { c.ConnConfig.Tracer = reads })
	st := store.New(pool)
	var handler http.Handler
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { handler.ServeHTTP(w, r) }))
	t.Cleanup(srv.Close)
	handler = handlers.NewServer(handlers.Deps{
		Store: st, Logger: slog.New(slog.DiscardHandler), PublicBaseURL: srv.URL, OwnerID: ownerID,
		Now: func() time.Time { return t0 }, SessionKey: []byte("0123456789abcdef0123456789abcdef-test-key"),
	})
	link, err := handlers.NewLoginLink(context.Background(), st, srv.URL, ownerID, t0)
	if err != nil {
		t.Fatal(err)
	}
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Post(link, "application/x-www-form-urlencoded", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for _, tc := range []struct {
		path   string
		status int
		reads  int64
	}{
		{"/admin", http.StatusOK, 1},
		{"/admin/nope", http.StatusNotFound, 1},
		{"/nope", http.StatusNotFound, 1},
		{static.URL(static.CSS), http.StatusOK, 0},
	} {
		before := reads.n.Load()
		resp, err := c.Get(srv.URL + tc.path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := reads.n.Load() - before; resp.StatusCode != tc.status || got != tc.reads {
			t.Errorf("%s: %d with %d session reads, want %d with %d", tc.path, resp.StatusCode, got, tc.status, tc.reads)
		}
	}
}
