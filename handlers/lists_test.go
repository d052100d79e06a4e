package handlers_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/mangabookmark/mangabookmark/handlers"
)

const asuraSecond = "https://asurascans.com/comics/solo-max-level-newbie-5fa3b2c1"

// TestTheOwnersListCountsWhatWasJustAdded is issue 23, item 4: after an add
// the count and the rows agree with the Series that exist, at once, on the
// page the owner is looking at (htmx answers with the list out of band) and
// on the next read of the list.
func TestTheOwnersListCountsWhatWasJustAdded(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	owner := h.owner()
	if a := h.get(owner, "/admin/series"); a.testid("list-count").Text() != "0" || a.testid("list-empty").Length() != 1 {
		t.Fatalf("an empty server's list: %q", a.testid("list-caption").Text())
	}
	a := h.post(owner, "/admin/series", url.Values{"urls": {asuraSuffixed + "\n" + asuraSecond}},
		htmxHeader, "true", "HX-Current-URL", h.srv.URL+"/admin/series")
	if got := strings.Join(results(a), ","); a.status != http.StatusOK || got != "added,added" {
		t.Fatalf("owner add answered %d %q", a.status, got)
	}
	oob := a.find(`#series-list[hx-swap-oob="innerHTML"]`)
	if n := oob.Find(`[data-testid="series-row"]`).Length(); n != 2 || oob.Find(`[data-testid="list-count"]`).Text() != "2" || oob.Find(`[data-testid="list-empty"]`).Length() != 0 {
		t.Errorf("the list swapped after the add shows %d rows under %q, want 2 under \"2\": %s", n, oob.Find(`[data-testid="list-caption"]`).Text(), a.body)
	}
	// Two more from the Reader's paste on /: the owner's list reads four.
	if a := h.post(h.client(readerA), "/", url.Values{"urls": {kaganeReader + "\n" + novelChapter}}); strings.Join(results(a), ",") != "added,added" {
		t.Fatalf("the Reader's add: %v", results(a))
	}
	l := h.get(owner, "/admin/series")
	if n := l.testid("series-row").Length(); n != 4 || l.testid("list-count").Text() != "4" {
		t.Errorf("the list after four adds shows %d rows under %q, want 4 under \"4\"", n, l.testid("list-caption").Text())
	}
	// The per-Site tallies (ADR 0009) count both adds as well.
	if off := h.text(`SELECT count(*)::text FROM site_tallies t WHERE t.pollable <>
		(SELECT count(*) FROM series s WHERE s.site = t.site AND s.finished_at IS NULL AND s.url <> '')`); off != "0" {
		t.Errorf("%s Sites' tallies disagree with their Series", off)
	}
	land := h.get(owner, "/admin")
	if got := land.testid("stat-all").Text(); got != "4" {
		t.Errorf("the landing's figure of every Series: %q", got)
	}
	// A plain form is answered with the orphans, counted as they are now.
	p := h.post(owner, "/admin/series", url.Values{"urls": {"https://asurascans.com/comics/third-one-00aa11bb"}})
	if n := p.testid("series-row").Length(); n != 3 || p.testid("list-count").Text() != "3" || !strings.Contains(p.testid("list-caption").Text(), "orphan") {
		t.Errorf("the plain add shows %d rows under %q, want the 3 orphans", n, p.testid("list-caption").Text())
	}
}

// TestBackAsksTheServerAgain: htmx keeps no copy of a page to restore on
// Back, which would show a list from before the last add (issue 23, item 4).
func TestBackAsksTheServerAgain(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	a := h.get(h.owner(), "/admin/series")
	if cfg := a.find(`meta[name="htmx-config"]`).AttrOr("content", ""); !strings.Contains(cfg, `"historyCacheSize":0`) {
		t.Errorf("htmx keeps a history cache: %s", cfg)
	}
}

