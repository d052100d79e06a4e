package handlers_test

import (
	"bytes"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/mangabookmark/mangabookmark/fetch/chromiumtest"
	"github.com/mangabookmark/mangabookmark/handlers"
	"github.com/mangabookmark/mangabookmark/store/storetest"
	"github.com/mangabookmark/mangabookmark/word"
)

// noSidecar is a server with browser Sites and BROWSER_WS_URL unset.
func noSidecar(d *handlers.Deps) { d.Sidecar = false }

// forceColumns is every force_poll_at the database holds, Lanes and
// Series, "" when none is written.
func (h *harness) forceColumns() string {
	h.t.Helper()
	return h.text(`SELECT coalesce(string_agg(k, ' ' ORDER BY k), '') FROM (
	    SELECT 'lane:' || site AS k FROM poll_lanes WHERE force_poll_at IS NOT NULL
	    UNION ALL SELECT 'series:' || site || '/' || series_id FROM series WHERE force_poll_at IS NOT NULL) f`)
}

// A Forced Poll of a Series or a pass of a Lane that no pass will serve
// until the owner acts is refused with the reason and the fix, for htmx
// and a plain form alike, and nothing is queued: a browser Site on a server
// with no sidecar, and a Lane the owner paused.
func TestAForcedPollOnALaneThatCannotPollIsRefusedWithItsFixAndNeverQueued(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		adjust []func(*handlers.Deps)
		site   word.Site
		setup  func(h *harness)
		want   []string
	}{
		{name: "comix on a server with no sidecar", adjust: []func(*handlers.Deps){noSidecar}, site: word.Comix,
			want: []string{"comix is not polled without a browser sidecar", word.SidecarSetup, "Nothing was requested"}},
		{name: "a Lane the owner paused", site: word.Asurascans,
			setup: func(h *harness) {
				h.exec(`UPDATE poll_lanes SET paused_until = $1, paused_at = $2 WHERE site = 'asurascans'`, t0.Add(3*time.Hour), t0.Add(-time.Hour))
			},
			want: []string{"paused until", "in 3 hours", "Resume", "Nothing was requested"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, c.adjust...)
			storetest.Insert(t, h.pool, storetest.Series{Site: c.site, ID: "s1", URL: "https://" + siteHostOf(c.site) + "/s1", Kind: word.Manga, CheckedAt: t0.Add(-time.Hour)})
			if c.setup != nil {
				c.setup(h)
			}
			o := h.owner()
			for _, hx := range [][]string{{"HX-Request", "true"}, nil} {
				series := h.post(o, "/admin/series/"+string(c.site)+"/s1/poll", url.Values{}, hx...)
				lane := h.post(o, "/admin/lanes/"+string(c.site)+"/poll", url.Values{}, hx...)
				for what, a := range map[string]answer{"the Series' Poll now": series, "the Lane's Poll this Lane now": lane} {
					if a.status != http.StatusUnprocessableEntity {
						t.Errorf("%s (htmx %v) answered %d, want 422", what, hx != nil, a.status)
					}
					msg := squash(a.testid("message").Text())
					for _, w := range c.want {
						if !strings.Contains(msg, w) {
							t.Errorf("%s (htmx %v) says %q, want it to hold %q", what, hx != nil, msg, w)
						}
					}
					if strings.Contains(msg, "Poll requested") || strings.Contains(msg, "Pass requested") || a.testid("force-pending").Length()+a.testid("lane-force-pending").Length() != 0 {
						t.Errorf("%s (htmx %v) still reads as requested: %q", what, hx != nil, msg)
					}
				}
			}
			if got := h.forceColumns(); got != "" {
				t.Errorf("a refused request was queued: force_poll_at set on %s", got)
			}
		})
	}
}

func siteHostOf(s word.Site) string {
	switch s {
	case word.Comix:
		return "comix.to/title"
	case word.Asurascans:
		return "asurascans.com/comics"
	}
	return string(s) + ".example"
}

