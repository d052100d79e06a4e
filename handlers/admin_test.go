package handlers_test

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/mangabookmark/mangabookmark/handlers"
	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/store/storetest"
	"github.com/mangabookmark/mangabookmark/word"
)

func rowIDs(a answer) []string {
	var ids []string
	a.testid("series-row").Each(func(_ int, s *goquery.Selection) {
		ids = append(ids, s.AttrOr("data-series-id", ""))
	})
	return ids
}

func rowOf(a answer, id string) *goquery.Selection {
	return a.find(`[data-testid="series-row"][data-series-id="` + id + `"]`)
}

func TestTheFailureMarkerRendersOnTheFactLineAlikeForAnHourAndThreeMonths(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seed(dataset)
	h.storeCover("healthy")
	page := h.get(h.owner(), "/admin/series")
	if page.status != http.StatusOK {
		t.Fatalf("status %d", page.status)
	}
	hour := rowOf(page, "failing-1h").Find(`[data-testid="fact-line"] [data-testid="failure-marker"]`)
	months := rowOf(page, "failing-3mo").Find(`[data-testid="fact-line"] [data-testid="failure-marker"]`)
	if hour.Length() != 1 || months.Length() != 1 {
		t.Fatalf("markers on the fact line: %d and %d", hour.Length(), months.Length())
	}
	if got := strings.Join(strings.Fields(hour.Text()), " "); got != "read failed · 1 hour" {
		t.Errorf("one-hour marker reads %q", got)
	}
	if got := strings.Join(strings.Fields(months.Text()), " "); got != "page gone · 3 months" {
		t.Errorf("three-month marker reads %q", got)
	}
	// The same look: identical markup once the word and the age are set aside.
	shape := func(s *goquery.Selection) string {
		html, _ := goquery.OuterHtml(s)
		html = regexp.MustCompile(`>[^<]*<`).ReplaceAllString(html, "><")
		return regexp.MustCompile(`data-outcome="[^"]*"`).ReplaceAllString(html, "")
	}
	if shape(hour) != shape(months) {
		t.Errorf("markers differ in look:\n%s\n%s", shape(hour), shape(months))
	}
	if rowOf(page, "healthy").Find(`[data-testid="failure-marker"]`).Length() != 0 {
		t.Errorf("a healthy Series carries a failure marker")
	}
	if page.testid("completion-hint").Length() != 0 {
		t.Errorf("the completion hint must never be on a list row")
	}
	if img := rowOf(page, "healthy").Find("img"); img.AttrOr("loading", "") != "lazy" || img.AttrOr("width", "") == "" || img.AttrOr("height", "") == "" {
		t.Errorf("cover is not lazy with fixed dimensions: %v", img.Nodes)
	}
}

func TestEachFiguresNumberIsTheLengthOfItsList(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seed(dataset)
	c := h.owner()
	landing := h.get(c, "/admin")
	want := map[string][]string{
		"never-checked":  {"never"},
		"stale":          {"stale", "novel-stale"}, // (site, series_id) order
		"unpollable":     {"gate-refused", "no-address"},
		"no-chapter":     {"never-yielded"},
		"failing":        {"completed-failing", "failing-3mo", "failing-finished", "gate-refused", "unverified"},
		"unverified":     {"unverified"},
		"site-completed": {"completed", "completed-failing"},
		"finished":       {"completed-finished", "failing-finished"},
		"orphan":         {"completed-failing", "completed-finished", "gate-refused"},
	}
	for _, f := range store.Filters {
		name := string(f)
		statID := "stat-" + name
		if f == store.FilterAll {
			statID = "stat-all"
		}
		stat := landing.testid(statID)
		if stat.Length() != 1 {
			t.Errorf("%s: %d figures", statID, stat.Length())
			continue
		}
		n, err := strconv.Atoi(strings.TrimSpace(stat.Text()))
		if err != nil {
			t.Errorf("%s: figure %q is not a number", statID, stat.Text())
			continue
		}
		href, linked := stat.Attr("href")
		if n == 0 && linked {
			t.Errorf("%s: a zero must be an unlinked digit", statID)
		}
		if n > 0 && href != "/admin/series"+map[bool]string{true: "", false: "?filter=" + name}[f == store.FilterAll] {
			t.Errorf("%s links to %q", statID, href)
		}
		list := h.get(c, "/admin/series?filter="+url.QueryEscape(name))
		ids := rowIDs(list)
		if len(ids) != n {
			t.Errorf("%s: figure %d, list has %d (%v)", name, n, len(ids), ids)
		}
		if got := strings.TrimSpace(list.testid("list-count").Text()); got != strconv.Itoa(n) {
			t.Errorf("%s: the list's own count %q disagrees with the figure %d", name, got, n)
		}
		if w, ok := want[name]; ok && !slices.Equal(ids, w) {
			t.Errorf("%s lists %v, want %v", name, ids, w)
		}
	}
	// A zero figure prints an unlinked digit.
	h2 := newHarness(t)
	empty := h2.get(h2.owner(), "/admin")
	if s := empty.testid("stat-failing"); s.Text() != "0" || s.Is("a") {
		t.Errorf("empty failing figure: %q (link %v)", s.Text(), s.Is("a"))
	}
}

