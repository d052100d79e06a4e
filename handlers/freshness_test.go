package handlers_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/mangabookmark/mangabookmark/handlers"
	"github.com/mangabookmark/mangabookmark/store/storetest"
	"github.com/mangabookmark/mangabookmark/word"
)

// seedArrivals gives comix three new chapters in the last hour, detected
// 60 s, 120 s and 600 s after their first evidence (median 2 minutes, p95
// 552 s), on two Series read 3 hours and 10 minutes ago; and kagane one
// Series never read and no new chapter.
func seedArrivals(h *harness) {
	h.t.Helper()
	storetest.Insert(h.t, h.pool,
		storetest.Series{Site: word.Comix, ID: "a", URL: "https://comix.to/title/a", CheckedAt: t0.Add(-3 * time.Hour)},
		storetest.Series{Site: word.Comix, ID: "b", URL: "https://comix.to/title/b", CheckedAt: t0.Add(-10 * time.Minute)},
		storetest.Series{Site: word.Kagane, ID: "k", URL: "https://kagane.org/series/k"},
	)
	at := func(series string, ago, delay time.Duration) storetest.Arrival {
		return storetest.Arrival{Site: word.Comix, Series: series, ConfirmedAt: t0.Add(-ago), NoticedAt: t0.Add(-ago - delay)}
	}
	storetest.Insert(h.t, h.pool, at("a", 5*time.Minute, time.Minute), at("b", 20*time.Minute, 2*time.Minute),
		at("a", 50*time.Minute, 10*time.Minute), at("a", 25*time.Hour, time.Minute))
}

func lane(a answer, site string) *goquery.Selection {
	return a.find(`[data-testid="lane-row"][data-site="` + site + `"]`)
}

func text(s *goquery.Selection) string { return strings.Join(strings.Fields(s.Text()), " ") }

func TestEachLaneShowsItsFreshnessAsALineAndAPlotOfItsHours(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	seedArrivals(h)
	a := h.get(h.owner(), "/admin/lanes")
	if a.status != http.StatusOK {
		t.Fatalf("status %d", a.status)
	}
	comix := lane(a, "comix")
	want := "3 new chapters in 24 h · median 2 minutes · p95 9 minutes · oldest check 3 hours ago"
	if got := text(comix.Find(`[data-testid="lane-freshness-line"]`)); got != want {
		t.Errorf("comix reads %q, want %q", got, want)
	}
	plot := comix.Find(`svg[data-testid="lane-freshness-plot"]`)
	if plot.Length() != 1 || plot.AttrOr("role", "") != "img" {
		t.Fatalf("comix has %d plots", plot.Length())
	}
	// One hour had chapters: one pair of bars, its tooltip, and the same
	// numbers in the description a screen reader reads.
	if n := plot.Find(`g.hour`).Length(); n != 1 {
		t.Errorf("%d hours drawn, want 1", n)
	}
	hour := "1 to 0 hours ago: 3 new chapters, median 2 minutes, p95 9 minutes"
	if got := text(plot.Find(`g.hour title`)); got != hour {
		t.Errorf("the hour's title reads %q, want %q", got, hour)
	}
	if desc := text(plot.Find(`desc`)); !strings.Contains(desc, want) || !strings.Contains(desc, hour) {
		t.Errorf("the plot's description %q lacks the figures", desc)
	}
	if got := plot.AttrOr("aria-labelledby", ""); got != "fresh-t-comix fresh-d-comix" || plot.Find(`#fresh-d-comix`).Length() != 1 {
		t.Errorf("the plot is labelled by %q", got)
	}

	kagane := lane(a, "kagane")
	if got := text(kagane.Find(`[data-testid="lane-freshness-line"]`)); got != "No new chapters in 24 h · a Series never checked yet" {
		t.Errorf("kagane reads %q", got)
	}
	if kagane.Find(`svg`).Length() != 0 {
		t.Error("a Lane without a new chapter draws an empty plot")
	}
	if got := text(lane(a, "novelfull").Find(`[data-testid="lane-freshness-line"]`)); got != "No new chapters in 24 h" {
		t.Errorf("a Site without a pollable Series reads %q", got)
	}
	// The row asked again by htmx carries the same block.
	frag := h.get(h.owner(), "/admin/lanes/comix", "HX-Request", "true")
	if got := text(frag.find(`[data-testid="lane-freshness-line"]`)); got != want {
		t.Errorf("the row's fragment reads %q", got)
	}
}