// A Lane that recovers by itself takes the request, and a request waiting
// on a Lane says why it waits, on the Series page and the Lane's card; one
// written before the server lost its sidecar names the fix.
func TestARequestWaitingOnALaneSaysWhyItWaits(t *testing.T) {
	t.Parallel()
	t.Run("no sidecar", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, noSidecar)
		storetest.Insert(t, h.pool, storetest.Series{Site: word.Comix, ID: "c1", URL: "https://comix.to/title/c1", Kind: word.Manga,
			CheckedAt: t0.Add(-time.Hour), ForcePollAt: t0.Add(-3 * time.Minute)})
		h.exec(`UPDATE poll_lanes SET force_poll_at = $1 WHERE site = 'comix'`, t0.Add(-3*time.Minute))
		o := h.owner()
		detail := squash(h.get(o, "/admin/series/comix/c1").testid("force-pending").Text())
		live := squash(h.get(o, "/admin/series/comix/c1/poll-state?was=pending", "HX-Request", "true").testid("force-pending").Text())
		card := squash(h.get(o, "/admin/lanes").find(`[data-testid="lane-row"][data-site="comix"] [data-testid="lane-force-pending"]`).Text())
		for what, got := range map[string]string{"the Series page": detail, "its live Poll section": live, "the Lane's card": card} {
			for _, w := range []string{"3 minutes ago", "waiting: comix is not polled without a browser sidecar"} {
				if !strings.Contains(got, w) {
					t.Errorf("%s says %q, want it to hold %q", what, got, w)
				}
			}
		}
		// The card's "To fix" line holds the step; the Series page has none.
		if !strings.Contains(detail, word.SidecarSetup) || !strings.Contains(live, word.SidecarSetup) {
			t.Errorf("the Series page's waiting Poll does not name the fix: %q", detail)
		}
	})
	t.Run("a Site refusing for now", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		storetest.Insert(t, h.pool, storetest.Series{Site: word.Asurascans, ID: "a1", URL: "https://asurascans.com/comics/a1", Kind: word.Manga, CheckedAt: t0.Add(-time.Hour)})
		h.exec(`UPDATE poll_lanes SET refuse_until = $1 WHERE site = 'asurascans'`, t0.Add(20*time.Minute))
		o := h.owner()
		a := h.post(o, "/admin/series/asurascans/a1/poll", url.Values{}, "HX-Request", "true")
		if a.status != http.StatusOK || h.forceColumns() != "series:asurascans/a1" {
			t.Fatalf("a Poll of a Lane that recovers by itself answered %d and queued %q", a.status, h.forceColumns())
		}
		got := squash(a.testid("force-pending").Text())
		if want := "waiting: asurascans is refusing this server; the Lane tries again in 20 minutes"; !strings.Contains(got, want) {
			t.Errorf("the waiting Poll says %q, want it to hold %q", got, want)
		}
	})
}

// The Reader's add and import lines say what will happen to a new Series,
// from its Lane's state: nothing until the owner sets up the browser, the
// title once the server can reach the Site, or the first Poll within a
// minute on a healthy Lane. No setting's name reaches a Reader.
func TestTheReadersAddSaysWhatItsLaneWillDo(t *testing.T) {
	t.Parallel()
	const (
		comixSeries = "https://comix.to/title/p2m8q-lookism"
		asuraOther  = "https://asurascans.com/comics/solo-leveling/chapter/3"
	)
	cases := []struct {
		name, address, other, want string
		adjust                     []func(*handlers.Deps)
		setup                      func(h *harness)
	}{
		{name: "comix on a server with no sidecar", address: comixSeries, other: "https://comix.to/title/abc12-x", adjust: []func(*handlers.Deps){noSidecar},
			want: "comix is not read on this server yet: the owner has not set up the browser it needs. The Bookmark is kept."},
		{name: "a Site this server cannot reach", address: asuraChapter, other: asuraOther,
			setup: func(h *harness) {
				storetest.Insert(h.t, h.pool, storetest.Pass{Site: word.Asurascans, StartedAt: t0.Add(-3 * time.Minute), Due: 2, Counts: word.Counts{Unreachable: 2}})
			},
			want: "This server cannot reach asurascans.com right now; the title and chapters arrive once it can."},
		{name: "a healthy Lane", address: asuraChapter, other: asuraOther,
			want: "Its title and chapters arrive with its first Poll, within a minute or so."},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, c.adjust...)
			if c.setup != nil {
				c.setup(h)
			}
			added := h.post(h.client(readerA), "/", url.Values{"urls": {c.address}})
			imported := h.importFile(h.client(readerB), "list.txt", []byte(c.other+"\n"))
			for what, a := range map[string]answer{"the add box": added, "the import": imported} {
				got := squash(a.testid("add-result").Find("span").Text())
				if !strings.HasPrefix(got, "Added") || !strings.HasSuffix(got, c.want) {
					t.Errorf("%s says %q, want it to end %q", what, got, c.want)
				}
				if !bytes.Contains([]byte(a.body), []byte("Added")) || strings.Contains(a.body, "BROWSER_WS_URL") || strings.Contains(a.body, "sidecar") {
					t.Errorf("%s shows a Reader owner-only words: %q", what, got)
				}
			}
		})
	}
}