func TestSiteAndKindStackOnTheFilter(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seed(dataset)
	c := h.owner()
	if ids := rowIDs(h.get(c, "/admin/series?filter=stale&site=novelfull")); !slices.Equal(ids, []string{"novel-stale"}) {
		t.Errorf("stale on novelfull: %v", ids)
	}
	if ids := rowIDs(h.get(c, "/admin/series?filter=stale&kind=manga")); !slices.Equal(ids, []string{"stale"}) {
		t.Errorf("stale manga: %v", ids)
	}
	if ids := rowIDs(h.get(c, "/admin/series?filter=stale&kind=manga&site=novelfull")); len(ids) != 0 {
		t.Errorf("stale manga on novelfull: %v", ids)
	}
}

func TestKeysetPagesWalkTheWholeList(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	var many []fixture
	for i := range 120 {
		many = append(many, fixture{id: "s" + strconv.Itoa(1000+i), url: addr, bookmarked: true})
	}
	h.seed(many)
	c := h.owner()
	var all []string
	path := "/admin/series?filter=never-checked"
	for pages := 0; path != ""; pages++ {
		if pages > 5 {
			t.Fatal("pagination does not end")
		}
		a := h.get(c, path, "HX-Request", "true")
		all = append(all, rowIDs(a)...)
		path = a.testid("page-next").AttrOr("href", "")
		if path != "" && a.testid("page-next").AttrOr("hx-target", "") != "#series-list" {
			t.Errorf("the pager must swap the list region")
		}
	}
	if len(all) != 120 || !slices.IsSorted(all) {
		t.Errorf("pages gave %d rows (sorted %v)", len(all), slices.IsSorted(all))
	}
}

func TestHTMXGetsTheListRegionAndEveryoneElseTheWholePage(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seed(dataset)
	c := h.owner()
	cases := []struct {
		name     string
		headers  []string
		fragment bool
	}{
		{"a plain load", nil, false},
		{"an htmx swap", []string{"HX-Request", "true"}, true},
		{"a boosted htmx request", []string{"HX-Request", "true", "HX-Boosted", "true"}, false},
		{"an htmx history restore", []string{"HX-Request", "true", "HX-History-Restore-Request", "true"}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := h.get(c, "/admin/series?filter=failing&site=&kind=", tc.headers...)
			if a.status != http.StatusOK {
				t.Fatalf("status %d", a.status)
			}
			if !slices.Contains(a.header.Values("Vary"), "HX-Request") {
				t.Errorf("Vary = %v", a.header.Values("Vary"))
			}
			isPage := strings.Contains(a.body, "<html") && a.testid("filter-form").Length() == 1 && a.testid("series-list").Length() == 1
			if tc.fragment == isPage {
				t.Errorf("fragment wanted %v; got a page %v", tc.fragment, isPage)
			}
			if ids := rowIDs(a); !slices.Equal(ids, []string{"completed-failing", "failing-3mo", "failing-finished", "gate-refused", "unverified"}) {
				t.Errorf("rows %v", ids)
			}
			if tc.fragment && a.header.Get("HX-Push-Url") != "/admin/series?filter=failing" {
				t.Errorf("pushed %q", a.header.Get("HX-Push-Url"))
			}
		})
	}
	page := h.get(c, "/admin/series")
	form := page.testid("filter-form")
	if form.AttrOr("hx-get", "") != "/admin/series" || form.AttrOr("hx-target", "") != "#series-list" ||
		form.AttrOr("hx-push-url", "") != "true" || form.AttrOr("method", "") != "get" || form.AttrOr("action", "") != "/admin/series" {
		t.Errorf("filter form is not a GET form htmx swaps into the list: %v", form.Nodes[0].Attr)
	}
	for _, f := range []string{"failing", "unverified", "site-completed"} {
		if page.testid("filter-"+f).Length() != 1 {
			t.Errorf("filter %s is not offered", f)
		}
	}
}