func TestEachLaneSaysWhenItsListingWasReadOrThatItIsBroken(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.exec(`UPDATE poll_lanes SET listing_read_at = $1, listing_ok_at = $1 WHERE site = 'comix'`, t0.Add(-3*time.Minute))
	h.exec(`UPDATE poll_lanes SET listing_read_at = $1, listing_empty_since = $2 WHERE site = 'asurascans'`,
		t0.Add(-2*time.Minute), t0.Add(-13*time.Hour))
	h.exec(`UPDATE poll_lanes SET listing_read_at = $1, listing_empty_since = $2 WHERE site = 'kagane'`,
		t0.Add(-2*time.Minute), t0.Add(-2*time.Hour))
	a := h.get(h.owner(), "/admin/lanes")
	cases := map[string]string{
		"comix":           "listing read 3 minutes ago",
		"kagane":          "listing read 2 minutes ago, named no Series for 2 hours",
		"lightnovelworld": "listing not read yet",
		"asurascans":      "listing read 2 minutes ago",
	}
	for site, want := range cases {
		if got := text(lane(a, site).Find(`[data-testid="lane-listing"]`)); got != want {
			t.Errorf("%s: %q, want %q", site, got, want)
		}
	}
	fix := "The asurascans listing has named no Series for 13 hours: its reader no longer matches the page. " +
		"To fix: update mangabookmark. Until then this Lane reads by cadence and the backstop alone."
	broken := lane(a, "asurascans")
	if got := text(broken.Find(`[data-testid="lane-listing-broken"]`)); got != fix || !broken.HasClass("problem") {
		t.Errorf("a broken listing reads %q (a problem row: %v), want %q", got, broken.HasClass("problem"), fix)
	}
	if n := a.find(`[data-testid="lane-listing-broken"]`).Length(); n != 1 {
		t.Errorf("%d Lanes say their listing is broken, want 1", n)
	}
	if first := a.find(`[data-testid="lane-row"]`).First().AttrOr("data-site", ""); first != "asurascans" {
		t.Errorf("the first Lane is %s, want the one with a broken listing", first)
	}
	if lane(a, "kagane").HasClass("problem") {
		t.Error("a listing empty for less than 12 hours is a fault already")
	}

	off := newHarness(t, func(d *handlers.Deps) { d.ListingOff = true })
	b := off.get(off.owner(), "/admin/lanes")
	if got := text(lane(b, "comix").Find(`[data-testid="lane-listing"]`)); got != "listing off (LISTING_EVERY=0)" {
		t.Errorf("with the listing off: %q", got)
	}
}

func TestTheLandingShowsTheDaysNewChaptersAndTheirMedianDelay(t *testing.T) {
	t.Parallel()
	empty := newHarness(t)
	a := empty.get(empty.owner(), "/admin")
	if a.status != http.StatusOK {
		t.Fatalf("status %d", a.status)
	}
	if got := text(a.testid("freshness-figure")); got != "No new chapters detected in the last 24 hours." {
		t.Errorf("with no Arrival the landing reads %q", got)
	}
	h := newHarness(t)
	seedArrivals(h)
	b := h.get(h.owner(), "/admin")
	if got := text(b.testid("freshness-figure")); got != "3 new chapters detected in the last 24 hours, median delay 2 minutes." {
		t.Errorf("the landing reads %q", got)
	}
}
