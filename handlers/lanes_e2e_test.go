package handlers_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/mangabookmark/mangabookmark/fetch/chromiumtest"
	"github.com/mangabookmark/mangabookmark/handlers"
	"github.com/mangabookmark/mangabookmark/store/storetest"
	"github.com/mangabookmark/mangabookmark/word"
)

// phoneLanesBudget is the height six Lanes may take on a 390 px phone,
// header and notices included, with every Lane in a different state (the
// mix below). Drawing every zero count, the two controls on two lines and
// the notices at body size took 2,309 px for the same mix; six idle Lanes
// take about 1,400. It was 1,600 (1,572 measured) until each Lane said its
// listing state and its freshness line (issue 20): about 40 px a Lane,
// 1,823 measured. It was 1,900 until each Lane drew its strip of passes
// (issue 23, item 11): about 65 px a Lane and the strips' key once, 2,249
// measured. A Lane's freshness plot, drawn only when its last day had a new
// chapter, is not in this mix.
const phoneLanesBudget = 2300

// TestTheLanesPageIsCompactOnAPhone renders /admin/lanes in real Chromium
// with a realistic mix — a refusing Lane with its fix, a Pause, a Forced
// Poll waiting, Lanes with a few outcome words each, one never polled, an
// open notice — and measures it: on a phone only the counts that are not
// zero are drawn (with a line where there are none), the page fits the
// budget in both schemes and never scrolls sideways; on a desktop every
// count stays in its grid. Screenshots in artifacts/screenshots/lanes/.
func TestTheLanesPageIsCompactOnAPhone(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Chromium")
	}
	browserURL := chromiumtest.Start(t, "--hide-scrollbars", "--window-size=1280,900").WSURL
	h := newHarness(t)
	h.seed(dataset)
	seedLaneMix(h)
	shots := artifactsDir(t, "screenshots", "lanes")
	_, ctx := browserSession(t, browserURL)
	step := stepper(t)
	link, err := handlers.NewLoginLink(ctx, h.store, h.srv.URL, ownerID, t0)
	step("login link", err)
	step("open link", chromedp.Do(ctx, chromedp.Navigate(link)))
	_, err = chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(`[data-testid="link-login"]`)))
	step("sign in", err)
	_, err = chromedp.Call(ctx, emulation.SetTimezoneOverride, emulation.SetTimezoneOverrideParams{TimezoneID: "Asia/Tokyo"})
	step("time zone", err)

	// drawn is how many counts of a Lane the browser draws, and whether
	// its "no Poll" line shows.
	const drawn = `(site) => { const r = document.querySelector('[data-testid="lane-row"][data-site="' + site + '"]');
		const shown = e => !!e && e.getClientRects().length > 0;
		return Array.from(r.querySelectorAll('[data-testid="lane-counts"] > div')).filter(shown).length + ':' +
			shown(r.querySelector('[data-testid="lane-counts-none"]')); }`
	for _, scheme := range []string{"light", "dark"} {
		_, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}})
		step("scheme", err)
		for _, size := range []struct {
			name string
			w, h int64
		}{{"desktop", 1280, 900}, {"phone", 390, 844}} {
			step("viewport", chromedp.Do(ctx, chromedp.EmulateViewport(size.w, size.h),
				chromedp.Navigate(h.srv.URL+"/admin/lanes"), chromedp.WaitReady(chromedp.CSS(`main`))))
			got, err := chromedp.Run(ctx, chromedp.Evaluate[[]any](`[document.documentElement.scrollHeight,
				document.documentElement.scrollWidth > window.innerWidth + 1,
				(`+drawn+`)('asurascans'), (`+drawn+`)('novelfull')]`))
			step("measure", err)
			height, wide, polled, refusing := int(got[0].(float64)), got[1].(bool), got[2].(string), got[3].(string)
			t.Logf("lanes %s %s: %d px tall", scheme, size.name, height)
			if wide {
				t.Errorf("%s %s: the page scrolls sideways", scheme, size.name)
			}
			want := map[string][2]string{"desktop": {"7:false", "7:false"}, "phone": {"3:false", "0:true"}}[size.name]
			if polled != want[0] || refusing != want[1] {
				t.Errorf("%s %s: counts drawn (a polled Lane, a Lane refused all along) %s and %s, want %s and %s",
					scheme, size.name, polled, refusing, want[0], want[1])
			}
			if size.name == "phone" && height > phoneLanesBudget {
				t.Errorf("%s phone: the Lanes page is %d px tall, over %d", scheme, height, phoneLanesBudget)
			}
			shotAt(t, ctx, shots, fmt.Sprintf("lanes-%s-%s", scheme, size.name))
		}
	}
	// The refusal's end (12:40 UTC) is a <time> the script localised to
	// the browser's own zone, Tokyo's here.
	txt, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('[data-site="novelfull"] [data-testid="lane-state"] time').textContent`))
	step("read time", err)
	if !strings.Contains(txt, "21:40") && !strings.Contains(txt, "09:40 PM") || strings.Contains(txt, "UTC") {
		t.Errorf("refusal end reads %q, want 21:40 in Tokyo", txt)
	}
}

// seedLaneMix gives the six Lanes what a running server shows: novelfull
// refusing for 13 hours (a fault with its fix), asurascans polling with a
// few failures and a Series failing for a day, comix paused by the owner,
// kagane with a Forced Poll waiting, demonicscans healthy, lightnovelworld
// never polled.
func seedLaneMix(h *harness) {
	h.t.Helper()
	at := func(ago time.Duration) time.Time { return t0.Add(-ago) }
	pass := func(p storetest.Pass) { storetest.Insert(h.t, h.pool, p) }
	for i := 11; i >= 0; i-- {
		hr := time.Duration(i) * time.Hour
		pass(storetest.Pass{Site: word.Asurascans, StartedAt: at(hr + 10*time.Minute), Due: 14, Checked: 14, Counts: word.Counts{OK: 11, NoChapter: 1, Errors: 2}})
		pass(storetest.Pass{Site: word.Demonicscans, StartedAt: at(hr + 20*time.Minute), Due: 6, Checked: 6, Counts: word.Counts{OK: 5, NotFound: 1}})
		pass(storetest.Pass{Site: word.Comix, StartedAt: at(hr + 30*time.Minute), Due: 3, Checked: 3, Counts: word.Counts{OK: 3}})
		pass(storetest.Pass{Site: word.Kagane, StartedAt: at(hr + 40*time.Minute), Due: 4, Checked: 4, Counts: word.Counts{OK: 3, Refused: 1}})
	}
	for i := 13; i >= 0; i-- {
		pass(storetest.Pass{Site: word.Novelfull, StartedAt: at(time.Duration(i)*time.Hour + 5*time.Minute), Skip: word.SkipRefusing})
	}
	pass(storetest.Pass{Site: word.Comix, StartedAt: at(time.Minute), Skip: word.SkipPaused})
	h.exec(`UPDATE poll_lanes SET refuse_until = $1 WHERE site = 'novelfull'`, t0.Add(40*time.Minute))
	h.exec(`UPDATE poll_lanes SET paused_until = $1 WHERE site = 'comix'`, t0.Add(5*time.Hour))
	h.exec(`UPDATE poll_lanes SET force_poll_at = $1 WHERE site = 'kagane'`, at(2*time.Minute))
	storetest.Insert(h.t, h.pool, storetest.Notice{Kind: word.NoBrowserRoute, Site: "novelfull", NotifiedAt: at(time.Hour)})
}