func TestOutcomeCountsStayUnlinkedBesideOneNavigationLinkPerSite(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	storetest.Insert(t, h.pool, storetest.Pass{Site: word.Comix, StartedAt: t0.Add(-time.Hour), Due: 9, Checked: 5,
		Counts: word.Counts{OK: 3, NoChapter: 2, Refused: 4, Errors: 1}})
	h.seed([]fixture{{site: "comix", id: "c1", url: "https://comix.to/title/c1", chapter: "3", checkedAgo: time.Minute, failure: "errors", failingFor: 13 * time.Hour},
		{site: "asurascans", id: "fresh", url: addr, chapter: "3", checkedAgo: time.Minute, failure: "errors", failingFor: time.Hour}})
	h.exec(`UPDATE poll_lanes SET force_poll_at = $1 WHERE site = 'kagane'`, t0.Add(-3*time.Hour))
	storetest.Insert(t, h.pool, storetest.Notice{Kind: word.Stall, Site: "asurascans", NotifiedAt: t0.Add(-2 * time.Hour)},
		storetest.Notice{Kind: word.SidecarDown})
	storetest.Insert(t, h.pool, storetest.NoticeAttempt{Kind: word.SidecarDown, Attempts: 2, LastAttemptAt: t0.Add(-time.Hour), LastError: "Discord answered 500"})
	a := h.get(h.owner(), "/admin/lanes")
	rows := a.testid("lane-row")
	if rows.Length() != 6 {
		t.Fatalf("%d lane rows", rows.Length())
	}
	rows.Each(func(_ int, r *goquery.Selection) {
		site := r.AttrOr("data-site", "")
		counts := r.Find(`[data-testid="lane-counts"]`)
		if counts.Length() != 1 || counts.Find("a").Length() != 0 || counts.Closest("a").Length() != 0 {
			t.Errorf("%s: outcome counts must render unlinked", site)
		}
		// The one navigation link appears only where its list is non-empty.
		link := r.Find(`[data-testid="lane-failing-link"]`)
		if site != "comix" && link.Length() != 0 {
			t.Errorf("%s: a failing link to an empty list", site)
		}
		if site == "comix" && (link.Length() != 1 || link.AttrOr("href", "") != "/admin/series?filter=failing&site="+site) {
			t.Errorf("%s: navigation link %v", site, link.AttrOr("href", "<none>"))
		}
	})
	comix := a.find(`[data-testid="lane-row"][data-site="comix"]`)
	counts := map[string]string{}
	comix.Find(`[data-testid="lane-counts"] dt`).Each(func(_ int, dt *goquery.Selection) {
		counts[dt.Parent().AttrOr("data-outcome", "")] = dt.Next().Text()
	})
	if counts["ok"] != "3" || counts["refused"] != "4" || counts["no_chapter"] != "2" || len(counts) != 7 {
		t.Errorf("comix counts: %v", counts)
	}
	if got := comix.Find("span.tag").Text(); got != "browser" {
		t.Errorf("comix route %q", got)
	}
	if got := a.find(`[data-site="kagane"] [data-testid="lane-force-pending"]`).Text(); !strings.Contains(got, "3 hours") {
		t.Errorf("an unserved Forced Poll shows its age: %q", got)
	}
	notices := a.testid("owner-notice")
	if notices.Length() != 2 {
		t.Fatalf("%d owner notices", notices.Length())
	}
	text := strings.Join(strings.Fields(notices.Text()), " ")
	if !strings.Contains(text, "sent 2 hours ago") || !strings.Contains(text, "pending — last attempt failed: Discord answered 500") || !strings.Contains(text, "browser sidecar") {
		t.Errorf("notices read %q", text)
	}
}

func TestEachLaneNamesTheRouteTheReaderWasGiven(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		browser word.BrowserSites
		want    map[string]string
	}{
		"the default pair reads through the browser": {word.BrowserSites{word.Comix: true, word.Kagane: true}, map[string]string{"comix": "browser", "kagane": "browser", "asurascans": "plain"}},
		"BROWSER_SITES=none leaves every Lane plain": {word.BrowserSites{}, map[string]string{"comix": "plain", "kagane": "plain", "asurascans": "plain"}},
		"a nil set is none too, never a default":     {nil, map[string]string{"comix": "plain", "kagane": "plain"}},
		"one named Site alone":                       {word.BrowserSites{word.Novelfull: true}, map[string]string{"novelfull": "browser", "comix": "plain"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, func(d *handlers.Deps) { d.BrowserSites = tc.browser })
			a := h.get(h.owner(), "/admin/lanes")
			for site, want := range tc.want {
				if got := a.find(`[data-testid="lane-row"][data-site="` + site + `"] span.tag`).Text(); got != want {
					t.Errorf("%s: route %q, want %q", site, got, want)
				}
			}
		})
	}
}

