package handlers_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/mangabookmark/mangabookmark/handlers"
	"github.com/mangabookmark/mangabookmark/notify"
	"github.com/mangabookmark/mangabookmark/word"
)

func squash(s string) string { return strings.Join(strings.Fields(s), " ") }

// Each figure's accessible description is a sentence on the page, and the
// list it opens shows that very sentence; the list page's glossary holds it
// too, as each chip's description. One sentence per filter, three places.
func TestEachFigureAndFilterIsExplainedByTheSameOneSentence(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seed(dataset)
	c := h.owner()
	landing := h.get(c, "/admin")
	seen := map[string]bool{}
	landing.find(`[data-testid^="stat-"]`).Each(func(_ int, fig *goquery.Selection) {
		id := fig.AttrOr("data-testid", "")
		if id == "stat-meaning" {
			return
		}
		ref := fig.AttrOr("aria-describedby", "")
		meaning := squash(landing.find("#" + ref).Text())
		if ref == "" || meaning == "" || !strings.HasSuffix(meaning, ".") {
			t.Errorf("%s: no one-sentence description (%q → %q)", id, ref, meaning)
			return
		}
		if seen[meaning] {
			t.Errorf("%s: shares its sentence with another figure: %q", id, meaning)
		}
		seen[meaning] = true
		filter := strings.TrimPrefix(id, "stat-")
		path := "/admin/series?filter=" + filter
		if filter == "all" {
			path = "/admin/series"
		}
		list := h.get(c, path)
		if got := squash(list.testid("list-meaning").Text()); got != meaning {
			t.Errorf("%s: the list says %q, the figure %q", id, got, meaning)
		}
		chip := list.testid("filter-" + filter)
		if got := squash(list.find("#" + chip.AttrOr("aria-describedby", "-")).Text()); got != meaning {
			t.Errorf("%s: the chip is described by %q", id, got)
		}
	})
	if len(seen) != 10 {
		t.Errorf("%d figures explained, want 10", len(seen))
	}
	for _, word := range []string{"unpollable", "orphan", "unverified", "site-completed"} {
		if !strings.Contains(landing.body, "meaning-"+word) {
			t.Errorf("%s has no meaning on the landing page", word)
		}
	}
}

// Faults wear the fault colour; information does not, however large.
func TestOnlyANonZeroFaultFigureWearsTheFaultColour(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seed(dataset)
	a := h.get(h.owner(), "/admin")
	for _, id := range []string{"failing", "unpollable", "unverified", "no-chapter"} {
		if f := a.testid("stat-" + id); !f.HasClass("fault") || f.Text() == "0" {
			t.Errorf("%s (%s) does not wear the fault colour", id, f.Text())
		}
	}
	for _, id := range []string{"all", "never-checked", "stale", "site-completed", "finished", "orphan"} {
		if f := a.testid("stat-" + id); f.HasClass("fault") || f.Text() == "0" {
			t.Errorf("%s (%s) is information, yet wears the fault colour or reads 0", id, f.Text())
		}
	}
	h2 := newHarness(t)
	if f := h2.get(h2.owner(), "/admin").testid("stat-failing"); f.HasClass("fault") {
		t.Errorf("a zero failing figure wears the fault colour")
	}
}

// A fresh failure marker never claims the failing filter, and the failing
// list says what "failing" means.
func TestTheMarkerClaimsNoFilterAndTheFailingListSaysOverTwelveHours(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seed(dataset)
	c := h.owner()
	row := rowOf(h.get(c, "/admin/series"), "failing-1h")
	if got := squash(row.Find(`[data-testid="failure-marker"]`).Text()); got != "read failed · 1 hour" || strings.Contains(got, "failing") {
		t.Errorf("marker %q", got)
	}
	if got := squash(h.get(c, "/admin/series?filter=failing").testid("list-caption").Text()); !strings.Contains(got, "failing for over 12 hours") {
		t.Errorf("failing caption %q", got)
	}
}

// sink is a Discord webhook stand-in on loopback that keeps each embed's
// description.
type sink struct {
	mu    sync.Mutex
	descs []string
}

