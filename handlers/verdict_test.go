package handlers_test

import (
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/mangabookmark/mangabookmark/handlers"
	"github.com/mangabookmark/mangabookmark/notify"
	"github.com/mangabookmark/mangabookmark/store/storetest"
	"github.com/mangabookmark/mangabookmark/word"
)

// withWebhook gives the pages' notifier a webhook: owner notices are on
// (the push itself is never run by a page).
func withWebhook(t *testing.T, hook string) func(*handlers.Deps) {
	return func(d *handlers.Deps) {
		n, err := notify.New(notify.Options{Store: d.Store, WebhookURL: word.Secret(hook),
			BrowserSites: word.BrowserSites{word.Comix: true, word.Kagane: true}, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		d.Notices = n
	}
}

// freshServer is what a new owner had after ten minutes on a machine with
// no internet: four asurascans Series whose every read failed a minute ago
// (the Lane's pass owed four Polls and the Site answered none), and the
// browser Lanes skipping for want of a sidecar.
func freshServer(h *harness) {
	h.t.Helper()
	for _, id := range []string{"solo-max-level-newbie", "nano-machine", "omniscient-reader", "return-of-the-mount-hua"} {
		storetest.Insert(h.t, h.pool, storetest.Series{Site: word.Asurascans, ID: id, URL: "https://asurascans.com/comics/" + id,
			Kind: word.Manga, CheckedAt: t0.Add(-time.Minute)})
		storetest.Insert(h.t, h.pool, storetest.Failure{Site: word.Asurascans, Series: id, Outcome: word.Errors, FailingSince: t0.Add(-time.Minute)})
	}
	storetest.Insert(h.t, h.pool, storetest.Pass{Site: word.Asurascans, StartedAt: t0.Add(-time.Minute), Due: 4, Checked: 0, Counts: word.Counts{Errors: 4}})
	for _, site := range []word.Site{word.Comix, word.Kagane} {
		storetest.Insert(h.t, h.pool, storetest.Pass{Site: site, StartedAt: t0.Add(-2 * time.Minute), Skip: word.SkipNoBrowser})
	}
}

// A fresh server is not "Healthy" (issue 23, item 1): the verdict says what
// is not set up, each with the step that fixes it, first; then that it is
// too early to tell, naming the young faults with their count.
func TestAFreshServerIsNotSetUpAndTooEarlyToTell(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(d *handlers.Deps) { d.Sidecar = false }) // no webhook, no sidecar
	freshServer(h)
	v := h.get(h.owner(), "/admin").testid("verdict")
	text := squash(v.Text())
	if strings.Contains(text, "Healthy") {
		t.Fatalf("a fresh server claims health: %q", text)
	}
	hook := squash(v.Find(`[data-testid="setup-webhook"]`).Text())
	if !strings.Contains(hook, "Owner notices are off") || !strings.Contains(hook, "To fix: set DISCORD_WEBHOOK_URL") {
		t.Errorf("webhook step: %q", hook)
	}
	side := squash(v.Find(`[data-testid="setup-sidecar"]`).Text())
	if !strings.Contains(side, "comix and kagane are read through a browser") || !strings.Contains(side, "To fix: "+word.SidecarSetup) {
		t.Errorf("sidecar step: %q", side)
	}
	early := squash(v.Find(`[data-testid="verdict-early"]`).Text())
	for _, want := range []string{"Too early to tell: 5 faults began less than 12 hours ago", "4 Series failing", "the asurascans Lane owing Polls and making none for 1 minute"} {
		if !strings.Contains(early, want) {
			t.Errorf("too early to tell %q lacks %q", early, want)
		}
	}
	if strings.Contains(early, "sidecar") {
		t.Errorf("the missing sidecar is said twice: as a step and as a young fault: %q", early)
	}
	if i, j := strings.Index(text, "Not set up"), strings.Index(text, "Too early to tell"); i < 0 || j < i {
		t.Errorf("the setup steps do not come first: %q", text)
	}
	if v.Find("a[data-kind]").Length() != 0 {
		t.Errorf("a condition younger than 12 hours is named as one: %q", text)
	}
}

// On a machine with no internet the plain Lanes' passes reach nothing
// (unreachable, docs/adr/0022), which writes no failure row: the verdict's
// too early to tell names our network, with its check, not the Site. It
// reads the newest pass: the older ones reached the Site, inserted first
// so that a read of the oldest (or of the table's order) says otherwise.
func TestAFreshServerWithNoNetworkNamesOurNetwork(t *testing.T) {
	t.Parallel()
	h := newHarness(t, withWebhook(t, "https://discord.example/api/webhooks/1/x"))
	storetest.Insert(t, h.pool, storetest.Series{Site: word.Asurascans, ID: "nano-machine", URL: "https://asurascans.com/comics/nano-machine",
		Kind: word.Manga, CheckedAt: t0.Add(-time.Minute)})
	storetest.Insert(t, h.pool,
		storetest.Pass{Site: word.Asurascans, StartedAt: t0.Add(-20 * time.Minute), Due: 1, Checked: 1, Counts: word.Counts{OK: 1}},
		storetest.Pass{Site: word.Asurascans, StartedAt: t0.Add(-10 * time.Minute), Due: 1, Checked: 1, Counts: word.Counts{OK: 1}},
		storetest.Pass{Site: word.Asurascans, StartedAt: t0.Add(-3 * time.Minute), Due: 1, Counts: word.Counts{Unreachable: 1}})
	early := squash(h.get(h.owner(), "/admin").testid("verdict-early").Text())
	for _, want := range []string{"1 fault began less than 12 hours ago", "the asurascans Lane unable to reach asurascans.com for 3 minutes",
		"check this machine's network and DNS (curl -sI https://asurascans.com)"} {
		if !strings.Contains(early, want) {
			t.Errorf("too early to tell %q lacks %q", early, want)
		}
	}
}

// A set-up server whose Lanes read their Sites is Healthy, and says nothing
// else; a server set up but with a young fault is too early to tell only.
func TestASetUpHealthyServerSaysHealthyAndNothingElse(t *testing.T) {
	t.Parallel()
	h := newHarness(t, withWebhook(t, "https://discord.example/api/webhooks/1/x"))
	storetest.Insert(t, h.pool, storetest.Series{Site: word.Asurascans, ID: "nano-machine", URL: "https://asurascans.com/comics/nano-machine",
		Kind: word.Manga, LatestChapter: "12", CheckedAt: t0.Add(-time.Minute)})
	for _, site := range []word.Site{word.Asurascans, word.Comix, word.Kagane} {
		storetest.Insert(t, h.pool, storetest.Pass{Site: site, StartedAt: t0.Add(-time.Minute), Due: 1, Checked: 1, Counts: word.Counts{OK: 1}})
	}
	c := h.owner()
	v := h.get(c, "/admin").testid("verdict")
	if text := squash(v.Text()); !strings.HasPrefix(text, "Healthy:") || !v.HasClass("ok") ||
		v.Find(`[data-testid="verdict-setup"], [data-testid="verdict-early"], [data-testid="verdict-needs"]`).Length() != 0 {
		t.Errorf("a healthy server's verdict: %q", text)
	}
	storetest.Insert(t, h.pool, storetest.Failure{Site: word.Asurascans, Series: "nano-machine", Outcome: word.NotFound, FailingSince: t0.Add(-3 * time.Hour)})
	v = h.get(c, "/admin").testid("verdict")
	if text := squash(v.Text()); strings.Contains(text, "Healthy") || strings.Contains(text, "Not set up") ||
		!strings.Contains(text, "Too early to tell: 1 fault began less than 12 hours ago") || !strings.Contains(text, "1 Series failing") {
		t.Errorf("one Series failing for 3 hours: %q", text)
	}
}

// laneRow is one Lane's row on the Lanes page.
func laneRow(a answer, site string) *goquery.Selection {
	return a.find(`[data-testid="lane-row"][data-site="` + site + `"]`)
}

// A Lane's state label agrees with its fix, each sentence appears once, and
// its last pass's figures are that pass's own (issue 23, item 6).
func TestALaneStateAgreesWithItsFixAndItsFigures(t *testing.T) {
	t.Parallel()
	t.Run("a stalled Lane is labelled stalled, not running, with its fix once", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		h.passes("asurascans", "", 3, 0, 0, 14, 10, 5, 1)
		row := laneRow(h.get(h.owner(), "/admin/lanes"), "asurascans")
		state := squash(row.Find(`[data-testid="lane-state"]`).Text())
		fix := word.Stall.Repair("asurascans")
		if state != "stalled" || !row.Find(`[data-testid="lane-state"]`).HasClass("fault") {
			t.Errorf("a stalled Lane's state reads %q", state)
		}
		if n := strings.Count(squash(row.Text()), fix); n != 1 || squash(row.Find(`[data-testid="lane-fix"]`).Text()) != fix {
			t.Errorf("the stall's fix is said %d times: %q", n, squash(row.Text()))
		}
	})
	t.Run("a fresh server's Lane reads its one pass: polled, not answered, and stalling", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, func(d *handlers.Deps) { d.Sidecar = false })
		freshServer(h)
		row := laneRow(h.get(h.owner(), "/admin/lanes"), "asurascans")
		if got := squash(row.Find(`[data-testid="lane-last-pass"]`).Text()); got != "Last pass: 1 minute ago: 4 due, 4 polled, 0 answered" {
			t.Errorf("the last pass reads %q", got)
		}
		if state := squash(row.Find(`[data-testid="lane-state"]`).Text()); state != "stalling" {
			t.Errorf("a Lane whose pass owed Polls and the Site answered none reads %q", state)
		}
		if note := squash(row.Find(`[data-testid="lane-state-note"]`).Text()); !strings.Contains(note, "For 1 minute") || !strings.Contains(note, "past 12 hours it is a stall") {
			t.Errorf("stalling note %q", note)
		}
		if n := strings.Count(squash(row.Text()), word.Stall.Repair("asurascans")); n != 1 {
			t.Errorf("the fix is said %d times", n)
		}
	})
	t.Run("a browser Lane down past 12 hours says the sidecar's fix once", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		h.passes("comix", "browser-down", 2, 0, 0, 13, 6, 1)
		h.passes("kagane", "browser-down", 2, 0, 0, 12, 2)
		a := h.get(h.owner(), "/admin/lanes")
		fix := word.SidecarDown.Repair("")
		for _, site := range []string{"comix", "kagane"} {
			row := laneRow(a, site)
			if n := strings.Count(squash(row.Text()), fix); n != 1 {
				t.Errorf("%s: the sidecar's fix is said %d times: %q", site, n, squash(row.Text()))
			}
			if state := squash(row.Find(`[data-testid="lane-state"]`).Text()); state != "browser down" {
				t.Errorf("%s reads %q", site, state)
			}
		}
	})
	t.Run("a Lane with no sidecar configured says its fix once", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, func(d *handlers.Deps) { d.Sidecar = false })
		h.passes("comix", "no-browser", 2, 0, 0, 13, 6, 1)
		row := laneRow(h.get(h.owner(), "/admin/lanes"), "comix")
		text := squash(row.Text())
		if n := strings.Count(text, word.SidecarSetup); n != 1 || strings.Contains(text, word.SidecarDown.Repair("")) {
			t.Errorf("the setup step is said %d times, or beside sidecar-down's repair: %q", n, text)
		}
	})
	t.Run("an adapter-broken Lane is not labelled running", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		h.adapterBroken()
		row := laneRow(h.get(h.owner(), "/admin/lanes"), "demonicscans")
		if state := squash(row.Find(`[data-testid="lane-state"]`).Text()); state != "adapter broken" {
			t.Errorf("reads %q beside %q", state, squash(row.Find(`[data-testid="lane-fix"]`).Text()))
		}
	})
}

