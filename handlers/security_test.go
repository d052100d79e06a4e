package handlers_test

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/mangabookmark/mangabookmark/static"
	"github.com/mangabookmark/mangabookmark/store"
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
	h.exec(`INSERT INTO series (site, series_id, url, kind, created_at)
		SELECT 'asurascans', 'n' || i, 'https://asuracomic.net/series/n' || i, 'manga', 0 FROM generate_series(1, $1::int) AS i`, store.FigureCap+1)
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
	list := h.get(c, landing.testid("stat-orphan").AttrOr("href", ""))
	if n := list.testid("list-count").Text(); n != strconv.Itoa(store.FigureCap+1) {
		t.Errorf("the orphan list counts %s", n)
	}
}

func TestAnAssetRequestNeverReadsTheSession(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	c := h.owner()
	// From here any session lookup fails, and says so in the log.
	h.exec(`ALTER TABLE readers RENAME TO readers_away`)
	for _, p := range []string{static.URL(static.CSS), static.URL(static.HTMX), static.URL(static.AdminJS)} {
		if a := h.get(c, p); a.status != http.StatusOK {
			t.Errorf("%s: status %d", p, a.status)
		}
	}
	if strings.Contains(h.logs.String(), "session check failed") {
		t.Errorf("an asset request looked up the session:\n%s", h.logs.String())
	}
	// The same cookie on a page does look it up (so the check above can fail).
	h.get(c, "/admin")
	if !strings.Contains(h.logs.String(), "session check failed") {
		t.Errorf("a page did not read the session")
	}
}