// TestASeriesNeverReadIsFoundByTheNameItsRowShows is issue 23, item 5: the
// row of a Series with no title yet shows its address's name, and the
// owner's search, like the Reader's, finds it by any piece of that name.
func TestASeriesNeverReadIsFoundByTheNameItsRowShows(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	owner := h.owner()
	h.post(owner, "/admin/series", url.Values{"urls": {asuraSecond + "\n" + asuraSuffixed}})
	h.exec(`UPDATE series SET title = 'Nano Machine' WHERE series_id = 'nano-machine'`)
	if row := h.get(owner, "/admin/series").find(`[data-series-id="solo-max-level-newbie"] a.title`).Text(); row != "solo max level newbie" {
		t.Fatalf("the never-read row shows %q", row)
	}
	for q, want := range map[string]string{"solo": "solo-max-level-newbie", "MAX LEVEL": "solo-max-level-newbie", "nano": "nano-machine", "comics": ""} {
		a := h.get(owner, "/admin/series?q="+url.QueryEscape(q))
		var got []string
		for _, n := range a.testid("series-row").EachIter() {
			got = append(got, n.AttrOr("data-series-id", ""))
		}
		if strings.Join(got, ",") != want {
			t.Errorf("?q=%s finds %v, want %q", q, got, want)
		}
	}
	c := h.client(readerA)
	h.post(c, "/", url.Values{"urls": {asuraSecond}})
	if n := h.get(c, "/?q="+url.QueryEscape("max level")).testid("bookmark").Length(); n != 1 {
		t.Errorf("the Reader's search by the shown name finds %d, want 1", n)
	}
}

// TestAnAddressPastedWithoutItsSchemeIsAdded is issue 23, item 8: people
// copy "asurascans.com/comics/…" without https://, on / and /admin/series
// alike; an address that names another scheme is still refused.
func TestAnAddressPastedWithoutItsSchemeIsAdded(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	c := h.client(readerA)
	a := h.post(c, "/", url.Values{"urls": {"asurascans.com/comics/nano-machine/chapter/12\nhttp://novelfull.com/reverend-insanity.html"}})
	if got := strings.Join(results(a), ","); got != "added,unsupported" {
		t.Fatalf("the Reader's scheme-less paste: %q: %s", got, a.testid("add-result").Text())
	}
	if got := h.text(bookmarkQuery); got != "reader-a asurascans/nano-machine 12" {
		t.Errorf("bookmarks: %q", got)
	}
	if u := h.text(`SELECT url || ' ' || progress_url FROM series JOIN bookmarks USING (site, series_id)`); !strings.HasPrefix(u, "https://asurascans.com/comics/nano-machine") || !strings.Contains(u, " https://asurascans.com/comics/nano-machine/chapter/12") {
		t.Errorf("stored addresses: %q", u)
	}
	a = h.post(h.owner(), "/admin/series", url.Values{"urls": {"novelfull.com/reverend-insanity.html"}})
	if got := strings.Join(results(a), ","); got != "added" {
		t.Fatalf("the owner's scheme-less paste: %q", got)
	}
	if n := h.text(`SELECT count(*)::text FROM series WHERE url LIKE 'https://%'`); n != "2" {
		t.Errorf("%s Series with an https address, want 2", n)
	}
}