// The adapter-broken verdict links to a list holding exactly the Series the
// condition counted, with its Site set. Here most of them never yielded a
// chapter, so the failing list (it needs a Latest Chapter) would be empty
// under a verdict naming a fault.
func TestTheAdapterBrokenVerdictLinksToExactlyTheSeriesItCounted(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.adapterBrokenNeverRead()
	v := h.get(h.owner(), "/admin").testid("verdict")
	if text := squash(v.Text()); !strings.Contains(text, "demonicscans' Series") || strings.Contains(text, "demonicscans's") {
		t.Errorf("verdict %q: want the possessive demonicscans'", text)
	}
	a := v.Find(`a[data-kind="adapter-broken"]`)
	href, ok := a.Attr("href")
	if !ok {
		t.Fatalf("no adapter-broken link in %q", squash(v.Text()))
	}
	list := h.get(h.owner(), href)
	if list.status != http.StatusOK {
		t.Fatalf("%s answered %d", href, list.status)
	}
	var got []string
	list.testid("series-row").Each(func(_ int, s *goquery.Selection) {
		got = append(got, s.AttrOr("data-site", "")+":"+s.AttrOr("data-series-id", ""))
	})
	want := []string{"demonicscans:a", "demonicscans:b", "demonicscans:c", "demonicscans:d"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("%s lists %v, want exactly the counted %v", href, got, want)
	}
	if c := squash(list.testid("list-caption").Text()); !strings.Contains(c, "4") || !strings.Contains(c, "yielding no chapter for over 12 hours") {
		t.Errorf("caption %q", c)
	}
	// The Lanes page's adapter-broken Lane links to the same list.
	if got := lane(h.get(h.owner(), "/admin/lanes"), "demonicscans").Find(`[data-testid="lane-no-chapter-link"]`).AttrOr("href", ""); got != href {
		t.Errorf("the Lanes page links to %q, want %q", got, href)
	}
}

