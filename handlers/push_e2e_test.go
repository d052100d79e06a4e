package handlers_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	webpush "github.com/SherClockHolmes/webpush-go"
	"github.com/a-h/templ"
	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/mangabookmark/mangabookmark/components"
	"github.com/mangabookmark/mangabookmark/fetch/chromiumtest"
	"github.com/mangabookmark/mangabookmark/handlers"
)

// pushPage serves the real router plus one page that holds the Web Push
// control as /settings places it (its <div id="push-subscribe">), on one
// origin, so the service worker and the posts are the real ones.
func pushPage(t *testing.T, h *harness, key string) *httptest.Server {
	t.Helper()
	var router http.Handler
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/push-e2e" {
			router.ServeHTTP(w, r)
			return
		}
		// The router's own headers (the CSP) on the page too.
		router.ServeHTTP(&headerOnly{w: w}, httptest.NewRequest(http.MethodGet, "/sw.js", nil))
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		body := templ.ComponentFunc(func(ctx context.Context, w io.Writer) error {
			_, _ = io.WriteString(w, `<main><h1>Settings</h1><section class="card settings-push"><h2>Web Push</h2><div id="push-subscribe" data-testid="push-subscribe">`)
			if err := components.PushSubscribe(key).Render(ctx, w); err != nil {
				return err
			}
			_, err := io.WriteString(w, `</div></section></main>`)
			return err
		})
		ctx := templ.WithChildren(r.Context(), body)
		_ = components.Layout(components.Page{Title: "Settings", Viewer: components.Viewer{ID: "ada", Name: "Ada"}}).Render(ctx, w)
	}))
	t.Cleanup(srv.Close)
	d := h.deps
	d.PublicBaseURL, d.PushPublicKey = srv.URL, key
	router = handlers.NewServer(d)
	return srv
}

// headerOnly keeps the headers a handler sets and drops its answer.
type headerOnly struct{ w http.ResponseWriter }

func (h *headerOnly) Header() http.Header         { return h.w.Header() }
func (h *headerOnly) Write(b []byte) (int, error) { return len(b), nil }
func (h *headerOnly) WriteHeader(int)             {}

