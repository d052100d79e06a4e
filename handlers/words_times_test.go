package handlers_test

import (
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/mangabookmark/mangabookmark/handlers"
	"github.com/mangabookmark/mangabookmark/word"
)

// twice is the first word a text says twice in a row ("errors errors"),
// or "" (issue 23: no word repeated twice in a row).
func twice(text string) string {
	f := strings.Fields(strings.ToLower(text))
	for i := 1; i < len(f); i++ {
		if f[i] == f[i-1] && strings.IndexFunc(f[i], func(r rune) bool { return r >= 'a' && r <= 'z' }) >= 0 {
			return f[i]
		}
	}
	return ""
}

// Each outcome is shown once, in its plain words: never beside its machine
// word ("Last outcome: errors (errors)", "no chapter found no_chapter").
func TestEachOutcomeIsShownOnceInItsPlainWords(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seed(dataset)
	c := h.owner()
	note := h.get(c, "/admin/series/asurascans/failing-1h").testid("outcome-note")
	if got := squash(note.Find("h2").Text()); got != "Last outcome: read failed for 1 hour" {
		t.Errorf("outcome heading %q", got)
	}
	if note.AttrOr("data-outcome", "") != "errors" {
		t.Errorf("the machine word is not kept as data: %v", note.Nodes)
	}
	never := h.get(c, "/admin/series/asurascans/never-yielded")
	if got := squash(never.testid("outcome-note").Find("h2").Text()); strings.Contains(got, "no_chapter") || !strings.Contains(got, "no chapter found") {
		t.Errorf("outcome heading %q", got)
	}
	markers := h.get(c, "/admin/series").testid("failure-marker")
	if markers.Length() == 0 {
		t.Fatal("no failure marker on the list")
	}
	markers.Each(func(_ int, m *goquery.Selection) {
		o := word.Outcome(m.AttrOr("data-outcome", ""))
		if got := squash(m.Text()); !o.Valid() || !strings.HasPrefix(got, o.Plain()+" · ") || (o.Plain() != string(o) && strings.Contains(got, string(o))) {
			t.Errorf("marker %q for %q", got, o)
		}
	})
	lanes := h.get(c, "/admin/lanes")
	lanes.testid("lane-row").Each(func(_ int, row *goquery.Selection) {
		route := word.RoutePlain
		if site := word.Site(row.AttrOr("data-site", "")); site == word.Comix || site == word.Kagane {
			route = word.RouteBrowser
		}
		row.Find(`[data-testid="lane-counts"] > div`).Each(func(_ int, d *goquery.Selection) {
			o := word.Outcome(d.AttrOr("data-outcome", ""))
			if got := squash(d.Find("dt").Text()); !o.Valid() || got != o.PlainOn(route) {
				t.Errorf("count label %q for %q over %s", got, o, route)
			}
		})
	})
	for path, a := range map[string]answer{"detail": never, "lanes": lanes} {
		if w := twice(a.find("main").Text()); w != "" {
			t.Errorf("%s says %q twice in a row", path, w)
		}
	}
}

// A moment seconds old reads "just now", then seconds; never "1 minute".
func TestATokenMadeSecondsAgoSaysJustNowThenSeconds(t *testing.T) {
	t.Parallel()
	var after atomic.Int64 // how far past t0 the server's clock reads
	h := newHarness(t, func(d *handlers.Deps) { d.Now = func() time.Time { return t0.Add(time.Duration(after.Load())) } })
	c := h.owner()
	if a := h.post(c, "/tokens", url.Values{"name": {"laptop"}}); a.status >= 400 {
		t.Fatalf("create token: %d", a.status)
	}
	after.Store(int64(3 * time.Second))
	if got := squash(h.get(c, "/tokens").testid("token").Text()); !strings.Contains(got, "created just now") {
		t.Errorf("a token made 3 seconds ago reads %q", got)
	}
	after.Store(int64(42 * time.Second))
	if got := squash(h.get(c, "/tokens").testid("token").Text()); !strings.Contains(got, "created 42 seconds ago") {
		t.Errorf("a token made 42 seconds ago reads %q", got)
	}
}