// A Lane whose lease ran out longer ago than its holder's pace is led by
// nobody: nothing polls it and no pass says so, so the Lanes page names it
// as a fault; one whose lease ended more recently, or still runs, is not
// (ADR 0018; issue 22, item 8).
func TestTheLanesPageNamesALaneNobodyLeadsForLongerThanItsPace(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	// A lease lives on the database's clock, not the page's (t0).
	lease := `INSERT INTO lane_leases (site, holder, expires_at, pace_s) VALUES ($1, 'host/1/ab', now() + $2::interval, 3600)`
	h.exec(lease, "comix", "-3 hours")        // nobody for 3 hours, pace 1 hour
	h.exec(lease, "kagane", "-10 minutes")    // nobody for 10 minutes: within its pace
	h.exec(lease, "asurascans", "30 seconds") // led
	a := h.get(h.owner(), "/admin/lanes")
	row := func(site string) *goquery.Selection {
		return a.find(`[data-testid="lane-row"][data-site="` + site + `"]`)
	}
	state, note := row("comix").Find(`[data-testid="lane-state"]`), row("comix").Find(`[data-testid="lane-state-note"]`)
	if !strings.Contains(state.Text(), "nobody leads this Lane") || !state.HasClass("fault") {
		t.Errorf("comix state: %q", state.Text())
	}
	if !strings.Contains(note.Text(), "for 3 hours, longer than its pace (1 hour)") {
		t.Errorf("comix note: %q", note.Text())
	}
	for _, site := range []string{"kagane", "asurascans", "novelfull"} {
		if got := row(site).Find(`[data-testid="lane-state"]`).Text(); strings.Contains(got, "nobody") {
			t.Errorf("%s named un-led: %q", site, got)
		}
	}
	if first := a.find(`[data-testid="lane-row"]`).First().AttrOr("data-site", ""); first != "comix" {
		t.Errorf("the un-led Lane is not among the problems first: %q first", first)
	}
}

func TestTheUnverifiedSentenceSitsBesideTheCorrectionControl(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seed(dataset)
	c := h.owner()
	a := h.get(c, "/admin/series/asurascans/unverified")
	note, ctl := a.testid("unverified-note"), a.testid("correction-control")
	if note.Length() != 1 || ctl.Length() != 1 {
		t.Fatalf("note %d, control %d", note.Length(), ctl.Length())
	}
	if note.Parent().Get(0) != ctl.Parent().Get(0) {
		t.Errorf("the unverified sentence is not beside the correction control")
	}
	if f := a.testid("fact-line"); !strings.Contains(f.Text(), "raised by Reader One") || f.Find(`[data-testid="failure-marker"]`).Length() != 1 {
		t.Errorf("fact line: %q", f.Text())
	}
	for _, id := range []string{"failing-3mo", "failing-1h", "healthy"} {
		if h.get(c, "/admin/series/asurascans/"+id).testid("unverified-note").Length() != 0 {
			t.Errorf("%s is not unverified but shows the sentence", id)
		}
	}
}

func TestTheHintSitsBesideAnUnchangedFinishControlAndLeavesAFinishedSeries(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seed(dataset)
	c := h.owner()
	hinted := h.get(c, "/admin/series/asurascans/completed")
	plain := h.get(c, "/admin/series/asurascans/healthy")
	finished := h.get(c, "/admin/series/asurascans/completed-finished")
	hint, ctl := hinted.testid("completion-hint"), hinted.testid("finish-control")
	if hint.Length() != 1 || ctl.Length() != 1 || hint.Parent().Get(0) != ctl.Parent().Get(0) {
		t.Fatalf("hint %d beside finish control %d", hint.Length(), ctl.Length())
	}
	if !strings.Contains(hint.Text(), "completed") || !strings.Contains(hint.Text(), "3 hours") {
		t.Errorf("hint reads %q", hint.Text())
	}
	outer := func(a answer, id string) string {
		s, _ := goquery.OuterHtml(a.testid("finish-control"))
		return strings.ReplaceAll(s, id, "ID")
	}
	if outer(hinted, "completed") != outer(plain, "healthy") {
		t.Errorf("the Finish control changes with the hint:\n%s\n%s", outer(hinted, "completed"), outer(plain, "healthy"))
	}
	if ctl.Find("button").Length() != 1 || ctl.Find("input").Length() != 0 {
		t.Errorf("the Finish control is one button and nothing pre-filled")
	}
	if finished.testid("completion-hint").Length() != 0 {
		t.Errorf("a Finished Series shows the hint")
	}
	if finished.testid("finish-control").Length() != 0 || finished.testid("unfinish-control").Length() != 1 {
		t.Errorf("a Finished Series offers Un-finish instead of Finish")
	}
	if plain.testid("completion-hint").Length() != 0 {
		t.Errorf("no hint without site_completed_at")
	}
}

// passes writes one pass-log row per age (hours before t0) for site, with
// the given skip value and counts.
func (h *harness) passes(site, skip string, due, checked, refused int, hoursAgo ...int) {
	h.t.Helper()
	for _, hr := range hoursAgo {
		storetest.Insert(h.t, h.pool, storetest.Pass{Site: word.Site(site), StartedAt: t0.Add(-time.Duration(hr) * time.Hour),
			Due: due, Checked: checked, Skip: word.Skip(skip), Counts: word.Counts{Refused: refused}})
	}
}

// adapterBroken makes adapter-broken hold on demonicscans for 3 months:
// three of its four Series have yielded no chapter since then.
func (h *harness) adapterBroken() {
	h.t.Helper()
	for i, id := range []string{"a", "b", "c", "d"} {
		storetest.Insert(h.t, h.pool, storetest.Series{Site: word.Demonicscans, ID: id, URL: "https://demonicscans.org/manga/" + id,
			Kind: "manga", LatestChapter: "5", CheckedAt: t0})
		if i < 3 {
			storetest.Insert(h.t, h.pool, storetest.Failure{Site: word.Demonicscans, Series: id, Outcome: word.NoChapter, FailingSince: t0.Add(-90 * 24 * time.Hour)})
		}
	}
}

