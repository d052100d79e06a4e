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

// TestAYoungServersFailingLineFitsBothSchemesAndAPhone renders /admin of a
// server whose records began 5 hours ago in real Chromium, light and dark,
// at 1280 and 390 px: the line starts at the plot's left edge, which names
// when the server first started and stays inside the picture, and no page
// scrolls sideways. Screenshots in artifacts/screenshots/failing-line/.
func TestAYoungServersFailingLineFitsBothSchemesAndAPhone(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Chromium")
	}
	browserURL := chromiumtest.Start(t, "--hide-scrollbars", "--window-size=1280,900").WSURL
	h := newHarness(t)
	h.seed(dataset)
	hour := t0.Truncate(time.Hour)
	var counts []storetest.FailingCount
	for i, n := range []int{0, 0, 3, 5, 2, 1} {
		counts = append(counts, storetest.FailingCount{Site: word.Asurascans, At: hour.Add(-time.Duration(5-i) * time.Hour), Failing: n})
	}
	storetest.Insert(t, h.pool, counts...)
	shots := artifactsDir(t, "screenshots", "failing-line")
	_, ctx := browserSession(t, browserURL)
	step := stepper(t)
	link, err := handlers.NewLoginLink(ctx, h.store, h.srv.URL, ownerID, t0)
	step("login link", err)
	step("open link", chromedp.Do(ctx, chromedp.Navigate(link)))
	_, err = chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(`[data-testid="link-login"]`)))
	step("sign in", err)
	// The start label's box, against the plot's.
	const label = `(() => { const l = document.querySelector('[data-testid="failing-plot-start"]').getBoundingClientRect(),
		p = document.querySelector('[data-testid="failing-plot"]').getBoundingClientRect();
		return [document.documentElement.scrollWidth > window.innerWidth + 1, l.left >= p.left - 1 && l.right <= p.right + 1,
			document.querySelector('[data-testid="failing-plot-start"]').textContent]; })()`
	for _, scheme := range []string{"light", "dark"} {
		_, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}})
		step("scheme", err)
		for _, size := range []struct {
			name string
			w, h int64
		}{{"desktop", 1280, 900}, {"phone", 390, 844}} {
			step("open /admin", chromedp.Do(ctx, chromedp.EmulateViewport(size.w, size.h),
				chromedp.Navigate(h.srv.URL+"/admin"), chromedp.WaitReady(chromedp.CSS(`[data-testid="failing-plot"]`))))
			got, err := chromedp.Run(ctx, chromedp.Evaluate[[]any](label))
			step("measure", err)
			if got[0].(bool) {
				t.Errorf("%s %s: the page scrolls sideways", scheme, size.name)
			}
			if !got[1].(bool) || got[2] != "first started 5 h ago" {
				t.Errorf("%s %s: the left edge reads %q, inside the picture %v", scheme, size.name, got[2], got[1])
			}
			shotAt(t, ctx, shots, fmt.Sprintf("admin-%s-%s", scheme, size.name))
			buf, err := chromedp.Run(ctx, chromedp.ScreenshotScale(chromedp.CSS(`[data-testid="failing-line"]`), 2))
			step("picture shot", err)
			step("save picture", os.WriteFile(filepath.Join(shots, fmt.Sprintf("line-%s-%s.png", scheme, size.name)), buf, 0o644))
		}
	}
}