// adapterBrokenNeverRead seeds demonicscans with six Series: a, b, c and d
// hold a no_chapter failure row three months old (only a ever yielded a
// chapter), e an old errors row, f a young no_chapter one; asurascans has
// one such row of three Series. adapter-broken holds on demonicscans only,
// counting a to d.
func (h *harness) adapterBrokenNeverRead() {
	t := h.t
	t.Helper()
	long := t0.Add(-90 * 24 * time.Hour)
	for _, id := range []string{"a", "b", "c", "d", "e", "f"} {
		r := storetest.Series{Site: word.Demonicscans, ID: id, URL: "https://demonicscans.org/manga/" + id, Kind: "manga", CheckedAt: t0}
		if id == "a" {
			r.LatestChapter = "5" // yielded a chapter once
		}
		storetest.Insert(t, h.pool, r)
	}
	storetest.Insert(t, h.pool,
		storetest.Failure{Site: word.Demonicscans, Series: "a", Outcome: word.NoChapter, FailingSince: long},
		storetest.Failure{Site: word.Demonicscans, Series: "b", Outcome: word.NoChapter, FailingSince: long},
		storetest.Failure{Site: word.Demonicscans, Series: "c", Outcome: word.NoChapter, FailingSince: long},
		storetest.Failure{Site: word.Demonicscans, Series: "d", Outcome: word.NoChapter, FailingSince: long},
		storetest.Failure{Site: word.Demonicscans, Series: "e", Outcome: word.Errors, FailingSince: long},                  // another word
		storetest.Failure{Site: word.Demonicscans, Series: "f", Outcome: word.NoChapter, FailingSince: t0.Add(-time.Hour)}) // too young
	// Another Site's no_chapter row is not this Site's (one of three: no
	// condition there).
	for _, id := range []string{"x", "y", "z"} {
		storetest.Insert(t, h.pool, storetest.Series{Site: word.Asurascans, ID: id, URL: "https://asuracomic.net/series/" + id, Kind: "manga", CheckedAt: t0})
	}
	storetest.Insert(t, h.pool, storetest.Failure{Site: word.Asurascans, Series: "z", Outcome: word.NoChapter, FailingSince: long})
}