// The verdict line reads the real derivation (the notify package) over a
// pass log and failure rows seeded so that each condition holds.
func TestTheVerdictLineReadsTheFourConditions(t *testing.T) {
	t.Parallel()
	seeds := map[string]func(h *harness){
		"stall": func(h *harness) { h.passes("asurascans", "", 3, 0, 0, 14, 10, 5, 1) },
		"no-browser-route": func(h *harness) {
			h.passes("novelfull", "refusing", 2, 0, 0, 72, 40, 1)
		},
		"sidecar-down": func(h *harness) {
			h.passes("comix", "browser-down", 2, 0, 0, 13, 6, 1)
			h.passes("kagane", "browser-down", 2, 0, 0, 12, 2)
		},
		"adapter-broken": (*harness).adapterBroken,
	}
	want := map[string]struct{ subject, age, href string }{
		"stall":            {"asurascans", "14 hours", "/admin/lanes"},
		"no-browser-route": {"novelfull", "3 days", "/admin/lanes"},
		"sidecar-down":     {"browser sidecar", "13 hours", "/admin/lanes"},
		"adapter-broken":   {"demonicscans", "3 months", "/admin/series?filter=yields-no-chapter&site=demonicscans"},
	}
	for kind, seed := range seeds {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			seed(h)
			v := h.get(h.owner(), "/admin").testid("verdict")
			text := strings.Join(strings.Fields(v.Text()), " ")
			w := want[kind]
			if !strings.Contains(text, kind) || !strings.Contains(text, w.subject) || !strings.Contains(text, w.age) || strings.Contains(text, "Healthy") {
				t.Errorf("verdict %q does not name %s, %s, %s", text, kind, w.subject, w.age)
			}
			if n := v.Find("a[data-kind]").Length(); n != 1 {
				t.Errorf("%d conditions named, want 1", n)
			}
			if href := v.Find("a[data-kind]").AttrOr("href", ""); href != w.href {
				t.Errorf("links to %q, want %q (the page the message links to)", href, w.href)
			}
		})
	}
	t.Run("all four at once", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		for _, seed := range seeds {
			seed(h)
		}
		if n := h.get(h.owner(), "/admin").find(`[data-testid="verdict"] a[data-kind]`).Length(); n != 4 {
			t.Errorf("%d conditions named", n)
		}
	})
	t.Run("a condition under twelve hours is too early to tell, not a fault yet", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, withWebhook(t, "https://discord.example/api/webhooks/1/x"))
		h.passes("asurascans", "", 3, 0, 0, 11, 1)
		v := h.get(h.owner(), "/admin").testid("verdict")
		early := squash(v.Find(`[data-testid="verdict-early"]`).Text())
		if v.Find("a[data-kind]").Length() != 0 || strings.Contains(v.Text(), "Healthy") ||
			!strings.Contains(early, "1 fault began less than 12 hours ago") || !strings.Contains(early, "asurascans Lane owing Polls and making none for 11 hours") {
			t.Errorf("verdict reads %q", squash(v.Text()))
		}
	})
	t.Run("none", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, withWebhook(t, "https://discord.example/api/webhooks/1/x"))
		if v := h.get(h.owner(), "/admin").testid("verdict").Text(); !strings.HasPrefix(strings.TrimSpace(v), "Healthy") {
			t.Errorf("healthy verdict reads %q", v)
		}
	})
	t.Run("unreadable", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		// The conditions' statement fails as it runs (a corrupt tally makes
		// its OFFSET negative); the figures, sent before it in the same
		// batch, still arrive.
		storetest.Insert(t, h.pool, storetest.Tally{Site: word.Asurascans, Pollable: -10})
		p := h.get(h.owner(), "/admin")
		if p.status != http.StatusOK || p.testid("stat-all").Length() != 1 {
			t.Fatalf("the figures must still show: status %d", p.status)
		}
		if v := p.testid("verdict").Text(); strings.Contains(v, "Healthy") || strings.Contains(v, "OFFSET") {
			t.Errorf("an unreadable verdict must not claim health or leak the error: %q", v)
		}
	})
	t.Run("a dead webhook is shown until the setting changes", func(t *testing.T) {
		t.Parallel()
		const hook = "https://discord.example/api/webhooks/1/x"
		h := newHarness(t, withWebhook(t, hook))
		sum := sha256.Sum256([]byte(hook))
		storetest.Insert(t, h.pool, storetest.DeadWebhook{Hash: hex.EncodeToString(sum[:]), DeadAt: t0.Add(-5 * time.Hour)})
		c := h.owner()
		for _, p := range []string{"/admin", "/admin/lanes"} {
			dead := h.get(c, p).testid("webhook-dead")
			if dead.Length() != 1 || !strings.Contains(dead.Text(), "5 hours") || strings.Contains(dead.Text(), hook) {
				t.Errorf("%s: dead webhook line %q", p, dead.Text())
			}
		}
	})
}

