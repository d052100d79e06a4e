package handlers_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/mangabookmark/mangabookmark/fetch/chromiumtest"
	"github.com/mangabookmark/mangabookmark/handlers"
)

// TestSettingsFillTheBrowsersZoneAndFitAPhone opens /settings in real
// Chromium set to Tokyo: the zone field holds the browser's zone while the
// Reader has saved none; saving with the feed on shows its address once;
// the page never scrolls sideways at 1280 or 390 px, light or dark.
// Screenshots in artifacts/screenshots/settings/.
func TestSettingsFillTheBrowsersZoneAndFitAPhone(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Chromium")
	}
	browserURL := chromiumtest.Start(t, "--hide-scrollbars", "--window-size=1280,900").WSURL
	h := newHarness(t, withReadersWebhook)
	shots := artifactsDir(t, "screenshots", "settings")
	_, ctx := browserSession(t, browserURL)
	step := stepper(t)
	link, err := handlers.NewLoginLink(ctx, h.store, h.srv.URL, readerA, t0)
	step("login link", err)
	step("open link", chromedp.Do(ctx, chromedp.Navigate(link)))
	_, err = chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(`[data-testid="link-login"]`)))
	step("sign in", err)
	_, err = chromedp.Call(ctx, emulation.SetTimezoneOverride, emulation.SetTimezoneOverrideParams{TimezoneID: "Asia/Tokyo"})
	step("time zone", err)

	step("open settings", chromedp.Do(ctx, chromedp.Navigate(h.srv.URL+"/settings"), chromedp.WaitReady(chromedp.CSS(`main`))))
	zone, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('[data-testid="settings-zone"]').value`))
	step("read zone", err)
	if zone != "Asia/Tokyo" {
		t.Fatalf("the zone field holds %q, want the browser's Asia/Tokyo", zone)
	}
	step("turn the feed on", chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid="settings-feed"]`))))
	_, err = chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(`[data-testid="settings-save"]`)))
	step("save", err)
	addr, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('[data-testid="feed-url"]').textContent`))
	step("read feed address", err)
	if !strings.HasPrefix(addr, h.srv.URL+"/feeds/") {
		t.Fatalf("feed address %q", addr)
	}
	if got := h.text(`SELECT zone FROM reader_settings WHERE reader_id = $1`, readerA); got != "Asia/Tokyo" {
		t.Errorf("saved zone %q", got)
	}
	for _, scheme := range []string{"light", "dark"} {
		_, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}})
		step("scheme", err)
		for _, size := range []struct {
			name string
			w, h int64
		}{{"desktop", 1280, 900}, {"phone", 390, 844}} {
			step("viewport", chromedp.Do(ctx, chromedp.EmulateViewport(size.w, size.h),
				chromedp.Navigate(h.srv.URL+"/settings"), chromedp.WaitReady(chromedp.CSS(`main`))))
			// A new address each time, so the shot shows the card it sits in.
			_, err = chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(`[data-testid="feed-new"]`)))
			step("new address", err)
			wide, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth > window.innerWidth + 1`))
			step("measure", err)
			if wide {
				t.Errorf("%s %s: the page scrolls sideways", scheme, size.name)
			}
			shotAt(t, ctx, shots, fmt.Sprintf("settings-%s-%s", scheme, size.name))
		}
	}
}
