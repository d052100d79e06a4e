package handlers_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/mangabookmark/mangabookmark/fetch/chromiumtest"
	"github.com/mangabookmark/mangabookmark/handlers"
	"github.com/mangabookmark/mangabookmark/store/storetest"
	"github.com/mangabookmark/mangabookmark/word"
)

// seedFreshnessMix gives the Lanes a day of new chapters as a running
// server would: asurascans a steady trickle detected within minutes,
// demonicscans a few found hours late, comix one hour of a burst; the
// listing read on each, broken on novelfull.
func seedFreshnessMix(h *harness) {
	h.t.Helper()
	var series []storetest.Series
	var arrivals []storetest.Arrival
	add := func(site word.Site, n int, every, delay time.Duration, spread int) {
		for i := range n {
			id := fmt.Sprintf("f-%s-%d", site, i)
			series = append(series, storetest.Series{Site: site, ID: id, URL: "https://example.test/" + id,
				CheckedAt: t0.Add(-time.Duration(i) * 7 * time.Minute)})
			d := delay * time.Duration(1+i%spread)
			arrivals = append(arrivals, storetest.Arrival{Site: site, Series: id,
				ConfirmedAt: t0.Add(-time.Duration(i) * every), NoticedAt: t0.Add(-time.Duration(i)*every - d)})
		}
	}
	add(word.Asurascans, 40, 35*time.Minute, 40*time.Second, 9)
	add(word.Demonicscans, 8, 170*time.Minute, 50*time.Minute, 5)
	add(word.Comix, 6, 4*time.Minute, 3*time.Minute, 3)
	storetest.Insert(h.t, h.pool, series...)
	storetest.Insert(h.t, h.pool, arrivals...)
	h.exec(`UPDATE poll_lanes SET listing_read_at = $1, listing_ok_at = $1`, t0.Add(-3*time.Minute))
	h.exec(`UPDATE poll_lanes SET listing_empty_since = $1 WHERE site = 'novelfull'`, t0.Add(-14*time.Hour))
}

// seedPicturesMix gives the pictures (issue 23, item 11) a day and a week:
// asurascans passing every 5 minutes with a few failures, demonicscans
// refused for two hours, lightnovelworld stalling for its last three hours;
// and a week of failing figures on two Sites, with the 13 hours a demo's
// clock skip leaves unrecorded.
func seedPicturesMix(h *harness) {
	h.t.Helper()
	var passes []storetest.Pass
	for i := range 24 * 12 {
		at := t0.Add(-time.Duration(i)*5*time.Minute - time.Minute)
		c := word.Counts{OK: 3 + i%4}
		if i%17 == 0 {
			c.Errors = 1 + i%3
		}
		passes = append(passes, storetest.Pass{Site: word.Asurascans, StartedAt: at, Due: c.OK + c.Errors, Checked: c.OK + c.Errors, Counts: c})
		d := word.Counts{OK: 1 + i%2}
		if i >= 60 && i < 84 {
			d = word.Counts{Refused: 2}
		}
		if i%3 == 0 {
			passes = append(passes, storetest.Pass{Site: word.Demonicscans, StartedAt: at, Due: 2, Checked: 2, Counts: d})
		}
		if i%6 == 0 {
			p := storetest.Pass{Site: word.Lightnovelworld, StartedAt: at, Due: 1, Checked: 1, Counts: word.Counts{OK: 1}}
			if i < 36 {
				p = storetest.Pass{Site: word.Lightnovelworld, StartedAt: at, Due: 3}
			}
			passes = append(passes, p)
		}
	}
	storetest.Insert(h.t, h.pool, passes...)
	var counts []storetest.FailingCount
	hour := t0.Truncate(time.Hour)
	for i := range 7 * 24 {
		if i >= 40 && i < 53 {
			continue // the demo's clock skipped these hours
		}
		at := hour.Add(-time.Duration(i) * time.Hour)
		counts = append(counts, storetest.FailingCount{Site: word.Asurascans, At: at, Failing: 2 + (i/30)%3},
			storetest.FailingCount{Site: word.Kagane, At: at, Failing: max(0, 4-i/24)})
	}
	storetest.Insert(h.t, h.pool, counts...)
}