// TestTheSignInLinkPageSaysWhoIsSigningInAndWhere is issue 23, item 8: the
// page a one-time link opens names the Reader (or the owner) and the server,
// and a spent link says so before offering a button.
func TestTheSignInLinkPageSaysWhoIsSigningInAndWhere(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	host := strings.TrimPrefix(h.srv.URL, "http://")
	ben, err := handlers.NewReaderLink(context.Background(), h.store, h.srv.URL, "Ben", t0)
	if err != nil {
		t.Fatal(err)
	}
	own, err := handlers.NewLoginLink(context.Background(), h.store, h.srv.URL, ownerID, t0)
	if err != nil {
		t.Fatal(err)
	}
	for link, who := range map[string]string{ben: "Ben", own: "the owner"} {
		path := strings.TrimPrefix(link, h.srv.URL)
		a := h.get(anonymous(), path)
		says := a.testid("link-login-who").Text()
		if a.status != http.StatusOK || !strings.Contains(says, "signs in "+who+" to mangabookmark at "+host) ||
			a.testid("link-login").Text() != "Sign in as "+who {
			t.Errorf("%s's link page answered %d: %q, button %q", who, a.status, says, a.testid("link-login").Text())
		}
	}
	// Showing the page does not spend the link; signing in does, and then
	// the page says the link is spent, with no button.
	if a := h.post(anonymous(), strings.TrimPrefix(ben, h.srv.URL), nil); a.status != http.StatusSeeOther {
		t.Fatalf("Ben's sign-in answered %d", a.status)
	}
	a := h.get(anonymous(), strings.TrimPrefix(ben, h.srv.URL))
	if a.status != http.StatusForbidden || !strings.Contains(a.testid("login-message").Text(), "already used or has expired") || a.testid("link-login").Length() != 0 {
		t.Errorf("a spent link's page answered %d: %q", a.status, a.testid("login-message").Text())
	}
}

// TestAPageNotFoundLeadsHome is issue 23, item 8: the 404 page links to
// where its visitor starts.
func TestAPageNotFoundLeadsHome(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for _, c := range []struct {
		who         string
		client      *http.Client
		href, label string
	}{
		{"the owner", h.owner(), "/admin", "Go to Admin"},
		{"a Reader", h.client(readerA), "/", "Go to My Bookmarks"},
		{"someone not signed in", anonymous(), "/login", "Go to sign in"},
	} {
		a := h.get(c.client, "/no/such/page")
		link := a.testid("error-home")
		if a.status != http.StatusNotFound || link.AttrOr("href", "") != c.href || link.Text() != c.label {
			t.Errorf("%s: 404 answered %d, home link %q %q", c.who, a.status, link.AttrOr("href", ""), link.Text())
		}
	}
}

// TestAListAddressHtmxReportsIsHeldToTheAddressRulesBeforeTheAdd: the list
// the owner's add answers with is read from HX-Current-URL, a header the
// browser sends; a query there that the list page itself would refuse (a
// NUL, bytes that are not UTF-8, far too long) is a 400 with a sentence
// before anything is added, never a Series stored and then a 500.
func TestAListAddressHtmxReportsIsHeldToTheAddressRulesBeforeTheAdd(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	owner := h.owner()
	for _, q := range []string{"q=%00", "q=%ff", "filter=all&after=asurascans:%ff", "before=kagane:%00", "q=\xff", "%zz=1", "q=" + strings.Repeat("a", 2000)} {
		a := h.post(owner, "/admin/series", url.Values{"urls": {asuraSuffixed}},
			htmxHeader, "true", "HX-Current-URL", h.srv.URL+"/admin/series?"+q)
		if a.status != http.StatusBadRequest || a.testid("message").Length() != 1 || !strings.Contains(a.body, "Nothing was added") {
			t.Errorf("HX-Current-URL ?%.40q: %d %.300q; want 400 with a sentence", q, a.status, a.body)
		}
		if n := h.count(`SELECT count(*) FROM series WHERE series_id = 'nano-machine'`); n != 0 {
			t.Fatalf("HX-Current-URL ?%.40q: the Series was stored (%d rows)", q, n)
		}
	}
	// A list address the list page takes still answers with that list.
	a := h.post(owner, "/admin/series", url.Values{"urls": {asuraSuffixed}},
		htmxHeader, "true", "HX-Current-URL", h.srv.URL+"/admin/series?filter=all&q=nano")
	if got := strings.Join(results(a), ","); a.status != http.StatusOK || got != "added" || a.find(`#series-list [data-testid="series-row"]`).Length() != 1 {
		t.Errorf("a clean list address: %d %q, %d rows", a.status, got, a.find(`#series-list [data-testid="series-row"]`).Length())
	}
	if strings.Contains(h.logs.String(), "level=ERROR") {
		t.Errorf("a hostile list address reached an ERROR line:\n%s", h.logs)
	}
}