func TestFinishTakesARealSecondStepWithAndWithoutJavaScript(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seed(dataset)
	c := h.owner()
	base := "/admin/series/asurascans/completed"
	before := h.snapshot()

	// Step one, plain form: a page with the confirmation, box unticked, no change.
	a := h.post(c, base+"/finish", nil)
	if a.status != http.StatusOK || a.testid("finish-confirm").Length() != 1 || a.testid("finish-control").Length() != 0 {
		t.Fatalf("step one: %d, confirm %d", a.status, a.testid("finish-confirm").Length())
	}
	box := a.testid("finish-confirm-box")
	if _, checked := box.Attr("checked"); checked || box.AttrOr("type", "") != "checkbox" {
		t.Errorf("the confirmation must never be pre-ticked")
	}
	if a.find(`button`).FilterFunction(func(_ int, s *goquery.Selection) bool { return strings.Contains(s.Text(), "Finish") }).Length() != 1 {
		t.Errorf("one Finish button on the page, not two")
	}
	if h.snapshot() != before {
		t.Fatal("step one changed something")
	}
	// The second step without the box: refused, nothing changed.
	a = h.post(c, base+"/finish", url.Values{"step": {"confirm"}})
	if a.status != http.StatusUnprocessableEntity || a.testid("message").Length() != 1 || h.snapshot() != before {
		t.Fatalf("unticked confirm: %d %q", a.status, a.testid("message").Text())
	}
	// htmx: step one answers the region with the confirmation.
	a = h.post(c, base+"/finish", nil, "HX-Request", "true")
	if strings.Contains(a.body, "<html") || a.testid("finish-confirm").Length() != 1 {
		t.Errorf("htmx step one is not the region with the confirmation")
	}
	// Confirmed: 303 for a plain browser, then Finished and out of site-completed.
	a = h.post(c, base+"/finish", url.Values{"step": {"confirm"}, "confirm": {"yes"}})
	if a.status != http.StatusSeeOther || a.header.Get("Location") != base {
		t.Fatalf("confirmed finish: %d %q", a.status, a.header.Get("Location"))
	}
	d := h.get(c, base)
	if d.testid("unfinish-control").Length() != 1 || d.testid("completion-hint").Length() != 0 {
		t.Errorf("after Finish the page must offer Un-finish and hide the hint")
	}
	if slices.Contains(rowIDs(h.get(c, "/admin/series?filter=site-completed")), "completed") {
		t.Errorf("a Finished Series stays in site-completed")
	}
	// Un-finish, by htmx: the region answers, the Lane is woken.
	woken := h.listenWakes()
	a = h.post(c, base+"/unfinish", nil, "HX-Request", "true")
	if a.status != http.StatusOK || a.testid("series-detail").Length() != 1 || a.testid("finish-control").Length() != 1 {
		t.Errorf("un-finish by htmx: %d", a.status)
	}
	if !slices.Contains(woken(), "asurascans") {
		t.Errorf("un-finish did not wake the Lane")
	}
}