func (s *sink) serve(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	var p struct {
		Embeds []struct{ Description string } `json:"embeds"`
	}
	_ = json.Unmarshal(b, &p)
	s.mu.Lock()
	for _, e := range p.Embeds {
		s.descs = append(s.descs, e.Description)
	}
	s.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// The repair a condition names is one sentence, and the verdict line, the
// Lanes page (on the Lane and on its notice) and the Discord embed all say it,
// for every notice kind (CONTEXT.md, Owner notice).
func TestEachFaultNamesTheSameFixOnTheVerdictTheLanesPageAndTheEmbed(t *testing.T) {
	t.Parallel()
	seeds := map[word.NoticeKind]struct {
		site string
		seed func(h *harness)
	}{
		word.Stall:          {"asurascans", func(h *harness) { h.passes("asurascans", "", 3, 0, 0, 14, 10, 5, 1) }},
		word.NoBrowserRoute: {"novelfull", func(h *harness) { h.passes("novelfull", "refusing", 2, 0, 0, 72, 40, 1) }},
		word.SidecarDown: {"comix", func(h *harness) {
			h.passes("comix", "browser-down", 2, 0, 0, 13, 6, 1)
			h.passes("kagane", "browser-down", 2, 0, 0, 12, 2)
		}},
		word.AdapterBroken: {"demonicscans", (*harness).adapterBroken},
	}
	// A kind word gains without a case here fails, not passes untested.
	for _, k := range word.NoticeKinds {
		if _, ok := seeds[k]; !ok {
			t.Errorf("no case for the notice kind %s", k)
		}
	}
	if len(seeds) != len(word.NoticeKinds) {
		t.Errorf("%d cases for %d notice kinds", len(seeds), len(word.NoticeKinds))
	}
	for kind, sd := range seeds {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			sk := &sink{}
			hook := httptest.NewServer(http.HandlerFunc(sk.serve))
			t.Cleanup(hook.Close)
			var n *notify.Notifier
			h := newHarness(t, func(d *handlers.Deps) {
				var err error
				n, err = notify.New(notify.Options{Store: d.Store, WebhookURL: word.Secret(hook.URL + "/api/webhooks/1/x"),
					BrowserSites: word.BrowserSites{word.Comix: true, word.Kagane: true}, Logger: slog.New(slog.DiscardHandler)})
				if err != nil {
					t.Fatal(err)
				}
				d.Notices = n
			})
			sd.seed(h)
			if err := n.Check(context.Background(), sd.site, t0); err != nil {
				t.Fatal(err)
			}
			site := sd.site
			if kind == word.SidecarDown {
				site = ""
			}
			fix := kind.Repair(site)
			c := h.owner()
			if got := squash(h.get(c, "/admin").testid("verdict-fix").Text()); got != fix {
				t.Errorf("verdict names %q, want %q", got, fix)
			}
			lanes := h.get(c, "/admin/lanes")
			if got := squash(lanes.find(`[data-site="` + sd.site + `"] [data-testid="lane-fix"]`).Text()); got != fix {
				t.Errorf("the Lane names %q, want %q", got, fix)
			}
			if got := squash(lanes.testid("owner-notice-fix").Text()); got != fix {
				t.Errorf("the notice names %q, want %q", got, fix)
			}
			if sd.site != "asurascans" && lanes.testid("lane-row").First().AttrOr("data-site", "") == "asurascans" {
				t.Errorf("a healthy Lane is listed before the problem Lane")
			}
			sk.mu.Lock()
			defer sk.mu.Unlock()
			if len(sk.descs) != 1 || !strings.HasSuffix(sk.descs[0], "; "+fix+".") {
				t.Errorf("embed %q does not end in the fix %q", sk.descs, fix)
			}
		})
	}
}

// The detail page says what the last outcome means and what to do.
func TestTheDetailPageExplainsTheLastOutcomeAndWhatToDo(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seed(dataset)
	c := h.owner()
	for id, want := range map[string][]string{
		"failing-3mo":  {"page gone", "correct the address"},
		"gate-refused": {"address refused", "fetch gate", "deleting it loses nothing"},
		"healthy":      {"read", "read the page", "Nothing to do"},
	} {
		note := h.get(c, "/admin/series/asurascans/"+id).testid("outcome-note")
		text := squash(note.Text())
		for _, w := range want {
			if !strings.Contains(text, w) {
				t.Errorf("%s: outcome note %q lacks %q", id, text, w)
			}
		}
	}
	if h.get(c, "/admin/series/asurascans/never").testid("outcome-note").Length() != 0 {
		t.Errorf("a never-polled Series claims an outcome")
	}
}