// TestTheFreshnessFiguresFitBothSchemesAndAPhone renders /admin and
// /admin/lanes with a day of new chapters in real Chromium, light and dark,
// at 1280 and 390 px: no page scrolls sideways, every plot stays inside its
// Lane's card. Screenshots in artifacts/screenshots/freshness/.
func TestTheFreshnessFiguresFitBothSchemesAndAPhone(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Chromium")
	}
	browserURL := chromiumtest.Start(t, "--hide-scrollbars", "--window-size=1280,900").WSURL
	h := newHarness(t)
	h.seed(dataset)
	seedLaneMix(h)
	seedFreshnessMix(h)
	seedPicturesMix(h)
	shots := artifactsDir(t, "screenshots", "freshness")
	_, ctx := browserSession(t, browserURL)
	step := stepper(t)
	link, err := handlers.NewLoginLink(ctx, h.store, h.srv.URL, ownerID, t0)
	step("login link", err)
	step("open link", chromedp.Do(ctx, chromedp.Navigate(link)))
	_, err = chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(`[data-testid="link-login"]`)))
	step("sign in", err)

	// outside counts the plots whose box leaves their Lane's card.
	const outside = `Array.from(document.querySelectorAll('[data-testid="lane-freshness-plot"], [data-testid="lane-strip"]')).filter(p => {
		const b = p.getBoundingClientRect(), c = p.closest('[data-testid="lane-row"]').getBoundingClientRect();
		return b.left < c.left || b.right > c.right; }).length`
	for _, scheme := range []string{"light", "dark"} {
		_, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}})
		step("scheme", err)
		for _, size := range []struct {
			name string
			w, h int64
		}{{"desktop", 1280, 900}, {"phone", 390, 844}} {
			for _, page := range []string{"admin", "lanes"} {
				path := map[string]string{"admin": "/admin", "lanes": "/admin/lanes"}[page]
				step("open "+page, chromedp.Do(ctx, chromedp.EmulateViewport(size.w, size.h),
					chromedp.Navigate(h.srv.URL+path), chromedp.WaitReady(chromedp.CSS(`main`))))
				got, err := chromedp.Run(ctx, chromedp.Evaluate[[]any](`[document.documentElement.scrollWidth > window.innerWidth + 1,
					`+outside+`, document.querySelectorAll('[data-testid="lane-freshness-plot"]').length]`))
				step("measure", err)
				wide, out, plots := got[0].(bool), int(got[1].(float64)), int(got[2].(float64))
				if wide {
					t.Errorf("%s %s %s: the page scrolls sideways", page, scheme, size.name)
				}
				if page == "lanes" && (out > 0 || plots != 3) {
					t.Errorf("%s %s: %d plots or strips leave their card, %d plots; want 3 plots, all inside", scheme, size.name, out, plots)
				}
				shotAt(t, ctx, shots, fmt.Sprintf("%s-%s-%s", page, scheme, size.name))
				if page == "lanes" {
					// The plot at its own size, for a closer look.
					buf, err := chromedp.Run(ctx, chromedp.ScreenshotScale(chromedp.CSS(`[data-site="asurascans"] [data-testid="lane-freshness"]`), 2))
					step("plot shot", err)
					step("save plot", os.WriteFile(filepath.Join(shots, fmt.Sprintf("plot-%s-%s.png", scheme, size.name)), buf, 0o644))
				}
				// The pictures of issue 23, item 11, at their own size.
				picture := map[string]string{"admin": `[data-testid="failing-line"]`, "lanes": `[data-site="lightnovelworld"] [data-testid="lane-passes"]`}[page]
				buf, err := chromedp.Run(ctx, chromedp.ScreenshotScale(chromedp.CSS(picture), 2))
				step("picture shot", err)
				step("save picture", os.WriteFile(filepath.Join(shots, fmt.Sprintf("picture-%s-%s-%s.png", page, scheme, size.name)), buf, 0o644))
			}
		}
	}
}