func TestTheControlsChangeWhatTheySayAndClearNothingElse(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seed(dataset)
	c := h.owner()
	woken := h.listenWakes()
	base := "/admin/series/asurascans/unverified"
	// Typed loosely, kept in the canonical form a Poll writes.
	a := h.post(c, base+"/latest", url.Values{"num": {" 042.50 "}}, "HX-Request", "true")
	if a.status != http.StatusOK || !strings.Contains(a.testid("fact-line").Text(), "ch. 42.5") {
		t.Fatalf("correction: %d %q", a.status, a.testid("fact-line").Text())
	}
	if got := a.testid("correction-control").Find(`input[name="num"]`).AttrOr("value", ""); got != "42.5" {
		t.Errorf("Latest Chapter kept as %q, want the canonical 42.5", got)
	}
	if a.testid("failure-marker").Length() != 1 || !strings.Contains(a.testid("fact-line").Text(), "raised by Reader One") {
		t.Errorf("a correction must clear neither the failure row nor the attribution")
	}
	a = h.post(c, base+"/clear-attribution", nil)
	if a.status != http.StatusSeeOther {
		t.Fatalf("clear attribution: %d", a.status)
	}
	d := h.get(c, base)
	if strings.Contains(d.testid("fact-line").Text(), "raised by") || d.testid("unverified-note").Length() != 0 || d.testid("failure-marker").Length() != 1 {
		t.Errorf("after clearing attribution: %q", d.testid("fact-line").Text())
	}
	a = h.post(c, base+"/poll", nil, "HX-Request", "true")
	if a.status != http.StatusOK || a.testid("force-pending").Length() != 1 || a.testid("failure-marker").Length() != 1 {
		t.Errorf("forced poll: %d; a request is not evidence and clears nothing", a.status)
	}
	// Lanes: pause, resume, poll; each wakes or answers the row.
	a = h.post(c, "/admin/lanes/comix/pause", url.Values{"for": {"6h"}}, "HX-Request", "true")
	if a.status != http.StatusOK || a.testid("lane-row").AttrOr("data-site", "") != "comix" || !strings.Contains(a.testid("lane-state").Text(), "paused") {
		t.Errorf("pause by htmx: %d %q", a.status, a.testid("lane-state").Text())
	}
	a = h.post(c, "/admin/lanes/comix/resume", nil)
	if a.status != http.StatusSeeOther || a.header.Get("Location") != "/admin/lanes" {
		t.Errorf("resume: %d", a.status)
	}
	a = h.post(c, "/admin/lanes/kagane/poll", nil)
	if a.status != http.StatusSeeOther {
		t.Errorf("lane poll: %d", a.status)
	}
	lanes := h.get(c, "/admin/lanes")
	if !strings.Contains(lanes.find(`[data-site="comix"] [data-testid="lane-state"]`).Text(), "running") {
		t.Errorf("comix after resume: %q", lanes.find(`[data-site="comix"] [data-testid="lane-state"]`).Text())
	}
	if lanes.find(`[data-site="kagane"] [data-testid="lane-force-pending"]`).Length() != 1 {
		t.Errorf("kagane's Forced Poll is not shown pending")
	}
	wakes := woken()
	for _, s := range []string{"asurascans", "comix", "kagane"} {
		if !slices.Contains(wakes, s) {
			t.Errorf("%s was not woken", s)
		}
	}
	// Delete: an orphan goes, in one POST.
	a = h.post(c, "/admin/series/asurascans/gate-refused/delete", nil)
	if a.status != http.StatusSeeOther {
		t.Fatalf("delete orphan: %d", a.status)
	}
	if h.get(c, "/admin/series/asurascans/gate-refused").status != http.StatusNotFound {
		t.Errorf("the orphan survived")
	}
	a = h.post(c, "/admin/series/asurascans/completed-finished/delete", nil, "HX-Request", "true")
	if a.status != http.StatusOK || a.header.Get("HX-Redirect") != "/admin/series?filter=orphan" {
		t.Errorf("delete by htmx: %d, redirect %q", a.status, a.header.Get("HX-Redirect"))
	}
	// A bookmarked Series: the first POST is the confirm step, and deletes nothing.
	a = h.post(c, "/admin/series/asurascans/healthy/delete", nil)
	if a.status != http.StatusOK || a.testid("delete-confirm").Length() != 1 || h.get(c, "/admin/series/asurascans/healthy").status != http.StatusOK {
		t.Errorf("delete of a bookmarked Series: %d, the confirm step is missing or the Series went", a.status)
	}
}

func TestBadInputToEveryFormIsRefusedWithAMessageAndChangesNothing(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seed(dataset)
	c := h.owner()
	before := h.snapshot()
	cases := []struct {
		name, method, path string
		form               url.Values
		status             int
	}{
		{"a word for a chapter", "POST", "/admin/series/asurascans/healthy/latest", url.Values{"num": {"twelve"}}, 400},
		{"an empty chapter", "POST", "/admin/series/asurascans/healthy/latest", url.Values{}, 400},
		{"a negative chapter", "POST", "/admin/series/asurascans/healthy/latest", url.Values{"num": {"-3"}}, 400},
		{"an exponent chapter", "POST", "/admin/series/asurascans/healthy/latest", url.Values{"num": {"1e9"}}, 400},
		{"a huge chapter", "POST", "/admin/series/asurascans/healthy/latest", url.Values{"num": {"123456789012"}}, 400},
		{"an unticked finish", "POST", "/admin/series/asurascans/healthy/finish", url.Values{"step": {"confirm"}, "confirm": {"no"}}, 422},
		{"confirming a delete without the box", "POST", "/admin/series/asurascans/healthy/delete", url.Values{"step": {"confirm"}}, 422},
		{"a pause of no length", "POST", "/admin/lanes/comix/pause", url.Values{}, 400},
		{"a pause of an unoffered length", "POST", "/admin/lanes/comix/pause", url.Values{"for": {"9999h"}}, 400},
		{"a control on no Series", "POST", "/admin/series/asurascans/nope/latest", url.Values{"num": {"3"}}, 404},
		{"finishing no Series", "POST", "/admin/series/asurascans/nope/finish", url.Values{"step": {"confirm"}, "confirm": {"yes"}}, 404},
		{"a Lane that is no Site", "POST", "/admin/lanes/nosuchsite/poll", nil, 404},
		{"an unknown filter", "GET", "/admin/series?filter=broken", nil, 400},
		{"an unknown Site", "GET", "/admin/series?site=mangadex", nil, 400},
		{"an unknown kind", "GET", "/admin/series?kind=comic", nil, 400},
		{"a forged cursor", "GET", "/admin/series?after=nonsense", nil, 400},
		{"an oversize form", "POST", "/admin/series/asurascans/healthy/poll", url.Values{"pad": {strings.Repeat("x", 64<<10)}}, 413},
		{"an oversize Lane form", "POST", "/admin/lanes/comix/poll", url.Values{"pad": {strings.Repeat("x", 64<<10)}}, 413},
		{"a field too long", "POST", "/admin/series/asurascans/healthy/poll", url.Values{"pad": {strings.Repeat("x", 5<<10)}}, 400},
	}
	for _, tc := range cases {
		for _, htmx := range []bool{false, true} {
			t.Run(tc.name+map[bool]string{true: " (htmx)", false: ""}[htmx], func(t *testing.T) {
				var headers []string
				if htmx {
					headers = []string{"HX-Request", "true"}
				}
				a := h.do(c, tc.method, tc.path, tc.form, headers...)
				if a.status != tc.status {
					t.Errorf("status %d, want %d", a.status, tc.status)
				}
				msg := a.find(`[data-testid="message"], [data-testid="error-message"]`)
				if strings.TrimSpace(msg.Text()) == "" {
					t.Errorf("no message for the owner: %.300s", a.body)
				}
				if h.snapshot() != before {
					t.Fatalf("%s changed the database", tc.name)
				}
			})
		}
	}
	// The refused correction is shown back, not lost.
	a := h.post(c, "/admin/series/asurascans/healthy/latest", url.Values{"num": {"twelve"}})
	if a.testid("correction-control").Find(`input[name="num"]`).AttrOr("value", "") != "twelve" {
		t.Errorf("the refused input is not shown back")
	}
}