func TestAReaderSubscribesThisBrowserToWebPushInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Chromium")
	}
	browserURL := chromiumtest.Start(t, "--hide-scrollbars", "--window-size=1280,900").WSURL
	h := newHarness(t, func(d *handlers.Deps) { d.Now = time.Now })
	_, pub, err := webpush.GenerateVAPIDKeys()
	if err != nil {
		t.Fatal(err)
	}
	srv := pushPage(t, h, pub)
	allocCtx, tab := browserSession(t, browserURL)
	step := stepper(t)
	shots := artifactsDir(t, "screenshots")

	link, err := handlers.NewLoginLink(context.Background(), h.store, srv.URL, "ada", time.Now())
	step("Ada's link", err)
	step("open link", chromedp.Do(tab, chromedp.Navigate(link)))
	_, err = chromedp.RunResponse(tab, chromedp.Click(chromedp.CSS(`[data-testid="link-login"]`)))
	step("Ada signs in", err)
	for _, name := range []string{"notifications", "push"} {
		_, err = chromedp.Call(tab, browser.SetPermission, browser.SetPermissionParams{
			Permission: &browser.PermissionDescriptor{Name: name, UserVisibleOnly: true},
			Setting:    browser.PermissionSettingGranted, Origin: srv.URL})
		step("grant "+name, err)
	}

	state := `document.querySelector('[data-testid="push-state"]')`
	step("the control", chromedp.Do(tab, chromedp.Navigate(srv.URL+"/push-e2e"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="push-state"][data-state="off"]`))))
	label, err := chromedp.Run(tab, chromedp.Evaluate[string](`document.querySelector('[data-testid="push-button"]').textContent`))
	step("read the button", err)
	if label != "Get a notification in this browser when a chapter of your Bookmarks is out" {
		t.Errorf("the button says %q", label)
	}
	step("subscribe", chromedp.Do(tab, chromedp.Click(chromedp.CSS(`[data-testid="push-button"]`))))
	end, err := chromedp.Run(tab, chromedp.Poll[string](`(() => { const s = `+state+`.dataset.state; return s === 'subscribed' || s === 'failed' ? s : null; })()`,
		chromedp.WithPollingTimeout(browserWait)))
	if err != nil {
		now, _ := chromedp.Run(tab, chromedp.Evaluate[string](state+`.dataset.state + ": " + `+state+`.textContent`))
		t.Fatalf("the subscription does not end: %v; the page says %q", err, now)
	}
	sentence, err := chromedp.Run(tab, chromedp.Evaluate[string](state+`.textContent`))
	step("read the state", err)
	scope, err := chromedp.Run(tab, chromedp.Evaluate[string](`navigator.serviceWorker.getRegistration('/').then(r => r && r.active ? r.scope + ' ' + r.active.scriptURL : '')`,
		chromedp.EvalAwaitPromise))
	step("read the registration", err)
	if scope != srv.URL+"/ "+srv.URL+"/sw.js" {
		t.Errorf("service worker registration %q, want /sw.js active over the whole site", scope)
	}
	subs, err := h.store.PushSubscriptions(context.Background(), "ada")
	step("read subscriptions", err)
	switch end {
	case "subscribed":
		// A browser that reached its push service: the row is Ada's.
		if len(subs) != 1 || !strings.HasPrefix(subs[0].Endpoint, "https://") {
			t.Fatalf("subscribed, but the rows are %+v", subs)
		}
	case "failed":
		// Headless Chromium has no push service to reach: the page says so
		// plainly, and nothing is stored.
		t.Logf("pushManager.subscribe failed in this Chromium: %s", sentence)
		if !strings.HasPrefix(sentence, "Could not subscribe this browser: ") || len(subs) != 0 {
			t.Fatalf("state %q with %d rows", sentence, len(subs))
		}
	}
	for _, scheme := range []string{"light", "dark"} {
		_, err := chromedp.Call(tab, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}})
		step("scheme", err)
		for _, w := range []int64{1280, 390} {
			step("viewport", chromedp.Do(tab, chromedp.EmulateViewport(w, 844)))
			shotAt(t, tab, shots, fmt.Sprintf("push-%s-%s-%d", end, scheme, w))
		}
	}

	// A browser where notifications are blocked is told so, with no button.
	other, cancel := chromedp.NewContext(allocCtx, chromedp.WithNewBrowserContext())
	defer cancel()
	step("second browser", chromedp.Do(other, chromedp.Navigate(link)))
	link2, err := handlers.NewLoginLink(context.Background(), h.store, srv.URL, "ada", time.Now())
	step("Ada's second link", err)
	step("open second link", chromedp.Do(other, chromedp.Navigate(link2)))
	_, err = chromedp.RunResponse(other, chromedp.Click(chromedp.CSS(`[data-testid="link-login"]`)))
	step("Ada signs in again", err)
	_, err = chromedp.Call(other, browser.SetPermission, browser.SetPermissionParams{
		Permission: &browser.PermissionDescriptor{Name: "notifications"}, Setting: browser.PermissionSettingDenied,
		Origin: srv.URL, BrowserContextID: chromedp.FromContext(other).BrowserContextID})
	step("deny notifications", err)
	step("blocked", chromedp.Do(other, chromedp.Navigate(srv.URL+"/push-e2e"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="push-state"][data-state="blocked"]`))))
	hidden, err := chromedp.Run(other, chromedp.Evaluate[bool](`getComputedStyle(document.querySelector('[data-testid="push-button"]')).display === 'none'`))
	step("read the button", err)
	if !hidden {
		t.Error("a blocked browser is offered a button that cannot work")
	}
	shotAt(t, other, shots, "push-blocked-light-1280")
}
