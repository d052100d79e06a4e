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

// TestTheAdapterBrokenLinkAndAPassThatReadNothingInABrowser: in real
// Chromium, /admin's verdict names "demonicscans' Series" and its link opens
// a list holding the four Series the condition counted (never an empty
// failing list), and the Lanes page calls one unreachable pass in the first
// minute a pass that read nothing, never a stall; both schemes at 1280 and
// 390 px, axe clean, nothing scrolls sideways. Screenshots in
// artifacts/screenshots/sentences/.
func TestTheAdapterBrokenLinkAndAPassThatReadNothingInABrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Chromium")
	}
	browserURL := chromiumtest.Start(t, "--hide-scrollbars", "--window-size=1280,900").WSURL
	axe := axeSource(t)
	h := newHarness(t, func(d *handlers.Deps) { d.Sidecar = false })
	h.adapterBrokenNeverRead()
	storetest.Insert(t, h.pool,
		storetest.Pass{Site: word.Asurascans, StartedAt: t0.Add(-time.Minute), Due: 1, Counts: word.Counts{Unreachable: 1}})
	shots := artifactsDir(t, "screenshots", "sentences")
	_, ctx := browserSession(t, browserURL)
	step := stepper(t)
	link, err := handlers.NewLoginLink(ctx, h.store, h.srv.URL, ownerID, t0)
	step("login link", err)
	step("open link", chromedp.Do(ctx, chromedp.Navigate(link)))
	_, err = chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(`[data-testid="link-login"]`)))
	step("sign in", err)

	// The verdict's link, followed as the owner would.
	step("landing", chromedp.Do(ctx, chromedp.Navigate(h.srv.URL+"/admin"), chromedp.WaitReady(chromedp.CSS(`main`))))
	verdict, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('[data-testid="verdict"]').innerText`))
	step("verdict", err)
	if !strings.Contains(verdict, "demonicscans' Series") {
		t.Errorf("the verdict reads %q", verdict)
	}
	_, err = chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(`[data-testid="verdict"] a[data-kind="adapter-broken"]`)))
	step("follow the link", err)
	rows, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('[data-testid="series-row"]').length`))
	step("rows", err)
	if rows != 4 {
		t.Errorf("the verdict's link opens a list of %d Series, want the 4 counted", rows)
	}
	shotAt(t, ctx, shots, "adapter-broken-list-light-desktop")

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
				if name == "lanes" {
					words, err := chromedp.Run(ctx, chromedp.Evaluate[string](`[...document.querySelectorAll('[data-testid="strip-key"], [data-testid="lane-strip"] desc')].map(e => e.textContent).join(' ')`))
					step("strip words", err)
					if strings.Contains(strings.ToLower(words), "stall") || !strings.Contains(words, "1 pass that read nothing") {
						t.Errorf("the strips read %q", words)
					}
				}
				shotAt(t, ctx, shots, fmt.Sprintf("%s-%s-%s", name, scheme, size.name))
			}
		}
	}
}