// routes walks the router's own table: every route it serves.
func routes(t *testing.T, d handlers.Deps) [][2]string {
	t.Helper()
	var out [][2]string
	err := chiWalk(handlers.Routes(d), func(method, route string) {
		out = append(out, [2]string{method, route})
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) < 20 {
		t.Fatalf("walked only %d routes", len(out))
	}
	return out
}

// concrete fills a route pattern's parameters with real values.
func concrete(route string) string {
	r := strings.NewReplacer("{site}", "asurascans", "{id}", "orphan-one", "{token}", "not-a-token", "*", "x")
	return strings.TrimSuffix(r.Replace(route), "/")
}

func TestEveryRouteIsGatedByTheRoutersOwnTable(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seed([]fixture{{id: "orphan-one", url: addr}})
	owner, reader, anon := h.owner(), h.client("reader-2"), anonymous()
	before := h.snapshot()
	all := routes(t, h.deps)
	page := map[string]bool{} // routes that are also a page (a box posts to its own page)
	for _, rt := range all {
		if rt[0] == http.MethodGet {
			page[rt[1]] = true
		}
	}
	for _, rt := range all {
		method, route := rt[0], rt[1]
		path := concrete(route)
		if path == "" {
			path = "/"
		}
		t.Run(method+" "+route, func(t *testing.T) {
			if strings.HasPrefix(route, "/api/") {
				// The token API takes no cookie and skips the cross-origin
				// check: without a token it answers 401 and changes nothing.
				if a := h.do(owner, method, path, url.Values{}, "Sec-Fetch-Site", "cross-site", "Origin", "https://evil.example"); a.status != http.StatusUnauthorized {
					t.Errorf("the API with a cookie and no token answered %d", a.status)
				}
				if h.snapshot() != before {
					t.Fatal("a request without a token changed the database")
				}
				return
			}
			if method != http.MethodGet && method != http.MethodHead && method != http.MethodOptions {
				// A cross-site state change is refused before any handler runs,
				// even with the owner's cookie.
				a := h.do(owner, method, path, url.Values{}, "Sec-Fetch-Site", "cross-site", "Origin", "https://evil.example")
				if a.status != http.StatusForbidden {
					t.Errorf("cross-site %s answered %d", method, a.status)
				}
				if h.snapshot() != before {
					t.Fatal("a cross-site request changed the database")
				}
			}
			if !strings.HasPrefix(route, "/admin") {
				return
			}
			a := h.do(anon, method, path, url.Values{})
			if a.status != http.StatusSeeOther || !strings.HasPrefix(a.header.Get("Location"), "/login?next=") {
				t.Errorf("anonymous: %d to %q", a.status, a.header.Get("Location"))
			}
			a = h.do(reader, method, path, url.Values{})
			if a.status != http.StatusForbidden {
				t.Errorf("a Reader who is not the owner: %d", a.status)
			}
			if h.snapshot() != before {
				t.Fatal("a refused request changed the database")
			}
			if method != http.MethodGet && method != http.MethodHead && !page[route] {
				// Every state change is a POST: GET on a control route is no route.
				if a := h.do(owner, http.MethodGet, path, nil); a.status != http.StatusMethodNotAllowed && a.status != http.StatusNotFound {
					t.Errorf("GET on a control answered %d", a.status)
				}
			}
		})
	}
}