// TestALaneThatCannotPollSaysSoInABrowser renders, on a server with no
// sidecar, a comix Series whose Forced Poll waits from before and its
// Lane's card, in real Chromium, both schemes at 1280 and 390 px: each
// waiting request says why it waits, and pressing Poll now or Poll this
// Lane now shows the refusal in place; axe finds nothing and no page
// scrolls sideways. Screenshots in artifacts/screenshots/cantpoll/.
func TestALaneThatCannotPollSaysSoInABrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Chromium")
	}
	browserURL := chromiumtest.Start(t, "--hide-scrollbars", "--window-size=1280,900").WSURL
	axe := axeSource(t)
	h := newHarness(t, noSidecar)
	storetest.Insert(t, h.pool, storetest.Series{Site: word.Comix, ID: "c1", URL: "https://comix.to/title/c1-lookism", Title: "Lookism", Kind: word.Manga,
		CheckedAt: t0.Add(-time.Hour), ForcePollAt: t0.Add(-3 * time.Minute)})
	h.exec(`UPDATE poll_lanes SET force_poll_at = $1 WHERE site = 'comix'`, t0.Add(-3*time.Minute))
	shots := artifactsDir(t, "screenshots", "cantpoll")
	_, ctx := browserSession(t, browserURL)
	step := stepper(t)
	link, err := handlers.NewLoginLink(ctx, h.store, h.srv.URL, ownerID, t0)
	step("login link", err)
	step("open link", chromedp.Do(ctx, chromedp.Navigate(link)))
	_, err = chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(`[data-testid="link-login"]`)))
	step("sign in", err)
	pages := []struct{ name, path, waiting, control, refused string }{
		{"series", "/admin/series/comix/c1", `[data-testid="force-pending"]`, `[data-testid="force-poll-control"] button`, `#series-detail [data-testid="message"]`},
		{"lanes", "/admin/lanes", `[data-site="comix"] [data-testid="lane-force-pending"]`, `[data-site="comix"] [data-testid="lane-poll-control"] button`, `[data-site="comix"] [data-testid="message"]`},
	}
	for _, scheme := range []string{"light", "dark"} {
		_, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}})
		step("scheme", err)
		for _, size := range []struct {
			name string
			w, h int64
		}{{"desktop", 1280, 900}, {"phone", 390, 844}} {
			step("viewport", chromedp.Do(ctx, chromedp.EmulateViewport(size.w, size.h)))
			for _, p := range pages {
				step(p.name, chromedp.Do(ctx, chromedp.Navigate(h.srv.URL+p.path), chromedp.WaitReady(chromedp.CSS(p.waiting))))
				waits, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('`+p.waiting+`').textContent`))
				step("read waiting", err)
				if !strings.Contains(squash(waits), "waiting: comix is not polled without a browser sidecar") {
					t.Errorf("%s (%s, %s): the waiting request says %q", p.name, scheme, size.name, squash(waits))
				}
				shotAt(t, ctx, shots, fmt.Sprintf("%s-waiting-%s-%s", p.name, scheme, size.name))
				step("press "+p.name, chromedp.Do(ctx, chromedp.Click(chromedp.CSS(p.control)), chromedp.WaitVisible(chromedp.CSS(p.refused))))
				said, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('`+p.refused+`').textContent`))
				step("read refusal", err)
				if !strings.Contains(said, "Nothing was requested") {
					t.Errorf("%s (%s, %s): pressing the control says %q", p.name, scheme, size.name, squash(said))
				}
				if v := axeViolations(t, ctx, axe); v != "" {
					t.Errorf("%s (%s, %s): axe: %s", p.name, scheme, size.name, v)
				}
				wide, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth > window.innerWidth + 1`))
				step("measure", err)
				if wide {
					t.Errorf("%s (%s, %s) scrolls sideways", p.name, scheme, size.name)
				}
				shotAt(t, ctx, shots, fmt.Sprintf("%s-refused-%s-%s", p.name, scheme, size.name))
			}
		}
	}
	if got := h.forceColumns(); got != "lane:comix series:comix/c1" {
		t.Errorf("force_poll_at after the refusals: %q, want only the two written before", got)
	}
}

// A bulk Poll now requests only the picks whose Lane will serve them and
// says why the others were left; picks all on such Lanes request nothing.
func TestABulkPollLeavesOutTheSeriesOfALaneThatCannotPoll(t *testing.T) {
	t.Parallel()
	h := newHarness(t, noSidecar)
	storetest.Insert(t, h.pool,
		storetest.Series{Site: word.Comix, ID: "c1", URL: "https://comix.to/title/c1", Kind: word.Manga, CheckedAt: t0.Add(-time.Hour)},
		storetest.Series{Site: word.Asurascans, ID: "a1", URL: "https://asurascans.com/comics/a1", Kind: word.Manga, CheckedAt: t0.Add(-time.Hour)})
	o := h.owner()
	only := h.post(o, "/admin/series/bulk", url.Values{"action": {"poll"}, "pick": {"comix:c1"}}, "HX-Request", "true")
	if msg := squash(only.testid("message").Text()); only.status != http.StatusUnprocessableEntity ||
		!strings.Contains(msg, "comix is not polled without a browser sidecar") || !strings.Contains(msg, "Nothing was requested") {
		t.Errorf("a bulk Poll of comix alone answered %d: %q", only.status, msg)
	}
	if got := h.forceColumns(); got != "" {
		t.Fatalf("a refused bulk Poll was queued: %s", got)
	}
	both := h.post(o, "/admin/series/bulk", url.Values{"action": {"poll"}, "pick": {"comix:c1", "asurascans:a1"}}, "HX-Request", "true")
	msg := squash(both.testid("message").Text())
	if both.status != http.StatusOK || !strings.Contains(msg, "Poll requested for 1 Series") ||
		!strings.Contains(msg, "Not for 1 Series: comix is not polled without a browser sidecar") {
		t.Errorf("a bulk Poll of comix and asurascans answered %d: %q", both.status, msg)
	}
	if got := h.forceColumns(); got != "series:asurascans/a1" {
		t.Errorf("force_poll_at after the bulk Poll: %q, want only asurascans/a1", got)
	}
}

// The owner's add box promises a Poll only on a Lane that will make one;
// on a browser Site with no sidecar it says so, with the step.
func TestTheOwnersAddPromisesAPollOnlyWhereItsLaneWillMakeOne(t *testing.T) {
	t.Parallel()
	h := newHarness(t, noSidecar)
	a := h.post(h.owner(), "/admin/series", url.Values{"urls": {"https://comix.to/title/p2m8q-lookism\n" + asuraChapter}}, "HX-Request", "true")
	got := map[string]string{}
	a.testid("add-result").Each(func(_ int, s *goquery.Selection) {
		got[s.Find(".line").Text()] = squash(s.Find("span").First().Text())
	})
	if w := "it is not polled yet. comix is not polled without a browser sidecar. To poll it, " + word.SidecarSetup + "."; !strings.HasSuffix(got["https://comix.to/title/p2m8q-lookism"], w) {
		t.Errorf("the owner's add of comix says %q, want it to end %q", got["https://comix.to/title/p2m8q-lookism"], w)
	}
	if w := "a Poll is on its way."; !strings.HasSuffix(got[asuraChapter], w) {
		t.Errorf("the owner's add of asurascans says %q, want it to end %q", got[asuraChapter], w)
	}
}