// The Lanes page: problem Lanes first, times in <time> elements (UTC text
// the script localises), outcome words in plain language with the machine
// word as a tag.
func TestTheLanesPageListsProblemsFirstInPlainWords(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.exec(`UPDATE poll_lanes SET refuse_until = $1 WHERE site = 'novelfull'`, t0.Add(20*time.Minute))
	h.exec(`UPDATE poll_lanes SET paused_until = $1 WHERE site = 'asurascans'`, t0.Add(3*time.Hour))
	a := h.get(h.owner(), "/admin/lanes")
	first := a.testid("lane-row").First()
	if first.AttrOr("data-site", "") != "novelfull" || !first.HasClass("problem") {
		t.Fatalf("first Lane is %s", first.AttrOr("data-site", ""))
	}
	tm := first.Find(`[data-testid="lane-state"] time`)
	if tm.AttrOr("datetime", "") != "2026-11-30T12:20:00Z" || squash(tm.Text()) != "30 Nov 12:20 UTC" {
		t.Errorf("refusal end %v %q", tm.AttrOr("datetime", ""), tm.Text())
	}
	if !strings.Contains(first.Find(`[data-testid="lane-state-note"]`).Text(), word.NoBrowserRoute.Repair("novelfull")) {
		t.Errorf("the refusal does not say what would fix it")
	}
	paused := a.find(`[data-testid="lane-row"][data-site="asurascans"]`)
	if paused.HasClass("problem") || paused.Find(".fault").Length() != 0 {
		t.Errorf("a Pause is the owner's own act, never a fault")
	}
	dt := first.Find(`[data-testid="lane-counts"] dt`).Eq(3)
	if dt.Find(".plain").Text() != "page gone" || dt.Parent().AttrOr("data-outcome", "") != "not_found" {
		t.Errorf("count label %q", dt.Text())
	}
}

func TestAnEmptyAdminSaysHowTheFirstSeriesArrives(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	c := h.owner()
	empty := h.get(c, "/admin").testid("empty-admin")
	if empty.Length() != 1 || empty.Find(`a[href^="/admin/series"]`).Length() != 1 || !strings.Contains(empty.Text(), "address") {
		t.Errorf("empty admin: %q", empty.Text())
	}
	h.seed(dataset[:1])
	if h.get(c, "/admin").testid("empty-admin").Length() != 0 {
		t.Errorf("the first-run hint outlives the first Series")
	}
}

func TestTheCurrentNavItemIsMarkedAndThePageHasAFavicon(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	c := h.owner()
	for path, want := range map[string]string{"/admin": "/admin", "/admin/series": "/admin/series", "/admin/lanes": "/admin/lanes"} {
		a := h.get(c, path)
		cur := a.find(`header nav a[aria-current="page"]`)
		if cur.Length() != 1 || cur.AttrOr("href", "") != want {
			t.Errorf("%s: current nav %v", path, cur.AttrOr("href", "<none>"))
		}
		icon := a.find(`link[rel="icon"]`).AttrOr("href", "")
		if icon == "" || h.get(c, icon).status != http.StatusOK {
			t.Errorf("%s: favicon %q", path, icon)
		}
	}
}

// TestTheReaderPagesMarkTheirNavItemToo: a Reader's own pages mark the
// current nav item as the admin pages do, for a Reader and for the owner
// (whose nav holds both), and only that one.
func TestTheReaderPagesMarkTheirNavItemToo(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seed(dataset) // Reader One
	for who, c := range map[string]*http.Client{"a Reader": h.client("r1"), "the owner": h.owner()} {
		paths := map[string]string{"/": "/", "/tokens": "/tokens"}
		if who == "the owner" {
			paths["/admin/readers"] = "/admin/readers"
		}
		for path, want := range paths {
			a := h.get(c, path)
			if a.status != http.StatusOK {
				t.Fatalf("%s %s: %d", who, path, a.status)
			}
			cur := a.find(`header nav a[aria-current]`)
			if cur.Length() != 1 || cur.AttrOr("href", "") != want || cur.AttrOr("aria-current", "") != "page" {
				t.Errorf("%s %s: current nav %q (%d marked), want %s", who, path, cur.AttrOr("href", "<none>"), cur.Length(), want)
			}
		}
	}
}

// TestALaneRowSaysEachThingOnce: once a refusal's condition holds, its fix is
// the "To fix" line alone (the state note no longer repeats it); a skipped
// pass is not read as "0 due, 0 checked"; the "no Poll" line stands in for
// the counts only where "Last pass: never" does not already say it.
func TestALaneRowSaysEachThingOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	seedLaneMix(h)
	a := h.get(h.owner(), "/admin/lanes")
	novel := a.find(`[data-testid="lane-row"][data-site="novelfull"]`)
	fix := word.NoBrowserRoute.Repair("novelfull")
	if n := strings.Count(squash(novel.Text()), fix); n != 1 || squash(novel.Find(`[data-testid="lane-fix"]`).Text()) != fix {
		t.Errorf("the fix is said %d times on the refusing Lane: %q", n, squash(novel.Text()))
	}
	if got := squash(novel.Find(`[data-testid="lane-last-pass"]`).Text()); got != "Last pass: 5 minutes ago: skipped (refusing)" {
		t.Errorf("a skipped pass reads %q", got)
	}
	for site, want := range map[string]int{"novelfull": 1, "lightnovelworld": 0, "asurascans": 0} {
		if n := a.find(`[data-site="` + site + `"] [data-testid="lane-counts-none"]`).Length(); n != want {
			t.Errorf("%s: %d no-Poll lines, want %d", site, n, want)
		}
	}
}
