package handlers_test

import (
	"fmt"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/mangabookmark/mangabookmark/fetch/chromiumtest"
	"github.com/mangabookmark/mangabookmark/handlers"
)

// TestAFreshServersVerdictAndLanesInABrowser renders what a new owner sees
// on a machine with no internet (freshServer: no webhook, no sidecar, four
// Series failing a minute ago) in real Chromium: /admin says what is not
// set up and that it is too early to tell, /admin/lanes names the stalling
// Lane and the browser Lanes without a sidecar, in both schemes at 1280 and
// 390 px; axe finds nothing and no page scrolls sideways (issue 23, items 1
// and 6). Screenshots in artifacts/screenshots/verdict/.
func TestAFreshServersVerdictAndLanesInABrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Chromium")
	}
	browserURL := chromiumtest.Start(t, "--hide-scrollbars", "--window-size=1280,900").WSURL
	axe := axeSource(t)
	h := newHarness(t, func(d *handlers.Deps) { d.Sidecar = false })
	freshServer(h)
	shots := artifactsDir(t, "screenshots", "verdict")
	_, ctx := browserSession(t, browserURL)
	step := stepper(t)
	link, err := handlers.NewLoginLink(ctx, h.store, h.srv.URL, ownerID, t0)
	step("login link", err)
	step("open link", chromedp.Do(ctx, chromedp.Navigate(link)))
	_, err = chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(`[data-testid="link-login"]`)))
	step("sign in", err)
	for _, scheme := range []string{"light", "dark"} {
		_, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}})
		step("scheme", err)
		for _, size := range []struct {
			name string
			w, h int64
		}{{"desktop", 1280, 900}, {"phone", 390, 844}} {
			step("viewport", chromedp.Do(ctx, chromedp.EmulateViewport(size.w, size.h)))
			for name, path := range map[string]string{"landing": "/admin", "lanes": "/admin/lanes"} {
				step(name, chromedp.Do(ctx, chromedp.Navigate(h.srv.URL+path), chromedp.WaitReady(chromedp.CSS(`main`))))
				if v := axeViolations(t, ctx, axe); v != "" {
					t.Errorf("%s (%s, %s): axe: %s", name, scheme, size.name, v)
				}
				wide, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth > window.innerWidth + 1`))
				step("measure", err)
				if wide {
					t.Errorf("%s (%s, %s) scrolls sideways", name, scheme, size.name)
				}
				shotAt(t, ctx, shots, fmt.Sprintf("fresh-%s-%s-%s", name, scheme, size.name))
			}
		}
	}
}