// A Reader reading with the userscript is seen: the token API stamps
// last_seen like a page (the demo's reading room reads this way), and a
// stamp ahead of the server's clock does not stop the next one.
func TestAReaderUsingTheUserscriptIsSeenJustNow(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	tok := h.apiToken("ben", "reading room")
	h.exec(`UPDATE readers SET last_seen_at = $1 WHERE discord_id = 'ben'`, t0.Add(-26*time.Hour))
	c := h.owner()
	seen := func() string {
		return squash(h.get(c, "/admin/readers").find(`[data-testid="reader"][data-reader-id="ben"] .fact`).Text())
	}
	if got := seen(); got != "last seen 26 hours ago" {
		t.Fatalf("before: %q", got)
	}
	if a := h.api("GET", "/api/v1/bookmarks", tok, ""); a.status != 200 {
		t.Fatalf("bookmarks: %d", a.status)
	}
	if got := seen(); got != "last seen just now" {
		t.Errorf("after the userscript read the Bookmarks: %q", got)
	}
	h.exec(`UPDATE readers SET last_seen_at = $1 WHERE discord_id = 'ben'`, t0.Add(26*time.Hour))
	h.exec(`UPDATE reader_tokens SET last_used_at = NULL`)
	if a := h.api("GET", "/api/v1/bookmarks", tok, ""); a.status != 200 {
		t.Fatalf("bookmarks: %d", a.status)
	}
	if got := seen(); got != "last seen just now" {
		t.Errorf("a stamp ahead of the clock was kept: %q", got)
	}
}

// demoSink is a stand-in for the demo's webhook sink.
type demoSink []handlers.DemoMessage

func (s demoSink) Messages() []handlers.DemoMessage { return s }

// Absolute times are written one way, in the owner's time zone
// (TIME_ZONE), inside a <time> that keeps the instant: the demo's notices
// and a Lane's refusal end alike.
func TestAbsoluteTimesAreWrittenInTheOwnersZoneInsideATimeElement(t *testing.T) {
	t.Parallel()
	berlin, err := word.ParseZone("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 3, 5, 44, 21, 0, time.UTC)
	h := newHarness(t, func(d *handlers.Deps) {
		d.Zone = berlin
		d.Demo = demoSink{{At: at, Footer: "stall", Title: "Lane stalled", Text: "asurascans has stalled."}}
	})
	c := h.owner()
	tm := h.get(c, "/admin/demo/notices").find(`[data-testid="demo-notice"] time`)
	if tm.Length() != 1 || tm.AttrOr("datetime", "") != "2026-12-03T05:44:21Z" || squash(tm.Text()) != "3 Dec 06:44 CET" {
		t.Errorf("demo notice time %q, datetime %q", squash(tm.Text()), tm.AttrOr("datetime", ""))
	}
	h.exec(`UPDATE poll_lanes SET refuse_until = $1 WHERE site = 'novelfull'`, t0.Add(20*time.Minute))
	until := h.get(c, "/admin/lanes").find(`[data-testid="lane-row"][data-site="novelfull"] [data-testid="lane-state"] time`)
	if until.AttrOr("datetime", "") != "2026-11-30T12:20:00Z" || squash(until.Text()) != "30 Nov 13:20 CET" {
		t.Errorf("refusal end %q, datetime %q", squash(until.Text()), until.AttrOr("datetime", ""))
	}
}

// A Series Finished a moment ago says "finished just now", on its row and
// its page, never "finished 1 second ago".
func TestASeriesFinishedAMomentAgoSaysJustNow(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seed(dataset)
	h.exec(`UPDATE series SET finished_at = $1 WHERE series_id = 'healthy'`, t0.Add(-3*time.Second))
	c := h.owner()
	if got := squash(rowOf(h.get(c, "/admin/series"), "healthy").Text()); !strings.Contains(got, "finished just now") {
		t.Errorf("row %q", got)
	}
	if got := squash(h.get(c, "/admin/series/asurascans/healthy").find("main").Text()); !strings.Contains(got, "Finished just now; it is no longer polled.") {
		t.Errorf("detail page %q", got)
	}
}
